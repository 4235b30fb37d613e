"""HiGHS MIPs in one long-lived worker process that the deadline kills.

Why: HiGHS does not check its clock in every phase of a MIP (one single-job
pricing MIP of ``dmlrs colgen`` ran more than 330 s at a 3.34 s limit), and
a C call cannot be interrupted from Python. HiGHS's user-interrupt callback
(``kCallbackMipInterrupt``) is polled where HiGHS polls its clock, so it
stops nothing that ``time_limit`` does not: only a process can be stopped
from outside.

Who sends MIPs here: the direct highspy MIPs (colgen's pricing and
restricted MILP, ``ub_capacity``, PD-ORS's slot ILP with ``slot_solver=ilp``,
the integer pattern solves of :mod:`ddlsched.solvers.placement_pattern_cover`)
and every Pyomo HiGHS MILP under a finite limit
(:mod:`ddlsched.solvers.highs_worker`).

Why not a fork per MIP: colgen solves thousands of small pricing MIPs;
forking the parent (hundreds of MB of page tables) per MIP cost 92 ms a MIP
at load 8 (276 MILPs, 5 rounds on ``paper`` seed 0: 143 s against 118 s
in-process; ``benchmarks/pricing_worker_cost.py``), and a child forked from
a long-lived, multi-threaded process inherits every lock and library state
half-way. Here one child is forked on first use and kept: a MIP goes to it
as plain arrays (a pickled :class:`MipArrays`), HiGHS runs there with
``time_limit`` = the limit less a reserve (at most 0.2 s, at most 10 %; a
``time_limit`` among the MIP's options wins), and the answer comes back as
a :class:`DirectRun`. The parent waits until the limit, no longer: then it
kills the child (``SIGKILL``, reaped) and the MIP reports ``killed`` (no
incumbent, no bound: the caller falls back to what it has without it, e.g.
the trivial pricing bound); the next MIP forks a new child.

The child (:func:`_detach`): ignores ``SIGALRM`` and ``SIGINT`` (the parent,
not the child, reacts to the deadline and to Ctrl-C); asks the kernel to
kill it when the parent dies (``PR_SET_PDEATHSIG``, Linux, looked up before
the fork); sends its standard output and error to ``/dev/null`` (nothing of
it may reach the parent's ``--json`` output); disables the garbage
collector (a collection would touch, hence copy, every page it shares with
the parent); ends with ``os._exit``. It exits when its request pipe closes
(the parent exited or called :func:`shutdown`); one that fails in Python
sends its error (one line), one that dies makes the parent raise a one-line
:class:`~ddlsched.errors.SolverError` naming the signal.

One worker per process, used under a lock (a Dask worker's threads take
turns); a platform without ``fork`` solves in-process, as does a process
that cannot fork (no memory or process slot; a warning says so). The
deadline's interrupt (``SIGALRM``) is held during a call (which ends by its
limit on its own): an interrupt inside ``fork`` or half-way through a
request would leave the worker out of step; a request cut short otherwise
(Ctrl-C) kills it.
"""

from __future__ import annotations

import atexit
import contextlib
import faulthandler
import gc
import logging
import math
import os
import pickle
import signal
import struct
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from ddlsched.errors import SolverError

__all__ = ["DirectRun", "MipArrays", "shutdown", "solve_mip"]

log = logging.getLogger(__name__)

#: Seconds (at most; at most 10 % of the limit) kept back for the answer's way back.
RESERVE_S = 0.2
_HEADER = struct.Struct("<Q")
#: How long the parent waits for a child that closed its pipe to exit before killing it.
_EXIT_WAIT_S = 1.0
_PR_SET_PDEATHSIG = 1


def _prctl() -> Any:
    """libc's ``prctl``, looked up in the parent (no ``dlopen`` in a forked child), or
    ``None`` off Linux."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


def _detach(parent: int, prctl: Any) -> None:  # pragma: no cover - runs in the child
    """Make a forked child harmless to its parent (module docstring): no garbage
    collector, no crash dump, ``SIGALRM`` and ``SIGINT`` ignored, killed with its
    parent, its output to ``/dev/null``."""
    gc.disable()  # a collection would touch, hence copy, every page of the parent
    faulthandler.disable()  # its dump would go to the parent's terminal (pytest's file)
    for number in (signal.SIGALRM, signal.SIGINT):
        signal.signal(number, signal.SIG_IGN)
    if prctl is not None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # the parent died before the request
        os._exit(1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    for fd in (1, 2):  # C and Python writers alike (errors go through the pipe)
        os.dup2(devnull, fd)
    os.close(devnull)
    sys.stdout = sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - until os._exit


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


@dataclass(frozen=True)
class DirectRun:
    """What a direct highspy MIP solve returned, read off the ``Highs``.

    ``model_status``: HiGHS's model status (``highspy.HighsModelStatus``);
    ``objective``: ``objective_function_value`` (meaningful only with a primal
    solution); ``mip_dual_bound``: HiGHS's (``inf`` when it has none);
    ``primal_valid``: a primal solution exists (``primal_solution_status == 2``);
    ``col_value``: the column values (``None`` without a primal solution);
    ``killed``: the worker was killed at the limit (only the last incumbent and dual
    bound it sent are known);
    ``run_time``: HiGHS's ``getRunTime()``; ``info``: every number of its
    ``HighsInfo`` by name (what Pyomo's ``_postsolve`` reads, for
    :mod:`ddlsched.solvers.highs_worker`).
    """

    model_status: Any
    objective: float
    mip_dual_bound: float
    primal_valid: bool
    col_value: Any
    killed: bool = False
    run_time: float = 0.0
    info: dict[str, Any] | None = None


def _read_direct(highs: Any) -> DirectRun:
    info = highs.getInfo()
    valid = int(info.primal_solution_status) == 2
    numbers = {}
    for name in dir(info):
        value = None if name.startswith("_") else getattr(info, name)
        if isinstance(value, (bool, int, float)):
            numbers[name] = value
    return DirectRun(
        model_status=highs.getModelStatus(),
        objective=float(info.objective_function_value),
        mip_dual_bound=float(info.mip_dual_bound),
        primal_valid=valid,
        col_value=list(highs.getSolution().col_value) if valid else None,
        run_time=float(highs.getRunTime()),
        info=numbers,
    )


@dataclass(frozen=True)
class MipArrays:
    """A MIP as plain arrays (``highspy.HighsLp`` fields, column-wise matrix).

    ``initial``: a full starting solution offered to HiGHS; ``start_index`` and
    ``start_value``: a partial one (HiGHS completes it, as
    ``Highs.setSolution(num, index, value)``).
    """

    cost: np.ndarray
    col_lower: np.ndarray
    col_upper: np.ndarray
    row_lower: np.ndarray
    row_upper: np.ndarray
    start: np.ndarray
    index: np.ndarray
    value: np.ndarray
    integer: np.ndarray  # bool per column
    maximize: bool
    options: tuple[tuple[str, object], ...]
    initial: np.ndarray | None = None  # a starting solution offered to HiGHS
    offset: float = 0.0  # the objective's constant
    start_index: np.ndarray | None = None
    start_value: np.ndarray | None = None

    @classmethod
    def from_lp(
        cls,
        lp: Any,
        options: Any,
        initial: np.ndarray | None = None,
        partial_start: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> MipArrays:
        """From a ``highspy.HighsLp`` (its integrality and objective constant as given;
        a row-wise matrix is turned column-wise, every entry in its place)."""
        import highspy

        num_col, num_row = int(lp.num_col_), int(lp.num_row_)
        start = np.asarray(lp.a_matrix_.start_, dtype=np.int32)
        index = np.asarray(lp.a_matrix_.index_, dtype=np.int32)
        value = np.asarray(lp.a_matrix_.value_, dtype=float)
        if lp.a_matrix_.format_ == highspy.MatrixFormat.kRowwise:
            start, index, value = _column_wise(start, index, value, num_row, num_col)
        elif lp.a_matrix_.format_ != highspy.MatrixFormat.kColwise:
            raise SolverError("MipArrays.from_lp: the matrix must be column- or row-wise")
        kinds = list(lp.integrality_)
        integer = np.array([kind == highspy.HighsVarType.kInteger for kind in kinds], dtype=bool)
        pairs = options.items() if hasattr(options, "items") else options
        starts = (None, None) if partial_start is None else partial_start
        return cls(
            cost=np.asarray(lp.col_cost_, dtype=float),
            col_lower=np.asarray(lp.col_lower_, dtype=float),
            col_upper=np.asarray(lp.col_upper_, dtype=float),
            row_lower=np.asarray(lp.row_lower_, dtype=float),
            row_upper=np.asarray(lp.row_upper_, dtype=float),
            start=start,
            index=index,
            value=value,
            integer=integer if integer.size else np.zeros(num_col, dtype=bool),
            maximize=lp.sense_ == highspy.ObjSense.kMaximize,
            options=tuple(pairs),
            initial=None if initial is None else np.asarray(initial, dtype=float),
            offset=float(lp.offset_),
            start_index=None if starts[0] is None else np.asarray(starts[0], dtype=np.int32),
            start_value=None if starts[1] is None else np.asarray(starts[1], dtype=float),
        )

    def to_highs(self) -> Any:
        """A silent ``highspy.Highs`` holding this MIP, its options set."""
        import highspy

        from ddlsched.solvers.highs_lp import new_highs

        lp = highspy.HighsLp()
        lp.num_col_ = int(self.cost.size)
        lp.num_row_ = int(self.row_lower.size)
        lp.col_cost_ = self.cost
        lp.col_lower_ = self.col_lower
        lp.col_upper_ = self.col_upper
        lp.row_lower_ = self.row_lower
        lp.row_upper_ = self.row_upper
        lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
        lp.a_matrix_.start_ = self.start
        lp.a_matrix_.index_ = self.index
        lp.a_matrix_.value_ = self.value
        lp.sense_ = highspy.ObjSense.kMaximize if self.maximize else highspy.ObjSense.kMinimize
        lp.offset_ = self.offset
        if self.integer.any():
            kinds = highspy.HighsVarType
            lp.integrality_ = [kinds.kInteger if v else kinds.kContinuous for v in self.integer]
        highs = new_highs(self.options)
        highs.passModel(lp)
        if self.initial is not None:
            solution = highspy.HighsSolution()
            solution.col_value = self.initial.tolist()
            solution.value_valid = True
            highs.setSolution(solution)
        if self.start_index is not None and self.start_index.size:
            highs.setSolution(int(self.start_index.size), self.start_index, self.start_value)
        return highs


def _column_wise(
    start: np.ndarray, index: np.ndarray, value: np.ndarray, num_row: int, num_col: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A row-wise matrix (``start`` per row, column ``index``) column-wise, rows in
    increasing order within a column (HiGHS's own transposition)."""
    rows = np.repeat(np.arange(num_row, dtype=np.int32), np.diff(start[: num_row + 1]))
    index = index[: rows.size]
    order = np.lexsort((rows, index))
    col_start = np.zeros(num_col + 1, dtype=np.int32)
    np.cumsum(np.bincount(index, minlength=num_col), out=col_start[1:])
    return col_start, rows[order], value[: rows.size][order]


def _run(mip: MipArrays, time_limit_s: float) -> DirectRun:
    """Solve ``mip`` here, HiGHS's own ``time_limit`` set (a ``time_limit`` among the
    MIP's options wins, as a solver option does in Pyomo)."""
    import highspy

    highs = mip.to_highs()
    finite = math.isfinite(time_limit_s)
    if not any(name == "time_limit" for name, _ in mip.options):
        limit = max(1e-3, time_limit_s) if finite else highspy.kHighsInf
        highs.setOptionValue("time_limit", limit)
    if _incumbent_sink is not None:
        sink = _incumbent_sink
        highs.cbMipImprovingSolution.subscribe(
            lambda event: sink(
                "incumbent",
                (float(event.data_out.objective_function_value), list(event.data_out.mip_solution)),
            )
        )
        highs.cbMipInterrupt.subscribe(_bound_reporter(sink))
    highs.run()
    return _read_direct(highs)


#: In the worker, during a request that asked for them: where HiGHS's improving
#: solutions and dual bounds go (``sink(kind, value)``, to the parent, which keeps the
#: last of each should it kill the worker).
_incumbent_sink: Any = None


def _bound_reporter(sink: Any) -> Any:
    """A ``cbMipInterrupt`` handler (polled where HiGHS polls its clock) that sends HiGHS's
    dual bound (the model's sense, offset included) each time it moves; it never asks HiGHS
    to stop. Every dual bound HiGHS reports is valid, so the last one sent is."""
    last = [math.nan]

    def report(event: Any) -> None:
        bound = float(event.data_out.mip_dual_bound)
        if math.isfinite(bound) and bound != last[0]:
            last[0] = bound
            sink("bound", bound)

    return report


class _Worker:
    """The long-lived child and the pipes to it."""

    def __init__(self) -> None:
        self.pid: int | None = None
        self.to_child = -1
        self.from_child = -1
        self.lock = threading.Lock()

    def start(self) -> None:
        request_r, request_w = os.pipe()
        answer_r, answer_w = os.pipe()
        parent = os.getpid()
        prctl = _prctl()
        for stream in (sys.stdout, sys.stderr):  # nothing buffered is written twice
            with contextlib.suppress(AttributeError, OSError, ValueError):
                stream.flush()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            try:
                os.close(request_w)
                os.close(answer_r)
                _detach(parent, prctl)
                _serve(request_r, answer_w)
            finally:
                os._exit(0)
        os.close(request_r)
        os.close(answer_w)
        self.pid, self.to_child, self.from_child = pid, request_w, answer_r

    def stop(self, wait: bool) -> int | None:
        """Close the pipes, end the child (killed unless ``wait``) and reap it: its status."""
        if self.pid is None:
            return None
        for fd in (self.to_child, self.from_child):
            with contextlib.suppress(OSError):
                os.close(fd)
        status = _reap(self.pid, wait=wait)
        self.pid = None
        return status

    def solve(self, mip: MipArrays, seconds: float, incumbents: bool) -> DirectRun:
        started = time.monotonic()  # forking the worker counts against the limit too
        if self.pid is None:
            self.start()
        reserve = min(RESERVE_S, 0.1 * seconds)
        request = (mip, seconds - reserve, incumbents)
        payload = pickle.dumps(request, protocol=pickle.HIGHEST_PROTOCOL)
        last = None  # the last improving solution the worker sent: (objective, values)
        bound = math.inf  # the last dual bound it sent (``inf``: none)
        try:
            _write_all(self.to_child, _HEADER.pack(len(payload)) + payload)
            while True:
                answer = _read_message(self.from_child, started + seconds)
                if not answer:
                    break
                kind, value = pickle.loads(answer)
                if kind == "incumbent":
                    last = value
                elif kind == "bound":
                    bound = value
                else:
                    break
        except OSError:  # the child died (killed by the kernel): a new one next time
            answer = b""
        except BaseException:  # interrupted (the deadline's interrupt, Ctrl-C) mid-request:
            self.stop(wait=False)  # its answer would come to the next request
            raise
        if answer is None:  # the limit came first: kill it; its last incumbent and bound
            self.stop(wait=False)
            import highspy

            status = highspy.HighsModelStatus.kInterrupt
            if last is None:
                return DirectRun(status, math.nan, bound, False, None, killed=True)
            return DirectRun(status, last[0], bound, True, last[1], killed=True)
        if not answer:
            how = _describe(self.stop(wait=True))
            raise SolverError(f"a HiGHS worker process {how} before answering")
        if kind != "ok":
            raise SolverError(f"a HiGHS worker process failed: {value}")
        return value


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _read_message(fd: int, end: float) -> bytes | None:
    """One length-prefixed message; ``None`` if the monotonic time ``end`` comes first,
    ``b""`` if the pipe closed."""
    header = _read_exactly(fd, _HEADER.size, end)
    if not header:
        return header
    return _read_exactly(fd, _HEADER.unpack(header)[0], end)


def _read_exactly(fd: int, size: int, end: float) -> bytes | None:
    import select

    chunks, got = [], 0
    while got < size:
        left = end - time.monotonic()
        if left <= 0:
            return None
        ready, _, _ = select.select([fd], [], [], left if math.isfinite(left) else None)
        if not ready:
            continue
        chunk = os.read(fd, min(size - got, 1 << 20))
        if not chunk:
            return b""
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def _send(fd: int, message: tuple[str, Any]) -> None:
    payload = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    _write_all(fd, _HEADER.pack(len(payload)) + payload)


def _serve(request_fd: int, answer_fd: int) -> None:  # pragma: no cover - the child
    """Answer MIPs until the request pipe closes (improving solutions first, if asked)."""
    global _incumbent_sink
    while True:
        message = _read_message(request_fd, math.inf)
        if not message:
            return
        try:
            mip, limit, incumbents = pickle.loads(message)
            if incumbents:
                _incumbent_sink = lambda kind, value: _send(answer_fd, (kind, value))  # noqa: E731
            reply = ("ok", _run(mip, limit))
        except BaseException as exc:  # every failure goes to the parent
            first = (str(exc).strip().splitlines() or [""])[0]
            reply = ("error", f"{type(exc).__name__}: {first}".rstrip(": "))
        finally:
            _incumbent_sink = None
        _send(answer_fd, reply)


_WORKER = _Worker()


def solve_mip(
    mip: MipArrays, seconds: float, *, in_worker: bool = True, incumbents: bool = False
) -> DirectRun:
    """Solve ``mip`` within ``seconds`` of wall time (module docstring).

    Under a finite limit, with ``in_worker`` and ``fork``, in the worker
    (``killed`` true when the limit came first); otherwise in-process with
    HiGHS's ``time_limit``. With ``incumbents``, the worker sends each
    improving solution as HiGHS finds it and its dual bound each time it moves, and a
    killed run keeps the last of each (``primal_valid``, ``objective``, ``col_value``;
    ``mip_dual_bound``, ``inf`` when none was sent).
    """
    if not (in_worker and math.isfinite(seconds) and hasattr(os, "fork")):
        return _run(mip, seconds)
    # The deadline's interrupt (SIGALRM) is held meanwhile: this call ends by ``seconds``
    # on its own, and an interrupt inside ``fork`` (its at-fork handlers) or half-way
    # through a request would leave the worker out of step; it is delivered on return.
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
    try:
        with _WORKER.lock:
            if _WORKER.pid is not None and os.getpid() != _owner[0]:  # pragma: no cover
                _WORKER.pid = None  # a forked copy of a parent that had a worker: not ours
            _owner[0] = os.getpid()
            try:
                return _WORKER.solve(mip, seconds, incumbents)
            except OSError as exc:  # no memory or process slot for a child
                log.warning("cannot fork a HiGHS worker (%s); solving in-process", exc)
                return _run(mip, seconds)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


_owner = [os.getpid()]


def shutdown() -> None:
    """End the worker (it also ends by itself when this process exits)."""
    with _WORKER.lock:
        _WORKER.stop(wait=True)


atexit.register(shutdown)
