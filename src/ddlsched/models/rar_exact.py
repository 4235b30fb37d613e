"""The ``exact`` strategy of RAR-DDLS: presolve bounds, the search, then the MILP (spec ``rar.md``).

Method ``exact`` of family ``rar`` (wiring: :mod:`ddlsched.families.rar`).
With ``presolve_bounds`` (default) the cheap heuristics (``sjf_bco``,
``ls``, ``ff``; Alg. 1-3 and the baselines) and ``timeindexed`` (the Eqs.
10-13 ILP of :mod:`ddlsched.models.rar_timeindexed`; a fifth of the time
limit, at most 10 s; all of it when the MILP would be refused for its size
and no search applies, e.g. the paper preset) supply an incumbent and a
lower bound first. Then, on instances within its limits (``floor`` rule,
<= 8 jobs, <= 4 servers, <= 16 GPUs; ``search``), the contention-aware
branch-and-bound of :mod:`ddlsched.models.rar_search` (half of the time
left; it is complete and deterministic, so a finished search does not
depend on the seed); elsewhere, or if the search did not finish, the MILP
with contention of :mod:`ddlsched.models.rar` (:func:`~ddlsched.models.rar.solve_exact`,
through :func:`~ddlsched.solvers.formulation.solve_formulation`), which only
has to rule out shorter schedules. ``info['exact_method']`` says which ran
last; ``info['proof']``: ``search``, ``bounds``, ``milp`` or
``no_shorter_schedule``. The shares of the time limit are ours.

**A longer limit starts as the shorter one did.** ``timeindexed`` chooses
its grid from the time planned for it (``Deadline.plan_s``): given the
whole of a long limit it plans a finer grid, whose build or solve the limit
can cut before any schedule exists (Fig. 4 seed 2: 396 at 120 s, the
heuristics' 464 at 900 s, its ``timeindexed`` left without a schedule). So
when the presolve has the whole limit and it exceeds :data:`FIRST_PLAN_S`,
``timeindexed`` runs twice: first exactly as at a limit of
:data:`FIRST_PLAN_S` (the same plan, hence the same grids, and as much
time), then on the rest with the horizon of the best schedule so far; the
best schedule and the largest bound are kept (``info['timeindexed_runs']``).
A longer limit thus returns no worse than a limit of :data:`FIRST_PLAN_S` on the
same machine and load (a solve the limit cuts can still end differently
under a different load). The answer is never worse than the best schedule
in hand (a heuristic start, a ``timeindexed`` schedule, the search's or the
MILP's): ``info['schedule_from']`` names it and ``info['schedule_why']``
says why it was returned. When the presolve spent the whole limit the MILP
does not start, and ``info['stopped']`` says so.
"""

from __future__ import annotations

from typing import Any

from ddlsched.deadline import Deadline
from ddlsched.errors import InfeasibleScheduleError, ModelTooLargeError, TimeLimitReached
from ddlsched.problems.rar import RarInstance
from ddlsched.problems.rar_schedule import RarSchedule, evaluate
from ddlsched.solvers.limits import SolveLimits
from ddlsched.solvers.result import Outcome, Status, mark_stopped

__all__ = ["FIRST_PLAN_S", "exact"]

#: Time planned for the first ``timeindexed`` run when the presolve has the whole limit
#: (seconds): the limit the benchmarks run ``exact`` at on the paper's instances.
FIRST_PLAN_S = 120.0


def exact(
    instance: RarInstance,
    *,
    backend: str,
    seed: int,
    deadline: Deadline,
    presolve_bounds: bool = True,
    cross_check: bool = False,
    search: str = "auto",
) -> Outcome:
    """``exact``: presolve bounds, then the search where it applies, then the MILP.

    With ``search`` ``auto`` the branch-and-bound gets half of the time left
    after the presolve and the MILP the rest if the search did not finish;
    with ``always`` the search gets all of it (and a larger instance is
    refused); with ``never`` only the MILP runs.
    """
    from ddlsched.models.rar import solve_exact
    from ddlsched.models.rar_search import check_search_size

    use_search = search != "never"
    if use_search:
        try:
            check_search_size(instance)
        except ModelTooLargeError:
            if search == "always":
                raise
            use_search = False
    limits = SolveLimits(seed=seed)
    candidates: list[tuple[str, RarSchedule, int]] = []
    lower = None
    sources: dict[str, Any] = {}
    presolve_time_s = 0.0
    if presolve_bounds:
        candidates, lower, presolve_time_s = _presolve(
            instance, backend, deadline, limits, sources, use_search
        )
    if use_search:
        share = 1.0 if search == "always" else 0.5
        outcome = _exact_search(instance, deadline.sub(share), candidates, lower)
        outcome.info = {**sources, **outcome.info}
        if presolve_time_s:
            outcome.solver_time_s = presolve_time_s
        if outcome.status in (Status.OPTIMAL, Status.INFEASIBLE) or search == "always":
            best = min(candidates, key=lambda c: c[2]) if candidates else None
            return _never_worse(instance, outcome, best)
        # the search ran out of its share: hand its incumbent and bound to the MILP
        sources["search"] = outcome.info["search"]
        if outcome.schedule is not None and outcome.claim is not None:
            candidates = [("search", outcome.schedule, int(outcome.claim.value))]
        lower = outcome.bound
    best = min(candidates, key=lambda c: c[2]) if candidates else None
    if best is not None:
        sources["incumbent_from"] = best[0]
    sources["exact_method"] = "milp"
    if best is not None and deadline.expired():
        spent_by = "the search" if use_search else "the presolve (timeindexed)"
        outcome = _milp_not_started(instance, best, lower, spent_by)
    else:
        outcome = solve_exact(
            instance,
            backend=backend,
            limits=limits,
            incumbent=None if best is None else best[1],
            lower_bound=lower,
            cross_check=cross_check,
            deadline=deadline,
        )
    outcome.info = {**sources, **outcome.info}
    if presolve_time_s:
        outcome.solver_time_s = (outcome.solver_time_s or 0.0) + presolve_time_s
    return _never_worse(instance, outcome, best)


def _milp_not_started(
    instance: RarInstance, best: tuple[str, RarSchedule, int], lower: float | None, spent_by: str
) -> Outcome:
    """The incumbent when ``spent_by`` (a phase before it) spent the limit: no MILP ran."""
    from ddlsched.models.rar_bounds import ceil_bound, closed_form_bounds

    known = [max(closed_form_bounds(instance).values())]
    if lower is not None:
        known.append(ceil_bound(lower))
    makespan = best[2]
    bound = float(min(max(known), makespan))
    if bound >= makespan:
        return Outcome(best[1], Status.OPTIMAL, bound=bound, info={"proof": "bounds"})
    outcome = Outcome(best[1], Status.FEASIBLE, bound=bound, info={"proof": None})
    return mark_stopped(outcome, f"{spent_by} at the time limit: the MILP did not start")


def _never_worse(
    instance: RarInstance, outcome: Outcome, best: tuple[str, RarSchedule, int] | None
) -> Outcome:
    """``outcome``, or the best schedule in hand if that is shorter; ``info`` says which and why.

    The MILP only looks for schedules shorter than its incumbent, so its own
    schedule is shorter by construction; this is the check that keeps it so.
    """
    if best is None:
        if outcome.schedule is not None:
            outcome.info["schedule_from"] = outcome.info.get("exact_method", "milp")
            outcome.info["schedule_why"] = "the exact model's schedule (no start was in hand)"
        return outcome
    name, schedule, makespan = best
    if outcome.schedule is schedule:
        outcome.info["schedule_from"] = name
        outcome.info["schedule_why"] = (
            "the best schedule in hand (heuristic starts, timeindexed): nothing shorter was found"
        )
        return outcome
    found = None if outcome.schedule is None else evaluate(instance, outcome.schedule).makespan
    if found is not None and found <= makespan:
        outcome.info["schedule_from"] = outcome.info.get("exact_method", "milp")
        outcome.info["schedule_why"] = f"no longer than the best start ({name}, {makespan})"
        return outcome
    bound = None if outcome.bound is None else min(outcome.bound, float(makespan))
    outcome.info.update(
        schedule_from=name,
        schedule_why=f"the exact model's schedule ({found}) is not shorter than {name}'s ({makespan})",
        proof=None,
    )
    return Outcome(
        schedule,
        Status.FEASIBLE,
        bound=bound,
        backend=outcome.backend,
        backend_version=outcome.backend_version,
        model_size=outcome.model_size,
        solver_time_s=outcome.solver_time_s,
        time_limit_hit=outcome.time_limit_hit,
        info=outcome.info,
    )


def _incumbents(instance: RarInstance) -> list[tuple[str, RarSchedule, int]]:
    """``(method, schedule, makespan)`` of the cheap heuristics that returned a feasible schedule."""
    from ddlsched.heuristics.rar_baselines import ff, ls
    from ddlsched.heuristics.sjf_bco import sjf_bco

    out = []
    for name, heuristic in (("sjf_bco", sjf_bco), ("ls", ls), ("ff", ff)):
        plan = heuristic(instance)
        if plan.schedule is None:
            continue
        try:
            out.append((name, plan.schedule, evaluate(instance, plan.schedule).makespan))
        except InfeasibleScheduleError:
            continue
    return out


def _presolve(
    instance: RarInstance,
    backend: str,
    deadline: Deadline,
    limits: SolveLimits,
    sources: dict[str, Any],
    searchable: bool,
) -> tuple[list[tuple[str, RarSchedule, int]], float | None, float]:
    """Incumbents (heuristics, ``timeindexed``'s schedule) and ``timeindexed``'s lower bound.

    ``timeindexed`` gets a horizon cut at the best heuristic makespan and a
    fifth of the time limit, at most 10 s, when the MILP (or the search) is
    to use the rest; when the MILP over that horizon would be refused for its
    size (the paper-sized instances), nothing else could use the time, so
    ``timeindexed`` gets all of it (``info['timeindexed_share']``), above
    :data:`FIRST_PLAN_S` in two runs (the module docstring). Returns the
    candidates, the largest bound (``None`` if every run failed) and the
    solver time.
    """
    from ddlsched.models.rar import check_exact_size
    from ddlsched.models.rar_timeindexed import timeindexed

    candidates = _incumbents(instance)
    # The contention-free optimum is at most any schedule's makespan (contention only slows
    # jobs down), so the model's horizon can stop at the best incumbent: the bound stays valid.
    horizon = min((c[2] for c in candidates), default=None)
    ti_deadline = deadline.sub(0.2, at_most=10.0)
    sources["timeindexed_share"] = "a fifth, at most 10 s"
    if horizon is not None and not searchable:
        try:
            check_exact_size(instance, horizon - 1)
        except ModelTooLargeError:
            ti_deadline = deadline
            sources["timeindexed_share"] = "all (the MILP would be refused for its size)"
    plans: list[float | None] = [None]  # None: ti_deadline as it is
    if ti_deadline is deadline and deadline.plan_s > FIRST_PLAN_S:
        # first exactly as at a limit of FIRST_PLAN_S, then the rest (module docstring)
        plans = [FIRST_PLAN_S, deadline.plan_s - FIRST_PLAN_S]
    bound = None
    returned = False
    solver_time_s = 0.0
    for number, plan_s in enumerate(plans, 1):
        if plan_s is None:
            run_deadline = ti_deadline
        elif number == 1:
            run_deadline = deadline.sub(plan_s / deadline.plan_s)
        else:
            if deadline.expired():
                break
            run_deadline = deadline.sub()
            run_deadline.plan_s = plan_s
        try:
            ti = timeindexed(
                instance, backend=backend, limits=limits, horizon=horizon, deadline=run_deadline
            )
        except (TimeLimitReached, ModelTooLargeError) as exc:  # no bound from it, go on
            _record_run(sources, len(plans), run_deadline, None, None, str(exc))
            continue
        returned = True
        makespan = None
        if ti.schedule is not None:
            makespan = evaluate(instance, ti.schedule).makespan
            candidates.append(("timeindexed", ti.schedule, makespan))
            horizon = makespan if horizon is None else min(horizon, makespan)
        if ti.bound is not None:
            bound = ti.bound if bound is None else max(bound, ti.bound)
        solver_time_s += ti.solver_time_s or 0.0
        _record_run(sources, len(plans), run_deadline, makespan, ti.bound, ti.info.get("stopped"))
        if ti.status in (Status.OPTIMAL, Status.INFEASIBLE):
            break
    if not returned:
        return candidates, None, 0.0
    sources["timeindexed_bound"] = bound
    return candidates, bound, solver_time_s


def _record_run(
    sources: dict[str, Any],
    runs: int,
    deadline: Deadline,
    makespan: int | None,
    bound: float | None,
    stopped: str | None,
) -> None:
    """One ``timeindexed`` run of the presolve in ``info['timeindexed_runs']`` (when 2 runs)."""
    if runs < 2:
        return
    entry = {"plan_s": deadline.plan_s, "makespan": makespan, "bound": bound}
    if stopped:
        entry["stopped"] = stopped
    sources.setdefault("timeindexed_runs", []).append(entry)


def _exact_search(
    instance: RarInstance,
    deadline: Deadline,
    candidates: list[tuple[str, RarSchedule, int]],
    lower: float | None,
) -> Outcome:
    """The branch-and-bound of :mod:`ddlsched.models.rar_search` from the presolve's results.

    The search is complete and deterministic, so when it finishes neither
    the answer nor its proof depends on the solver seed (which only the
    presolve's ``timeindexed`` schedule sees). ``info['proof']`` is
    ``bounds`` (a lower bound, the presolve's or the search's root bound,
    meets the best presolve incumbent) or ``search`` (the search finished:
    no schedule beats the one returned); ``info['search']`` holds the node
    count and the root bound. At the deadline the best schedule comes back
    ``feasible`` with the best valid bound.
    """
    from ddlsched.models.rar_bounds import ceil_bound, closed_form_bounds
    from ddlsched.models.rar_search import search_exact, search_schedule
    from ddlsched.solvers.result import Claim

    info: dict[str, Any] = {"proof": None, "exact_method": "search"}
    incumbent = upper = None
    if candidates:
        name, incumbent, upper = min(candidates, key=lambda c: c[2])
        info.update(incumbent_from=name, incumbent_makespan=upper)
    known = [max(closed_form_bounds(instance).values())]
    if lower is not None:
        known.append(ceil_bound(lower))
    floor = int(max(known))
    result = search_exact(instance, upper=upper, lower=floor, deadline=deadline)
    info["search"] = {"nodes": result.nodes, "root_bound": result.root_bound}
    if result.makespan is not None:
        incumbent, upper = search_schedule(instance, result), result.makespan
        info["incumbent_from"] = "search"
    if incumbent is None or upper is None:
        if result.proven:
            info["reason"] = f"no schedule finishes within the horizon T = {instance.horizon}"
            return Outcome(None, Status.INFEASIBLE, info=info)
        outcome = Outcome(None, Status.TIME_LIMIT_NO_SOLUTION, bound=float(result.bound), info=info)
        return mark_stopped(outcome, _search_cut(result))
    if result.proven:
        # "bounds": nothing to search, a lower bound already met the presolve's incumbent
        info["proof"] = "bounds" if result.makespan is None and result.nodes == 0 else "search"
        return Outcome(
            incumbent,
            Status.OPTIMAL,
            bound=float(upper),
            claim=Claim(float(upper), proven=True),
            info=info,
        )
    outcome = Outcome(
        incumbent,
        Status.FEASIBLE,
        bound=float(min(result.bound, upper)),
        claim=Claim(float(upper)),
        info=info,
    )
    return mark_stopped(outcome, _search_cut(result))


def _search_cut(result: Any) -> str:
    """``info['stopped']`` of a search the deadline aborted (a ``SearchResult``)."""
    return f"the branch-and-bound search at the time limit after {result.nodes} nodes"
