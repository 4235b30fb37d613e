"""The integer data of family ``asrpt``'s offline optimum, shared by its two scheduling models.

A-SRPT paper, Problem (8) under Eqs. (1)-(3); spec ``docs/families/asrpt.md``,
``exact``. The models are
:mod:`ddlsched.models.asrpt_cpsat` (CP-SAT) and :mod:`ddlsched.models.asrpt_milp`
(the time-indexed MILP); :func:`ddlsched.models.asrpt_exact.solve_exact` builds
their data (modes, ``alpha*``, rounding) and assembles the result.

Reduction (spec): a job's *modes* are its per-server GPU-count vectors ``u``
(``sum_m u_m = g_i``, ``0 <= u_m <= g``) with duration ``n_i alpha*(u)``,
``alpha*(u)`` the ``placement`` optimum on ``available = u``. A schedule is
a start ``S_i`` and a mode per job; server ``m`` holds ``u_m`` GPUs of job
``i`` over ``[S_i, S_i + d_i(u))``. Data are integers in the instance's
``time_unit_s`` (:class:`IntegerData`: releases ``r_i``, durations ``d_iu``,
and for every job a latest completion ``L_i``).

The models: CP-SAT (:mod:`ddlsched.models.asrpt_cpsat`) and the
time-indexed MILP (:mod:`ddlsched.models.asrpt_milp`, the cross-check).

Clique cuts (both models; redundant, valid for every schedule): a set of
(job, mode) pairs whose demands on one resource pairwise exceed its
capacity never run two at a time: over the cluster (demand ``g_i``,
capacity ``G``) and per server (demand ``u_m``, capacity ``g``). Built
greedily (:func:`cliques`: every pair above half the capacity, then the
largest others that exceed it with the smallest member). In the MILP
``sum_{members} (z[tau] - z[tau - d]) <= 1`` per time unit, in CP-SAT a
no-overlap. On tiny instances they closed most of the MILP's root gap
(``tiny(7)``: LP bound 419 vs optimum 475 units; 36 s with HiGHS before,
0.5 s after).

Choices (written down here; the spec leaves them open):

* Horizon. An optimum exists among the *active* schedules (those the
  serial schedule-generation scheme produces), so every job of some optimum
  ends by ``H = max_i r_i + sum_i max_u d_iu``. With an incumbent of value
  ``UB`` (any feasible schedule of the same integer data; the greedy
  :func:`serial_schedule` always gives one), every job ``i`` of an optimum
  ends by ``L_i = min(H, UB - sum_{j != i} (r_j + min_u d_ju))``, because
  every other job ends no earlier than ``r_j + min_u d_ju``. Both models use
  these windows; the incumbent fits in them, so they are never infeasible.
* Symmetry. The servers are identical and empty at time 0, so permuting
  them maps schedules to schedules of equal value; the first job of the
  instance is restricted to non-increasing vectors ``u`` (in both models;
  the greedy incumbent obeys it too).
* Floating point: a decoded schedule's start is ``max(S_i unit, r_i)``,
  nudged up (by ulps) to the float finish of any job that ends at ``S_i``
  on a shared server, so the evaluator's exact capacity sweep sees the
  finish before the start (:func:`to_schedule`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ddlsched.errors import SolverError
from ddlsched.problems.asrpt import AsrptInstance, job_alpha
from ddlsched.problems.asrpt_schedule import AsrptSchedule, JobRun

__all__ = [
    "ROUNDINGS",
    "IntegerData",
    "IntegerSolution",
    "Mode",
    "cliques",
    "latest_ends",
    "make_data",
    "serial_schedule",
    "to_schedule",
]

#: Rounding of the integer data: exact (every value whole), up (a feasible
#: schedule, evaluated in continuous time) or down (a valid bound).
ROUNDINGS = ("exact", "up", "down")


# --------------------------------------------------------------------------- data


@dataclass(frozen=True)
class Mode:
    """One mode of a job: GPUs per cluster server, duration (time units), and where the
    replicas go (``servers`` and ``counts[s][k]`` replicas of stage ``s`` on
    ``servers[k]``; ``None`` when no placement is known, only a duration bound)."""

    usage: tuple[int, ...]
    duration: int
    servers: tuple[int, ...] | None = None
    counts: tuple[tuple[int, ...], ...] | None = None


@dataclass(frozen=True)
class IntegerSolution:
    """A start (time units) and a mode index per job, in instance order."""

    start: tuple[int, ...]
    mode: tuple[int, ...]

    def objective(self, data: IntegerData) -> int:
        """``sum_i (S_i + d_i)`` in time units."""
        return sum(
            s + data.modes[i][k].duration
            for i, (s, k) in enumerate(zip(self.start, self.mode, strict=True))
        )


@dataclass(frozen=True, eq=False)
class IntegerData:
    """The integer data both models are built from (module docstring)."""

    instance: AsrptInstance
    rounding: str
    release: tuple[int, ...]
    modes: tuple[tuple[Mode, ...], ...]
    latest_end: tuple[int, ...]
    serial_horizon: int
    incumbent: IntegerSolution
    #: per job, a lower bound on ``sum_{j != i} C_j`` tighter than the floors (the
    #: windows' second term; ``None``: the floors alone)
    others_bound: tuple[int, ...] | None = None

    @property
    def num_jobs(self) -> int:
        return len(self.release)

    @property
    def horizon(self) -> int:
        """The last time unit any job may occupy (``max_i L_i``)."""
        return max(self.latest_end)

    @property
    def num_job_modes(self) -> int:
        return sum(len(m) for m in self.modes)

    def feasible_modes(self, i: int) -> list[int]:
        """Modes of job ``i`` that can end by ``L_i``."""
        return [
            k
            for k, mode in enumerate(self.modes[i])
            if self.release[i] + mode.duration <= self.latest_end[i]
        ]


def serial_schedule(
    release: Sequence[int],
    modes: Sequence[Sequence[Mode]],
    servers: int,
    gpus_per_server: int,
    order: Sequence[int] | None = None,
) -> IntegerSolution:
    """Greedy serial schedule generation: jobs in ``order`` (default: release, then
    index), each in the mode that ends first (ties: the first mode) at its earliest
    feasible start given the jobs already placed (insertion allowed)."""
    n = len(release)
    if order is None:
        order = sorted(range(n), key=lambda i: (release[i], i))
    length = max(release) + sum(max(m.duration for m in ms) for ms in modes) + 2
    load = np.zeros((servers, length), dtype=np.int64)
    start = [0] * n
    chosen = [0] * n
    for i in order:
        best: tuple[int, int, int] | None = None  # (end, k, start)
        for k, mode in enumerate(modes[i]):
            t = _earliest(load, release[i], mode, gpus_per_server)
            if best is None or t + mode.duration < best[0]:
                best = (t + mode.duration, k, t)
        assert best is not None
        end, k, t = best
        start[i], chosen[i] = t, k
        for m, u in enumerate(modes[i][k].usage):
            if u:
                load[m, t:end] += u
    return IntegerSolution(tuple(start), tuple(chosen))


def _earliest(load: np.ndarray, release: int, mode: Mode, g: int) -> int:
    if mode.duration == 0:
        return release
    bad = np.zeros(load.shape[1], dtype=bool)
    for m, u in enumerate(mode.usage):
        if u:
            bad |= load[m] + u > g
    # first t >= release with no bad unit in [t, t + d)
    bad_count = np.concatenate(([0], np.cumsum(bad)))
    d = mode.duration
    last = load.shape[1] - d
    ts = np.arange(release, last + 1)
    ok = bad_count[ts + d] - bad_count[ts] == 0
    hits = np.flatnonzero(ok)
    if not len(hits):  # pragma: no cover - the array is long enough by construction
        raise SolverError("serial schedule generation ran past its horizon")
    return int(ts[hits[0]])


def latest_ends(
    release: Sequence[int],
    modes: Sequence[Sequence[Mode]],
    upper_bound: int,
    horizon: int,
    others_bound: Sequence[int] | None = None,
) -> tuple[int, ...]:
    """``L_i = min(H, UB - sum_{j != i} (r_j + min_u d_ju))`` (module docstring); with
    ``others_bound``, ``UB - max(that sum, others_bound[i])`` (any valid lower bound on
    ``sum_{j != i} C_j``: the same proof)."""
    floors = [r + min(m.duration for m in ms) for r, ms in zip(release, modes, strict=True)]
    total = sum(floors)
    others = [total - f for f in floors]
    if others_bound is not None:
        others = [max(a, b) for a, b in zip(others, others_bound, strict=True)]
    return tuple(min(horizon, upper_bound - rest) for rest in others)


def make_data(
    instance: AsrptInstance,
    rounding: str,
    release: Sequence[int],
    modes: Sequence[Sequence[Mode]],
) -> IntegerData:
    """Integer data with the greedy incumbent and the windows it allows."""
    if rounding not in ROUNDINGS:
        raise ValueError(f"unknown rounding {rounding!r}")
    cluster = instance.cluster
    serial_horizon = max(release) + sum(max(m.duration for m in ms) for ms in modes)
    incumbent = serial_schedule(release, modes, cluster.servers, cluster.gpus_per_server)
    upper = sum(
        s + modes[i][k].duration
        for i, (s, k) in enumerate(zip(incumbent.start, incumbent.mode, strict=True))
    )
    windows = latest_ends(release, modes, upper, serial_horizon)
    return IntegerData(
        instance=instance,
        rounding=rounding,
        release=tuple(int(r) for r in release),
        modes=tuple(tuple(ms) for ms in modes),
        latest_end=windows,
        serial_horizon=serial_horizon,
        incumbent=incumbent,
    )


def to_schedule(data: IntegerData, solution: IntegerSolution) -> AsrptSchedule:
    """The :class:`AsrptSchedule` of an integer solution (continuous-time starts, see the
    module docstring for the float nudge); every chosen mode must have a placement."""
    instance = data.instance
    cluster = instance.cluster
    unit = instance.time_unit_s
    ends = [
        solution.start[i] + data.modes[i][solution.mode[i]].duration for i in range(data.num_jobs)
    ]
    order = sorted(range(data.num_jobs), key=lambda i: (solution.start[i], ends[i], i))
    finish: dict[int, float] = {}
    runs: dict[str, JobRun] = {}
    for i in order:
        job = instance.jobs[i]
        mode = data.modes[i][solution.mode[i]]
        if mode.servers is None or mode.counts is None:
            raise SolverError(f"job {job.id}: the chosen mode {mode.usage} has no placement")
        start = max(solution.start[i] * unit, job.arrival_s)
        for j, fin in finish.items():
            if ends[j] <= solution.start[i] and fin > start:
                mode_j = data.modes[j][solution.mode[j]]
                if any(a and b for a, b in zip(mode.usage, mode_j.usage, strict=True)):
                    start = fin
        if start - solution.start[i] * unit > 1e-6 * max(1.0, unit):
            raise SolverError(f"job {job.id}: float nudge of {start - solution.start[i] * unit}")
        config = instance.configs[job.config]
        finish[i] = start + job.iterations * job_alpha(cluster, config, mode.counts)
        runs[job.id] = JobRun(start_s=start, servers=mode.servers, counts=mode.counts)
    return AsrptSchedule({job.id: runs[job.id] for job in instance.jobs})


# --------------------------------------------------------------------------- clique cuts


def cliques(data: IntegerData) -> list[list[tuple[int, int]]]:
    """(job, mode) cliques: one over the cluster (demand ``g_i``, capacity ``G``), one per
    server (demand ``u_m``, capacity ``g``); two members never run at the same time."""
    cluster = data.instance.cluster
    pairs = [(i, k) for i in range(data.num_jobs) for k in data.feasible_modes(i)]
    out = [_clique([(sum(data.modes[i][k].usage), (i, k)) for i, k in pairs], cluster.num_gpus)]
    for m in range(cluster.servers):
        out.append(
            _clique(
                [(data.modes[i][k].usage[m], (i, k)) for i, k in pairs], cluster.gpus_per_server
            )
        )
    return out


def _clique(items: list[tuple[int, Any]], capacity: int) -> list[Any]:
    """Keys of items whose demands pairwise exceed ``capacity``: every item above half of
    it, then (largest first) any item that exceeds it together with the smallest member."""
    ranked = sorted(items, key=lambda item: -item[0])
    members = [(d, key) for d, key in ranked if 2 * d > capacity]
    if not members:
        return []
    smallest = members[-1][0]
    for d, key in ranked[len(members) :]:
        if d + smallest > capacity:
            members.append((d, key))
            smallest = d
    return [key for _, key in members]
