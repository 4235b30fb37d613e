"""Strengthenings of family ``asrpt``'s exact model (ours: a larger proven frontier).

Ours, not the paper's. A-SRPT paper: Problem (8) (``min sum_i C_i``) under
Eqs. (1)-(3); spec ``docs/families/asrpt.md``,
``exact``. They act on the integer data of
:mod:`ddlsched.models.asrpt_integer` and on the CP-SAT model of
:mod:`ddlsched.models.asrpt_cpsat`; :func:`ddlsched.models.asrpt_exact.solve_exact`
applies them (each switchable, :class:`Strengthening`, every one on by
default; all off is the model without them). None of them may
cut off *every* optimum of the integer data; why each cannot:

``incumbent_search`` (:func:`search_incumbent`)
    The greedy incumbent (serial schedule generation in release order) is
    replaced by the best serial schedule over several job orders (release;
    release + shortest duration; shortest duration; smallest GPU-time;
    largest GPU count first; each with ties by index), improved by
    adjacent-swap local search on the best order (passes until no swap
    improves, at most :data:`SWAP_PASSES`). Every candidate is a feasible
    schedule of the same integer data, so its value ``UB`` is an upper bound
    on the optimum; the windows ``L_i = min(H, UB - sum_{j != i} (r_j + min_u
    d_ju))`` of :mod:`ddlsched.models.asrpt_integer` hold every job of every
    optimum for any such ``UB`` (its proof there), and a smaller ``UB``
    gives tighter windows. The schedule is CP-SAT's solution hint (a warm
    start). The search stops when the method's deadline expires (only then does
    the result depend on the clock). With ``lp_bound``, the order of the jobs' mean completion times
    in the LP relaxation (an LP-ordering heuristic, as for time-indexed
    relaxations of ``sum C_j``) is searched too, after the LP is solved. Deterministic (a fixed number of evaluations, no clock).
``improve_incumbent`` (:func:`improved_incumbent`)
    The schedule of method ``improve`` (:mod:`ddlsched.heuristics.asrpt_improve`:
    the family's policies and offline list schedules, improved by its LNS over
    priority lists; run once on the instance, within :data:`IMPROVE_SHARE` of
    the time left) mapped onto the integer data: the servers renumbered so
    that job 0's GPU counts do not increase (the servers are identical, so
    this maps schedules to schedules of equal value, and job 0's vector is then
    one of its modes), each job's per-server GPU counts taken as its mode, and
    two serial schedules in the order of ``improve``'s starts (ties by
    arrival, then index): with those modes fixed and with the mode chosen by
    :func:`~ddlsched.models.asrpt_integer.serial_schedule`. Serial schedule
    generation builds a feasible schedule of the integer data in any order,
    so the better of the two is an upper bound ``UB`` like the greedy
    incumbent's, and it replaces the incumbent only when it is better: the
    windows ``L_i`` stay valid (same proof as ``incumbent_search``) and CP-SAT
    gets it as its hint. ``improve`` stops when its search converges (no
    clock: the same seed gives the same schedule); only when its share of the
    deadline expires first does the result depend on the clock. Without
    the family's simulator (``run_policy``, passed by the method's wiring)
    only the packed and offline starts are used. On the frontier suite's
    unproven 20- and 24-job seeds it found 1,752 units where CP-SAT reached
    1,806 in 50 s (the LP bound: 1,752, so a proof at once).
``job_windows`` (:func:`with_job_windows`)
    The windows ``L_i = min(H, UB - sum_{j != i} (r_j + min_u d_ju))`` use
    only each other job's own floor. Any valid lower bound ``B_i`` on
    ``sum_{j != i} C_j`` may replace that sum: in an optimum of value at most
    ``UB``, ``C_i = OPT - sum_{j != i} C_j <= UB - B_i``. Here ``B_i`` is
    ``ceil`` of the partition bound (``objective_bound`` below) of the jobs
    other than ``i``: the other jobs' part of any feasible schedule is a
    feasible schedule of those jobs alone (same releases, run times, at most
    ``G`` GPUs busy), so the theorem bounds their total. ``L_i = min(H, UB -
    max(floors, B_i))``; the incumbent fits them (its other jobs are such a
    schedule too), so the models stay feasible, and every later incumbent
    recomputes them with the same ``B_i``. On the frontier suite's 20- and
    24-job instances, with ``improve``'s incumbent, they cut the start slots
    of the time-indexed LP (and CP-SAT's start domains) by a factor of 1.9 to 3.3. ``n`` partition bounds,
    each ``O(n log n)`` per round.
``objective_bound`` (:func:`objective_lower_bound`)
    The constraint ``sum_i C_i >= ceil(LB)``, ``LB`` the partition bound of
    :mod:`ddlsched.models.asrpt_comm_bound` (``lb_busy``'s theorem: mean busy
    times and SRPT of the GPU-time relaxation) on the integer data, with
    ``p_i = min_u d_iu`` and ``q_i = (g_i / G) p_i``. The theorem holds for
    every feasible schedule of any jobs with releases ``r_i``, run times at
    least ``p_i`` and at most ``G`` GPUs busy at a time, which every
    schedule of the integer data is; so every schedule, and every optimum,
    satisfies it. ``ceil`` is valid as the objective is an integer; the float
    bound is lowered by 1e-9 (relative) first. CP-SAT's own relaxation of a
    sum of completion times over cumulatives is weak (``tiny(2,
    num_jobs=10)``: 362 units against an optimum of 571; this bound: 524).
``lp_bound`` (:func:`lp_lower_bound`)
    The constraint ``sum_i C_i >= ceil(D)``, ``D`` the weak-duality bound at
    HiGHS's row duals (:mod:`ddlsched.solvers.lp_dual_bound`: at most the value
    of the LP, whatever HiGHS's tolerances) of the LP relaxation of the
    time-indexed MILP of
    :mod:`ddlsched.models.asrpt_milp` on the same data and windows (every
    optimum fits the windows, so the relaxation's value is at most the
    optimum). Its relaxation is far stronger than CP-SAT's: ``tiny(2,
    num_jobs=10)`` LP 571 = the optimum, ``tiny(4, num_jobs=10)`` LP 1101 =
    the best schedule found; CP-SAT alone stays at 362 and 858. Solved by
    HiGHS's interior point method *with* crossover (the simplex took 52 s on
    ``tiny(4, num_jobs=10)``, the IPM 8 s under a load of 11), within
    :data:`LP_SHARE` of the time left; not tried when that share of the
    deadline's plan (``Deadline.plan_s``: the time limit, not what a loaded
    machine has left of it) is below :data:`LP_MIN_S` (Pyomo's build and
    hand-over overran a 0.1 s share by 0.4 s), so whether the LP, its bound
    and its job order are tried does not depend on the load, nor when the
    partition bound already meets the incumbent (nothing left to prove); when
    the IPM stops without an optimum (HiGHS says "unknown" on some tiny
    instances) the simplex gets the rest of that share; a stopped or failed
    solve adds nothing, and so does one without valid duals. The bound is
    checked against the incumbent all the same (a bound above a schedule's
    value is refused with a warning).
    Why crossover: without it the IPM's objective is that of an approximate
    primal point, *above* the LP optimum by more than the margin:
    ``tiny(3, num_jobs=20)`` gave 1187.0039 for an LP optimum of 1187 (simplex,
    and IPM with crossover), so ``ceil`` claimed 1188 where a schedule of
    1187 exists (found and proven optimal by the time-indexed MILP). After
    crossover the value is a basic solution's (1187.0 there; the crossover
    also took less time than the IPM's last iterations: 8 s against 16 s under
    a load of 12). Until the dual bound, ``ceil(LP - 1e-6 |LP|)`` on that basic
    solution's objective was the bound: sound in practice, not proven (a point
    optimal within tolerances of ``1e-7`` on 10^5 columns can lie further than
    the margin above the optimum); ``ceil(D)`` needs no margin.
``symmetry`` (:func:`identical_classes`)
    Jobs ``a < b`` with the same release and the same list of modes (usage
    vectors and durations; so the same configuration and iterations) get
    ``S_a <= S_b``. Take any optimum and, within each class, hand the
    class's (start, mode) pairs to its jobs in order of start: the jobs are
    interchangeable, so the result is feasible with the same value, and it
    satisfies the constraints. Job 0 (restricted to non-increasing ``u``, the
    server symmetry of :mod:`ddlsched.models.asrpt_integer`) has a shorter
    mode list than its twins, so it is in no class and the two symmetry
    breaks never conflict; the swap keeps an active schedule active and every
    job in its window (the windows hold for every optimum). The hint is
    re-sorted the same way.
``release_order`` (:func:`release_classes`)
    ``symmetry`` for jobs with the same list of modes but *any* releases:
    members of a class ordered by (release, index) get ``S_a <= S_b``. Take
    any optimum and hand the class's (start, mode) pairs, in order of start,
    to its jobs in that order. Feasible: the jobs differ only in their
    releases, and the ``k``-th smallest start is at least the ``k``-th
    smallest release (else ``k`` jobs would start, hence be released, before
    the ``k``-th smallest release, which only ``k - 1`` are); the value is the
    same, and so is the set of run intervals, so every job still ends by
    ``H`` and within its window (the windows hold for every schedule of
    value at most ``UB``, the incumbent's proof). It refines ``symmetry``
    (same release: index order), job 0 is in no class (its shorter mode
    list), so every constraint holds at once. The hint is re-sorted the same
    way. The tiny preset draws iterations from a short range, so jobs of one
    configuration often share a mode list: 5 classes of 2 to 4 jobs among the
    20 jobs of the frontier's 20-job seed 0.
``milp_proof`` (:func:`ddlsched.models.asrpt_exact.solve_exact`)
    CP-SAT's search gets half of what its LP bound (``lp_bound``, planned as
    without this switch) leaves of its solve's time; when it proves nothing, the time-indexed MILP of :mod:`ddlsched.models.asrpt_milp`
    (HiGHS's branch and cut, the ``solver="milp"`` model) solves the *same*
    integer data in the rest, within windows tightened by CP-SAT's schedule
    (valid: any feasible schedule's value). Both are exact models of that
    data, so the better schedule and the larger bound of the two are valid,
    and the result is ``optimal`` when either proves it; the two answers are
    compared as by ``cross_check`` (a disagreement claims nothing). Not a
    change of either model. Clock: whether the MILP runs depends on whether
    CP-SAT proved within its share, so on a loaded machine a proven optimum may
    come with the other model's schedule (the same value); an unproven result
    depends on the clock as every result at a time limit does. Why: on the frontier's unproven instances the
    gap left is between CP-SAT's incumbent and the LP bound, and CP-SAT's
    search closes neither side; the MILP's branch and cut on the same LP does
    (20 jobs, seed 3: 1,187 proven in 33 s; 24 jobs, seed 3: 1,349 in 21 s,
    under a load of 12, where CP-SAT stopped at 1,208 and 1,356 after 60 s).
``lp_relaxation``
    CP-SAT's ``linearization_level = 2`` (default 1): it adds the linear
    relaxation of the cumulatives and the interval constraints to its LP. A
    solver parameter: it changes the search, not the model or its optima.
    ``tiny(1, num_jobs=10)``: 20.9 s to proof at level 1, 0.08 s at level 2.

Dominance between modes (the issue's "drop a usage vector dominated by another
for the same job") is void here: two modes of a job use the same number of
GPUs, so one uses no more GPUs than the other on every server only when they
are the same vector; modes that differ by a permutation of servers have the
same duration and are not dominated (other jobs may block either).
"""

from __future__ import annotations

import dataclasses
import logging
import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ddlsched.deadline import Deadline
from ddlsched.errors import ModelTooLargeError, TimeLimitReached
from ddlsched.models.asrpt_comm_bound import partition_bound
from ddlsched.models.asrpt_integer import IntegerData, IntegerSolution, latest_ends, serial_schedule
from ddlsched.problems.asrpt_schedule import AsrptSchedule
from ddlsched.solvers.result import Status

if TYPE_CHECKING:
    from ddlsched.heuristics.asrpt_improve import PolicyRunner

__all__ = [
    "IMPROVE_SHARE",
    "LP_MIN_S",
    "LP_SHARE",
    "SWAP_PASSES",
    "LpBound",
    "Strengthening",
    "identical_classes",
    "improve_schedule",
    "improved_incumbent",
    "lp_lower_bound",
    "objective_lower_bound",
    "release_classes",
    "search_incumbent",
    "sorted_within_classes",
    "with_incumbent",
    "with_job_windows",
]

#: Share of the time left that ``improve`` may take (``improve_incumbent``).
IMPROVE_SHARE = 0.2
#: Passes of adjacent-swap local search over the best order (module docstring).
SWAP_PASSES = 3
#: Share of the time left that the LP relaxation of ``lp_bound`` may take.
LP_SHARE = 0.6
#: The LP is not tried when its share of the deadline's plan (``Deadline.plan_s``) is below this.
LP_MIN_S = 0.5
#: HiGHS options of the LP relaxation, tried in turn (module docstring).
_LP_OPTIONS = ((("solver", "ipm"), ("run_crossover", "on")), (("solver", "simplex"),))

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Strengthening:
    """Which strengthenings the exact model uses (module docstring); all on by default."""

    incumbent_search: bool = True
    objective_bound: bool = True
    symmetry: bool = True
    lp_relaxation: bool = True
    lp_bound: bool = True
    improve_incumbent: bool = True
    job_windows: bool = True
    release_order: bool = True
    milp_proof: bool = True

    @classmethod
    def none(cls) -> Strengthening:
        """The model without strengthenings (every switch off)."""
        return cls(False, False, False, False, False, False, False, False, False)

    def report(self) -> dict[str, bool]:
        """Every switch by name (``info['strengthening']``)."""
        return dataclasses.asdict(self)


def _orders(data: IntegerData) -> list[list[int]]:
    """The start orders of :func:`search_incumbent` (module docstring), duplicates removed."""
    n = data.num_jobs
    shortest = [min(m.duration for m in ms) for ms in data.modes]
    gpus = [sum(ms[0].usage) for ms in data.modes]
    keys: list[Callable[[int], tuple]] = [
        lambda i: (data.release[i], i),
        lambda i: (data.release[i] + shortest[i], i),
        lambda i: (shortest[i], data.release[i], i),
        lambda i: (shortest[i] * gpus[i], data.release[i], i),
        lambda i: (-gpus[i], data.release[i], i),
    ]
    out: list[list[int]] = []
    for key in keys:
        order = sorted(range(n), key=key)
        if order not in out:
            out.append(order)
    return out


def search_incumbent(
    data: IntegerData,
    extra_orders: Sequence[Sequence[int]] = (),
    deadline: Deadline | None = None,
) -> IntegerSolution:
    """The best serial schedule over :func:`_orders`, ``extra_orders`` and adjacent swaps
    (module docstring); the swaps stop early when ``deadline`` expires."""
    cluster = data.instance.cluster

    def schedule(order: Sequence[int]) -> tuple[int, IntegerSolution]:
        solution = serial_schedule(
            data.release, data.modes, cluster.servers, cluster.gpus_per_server, order
        )
        return solution.objective(data), solution

    best_value, best = data.incumbent.objective(data), data.incumbent
    best_order: list[int] | None = None
    for order in [*_orders(data), *map(list, extra_orders)]:
        if deadline is not None and deadline.expired():
            return best
        value, solution = schedule(order)
        if value < best_value:
            best_value, best, best_order = value, solution, order
    if best_order is None:
        best_order = _orders(data)[0]
    for _ in range(SWAP_PASSES):
        improved = False
        for k in range(len(best_order) - 1):
            if deadline is not None and deadline.expired():
                return best
            order = list(best_order)
            order[k], order[k + 1] = order[k + 1], order[k]
            value, solution = schedule(order)
            if value < best_value:
                best_value, best, best_order, improved = value, solution, order, True
        if not improved:
            break
    return best


def with_incumbent(data: IntegerData, incumbent: IntegerSolution) -> IntegerData:
    """``data`` with another incumbent and the windows its value allows."""
    upper = incumbent.objective(data)
    if upper >= data.incumbent.objective(data):
        return data
    windows = latest_ends(data.release, data.modes, upper, data.serial_horizon, data.others_bound)
    return dataclasses.replace(data, incumbent=incumbent, latest_end=windows)


def improve_schedule(
    data: IntegerData, deadline: Deadline, run_policy: PolicyRunner | None = None, seed: int = 0
) -> AsrptSchedule | None:
    """``improve``'s schedule of ``data.instance`` (``improve_incumbent``; module
    docstring), ``None`` when the deadline stopped every start."""
    from ddlsched.heuristics.asrpt_improve import POLICY_STARTS, STARTS, ImproveSettings, improve

    starts = tuple(name for name in STARTS if run_policy is not None or name not in POLICY_STARTS)
    settings = ImproveSettings(starts=starts, seed=seed)

    def no_policy(name: str, seed: int, deadline: Deadline) -> tuple[AsrptSchedule, str]:
        raise TimeLimitReached(f"no simulator to run {name}")  # pragma: no cover

    try:
        schedule, _, _ = improve(
            data.instance, settings, run_policy or no_policy, deadline.sub(IMPROVE_SHARE)
        )
    except TimeLimitReached as exc:
        log.info("asrpt improve_incumbent: no schedule (%s)", exc)
        return None
    return schedule


def improved_incumbent(data: IntegerData, schedule: AsrptSchedule) -> IntegerSolution | None:
    """The better serial schedule of ``data`` in ``schedule``'s start order, with its
    modes fixed or free (``improve_incumbent``; module docstring); ``None`` when a
    job's GPU counts are none of its modes."""
    instance = data.instance
    servers = instance.cluster.servers
    usage = []
    for job in instance.jobs:
        counts = [0] * servers
        for m, gpus in schedule.runs[job.id].gpus_on().items():
            counts[m] += gpus
        usage.append(counts)
    renumbered = sorted(range(servers), key=lambda m: (-usage[0][m], m))
    chosen = []
    for i, counts in enumerate(usage):
        vector = tuple(counts[m] for m in renumbered)
        modes = [k for k, mode in enumerate(data.modes[i]) if mode.usage == vector]
        if not modes:
            return None
        chosen.append(modes[0])
    order = sorted(
        range(data.num_jobs),
        key=lambda i: (schedule.runs[instance.jobs[i].id].start_s, data.release[i], i),
    )
    g = instance.cluster.gpus_per_server
    fixed_modes = [[data.modes[i][k]] for i, k in enumerate(chosen)]
    fixed = serial_schedule(data.release, fixed_modes, servers, g, order)
    fixed = IntegerSolution(fixed.start, tuple(chosen))
    free = serial_schedule(data.release, data.modes, servers, g, order)
    return min((fixed, free), key=lambda solution: solution.objective(data))


def objective_lower_bound(data: IntegerData) -> int:
    """``ceil(LB)`` of the partition bound on the integer data (module docstring)."""
    return _partition_units(data, range(data.num_jobs))


def _partition_units(data: IntegerData, jobs: Sequence[int]) -> int:
    """``ceil`` of the partition bound of ``jobs`` alone (``p_i = min_u d_iu``,
    ``q_i = (g_i / G) p_i``), lowered by 1e-9 (relative) first."""
    total_gpus = data.instance.cluster.num_gpus
    shortest = [min(m.duration for m in data.modes[i]) for i in jobs]
    sizes = [
        sum(data.modes[i][0].usage) / total_gpus * p for i, p in zip(jobs, shortest, strict=True)
    ]
    bound = partition_bound(
        [float(data.release[i]) for i in jobs], [float(p) for p in shortest], sizes
    ).value_s
    return math.ceil(bound * (1 - 1e-9) - 1e-9)


def with_job_windows(data: IntegerData) -> IntegerData:
    """``data`` with the windows of ``job_windows`` (module docstring): per job ``i``,
    the partition bound of the other jobs as the bound on ``sum_{j != i} C_j``."""
    others = tuple(
        _partition_units(data, [j for j in range(data.num_jobs) if j != i])
        for i in range(data.num_jobs)
    )
    upper = data.incumbent.objective(data)
    windows = latest_ends(data.release, data.modes, upper, data.serial_horizon, others)
    return dataclasses.replace(data, others_bound=others, latest_end=windows)


def identical_classes(data: IntegerData) -> list[list[int]]:
    """Classes (two or more jobs, ascending) of jobs with the same release and mode list."""
    by_key: dict[tuple, list[int]] = {}
    for i in range(data.num_jobs):
        key = (data.release[i], tuple((m.usage, m.duration) for m in data.modes[i]))
        by_key.setdefault(key, []).append(i)
    return [members for members in by_key.values() if len(members) >= 2]


def release_classes(data: IntegerData) -> list[list[int]]:
    """Classes (two or more jobs, by release then index) of jobs with the same mode list."""
    by_key: dict[tuple, list[int]] = {}
    for i in sorted(range(data.num_jobs), key=lambda i: (data.release[i], i)):
        by_key.setdefault(tuple((m.usage, m.duration) for m in data.modes[i]), []).append(i)
    return [members for members in by_key.values() if len(members) >= 2]


def sorted_within_classes(solution: IntegerSolution, classes: list[list[int]]) -> IntegerSolution:
    """``solution`` with each class's (start, mode) pairs handed out in order of start."""
    start, mode = list(solution.start), list(solution.mode)
    for members in classes:
        pairs = sorted((solution.start[i], solution.mode[i]) for i in members)
        for i, (s, k) in zip(members, pairs, strict=True):
            start[i], mode[i] = s, k
    return IntegerSolution(tuple(start), tuple(mode))


@dataclass(frozen=True)
class LpBound:
    """The rounded LP value (units) and the jobs by LP mean completion time."""

    bound: int
    order: tuple[int, ...]


def lp_lower_bound(data: IntegerData, deadline: Deadline) -> LpBound | None:
    """The rounded value of the time-indexed LP relaxation (module docstring), ``None``
    when it is not solved to optimality within ``LP_SHARE`` of ``deadline``; with the
    jobs in order of their LP mean completion time ``sum_{u,t} (t + d_iu) x[i,u,t]``."""
    import pyomo.environ as pyo

    from ddlsched.models.asrpt_milp import build_time_indexed
    from ddlsched.solvers.backends import solve_model
    from ddlsched.solvers.limits import SolveLimits

    phase = deadline.sub(LP_SHARE)
    # planned from the limit (Deadline.plan_s), not from the time left: whether the LP (its
    # bound and its job order) is tried is the same on a quiet and on a loaded machine
    if phase.plan_s < LP_MIN_S:  # Pyomo's build and hand-over overrun a tiny share
        return None
    if phase.expired():  # nothing left: a cut build would add nothing either
        return None
    try:
        with phase.interrupting("building the asrpt LP relaxation"):
            model = build_time_indexed(data, phase)
            pyo.TransformationFactory("core.relax_integer_vars").apply_to(model)
    except (ModelTooLargeError, TimeLimitReached) as exc:
        log.info("asrpt lp_bound: not built (%s)", exc)
        return None
    for options in _LP_OPTIONS:
        with warnings.catch_warnings():  # an IPM stop HiGHS reports as "unknown"
            warnings.simplefilter("ignore", RuntimeWarning)
            limits = SolveLimits(highs_options=options, lp_dual_bound=True)
            out = solve_model(model, "highs", limits, phase)
        if out.status is Status.OPTIMAL and out.incumbent is not None:
            break
        log.info("asrpt lp_bound: the LP stopped (%s, %s)", options, out.message)
    else:
        return None
    safe = out.dual_bound
    if safe is None:  # no valid duals: nothing proven (module docstring)
        log.info("asrpt lp_bound: no dual bound (HiGHS gave no valid duals)")
        return None
    bound = math.ceil(safe)  # the proven bound (HiGHS's primal objective is not one)
    if bound > data.incumbent.objective(data):
        log.warning("asrpt lp_bound: LP bound %r above the incumbent; not used", safe)
        return None
    mean = [0.0] * data.num_jobs
    for i, k, t in model.IKT:
        share = pyo.value(model.x[i, k, t], exception=False) or 0.0
        mean[i] += (t + data.modes[i][k].duration) * share
    order = tuple(sorted(range(data.num_jobs), key=lambda i: (mean[i], i)))
    return LpBound(bound, order)
