"""The result store: append-only Parquet parts plus a manifest, in one directory.

Layout of a results directory::

    manifest.json        package, solver and Python versions, git commit,
                         machine, suite name and file hash, one entry per run
    suite.toml           copy of the suite file of the last run
    rows/part-*.parquet  result rows (schema :data:`SCHEMA`), never modified

Rows are buffered and written as a new part file at most every
``flush_interval_s`` (and at the end, and on interruption). A part is written
to a temporary name, fsynced and renamed, so a run killed at any moment
(``kill -9`` included) leaves only whole parts: every row it had written is
kept and the next run skips it. A row's ``key`` is its task's content hash;
readers keep the first row of a key should one ever appear twice.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import platform
import socket
import subprocess
import time
import uuid
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from ddlsched.errors import DdlschedError

__all__ = ["SCHEMA", "ResultStore", "git_commit", "machine_info", "read_rows"]

log = logging.getLogger(__name__)

_STRING = pa.string()
_FLOAT = pa.float64()
_INT = pa.int64()

#: Arrow schema of a row (the columns of :data:`ddlsched.bench.tasks.ROW_FIELDS`).
SCHEMA = pa.schema(
    [
        ("key", _STRING),
        ("suite", _STRING),
        ("family", _STRING),
        ("group", _STRING),
        ("instance_id", _STRING),
        ("instance_key", _STRING),
        ("instance_size", _INT),
        ("preset", _STRING),
        ("instance_seed", _INT),
        ("instance_params", _STRING),
        ("instance_file", _STRING),
        ("method", _STRING),
        ("label", _STRING),
        ("kind", _STRING),
        ("params", _STRING),
        ("seed", _INT),
        ("backend", _STRING),
        ("time_limit_s", _FLOAT),
        ("kill_after_s", _FLOAT),
        ("sense", _STRING),
        ("status", _STRING),
        ("objective", _FLOAT),
        ("bound", _FLOAT),
        ("gap", _FLOAT),
        ("runtime_s", _FLOAT),
        ("solver_time_s", _FLOAT),
        ("time_limit_hit", pa.bool_()),
        ("wall_s", _FLOAT),
        ("backend_version", _STRING),
        ("num_variables", _INT),
        ("num_integer_variables", _INT),
        ("num_constraints", _INT),
        ("error", _STRING),
        ("metrics", _STRING),
        ("info", _STRING),
        ("versions", _STRING),
        ("ddlsched_version", _STRING),
        ("worker", _STRING),
        ("finished_at", _STRING),
    ]
)

_ROWS_DIR = "rows"
_MANIFEST = "manifest.json"


def git_commit(path: Path | None = None) -> dict[str, Any]:
    """The git commit of the source tree (read-only git calls), and whether it is dirty."""
    cwd = str(path or Path(__file__).resolve().parent)
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, timeout=10
        )
        if commit.returncode != 0:
            return {"commit": None, "dirty": None}
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=10,
        )
        return {"commit": commit.stdout.strip(), "dirty": bool(dirty.stdout.strip())}
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "dirty": None}


def machine_info() -> dict[str, Any]:
    """Where the run happened: host, OS, CPU, core count."""
    return {
        "hostname": socket.gethostname(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "processor": platform.processor() or None,
        "cpu_count": os.cpu_count(),
        "usable_cpus": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
    }


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _atomic_write(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    with open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def _table(rows: list[dict[str, Any]]) -> pa.Table:
    columns = {name: [row.get(name) for row in rows] for name in SCHEMA.names}
    return pa.Table.from_pydict(columns, schema=SCHEMA)


def read_rows(directory: str | Path, dedupe: bool = True) -> pa.Table:
    """All rows of a results directory (first row of each key when ``dedupe``)."""
    rows_dir = Path(directory) / _ROWS_DIR
    if not Path(directory).is_dir():
        raise DdlschedError(f"no results directory {directory}")
    parts = sorted(rows_dir.glob("part-*.parquet")) if rows_dir.is_dir() else []
    tables = []
    for part in parts:
        try:
            tables.append(pq.read_table(part, schema=SCHEMA))
        except (OSError, pa.ArrowInvalid) as exc:
            raise DdlschedError(f"unreadable result part {part}: {exc}") from None
    if not tables:
        return SCHEMA.empty_table()
    table = pa.concat_tables(tables)
    if dedupe and table.num_rows:
        keys = table.column("key").to_pylist()
        seen: set[str] = set()
        keep = []
        for i, key in enumerate(keys):
            if key not in seen:
                seen.add(key)
                keep.append(i)
        if len(keep) != table.num_rows:
            log.warning("%d duplicate row(s) ignored in %s", table.num_rows - len(keep), directory)
            table = table.take(keep)
    return table


class ResultStore:
    """An append-only store of rows in ``directory``.

    >>> store = ResultStore(tmp)                      # doctest: +SKIP
    >>> store.add(row); store.flush()                 # doctest: +SKIP
    """

    def __init__(self, directory: str | Path, flush_interval_s: float = 1.0) -> None:
        self.directory = Path(directory)
        self.rows_dir = self.directory / _ROWS_DIR
        self.flush_interval_s = flush_interval_s
        try:
            self.rows_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise DdlschedError(f"cannot create results directory {directory}: {exc}") from None
        self._pending: list[dict[str, Any]] = []
        self._last_flush = time.monotonic()
        self._run_id = f"{datetime.now(UTC).strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:8]}"
        self._parts = 0
        self.written = 0

    # -- lock

    def lock(self) -> None:
        """Take the directory's run lock (released on close or when the process dies).

        Two runs writing into one directory would run the same tasks twice;
        the second is refused with a one-line error.
        """
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX
            return
        handle = open(self.directory / ".lock", "a+")  # noqa: SIM115 - held for the run
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.close()
            raise DdlschedError(
                f"another run is writing to {self.directory}; wait for it or use another --out"
            ) from None
        self._lock_handle = handle

    def unlock(self) -> None:
        handle, self._lock_handle = getattr(self, "_lock_handle", None), None
        if handle is not None:
            handle.close()

    # -- rows

    def keys(self) -> set[str]:
        """Keys of every row already stored."""
        table = read_rows(self.directory, dedupe=False)
        return set(table.column("key").to_pylist())

    def add(self, row: dict[str, Any]) -> None:
        self._pending.append(row)
        self.maybe_flush()

    def maybe_flush(self) -> None:
        if self._pending and time.monotonic() - self._last_flush >= self.flush_interval_s:
            self.flush()

    def flush(self) -> None:
        """Write pending rows as one new part (atomic rename)."""
        self._last_flush = time.monotonic()
        if not self._pending:
            return
        rows, self._pending = self._pending, []
        table = _table(rows)
        sink = pa.BufferOutputStream()
        pq.write_table(table, sink, compression="zstd")
        self._parts += 1
        name = f"part-{self._run_id}-{self._parts:06d}.parquet"
        _atomic_write(self.rows_dir / name, sink.getvalue().to_pybytes())
        self.written += len(rows)

    def compact(self) -> None:
        """Merge all parts into one (new part first, then the old ones are removed)."""
        self.flush()
        parts = sorted(self.rows_dir.glob("part-*.parquet"))
        if len(parts) <= 1:
            return
        table = read_rows(self.directory)
        sink = pa.BufferOutputStream()
        pq.write_table(table, sink, compression="zstd")
        self._parts += 1
        name = f"part-{self._run_id}-{self._parts:06d}-compact.parquet"
        _atomic_write(self.rows_dir / name, sink.getvalue().to_pybytes())
        for part in parts:
            part.unlink(missing_ok=True)

    # -- manifest

    @property
    def manifest_path(self) -> Path:
        return self.directory / _MANIFEST

    def read_manifest(self) -> dict[str, Any]:
        try:
            return json.loads(self.manifest_path.read_text())
        except FileNotFoundError:
            return {}
        except (OSError, json.JSONDecodeError) as exc:
            raise DdlschedError(f"unreadable manifest {self.manifest_path}: {exc}") from None

    def write_manifest(self, manifest: dict[str, Any]) -> None:
        data = json.dumps(manifest, indent=2, sort_keys=False, default=str).encode()
        _atomic_write(self.manifest_path, data)

    def begin_run(
        self, suite: Any, executor: str, workers: int, tasks: int, pending: int
    ) -> dict[str, Any]:
        """Record the start of a run (versions, commit, machine, suite hash) in the manifest."""
        from ddlsched.solvers.result import versions

        manifest = self.read_manifest()
        if manifest.get("suite_sha256") and manifest["suite_sha256"] != suite.sha256:
            log.warning(
                "suite file changed since the last run into %s: old rows are kept",
                self.directory,
            )
        manifest.update(
            {
                "format": "ddlsched-results/1",
                "suite": suite.name,
                "suite_file": suite.source,
                "suite_sha256": suite.sha256,
                "versions": versions(),
                "git": git_commit(),
                "machine": machine_info(),
            }
        )
        if suite.source:
            with contextlib.suppress(OSError):
                _atomic_write(self.directory / "suite.toml", Path(suite.source).read_bytes())
        run = {
            "run_id": self._run_id,
            "started_at": _now(),
            "finished_at": None,
            "executor": executor,
            "workers": workers,
            "tasks": tasks,
            "pending_at_start": pending,
            "rows_written": 0,
            "state": "running",
            "suite_sha256": suite.sha256,
        }
        manifest.setdefault("runs", []).append(run)
        self.write_manifest(manifest)
        return run

    def end_run(self, state: str) -> None:
        """Record the end of this run (``complete``, ``interrupted`` or ``failed``)."""
        manifest = self.read_manifest()
        for run in manifest.get("runs", []):
            if run.get("run_id") == self._run_id:
                run.update(finished_at=_now(), rows_written=self.written, state=state)
        self.write_manifest(manifest)

    def extend(self, rows: Iterable[dict[str, Any]]) -> None:
        for row in rows:
            self.add(row)
