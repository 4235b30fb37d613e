"""A large HiGHS MILP solve in a forked worker process that the deadline kills.

Why: HiGHS 1.16 does not check its clock inside every phase. On the
``dmlrs_slot`` ILP of 100,000 machines (200,000 integer columns, 400,000
rows) one presolve pass runs ~172 s without looking at ``time_limit``
(ERGO-Code/HiGHS issues 1501, 2226); with presolve off its root heuristics
overrun instead, and no HiGHS option bounds either. A C call cannot be
interrupted from Python, so such a solve runs where it can be stopped: in a
child process.

How (:func:`run_forked`): after Pyomo has handed the model to highspy (in
the parent, under the deadline's interrupt), the process forks; the child
inherits the highspy model (copy-on-write), runs HiGHS with the time limit
it would have had in-process less a reserve for the answer's way back (at
least 0.2 s, at most 10 %; ``solvers/backends.py``), and writes back plain
data through a pipe:
the termination condition, the solution status, incumbent, bound and the
column values (:func:`plain_results`), pickled. The parent waits for the
answer until the time the solve was given (the deadline, or the cap of
``SolveLimits.time_limit_s``), plus nothing; then it kills the child
(``SIGKILL``) and raises :class:`WorkerKilled`: the solve reports
``time_limit_no_solution`` with ``time_limit_hit`` true. **Whatever HiGHS
had found by then is lost**: the child is killed, not asked. An answer that
arrives in time is turned back into a Pyomo ``Results`` whose solution
loader is Pyomo's own (:func:`results_from`), so the values are loaded into
the model by the same code, in the same order, as in-process: same values,
same decoded schedule (``tests/test_solver_worker.py``).

Which solves (:func:`use_worker`): every MILP (at least one integer
column; :data:`WORKER_MIN_COLUMNS`), under a finite time limit,
single-threaded, on a platform with ``fork``. LPs and solves without a
finite limit run in-process. Forking costs milliseconds (the page tables
of the parent; ``benchmarks/results/platform.md``, "A HiGHS MILP in a worker"), and
a killed child's incumbent is lost where in-process HiGHS would have
returned it late; but HiGHS was seen to overrun on models of every size
(the ``dmlrs_slot`` ILP of 60,000 columns by 5.9 s at 120 s; a ``placement
exact`` ILP by 67 s at 10 s), and an answer that comes back after the
limit is no answer for a suite. Direct highspy MIPs in loops (thousands of
small ones) use one long-lived worker instead of a fork each
(:mod:`ddlsched.solvers.highs_server`). Memory:
the child allocates what HiGHS would have in-process; the model it
inherits is shared with the parent until written. When ``fork`` fails (no
memory or process slot) the solve runs in-process, with a warning.
Single-threaded only: HiGHS keeps a process-wide pool of worker threads,
which a forked child would inherit without the threads.

The child: ignores ``SIGALRM`` and ``SIGINT`` (a timer of the parent's
:meth:`~ddlsched.deadline.Deadline.interrupting` is not inherited across
``fork``, but its handler is: the parent, not the child, reacts to the
deadline and to Ctrl-C); asks the kernel to kill it when the parent dies
(``PR_SET_PDEATHSIG``, Linux); sends its standard output and error to
``/dev/null`` (nothing of the child may reach the parent's ``--json``
output, nor a crash dump its one-line error); disables
the garbage collector (a collection would touch, hence copy, every page of
the model); ends with ``os._exit`` (no ``atexit`` handler, no flush of
buffers copied from the parent). A child that fails in Python sends its
error (one line); one that dies (a signal, the kernel's OOM killer) makes
the parent raise a one-line :class:`~ddlsched.errors.SolverError` naming
the signal. The parent reaps every child it forked, killed or not
(``waitpid``): no zombie is left, also when the parent's own deadline
interrupt or a ``KeyboardInterrupt`` ends the wait.
"""

from __future__ import annotations

import contextlib
import faulthandler
import gc
import logging
import math
import os
import pickle
import select
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ddlsched.errors import SolverError

__all__ = [
    "WORKER_MIN_COLUMNS",
    "WorkerKilled",
    "WorkerUnavailable",
    "plain_results",
    "results_from",
    "run_forked",
    "use_worker",
]

log = logging.getLogger(__name__)

#: Columns (variables) from which a HiGHS MILP under a finite limit runs in a worker
#: (the ``dmlrs_slot`` ILP overran in-process by 6-16 s at 200,000 columns and by 5.9 s at
#: 60,000). Every MILP in a worker (1) was tried: in one full run of the test suite on two
#: loaded cores, four tiny placement MILPs forked late in a long-lived test process came
#: back without an answer at a 60 s limit (they pass alone; the cause is not found), so
#: small MILPs stay in-process, under HiGHS's own clock, until it is. The 77 s overrun of
#: ``placement exact`` on BERT-24 / 4,096 GPUs was its Heavy-Edge fallback, not the ILP
#: (fixed there). The worker costs one ``fork`` per solve, 2-36 ms on 4,000-60,000 columns.
WORKER_MIN_COLUMNS = 50_000

#: How long the parent waits for a child that closed its pipe to exit before killing it.
_EXIT_WAIT_S = 1.0
_PR_SET_PDEATHSIG = 1


class WorkerKilled(Exception):
    """The worker did not answer by its time and was killed (the message says so)."""


class WorkerUnavailable(Exception):
    """``fork`` failed (no memory or process slot for a child): solve in-process instead."""


def use_worker(num_variables: int, num_integer: int, seconds: float, threads: int) -> bool:
    """Whether a HiGHS solve of this size and time goes to a worker (module docstring)."""
    return (
        num_integer > 0
        and num_variables >= WORKER_MIN_COLUMNS
        and math.isfinite(seconds)
        and threads == 1
        and hasattr(os, "fork")
    )


def run_forked(work: Callable[[], Any], seconds: float, what: str) -> Any:
    """Return ``work()`` computed in a forked child, or raise :class:`WorkerKilled`
    after ``seconds`` (:class:`WorkerUnavailable` when no child can be forked).

    ``work`` must return picklable data. A child that raises makes this raise
    :class:`~ddlsched.errors.SolverError` with its error; one that dies without
    answering, too, naming how it died. The child is reaped in every case.
    """
    for stream in (sys.stdout, sys.stderr):  # nothing buffered twice
        with contextlib.suppress(AttributeError, OSError, ValueError):
            stream.flush()
    read_fd, write_fd = os.pipe()
    parent = os.getpid()
    started = time.monotonic()
    try:
        pid = os.fork()
    except OSError as exc:  # no memory or process left for a child
        os.close(read_fd)
        os.close(write_fd)
        raise WorkerUnavailable(f"{what}: cannot fork a worker process ({exc})") from None
    if pid == 0:  # pragma: no cover - the child (coverage does not follow it)
        _child(work, read_fd, write_fd, parent)
    os.close(write_fd)
    data = None
    try:
        data = _read_until(read_fd, started + seconds)
    finally:
        os.close(read_fd)
        exit_status = _reap(pid, wait=data is not None)
    if data is None:
        raise WorkerKilled(
            f"{what}: the worker process was killed at the time limit ({seconds:.3g} s); "
            "its incumbent, if any, is lost"
        )
    try:
        kind, value = pickle.loads(data)
    except Exception:  # nothing, or a torn message: the child died
        raise SolverError(
            f"{what}: the worker process {_describe(exit_status)} before answering"
        ) from None
    if kind != "ok":
        raise SolverError(f"{what}: the worker process failed: {value}")
    return value


def _read_until(fd: int, end: float) -> bytes | None:
    """All bytes until end of file, or ``None`` if the monotonic time ``end`` comes first."""
    chunks: list[bytes] = []
    while True:
        left = end - time.monotonic()
        if left <= 0:
            return None
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            continue
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def _reap(pid: int, wait: bool) -> int | None:
    """Kill the child unless ``wait`` (it answered: let it exit, ``_EXIT_WAIT_S`` at
    most), then collect it; its wait status.

    ``SIGALRM`` is held meanwhile: the deadline's interrupt, which re-fires after
    the limit, must not cut the collection short and leave a zombie; it is
    delivered on return.
    """
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
    try:
        return _collect(pid, wait)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


def _collect(pid: int, wait: bool) -> int | None:
    if wait:
        end = time.monotonic() + _EXIT_WAIT_S
        pause = 1e-4  # the child exits right after its answer: poll fast, then slower
        while time.monotonic() < end:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                return status
            time.sleep(pause)
            pause = min(2 * pause, 0.005)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:  # pragma: no cover - already reaped by someone else
        return None
    while True:
        try:
            return os.waitpid(pid, 0)[1]
        except InterruptedError:  # pragma: no cover - retried by Python (PEP 475)
            continue
        except ChildProcessError:  # pragma: no cover - reaped by a SIGCHLD handler
            return None


def _describe(status: int | None) -> str:
    if status is None:
        return "ended"
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        return f"was killed by signal {number} ({signal.Signals(number).name})"
    return f"exited with status {os.WEXITSTATUS(status)}"


def _child(work: Callable[[], Any], read_fd: int, write_fd: int, parent: int) -> None:
    """The forked child: run ``work``, write its pickled answer, exit (never returns)."""
    try:
        os.close(read_fd)
        _detach(parent)
        try:
            payload = pickle.dumps(("ok", work()), protocol=pickle.HIGHEST_PROTOCOL)
        except BaseException as exc:  # every failure goes to the parent
            first = (str(exc).strip().splitlines() or [""])[0]
            payload = pickle.dumps(("error", f"{type(exc).__name__}: {first}".rstrip(": ")))
        view = memoryview(payload)
        while view:
            view = view[os.write(write_fd, view) :]
    finally:
        os._exit(0)


def _detach(parent: int) -> None:  # pragma: no cover - runs in the child
    """Make the child harmless to its parent (module docstring)."""
    gc.disable()
    faulthandler.disable()  # its dump would go to the parent's terminal (pytest's file)
    for number in (signal.SIGALRM, signal.SIGINT):
        signal.signal(number, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:  # the parent died before the request
        os._exit(1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    for fd in (1, 2):  # C and Python writers alike (the error goes through the pipe)
        os.dup2(devnull, fd)
    os.close(devnull)
    sys.stdout = sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - until os._exit


# --------------------------------------------------------------------------- HiGHS answers


@dataclass
class _WorkerSolution:
    """The part of a ``highspy.HighsSolution`` that Pyomo's loader reads (primal values)."""

    col_value: Any
    value_valid: bool
    dual_valid: bool = False


def plain_results(solver: Any, results: Any) -> dict[str, Any]:
    """What a worker sends back of Pyomo's ``Results`` of a HiGHS solve: plain data."""
    solution = solver._sol
    valid = solution is not None and bool(solution.value_valid)
    return {
        "termination": results.termination_condition.name,
        "solution_status": results.solution_status.name,
        "incumbent": results.incumbent_objective,
        "bound": results.objective_bound,
        "highs_time": results.timing_info.highs_time,
        "log": results.solver_log,
        "col_value": solution.col_value if valid else None,
    }


def results_from(solver: Any, answer: dict[str, Any]) -> Any:
    """Pyomo's ``Results`` of a solve from a worker's :func:`plain_results`.

    The solution loader is Pyomo's ``HighsSolutionLoader`` on ``solver``, which
    holds the worker's column values in place of the HiGHS solution: loading
    reads them by the same column map as in-process. Duals are not carried.
    """
    from pyomo.contrib.solver.common.results import Results, SolutionStatus, TerminationCondition
    from pyomo.contrib.solver.solvers.highs import HighsSolutionLoader

    col_value = answer["col_value"]
    solver._sol = _WorkerSolution(col_value, value_valid=col_value is not None)
    results = Results()
    results.solution_loader = HighsSolutionLoader(solver, solver._model)
    results.solver_name = solver.name
    results.solver_version = solver.version()
    results.solver_config = solver._active_config
    results.solver_log = answer["log"]
    results.timing_info.highs_time = answer["highs_time"]
    results.termination_condition = TerminationCondition[answer["termination"]]
    results.solution_status = SolutionStatus[answer["solution_status"]]
    results.incumbent_objective = answer["incumbent"]
    results.objective_bound = answer["bound"]
    return results
