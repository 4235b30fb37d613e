"""Exact grouping for family ``muri``: a set-packing ILP over all candidate groups.

Spec ``docs/families/muri.md`` (``exact``); paper Sec. 4.2
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
:class:`GroupingFormulation` is the model behind the
:class:`~ddlsched.solvers.formulation.Formulation` interface; the decoded
grouping is re-evaluated by :func:`ddlsched.problems.muri.evaluate` in the
method pipeline, where a disagreement with the solver's objective beyond
1e-6 relative fails loudly (for ``period`` the claim is about
``total_period``, minimised).
"""

from __future__ import annotations

import itertools
import logging
import math
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import pyomo.environ as pyo

from ddlsched.deadline import Deadline
from ddlsched.errors import DdlschedError, ModelTooLargeError
from ddlsched.memory import require_memory
from ddlsched.problems.muri import (
    OBJECTIVES,
    MuriGrouping,
    MuriGroupingInstance,
    best_periods,
    evaluate,
    group_efficiencies,
)
from ddlsched.solvers.backends import SolveLimits
from ddlsched.solvers.formulation import solve_formulation
from ddlsched.solvers.limits import MAX_MODEL_VARIABLES, check_model_size
from ddlsched.solvers.result import Outcome, Status

__all__ = [
    "CandidateGroups",
    "GroupingFormulation",
    "build",
    "candidate_groups",
    "decode",
    "exact_grouping",
]

log = logging.getLogger(__name__)

#: The most candidate groups enumerated before pruning (the model is then capped again).
MAX_CANDIDATES = 5_000_000
_CHUNK = 32_768  # candidate groups evaluated between two deadline checks


@dataclass(frozen=True)
class CandidateGroups:
    """All candidate groups (job positions) with their ``gamma`` and ``T``."""

    members: tuple[tuple[int, ...], ...]
    efficiency: np.ndarray
    period: np.ndarray


def candidate_groups(
    instance: MuriGroupingInstance,
    objective: str,
    prune: bool = True,
    deadline: Deadline | None = None,
) -> CandidateGroups:
    """Enumerate the candidate groups of every bucket (sizes 2.. or 1..max_group_size).

    With ``prune`` (default), a group is dropped when splitting it into two
    parts (each part at its own best split, recursively) is at least as
    good: ``gamma_S <= best(A) + best(S \\ A)`` (a singleton counts 0) or
    ``T_S >= best(A) + best(S \\ A)``. Any plan using a dropped group can
    swap it for its split without loss, so the optimum is unchanged; only
    dominated columns disappear. ``deadline`` is checked between the steps
    and while pruning.
    """
    deadline = deadline or Deadline.unlimited()
    smallest = 2 if objective == "efficiency" else 1
    _check_enumeration(instance, smallest)
    members: list[tuple[int, ...]] = []
    for bucket in instance.buckets().values():
        for size in range(smallest, instance.max_group_size + 1):
            members.extend(itertools.combinations(bucket, size))
    deadline.check("enumerating candidate groups")
    times = instance.times_array()
    eff = np.empty(len(members))
    for lo in range(0, len(members), _CHUNK):  # chunks: the deadline is checked between
        deadline.check("computing candidate groups' efficiencies")
        eff[lo : lo + _CHUNK] = group_efficiencies(times, members[lo : lo + _CHUNK])
    period = np.empty(len(members))
    by_size: dict[int, list[int]] = {}
    for g, m in enumerate(members):
        by_size.setdefault(len(m), []).append(g)
    for size, positions in by_size.items():
        for lo in range(0, len(positions), _CHUNK):
            deadline.check("computing candidate groups' periods")
            idx = positions[lo : lo + _CHUNK]
            arr = np.array([members[g] for g in idx], dtype=np.int64).reshape(len(idx), size)
            period[idx], _ = best_periods(times[arr])
    deadline.check("computing candidate groups' periods")
    if prune and members:
        value = eff if objective == "efficiency" else period
        keep = _undominated(members, value, objective, deadline)
        members = [members[g] for g in keep]
        eff, period = eff[keep], period[keep]
    return CandidateGroups(tuple(members), eff, period)


def _check_enumeration(instance: MuriGroupingInstance, smallest: int) -> None:
    """Refuse before enumerating more candidate groups than can be held or scored.

    Each candidate costs a tuple, two floats and the pruning's bookkeeping;
    scoring it scans its ``(k-1)!/(k-p)!`` offset choices (:func:`best_periods`).
    """
    count = 0
    work = 0
    k = instance.num_resources
    for bucket in instance.buckets().values():
        for size in range(smallest, instance.max_group_size + 1):
            groups = math.comb(len(bucket), size)
            count += groups
            work += groups * math.perm(k - 1, size - 1) * size * k
    hint = "fewer jobs per GPU bucket or a smaller max_group_size"
    # a pair survives pruning whenever interleaving helps (almost always): more pairs than
    # the model may have is a refusal now, not after minutes of scoring
    pairs = sum(math.comb(len(b), 2) for b in instance.buckets().values())
    if instance.max_group_size >= 2 and pairs > MAX_MODEL_VARIABLES:
        raise ModelTooLargeError(
            f"muri exact: {pairs:,} job pairs alone (nearly all kept by the pruning) exceed "
            f"the {MAX_MODEL_VARIABLES:,} variables ddlsched builds; {hint}"
        )
    if count > MAX_CANDIDATES:
        raise ModelTooLargeError(
            f"muri exact: {count:,} candidate groups to enumerate, more than the "
            f"{MAX_CANDIDATES:,} ddlsched scores; {hint}"
        )
    # measured peak ~290 B a candidate at k = 4 (tuples, scores, the pruning's dicts)
    require_memory(f"muri exact's {count:,} candidate groups", count * (300 + 8 * k), hint)
    log.debug("muri exact: %d candidate groups, %d offset-scan elements", count, work)


def _undominated(
    members: list[tuple[int, ...]], value: np.ndarray, objective: str, deadline: Deadline
) -> list[int]:
    """Positions of the candidates strictly better than their best two-part split."""
    maximise = objective == "efficiency"
    best: dict[tuple[int, ...], float] = {}
    keep: list[int] = []
    order = sorted(range(len(members)), key=lambda g: len(members[g]))
    for visited, g in enumerate(order):
        if visited % 4096 == 0:
            deadline.check("pruning candidate groups")
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
    instance: MuriGroupingInstance,
    objective: str = "efficiency",
    prune: bool = True,
    candidates: CandidateGroups | None = None,
    deadline: Deadline | None = None,
) -> tuple[pyo.ConcreteModel, CandidateGroups]:
    """Build the set-packing (or partitioning) model; returns it with its candidates.

    ``candidates`` (from :func:`candidate_groups` with the same arguments)
    saves enumerating them again; ``deadline`` is checked between blocks.
    """
    if objective not in OBJECTIVES:
        raise DdlschedError(f"objective must be one of {', '.join(OBJECTIVES)}, got {objective!r}")
    deadline = deadline or Deadline.unlimited()
    cands = (
        candidates
        if candidates is not None
        else candidate_groups(instance, objective, prune, deadline)
    )
    check_model_size(
        f"muri exact ({objective})",
        len(cands.members),
        "fewer jobs per GPU bucket or a smaller max_group_size",
    )
    model = pyo.ConcreteModel(name=f"muri_exact_{objective}")
    model.G = pyo.RangeSet(0, len(cands.members) - 1) if cands.members else pyo.Set(initialize=[])
    model.x = pyo.Var(model.G, domain=pyo.Binary)
    deadline.check("building the grouping ILP")
    _add_job_constraints(model, instance, cands, objective)
    deadline.check("building the grouping ILP")
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


@dataclass(frozen=True)
class GroupingFormulation:
    """The set-packing (``efficiency``) or set-partitioning (``period``) ILP as a Formulation.

    For ``efficiency`` the model's objective is the family objective (sum of
    ``gamma``, maximised); for ``period`` it is the evaluation's
    ``total_period`` (minimised), so the result is ``feasible`` for the
    family objective and the model's status and bound go to ``info``.
    """

    objective: str = "efficiency"
    prune: bool = True
    candidates: CandidateGroups | None = field(default=None, compare=False, repr=False)

    always_feasible: ClassVar[bool] = True  # every job alone is a plan
    highs_options: ClassVar[tuple[tuple[str, object], ...]] = ()

    def __post_init__(self) -> None:
        if self.objective not in OBJECTIVES:
            raise DdlschedError(
                f"objective must be one of {', '.join(OBJECTIVES)}, got {self.objective!r}"
            )

    @property
    def name(self) -> str:
        return f"muri.{self.objective}"

    @property
    def sense(self) -> str:
        return "max" if self.objective == "efficiency" else "min"

    @property
    def metric(self) -> str | None:
        return None if self.objective == "efficiency" else "total_period"

    def build(self, instance: MuriGroupingInstance, deadline: Deadline) -> pyo.ConcreteModel:
        model, cands = build(instance, self.objective, self.prune, self.candidates, deadline)
        model.candidates = cands
        return model

    def objective_scale(self, instance: MuriGroupingInstance) -> float:
        return 1.0

    def decode(self, model: pyo.ConcreteModel, instance: MuriGroupingInstance) -> MuriGrouping:
        return decode(model, instance, model.candidates)

    def measure(self, instance: MuriGroupingInstance, grouping: MuriGrouping) -> float:
        return evaluate(instance, grouping).objective(self.objective)


def exact_grouping(
    instance: MuriGroupingInstance,
    objective: str = "efficiency",
    backend: str = "highs",
    limits: SolveLimits | None = None,
    *,
    prune: bool = True,
    cross_check: bool = False,
    deadline: Deadline | None = None,
) -> Outcome:
    """Solve the grouping ILP (the ``exact`` method; see the module docstring).

    With ``objective="period"`` the model minimises the summed period; the
    result is then ``feasible`` for the family objective (the sum of
    ``gamma``), with the period's status and bound in ``info``
    (``period_status``, ``period_bound``).
    """
    deadline = deadline or (limits or SolveLimits()).deadline()
    with deadline.interrupting("enumerating candidate groups"):  # numpy batches in between
        cands = candidate_groups(instance, objective, prune, deadline)
    formulation = GroupingFormulation(objective, prune, cands)
    info = {"objective_optimised": objective, "candidate_groups": len(cands.members)}
    if not cands.members:  # no two jobs share a bucket: every job alone is the only plan
        grouping = MuriGrouping(tuple((job.id,) for job in instance.jobs))
        if objective == "period":
            info.update(period_status="optimal", period_bound=None)
        return Outcome(
            schedule=grouping,
            status=Status.OPTIMAL if objective == "efficiency" else Status.FEASIBLE,
            model_size=(0, 0, 0),
            info=info,
        )
    outcome = solve_formulation(
        formulation, instance, backend, limits, cross_check, deadline=deadline
    )
    outcome.info.update(info)
    model_objective = outcome.info.get("model_objective")
    if model_objective is not None:
        outcome.info["period_status"] = model_objective["status"]
        outcome.info["period_bound"] = model_objective["bound"]
    log.info(
        "muri exact (%s, %s): %s, %d candidates, %.2f s",
        objective,
        backend,
        outcome.status,
        len(cands.members),
        outcome.solver_time_s or 0.0,
    )
    return outcome
