"""Family ``placement``: Heavy-Edge vs the exact placement ILPs (A-SRPT paper, Table II).

Paper: seed 004, Sections III-A, III-B, IV-B and Table II; spec
``shared/specs/placement.md``.

Modules of the family:

* problem: :mod:`ddlsched.problems.placement` (instance, Eqs. 4-7, the
  evaluator :func:`~ddlsched.problems.placement.evaluate`, ``alpha_max``);
* workloads: :mod:`ddlsched.workloads.placement` (presets ``small``,
  ``table2``) and :mod:`ddlsched.workloads.profiles` (DNN profiles, stage
  planner);
* heuristics: :mod:`ddlsched.heuristics.heavy_edge` (Heavy-Edge, ``alpha~_min``);
* models: :mod:`ddlsched.models.placement` (aggregated and GPU-level ILPs,
  :class:`~ddlsched.models.placement.PlacementFormulation`) and
  :mod:`ddlsched.models.placement_bounds` (valid inequalities).
* solvers: :mod:`ddlsched.solvers.placement_threshold` (CP-SAT threshold search).

Methods (all minimise the per-iteration time ``alpha`` of Eq. 7, seconds,
as recomputed by the evaluator):

* ``heavy_edge`` (heuristic): Heavy-Edge seeded by ``--seed``;
  ``info['mapping_s']`` is the mapping time alone (the paper's placement
  computation time, PCT), ``info['alpha_max_s']`` the all-apart value.
* ``exact``: the aggregated formulation (counts per stage and server).
  With ``patterns`` (default) it first proves what it can without the ILP:
  the server-pattern bounds and placement of
  :mod:`ddlsched.models.placement_patterns`, then, where they leave a gap,
  the CP-SAT threshold search of :mod:`ddlsched.solvers.placement_threshold`.
  When these close the gap and ``cross_check`` is off, the placement is
  returned as optimal (``info['proof']``: ``patterns`` or ``threshold``);
  otherwise the aggregated one-hot ILP is solved from their placement, with
  their bound as a row (``info['proof']``: ``milp``; when it cross-checks a
  closed pattern proof the ILP gets only the pattern search's bound and
  re-proves the rest, ``info['pattern_proof']['agrees']``). Parameters ``symmetry_breaking``,
  ``cuts`` (valid inequalities), ``patterns`` (default true; false for an
  ablation: the ILP alone) and ``milp`` (default false; true: solve the
  ILP even after a closed pattern proof).
* ``exact_gpu_level``: a GPU-level ILP (replica x GPU binaries) that keeps
  the aggregated model's one-hot count encoding: our strong stand-in for
  the paper's baseline, not the paper's formulation.
* ``exact_gpu_level_paper``: the paper's GPU-level baseline as we read its
  reference [47] (Archer et al.'s pipeline-partitioning ILP): replica x GPU
  binaries only, no count encoding (``build_gpu_level_paper``).

All exact methods cross-check a proven optimum with the other backend by
default (``cross_check``; :func:`~ddlsched.solvers.formulation.solve_formulation`),
because HiGHS 1.14 returned wrong placement optima on rare instances
(``tests/test_solver_regressions.py``, cases 4-7).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from ddlsched.params import NoParams, param
from ddlsched.problems.placement import (
    PlacementInstance,
    alpha_max,
    evaluate,
    placement_from_json,
    placement_to_json,
)
from ddlsched.registry import Family, RunContext, register_family, register_method
from ddlsched.solvers.limits import SolveLimits
from ddlsched.solvers.result import Outcome
from ddlsched.workloads.placement import PRESET_PARAMS, PRESETS, generate

__all__ = ["FAMILY"]

FAMILY = register_family(
    Family(
        name="placement",
        sense="min",
        objective_name="per-iteration time alpha (s)",
        load=PlacementInstance.load,
        from_dict=PlacementInstance.from_dict,
        generate=generate,
        presets=tuple(PRESETS),
        preset_params=PRESET_PARAMS,
        evaluate=evaluate,
        objective=lambda evaluation: evaluation.iteration_time_s,
        schedule_to_json=placement_to_json,
        schedule_from_json=placement_from_json,
        smoke=("small", {}),
        size=lambda instance: sum(stage.replicas for stage in instance.stages),
        summary="Heavy-Edge vs exact GPU placement of one pipeline-parallel job (A-SRPT, Table II)",
    )
)


@register_method(
    "placement",
    "heavy_edge",
    "heuristic",
    "Heavy-Edge greedy graph cut (Sec. IV-B), seeded",
    interruptible=True,
)
def _heavy_edge(instance: PlacementInstance, params: NoParams, ctx: RunContext) -> Outcome:
    from ddlsched.heuristics.heavy_edge import heavy_edge

    started = time.perf_counter()
    placement = heavy_edge(instance, ctx.seed)
    mapping_s = time.perf_counter() - started
    return Outcome(placement, info={"mapping_s": mapping_s, "alpha_max_s": alpha_max(instance)})


@dataclass(frozen=True)
class GpuLevelParams:
    cross_check: bool = param(True, "re-solve a proven optimum with the other backend")


@dataclass(frozen=True)
class AggregatedParams(GpuLevelParams):
    symmetry_breaking: bool = param(True, "order servers of equal availability")
    cuts: bool = param(True, "add the valid inequalities (server patterns, splits)")
    patterns: bool = param(
        True,
        "prove with the server-pattern LP and the CP-SAT threshold search; "
        "give the ILP their bound and placement",
    )
    milp: bool = param(False, "solve the aggregated ILP even when the pattern proof closes the gap")


def _solve(instance: PlacementInstance, formulation, cross_check: bool, ctx: RunContext) -> Outcome:
    from ddlsched.solvers.formulation import solve_formulation

    limits = SolveLimits(abs_gap=1e-7, seed=ctx.seed)
    return solve_formulation(
        formulation, instance, ctx.backend, limits, cross_check, deadline=ctx.deadline
    )


@register_method(
    "placement",
    "exact",
    "exact",
    "aggregated formulation: server-pattern LP / CP-SAT threshold proof, else the one-hot ILP",
    params=AggregatedParams,
)
def _exact(instance: PlacementInstance, params: AggregatedParams, ctx: RunContext) -> Outcome:
    """Method ``exact`` (module docstring); ``info['proof']`` says what proved the answer.

    With ``patterns`` (default) the pattern proof
    (:func:`~ddlsched.models.placement_patterns.placement_proof`) runs first. When it
    closes the gap (``proof`` ``patterns``: the pattern search's bound, from
    the combinatorial bounds or the certified pattern LP, meets its placement;
    ``threshold``: CP-SAT proved every smaller
    term value infeasible) and neither ``cross_check`` nor ``milp`` is set,
    its placement is returned as optimal without building the ILP. Otherwise
    the aggregated ILP is solved (``proof`` ``milp``), starting from the
    pattern placement, with the proven bound as a row (``milp``: the ILP then
    only confirms it). When the cross-check follows a closed pattern proof,
    that row holds the pattern search's bound only, so that HiGHS (and SCIP,
    its cross-check) re-prove what CP-SAT proved, and
    ``info['pattern_proof']['agrees']`` compares the two answers: ``True``;
    ``None`` when the time limit left no room for the ILP or stopped it
    (the proof stands, ``optimal``); ``False`` when they disagree, and then
    the better evaluated placement is returned ``feasible``, without a bound.
    Without a closed proof, an ILP stopped by the time limit keeps the
    proof's bound and the best placement known (:func:`_keep_proof`).
    """
    from ddlsched.models.placement_bounds import time_scale
    from ddlsched.models.placement_patterns import placement_proof
    from ddlsched.solvers.result import Status

    proof = placement_proof(instance, ctx.deadline) if params.patterns else None
    report = None
    if proof is not None:
        scale = time_scale(instance)
        report = {
            "proof": proof.proof,
            "bound_s": proof.bound / scale,
            "pattern_bound_s": None if proof.pattern_bound is None else proof.pattern_bound / scale,
            "lp_solves": proof.lp_solves,
            "alpha_s": None if proof.value is None else proof.value / scale,
            "threshold_solves": proof.threshold_solves,
            "threshold_s": proof.threshold_s,
        }
        if proof.closed and not (params.cross_check or params.milp):
            return _proven(proof, scale, {"proof": proof.proof, "pattern_proof": report})
    if proof is not None and _no_time_for_the_ilp(ctx.deadline.remaining_s()):
        if proof.closed:  # the re-proof cannot run: the proof stands, unchecked
            report["agrees"] = None
            return _proven(proof, scale, {"proof": proof.proof, "pattern_proof": report})
        outcome = Outcome(
            status=Status.TIME_LIMIT_NO_SOLUTION,
            time_limit_hit=True,
            info={"stopped": "time limit reached after the pattern proof"},
        )
    else:
        from ddlsched.models.placement import PlacementFormulation  # imports Pyomo

        formulation = PlacementFormulation(
            "aggregated",
            symmetry_breaking=params.symmetry_breaking,
            cuts=params.cuts,
            patterns=params.patterns,
            # a closed proof cross-checked: the ILPs re-prove what CP-SAT proved
            threshold=not (proof is not None and proof.closed and params.cross_check),
        )
        outcome = _solve(instance, formulation, params.cross_check, ctx)
    outcome.info["proof"] = "milp" if outcome.status is Status.OPTIMAL else None
    if report is None:
        return outcome
    outcome.info["pattern_proof"] = report
    if proof.closed:
        return _compare_with_proof(instance, outcome, proof, scale, report)
    if outcome.status is not Status.OPTIMAL:
        outcome = _keep_proof(instance, outcome, proof, scale, ctx)
    return outcome


def _proven(proof, scale: float, info: dict) -> Outcome:
    """The closed pattern proof as the method's answer (``optimal``)."""
    from ddlsched.problems.placement import Placement
    from ddlsched.solvers.result import Claim, Status

    return Outcome(
        Placement(proof.counts),
        Status.OPTIMAL,
        bound=proof.bound / scale,
        claim=Claim(proof.value / scale, proven=True),
        info=info,
    )


def _compare_with_proof(
    instance: PlacementInstance, outcome: Outcome, proof, scale: float, report: dict
) -> Outcome:
    """The ILP ran after a closed pattern proof (cross-check or ``milp``): agreement
    when it proved the same alpha; the proof stands, unchecked (``agrees`` None), when
    the ILP stopped at the time limit without beating it; on a disagreement (either
    side wrong) the better evaluated placement is returned as ``feasible``, without
    a bound."""
    from dataclasses import replace

    from ddlsched.problems.placement import Placement
    from ddlsched.solvers.result import Claim, Status

    alpha = proof.value / scale
    ilp = (
        None if outcome.schedule is None else evaluate(instance, outcome.schedule).iteration_time_s
    )
    same = ilp is not None and abs(ilp - alpha) <= 1e-6 * max(1.0, abs(alpha))
    if outcome.status is Status.OPTIMAL and same:
        report["agrees"] = True
        return outcome
    if outcome.status is not Status.OPTIMAL and (ilp is None or ilp >= alpha or same):
        report["agrees"] = None
        info = {**outcome.info, "proof": proof.proof}
        return replace(_proven(proof, scale, info), time_limit_hit=outcome.time_limit_hit)
    report["agrees"] = False
    info = {**outcome.info, "proof": None}
    info["warning"] = (
        f"the pattern proof ({proof.proof}, alpha {alpha:.9g} s) and the ILP "
        f"({outcome.status}, alpha {ilp} s) disagree: returning the better placement unproven"
    )
    if ilp is not None and ilp <= alpha:
        return replace(outcome, status=Status.FEASIBLE, bound=None, info=info)
    return Outcome(
        Placement(proof.counts),
        Status.FEASIBLE,
        claim=Claim(alpha),
        info=info,
        time_limit_hit=outcome.time_limit_hit,
    )


def _no_time_for_the_ilp(remaining_s: float) -> bool:
    """Less than 0.2 s left (not enough to build and hand over even a small ILP), or
    less than importing Pyomo takes (~0.8 s cold, not interruptible)."""
    import sys

    return remaining_s < 0.2 or (remaining_s < 1.0 and "pyomo.environ" not in sys.modules)


def _keep_proof(instance: PlacementInstance, outcome: Outcome, proof, scale: float, ctx) -> Outcome:
    """An unfinished ILP (time limit) keeps what the pattern proof established: its
    bound where it is higher, and the best of the ILP's incumbent, the proof's
    placement and Heavy-Edge's (~1 ms) as the schedule (``info['incumbent_from']``)."""
    from dataclasses import replace

    from ddlsched.heuristics.heavy_edge import heavy_edge
    from ddlsched.problems.placement import Placement
    from ddlsched.solvers.result import Claim, Status

    bound = proof.bound / scale
    if outcome.bound is None or bound > outcome.bound:
        outcome = replace(outcome, bound=bound)
    if outcome.status not in (Status.FEASIBLE, Status.TIME_LIMIT_NO_SOLUTION):
        return outcome
    candidates = [] if outcome.schedule is None else [("milp", outcome.schedule)]
    if proof.counts is not None:
        candidates.append(("patterns", Placement(proof.counts)))
    candidates.append(("heavy_edge", heavy_edge(instance, ctx.seed)))
    name, best = min(candidates, key=lambda c: evaluate(instance, c[1]).iteration_time_s)
    outcome.info["incumbent_from"] = name
    if name == "milp":
        return outcome
    claim = Claim(proof.value / scale) if name == "patterns" else None
    return replace(outcome, schedule=best, status=Status.FEASIBLE, claim=claim)


@register_method(
    "placement",
    "exact_gpu_level",
    "exact",
    "GPU-level ILP with our one-hot count encoding (a strong stand-in for the paper's baseline)",
    params=GpuLevelParams,
)
def _exact_gpu_level(
    instance: PlacementInstance, params: GpuLevelParams, ctx: RunContext
) -> Outcome:
    from ddlsched.models.placement import PlacementFormulation

    return _solve(instance, PlacementFormulation("gpu_level"), params.cross_check, ctx)


@register_method(
    "placement",
    "exact_gpu_level_paper",
    "exact",
    "the paper's GPU-level baseline: replica x GPU binaries, no count encoding ([47]-style)",
    params=GpuLevelParams,
)
def _exact_gpu_level_paper(
    instance: PlacementInstance, params: GpuLevelParams, ctx: RunContext
) -> Outcome:
    from ddlsched.models.placement import PlacementFormulation

    return _solve(instance, PlacementFormulation("gpu_level_paper"), params.cross_check, ctx)
