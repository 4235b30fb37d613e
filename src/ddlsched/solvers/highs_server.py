"""Direct highspy MIPs in one long-lived worker process that the deadline kills.

Why: HiGHS does not check its clock in every phase of a MIP (one single-job
pricing MIP of ``dmlrs colgen`` ran more than 330 s at a 3.34 s limit), and
a C call cannot be interrupted from Python. HiGHS's user-interrupt callback
(``kCallbackMipInterrupt``) is polled where HiGHS polls its clock, so it
stops nothing that ``time_limit`` does not: only a process can be stopped
from outside.

Why not a fork per MIP (:func:`ddlsched.solvers.highs_worker.run_direct`):
colgen solves thousands of small pricing MIPs; forking the parent (hundreds
of MB of page tables) per MIP cost 92 ms a MIP at load 8 (276 MILPs, 5
rounds on ``paper`` seed 0: 143 s against 118 s in-process; ``benchmarks/
pricing_worker_cost.py``, ``benchmarks/results/platform.md``). Here one child is
forked on first use and kept: a MIP goes to it as plain arrays (a pickled
:class:`MipArrays`), HiGHS runs there with ``time_limit`` = the limit less a
reserve (at most 0.2 s, at most 10 %), and the answer comes back as a
:class:`~ddlsched.solvers.highs_worker.DirectRun`. The parent waits until the
limit, no longer: then it kills the child (``SIGKILL``, reaped) and the MIP
reports ``killed`` (no incumbent, no bound: the caller falls back to what
it has without it, e.g. the trivial pricing bound); the next MIP forks a
new child. The child is the same kind as the large-MILP worker's
(:func:`~ddlsched.solvers.highs_worker.run_forked` rules: it ignores
``SIGALRM`` and ``SIGINT``, dies with its parent, writes nothing to the
terminal); it exits when its request pipe closes (the parent exited or
called :func:`shutdown`).

One worker per process, used under a lock (a Dask worker's threads take
turns); a platform without ``fork`` solves in-process. The deadline's
interrupt (``SIGALRM``) is held during a call (which ends by its limit on its
own): an interrupt inside ``fork`` or half-way through a request would leave
the worker out of step; a request cut short otherwise (Ctrl-C) kills it.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import math
import os
import pickle
import signal
import struct
import threading
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from ddlsched.errors import SolverError
from ddlsched.solvers.highs_worker import _describe, _detach, _reap

__all__ = ["DirectRun", "MipArrays", "shutdown", "solve_mip"]

log = logging.getLogger(__name__)

#: Seconds (at most; at most 10 % of the limit) kept back for the answer's way back.
RESERVE_S = 0.2
_HEADER = struct.Struct("<Q")


@dataclass(frozen=True)
class DirectRun:
    """What a direct highspy MIP solve returned, read off the ``Highs``.

    ``model_status``: HiGHS's model status (``highspy.HighsModelStatus``);
    ``objective``: ``objective_function_value`` (meaningful only with a primal
    solution); ``mip_dual_bound``: HiGHS's (``inf`` when it has none);
    ``primal_valid``: a primal solution exists (``primal_solution_status == 2``);
    ``col_value``: the column values (``None`` without a primal solution);
    ``killed``: the worker was killed at the limit (nothing else is known).
    """

    model_status: Any
    objective: float
    mip_dual_bound: float
    primal_valid: bool
    col_value: Any
    killed: bool = False


def _read_direct(highs: Any) -> DirectRun:
    info = highs.getInfo()
    valid = int(info.primal_solution_status) == 2
    return DirectRun(
        model_status=highs.getModelStatus(),
        objective=float(info.objective_function_value),
        mip_dual_bound=float(info.mip_dual_bound),
        primal_valid=valid,
        col_value=list(highs.getSolution().col_value) if valid else None,
    )


@dataclass(frozen=True)
class MipArrays:
    """A MIP as plain arrays (``highspy.HighsLp`` fields, column-wise matrix)."""

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

    @classmethod
    def from_lp(cls, lp: Any, options: Any, initial: np.ndarray | None = None) -> MipArrays:
        """From a column-wise ``highspy.HighsLp`` (its integrality as given)."""
        import highspy

        if lp.a_matrix_.format_ != highspy.MatrixFormat.kColwise:
            raise SolverError("MipArrays.from_lp: the matrix must be column-wise")
        kinds = list(lp.integrality_)
        integer = np.array([kind == highspy.HighsVarType.kInteger for kind in kinds], dtype=bool)
        pairs = options.items() if hasattr(options, "items") else options
        return cls(
            cost=np.asarray(lp.col_cost_, dtype=float),
            col_lower=np.asarray(lp.col_lower_, dtype=float),
            col_upper=np.asarray(lp.col_upper_, dtype=float),
            row_lower=np.asarray(lp.row_lower_, dtype=float),
            row_upper=np.asarray(lp.row_upper_, dtype=float),
            start=np.asarray(lp.a_matrix_.start_, dtype=np.int32),
            index=np.asarray(lp.a_matrix_.index_, dtype=np.int32),
            value=np.asarray(lp.a_matrix_.value_, dtype=float),
            integer=integer if integer.size else np.zeros(int(lp.num_col_), dtype=bool),
            maximize=lp.sense_ == highspy.ObjSense.kMaximize,
            options=tuple(pairs),
            initial=None if initial is None else np.asarray(initial, dtype=float),
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
        return highs


def _run(mip: MipArrays, time_limit_s: float) -> DirectRun:
    """Solve ``mip`` here, HiGHS's own ``time_limit`` set."""
    import highspy

    highs = mip.to_highs()
    finite = math.isfinite(time_limit_s)
    highs.setOptionValue("time_limit", max(1e-3, time_limit_s) if finite else highspy.kHighsInf)
    highs.run()
    return _read_direct(highs)


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
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            try:
                os.close(request_w)
                os.close(answer_r)
                _detach(parent)
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

    def solve(self, mip: MipArrays, seconds: float) -> DirectRun:
        if self.pid is None:
            self.start()
        started = time.monotonic()
        reserve = min(RESERVE_S, 0.1 * seconds)
        payload = pickle.dumps((mip, seconds - reserve), protocol=pickle.HIGHEST_PROTOCOL)
        try:
            _write_all(self.to_child, _HEADER.pack(len(payload)) + payload)
            answer = _read_message(self.from_child, started + seconds)
        except OSError:  # the child died (killed by the kernel): a new one next time
            answer = b""
        except BaseException:  # interrupted (the deadline's interrupt, Ctrl-C) mid-request:
            self.stop(wait=False)  # its answer would come to the next request
            raise
        if answer is None:  # the limit came first: kill it, nothing is known of the MIP
            self.stop(wait=False)
            import highspy

            status = highspy.HighsModelStatus.kInterrupt
            return DirectRun(status, math.nan, math.inf, False, None, killed=True)
        if not answer:
            how = _describe(self.stop(wait=True))
            raise SolverError(f"a HiGHS worker process {how} before answering")
        kind, value = pickle.loads(answer)
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


def _serve(request_fd: int, answer_fd: int) -> None:  # pragma: no cover - the child
    """Answer MIPs until the request pipe closes."""
    while True:
        message = _read_message(request_fd, math.inf)
        if not message:
            return
        try:
            mip, limit = pickle.loads(message)
            reply = ("ok", _run(mip, limit))
        except BaseException as exc:  # every failure goes to the parent
            first = (str(exc).strip().splitlines() or [""])[0]
            reply = ("error", f"{type(exc).__name__}: {first}".rstrip(": "))
        payload = pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL)
        _write_all(answer_fd, _HEADER.pack(len(payload)) + payload)


_WORKER = _Worker()


def solve_mip(mip: MipArrays, seconds: float, *, in_worker: bool = True) -> DirectRun:
    """Solve ``mip`` within ``seconds`` of wall time (module docstring).

    Under a finite limit, with ``in_worker`` and ``fork``, in the worker
    (``killed`` true when the limit came first); otherwise in-process with
    HiGHS's ``time_limit``.
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
                return _WORKER.solve(mip, seconds)
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
