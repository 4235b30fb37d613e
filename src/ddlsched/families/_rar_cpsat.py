"""The rar ``cpsat`` method's search and schedule check (:mod:`ddlsched.families.rar` registers
the method; these helpers live here to keep that module a readable map).

:func:`cpsat_method_search` runs the search the ``placements`` parameter names: every
placement (:mod:`ddlsched.models.rar_cpsat_search`) or whole rings at searched target
makespans (:mod:`ddlsched.models.rar_cpsat_whole`); :func:`makespan_within_horizon` is how the
method compares its hint with the search's schedule.
"""

from __future__ import annotations

from ddlsched.deadline import import_within
from ddlsched.families._rar_params import CpsatParams
from ddlsched.problems.rar import RarInstance
from ddlsched.problems.rar_schedule import evaluate
from ddlsched.registry import RunContext

__all__ = ["cpsat_method_search", "makespan_within_horizon"]


def cpsat_method_search(instance: RarInstance, params: CpsatParams, ctx: RunContext, hint):
    """``cpsat``'s CP-SAT search: every placement, or whole rings at searched targets."""
    if params.placements == "whole":
        import_within("ddlsched.models.rar_cpsat_whole", ctx.deadline, "rar cpsat")
        from ddlsched.models.rar_cpsat_whole import WholeSettings, whole_search

        whole = WholeSettings(
            work=params.target_work,
            workers=params.workers,
            seed=ctx.seed,
            max_targets=params.max_targets,
            first_work=params.first_work,
            search=params.target_search,
        )
        return whole_search(instance, whole, hint, ctx.deadline)
    import_within("ddlsched.models.rar_cpsat_search", ctx.deadline, "rar cpsat")
    from ddlsched.models.rar_cpsat_search import CpsatSettings, cpsat_search

    settings = CpsatSettings(
        work=params.work,
        workers=params.workers,
        seed=ctx.seed,
        split_cap=None if params.split_cap == "auto" else int(params.split_cap),
        objective=params.objective,
        rounds=params.rounds,
        window=params.window,
        window_work=params.window_work,
    )
    return cpsat_search(instance, settings, hint, ctx.deadline)


def makespan_within_horizon(instance: RarInstance, schedule) -> int | None:
    """The evaluated makespan of ``schedule``, ``None`` for no schedule or an overrun."""
    from ddlsched.errors import InfeasibleScheduleError

    if schedule is None:
        return None
    try:
        return evaluate(instance, schedule).makespan
    except InfeasibleScheduleError as exc:
        if exc.details.get("failure") == "horizon_overrun":
            return None
        raise
