"""Where the public data (traces, DNN profiles) is looked up, and the one helper loaders call.

The data is never copied into the repository. A file is looked up, in this order:

1. ``$DDLSCHED_DATA`` when set (then the only place: it wins, and ``ddlsched data fetch``
   writes there);
2. ``../shared/data`` next to the repository root (the development layout; off with
   ``DDLSCHED_DEV_DATA=0``);
3. the fetch cache, ``pooch.os_cache("ddlsched")`` (``~/.cache/ddlsched`` on Linux, below
   ``$XDG_CACHE_HOME`` when set), filled by ``ddlsched data fetch``.

:func:`data_file` checks a file the registry knows (:mod:`ddlsched.data.registry`) against its
SHA-256 (:mod:`ddlsched.data.verify`, once per process per unchanged file) and records the
hash for the results (:mod:`ddlsched.data.provenance`).
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = [
    "DATA_ENV",
    "DEV_DATA_ENV",
    "cache_dir",
    "data_dir",
    "data_file",
    "fetch_target",
    "search_roots",
]

#: The environment variable naming the data directory (wins over every other place).
DATA_ENV = "DDLSCHED_DATA"
#: ``DDLSCHED_DEV_DATA=0`` turns the ``../shared/data`` lookup off.
DEV_DATA_ENV = "DDLSCHED_DEV_DATA"

_REPO_ROOT = Path(__file__).resolve().parents[2]


def _dev_data_dir() -> Path | None:
    """``../shared/data`` beside the repository (or the working directory), when it exists."""
    if os.environ.get(DEV_DATA_ENV, "1").strip().lower() in ("0", "false", "no", "off"):
        return None
    for candidate in (_REPO_ROOT.parent / "shared" / "data", Path.cwd().parent / "shared" / "data"):
        if candidate.is_dir():
            return candidate
    return None


def cache_dir() -> Path:
    """The fetch cache: ``pooch.os_cache("ddlsched")`` (it may not exist yet)."""
    try:
        import pooch
    except ImportError:  # an environment installed before pooch was a dependency: its place
        return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ddlsched"
    return Path(pooch.os_cache("ddlsched"))


def fetch_target() -> Path:
    """Where ``ddlsched data fetch`` writes: ``$DDLSCHED_DATA`` when set, else :func:`cache_dir`."""
    env = os.environ.get(DATA_ENV)
    return Path(env) if env else cache_dir()


def search_roots() -> list[Path]:
    """The existing data directories, in lookup order (see the module docstring)."""
    env = os.environ.get(DATA_ENV)
    if env:
        return [Path(env)] if Path(env).is_dir() else []
    roots = [root for root in (_dev_data_dir(), cache_dir()) if root is not None and root.is_dir()]
    return roots


def data_dir() -> Path | None:
    """The first existing data directory (:func:`search_roots`), or ``None`` when there is none."""
    roots = search_roots()
    return roots[0] if roots else None


def data_file(*parts: str) -> Path:
    """The path of a data file (``data_file("traces", "philly", "philly.csv")``), checked.

    The first data directory holding it wins. A file the registry knows is checked against
    its SHA-256 (a wrong one raises :class:`~ddlsched.data.verify.DataIntegrityError`) and
    its hash recorded for the results; a missing file or directory is one line saying how to
    get it.
    """
    from ddlsched.data import provenance, registry, verify
    from ddlsched.errors import DdlschedError

    relative = "/".join(parts)
    entry = registry.file_by_path(relative)
    fix = f" or run 'ddlsched data fetch {entry.dataset}'" if entry is not None else ""
    roots = search_roots()
    if not roots:
        raise DdlschedError(
            f"no data directory for {relative}: set {DATA_ENV} to the folder holding traces/ "
            f"and profiles/{fix}"
        )
    path = next((p for p in (root.joinpath(*parts) for root in roots) if p.exists()), None)
    if path is None:
        others = "".join(f" (also looked in {root})" for root in roots[1:])
        raise DdlschedError(f"data file not found: {roots[0].joinpath(*parts)}{others}{fix}")
    if entry is not None and path.is_file() and verify.verification_enabled():
        provenance.record(relative, verify.verified_sha256(path, entry))
    return path
