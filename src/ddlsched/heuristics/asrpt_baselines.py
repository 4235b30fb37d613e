"""The five baselines of family ``asrpt`` (Sec. V-A-1-d), plug-ins of the one event loop.

Paper: "Prediction-Assisted Online Distributed Deep Learning Workload
Scheduling in GPU Clusters" (Luo, Liu, Lee, Shroff),
Sec. V-A-1-d; spec ``docs/families/asrpt.md``, "Baselines (Sec. V-A-1-d)" (the spec
wins over the paper). The protocol, the selection + Heavy-Edge they share and the job
table are :mod:`ddlsched.heuristics.asrpt_policy`; the factory is
:func:`ddlsched.heuristics.asrpt.make_policy`.

Baselines (:class:`QueuePolicy`): a queue of arrived, unstarted jobs, keys
with ``d~_i = n~_i alpha~_min_i``: ``spjf`` (``d~``) and ``spwf`` (``g_i
d~``) in strict order (a head that does not fit blocks), ``wcs_duration``
(``d~``), ``wcs_workload`` (``g_i d~``) and ``wcs_subtime`` (``r_i``)
work-conserving (in key order, every job that fits starts). Ties: arrival,
then index; unseen jobs (``d~ = 0``) come first by their key. Servers by
``server_selection``: ``most_free`` (default), ``least_free`` or ``asrpt``
(most-free for communication-heavy configurations, least-free otherwise,
no delays); every job is mapped with Heavy-Edge.

Choice the spec leaves open (written down here):

* Work-conserving baselines keep one heap per GPU demand ``g``; at each step
  the smallest head among the demands that fit starts. This starts exactly
  the jobs a scan of the whole queue in key order would (the free GPUs only
  shrink during a scan, so a job skipped once is skipped to the end), in
  ``O(#demands)`` per start instead of ``O(queue)`` per event.
"""

from __future__ import annotations

import heapq
import math
from bisect import insort
from collections.abc import Sequence

from ddlsched.heuristics.asrpt_cluster import FreeGpus
from ddlsched.heuristics.asrpt_policy import JobTable, PolicyBase, Start
from ddlsched.problems.asrpt import AsrptInstance

__all__ = ["BASELINES", "QueuePolicy"]

#: Baselines: ``name -> (key, strict)``; keys ``duration`` (``d~``), ``workload``
#: (``g d~``), ``subtime`` (``r``).
BASELINES: dict[str, tuple[str, bool]] = {
    "spjf": ("duration", True),
    "spwf": ("workload", True),
    "wcs_duration": ("duration", False),
    "wcs_workload": ("workload", False),
    "wcs_subtime": ("subtime", False),
}


class QueuePolicy(PolicyBase):
    """A baseline of Sec. V-A-1-d: a keyed queue of arrived jobs, strict or
    work-conserving (see the module docstring)."""

    def __init__(
        self,
        instance: AsrptInstance,
        table: JobTable,
        *,
        key: str,
        strict: bool,
        most_free: Sequence[bool],
        seed: int = 0,
    ) -> None:
        super().__init__(instance, table, seed)
        duration = [k * a for k, a in zip(table.predicted, table.alpha_min_s, strict=True)]
        if key == "duration":
            self.key = duration
        elif key == "workload":
            self.key = [g * d for g, d in zip(table.gpus, duration, strict=True)]
        elif key == "subtime":
            self.key = list(table.arrival_s)
        else:
            raise ValueError(f"unknown queue key {key!r}")
        self.strict = strict
        self.most_free = tuple(most_free)
        self.queues: dict[int, list[tuple[float, float, int]]] = {}
        self.demands: list[int] = []  # GPU demands seen, ascending

    def on_complete(self, t: float, jobs: Sequence[int]) -> None:
        pass

    def on_arrive(self, t: float, jobs: Sequence[int]) -> None:
        gpus = self.table.gpus
        arrival = self.table.arrival_s
        for i in jobs:
            queue = self.queues.get(gpus[i])
            if queue is None:
                queue = self.queues[gpus[i]] = []
                insort(self.demands, gpus[i])
            heapq.heappush(queue, (self.key[i], arrival[i], i))

    def on_time(self, t: float) -> None:
        pass

    def next_event_s(self) -> float:
        return math.inf

    def schedule(self, t: float, cluster: FreeGpus) -> list[Start]:
        out: list[Start] = []
        queues = self.queues
        strict = self.strict
        while cluster.total > 0:
            free = cluster.total
            best = None
            best_demand = 0
            for demand in self.demands:
                queue = queues[demand]
                if not queue:
                    continue
                if demand > free and not strict:
                    break  # the demands are ascending: none of the rest fits
                if best is None or queue[0] < best:
                    best = queue[0]
                    best_demand = demand
            if best is None or best_demand > free:  # empty, or a strict head that does not fit
                break
            heapq.heappop(queues[best_demand])
            i = best[2]
            out.append(self._start(i, cluster, self.most_free[i]))
        return out

    def decision_counts(self) -> dict[str, float]:
        return {}

    def diagnostics(self, start_s: Sequence[float], finish_s: Sequence[float]) -> dict:
        """Eligible at arrival: no hold-back; queueing, running, placement, utilisation."""
        arrival = self.table.arrival_s
        return self._diagnostics(arrival, start_s, finish_s, self.table.predicted, per_job=False)
