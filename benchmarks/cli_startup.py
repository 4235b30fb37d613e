"""Start-up time of the CLI, before and after a change, measured side by side in one run.

Each round runs ``ddlsched ARGS`` once with the source tree of ``--before``
(a git revision, extracted with ``git archive`` into a temporary
directory) and once with the working tree's ``src``, alternating, in fresh
interpreters of the same virtualenv, and records the wall time of the whole
process (interpreter start-up included) and whether Pyomo was imported.

    python benchmarks/cli_startup.py --before 450508e --rounds 20 --args=--help --args=methods
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

RUN = (
    "import contextlib, io, sys\n"
    "from ddlsched.cli import main\n"
    "with contextlib.redirect_stdout(io.StringIO()):\n"
    "    code = main({args!r})\n"
    "sys.stderr.write('pyomo=%d code=%d' % ('pyomo' in sys.modules, code))\n"
)


def extract(revision: str, into: Path) -> Path:
    """The ``src`` tree of ``revision`` under ``into``."""
    archive = into / "src.tar"
    with archive.open("wb") as fh:
        subprocess.run(["git", "archive", revision, "src"], cwd=ROOT, stdout=fh, check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    return into / "src"


def once(src: Path, args: list[str]) -> tuple[float, bool]:
    started = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", RUN.format(args=args)],
        env={**os.environ, "PYTHONPATH": str(src)},
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - started
    tail = out.stderr.strip().splitlines()[-1] if out.stderr.strip() else ""
    if "code=0" not in tail:
        raise SystemExit(f"ddlsched {' '.join(args)} failed with {src}: {out.stderr[-500:]}")
    return wall, "pyomo=1" in tail


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", required=True, help="git revision to compare against")
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument(
        "--args", action="append", help="a command line to time (repeatable; default --help)"
    )
    options = ap.parse_args()
    commands = [shlex.split(a) for a in (options.args or ["--help"])]
    with tempfile.TemporaryDirectory(prefix="ddlsched-before-") as tmp:
        trees = {"before": extract(options.before, Path(tmp)), "after": ROOT / "src"}
        print(
            f"`ddlsched ARGS` wall time, s ({options.rounds} alternating rounds, {sys.executable})"
        )
        print("| command | tree | median | min | max | Pyomo imported |")
        print("|---|---|---:|---:|---:|---|")
        for args in commands:
            times: dict[str, list[float]] = {name: [] for name in trees}
            pyomo: dict[str, bool] = {}
            for src in trees.values():  # warm the file cache once
                once(src, args)
            for _ in range(options.rounds):
                for name, src in trees.items():
                    wall, loaded = once(src, args)
                    times[name].append(wall)
                    pyomo[name] = loaded
            for name in trees:
                t = times[name]
                label = name if name == "after" else f"before ({options.before})"
                print(
                    f"| `ddlsched {' '.join(args)}` | {label} | {statistics.median(t):.3f} | "
                    f"{min(t):.3f} | {max(t):.3f} | {'yes' if pyomo[name] else 'no'} |"
                )


if __name__ == "__main__":
    main()
