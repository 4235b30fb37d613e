"""The one place that turns what a method returned into a :class:`SolveResult`.

:func:`finish` is called by :func:`ddlsched.registry.run_method` on every
:class:`~ddlsched.solvers.result.Outcome`, from a heuristic or a solver:

1. the schedule is re-evaluated by the family evaluator (an infeasible
   schedule becomes an ``error`` result, with the evaluator's message and
   details in ``info``, or a ``no_solution`` result when the evaluator's
   ``failure`` is one the method lists in ``Outcome.no_solution_failures``:
   its plan overran the horizon, say); the objective reported is the
   evaluator's, never the method's;
2. a solver's :class:`~ddlsched.solvers.result.Claim` is checked against
   the evaluation: the schedule may not be worse than the solver claims,
   and a proven optimum must match (relative tolerance :data:`REL_TOL`);
3. the family's headline metrics of the evaluation are added to ``info``, and the SHA-256 of
   the data files the process read (``info["data_sha256"]``, :mod:`ddlsched.data.provenance`);
4. the bound is checked against the evaluated objective (a lower bound
   above the objective of a schedule, when minimising, is a bug) and
   clipped to it within the tolerance; a proven optimum without a bound
   gets the objective as its bound.

A failed check raises :class:`~ddlsched.errors.SolverClaimError`, the one
exception type for "the solver and the evaluator disagree"; ``run_method``
records it as an ``error`` result (or raises it for the CLI).
"""

from __future__ import annotations

import math
from typing import Any, Protocol

from ddlsched.data.provenance import read_so_far
from ddlsched.errors import InfeasibleScheduleError, InvalidInstanceError, SolverClaimError
from ddlsched.solvers.result import Claim, Outcome, SolveResult, Status

__all__ = ["ABS_TOL", "REL_TOL", "Evaluates", "finish", "objective_tolerance"]

#: Relative tolerance between a solver's claim and the evaluator (``docs/architecture.md``: 1e-6).
REL_TOL = 1e-6
#: Absolute floor of the tolerance, in the unit of the quantity compared.
ABS_TOL = 1e-9

_WITH_SCHEDULE = (Status.OPTIMAL, Status.FEASIBLE)


class Evaluates(Protocol):
    """What :func:`finish` needs of a family (:class:`ddlsched.registry.Family` has it)."""

    name: str
    sense: str
    evaluation_summary: Any  # (evaluation) -> headline metrics for info, or None

    def evaluate(self, instance: Any, schedule: Any) -> Any: ...

    def objective(self, evaluation: Any) -> float: ...


def objective_tolerance(a: float, b: float) -> float:
    """The tolerance within which two values of one quantity are the same."""
    return REL_TOL * max(abs(a), abs(b)) + ABS_TOL


def _finite(value: float | None) -> float | None:
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def _check_claim(family: Evaluates, method: str, evaluation: Any, objective: float, claim: Claim):
    if claim.metric is None:
        value, what = objective, "the objective"
    else:
        value, what = float(getattr(evaluation, claim.metric)), claim.metric
    sense = claim.sense or family.sense
    worse = value - claim.value if sense == "min" else claim.value - value
    tol = objective_tolerance(value, claim.value)
    if worse > tol:
        raise SolverClaimError(
            f"{family.name}.{method}: the evaluator gives {what} {value!r} for the returned "
            f"schedule, the solver claimed {claim.value!r} (a formulation or decoding bug)"
        )
    if claim.proven and -worse > tol:
        raise SolverClaimError(
            f"{family.name}.{method}: the returned schedule's {what} {value!r} beats the "
            f"solver's proven optimum {claim.value!r} (the formulation is not the problem)"
        )


def _check_bound(family: Evaluates, method: str, objective: float, bound: float) -> float:
    beyond = bound - objective if family.sense == "min" else objective - bound
    if beyond > objective_tolerance(objective, bound):
        side = "lower" if family.sense == "min" else "upper"
        raise SolverClaimError(
            f"{family.name}.{method}: the {side} bound {bound!r} is beyond the evaluated "
            f"objective {objective!r} of the method's own schedule (an invalid bound)"
        )
    return min(bound, objective) if family.sense == "min" else max(bound, objective)


def finish(
    family: Evaluates,
    method: str,
    instance: Any,
    outcome: Outcome,
    *,
    seed: int | None,
    runtime_s: float,
) -> SolveResult:
    """Re-evaluate ``outcome``'s schedule, check the solver's claims, build the result."""
    if not isinstance(outcome, Outcome):
        raise TypeError(
            f"{family.name}.{method}: a method adapter must return an Outcome, "
            f"not {type(outcome).__name__}"
        )
    info = dict(outcome.info)
    if data_read := read_so_far():  # the data files' hashes (ddlsched.data.provenance)
        info.setdefault("data_sha256", data_read)
    schedule = outcome.schedule
    status = outcome.status or (Status.FEASIBLE if schedule is not None else Status.ERROR)
    if status is Status.NO_SOLUTION and schedule is not None:
        raise SolverClaimError(
            f"{family.name}.{method} reported status no_solution but returned a schedule"
        )
    bound = _finite(outcome.bound)
    evaluation = objective = None
    if schedule is not None:
        try:
            evaluation = family.evaluate(instance, schedule)
        except InfeasibleScheduleError as exc:
            if exc.details.get("failure") in outcome.no_solution_failures:
                status = Status.NO_SOLUTION
                info["reason"] = f"{method}: {exc}"
            else:
                status = Status.ERROR
                info["error"] = f"{method}: {exc}"
            info.setdefault("failure", "infeasible_schedule")
            info.update(exc.details)
        else:
            objective = float(family.objective(evaluation))
            if not math.isfinite(objective):
                raise InvalidInstanceError(
                    f"{family.name}.{method}: the evaluated objective is {objective}: the "
                    "instance's numbers overflow double precision"
                )
            if family.evaluation_summary is not None:
                for key, value in family.evaluation_summary(evaluation).items():
                    info.setdefault(key, value)
            if outcome.claim is not None:
                _check_claim(family, method, evaluation, objective, outcome.claim)
            if bound is not None:
                bound = _check_bound(family, method, objective, bound)
            elif status is Status.OPTIMAL:
                bound = objective
    elif status in _WITH_SCHEDULE:
        raise SolverClaimError(
            f"{family.name}.{method} reported status {status} but returned no schedule"
        )
    if status is Status.ERROR:
        info.setdefault("error", f"{family.name}.{method} failed without saying why")
    elif status is Status.NO_SOLUTION:
        info.setdefault("reason", f"{family.name}.{method} found no schedule without saying why")
    return SolveResult(
        family=family.name,
        method=method,
        status=status,
        sense=family.sense,
        objective=objective,
        bound=bound,
        runtime_s=runtime_s,
        backend=outcome.backend,
        backend_version=outcome.backend_version,
        num_variables=None if outcome.model_size is None else outcome.model_size[0],
        num_integer_variables=None if outcome.model_size is None else outcome.model_size[1],
        num_constraints=None if outcome.model_size is None else outcome.model_size[2],
        seed=seed,
        schedule=schedule,
        evaluation=evaluation,
        info=info,
        solver_time_s=outcome.solver_time_s,
        time_limit_hit=outcome.time_limit_hit or status is Status.TIME_LIMIT_NO_SOLUTION,
    )
