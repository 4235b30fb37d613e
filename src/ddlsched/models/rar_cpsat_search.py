"""The ``rar`` CP-SAT search (ours; method ``cpsat``): one solve of the whole model, then windows.

Spec ``docs/families/rar.md``; the model, its lengths and why its bound is a
bound are :mod:`ddlsched.models.rar_cpsat`, the windows
:mod:`ddlsched.models.rar_cpsat_windows`, the plans (hint, GPU ids)
:mod:`ddlsched.models.rar_cpsat_plan`.

:func:`cpsat_search`: the hint (a schedule, ``improve``'s in the method) becomes a
valid plan (:func:`~ddlsched.models.rar_cpsat_plan.hint_plan`); CP-SAT solves the
whole model with it as a complete hint and ``C <= H`` (``H``: the hint plan's
makespan, else ``T``; ``target`` lowers it) within ``work`` units of its
deterministic time and ``workers`` interleaved workers (deterministic); then
``rounds`` windows (:func:`~ddlsched.models.rar_cpsat_windows.window_search`)
start from the best plan. The answer is the best plan's schedule (GPU ids by
colouring), whose evaluated makespan is at most the plan's; the bound is the
whole solve's, reported only where the model is a relaxation
(:func:`bound_is_valid`). Same inputs and seed, same answer, unless the wall
clock stops a solve (``time_limit_hit``).
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field
from typing import Any

from ddlsched.deadline import Deadline
from ddlsched.models.rar_cpsat import Lengths, add_hint, build_model, decode_plan, lengths
from ddlsched.models.rar_cpsat_plan import hint_plan, plan_to_schedule
from ddlsched.models.rar_cpsat_windows import WindowSettings, plan_score, window_search
from ddlsched.problems.rar import RarInstance
from ddlsched.problems.rar_schedule import RarSchedule
from ddlsched.solvers.cpsat import CpsatOptions, model_size, solve_cpsat
from ddlsched.solvers.limits import check_model_size
from ddlsched.solvers.result import Status

__all__ = ["CpsatSearch", "CpsatSettings", "bound_is_valid", "cpsat_search"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CpsatSettings:
    """What :func:`cpsat_search` does (module docstring)."""

    work: float = 10.0  # CP-SAT deterministic time of the whole solve
    workers: int = 8
    seed: int = 0
    split_cap: int | None = None  # None: auto
    objective: str = "lexicographic"
    target: int | None = None  # the model's horizon H (None: the hint's makespan, else T)
    rounds: int = 30  # windows after the whole solve
    window: int = 24  # jobs freed per window
    window_work: float = 1.0  # CP-SAT deterministic time per window


@dataclass
class CpsatSearch:
    """What :func:`cpsat_search` found (module docstring).

    ``makespan``: the model's makespan ``C`` of ``schedule`` (the evaluated one is
    at most this); ``bound``: CP-SAT's bound when it is a lower bound of the
    optimum (``None`` otherwise); ``model_bound``: CP-SAT's bound of the model,
    whatever it means; ``proven``: CP-SAT proved ``makespan`` optimal and
    ``bound`` is a bound, so the schedule is optimal.
    """

    status: Status
    schedule: RarSchedule | None
    makespan: int | None
    bound: int | None
    model_bound: int | None
    proven: bool
    time_limit_hit: bool
    model_size: tuple[int, int, int]
    runtime_s: float
    version: str
    info: dict[str, Any] = field(default_factory=dict)


def _makespan_bound(objective_bound: float, weight: int) -> int:
    """The makespan bound of an objective bound ``LB`` of ``weight * C + R``, ``0 <= R < weight``.

    ``weight = 1``: ``ceil(LB)``. Otherwise every point has ``weight * C > LB - weight``, so
    ``C >= floor(LB / weight)`` (``LB`` integral, as CP-SAT's bounds of integer objectives are).
    """
    if weight == 1:
        return math.ceil(objective_bound - 1e-6)
    return math.floor(objective_bound + 1e-6) // weight


def bound_is_valid(data: Lengths) -> bool:
    """Whether the model is a relaxation of every schedule (module docstring's claim)."""
    return data.cap is None and data.contention_free


def cpsat_search(
    instance: RarInstance,
    settings: CpsatSettings,
    hint: RarSchedule | None = None,
    deadline: Deadline | None = None,
) -> CpsatSearch:
    """Minimise the makespan over the model (module docstring), hinted with ``hint``."""
    data = lengths(instance, settings.split_cap)
    check_model_size(
        "rar cpsat",
        len(instance.jobs) * (4 * instance.num_servers + 8),
        "use the method improve",
    )
    info: dict[str, Any] = {
        "contention_level": data.level,
        "split_cap": data.cap,
        "work": settings.work,
        "workers": settings.workers,
        "rounds": settings.rounds,
    }
    horizon = (
        instance.horizon if settings.target is None else min(settings.target, instance.horizon)
    )
    plan = None
    if hint is not None:
        plan, how = hint_plan(instance, hint, data.of, data.cap)
        info.update(hint=how, hint_makespan=plan.makespan)
        if plan.makespan <= horizon:
            horizon = plan.makespan if settings.target is None else horizon
        else:
            plan = None
    model, variables = build_model(instance, data, horizon, settings.objective)
    if plan is not None:
        add_hint(model, variables, plan, data)
    options = CpsatOptions(
        seed=settings.seed,
        workers=settings.workers,
        interleave_search=settings.workers > 1,
        deterministic_time_s=settings.work,
    )
    run = solve_cpsat(model, deadline, options)
    valid = bound_is_valid(data)
    info["bound_valid"] = valid
    if run.solver is not None:
        info.update(
            deterministic_time=float(run.solver.deterministic_time),
            branches=int(run.solver.num_branches),
            conflicts=int(run.solver.num_conflicts),
            cpsat_status=run.message,
        )
    schedule = makespan = model_bound = None
    # the deterministic budget ends a search as "FEASIBLE" too: only the wall clock is a cut
    wall_cut = run.time_limit_hit and deadline is not None and deadline.expired()
    if run.has_solution:
        best = decode_plan(run, variables, instance)
        info["whole_makespan"] = best.makespan
        if run.bound is not None:
            model_bound = _makespan_bound(run.bound, variables.weight)
        if settings.rounds and not wall_cut and run.status is not Status.OPTIMAL:
            windows = WindowSettings(
                settings.rounds, settings.window, settings.window_work, settings.seed
            )
            found, window_info, wall_cut = window_search(instance, data, best, windows, deadline)
            info.update(window_info)
            if plan_score(instance, found) < plan_score(instance, best):
                best = found
        schedule = plan_to_schedule(instance, best)
        makespan = best.makespan
    proven = run.status is Status.OPTIMAL and valid
    log.info("rar cpsat: %s makespan %s bound %s", run.message, makespan, model_bound)
    return CpsatSearch(
        status=run.status,
        schedule=schedule,
        makespan=makespan,
        bound=model_bound if valid else None,
        model_bound=model_bound,
        proven=proven,
        time_limit_hit=wall_cut,
        model_size=model_size(model),
        runtime_s=run.runtime_s,
        version=run.version,
        info=info,
    )
