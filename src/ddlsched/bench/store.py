"""The result store: append-only Parquet parts plus a manifest, in one directory.

Layout of a results directory::

    manifest.json        package, solver and Python versions, git commit,
                         machine, suite name and file hash, one entry per run
    suite.toml           copy of the suite file of the last run
    rows/part-*.parquet  result rows (schema :data:`SCHEMA`), never modified
    instances/<key>.json the instance cache (:mod:`ddlsched.bench.instance_cache`)
    .lock                the run lock (held by the run writing, see :meth:`ResultStore.lock`)

Rows are buffered and written as a new part file at most every
``flush_interval_s`` (and at the end, and on interruption). A part is written
to a temporary name, fsynced and renamed (:mod:`ddlsched.bench.files`), so a
run killed at any moment (``kill -9`` included) leaves only whole parts:
every row it had written is kept and the next run skips it; the next run
also removes the temporary file the killed one may have left.

A row's ``key`` is its task's content hash. A key has several rows when a
failed row was run again (``bench run --retry``): parts are named so that
their names sort in the order they were written (run start time to the
microsecond, then a sequence number), and :func:`read_rows` keeps the latest
row of each key (``dedupe=False`` gives the whole history). A complete run
merges the parts into one (:meth:`ResultStore.compact`); the merged part
names the parts it replaces, so a kill in the middle duplicates no row.

A fault while writing (a full disk, a directory made read-only) is a one-line
:class:`~ddlsched.errors.StoreError` naming the file; a corrupt file read
back is one too (:mod:`ddlsched.bench.gate`).
"""

from __future__ import annotations

import json
import logging
import os
import platform
import socket
import subprocess
import time
import uuid
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from ddlsched.bench.files import atomic_write, remove_stale_temps, store_error
from ddlsched.bench.gate import merged_parts, read_part
from ddlsched.bench.gate import read_manifest as _read_manifest_file
from ddlsched.bench.instance_cache import cache_dir_of
from ddlsched.bench.runstate import close_dead_runs
from ddlsched.errors import DdlschedError

__all__ = [
    "SCHEMA",
    "ResultStore",
    "git_commit",
    "load_average",
    "machine_info",
    "read_manifest",
    "read_rows",
]

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
        ("code_fingerprint", _STRING),
        ("code_origin", _STRING),
        ("worker", _STRING),
        ("finished_at", _STRING),
    ]
)

_ROWS_DIR = "rows"
_MANIFEST = "manifest.json"
_STAMP = "%Y%m%dT%H%M%S%f"  # run ids; an older format had no microseconds
_COMPACT_SUFFIX = "-compact.parquet"
_MERGED = b"ddlsched.merged_parts"  # Parquet metadata of a compacted part: what it replaces


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


def load_average() -> float | None:
    """The 1-minute load average (``None`` where the platform has none): recorded at a run's
    start and end, since running times, and every answer a time limit cut, move with it."""
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        return None


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _table(rows: list[dict[str, Any]]) -> pa.Table:
    columns = {name: [row.get(name) for row in rows] for name in SCHEMA.names}
    return pa.Table.from_pydict(columns, schema=SCHEMA)


def _parts(rows_dir: Path) -> list[Path]:
    """Row parts in the order they were written (their names sort that way)."""
    return sorted(rows_dir.glob("part-*.parquet")) if rows_dir.is_dir() else []


def _live_parts(rows_dir: Path) -> tuple[list[Path], list[Path]]:
    """The parts to read, and those a compacted part replaces (left by a kill mid-compaction)."""
    parts = _parts(rows_dir)
    replaced: set[str] = set()
    for part in parts:
        if part.name.endswith(_COMPACT_SUFFIX):
            replaced.update(merged_parts(part, _MERGED))
    return [p for p in parts if p.name not in replaced], [p for p in parts if p.name in replaced]


def _latest_per_key(table: pa.Table) -> list[int]:
    """Indices of the last row of each key, in table order."""
    last: dict[str, int] = {}
    for i, key in enumerate(table.column("key").to_pylist()):
        last[key] = i
    return sorted(last.values())


def read_rows(directory: str | Path, dedupe: bool = True) -> pa.Table:
    """All rows of a results directory: the latest row of each key, or every row.

    ``dedupe=False`` is the history, in the order rows were written: a row
    run again with ``bench run --retry`` is there with its earlier attempts.
    A part that is not a readable result part raises a one-line
    :class:`~ddlsched.errors.StoreError` naming it.
    """
    if not Path(directory).is_dir():
        raise DdlschedError(f"no results directory {directory}")
    live, _ = _live_parts(Path(directory) / _ROWS_DIR)
    tables = [read_part(part, SCHEMA) for part in live]
    if not tables:
        return SCHEMA.empty_table()
    table = pa.concat_tables(tables)
    if dedupe and table.num_rows:
        keep = _latest_per_key(table)
        if len(keep) != table.num_rows:
            log.debug("%d earlier attempt(s) of rows in %s", table.num_rows - len(keep), directory)
            table = table.take(keep)
    return table


def read_manifest(directory: str | Path) -> dict[str, Any]:
    """The manifest of a results directory (``{}`` if none), through the read gate."""
    return _read_manifest_file(Path(directory) / _MANIFEST)


def _new_run_id() -> str:
    return f"{datetime.now(UTC).strftime(_STAMP)}-{uuid.uuid4().hex[:8]}"


def _stamp_after(part_name: str) -> str:
    """A run-id time stamp that sorts after the part ``part_name`` (clock set back)."""
    stamp = part_name.removeprefix("part-").split("-", 1)[0]
    for fmt in (_STAMP, "%Y%m%dT%H%M%S"):
        try:
            return (datetime.strptime(stamp, fmt) + timedelta(microseconds=1)).strftime(_STAMP)
        except ValueError:
            continue
    return datetime.now(UTC).strftime(_STAMP)


class ResultStore:
    """An append-only store of rows in ``directory``.

    >>> store = ResultStore(tmp)                      # doctest: +SKIP
    >>> store.lock(); store.add(row); store.flush()   # doctest: +SKIP

    Every write fault raises a one-line :class:`~ddlsched.errors.StoreError`
    naming the file; rows flushed before it are kept.
    """

    def __init__(self, directory: str | Path, flush_interval_s: float = 1.0) -> None:
        self.directory = Path(directory)
        self.rows_dir = self.directory / _ROWS_DIR
        self.flush_interval_s = flush_interval_s
        try:
            self.rows_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise store_error(exc.filename or self.rows_dir, exc, "cannot create") from None
        self._pending: list[dict[str, Any]] = []
        self._last_flush = time.monotonic()
        self._run_id = _new_run_id()
        self._parts = 0
        self.written = 0

    # -- lock

    def lock(self) -> None:
        """Take the directory's run lock (released on close or when the process dies).

        Two runs writing into one directory would run the same tasks twice;
        the second is refused with a one-line error. With the lock held, the
        temporary files of interrupted writes and the parts a compacted part
        replaces are removed, and this run's parts are named to sort after
        every existing one.
        """
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX
            return
        path = self.directory / ".lock"
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        except OSError as exc:
            raise store_error(path, exc, "cannot open the run lock") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise DdlschedError(
                f"another run is writing to {self.directory}; wait for it or use another --out"
            ) from None
        self._lock_fd: int | None = fd
        remove_stale_temps(self.directory, self.rows_dir, cache_dir_of(self.directory))
        self._remove(_live_parts(self.rows_dir)[1])  # left by a kill mid-compaction
        parts = _parts(self.rows_dir)
        if parts and f"part-{self._run_id}" <= parts[-1].name:
            self._run_id = f"{_stamp_after(parts[-1].name)}-{uuid.uuid4().hex[:8]}"

    def unlock(self) -> None:
        """Release the run lock (if held)."""
        fd, self._lock_fd = getattr(self, "_lock_fd", None), None
        if fd is not None:
            os.close(fd)

    # -- rows

    def keys(self) -> set[str]:
        """Keys of every row already stored."""
        table = read_rows(self.directory, dedupe=False)
        return set(table.column("key").to_pylist())

    def latest(self) -> dict[str, dict[str, Any]]:
        """The latest row of each stored key: its status, time-limit flag, limits and
        code fingerprint."""
        table = read_rows(self.directory)
        columns = [
            "key",
            "status",
            "time_limit_hit",
            "time_limit_s",
            "kill_after_s",
            "code_fingerprint",
        ]
        return {row["key"]: row for row in table.select(columns).to_pylist()}

    def add(self, row: dict[str, Any]) -> None:
        """Buffer ``row``; write the buffer if ``flush_interval_s`` has passed."""
        self._pending.append(row)
        self.maybe_flush()

    def maybe_flush(self) -> None:
        """Write the buffered rows if ``flush_interval_s`` has passed since the last write."""
        if self._pending and time.monotonic() - self._last_flush >= self.flush_interval_s:
            self.flush()

    def flush(self) -> None:
        """Write pending rows as one new part (atomic rename).

        On a fault a :class:`StoreError` is raised and the rows stay pending
        (a later flush may write them; rows never written are not in the
        store, so the next run runs their tasks again).
        """
        self._last_flush = time.monotonic()
        if not self._pending:
            return
        rows, self._pending = self._pending, []
        self._parts += 1
        name = f"part-{self._run_id}-{self._parts:06d}.parquet"
        try:
            self._write_part(self.rows_dir / name, _table(rows))
        except BaseException:
            self._pending[:0] = rows
            raise
        self.written += len(rows)

    def _write_part(self, path: Path, table: pa.Table) -> None:
        sink = pa.BufferOutputStream()
        pq.write_table(table, sink, compression="zstd")
        atomic_write(path, sink.getvalue().to_pybytes())

    def compact(self) -> None:
        """Merge all parts into one, history included (the new part first, then old ones go).

        The merged part names the parts it replaces (Parquet metadata), so a
        kill between writing it and removing them duplicates nothing: readers
        skip the replaced parts and the next run removes them.
        """
        self.flush()
        parts = _parts(self.rows_dir)
        if len(parts) <= 1:
            return
        table = read_rows(self.directory, dedupe=False)
        table = table.replace_schema_metadata({_MERGED: json.dumps([p.name for p in parts])})
        self._parts += 1
        name = f"part-{self._run_id}-{self._parts:06d}{_COMPACT_SUFFIX}"
        self._write_part(self.rows_dir / name, table)
        self._remove(parts)

    @staticmethod
    def _remove(parts: list[Path]) -> None:
        for part in parts:
            try:
                part.unlink(missing_ok=True)
            except OSError as exc:
                raise store_error(part, exc, "cannot remove after compaction") from None

    # -- manifest

    @property
    def manifest_path(self) -> Path:
        """``manifest.json`` of the directory."""
        return self.directory / _MANIFEST

    def read_manifest(self) -> dict[str, Any]:
        """The manifest (``{}`` if none); a corrupt one is a one-line :class:`StoreError`."""
        return read_manifest(self.directory)

    def write_manifest(self, manifest: dict[str, Any]) -> None:
        """Replace the manifest (atomically)."""
        data = json.dumps(manifest, indent=2, sort_keys=False, default=str).encode()
        atomic_write(self.manifest_path, data)

    def begin_run(
        self,
        suite: Any,
        executor: str,
        workers: int,
        tasks: int,
        pending: int,
        retry: Iterable[str] = (),
        code: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Record the start of a run (versions, commit, machine, suite hash, and ``code``:
        each method's code fingerprint and origin, by ``family.method``) in the manifest.

        Earlier runs still recorded as ``running`` died without recording
        their end (this run holds the lock): they are recorded as killed.
        """
        from ddlsched.solvers.result import versions

        manifest = self.read_manifest()
        close_dead_runs(self.directory, manifest)
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
            try:
                data = Path(suite.source).read_bytes()
            except OSError:  # the suite file went away since it was loaded: no copy
                data = None
            if data is not None:
                atomic_write(self.directory / "suite.toml", data)
        run = {
            "run_id": self._run_id,
            "started_at": _now(),
            "finished_at": None,
            "executor": executor,
            "workers": workers,
            "tasks": tasks,
            "pending_at_start": pending,
            "retry": sorted(retry),
            "rows_written": 0,
            "state": "running",
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "load_at_start": load_average(),
            "suite_sha256": suite.sha256,
            "code": code or {},
        }
        manifest.setdefault("runs", []).append(run)
        self.write_manifest(manifest)
        return run

    def end_run(self, state: str) -> None:
        """Record the end of this run (``complete``, ``interrupted`` or ``failed``)."""
        manifest = self.read_manifest()
        for run in manifest.get("runs", []):
            if run.get("run_id") == self._run_id:
                run.update(
                    finished_at=_now(),
                    rows_written=self.written,
                    state=state,
                    load_at_end=load_average(),
                )
        self.write_manifest(manifest)

    def extend(self, rows: Iterable[dict[str, Any]]) -> None:
        """:meth:`add` each row."""
        for row in rows:
            self.add(row)
