"""Run a suite: expand it into tasks, skip finished ones, execute the rest, store rows.

:func:`run_suite` is what ``ddlsched bench run`` calls. Re-running a suite
into the same results directory runs only the tasks whose key has no row
yet, so an interrupted run (Ctrl-C, ``SIGTERM``, even ``kill -9``) resumes
where it stopped: every row it had written is kept, a task that was running
is run again.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ddlsched.bench.executors import Executor, make_executor
from ddlsched.bench.store import ResultStore
from ddlsched.bench.suite import Suite
from ddlsched.bench.tasks import STATUS_TIME_LIMIT, Task, expand

__all__ = ["Progress", "RunSummary", "run_suite"]

log = logging.getLogger(__name__)

_FAILED = ("error", STATUS_TIME_LIMIT)
_KIND_PRIORITY = {"exact": 0, "bound": 1, "heuristic": 2}


@dataclass
class Progress:
    """What a progress callback sees."""

    total: int  # tasks of this run (pending at start)
    done: int = 0
    failed: int = 0  # error or time_limit rows
    skipped: int = 0  # tasks already in the store
    started_at: float = field(default_factory=time.monotonic)
    last: str = ""

    @property
    def elapsed_s(self) -> float:
        return time.monotonic() - self.started_at


@dataclass
class RunSummary:
    """The outcome of :func:`run_suite`."""

    directory: Path
    tasks: int
    skipped: int
    done: int
    failed: int
    interrupted: bool
    elapsed_s: float
    executor: str
    workers: int
    status_counts: dict[str, int] = field(default_factory=dict)


def run_suite(
    suite: Suite,
    out: str | Path | None = None,
    *,
    workers: int | None = None,
    dask: str | None = None,
    executor: Executor | None = None,
    on_progress: Callable[[Progress], None] | None = None,
    flush_interval_s: float = 1.0,
    limit: int | None = None,
    stop: threading.Event | None = None,
) -> RunSummary:
    """Run every task of ``suite`` that has no row in ``out`` yet.

    ``executor`` overrides ``workers``/``dask`` (and is not closed here);
    ``limit`` runs at most that many pending tasks (for smoke runs);
    ``stop`` lets another thread end the run early (rows so far are kept).
    A ``KeyboardInterrupt`` stops the run after flushing what finished and
    propagates.
    """
    directory = Path(out) if out is not None else suite.output_dir()
    tasks = expand(suite)
    store = ResultStore(directory, flush_interval_s=flush_interval_s)
    store.lock()
    try:
        return _run(suite, store, tasks, workers, dask, executor, on_progress, limit, stop)
    finally:
        store.unlock()


def _run(
    suite: Suite,
    store: ResultStore,
    tasks: list[Task],
    workers: int | None,
    dask: str | None,
    executor: Executor | None,
    on_progress: Callable[[Progress], None] | None,
    limit: int | None,
    stop: threading.Event | None,
) -> RunSummary:
    directory = store.directory
    finished = store.keys()
    pending: list[Task] = [t for t in tasks if t.key not in finished]
    if limit is not None:
        pending = pending[:limit]
    # Longest first (LPT): exact formulations, then bounds, then heuristics,
    # so that a slow exact solve does not start last and leave a tail.
    pending.sort(key=lambda t: _KIND_PRIORITY.get(t.kind, 3))
    skipped = len(tasks) - len([t for t in tasks if t.key not in finished])
    own_executor = executor is None
    stop = stop or threading.Event()
    progress = Progress(total=len(pending), skipped=skipped)
    counts: dict[str, int] = {}
    state = "failed"
    started = time.monotonic()
    if own_executor and pending:
        executor = make_executor(workers, dask)
    name = executor.name if executor is not None else "none"
    nworkers = executor.workers if executor is not None else 0
    store.begin_run(suite, name, nworkers, len(tasks), len(pending))
    log.info(
        "suite %s: %d tasks, %d already stored, %d to run on %s (%d workers)",
        suite.name,
        len(tasks),
        skipped,
        len(pending),
        name,
        nworkers,
    )
    if on_progress:
        on_progress(progress)
    try:
        if pending:
            assert executor is not None
            for row in executor.run(pending, stop):
                if row is not None:
                    store.add(row)
                    progress.done += 1
                    counts[row["status"]] = counts.get(row["status"], 0) + 1
                    if row["status"] in _FAILED:
                        progress.failed += 1
                        log.info(
                            "%s %s on %s: %s",
                            row["status"],
                            row["label"],
                            row["instance_id"],
                            row["error"],
                        )
                    progress.last = f"{row['label']} on {row['instance_id']}"
                else:
                    store.maybe_flush()
                if on_progress:
                    on_progress(progress)
        state = "interrupted" if stop.is_set() and progress.done < len(pending) else "complete"
    except KeyboardInterrupt:
        state = "interrupted"
        raise
    finally:
        stop.set()
        store.flush()
        if own_executor and executor is not None:
            executor.close()
        if state == "complete":
            store.compact()
        store.end_run(state)
    return RunSummary(
        directory=directory,
        tasks=len(tasks),
        skipped=skipped,
        done=progress.done,
        failed=progress.failed,
        interrupted=state != "complete",
        elapsed_s=time.monotonic() - started,
        executor=name,
        workers=nworkers,
        status_counts=counts,
    )
