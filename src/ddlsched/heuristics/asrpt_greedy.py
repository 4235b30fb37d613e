"""Offline work-conserving packed schedules of family ``asrpt`` (ours; starts of ``improve``).

A-SRPT paper, Section III: the schedule must satisfy Eqs. (1)-(3) and is
scored by ``sum_i C_i`` (Eq. 8); spec ``docs/families/asrpt.md``. Everything
here is ours. The paper's work-conserving baselines (``wcs_duration``,
``wcs_workload``, Sec. V-A-1-d) order their queue by the *predicted*
duration; an offline method knows every job's true ``n_i``, and on the
testbed, where Philly's predictions are poor, the same rule on the true sizes
is a much better schedule (``benchmarks/results/asrpt.md``, "The testbed's
certified interval").

The schedule (:func:`work_conserving_schedule`). Each job runs packed, as in
:class:`~ddlsched.heuristics.asrpt_packed.PackedDecoder` (``floor(g_i / g)``
whole servers and one more for the remainder ``g_i mod g``, Heavy-Edge's
mapping onto them, so its duration is the decoder's ``n_i alpha_i``). At every
arrival and completion (completions released first), the arrived waiting jobs
are scanned in the order of a key, smallest first (ties: arrival, then
instance order), and each one that can be placed packed on the GPUs free now
starts now and is never preempted. Keys (``ORDERS``):

* ``workload``: GPU-time ``g_i n_i alpha_i`` (as ``wcs_workload``);
* ``duration``: ``n_i alpha_i`` (as ``wcs_duration``).

Placement at a start: the whole servers are the lowest-indexed servers with
every GPU free; the remainder goes to the server, among the others, with the
fewest free GPUs that still holds it (ties: the lowest index), which keeps
whole servers whole. A job that cannot be placed packed waits even when
enough GPUs are free in total (never split further). With one GPU per server
(the testbed) "placed packed" is "``g_i`` GPUs free", and the schedule is the
work-conserving list schedule of ``lb_lagrange``'s relaxation.

Every job is eventually placed: when the cluster is empty every job fits
(``g_i <= G``), and the cluster empties before the next arrival or as jobs
complete. The waiting jobs are kept in one heap per packed shape (whole
servers, remainder): a job that cannot be placed leaves every job of its
shape unplaceable until the scan ends, so starting the smallest fitting head
until none fits starts exactly the jobs the scan in key order would.
Complexity ``O(I (S M + log I))`` per scan, ``S`` the number of shapes. Deterministic (no randomness beyond Heavy-Edge's seed, fixed by
the decoder).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence

import numpy as np

from ddlsched.deadline import Deadline
from ddlsched.heuristics.asrpt_packed import PackedDecoder, Placed
from ddlsched.problems.asrpt_schedule import AsrptSchedule

__all__ = ["ORDERS", "work_conserving_schedule"]

#: The queue orders of :func:`work_conserving_schedule` (module docstring).
ORDERS = ("workload", "duration")


def _place_now(free: np.ndarray, full: int, rest: int, gpus_per_server: int) -> list[int] | None:
    """Servers for a packed job on ``free`` (GPUs free per server), or ``None``."""
    chosen = [int(m) for m in np.flatnonzero(free == gpus_per_server)[:full]]
    if len(chosen) < full:
        return None
    if rest:
        fits = free >= rest
        fits[chosen] = False
        candidates = np.flatnonzero(fits)
        if not len(candidates):
            return None
        chosen.append(int(candidates[np.argmin(free[candidates])]))
    return chosen


def work_conserving_schedule(
    decoder: PackedDecoder, order: str = "workload", deadline: Deadline | None = None
) -> tuple[list[int], list[Placed], AsrptSchedule]:
    """The work-conserving packed schedule of the module docstring with queue key ``order``.

    Returns the jobs in start order (ties: the order they started in), their
    placements (``placed[k]`` is job ``started[k]``) and the schedule. Raises
    :class:`~ddlsched.errors.TimeLimitReached` when ``deadline`` passes.
    """
    if order not in ORDERS:
        raise ValueError(f"order must be one of {', '.join(ORDERS)}, got {order!r}")
    shapes = decoder.shapes
    g = decoder.gpus_per_server
    arrivals = sorted(range(len(shapes)), key=lambda i: (shapes[i].arrival_s, i))
    free = np.full(decoder.servers, g, dtype=int)
    running: list[tuple[float, int, tuple[int, ...]]] = []  # heap of (finish, job, servers)
    # The waiting jobs, one heap of (key, arrival, job) per packed shape (full, rest): a job
    # that does not fit leaves every job of its shape unfit until the scan ends, so starting
    # the smallest fitting head until none fits starts exactly the jobs a full scan would.
    waiting: dict[tuple[int, int], list[tuple[float, float, int]]] = {}
    started: list[int] = []
    placed: list[Placed] = []
    t, k = 0.0, 0
    while k < len(arrivals) or any(waiting.values()):
        if deadline is not None:
            deadline.check("the offline work-conserving schedule")
        next_arrival = shapes[arrivals[k]].arrival_s if k < len(arrivals) else math.inf
        next_finish = running[0][0] if running else math.inf
        t = min(next_arrival, next_finish) if any(waiting.values()) else next_arrival
        while running and running[0][0] <= t:
            _, job, servers = heapq.heappop(running)
            _release(free, shapes[job].full, shapes[job].rest, servers, g)
        while k < len(arrivals) and shapes[arrivals[k]].arrival_s <= t:
            job = arrivals[k]
            shape = shapes[job]
            size = shape.full * g + shape.rest if order == "workload" else 1
            entry = (shape.duration_s * size, shape.arrival_s, job)
            heapq.heappush(waiting.setdefault((shape.full, shape.rest), []), entry)
            k += 1
        while free.any():
            fitting = []
            for (full, rest), queue in waiting.items():
                if queue:
                    servers = _place_now(free, full, rest, g)
                    if servers is not None:
                        fitting.append((queue[0], (full, rest), servers))
            if not fitting:
                break
            _head, shape_key, servers = min(fitting)
            job = heapq.heappop(waiting[shape_key])[2]
            for n, m in enumerate(servers):
                free[m] -= g if n < shapes[job].full else shapes[job].rest
            heapq.heappush(running, (t + shapes[job].duration_s, job, tuple(servers)))
            started.append(job)
            placed.append(Placed(t, tuple(servers)))
    return started, placed, decoder.schedule(started, placed)


def _release(free: np.ndarray, full: int, rest: int, servers: Sequence[int], g: int) -> None:
    for n, m in enumerate(servers):
        free[m] += g if n < full else rest
