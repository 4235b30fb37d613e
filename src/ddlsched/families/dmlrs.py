"""Family ``dmlrs``: PD-ORS online and its baselines against the offline optimum and bounds.

Paper: Yu, Liu, Wu, Ji, Bentley, "Toward Efficient Online Scheduling for
Distributed Machine Learning Systems", IEEE TNSE 2022 (reading notes of
the paper: DMLRS Eqs. 3-7, R-DMLRS Eq. 8, its dual Eqs. 10-11, the price function
Eqs. 12-14, Algorithms 1-4, Problem (23)); spec ``docs/families/dmlrs.md``.
The objective is the total utility ``sum_i u_i(t~_i - a_i)`` of the jobs
that finish, maximised; the competitive ratio of a method on an instance
is ``OPT / utility``.

Modules of the family:

* problem: :mod:`ddlsched.problems.dmlrs` (instance, JSON; re-exports the
  other two), :mod:`ddlsched.problems.dmlrs_ranges` (validation, numeric
  ranges), :mod:`ddlsched.problems.dmlrs_schedule` (rate model with Fact 1,
  schedule, the evaluator :func:`~ddlsched.problems.dmlrs.evaluate`);
* workloads: :mod:`ddlsched.workloads.dmlrs` (presets ``paper``, ``tiny``,
  ``micro``, ``trace``), :mod:`ddlsched.workloads.dmlrs_mutate` (worst-case
  search; budget: the largest ``theta2``);
* heuristics: :mod:`ddlsched.heuristics.pd_ors` (Algorithms 1-3 and the
  OASiS variant), :mod:`ddlsched.heuristics.pd_ors_slots` (Algorithm 4 for
  every slot and quanta of one job, the run's statistics),
  :mod:`ddlsched.heuristics.dmlrs_prices` (the price function, Eqs. 12-14),
  :mod:`ddlsched.heuristics.dmlrs_baselines` (FIFO, DRF and the per-slot
  simulation they share with Dorm);
* solvers: :mod:`ddlsched.solvers.dmlrs_pricing` (the single-job pricing
  MILP/LP in highspy), :mod:`ddlsched.solvers.dmlrs_machine` (one machine's
  bounds and integer hull, shared by the MILP and the pricing) and
  :mod:`ddlsched.solvers.dmlrs_master` (colgen's master);
* models: :mod:`ddlsched.models.dmlrs` (``exact``: its formulation and
  strategy; ``ub_trivial``), :mod:`ddlsched.models.dmlrs_milp` (the compact
  MILP of DMLRS, Eqs. 3-7, one builder per row group),
  :mod:`ddlsched.models.dmlrs_strong` (``exact``'s strengthenings, ours,
  each a parameter: earliest completion, work in the completion slot,
  pattern binaries, aggregated capacity rows, no surplus work, packing rows,
  the solver's symmetry handling), :mod:`ddlsched.models.dmlrs_start`
  (``exact``'s MIP start: the best heuristic, improved by ``improve``'s search),
  :mod:`ddlsched.models.dmlrs_dual` (the single-job pricing of the R-DMLRS
  dual, Eqs. 10-11, and the bound ``UB(p)``),
  :mod:`ddlsched.models.dmlrs_colgen` (column generation and ``colgen``'s
  strategy: seed schedules, the bound and the restricted MILP's schedule),
  :mod:`ddlsched.models.dmlrs_dorm` (Dorm's per-slot MILP),
  :mod:`ddlsched.models.dmlrs_capacity` (``ub_capacity``, ours: a time-indexed
  LP over the whole cluster with the internal and external modes' speeds),
  :mod:`ddlsched.models.dmlrs_lagrange` (``ub_lagrange``, ours: the Lagrangian of the
  per-machine capacity rows by subgradient steps from ``ub_capacity``'s duals),
  :mod:`ddlsched.models.dmlrs_branch` (``ub_branch``, ours: branch-and-bound on job
  acceptance and completion slots over ``ub_capacity``'s LP),
  :mod:`ddlsched.models.dmlrs_blocks` (``ub_blocks``, ours: ``ub_capacity`` with each
  internal-mode slot one block on one machine);
* improvement: :mod:`ddlsched.heuristics.dmlrs_improve` (``improve``, ours),
  its insertion rules :mod:`ddlsched.heuristics.dmlrs_insert`, its ejection moves
  :mod:`ddlsched.heuristics.dmlrs_eject` and its MIP repair
  :mod:`ddlsched.models.dmlrs_mip_repair`; ``blocks_round`` (ours):
  :mod:`ddlsched.models.dmlrs_blocks_round` (``ub_blocks``' relaxation rounded to a
  schedule), its steps :mod:`ddlsched.families._dmlrs_blocks_round`;
* the methods' parameter classes: :mod:`ddlsched.families._dmlrs_params`.

Algorithm 4's per-slot problem is the family ``dmlrs_slot``
(:mod:`ddlsched.families.dmlrs_slot`, the rounding study), whose modules
PD-ORS uses: the slot data, the internal case and OASiS's slot subroutine
(:mod:`ddlsched.heuristics.dmlrs_slot`), the external case's ``G_delta``,
shrunk LP, randomized rounding and repair
(:mod:`ddlsched.heuristics.dmlrs_rounding`) and Problem (23) in highspy,
right-hand side changed and warm-started between quanta
(:mod:`ddlsched.solvers.dmlrs_slot_lp`); ``--param slot_solver=ilp`` solves
it exactly (the same highspy model with integer columns, the ILP of
:mod:`ddlsched.models.dmlrs_slot`), under a time limit in the HiGHS worker
process, killed at the limit (then ``time_limit_no_solution``, as below).

Methods: ``pd_ors`` and ``oasis`` (heuristics, seeded), ``fifo``, ``drf``, ``dorm``
(heuristics, no admission control; a job that has not finished by ``T`` is ``unfinished``
and earns 0; Dorm's slot MILP adds, ours, the row ``gamma sum s <= sum w + gamma - 1``
(exactly ``ceil(W / gamma)`` PSs: without it the utilisation term rewards idle PSs), proves
the served count and gets utilisation within ``util_gap``), ``exact`` (the compact offline
MILP, tiny instances), ``colgen`` (bound: column generation on R-DMLRS; also returns the
restricted master's integer schedule), ``improve`` (heuristic, ours: the best of ``pd_ors``,
``oasis``, ``fifo`` and ``drf`` improved by an LNS that frees windows of jobs and re-inserts
them at their earliest finish in the free capacity; MIP-repaired windows and ejection moves
as parameters; never worse than its best start), ``blocks_round`` (bound, ours:
``ub_blocks modes=true``'s MILP within a node budget, its dual bound, its incumbent placed
slot by slot, the jobs left short topped up or dropped, then ``improve``'s search), ``ub_trivial`` and ``ub_prices``
(bounds; ``ub_prices`` runs PD-ORS with the same seed and certifies its ratio with
``UB(p_final)``), ``ub_capacity`` (bound, ours: a time-indexed LP, per slot and resource the
cluster's capacity, per job the speed of its internal and external modes; ``--param
integral=true`` makes the completion choices binary and reports the MILP's proven dual
bound), ``ub_lagrange`` (bound, ours: ``UB(p)`` with exact pricing minimised over ``p`` by
``iterations`` projected subgradient steps from ``ub_capacity``'s duals; at most
``ub_capacity``), ``ub_branch`` (bound, ours: best-first branch-and-bound on the acceptance,
then the completion slots, of ``ub_capacity``'s LP, ``nodes`` node LPs; at most
``ub_capacity``), ``ub_blocks`` (bound, ours; ``integral``, ``modes``: binary completions,
blocks).

An instance without jobs (valid, :mod:`ddlsched.problems.dmlrs`): every heuristic returns
the empty schedule (utility 0), ``exact`` proves it optimal (as whenever ``ub_trivial`` is
0: no job can finish by ``T``, the MILP would have no variable), ``colgen`` returns it with
the bound 0, ``ub_trivial`` and ``ub_prices`` the bound 0 (``UB(p)`` at prices 0; at
PD-ORS's final prices ``L`` it would be the price term ``L sum C``, valid but meaningless).

At the time limit (``time_limit_hit`` is true whenever the limit changed
the answer, and ``info['stopped']`` says what stopped):

* ``pd_ors``, ``oasis``, ``fifo``, ``drf``: all or nothing
  (``time_limit_no_solution``; an online schedule cut at some arrival is
  no answer);
* ``blocks_round``: the relaxation stopped at its share (``relax_share``) gives its last
  incumbent (``time_limit_hit``); none: ``improve``'s usual starts; then as ``improve``, but
  ``bound_only`` (the relaxation's bound) when ``improve`` is left no schedule;
* ``improve``: a start the limit stops is skipped (none left: ``time_limit_no_solution``),
  one that cannot run on the instance (OASiS refusing ``U^r <= L``) is skipped and named in
  ``info['starts_refused']`` (none left at all: ``no_solution`` with the reasons); a search
  cut by the limit returns its best schedule (``time_limit_hit``, ``info['stopped']`` names
  the window search or the MIP windows; why the search ended is ``info['search_stopped']``
  on every run, why the MIP windows ended ``info['mip_stopped']``);
* ``dorm``: a slot's MILP stopped at its share of the time (or at
  ``slot_time_limit_s``) keeps its incumbent (or the greedy allocation):
  a schedule, ``time_limit_hit`` and ``info['load_dependent']`` (a slot
  stopped by its node budget ``slot_node_limit`` is not a time limit: the
  same on every machine, ``info['slots_at_node_limit']``);
* ``exact``: the MILP's incumbent and bound (``feasible``), or
  ``time_limit_no_solution``;
* ``ub_trivial``: no solver, never limited;
* ``ub_capacity``: the LP must finish (else ``time_limit_no_solution``); with
  ``integral``, a MILP stopped at the limit contributes its dual bound
  (``time_limit_hit``) or, before it has one, the LP's;
* ``ub_blocks``: as ``ub_capacity`` (``integral`` or ``modes``: the MILP's dual bound);
* ``ub_lagrange``: ``ub_capacity`` must finish (else ``time_limit_no_solution``); then
  the best iterate so far, each valid (``time_limit_hit``, ``info['search_stopped']``
  ``time_limit``; a job whose pricing was cut contributes its dual or trivial bound);
* ``ub_branch``: the root LP must finish (else ``time_limit_no_solution``); then the
  bound of the open nodes (a node whose LP the limit cut keeps its parent's bound), valid
  (``time_limit_hit``, ``info['search_stopped']`` ``time_limit``); ``nodes`` is the budget
  that does not depend on the machine;
* ``dorm``, ``exact`` (and ``colgen``'s Dorm seed): with less than :data:`PYOMO_IMPORT_S`
  left and Pyomo not yet imported, they stop at once (``time_limit_no_solution``) rather
  than start an import no interrupt can cut (0.8 s cold at low load, 5 s and more under
  load); with more left, Pyomo is imported in the background and waited for only until
  the deadline (:func:`ddlsched.deadline.import_within`);
* ``ub_prices``: PD-ORS must finish (else ``time_limit_no_solution``);
  a job whose pricing MILP stopped at its limit contributes its dual
  bound, one not priced in time ``u_i(d_min_i - 1)``: the bound stays
  valid and gets weaker (``time_limit_hit``, ``info['pricing_status']``);
* ``colgen``: the best ``UB(p)`` of the rounds done (``time_limit_hit`` when a round was
  cut, a pricing stopped at its share, the restricted MILP stopped or a seed heuristic was
  cut; ``info['stopped']`` names each, ``info['rounds_stopped']`` why the rounds ended:
  ``time_limit``, ``stalled``, ``converged``, ...), and the better of the restricted MILP's
  schedule (its last incumbent when the limit killed it) and the best seed schedule
  (``info['restricted_mip']['schedule_from']``). A pricing MILP runs in the HiGHS worker
  process, killed at its limit (the job then gets its trivial bound): the answer depends on
  the machine's speed; ``--param max_rounds=N`` stops after ``N`` pricing rounds instead
  (``rounds_stopped = iteration_limit``), the same bound on every run within the limit.
"""

from __future__ import annotations

import sys
from dataclasses import fields
from typing import Any

from ddlsched.deadline import import_within
from ddlsched.errors import TimeLimitReached
from ddlsched.families._dmlrs_params import (
    BlocksRoundParams,
    ColgenParams,
    DormParams,
    ExactParams,
    ImproveParams,
    OasisParams,
    PdOrsParams,
    UbBlocksParams,
    UbBranchParams,
    UbCapacityParams,
    UbLagrangeParams,
    UbPricesParams,
)
from ddlsched.params import NoParams
from ddlsched.problems.dmlrs import (
    DmlrsEvaluation,
    DmlrsInstance,
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
from ddlsched.workloads.dmlrs import PRESET_PARAMS, PRESETS, generate

__all__ = ["FAMILY", "OasisParams", "PdOrsParams"]


def _summary(evaluation: DmlrsEvaluation) -> dict[str, Any]:
    return evaluation.summary()


def _worst_case_space() -> WorstCaseSpace:
    from ddlsched.workloads.dmlrs_mutate import generate as worst_generate
    from ddlsched.workloads.dmlrs_mutate import mutate, theta2_max

    return WorstCaseSpace(
        generate=worst_generate,
        mutate=mutate,
        budget=theta2_max,
        budget_name="largest theta2 (utility time sensitivity)",
        policies=("pd_ors", "oasis", "fifo", "drf", "dorm"),
        exact="exact",
    )


FAMILY = register_family(
    Family(
        name="dmlrs",
        sense="max",
        objective_name="total utility sum_i u_i(t~_i - a_i)",
        load=DmlrsInstance.load,
        from_dict=DmlrsInstance.from_dict,
        generate=generate,
        presets=PRESETS,
        preset_params=PRESET_PARAMS,
        evaluate=evaluate,
        objective=lambda evaluation: evaluation.total_utility,
        evaluation_summary=_summary,
        schedule_to_json=schedule_to_json,
        schedule_from_json=schedule_from_json,
        smoke=("tiny", {}),
        size=lambda instance: instance.size,  # jobs
        worst_case=_worst_case_space(),
        summary="PD-ORS online (primal-dual, DP, LP rounding) vs FIFO/DRF/Dorm/OASiS, "
        "offline optimum and column-generation bounds",
    )
)


# --------------------------------------------------------------------------- PD-ORS and OASiS


def _settings(params: Any, variant: str) -> Any:
    from ddlsched.heuristics.pd_ors import PdOrsSettings

    values = {f.name: getattr(params, f.name) for f in fields(params)}
    return PdOrsSettings(variant=variant, **values)


def _run_pd_ors(instance: DmlrsInstance, params: Any, ctx: RunContext, variant: str) -> Any:
    from ddlsched.heuristics.pd_ors import run_pd_ors
    from ddlsched.solvers.dmlrs_slot_lp import HighsSlotSolvers

    return run_pd_ors(
        instance, _settings(params, variant), ctx.seed, ctx.deadline, HighsSlotSolvers()
    )


@register_method(
    "dmlrs",
    "pd_ors",
    "heuristic",
    "PD-ORS (Algorithms 1-4): online primal-dual, DP over quanta, LP rounding; seeded",
    params=PdOrsParams,
)
def _pd_ors(instance: DmlrsInstance, params: PdOrsParams, ctx: RunContext) -> Outcome:
    run = _run_pd_ors(instance, params, ctx, "pd_ors")
    return Outcome(run.schedule, info=dict(run.info))


@register_method(
    "dmlrs",
    "oasis",
    "heuristic",
    "OASiS: Algorithms 1-3 with workers and PSs never on one machine (b_ext only)",
    params=OasisParams,
)
def _oasis(instance: DmlrsInstance, params: OasisParams, ctx: RunContext) -> Outcome:
    run = _run_pd_ors(instance, params, ctx, "oasis")
    return Outcome(run.schedule, info=dict(run.info))


# --------------------------------------------------------------------------- baselines


@register_method(
    "dmlrs", "fifo", "heuristic", "FIFO: arrival order, bundles on the least-loaded machine (DL2)"
)
def _fifo(instance: DmlrsInstance, params: NoParams, ctx: RunContext) -> Outcome:
    from ddlsched.heuristics.dmlrs_baselines import run_fifo

    return Outcome(run_fifo(instance, ctx.deadline))


@register_method(
    "dmlrs", "drf", "heuristic", "DRF: one bundle at a time to the smallest dominant share (DL2)"
)
def _drf(instance: DmlrsInstance, params: NoParams, ctx: RunContext) -> Outcome:
    from ddlsched.heuristics.dmlrs_baselines import run_drf

    return Outcome(run_drf(instance, ctx.deadline))


@register_method(
    "dmlrs",
    "dorm",
    "heuristic",
    "Dorm: per-slot MILP, most jobs served, then normalised utilisation",
    params=DormParams,
)
def _dorm(instance: DmlrsInstance, params: DormParams, ctx: RunContext) -> Outcome:
    _need_pyomo(ctx, "Dorm's slot MILPs")
    from ddlsched.models.dmlrs_dorm import run_dorm

    schedule, info = run_dorm(
        instance,
        backend=ctx.backend,
        slot_time_limit_s=params.slot_time_limit_s,
        deadline=ctx.deadline,
        util_gap=params.util_gap,
        greedy_start=params.greedy_start,
        slot_node_limit=params.slot_node_limit,
    )
    info = dict(info)
    cut = info["slots_at_time_limit"] > 0  # a slot's MILP kept its incumbent at its time limit
    if cut:
        info["stopped"] = f"{info['slots_at_time_limit']} slot MILP(s) at their time limit"
    return Outcome(schedule, info=info, time_limit_hit=cut)


def _run_start(instance: DmlrsInstance, name: str, ctx: RunContext, deadline: Any) -> Any:
    """One start of ``improve``: a heuristic's schedule within ``deadline``."""
    from ddlsched.heuristics.dmlrs_baselines import run_drf, run_fifo

    if name in ("pd_ors", "oasis"):
        params = PdOrsParams() if name == "pd_ors" else OasisParams()
        sub = RunContext(seed=ctx.seed, backend=ctx.backend, deadline=deadline)
        return _run_pd_ors(instance, params, sub, name).schedule
    return (run_fifo if name == "fifo" else run_drf)(instance, deadline)


@register_method(
    "dmlrs",
    "improve",
    "heuristic",
    "ours: best of PD-ORS/OASiS/FIFO/DRF improved by LNS with earliest-finish re-insertion",
    params=ImproveParams,
)
def _improve(instance: DmlrsInstance, params: ImproveParams, ctx: RunContext) -> Outcome:
    from ddlsched.heuristics.dmlrs_eject import EjectSettings
    from ddlsched.heuristics.dmlrs_improve import ImproveSettings, improve, parse_starts

    eject = EjectSettings(
        params.eject_moves,
        params.eject_completions,
        params.eject_windows,
        params.eject_evict,
        params.eject_place,
    )
    settings = ImproveSettings(
        starts=parse_starts(params.starts),
        window=params.window,
        patience=params.patience,
        max_windows=params.max_windows,
        seed=ctx.seed,
        mip_windows=params.mip_windows,
        mip_window=params.mip_window,
        eject=eject,
        insert_plan=params.insert_plan,
        lean_price=params.lean_price,
    )
    repair = None
    if params.mip_windows > 0:
        _need_pyomo(ctx, "the MIP windows of improve")
        from ddlsched.models.dmlrs_mip_repair import MipRepair

        repair = MipRepair(instance, ctx.backend, params.mip_nodes, ctx.seed or 0)
    schedule, info, cut = improve(
        instance,
        settings,
        lambda name, dl: _run_start(instance, name, ctx, dl),
        ctx.deadline,
        repair,
    )
    return Outcome(schedule, info=info, time_limit_hit=cut)


@register_method(
    "dmlrs",
    "blocks_round",
    "bound",
    "ours: ub_blocks' one-mode MILP's dual bound; its incumbent placed, then improve's LNS",
    params=BlocksRoundParams,
)
def _blocks_round(instance: DmlrsInstance, params: BlocksRoundParams, ctx: RunContext) -> Outcome:
    from ddlsched.families._dmlrs_blocks_round import run_blocks_round

    run_start = lambda name, dl: _run_start(instance, name, ctx, dl)  # noqa: E731
    return run_blocks_round(instance, params, ctx, run_start, lambda: _need_pyomo(ctx, "MIP"))


# --------------------------------------------------------------------------- exact and bounds


@register_method(
    "dmlrs",
    "exact",
    "exact",
    "compact offline MILP (completion and mode indicators; tiny instances)",
    params=ExactParams,
)
def _exact(instance: DmlrsInstance, params: ExactParams, ctx: RunContext) -> Outcome:
    from ddlsched.models.dmlrs import solve_exact
    from ddlsched.models.dmlrs_strong import Strengthening

    which = Strengthening(**{f.name: getattr(params, f.name) for f in fields(Strengthening)})
    return solve_exact(
        instance,
        ctx.backend,
        ctx.seed,
        params.cross_check,
        ctx.deadline,
        before_pyomo=lambda: _need_pyomo(ctx, "the exact MILP"),
        strengthening=which,
    )


@register_method(
    "dmlrs", "ub_trivial", "bound", "sum of each job's utility alone at its fastest (upper bound)"
)
def _ub_trivial(instance: DmlrsInstance, params: NoParams, ctx: RunContext) -> Outcome:
    from ddlsched.models.dmlrs import ub_trivial

    return Outcome(None, Status.BOUND_ONLY, bound=ub_trivial(instance))


@register_method(
    "dmlrs",
    "ub_capacity",
    "bound",
    "time-indexed LP over the cluster's capacity with each job's mode speeds (ours; upper bound)",
    params=UbCapacityParams,
)
def _ub_capacity(instance: DmlrsInstance, params: UbCapacityParams, ctx: RunContext) -> Outcome:
    from ddlsched.models.dmlrs_capacity import capacity_bound

    bound, info = capacity_bound(instance, params.integral, ctx.deadline, params.dff)
    cut = info.get("milp_status") == "time_limit"
    if cut:
        info["stopped"] = "the MILP at the time limit: its dual bound (or the LP's)"
    return Outcome(None, Status.BOUND_ONLY, bound=bound, info=info, time_limit_hit=cut)


@register_method(
    "dmlrs",
    "ub_blocks",
    "bound",
    "ub_capacity with each internal-mode slot one block on one machine (ours; upper bound)",
    params=UbBlocksParams,
)
def _ub_blocks(instance: DmlrsInstance, params: UbBlocksParams, ctx: RunContext) -> Outcome:
    from ddlsched.models.dmlrs_blocks import blocks_bound

    bound, info = blocks_bound(instance, params.integral, params.modes, ctx.deadline, params.dff)
    cut = info.get("milp_status") == "time_limit"
    if cut:
        info["stopped"] = "the MILP at the time limit: its dual bound (or the LP's)"
    return Outcome(None, Status.BOUND_ONLY, bound=bound, info=info, time_limit_hit=cut)


@register_method(
    "dmlrs",
    "ub_lagrange",
    "bound",
    "Lagrangian of the per-machine capacity rows, exact single-job pricing, subgradient "
    "steps from ub_capacity's duals (ours; upper bound)",
    params=UbLagrangeParams,
)
def _ub_lagrange(instance: DmlrsInstance, params: UbLagrangeParams, ctx: RunContext) -> Outcome:
    from ddlsched.models.dmlrs_lagrange import lagrange_bound

    bound, info = lagrange_bound(
        instance, params.iterations, params.step, params.patience, params.aim, ctx.deadline
    )
    unpriced = {k: v for k, v in info.get("pricing_status", {}).items() if k in _UNPRICED}
    cut = info["search_stopped"] == "time_limit" or bool(unpriced)
    if cut:  # the best iterate so far: weaker, still valid
        info["stopped"] = f"the subgradient search at the time limit (pricing: {unpriced})"
    return Outcome(None, Status.BOUND_ONLY, bound=bound, info=info, time_limit_hit=cut)


@register_method(
    "dmlrs",
    "ub_branch",
    "bound",
    "best-first branch-and-bound on job acceptance, then completion slots, over ub_capacity's "
    "LP (ours; upper bound)",
    params=UbBranchParams,
)
def _ub_branch(instance: DmlrsInstance, params: UbBranchParams, ctx: RunContext) -> Outcome:
    from ddlsched.models.dmlrs_branch import branch_bound

    bound, info = branch_bound(
        instance, params.nodes, params.dff, params.incumbent, params.completion, ctx.deadline
    )
    cut = info["search_stopped"] == "time_limit"
    if cut:  # the open nodes' bound: weaker, still valid
        info["stopped"] = "the branch-and-bound at the time limit: the open nodes' bound"
    return Outcome(None, Status.BOUND_ONLY, bound=bound, info=info, time_limit_hit=cut)


#: Pricing statuses of a job bounded by a stopped MILP's dual bound or ``u_i(d_min_i - 1)``.
_UNPRICED = ("time_limit", "trivial")


#: Seconds a cold import of Pyomo takes (Dorm's MILP; measured 0.8 s at low load): a seed
#: schedule that needs it is skipped with less time left, as an import cannot be interrupted.
PYOMO_IMPORT_S = 1.0


def _need_pyomo(ctx: RunContext, what: str) -> None:
    """Refuse to start an import of Pyomo that the time left cannot hold (no interrupt can
    stop an import): :class:`~ddlsched.errors.TimeLimitReached` naming ``what``. With more
    left, the import runs in the background and is waited for until the deadline
    (:func:`ddlsched.deadline.import_within`: under load it took more than 5 s)."""
    if "pyomo.environ" not in sys.modules and ctx.deadline.remaining_s() < PYOMO_IMPORT_S:
        raise TimeLimitReached(
            f"time limit of {ctx.deadline.limit_s:g} s: too little left to import Pyomo for {what}"
        )
    import_within("pyomo.environ", ctx.deadline, what)


def _dorm_seed(instance: DmlrsInstance, ctx: RunContext) -> Any:
    _need_pyomo(ctx, "Dorm's slot MILPs")
    from ddlsched.models.dmlrs_dorm import run_dorm

    return run_dorm(instance, backend=ctx.backend, deadline=ctx.deadline.sub(0.1))[0]


def _seed_runs(instance: DmlrsInstance, ctx: RunContext) -> list[Any]:
    """``colgen``'s seed heuristics: PD-ORS (this seed), FIFO, DRF and Dorm, each within a
    share of the time limit (:func:`ddlsched.models.dmlrs_colgen.solve_colgen`)."""
    from ddlsched.heuristics.dmlrs_baselines import run_drf, run_fifo

    sub = RunContext(seed=ctx.seed, backend=ctx.backend, deadline=ctx.deadline.sub(0.1))
    return [
        ("pd_ors", lambda: _run_pd_ors(instance, PdOrsParams(), sub, "pd_ors").schedule),
        ("fifo", lambda: run_fifo(instance, ctx.deadline.sub(0.05))),
        ("drf", lambda: run_drf(instance, ctx.deadline.sub(0.05))),
        ("dorm", lambda: _dorm_seed(instance, ctx)),
    ]


@register_method(
    "dmlrs",
    "colgen",
    "bound",
    "column generation on R-DMLRS: Lagrangian bound UB(p) + restricted-master schedule",
    params=ColgenParams,
)
def _colgen(instance: DmlrsInstance, params: ColgenParams, ctx: RunContext) -> Outcome:
    from ddlsched.models.dmlrs_colgen import solve_colgen

    seeds = _seed_runs(instance, ctx) if params.seed_columns else []
    return solve_colgen(
        instance,
        seeds,
        params.pricing,
        ctx.backend,
        ctx.deadline,
        params.max_rounds,
        params.stabilisation,
        params.alpha,
    )


@register_method(
    "dmlrs",
    "ub_prices",
    "bound",
    "UB(p) at PD-ORS's final prices (same seed): a certificate of its competitive ratio",
    params=UbPricesParams,
)
def _ub_prices(instance: DmlrsInstance, params: UbPricesParams, ctx: RunContext) -> Outcome:
    from ddlsched.models.dmlrs_dual import bound_at_prices

    if not instance.jobs:  # UB(0) = 0: no job, no price term (module docstring)
        return Outcome(None, Status.BOUND_ONLY, bound=0.0, info={"pd_ors_utility": 0.0})
    pd_params = PdOrsParams(**{f.name: getattr(params, f.name) for f in fields(PdOrsParams)})
    run = _run_pd_ors(instance, pd_params, ctx, "pd_ors")
    utility = evaluate(instance, run.schedule).total_utility
    bound, info = bound_at_prices(
        instance, run.prices, mode=params.pricing, backend=ctx.backend, deadline=ctx.deadline
    )
    info = dict(info)
    info["pd_ors_utility"] = utility
    info["certified_ratio"] = bound / utility if utility > 0 else None
    unpriced = {k: v for k, v in info["pricing_status"].items() if k in ("time_limit", "trivial")}
    if unpriced:  # jobs bounded by a stopped MILP's dual bound or u_i(d_min_i - 1): weaker
        info["stopped"] = f"pricing cut by the time limit: {unpriced}"
    return Outcome(None, Status.BOUND_ONLY, bound=bound, info=info, time_limit_hit=bool(unpriced))
