"""The SHA-256 of every registered data file this process has read: results record them.

:func:`ddlsched.datadir.data_file`, the one helper every loader calls, checks a registered file
(:mod:`ddlsched.data.verify`) and calls :func:`record`; :func:`ddlsched.pipeline.finish` copies
:func:`read_so_far` into each result's ``info["data_sha256"]`` (``{path in the data directory:
sha256}``). The record is per process, not per instance: a process that read several traces
(a benchmark worker that built several instances) lists all of them in every later result,
a superset of what each result used. A file a loader reads from a path the user gave, or a
file the registry does not know, is not recorded.
"""

from __future__ import annotations

import threading

__all__ = ["forget", "read_so_far", "record"]

_LOCK = threading.Lock()
_READ: dict[str, str] = {}


def record(path: str, sha256: str) -> None:
    """Note that this process read the registered file ``path`` (its verified ``sha256``)."""
    with _LOCK:
        _READ[path] = sha256


def read_so_far() -> dict[str, str]:
    """``{path in the data directory: sha256}`` of every file :func:`record` noted, by path."""
    with _LOCK:
        return dict(sorted(_READ.items()))


def forget() -> None:
    """Start the record afresh (tests; a long-lived process between unrelated runs)."""
    with _LOCK:
        _READ.clear()
