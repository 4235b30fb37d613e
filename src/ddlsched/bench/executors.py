"""Executors: where tasks run. A local process pool (the default) or Dask.

Both run every task in a :class:`Sandbox`: a persistent child process
(``python -m ddlsched.bench.worker``) fed over a pipe. The sandbox enforces a
task's wall-clock deadline by killing the child (a hung HiGHS call cannot be
interrupted in-thread) and turns a child that dies into an ``error`` row;
either way a fresh child takes the next task and the suite goes on. Rows
therefore do not depend on the executor: the same code produces them in the
same kind of process.

* :class:`LocalExecutor`: ``workers`` threads in this process, each owning a
  sandbox; no shared pool to break when one child is killed.
* :class:`DaskExecutor`: each task is a Dask task that runs in a sandbox
  owned by the Dask worker thread executing it. ``"local"`` starts a
  ``LocalCluster`` (processes, one thread each); any other address connects
  to an existing scheduler (on SLURM, start one with ``dask-jobqueue``, see
  ``benchmarks/PROTOCOL.md``).

``Executor.run(tasks, stop)`` yields rows as tasks finish, and ``None`` about
twice a second while waiting (so that callers can flush and redraw).
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from multiprocessing.connection import Connection
from typing import Any, Protocol

from ddlsched.bench.tasks import STATUS_TIME_LIMIT, Task, failure_row
from ddlsched.errors import DdlschedError

__all__ = [
    "DaskExecutor",
    "Executor",
    "LocalExecutor",
    "Sandbox",
    "make_executor",
]

log = logging.getLogger(__name__)

_HEARTBEAT_S = 0.5
_STARTUP_TIMEOUT_S = 300.0


class Executor(Protocol):
    """Runs tasks and yields their rows (``None`` while waiting)."""

    name: str
    workers: int

    def run(self, tasks: Sequence[Task], stop: threading.Event) -> Iterator[dict[str, Any] | None]:
        """Yield one row per task, in completion order, until done or ``stop`` is set."""
        ...

    def close(self) -> None:
        """Release processes and connections."""
        ...


# --------------------------------------------------------------------------- sandbox


def _signal_name(returncode: int | None) -> str:
    if returncode is None:
        return "unknown exit"
    if returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exit status {returncode}"


class Sandbox:
    """One persistent worker process; :meth:`run` executes a task in it.

    The child is started lazily and again after every kill or crash. Its
    stderr goes to a temporary file whose tail explains a crash.
    """

    def __init__(self, memory_mb: int | None = None) -> None:
        self.memory_mb = memory_mb
        self._proc: subprocess.Popen | None = None
        self._inbox: Connection | None = None  # parent -> child
        self._outbox: Connection | None = None  # child -> parent
        self._stderr = None
        self.started_processes = 0

    # -- process management

    def _start(self) -> None:
        try:
            self._spawn()
        except OSError as exc:  # no file descriptors, no room for the log, no fork
            self.kill()
            where = f"{exc.filename}: " if exc.filename else ""
            raise DdlschedError(
                f"cannot start a benchmark worker: {where}{exc.strerror or exc}"
            ) from None
        self._wait_ready()

    def _spawn(self) -> None:
        child_read, parent_write = os.pipe()
        try:
            parent_read, child_write = os.pipe()
        except OSError:
            os.close(child_read)
            os.close(parent_write)
            raise
        try:
            # Kept open for the child's life; closed in kill().
            self._stderr = tempfile.TemporaryFile(prefix="ddlsched-worker-")  # noqa: SIM115
            self._proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "ddlsched.bench.worker",
                    str(child_read),
                    str(child_write),
                    str(self.memory_mb) if self.memory_mb else "-",
                ],
                pass_fds=(child_read, child_write),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=self._stderr,
                env=self._environment(),
                close_fds=True,
            )
        except BaseException:
            os.close(parent_read)
            os.close(parent_write)
            raise
        finally:
            os.close(child_read)
            os.close(child_write)
        self._inbox = Connection(parent_write, readable=False)
        self._outbox = Connection(parent_read, writable=False)
        self.started_processes += 1

    def _environment(self) -> dict[str, str]:
        env = dict(os.environ)
        env.setdefault("PYTHONUNBUFFERED", "1")
        # Solver threads would fight over cores the pool already shares out.
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            env.setdefault(var, "1")
        if self.memory_mb:
            # glibc reserves address space per thread arena; under RLIMIT_AS a
            # many-threaded solver would otherwise fail long before using it.
            env.setdefault("MALLOC_ARENA_MAX", "2")
        return env

    def _wait_ready(self) -> None:
        assert self._outbox is not None
        deadline = time.monotonic() + _STARTUP_TIMEOUT_S
        while True:
            if self._outbox.poll(min(1.0, max(0.0, deadline - time.monotonic()))):
                try:
                    message = self._outbox.recv()
                except (EOFError, OSError):
                    message = None
                if message and message[0] == "ready":
                    return
                reason = self._crash_reason()
                self.kill()
                raise DdlschedError(f"benchmark worker failed to start: {reason}")
            if time.monotonic() > deadline:
                self.kill()
                raise DdlschedError(
                    f"benchmark worker did not start within {_STARTUP_TIMEOUT_S:.0f} s"
                )

    def _stderr_tail(self, limit: int = 400) -> str:
        if self._stderr is None:
            return ""
        try:
            self._stderr.seek(0, os.SEEK_END)
            size = self._stderr.tell()
            self._stderr.seek(max(0, size - limit))
            text = self._stderr.read().decode("utf-8", "replace")
        except (OSError, ValueError):
            return ""
        lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
        return lines[-1] if lines else ""

    def _crash_reason(self) -> str:
        code = None
        if self._proc is not None:
            try:
                code = self._proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                code = None
        tail = self._stderr_tail()
        return f"worker process died ({_signal_name(code)})" + (f": {tail}" if tail else "")

    def kill(self) -> None:
        """Kill the child (if any) and forget it; the next task starts a new one."""
        proc, self._proc = self._proc, None
        for conn in (self._inbox, self._outbox):
            if conn is not None:
                with contextlib.suppress(OSError):
                    conn.close()
        self._inbox = self._outbox = None
        if proc is not None and proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:  # pragma: no cover
                log.warning("worker %s did not die after SIGKILL", proc.pid)
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    close = kill

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    # -- running a task

    def run(self, task: Task, stop: threading.Event | None = None) -> dict[str, Any] | None:
        """Execute ``task`` in the child; kill it at ``task.kill_after_s``.

        Returns the task's row (a ``time_limit`` or ``error`` row when the
        child was killed or died), or ``None`` when ``stop`` was set before
        the task finished (nothing is recorded for it).
        """
        if self._proc is None or self._proc.poll() is not None:
            self.kill()
            self._start()
        assert self._inbox is not None and self._outbox is not None
        worker = f"sandbox:{self.pid}"
        started = time.monotonic()
        try:
            self._inbox.send(task)
        except (BrokenPipeError, OSError):
            reason = self._crash_reason()
            self.kill()
            return failure_row(task, "error", reason, 0.0, worker=worker)
        deadline = started + task.kill_after_s
        size = None
        while True:
            if stop is not None and stop.is_set():
                self.kill()
                return None
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.kill()
                return failure_row(
                    task,
                    STATUS_TIME_LIMIT,
                    f"killed after {task.kill_after_s:g} s (wall-clock limit kill_after_s)",
                    time.monotonic() - started,
                    instance_size=size,
                    worker=worker,
                )
            if not self._outbox.poll(min(remaining, _HEARTBEAT_S)):
                continue
            try:
                kind, payload = self._outbox.recv()
            except (EOFError, OSError):
                reason = self._crash_reason()
                self.kill()
                return failure_row(
                    task,
                    "error",
                    reason,
                    time.monotonic() - started,
                    instance_size=size,
                    worker=worker,
                )
            if kind == "started":
                size = payload
            elif kind == "done":
                return payload


# --------------------------------------------------------------------------- local pool


class LocalExecutor:
    """``workers`` sandboxes on this machine, fed by one thread each."""

    name = "local"

    def __init__(self, workers: int | None = None) -> None:
        workers = workers or os.cpu_count() or 1
        if workers < 1:
            raise DdlschedError(f"--workers must be >= 1, got {workers}")
        self.workers = workers
        self._sandboxes: list[Sandbox] = []
        self._lock = threading.Lock()

    def _worker_loop(
        self,
        todo: queue.Queue,
        done: queue.Queue,
        stop: threading.Event,
        memory_mb: int | None,
    ) -> None:
        sandbox = Sandbox(memory_mb)
        with self._lock:
            self._sandboxes.append(sandbox)
        try:
            while not stop.is_set():
                try:
                    task = todo.get_nowait()
                except queue.Empty:
                    return
                try:
                    row = sandbox.run(task, stop)
                except Exception as exc:  # the sandbox itself failed (cannot start)
                    done.put(("fatal", exc))
                    return
                if row is None:
                    return
                done.put(("row", row))
        finally:
            sandbox.kill()
            done.put(("exit", None))

    def run(self, tasks: Sequence[Task], stop: threading.Event) -> Iterator[dict[str, Any] | None]:
        if not tasks:
            return
        todo: queue.Queue = queue.Queue()
        for task in tasks:
            todo.put(task)
        done: queue.Queue = queue.Queue()
        memory_mb = tasks[0].memory_mb
        threads = [
            threading.Thread(
                target=self._worker_loop,
                args=(todo, done, stop, memory_mb),
                name=f"ddlsched-sandbox-{i}",
                daemon=True,
            )
            for i in range(min(self.workers, len(tasks)))
        ]
        for thread in threads:
            thread.start()
        alive = len(threads)
        try:
            while alive:
                try:
                    kind, payload = done.get(timeout=_HEARTBEAT_S)
                except queue.Empty:
                    yield None
                    continue
                if kind == "row":
                    yield payload
                elif kind == "exit":
                    alive -= 1
                elif kind == "fatal":
                    stop.set()
                    raise payload
        finally:
            stop.set()
            for thread in threads:
                thread.join(timeout=15)

    def close(self) -> None:
        with self._lock:
            for sandbox in self._sandboxes:
                sandbox.kill()
            self._sandboxes.clear()


# --------------------------------------------------------------------------- dask


_DASK_SANDBOXES: dict[tuple[int, int | None], Sandbox] = {}
_DASK_LOCK = threading.Lock()


def _close_dask_sandboxes() -> None:
    """Kill the sandboxes of this Dask worker (also its ``atexit`` handler: never raises)."""
    with _DASK_LOCK:
        for sandbox in _DASK_SANDBOXES.values():
            try:
                sandbox.kill()
            except Exception as exc:  # at exit, a traceback would be noise: log one line
                log.warning("cannot stop benchmark worker %s: %s", sandbox.pid, exc)
        _DASK_SANDBOXES.clear()


def run_in_worker_sandbox(task: Task) -> dict[str, Any]:
    """The Dask task: run ``task`` in the sandbox of the calling worker thread."""
    import atexit

    key = (threading.get_ident(), task.memory_mb)
    with _DASK_LOCK:
        sandbox = _DASK_SANDBOXES.get(key)
        if sandbox is None:
            if not _DASK_SANDBOXES:
                atexit.register(_close_dask_sandboxes)
            sandbox = _DASK_SANDBOXES[key] = Sandbox(task.memory_mb)
    row = sandbox.run(task)
    assert row is not None
    return row


class DaskExecutor:
    """Tasks as Dask tasks; ``address`` is ``"local"`` or a scheduler address."""

    name = "dask"

    def __init__(self, address: str = "local", workers: int | None = None) -> None:
        try:
            from distributed import Client, LocalCluster
        except ImportError as exc:  # pragma: no cover - a dependency
            raise DdlschedError(f"Dask is not installed: {exc}") from None
        self.address = address
        self._cluster = None
        if not log.isEnabledFor(logging.INFO):  # Dask logs at INFO to stderr by default
            logging.getLogger("distributed").setLevel(logging.WARNING)
        if address == "local":
            workers = workers or os.cpu_count() or 1
            self._cluster = LocalCluster(
                n_workers=workers,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
                silence_logs=logging.WARNING,
            )
            self._client = Client(self._cluster)
        else:
            try:
                self._client = Client(address, timeout="20s")
            except (OSError, TimeoutError) as exc:
                raise DdlschedError(f"cannot connect to Dask scheduler {address}: {exc}") from None
        self.workers = workers or sum(
            w.get("nthreads", 1)
            for w in self._client.scheduler_info(n_workers=-1)["workers"].values()
        )

    @property
    def client(self) -> Any:
        return self._client

    def run(self, tasks: Sequence[Task], stop: threading.Event) -> Iterator[dict[str, Any] | None]:
        from distributed import as_completed

        if not tasks:
            return
        by_future = {}
        for task in tasks:
            future = self._client.submit(
                run_in_worker_sandbox, task, key=f"ddlsched-{task.key}", pure=False, retries=0
            )
            by_future[future] = task
        pending = as_completed(list(by_future), with_results=False)
        remaining = set(by_future)
        last_beat = time.monotonic()
        try:
            while remaining:
                if stop.is_set():
                    return
                batch = pending.next_batch(block=False) if pending.has_ready() else []
                if not batch:
                    time.sleep(0.005)
                    if time.monotonic() - last_beat > _HEARTBEAT_S:
                        last_beat = time.monotonic()
                        yield None
                    continue
                for future in batch:
                    remaining.discard(future)
                    task = by_future[future]
                    if future.status == "finished":
                        yield future.result()
                    else:
                        try:
                            exc = future.exception()
                        except Exception as err:  # cancelled
                            exc = err
                        yield failure_row(
                            task,
                            "error",
                            f"Dask task failed: {type(exc).__name__}: {exc}",
                            None,
                        )
        finally:
            for future in remaining:
                future.cancel()

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._client.run(_close_dask_sandboxes)
        self._client.close()
        if self._cluster is not None:
            self._cluster.close()


def make_executor(workers: int | None = None, dask: str | None = None) -> Executor:
    """The local pool, or Dask when ``dask`` is ``"local"`` or a scheduler address."""
    if dask:
        return DaskExecutor(dask, workers)
    return LocalExecutor(workers)
