"""What a method reports (:class:`Outcome`) and the one result type (:class:`SolveResult`).

Modelled on Pyomo ``contrib.solver.common.results``: what you got is a
:class:`Status`; ``objective`` is the objective of the returned schedule *as
recomputed by the family evaluator* (never the solver's own number);
``bound`` is a valid dual bound on the optimum in the same sense (a lower
bound when minimising, an upper bound when maximising), ``None`` when
unknown, never 0 by default.

A method adapter returns an :class:`Outcome`: its schedule and what its
solver said (status, bound, the objective it claims for the schedule, the
model's size and the solver's time). :func:`ddlsched.pipeline.finish` turns
it into a :class:`SolveResult`: it re-evaluates the schedule with the
family evaluator, checks the claim and the bound against it, and fills in
everything else. No adapter builds a :class:`SolveResult`.

A method that ends without a schedule says so in one of three ways, all of
which become status ``no_solution`` (a result, not a failure; ``docs/architecture.md``):
its adapter returns ``Outcome(None, Status.NO_SOLUTION, info={"reason":
...})``; code deep inside it raises
:class:`~ddlsched.errors.NoScheduleFound` (``run_method`` turns it into that
outcome); or the evaluator rejects its schedule for a reason the adapter
lists in :attr:`Outcome.no_solution_failures` (e.g. a heuristic's plan that,
executed, overruns the horizon). ``info['reason']`` says why.

A method cut by its time limit says what the limit stopped:
``time_limit_hit`` and ``info['stopped']`` (a short phrase) come together,
and neither comes alone. :func:`mark_stopped` sets both; a search that ended
for another reason (converged, an iteration budget) names it under another
key.
"""

from __future__ import annotations

import enum
import math
import platform
from dataclasses import dataclass, field
from functools import cache
from importlib import metadata
from typing import Any

__all__ = [
    "BACKENDS",
    "Claim",
    "Outcome",
    "SolveResult",
    "Status",
    "mark_stopped",
    "relative_gap",
    "versions",
]

# MILP backends of ddlsched.solvers.backends (named here so that callers need not import Pyomo).
BACKENDS = ("highs", "scip")


class Status(enum.StrEnum):
    """What a method returned.

    ``optimal``: a schedule proven optimal by the solver (gap closed).
    ``feasible``: a schedule without an optimality proof (every heuristic,
    and an exact method stopped by its time limit; ``bound`` then holds the
    solver's dual bound). ``bound_only``: a bounding method that returns a
    bound and no schedule. ``infeasible``: the solver proved there is no
    schedule (within the model's horizon). ``time_limit_no_solution``: the
    limit was hit before any schedule was found. ``no_solution``: a heuristic
    or a rounding ended without a schedule (a result, not a failure: no proof
    that none exists); ``info['reason']`` says why. ``error``: the software or
    a solver failed; ``info['error']`` says why.
    """

    OPTIMAL = "optimal"
    FEASIBLE = "feasible"
    BOUND_ONLY = "bound_only"
    INFEASIBLE = "infeasible"
    TIME_LIMIT_NO_SOLUTION = "time_limit_no_solution"
    NO_SOLUTION = "no_solution"
    ERROR = "error"


def relative_gap(objective: float | None, bound: float | None) -> float | None:
    """Return ``|objective - bound| / |objective|`` (``None`` if either is unknown)."""
    if objective is None or bound is None:
        return None
    if objective == bound:
        return 0.0
    denom = abs(objective)
    return math.inf if denom == 0 else abs(objective - bound) / denom


def _dist_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


@cache
def versions() -> dict[str, str | None]:
    """Versions of ddlsched, its solvers and Python, recorded in every result."""
    from ddlsched import __version__

    return {
        "ddlsched": __version__,
        "python": platform.python_version(),
        "pyomo": _dist_version("pyomo"),
        "highspy": _dist_version("highspy"),
        "ortools": _dist_version("ortools"),
        "numpy": _dist_version("numpy"),
        "numba": _dist_version("numba"),
    }


@dataclass(frozen=True)
class Claim:
    """A solver's statement about the schedule it returned, checked against the evaluator.

    ``value`` is the solver's objective for the schedule, converted to the
    unit of the quantity it measures: the family objective (``metric`` is
    ``None``) or the evaluation attribute ``metric`` (e.g. muri's
    ``total_period`` when the model minimises the period). ``sense`` is the
    sense the model optimised that quantity in (``None``: the family's).
    ``proven`` says the solver proved ``value`` optimal: the evaluated
    schedule must then match it, not merely be no worse.
    """

    value: float
    metric: str | None = None
    sense: str | None = None
    proven: bool = False


@dataclass
class Outcome:
    """What a method adapter returns: a schedule and what the solver said about it.

    ``status`` defaults to ``feasible`` when there is a schedule (every
    heuristic) and ``error`` otherwise (``info['error']`` then says why);
    ``no_solution`` (no schedule found, not a failure) needs
    ``info['reason']``.
    ``bound`` is a valid dual bound in the family objective's unit and
    sense. ``claim`` is checked against the evaluator; ``model_size`` is
    ``(variables, integer variables, constraints)`` of the model solved;
    ``solver_time_s`` the time spent inside solver calls;
    ``time_limit_hit`` whether the time limit stopped the method.
    ``no_solution_failures`` lists the evaluator's failures
    (``InfeasibleScheduleError.details['failure']``, e.g.
    ``"horizon_overrun"``) that mean the method found no schedule rather
    than that it is wrong: the result is then ``no_solution``, not ``error``.
    """

    schedule: Any = None
    status: Status | None = None
    bound: float | None = None
    claim: Claim | None = None
    backend: str | None = None
    backend_version: str | None = None
    model_size: tuple[int, int, int] | None = None
    solver_time_s: float | None = None
    time_limit_hit: bool = False
    info: dict[str, Any] = field(default_factory=dict)
    no_solution_failures: tuple[str, ...] = ()


def mark_stopped(outcome: Outcome, *stopped: str) -> Outcome:
    """Record on ``outcome`` what the time limit stopped, if anything; ``outcome`` itself.

    Every non-empty phrase of ``stopped`` is appended to ``info['stopped']``
    (``"; "`` between phrases, none repeated) and sets ``time_limit_hit``; with no
    non-empty phrase nothing changes. The one way a method records a cut, so that
    ``time_limit_hit`` never comes without ``info['stopped']`` nor the other way round.

    >>> mark_stopped(Outcome(), "", "the LP at the time limit").info
    {'stopped': 'the LP at the time limit'}
    """
    known = [p for p in str(outcome.info.get("stopped") or "").split("; ") if p]
    new = [p for p in stopped if p and p not in known]
    if known or new:
        outcome.info["stopped"] = "; ".join(known + new)
        outcome.time_limit_hit = True
    return outcome


@dataclass
class SolveResult:
    """The outcome of one method on one instance.

    ``schedule`` is the family's schedule object (or ``None``);
    ``evaluation`` is what the family evaluator computed for it. ``info``
    holds method-specific decisions (theta found, kappa chosen, which of
    the numbers are valid bounds, ...). ``runtime_s`` is the wall time of
    the whole method (what its time limit bounds), ``solver_time_s`` the
    part spent inside solver calls, ``time_limit_hit`` whether the limit
    stopped it.
    """

    family: str
    method: str
    status: Status
    sense: str  # "min" or "max"
    objective: float | None = None
    bound: float | None = None
    runtime_s: float = 0.0
    backend: str | None = None
    backend_version: str | None = None
    num_variables: int | None = None
    num_integer_variables: int | None = None
    num_constraints: int | None = None
    seed: int | None = None
    schedule: Any = None
    evaluation: Any = None
    info: dict[str, Any] = field(default_factory=dict)
    solver_time_s: float | None = None
    time_limit_hit: bool = False

    @property
    def gap(self) -> float | None:
        """Relative gap between the evaluated objective and the bound."""
        return relative_gap(self.objective, self.bound)

    @property
    def is_optimal(self) -> bool:
        return self.status is Status.OPTIMAL

    def to_dict(self, schedule_json: Any = None) -> dict[str, Any]:
        """A JSON-ready dict (the CLI contract); ``schedule_json`` is the family's rendering."""
        gap = self.gap
        return {
            "family": self.family,
            "method": self.method,
            "status": str(self.status),
            "sense": self.sense,
            "objective": self.objective,
            "bound": self.bound,
            "gap": None if gap is None or math.isinf(gap) else gap,
            "runtime_s": self.runtime_s,
            "solver_time_s": self.solver_time_s,
            "time_limit_hit": self.time_limit_hit,
            "backend": self.backend,
            "backend_version": self.backend_version,
            "model_size": {
                "variables": self.num_variables,
                "integer_variables": self.num_integer_variables,
                "constraints": self.num_constraints,
            },
            "seed": self.seed,
            "versions": versions(),
            "info": _jsonable(self.info),
            "schedule": _jsonable(schedule_json),
        }


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if hasattr(value, "item") and callable(value.item) and getattr(value, "ndim", 1) == 0:
        value = value.item()  # numpy scalars
    if isinstance(value, float) and not math.isfinite(value):
        return None  # JSON has no NaN or infinity
    return value
