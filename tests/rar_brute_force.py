"""An independent brute force for tiny rar instances (tests only).

Enumerates, for every job, its GPUs per server (``y_js``) and its start
slot, runs each combination slot by slot with its own contention count
(Eq. 6) and returns the best makespan. It shares only the per-iteration
time of Eq. 8 with the package, which tests pin by hand.
"""

from __future__ import annotations

import itertools
import math

from ddlsched.problems.rar import RarInstance
from ddlsched.problems.rar_timing import iteration_time, iterations_per_slot


def _vectors(gpus: int, servers: tuple[int, ...]):
    for y in itertools.product(*(range(min(gpus, cap) + 1) for cap in servers)):
        if sum(y) == gpus:
            yield y


def _makespan(instance: RarInstance, combo, cutoff: float) -> float:
    jobs = instance.jobs
    done = [0.0] * len(jobs)
    finish = [None] * len(jobs)
    for t in range(instance.horizon):
        if t + 1 > cutoff and any(f is None for f in finish):
            return math.inf  # cannot beat the incumbent
        active = [j for j, (_, start) in enumerate(combo) if start <= t and finish[j] is None]
        if not active and all(f is not None for f in finish):
            break
        for s, cap in enumerate(instance.servers):
            if sum(combo[j][0][s] for j in active) > cap:
                return math.inf
        servers_of = {j: [s for s, g in enumerate(combo[j][0]) if g > 0] for j in active}
        split_count = [0] * instance.num_servers
        for j in active:
            if len(servers_of[j]) >= 2:
                for s in servers_of[j]:
                    split_count[s] += 1
        for j in active:
            n = len(servers_of[j])
            p = max(split_count[s] for s in servers_of[j]) if n >= 2 else 0
            rate = iterations_per_slot(
                iteration_time(jobs[j], instance.network, n, p), instance.progress
            )
            done[j] += rate
            if done[j] >= jobs[j].iterations * (1 - 1e-9):
                finish[j] = t + 1
    if any(f is None for f in finish):
        return math.inf
    return max(finish)


def brute_force_makespan(
    instance: RarInstance, *, below: float = math.inf, first: bool = False
) -> float:
    """Optimal makespan by enumeration (``inf`` if nothing fits the horizon).

    With ``below``, only makespans below it are looked for (starts before
    ``below - 1``) and ``below`` itself is returned when there is none; with
    ``first``, the first such makespan found is returned.
    """
    last_start = instance.horizon if math.isinf(below) else min(instance.horizon, int(below) - 1)
    options = [
        [(y, a) for y in _vectors(job.gpus, instance.servers) for a in range(last_start)]
        for job in instance.jobs
    ]
    best = below
    for combo in itertools.product(*options):
        best = min(best, _makespan(instance, combo, best))
        if first and best < below:
            break
    return best
