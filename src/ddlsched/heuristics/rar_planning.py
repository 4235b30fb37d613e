"""Shared machinery of the ``rar`` heuristics: estimated-time list scheduling.

Paper: Yu, Ji, Rajan, Liu, MobiHoc 2022, Section 5 (Algorithms 1-3) and
Section 7 (baselines); spec ``docs/families/rar.md``. SJF-BCO
(:mod:`ddlsched.heuristics.sjf_bco`) and the baselines FF, LS and RAND
(:mod:`ddlsched.heuristics.rar_baselines`) all plan the same way and differ
only in the *GPU-selection rule* (a :class:`GpuRule`) and in whether
``kappa`` is looped. This module holds everything they share:

* the estimates ``rho_hat_j(y) = F_j * tau_j(y, p = p_est)`` (Eq. 8 with the
  contention level fixed at ``p_est``, default 1: contention-free for split
  placements; ``p = 0`` on one server), in slots, for every server count
  ``n`` the job can span; ``n`` matters (the overhead ``xi2 n`` and ``b_e``
  versus ``b_i``). The accumulated time of GPU ``(s, g)`` is
  ``U_s^g = sum rho_hat / u`` (Alg. 2 line 6, Alg. 3 line 10);
* the simulated clock that gives "wait for some job to exit" (Alg. 2 lines
  9-10, Alg. 3 lines 13-14) its meaning: :func:`place_job`;
* one pass over all jobs for a given ``theta``: :func:`run_pass`;
* the bisection on ``theta`` (Alg. 1 lines 5-7 and 22-30): :func:`bisect_theta`.

Line numbers are those of the paper's algorithm listings in its HTML
rendering, whose numbering counts empty lines (as in the spec); the PDF
numbers without them (HTML Alg. 1 lines 22-30 are the PDF's lines 17-23).

Interpretation decisions (the project's, written down here):

1. Estimates. ``rho_hat_j(n) = F_j tau_j(n, p_est)`` as above; the GPUs'
   accumulated times grow by ``rho_hat / u``.
2. Simulated clock. Within one pass jobs are taken in SJF order (``G_j``
   ascending, ties ``F_j``, then job id, as the spec says; Alg. 1 line 4).
   A GPU is *available* at clock ``c`` when it is idle (the last job planned
   on it has estimated-finished, ``finish <= c``) and
   ``U + rho_hat / u <= theta`` (Alg. 2 line 2, Alg. 3 line 5). If too few
   GPUs qualify, the clock advances to the next estimated completion of a
   running job and the job is retried; when nothing is running and still too
   few qualify, the job fails (Alg. 2 line 12: return ``(empty, T)``). A job
   placed at clock ``c`` gets the planned start ``floor(c)`` and the
   estimated finish ``c + rho_hat`` (``T_j`` of Alg. 2 line 5); the clock
   never moves back.
3. The circular estimate. ``rho_hat`` depends on the placement's server
   count ``n``, known only after choosing the GPUs. Fixed point: filter with
   the estimate at ``n_guess = min_servers(job)``, choose the GPUs, compute
   the actual ``n``; if ``n > n_guess``, set ``n_guess = n`` and redo; accept
   when ``n <= n_guess``. The filter uses the running maximum of
   ``rho_hat`` over ``n' <= n_guess`` (equal to ``rho_hat(n_guess)``
   whenever ``rho_hat`` is non-decreasing in ``n``, which holds when
   ``b_i >= b_e``), so an accepted placement never pushes a GPU's ``U``
   above ``theta`` (the invariant of Lemma 2) even on an odd network.
   ``U`` then grows by ``rho_hat`` of the *actual* placement. Each retry
   after a wait starts again from ``min_servers``.

Choices made here beyond those (a careful reading):

* Early failure: if, ignoring idleness, fewer than ``G_j`` candidate GPUs
  satisfy ``U + rho_hat(min_servers) / u <= theta``, waiting cannot help
  (``U`` never decreases during a pass), so the job fails at once. The
  outcome is the one of the literal wait loop (a failed pass), only faster.
* A pass is *feasible* when it places every job; its estimated makespan is
  ``max_j (c_j + rho_hat_j)`` (a real number of slots, not rounded).
* Planned start. The evaluator orders a GPU's jobs by (planned start,
  instance position), so two jobs planned on one GPU within the same slot
  (possible only when ``rho_hat < 1`` slot, never in the ``paper`` preset
  where ``rho_hat >= 50``) could run in instance order rather than in the
  planned order. The planned start is therefore
  ``max(floor(c), s_prev + 1)`` over the previous job ``prev`` planned on
  each of its GPUs: the planned order is the executed order. This never
  delays a job: under dispatch it cannot start before its predecessor's
  finish, which is at least ``s_prev + 1``. It differs from ``floor(c)``
  only when ``floor(c) <= s_prev`` on one of the job's GPUs.
* Bisection (Alg. 1 lines 5-30), integer: ``left = 1, right = T``,
  ``theta = (left + right) // 2``. ``rule="paper"`` follows lines 22-30
  literally: a ``theta`` whose best feasible pass has an estimated makespan
  strictly below the best so far (initially ``T``) is recorded and
  ``right = theta - 1``, otherwise ``left = theta + 1``; the returned
  schedule is the best estimated makespan over the probed ``theta``. Note
  that this rule moves *up* after a feasible ``theta`` that does not
  improve the makespan, so it does not always end at the smallest feasible
  ``theta``. ``rule="tightest"`` is the textbook bisection for the tightest
  limit ``theta~`` of Lemma 2: every feasible ``theta`` (estimated makespan
  below ``T``) is recorded and moves ``right``; it returns the schedule of
  the smallest feasible ``theta`` probed, which is the smallest feasible
  ``theta`` overall whenever feasibility is monotone in ``theta``.

Complexity: one pass is ``O(J (N log N) (1 + W))`` for ``J`` jobs, ``N``
GPUs and ``W`` waits per job (each wait moves the clock to the next of at
most ``J`` completions); the bisection makes ``ceil(log2 T)`` probes.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from ddlsched.errors import DdlschedError
from ddlsched.problems.rar import RarInstance
from ddlsched.problems.rar_schedule import RarAssignment, RarSchedule
from ddlsched.problems.rar_timing import iteration_time, max_servers, min_servers

__all__ = [
    "BISECTION_RULES",
    "BisectionResult",
    "FirstFit",
    "GpuRule",
    "LeastBusy",
    "PassResult",
    "Placement",
    "PlanState",
    "PlanningData",
    "RandomSubset",
    "RarPlan",
    "bisect_theta",
    "estimated_time",
    "place_job",
    "plan_from_pass",
    "run_pass",
    "sjf_order",
]

logger = logging.getLogger(__name__)

BISECTION_RULES = ("paper", "tightest")


# --------------------------------------------------------------------------- estimates


def estimated_time(instance: RarInstance, job_index: int, num_servers: int, p_est: int = 1):
    """``rho_hat_j(n) = F_j * tau_j(n, p_est)`` in slots (Eq. 8; ``p = 0`` on one server)."""
    job = instance.jobs[job_index]
    contention = p_est if num_servers > 1 else 0
    return job.iterations * iteration_time(job, instance.network, num_servers, contention)


def sjf_order(instance: RarInstance) -> list[int]:
    """Job positions in SJF order: ``G_j`` ascending, ties ``F_j``, then job id (Alg. 1 line 4)."""
    jobs = instance.jobs
    return sorted(range(len(jobs)), key=lambda i: (jobs[i].gpus, jobs[i].iterations, jobs[i].id))


@dataclass(frozen=True, eq=False)
class PlanningData:
    """What every pass needs, computed once per instance and ``p_est``.

    GPUs are numbered ``0..N-1`` in ``(server, gpu)`` order; ``server_of_gpu``
    and ``local_gpu`` map a number back to the GPU id. ``rho_hat[j][n]`` is
    the estimate of job ``j`` on ``n`` servers (``inf`` for impossible
    ``n``); ``rho_filter[j][n]`` its running maximum over
    ``min_servers <= n' <= n`` (the fixed-point filter, decision 3).
    """

    instance: RarInstance
    p_est: int
    order: tuple[int, ...]
    gpus: tuple[int, ...]
    min_servers: tuple[int, ...]
    rho_hat: tuple[tuple[float, ...], ...]
    rho_filter: tuple[tuple[float, ...], ...]
    server_of_gpu: np.ndarray
    local_gpu: np.ndarray
    server_start: np.ndarray
    capacity: np.ndarray

    @classmethod
    def build(cls, instance: RarInstance, p_est: int = 1) -> PlanningData:
        if isinstance(p_est, bool) or not isinstance(p_est, (int, np.integer)) or p_est < 0:
            raise DdlschedError(f"p_est must be a non-negative integer, got {p_est!r}")
        servers = instance.servers
        rho_hat, rho_filter, lows = [], [], []
        for index, job in enumerate(instance.jobs):
            low, high = min_servers(job, servers), max_servers(job, servers)
            values = [math.inf] * (high + 1)
            filt = [math.inf] * (high + 1)
            running = -math.inf
            for n in range(low, high + 1):
                values[n] = estimated_time(instance, index, n, int(p_est))
                running = max(running, values[n])
                filt[n] = running
            rho_hat.append(tuple(values))
            rho_filter.append(tuple(filt))
            lows.append(low)
        capacity = np.asarray(servers, dtype=np.int64)
        server_of_gpu = np.repeat(np.arange(len(servers)), capacity)
        server_start = np.concatenate(([0], np.cumsum(capacity)[:-1])).astype(np.int64)
        local_gpu = np.arange(int(capacity.sum())) - server_start[server_of_gpu]
        for array in (capacity, server_of_gpu, server_start, local_gpu):
            array.setflags(write=False)
        return cls(
            instance=instance,
            p_est=int(p_est),
            order=tuple(sjf_order(instance)),
            gpus=tuple(job.gpus for job in instance.jobs),
            min_servers=tuple(lows),
            rho_hat=tuple(rho_hat),
            rho_filter=tuple(rho_filter),
            server_of_gpu=server_of_gpu,
            local_gpu=local_gpu,
            server_start=server_start,
            capacity=capacity,
        )

    @property
    def num_gpus(self) -> int:
        return int(self.server_of_gpu.size)

    @property
    def num_servers(self) -> int:
        return int(self.capacity.size)

    def gpu_number(self, server: int, gpu: int) -> int:
        """The flat number of GPU ``(server, gpu)``."""
        return int(self.server_start[server]) + gpu


# --------------------------------------------------------------------------- pass state


@dataclass(frozen=True)
class Placement:
    """One planned job: flat GPU numbers, clock at placement, estimate used."""

    job: int
    gpus: np.ndarray
    clock: float
    rho_hat: float

    @property
    def finish(self) -> float:
        return self.clock + self.rho_hat


@dataclass
class PlanState:
    """The mutable state of one pass.

    ``accumulated`` is ``U`` per GPU (flat numbering); ``free_at`` the
    estimated finish of the last job planned on each GPU; ``clock`` the
    simulated time (decision 2).
    """

    accumulated: np.ndarray
    free_at: np.ndarray
    clock: float = 0.0
    placements: list[Placement] = field(default_factory=list)
    makespan: float = 0.0

    @classmethod
    def empty(cls, data: PlanningData) -> PlanState:
        return cls(np.zeros(data.num_gpus), np.zeros(data.num_gpus))

    def copy(self) -> PlanState:
        return PlanState(
            self.accumulated.copy(),
            self.free_at.copy(),
            self.clock,
            list(self.placements),
            self.makespan,
        )

    def running_servers(self, data: PlanningData) -> np.ndarray:
        """Boolean per server: hosts a job still running (estimated) at the clock."""
        busy = self.free_at > self.clock
        return np.logical_or.reduceat(busy, data.server_start)


class GpuRule(Protocol):
    """A GPU-selection rule: the only thing in which the heuristics differ.

    ``candidates`` returns a boolean mask of the GPUs the rule may use for
    ``job`` (``None`` = all), computed once per job before any wait (Alg. 3
    line 2 selects the servers once; a wait goes back to line 3).
    ``choose`` picks ``count`` GPUs from ``available`` (flat numbers,
    ascending) and returns them.
    """

    def candidates(self, data: PlanningData, state: PlanState, job: int) -> np.ndarray | None: ...

    def choose(
        self, data: PlanningData, state: PlanState, available: np.ndarray, count: int
    ) -> np.ndarray: ...


class FirstFit:
    """FF (Sec. 7): the first ``G_j`` available GPUs in ``(server, gpu)`` order."""

    name = "ff"

    def candidates(self, data, state, job):
        return None

    def choose(self, data, state, available, count):
        return available[:count]


class LeastBusy:
    """LS (Sec. 7): the ``G_j`` available GPUs with least ``U`` (ties: lower id)."""

    name = "ls"

    def candidates(self, data, state, job):
        return None

    def choose(self, data, state, available, count):
        order = np.argsort(state.accumulated[available], kind="stable")
        return available[order[:count]]


class RandomSubset:
    """RAND (Sec. 7): a uniformly random ``G_j``-subset of the available GPUs."""

    name = "rand"

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng

    def candidates(self, data, state, job):
        return None

    def choose(self, data, state, available, count):
        return np.sort(self.rng.choice(available, size=count, replace=False))


# --------------------------------------------------------------------------- one job, one pass


def place_job(
    data: PlanningData,
    state: PlanState,
    job: int,
    rule: GpuRule,
    theta: float,
    u: float = 1.0,
) -> Placement | None:
    """Place ``job`` with ``rule`` under the limit ``theta``; ``None`` if it fails.

    The wait loop of Alg. 2 (lines 2-12) and Alg. 3 (lines 3-16) with the
    simulated clock (decision 2) and the server-count fixed point (decision
    3). On success ``state`` is updated: ``U += rho_hat / u`` on the chosen
    GPUs (Alg. 2 line 6), their ``free_at`` becomes ``c + rho_hat``.
    """
    count = data.gpus[job]
    low = data.min_servers[job]
    rho_filter = data.rho_filter[job]
    accumulated, free_at = state.accumulated, state.free_at
    allowed = rule.candidates(data, state, job)
    fits = accumulated + rho_filter[low] / u <= theta
    if allowed is not None:
        fits &= allowed
    if np.count_nonzero(fits) < count:
        return None  # waiting cannot help: U never decreases within a pass
    server_of_gpu = data.server_of_gpu
    while True:
        n_guess = low
        while True:
            mask = (free_at <= state.clock) & (accumulated + rho_filter[n_guess] / u <= theta)
            if allowed is not None:
                mask &= allowed
            available = np.flatnonzero(mask)
            if available.size < count:
                break  # too few GPUs: wait
            chosen = rule.choose(data, state, available, count)
            n_actual = len(set(server_of_gpu[chosen].tolist()))
            if n_actual <= n_guess:
                rho = data.rho_hat[job][n_actual]
                accumulated[chosen] += rho / u
                free_at[chosen] = state.clock + rho
                placement = Placement(job, chosen, state.clock, rho)
                state.placements.append(placement)
                state.makespan = max(state.makespan, placement.finish)
                return placement
            n_guess = n_actual
        running = free_at > state.clock
        if not running.any():
            return None  # nothing to wait for (Alg. 2 line 12)
        state.clock = float(free_at[running].min())


@dataclass(frozen=True)
class PassResult:
    """The outcome of one pass (one ``theta``, one rule assignment)."""

    feasible: bool
    state: PlanState
    theta: float
    kappa: int | None = None
    failed_job: int | None = None

    @property
    def makespan(self) -> float:
        """Estimated makespan ``max_j (c_j + rho_hat_j)`` of the placed jobs."""
        return self.state.makespan


def run_pass(
    data: PlanningData,
    theta: float,
    rule_for_job: Callable[[int], GpuRule],
    u: float = 1.0,
    *,
    state: PlanState | None = None,
    positions: Sequence[int] | None = None,
    kappa: int | None = None,
) -> PassResult:
    """Plan the jobs at ``positions`` of the SJF order (default all) under ``theta``.

    ``rule_for_job(j)`` gives the GPU rule of job ``j`` (SJF-BCO: FA-FFP or
    LBSGF by ``G_j`` versus ``kappa``; the baselines: one rule). Stops at the
    first job that cannot be placed (Alg. 1 lines 17-18) and returns an
    infeasible result. ``state`` (modified in place) lets a caller continue
    a pass.
    """
    state = PlanState.empty(data) if state is None else state
    jobs = data.order if positions is None else [data.order[p] for p in positions]
    for job in jobs:
        if place_job(data, state, job, rule_for_job(job), theta, u) is None:
            return PassResult(False, state, theta, kappa, failed_job=job)
    return PassResult(True, state, theta, kappa)


# --------------------------------------------------------------------------- bisection


@dataclass(frozen=True)
class BisectionResult:
    """The recorded ``theta`` and pass, and every probe ``(theta, m_theta or None)``."""

    best: PassResult | None
    theta: int | None
    probes: tuple[tuple[int, float | None], ...]


def bisect_theta(
    best_pass_for_theta: Callable[[int], PassResult | None],
    horizon: int,
    rule: str = "paper",
) -> BisectionResult:
    """Integer bisection on ``theta`` over ``[1, T]`` (Alg. 1 lines 5-7, 22-30).

    ``best_pass_for_theta(theta)`` returns the best feasible pass for that
    ``theta`` whose estimated makespan is below ``T`` (``m_theta < T``,
    line 7 initialises ``m_theta = T``), or ``None``. See the module
    docstring for the two rules.
    """
    if rule not in BISECTION_RULES:
        raise DdlschedError(f"bisection must be one of {', '.join(BISECTION_RULES)}, got {rule!r}")
    left, right = 1, int(horizon)
    best: PassResult | None = None
    best_theta: int | None = None
    best_makespan = float(horizon)  # m <- T (line 5)
    probes: list[tuple[int, float | None]] = []
    while left <= right:
        theta = (left + right) // 2
        candidate = best_pass_for_theta(theta)
        m_theta = None if candidate is None else candidate.makespan
        probes.append((theta, m_theta))
        logger.debug("theta=%d: m_theta=%s", theta, m_theta)
        if rule == "paper":
            improves = candidate is not None and candidate.makespan < best_makespan
        else:
            improves = candidate is not None
        if improves:
            best, best_theta, best_makespan = candidate, theta, candidate.makespan
            right = theta - 1
        else:
            left = theta + 1
    return BisectionResult(best, best_theta, tuple(probes))


# --------------------------------------------------------------------------- plan


@dataclass(frozen=True, eq=False)
class RarPlan:
    """What a ``rar`` heuristic decided, before the evaluator executes it.

    ``schedule`` is ``None`` when no pass placed every job.
    ``estimated_makespan`` is the heuristic's own estimate (never the
    reported objective); ``accumulated`` is ``U`` per GPU in flat
    ``(server, gpu)`` order; ``estimated_finish`` maps job id to
    ``c_j + rho_hat_j``.
    """

    method: str
    schedule: RarSchedule | None
    estimated_makespan: float | None
    theta: float | None
    kappa: int | None = None
    accumulated: np.ndarray | None = None
    estimated_finish: Mapping[str, float] = field(default_factory=dict)
    probes: tuple[tuple[int, float | None], ...] = ()
    params: Mapping[str, object] = field(default_factory=dict)

    @property
    def max_accumulated(self) -> float | None:
        """``W_max`` of Lemma 2: the largest ``U`` (``<= theta``)."""
        if self.accumulated is None:
            return None
        return float(self.accumulated.max())


def plan_from_pass(
    data: PlanningData,
    method: str,
    result: PassResult | None,
    *,
    theta: float | None = None,
    probes: tuple[tuple[int, float | None], ...] = (),
    params: Mapping[str, object] | None = None,
) -> RarPlan:
    """Turn a feasible pass into a :class:`RarPlan` (planned start ``floor(c)``)."""
    params = dict(params or {})
    if result is None or not result.feasible:
        return RarPlan(method, None, None, theta, None, probes=probes, params=params)
    jobs = data.instance.jobs
    assignments, finish = {}, {}
    last_start = np.full(data.num_gpus, -1, dtype=np.int64)  # planned start of the GPU's last job
    for placed in result.state.placements:  # placement order = order on every GPU
        start = max(math.floor(placed.clock), int(last_start[placed.gpus].max()) + 1)
        last_start[placed.gpus] = start
        gpus = tuple(
            (int(data.server_of_gpu[g]), int(data.local_gpu[g])) for g in np.sort(placed.gpus)
        )
        job_id = jobs[placed.job].id
        assignments[job_id] = RarAssignment(gpus=gpus, start=start)
        finish[job_id] = placed.finish
    schedule = RarSchedule({job.id: assignments[job.id] for job in jobs})
    return RarPlan(
        method=method,
        schedule=schedule,
        estimated_makespan=result.makespan,
        theta=result.theta if theta is None else theta,
        kappa=result.kappa,
        accumulated=result.state.accumulated.copy(),
        estimated_finish={job.id: finish[job.id] for job in jobs},
        probes=probes,
        params=params,
    )
