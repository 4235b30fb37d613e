"""Tiresias: discretised 2D-LAS with three queues, counting free GPUs only.

Models ``run_sim.py::dlas_sim_jobs`` (``gputime=True``) of the original
(github Rivendile/Muri, ``simulator/``). Durations are unknown. A job's
attained service is its executed time times its GPU count; it starts in
queue 0 and moves down a queue when its attained service reaches the
queue's limit (``tiresias_thresholds``, GPU-seconds; the attained time is
updated as ``(attained + t) - last_check``, the original's float order: the
other order leaves a job of trace 3' at 1624.9999999999995 s of a 1625 s
threshold, and its queue-jump event repeats forever). The queues are served
in order, each in its list order; a job runs when its GPU count fits the
free GPUs (no placement; a job that does not fit is skipped), and the
running jobs of a queue move to its front. Besides arrivals and
completions, the next queue jump of a running job is an event (the
policy's timer). Completions are not grouped: the exact minimum, all jobs
ending then. Arrivals and completions are merged only when equal.
"""

from __future__ import annotations

import math

import numpy as np

from ddlsched.sim.muri.events import merge_equal
from ddlsched.sim.muri.policy import EndEvent
from ddlsched.sim.muri.state import SimState

__all__ = ["Tiresias", "fit_by_count"]


def fit_by_count(gs: np.ndarray, free: int) -> tuple[np.ndarray, int]:
    """Walk ``gs`` in order, taking every job with ``g <= free`` (free GPUs counted only).

    Runs of jobs that all fit are taken at once (their cumulative GPUs stay
    within ``free``); the first job of a run that does not fit is skipped.
    Returns the mask of taken jobs and the GPUs left free.
    """
    ok = np.zeros(gs.size, dtype=bool)
    pos = 0
    while pos < gs.size and free > 0:
        sub = gs[pos:]
        cum = np.cumsum(sub)
        k = int(np.searchsorted(cum, free, side="right"))
        if k > 0:
            ok[pos : pos + k] = True
            free -= int(cum[k - 1])
            pos += k
            continue
        hit = np.flatnonzero(sub <= free)
        if hit.size == 0:
            break
        pos += int(hit[0])
    return ok, free


class Tiresias:
    """``dlas_sim_jobs(gputime=True)``: the queues, the attained service, the queue-jump timer."""

    merge = staticmethod(merge_equal)

    def __init__(self, state: SimState):
        self.state = state
        self.limits = state.config.tiresias_thresholds
        self.num_queues = len(self.limits) + 1
        self.queues: list[list[int]] = [[] for _ in range(self.num_queues)]
        self.queue_of = np.zeros(state.num_jobs, dtype=np.int64)
        self.running = np.zeros(0, dtype=np.int64)  # running jobs, ascending index
        self.next_jump: float | None = None

    def on_complete(self, t: float, jobs: list[int]) -> None:
        for j in jobs:
            self.queues[self.queue_of[j]].remove(j)

    def on_arrive(self, t: float, jobs: np.ndarray) -> None:
        self.queue_of[jobs] = 0
        self.queues[0].extend(jobs.tolist())

    def advance(self, t: float, running: np.ndarray, last_check_s: np.ndarray) -> None:
        """Attained service of the running jobs; demote those past their queue's limit."""
        if not running.size:
            return
        st = self.state
        st.attained_s[running] = (st.attained_s[running] + t) - last_check_s  # original's order
        attained = st.attained_s[running] * st.gpus[running]
        q = self.queue_of[running]
        limit = np.array([*self.limits, math.inf])[q]
        demote = running[(q < self.num_queues - 1) & (attained >= limit)]
        for j in demote.tolist():
            self.queues[self.queue_of[j]].remove(j)
            self.queue_of[j] += 1
            self.queues[self.queue_of[j]].append(j)

    def schedule(self, t: float) -> int:
        st = self.state
        free = st.config.num_gpus
        busy = 0
        for queue in self.queues:
            if not queue:
                continue
            arr = np.array(queue, dtype=np.int64)
            gs = st.gpus[arr]
            ok, free = fit_by_count(gs, free)
            st.running[arr] = ok
            busy += int(gs[ok].sum())
            queue[:] = arr[ok].tolist() + arr[~ok].tolist()
        self.running = np.flatnonzero(st.running)
        return busy

    def next_completion(self, t: float) -> EndEvent | None:
        """The exact earliest completion; also sets the next queue jump (:meth:`next_timer`)."""
        st = self.state
        run = self.running
        if not run.size:
            self.next_jump = None
            return None
        ends_at = t + st.remaining_iterations[run] * st.solo_iteration_s[run]
        first = float(ends_at.min())
        q = self.queue_of[run]
        movable = q < self.num_queues - 1
        if movable.any():
            limit = np.array(self.limits)[q[movable]]
            jump = np.ceil(limit / st.gpus[run][movable]) - st.attained_s[run][movable] + t
            self.next_jump = float(jump.min())
        else:
            self.next_jump = None
        return first, run[ends_at == first].tolist()

    def next_timer(self) -> float | None:
        return self.next_jump
