"""Family ``rar``: RAR-DDLS, offline makespan of ring-all-reduce jobs under contention.

Paper: SJF-BCO (Yu, Ji, Rajan, Liu, MobiHoc 2022); spec ``docs/families/rar.md``.

Modules of the family:

* problem: :mod:`ddlsched.problems.rar` (instance and its JSON),
  :mod:`ddlsched.problems.rar_timing` (Eqs. 6-9 timing model),
  :mod:`ddlsched.problems.rar_schedule` (schedule, its JSON, the evaluator
  :func:`~ddlsched.problems.rar_schedule.evaluate`);
* workloads: :mod:`ddlsched.workloads.rar` (presets ``small``, ``contention``, ``paper``,
  ``paper-contention``);
* heuristics: :mod:`ddlsched.heuristics.sjf_bco` (Alg. 1-3, Theorem 5),
  :mod:`ddlsched.heuristics.rar_baselines` (FF, LS, RAND),
  :mod:`ddlsched.heuristics.rar_planning` (shared planning machinery),
  :mod:`ddlsched.heuristics.rar_improve` (``improve``, ours);
* models: :mod:`ddlsched.models.rar_exact` (the ``exact`` strategy),
  :mod:`ddlsched.models.rar` (the exact MILP),
  :mod:`ddlsched.models.rar_search` (the exact branch-and-bound),
  :mod:`ddlsched.models.rar_bounds` (``load_lb``, closed forms),
  :mod:`ddlsched.models.rar_contention_bound` (``contention_lb``, ours),
  :mod:`ddlsched.models.rar_lb_timeindexed` (``lb_timeindexed``, ours),
  :mod:`ddlsched.models.rar_lb_binpacking` (``lb_binpacking``, ours),
  :mod:`ddlsched.models.rar_lb_columns` (its columns and Pyomo model),
  :mod:`ddlsched.models.rar_lb_direct` (its direct highspy build),
  :mod:`ddlsched.models.rar_lb_configuration` (``lb_configuration``, ours),
  :mod:`ddlsched.models.rar_lb_rigid` (rigid-and-simultaneous tests of a makespan, ours:
  measured in ``benchmarks/rar_rigid_bounds.py``, not a method: they raise no paper bound),
  :mod:`ddlsched.models.rar_timeindexed` (``timeindexed``, Eqs. 10-13),
  :mod:`ddlsched.models.rar_timegrid` (its slot width, horizon and size),
  :mod:`ddlsched.models.rar_patterns` (placement patterns, GPU mapping),
  :mod:`ddlsched.models.rar_rounding` (``lp_rounding``),
  :mod:`ddlsched.models.rar_cpsat` (``cpsat``, ours),
  :mod:`ddlsched.models.rar_cpsat_search` (its whole solve, then windows),
  :mod:`ddlsched.models.rar_cpsat_windows` (its exact windows),
  :mod:`ddlsched.models.rar_cpsat_whole` (its ``placements=whole`` descent) and
  :mod:`ddlsched.models.rar_cpsat_plan` (its plans: hint and GPU ids);
* the methods' parameter classes: :mod:`ddlsched.families._rar_params`; ``cpsat``'s
  search dispatch: :mod:`ddlsched.families._rar_cpsat`.

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
* ``improve`` (heuristic, ours; :mod:`ddlsched.heuristics.rar_improve`):
  the best of the starts (``sjf_bco``, ``ff``, ``ls``; with ``starts=all``
  also ``timeindexed`` within ``timeindexed_share`` of the limit), improved by
  a seeded LNS over priority lists decoded by a list scheduler on GPU
  availability, every candidate scored by the evaluator (parameters
  ``starts``, ``iterations``, ``patience``, ``window``); it stops early at
  the closed-form bound (``info['lower_bound']``), never returns worse than
  its best start, and is the same for the same seed unless the time limit
  stops it; why the search ended is ``info['search_stopped']``
  (``iterations``, ``stalled``, ``bound``, ``time limit``).
* ``exact``: with ``presolve_bounds`` (default) the cheap heuristics
  (``sjf_bco``, ``ls``, ``ff``) and ``timeindexed`` (a fifth of the time
  limit, at most 10 s; all of it when the MILP would be refused for its
  size and no search applies, e.g. the paper preset; above 120 s first as
  at 120 s) supply an incumbent and a lower bound first. Then,
  on instances within its limits (``floor`` rule, <= 8 jobs, <= 4 servers,
  <= 16 GPUs; param ``search``), the contention-aware branch-and-bound of
  :mod:`ddlsched.models.rar_search` (half of the time left; it is complete
  and deterministic, so a finished search does not depend on the seed);
  elsewhere, or if the search did not finish, the MILP with contention,
  which only has to rule out shorter schedules. ``info['exact_method']``
  says which ran last; ``info['proof']``: ``search``, ``bounds``, ``milp``
  or ``no_shorter_schedule``; ``info['schedule_from']``: the schedule
  returned, never worse than any in hand (:mod:`ddlsched.models.rar_exact`).
* ``timeindexed`` (bound): the contention-free pattern ILP, a valid lower
  bound and an evaluated schedule; ``load_lb`` (bound): Problem (14) and the
  closed forms; ``contention_lb`` (bound, ours): the maximum of ``load_lb`` and
  two bounds that charge contention (Eqs. 6-8) to the rings that must be split
  (``G_j`` above every server), parts in ``info['components']``. ``slot_width`` and ``max_patterns`` default to ``auto``: chosen
  from the instance, the memory budget and the time limit
  (:func:`ddlsched.models.rar_timegrid.choose_grid`), recorded in ``info``.
* ``lb_timeindexed`` (bound, ours): the time-indexed LP relaxation with
  makespan rows that see every window (capacity times an "open" share
  ``y[K]`` of each window, tail rows per job), a valid lower bound at any slot
  width (proof in :mod:`ddlsched.models.rar_lb_timeindexed`); the finest
  width whose LP fits ``memory_mb`` and the time left; horizons probed from the
  closed forms upwards (an infeasible LP on ``H`` proves ``T* > H``). Built
  in Pyomo when small, else directly for highspy (the same LP).
* ``lb_binpacking`` (bound, ours): each GPU a bin of capacity ``C``, each job
  ``G_j`` items of its shortest duration (split duration on a server class it
  does not fit unsplit); the least ``C`` neither arc-flow LP (pooled, rounded
  up; per class) refutes (proof in :mod:`ddlsched.models.rar_lb_binpacking`).
* ``lb_configuration`` (bound, ours): the configuration LP (the rings running in
  one slot fit the servers' GPUs, each at its fastest rate there), solved by column
  generation within ``rounds`` pricing MILPs; Farley's bound at every round (proof in
  :mod:`ddlsched.models.rar_lb_configuration`).
* ``cpsat`` (bound + schedule, ours): CP-SAT over every placement (GPUs per server,
  interval per server part, per-server cumulatives), lengths from Eq. (9) at the
  largest contention level that is inert (a split cap per server keeps it there
  where contention acts), hinted with ``improve``'s schedule (``improve_iterations``),
  budget ``work`` in CP-SAT's deterministic time, ``workers`` interleaved
  (deterministic). The decoded schedule is never worse than the model's makespan;
  the better of it and the hint is returned. CP-SAT's bound is reported only where the
  model is a relaxation (no split cap: ``paper``; proof in the module),
  else ``info['model_bound']`` only. ``placements=whole``: rings on one server only,
  a satisfaction model at a target makespan, galloping below the hint's makespan then
  bisecting (``first_work``, then ``target_work`` per target, ``max_targets`` solves;
  ``info['whole_targets']``); a restriction, so no bound.
* ``lp_rounding`` (bound + schedule): the LP relaxation of the same model (its
  ceiling, times the slot width, is a certified bound) and the best of
  ``trials`` seeded alpha-point roundings, executed by the evaluator
  (:mod:`ddlsched.models.rar_rounding`).

At the time limit (``time_limit_hit`` whenever the limit cut something, and
then only, with ``info['stopped']`` naming what it cut; absent otherwise):
``load_lb`` and ``contention_lb`` keep the closed forms and the Problem (14)
solver's bound so far (the model's solve named); ``timeindexed`` keeps its
bound and any evaluated schedule (each cut model named, per pass when it
makes two); ``lp_rounding`` the closed forms and the roundings done (the
rounding LP named); ``exact`` its best schedule and bound, ``feasible`` (the
branch-and-bound's node count, or the MILP solve, named), or
``time_limit_no_solution``; ``improve`` its best schedule (the list search or
the starts the limit cut named); ``cpsat`` the better of its hint and CP-SAT's incumbent,
with CP-SAT's bound where valid (the hint's run or the CP-SAT search named); ``lb_timeindexed`` the closed forms (the
preparation or the LP named). The Pyomo-backed methods import their model
module within the deadline (:func:`ddlsched.deadline.import_within`): a cold import
(Pyomo and the module: 2-7 s at load 11) that the limit cuts gives
``time_limit_no_solution`` at the limit, naming the import, instead of a run
seconds past a small limit.
"""

from __future__ import annotations

from typing import Any

from ddlsched.deadline import import_within
from ddlsched.families._rar_cpsat import cpsat_method_search, makespan_within_horizon
from ddlsched.families._rar_params import (
    BaselineParams,
    CpsatParams,
    ExactParams,
    ImproveParams,
    LbConfigurationParams,
    LbTimeIndexedParams,
    LoadLbParams,
    LpRoundingParams,
    SjfBcoParams,
    TimeIndexedParams,
)
from ddlsched.params import NoParams
from ddlsched.problems.rar import RarInstance
from ddlsched.problems.rar_schedule import (
    RarEvaluation,
    evaluate,
    schedule_from_json,
    schedule_to_json,
)
from ddlsched.registry import Family, RunContext, register_family, register_method
from ddlsched.solvers.limits import SolveLimits
from ddlsched.solvers.result import Outcome, Status
from ddlsched.workloads.rar import PRESET_PARAMS, PRESETS, generate

__all__ = ["FAMILY"]


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


def _run_start(instance: RarInstance, name: str, ctx: RunContext, deadline, share: float):
    """One start of ``improve``: its schedule (or ``None``) and whether the limit cut it."""
    from ddlsched.errors import ModelTooLargeError, TimeLimitReached
    from ddlsched.heuristics.rar_baselines import ff, ls
    from ddlsched.heuristics.sjf_bco import sjf_bco

    if name != "timeindexed":
        return {"sjf_bco": sjf_bco, "ff": ff, "ls": ls}[name](instance).schedule, False
    try:
        import_within("ddlsched.models.rar_timeindexed", deadline, "improve's timeindexed start")
        from ddlsched.models.rar_timeindexed import timeindexed

        outcome = timeindexed(
            instance,
            backend=ctx.backend,
            limits=SolveLimits(seed=ctx.seed),
            deadline=deadline.sub(share=share),
        )
    except (TimeLimitReached, ModelTooLargeError):
        return None, True
    return outcome.schedule, outcome.time_limit_hit


@register_method(
    "rar",
    "improve",
    "heuristic",
    "ours: best start (sjf_bco, ff, ls; timeindexed) improved by LNS over decoded priority lists",
    params=ImproveParams,
)
def _improve(instance: RarInstance, params: ImproveParams, ctx: RunContext) -> Outcome:
    schedule, info, cut = _improve_run(instance, params, ctx, ctx.deadline)
    return Outcome(
        schedule, info=info, time_limit_hit=cut, no_solution_failures=("horizon_overrun",)
    )


def _improve_run(instance: RarInstance, params: ImproveParams, ctx: RunContext, deadline):
    """``improve``'s schedule, ``info`` and whether the limit cut it (``improve``, ``cpsat``)."""
    from ddlsched.heuristics.rar_improve import ImproveSettings, improve, parse_starts
    from ddlsched.models.rar_bounds import closed_form_bounds

    lower = int(max(closed_form_bounds(instance).values()))
    settings = ImproveSettings(
        starts=parse_starts(params.starts),
        iterations=params.iterations,
        patience=params.patience,
        window=params.window,
        seed=ctx.seed,
        lower_bound=lower,
    )
    schedule, info, cut = improve(
        instance,
        settings,
        lambda name, limit: _run_start(instance, name, ctx, limit, params.timeindexed_share),
        deadline,
    )
    info["lower_bound"] = lower
    return schedule, info, cut


@register_method(
    "rar",
    "cpsat",
    "bound",
    "ours: CP-SAT over every placement (GPUs per server), hinted with improve; "
    "a valid bound where contention is inert (placements=whole: whole rings at "
    "galloping target makespans, no bound)",
    params=CpsatParams,
)
def _cpsat(instance: RarInstance, params: CpsatParams, ctx: RunContext) -> Outcome:
    """``cpsat`` (:mod:`ddlsched.models.rar_cpsat`; the family docstring)."""
    from ddlsched.solvers.result import Claim, mark_stopped

    hint, info, stopped = None, {}, []
    if params.hint == "improve":
        improve_params = ImproveParams(iterations=params.improve_iterations)
        hint, improve_info, cut = _improve_run(
            instance, improve_params, ctx, ctx.deadline.sub(share=0.3)
        )
        info["improve_makespan"] = improve_info["lns_makespan"]
        if cut:
            stopped.append(f"the improve hint ({improve_info['stopped']})")
        if ctx.deadline.expired() and hint is not None:  # no time for OR-Tools: the hint
            info["winner"] = "improve"
            stopped.append("no time left for the CP-SAT search")
            outcome = Outcome(hint, info=info, no_solution_failures=("horizon_overrun",))
            return mark_stopped(outcome, *stopped)
    found = cpsat_method_search(instance, params, ctx, hint)
    info.update(found.info, model_makespan=found.makespan, model_bound=found.model_bound)
    if found.time_limit_hit:
        stopped.append("the CP-SAT search at the time limit")
    hint_makespan = makespan_within_horizon(instance, hint)
    found_makespan = makespan_within_horizon(instance, found.schedule)
    use_hint = hint_makespan is not None and (
        found_makespan is None or hint_makespan < found_makespan
    )
    info["winner"] = "improve" if use_hint else ("cpsat" if found.schedule is not None else None)
    common = dict(backend="cpsat", backend_version=found.version, model_size=found.model_size)
    common["solver_time_s"] = found.runtime_s
    if use_hint:
        outcome = Outcome(hint, bound=found.bound, info=info, **common)
    elif found.schedule is not None:
        outcome = Outcome(
            found.schedule,
            Status.OPTIMAL if found.proven else Status.FEASIBLE,
            bound=found.bound,
            claim=Claim(float(found.makespan), proven=found.proven),
            info=info,
            no_solution_failures=("horizon_overrun",),
            **common,
        )
    elif found.time_limit_hit:  # stopped by the clock: nothing said about T
        info["reason"] = "CP-SAT found no schedule before the time limit"
        outcome = Outcome(None, Status.TIME_LIMIT_NO_SOLUTION, info=info, **common)
    else:
        why = "none exists" if found.status is Status.INFEASIBLE else "its work budget ran out"
        info["reason"] = f"CP-SAT found no schedule within T = {instance.horizon} ({why})"
        outcome = Outcome(None, Status.NO_SOLUTION, info=info, **common)
    return mark_stopped(outcome, *stopped)


# --------------------------------------------------------------------------- formulations


@register_method(
    "rar",
    "exact",
    "exact",
    "contention-aware branch-and-bound on small instances, else the time-indexed MILP",
    params=ExactParams,
)
def _exact(instance: RarInstance, params: ExactParams, ctx: RunContext) -> Outcome:
    """``exact`` (:func:`ddlsched.models.rar_exact.exact`, the module docstring)."""
    import_within("ddlsched.models.rar_exact", ctx.deadline, "rar exact")
    from ddlsched.models.rar_exact import exact

    return exact(
        instance,
        backend=ctx.backend,
        seed=ctx.seed,
        deadline=ctx.deadline,
        presolve_bounds=params.presolve_bounds,
        cross_check=params.cross_check,
        search=params.search,
    )


@register_method(
    "rar",
    "timeindexed",
    "bound",
    "pattern x start-slot ILP, contention-free: lower bound + evaluated schedule",
    params=TimeIndexedParams,
)
def _timeindexed(instance: RarInstance, params: TimeIndexedParams, ctx: RunContext) -> Outcome:
    import_within("ddlsched.models.rar_timeindexed", ctx.deadline, "rar timeindexed")
    from ddlsched.models.rar_timeindexed import timeindexed

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
    import_within("ddlsched.models.rar_bounds", ctx.deadline, "rar load_lb")
    from ddlsched.models.rar_bounds import load_lb

    return load_lb(
        instance,
        backend=ctx.backend,
        limits=SolveLimits(seed=ctx.seed),
        max_patterns=params.max_patterns,
        deadline=ctx.deadline,
    )


@register_method(
    "rar",
    "contention_lb",
    "bound",
    "max of load_lb and two contention-aware bounds on the must-split rings (ours)",
    params=LoadLbParams,
)
def _contention_lb(instance: RarInstance, params: LoadLbParams, ctx: RunContext) -> Outcome:
    import_within("ddlsched.models.rar_contention_bound", ctx.deadline, "rar contention_lb")
    from ddlsched.models.rar_contention_bound import contention_lb

    return contention_lb(
        instance,
        backend=ctx.backend,
        limits=SolveLimits(seed=ctx.seed),
        max_patterns=params.max_patterns,
        deadline=ctx.deadline,
    )


@register_method(
    "rar",
    "lb_binpacking",
    "bound",
    "gang bin-packing bound: GPUs as bins of the makespan, arc-flow LPs per server class (ours)",
)
def _lb_binpacking(instance: RarInstance, params: NoParams, ctx: RunContext) -> Outcome:
    import_within("ddlsched.models.rar_lb_binpacking", ctx.deadline, "rar lb_binpacking")
    from ddlsched.models.rar_lb_binpacking import lb_binpacking

    return lb_binpacking(instance, deadline=ctx.deadline)


@register_method(
    "rar",
    "lb_configuration",
    "bound",
    "configuration LP: the rings running at one moment fit the servers, by column generation (ours)",
    params=LbConfigurationParams,
)
def _lb_configuration(
    instance: RarInstance, params: LbConfigurationParams, ctx: RunContext
) -> Outcome:
    import_within("ddlsched.models.rar_lb_configuration", ctx.deadline, "rar lb_configuration")
    from ddlsched.models.rar_lb_configuration import lb_configuration

    return lb_configuration(
        instance, rounds=params.rounds, pricing_nodes=params.pricing_nodes, deadline=ctx.deadline
    )


@register_method(
    "rar",
    "lb_timeindexed",
    "bound",
    "time-indexed LP relaxation at the finest slot width that fits memory (ours)",
    params=LbTimeIndexedParams,
)
def _lb_timeindexed(instance: RarInstance, params: LbTimeIndexedParams, ctx: RunContext) -> Outcome:
    import_within("ddlsched.models.rar_lb_timeindexed", ctx.deadline, "rar lb_timeindexed")
    from ddlsched.models.rar_lb_timeindexed import lb_timeindexed

    return lb_timeindexed(
        instance,
        backend=ctx.backend,
        limits=SolveLimits(seed=ctx.seed),
        slot_width=params.slot_width,
        max_patterns=params.max_patterns,
        memory_mb=params.memory_mb,
        build=params.build,
        horizon=params.horizon,
        deadline=ctx.deadline,
    )


@register_method(
    "rar",
    "lp_rounding",
    "bound",
    "LP relaxation of the pattern x start ILP (certified bound) + best of seeded roundings",
    params=LpRoundingParams,
)
def _lp_rounding(instance: RarInstance, params: LpRoundingParams, ctx: RunContext) -> Outcome:
    import_within("ddlsched.models.rar_rounding", ctx.deadline, "rar lp_rounding")
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
