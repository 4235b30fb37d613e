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

Search (:func:`whole_search`), over targets ``C``. ``H`` is the hint's evaluated makespan
(else ``T + 1``: the first target is the horizon ``T``). The *floor* ``F`` is the largest of
the whole-ring closed forms: the longest ring ``max_j d_j`` and, per gang size ``g``,
``ceil(sum_{G_j >= g} G_j d_j / sum_{s: O_s >= g} O_s)`` (the per-size cumulatives' energy):
no whole-ring schedule ends before ``F``, so no target below it is tried, and a schedule at
``F`` ends the search (best for whole rings; still no bound of the problem). ``lo`` is the
largest target known unmet (``F - 1`` at first). Two searches (``search``):

* ``gallop`` (the default): targets ``best - 1``, ``best - 2``, ``best - 4``, ... (the step
  doubles after each met target, counted from the best schedule so far, never below ``F``)
  until a target is not met; then a bisection between ``lo`` (the unmet target) and the best
  makespan: target ``(lo + best) // 2``, met (``best`` moves to the schedule's makespan, at or
  below the target) or not (``lo`` moves up to it). It stops when ``best - lo <= 1``, after
  ``max_targets`` solves, or at the wall clock. Why: a satisfaction solve at a target tends
  to return a schedule right at that target, so a one-slot descent gains about one slot a
  solve; the gallop reaches a schedule ``k`` slots down in about ``log2 k`` met targets, and
  the bisection spends the rest of the solves between the unmet target and the best.
* ``descent``: target ``best - 1`` after each met target, stop at the first unmet one (the
  option's first search; kept to compare).

An unmet target is ``INFEASIBLE`` (proven for whole rings: no whole-ring schedule at or below
it, listed in ``info['whole_infeasible']``) or ``UNKNOWN`` (the budget ran out: treated as
unmet, nothing proven). The first solve has the deterministic CP-SAT budget ``first_work``
(``max_deterministic_time``), every later one ``work`` (the first solve starts from the hint
only and its answer sets how deep the next targets go; later ones start from a schedule a few
slots above them); so the search costs at most ``first_work + (max_targets - 1) * work``
units. Every solve has ``workers`` interleaved workers and ``random_seed = seed`` and is
hinted with the best plan so far (the hint's split rings contribute their starts only):
same inputs, same answer on any machine, unless the wall clock stops a solve, which then
sets ``time_limit_hit``. The answer is the best evaluated schedule, ``None`` when no target
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

__all__ = [
    "SEARCHES",
    "TargetSearch",
    "WholeSettings",
    "build_whole_model",
    "whole_floor",
    "whole_search",
]

log = logging.getLogger(__name__)


#: The target searches of :func:`whole_search` (module docstring).
SEARCHES = ("gallop", "descent")


@dataclass(frozen=True)
class WholeSettings:
    """What :func:`whole_search` does (module docstring)."""

    work: float = 2.0  # CP-SAT deterministic time per target after the first
    workers: int = 8
    seed: int = 0
    max_targets: int = 6  # solves at most
    first_work: float | None = None  # the first target's budget (None: work)
    search: str = "gallop"

    def budget(self, solve: int) -> float:
        """The deterministic CP-SAT budget of solve number ``solve`` (0: the first)."""
        if solve == 0 and self.first_work is not None:
            return self.first_work
        return self.work


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


def whole_floor(instance: RarInstance, durations: list[int]) -> int:
    """No whole-ring schedule ends before this (module docstring: the floor ``F``).

    The longest ring, and per gang size ``g`` the energy ``sum G_j d_j`` of the rings with
    ``G_j >= g`` over the GPUs of the servers they fit (every job must fit a server whole).
    """
    floor = max(durations)
    for size in {job.gpus for job in instance.jobs}:
        energy = sum(
            job.gpus * d
            for job, d in zip(instance.jobs, durations, strict=True)
            if job.gpus >= size
        )
        room = sum(capacity for capacity in instance.servers if capacity >= size)
        floor = max(floor, -(-energy // room))
    return floor


class TargetSearch:
    """The next target of the gallop or the descent (module docstring), from what is known.

    ``best``: the best makespan in hand (``T + 1`` without one); ``floor``: ``F``. ``lo``
    is the largest unmet target (``F - 1`` at first), ``step`` the gallop's next step.
    """

    def __init__(self, search: str, best: int, floor: int) -> None:
        self.search, self.best, self.lo, self.step = search, best, floor - 1, 1
        self.bisecting = False

    def next(self) -> int | None:
        """The next target, ``None`` when the search is over."""
        if self.best - self.lo <= 1:
            return None
        if self.bisecting:
            return (self.lo + self.best) // 2
        return max(self.best - self.step, self.lo + 1)

    def met(self, makespan: int) -> None:
        """A schedule of ``makespan`` (at or below the target) was found."""
        self.best = makespan
        if self.search == "gallop" and not self.bisecting:
            self.step *= 2

    def unmet(self, target: int) -> bool:
        """The target was not met; whether the search goes on (the descent stops)."""
        self.lo = target
        self.bisecting = True
        return self.search == "gallop"


def _why_over(targets: TargetSearch, floor: int) -> str:
    """Why a search that was not stopped by an unmet descent or the clock ended."""
    if targets.next() is not None:
        return "max_targets"
    return "the whole-ring floor" if targets.best <= floor else "bisection closed"


def whole_search(
    instance: RarInstance,
    settings: WholeSettings,
    hint: RarSchedule | None = None,
    deadline: Deadline | None = None,
) -> CpsatSearch:
    """Search the target over whole rings (module docstring), hinted with ``hint``.

    ``makespan`` is the best schedule's evaluated makespan; ``info['whole_targets']``
    lists each solve as ``[target, CP-SAT status, evaluated makespan or None,
    deterministic time]``; ``info['whole_floor']`` is ``F``; ``info['whole_stopped']``
    why the search ended.
    """
    if settings.search not in SEARCHES:
        raise ValueError(f"search must be one of {SEARCHES}, got {settings.search!r}")
    check_model_size(
        "rar cpsat (whole)",
        len(instance.jobs) * (instance.num_servers + 2),
        "use the method improve",
    )
    data = lengths(instance)
    info: dict[str, Any] = {
        "placements": "whole",
        "bound_valid": False,
        "target_search": settings.search,
        "target_work": settings.work,
        "first_work": settings.budget(0),
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
    floor = info["whole_floor"] = whole_floor(instance, durations)
    plan = best = best_schedule = None
    upper = instance.horizon + 1  # the first target is T without a schedule in hand
    if hint is not None:
        plan, how = hint_plan(instance, hint, data.of, data.cap)
        hinted = _evaluated_makespan(instance, hint)
        info.update(hint=how, hint_makespan=hinted)
        if hinted is not None:  # an overrun of T is no schedule: the search starts at T
            upper = min(upper, hinted)
    targets = TargetSearch(settings.search, upper, floor)
    size, version, cut, stopped = (0, 0, 0), "", False, None
    for solve in range(settings.max_targets):
        target = targets.next()
        if target is None:
            break
        options = CpsatOptions(
            seed=settings.seed,
            workers=settings.workers,
            interleave_search=settings.workers > 1,
            deterministic_time_s=settings.budget(solve),
        )
        model, variables = build_whole_model(instance, durations, target)
        if plan is not None:
            _add_whole_hint(model, variables, plan)
        run = solve_cpsat(model, deadline, options)
        size, version = model_size(model), run.version
        work = float(run.solver.deterministic_time) if run.solver is not None else 0.0
        row: list[Any] = [target, run.message, None, round(work, 3)]
        info["whole_targets"].append(row)
        log.info("rar cpsat (whole): target %d %s (%.1f units)", target, run.message, work)
        if run.has_solution:
            plan = _decode(run, variables, instance, durations)
            best_schedule = plan_to_schedule(instance, plan)
            best = row[2] = evaluate(instance, best_schedule).makespan
            targets.met(best)
            continue
        if run.status is Status.INFEASIBLE:
            info["whole_infeasible"].append(target)
        # "no time left": the deadline left at most NO_TIME_S, no solve was started
        cut = run.message == "no time left" or (deadline is not None and deadline.expired())
        if cut or not targets.unmet(target):
            stopped = "time limit" if cut else run.message
            break
    if stopped is None:
        stopped = _why_over(targets, floor)
    info["whole_stopped"] = stopped
    log.info("rar cpsat (whole): best %s, stopped: %s", best, stopped)
    status = Status.FEASIBLE if best_schedule is not None else Status.TIME_LIMIT_NO_SOLUTION
    if best_schedule is None and not cut:
        status = Status.NO_SOLUTION
    runtime = time.perf_counter() - started
    return _result(status, best_schedule, best, cut, size, version, runtime, info)
