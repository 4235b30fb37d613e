"""Family ``placement``: Heavy-Edge vs the exact placement ILPs (A-SRPT paper, Table II).

Paper: A-SRPT (Luo, Liu, Lee, Shroff), Sections III-A, III-B, IV-B and Table II; spec
``docs/families/placement.md``.

Modules of the family:

* problem: :mod:`ddlsched.problems.placement` (instance, Eqs. 4-7, the
  evaluator :func:`~ddlsched.problems.placement.evaluate`, ``alpha_max``);
* workloads: :mod:`ddlsched.workloads.placement` (presets ``small``,
  ``table2``) and :mod:`ddlsched.workloads.profiles` (DNN profiles, stage
  planner);
* heuristics: :mod:`ddlsched.heuristics.heavy_edge` (Heavy-Edge, ``alpha~_min``);
* models: :mod:`ddlsched.models.placement_exact` (the exact strategies),
  :mod:`ddlsched.models.placement` (the aggregated ILP, the decoder,
  :class:`~ddlsched.models.placement.PlacementFormulation`),
  :mod:`ddlsched.models.placement_gpu_level` (the two GPU-level ILPs),
  :mod:`ddlsched.models.placement_bounds` (valid inequalities) and
  :mod:`ddlsched.models.placement_pattern_proof` (the server-pattern and
  threshold proof);
* solvers: :mod:`ddlsched.solvers.placement_pattern_cover` (the pattern-cover
  LPs and integer solves in highspy) and
  :mod:`ddlsched.solvers.placement_threshold` (CP-SAT threshold search).

Methods (all minimise the per-iteration time ``alpha`` of Eq. 7, seconds,
as recomputed by the evaluator):

* ``heavy_edge`` (heuristic): Heavy-Edge seeded by ``--seed``;
  ``info['mapping_s']`` is the mapping time alone (the paper's placement
  computation time, PCT), ``info['alpha_max_s']`` the all-apart value.
* ``exact`` (:mod:`ddlsched.models.placement_exact`): the aggregated
  formulation (counts per stage and server).
  With ``patterns`` (default) it first proves what it can without the ILP:
  the server-pattern bounds and placement of
  :mod:`ddlsched.models.placement_pattern_proof`, then, where they leave a gap,
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
    """Parameters of ``exact_gpu_level`` and ``exact_gpu_level_paper`` (the GPU-level ILPs)."""

    cross_check: bool = param(True, "re-solve a proven optimum with the other backend")


@dataclass(frozen=True)
class AggregatedParams(GpuLevelParams):
    """Parameters of ``exact`` (the aggregated formulation;
    :mod:`ddlsched.models.placement_exact`)."""

    symmetry_breaking: bool = param(True, "order servers of equal availability")
    cuts: bool = param(True, "add the valid inequalities (server patterns, splits)")
    patterns: bool = param(
        True,
        "prove with the server-pattern LP and the CP-SAT threshold search; "
        "give the ILP their bound and placement",
    )
    milp: bool = param(False, "solve the aggregated ILP even when the pattern proof closes the gap")


def _solve(instance: PlacementInstance, formulation, cross_check: bool, ctx: RunContext) -> Outcome:
    from ddlsched.models.placement_exact import solve_ilp

    return solve_ilp(
        instance,
        formulation,
        cross_check=cross_check,
        backend=ctx.backend,
        seed=ctx.seed,
        deadline=ctx.deadline,
    )


@register_method(
    "placement",
    "exact",
    "exact",
    "aggregated formulation: server-pattern LP / CP-SAT threshold proof, else the one-hot ILP",
    params=AggregatedParams,
)
def _exact(instance: PlacementInstance, params: AggregatedParams, ctx: RunContext) -> Outcome:
    """Method ``exact`` (:func:`ddlsched.models.placement_exact.exact`)."""
    from ddlsched.models.placement_exact import exact

    return exact(
        instance,
        backend=ctx.backend,
        seed=ctx.seed,
        deadline=ctx.deadline,
        symmetry_breaking=params.symmetry_breaking,
        cuts=params.cuts,
        patterns=params.patterns,
        milp=params.milp,
        cross_check=params.cross_check,
    )


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
