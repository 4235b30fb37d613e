"""Family ``dmlrs_slot``: the rounding study, one PD-ORS Problem (23) per instance.

Paper: Yu et al., IEEE TNSE 2022 (reading notes of the paper), Algorithm 4's
external case: Problem (23), the LP relaxation, ``G_delta`` scaling and the
randomized rounding of Eqs. 27-28; spec ``docs/families/dmlrs_slot.md``.
Minimisation of the allocation's cost ``sum_h pw[h] w_h + ps[h] s_h``.

Modules of the family:

* problem: :mod:`ddlsched.problems.dmlrs_slot` (instance, allocation,
  evaluator, JSON);
* workloads: :mod:`ddlsched.workloads.dmlrs_slot` (``synthetic``; files
  dumped by ``pd_ors --param dump_slot_problems=DIR``);
* heuristics: :mod:`ddlsched.heuristics.dmlrs_slot` (slot data, internal
  case, OASiS's slot subroutine) and :mod:`ddlsched.heuristics.dmlrs_rounding`
  (``G_delta``, shrunk LP, rounding, repair);
* solvers: :mod:`ddlsched.solvers.dmlrs_slot_lp` (the LP in highspy, also
  PD-ORS's per-quantum LP);
* models: :mod:`ddlsched.models.dmlrs_slot` (the ILP in Pyomo and ``ilp``'s
  strategy).

These modules are also Algorithm 4 inside PD-ORS (family ``dmlrs``,
:mod:`ddlsched.families.dmlrs`); the price function that
:func:`generate` injects is :mod:`ddlsched.heuristics.dmlrs_prices` of that
family.

Methods:

* ``lp`` (bound): the LP relaxation's optimum, a lower bound on every
  integer allocation;
* ``ilp`` (exact): the ILP (Pyomo + HiGHS; ``--param cross_check=true``
  re-proves it with SCIP); ``infeasible`` when ``D > F`` or nothing fits;
* ``rounding`` (heuristic, seeded; ``delta``, ``S``, ``scale``, ``rounding``):
  Algorithm 4's external case with PD-ORS's draw rule (``S`` draws, up to
  ``10 S`` while none is feasible). ``rounding = shrunk`` (default, the
  revised spec): the shrunk LP's optimum (the full LP's if the shrunk one is
  infeasible) scaled by ``G_delta``, rounded, each draw repaired;
  ``literal``: the full LP's optimum scaled and rounded, no repair.
  ``info`` records ``G_delta``, ``rounded_lp``, the draws,
  ``covering_success_share`` (unrepaired draws meeting (26)), the share of
  unrepaired draws breaking each packing row (``capacity_break_share``
  (24), ``worker_cap_break_share`` (25), ``ps_break_share``), the draws and
  shares feasible before and after repair (``feasible_draws_unrepaired``,
  ``feasible_draws``, ``feasible_share_unrepaired``, ``feasible_share``) and
  ``repairs`` (the draws each repair step changed); a call with no feasible
  draw has status ``no_solution`` (a result, counted in the table's ``no
  solution`` column), its statistics kept in ``info``;
* ``internal`` (heuristic): Algorithm 4's internal case as revised (``D_int``
  workers and ``s = ceil(D_int / gamma)`` PSs on the cheapest machine where
  they fit); it needs an instance with ``demand_internal`` (the whole
  per-slot problem: ``synthetic --set internal=true``), else it is an
  error. On such instances ``ilp`` is exact for the whole problem (its model
  holds the single-machine option) and ``lp`` is the smaller of the LP
  relaxation of (23) and the internal optimum (enumerated: ``D_int``
  workers and ``ceil(D_int / gamma)`` PSs on the cheapest machine that holds
  them), a valid lower bound.

At the time limit: ``lp``, ``rounding`` and ``internal`` are all or
nothing (``time_limit_no_solution``: an LP cut short bounds nothing);
``ilp`` returns HiGHS's incumbent and bound (``feasible``,
``time_limit_hit``) or ``time_limit_no_solution``. Numeric ranges and an
empty job list: the instance is one job's slot problem, so there is no job
list; see :mod:`ddlsched.problems.dmlrs_slot` for the ranges.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ddlsched.errors import DdlschedError
from ddlsched.heuristics.dmlrs_rounding import MAX_DRAWS, draw_bytes
from ddlsched.memory import require_memory
from ddlsched.params import NoParams, param
from ddlsched.problems.dmlrs_slot import (
    SlotEvaluation,
    SlotInstance,
    evaluate,
    schedule_from_json,
    schedule_to_json,
)
from ddlsched.registry import Family, RunContext, register_family, register_method
from ddlsched.solvers.result import Outcome, Status
from ddlsched.workloads.dmlrs_slot import PRESET_PARAMS, PRESETS
from ddlsched.workloads.dmlrs_slot import generate as _generate

__all__ = ["FAMILY", "RoundingParams", "generate"]


def _prices_of(instance: Any) -> Any:
    from ddlsched.heuristics.dmlrs_prices import price_function

    return price_function(instance).price


def generate(preset: str, seed: int = 0, **params: Any) -> SlotInstance:
    """A preset instance; the price function (a heuristic) is injected here."""
    return _generate(preset, seed, prices_of=_prices_of, **params)


def _summary(evaluation: SlotEvaluation) -> dict[str, Any]:
    return evaluation.summary()


FAMILY = register_family(
    Family(
        name="dmlrs_slot",
        sense="min",
        objective_name="allocation cost sum_h pw w + ps s",
        load=SlotInstance.load,
        from_dict=SlotInstance.from_dict,
        generate=generate,
        presets=PRESETS,
        preset_params=PRESET_PARAMS,
        evaluate=evaluate,
        objective=lambda evaluation: evaluation.cost,
        evaluation_summary=_summary,
        schedule_to_json=schedule_to_json,
        schedule_from_json=schedule_from_json,
        # a lightly loaded instance on which the rounding has a feasible draw (most have none)
        smoke=(
            "synthetic",
            {
                "jobs": 11,
                "machines": 8,
                "slots": 5,
                "load": 0.0,
                "demand_share": 0.1,
                "internal": True,
            },
        ),
        size=lambda instance: instance.size,  # machines
        summary="PD-ORS's per-slot Problem (23): LP, ILP, G_delta rounding (rounding study)",
    )
)


def _lp_solution(instance: SlotInstance, ctx: RunContext) -> Any:
    from ddlsched.solvers.dmlrs_slot_lp import HighsSlotSolvers

    lp = HighsSlotSolvers().lp(
        instance.pw, instance.pps, instance.alpha, instance.beta, instance.cap,
        instance.gamma, instance.global_batch,
    )  # fmt: skip
    return lp.solve(instance.demand, time_limit_s=ctx.deadline.remaining_s())


@register_method("dmlrs_slot", "lp", "bound", "LP relaxation of Problem (23) with its PS row")
def _lp(instance: SlotInstance, params: NoParams, ctx: RunContext) -> Outcome:
    solution = _lp_solution(instance, ctx)
    bounds = [] if solution is None else [float(solution.objective)]
    info: dict[str, Any] = {"lp_external": bounds[0] if bounds else None}
    if instance.demand_internal is not None:
        internal = _internal_optimum(instance)
        info["internal_optimum"] = internal
        if internal is not None:
            bounds.append(internal)
    if not bounds:
        return Outcome(None, Status.INFEASIBLE, info=info)
    return Outcome(None, Status.BOUND_ONLY, bound=min(bounds), info=info)


def _internal_optimum(instance: SlotInstance) -> float | None:
    """The cheapest single-machine allocation at ``b_int``: ``D_int`` workers and
    ``ceil(D_int / gamma)`` PSs (more of either only costs), over every machine."""
    import numpy as np

    w = min(instance.demand_internal or 0, instance.demand)
    if w > instance.global_batch:
        return None
    s = -(-w // instance.gamma)
    load = w * instance.alpha + s * instance.beta
    fits = np.all(load <= instance.cap + 1e-9, axis=1)
    if not fits.any():
        return None
    return float((w * instance.pw + s * instance.pps)[fits].min())


@dataclass(frozen=True)
class IlpParams:
    """Parameters of the exact ILP."""

    cross_check: bool = param(False, "re-solve a proven optimum with SCIP")


@register_method(
    "dmlrs_slot", "ilp", "exact", "ILP of Problem (23) (HiGHS; SCIP cross-check)", params=IlpParams
)
def _ilp(instance: SlotInstance, params: IlpParams, ctx: RunContext) -> Outcome:
    from ddlsched.models.dmlrs_slot import solve_ilp

    return solve_ilp(instance, ctx.backend, ctx.seed, params.cross_check, ctx.deadline)


@dataclass(frozen=True)
class RoundingParams:
    """Parameters of the randomized rounding (Algorithm 4, Eqs. 27-28)."""

    delta: float = param(
        0.1, "covering failure probability, in (0, 1]", minimum=0.0, maximum=1.0,
        exclusive_minimum=True,
    )  # fmt: skip
    S: int = param(10, "draws (up to 10 S while none is feasible)", minimum=1, maximum=MAX_DRAWS)
    scale: str = param(
        "chernoff", "G_delta scaling (chernoff) or none (G = 1)", choices=("chernoff", "none")
    )
    rounding: str = param(
        "shrunk",
        "round the shrunk LP and repair each draw (shrunk, the revised spec) or round the full "
        "LP without repair (literal, the first spec; ablation)",
        choices=("shrunk", "literal"),
    )


@register_method(
    "dmlrs_slot",
    "rounding",
    "heuristic",
    "LP optimum scaled by G_delta, rounded with PD-ORS's draw rule; seeded",
    params=RoundingParams,
)
def _rounding(instance: SlotInstance, params: RoundingParams, ctx: RunContext) -> Outcome:
    from ddlsched.heuristics.dmlrs_rounding import round_external
    from ddlsched.heuristics.dmlrs_slot import SlotData
    from ddlsched.rng import make_rng
    from ddlsched.solvers.dmlrs_slot_lp import HighsSlotSolvers

    require_memory(
        f"the rounding's draws (S = {params.S}, {instance.num_machines} machines)",
        draw_bytes(params.S, instance.num_machines, len(instance.resources)),
        "a smaller S",
    )
    session = HighsSlotSolvers().lp(
        instance.pw, instance.pps, instance.alpha, instance.beta, instance.cap,
        instance.gamma, instance.global_batch,
    )  # fmt: skip
    solution = session.solve(instance.demand, time_limit_s=ctx.deadline.remaining_s())
    if solution is None:
        return Outcome(None, Status.INFEASIBLE, info={"lp": "infeasible"})
    choice, stats = round_external(
        SlotData.from_instance(instance), session, solution, instance.demand,
        make_rng(ctx.seed), delta=params.delta, draws=params.S, scale=params.scale,
        rounding=params.rounding, time_limit_s=ctx.deadline.remaining_s(),
    )  # fmt: skip
    info = {
        "delta": params.delta,
        "S": params.S,
        "scale": params.scale,
        "rounding": params.rounding,
        "rounded_lp": stats.lp,
        "G_delta": stats.g_delta,
        "draws": stats.draws,
        "covering_success_share": stats.covering_share,
        "capacity_break_share": stats.capacity_break_share,
        "worker_cap_break_share": stats.worker_cap_break_share,
        "ps_break_share": stats.ps_break_share,
        "feasible_draws_unrepaired": stats.feasible_draws_unrepaired,
        "feasible_draws": stats.feasible_draws,
        "feasible_share_unrepaired": stats.feasible_draws_unrepaired / stats.draws,
        "feasible_share": stats.feasible_draws / stats.draws,
        "repairs": dict(stats.repairs),
        "lp_objective": float(solution.objective),
    }
    if choice is None:  # a result, not a failure: the rounding found no allocation
        info["reason"] = f"no feasible draw in {stats.draws} (the rounding found no allocation)"
        return Outcome(None, Status.NO_SOLUTION, info=info)
    return Outcome(choice.to_allocation(instance.num_machines), info=info)


@register_method(
    "dmlrs_slot",
    "internal",
    "heuristic",
    "Algorithm 4's internal case: every worker and PS on the cheapest feasible machine",
)
def _internal(instance: SlotInstance, params: NoParams, ctx: RunContext) -> Outcome:
    from ddlsched.heuristics.dmlrs_slot import InternalCase, SlotData

    demand = instance.demand_internal
    if demand is None:
        raise DdlschedError(
            "internal: the instance has no demand_internal (Problem (23) alone); generate "
            "one with --set internal=true"
        )
    choice = InternalCase(SlotData.from_instance(instance)).solve(demand)
    if choice is None:
        return Outcome(None, Status.INFEASIBLE, info={"internal": "no machine fits"})
    return Outcome(choice.to_allocation(instance.num_machines), info={"demand": demand})
