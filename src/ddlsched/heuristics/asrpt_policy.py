"""The protocol of family ``asrpt``'s online policies, their shared part and the job table.

Paper: "Prediction-Assisted Online Distributed Deep Learning Workload
Scheduling in GPU Clusters" (Luo, Liu, Lee, Shroff),
Sec. IV-C (Algorithm 1, spec steps 1, 4 and 5) and Sec. V-A-1-d (baselines);
spec ``docs/families/asrpt.md``. The policies are A-SRPT
(:mod:`ddlsched.heuristics.asrpt`) and the baselines
(:mod:`ddlsched.heuristics.asrpt_baselines`).

The policies are plug-ins of the one event loop,
:func:`ddlsched.sim.asrpt.simulate` (heuristics may not import the
simulator; the simulator imports this module). The loop owns time, the
arrival and real-completion events and the job runs; a policy owns its
queues and decisions and talks to the loop through :class:`OnlinePolicy`:
per event instant ``t`` the loop calls ``on_complete`` (real completions,
GPUs already released), ``on_arrive``, ``on_time`` (the policy's own events
due at ``t``: virtual completions; delay deadlines are acted on in
``schedule``) and ``schedule``, which starts jobs on the shared
:class:`~ddlsched.heuristics.asrpt_cluster.FreeGpus` and returns them as
:class:`Start` records.
``next_event_s`` tells the loop when the policy's own next event is.

Job table (:class:`JobTable`): what the policies read of an instance, with
A-SRPT's virtual sizes ``p~_i = (g_i / G) n~_i alpha~_min_i``
(:func:`virtual_sizes`) and the virtual machine ``A~1`` replayed alone
(:func:`virtual_completion_times`; Algorithm 1, Line 2).

Server selection (spec step 4) and Heavy-Edge (step 5), shared by every
policy (:class:`PolicyBase`), are :mod:`ddlsched.heuristics.asrpt_config`'s
rules: :class:`~ddlsched.heuristics.asrpt_cluster.FreeGpus` keeps the
servers bucketed by free GPUs (ascending index inside a bucket), so a
selection walks the buckets (most-free: ``g`` down to 1; least-free: 1 up
to ``g``) and returns exactly what
:func:`~ddlsched.heuristics.asrpt_config.select_servers` returns (tested)
in ``O(g + servers taken)``. Heavy-Edge is
:func:`~ddlsched.heuristics.asrpt_config.map_job` with the run's seed on
exactly the selected counts (in selection order), memoised per
(configuration, counts).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from ddlsched.heuristics.asrpt_cluster import FreeGpus
from ddlsched.heuristics.asrpt_config import JobMapping, config_constants, map_job
from ddlsched.heuristics.asrpt_diagnostics import run_diagnostics
from ddlsched.heuristics.asrpt_virtual import VirtualSrpt
from ddlsched.problems.asrpt import AsrptInstance

__all__ = [
    "JobTable",
    "OnlinePolicy",
    "PolicyBase",
    "Start",
    "virtual_completion_times",
    "virtual_sizes",
]


# --------------------------------------------------------------------------- job table


@dataclass(frozen=True)
class JobTable:
    """What the policies read of an instance, per job in instance order: ``g_i``,
    configuration name, ``alpha~_min_i``, the ratio ``alpha_max_i / alpha~_min_i``,
    ``n_i``, ``n~_i`` and ``r_i``."""

    gpus: tuple[int, ...]
    config: tuple[str, ...]
    alpha_min_s: tuple[float, ...]
    heavy_ratio: tuple[float, ...]
    iterations: tuple[int, ...]
    predicted: tuple[float, ...]
    arrival_s: tuple[float, ...]
    num_gpus: int

    @classmethod
    def of(cls, instance: AsrptInstance) -> JobTable:
        """The table of ``instance`` (the per-configuration constants are cached)."""
        cluster = instance.cluster
        constants = {
            name: config_constants(cluster, config) for name, config in instance.configs.items()
        }
        jobs = instance.jobs
        return cls(
            gpus=tuple(instance.configs[job.config].num_gpus for job in jobs),
            config=tuple(job.config for job in jobs),
            alpha_min_s=tuple(constants[job.config].alpha_min_s for job in jobs),
            heavy_ratio=tuple(constants[job.config].ratio for job in jobs),
            iterations=tuple(job.iterations for job in jobs),
            predicted=tuple(float(job.predicted_iterations) for job in jobs),
            arrival_s=tuple(float(job.arrival_s) for job in jobs),
            num_gpus=cluster.num_gpus,
        )

    def sizes(self, perfect: bool = False) -> list[float]:
        """``p~_i = (g_i / G) n~_i alpha~_min_i`` (``n_i`` instead of ``n~_i`` if ``perfect``)."""
        n = self.iterations if perfect else self.predicted
        G = self.num_gpus
        return [
            (g / G) * float(k) * a for g, k, a in zip(self.gpus, n, self.alpha_min_s, strict=True)
        ]


def virtual_sizes(instance: AsrptInstance, *, perfect: bool = False) -> list[float]:
    """A-SRPT's virtual job sizes ``p~_i = (g_i / G) n~_i alpha~_min_i`` (instance order;
    with ``perfect``, ``n_i`` replaces ``n~_i``)."""
    return JobTable.of(instance).sizes(perfect)


def virtual_completion_times(instance: AsrptInstance, *, perfect: bool = False) -> list[float]:
    """A-SRPT's virtual completion times ``c~_i`` (instance order): the times at which
    jobs join ``pending_queue``; no job starts before its ``c~_i``."""
    table = JobTable.of(instance)
    vm = VirtualSrpt(table.sizes(perfect), table.arrival_s)
    arrival = table.arrival_s
    order = sorted(range(len(arrival)), key=lambda i: (arrival[i], i))
    out = [math.nan] * len(arrival)
    k = 0
    while k < len(order) or vm.next_completion_s() < math.inf:
        t = vm.next_completion_s()
        if k < len(order) and arrival[order[k]] <= t:
            t = arrival[order[k]]
            group = []
            while k < len(order) and arrival[order[k]] == t:
                group.append(order[k])
                k += 1
            done = vm.release(t, group) + vm.complete_due(t)
        else:
            done = vm.complete_due(t)
        for c, i in done:
            out[i] = c
    return out


# --------------------------------------------------------------------------- policy protocol


@dataclass(frozen=True, slots=True)
class Start:
    """A job started now: its servers in selection order, the GPUs taken on each,
    Heavy-Edge's ``counts[s][k]`` (stage ``s`` on ``servers[k]``) and ``alpha``."""

    job: int
    servers: tuple[int, ...]
    takes: tuple[int, ...]
    counts: tuple[tuple[int, ...], ...]
    alpha_s: float


class OnlinePolicy(Protocol):
    """What a policy provides to the event loop (see the module docstring)."""

    def on_complete(self, t: float, jobs: Sequence[int]) -> None:
        """Jobs ``jobs`` finished at ``t`` (their GPUs are already free)."""
        ...

    def on_arrive(self, t: float, jobs: Sequence[int]) -> None:
        """Jobs ``jobs`` arrived at ``t`` (ascending index)."""
        ...

    def on_time(self, t: float) -> None:
        """The policy's own events due at ``t`` (after completions and arrivals)."""
        ...

    def next_event_s(self) -> float:
        """The time of the policy's next own event (``inf``: none)."""
        ...

    def schedule(self, t: float, cluster: FreeGpus) -> list[Start]:
        """Start jobs at ``t`` (allocating on ``cluster``); the starts in order."""
        ...

    def decision_counts(self) -> dict[str, float]:
        """The policy's own record, merged into the schedule's ``info``."""
        ...

    def diagnostics(self, start_s: Sequence[float], finish_s: Sequence[float]) -> dict:
        """After the run, given each job's start and finish: more of ``info``."""
        ...


class PolicyBase:
    """Selection + Heavy-Edge + allocation, shared by every policy."""

    def __init__(self, instance: AsrptInstance, table: JobTable, seed: int) -> None:
        self.instance = instance
        self.table = table
        self.seed = seed
        self._mappings: dict[tuple[str, tuple[int, ...]], JobMapping] = {}

    def _trial(
        self, i: int, cluster: FreeGpus, most_free: bool
    ) -> tuple[tuple[int, ...], tuple[int, ...], JobMapping]:
        servers, takes = cluster.select(self.table.gpus[i], most_free)
        name = self.table.config[i]
        key = (name, takes)
        mapping = self._mappings.get(key)
        if mapping is None:
            instance = self.instance
            mapping = map_job(instance.cluster, instance.configs[name], takes, self.seed)
            self._mappings[key] = mapping
        return servers, takes, mapping

    @staticmethod
    def _launch(
        i: int,
        cluster: FreeGpus,
        servers: tuple[int, ...],
        takes: tuple[int, ...],
        mapping: JobMapping,
    ) -> Start:
        cluster.allocate(servers, takes)
        return Start(i, servers, takes, mapping.counts, mapping.alpha_s)

    def _start(self, i: int, cluster: FreeGpus, most_free: bool) -> Start:
        servers, takes, mapping = self._trial(i, cluster, most_free)
        return self._launch(i, cluster, servers, takes, mapping)

    def _diagnostics(
        self,
        eligible_s: Sequence[float],
        start_s: Sequence[float],
        finish_s: Sequence[float],
        predicted: Sequence[float],
        per_job: bool,
    ) -> dict:
        table = self.table
        return run_diagnostics(
            gpus=table.gpus,
            num_gpus=table.num_gpus,
            arrival_s=table.arrival_s,
            eligible_s=eligible_s,
            start_s=start_s,
            finish_s=finish_s,
            predicted=predicted,
            iterations=table.iterations,
            alpha_min_s=table.alpha_min_s,
            per_job=per_job,
        )
