"""SRTF and SRSF: preemptive shortest remaining time / service first, MS-YARN backfilling.

Models ``run_sim.py::shortest_first_sim_jobs`` of the original (github
Rivendile/Muri, ``simulator/``). Durations are known. At every event the
unfinished jobs are sorted by remaining time (``srtf``: remaining
iterations x solo iteration time) or remaining service (``srsf``: that
times the GPU count), stably (ties keep the job list's previous order, as
the original's list sort does), and placed in that order with MS-YARN; a
job that does not fit is skipped (backfilling). Running jobs are
preempted when they no longer make the cut. Arrivals and completions are
merged only when equal (:func:`~ddlsched.sim.muri.events.merge_equal`).
"""

from __future__ import annotations

import numpy as np

from ddlsched.sim.muri.base import JobListPolicy
from ddlsched.sim.muri.events import merge_equal, stable_sort
from ddlsched.sim.muri.state import SimState

__all__ = ["ShortestFirst"]


class ShortestFirst(JobListPolicy):
    """``shortest_first_sim_jobs``: SRTF (``by_service=False``) or SRSF (``by_service=True``)."""

    merge = staticmethod(merge_equal)

    def __init__(self, state: SimState, by_service: bool):
        super().__init__(state)
        self.by_service = by_service
        self.remaining_s = np.zeros(state.num_jobs)
        self.remaining_gpu_s = np.zeros(state.num_jobs)

    def on_arrive(self, t: float, jobs: np.ndarray) -> None:
        st = self.state
        super().on_arrive(t, jobs)
        self.remaining_s[jobs] = st.remaining_iterations[jobs] * st.solo_iteration_s[jobs]
        self.remaining_gpu_s[jobs] = self.remaining_s[jobs] * st.gpus[jobs]

    def advance(self, t: float, running: np.ndarray, last_check_s: np.ndarray) -> None:
        st = self.state
        self.remaining_s[running] = st.remaining_iterations[running] * st.solo_iteration_s[running]
        if self.by_service:
            self.remaining_gpu_s[running] = self.remaining_s[running] * st.gpus[running]

    def schedule(self, t: float) -> int:
        st = self.state
        order = stable_sort(
            self.order, self.remaining_gpu_s if self.by_service else self.remaining_s
        )
        free = [st.gpus_per_node] * st.num_nodes
        placed = st.place_in_order(order, free)
        st.running[order] = placed
        self.order = order
        self.running = order[placed]
        return int(st.gpus[self.running].sum())
