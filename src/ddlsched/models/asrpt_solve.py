"""One solve of family ``asrpt``'s integer data by a scheduling model, and two compared.

A-SRPT paper, Problem (8); spec ``docs/families/asrpt.md``, ``exact``. The strategy
:func:`ddlsched.models.asrpt_exact.solve_exact` runs :func:`solve_integer` with CP-SAT
(:mod:`ddlsched.models.asrpt_cpsat`) or the time-indexed MILP
(:mod:`ddlsched.models.asrpt_milp`) on the integer data of
:mod:`ddlsched.models.asrpt_integer`; each answer is an :class:`IntegerSolve` (objective
and bound in time units). :func:`agreement` says whether two solves of the same data
agree: both proven with one value, or neither contradicting the other (a solve's proven
optimum above the other's schedule, or its lower bound above the other's schedule, is a
disagreement); :func:`compare_solves` records it per data set and logs a disagreement.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Any

from ddlsched.deadline import Deadline
from ddlsched.models.asrpt_cpsat import solve_cpsat
from ddlsched.models.asrpt_integer import IntegerData, IntegerSolution
from ddlsched.models.asrpt_milp import TimeIndexedFormulation
from ddlsched.models.asrpt_strengthen import Strengthening
from ddlsched.solvers.formulation import solve_formulation
from ddlsched.solvers.limits import SolveLimits
from ddlsched.solvers.result import Status

__all__ = ["IntegerSolve", "agreement", "compare_solves", "solve_integer"]

log = logging.getLogger("ddlsched.models.asrpt_exact")


@dataclass
class IntegerSolve:
    """One solve of one integer model by one scheduling model (objective, bound in units)."""

    solver: str
    status: Status
    solution: IntegerSolution | None
    objective: int | None
    bound: int | None
    runtime_s: float
    model_size: tuple[int, int, int] | None
    backend: str
    backend_version: str
    message: str
    time_limit_hit: bool
    added_bounds: dict[str, int] | None = None
    search: dict[str, float] | None = None

    def report(self) -> dict[str, Any]:
        return {
            "added_bounds": self.added_bounds,
            "search": self.search,
            "solver": self.solver,
            "backend": self.backend,
            "status": str(self.status),
            "objective_units": self.objective,
            "bound_units": self.bound,
            "runtime_s": self.runtime_s,
            "model_size": self.model_size,
            "message": self.message,
        }


def solve_integer(
    data: IntegerData,
    solver: str,
    backend: str,
    deadline: Deadline,
    options: tuple[bool, int, int, Strengthening],
    search_share: float = 1.0,
) -> IntegerSolve:
    """One solve of ``data`` by ``solver`` (``cpsat``, else the time-indexed MILP on
    ``backend``); ``options`` = ``(cross_check, seed, threads, strengthening)``, the last
    and ``search_share`` used by CP-SAT only."""
    _, seed, threads, strengthening = options
    if solver == "cpsat":
        res = solve_cpsat(
            data,
            deadline,
            seed=seed,
            threads=threads,
            strengthening=strengthening,
            search_share=search_share,
        )
        return IntegerSolve(
            "cpsat",
            res.status,
            res.solution,
            res.objective,
            res.bound,
            res.runtime_s,
            res.model_size,
            "cpsat",
            res.version,
            res.message,
            res.time_limit_hit,
            res.added_bounds,
            res.search,
        )
    unit = data.instance.time_unit_s
    out = solve_formulation(
        TimeIndexedFormulation(),
        data,
        backend,
        SolveLimits(abs_gap=0.5, seed=seed, threads=threads),
        False,
        deadline=deadline,
    )
    solution = out.schedule
    objective = solution.objective(data) if solution is not None else None
    bound = None
    if out.bound is not None and math.isfinite(out.bound):
        bound = math.ceil(out.bound / unit - 1e-6)
    if out.status is Status.OPTIMAL and objective is not None:
        bound = objective
    return IntegerSolve(
        "milp",
        out.status,
        solution,
        objective,
        bound,
        out.solver_time_s or 0.0,
        out.model_size,
        out.backend or backend,
        out.backend_version or "",
        str(out.info.get("solver_message", out.info.get("stopped", ""))),
        out.time_limit_hit,
    )


def agreement(first: IntegerSolve, second: IntegerSolve) -> bool | None:
    """Whether two solves of one integer model agree on its optimum (``None``: undecided)."""
    if first.status is Status.OPTIMAL and second.status is Status.OPTIMAL:
        return first.objective == second.objective
    for a, b in ((first, second), (second, first)):
        if a.status is Status.OPTIMAL and b.objective is not None and b.objective < a.objective:
            return False  # b found better than a's "optimum"
        if a.bound is not None and b.objective is not None and a.bound > b.objective:
            return False  # a's lower bound above a schedule b found
    if Status.ERROR in (first.status, second.status):
        return False if Status.OPTIMAL in (first.status, second.status) else None
    return None


def compare_solves(
    solves: dict[tuple[str, str], IntegerSolve], solver: str, other: str, cross: dict[str, Any]
) -> None:
    """Record in ``cross`` whether the two scheduling models agree on each data set."""
    for label in ("upper", "lower"):
        if (label, solver) in solves and (label, other) in solves:
            first, second = solves[label, solver], solves[label, other]
            cross[label] = {
                "agree": agreement(first, second),
                solver: first.report(),
                other: second.report(),
            }
            if cross[label]["agree"] is False:
                log.warning(
                    "asrpt exact: %s and %s disagree on the %s model: %s vs %s (%s, %s)",
                    solver,
                    other,
                    label,
                    first.objective,
                    second.objective,
                    first.status,
                    second.status,
                )
