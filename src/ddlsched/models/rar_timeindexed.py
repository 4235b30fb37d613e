"""The ``timeindexed`` bound of RAR-DDLS: the pattern x start-slot ILP (spec ``rar.md``, Eqs. 10-13).

The paper's reformulation (Eqs. 10-13) in tractable form: a column per
(job, placement pattern, start slot), patterns up to symmetry of equal
servers (:mod:`ddlsched.models.rar_patterns`), capacity enforced per server
class and slot (``sum g_tau <= n_tau O_tau``) and for the whole cluster.
Durations are contention-free (``p = 1``). This relaxes both contention and
the packing inside a class, so its optimum (or dual bound) is a valid LOWER
bound. Its schedule, mapped to concrete GPUs
(:func:`~ddlsched.models.rar_patterns.assign_gpus`) and executed by the
evaluator, is an UPPER bound. With ``contention="worst"`` the durations use
``p = max_contention`` instead; the model's value is then no longer a bound
(recorded), and the evaluated schedule stays an upper bound; the *planned*
makespan is not one (the class aggregation lets the decoder spread a job
over more servers than its pattern), so it is only reported in
``info['planned_makespan']``.

Time aggregation ``slot_width = w > 1`` (the grid:
:mod:`ddlsched.models.rar_timegrid`): the bound model counts a job only in
the coarse slots it covers entirely; its makespan ``C`` is in fine slots,
each column ending at the earliest fine end a job placed there can have
(:func:`_fine_end_lb`), so ``T* >= C`` (the plain ``T* >= w C_coarse``
loses up to ``2w`` a job). The schedule model rounds durations up
(``ceil(d / w)``) and is solved separately. Jobs with a pooled column are
listed in ``info``.

All makespans are integral, so every lower bound ``b`` is reported as
``ceil(b - 1e-6)``, and solves stop once ``incumbent - bound < 1``
(:func:`~ddlsched.models.rar_bounds.integral_limits`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pyomo.environ as pyo

from ddlsched.deadline import Deadline
from ddlsched.errors import InfeasibleScheduleError, TimeLimitReached
from ddlsched.models.rar_bounds import (
    ceil_bound,
    closed_form_bounds,
    integral_limits,
    solves_outcome,
)
from ddlsched.models.rar_patterns import PatternCatalogue, assign_gpus
from ddlsched.models.rar_timegrid import (
    AUTO,
    SIZE_HINT,
    TimeGrid,
    choose_grid,
    grid_durations,
    model_counts,
    model_horizon,
)
from ddlsched.problems.rar import RarInstance
from ddlsched.problems.rar_schedule import RarSchedule, evaluate
from ddlsched.solvers.backends import ModelSolve, SolveLimits, solve_model
from ddlsched.solvers.limits import check_model_size
from ddlsched.solvers.result import Outcome, Status, mark_stopped

__all__ = ["FIRST_PASS_SHARE", "TWO_PASS_MIN_S", "build_timeindexed", "fine_ends", "timeindexed"]


def _fine_end_lb(t: int, d: int, w: int) -> int:
    """Earliest fine end of a job of fine duration ``d`` whose bound-model column starts at ``t``.

    The bound model places a job of fine start ``a`` at coarse start
    ``t = ceil(a / w)`` (:func:`_coarse_duration_lb`): ``t = 0`` means
    ``a = 0``, and ``t >= 1`` means ``a >= (t - 1) w + 1``. Its end is at least
    ``a + d`` (contention only lengthens it), so the fine makespan is at least
    ``d`` or ``(t - 1) w + 1 + d``: with these coefficients the model's ``C``
    bounds ``T*`` in fine slots, losing less than ``w`` where ``w C_coarse``
    loses up to ``2w`` per job (and equal to ``t + d`` when ``w = 1``).
    """
    return d if t == 0 else (t - 1) * w + 1 + d


FineEnd = Callable[[int, int, int], int]


def fine_ends(fine: dict[tuple[int, int], int], w: int) -> FineEnd:
    """``(j, k, t) -> `` :func:`_fine_end_lb` of column ``(j, k, t)`` of a bound model at width ``w``."""
    return lambda j, k, t: _fine_end_lb(t, fine[j, k], w)


def build_timeindexed(
    instance: RarInstance,
    durations: dict[tuple[int, int], int],
    patterns: dict[int, list[tuple[int, ...] | None]],
    classes: Sequence[tuple[int, int]],
    horizon: int,
    deadline: Deadline,
    relax: bool = False,
    fine_ends: FineEnd | None = None,
) -> pyo.ConcreteModel | None:
    """Columns (job, pattern index, start); ``None`` pattern = pooled column.

    Returns ``None`` when some job fits in no column within ``horizon``;
    a model too large is refused before it is built (:func:`check_model_size`);
    building runs under ``deadline.interrupting``. ``relax``: the LP
    relaxation (``x`` in ``[0, 1]``, ``C`` continuous).
    """
    deadline.check("building the timeindexed ILP")
    variables, nonzeros = model_counts(durations, patterns, horizon)
    check_model_size("rar timeindexed ILP", variables, SIZE_HINT, nonzeros=nonzeros)
    with deadline.interrupting("building the timeindexed ILP"):
        return _build_columns(
            instance, durations, patterns, classes, horizon, deadline, relax, fine_ends
        )


def _build_columns(
    instance: RarInstance,
    durations: dict[tuple[int, int], int],
    patterns: dict[int, list[tuple[int, ...] | None]],
    classes: Sequence[tuple[int, int]],
    horizon: int,
    deadline: Deadline,
    relax: bool,
    fine_ends: FineEnd | None = None,
) -> pyo.ConcreteModel | None:
    jobs = instance.jobs
    cols = [
        (j, k, t)
        for j in range(len(jobs))
        for k in range(len(patterns[j]))
        for t in range(horizon - durations[j, k] + 1)
    ]
    if {j for j, _, _ in cols} != set(range(len(jobs))):
        return None  # some job fits in no column within the horizon
    m = pyo.ConcreteModel(name="rar_timeindexed_lp" if relax else "rar_timeindexed")
    m.x = pyo.Var(cols, domain=pyo.UnitInterval if relax else pyo.Binary)
    by_job: dict[int, list] = {}
    for col in cols:
        by_job.setdefault(col[0], []).append(col)
    m.choose = pyo.Constraint(
        range(len(jobs)), rule=lambda m, j: sum(m.x[c] for c in by_job.get(j, [])) == 1
    )
    # occupancy: column (j,k,t) is active in slots t..t+d-1
    active_in: dict[int, list] = {u: [] for u in range(horizon)}
    for n, (j, k, t) in enumerate(cols):
        if n % 4096 == 0:
            deadline.check("building the timeindexed ILP")
        for u in range(t, t + durations[j, k]):
            active_in[u].append((j, k, t))
    m.class_capacity = pyo.ConstraintList()
    m.cluster_capacity = pyo.ConstraintList()
    for u in range(horizon):
        deadline.check("building the timeindexed ILP")
        if not active_in[u]:
            continue
        for c, (cap, count) in enumerate(classes):
            terms = [
                patterns[j][k][c] * m.x[j, k, t]
                for j, k, t in active_in[u]
                if patterns[j][k] is not None and patterns[j][k][c]
            ]
            if terms:
                m.class_capacity.add(sum(terms) <= cap * count)
        m.cluster_capacity.add(
            sum(jobs[j].gpus * m.x[j, k, t] for j, k, t in active_in[u]) <= instance.num_gpus
        )
    if fine_ends is None:  # the makespan in model slots: C >= t + d
        m.C = pyo.Var(domain=pyo.Reals if relax else pyo.Integers, bounds=(0, horizon))

        def end(j: int, k: int, t: int) -> float:
            return t + durations[j, k]
    else:  # in fine slots, from the column's earliest fine end (see _fine_end_lb)
        m.C = pyo.Var(domain=pyo.Reals if relax else pyo.Integers, bounds=(0, None))

        end = fine_ends

    m.makespan = pyo.Constraint(
        range(len(jobs)),
        rule=lambda m, j: (
            sum(end(j, k, t) * m.x[j, k, t] for (_, k, t) in by_job.get(j, [])) <= m.C
        ),
    )
    m.obj = pyo.Objective(expr=m.C, sense=pyo.minimize)
    return m


def _chosen_columns(m: pyo.ConcreteModel, scale: int) -> dict[int, tuple[int, int]]:
    """``job -> (pattern index, fine start slot)`` of a solved model (coarse start times ``scale``)."""
    chosen = {}
    for (j, k, t), var in m.x.items():
        if pyo.value(var) > 0.5:
            chosen[j] = (k, t * scale)
    return chosen


def timeindexed(
    instance: RarInstance,
    *,
    backend: str = "highs",
    limits: SolveLimits | None = None,
    slot_width: int | str = AUTO,
    contention: str = "free",
    max_patterns: int | str = AUTO,
    horizon: int | None = None,
    deadline: Deadline | None = None,
) -> Outcome:
    """The pattern/start-slot ILP: a lower bound and an evaluated upper-bound schedule.

    ``slot_width`` and ``max_patterns`` ``'auto'`` (default) are chosen by
    :func:`choose_grid` from the instance, the memory budget and
    ``deadline``; integers are kept. With ``'auto'`` and at least
    :data:`TWO_PASS_MIN_S` seconds, a first pass gets :data:`FIRST_PASS_SHARE`
    of the time and a second one, on a finer grid and the horizon of the
    best schedule found, the rest; the best schedule and the largest bound
    are kept (``info['passes']``). ``horizon`` (default: the makespan of
    the better LS/FF schedule, :func:`incumbent_makespan`, when below ``T``
    and contention-free; else ``T``) limits the model's time axis: an
    optimal schedule finishes by any incumbent's makespan, so the bound
    stays valid. The whole method, model building included, runs within
    ``deadline``; a build the deadline stops leaves the closed-form bounds.
    With ``slot_width > 1`` the bound model gets half of what remains of
    ``deadline`` and the schedule model the rest.
    """
    if contention not in ("free", "worst"):
        raise ValueError(f"contention must be 'free' or 'worst', got {contention!r}")
    if slot_width != AUTO and (not isinstance(slot_width, int) or slot_width < 1):
        raise ValueError("slot_width must be 'auto' or an integer >= 1")
    limits = integral_limits(limits)
    deadline = deadline or limits.deadline()
    H, horizon_from = model_horizon(instance, horizon, contention, deadline)
    if slot_width != AUTO:
        catalogue, grid = choose_grid(instance, H, slot_width, max_patterns, contention, deadline)
        return _timeindexed_pass(
            instance, catalogue, grid, horizon_from, contention, backend, limits, deadline
        )
    # 'auto': a first pass on a quarter of the time, then a finer grid on the rest, on the
    # horizon of the best schedule so far (T* <= its makespan); the best of both is kept.
    # Each pass's grid is planned on its share of the time limit (not on the time left: the
    # same inputs give the same grids on a quiet and on a loaded machine).
    passes: list[Outcome] = []
    total_s = deadline.plan_s
    if total_s >= TWO_PASS_MIN_S:
        passes_planned = (
            (FIRST_PASS_SHARE, FIRST_PASS_SHARE * total_s),
            (1.0, (1 - FIRST_PASS_SHARE) * total_s),
        )
    else:
        passes_planned = ((1.0, total_s),)
    for share, plan_s in passes_planned:
        phase = deadline.sub(share)
        catalogue, grid = choose_grid(
            instance, H, slot_width, max_patterns, contention, phase, plan_s=plan_s
        )
        last = passes[-1] if passes else None
        finer = last is None or grid.slot_width < last.info["slot_width"]
        if last is not None and last.schedule is not None and not finer:
            break  # no finer grid fits the time left
        outcome = _timeindexed_pass(
            instance, catalogue, grid, horizon_from, contention, backend, limits, phase
        )
        passes.append(outcome)
        if (
            outcome.status in (Status.OPTIMAL, Status.INFEASIBLE, Status.ERROR)
            or grid.slot_width == 1
            or deadline.remaining_s() < 1.0
        ):
            break
        objective = outcome.info.get("evaluated_makespan")
        if contention == "free" and objective is not None and objective < H:
            H, horizon_from = int(objective), "first pass"
    return _merge_passes(passes)


#: Share of the time limit the first automatic pass of ``timeindexed`` gets.
FIRST_PASS_SHARE = 0.25


#: Below this many seconds, ``timeindexed`` makes a single automatic pass.
TWO_PASS_MIN_S = 20.0


def _merge_passes(passes: list[Outcome]) -> Outcome:
    """The best schedule and the largest bound of several passes (info of the best schedule)."""
    if len(passes) == 1:
        return passes[0]
    with_schedule = [o for o in passes if o.schedule is not None]
    best = (
        min(with_schedule, key=lambda o: o.info["evaluated_makespan"])
        if with_schedule
        else passes[-1]
    )
    bounds = [o.bound for o in passes if o.bound is not None]
    bound = max(bounds) if bounds else None
    info = dict(best.info)
    info["passes"] = [
        {
            "slot_width": o.info["slot_width"],
            "model_horizon": o.info["model_horizon"],
            "status": str(o.status),
            "makespan": o.info.get("evaluated_makespan"),
            "bound": o.bound,
        }
        for o in passes
    ]
    status = best.status
    if best.schedule is not None:
        objective = best.info["evaluated_makespan"]
        proven = bound is not None and objective <= bound + 1e-6
        status = Status.OPTIMAL if proven else Status.FEASIBLE
    elif bound is not None:
        status = Status.BOUND_ONLY
    sizes = [o.model_size for o in passes if o.model_size is not None]
    info.pop("stopped", None)  # said again below, for every pass the limit cut
    outcome = Outcome(
        best.schedule,
        status,
        bound=bound,
        info=info,
        backend=best.backend,
        backend_version=best.backend_version,
        model_size=sizes[-1] if sizes else None,
        solver_time_s=sum(o.solver_time_s or 0.0 for o in passes),
    )
    cuts = (
        f"pass {number} (slot width {o.info['slot_width']}): {o.info['stopped']}"
        for number, o in enumerate(passes, 1)
        if o.info.get("stopped")
    )
    return mark_stopped(outcome, *cuts)


def _timeindexed_pass(
    instance: RarInstance,
    catalogue: PatternCatalogue,
    grid: TimeGrid,
    horizon_from: str,
    contention: str,
    backend: str,
    limits: SolveLimits,
    deadline: Deadline,
) -> Outcome:
    """One build-and-solve of the bound and schedule models on ``grid`` (``timeindexed``)."""
    patterns = catalogue.patterns
    w = grid.slot_width
    solves: list[ModelSolve] = []
    info: dict[str, Any] = {
        **grid.to_info(),
        "horizon_from": horizon_from,
        "contention": contention,
        "pooled_jobs": list(catalogue.pooled),
        "num_columns_per_job_max": max(len(p) for p in patterns.values()),
    }
    bound_model, bound_solve, relaxation_infeasible = _solve_bound_model(
        instance, catalogue, grid, backend, limits, deadline, solves, info
    )
    bound = _pass_bound(instance, grid, contention, bound_solve, relaxation_infeasible, info)
    # Schedule model: the bound model itself when w = 1, else durations rounded up.
    schedule_model, schedule_solve = bound_model, bound_solve
    if w > 1 and "stopped" not in info:
        ub_durations = grid_durations(catalogue.durations, w, schedule=True)
        schedule_solve = None
        try:
            schedule_model = build_timeindexed(
                instance, ub_durations, patterns, catalogue.classes, grid.horizon // w, deadline
            )
        except TimeLimitReached as exc:
            schedule_model, info["stopped"] = None, str(exc)
        if schedule_model is not None:
            schedule_solve = solve_model(schedule_model, backend, limits, deadline)
            solves.append(schedule_solve)
    schedule = objective = None
    if schedule_solve is not None and schedule_solve.has_solution:
        schedule, objective = _evaluated_schedule(instance, catalogue, schedule_model, w, info)
    status = _pass_status(
        instance, grid.horizon, contention, objective, bound, relaxation_infeasible, solves, info
    )
    info["solver_status"] = [str(solve.status) for solve in solves]
    outcome = Outcome(schedule, status, bound=bound, info=info, **solves_outcome(solves))
    models = ("the bound model", "the schedule model") if w > 1 else ("the model",)
    return mark_stopped(outcome, *(s.what_stopped(m) for s, m in zip(solves, models, strict=False)))


def _solve_bound_model(
    instance: RarInstance,
    catalogue: PatternCatalogue,
    grid: TimeGrid,
    backend: str,
    limits: SolveLimits,
    deadline: Deadline,
    solves: list[ModelSolve],
    info: dict[str, Any],
) -> tuple[pyo.ConcreteModel | None, ModelSolve | None, bool]:
    """The bound model (durations rounded down to fully covered coarse slots), solved.

    Returns the model, its solve (appended to ``solves``) and whether not even
    the relaxation fits the model horizon; a build the deadline stops sets
    ``info['stopped']``. With ``w > 1`` it gets half of ``deadline``.
    """
    w = grid.slot_width
    fine = catalogue.durations
    lb_durations = grid_durations(fine, w, schedule=False)
    try:
        bound_model = build_timeindexed(
            instance,
            lb_durations,
            catalogue.patterns,
            catalogue.classes,
            grid.horizon // w,
            deadline,
            fine_ends=fine_ends(fine, w) if w > 1 else None,
        )
    except TimeLimitReached as exc:
        bound_model, info["stopped"] = None, str(exc)
    relaxation_infeasible = bound_model is None and "stopped" not in info
    bound_solve = None
    if bound_model is not None:
        phase = deadline.sub(0.5) if w > 1 else deadline
        bound_solve = solve_model(bound_model, backend, limits, phase)
        solves.append(bound_solve)
        relaxation_infeasible = bound_solve.status is Status.INFEASIBLE
    return bound_model, bound_solve, relaxation_infeasible


def _pass_bound(
    instance: RarInstance,
    grid: TimeGrid,
    contention: str,
    bound_solve: ModelSolve | None,
    relaxation_infeasible: bool,
    info: dict[str, Any],
) -> float | None:
    """The pass's lower bound (fine slots; ``None`` at worst contention, not a bound)."""
    w = grid.slot_width
    closed = closed_form_bounds(instance)
    bound = None
    if contention == "free":
        model_bound = None  # in fine slots
        if relaxation_infeasible:
            # Not even the relaxation fits the model horizon: T* >= w (coarse_h + 1) > H.
            model_bound = w * (grid.horizon // w + 1)
        elif bound_solve is not None and bound_solve.status is not Status.ERROR:
            model_bound = bound_solve.bound
        bound = ceil_bound(max(model_bound or 0.0, *closed.values()))
        info["bound_from_model"] = model_bound
        info["closed_form_bounds"] = closed
    info["bound_valid"] = contention == "free"
    return bound


def _evaluated_schedule(
    instance: RarInstance,
    catalogue: PatternCatalogue,
    schedule_model: pyo.ConcreteModel,
    w: int,
    info: dict[str, Any],
) -> tuple[RarSchedule | None, float | None]:
    """The solved schedule model's columns on concrete GPUs, executed by the evaluator."""
    fine = catalogue.durations
    chosen = _chosen_columns(schedule_model, w)
    chosen_fine = {j: fine[j, k] for j, (k, _) in chosen.items()}
    schedule = assign_gpus(instance, chosen, catalogue, chosen_fine)
    info["planned_makespan"] = float(pyo.value(schedule_model.C)) * w
    try:
        objective = float(evaluate(instance, schedule).makespan)
    except InfeasibleScheduleError as exc:
        # Executed with contention the plan may overrun T: keep the bound, drop the schedule.
        info["schedule_rejected"] = str(exc)
        return None, None
    info["evaluated_makespan"] = objective
    return schedule, objective


def _pass_status(
    instance: RarInstance,
    H: int,
    contention: str,
    objective: float | None,
    bound: float | None,
    relaxation_infeasible: bool,
    solves: Sequence[ModelSolve],
    info: dict[str, Any],
) -> Status:
    """The pass's status from its schedule, bound and solves (reasons go to ``info``)."""
    if objective is not None:
        # A schedule meeting the valid bound is optimal (the method pipeline checks that
        # the evaluated schedule never beats the bound).
        return (
            Status.OPTIMAL if bound is not None and objective <= bound + 1e-6 else Status.FEASIBLE
        )
    if contention == "free" and relaxation_infeasible and instance.horizon == H:
        info["reason"] = f"no schedule finishes within the horizon T = {H}"
        return Status.INFEASIBLE
    if bound is not None:
        return Status.BOUND_ONLY
    if contention == "worst":
        return _worst_status(H, relaxation_infeasible, solves, info)
    return Status.TIME_LIMIT_NO_SOLUTION if solves else Status.ERROR


def _worst_status(
    H: int, no_column: bool, solves: Sequence[ModelSolve], info: dict[str, Any]
) -> Status:
    """The status of a worst-contention pass without a schedule (it has no bound).

    A solve the time limit cut is never "no schedule exists"; a model that
    was not built because a job fits in no column within the horizon, or an
    infeasible worst-contention model, proves nothing about the instance: the
    method found no schedule (a result, not a failure), and says why.
    """
    if any(solve.status is Status.ERROR for solve in solves):
        info["error"] = "a solve of the worst-contention model failed"
        return Status.ERROR
    cut = any(
        solve.time_limit_hit or solve.status is Status.TIME_LIMIT_NO_SOLUTION for solve in solves
    )
    if "stopped" in info or cut:
        info.setdefault("stopped", "the worst-contention model's solve at the time limit")
        return Status.TIME_LIMIT_NO_SOLUTION
    if no_column and not solves:
        why = f"a job's worst-contention duration does not fit the model horizon T = {H}"
    else:
        why = info.get("schedule_rejected", "the model has no schedule within the horizon")
    info["reason"] = f"no schedule found with worst-contention durations: {why}"
    return Status.NO_SOLUTION
