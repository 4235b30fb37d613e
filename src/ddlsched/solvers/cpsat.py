"""One way to run OR-Tools CP-SAT: limits, seed, workers, determinism, status.

The CP-SAT models of the toolkit (the ``asrpt`` offline optimum,
:mod:`ddlsched.models.asrpt_cpsat`; the ``placement`` threshold proofs,
:mod:`ddlsched.solvers.placement_threshold`) build their ``CpModel`` and hand
it to :func:`solve_cpsat`, which sets the parameters, solves, and reports in
the project's terms (:class:`CpsatRun`). ``docs/architecture.md``: CP-SAT for models written
natively with integer data.

Parameters (:class:`CpsatOptions`): ``random_seed = seed``, ``num_workers =
workers`` (default 1: with one worker and a fixed seed a search that ends
before its time limit gives the same answer on every run; a search cut by
the clock depends on the machine's load), ``log_search_progress = False``.
Determinism beyond that, both off by default: ``interleave_search`` (a
multi-worker search that is deterministic, CP-SAT's ``interleave_search``)
and ``deterministic_time_s`` (CP-SAT's ``max_deterministic_time``: a limit in
CP-SAT's deterministic work units, the same on every machine, unlike
seconds). ``linearization_level`` (``None``: CP-SAT's default, 1): how much of
the model CP-SAT's LP relaxation holds (2 adds the relaxation of the
scheduling constraints; the ``asrpt`` exact model's ``lp_relaxation``).

Time limit: what remains of the :class:`~ddlsched.deadline.Deadline`, capped
by ``time_limit_s``, read when the solve starts (after the model was built);
``max_time_in_seconds`` is set when that is finite. When no more than
:data:`NO_TIME_S` remains, CP-SAT is not called (status
``time_limit_no_solution``, message ``no time left``).

Status mapping (CP-SAT's ``CpSolverStatus`` to
:class:`~ddlsched.solvers.result.Status`), every value explicit:

* ``OPTIMAL -> optimal`` (for a model without an objective: a solution was
  found);
* ``FEASIBLE -> feasible`` (a solution without proof: the limit stopped it);
* ``INFEASIBLE -> infeasible`` (proven: no solution);
* ``UNKNOWN -> time_limit_no_solution`` (stopped before a solution or a proof);
* ``MODEL_INVALID`` (and any other code) ``-> error``, logged as a warning.

Incumbent and bound: for a model with an objective and a solution,
``objective`` is CP-SAT's ``objective_value`` and ``bound`` its
``best_objective_bound`` (``None`` otherwise, never 0 by default).
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass
from typing import Any

from ddlsched.deadline import Deadline
from ddlsched.solvers.result import Status

__all__ = ["NO_TIME_S", "CpsatOptions", "CpsatRun", "cpsat_status", "model_size", "solve_cpsat"]

log = logging.getLogger(__name__)

#: Below this many seconds left, CP-SAT is not called (module docstring).
NO_TIME_S = 1e-3

_STATUS_BY_NAME = {
    "OPTIMAL": Status.OPTIMAL,
    "FEASIBLE": Status.FEASIBLE,
    "INFEASIBLE": Status.INFEASIBLE,
    "UNKNOWN": Status.TIME_LIMIT_NO_SOLUTION,
    "MODEL_INVALID": Status.ERROR,
}


@dataclass(frozen=True)
class CpsatOptions:
    """The CP-SAT parameters a caller chooses (module docstring)."""

    seed: int = 0
    workers: int = 1
    interleave_search: bool = False
    deterministic_time_s: float | None = None
    linearization_level: int | None = None

    def __post_init__(self) -> None:
        if self.workers < 1:
            raise ValueError(f"CP-SAT needs at least one worker, got {self.workers!r}")
        if self.deterministic_time_s is not None and not self.deterministic_time_s > 0:
            raise ValueError(f"deterministic_time_s must be > 0, got {self.deterministic_time_s!r}")


@dataclass(frozen=True)
class CpsatRun:
    """What one CP-SAT solve returned, in the project's terms (module docstring).

    ``message``: CP-SAT's status name (or ``no time left``); ``solver``: the
    ``CpSolver`` to read the solution from (``None`` when CP-SAT was not
    called); ``runtime_s``: the wall time of ``solve`` alone.
    """

    status: Status
    message: str
    objective: float | None
    bound: float | None
    runtime_s: float
    time_limit_hit: bool
    version: str
    solver: Any = None

    @property
    def has_solution(self) -> bool:
        return self.status in (Status.OPTIMAL, Status.FEASIBLE)

    def value(self, variable: Any) -> int:
        """The value of an integer variable (or expression) in the solution."""
        return int(self.solver.value(variable))

    def boolean_value(self, literal: Any) -> bool:
        """The value of a Boolean literal in the solution."""
        return bool(self.solver.boolean_value(literal))


def cpsat_status(name: str) -> Status:
    """The :class:`Status` of a CP-SAT status name (module docstring; unknown names: error)."""
    return _STATUS_BY_NAME.get(name, Status.ERROR)


def model_size(model: Any) -> tuple[int, int, int]:
    """``(variables, integer variables, constraints)`` of a ``CpModel`` (all are integer)."""
    proto = model.proto
    return (len(proto.variables), len(proto.variables), len(proto.constraints))


def _version() -> str:
    import ortools

    return f"ortools {ortools.__version__}"


def solve_cpsat(
    model: Any,
    deadline: Deadline | None = None,
    options: CpsatOptions = CpsatOptions(),
    *,
    time_limit_s: float | None = None,
) -> CpsatRun:
    """Solve ``model`` within ``deadline`` (and ``time_limit_s``) with ``options``."""
    from ortools.sat.python import cp_model

    seconds = math.inf if deadline is None else deadline.remaining_s()
    if time_limit_s is not None:
        seconds = min(seconds, time_limit_s)
    if not seconds > NO_TIME_S:
        return CpsatRun(
            Status.TIME_LIMIT_NO_SOLUTION, "no time left", None, None, 0.0, True, _version()
        )
    solver = cp_model.CpSolver()
    if math.isfinite(seconds):
        solver.parameters.max_time_in_seconds = seconds
    solver.parameters.num_workers = options.workers
    solver.parameters.random_seed = options.seed
    solver.parameters.log_search_progress = False
    if options.interleave_search:
        solver.parameters.interleave_search = True
    if options.deterministic_time_s is not None:
        solver.parameters.max_deterministic_time = options.deterministic_time_s
    if options.linearization_level is not None:
        solver.parameters.linearization_level = options.linearization_level
    started = time.perf_counter()
    code = solver.solve(model)
    runtime = time.perf_counter() - started
    name = solver.status_name(code)
    status = cpsat_status(name)
    if status is Status.ERROR:
        log.warning("CP-SAT returned %s", name)
    objective = bound = None
    if status in (Status.OPTIMAL, Status.FEASIBLE) and model.has_objective():
        objective = float(solver.objective_value)
        bound = float(solver.best_objective_bound)
    return CpsatRun(
        status=status,
        message=name,
        objective=objective,
        bound=bound,
        runtime_s=runtime,
        time_limit_hit=status in (Status.FEASIBLE, Status.TIME_LIMIT_NO_SOLUTION),
        version=_version(),
        solver=solver,
    )
