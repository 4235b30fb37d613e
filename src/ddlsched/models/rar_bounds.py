"""Bounding formulations of RAR-DDLS (spec ``rar.md``, "Exact and bounding").

Two Pyomo formulations bound the optimum makespan ``T*`` from below (and
``timeindexed`` also supplies a schedule, an upper bound); the exact MILP is
:mod:`ddlsched.models.rar`.

``timeindexed`` — the paper's reformulation (Eqs. 10-13) in tractable form:
a column per (job, placement pattern, start slot). Patterns are taken up to
symmetry of equal servers: servers of equal capacity form a class, and a
pattern says how many GPUs the job takes on each class; it uses the fewest
servers of the class that can hold them (more servers only lengthen the
job), and capacity is enforced per class and slot (``sum g_tau <= n_tau
O_tau``). Durations are contention-free (``p = 1``). This relaxes both
contention and the packing inside a class, so its optimum (or dual bound)
is a valid LOWER bound. Its schedule, mapped to concrete GPUs and executed
by the evaluator, is an UPPER bound. With ``contention="worst"`` the
durations use ``p = max_contention`` instead; the model's value is then no
longer a bound (recorded), and the evaluated schedule stays an upper bound;
the *planned* makespan is not one (the class aggregation lets the decoder
spread a job over more servers than its pattern), so it is only reported in
``info['planned_makespan']``.
Time aggregation ``slot_width = w > 1``: the bound model counts a job only
in the coarse slots it covers entirely, ``D = floor((d + 1) / w) - 1`` of
them whatever its fine start (shown in the docstring of
:func:`_coarse_duration_lb`); its makespan ``C`` is in fine slots, each
column ending at the earliest fine end a job placed there can have
(:func:`_fine_end_lb`), so ``T* >= C`` (the plain ``T* >= w C_coarse``
loses up to ``2w`` a job). The schedule model
rounds durations up (``ceil(d / w)``) and is solved separately. When a job
has more patterns than ``max_patterns``, it keeps a single pooled column
(``G_j`` GPUs of the whole cluster, shortest duration): still a relaxation,
so the bound stays valid; such jobs are listed in ``info``.

``load_lb`` — Problem (14): assign each job to ``G_j`` GPUs so as to
minimise the largest GPU load, with each job's shortest contention-free
duration ``rho_min_j`` (fewest servers). Any schedule's makespan is at least
its largest GPU load, so the optimum of (14) is a lower bound; we solve it
with loads aggregated per server (``sum_j y[j,s] rho_min_j <= O_s L``, a
relaxation, so still valid), and report the maximum of it and the closed
forms ``max_j rho_min_j`` and ``ceil(sum_j G_j rho_min_j / N)``.

All makespans are integral, so every lower bound ``b`` is reported as
``ceil(b - 1e-6)``, and solves stop once ``incumbent - bound < 1``.
The closed forms and :func:`rho_min` here are shared with the exact MILP.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import pyomo.environ as pyo

from ddlsched.deadline import Deadline
from ddlsched.errors import (
    InfeasibleScheduleError,
    InvalidInstanceError,
    ModelTooLargeError,
    TimeLimitReached,
)
from ddlsched.problems.rar import RarInstance, RarJob
from ddlsched.problems.rar_schedule import RarAssignment, RarSchedule, evaluate
from ddlsched.problems.rar_timing import execution_slots, max_contention, max_servers, min_servers
from ddlsched.solvers.backends import ModelSolve, SolveLimits, solve_model
from ddlsched.solvers.limits import check_model_size
from ddlsched.solvers.result import Outcome, Status

__all__ = [
    "AUTO",
    "PatternCatalogue",
    "TimeGrid",
    "assign_gpus",
    "ceil_bound",
    "choose_grid",
    "closed_form_bounds",
    "fine_ends",
    "incumbent_makespan",
    "integral_limits",
    "load_lb",
    "model_counts",
    "pattern_catalogue",
    "rho_min",
    "timeindexed",
]

log = logging.getLogger(__name__)

# Makespans are integers and the makespan variables are integer: stop once
# incumbent - bound <= 0.5 (a gap just below 1 is within solver tolerances).
_INTEGRAL_GAP = 0.5


def ceil_bound(value: float | None) -> float | None:
    """A lower bound on an integral makespan, rounded up (``ceil(b - 1e-6)``)."""
    return None if value is None else float(math.ceil(value - 1e-6))


def integral_limits(limits: SolveLimits | None) -> SolveLimits:
    """``limits`` with the absolute gap raised so that a solve stops at integrality.

    Makespans are integral: a gap below 1 proves optimality (module
    docstring). Every other setting, ``highs_options`` included, is kept.
    """
    limits = limits or SolveLimits()
    return replace(limits, abs_gap=max(limits.abs_gap, _INTEGRAL_GAP))


def rho_min(job: RarJob, instance: RarInstance) -> int:
    """Shortest execution time of a job in slots, over every server count, without contention."""
    best = math.inf
    for n in range(min_servers(job, instance.servers), max_servers(job, instance.servers) + 1):
        best = min(
            best, execution_slots(job, instance.network, n, 1 if n > 1 else 0, instance.progress)
        )
    if math.isinf(best):
        raise InvalidInstanceError(
            f"job {job.id!r} never progresses on any placement (tau > 1 slot under 'floor')"
        )
    return int(best)


def closed_form_bounds(instance: RarInstance) -> dict[str, float]:
    """The closed-form lower bounds ``max_j rho_min_j`` and ``ceil(sum_j G_j rho_min_j / N)``."""
    durations = [rho_min(job, instance) for job in instance.jobs]
    energy = sum(job.gpus * d for job, d in zip(instance.jobs, durations, strict=True))
    return {
        "longest_job": float(max(durations)),
        "gpu_time": float(math.ceil(energy / instance.num_gpus - 1e-9)),
    }


# --------------------------------------------------------------------------- time-indexed ILP


def _server_classes(instance: RarInstance) -> list[tuple[int, int]]:
    """(capacity, number of servers) per class of equal servers, largest first."""
    counts: dict[int, int] = {}
    for cap in instance.servers:
        counts[cap] = counts.get(cap, 0) + 1
    return sorted(counts.items(), reverse=True)


def _class_patterns(
    gpus: int, classes: Sequence[tuple[int, int]], limit: int
) -> list[tuple[int, ...]] | None:
    """GPU counts per server class summing to ``gpus`` that fit; ``None`` beyond ``limit``."""
    out: list[tuple[int, ...]] = []

    def rec(i: int, left: int, acc: tuple[int, ...]) -> bool:
        if i == len(classes):
            if left == 0:
                out.append(acc)
                if len(out) > limit:
                    return False
            return True
        cap, count = classes[i]
        for g in range(min(left, cap * count), -1, -1):
            if not rec(i + 1, left - g, (*acc, g)):
                return False
        return True

    return out if rec(0, gpus, ()) else None


def _pattern_servers(pattern: Sequence[int], classes: Sequence[tuple[int, int]]) -> int:
    return sum(math.ceil(g / cap) for g, (cap, _) in zip(pattern, classes, strict=True))


def _coarse_duration_lb(d: int, w: int) -> int:
    """Coarse slots of width ``w`` fully covered by any fine interval of length ``d``.

    An interval ``[a, a + d)`` covers the windows ``[Kw, (K+1)w)`` with
    ``ceil(a/w) <= K < floor((a+d)/w)``; their number is smallest for
    ``a = 1 (mod w)``-like offsets and equals ``floor((d + 1) / w) - 1``
    (and ``d`` itself when ``w = 1``). Counting a job only in windows it
    covers entirely keeps every coarse capacity constraint implied by a fine
    one, and the job ends after its last covered window, so
    ``T* >= w * C_coarse``.
    """
    if w == 1:
        return d
    return max(0, (d + 1) // w - 1)


def model_counts(
    durations: dict[tuple[int, int], int],
    patterns: dict[int, list[tuple[int, ...] | None]],
    horizon: int,
) -> tuple[int, int]:
    """``(variables, nonzeros)`` of the time-indexed model, counted before it is built.

    Per column ``(j, k, t)``: one entry in its job's choice row and one in its
    makespan row, and in each of its ``d`` slots one cluster-capacity entry
    and one per GPU class the pattern uses.
    """
    variables = nonzeros = 0
    for (j, k), d in durations.items():
        n = max(0, horizon - d + 1)
        variables += n
        nonzeros += n * (2 + d * (1 + sum(1 for g in (patterns[j][k] or ()) if g)))
    return variables, nonzeros


_SIZE_HINT = (
    "aggregate time (--param slot_width=K), pool placement patterns (--param max_patterns=K) "
    "or leave both 'auto'"
)


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


def _build_timeindexed(
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
    check_model_size("rar timeindexed ILP", variables, _SIZE_HINT, nonzeros=nonzeros)
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


def _pick(
    instance: RarInstance,
    pattern: tuple[int, ...] | None,
    classes: Sequence[tuple[int, int]],
    servers_of_class: dict[int, list[int]],
    free_at: dict[tuple[int, int], int],
    start: int,
) -> list[tuple[int, int]]:
    """GPUs free at ``start`` meeting ``pattern`` (per class: fullest servers first); [] if none."""
    if pattern is None:
        return []
    picked: list[tuple[int, int]] = []
    for c, (cap, _) in enumerate(classes):
        need = pattern[c]
        candidates = sorted(
            servers_of_class[cap],
            key=lambda s: (-sum(1 for g in range(cap) if free_at[s, g] <= start), s),
        )
        for s in candidates:
            if need == 0:
                break
            free = [(s, g) for g in range(cap) if free_at[s, g] <= start]
            take = free[: min(need, len(free))]
            picked.extend(take)
            need -= len(take)
        if need:
            return []
    return picked


def assign_gpus(
    instance: RarInstance,
    chosen: dict[int, tuple[int, int]],
    catalogue: PatternCatalogue,
    fine_durations: dict[int, int],
    *,
    list_schedule: bool = False,
) -> RarSchedule:
    """Map chosen (pattern, start) pairs to concrete GPUs, greedily, job by job.

    ``chosen[j] = (k, start)``: pattern index and planned fine start slot of
    job ``j``; jobs are placed in order of ``(start, j)``, and
    ``fine_durations[j]`` (the pattern's planned duration) books their GPUs.
    Each class's GPUs go to the servers of that class with the most GPUs
    free at the start (by planned intervals). When a pattern cannot be met
    on concrete servers (the class aggregation allowed it) or is pooled, the
    job takes the earliest-free GPUs; the dispatch evaluator then delays it
    as needed, so the result is always a feasible schedule.

    ``list_schedule``: ``start`` only orders the jobs; each job starts at the
    earliest time (a GPU release time) at which its pattern can be met, as
    in list scheduling (used by the randomized rounding of
    :mod:`ddlsched.models.rar_rounding`).
    """
    classes, patterns = catalogue.classes, catalogue.patterns
    free_at = {gpu: 0 for gpu in instance.gpu_ids}
    servers_of_class = {
        cap: [s for s, c in enumerate(instance.servers) if c == cap] for cap, _ in classes
    }
    assignments = {}
    for j in sorted(chosen, key=lambda j: (chosen[j][1], j)):
        job = instance.jobs[j]
        k, start = chosen[j]
        pattern = patterns[j][k]
        if list_schedule:
            picked = []
            if pattern is not None:
                for moment in sorted(set(free_at.values())):
                    picked = _pick(instance, pattern, classes, servers_of_class, free_at, moment)
                    if picked:
                        start = moment
                        break
        else:
            picked = _pick(instance, pattern, classes, servers_of_class, free_at, start)
        if len(picked) != job.gpus:
            picked = sorted(instance.gpu_ids, key=lambda gpu: (free_at[gpu], gpu))[: job.gpus]
            if list_schedule:
                start = max(free_at[g] for g in picked)
        end = max(start, max(free_at[g] for g in picked)) + fine_durations[j]
        for gpu in picked:
            free_at[gpu] = end
        assignments[job.id] = RarAssignment(tuple(picked), start)
    return RarSchedule(assignments)


@dataclass(frozen=True)
class PatternCatalogue:
    """Placement patterns up to symmetry of equal servers, with their durations.

    ``patterns[j]`` lists GPU counts per server class (``None``: the pooled
    column of a job with more than ``max_patterns`` patterns);
    ``durations[j, k]`` is the execution time in slots of pattern ``k`` on
    the fewest servers it needs, at contention ``p`` (1, or the worst).
    """

    classes: tuple[tuple[int, int], ...]
    patterns: dict[int, list[tuple[int, ...] | None]]
    durations: dict[tuple[int, int], int]
    pooled: tuple[str, ...]


def pattern_catalogue(
    instance: RarInstance,
    max_patterns: int = 64,
    contention: str = "free",
    deadline: Deadline | None = None,
) -> PatternCatalogue:
    """Enumerate every job's patterns and durations (shared by ``timeindexed`` and ``load_lb``)."""
    deadline = deadline or Deadline.unlimited()
    classes = _server_classes(instance)
    p_plan = 1 if contention == "free" else max_contention(instance)
    net, rule = instance.network, instance.progress
    patterns: dict[int, list[tuple[int, ...] | None]] = {}
    durations: dict[tuple[int, int], int] = {}
    pooled = []
    for j, job in enumerate(instance.jobs):
        deadline.check("enumerating placement patterns")
        found = _class_patterns(job.gpus, classes, max_patterns)
        if found is None:
            pooled.append(job.id)
            patterns[j] = [None]
            spans = range(
                min_servers(job, instance.servers), max_servers(job, instance.servers) + 1
            )
            finite = [
                d
                for n in spans
                if not math.isinf(d := execution_slots(job, net, n, p_plan if n > 1 else 0, rule))
            ]
            if not finite:
                raise InvalidInstanceError(f"job {job.id!r} never progresses on any placement")
            durations[j, 0] = int(min(finite) if contention == "free" else max(finite))
            continue
        patterns[j] = []
        for pattern in found:
            n = _pattern_servers(pattern, classes)
            d = execution_slots(job, net, n, p_plan if n > 1 else 0, rule)
            if math.isinf(d):  # the job never progresses on this pattern
                continue
            durations[j, len(patterns[j])] = int(d)
            patterns[j].append(pattern)
        if not patterns[j]:
            raise InvalidInstanceError(f"job {job.id!r} never progresses on any placement")
    return PatternCatalogue(tuple(classes), patterns, durations, tuple(pooled))


def _solves_outcome(solves: Sequence[ModelSolve]) -> dict[str, Any]:
    """Backend, summed model size and solver time of several solves (Outcome fields)."""
    if not solves:
        return {}
    return {
        "backend": solves[0].backend,
        "backend_version": solves[0].backend_version,
        "model_size": tuple(
            sum(size) for size in zip(*(s.model_size for s in solves), strict=True)
        ),
        "solver_time_s": sum(s.runtime_s for s in solves),
        "time_limit_hit": any(s.time_limit_hit for s in solves),
    }


#: What ``slot_width`` and ``max_patterns`` take to be chosen from the instance and the limits.
AUTO = "auto"
#: Seconds per constraint-matrix nonzero to build a time-indexed model in Pyomo and hand it to
#: HiGHS (measured on the paper preset: 6.2 us to build, 6.3-7.9 us to hand over; rounded up).
BUILD_S_PER_NONZERO = 15e-6
#: Share of the time left that building the models may take when the size is chosen.
BUILD_SHARE = 0.3
#: Binary columns HiGHS settles per second of solve time on the paper preset (time-indexed
#: ILPs of ~22,000 columns in all solved to optimality in ~3 s, ~50,000 did not in 25 s, on a
#: loaded machine); the automatic grid keeps the ILP columns below this rate times the solve
#: time left.
ILP_COLUMNS_PER_S = 2_000
#: The same for the LP relaxation (:mod:`ddlsched.models.rar_rounding`).
LP_COLUMNS_PER_S = 20_000
#: Pattern caps tried, in order, when ``max_patterns`` is ``'auto'`` and no width fits with
#: the first (fewer patterns: more jobs pooled, a weaker but still valid bound).
AUTO_PATTERN_CAPS = (64, 16, 4, 1)
#: The coarsest automatic slot width leaves at least this many model slots in the horizon.
MIN_COARSE_SLOTS = 8


@dataclass(frozen=True)
class TimeGrid:
    """Slot width, horizon (fine slots) and pattern cap of a time-indexed model.

    ``variables``/``nonzeros``: the estimate of the models to build (the
    largest model's variables, the nonzeros of all of them); ``auto``: chosen
    by :func:`choose_grid`; ``within_time``: the estimated build time fits
    :data:`BUILD_SHARE` of the time left (when ``False``, the coarsest grid
    that fits memory was taken and the deadline may stop the build).
    """

    slot_width: int
    horizon: int
    max_patterns: int
    variables: int
    nonzeros: int
    auto: bool
    within_time: bool

    def to_info(self) -> dict[str, Any]:
        """The grid as ``info`` entries."""
        return {
            "slot_width": self.slot_width,
            "model_horizon": self.horizon,
            "max_patterns": self.max_patterns,
            "estimated_variables": self.variables,
            "estimated_nonzeros": self.nonzeros,
            "grid_auto": self.auto,
            "grid_within_time": self.within_time,
        }


def incumbent_makespan(instance: RarInstance) -> tuple[int, str] | None:
    """``(makespan, method)`` of the better of the LS and FF baselines, as evaluated; ``None``
    when neither finds a schedule within the horizon.

    Cheap (0.04 s on the paper preset). Any schedule's makespan ``U`` bounds
    the optimum, ``T* <= U``, so a relaxation restricted to the horizon
    ``U`` still contains an optimal schedule and its bound stays valid.
    """
    from ddlsched.heuristics.rar_baselines import ff, ls

    best = None
    for name, heuristic in (("ls", ls), ("ff", ff)):
        plan = heuristic(instance)
        if plan.schedule is None:
            continue
        try:
            makespan = evaluate(instance, plan.schedule).makespan
        except InfeasibleScheduleError:
            continue
        if best is None or makespan < best[0]:
            best = (makespan, name)
    return best


def _widths(horizon: int) -> list[int]:
    """Candidate slot widths, finest first: 1..10, then about 25 % apart."""
    top = max(1, horizon // MIN_COARSE_SLOTS)
    out, w = [], 1
    while w <= top:
        out.append(w)
        w = w + 1 if w < 10 else math.ceil(w * 1.25)
    return out


def _grid_durations(
    fine: dict[tuple[int, int], int], w: int, schedule: bool
) -> dict[tuple[int, int], int]:
    """Coarse durations: fully covered slots (bound model) or ``ceil(d / w)`` (schedule model)."""
    if schedule:
        return {key: math.ceil(d / w) for key, d in fine.items()}
    return {key: _coarse_duration_lb(d, w) for key, d in fine.items()}


def choose_grid(
    instance: RarInstance,
    horizon: int,
    slot_width: int | str = AUTO,
    max_patterns: int | str = AUTO,
    contention: str = "free",
    deadline: Deadline | None = None,
    *,
    schedule_model: bool = True,
    columns_per_s: float = ILP_COLUMNS_PER_S,
) -> tuple[PatternCatalogue, TimeGrid]:
    """The pattern catalogue and the grid of the time-indexed model(s), refusing what cannot fit.

    ``slot_width`` and ``max_patterns`` given as integers are kept; ``'auto'``
    takes the largest cap of :data:`AUTO_PATTERN_CAPS` for which some width
    fits memory, and with it the finest width whose models pass :func:`check_model_size`
    (variable cap and memory budget), whose estimated build time
    (:data:`BUILD_S_PER_NONZERO` per nonzero) fits :data:`BUILD_SHARE` of
    what remains of ``deadline`` and whose columns the solver can settle in
    the rest (``columns_per_s``: :data:`ILP_COLUMNS_PER_S`, or
    :data:`LP_COLUMNS_PER_S` for an LP); if none fits the time, the coarsest
    width that fits memory. ``schedule_model``: a width ``w > 1`` also builds the
    rounded-up schedule model (counted). Raises
    :class:`~ddlsched.errors.ModelTooLargeError` (one line) when nothing
    fits, before anything is built.
    """
    deadline = deadline or Deadline.unlimited()
    caps = AUTO_PATTERN_CAPS if max_patterns == AUTO else (int(max_patterns),)
    widths = _widths(horizon) if slot_width == AUTO else [int(slot_width)]
    budget_s = deadline.remaining_s() * BUILD_SHARE
    max_columns = deadline.remaining_s() * (1 - BUILD_SHARE) * columns_per_s
    error: ModelTooLargeError | None = None
    fallback = None
    for cap in caps:
        catalogue = pattern_catalogue(instance, cap, contention, deadline)
        for w in widths:
            durations = [_grid_durations(catalogue.durations, w, False)]
            if schedule_model and w > 1:
                durations.append(_grid_durations(catalogue.durations, w, True))
            counts = [model_counts(d, catalogue.patterns, horizon // w) for d in durations]
            try:
                for variables, nonzeros in counts:
                    check_model_size("rar timeindexed ILP", variables, _SIZE_HINT, nonzeros)
            except ModelTooLargeError as exc:
                error = error or exc
                continue
            nonzeros = sum(nz for _, nz in counts)
            columns = sum(v for v, _ in counts)
            in_time = nonzeros * BUILD_S_PER_NONZERO <= budget_s and columns <= max_columns
            grid = TimeGrid(
                w,
                horizon,
                cap,
                max(v for v, _ in counts),
                nonzeros,
                slot_width == AUTO or max_patterns == AUTO,
                in_time,
            )
            if in_time or slot_width != AUTO:
                return catalogue, grid
            fallback = (catalogue, grid)  # the coarsest width that fits memory so far
        if fallback is not None:
            return fallback  # pool no more jobs for time alone: pooling costs schedule quality
    assert error is not None
    raise error


def _model_horizon(
    instance: RarInstance, horizon: int | None, contention: str, deadline: Deadline
) -> tuple[int, str]:
    """Fine horizon of the models and where it came from (module docstring of ``timeindexed``).

    The LS/FF incumbent runs under ``deadline`` (interrupted at it: on 1,000
    jobs it takes seconds); stopped, the horizon is the instance's ``T``.
    """
    if horizon is not None:
        return min(instance.horizon, int(horizon)), "argument"
    if contention == "free":
        try:
            with deadline.interrupting("the LS/FF incumbent that sets the model horizon"):
                found = incumbent_makespan(instance)
        except TimeLimitReached:
            return instance.horizon, "instance (the LS/FF incumbent hit the time limit)"
        if found is not None and found[0] < instance.horizon:
            return found[0], f"incumbent ({found[1]})"
    return instance.horizon, "instance"


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
    H, horizon_from = _model_horizon(instance, horizon, contention, deadline)
    if slot_width != AUTO:
        catalogue, grid = choose_grid(instance, H, slot_width, max_patterns, contention, deadline)
        return _timeindexed_pass(
            instance, catalogue, grid, horizon_from, contention, backend, limits, deadline
        )
    # 'auto': a first pass on a quarter of the time, then a finer grid on the rest, on the
    # horizon of the best schedule so far (T* <= its makespan); the best of both is kept.
    passes: list[Outcome] = []
    shares = (FIRST_PASS_SHARE, 1.0) if deadline.remaining_s() >= TWO_PASS_MIN_S else (1.0,)
    for share in shares:
        phase = deadline.sub(share)
        catalogue, grid = choose_grid(instance, H, slot_width, max_patterns, contention, phase)
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
    return Outcome(
        best.schedule,
        status,
        bound=bound,
        info=info,
        backend=best.backend,
        backend_version=best.backend_version,
        model_size=sizes[-1] if sizes else None,
        solver_time_s=sum(o.solver_time_s or 0.0 for o in passes),
        time_limit_hit=any(o.time_limit_hit for o in passes),
    )


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
    H = grid.horizon
    patterns, fine = catalogue.patterns, catalogue.durations
    classes = catalogue.classes
    pooled = list(catalogue.pooled)
    w = grid.slot_width
    two_models = w > 1
    solves = []
    info: dict[str, Any] = {
        **grid.to_info(),
        "horizon_from": horizon_from,
        "contention": contention,
        "pooled_jobs": pooled,
        "num_columns_per_job_max": max(len(p) for p in patterns.values()),
    }
    # Bound model: durations rounded down to fully covered coarse slots.
    coarse_h = H // w
    lb_durations = _grid_durations(fine, w, schedule=False)
    try:
        bound_model = _build_timeindexed(
            instance,
            lb_durations,
            patterns,
            classes,
            coarse_h,
            deadline,
            fine_ends=fine_ends(fine, w) if w > 1 else None,
        )
    except TimeLimitReached as exc:
        bound_model, info["stopped"] = None, str(exc)
    relaxation_infeasible = bound_model is None and "stopped" not in info
    bound_solve = None
    if bound_model is not None:
        phase = deadline.sub(0.5) if two_models else deadline
        bound_solve = solve_model(bound_model, backend, limits, phase)
        solves.append(bound_solve)
        relaxation_infeasible = bound_solve.status is Status.INFEASIBLE
    closed = closed_form_bounds(instance)
    bound = None
    if contention == "free":
        model_bound = None  # in fine slots
        if relaxation_infeasible:
            # Not even the relaxation fits the model horizon: T* >= w (coarse_h + 1) > H.
            model_bound = w * (coarse_h + 1)
        elif bound_solve is not None and bound_solve.status is not Status.ERROR:
            model_bound = bound_solve.bound
        bound = ceil_bound(max(model_bound or 0.0, *closed.values()))
        info["bound_from_model"] = model_bound
        info["closed_form_bounds"] = closed
    info["bound_valid"] = contention == "free"
    # Schedule model: the bound model itself when w = 1, else durations rounded up.
    schedule_model, schedule_solve = bound_model, bound_solve
    if two_models and "stopped" not in info:
        ub_durations = _grid_durations(fine, w, schedule=True)
        schedule_solve = None
        try:
            schedule_model = _build_timeindexed(
                instance, ub_durations, patterns, classes, H // w, deadline
            )
        except TimeLimitReached as exc:
            schedule_model, info["stopped"] = None, str(exc)
        if schedule_model is not None:
            schedule_solve = solve_model(schedule_model, backend, limits, deadline)
            solves.append(schedule_solve)
    schedule = objective = None
    if schedule_solve is not None and schedule_solve.has_solution:
        chosen = _chosen_columns(schedule_model, w)
        chosen_fine = {j: fine[j, k] for j, (k, _) in chosen.items()}
        schedule = assign_gpus(instance, chosen, catalogue, chosen_fine)
        info["planned_makespan"] = float(pyo.value(schedule_model.C)) * w
        try:
            objective = float(evaluate(instance, schedule).makespan)
            info["evaluated_makespan"] = objective
        except InfeasibleScheduleError as exc:
            # Executed with contention the plan may overrun T: keep the bound, drop the schedule.
            info["schedule_rejected"] = str(exc)
            schedule = None
    if objective is not None:
        # A schedule meeting the valid bound is optimal (the method pipeline checks that
        # the evaluated schedule never beats the bound).
        status = (
            Status.OPTIMAL if bound is not None and objective <= bound + 1e-6 else Status.FEASIBLE
        )
    elif contention == "free" and relaxation_infeasible and instance.horizon == H:
        status = Status.INFEASIBLE
        info["reason"] = f"no schedule finishes within the horizon T = {H}"
    elif bound is not None:
        status = Status.BOUND_ONLY
    elif contention == "worst" and any(solve.status is Status.ERROR for solve in solves):
        status = Status.ERROR
        info["error"] = "a solve of the worst-contention model failed"
    elif contention == "worst" and "stopped" not in info and solves:
        # An infeasible worst-contention model proves nothing about the instance: the
        # method found no schedule (a result, not a failure).
        status = Status.NO_SOLUTION
        why = info.get("schedule_rejected", "the model has no schedule within the horizon")
        info["reason"] = f"no schedule found with worst-contention durations: {why}"
    else:
        status = Status.TIME_LIMIT_NO_SOLUTION if solves else Status.ERROR
    info["solver_status"] = [str(solve.status) for solve in solves]
    outcome = Outcome(schedule, status, bound=bound, info=info, **_solves_outcome(solves))
    if "stopped" in info:
        outcome.time_limit_hit = True
    return outcome


# --------------------------------------------------------------------------- load bound


def load_lb(
    instance: RarInstance,
    *,
    backend: str = "highs",
    limits: SolveLimits | None = None,
    max_patterns: int = 64,
    deadline: Deadline | None = None,
) -> Outcome:
    """Problem (14) bound: choose a pattern per job to minimise the largest GPU load.

    Loads are averaged over the GPUs of each server class (and of the whole
    cluster), a relaxation of the per-GPU maximum, with the contention-free
    pattern durations of :func:`pattern_catalogue` (the same ones as
    ``timeindexed``, so any ``timeindexed`` schedule of makespan ``C`` gives a
    load solution with ``L <= C``: ``load_lb <= timeindexed`` by construction
    when ``slot_width = 1`` and both are solved to optimality; with time
    aggregation either may be larger).
    Reported together with the closed-form bounds (``info['components']``);
    every part is valid.
    """
    limits = limits or SolveLimits()
    deadline = deadline or limits.deadline()
    jobs = instance.jobs
    cat = pattern_catalogue(instance, max_patterns, "free", deadline)
    cols = [(j, k) for j in range(len(jobs)) for k in range(len(cat.patterns[j]))]
    m = pyo.ConcreteModel(name="rar_load_lb")
    m.u = pyo.Var(cols, domain=pyo.Binary)
    m.L = pyo.Var(domain=pyo.NonNegativeReals)
    m.choose = pyo.Constraint(
        range(len(jobs)), rule=lambda m, j: sum(m.u[j, k] for k in range(len(cat.patterns[j]))) == 1
    )
    m.job_fits = pyo.Constraint(
        range(len(jobs)),
        rule=lambda m, j: (
            sum(cat.durations[j, k] * m.u[j, k] for k in range(len(cat.patterns[j]))) <= m.L
        ),
    )
    m.class_load = pyo.ConstraintList()
    for c, (cap, count) in enumerate(cat.classes):
        terms = [
            cat.patterns[j][k][c] * cat.durations[j, k] * m.u[j, k]
            for j, k in cols
            if cat.patterns[j][k] is not None and cat.patterns[j][k][c]
        ]
        if terms:
            m.class_load.add(sum(terms) <= cap * count * m.L)
    m.cluster_load = pyo.Constraint(
        expr=sum(jobs[j].gpus * cat.durations[j, k] * m.u[j, k] for j, k in cols)
        <= instance.num_gpus * m.L
    )
    m.obj = pyo.Objective(expr=m.L, sense=pyo.minimize)
    deadline.check("building the Problem (14) model")
    solve = solve_model(m, backend, limits, deadline)
    components: dict[str, float | None] = dict(closed_form_bounds(instance))
    components["problem14"] = ceil_bound(solve.bound) if solve.bound is not None else None
    valid = [v for v in components.values() if v is not None]
    return Outcome(
        None,
        Status.BOUND_ONLY,
        bound=float(max(valid)),
        info={"components": components},
        **_solves_outcome([solve]),
    )
