"""Family ``asrpt``: A-SRPT and its baselines online, against offline optima and bounds.

Paper: "Prediction-Assisted Online Distributed Deep Learning Workload
Scheduling in GPU Clusters" (Luo, Liu, Lee, Shroff), Sections III, IV-C and V; spec
``docs/families/asrpt.md``.

Modules of the family:

* problem: :mod:`ddlsched.problems.asrpt` (instance with its JSON form,
  ``load``/``save``; the timing model ``alpha_i`` of Eqs. 4-7,
  :func:`~ddlsched.problems.asrpt.job_alpha`; the prediction error, Eq. 9)
  and :mod:`ddlsched.problems.asrpt_schedule` (schedule, the evaluator
  :func:`~ddlsched.problems.asrpt_schedule.evaluate`: ``sum C_i`` of Eq. 8
  and the metrics, the schedule's JSON form);
* workloads: :mod:`ddlsched.workloads.asrpt` (presets; ``tiny`` and
  ``tiny-comm``, where ``B_intra > B_inter`` makes delay windows open),
  :mod:`ddlsched.workloads.asrpt_traces` (``trace``, ``testbed``,
  ``paper``), :mod:`ddlsched.workloads.asrpt_window` (their window
  pipeline), :mod:`ddlsched.workloads.asrpt_trace_table` (a trace as one
  sorted table), :mod:`ddlsched.workloads.asrpt_pool` (model pool),
  :mod:`ddlsched.workloads.asrpt_predict` (predictors),
  :mod:`ddlsched.workloads.asrpt_mutate` (mutation moves of the worst-case
  search), :mod:`ddlsched.workloads.traces` and :mod:`ddlsched.workloads.pai`
  (trace readers);
* heuristics: :mod:`ddlsched.heuristics.asrpt_config` (``alpha~_min``,
  ``alpha_max``, cached Heavy-Edge), :mod:`ddlsched.heuristics.asrpt`
  (A-SRPT, Algorithm 1, and the policy factory),
  :mod:`ddlsched.heuristics.asrpt_baselines` (the five baselines),
  :mod:`ddlsched.heuristics.asrpt_policy` (the policies' protocol, their
  shared selection + Heavy-Edge, the job table),
  :mod:`ddlsched.heuristics.asrpt_cluster` (free GPUs per server, server
  selection), :mod:`ddlsched.heuristics.asrpt_virtual` (the virtual machine
  ``A~1``), :mod:`ddlsched.heuristics.asrpt_arrival` (the queue of
  ``eligibility = arrival``), :mod:`ddlsched.heuristics.asrpt_diagnostics`
  (hold-back, queueing, virtual work, utilisation of a run),
  :mod:`ddlsched.heuristics.srpt`, :mod:`ddlsched.heuristics.asrpt_packed`
  (packed list schedules, ours), :mod:`ddlsched.heuristics.asrpt_greedy`
  (offline work-conserving packed schedules, ours) and
  :mod:`ddlsched.heuristics.asrpt_improve` (``improve``, ours);
* models: :mod:`ddlsched.models.asrpt` (``alpha_lb``, ``lb_sum``,
  ``lb_srpt``), :mod:`ddlsched.models.asrpt_exact` (``exact``, the
  strategy), :mod:`ddlsched.models.asrpt_modes` (usage vectors,
  ``alpha*(u)``), :mod:`ddlsched.models.asrpt_integer` (integer data,
  greedy incumbent, clique cuts), :mod:`ddlsched.models.asrpt_cpsat` (the
  CP-SAT model), :mod:`ddlsched.models.asrpt_milp` (the time-indexed MILP),
  :mod:`ddlsched.models.asrpt_solve` (one solve of the integer data by either
  model, and two solves compared),
  :mod:`ddlsched.models.asrpt_comm_bound` (``lb_busy``, ours),
  :mod:`ddlsched.models.asrpt_strengthen` (the strengthenings of ``exact``:
  searched and improved incumbent, objective bound, job windows, symmetry and
  release order, LP level, the MILP's proof; ours),
  :mod:`ddlsched.models.asrpt_lagrange` (``lb_lagrange``, ours),
  :mod:`ddlsched.models.asrpt_branch` (``lb_branch``: ``lb_lagrange``'s relaxation
  branched over the start windows of the largest jobs, ours),
  :mod:`ddlsched.models.asrpt_windows` (``improve``'s CP-SAT window moves, ours),
  :mod:`ddlsched.models.asrpt_best_placement` (``improve``'s ``best_placement``
  start, ours) and :mod:`ddlsched.models.asrpt_theory` (Theorem 1, Lemmas 2-3
  per instance);
* simulator: :mod:`ddlsched.sim.asrpt` (one event loop for every policy);
* the methods' parameter classes: :mod:`ddlsched.families._asrpt_params`.

The CP-SAT model runs through the shared :mod:`ddlsched.solvers.cpsat`; the
placement ILPs behind ``alpha_lb`` and ``alpha*(u)`` are the ``placement``
family's (:mod:`ddlsched.models.placement`).

Methods (all minimise ``sum_i C_i`` in seconds, recomputed by the evaluator):

* ``asrpt`` (Algorithm 1) and ``asrpt_perfect`` (``n~ := n``), parameters
  ``delay_factor`` (tau, default 1), ``comm_heavy`` (1.5), ``delay_blocks``
  (true), ``eligibility`` (``virtual``, Algorithm 1; ``arrival``: eligible
  at arrival in virtual-completion order, ours, not the paper's: tables
  label it ``asrpt[eligibility=arrival]``; its ``info['theory']`` carries a
  note that the bounds are Algorithm 1's) and ``theory`` (true:
  ``info['theory']`` holds Theorem 1's bound, Lemma 2's ``X`` and instance
  bound ``X / LB + rho`` with ``LB`` the better of ``lb_sum`` and
  ``lb_srpt``, Lemma 3's check; it needs
  ``alpha_lb`` per configuration, the placement ILP, within the time limit
  and falling back to a valid closed form). Lemma 2's falsifiable check
  ``Gamma_A <= X + rho UB`` needs the best schedule ``UB`` over every
  method of the instance, known only after a suite has run:
  ``benchmarks/asrpt_tables.py`` makes it (and counts violations).
  ``asrpt_perfect``'s theory is the ``epsilon = 0`` one; the
  ``epsilon_bar`` metric of every row is the instance's prediction error.
  Every A-SRPT run's ``info`` also holds the decision counts and the
  diagnostics of the spec revision (``hold_back_s``, ``hold_back_idle_s``
  and per job, ``queue_wait_s``, ``placement_slowdown``,
  ``virtual_work_ratio``, ``utilisation``, ...; defined in
  :mod:`ddlsched.heuristics.asrpt_diagnostics`; the baselines record the
  same with eligibility at arrival);
* ``spjf``, ``spwf``, ``wcs_duration``, ``wcs_workload``, ``wcs_subtime``
  (Sec. V-A-1-d), parameter ``server_selection``;
* ``improve`` (ours; :mod:`ddlsched.heuristics.asrpt_improve`): the
  best of the policies' schedules, the packed list schedules and the
  offline work-conserving schedules on the true sizes, improved
  by a seeded LNS over packed priority lists within the time limit
  (parameters ``starts``, ``window``, ``horizon``, ``max_windows``), then, with
  ``cpsat_windows > 0``, by CP-SAT window moves (:mod:`ddlsched.models.asrpt_windows`;
  ``cpsat_window``, ``cpsat_dtime``);
* ``exact`` (CP-SAT over usage-vector modes; tiny instances; parameters
  ``incumbent_search``, ``objective_bound``, ``lp_bound``, ``symmetry``,
  ``lp_relaxation``, ``improve_incumbent``, ``job_windows``, ``release_order``,
  ``milp_proof``,
  strengthenings of ours, all on by default, all off is the
  model without them), ``lb_sum`` and
  ``lb_srpt`` (valid lower bounds, no schedule), and ``lb_busy`` (a bound of
  ours: per partition of the jobs, their own durations on one side,
  one-machine mean busy times plus half the durations on the other; at
  least the larger of ``lb_sum`` and ``lb_srpt``; parameter ``alpha_lb`` as
  theirs), and ``lb_lagrange`` (a bound of ours: the Lagrangian
  relaxation of the cluster's GPU capacity over time, each job a contiguous
  block of ``n_i alpha_lb_i`` from a start ``>= r_i``, multipliers by
  subgradient ascent on a grid of ``slots`` slots, ``iterations`` at most,
  the step halved after ``patience`` iterations without a gain;
  the larger of it and ``lb_busy``, so at least every bound above; its
  ``info`` records ``relaxation_ub``, a list schedule of that relaxation,
  above which no bound from the relaxation can go).

At the time limit (``time_limit_hit`` whenever the limit changed the answer,
and then only, with ``info['stopped']`` naming what it cut; absent
otherwise): the policies are all or nothing
(``time_limit_no_solution``); ``exact`` returns its best schedule (the
greedy one at worst) and its bound, ``feasible``, naming each scheduling
model solve the limit cut and the ``alpha*`` placement ILPs left unproven;
``improve`` returns its best schedule, naming the window search, the
starts it skipped, ``best_placement``'s placement ILPs it cut and the CP-SAT
window moves (why the search ended is ``info['search_stopped']`` on every run); ``lb_sum`` and ``lb_srpt``
stay valid but get weaker: a configuration whose ``alpha_lb`` ILP the limit
cut keeps its ILP bound or the closed form. Their value then depends on the
machine's speed; ``--param alpha_lb=closed_form`` skips the ILPs (a weaker
bound, the same on every run). ``asrpt --param theory=true`` computes
``alpha_lb`` the same way within its limit.

``ddlsched simulate asrpt --trace NAME --policy M`` builds a ``trace``
instance and runs one policy through the same pipeline
(:mod:`ddlsched.families._asrpt_simulate`).
"""

from __future__ import annotations

import math
import time
from dataclasses import replace
from typing import Any

from ddlsched.families._asrpt_params import (
    AsrptParams,
    BaselineParams,
    BoundParams,
    BranchParams,
    ExactParams,
    ImproveParams,
    LagrangeParams,
)
from ddlsched.families._asrpt_simulate import simulate_window, simulation
from ddlsched.problems.asrpt import AsrptInstance, prediction_error
from ddlsched.problems.asrpt_schedule import (
    AsrptEvaluation,
    evaluate,
    schedule_from_json,
    schedule_to_json,
)
from ddlsched.registry import (
    Family,
    RunContext,
    WorstCaseSpace,
    register_family,
    register_method,
)
from ddlsched.solvers.result import Outcome, Status
from ddlsched.workloads.asrpt import PRESET_PARAMS, PRESETS, SYNTHETIC
from ddlsched.workloads.asrpt import generate as _generate_preset

__all__ = ["FAMILY", "POLICIES", "simulate_window"]

POLICIES = ("asrpt", "asrpt_perfect", "spjf", "spwf", "wcs_duration", "wcs_workload", "wcs_subtime")
_NOT_ALGORITHM_1 = (
    "eligibility=arrival is not Algorithm 1: Theorem 1 and Lemma 2 are proven for jobs "
    "that never start before their virtual completion; the values are shown for comparison"
)


def _summary(evaluation: AsrptEvaluation) -> dict[str, Any]:
    return evaluation.summary()


def generate(preset: str, seed: int = 0, **params: Any) -> AsrptInstance:
    """A preset instance (``ddlsched.workloads.asrpt.generate``); the trace presets get
    ``alpha~_min`` (a heuristic, so not importable from the workloads layer) injected."""
    if preset not in SYNTHETIC:
        from ddlsched.heuristics.asrpt_config import config_constants

        params.setdefault(
            "alpha_min_of", lambda cluster, config: config_constants(cluster, config).alpha_min_s
        )
    return _generate_preset(preset, seed, **params)


# --------------------------------------------------------------------------- policies


def _theory(
    instance: AsrptInstance, gamma: float, delay_factor: float, ctx: RunContext
) -> dict[str, Any]:
    from ddlsched.models.asrpt import alpha_lbs, lb_srpt, lb_sum
    from ddlsched.models.asrpt_theory import theory

    lbs = alpha_lbs(instance, deadline=ctx.deadline, backend=ctx.backend)
    best_bound = max(
        lb_sum(instance, alpha_lbs=lbs, deadline=ctx.deadline),
        lb_srpt(instance, alpha_lbs=lbs, deadline=ctx.deadline),
    )
    out = theory(instance, gamma, delay_factor=delay_factor, best_bound=best_bound, alpha_lbs=lbs)
    cut = sum(1 for lb in lbs.values() if lb.cut)
    if cut:  # the bounds behind X / LB + rho are weaker than more time would make them
        out["alpha_lb_cut_by_time_limit"] = cut
    return out


def _with_perfect_predictions(instance: AsrptInstance) -> AsrptInstance:
    jobs = tuple(replace(j, predicted_iterations=float(j.iterations)) for j in instance.jobs)
    return replace(instance, jobs=jobs)


def _make_policy(name: str) -> None:
    if name.startswith("asrpt"):
        params_type: type = AsrptParams
        summary = (
            "A-SRPT (Algorithm 1): virtual SRPT, eligibility at virtual completion, "
            "Heavy-Edge, delay windows"
        )
        if name == "asrpt_perfect":
            summary = "A-SRPT with perfect knowledge of iterations (n~ = n)"
    else:
        params_type = BaselineParams
        summary = {
            "spjf": "shortest predicted job first, strict order (MLaaS)",
            "spwf": "smallest predicted GPU-time (g d~) first, strict order (Tiresias)",
            "wcs_duration": "work-conserving, predicted duration order",
            "wcs_workload": "work-conserving, predicted GPU-time order",
            "wcs_subtime": "work-conserving, submission order",
        }[name]

    @register_method("asrpt", name, "heuristic", summary, params=params_type)
    def _run(instance: AsrptInstance, params: Any, ctx: RunContext) -> Outcome:
        from ddlsched.sim.asrpt import simulate

        if isinstance(params, AsrptParams):
            knobs: dict[str, Any] = {
                "delay_factor": params.delay_factor,
                "comm_heavy": params.comm_heavy,
                "delay_blocks": params.delay_blocks,
                "eligibility": params.eligibility,
            }
        else:
            knobs = {"server_selection": params.server_selection, "comm_heavy": params.comm_heavy}
        started = time.perf_counter()
        schedule = simulate(instance, name, seed=ctx.seed, deadline=ctx.deadline, **knobs)
        info: dict[str, Any] = {"simulation_s": time.perf_counter() - started}
        info.update(schedule.info)
        info.update(prediction_error(instance) if name != "asrpt_perfect" else {})
        if isinstance(params, AsrptParams) and params.theory:
            gamma = evaluate(instance, schedule).total_completion_s
            # A-SRPT-Perfect runs on n~ = n: its guarantee is the epsilon = 0 one
            seen = _with_perfect_predictions(instance) if name == "asrpt_perfect" else instance
            info["theory"] = _theory(seen, gamma, params.delay_factor, ctx)
            if params.eligibility != "virtual":
                info["theory"]["note"] = _NOT_ALGORITHM_1
        return Outcome(schedule, info=info)


for _policy in POLICIES:
    _make_policy(_policy)


@register_method(
    "asrpt",
    "improve",
    "heuristic",
    "ours: best start (policies, packed lists) improved by LNS over packed priority lists",
    params=ImproveParams,
)
def _improve(instance: AsrptInstance, params: ImproveParams, ctx: RunContext) -> Outcome:
    from ddlsched.heuristics.asrpt_improve import ImproveSettings, improve, parse_starts

    settings = ImproveSettings(
        starts=parse_starts(params.starts),
        window=params.window,
        horizon=params.horizon,
        max_windows=params.max_windows,
        seed=ctx.seed,
    )
    moves = params.cpsat_windows > 0  # then half of the limit each (asrpt_windows)
    deadline = ctx.deadline.sub(share=0.5) if moves else ctx.deadline
    schedule, info, cut = improve(instance, settings, _policy_runner(instance), deadline)
    if moves:
        from ddlsched.models.asrpt_windows import WindowSettings, improve_with_windows

        windows = WindowSettings(
            params.cpsat_window, params.cpsat_windows, params.cpsat_dtime, ctx.seed
        )
        schedule, cut = improve_with_windows(
            instance, schedule, windows, ctx.deadline.sub(share=0.9), info, cut
        )
    return Outcome(schedule, info=info, time_limit_hit=cut)


# --------------------------------------------------------------------------- exact and bounds


@register_method(
    "asrpt",
    "exact",
    "exact",
    "offline optimum: CP-SAT, one optional interval per (job, usage vector), cumulative per server",
    params=ExactParams,
)
def _exact(instance: AsrptInstance, params: ExactParams, ctx: RunContext) -> Outcome:
    from ddlsched.models.asrpt_exact import solve_exact
    from ddlsched.models.asrpt_strengthen import Strengthening

    return solve_exact(
        instance,
        backend=ctx.backend,
        deadline=ctx.deadline,
        cross_check=params.cross_check,
        solver=params.solver,
        max_job_modes=params.max_job_modes,
        max_horizon_units=params.max_horizon_units,
        seed=ctx.seed,
        strengthening=Strengthening(
            incumbent_search=params.incumbent_search,
            objective_bound=params.objective_bound,
            symmetry=params.symmetry,
            lp_relaxation=params.lp_relaxation,
            lp_bound=params.lp_bound,
            improve_incumbent=params.improve_incumbent,
            job_windows=params.job_windows,
            release_order=params.release_order,
            milp_proof=params.milp_proof,
        ),
        run_policy=_policy_runner(instance),
    )


def _policy_runner(instance: AsrptInstance) -> Any:
    """The family's simulator as ``improve``'s policy runner (``exact``'s warm start)."""
    from ddlsched.sim.asrpt import simulate

    def run_policy(name: str, seed: int, deadline: Any) -> Any:
        if name == "best_placement":  # improve's start on the placement ILP's optima
            from ddlsched.models.asrpt_best_placement import best_placement_schedule

            return best_placement_schedule(instance, deadline, seed)
        return simulate(instance, name, seed=seed, deadline=deadline), ""

    return run_policy


def _extra_bound(
    name: str, instance: AsrptInstance, params: Any, ctx: RunContext, lbs: Any
) -> tuple[float, dict[str, Any]]:
    """The value and info of ``lb_busy`` and ``lb_lagrange`` (the latter at least the former)."""
    from ddlsched.models.asrpt_comm_bound import lb_busy

    busy = lb_busy(instance, ctx.deadline, alpha_lbs_of=lbs)
    extra = {"own_duration_jobs": busy.own_duration_jobs, "partition_round": busy.round}
    if name == "lb_busy":
        return busy.value_s, extra
    if name == "lb_branch":
        return _branch_bound(instance, params, ctx, lbs, busy.value_s)
    from ddlsched.models.asrpt_lagrange import lb_lagrange

    lagrange = lb_lagrange(
        instance,
        ctx.deadline,
        alpha_lbs_of=lbs,
        slots=params.slots,
        iterations=params.iterations,
        patience=params.patience,
    )
    value = max(lagrange.value_s, busy.value_s)
    releases = math.fsum(job.arrival_s for job in instance.jobs)
    flow = value - releases
    extra = {
        "lb_busy": busy.value_s,
        "lagrangian": lagrange.value_s,
        # a schedule of the capacity relaxation: no bound from it can exceed this
        "relaxation_ub": lagrange.relaxation_ub_s,
        "relaxation_flow_room": (lagrange.relaxation_ub_s - releases) / flow - 1.0
        if flow > 0
        else 0.0,
        "ascent_iterations": lagrange.iterations,
        "best_iteration": lagrange.best_iteration,
        "slots": lagrange.slots,
        "ascent_stopped": lagrange.stopped,
    }
    return value, extra


def _branch_bound(
    instance: AsrptInstance, params: Any, ctx: RunContext, lbs: Any, busy_s: float
) -> tuple[float, dict[str, Any]]:
    """The value and info of ``lb_branch`` (at least ``lb_busy``)."""
    from ddlsched.models.asrpt_branch import SETTINGS, lb_branch

    settings = {name: getattr(params, name) for name in SETTINGS}
    found = lb_branch(instance, ctx.deadline, alpha_lbs_of=lbs, **settings)
    return max(found.value_s, busy_s), {"lb_busy": busy_s, **found.info(instance)}


def _bound_method(name: str, summary: str, params_type: type = BoundParams) -> None:
    @register_method("asrpt", name, "bound", summary, params=params_type)
    def _run(instance: AsrptInstance, params: BoundParams, ctx: RunContext) -> Outcome:
        from ddlsched.models import asrpt as models

        started = time.perf_counter()
        lbs = models.alpha_lbs(
            instance,
            deadline=ctx.deadline,
            backend=ctx.backend,
            use_ilp=params.alpha_lb == "ilp",
        )
        alpha_lb_s = time.perf_counter() - started
        extra: dict[str, Any] = {}
        if name in ("lb_busy", "lb_lagrange", "lb_branch"):
            value, extra = _extra_bound(name, instance, params, ctx, lbs)
        else:
            value = getattr(models, name)(instance, alpha_lbs=lbs, deadline=ctx.deadline)
        proven = sum(1 for lb in lbs.values() if lb.proven)
        cut = sorted(config for config, lb in lbs.items() if lb.cut)
        info = {
            "alpha_lb": params.alpha_lb,
            "alpha_lb_s": alpha_lb_s,
            "alpha_lb_proven_share": proven / len(lbs),
            "alpha_lb_sources": sorted({lb.source for lb in lbs.values()}),
            "flow_bound": value - math.fsum(job.arrival_s for job in instance.jobs),
            **extra,
        }
        stopped = []
        if cut:  # the limit left these configurations at a weaker value: a weaker bound
            stopped.append(f"alpha_lb of {len(cut)} of {len(lbs)} configurations unproven")
        if extra.get("ascent_stopped") == "time limit":  # lb_lagrange: fewer iterations
            stopped.append(f"subgradient ascent after {extra['ascent_iterations']} iterations")
        if extra.get("branch_stopped") == "time limit":  # lb_branch: fewer nodes
            stopped.append(f"branch and bound after {extra['nodes']} node ascents")
        if stopped:
            info["stopped"] = "time limit: " + "; ".join(stopped)
        return Outcome(
            None, status=Status.BOUND_ONLY, bound=value, info=info, time_limit_hit=bool(stopped)
        )


_bound_method("lb_sum", "sum_i (r_i + n_i alpha_lb_i): each job alone at its best placement")
_bound_method("lb_srpt", "preemptive SRPT on one machine, sizes (g_i/G) n_i alpha_lb_i (Lemma 1)")
_bound_method(
    "lb_busy",
    "ours: sum over a partition of r_i + n_i alpha_lb_i and of one-machine mean busy times "
    "plus n_i alpha_lb_i / 2 (>= lb_sum and lb_srpt)",
)
_bound_method(
    "lb_lagrange",
    "ours: Lagrangian relaxation of the cluster's GPU capacity over time, subgradient "
    "ascent (the larger of it and lb_busy)",
    LagrangeParams,
)
_bound_method(
    "lb_branch",
    "ours: lb_lagrange's relaxation, best-first branch and bound over the start windows "
    "of the jobs of largest GPU time (or of most GPUs), each node bounded by the Lagrangian "
    "with rounded-capacity cuts (at least lb_busy)",
    BranchParams,
)


# --------------------------------------------------------------------------- worst-case search


def _worst_generate(seed: int, budget: float) -> AsrptInstance:
    from ddlsched.workloads.asrpt import tiny
    from ddlsched.workloads.asrpt_mutate import project

    return project(tiny(seed), budget)


def _worst_theory(results: Any) -> float | None:
    result = results.get("asrpt")
    if result is None:
        return None
    return result.info.get("theory", {}).get("theorem1_bound")


def _worst_case_space() -> WorstCaseSpace:
    from ddlsched.workloads.asrpt_mutate import epsilon_bar, mutate

    return WorstCaseSpace(
        generate=_worst_generate,
        mutate=mutate,
        budget=epsilon_bar,
        budget_name="epsilon_bar, iterations",
        policies=POLICIES,
        exact="exact",
        theory=_worst_theory,
    )


FAMILY = register_family(
    Family(
        name="asrpt",
        sense="min",
        objective_name="total completion time sum C_i (s)",
        load=AsrptInstance.load,
        from_dict=AsrptInstance.from_dict,
        generate=generate,
        presets=tuple(PRESETS),
        preset_params=PRESET_PARAMS,
        evaluate=evaluate,
        objective=lambda evaluation: evaluation.total_completion_s,
        evaluation_summary=_summary,
        schedule_to_json=schedule_to_json,
        schedule_from_json=schedule_from_json,
        smoke=("tiny", {}),
        size=lambda instance: len(instance.jobs),
        summary="A-SRPT online scheduling with predictions vs offline optimum and bounds",
        simulation=simulation(generate, POLICIES),
        worst_case=_worst_case_space(),
    )
)
