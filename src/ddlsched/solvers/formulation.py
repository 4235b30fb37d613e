"""One interface for every exact formulation, and one function that solves it.

A :class:`Formulation` is the statement of record of an exact method: a
Pyomo model built from an instance (``build``), read back into the family's
schedule (``decode``), with the scale between the model's objective and the
quantity it stands for (``objective_scale``) and that quantity as the family
evaluator computes it for a schedule (``measure``). Formulations live in
``ddlsched/models/``; they never solve themselves.

:func:`solve_formulation` builds, solves, decodes and measures, optionally
cross-checks the answer with the second backend, and returns an
:class:`~ddlsched.solvers.result.Outcome` whose
:class:`~ddlsched.solvers.result.Claim` (the solver's objective) the method
pipeline checks against the family evaluator (:func:`ddlsched.pipeline.finish`,
which also builds the :class:`~ddlsched.solvers.result.SolveResult`: one
place). Everything it does, model building and the cross-check included,
runs within the method's :class:`~ddlsched.deadline.Deadline`.

Cross-check (``cross_check=True``; the ``placement`` exact methods do it by
default, any exact method can with ``--param cross_check=true``): after a
proven optimum, the other backend solves the same model with the objective
capped at the first answer's evaluated value (plus ``1e-7`` relative and
``1e-6`` model units): it must find a schedule at least as good and prove
that none is better, a full second proof but several times faster than an
uncapped solve. After an "infeasible" it solves uncapped. The better
evaluated schedule is kept, with the status and bound of the backend that
found it. ``info['cross_check']['agree']`` is ``True`` only when the second
backend proved the same answer, ``False`` when it found a better schedule
or none under the cap (or a schedule where the first claimed none), and
``None`` when it could not decide (error, time limit; a cross-check the
time limit cuts keeps the first answer). HiGHS 1.14 and 1.15 returned
wrong optima on rare instances (``tests/test_solver_regressions.py``);
this is how the toolkit catches such errors at run time.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass, replace
from typing import Any, Protocol, TypeVar

import pyomo.environ as pyo

from ddlsched import progress
from ddlsched.deadline import Deadline
from ddlsched.errors import TimeLimitReached
from ddlsched.solvers.backends import ModelSolve, SolveLimits, solve_model
from ddlsched.solvers.result import Claim, Outcome, Status, mark_stopped

__all__ = ["CAP_RTOL", "Formulation", "other_backend", "solve_formulation"]

log = logging.getLogger(__name__)


def _not_a_time_limit(record: logging.LogRecord) -> bool:
    """Drop Pyomo's "Rule failed" report of a build the deadline interrupted (not an error)."""
    return "TimeLimitReached" not in record.getMessage()


logging.getLogger("pyomo.core").addFilter(_not_a_time_limit)

#: Slack of the objective cap of a cross-check solve (relative; plus 1e-6 model units).
CAP_RTOL = 1e-7
_AGREE_RTOL = 1e-7
_NOT_RUN = "not run: time limit"

InstanceT = TypeVar("InstanceT", contravariant=True)
ScheduleT = TypeVar("ScheduleT")


class Formulation(Protocol[InstanceT, ScheduleT]):
    """An exact formulation of a family's problem (or of a quantity of its schedules).

    ``sense``: of the model's objective. ``metric``: the attribute of the
    family evaluation that the model's objective equals at an optimum
    (``None``: the family objective). ``always_feasible``: every valid
    instance has a solution, so "infeasible" can only be a solver failure.
    ``highs_options``: HiGHS options this formulation needs (the user's
    ``SolveLimits.highs_options`` win).
    """

    name: str
    sense: str
    metric: str | None
    always_feasible: bool
    highs_options: tuple[tuple[str, object], ...]

    def build(self, instance: InstanceT, deadline: Deadline) -> pyo.ConcreteModel:
        """The Pyomo model, with one active objective (check ``deadline`` between blocks)."""
        ...

    def objective_scale(self, instance: InstanceT) -> float:
        """Model objective units per unit of the measured quantity (e.g. 1000 for ms per s)."""
        ...

    def decode(self, model: pyo.ConcreteModel, instance: InstanceT) -> ScheduleT:
        """The schedule held by a solved model."""
        ...

    def measure(self, instance: InstanceT, schedule: ScheduleT) -> float:
        """The quantity the model optimises, as the family evaluator computes it."""
        ...


def other_backend(backend: str) -> str:
    """The second opinion of ``backend``."""
    return "scip" if backend == "highs" else "highs"


@dataclass
class _Solved:
    """One solve of a formulation: the backend's report and what was read back."""

    solve: ModelSolve
    schedule: Any
    value: float | None  # the measured quantity of the schedule (evaluator)
    incumbent: float | None  # the solver's objective, in the quantity's unit
    bound: float | None  # the solver's dual bound, in the quantity's unit
    build_s: float


def _objective(model: pyo.ConcreteModel) -> pyo.Objective:
    active = list(model.component_data_objects(pyo.Objective, active=True))
    if len(active) != 1:
        raise ValueError(f"a formulation needs exactly one active objective, found {len(active)}")
    return active[0]


def _cap(model: pyo.ConcreteModel, sense: str, cap: float) -> None:
    expr = _objective(model).expr
    if sense == "min":
        model.ddlsched_objective_cap = pyo.Constraint(expr=expr <= cap * (1 + CAP_RTOL) + 1e-6)
    else:
        model.ddlsched_objective_cap = pyo.Constraint(expr=expr >= cap * (1 - CAP_RTOL) - 1e-6)


def _limits_for(formulation: Formulation, backend: str, limits: SolveLimits) -> SolveLimits:
    if backend != "highs" or not formulation.highs_options:
        return limits
    given = {name for name, _ in limits.highs_options}
    extra = tuple((k, v) for k, v in formulation.highs_options if k not in given)
    return replace(limits, highs_options=(*limits.highs_options, *extra))


def _solve_once(
    formulation: Formulation,
    instance: Any,
    backend: str,
    limits: SolveLimits,
    deadline: Deadline,
    cap: float | None = None,
) -> _Solved:
    started = time.perf_counter()
    progress.phase(f"building the {formulation.name} model ({backend})")
    with deadline.interrupting(f"building the {formulation.name} model"):
        model = formulation.build(instance, deadline)
    scale = formulation.objective_scale(instance)
    if cap is not None:
        _cap(model, formulation.sense, scale * cap)
    build_s = time.perf_counter() - started
    progress.phase(f"solving {formulation.name} with {backend}")
    solve = solve_model(model, backend, _limits_for(formulation, backend, limits), deadline)
    bound = None if solve.bound is None else solve.bound / scale
    progress.incumbent(solve.incumbent and solve.incumbent / scale, bound, formulation.name)
    if not solve.has_solution:
        return _Solved(solve, None, None, None, bound, build_s)
    schedule = formulation.decode(model, instance)
    value = float(formulation.measure(instance, schedule))
    incumbent = None if solve.incumbent is None else solve.incumbent / scale
    log.debug(
        "%s/%s: %s value=%.9g bound=%s", formulation.name, backend, solve.status, value, bound
    )
    return _Solved(solve, schedule, value, incumbent, bound, build_s)


def _better(sense: str, a: float, b: float) -> bool:
    return a < b if sense == "min" else a > b


def _cross_check(
    formulation: Formulation,
    instance: Any,
    backend: str,
    limits: SolveLimits,
    deadline: Deadline,
    first: _Solved,
) -> tuple[_Solved, _Solved | None, dict[str, Any]]:
    """Re-solve with the other backend (module docstring); ``(kept, second, report)``."""
    other = other_backend(backend)
    report: dict[str, Any] = {"backend": other}
    if deadline.remaining_s() <= 1e-3:
        report.update(status=_NOT_RUN, agree=None)
        return first, None, report
    progress.phase(f"cross-check of {formulation.name} with {other}")
    try:
        second = _solve_once(formulation, instance, other, limits, deadline, cap=first.value)
    except TimeLimitReached:  # the limit came while building the second model
        report.update(status=_NOT_RUN, agree=None)
        return first, None, report
    report["status"] = str(second.solve.status)
    name = formulation.name
    if first.schedule is None:  # the first backend claimed the model infeasible
        if second.schedule is not None:
            report["agree"] = False
            log.warning("%s: %s claimed infeasible, %s found a solution", name, backend, other)
            return second, second, report
        if second.solve.status is not Status.INFEASIBLE:
            report["agree"] = None  # undecided
        else:  # both say infeasible: right, unless every instance has a solution
            report["agree"] = not formulation.always_feasible
        return first, second, report
    if second.schedule is None:
        report["agree"] = False if second.solve.status is Status.INFEASIBLE else None
        log.warning(
            "%s: %s could not confirm %s's optimum %.9g (%s)",
            name,
            other,
            backend,
            first.value,
            second.solve.status,
        )
        return first, second, report
    report["values"] = {backend: first.value, other: second.value}
    if math.isclose(first.value, second.value, rel_tol=_AGREE_RTOL, abs_tol=1e-12):
        report["agree"] = True if second.solve.status is Status.OPTIMAL else None
        return first, second, report
    report["agree"] = False
    log.warning(
        "%s: %s claims optimum %.9g but %s finds %.9g",
        name,
        backend,
        first.value,
        other,
        second.value,
    )
    kept = second if _better(formulation.sense, second.value, first.value) else first
    return kept, second, report


def solve_formulation(
    formulation: Formulation,
    instance: Any,
    backend: str = "highs",
    limits: SolveLimits | None = None,
    cross_check: bool = False,
    *,
    deadline: Deadline | None = None,
) -> Outcome:
    """Build, solve, decode and (optionally) cross-check ``formulation`` on ``instance``.

    Returns the method's :class:`~ddlsched.solvers.result.Outcome`: the
    schedule, the status and bound of the backend whose answer was kept, the
    solver's :class:`~ddlsched.solvers.result.Claim` for the schedule, the
    model size and the time spent in the solvers. ``deadline`` (default: one
    of ``limits.time_limit_s``) covers building, solving and the
    cross-check. When the model optimises a quantity other than the family
    objective (``formulation.metric``), its status and bound are reported in
    ``info['model_objective']`` and the result is ``feasible`` for the family
    objective.
    """
    limits = limits or SolveLimits()
    deadline = deadline or limits.deadline()
    try:
        first = _solve_once(formulation, instance, backend, limits, deadline)
    except TimeLimitReached as exc:  # the limit came while building the model
        outcome = Outcome(
            status=Status.TIME_LIMIT_NO_SOLUTION, info={"formulation": formulation.name}
        )
        return mark_stopped(outcome, str(exc))
    kept, second, report = first, None, None
    if cross_check and first.solve.status in (Status.OPTIMAL, Status.INFEASIBLE):
        kept, second, report = _cross_check(formulation, instance, backend, limits, deadline, first)
    solve = kept.solve
    status = solve.status
    info: dict[str, Any] = {
        "formulation": formulation.name,
        "solver_message": solve.message,
        "build_s": first.build_s,
    }
    if report is not None:
        info["cross_check"] = report
    if status is Status.ERROR:  # say why: the solver's own words
        info["error"] = f"{solve.backend} ended the {formulation.name} model with: {solve.message}"
    if status is Status.INFEASIBLE and formulation.always_feasible:
        status = Status.ERROR
        info["error"] = (
            f"{solve.backend} claimed the {formulation.name} model infeasible, but every valid "
            "instance has a solution: a solver failure"
        )
    claim = None
    if kept.schedule is not None and kept.incumbent is not None:
        claim = Claim(
            kept.incumbent,
            metric=formulation.metric,
            sense=formulation.sense,
            proven=status is Status.OPTIMAL,
        )
    bound = kept.bound
    if formulation.metric is not None:  # the model's status and bound are not the family's
        info["model_objective"] = {
            "metric": formulation.metric,
            "status": str(status),
            "bound": bound,
        }
        if status is Status.OPTIMAL:
            status = Status.FEASIBLE
        bound = None
    solver_time = first.solve.runtime_s + (second.solve.runtime_s if second is not None else 0.0)
    outcome = Outcome(
        schedule=kept.schedule,
        status=status,
        bound=bound,
        claim=claim,
        backend=solve.backend,
        backend_version=solve.backend_version,
        model_size=solve.model_size,
        solver_time_s=solver_time,
        info=info,
    )
    return mark_stopped(outcome, _what_the_limit_stopped(formulation, first, second, report))


def _what_the_limit_stopped(
    formulation: Formulation, first: _Solved, second: _Solved | None, report: dict | None
) -> str:
    """``info['stopped']``: what the time limit stopped ("" if nothing).

    The first solve (the worker killed, or HiGHS/SCIP at its limit), and the
    cross-check: a cross-check the limit cut or did not let run leaves the
    first answer standing, unconfirmed (``info['cross_check']['agree']`` is
    ``None``); it is named here so that ``time_limit_hit`` never comes
    without a reason.
    """
    parts = []
    if first_cut := first.solve.what_stopped(formulation.name):
        parts.append(first_cut)
    cross_cut = (second is not None and second.solve.time_limit_hit) or (report or {}).get(
        "status"
    ) == _NOT_RUN
    if cross_cut:
        other = (report or {}).get("backend", "the other backend")
        parts.append(
            f"the cross-check with {other} at the time limit "
            f"({first.solve.backend}'s answer stands, unconfirmed)"
        )
    return "; ".join(parts)
