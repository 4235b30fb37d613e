"""Family ``rar``: RAR-DDLS, offline makespan of ring-all-reduce jobs under contention.

Paper: SJF-BCO (seeds 000/001, MobiHoc 2022); spec ``shared/specs/rar.md``.

Modules of the family:

* problem: :mod:`ddlsched.problems.rar` (instance, Eq. 8 timing, schedule,
  the evaluator :func:`~ddlsched.problems.rar.evaluate`);
* workloads: :mod:`ddlsched.workloads.rar` (presets ``small``, ``contention``, ``paper``,
  ``paper-contention``);
* heuristics: :mod:`ddlsched.heuristics.sjf_bco` (Alg. 1-3, Theorem 5),
  :mod:`ddlsched.heuristics.rar_baselines` (FF, LS, RAND),
  :mod:`ddlsched.heuristics.rar_planning` (shared planning machinery);
* models: :mod:`ddlsched.models.rar` (the exact MILP),
  :mod:`ddlsched.models.rar_search` (the exact branch-and-bound) and
  :mod:`ddlsched.models.rar_bounds` (``timeindexed``, ``load_lb``, closed forms).

Methods (all minimise the makespan in slots, as executed by the evaluator):

* ``sjf_bco``, ``ff``, ``ls``, ``rand`` (heuristics): the evaluated makespan
  is the objective; the heuristic's own estimate goes to
  ``info['estimated_makespan']``. ``info`` also records ``theta`` (the
  recorded bisection limit; ``T`` for ``rand``), ``kappa`` (``sjf_bco``),
  ``max_accumulated`` (``W_max`` of Lemma 2), ``theorem5_bound`` (the
  per-instance factor of Theorem 5, parts in ``theorem5``;
  ``theorem5_applies`` says whether the theorem covers the method) and
  ``probes`` (every bisection probe ``(theta, m_theta)``). A heuristic can
  fail on a tight horizon: no ``theta`` gives a complete pass below ``T``
  (``failure = 'no_schedule'``), or the executed schedule overruns ``T``
  (``failure = 'horizon_overrun'``, the schedule attached and
  ``info['makespan_beyond_horizon']`` its makespan without the horizon).
  Both are status ``no_solution`` (a result, not a failure) with no
  objective and the reason in ``info['reason']``.
* ``exact``: with ``presolve_bounds`` (default) the cheap heuristics
  (``sjf_bco``, ``ls``, ``ff``) and ``timeindexed`` (a fifth of the time
  limit, at most 10 s; all of it when the MILP would be refused for its
  size and no search applies, e.g. the paper preset) supply an incumbent
  and a lower bound first. Then,
  on instances within its limits (``floor`` rule, <= 8 jobs, <= 4 servers,
  <= 16 GPUs; param ``search``), the contention-aware branch-and-bound of
  :mod:`ddlsched.models.rar_search` (half of the time left; it is complete
  and deterministic, so a finished search does not depend on the seed);
  elsewhere, or if the search did not finish, the MILP with contention,
  which only has to rule out shorter schedules. ``info['exact_method']``
  says which ran last; ``info['proof']``: ``search``, ``bounds``, ``milp``
  or ``no_shorter_schedule``.
* ``timeindexed`` (bound): the contention-free pattern ILP, a valid lower
  bound and an evaluated schedule; ``load_lb`` (bound): Problem (14) and the
  closed forms. ``slot_width`` and ``max_patterns`` default to ``auto``: chosen
  from the instance, the memory budget and the time limit
  (:func:`ddlsched.models.rar_bounds.choose_grid`), recorded in ``info``.
* ``lp_rounding`` (bound + schedule): the LP relaxation of the same model (its
  ceiling, times the slot width, is a certified bound) and the best of
  ``trials`` seeded alpha-point roundings, executed by the evaluator
  (:mod:`ddlsched.models.rar_rounding`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ddlsched.deadline import Deadline
from ddlsched.errors import InfeasibleScheduleError, ModelTooLargeError, TimeLimitReached
from ddlsched.params import NoParams, param
from ddlsched.problems.rar import (
    MAX_GPUS,
    RarEvaluation,
    RarInstance,
    RarSchedule,
    evaluate,
    schedule_from_json,
    schedule_to_json,
)
from ddlsched.registry import Family, RunContext, register_family, register_method
from ddlsched.solvers.limits import SolveLimits
from ddlsched.solvers.result import Outcome, Status
from ddlsched.workloads.rar import PRESET_PARAMS, PRESETS, generate

__all__ = ["FAMILY"]

_BISECTION = ("paper", "tightest")


def _summary(evaluation: RarEvaluation) -> dict[str, Any]:
    return {
        "average_completion": evaluation.average_completion,
        "utilisation": evaluation.utilisation,
    }


FAMILY = register_family(
    Family(
        name="rar",
        sense="min",
        objective_name="makespan (slots)",
        load=RarInstance.load,
        from_dict=RarInstance.from_dict,
        generate=generate,
        presets=tuple(PRESETS),
        preset_params=PRESET_PARAMS,
        evaluate=evaluate,
        objective=lambda evaluation: float(evaluation.makespan),
        evaluation_summary=_summary,
        schedule_to_json=schedule_to_json,
        schedule_from_json=schedule_from_json,
        smoke=("small", {}),
        size=lambda instance: len(instance.jobs),
        summary="RAR-DDLS: offline makespan of ring-all-reduce jobs under contention",
    )
)


# --------------------------------------------------------------------------- heuristics


@dataclass(frozen=True)
class BaselineParams:
    """Parameters of the bisected baselines (FF, LS) and of SJF-BCO."""

    u: float = param(
        1.0, "scale of the estimate: U += rho_hat / u", minimum=0.0, exclusive_minimum=True
    )
    p_est: int = param(
        1, "contention level assumed when estimating durations", minimum=0, maximum=MAX_GPUS
    )
    bisection: str = param("paper", "theta bisection rule", choices=_BISECTION)


@dataclass(frozen=True)
class SjfBcoParams(BaselineParams):
    kappa: int | None = param(
        None, "fix kappa (None: Alg. 1 loops 1..max G_j)", minimum=1, maximum=MAX_GPUS
    )
    lambda_: float | dict[str, float] = param(
        1.0, "LBSGF weight (Alg. 3), for every job or per job id", minimum=1.0
    )


def _plan_outcome(instance: RarInstance, plan, *, u: float = 1.0, p_est: int = 1) -> Outcome:
    """A heuristic's plan as an outcome (the pipeline executes and evaluates its schedule)."""
    from ddlsched.heuristics.sjf_bco import theorem5_bound

    bound5 = theorem5_bound(instance, u=u, p_est=p_est)
    info: dict[str, Any] = {
        "theta": plan.theta,
        "estimated_makespan": plan.estimated_makespan,
        "max_accumulated": plan.max_accumulated,
        "theorem5_bound": bound5.bound,
        "theorem5": bound5.to_dict(),
        "theorem5_applies": plan.method == "sjf_bco",
        "probes": [list(p) for p in plan.probes],
        "params": dict(plan.params),
    }
    if plan.method == "sjf_bco":
        info["kappa"] = plan.kappa
    if plan.schedule is None:
        info.update(
            failure="no_schedule",
            reason=f"{plan.method} found no complete schedule with estimated makespan below "
            f"the horizon T = {instance.horizon}",
        )
        return Outcome(None, Status.NO_SOLUTION, info=info)
    # executed, the plan may overrun T: no schedule within the horizon, not a bug
    return Outcome(plan.schedule, info=info, no_solution_failures=("horizon_overrun",))


@register_method(
    "rar",
    "sjf_bco",
    "heuristic",
    "SJF-BCO (Alg. 1-3): bisection on theta, FA-FFP for G_j <= kappa, LBSGF otherwise",
    params=SjfBcoParams,
)
def _sjf_bco(instance: RarInstance, params: SjfBcoParams, ctx: RunContext) -> Outcome:
    from ddlsched.heuristics.sjf_bco import sjf_bco

    plan = sjf_bco(
        instance,
        kappa=params.kappa,
        lambda_=params.lambda_,
        u=params.u,
        p_est=params.p_est,
        bisection=params.bisection,
    )
    return _plan_outcome(instance, plan, u=params.u, p_est=params.p_est)


@register_method(
    "rar",
    "ff",
    "heuristic",
    "First Fit baseline: first G_j available GPUs in server order, bisection on theta",
    params=BaselineParams,
)
def _ff(instance: RarInstance, params: BaselineParams, ctx: RunContext) -> Outcome:
    from ddlsched.heuristics.rar_baselines import ff

    plan = ff(instance, u=params.u, p_est=params.p_est, bisection=params.bisection)
    return _plan_outcome(instance, plan, u=params.u, p_est=params.p_est)


@register_method(
    "rar",
    "ls",
    "heuristic",
    "List Scheduling baseline: least-loaded available GPUs cluster-wide, bisection on theta",
    params=BaselineParams,
)
def _ls(instance: RarInstance, params: BaselineParams, ctx: RunContext) -> Outcome:
    from ddlsched.heuristics.rar_baselines import ls

    plan = ls(instance, u=params.u, p_est=params.p_est, bisection=params.bisection)
    return _plan_outcome(instance, plan, u=params.u, p_est=params.p_est)


@register_method(
    "rar",
    "rand",
    "heuristic",
    "Random baseline: theta = T, a uniformly random subset of the available GPUs (seeded)",
)
def _rand(instance: RarInstance, params: NoParams, ctx: RunContext) -> Outcome:
    from ddlsched.heuristics.rar_baselines import rand

    return _plan_outcome(instance, rand(instance, ctx.seed))


# --------------------------------------------------------------------------- formulations


@dataclass(frozen=True)
class ExactParams:
    presolve_bounds: bool = param(
        True, "incumbent from the heuristics and timeindexed, lower bound from timeindexed"
    )
    cross_check: bool = param(False, "re-solve a proven answer with the other backend")
    search: str = param(
        "auto",
        "contention-aware branch-and-bound (models/rar_search.py): auto = on instances within "
        "its size limits (floor rule, <= 8 jobs, <= 4 servers, <= 16 GPUs), else the MILP; "
        "always = refuse larger instances; never = the MILP only",
        choices=("auto", "always", "never"),
    )


@dataclass(frozen=True)
class GridParams:
    """The time-indexed model's grid, shared by ``timeindexed`` and ``lp_rounding``."""

    slot_width: int | str = param(
        "auto",
        "slots aggregated into one model slot ('auto': the finest that fits memory and time)",
        minimum=1,
        maximum=10_000_000,
        choices=("auto",),
    )
    max_patterns: int | str = param(
        "auto",
        "patterns per job before it gets one pooled column ('auto': 64, fewer if nothing fits)",
        minimum=1,
        maximum=100_000,
        choices=("auto",),
    )


@dataclass(frozen=True)
class TimeIndexedParams(GridParams):
    contention: str = param(
        "free", "durations: contention-free (a valid bound) or worst", choices=("free", "worst")
    )


@dataclass(frozen=True)
class LoadLbParams:
    max_patterns: int = param(
        64, "patterns per job before it gets one pooled column", minimum=1, maximum=100_000
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


@register_method(
    "rar",
    "exact",
    "exact",
    "contention-aware branch-and-bound on small instances, else the time-indexed MILP",
    params=ExactParams,
)
def _exact(instance: RarInstance, params: ExactParams, ctx: RunContext) -> Outcome:
    """``exact``: presolve bounds, then the search where it applies, then the MILP.

    With ``search`` ``auto`` the branch-and-bound gets half of the time left
    after the presolve and the MILP the rest if the search did not finish;
    with ``always`` the search gets all of it (and a larger instance is
    refused); with ``never`` only the MILP runs.
    """
    from ddlsched.models.rar import solve_exact
    from ddlsched.models.rar_search import check_search_size

    use_search = params.search != "never"
    if use_search:
        try:
            check_search_size(instance)
        except ModelTooLargeError:
            if params.search == "always":
                raise
            use_search = False
    limits = SolveLimits(seed=ctx.seed)
    candidates: list[tuple[str, RarSchedule, int]] = []
    lower = None
    sources: dict[str, Any] = {}
    presolve_time_s = 0.0
    if params.presolve_bounds:
        candidates, lower, presolve_time_s = _presolve(instance, ctx, limits, sources, use_search)
    if use_search:
        share = 1.0 if params.search == "always" else 0.5
        outcome = _exact_search(instance, ctx.deadline.sub(share), candidates, lower)
        outcome.info = {**sources, **outcome.info}
        if presolve_time_s:
            outcome.solver_time_s = presolve_time_s
        if outcome.status in (Status.OPTIMAL, Status.INFEASIBLE) or params.search == "always":
            return outcome
        # the search ran out of its share: hand its incumbent and bound to the MILP
        sources["search"] = outcome.info["search"]
        if outcome.schedule is not None and outcome.claim is not None:
            candidates = [("search", outcome.schedule, int(outcome.claim.value))]
        lower = outcome.bound
    incumbent = None
    if candidates:
        name, incumbent, _ = min(candidates, key=lambda c: c[2])
        sources["incumbent_from"] = name
    sources["exact_method"] = "milp"
    outcome = solve_exact(
        instance,
        backend=ctx.backend,
        limits=limits,
        incumbent=incumbent,
        lower_bound=lower,
        cross_check=params.cross_check,
        deadline=ctx.deadline,
    )
    outcome.info = {**sources, **outcome.info}
    if presolve_time_s:
        outcome.solver_time_s = (outcome.solver_time_s or 0.0) + presolve_time_s
    return outcome


def _presolve(
    instance: RarInstance,
    ctx: RunContext,
    limits: SolveLimits,
    sources: dict[str, Any],
    searchable: bool,
) -> tuple[list[tuple[str, RarSchedule, int]], float | None, float]:
    """Incumbents (heuristics, ``timeindexed``'s schedule) and ``timeindexed``'s lower bound.

    ``timeindexed`` gets a horizon cut at the best heuristic makespan and a
    fifth of the time limit, at most 10 s, when the MILP (or the search) is
    to use the rest; when the MILP over that horizon would be refused for its
    size (the paper-sized instances), nothing else could use the time, so
    ``timeindexed`` gets all of it (``info['timeindexed_share']``). Returns
    the candidates, the bound (``None`` if it failed) and its solver time.
    """
    from ddlsched.models.rar import check_exact_size
    from ddlsched.models.rar_bounds import timeindexed

    candidates = _incumbents(instance)
    # The contention-free optimum is at most any schedule's makespan (contention only slows
    # jobs down), so the model's horizon can stop at the best incumbent: the bound stays valid.
    horizon = min((c[2] for c in candidates), default=None)
    deadline = ctx.deadline.sub(0.2, at_most=10.0)
    sources["timeindexed_share"] = "a fifth, at most 10 s"
    if horizon is not None and not searchable:
        try:
            check_exact_size(instance, horizon - 1)
        except ModelTooLargeError:
            deadline = ctx.deadline
            sources["timeindexed_share"] = "all (the MILP would be refused for its size)"
    try:
        ti = timeindexed(
            instance,
            backend=ctx.backend,
            limits=limits,
            horizon=horizon,
            deadline=deadline,
        )
    except (TimeLimitReached, ModelTooLargeError):  # no bound from it, go on
        return candidates, None, 0.0
    sources["timeindexed_bound"] = ti.bound
    if ti.schedule is not None:
        makespan = evaluate(instance, ti.schedule).makespan
        candidates.append(("timeindexed", ti.schedule, makespan))
    return candidates, ti.bound, ti.solver_time_s or 0.0


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
        return Outcome(
            None,
            Status.TIME_LIMIT_NO_SOLUTION,
            bound=float(result.bound),
            info=info,
            time_limit_hit=True,
        )
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
    return Outcome(
        incumbent,
        Status.FEASIBLE,
        bound=float(min(result.bound, upper)),
        claim=Claim(float(upper)),
        info=info,
        time_limit_hit=True,
    )


@register_method(
    "rar",
    "timeindexed",
    "bound",
    "pattern x start-slot ILP, contention-free: lower bound + evaluated schedule",
    params=TimeIndexedParams,
)
def _timeindexed(instance: RarInstance, params: TimeIndexedParams, ctx: RunContext) -> Outcome:
    from ddlsched.models.rar_bounds import timeindexed

    return timeindexed(
        instance,
        backend=ctx.backend,
        limits=SolveLimits(seed=ctx.seed),
        slot_width=params.slot_width,
        contention=params.contention,
        max_patterns=params.max_patterns,
        deadline=ctx.deadline,
    )


@register_method(
    "rar",
    "load_lb",
    "bound",
    "Problem (14) max-GPU-load bound and closed-form bounds (lower bounds only)",
    params=LoadLbParams,
)
def _load_lb(instance: RarInstance, params: LoadLbParams, ctx: RunContext) -> Outcome:
    from ddlsched.models.rar_bounds import load_lb

    return load_lb(
        instance,
        backend=ctx.backend,
        limits=SolveLimits(seed=ctx.seed),
        max_patterns=params.max_patterns,
        deadline=ctx.deadline,
    )


@dataclass(frozen=True)
class LpRoundingParams(GridParams):
    trials: int = param(
        32, "randomized roundings of the LP solution (seeded by --seed)", minimum=1, maximum=100_000
    )
    delta: float = param(
        0.0, "round an LP with capacities scaled by 1/(1+delta) (0: the bound LP)", minimum=0.0
    )


@register_method(
    "rar",
    "lp_rounding",
    "bound",
    "LP relaxation of the pattern x start ILP (certified bound) + best of seeded roundings",
    params=LpRoundingParams,
)
def _lp_rounding(instance: RarInstance, params: LpRoundingParams, ctx: RunContext) -> Outcome:
    from ddlsched.models.rar_rounding import lp_rounding

    return lp_rounding(
        instance,
        backend=ctx.backend,
        limits=SolveLimits(seed=ctx.seed),
        trials=params.trials,
        seed=ctx.seed,
        slot_width=params.slot_width,
        max_patterns=params.max_patterns,
        delta=params.delta,
        deadline=ctx.deadline,
    )
