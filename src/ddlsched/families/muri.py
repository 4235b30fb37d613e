"""Family ``muri``: multi-resource interleaving, the grouping problem (Muri, SIGCOMM 2022).

Paper: Muri (Zhao et al., SIGCOMM 2022), Sections 4.1-4.2 and Algorithm 1; spec
``docs/families/muri.md``.

Modules of the family:

* problem: :mod:`ddlsched.problems.muri` (instance, Eqs. 1-4 interleaving
  model, grouping, the evaluator :func:`~ddlsched.problems.muri.evaluate`);
* workloads: :mod:`ddlsched.workloads.muri` (presets);
* heuristics: :mod:`ddlsched.heuristics.muri` (Blossom pairs, Algorithm 1);
* models: :mod:`ddlsched.models.muri` (the set-packing ILP,
  :class:`~ddlsched.models.muri.GroupingFormulation`).

The trace-driven simulation of Muri and its baselines is the family
``muri_sim`` (:mod:`ddlsched.families.muri_sim`).

Methods (``ddlsched solve muri FILE --method M``):

* ``blossom``: maximum-weight matching into pairs per GPU bucket (exact for
  ``k = 2``);
* ``multiround``: Algorithm 1 (parameter ``rounds``);
* ``exact``: the set-packing ILP, parameters ``objective`` (``efficiency`` |
  ``period``), ``prune`` and ``cross_check``.

The family objective is the sum of ``gamma`` over groups of >= 2 jobs,
maximised, recomputed by :func:`ddlsched.problems.muri.evaluate` for every
method; ``info`` carries the summed period and the group counts too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ddlsched.params import NoParams, param
from ddlsched.problems.muri import (
    OBJECTIVES,
    MuriGroupingEvaluation,
    MuriGroupingInstance,
    evaluate,
    grouping_from_json,
    grouping_to_json,
)
from ddlsched.registry import Family, RunContext, register_family, register_method
from ddlsched.solvers.limits import SolveLimits
from ddlsched.solvers.result import Outcome
from ddlsched.workloads.muri import PRESET_PARAMS, PRESETS, generate

__all__ = ["FAMILY"]


def _summary(evaluation: MuriGroupingEvaluation) -> dict[str, Any]:
    return {
        "total_period": evaluation.total_period,
        "groups": sum(1 for g in evaluation.groups if len(g.members) >= 2),
        "grouped_jobs": evaluation.grouped_jobs,
    }


FAMILY = register_family(
    Family(
        name="muri",
        sense="max",
        objective_name="total efficiency (sum of gamma over groups of >= 2 jobs)",
        load=MuriGroupingInstance.load,
        from_dict=MuriGroupingInstance.from_dict,
        generate=generate,
        presets=tuple(PRESETS),
        preset_params=PRESET_PARAMS,
        evaluate=evaluate,
        objective=lambda evaluation: evaluation.total_efficiency,
        evaluation_summary=_summary,
        schedule_to_json=grouping_to_json,
        schedule_from_json=grouping_from_json,
        smoke=("k3", {"num_jobs": 8}),
        size=lambda instance: len(instance.jobs),
        summary="Muri grouping: interleave jobs' multi-resource phases (SIGCOMM 2022, Alg. 1)",
    )
)


@register_method(
    "muri",
    "blossom",
    "heuristic",
    "max-weight matching into pairs (Sec. 4.1)",
    interruptible=True,  # networkx's matching: pure Python, O(n^3)
)
def _blossom(instance: MuriGroupingInstance, params: NoParams, ctx: RunContext) -> Outcome:
    from ddlsched.heuristics.muri import blossom_grouping

    return Outcome(blossom_grouping(instance))


@dataclass(frozen=True)
class MultiroundParams:
    """Parameters of ``multiround`` (Algorithm 1; :mod:`ddlsched.heuristics.muri`)."""

    rounds: int | None = param(None, "matching rounds (None: ceil(log2 k))", minimum=0, maximum=64)


@register_method(
    "muri",
    "multiround",
    "heuristic",
    "multi-round Blossom grouping (Algorithm 1)",
    params=MultiroundParams,
    interruptible=True,
)
def _multiround(
    instance: MuriGroupingInstance, params: MultiroundParams, ctx: RunContext
) -> Outcome:
    from ddlsched.heuristics.muri import multiround_grouping

    return Outcome(multiround_grouping(instance, params.rounds))


@dataclass(frozen=True)
class ExactParams:
    """Parameters of ``exact`` (the set-packing ILP; :mod:`ddlsched.models.muri`)."""

    objective: str = param(
        "efficiency", "what the ILP optimises (period: min summed period)", choices=OBJECTIVES
    )
    prune: bool = param(True, "drop candidate groups no better than their best split")
    cross_check: bool = param(False, "re-solve a proven optimum with the other backend")


@register_method(
    "muri",
    "exact",
    "exact",
    "set-packing ILP over all groups of <= k jobs (HiGHS / SCIP)",
    params=ExactParams,
)
def _exact(instance: MuriGroupingInstance, params: ExactParams, ctx: RunContext) -> Outcome:
    from ddlsched.models.muri import exact_grouping

    return exact_grouping(
        instance,
        objective=params.objective,
        backend=ctx.backend,
        limits=SolveLimits(seed=ctx.seed),
        prune=params.prune,
        cross_check=params.cross_check,
        deadline=ctx.deadline,
    )
