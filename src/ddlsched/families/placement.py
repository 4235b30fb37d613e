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

Methods (all minimise the per-iteration time ``alpha`` of Eq. 7, seconds,
as recomputed by the evaluator):

* ``heavy_edge`` (heuristic): Heavy-Edge seeded by ``--seed``;
  ``info['mapping_s']`` is the mapping time alone (the paper's placement
  computation time, PCT), ``info['alpha_max_s']`` the all-apart value.
* ``exact``: the aggregated one-hot ILP; parameters ``symmetry_breaking``,
  ``cuts`` (valid inequalities) and ``patterns`` (the server-pattern LP
  bound and the pattern MIP start of
  :mod:`ddlsched.models.placement_patterns`), all default true (set them
  false for an ablation).
* ``exact_gpu_level``: a GPU-level ILP (replica x GPU binaries) that keeps
  the aggregated model's one-hot count encoding: our strong stand-in for
  the paper's baseline, not the paper's formulation.
* ``exact_gpu_level_paper``: the paper's GPU-level baseline as we read its
  reference [47] (Archer et al.'s pipeline-partitioning ILP): replica x GPU
  binaries only, no count encoding (``build_gpu_level_paper``).

All exact methods cross-check a proven optimum with the other backend by
default (``cross_check``; :func:`~ddlsched.solvers.formulation.solve_formulation`),
because HiGHS 1.14 has returned wrong placement optima on rare instances.
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
        True, "add the server-pattern LP bound and start HiGHS from a pattern placement"
    )


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
    "aggregated one-hot ILP over replica counts per (stage, server)",
    params=AggregatedParams,
)
def _exact(instance: PlacementInstance, params: AggregatedParams, ctx: RunContext) -> Outcome:
    from ddlsched.models.placement import PlacementFormulation

    formulation = PlacementFormulation(
        "aggregated",
        symmetry_breaking=params.symmetry_breaking,
        cuts=params.cuts,
        patterns=params.patterns,
    )
    return _solve(instance, formulation, params.cross_check, ctx)


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
