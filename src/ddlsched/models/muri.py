"""Exact grouping for family ``muri``: a set-packing ILP over all candidate groups.

Spec ``shared/specs/muri.md`` ("Exact: muri.exact_grouping"); paper Sec. 4.2
(the k-dimensional hypergraph matching that Algorithm 1 approximates).

Formulation, for each GPU bucket ``B`` and every candidate group ``S``
(a set of jobs of one bucket, ``|S| <= max_group_size``):

* variable ``x_S in {0, 1}``: ``S`` is one group of the plan;
* objective ``efficiency`` (default): ``max sum_S gamma_S x_S`` over the
  candidates with ``|S| >= 2``, subject to ``sum_{S ∋ i} x_S <= 1`` for
  every job ``i`` (set packing; a job in no chosen group is left alone);
* objective ``period``: ``min sum_S T_S x_S`` over candidates with
  ``|S| >= 1``, subject to ``sum_{S ∋ i} x_S = 1`` (set partitioning).

``gamma_S`` and ``T_S`` are computed at the best offsets (Eqs. 3-4) by
:func:`ddlsched.problems.muri.best_periods`. The number of candidates is
``sum_{p <= k} C(|B|, p)`` per bucket (102,050 for 40 jobs and ``k = 4``);
by default the candidates no better than their best split into two parts
are dropped (``prune``; the optimum is unchanged, see
:func:`candidate_groups`). For the efficiency objective that leaves about a
tenth of the columns, and no group of 4 or more jobs survives: for any split
of ``S`` into ``A`` and ``B``, ``T(S) >= T(A)`` and ``T(S) >= T(B)``, so
``gamma(S) <= gamma(A) + gamma(B)`` when solo times are summed over ``k``
slots; the optimum then prefers pairs and triples, which is why multi-round's
ratio for ``k = 4`` is structurally above 1. For the period objective pruning
removes nothing.
The decoded grouping is re-evaluated by :func:`ddlsched.problems.muri.evaluate`;
a disagreement with the solver's objective beyond 1e-6 relative raises.
"""

from __future__ import annotations

import itertools
import logging
from dataclasses import dataclass

import numpy as np
import pyomo.environ as pyo

from ddlsched.errors import DdlschedError, SolverError
from ddlsched.heuristics.muri import group_efficiencies
from ddlsched.problems.muri import (
    OBJECTIVES,
    MuriGrouping,
    MuriGroupingInstance,
    best_periods,
    evaluate,
)
from ddlsched.solvers import SolveLimits, SolveResult, Status, solve_model

__all__ = ["CandidateGroups", "build", "candidate_groups", "decode", "exact_grouping"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CandidateGroups:
    """All candidate groups (job positions) with their ``gamma`` and ``T``."""

    members: tuple[tuple[int, ...], ...]
    efficiency: np.ndarray
    period: np.ndarray


def candidate_groups(
    instance: MuriGroupingInstance, objective: str, prune: bool = True
) -> CandidateGroups:
    """Enumerate the candidate groups of every bucket (sizes 2.. or 1..max_group_size).

    With ``prune`` (default), a group is dropped when splitting it into two
    parts (each part at its own best split, recursively) is at least as
    good: ``gamma_S <= best(A) + best(S \\ A)`` (a singleton counts 0) or
    ``T_S >= best(A) + best(S \\ A)``. Any plan using a dropped group can
    swap it for its split without loss, so the optimum is unchanged; only
    dominated columns disappear.
    """
    smallest = 2 if objective == "efficiency" else 1
    members: list[tuple[int, ...]] = []
    for bucket in instance.buckets().values():
        for size in range(smallest, instance.max_group_size + 1):
            members.extend(itertools.combinations(bucket, size))
    times = instance.times_array()
    eff = group_efficiencies(times, members) if members else np.zeros(0)
    period = np.empty(len(members))
    by_size: dict[int, list[int]] = {}
    for g, m in enumerate(members):
        by_size.setdefault(len(m), []).append(g)
    for size, idx in by_size.items():
        arr = np.array([members[g] for g in idx], dtype=np.int64).reshape(len(idx), size)
        period[idx], _ = best_periods(times[arr])
    if prune and members:
        keep = _undominated(members, eff if objective == "efficiency" else period, objective)
        members = [members[g] for g in keep]
        eff, period = eff[keep], period[keep]
    return CandidateGroups(tuple(members), eff, period)


def _undominated(members: list[tuple[int, ...]], value: np.ndarray, objective: str) -> list[int]:
    """Positions of the candidates strictly better than their best two-part split."""
    maximise = objective == "efficiency"
    best: dict[tuple[int, ...], float] = {}
    keep: list[int] = []
    order = sorted(range(len(members)), key=lambda g: len(members[g]))
    for g in order:
        group = members[g]
        own = float(value[g])
        size = len(group)
        split = None
        if size >= 2:
            first, rest = group[0], group[1:]
            for mask in range(0, 1 << (size - 1)):
                part_a = (first, *(rest[i] for i in range(size - 1) if mask >> i & 1))
                if len(part_a) == size:
                    continue
                part_b = tuple(rest[i] for i in range(size - 1) if not mask >> i & 1)
                va = best.get(part_a, 0.0 if maximise else None)
                vb = best.get(part_b, 0.0 if maximise else None)
                if va is None or vb is None:
                    continue
                total = va + vb
                if split is None or (total > split if maximise else total < split):
                    split = total
        if split is None or ((own > split + 1e-12) if maximise else (own < split - 1e-12)):
            best[group] = own
            keep.append(g)
        else:
            best[group] = split
    return sorted(keep)


def build(
    instance: MuriGroupingInstance, objective: str = "efficiency", prune: bool = True
) -> tuple[pyo.ConcreteModel, CandidateGroups]:
    """Build the set-packing (or partitioning) model; returns it with its candidates."""
    if objective not in OBJECTIVES:
        raise DdlschedError(f"objective must be one of {', '.join(OBJECTIVES)}, got {objective!r}")
    cands = candidate_groups(instance, objective, prune)
    model = pyo.ConcreteModel(name=f"muri_exact_{objective}")
    model.G = pyo.RangeSet(0, len(cands.members) - 1) if cands.members else pyo.Set(initialize=[])
    model.x = pyo.Var(model.G, domain=pyo.Binary)
    _add_job_constraints(model, instance, cands, objective)
    _add_objective(model, cands, objective)
    return model, cands


def _add_job_constraints(model, instance, cands: CandidateGroups, objective: str) -> None:
    """Each job in at most one chosen group (packing) or exactly one (partitioning)."""
    containing: list[list[int]] = [[] for _ in instance.jobs]
    for g, members in enumerate(cands.members):
        for i in members:
            containing[i].append(g)
    model.J = pyo.RangeSet(0, len(instance.jobs) - 1)

    def rule(m, i):
        if not containing[i]:
            return pyo.Constraint.Skip
        expr = pyo.quicksum(m.x[g] for g in containing[i])
        return expr <= 1 if objective == "efficiency" else expr == 1

    model.one_group = pyo.Constraint(model.J, rule=rule)


def _add_objective(model, cands: CandidateGroups, objective: str) -> None:
    """``max sum gamma_S x_S`` or ``min sum T_S x_S``."""
    if objective == "efficiency":
        w = cands.efficiency
        model.obj = pyo.Objective(
            expr=pyo.quicksum(float(w[g]) * model.x[g] for g in model.G), sense=pyo.maximize
        )
    else:
        w = cands.period
        model.obj = pyo.Objective(
            expr=pyo.quicksum(float(w[g]) * model.x[g] for g in model.G), sense=pyo.minimize
        )


def decode(
    model: pyo.ConcreteModel, instance: MuriGroupingInstance, cands: CandidateGroups
) -> MuriGrouping:
    """Chosen groups, plus a singleton for every job in none."""
    ids = [job.id for job in instance.jobs]
    covered: set[int] = set()
    groups: list[tuple[str, ...]] = []
    for g in model.G:
        value = model.x[g].value
        if value is not None and value > 0.5:
            members = cands.members[g]
            covered.update(members)
            groups.append(tuple(ids[i] for i in members))
    groups.extend((ids[i],) for i in range(len(ids)) if i not in covered)
    return MuriGrouping(tuple(groups))


def exact_grouping(
    instance: MuriGroupingInstance,
    objective: str = "efficiency",
    backend: str = "highs",
    time_limit_s: float = 60.0,
    seed: int = 0,
    prune: bool = True,
) -> SolveResult:
    """Solve the grouping ILP; the result's objective is the evaluator's sum of ``gamma``.

    With ``objective="period"`` the model minimises the summed period; the
    result then reports the grouping's evaluated ``gamma`` sum as objective
    (status ``feasible`` for that objective) and the period optimum, bound
    and status in ``info``.
    """
    model, cands = build(instance, objective, prune)
    if not cands.members:  # no two jobs share a bucket: every job alone is the only plan
        grouping = MuriGrouping(tuple((job.id,) for job in instance.jobs))
        evaluation = evaluate(instance, grouping)
        return SolveResult(
            family="muri",
            method="exact",
            status=Status.OPTIMAL,
            sense="max",
            objective=evaluation.total_efficiency,
            bound=evaluation.total_efficiency,
            seed=seed,
            schedule=grouping,
            evaluation=evaluation,
            num_variables=0,
            num_integer_variables=0,
            num_constraints=0,
            info={
                "objective_optimised": objective,
                "candidate_groups": 0,
                "total_period": evaluation.total_period,
                **(
                    {"period_status": "optimal", "period_bound": evaluation.total_period}
                    if objective == "period"
                    else {}
                ),
            },
        )
    solve = solve_model(model, backend, SolveLimits(time_limit_s=time_limit_s, seed=seed))
    result = SolveResult(
        family="muri",
        method="exact",
        status=solve.status,
        sense="max",
        runtime_s=solve.runtime_s,
        backend=solve.backend,
        backend_version=solve.backend_version,
        num_variables=solve.num_variables,
        num_integer_variables=solve.num_integer_variables,
        num_constraints=solve.num_constraints,
        seed=seed,
        info={"objective_optimised": objective, "candidate_groups": len(cands.members)},
    )
    if not solve.has_solution:
        return result
    grouping = decode(model, instance, cands)
    evaluation = evaluate(instance, grouping)
    evaluated = evaluation.objective(objective)
    incumbent = solve.incumbent if solve.incumbent is not None else 0.0
    if abs(evaluated - incumbent) > 1e-6 * max(1.0, abs(evaluated)):
        raise SolverError(
            f"muri exact: the evaluator gives {evaluated!r} but {solve.backend} reported "
            f"{incumbent!r} for the {objective} objective"
        )
    result.schedule = grouping
    result.evaluation = evaluation
    result.objective = evaluation.total_efficiency
    result.info["total_period"] = evaluation.total_period
    if objective == "efficiency":
        result.bound = solve.bound
    else:
        result.status = Status.FEASIBLE
        result.info["period_status"] = str(solve.status)
        result.info["period_bound"] = solve.bound
    log.info(
        "muri exact (%s, %s): %s, %d candidates, %.2f s",
        objective,
        backend,
        solve.status,
        len(cands.members),
        solve.runtime_s,
    )
    return result
