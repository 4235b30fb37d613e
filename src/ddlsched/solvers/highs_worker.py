"""A Pyomo HiGHS MILP solved in the HiGHS worker process that the deadline kills.

Why: HiGHS 1.16 does not check its clock inside every phase. On the
``dmlrs_slot`` ILP of 100,000 machines (200,000 integer columns, 400,000
rows) one presolve pass runs ~172 s without looking at ``time_limit``
(ERGO-Code/HiGHS issues 1501, 2226); with presolve off its root heuristics
overrun instead, and no HiGHS option bounds either; a ``placement exact``
ILP of 40,049 columns ran 12.4 s at a 10 s limit. HiGHS's user-interrupt
callback is polled where HiGHS polls its clock, so it stops nothing that
``time_limit`` does not, and a C call cannot be interrupted from Python: such
a solve runs where it can be stopped, in a child process.

How (:func:`solve_in_worker`): once Pyomo has handed the model to highspy
(in this process, under the deadline's interrupt), the model is read back
(``Highs.getLp``), options and MIP start included, and sent as plain arrays
(:class:`~ddlsched.solvers.highs_server.MipArrays`) to the one long-lived
HiGHS worker process of :mod:`ddlsched.solvers.highs_server`, which the
direct highspy MIPs use too. HiGHS runs there with the time limit it would
have had in-process (less a reserve for the answer's way back, at least
0.2 s, at most 10 %; ``solvers/backends.py``); the answer comes back as
plain data. The parent waits for it until the time the solve was given,
then kills the worker (``SIGKILL``, reaped; the next MILP starts a new one).
The worker sends each improving solution as HiGHS finds it
(``kCallbackMipImprovingSolution``) and its dual bound each time it moves
(polled in ``kCallbackMipInterrupt``, which HiGHS calls where it polls its
clock), so a killed solve keeps HiGHS's last incumbent and the last dual bound
it sent (every dual bound HiGHS reports is valid): it reports ``feasible``
with that bound (none if HiGHS had not sent one yet), ``time_limit_hit`` true
and ``stopped`` saying so; without an incumbent it raises :class:`WorkerKilled`
(``time_limit_no_solution``, with that last dual bound if HiGHS sent one). An answer in
time is turned into Pyomo's ``Results`` by Pyomo's own ``_postsolve``, read
off a stand-in for the ``Highs`` that holds the worker's numbers
(:class:`_Answered`), and the values are loaded by Pyomo's own loader, by
the same column map, as in-process: same status, same values, same decoded
schedule (``tests/test_solver_worker.py``).

Which solves (:func:`use_worker`): every MILP (at least one integer column;
:data:`WORKER_MIN_COLUMNS`) under a finite time limit, single-threaded, on a
platform with ``fork``. LPs and solves without a finite limit run
in-process: HiGHS's simplex checks ``time_limit`` at every iteration and
IPX (interior point) at every iteration, in its KKT solves and in crossover,
so an LP stops within one step of its limit; a step is not cut (one
factorization, a long presolve reduction, the solution's way back through
Pyomo), which on a very large LP is the overrun (``solvers/backends.py``).
When no worker can be forked (no memory or process slot) the solve runs
in-process, with a warning.

Why one long-lived worker and not a fork per solve (as before): forking
the whole parent per MILP copies its page tables (2-36 ms on 4,000-60,000
columns, 92 ms a MIP at load 8 for ``dmlrs colgen``), and a child forked
from a long-lived multi-threaded process inherits every lock and every
library's state half-way: in one full test run under load, four tiny
placement MILPs forked late in a long-lived test process never answered
(60 s). The worker's child runs nothing but highspy on arrays it is sent.
"""

from __future__ import annotations

import dataclasses
import io
import math
import os
import time
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

__all__ = ["WORKER_MIN_COLUMNS", "WorkerKilled", "solve_in_worker", "use_worker"]

#: Columns (variables) from which a HiGHS MILP under a finite limit runs in the worker:
#: every MILP. HiGHS overran in-process on models of every size (the ``dmlrs_slot`` ILP of
#: 60,000 columns by 5.9 s at 120 s, a ``placement exact`` ILP of 40,049 columns by 2.4 s
#: at 10 s); the worker costs a few milliseconds a solve (``benchmarks/highs_worker_cost.py``).
WORKER_MIN_COLUMNS = 1


class WorkerKilled(Exception):
    """The worker did not answer by its time and was killed before HiGHS found a
    solution (the message says so); ``bound``: HiGHS's last dual bound, ``None`` if it
    had sent none."""

    def __init__(self, message: str, bound: float | None = None) -> None:
        super().__init__(message)
        self.bound = bound


def use_worker(num_variables: int, num_integer: int, seconds: float, threads: int) -> bool:
    """Whether a HiGHS solve of this size and time goes to the worker (module docstring)."""
    return (
        num_integer > 0
        and num_variables >= WORKER_MIN_COLUMNS
        and math.isfinite(seconds)
        and threads == 1
        and hasattr(os, "fork")
    )


def solve_in_worker(
    solver: Any, seconds: float, time_limit_s: float, start: tuple[Any, Any] | None
) -> Any:
    """Pyomo's ``Results`` of the HiGHS solve ``solver`` is about to run, run in the
    worker within ``seconds`` of wall time (HiGHS's own ``time_limit_s``).

    ``solver`` is Pyomo's ``Highs`` inside its ``_solve`` (model handed over,
    options set in ``_active_config``); ``start``: the MIP start's column
    indices and values, or ``None``. Raises :class:`WorkerKilled` when the
    limit came first.
    """
    from pyomo.contrib.solver.solvers.highs import Highs

    from ddlsched.solvers.highs_server import MipArrays, solve_mip

    prepared = time.monotonic()
    config = solver._active_config
    options = {
        "threads": config.threads,
        "time_limit": time_limit_s,
        "mip_rel_gap": config.rel_gap,
        "mip_abs_gap": config.abs_gap,
    }
    options = {name: value for name, value in options.items() if value is not None}
    options.update(dict(config.solver_options.items()))  # as Pyomo: solver options last
    mip = MipArrays.from_lp(solver._solver_model.getLp(), options, partial_start=start)
    taken = time.monotonic() - prepared  # reading the model back counts against the limit
    if taken > 0 and time_limit_s is not None and options["time_limit"] == time_limit_s:
        later = {**dict(mip.options), "time_limit": max(1e-3, time_limit_s - taken)}
        mip = dataclasses.replace(mip, options=tuple(later.items()))
    run = solve_mip(mip, max(1e-3, seconds - taken), incumbents=True)
    if run.killed and not run.primal_valid:
        bound = run.mip_dual_bound if math.isfinite(run.mip_dual_bound) else None
        kept = "; its last dual bound is kept" if bound is not None else ""
        raise WorkerKilled(
            f"HiGHS: the worker process was killed at the time limit ({seconds:.3g} s) "
            f"before HiGHS found a solution{kept}",
            bound,
        )
    if run.killed:  # HiGHS's last improving solution and dual bound: a time limit
        import highspy

        kept = "and its last dual bound are" if math.isfinite(run.mip_dual_bound) else "is"
        solver.stopped = (
            f"HiGHS: the worker process was killed at the time limit ({seconds:.3g} s); "
            f"its last incumbent {kept} kept"
        )
        info = {"primal_solution_status": 2, "valid": False, "mip_node_count": 0}
        info.update(objective_function_value=run.objective, mip_dual_bound=run.mip_dual_bound)
        run = dataclasses.replace(run, model_status=highspy.HighsModelStatus.kTimeLimit, info=info)
    own = solver._solver_model
    solver._solver_model = _Answered(run)
    try:
        return Highs._postsolve(solver, io.StringIO())
    finally:
        solver._solver_model = own


@dataclass
class _WorkerSolution:
    """The part of a ``highspy.HighsSolution`` that Pyomo's loader reads (primal values)."""

    col_value: Any
    value_valid: bool
    dual_valid: bool = False


class _Answered:
    """Stands in for the ``highspy.Highs`` in Pyomo's ``_postsolve``: the worker's
    model status, run time, info and solution."""

    def __init__(self, run: Any) -> None:
        self._run = run

    def getModelStatus(self) -> Any:
        return self._run.model_status

    def getRunTime(self) -> float:
        return self._run.run_time

    def getInfo(self) -> SimpleNamespace:
        return SimpleNamespace(**(self._run.info or {}))

    def getSolution(self) -> _WorkerSolution:
        col_value = self._run.col_value
        return _WorkerSolution(col_value, value_valid=col_value is not None)
