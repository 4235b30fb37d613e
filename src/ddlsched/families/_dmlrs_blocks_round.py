"""The dmlrs ``blocks_round`` method's steps (:mod:`ddlsched.families.dmlrs` registers the
method; this helper lives here to keep that module a readable map).

:func:`run_blocks_round`: the relaxation's incumbent, rounded to a schedule
(:mod:`ddlsched.models.dmlrs_blocks_round`), is the one start of ``improve``'s window search
(:func:`ddlsched.heuristics.dmlrs_improve.improve`, which takes its starts by name from a
runner: the schedule is handed in under the name ``fifo`` and renamed ``relaxation`` in
``info``); without an incumbent, ``improve`` runs from its usual ``starts``. The answer is
that schedule and the relaxation's dual bound (:attr:`RelaxedPlan.bound`), as ``colgen``
returns its restricted master's schedule and its bound; when the limit stops every one of
those starts, the bound alone (``bound_only``). ``info['stopped']`` names every part the
limit cut (:func:`~ddlsched.solvers.result.mark_stopped`).
"""

from __future__ import annotations

from typing import Any

from ddlsched.errors import TimeLimitReached
from ddlsched.families._dmlrs_params import BlocksRoundParams
from ddlsched.problems.dmlrs import DmlrsInstance, evaluate
from ddlsched.registry import RunContext
from ddlsched.solvers.result import Outcome, Status, mark_stopped

__all__ = ["run_blocks_round"]

#: The start name the relaxation's schedule is handed to ``improve`` under.
_SLOT = "fifo"


def _settings(params: BlocksRoundParams, seed: int | None, starts: tuple[str, ...]) -> Any:
    """``improve``'s settings from the method's parameters (``mip_windows`` included)."""
    from ddlsched.heuristics.dmlrs_eject import EjectSettings
    from ddlsched.heuristics.dmlrs_improve import ImproveSettings

    names = ("moves", "completions", "windows", "evict", "place")
    eject = EjectSettings(*(getattr(params, f"eject_{name}") for name in names))
    return ImproveSettings(
        starts=starts,
        window=params.window,
        patience=params.patience,
        max_windows=params.max_windows,
        seed=seed or 0,
        mip_windows=params.mip_windows,
        mip_window=params.mip_window,
        eject=eject,
        insert_plan=params.insert_plan,
        lean_price=params.lean_price,
    )


def _renamed(value: Any) -> Any:
    """``info`` with the start slot's name replaced by ``relaxation``."""
    if isinstance(value, dict):
        return {("relaxation" if k == _SLOT else k): _renamed(v) for k, v in value.items()}
    return "relaxation" if value == _SLOT else value


def run_blocks_round(
    instance: DmlrsInstance,
    params: BlocksRoundParams,
    ctx: RunContext,
    run_start: Any,
    before_pyomo: Any,
) -> Outcome:
    """The method (module docstring): ``run_start(name, deadline)`` runs one of ``improve``'s
    usual starts; ``before_pyomo()`` refuses an import of Pyomo the time left cannot hold
    (the MIP windows' repair needs it)."""
    from ddlsched.heuristics.dmlrs_improve import improve, parse_starts
    from ddlsched.models.dmlrs_blocks_round import relaxation_point, round_point

    repair = None
    if params.mip_windows > 0:
        before_pyomo()
        from ddlsched.models.dmlrs_mip_repair import MipRepair

        repair = MipRepair(instance, ctx.backend, params.mip_nodes, ctx.seed or 0)

    relax = relaxation_point(instance, params.nodes, ctx.deadline.sub(params.relax_share))
    info: dict[str, Any] = {"relaxation": relax.info}
    cut = []
    if relax.info["status"] == "time limit":
        cut.append("the relaxation at its share of the time limit (its last incumbent)")
    try:
        if relax.jobs:
            start, packing = round_point(
                instance, relax, params.pack_nodes, ctx.deadline.sub(0.2), params.top_up
            )
            info["packing"] = packing
            info["relaxation_schedule_utility"] = evaluate(instance, start).total_utility
            if "time limit" in packing["slot_milps"]:
                cut.append("slot packings at their share of the time limit (their incumbents)")
            if packing.get("top_up_stopped"):
                cut.append("the top-up at the packing's share of the time limit (the rest dropped)")
            settings = _settings(params, ctx.seed, (_SLOT,))
            schedule, found, stopped = improve(
                instance, settings, lambda name, dl: start, ctx.deadline, repair
            )
            info.update(_renamed(found), start="relaxation")
        else:
            why = f"improve's starts: the relaxation {relax.info['status']}, no incumbent"
            settings = _settings(params, ctx.seed, parse_starts(params.starts))
            schedule, found, stopped = improve(instance, settings, run_start, ctx.deadline, repair)
            info.update(found, start=why)
    except TimeLimitReached as exc:
        if relax.bound is None:
            raise
        bound_only = Outcome(None, Status.BOUND_ONLY, bound=relax.bound, info=info)
        return mark_stopped(bound_only, *cut, f"{exc} (the relaxation's bound kept)")
    outcome = Outcome(
        schedule, Status.FEASIBLE, bound=relax.bound, info=info, time_limit_hit=stopped
    )
    return mark_stopped(outcome, *cut)
