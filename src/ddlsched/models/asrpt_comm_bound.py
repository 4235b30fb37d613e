"""Lower bound ``lb_busy`` of family ``asrpt``: mean busy times plus per-job durations.

A bound of ours, not the paper's. A-SRPT paper: Problem (8)
(``min sum_i C_i``) under Eqs. (1)-(3), the per-iteration time of Eqs.
(4)-(7) and Lemma 1's single-machine relaxation (Appendix A); spec
``docs/families/asrpt.md``, "Bounds". The
mean-busy-time relaxation is Goemans' (SODA 1997, "Improved approximation
algorithms for scheduling with release dates"); its use here, on GPU-time,
with the per-job duration added back and the partition of the jobs, is ours.

Notation. ``p_i = n_i alpha_lb_i``: a lower bound on job ``i``'s running time
in *any* placement (``alpha_lb`` of :mod:`ddlsched.models.asrpt` is the
minimum of Eqs. 4-7 over every placement of the configuration on
``min(M, g_i)`` empty servers of ``g`` GPUs, so a job larger than a server is
charged the inter-server communication it cannot avoid; a time limit only
lowers it, keeping it valid). ``q_i = (g_i / G) p_i``: its GPU time as a
share of the cluster (Lemma 1's size).

Theorem (ours). For every feasible schedule and every partition ``A, B`` of
the jobs,

    sum_i C_i >= sum_{i in A} (r_i + p_i)
                 + max( SRPT(B), MBT(B) + sum_{i in B} p_i / 2 ),

``SRPT(B)`` the total completion time of preemptive SRPT on one machine with
the jobs of ``B`` (releases ``r_i``, sizes ``q_i``; :mod:`ddlsched.heuristics.srpt`)
and ``MBT(B)`` the total *mean busy time* of the preemptive
shortest-size-first schedule of the same jobs (at every instant the
released unfinished job with the least *original* size ``q_i`` runs).

Proof. Take a feasible schedule with starts ``t_i`` and completions ``C_i =
t_i + n_i alpha_i``. (1) ``C_i >= r_i + p_i`` by Eq. (1) and ``alpha_i >=
alpha_lb_i``: this covers ``A``. (2) Build a fractional single-machine
schedule ("trimmed"): job ``i`` is processed at rate ``g_i / G`` during
``[C_i - p_i, C_i)``. That interval lies inside ``[t_i, C_i)`` (as ``p_i <=
n_i alpha_i``), so it starts at or after ``r_i``, and at every instant the
total rate is at most (GPUs in use) / ``G <= 1`` by Eq. (3). It processes
``q_i`` units of job ``i``, finishes it at ``C_i`` and gives it the mean busy
time ``M_i = C_i - p_i / 2`` (the time average of its processing). Its
restriction to ``B`` is a feasible fractional one-machine schedule of ``B``.
(3) ``sum_{i in B} M_i = sum_{i in B} (1 / q_i) int t x_i(t) dt`` is linear in
the processing rates ``x_i(t)``; on one machine with releases it is
minimised by giving the machine, at every instant, to the released
unfinished job with the largest weight ``1 / q_i`` (an exchange argument:
swapping equal amounts of work of a later-processed larger-weight job and
an earlier-processed smaller-weight job that was already released cannot
increase it; Goemans 1997 for preemptive schedules; the objective being
linear, fractional schedules are covered). Hence ``sum_B M_i >= MBT(B)`` and
``sum_B C_i = sum_B (M_i + p_i / 2) >= MBT(B) + sum_B p_i / 2``. (4) The
trimmed schedule's completion times are the ``C_i`` themselves and SRPT
minimises the total completion time of any fractional one-machine schedule
(Schrage 1968; processor sharing never helps), so ``sum_B C_i >= SRPT(B)``.
Adding (1) over ``A`` and the larger of (3), (4) over ``B`` proves the claim.

With ``A`` = all jobs it is ``lb_sum``; with ``B`` = all jobs it is at least
``lb_srpt``; so ``lb_busy >= max(lb_sum, lb_srpt)`` on every instance. What
it adds: ``lb_srpt`` charges each job only ``q_i`` of its own time (``g_i / G``
of ``p_i``, 1/250 for an 8-GPU job on 2,000 GPUs), the bound above charges
``p_i / 2`` on top of the queueing; where one long job queues behind others,
``A`` takes its full duration.

Partition (our heuristic; every partition is valid, so it only decides the
bound's strength): start with ``B`` = all jobs and take, round after round,
``B' = {i in B : MBT_i(B) + p_i / 2 >= r_i + p_i}`` (jobs whose own duration
outweighs their queueing go to ``A``), up to ``PARTITION_ROUNDS`` rounds or
until ``B`` stops changing; the bound is the largest value over the
partitions visited and the two trivial ones. ``O(R I log I)``.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ddlsched.deadline import Deadline
from ddlsched.heuristics.srpt import srpt_total_completion
from ddlsched.models.asrpt import AlphaLb, alpha_lbs
from ddlsched.problems.asrpt import AsrptInstance

__all__ = ["PARTITION_ROUNDS", "BusyBound", "lb_busy", "partition_bound", "spt_mean_busy_times"]

#: Rounds of the partition heuristic (module docstring).
PARTITION_ROUNDS = 8


def spt_mean_busy_times(releases: Sequence[float], sizes: Sequence[float]) -> list[float]:
    """Mean busy time of each job under preemptive shortest-original-size-first on one machine.

    Ties: the earlier release, then the lower index. A job of size 0 gets
    its release (it needs no processing). The event loop is ``O(n log n)``.
    """
    n = len(releases)
    if len(sizes) != n:
        raise ValueError("releases and sizes must have the same length")
    order = sorted(range(n), key=lambda i: (releases[i], i))
    weighted = [0.0] * n  # int t dt over the job's processing
    left = [float(s) for s in sizes]
    heap: list[tuple[float, float, int]] = []  # (original size, release, index)
    t = 0.0
    k = 0
    while k < n or heap:
        if not heap:
            t = max(t, releases[order[k]])
        while k < n and releases[order[k]] <= t:
            i = order[k]
            heapq.heappush(heap, (float(sizes[i]), float(releases[i]), i))
            k += 1
        _, _, i = heap[0]
        next_release = releases[order[k]] if k < n else math.inf
        run = min(left[i], next_release - t)
        weighted[i] += run * (t + run / 2)
        left[i] -= run
        t += run
        if left[i] <= 0.0:
            heapq.heappop(heap)
    return [weighted[i] / sizes[i] if sizes[i] > 0 else float(releases[i]) for i in range(n)]


@dataclass(frozen=True)
class BusyBound:
    """The bound (s) and how it was reached: the partition's ``|A|`` and the round."""

    value_s: float
    own_duration_jobs: int
    round: int
    rounds: int


def _side_b(
    releases: list[float], durations: list[float], sizes: list[float]
) -> tuple[float, list[float]]:
    """``max(SRPT(B), MBT(B) + sum p/2)`` and the jobs' mean busy times."""
    busy = spt_mean_busy_times(releases, sizes)
    mbt = math.fsum(busy) + math.fsum(durations) / 2
    return max(mbt, srpt_total_completion(releases, sizes)), busy


def partition_bound(
    releases: Sequence[float],
    durations: Sequence[float],
    sizes: Sequence[float],
    *,
    rounds: int = PARTITION_ROUNDS,
    deadline: Deadline | None = None,
) -> BusyBound:
    """The module's bound for jobs with releases ``r_i``, durations ``p_i`` and sizes ``q_i``.

    Stops early (still valid) when ``deadline`` expires between rounds.
    """
    n = len(releases)
    if not len(durations) == len(sizes) == n:
        raise ValueError("releases, durations and sizes must have the same length")
    own = [releases[i] + durations[i] for i in range(n)]
    best = BusyBound(math.fsum(own), n, 0, 0)  # A = all jobs: lb_sum
    in_b = list(range(n))
    done = 0
    for done in range(1, rounds + 1):
        value_b, busy = _side_b(
            [releases[i] for i in in_b], [durations[i] for i in in_b], [sizes[i] for i in in_b]
        )
        in_b_set = set(in_b)
        value = value_b + math.fsum(own[i] for i in range(n) if i not in in_b_set)
        if value > best.value_s:
            best = BusyBound(value, n - len(in_b), done, done)
        keep = [i for i, m in zip(in_b, busy, strict=True) if m + durations[i] / 2 >= own[i]]
        if len(keep) == len(in_b) or not keep or (deadline and deadline.expired()):
            break
        in_b = keep
    return BusyBound(best.value_s, best.own_duration_jobs, best.round, done)


def lb_busy(
    instance: AsrptInstance,
    deadline: Deadline | None = None,
    *,
    alpha_lbs_of: Mapping[str, AlphaLb] | None = None,
    rounds: int = PARTITION_ROUNDS,
) -> BusyBound:
    """The bound of the module docstring on ``instance`` (``alpha_lb`` per configuration)."""
    lbs = alpha_lbs(instance, deadline=deadline) if alpha_lbs_of is None else alpha_lbs_of
    total_gpus = instance.cluster.num_gpus
    releases = [job.arrival_s for job in instance.jobs]
    durations = [job.iterations * lbs[job.config].value_s for job in instance.jobs]
    sizes = [
        instance.configs[job.config].num_gpus / total_gpus * p
        for job, p in zip(instance.jobs, durations, strict=True)
    ]
    return partition_bound(releases, durations, sizes, rounds=rounds, deadline=deadline)
