"""The offline optimum ``OPT_A`` of family ``asrpt`` (method ``exact``).

A-SRPT paper: Problem (8) under Eqs. (1)-(3), the per-iteration time of
Eqs. (4)-(7); spec ``docs/families/asrpt.md``, ``exact``
(the spec wins over the paper). This module is the strategy
(:func:`solve_exact`): it builds the integer data from the modes and
``alpha*(u)`` of :mod:`ddlsched.models.asrpt_modes` (rounding), runs the
scheduling models (CP-SAT, :mod:`ddlsched.models.asrpt_cpsat`; the
time-indexed MILP, :mod:`ddlsched.models.asrpt_milp`; their shared data in
:mod:`ddlsched.models.asrpt_integer`; one solve and two compared in
:mod:`ddlsched.models.asrpt_solve`) and assembles the result.

``exact`` (:func:`solve_exact`)
    Modes per job: every GPU-count vector ``u`` over the ``M`` servers
    (``sum u = g_i``, ``u_m <= g``), duration ``n_i alpha*(u)``, with
    ``alpha*(u)`` the ``placement`` optimum on ``available = u``
    (:mod:`ddlsched.models.asrpt_modes`: how it is proven, cached and mapped
    onto the mode's servers); a solve stopped by the deadline keeps its
    incumbent (Heavy-Edge's at worst) for the rounded-up data and its dual
    bound for the rounded-down data. The scheduling model is CP-SAT (default) or the time-indexed MILP
    (``solver="milp"``; :mod:`ddlsched.models.asrpt_cpsat`,
    :mod:`ddlsched.models.asrpt_milp`), on integer data in ``time_unit_s``. Data are *whole* when every arrival
    and every duration is within 1e-9 (relative) of an integer and every
    ``alpha*`` is proven: one model. Otherwise the model is solved with
    arrivals and durations rounded up (its schedule is feasible and is
    evaluated in continuous time) and rounded down (a valid bound: flooring
    every start of a continuous schedule keeps it feasible for the floored
    data, since ``floor(a) + floor(b) <= floor(a + b)`` keeps disjoint runs
    disjoint and intervals that pairwise overlap share a point, and its
    objective does not grow); the result is ``optimal`` only when the two
    coincide (1e-9 relative).

    The returned schedule is the best of the solvers' and the greedy
    incumbent's (:func:`~ddlsched.models.asrpt_integer.serial_schedule`), so a
    schedule always exists; ``bound`` is the largest of the model's dual
    bound (on the whole or rounded-down data) and the per-mode ``lb_sum`` /
    ``lb_srpt`` (with ``min_u alpha*(u)`` bounds). Deadline: one for the
    whole method; the ``alpha*`` solves take what they need of it, then each
    remaining model solve gets an equal share of what is left.
    Strengthenings (ours; each switchable, all on by default; the
    proofs that none cuts off every optimum are in
    :mod:`ddlsched.models.asrpt_strengthen`): ``improve``'s schedule and a
    searched serial one as incumbent (tighter windows, a better hint), per-job
    windows from the other jobs' partition bound, ``sum C_i >= LB`` (the
    partition bound and the time-indexed LP relaxation), symmetry between
    identical jobs (same release; same modes in release order) and CP-SAT's
    ``linearization_level = 2``; the MILP sees the incumbents and the windows.
    ``cross_check=True`` also solves every integer model with the other
    scheduling model (MILP for CP-SAT and vice versa) and records in
    ``info['cross_check']`` whether their optima agree (``True``), disagree
    (``False``: the result is then ``feasible``, with only the closed-form
    bounds, and a warning is logged) or could not be compared (``None``).

    Size caps, checked before anything is built (a one-line
    :class:`~ddlsched.errors.ModelTooLargeError` naming the counts): the
    number of (job, mode) pairs (counted before symmetry breaking) against
    ``max_job_modes``, a cheap lower estimate of the horizon (closed-form
    ``alpha``) and then the serial horizon ``max r + sum_i max_u d_iu``
    (time units) against ``max_horizon_units``.
"""

from __future__ import annotations

import logging
import math
import time
from typing import TYPE_CHECKING, Any

from ddlsched.deadline import DEFAULT_TIME_LIMIT_S, Deadline
from ddlsched.errors import ModelTooLargeError, UnknownMethodError
from ddlsched.heuristics.srpt import srpt_total_completion
from ddlsched.models.asrpt import CHECK_RTOL, alpha_closed_form
from ddlsched.models.asrpt_integer import IntegerData, IntegerSolution, Mode, make_data, to_schedule
from ddlsched.models.asrpt_modes import AlphaStar, alpha_star, count_usage_vectors, usage_vectors
from ddlsched.models.asrpt_solve import IntegerSolve, compare_solves, solve_integer
from ddlsched.models.asrpt_strengthen import (
    Strengthening,
    improve_schedule,
    improved_incumbent,
    search_incumbent,
    with_incumbent,
    with_job_windows,
)
from ddlsched.problems.asrpt import AsrptInstance, job_placement_instance
from ddlsched.problems.asrpt_schedule import evaluate
from ddlsched.solvers.result import Claim, Outcome, Status, mark_stopped

if TYPE_CHECKING:
    from ddlsched.heuristics.asrpt_improve import PolicyRunner

__all__ = ["CPSAT_SHARE", "DEFAULT_MAX_HORIZON_UNITS", "DEFAULT_MAX_JOB_MODES", "solve_exact"]

log = logging.getLogger(__name__)

#: Default caps of :func:`solve_exact` (refused beyond, before anything is built).
DEFAULT_MAX_JOB_MODES = 2_000
DEFAULT_MAX_HORIZON_UNITS = 5_000
_WHOLE_RTOL = 1e-9
#: With ``milp_proof``, CP-SAT's search's share of what its LP bound leaves of a solve's time.
CPSAT_SHARE = 0.5


def _count(value: float) -> str:
    """``12,345`` for a count, ``1.23e+20`` beyond a billion (a message stays one short line)."""
    return f"{value:,.0f}" if value < 1e9 else f"{value:.3g}"


def _units(x: float, up: bool) -> int:
    """``x`` (time units) as an integer: the nearest one when within 1e-9 relative,
    else rounded up (``up``) or down. A positive ``x`` is never whole at 0 (a duration of
    2e-12 units, ``time_unit_s`` far coarser than the jobs, made every job take no time
    and the model claim a total completion time of 0)."""
    nearest = round(x)
    if abs(x - nearest) <= _WHOLE_RTOL * max(1.0, abs(x)) and (nearest != 0 or x == 0):
        return int(nearest)
    return math.ceil(x) if up else math.floor(x)


def _method_deadline(time_limit_s: float | None, deadline: Deadline | None) -> Deadline:
    if deadline is None:
        return Deadline(DEFAULT_TIME_LIMIT_S if time_limit_s is None else time_limit_s)
    return deadline if time_limit_s is None else deadline.sub(at_most=time_limit_s)


def _job_modes(
    instance: AsrptInstance,
    backend: str,
    deadline: Deadline,
    cross_check: bool,
    seed: int,
) -> tuple[list[list[tuple[tuple[int, ...], AlphaStar]]], dict[str, Any]]:
    """Per job, its modes ``(u, alpha*(u))`` (the first job: non-increasing ``u`` only)."""
    cluster = instance.cluster
    stars: dict[tuple[str, tuple[int, ...]], AlphaStar] = {}
    out = []
    for i, job in enumerate(instance.jobs):
        config = instance.configs[job.config]
        vectors = usage_vectors(
            cluster.servers, cluster.gpus_per_server, config.num_gpus, non_increasing=i == 0
        )
        modes = []
        for u in vectors:
            key = (job.config, tuple(sorted((v for v in u if v), reverse=True)))
            if key not in stars:
                stars[key] = alpha_star(
                    cluster,
                    config,
                    key[1],
                    backend=backend,
                    deadline=deadline,
                    cross_check=cross_check,
                    seed=seed,
                )
            modes.append((u, stars[key]))
        out.append(modes)
    sources: dict[str, int] = {}
    for star in stars.values():
        sources[star.source] = sources.get(star.source, 0) + 1
    info = {
        "distinct": len(stars),
        "proven": sum(1 for s in stars.values() if s.proven),
        "sources": sources,
    }
    return out, info


def _mode(u: tuple[int, ...], star: AlphaStar, duration: int) -> Mode:
    order = sorted((m for m in range(len(u)) if u[m]), key=lambda m: (-u[m], m))
    return Mode(usage=u, duration=duration, servers=tuple(order), counts=star.counts)


def _check_caps(instance: AsrptInstance, max_job_modes: int, max_horizon_units: int) -> int:
    """The number of (job, mode) pairs, after checking it and a cheap lower estimate of
    the horizon (closed-form ``alpha``) against the caps (module docstring)."""
    cluster = instance.cluster
    unit = instance.time_unit_s
    M, g = cluster.servers, cluster.gpus_per_server
    job_modes = sum(count_usage_vectors(M, g, instance.gpus(job)) for job in instance.jobs)
    if job_modes > max_job_modes:
        raise ModelTooLargeError(
            f"asrpt exact: {job_modes:,} (job, mode) pairs exceed max_job_modes = "
            f"{max_job_modes:,} ({_where(instance)}); raise the cap or use lb_sum / lb_srpt"
        )
    closed = {
        name: alpha_closed_form(
            job_placement_instance(cluster, config, (g,) * min(M, config.num_gpus))
        )
        for name, config in instance.configs.items()
    }
    estimate = max(job.arrival_s for job in instance.jobs) / unit
    estimate += sum(job.iterations * closed[job.config] for job in instance.jobs) / unit
    if estimate > max_horizon_units * (1 + _WHOLE_RTOL):
        raise ModelTooLargeError(
            f"asrpt exact: the horizon is at least {_count(estimate)} time units of "
            f"{unit:g} s, above max_horizon_units = {max_horizon_units:,} ({_where(instance)}); "
            "raise the cap or time_unit_s"
        )
    return job_modes


def _where(instance: AsrptInstance) -> str:
    cluster = instance.cluster
    return f"{instance.num_jobs} jobs on {cluster.servers} servers x {cluster.gpus_per_server} GPUs"


def _integer_data(
    instance: AsrptInstance, modes: list[list[tuple[tuple[int, ...], AlphaStar]]], max_horizon: int
) -> tuple[IntegerData, IntegerData | None]:
    """The integer data rounded up (or exact, when whole) and rounded down (``None`` when
    whole); the serial horizon checked against ``max_horizon`` (module docstring)."""
    unit = instance.time_unit_s
    modes_up, modes_down = [], []
    for job, job_modes_i in zip(instance.jobs, modes, strict=True):
        n = job.iterations
        modes_up.append([_mode(u, s, _units(n * s.value_s / unit, True)) for u, s in job_modes_i])
        modes_down.append(
            [_mode(u, s, _units(n * s.bound_s / unit, False)) for u, s in job_modes_i]
        )
    r_up = [_units(job.arrival_s / unit, True) for job in instance.jobs]
    r_down = [_units(job.arrival_s / unit, False) for job in instance.jobs]
    whole = r_up == r_down and all(
        a.duration == b.duration
        for ups, downs in zip(modes_up, modes_down, strict=True)
        for a, b in zip(ups, downs, strict=True)
    )
    serial = max(r_up) + sum(max(m.duration for m in ms) for ms in modes_up)
    if serial > max_horizon:
        raise ModelTooLargeError(
            f"asrpt exact: the serial horizon is {_count(serial)} time units of {unit:g} s, above "
            f"max_horizon_units = {max_horizon:,} ({_where(instance)}); "
            "raise the cap or time_unit_s"
        )
    upper = make_data(instance, "exact" if whole else "up", r_up, modes_up)
    lower = None if whole else make_data(instance, "down", r_down, modes_down)
    return upper, lower


def _run_solves(
    upper: IntegerData,
    lower: IntegerData | None,
    solver: str,
    backend: str,
    deadline: Deadline,
    options: tuple[bool, int, int, Strengthening],
) -> tuple[dict[tuple[str, str], IntegerSolve], dict[str, Any]]:
    """Every model solve of the plan, each with an equal share of what is left of
    ``deadline``; ``options`` = ``(cross_check, seed, threads, strengthening)``. With
    ``milp_proof`` (CP-SAT, no cross-check) CP-SAT's search gets :data:`CPSAT_SHARE` of
    what its LP bound leaves of a solve's share and, when it proves nothing, the
    time-indexed MILP the rest, on the same data
    (its windows tightened by CP-SAT's schedule). Returns the solves by ``(upper|lower,
    solver)`` and the cross-check record per data set (the two models compared whenever
    both ran)."""
    cross_check = options[0]
    other = "milp" if solver == "cpsat" else "cpsat"
    plan: list[tuple[str, IntegerData, str]] = [("upper", upper, solver)]
    if cross_check:
        plan.append(("upper", upper, other))
    if lower is not None:
        plan.append(("lower", lower, solver))
        if cross_check:
            plan.append(("lower", lower, other))
    solves: dict[tuple[str, str], IntegerSolve] = {}
    cross: dict[str, Any] = {}
    follow_up = options[3].milp_proof and solver == "cpsat" and not cross_check
    for index, (label, data, name) in enumerate(plan):
        phase = deadline.sub(1.0 / (len(plan) - index))
        try:
            first = solve_integer(
                data, name, backend, phase, options, CPSAT_SHARE if follow_up else 1.0
            )
        except ModelTooLargeError as exc:
            if name == solver:
                raise
            cross[label] = {"agree": None, "status": f"not run: {exc}"}
            continue
        solves[label, name] = first
        if follow_up and first.status is not Status.OPTIMAL:
            if first.solution is not None:  # its value tightens the MILP's windows
                data = with_incumbent(data, first.solution)
            try:
                solves[label, "milp"] = solve_integer(data, "milp", backend, phase, options)
            except ModelTooLargeError as exc:
                log.info("asrpt exact: milp_proof not run (%s)", exc)
    if cross_check or follow_up:
        compare_solves(solves, solver, other, cross)
    return solves, cross


def _best_solution(
    upper: IntegerData, solves: dict[tuple[str, str], IntegerSolve], solver: str
) -> tuple[int, str, IntegerSolution]:
    """The best upper solution (a solver's or the incumbent): value, source, solution."""
    candidates = [(upper.incumbent.objective(upper), 1.0, "serial", upper.incumbent)]
    for (label, name), res in solves.items():
        if label == "upper" and res.solution is not None and res.objective is not None:
            candidates.append((res.objective, 0 if name == solver else 0.5, name, res.solution))
    best_units, _, best_from, best = min(candidates, key=lambda c: (c[0], c[1]))
    return best_units, best_from, best


def _improved(
    upper: IntegerData,
    lower: IntegerData | None,
    deadline: Deadline,
    run_policy: PolicyRunner | None,
    seed: int,
) -> tuple[IntegerData, IntegerData | None, dict[str, Any]]:
    """Both data sets with ``improve``'s schedule as incumbent where it is better
    (``improve_incumbent``), and what it gave (units, ``None``: no schedule)."""
    started = time.perf_counter()
    schedule = improve_schedule(upper, deadline, run_policy, seed)
    report: dict[str, Any] = {"improve_units": None}
    if schedule is not None:
        found = improved_incumbent(upper, schedule)
        if found is not None:
            report["improve_units"] = found.objective(upper)
            upper = with_incumbent(upper, found)
        if lower is not None and (found := improved_incumbent(lower, schedule)) is not None:
            lower = with_incumbent(lower, found)
    report["improve_s"] = time.perf_counter() - started
    return upper, lower, report


def _searched(data: IntegerData, deadline: Deadline) -> IntegerData:
    """``data`` with the searched incumbent and its windows (``incumbent_search``)."""
    return with_incumbent(data, search_incumbent(data, deadline=deadline))


def _mode_bounds(
    instance: AsrptInstance, modes: list[list[tuple[tuple[int, ...], AlphaStar]]]
) -> dict[str, float]:
    """``lb_sum`` and ``lb_srpt`` with ``min_u alpha*(u)`` bounds per job (s)."""
    mins = [min(s.bound_s for _, s in job_modes_i) for job_modes_i in modes]
    per_mode_sum = math.fsum(
        job.arrival_s + job.iterations * a for job, a in zip(instance.jobs, mins, strict=True)
    )
    total_gpus = instance.cluster.num_gpus
    per_mode_srpt = srpt_total_completion(
        [job.arrival_s for job in instance.jobs],
        [
            instance.gpus(job) / total_gpus * job.iterations * a
            for job, a in zip(instance.jobs, mins, strict=True)
        ],
    )
    return {"lb_sum_modes": per_mode_sum, "lb_srpt_modes": per_mode_srpt}


def _limit_cuts(
    solves: dict[tuple[str, str], IntegerSolve], star_info: dict[str, Any]
) -> list[str]:
    """What the time limit cut (``info['stopped']``): each scheduling model solve it
    stopped, and the ``alpha*`` placement ILPs it left unproven."""
    cuts = [
        f"the {name} solve of the {label} model at the time limit ({res.message})"
        for (label, name), res in solves.items()
        if res.time_limit_hit
    ]
    if star_info["proven"] < star_info["distinct"]:
        unproven = star_info["distinct"] - star_info["proven"]
        cuts.append(
            f"{unproven} of {star_info['distinct']} alpha* placement ILPs at the time limit "
            "(Heavy-Edge's value kept, the closed form as their bound)"
        )
    return cuts


def _bounds(
    instance: AsrptInstance,
    modes: Any,
    solves: dict[tuple[str, str], IntegerSolve],
    whole: bool,
    unit: float,
    objective: float,
    disagree: bool,
) -> tuple[dict[str, float], bool]:
    """The bounds (seconds) by source: the per-mode closed bounds and, unless the models
    disagree, the model's (whole or rounded-down data); and whether they disagree. A model
    bound above ``objective`` (a schedule the evaluator accepted) is a solver's error: it is
    left out and counts as a disagreement."""
    bounds = _mode_bounds(instance, modes)
    bound_label = "upper" if whole else "lower"
    model_bounds = [
        res.bound
        for (label, _), res in solves.items()
        if label == bound_label and res.bound is not None
    ]
    if model_bounds and not disagree:
        bounds["model"] = max(model_bounds) * unit
        if bounds["model"] > objective * (1 + CHECK_RTOL) + 1e-9:
            log.warning(
                "asrpt exact: the model's bound %.9g is above a schedule's %.9g",
                bounds["model"],
                objective,
            )
            del bounds["model"]
            disagree = True
    return bounds, disagree


def solve_exact(
    instance: AsrptInstance,
    *,
    backend: str = "highs",
    time_limit_s: float | None = None,
    deadline: Deadline | None = None,
    max_job_modes: int = DEFAULT_MAX_JOB_MODES,
    max_horizon_units: int = DEFAULT_MAX_HORIZON_UNITS,
    cross_check: bool = False,
    seed: int = 0,
    solver: str = "cpsat",
    threads: int = 1,
    placement_cross_check: bool = True,
    strengthening: Strengthening | None = None,
    run_policy: PolicyRunner | None = None,
) -> Outcome:
    """The offline optimum ``OPT_A`` of ``instance`` (module docstring).

    ``backend`` is the MILP backend (placement ILPs, and the time-indexed
    MILP when ``solver="milp"`` or cross-checking); ``placement_cross_check``
    re-proves every placement-ILP optimum ``alpha*(u)`` with the other backend;
    ``strengthening`` (default: all on) picks those of ``asrpt_strengthen``;
    ``run_policy`` (the family's simulator) lets ``improve_incumbent`` start
    ``improve`` from the policies' schedules too.
    Raises :class:`~ddlsched.errors.ModelTooLargeError` beyond the caps.
    """
    if solver not in ("cpsat", "milp"):
        raise UnknownMethodError(f"unknown asrpt exact solver {solver!r} (choose cpsat or milp)")
    deadline = _method_deadline(time_limit_s, deadline)
    strengthening = Strengthening() if strengthening is None else strengthening
    started = time.perf_counter()
    unit = instance.time_unit_s
    job_modes = _check_caps(instance, max_job_modes, max_horizon_units)
    modes, star_info = _job_modes(instance, backend, deadline, placement_cross_check, seed)
    upper, lower = _integer_data(instance, modes, max_horizon_units)
    warm: dict[str, Any] = {}
    if strengthening.improve_incumbent:
        upper, lower, warm = _improved(upper, lower, deadline, run_policy, seed)
    if strengthening.incumbent_search:
        upper, lower = _searched(upper, deadline), lower and _searched(lower, deadline)
    if strengthening.job_windows:
        upper, lower = with_job_windows(upper), lower and with_job_windows(lower)
    whole = lower is None
    solves, cross = _run_solves(
        upper, lower, solver, backend, deadline, (cross_check, seed, threads, strengthening)
    )
    disagree = any(c.get("agree") is False for c in cross.values())

    best_units, best_from, best = _best_solution(upper, solves, solver)
    schedule = to_schedule(upper, best)
    objective = evaluate(instance, schedule).total_completion_s

    bounds, disagree = _bounds(instance, modes, solves, whole, unit, objective, disagree)
    bound = max(bounds.values())
    optimal = bound >= objective * (1 - CHECK_RTOL) - 1e-12
    proof = None
    if optimal:
        proof = (
            "model" if bounds.get("model", -math.inf) >= objective * (1 - CHECK_RTOL) else "bounds"
        )
    primary = solves.get(("upper", solver))
    info: dict[str, Any] = {
        "solver": solver,
        "time_unit_s": unit,
        "rounding": "exact" if whole else "up/down",
        "job_modes": upper.num_job_modes,
        "job_modes_uncapped": job_modes,
        "serial_horizon_units": upper.serial_horizon,
        "model_horizon_units": upper.horizon,
        "alpha_star": star_info,
        "strengthening": strengthening.report(),
        "schedule_from": best_from,
        "incumbent_units": upper.incumbent.objective(upper),
        **warm,
        "objective_units": best_units,
        "bounds": bounds,
        "proof": proof,
        "solves": {f"{label}/{name}": res.report() for (label, name), res in solves.items()},
        "method_s": time.perf_counter() - started,
    }
    if cross_check:
        info["cross_check"] = cross
    if disagree:
        info["error_note"] = (
            "the scheduling models disagree (or a bound lies above a schedule): "
            "no optimality claimed"
        )
    outcome = Outcome(
        schedule=schedule,
        status=Status.OPTIMAL if optimal else Status.FEASIBLE,
        bound=bound,
        claim=Claim(best_units * unit, proven=optimal and whole),
        backend=primary.backend if primary else None,
        backend_version=primary.backend_version if primary else None,
        model_size=primary.model_size if primary else None,
        solver_time_s=sum(res.runtime_s for res in solves.values()),
        info=info,
    )
    return outcome if optimal else mark_stopped(outcome, *_limit_cuts(solves, star_info))
