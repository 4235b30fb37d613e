"""Offline packed list schedules of family ``asrpt`` (ours; not a policy of the paper).

A-SRPT paper, Section III: the schedule must satisfy Eqs. (1)-(3) and is
scored by ``sum_i C_i`` (Eq. 8), ``C_i = t_i + n_i alpha_i`` with ``alpha_i``
of Eqs. (4)-(7); spec ``docs/families/asrpt.md``. Everything here is ours: the
paper's policies are online and split a job over the servers that have GPUs
free, which at low NIC bandwidth makes it run many times slower
(``benchmarks/results/asrpt.md``, "Communication-aware lower bounds").

The decoder (:class:`PackedDecoder`) turns a priority list (an order of the
jobs) into a schedule. Jobs are taken in list order; each runs on the fewest
servers, ``floor(g_i / g)`` whole servers and one more for the remainder
``g_i mod g``, with Heavy-Edge's mapping onto them
(:func:`~ddlsched.heuristics.asrpt_config.map_job`; seeded like the policies),
and is never split further. It starts at the earliest time ``>= r_i`` at
which the GPUs it takes are free, where each GPU's state is the time from
which it is free: a job never goes into a gap before the last job placed on
a GPU (no backfilling), so a GPU serves one job at a time and Eq. (3) holds
by construction (the evaluator re-checks it).

Server choice (ties: the lowest index): for the whole servers, those whose
last GPU frees soonest; for the remainder ``r``, the other server whose
``r``-th GPU frees soonest; a job takes a server's soonest-free GPUs.
``best_fit``: times before the job's arrival count as the arrival, and a tie
for the remainder's server goes to the one with the fewest GPUs free at the
start (keeping whole servers whole).

With the list in arrival order this is the "packed witness" of the
communication-aware bound study (``packed_list`` and ``packed_best_fit`` of
``benchmarks/asrpt_comm_bound.py``). The decoder's state (free-from times,
one row per server, kept sorted) can be copied and restored, so that the
local search of :mod:`ddlsched.heuristics.asrpt_improve` re-decodes only a
list's tail.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ddlsched.heuristics.asrpt_config import map_job
from ddlsched.problems.asrpt import AsrptInstance
from ddlsched.problems.asrpt_schedule import AsrptSchedule, JobRun

__all__ = ["PackedDecoder", "Placed", "packed_list_schedule"]


@dataclass(frozen=True)
class _Shape:
    """A job's fixed part in the decoder: arrival, whole servers, remainder, run time."""

    arrival_s: float
    full: int
    rest: int
    duration_s: float
    counts: tuple[tuple[int, ...], ...]


@dataclass(frozen=True)
class Placed:
    """One decoded job: its start and servers (whole servers first, then the remainder's)."""

    start_s: float
    servers: tuple[int, ...]


class PackedDecoder:
    """Priority list -> packed schedule (module docstring); ``best_fit`` as there."""

    def __init__(self, instance: AsrptInstance, *, best_fit: bool = False, seed: int = 0) -> None:
        cluster = instance.cluster
        self.instance = instance
        self.best_fit = best_fit
        self.servers = cluster.servers
        self.gpus_per_server = cluster.gpus_per_server
        shapes = []
        for job in instance.jobs:
            config = instance.configs[job.config]
            full, rest = divmod(config.num_gpus, cluster.gpus_per_server)
            take = (cluster.gpus_per_server,) * full + ((rest,) if rest else ())
            mapping = map_job(cluster, config, take, seed)
            shapes.append(
                _Shape(job.arrival_s, full, rest, job.iterations * mapping.alpha_s, mapping.counts)
            )
        self.shapes: tuple[_Shape, ...] = tuple(shapes)
        self._index = np.arange(self.servers)

    def empty_state(self) -> np.ndarray:
        """Every GPU free from time 0 (arrivals are >= 0): shape ``(M, g)``, rows sorted."""
        return np.zeros((self.servers, self.gpus_per_server))

    def flow_s(self, job: int, placed: Placed) -> float:
        """``C_i - r_i`` of job ``job`` (list index into the instance's jobs) as placed."""
        shape = self.shapes[job]
        return placed.start_s + shape.duration_s - shape.arrival_s

    def place(self, state: np.ndarray, job: int) -> Placed:
        """Place job ``job`` (index into the instance's jobs) on ``state``, updating it."""
        shape = self.shapes[job]
        arrival = shape.arrival_s
        chosen: list[int] = []
        if shape.full:
            last_free = state[:, -1]
            if self.best_fit:
                last_free = np.maximum(last_free, arrival)
            if shape.full == 1:
                chosen.append(int(np.argmin(last_free)))
            else:
                chosen.extend(int(m) for m in np.argsort(last_free, kind="stable")[: shape.full])
        if shape.rest:
            chosen.append(self._remainder_server(state, shape.rest, arrival, chosen))
        start = arrival
        for k, m in enumerate(chosen):
            n = self.gpus_per_server if k < shape.full else shape.rest
            start = max(start, float(state[m, n - 1]))
        finish = start + shape.duration_s
        for k, m in enumerate(chosen):
            n = self.gpus_per_server if k < shape.full else shape.rest
            state[m, :n] = finish
            state[m].sort()
        return Placed(start, tuple(chosen))

    def _remainder_server(
        self, state: np.ndarray, rest: int, arrival: float, taken: Sequence[int]
    ) -> int:
        at = state[:, rest - 1].copy()
        if self.best_fit:
            np.maximum(at, arrival, out=at)
        if taken:
            at[list(taken)] = math.inf
        if not self.best_fit:
            return int(np.argmin(at))
        soonest = np.flatnonzero(at == at.min())
        if len(soonest) == 1:
            return int(soonest[0])
        spare = (state[soonest] <= at[soonest, None]).sum(axis=1)
        return int(soonest[np.argmin(spare)])

    def decode(self, order: Sequence[int]) -> list[Placed]:
        """Every job of ``order`` (a permutation of the job indices) placed in turn."""
        state = self.empty_state()
        return [self.place(state, job) for job in order]

    def schedule(self, order: Sequence[int], placed: Sequence[Placed]) -> AsrptSchedule:
        """The schedule of a decoded list (``placed[k]`` is job ``order[k]``)."""
        runs = {}
        for job, where in zip(order, placed, strict=True):
            runs[self.instance.jobs[job].id] = JobRun(
                where.start_s, where.servers, self.shapes[job].counts
            )
        return AsrptSchedule(runs)


def arrival_order(instance: AsrptInstance) -> list[int]:
    """Job indices by arrival (ties: the job id)."""
    jobs = instance.jobs
    return sorted(range(len(jobs)), key=lambda i: (jobs[i].arrival_s, jobs[i].id))


def packed_list_schedule(
    instance: AsrptInstance, *, best_fit: bool = False, seed: int = 0
) -> AsrptSchedule:
    """The list in arrival order, decoded (the packed witness of the communication-aware bounds)."""
    decoder = PackedDecoder(instance, best_fit=best_fit, seed=seed)
    order = arrival_order(instance)
    return decoder.schedule(order, decoder.decode(order))
