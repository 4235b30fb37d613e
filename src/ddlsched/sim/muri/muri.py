"""Muri-S and Muri-L: interleaving groups of jobs with complementary resource use.

Models ``run_sim.py::multi_resource_blossom_same_sim_jobs`` of the original
(github Rivendile/Muri, ``simulator/``); paper Sec. 4.2 ("Optimizing for
average JCT") and 5.1. At every event the unfinished jobs are sorted,
stably, by remaining service (Muri-S: remaining iterations x solo
iteration time x GPUs, durations known; a job not yet run counts its
trace duration x GPUs) or by attained service (Muri-L: executed time x
GPUs, 2D-LAS order, durations unknown); :class:`~ddlsched.sim.muri.grouping.Grouping`
admits candidates and groups them (matching, or consecutive candidates
without Blossom, optionally autopack). The groups are placed with MS-YARN
in descending GPU count order (stably); a group's members share its GPUs,
each runs at the group's period
(:meth:`~ddlsched.sim.muri.timing.GroupPeriods.period` of its member types
in member order) and pays the group's start overhead at every event.
An arrival and a completion within 1e-4 s are merged, at the arrival's time
(:func:`~ddlsched.sim.muri.events.merge_within_1e4`).
"""

from __future__ import annotations

import numpy as np

from ddlsched.sim.muri.base import JobListPolicy
from ddlsched.sim.muri.events import merge_within_1e4, stable_sort
from ddlsched.sim.muri.grouping import Grouping, Node
from ddlsched.sim.muri.state import SimState
from ddlsched.sim.muri.timing import GroupPeriods

__all__ = ["Muri"]


class Muri(JobListPolicy):
    """``multi_resource_blossom_same_sim_jobs``: Muri-S (``know_duration``) or Muri-L."""

    merge = staticmethod(merge_within_1e4)

    def __init__(self, state: SimState, know_duration: bool):
        super().__init__(state)
        self.know_duration = know_duration
        self.periods = GroupPeriods(state.config, state.type_resource_s, state.type_iteration_s)
        self.grouping = Grouping(state, self.periods)
        self.remaining_gpu_s = np.zeros(state.num_jobs)
        self.executed_gpu_s = np.zeros(state.num_jobs)

    def on_arrive(self, t: float, jobs: np.ndarray) -> None:
        st = self.state
        super().on_arrive(t, jobs)
        self.remaining_gpu_s[jobs] = st.duration_s[jobs] * st.gpus[jobs]
        self.executed_gpu_s[jobs] = 0.0

    def advance(self, t: float, running: np.ndarray, last_check_s: np.ndarray) -> None:
        st = self.state
        self.remaining_gpu_s[running] = (
            st.remaining_iterations[running] * st.solo_iteration_s[running]
        ) * st.gpus[running]
        if not self.know_duration:
            self.executed_gpu_s[running] = st.executed_s[running] * st.gpus[running]

    def schedule(self, t: float) -> int:
        st = self.state
        order = stable_sort(
            self.order, self.remaining_gpu_s if self.know_duration else self.executed_gpu_s
        )
        packings = self.grouping.plan(order)
        # placement by GPU count, descending; group members share their GPUs
        order = order[np.argsort(-st.gpus[order], kind="stable")]
        self.order = order
        member_of: dict[int, Node] = {}
        for nodes in packings.values():
            for nd in nodes:
                for j in nd:
                    member_of[j] = nd
        is_member = np.zeros(st.num_jobs, dtype=bool)
        if member_of:
            is_member[np.fromiter(member_of, dtype=np.int64)] = True
        free = [st.gpus_per_node] * st.num_nodes
        placed_groups: set[Node] = set()
        new_running = np.zeros(st.num_jobs, dtype=bool)
        start_overhead = st.config.start_overhead
        busy = 0
        for j in order[is_member[order]].tolist():
            nd = member_of[j]
            g = int(st.gpus[j])
            st.iteration_s[j] = self.periods.period(self.grouping.node_types(nd))
            st.overhead_s[j] = self.grouping.overhead_s(nd, g) if start_overhead else 0.0
            if nd in placed_groups:
                new_running[j] = True
            elif st.yarn(free, g):
                placed_groups.add(nd)
                new_running[j] = True
                busy += g
        st.running[order] = new_running[order]
        self.running = order[st.running[order]]
        return busy
