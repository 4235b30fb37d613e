"""Lower bound ``lb_lagrange`` of family ``asrpt``: Lagrangian relaxation of the GPU capacity.

A bound of ours (asked for as "an LP or Lagrangian bound on trace
windows"), not the paper's. A-SRPT paper: Problem (8) (``min sum_i C_i``)
under Eqs. (1)-(3) and the per-iteration time of Eqs. (4)-(7); spec
``docs/families/asrpt.md``, "Bounds". Lagrangian
relaxation of a capacity constraint in time is textbook (e.g. Fisher 1973,
"Optimal solution of scheduling problems using Lagrange multipliers"); its
use here, on the trimmed schedule below, the multiplier grid and the step
rule are ours.

Notation. ``p_i = n_i alpha_lb_i`` (``alpha_lb`` of :mod:`ddlsched.models.asrpt`:
at most job ``i``'s per-iteration time in *any* placement, so ``p_i`` is at
most its running time), ``g_i`` its GPUs, ``G = M g`` the cluster's GPUs.

The relaxation (R). Choose completion times ``C_i >= r_i + p_i`` so that at
every instant ``t`` the jobs with ``t in [C_i - p_i, C_i)`` use at most ``G``
GPUs in total; minimise ``sum_i C_i``. Every feasible schedule of Problem (8)
gives a feasible point of (R) with the same ``C_i``: job ``i`` runs on
``g_i`` GPUs during ``[t_i, C_i)`` with ``C_i - t_i = n_i alpha_i >= p_i`` and
``t_i >= r_i`` (Eq. 1), so ``[C_i - p_i, C_i)`` lies inside it and the GPUs in
use at ``t`` in (R) are a subset of those in use in the schedule, at most
``G`` by Eq. (3) summed over the servers. Hence ``OPT(R) <= OPT_A``.

Theorem (ours). For every function ``lambda(t) >= 0``, constant on the slots
of a grid ``0 = b_0 < ... < b_K`` (and 0 from ``b_K`` on), with ``Lam(t) =
int_0^t lambda``,

    L(lambda) = sum_i min_{s >= r_i} f_i(s) - G Lam(b_K),
    f_i(s) = s + p_i + g_i (Lam(s + p_i) - Lam(s)),

is at most ``OPT(R)`` and so at most ``OPT_A``.

Proof. For a feasible point of (R) with starts ``s_i = C_i - p_i``, the
usage ``U(t) = sum_i g_i 1[s_i <= t < C_i] <= G``, so ``int lambda (U - G) dt
<= 0`` and ``sum_i C_i >= sum_i C_i + int lambda (U - G) = sum_i f_i(s_i) -
G Lam(b_K) >= L(lambda)`` (``s_i >= r_i``). Any grid and any ``lambda`` give a
valid bound: the grid's coarseness decides only the strength, never the
validity, and job starts are continuous (not rounded to the grid).

Each inner minimum is exact: ``Lam`` is piecewise linear with breakpoints on
the grid, so ``f_i`` is piecewise linear in ``s`` with breakpoints where ``s``
or ``s + p_i`` is a grid point; and ``f_i(s) >= s + p_i`` (as ``Lam`` does not
decrease), so no ``s`` beyond ``s_max = f_i(r_i) - p_i`` beats ``s = r_i``.
The minimum is therefore attained at ``r_i`` or at a breakpoint in ``(r_i,
s_max]`` (on ``[last breakpoint, s_max]`` ``f_i`` is linear and ``f_i(s_max) >=
f_i(r_i)``), and those candidates are all evaluated.

``lambda = 0`` gives ``sum_i (r_i + p_i) = lb_sum`` (it is the first iterate),
so the best value over the iterates is at least ``lb_sum``. The method
(``families/asrpt.py``) reports the larger of it and ``lb_busy``
(:mod:`ddlsched.models.asrpt_comm_bound`), both valid, so ``lb_lagrange >=
max(lb_sum, lb_srpt, lb_busy)`` on every instance. At the best ``lambda``
over *all* grids ``L`` is the LP relaxation of the time-indexed start
formulation of (R) (the subproblem has integral extreme points), which is
stronger than the mean-busy-time LP (Goemans 1997) that ``lb_busy`` relaxes
further.

Choices (ours; they decide the strength, never the validity):

* The grid: ``slots`` slots from 0 to the makespan ``H`` of the relaxed
  schedule ``UB`` below (``lambda = 0`` after ``H``), with boundaries at the
  quantiles of that schedule's and ``lb_sum``'s start and end times, so
  the slots are short where jobs start and end densely.
* ``lambda`` by projected subgradient ascent: the subgradient on slot ``k``
  is ``U_k - G len_k`` (the GPU-seconds of the inner minimisers in the slot
  minus the capacity), components with ``lambda_k = 0`` and a negative
  subgradient dropped; Polyak's step ``theta (UB - L) / |u|^2`` with ``UB``
  below, ``theta`` from 1, halved after ``patience`` iterations without a
  better bound (default :data:`DEFAULT_PATIENCE`); at most ``iterations``
  iterations, fewer when the deadline expires (the best value so far stays
  valid) or ``theta`` falls below ``MIN_THETA``. The defaults (200
  iterations, patience 5) are sized for trace windows of thousands of jobs;
  a larger patience with more iterations climbs further: on the testbed's
  75-job sets (``benchmarks/suites/asrpt-testbed.toml``: 2,000 iterations,
  patience 50) the bound of job set 2 rises by about 1 %
  (``benchmarks/results/asrpt.md``, "The testbed's certified interval"). The
  ascent is deterministic: the same ``slots``, ``iterations`` and
  ``patience``, uncut by a deadline, give the same bound.
* ``UB``: the better (smaller ``sum_i C_i``) of two work-conserving list
  schedules of (R): at every release and completion, the released waiting
  jobs are scanned by smallest GPU time ``g_i p_i`` (resp. earliest
  release), ties by index, and each one whose ``g_i`` GPUs are free
  starts, never preempted. Both are feasible points of (R), so ``OPT(R) <=
  UB``. No bound derived from (R) (LP, Lagrangian, or (R) solved exactly)
  can exceed ``UB``; the method records it as ``relaxation_ub`` (not a bound
  on Problem (8): a schedule of (R) need not be one of Problem (8), whose
  servers hold ``g`` GPUs each), which measures how much room the
  relaxation leaves above the bound.

:mod:`ddlsched.models.asrpt_branch` (``lb_branch``) reuses the ascent
(:func:`ascend`) with two generalisations that keep the theorem: each start
confined to ``[a_i, e_i]`` (``latest``; the inner minimum is then also
attained at ``e_i``) and further capacity rows (:class:`CapacityCut`), each
relaxed with multipliers of its own. ``lb_lagrange`` uses neither.

Cost per iteration: ``O(I log I + K)`` plus, for each job whose window
``[r_i, r_i + p_i)`` meets a slot with ``lambda > 0``, one pass over the
grid points in ``(r_i, s_max + p_i]``.
"""

from __future__ import annotations

import bisect
import heapq
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ddlsched.deadline import Deadline
from ddlsched.models.asrpt import AlphaLb, alpha_lbs
from ddlsched.problems.asrpt import AsrptInstance

__all__ = [
    "DEFAULT_ITERATIONS",
    "DEFAULT_PATIENCE",
    "DEFAULT_SLOTS",
    "Ascent",
    "CapacityCut",
    "LagrangeBound",
    "ascend",
    "checked_jobs",
    "greedy_relaxed_starts",
    "lagrangian_value",
    "lb_lagrange",
    "relaxation_bound",
    "relaxed_grid",
    "rounded_capacity_cuts",
]

#: Default number of multiplier slots and of subgradient iterations (module docstring).
DEFAULT_SLOTS = 2000
DEFAULT_ITERATIONS = 200
#: Iterations without a better bound before the step factor is halved (default).
DEFAULT_PATIENCE = 5
#: The step factor below which the ascent stops.
MIN_THETA = 1e-4


@dataclass(frozen=True)
class LagrangeBound:
    """The bound (s), the relaxed schedule's ``sum C_i`` (``UB``) and how the ascent went."""

    value_s: float
    relaxation_ub_s: float
    iterations: int
    best_iteration: int
    slots: int
    stopped: str


def greedy_relaxed_starts(
    releases: np.ndarray,
    durations: np.ndarray,
    gpus: np.ndarray,
    total_gpus: float,
    priority: np.ndarray,
) -> np.ndarray:
    """Starts of the work-conserving list schedule of the relaxation (R) (module docstring).

    At every release and completion, the released waiting jobs are scanned by
    ``(priority, index)`` and each one whose ``g_i`` GPUs are free starts.
    Needs ``gpus <= total_gpus`` for every job.
    """
    n = len(releases)
    order = sorted(range(n), key=lambda i: (releases[i], i))
    starts = np.zeros(n)
    waiting: list[tuple[float, int]] = []  # sorted (priority, index)
    running: list[tuple[float, float]] = []  # heap of (end, gpus)
    free, fewest = float(total_gpus), float(gpus.min(initial=0.0))
    t, k = 0.0, 0
    while k < n or waiting:
        next_release = float(releases[order[k]]) if k < n else math.inf
        t = max(t, min(next_release, running[0][0]) if waiting and running else next_release)
        while running and running[0][0] <= t:
            free += heapq.heappop(running)[1]
        while k < n and releases[order[k]] <= t:
            bisect.insort(waiting, (float(priority[order[k]]), order[k]))
            k += 1
        position = 0
        while position < len(waiting) and free >= fewest:
            i = waiting[position][1]
            if gpus[i] <= free:
                starts[i] = t
                free -= float(gpus[i])
                heapq.heappush(running, (t + float(durations[i]), float(gpus[i])))
                del waiting[position]
            else:
                position += 1
    return starts


def _grid(points: np.ndarray, horizon: float, slots: int) -> np.ndarray:
    """``0 = b_0 < ... < b_K = horizon`` at the quantiles of ``points`` (at most ``slots`` slots)."""
    inside = points[(points > 0.0) & (points < horizon)]
    if len(inside) == 0 or slots <= 1:
        return np.array([0.0, horizon])
    cuts = np.quantile(inside, np.linspace(0.0, 1.0, slots + 1)[1:-1])
    return np.unique(np.concatenate(([0.0], cuts, [horizon])))


def _cumulative(boundaries: np.ndarray, density: np.ndarray) -> np.ndarray:
    """``Lam`` at the boundaries for ``lambda`` constant on each slot."""
    return np.concatenate(([0.0], np.cumsum(density * np.diff(boundaries))))


def _best_starts(
    releases: np.ndarray,
    durations: np.ndarray,
    gpus: np.ndarray,
    boundaries: np.ndarray,
    lam: np.ndarray,
    latest: np.ndarray | None = None,
    cut_terms: Sequence[tuple[np.ndarray, np.ndarray]] = (),
) -> tuple[np.ndarray, np.ndarray]:
    """Each job's minimiser of ``f_i`` over ``r_i <= s <= latest_i`` (no upper end when
    ``latest`` is None) and the minimum (module docstring: with an upper end ``e`` the
    minimum is at ``r_i``, at a breakpoint in ``(r_i, min(e, s_max)]`` or at ``e``).
    ``cut_terms``: ``(weights, Lam_k)`` of further capacity rows (:class:`CapacityCut`),
    each adding ``w_ik (Lam_k(s + p_i) - Lam_k(s))`` to ``f_i`` (same breakpoints)."""
    ends = releases + durations
    values = ends + gpus * (np.interp(ends, boundaries, lam) - np.interp(releases, boundaries, lam))
    for weights, lam_k in cut_terms:
        values += weights * (
            np.interp(ends, boundaries, lam_k) - np.interp(releases, boundaries, lam_k)
        )
    starts = releases.copy()
    for i in np.flatnonzero(values > ends):
        r, p, g = releases[i], durations[i], gpus[i]
        s_max = values[i] - p
        last = math.inf if latest is None else float(latest[i])
        top = min(s_max, last)
        low = np.searchsorted(boundaries, r, side="right")
        high = np.searchsorted(boundaries, top, side="right")
        low_end = np.searchsorted(boundaries, r + p, side="right")
        high_end = np.searchsorted(boundaries, top + p, side="right")
        parts = [boundaries[low:high], boundaries[low_end:high_end] - p]
        if last <= s_max:
            parts.append(np.array([last]))
        candidates = np.concatenate(parts)
        if len(candidates) == 0:
            continue
        f = (
            candidates
            + p
            + g
            * (np.interp(candidates + p, boundaries, lam) - np.interp(candidates, boundaries, lam))
        )
        for weights, lam_k in cut_terms:
            if weights[i]:
                f += weights[i] * (
                    np.interp(candidates + p, boundaries, lam_k)
                    - np.interp(candidates, boundaries, lam_k)
                )
        best = int(np.argmin(f))
        if f[best] < values[i]:
            values[i] = f[best]
            starts[i] = candidates[best]
    return starts, values


def _slot_usage(
    starts: np.ndarray, durations: np.ndarray, gpus: np.ndarray, boundaries: np.ndarray
) -> np.ndarray:
    """GPU-seconds in each slot of jobs running ``[s_i, s_i + p_i)`` on ``g_i`` GPUs."""
    times = np.concatenate((starts, starts + durations))
    slopes = np.concatenate((gpus, -gpus))
    order = np.argsort(times, kind="stable")
    times, slopes = times[order], slopes[order]
    slope_sum = np.cumsum(slopes)
    offset_sum = np.cumsum(slopes * times)
    last = np.searchsorted(times, boundaries, side="right") - 1
    gpu_seconds = np.where(
        last >= 0,
        slope_sum[np.maximum(last, 0)] * boundaries - offset_sum[np.maximum(last, 0)],
        0.0,
    )
    return np.diff(gpu_seconds)


@dataclass(frozen=True)
class CapacityCut:
    """A further capacity row ``sum_i w_i [i active at t] <= capacity`` valid for every
    point of (R) (:func:`rounded_capacity_cuts`: ``size`` is its ``k``), relaxed with its
    own multipliers."""

    size: float
    weights: np.ndarray
    capacity: float


def rounded_capacity_cuts(gpus: np.ndarray, total_gpus: float) -> tuple[CapacityCut, ...]:
    """``sum_i floor(g_i / k) [i active] <= floor(G / k)`` for each GPU count ``k > 1`` of
    the jobs with ``G / k`` fractional (at most ``floor(G / k)`` jobs of ``k`` GPUs at once).

    Valid: at every instant of a point of (R) ``sum g_i <= G`` over the active jobs, and
    ``floor`` is superadditive, so ``sum floor(g_i / k) <= floor(sum g_i / k) <= floor(G /
    k)``. (R)'s LP may run ``G / k`` such jobs at a time (3.5 of 4 GPUs on 14); the cut
    allows 3. A rounding of the capacity row by a dual-feasible function (Fekete and
    Schepers 2001); the choice of ``k`` is ours."""
    sizes = sorted(
        {float(g) for g in gpus if g > 1 and math.floor(total_gpus / g) < total_gpus / g}
    )
    return tuple(
        CapacityCut(k, np.floor(gpus / k), float(math.floor(total_gpus / k))) for k in sizes
    )


def lagrangian_value(
    releases: np.ndarray,
    durations: np.ndarray,
    gpus: np.ndarray,
    total_gpus: float,
    boundaries: np.ndarray,
    density: np.ndarray,
    latest: np.ndarray | None = None,
    cuts: Sequence[CapacityCut] = (),
    cut_densities: Sequence[np.ndarray] = (),
) -> tuple[float, np.ndarray]:
    """``L(lambda)`` of the module's theorem for ``lambda = density`` (>= 0) on the grid,
    and the inner minimisers (starts); with ``latest``, each start is also at most
    ``latest_i`` (the bound of the jobs' points whose starts lie there); with ``cuts``,
    each further row relaxed with its multipliers ``cut_densities`` (>= 0): the same
    proof, each row's ``int mu_k (U_k - capacity_k) <= 0``."""
    lam = _cumulative(boundaries, density)
    lams = [_cumulative(boundaries, mu) for mu in cut_densities]
    terms = [(cut.weights, lam_k) for cut, lam_k in zip(cuts, lams, strict=True)]
    starts, values = _best_starts(releases, durations, gpus, boundaries, lam, latest, terms)
    value = math.fsum(values) - total_gpus * float(lam[-1])
    for cut, lam_k in zip(cuts, lams, strict=True):
        value -= cut.capacity * float(lam_k[-1])
    return value, starts


@dataclass(frozen=True)
class Ascent:
    """The best ``L(lambda)`` of a subgradient ascent, its multipliers (one row per
    capacity row: the GPUs', then each cut's) and how it went."""

    value: float
    density: np.ndarray
    iterations: int
    best_iteration: int
    stopped: str


def ascend(
    releases: np.ndarray,
    durations: np.ndarray,
    gpus: np.ndarray,
    total_gpus: float,
    boundaries: np.ndarray,
    *,
    target: float,
    iterations: int,
    patience: int,
    density: np.ndarray | None = None,
    latest: np.ndarray | None = None,
    cuts: Sequence[CapacityCut] = (),
    deadline: Deadline | None = None,
) -> Ascent:
    """Projected subgradient ascent on ``L`` (module docstring, "Choices") from ``density``
    (``(1 + len(cuts), slots)``; zeros when None), Polyak's step towards ``target`` over
    every row; stops when ``L`` reaches ``target``."""
    lengths = np.diff(boundaries)
    weights = [gpus] + [cut.weights for cut in cuts]
    capacities = [total_gpus * lengths] + [cut.capacity * lengths for cut in cuts]
    if density is None:
        density = np.zeros((len(weights), len(lengths)))
    if len(releases) == 0:  # no job: sum_i C_i = 0, attained at lambda = 0
        return Ascent(0.0, density, 0, 0, "optimal")
    best, best_at, best_density, theta, stale, done = -math.inf, 0, density, 1.0, 0, 0
    stopped = "iterations"
    for done in range(1, iterations + 1):
        value, starts = lagrangian_value(
            releases, durations, gpus, total_gpus, boundaries, density[0], latest, cuts,
            density[1:],
        )  # fmt: skip
        if value > best * (1 + 1e-12) or best == -math.inf:
            best, best_at, best_density, stale = max(best, value), done, density, 0
        else:
            stale += 1
            if stale >= patience:
                theta, stale = theta / 2, 0
        directions = []
        for row, (w, capacity) in enumerate(zip(weights, capacities, strict=True)):
            direction = _slot_usage(starts, durations, w, boundaries) - capacity
            direction[(density[row] <= 0.0) & (direction < 0.0)] = 0.0
            directions.append(direction)
        norm = sum(float(np.dot(direction, direction)) for direction in directions)
        if norm <= 0.0 or target <= value:
            stopped = "optimal" if norm <= 0.0 else "reached the relaxation's upper bound"
            break
        if theta < MIN_THETA:
            stopped = "step below minimum"
            break
        if deadline is not None and deadline.expired():
            stopped = "time limit"
            break
        density = np.stack(
            [
                np.maximum(0.0, density[row] + theta * (target - value) / norm * direction)
                for row, direction in enumerate(directions)
            ]
        )
    return Ascent(best, best_density, done, best_at, stopped)


def checked_jobs(
    releases: Sequence[float],
    durations: Sequence[float],
    gpus: Sequence[float],
    total_gpus: float,
    minimums: Mapping[str, tuple[int, int]],
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The jobs as arrays, after checking them and each ``name: (value, least)`` setting."""
    r = np.asarray(releases, dtype=float)
    p = np.asarray(durations, dtype=float)
    g = np.asarray(gpus, dtype=float)
    if not len(r) == len(p) == len(g):
        raise ValueError("releases, durations and gpus must have the same length")
    if len(r) and (g.max() > total_gpus or p.min() < 0 or g.min() < 0):
        raise ValueError("every job needs 0 <= g_i <= G GPUs and a duration >= 0")
    for name, (value, least) in minimums.items():
        if value < least:
            raise ValueError(f"{name} must be at least {least}, got {value}")
    return r, p, g


def relaxed_grid(
    releases: np.ndarray, durations: np.ndarray, gpus: np.ndarray, total_gpus: float, slots: int
) -> tuple[np.ndarray, float]:
    """The multiplier grid and ``UB`` of the module docstring ("Choices")."""
    r, p, g = releases, durations, gpus
    schedules = [greedy_relaxed_starts(r, p, g, total_gpus, key) for key in (g * p, r)]
    totals = [math.fsum(starts + p) for starts in schedules]
    upper = min(totals)
    relaxed = schedules[totals.index(upper)]
    horizon = float(max((relaxed + p).max(initial=0.0), 1.0))
    boundaries = _grid(np.concatenate((r, r + p, relaxed, relaxed + p)), horizon, slots)
    return boundaries, upper


def relaxation_bound(
    releases: Sequence[float],
    durations: Sequence[float],
    gpus: Sequence[float],
    total_gpus: float,
    *,
    slots: int = DEFAULT_SLOTS,
    iterations: int = DEFAULT_ITERATIONS,
    patience: int = DEFAULT_PATIENCE,
    deadline: Deadline | None = None,
) -> LagrangeBound:
    """The best ``L(lambda)`` over the subgradient iterates (module docstring)."""
    r, p, g = checked_jobs(
        releases, durations, gpus, total_gpus,
        {"slots": (slots, 1), "iterations": (iterations, 1), "patience": (patience, 1)},
    )  # fmt: skip
    boundaries, upper = relaxed_grid(r, p, g, total_gpus, slots)
    run = ascend(
        r,
        p,
        g,
        total_gpus,
        boundaries,
        target=upper,
        iterations=iterations,
        patience=patience,
        deadline=deadline,
    )
    return LagrangeBound(
        run.value, upper, run.iterations, run.best_iteration, len(boundaries) - 1, run.stopped
    )


def lb_lagrange(
    instance: AsrptInstance,
    deadline: Deadline | None = None,
    *,
    alpha_lbs_of: Mapping[str, AlphaLb] | None = None,
    slots: int = DEFAULT_SLOTS,
    iterations: int = DEFAULT_ITERATIONS,
    patience: int = DEFAULT_PATIENCE,
) -> LagrangeBound:
    """The bound of the module docstring on ``instance`` (``alpha_lb`` per configuration)."""
    lbs = alpha_lbs(instance, deadline=deadline) if alpha_lbs_of is None else alpha_lbs_of
    releases = [job.arrival_s for job in instance.jobs]
    durations = [job.iterations * lbs[job.config].value_s for job in instance.jobs]
    gpus = [instance.configs[job.config].num_gpus for job in instance.jobs]
    return relaxation_bound(
        releases,
        durations,
        gpus,
        instance.cluster.num_gpus,
        slots=slots,
        iterations=iterations,
        patience=patience,
        deadline=deadline,
    )
