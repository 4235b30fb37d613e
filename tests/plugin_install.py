"""Install a plug-in package into a throw-away directory and run ddlsched beside it.

Nothing touches the interpreter's environment: :func:`install` puts the
package into ``target`` (``pip install --no-deps --no-build-isolation --target``
when the environment can build a wheel, i.e. setuptools >= 70.1 or the
``wheel`` package, as the test extras give a fresh environment; otherwise
the same two things pip would write: the package's modules and a
``.dist-info`` with ``METADATA`` and ``entry_points.txt``, read from its
``pyproject.toml``), and :func:`run` runs a command in a subprocess with
``PYTHONPATH=target:<this checkout's src>``.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"


def _can_build_wheels() -> bool:
    if importlib.util.find_spec("wheel") is not None:
        return True
    try:
        from importlib.metadata import version

        major, minor = (int(part) for part in version("setuptools").split(".")[:2])
    except Exception:
        return False
    return (major, minor) >= (70, 1)


def _write_dist_info(package: Path, target: Path) -> None:
    """What an install of ``package`` (a src layout) writes, without building a wheel."""
    project = tomllib.loads((package / "pyproject.toml").read_text())["project"]
    for module in (package / "src").iterdir():
        shutil.copytree(module, target / module.name)
    name, version = project["name"], project["version"]
    info = target / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    lines = []
    for group, entries in project.get("entry-points", {}).items():
        lines.append(f"[{group}]")
        lines += [f"{key} = {value}" for key, value in entries.items()]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n")


def install(package: Path, target: Path) -> str:
    """Install ``package`` into ``target``; how (``pip`` or ``dist-info``)."""
    target.mkdir(parents=True, exist_ok=True)
    if not _can_build_wheels():
        _write_dist_info(package, target)
        return "dist-info"
    subprocess.run(
        [
            *(sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation"),
            *("--no-index", "--target", str(target), str(package)),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    return "pip"


def run(
    args: list[str], target: Path, cwd: Path, timeout: float = 300
) -> subprocess.CompletedProcess:
    """``python ARGS`` with ``target`` and this checkout's ``src`` first on the path."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(target), str(SRC)])}
    return subprocess.run(
        [sys.executable, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
