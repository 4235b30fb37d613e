"""The simulator's state: job arrays in submit order, MS-YARN placement, the measurements.

Jobs are kept in submit order (the original's job list, sorted once by
submit time, stably), one numpy array per quantity; the cluster is
``num_nodes`` nodes of ``gpus_per_node`` GPUs. Conversions are the
original's (``simulator/jobs.py::add_job``): submit ``ms / 1000``, duration
``ms / 1000``, solo iteration time ``iteration_time_ms x solo_slowdown /
1000``, resource times ``ms / 1000``.

Progress (a running job, per event): the job loses ``min(overhead, time
since its last check)`` of progress, the rest runs at its current
iteration time; the executed time is updated as ``(executed + t) -
last_check`` (the original's float order: the other order changes
results). The last segment up to a completion is not charged.

Placement (:meth:`SimState.yarn`): MS-YARN as in the original's
``switch.py`` / ``node.py`` / ``cluster.py``: a job of at most
``gpus_per_node`` GPUs on the lowest-numbered node with enough free GPUs; a
larger one on ``gpus // gpus_per_node`` entirely free nodes (and the rest on
the first other node with room).

Measurements (:meth:`SimState.record`): time-averaged queue length
(arrived, unfinished, not running) and GPUs in use, advanced at every
event, and the largest number of GPUs in use.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import asdict

import numpy as np

from ddlsched.errors import DdlschedError
from ddlsched.problems.muri_sim import SimConfig, TraceSchedule
from ddlsched.sim.muri.timing import start_overhead_s
from ddlsched.workloads.muri_traces import MuriTrace

__all__ = ["NEVER", "SimState", "group_times"]

#: ``sys.maxsize`` as a float: the original's "no event" time (and "not started yet").
NEVER = float(2**63 - 1)


def _isclose_rel(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9)


def group_times(times: np.ndarray) -> list[tuple[float, np.ndarray]]:
    """Group ascending times as the original's ``search_dict_list`` (first event within rel 1e-9).

    Returns ``(time, members)`` per group: the time of the group's first
    member and the positions of all its members, in order.
    """
    events: list[float] = []
    members: list[list[int]] = []
    for i, t in enumerate(times.tolist()):
        # events are ascending; only the recent ones can be within 1e-9 relative
        k = len(events) - 1
        found = -1
        while k >= 0 and events[k] >= t - 2e-9 * max(abs(t), 1.0):
            if _isclose_rel(events[k], t):
                found = k
            k -= 1
        if found >= 0:
            members[found].append(i)
        else:
            events.append(t)
            members.append([i])
    return [(events[k], np.array(members[k], dtype=np.int64)) for k in range(len(events))]


class SimState:
    """Job arrays in submit order (the original's sorted job list), the cluster, the metrics.

    Per job (index = position in submit order; ``file_order[j]`` is job
    ``j``'s row in the trace file):

    ``gpus``, ``submit_s``, ``duration_s``, ``iterations``, ``priority``
    (AntMan's guaranteed 0 / opportunistic 1), ``models``; ``resource_s``
    (``(num_jobs, 3)``: data, GPU and network time of one iteration);
    ``solo_iteration_s`` (alone) and ``iteration_s`` (now: a group's period,
    an opportunistic job's shared time); ``remaining_iterations``;
    ``solo_overhead_s`` and ``overhead_s`` (start overhead charged per event
    now: a group pays the sum of its members'); ``last_check_s`` (when its
    progress was last booked); ``executed_s`` (time spent running, overhead
    included); ``attained_s`` (attained service time, kept by Tiresias);
    ``start_s`` (first start, :data:`NEVER` before), ``end_s``; flags
    ``running``, ``done``, ``arrived``, ``active`` (arrived and not done).

    Profile types: ``type_of[j]`` indexes the distinct (resource times,
    solo iteration time) profiles ``type_resource_s`` / ``type_iteration_s``.
    ``arrival_groups``: the admission times (submit times, or the next round
    boundary when ``round_s`` is set) grouped by :func:`group_times`.
    """

    def __init__(self, trace: MuriTrace, config: SimConfig):
        self.config = config
        self.trace_name = trace.name
        submit_s = trace.submit_ms / 1000.0
        order = np.argsort(submit_s, kind="stable")
        self.file_order = order
        self.num_jobs = num_jobs = len(order)
        self.gpus = trace.num_gpu[order].astype(np.int64)
        if np.any(self.gpus > config.num_gpus):
            raise DdlschedError(
                f"trace {trace.name}: a job needs {int(self.gpus.max())} GPUs but the cluster "
                f"has {config.num_gpus}"
            )
        self.submit_s = submit_s[order]
        self.duration_s = (trace.duration_ms[order]) / 1000.0
        self.solo_iteration_s = trace.iteration_time_ms[order] * config.solo_slowdown / 1000.0
        self.iteration_s = self.solo_iteration_s.copy()
        self.iterations = trace.iterations[order].astype(float)
        self.remaining_iterations = self.iterations.copy()
        self.resource_s = trace.resource_time_ms[order] / 1000.0
        self.priority = trace.priority[order].astype(np.int64)
        self.models = [trace.model[i] for i in order]
        self.solo_overhead_s = np.array(
            [
                start_overhead_s(int(g), m) if config.start_overhead else 0.0
                for g, m in zip(self.gpus, self.models, strict=True)
            ],
            dtype=float,
        )
        self.overhead_s = self.solo_overhead_s.copy()
        self.last_check_s = np.zeros(num_jobs)
        self.executed_s = np.zeros(num_jobs)
        self.attained_s = np.zeros(num_jobs)
        self.start_s = np.full(num_jobs, NEVER)
        self.end_s = np.zeros(num_jobs)
        self.running = np.zeros(num_jobs, dtype=bool)
        self.done = np.zeros(num_jobs, dtype=bool)
        self.arrived = np.zeros(num_jobs, dtype=bool)
        self.active = np.zeros(num_jobs, dtype=bool)
        self.num_active = 0
        # profile types (distinct resource vectors + iteration times)
        keys: dict[tuple[float, ...], int] = {}
        type_of = np.empty(num_jobs, dtype=np.int64)
        for i in range(num_jobs):
            key = (*self.resource_s[i].tolist(), float(self.solo_iteration_s[i]))
            type_of[i] = keys.setdefault(key, len(keys))
        self.type_of = type_of
        distinct = sorted(keys, key=keys.__getitem__)
        self.type_resource_s = np.array([k[:3] for k in distinct], dtype=float)
        self.type_iteration_s = np.array([k[3] for k in distinct], dtype=float)
        admit_s = self.submit_s
        if config.round_s is not None:
            admit_s = np.ceil(self.submit_s / config.round_s) * config.round_s
        self.arrival_groups = group_times(admit_s)
        # cluster
        self.gpus_per_node = config.gpus_per_node
        self.num_nodes = config.num_nodes
        # measurements
        self._metric_t = 0.0
        self._queue_area = 0.0
        self._busy_area = 0.0
        self._queue_now = 0
        self._busy_now = 0
        self.max_busy = 0
        self.events = 0

    # -- job life cycle ------------------------------------------------------------------

    def arrive(self, jobs: np.ndarray) -> None:
        """Jobs ``jobs`` join the queue (their progress clock starts at their submit time)."""
        self.arrived[jobs] = True
        self.active[jobs] = True
        self.num_active += int(jobs.size)
        self.last_check_s[jobs] = self.submit_s[jobs]

    def progress(self, t: float, idx: np.ndarray) -> None:
        """``remaining -= max(t - last - overhead, 0) / iteration_s`` for running jobs ``idx``."""
        if idx.size == 0:
            return
        dt = t - self.last_check_s[idx]
        tmp = np.maximum(dt - self.overhead_s[idx], 0.0)
        self.remaining_iterations[idx] -= tmp / self.iteration_s[idx]
        # the original writes ``total = total + event_time - last_check``: (total + t) - last
        self.executed_s[idx] = (self.executed_s[idx] + t) - self.last_check_s[idx]
        self.last_check_s[idx] = t

    def complete(self, t: float, jobs: Sequence[int]) -> None:
        """Finish ``jobs`` at ``t``; the last segment's progress (uncharged) is booked for checks."""
        for j in jobs:
            if self.running[j]:
                self.remaining_iterations[j] -= (t - self.last_check_s[j]) / self.iteration_s[j]
            self.executed_s[j] += t - self.last_check_s[j]
            self.end_s[j] = t
            if not self.done[j]:
                self.num_active -= 1
            self.done[j] = True
            self.active[j] = False
            self.running[j] = False

    def stamp_starts(self, t: float) -> None:
        """Record ``t`` as the first start of every running job that had not started yet."""
        self.start_s[self.running & (self.start_s == NEVER)] = t

    # -- MS-YARN placement on per-node free GPU counts ------------------------------------

    def yarn(self, free: list[int], gpus: int) -> bool:
        """Place a job of ``gpus`` GPUs on the per-node free counts ``free`` (in place)."""
        per_node = self.gpus_per_node
        if gpus <= per_node:
            for n in range(len(free)):
                if free[n] >= gpus:
                    free[n] -= gpus
                    return True
            return False
        need = gpus // per_node
        full = [n for n in range(len(free)) if free[n] == per_node][:need]
        if len(full) < need:
            return False
        rest = gpus % per_node
        if rest:
            last = next((n for n in range(len(free)) if n not in full and free[n] >= rest), None)
            if last is None:
                return False
            free[last] -= rest
        for n in full:
            free[n] = 0
        return True

    def place_in_order(self, order: np.ndarray, free: list[int]) -> np.ndarray:
        """Try MS-YARN for every job of ``order`` in turn (backfilling); returns the placed mask."""
        placed = np.zeros(order.size, dtype=bool)
        if order.size == 0:
            return placed
        gs = self.gpus[order]
        per_node = self.gpus_per_node
        pos = 0
        while pos < order.size:
            max_free = max(free)
            n_full = free.count(per_node)
            if max_free == 0:
                break
            sub = gs[pos:]
            fits = (sub <= max_free) | ((sub > per_node) & (sub // per_node <= n_full))
            hit = np.flatnonzero(fits)
            if hit.size == 0:
                break
            j = pos + int(hit[0])
            ok = self.yarn(free, int(gs[j]))
            assert ok
            placed[j] = True
            pos = j + 1
        return placed

    # -- measurements ----------------------------------------------------------------------

    def record(self, t: float, busy_gpus: int) -> None:
        """Advance the time-averaged metrics to ``t`` and set the new levels."""
        if t > self._metric_t:
            dt = t - self._metric_t
            self._queue_area += dt * self._queue_now
            self._busy_area += dt * self._busy_now
            self._metric_t = t
        self._queue_now = int(np.count_nonzero(self.active & ~self.running))
        self._busy_now = busy_gpus
        self.max_busy = max(self.max_busy, busy_gpus)
        self.events += 1

    def to_schedule(self, policy: str, started: float) -> TraceSchedule:
        """What the run did, per job in trace file order (the run must be over).

        Closes the measurements at the makespan (0 GPUs busy from then on) and
        divides their areas by the makespan (1 s if it is 0).
        """
        if not self.done.all():
            raise DdlschedError(
                f"simulation ended with {int((~self.done).sum())} unfinished job(s)"
            )
        makespan = float(self.end_s.max())
        self.record(makespan, 0)
        horizon = makespan if makespan > 0 else 1.0
        inv = np.empty(self.num_jobs, dtype=np.int64)  # back to trace file order
        inv[self.file_order] = np.arange(self.num_jobs)
        done_iterations = self.iterations - self.remaining_iterations
        return TraceSchedule(
            trace=self.trace_name,
            policy=policy,
            mode=self.config.mode,
            submit_s=self.submit_s[inv],
            start_s=self.start_s[inv],
            end_s=self.end_s[inv],
            iterations=self.iterations[inv],
            iterations_done=done_iterations[inv],
            solo_iteration_s=self.solo_iteration_s[inv],
            average_queue_length=self._queue_area / horizon,
            gpu_utilisation=self._busy_area / (horizon * self.config.num_gpus),
            max_gpus_in_use=self.max_busy,
            events=self.events,
            runtime_s=time.perf_counter() - started,
            config=asdict(self.config),
        )
