"""Where the public data (traces, DNN profiles) is looked up, and the one helper loaders call.

The data is never copied into the repository. A file is looked up, in this order:

1. ``$DDLSCHED_DATA`` when set (then the only place: it wins, and ``ddlsched data fetch``
   writes there);
2. ``../shared/data`` next to the repository root (the development layout; off with
   ``DDLSCHED_DEV_DATA=0``);
3. the fetch cache, the folder ``pooch.os_cache("ddlsched")`` names (``~/.cache/ddlsched`` on Linux, below
   ``$XDG_CACHE_HOME`` when set), filled by ``ddlsched data fetch``.

:func:`data_file` checks a file the registry knows (:mod:`ddlsched.data.registry`) against its
SHA-256 (:mod:`ddlsched.data.verify`, once per process per unchanged file) and records the
hash for the results (:mod:`ddlsched.data.provenance`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
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
    """The fetch cache, the folder ``pooch.os_cache("ddlsched")`` names (it may not exist yet).

    Computed with platformdirs, as pooch does, without importing pooch (0.4 s of start-up for
    every process that reads a trace)."""
    try:
        import platformdirs
    except ImportError:  # an environment installed before pooch was a dependency: its place
        return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ddlsched"
    return Path(platformdirs.user_cache_dir("ddlsched"))


def fetch_target() -> Path:
    """Where ``ddlsched data fetch`` writes: ``$DDLSCHED_DATA`` when set, else :func:`cache_dir`."""
    env = os.environ.get(DATA_ENV)
    return Path(env) if env else cache_dir()


def _roots() -> Iterator[Path]:
    """The existing data directories in lookup order, each computed only when reached."""
    env = os.environ.get(DATA_ENV)
    if env:
        if Path(env).is_dir():
            yield Path(env)
        return
    dev = _dev_data_dir()
    if dev is not None:
        yield dev
    cache = cache_dir()
    if cache.is_dir():
        yield cache


def search_roots() -> list[Path]:
    """The existing data directories, in lookup order (see the module docstring)."""
    return list(_roots())


def data_dir() -> Path | None:
    """The first existing data directory (:func:`search_roots`), or ``None`` when there is none."""
    return next(_roots(), None)


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
    roots: list[Path] = []
    for root in _roots():  # the cache's place is computed only when the file is not found before
        roots.append(root)
        if root.joinpath(*parts).exists():
            path = root.joinpath(*parts)
            break
    else:
        if not roots:
            raise DdlschedError(
                f"no data directory for {relative}: set {DATA_ENV} to the folder holding "
                f"traces/ and profiles/{fix}"
            )
        others = "".join(f" (also looked in {root})" for root in roots[1:])
        raise DdlschedError(f"data file not found: {roots[0].joinpath(*parts)}{others}{fix}")
    if entry is not None and path.is_file() and verify.verification_enabled():
        provenance.record(relative, verify.verified_sha256(path, entry))
    return path
