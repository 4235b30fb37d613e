"""The ``rar`` CP-SAT search over whole rings at a target makespan (``cpsat``, ``placements=whole``).

Spec ``docs/families/rar.md``; the model over every placement is
:mod:`ddlsched.models.rar_cpsat`, its search :mod:`ddlsched.models.rar_cpsat_search`,
the plans (hint, GPU ids) :mod:`ddlsched.models.rar_cpsat_plan`.

Model (:func:`build_whole_model`), a *satisfaction* model at a target ``C``: every
ring is *whole*, on one server ``s`` with ``O_s >= G_j``; a job has a start ``S_j``
in ``[0, C - d_j]`` (so it ends by ``C``), and per eligible server a literal and an
optional interval ``[S_j, S_j + d_j)`` of demand ``G_j``, exactly one literal true; a
cumulative of capacity ``O_s`` per server. Redundant, to prune: per gang size ``g``
of the instance, a cumulative of the rings with ``G_j >= g`` (their job intervals)
within ``sum_{s: O_s >= g} O_s`` GPUs (those rings can only run on those servers;
the smallest size gives the cluster cumulative, or a tighter one). There are no
split modes: a whole ring has ``n_j = 1`` and ``p_j = 0``, so its length ``d_j`` is
exactly Eq. (9)'s ``rho_j(1, 0)`` (no contention term, on every preset) and the
plan's schedule (:func:`~ddlsched.models.rar_cpsat_plan.plan_to_schedule`), executed
by the evaluator, ends every job at ``S_j + d_j``: its makespan is the plan's.

The model is a *restriction* of the problem (whole rings only), so it gives no lower
bound: a target it proves infeasible is infeasible *for whole rings*, not for the
problem (a split ring may do better). :class:`~ddlsched.models.rar_cpsat_search.CpsatSearch`
therefore carries ``bound = model_bound = None``; ``info['whole_infeasible']`` lists
such targets for information only.

Search (:func:`whole_search`), a *descent* on the target: ``H`` is the hint's evaluated
makespan (else the horizon ``T`` and the first target is ``T``); the first target is
``H - 1``; a schedule found at target ``t`` has an evaluated makespan ``m <= t`` and the
next target is ``m - 1``; the search stops at the first target CP-SAT does not meet
(``INFEASIBLE``: proven for whole rings; ``UNKNOWN``: the budget ran out), after
``max_targets`` solves, or at the wall clock. Why a descent and not a bisection: the
problem's lower bounds are far below what whole rings reach (a bisection's midpoints
there cost a full budget each and, mostly ``UNKNOWN``, prove nothing), while a target
one slot below a schedule in hand is usually met quickly and its solution often jumps
several slots; the descent spends exactly one unmet budget, at the end. Every solve
has the same deterministic CP-SAT budget ``work`` (``max_deterministic_time``),
``workers`` interleaved workers and ``random_seed = seed``, and is hinted with the best
plan so far (the hint's split rings contribute their starts only): same inputs, same
answer on any machine, unless the wall clock stops a solve, which then sets
``time_limit_hit``. The answer is the best evaluated schedule, ``None`` when no target
was met (the caller keeps the hint, so the method never returns worse than it).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any

from ddlsched.deadline import Deadline
from ddlsched.errors import InfeasibleScheduleError
from ddlsched.models.rar_cpsat import lengths
from ddlsched.models.rar_cpsat_plan import Plan, PlannedJob, hint_plan, plan_to_schedule
from ddlsched.models.rar_cpsat_search import CpsatSearch
from ddlsched.problems.rar import RarInstance
from ddlsched.problems.rar_schedule import RarSchedule, evaluate
from ddlsched.solvers.cpsat import CpsatOptions, model_size, solve_cpsat
from ddlsched.solvers.limits import check_model_size
from ddlsched.solvers.result import Status

__all__ = ["WholeSettings", "build_whole_model", "whole_search"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class WholeSettings:
    """What :func:`whole_search` does (module docstring)."""

    work: float = 4.0  # CP-SAT deterministic time per target
    workers: int = 8
    seed: int = 0
    max_targets: int = 3  # solves at most: at most max_targets * work deterministic time


@dataclass
class _WholeVars:
    """The variables a hint and a decoding need: starts and ``(job, server)`` literals."""

    start: list[Any]
    on: list[dict[int, Any]]


def build_whole_model(
    instance: RarInstance, durations: list[int], target: int
) -> tuple[Any, _WholeVars]:
    """The satisfaction model of the module docstring: whole rings ending by ``target``.

    ``durations[j]`` is job ``j``'s length on one server; every job must fit a server and
    ``target`` be at least every duration.
    """
    from ortools.sat.python import cp_model

    model = cp_model.CpModel()
    variables = _WholeVars([], [])
    own: list[Any] = []
    per_server: list[list[Any]] = [[] for _ in instance.servers]
    demand: list[list[int]] = [[] for _ in instance.servers]
    for j, (job, length) in enumerate(zip(instance.jobs, durations, strict=True)):
        start = model.new_int_var(0, target - length, f"S[{j}]")
        variables.start.append(start)
        own.append(model.new_fixed_size_interval_var(start, length, f"J[{j}]"))
        literals: dict[int, Any] = {}
        for s, capacity in enumerate(instance.servers):
            if capacity >= job.gpus:
                literals[s] = model.new_bool_var(f"w[{j},{s}]")
                per_server[s].append(
                    model.new_optional_fixed_size_interval_var(
                        start, length, literals[s], f"W[{j},{s}]"
                    )
                )
                demand[s].append(job.gpus)
        model.add_exactly_one(literals.values())
        variables.on.append(literals)
    for s, capacity in enumerate(instance.servers):
        if per_server[s]:
            model.add_cumulative(per_server[s], demand[s], capacity)
    for size in sorted({job.gpus for job in instance.jobs}):
        rings = [j for j, job in enumerate(instance.jobs) if job.gpus >= size]
        room = sum(capacity for capacity in instance.servers if capacity >= size)
        model.add_cumulative([own[j] for j in rings], [instance.jobs[j].gpus for j in rings], room)
    return model, variables


def _add_whole_hint(model: Any, variables: _WholeVars, plan: Plan) -> None:
    """Hint starts and, for the plan's whole rings, their server (split rings: start only)."""
    for j, job in enumerate(plan.jobs):
        model.add_hint(variables.start[j], job.start)
        if not job.split:
            server = next(iter(job.per_server))
            for s, literal in variables.on[j].items():
                model.add_hint(literal, s == server)


def _evaluated_makespan(instance: RarInstance, schedule: RarSchedule) -> int | None:
    """The evaluated makespan of ``schedule``, ``None`` when the evaluator refuses it."""
    try:
        return evaluate(instance, schedule).makespan
    except InfeasibleScheduleError:
        return None


def _decode(run: Any, variables: _WholeVars, instance: RarInstance, durations: list[int]) -> Plan:
    """The plan of CP-SAT's solution: each ring whole on its chosen server."""
    jobs = []
    for j, job in enumerate(instance.jobs):
        server = next(s for s, lit in variables.on[j].items() if run.boolean_value(lit))
        jobs.append(PlannedJob(run.value(variables.start[j]), durations[j], {server: job.gpus}))
    return Plan(tuple(jobs))


def _result(status: Status, schedule, makespan, cut: bool, size, version, runtime, info):
    """A :class:`CpsatSearch` of the whole-ring search: never a bound (module docstring)."""
    return CpsatSearch(
        status=status,
        schedule=schedule,
        makespan=makespan,
        bound=None,
        model_bound=None,
        proven=False,
        time_limit_hit=cut,
        model_size=size,
        runtime_s=runtime,
        version=version,
        info=info,
    )


def whole_search(
    instance: RarInstance,
    settings: WholeSettings,
    hint: RarSchedule | None = None,
    deadline: Deadline | None = None,
) -> CpsatSearch:
    """Descend on the target over whole rings (module docstring), hinted with ``hint``.

    ``makespan`` is the best schedule's evaluated makespan; ``info['whole_targets']``
    lists each solve as ``[target, CP-SAT status, evaluated makespan or None,
    deterministic time]``; ``info['whole_stopped']`` why the descent ended.
    """
    check_model_size(
        "rar cpsat (whole)",
        len(instance.jobs) * (instance.num_servers + 2),
        "use the method improve",
    )
    data = lengths(instance)
    info: dict[str, Any] = {
        "placements": "whole",
        "bound_valid": False,
        "target_work": settings.work,
        "workers": settings.workers,
        "whole_targets": [],
        "whole_infeasible": [],
    }
    started = time.perf_counter()
    unfit = [job.id for job, d in zip(instance.jobs, data.single, strict=True) if d is None]
    if unfit:
        info["whole_stopped"] = f"job {unfit[0]!r} fits no server whole"
        return _result(Status.NO_SOLUTION, None, None, False, (0, 0, 0), "", 0.0, info)
    durations = [int(d) for d in data.single]  # type: ignore[arg-type]
    plan = best = best_schedule = None
    target = instance.horizon
    if hint is not None:
        plan, how = hint_plan(instance, hint, data.of, data.cap)
        hinted = _evaluated_makespan(instance, hint)
        info.update(hint=how, hint_makespan=hinted)
        if hinted is not None:  # an overrun of T is no schedule: the descent starts at T
            target = min(target, hinted - 1)
    options = CpsatOptions(
        seed=settings.seed,
        workers=settings.workers,
        interleave_search=settings.workers > 1,
        deterministic_time_s=settings.work,
    )
    size, version, cut, stopped = (0, 0, 0), "", False, "max_targets"
    for _ in range(settings.max_targets):
        if target < max(durations):
            stopped = "target below the longest ring"
            break
        model, variables = build_whole_model(instance, durations, target)
        if plan is not None:
            _add_whole_hint(model, variables, plan)
        run = solve_cpsat(model, deadline, options)
        size, version = model_size(model), run.version
        work = float(run.solver.deterministic_time) if run.solver is not None else 0.0
        row: list[Any] = [target, run.message, None, round(work, 3)]
        info["whole_targets"].append(row)
        if not run.has_solution:
            cut = deadline is not None and deadline.expired()
            if run.status is Status.INFEASIBLE:
                info["whole_infeasible"].append(target)
            stopped = "time limit" if cut else run.message
            break
        plan = _decode(run, variables, instance, durations)
        schedule = plan_to_schedule(instance, plan)
        row[2] = evaluate(instance, schedule).makespan
        best, best_schedule = row[2], schedule
        target = row[2] - 1
    info["whole_stopped"] = stopped
    log.info("rar cpsat (whole): best %s, stopped: %s", best, stopped)
    status = Status.FEASIBLE if best_schedule is not None else Status.TIME_LIMIT_NO_SOLUTION
    if best_schedule is None and not cut:
        status = Status.NO_SOLUTION
    runtime = time.perf_counter() - started
    return _result(status, best_schedule, best, cut, size, version, runtime, info)
