"""``rar.lp_rounding``: the LP relaxation of the time-indexed ILP, and randomized rounding.

Paper: the reformulation of RAR-DDLS (MobiHoc 2022, Eqs. 10-13; spec
``rar.md``, "Exact and bounding formulations", item 2) as a choice among
columns (job ``j``, placement pattern ``k``, start slot ``t``), the model of
:func:`ddlsched.models.rar_timeindexed.timeindexed`, with ``x[j,k,t]`` relaxed to
``[0, 1]``; rounding in the style of alpha-point scheduling (Hall, Schulz,
Shmoys, Wein 1997; Chekuri, Motwani, Natarajan, Stein 2001).

Bound. Let ``v`` be the LP optimum of the *bound model* (contention-free
durations; with slot width ``w > 1`` each column counts only the coarse
slots it covers entirely, ``floor((d + 1) / w) - 1`` of them; model horizon
``H``: ``T``, or the makespan ``U`` of an LS/FF schedule, ``T* <= U``).
Every schedule of makespan ``e <= H`` maps to an integer solution of that
model (each job at coarse start ``ceil(a / w)`` of its fine start ``a``) of
value ``C <= e``: contention only lengthens jobs, the aggregated capacity
rows are implied by the fine ones, a job counted in fewer slots than it
covers only loosens them (:func:`ddlsched.models.rar_timegrid._coarse_duration_lb`),
and each column's makespan coefficient is the earliest fine end of a job
placed there (:func:`ddlsched.models.rar_timeindexed._fine_end_lb`). An optimal
schedule has ``e = T* <= H`` and the LP relaxes the ILP, so ``v <= T*``;
``T*`` is an integer, hence ``T* >= ceil(v - 1e-6)``: the LP bound
(``info['lp_bound']``). The method's ``bound`` is its maximum with the
closed forms of :func:`~ddlsched.models.rar_bounds.closed_form_bounds`.

Rounding (``trials`` independent draws from one ``numpy.random.Generator``
seeded with the run's seed, so the same seed gives the same schedule): for
each job, pattern ``k`` with probability ``sum_t x[j,k,t]`` (its LP mass;
the masses of a job sum to 1), and a fraction ``alpha ~ U(0, 1)``; the
job's alpha-point is the first start slot at which the job's cumulative LP
mass (over all its patterns, in order of start) reaches ``alpha``. Jobs are
then list-scheduled in order of alpha-point (ties: job position) by
:func:`~ddlsched.models.rar_patterns.assign_gpus`: each job takes, at the
earliest GPU release time where its pattern fits on concrete servers, the
GPUs of the fullest servers of each class, for its contention-free
duration (pooled or unplaceable patterns take the earliest-free GPUs). The
evaluator executes every rounded schedule (contention included); the best
is returned, and ``info`` lists every rounded makespan and its ratio to
the LP bound (a rounding whose schedule overruns the horizon ``T`` is
listed as ``-1``, its makespan without the horizon in
``info['rounded_overruns']``). Choices the issue leaves open: the alpha-point is taken over
the job's total mass (not conditional on the drawn pattern), and the
alpha-point only orders the jobs (it is not a release time).

``delta > 0`` (capacity scaling, as in Chernoff-bound analyses of
randomized rounding): a second LP with every capacity scaled by
``1 / (1 + delta)`` supplies the distributions (the bound still comes from
the unscaled LP, solved first).
"""

from __future__ import annotations

import logging
import statistics
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyomo.environ as pyo

from ddlsched.deadline import Deadline
from ddlsched.errors import InfeasibleScheduleError, TimeLimitReached
from ddlsched.models.rar_bounds import ceil_bound, closed_form_bounds, solves_outcome
from ddlsched.models.rar_patterns import PatternCatalogue, assign_gpus
from ddlsched.models.rar_timegrid import (
    AUTO,
    LP_COLUMNS_PER_S,
    choose_grid,
    grid_durations,
    model_horizon,
)
from ddlsched.models.rar_timeindexed import build_timeindexed, fine_ends
from ddlsched.problems.rar import RarInstance
from ddlsched.problems.rar_schedule import RarSchedule, evaluate
from ddlsched.rng import make_rng
from ddlsched.solvers.backends import SolveLimits, solve_model
from ddlsched.solvers.result import Outcome, Status, mark_stopped

__all__ = ["LpSolution", "lp_rounding", "round_once", "solve_lp"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LpSolution:
    """The LP's columns with positive value, per job: ``(pattern, coarse start, value)``.

    ``value``: the LP optimum (fine slots); ``slot_width``: ``w``.
    """

    value: float
    slot_width: int
    columns: dict[int, list[tuple[int, int, float]]]


def solve_lp(
    instance: RarInstance,
    catalogue: PatternCatalogue,
    slot_width: int,
    horizon: int,
    backend: str,
    limits: SolveLimits,
    deadline: Deadline,
    capacity_scale: float = 1.0,
) -> tuple[LpSolution | None, Any]:
    """Build and solve the LP relaxation of the bound model; ``(solution, solve)``.

    ``solution`` is ``None`` when the LP is infeasible (no job fits the
    horizon) or the solver returned no optimum (``solve`` says why; ``None``
    when nothing was solved). ``capacity_scale < 1`` shrinks every capacity.
    """
    durations = grid_durations(catalogue.durations, slot_width, schedule=False)
    model = build_timeindexed(
        instance,
        durations,
        catalogue.patterns,
        catalogue.classes,
        horizon // slot_width,
        deadline,
        relax=True,
        fine_ends=fine_ends(catalogue.durations, slot_width) if slot_width > 1 else None,
    )
    if model is None:
        return None, None
    if capacity_scale != 1.0:
        for block in (model.class_capacity, model.cluster_capacity):
            for con in block.values():
                con.set_value((None, con.body, con.upper * capacity_scale))
    solve = solve_model(model, backend, limits, deadline)
    if solve.status is not Status.OPTIMAL:
        return None, solve
    columns: dict[int, list[tuple[int, int, float]]] = {}
    for (j, k, t), var in model.x.items():
        value = pyo.value(var)
        if value is not None and value > 1e-9:
            columns.setdefault(j, []).append((k, t, float(value)))
    for cols in columns.values():
        cols.sort(key=lambda c: (c[1], c[0]))
    return LpSolution(float(pyo.value(model.C)), slot_width, columns), solve


def round_once(
    instance: RarInstance,
    lp: LpSolution,
    catalogue: PatternCatalogue,
    rng: np.random.Generator,
) -> RarSchedule:
    """One randomized rounding of ``lp`` (module docstring): patterns, alpha-points, list schedule."""
    chosen = {}
    durations = {}
    for j in range(len(instance.jobs)):
        cols = lp.columns[j]
        mass = np.array([v for _, _, v in cols])
        total = float(mass.sum())
        masses: dict[int, float] = {}
        for k, _, v in cols:
            masses[k] = masses.get(k, 0.0) + v
        patterns = sorted(masses)
        weights = np.array([masses[k] for k in patterns]) / total
        k = patterns[int(rng.choice(len(patterns), p=weights))]
        alpha = rng.random()
        cumulative = np.cumsum(mass) / total
        position = min(int(np.searchsorted(cumulative, alpha)), len(cols) - 1)
        chosen[j] = (k, cols[position][1] * lp.slot_width)
        durations[j] = catalogue.durations[j, k]
    return assign_gpus(instance, chosen, catalogue, durations, list_schedule=True)


def _summary(values: list[float]) -> dict[str, float]:
    return {
        "min": min(values),
        "median": statistics.median(values),
        "mean": statistics.fmean(values),
        "max": max(values),
    }


def lp_rounding(
    instance: RarInstance,
    *,
    backend: str = "highs",
    limits: SolveLimits | None = None,
    trials: int = 32,
    seed: int = 0,
    slot_width: int | str = AUTO,
    max_patterns: int | str = AUTO,
    delta: float = 0.0,
    deadline: Deadline | None = None,
) -> Outcome:
    """LP bound of the time-indexed relaxation and the best of ``trials`` rounded schedules.

    Grid (slot width, horizon, pattern cap) as in
    :func:`~ddlsched.models.rar_timeindexed.timeindexed`, chosen by
    :func:`~ddlsched.models.rar_timegrid.choose_grid` for one LP (a model that
    cannot fit is refused before it is built). Rounding stops early, keeping
    the trials done, when ``deadline`` passes.
    """
    if trials < 1:
        raise ValueError("trials must be >= 1")
    if delta < 0:
        raise ValueError("delta must be >= 0")
    limits = limits or SolveLimits()
    deadline = deadline or limits.deadline()
    H, horizon_from = model_horizon(instance, None, "free", deadline)
    catalogue, grid = choose_grid(
        instance,
        H,
        slot_width,
        max_patterns,
        "free",
        deadline,
        schedule_model=False,
        columns_per_s=LP_COLUMNS_PER_S,
    )
    w = grid.slot_width
    info: dict[str, Any] = {
        **grid.to_info(),
        "horizon_from": horizon_from,
        "pooled_jobs": list(catalogue.pooled),
        "trials": trials,
        "delta": delta,
    }
    closed = closed_form_bounds(instance)
    info["closed_form_bounds"] = closed
    solves = []
    lp = None
    try:
        lp, solve = solve_lp(instance, catalogue, w, H, backend, limits, deadline)
        if solve is not None:
            solves.append(solve)
        if lp is not None and delta > 0:
            scaled, solve = solve_lp(
                instance, catalogue, w, H, backend, limits, deadline, 1.0 / (1.0 + delta)
            )
            if solve is not None:
                solves.append(solve)
            info["scaled_lp_value"] = None if scaled is None else scaled.value
            rounding_lp = scaled or lp  # a scaled LP that is infeasible: round the unscaled one
        else:
            rounding_lp = lp
    except TimeLimitReached as exc:
        info["stopped"] = str(exc)
        rounding_lp = None
    lp_bound = None
    if lp is not None:
        lp_bound = ceil_bound(lp.value)
        info["lp_value"] = lp.value
    elif (
        "stopped" not in info
        and (not solves or solves[0].status is Status.INFEASIBLE)
        and instance.horizon == H
    ):  # no column fits the horizon for some job, or the LP is infeasible
        info["reason"] = f"no schedule finishes within the horizon T = {H}"
        outcome = Outcome(None, Status.INFEASIBLE, info=info, **solves_outcome(solves))
        return mark_stopped(outcome, *(s.what_stopped("the rounding LP") for s in solves))
    info["lp_bound"] = lp_bound
    bound = ceil_bound(max(lp_bound or 0.0, *closed.values()))
    best = best_schedule = None
    if rounding_lp is not None:
        best, best_schedule = _round_trials(
            instance, rounding_lp, catalogue, trials, seed, deadline, lp_bound, info
        )
    else:
        _record_trials(info, [], [], best, lp_bound)
    if best_schedule is not None:
        status = Status.OPTIMAL if best <= bound + 1e-6 else Status.FEASIBLE
    else:
        status = Status.BOUND_ONLY
    outcome = Outcome(best_schedule, status, bound=bound, info=info, **solves_outcome(solves))
    return mark_stopped(outcome, *(s.what_stopped("the rounding LP") for s in solves))


def _round_trials(
    instance: RarInstance,
    lp: LpSolution,
    catalogue: PatternCatalogue,
    trials: int,
    seed: int,
    deadline: Deadline,
    lp_bound: float | None,
    info: dict[str, Any],
) -> tuple[int | None, RarSchedule | None]:
    """Up to ``trials`` seeded roundings of ``lp``, evaluated; the best makespan and schedule.

    Stops when the next rounding would not finish in time (``info['stopped']``);
    the makespans and their statistics go to ``info`` (:func:`_record_trials`).
    """
    best = best_schedule = None
    makespans: list[int] = []
    overruns: list[Any] = []
    rng = make_rng(seed)
    last_trial_s = 0.0
    for trial in range(trials):
        # stop when the next rounding would not finish in time (a trial's cost, rounding
        # and evaluation, is about the last one's; the first always runs)
        if trial and deadline.remaining_s() < last_trial_s:
            info["stopped"] = f"time limit reached after {trial} of {trials} roundings"
            break
        started = time.perf_counter()
        schedule = round_once(instance, lp, catalogue, rng)
        try:
            makespan = evaluate(instance, schedule).makespan
        except InfeasibleScheduleError as exc:
            makespans.append(-1)  # overran the horizon: -1 here, its length in overruns
            overruns.append(exc.details.get("makespan_beyond_horizon"))
            last_trial_s = time.perf_counter() - started
            continue
        makespans.append(makespan)
        if best is None or makespan < best:
            best, best_schedule = makespan, schedule
        last_trial_s = time.perf_counter() - started
    _record_trials(info, makespans, overruns, best, lp_bound)
    return best, best_schedule


def _record_trials(
    info: dict[str, Any],
    makespans: list[int],
    overruns: list[Any],
    best: int | None,
    lp_bound: float | None,
) -> None:
    """The rounded makespans (``-1``: overran the horizon) and their statistics, in ``info``."""
    feasible = [m for m in makespans if m >= 0]
    info["rounded_makespans"] = makespans
    info["rounded_overruns"] = overruns
    if feasible:
        info["best_rounded"] = best
        info["mean_rounded"] = statistics.fmean(feasible)
        info["rounded_summary"] = _summary([float(m) for m in feasible])
        if lp_bound:
            ratios = [m / lp_bound for m in feasible]
            info["ratios_to_lp_bound"] = ratios
            info["ratio_to_lp_bound_summary"] = _summary(ratios)
