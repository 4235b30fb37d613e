"""The hash check the loaders run on every registered data file, once per process per file.

:func:`verified_sha256` compares a file with its :class:`~ddlsched.data.registry.DataFile`:
first the size (a file of another size is refused without being read), then the SHA-256. The
answer is kept per process, keyed by the file's path, ``st_mtime_ns`` and size, so that later
loads of an unchanged file cost one ``stat``; an edited file is hashed again. A wrong file
raises :class:`DataIntegrityError`, one line naming the file, the expected and the found hash
and ``ddlsched data fetch NAME`` as the fix.

``DDLSCHED_DATA_VERIFY=0`` turns the check off (your own edited copy of a trace under the
registered name); such files are read as they are and not recorded in results.
"""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path

from ddlsched.data.registry import DataFile
from ddlsched.errors import DdlschedError

__all__ = [
    "VERIFY_ENV",
    "DataIntegrityError",
    "file_sha256",
    "verification_enabled",
    "verified_sha256",
]

#: ``DDLSCHED_DATA_VERIFY=0`` turns the hash check of registered files off.
VERIFY_ENV = "DDLSCHED_DATA_VERIFY"

_CHUNK = 1 << 20
_LOCK = threading.Lock()
_CHECKED: dict[tuple[str, int, int], str] = {}  # (path, mtime_ns, size) -> sha256 found


class DataIntegrityError(DdlschedError):
    """A data file is not the registered one (size or SHA-256 differ); ``found`` says what
    was found instead."""

    def __init__(self, message: str, found: str = "") -> None:
        super().__init__(message)
        self.found = found


def verification_enabled() -> bool:
    """Whether registered files are checked (``$DDLSCHED_DATA_VERIFY`` is not ``0``)."""
    return os.environ.get(VERIFY_ENV, "1").strip().lower() not in ("0", "false", "no", "off")


def file_sha256(path: Path) -> str:
    """The SHA-256 (hex) of the file at ``path``, read in 1 MiB chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _refuse(path: Path, entry: DataFile, found: str) -> DataIntegrityError:
    return DataIntegrityError(
        f"data file {path} is not the registered {entry.path}: expected sha256 {entry.sha256}, "
        f"found {found} (run 'ddlsched data fetch {entry.dataset}' to fetch it again)",
        found=found,
    )


def verified_sha256(path: Path, entry: DataFile) -> str:
    """The SHA-256 of ``path`` once it matches ``entry``; :class:`DataIntegrityError` if not.

    Cached per process by (path, mtime, size): an unchanged file is hashed once.
    """
    stat = path.stat()
    key = (str(path), stat.st_mtime_ns, stat.st_size)
    with _LOCK:
        known = _CHECKED.get(key)
    if known is None:
        if stat.st_size != entry.size:
            raise _refuse(path, entry, f"a file of {stat.st_size} bytes, not {entry.size}")
        known = file_sha256(path)
        with _LOCK:
            _CHECKED[key] = known
    if known != entry.sha256:
        raise _refuse(path, entry, f"sha256 {known}")
    return known
