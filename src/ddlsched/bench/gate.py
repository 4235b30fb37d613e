"""The read gate of results files: a corrupt file is one line naming it, never a traceback.

``bench table``, ``bench status``, ``bench plot`` and ``bench run`` (which
reads the stored keys to resume) read a results directory through these two
functions:

* :func:`read_part`: a row part (Parquet). An empty, truncated or garbled
  file, or a Parquet file that is not a ddlsched part (no ``key`` column, a
  row without a key), is refused.
* :func:`read_manifest`: ``manifest.json``, through the project's strict JSON
  gate (:func:`ddlsched.jsonio.read_json`), then its shape: an object whose
  ``runs`` is a list of objects and whose ``versions``, ``git`` and
  ``machine`` are objects.

Both raise :class:`~ddlsched.errors.StoreError` naming the file.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from ddlsched.errors import DdlschedError, StoreError

__all__ = ["REQUIRED_COLUMNS", "merged_parts", "read_manifest", "read_part"]

#: Columns without which a Parquet file is not a result part.
REQUIRED_COLUMNS = ("key", "family", "method", "status")

_ARROW_PREFIX = re.compile(r"^Could not open Parquet input source '[^']*':\s*")


def _reason(exc: BaseException) -> str:
    text = _ARROW_PREFIX.sub("", str(exc).strip())
    first = text.splitlines()[0].strip() if text else ""
    return first or type(exc).__name__


def read_part(path: Path, schema: pa.Schema) -> pa.Table:
    """The rows of one part file, cast to ``schema``; a :class:`StoreError` if it is not one."""
    try:
        names = set(pq.read_schema(path).names)
        missing = [c for c in REQUIRED_COLUMNS if c not in names]
        if missing:
            raise StoreError(f"{path}: not a result part (no column {', '.join(missing)})")
        table = pq.read_table(path, schema=schema)
    except StoreError:
        raise
    except (OSError, ValueError, pa.ArrowException) as exc:
        raise StoreError(f"{path}: unreadable result part ({_reason(exc)})") from None
    if table.column("key").null_count:
        raise StoreError(f"{path}: not a result part (a row without a key)")
    return table


def merged_parts(path: Path, key: bytes) -> list[str]:
    """The part names a compacted part records under metadata ``key`` (it replaces them)."""
    try:
        metadata = pq.read_schema(path).metadata or {}
        names = json.loads(metadata.get(key, b"[]"))
    except (OSError, ValueError, pa.ArrowException) as exc:
        raise StoreError(f"{path}: unreadable result part ({_reason(exc)})") from None
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise StoreError(f"{path}: not a result part (bad list of merged parts)")
    return names


def read_manifest(path: Path) -> dict[str, Any]:
    """``manifest.json`` of a results directory (``{}`` if there is none), checked."""
    from ddlsched.jsonio import read_json

    if not path.exists() and not path.is_symlink():
        return {}
    try:
        data = read_json(path)
    except DdlschedError as exc:  # already one line naming the file
        raise StoreError(str(exc)) from None
    if not isinstance(data, dict):
        raise StoreError(f"{path}: not a results manifest (expected a JSON object)")
    runs = data.get("runs", [])
    if not isinstance(runs, list) or not all(isinstance(run, dict) for run in runs):
        raise StoreError(f"{path}: not a results manifest (runs: expected a list of objects)")
    for name in ("versions", "git", "machine"):
        if not isinstance(data.get(name, {}), dict):
            raise StoreError(f"{path}: not a results manifest ({name}: expected an object)")
    return data
