"""The result store's file operations: atomic writes, stale temporary files, one-line faults.

Every file the store writes (a row part, the manifest, the copy of the suite,
an instance of the instance cache, :mod:`ddlsched.bench.instance_cache`)
goes through :func:`atomic_write`: the bytes go to a temporary file beside
the target, named ``.<target name>.<32 hex digits>.tmp``, which is fsynced
and renamed over the target. A process killed in the middle (``kill -9``)
leaves the target untouched and, at worst, that temporary file;
:func:`remove_stale_temps` deletes such files when the store is next opened
for writing (under its run lock, so never a file another run is writing).
Only names of that exact pattern are touched.

Any ``OSError`` (a full disk, a read-only or unwritable directory) becomes a
:class:`~ddlsched.errors.StoreError` naming the file:
``results/quick/manifest.json: cannot write (No space left on device)``.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import uuid
from pathlib import Path

from ddlsched.errors import StoreError

__all__ = ["TEMP_PATTERN", "atomic_write", "remove_stale_temps", "store_error", "temp_path"]

log = logging.getLogger(__name__)

#: Names of the store's temporary files (and only those): ``.<target>.<hex>.tmp``.
TEMP_PATTERN = re.compile(
    r"^\.(?:manifest\.json|suite\.toml|part-[A-Za-z0-9_.-]+\.parquet|[0-9a-f]{32}\.json)"
    r"\.[0-9a-f]{32}\.tmp$"
)


def store_error(path: str | Path, exc: OSError, doing: str) -> StoreError:
    """``exc`` as a one-line :class:`StoreError`: ``<path>: <doing> (<reason>)``."""
    reason = exc.strerror or str(exc) or type(exc).__name__
    return StoreError(f"{path}: {doing} ({reason})")


def temp_path(path: Path) -> Path:
    """A fresh temporary name beside ``path`` (matches :data:`TEMP_PATTERN`)."""
    return path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")


def _fsync_directory(directory: Path) -> None:
    # Makes the rename durable across a power loss; not every filesystem allows it.
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def atomic_write(path: Path, data: bytes, *, durable: bool = True) -> None:
    """Write ``data`` to ``path`` atomically: a temporary file, fsync, rename.

    On failure the temporary file is removed, ``path`` keeps its old content
    and a :class:`StoreError` naming ``path`` is raised. ``durable=False``
    skips both fsyncs (a file whose reader checks it, such as the instance
    cache's: after a power loss it may be empty or old, never a mix of the two).
    """
    tmp = temp_path(path)
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException as exc:  # a fault, or an interruption (SIGTERM) in the middle
        with contextlib.suppress(OSError):
            tmp.unlink()
        if isinstance(exc, OSError):
            raise store_error(path, exc, "cannot write") from None
        raise
    if durable:
        _fsync_directory(path.parent)


def remove_stale_temps(*directories: Path) -> list[Path]:
    """Delete the store's leftover temporary files in ``directories``; return them.

    Call it only while holding the store's run lock: a temporary file is
    then a leftover of a dead writer. Files that cannot be removed are
    logged and left.
    """
    removed = []
    for directory in directories:
        try:
            names = [e.name for e in os.scandir(directory) if e.is_file(follow_symlinks=False)]
        except OSError:
            continue
        for name in names:
            if not TEMP_PATTERN.match(name):
                continue
            try:
                (directory / name).unlink()
            except FileNotFoundError:
                continue
            except OSError as exc:
                log.warning("cannot remove stale temporary file %s: %s", directory / name, exc)
                continue
            removed.append(directory / name)
    if removed:
        log.info("removed %d stale temporary file(s) of interrupted writes", len(removed))
    return removed
