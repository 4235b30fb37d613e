"""Run a suite: expand it into tasks, skip finished ones, execute the rest, store rows.

:func:`run_suite` is what ``ddlsched bench run`` calls. Re-running a suite
into the same results directory runs only the tasks whose key has no row
yet, or whose row was made by other code (its ``code_fingerprint`` is not
the current one: an edited method, see :mod:`ddlsched.bench.fingerprint`),
so an interrupted run (Ctrl-C, ``SIGTERM``, even ``kill -9``) resumes
where it stopped: every row it had written is kept, a task that was running
is run again. Workers read the instances from the results directory's
instance cache (:mod:`ddlsched.bench.instance_cache`), which the suite's check
fills, and cache the ones they build, so a resumed run builds no instance
again.

``retry`` (``bench run --retry``) also re-runs the suite's tasks whose latest
row failed (see :mod:`ddlsched.bench.retry`). A fault of the result store (a
full disk, a directory made read-only) ends the run with a one-line
:class:`~ddlsched.errors.StoreError`; the rows flushed before it are kept,
the executor's processes are stopped, and the end of the run is recorded if
the manifest can still be written.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ddlsched.bench.executors import Executor, make_executor
from ddlsched.bench.instance_cache import cache_dir_of, make_cache_dir
from ddlsched.bench.provenance import run_code
from ddlsched.bench.retry import FAILED_STATUSES, parse_retry, wants_retry
from ddlsched.bench.store import ResultStore
from ddlsched.bench.suite_spec import Suite
from ddlsched.bench.tasks import Task, expand
from ddlsched.errors import StoreError

__all__ = ["Progress", "RunSummary", "run_suite", "stale_row"]

log = logging.getLogger(__name__)

_KIND_PRIORITY = {"exact": 0, "bound": 1, "heuristic": 2}


@dataclass
class Progress:
    """What a progress callback sees."""

    total: int  # tasks of this run (pending at start)
    done: int = 0
    failed: int = 0  # rows without a result (retry.FAILED_STATUSES)
    skipped: int = 0  # tasks already in the store (and not retried)
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
    retried: int = 0  # tasks run again by ``retry`` (counted in ``done`` once run)
    #: Tasks run again because their method's code changed, by method (``family.method``).
    recomputed: dict[str, int] = field(default_factory=dict)

    def recomputed_line(self) -> str:
        """``160 row(s) recomputed: code of rar.exact, rar.sjf_bco changed``."""
        changed = ", ".join(sorted(self.recomputed))
        return f"{sum(self.recomputed.values())} row(s) recomputed: code of {changed} changed"


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
    retry: Iterable[str] | None = None,
    instance_cache: bool = True,
) -> RunSummary:
    """Run every task of ``suite`` that has no row in ``out`` yet.

    ``executor`` overrides ``workers``/``dask`` (and is not closed here);
    ``limit`` runs at most that many pending tasks (for smoke runs);
    ``stop`` lets another thread end the run early (rows so far are kept);
    ``retry`` (kinds ``failed``, ``time_limit``, ``error``, see
    :mod:`ddlsched.bench.retry`) also runs the tasks whose latest row is of
    those kinds again; ``instance_cache``: workers read each generated instance from
    ``out/instances/`` and write it there when they build it
    (:mod:`ddlsched.bench.instance_cache`; ``False``: every worker builds its
    instance). A ``KeyboardInterrupt`` stops the run after flushing
    what finished and propagates; a store fault raises a :class:`StoreError`.
    """
    kinds = parse_retry(retry)
    directory = Path(out) if out is not None else suite.output_dir()
    cache_dir = cache_dir_of(directory) if instance_cache else None
    tasks = expand(suite, cache_dir)
    store = ResultStore(directory, flush_interval_s=flush_interval_s)
    store.lock()
    if cache_dir is not None:
        make_cache_dir(cache_dir)
    try:
        return _run(suite, store, tasks, workers, dask, executor, on_progress, limit, stop, kinds)
    finally:
        store.unlock()


def stale_row(task: Task, row: dict) -> bool:
    """Whether the stored ``row`` of ``task`` was made by other code than the task's."""
    return bool(task.code_fingerprint) and row.get("code_fingerprint") != task.code_fingerprint


def _select(
    tasks: list[Task], latest: dict[str, dict], kinds: frozenset[str], limit: int | None
) -> tuple[list[Task], int, int, dict[str, int]]:
    """The tasks to run (no row yet, a row of other code, or a latest row to retry),
    how many retry, how many skip, and how many run again per method whose code changed."""
    pending = [
        t
        for t in tasks
        if t.key not in latest
        or stale_row(t, latest[t.key])
        or (kinds and wants_retry(latest[t.key], kinds))
    ]
    skipped = len(tasks) - len(pending)
    if limit is not None:
        pending = pending[:limit]
    recomputed: dict[str, int] = {}
    for task in pending:
        if task.key in latest and stale_row(task, latest[task.key]):
            name = f"{task.instance.family}.{task.method}"
            recomputed[name] = recomputed.get(name, 0) + 1
    retried = sum(1 for t in pending if t.key in latest and not stale_row(t, latest[t.key]))
    # Longest first (LPT): exact formulations, then bounds, then heuristics,
    # so that a slow exact solve does not start last and leave a tail.
    pending.sort(key=lambda t: _KIND_PRIORITY.get(t.kind, 3))
    return pending, retried, skipped, recomputed


def _close(
    store: ResultStore, executor: Executor | None, own_executor: bool, state: str
) -> StoreError | None:
    """Flush, stop the executor, compact and record the end; the first store fault, if any.

    Every step is tried whatever failed before it, so that the executor's
    processes are stopped and the rows that can be written are.
    """
    fault: StoreError | None = None
    try:
        store.flush()
    except StoreError as exc:
        fault, state = exc, "failed"
    if own_executor and executor is not None:
        executor.close()
    if state == "complete":
        try:
            store.compact()
        except StoreError as exc:
            fault, state = exc, "failed"
    try:
        store.end_run(state)
    except StoreError as exc:
        fault = fault or exc
    return fault


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
    kinds: frozenset[str],
) -> RunSummary:
    directory = store.directory
    pending, retried, skipped, recomputed = _select(tasks, store.latest(), kinds, limit)
    for name, count in sorted(recomputed.items()):
        log.info("%d row(s) of %s recomputed: its code changed", count, name)
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
    try:
        store.begin_run(
            suite, name, nworkers, len(tasks), len(pending), kinds, code=run_code(tasks)
        )
    except BaseException:
        if own_executor and executor is not None:
            executor.close()
        raise
    log.info(
        "suite %s: %d tasks, %d already stored, %d to run (%d retried) on %s (%d workers)",
        suite.name,
        len(tasks),
        skipped,
        len(pending),
        retried,
        name,
        nworkers,
    )
    if on_progress:
        on_progress(progress)
    failure: BaseException | None = None
    try:
        if pending:
            assert executor is not None
            for row in executor.run(pending, stop):
                if row is not None:
                    store.add(row)
                    progress.done += 1
                    counts[row["status"]] = counts.get(row["status"], 0) + 1
                    if row["status"] in FAILED_STATUSES:
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
    except BaseException as exc:  # a store fault, a worker that cannot start, ...
        failure = exc
        raise
    finally:
        stop.set()
        closing = _close(store, executor, own_executor, "failed" if failure else state)
        if closing is not None:
            if failure is None:
                raise closing  # a store fault outranks an interruption
            log.info("also: %s", closing)  # the first fault is the error shown
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
        retried=retried,
        recomputed=recomputed,
    )
