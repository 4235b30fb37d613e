"""Exact placement ILPs for family ``placement`` (spec ``docs/families/placement.md``).

Formulations of ``min alpha`` (Eq. 7) subject to Eq. (2)
``sum_m x[s,m] = k_s`` and the servers' free GPUs ``sum_s x[s,m] <= avail_m``:

Aggregated (``build_aggregated``, method ``exact``)
    Integer counts ``x[s,m]`` one-hot encoded over their values
    ``v = 0..min(k_s, avail_m)`` (binaries ``z[s,m,v]``, ``sum_v z = 1``,
    ``x = sum_v v z``). The non-linear parts of Eqs. (4)-(7) depend on
    ``x[s,m]`` only through the value taken: ``comp + AllReduce`` is the
    constant ``c_s(v) = pf_s + pb_s + AR_s(v)`` (Eq. 6 with its ``1/x``)
    when ``z[s,m,v] = 1``; ``comm[s,m]`` (Eq. 5) is linear in the
    neighbours' counts ``x[s-1,m]``, ``x[s+1,m]``. The max of Eq. (7) is

        alpha >= sum_{v>=1} c_s(v) z[s,m,v] + comm_s(x[s-1,m], x[s+1,m])
                 - M_{s,m} z[s,m,0]

    with ``M_{s,m}`` the largest value ``comm_s`` can take (a linear
    function of bounded counts: the max of its four corners), so the row
    is slack exactly when stage ``s`` has no replica on ``m``. Three families
    of valid inequalities tighten the LP relaxation (``cuts=True``, the
    default), built on ``lower(s,m,v)``, a lower bound on alpha whenever
    ``x[s,m] = v`` (``v = 0`` included), the largest of:

    * ``plower(s, v)`` of :mod:`ddlsched.models.placement_bounds` for the
      server's ``avail_m``: the smallest possible largest term of the whole
      server when it holds ``v`` replicas of ``s`` (all of a server's terms
      depend on its own counts only; the servers are full when they are
      exactly enough). This *server-pattern* bound closes the root gap of
      most Table II cases: the aggregated ILP's HiGHS time fell from a
      median of 48 ms to 14 ms on them (``benchmarks/results/placement.md``);
    * for ``v >= 1``, ``c_s(v) +`` the smallest ``comm_s`` when ``x[s,m] =
      v`` (the neighbours share the other ``avail_m - v`` GPUs);
    * for ``0 < v < k_s``, ``split(s, min(v, k_s - v))`` (below).

    The inequalities are

    * ``alpha >= sum_{v>=0} lower(s,m,v) z[s,m,v]`` for every ``(s, m)``
      (no big-M);
    * ``alpha >= sum_{m, v>=1} (v / k_s) lower(s,m,v) z[s,m,v]`` for every
      stage (the max is at least the replica-weighted average);
    * when the servers are exactly enough (every server is then full), a
      constant bound ``alpha >= max_m fill(m)``, where ``fill(m)`` is the
      cheapest way (by dynamic programming over the stages) to fill
      ``avail_m`` GPUs with shares ``v_s``, a partial share costing
      ``split(s, min(v_s, k_s - v_s))``; it is positive when ``avail_m`` is
      not a sum of whole stages.

    Here ``split(s, mu) = min_{m, 1 <= u <= mu} (c_s(u) + min comm | x = u)``
    bounds alpha when some server holds at most ``mu`` replicas of stage
    ``s`` (a share ``0 < v < k_s`` on one server leaves ``k_s - v`` to the
    others, so some server holds at most ``min(v, k_s - v)``).

    Servers of
    equal availability are interchangeable; their symmetry is broken by
    ordering them by the lexicographic prefix key
    ``sum_{s<L} B^{L-1-s} x[s,m]`` (non-increasing within a group), with
    ``B`` one more than the largest count and ``L`` the longest prefix with
    ``B^L <= 10^4`` (a valid order: sorting the servers of a group
    lexicographically by their full count vectors satisfies it).

    Server patterns, globally (``patterns=True``, the default;
    :mod:`ddlsched.models.placement_pattern_proof`): the configuration LP over
    the patterns of each availability value (servers of equal availability
    as one block) gives ``alpha >= T_LP``, added as the row ``pattern_bound``
    (its infeasibility just below ``T_LP`` is certified by HiGHS's Farkas ray,
    re-checked in numpy); rounding that LP's solution and solving the small
    residual integer problem gives a placement that is handed to HiGHS as a
    MIP start (``model.ddlsched_start``; SCIP gets it as a hint). On Table II
    jobs at 128 GPUs ``T_LP`` equals the optimum on 7 of 9 cases and the
    start is optimal on most, so HiGHS closes the gap at the root: at 128
    GPUs the aggregated ILP's median time fell from 24 s to 1.0 s (6 cases,
    same loaded machine; ``benchmarks/results/placement-scaling.md``). Before
    this, finding the
    primal solution, not the bound, was what took HiGHS seconds.

    Threshold bound (``threshold=True``, the default): where the pattern
    bound stays below the pattern placement's value,
    :func:`~ddlsched.models.placement_pattern_proof.pattern_proof` runs the CP-SAT
    threshold search of :mod:`ddlsched.solvers.placement_threshold` (is there
    a placement whose terms are all ``<= T``?), and the row ``pattern_bound``
    holds the bound it proved, the start its placement. The search is what
    closes near ties the LP cannot see (gpt175b on 32 GPUs, seed 4: bound 215
    s from the LP, 423.05 s from the forced split, optimum 423.53 s; HiGHS
    alone spent 12 s and 8,883 nodes, the search 0.3 s). ``threshold=False``
    keeps the row at the pattern search's bound, so that the ILP re-proves
    what CP-SAT proved (method ``exact``'s cross-check). Bound and start are
    computed once per instance (:func:`placement_proof`).

The two GPU-level ILPs (``build_gpu_level``, method ``exact_gpu_level``,
our stand-in; ``build_gpu_level_paper``, method ``exact_gpu_level_paper``,
the paper's baseline as we read [47]) are in
:mod:`ddlsched.models.placement_gpu_level`.

All objectives are in milliseconds inside the model, or in a finer unit
for jobs whose largest possible term is under a second
(:func:`~ddlsched.models.placement_bounds.time_scale`; ``model.time_scale``
holds the units per second), so that solver tolerances of ~1e-6 are
negligible against ``alpha``; ``decode`` returns a
:class:`~ddlsched.problems.placement.Placement` that the family evaluator
scores. :class:`PlacementFormulation` is both models behind the
:class:`~ddlsched.solvers.formulation.Formulation` interface, solved by
:func:`~ddlsched.solvers.formulation.solve_formulation`; the method
pipeline fails loudly when the solver's objective and the evaluator
disagree by more than 1e-6 relative.

HiGHS 1.14 claimed a wrong optimum after a MIP restart on a Table II case
(vgg16, 32 GPUs, availability seed 2: 3.308 s instead of 2.655 s; SCIP, other
HiGHS seeds and the GPU-level ILP agree on 2.655 s) on the model of commit
419a110, with presolve and restarts on (either off: right; 1.15.1 as wrong,
1.16.0 right). Restarts have caused such errors before (ERGO-Code/HiGHS issues
2171 and 2439), so the placement ILPs run HiGHS with restarts off
(:data:`HIGHS_OPTIONS`), presolve being on (:mod:`ddlsched.solvers.backends`).
Today's model of the instance is solved right either way;
``tests/test_placement_methods.py`` keeps the case as a HiGHS-SCIP check.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import ClassVar

import pyomo.environ as pyo

from ddlsched.deadline import Deadline
from ddlsched.errors import SolverError
from ddlsched.models.placement_bounds import (
    Coefficients,
    big_m,
    coefficients,
    comm_expr,
    comm_lower,
    count_values,
    forced_split_bound,
    max_count,
    pattern_table_size,
    server_pattern_lower,
    split_costs,
    time_scale,
    upper_bound_ms,
)
from ddlsched.models.placement_gpu_level import build_gpu_level, build_gpu_level_paper
from ddlsched.models.placement_pattern_proof import placement_proof
from ddlsched.problems.placement import Placement, PlacementInstance, evaluate
from ddlsched.solvers.limits import check_model_size

__all__ = [
    "FORMULATIONS",
    "HIGHS_OPTIONS",
    "PlacementFormulation",
    "build_aggregated",
    "decode",
]

log = logging.getLogger(__name__)

_LEX_LIMIT = 10_000
_PATTERN_TABLE_LIMIT = 2_000_000  # entries of one server-pattern DP table (~16 MB)
FORMULATIONS = ("aggregated", "gpu_level", "gpu_level_paper")


# --------------------------------------------------------------------------- aggregated


def build_aggregated(
    instance: PlacementInstance,
    *,
    symmetry_breaking: bool = True,
    cuts: bool = True,
    patterns: bool = True,
    threshold: bool = True,
    deadline: Deadline | None = None,
) -> pyo.ConcreteModel:
    """The aggregated one-hot ILP (see the module docstring)."""
    deadline = deadline or Deadline.unlimited()
    check_model_size(
        "placement aggregated ILP", len(count_values(instance)), "fewer servers or stages"
    )
    coef = coefficients(instance)
    model = pyo.ConcreteModel(name="placement_aggregated")
    model.formulation = "aggregated"
    model.time_scale = coef.scale  # model units per second
    model.S = pyo.RangeSet(0, instance.num_stages - 1)
    model.M = pyo.RangeSet(0, instance.num_servers - 1)
    model.SMV = pyo.Set(initialize=count_values(instance), dimen=3)
    model.z = pyo.Var(model.SMV, domain=pyo.Binary)
    model.alpha = pyo.Var(domain=pyo.NonNegativeReals, bounds=(0, upper_bound_ms(instance, coef)))

    @model.Expression(model.S, model.M)
    def x(m_, s, m):  # x[s,m] = sum_v v z[s,m,v]
        return sum(v * m_.z[s, m, v] for v in range(1, max_count(instance, s, m) + 1))

    @model.Constraint(model.S, model.M)
    def one_hot(m_, s, m):  # sum_v z[s,m,v] = 1
        return sum(m_.z[s, m, v] for v in range(max_count(instance, s, m) + 1)) == 1

    @model.Constraint(model.S)
    def replicas(m_, s):  # Eq. (2): sum_m x[s,m] = k_s
        return sum(m_.x[s, m] for m in m_.M) == instance.stages[s].replicas

    @model.Constraint(model.M)
    def capacity(m_, m):  # sum_s x[s,m] <= avail_m
        return sum(m_.x[s, m] for s in m_.S) <= instance.available[m]

    @model.Constraint(model.S, model.M)
    def bottleneck(m_, s, m):  # Eq. (7): alpha >= beta[s,m] when x[s,m] > 0
        cost = sum(
            coef.cost[(s, v)] * m_.z[s, m, v] for v in range(1, max_count(instance, s, m) + 1)
        )
        return (
            m_.alpha
            >= cost
            + comm_expr(m_, coef, instance, s, m)
            - big_m(instance, coef, s, m) * m_.z[s, m, 0]
        )

    deadline.check("building the aggregated placement ILP")
    if cuts:
        _add_cuts(model, instance, coef)

    deadline.check("building the aggregated placement ILP")
    if symmetry_breaking:
        _add_server_order(model, instance)

    if patterns:
        deadline.check("building the aggregated placement ILP")
        _add_patterns(model, instance, deadline, threshold)
    model.objective = pyo.Objective(expr=model.alpha, sense=pyo.minimize)
    return model


def _add_cuts(model: pyo.ConcreteModel, instance: PlacementInstance, coef: Coefficients) -> None:
    """The valid inequalities of the module docstring: ``bottleneck_lb`` and
    ``bottleneck_avg`` on ``lower(s, m, v)``, and ``forced_split`` when the servers
    are exactly enough."""
    split = split_costs(instance, coef)
    full = sum(instance.available) == instance.num_replicas
    tables = {
        avail: server_pattern_lower(instance, coef, avail, full=full)
        if pattern_table_size(instance, avail) <= _PATTERN_TABLE_LIMIT
        else None  # too large to tabulate (e.g. 128-GPU servers): weaker cuts only
        for avail in set(instance.available)
    }
    lower = {}
    for s, m, v in model.SMV:
        table = tables[instance.available[m]]
        value = 0.0 if table is None else table[s, v]
        if not math.isfinite(value):  # no pattern holds v replicas: 0 is still valid
            value = 0.0
        if v >= 1:
            value = max(value, coef.cost[(s, v)] + comm_lower(instance, coef, s, m, v))
            k = instance.stages[s].replicas
            if v < k:  # the stage is split: a server holds <= min(v, k - v) of it
                value = max(value, split[s, min(v, k - v)])
        lower[s, m, v] = value

    @model.Constraint(model.S, model.M)
    def bottleneck_lb(m_, s, m):  # alpha >= sum_v lower(s, m, v) z[s,m,v]
        return m_.alpha >= sum(
            lower[s, m, v] * m_.z[s, m, v] for v in range(max_count(instance, s, m) + 1)
        )

    @model.Constraint(model.S)
    def bottleneck_avg(m_, s):  # alpha >= the replica-weighted average of beta[s, .]
        k = instance.stages[s].replicas
        return m_.alpha >= sum(
            (v / k) * lower[s, m, v] * m_.z[s, m, v]
            for m in m_.M
            for v in range(1, max_count(instance, s, m) + 1)
        )

    forced = forced_split_bound(instance, split)
    if forced is not None:
        model.forced_split = pyo.Constraint(expr=model.alpha >= forced)


def _add_server_order(model: pyo.ConcreteModel, instance: PlacementInstance) -> None:
    """Symmetry breaking: servers of equal availability ordered by their prefix-lex key."""
    pairs = _symmetry_pairs(instance)
    if pairs:
        base = 1 + max(
            max_count(instance, s, m) for s in range(instance.num_stages) for m, _ in pairs
        )
        length = 1
        while length < instance.num_stages and base ** (length + 1) <= _LEX_LIMIT:
            length += 1
        weights = [base ** (length - 1 - s) for s in range(length)]
        model.PAIRS = pyo.Set(initialize=pairs, dimen=2)

        @model.Constraint(model.PAIRS)
        def server_order(m_, a, b):  # prefix-lex key of server a >= that of server b
            return sum(w * m_.x[s, a] for s, w in enumerate(weights)) >= sum(
                w * m_.x[s, b] for s, w in enumerate(weights)
            )


def _add_patterns(
    model: pyo.ConcreteModel, instance: PlacementInstance, deadline: Deadline, threshold: bool
) -> None:
    """The pattern bound as a row and the best pattern placement as a MIP start
    (:func:`placement_proof`): with ``threshold``, the proven bound including the
    threshold search's; without, the certified pattern LP bound only (so that the
    ILP re-proves what CP-SAT proved, for the cross-check)."""
    proof = placement_proof(instance, deadline)
    bound = proof.bound if threshold else proof.pattern_bound
    if bound is not None and bound > 0:
        model.pattern_bound = pyo.Constraint(expr=model.alpha >= bound)
    model.pattern_proof = proof
    if proof.counts is None:
        return
    start = [(model.z[s, m, v], 1.0 if proof.counts[s][m] == v else 0.0) for s, m, v in model.SMV]
    model.ddlsched_start = [*start, (model.alpha, proof.value)]


def _symmetry_pairs(instance: PlacementInstance) -> list[tuple[int, int]]:
    """Consecutive servers (in index order) of equal availability."""
    last_of: dict[int, int] = {}
    pairs = []
    for m, avail in enumerate(instance.available):
        if avail in last_of:
            pairs.append((last_of[avail], m))
        last_of[avail] = m
    return pairs


# --------------------------------------------------------------------------- decode / solve


def decode(model: pyo.ConcreteModel, instance: PlacementInstance) -> Placement:
    """Read the placement out of a solved model (either formulation)."""
    counts = [[0] * instance.num_servers for _ in instance.stages]
    for s in range(instance.num_stages):
        for m in range(instance.num_servers):
            value = pyo.value(model.x[s, m], exception=False)
            if value is None:
                raise SolverError(f"no value for x[{s},{m}] in the solved model")
            count = round(value)
            if abs(value - count) > 1e-4:
                raise SolverError(f"x[{s},{m}] = {value} is not integral")
            counts[s][m] = int(count)
    if model.formulation not in ("gpu_level", "gpu_level_paper"):
        return Placement(tuple(tuple(r) for r in counts))
    gpu_of = []
    for s, stage in enumerate(instance.stages):
        row = []
        for r in range(stage.replicas):
            where = [
                (m, j)
                for m, avail in enumerate(instance.available)
                for j in range(avail)
                if (pyo.value(model.y[s, r, m, j], exception=False) or 0.0) > 0.5
            ]
            if len(where) != 1:
                raise SolverError(f"replica ({s}, {r}) is on {len(where)} GPUs in the solution")
            row.append(where[0])
        gpu_of.append(tuple(row))
    return Placement(tuple(tuple(r) for r in counts), tuple(gpu_of))


HIGHS_OPTIONS: tuple[tuple[str, object], ...] = (("mip_allow_restart", False),)


@dataclass(frozen=True)
class PlacementFormulation:
    """The aggregated (``formulation="aggregated"``) or GPU-level ILP as a Formulation.

    Minimises ``alpha`` (Eq. 7) in the model's time unit
    (:meth:`objective_scale` units per second); ``symmetry_breaking``,
    ``cuts``, ``patterns`` and ``threshold`` apply to the aggregated model only. Every valid instance has a
    placement, so "infeasible" is a solver failure.
    """

    formulation: str = "aggregated"
    symmetry_breaking: bool = True
    cuts: bool = True
    patterns: bool = True
    threshold: bool = True

    sense: ClassVar[str] = "min"
    metric: ClassVar[str | None] = None
    always_feasible: ClassVar[bool] = True
    highs_options: ClassVar[tuple[tuple[str, object], ...]] = HIGHS_OPTIONS

    def __post_init__(self) -> None:
        if self.formulation not in FORMULATIONS:
            raise ValueError(
                f"unknown formulation {self.formulation!r} (choose from {FORMULATIONS})"
            )

    @property
    def name(self) -> str:
        return f"placement.{self.formulation}"

    def build(self, instance: PlacementInstance, deadline: Deadline) -> pyo.ConcreteModel:
        if self.formulation == "aggregated":
            return build_aggregated(
                instance,
                symmetry_breaking=self.symmetry_breaking,
                cuts=self.cuts,
                patterns=self.patterns,
                threshold=self.threshold,
                deadline=deadline,
            )
        if self.formulation == "gpu_level_paper":
            return build_gpu_level_paper(instance, deadline=deadline)
        return build_gpu_level(instance, deadline=deadline)

    def objective_scale(self, instance: PlacementInstance) -> float:
        return time_scale(instance)

    def decode(self, model: pyo.ConcreteModel, instance: PlacementInstance) -> Placement:
        return decode(model, instance)

    def measure(self, instance: PlacementInstance, placement: Placement) -> float:
        return evaluate(instance, placement).iteration_time_s
