"""AntMan: non-preemptive FIFO by (priority, submit time) with GPU sharing.

Models ``run_sim.py::antman_sim_jobs`` of the original (github
Rivendile/Muri, ``simulator/``; GPU-level state as in ``node.py``).
Guaranteed jobs (priority 0) get GPUs of their own: a job of at most one
node's GPUs on the first node with enough GPUs free of guaranteed jobs
(else it reserves the most it finds on one node and keeps collecting there
at later events), a larger one on entirely free nodes (reserved as they
are found). Opportunistic jobs (priority 1) share the least utilised GPUs
below ``antman_util_cap``; their iteration time is the slowest of their
own, a shared guaranteed job's (:func:`share_iterations` of its
iterations per one of theirs) and twice their own next to another
opportunistic job. Jobs are never preempted.

Per GPU: the guaranteed and opportunistic jobs on it and a utilisation
number (guaranteed jobs add 0.1, opportunistic 0.9, with the original's
float operations in the original's order, so that ties in "least utilised"
break identically). Only jobs that can change the state are visited (the
others would fail without side effects).

Completions are grouped as usual and then every completion within 1e-4 s
of the first is added: the original's end-event merge loop deletes from a
list while indexing it (it raises when two merges happen). Arrivals and
completions are merged only when equal. A GPU shared by two jobs counts
once in the utilisation.
"""

from __future__ import annotations

import math

import numpy as np

from ddlsched.sim.muri.events import earliest_end_group, merge_equal
from ddlsched.sim.muri.policy import EndEvent
from ddlsched.sim.muri.state import SimState

__all__ = ["AntMan", "share_iterations"]


def share_iterations(mine: np.ndarray, other: np.ndarray) -> int:
    """Iterations of a guaranteed job during one of an opportunistic job's (run_sim.py)."""
    t0, t1, t2 = float(mine[0]), float(mine[1]), float(mine[2])
    c0, c1, c2 = float(other[0]), float(other[1]), float(other[2])
    iters = math.floor(t0 / (c1 + c2))
    extra = t0 % (c1 + c2)
    if extra > 0:
        iters += 1
        t1 -= min(t1, c2, c1 + c2 - extra)
    iters += math.floor(t1 / (c0 + c2))
    extra = t1 % (c0 + c2)
    if extra > 0:
        iters += 1
        if extra < c0:
            t2 -= min(t2, c0 + c1 - extra)
    iters += math.floor(t2 / (c0 + c1))
    extra = t2 % (c0 + c1)
    if extra > c0:
        iters += 1
    return iters


class AntMan:
    """``antman_sim_jobs``: the GPU-level state, placement, release and shared iteration times."""

    merge = staticmethod(merge_equal)

    def __init__(self, state: SimState):
        self.state = state
        num_nodes, per_node = state.num_nodes, state.gpus_per_node
        self.util = np.zeros((num_nodes, per_node))
        self.guaranteed_on = np.zeros((num_nodes, per_node), dtype=np.int64)
        self.opportunistic_on = np.zeros((num_nodes, per_node), dtype=np.int64)
        # per GPU: (guaranteed jobs, opportunistic jobs)
        self.gpu_jobs: list[list[tuple[list[int], list[int]]]] = [
            [([], []) for _ in range(per_node)] for _ in range(num_nodes)
        ]
        self.job_util = np.where(state.priority == 0, 0.1, 0.9)
        self.missing_gpus = state.gpus.copy()  # GPUs a guaranteed job still has to collect
        self.last_node = np.zeros(state.num_jobs, dtype=np.int64)
        self.placement: dict[int, list[tuple[int, int]]] = {}  # job -> [(node, gpu)], in order
        self.cap = state.config.antman_util_cap
        key_order = np.lexsort((np.arange(state.num_jobs), state.submit_s, state.priority))
        self.rank = np.empty(state.num_jobs, dtype=np.int64)
        self.rank[key_order] = np.arange(state.num_jobs)
        self.running = np.zeros(0, dtype=np.int64)  # running jobs by rank

    # -- GPU-level state ---------------------------------------------------------------------

    def _alloc_guaranteed(self, node: int, gpus: list[int], j: int) -> None:
        value = self.job_util[j] - 0.01
        for i in gpus:
            self.gpu_jobs[node][i][0].append(j)
            self.guaranteed_on[node, i] += 1
            self.util[node, i] += value
        self.placement.setdefault(j, []).extend((node, i) for i in gpus)
        self.missing_gpus[j] -= len(gpus)

    def _add_util_all(self, j: int) -> None:
        for node, i in self.placement[j]:
            self.util[node, i] += 0.01

    def _free_of_guaranteed(self, node: int) -> list[int]:
        return np.flatnonzero(self.guaranteed_on[node] == 0).tolist()

    def place(self, j: int) -> bool:
        """Try to start job ``j`` (a guaranteed job may reserve GPUs and still fail)."""
        st = self.state
        g = int(st.gpus[j])
        per_node = st.gpus_per_node
        if st.priority[j] == 1:
            flat = self.util.reshape(-1)
            cands = np.flatnonzero(flat < self.cap)
            if cands.size < g:
                return False
            chosen = cands[np.argsort(flat[cands], kind="stable")][:g]
            for c in chosen.tolist():
                node, i = divmod(c, per_node)
                self.util[node, i] += self.job_util[j]
                self.gpu_jobs[node][i][1].append(j)
                self.opportunistic_on[node, i] += 1
            self.placement[j] = [divmod(c, per_node) for c in chosen.tolist()]
            self.missing_gpus[j] = 0
            return True
        if g > per_node:  # whole free nodes, reserved as they are found
            need = int(self.missing_gpus[j]) // per_node
            full = [n for n in range(st.num_nodes) if not self.guaranteed_on[n].any()][:need]
            for node in full:
                self._alloc_guaranteed(node, list(range(per_node)), j)
            if len(full) == need:
                self._add_util_all(j)
                return True
            return False
        need = int(self.missing_gpus[j])
        if need == g:
            best_node, best_list = -1, []
            for node in range(st.num_nodes):
                avail = self._free_of_guaranteed(node)
                if len(avail) >= need:
                    self._alloc_guaranteed(node, avail[:need], j)
                    self.last_node[j] = node
                    self._add_util_all(j)
                    return True
                if len(avail) > len(best_list):
                    best_node, best_list = node, avail
            if best_list:
                self._alloc_guaranteed(best_node, best_list, j)
                self.last_node[j] = best_node
            return False
        node = int(self.last_node[j])
        avail = self._free_of_guaranteed(node)
        if len(avail) >= need:
            self._alloc_guaranteed(node, avail[:need], j)
            self._add_util_all(j)
            return True
        if avail:
            self._alloc_guaranteed(node, avail, j)
        return False

    def release(self, j: int) -> None:
        """Job ``j`` leaves its GPUs."""
        p = int(self.state.priority[j])
        occupied = self.guaranteed_on if p == 0 else self.opportunistic_on
        for node, i in self.placement.pop(j, []):
            jobs = self.gpu_jobs[node][i][p]
            if j in jobs:
                jobs.remove(j)
                occupied[node, i] -= 1
                self.util[node, i] -= self.job_util[j]

    def opportunistic_iteration_s(self, j: int) -> float:
        """Iteration time of opportunistic job ``j`` next to the jobs on its GPUs."""
        st = self.state
        mine = st.solo_iteration_s[j]
        co: set[int] = set()
        for node, i in self.placement[j]:
            co.update(self.gpu_jobs[node][i][0])
            co.update(x for x in self.gpu_jobs[node][i][1] if x != j)
        iteration_s = mine
        for c in co:
            if st.priority[c] == 0:
                if self.missing_gpus[c] > 0:
                    continue
                iteration_s = max(
                    iteration_s,
                    share_iterations(st.resource_s[j], st.resource_s[c]) * st.solo_iteration_s[c],
                )
            else:
                iteration_s = max(iteration_s, mine * 2.0)
        return iteration_s

    # -- policy hooks ------------------------------------------------------------------------

    def on_complete(self, t: float, jobs: list[int]) -> None:
        for j in jobs:
            self.release(j)

    def on_arrive(self, t: float, jobs: np.ndarray) -> None:
        pass

    def advance(self, t: float, running: np.ndarray, last_check_s: np.ndarray) -> None:
        pass

    def schedule(self, t: float) -> int:
        """Start waiting jobs in (priority, submit) order while any can change the state."""
        st = self.state
        per_node = st.gpus_per_node
        runnable = np.flatnonzero(st.active)
        pend = runnable[~st.running[runnable]]
        pend = pend[np.argsort(self.rank[pend], kind="stable")]
        pg, pp = st.gpus[pend], st.priority[pend]
        pos = 0
        while pos < pend.size:
            free_cnt = (self.guaranteed_on == 0).sum(axis=1)
            below = int(np.count_nonzero(self.util < self.cap))
            n_full = int(np.count_nonzero(free_cnt == per_node))
            g, p = pg[pos:], pp[pos:]
            missing = self.missing_gpus[pend[pos:]]
            can = (p == 1) & (g <= below)
            can |= (p == 0) & (g > per_node) & (n_full >= 1)
            small0 = (p == 0) & (g <= per_node)
            can |= small0 & (missing == g) & (free_cnt.max() >= 1)
            can |= small0 & (missing < g) & (free_cnt[self.last_node[pend[pos:]]] >= 1)
            hit = np.flatnonzero(can)
            if hit.size == 0:
                break
            j = int(pend[pos + int(hit[0])])
            pos += int(hit[0]) + 1
            if self.place(j):
                st.running[j] = True
        run = runnable[st.running[runnable]]
        self.running = run = run[np.argsort(self.rank[run], kind="stable")]
        for j in run[st.priority[run] == 1].tolist():
            st.iteration_s[j] = self.opportunistic_iteration_s(j)
        return int(np.count_nonzero((self.guaranteed_on > 0) | (self.opportunistic_on > 0)))

    def next_completion(self, t: float) -> EndEvent | None:
        """The usual completion group plus every completion within 1e-4 s of its time."""
        st = self.state
        run = self.running
        if run.size == 0:
            return None
        ends_at = t + st.remaining_iterations[run] * st.iteration_s[run]
        group = earliest_end_group(run, ends_at)
        assert group is not None
        first_t, members = group
        close = np.flatnonzero(np.abs(ends_at - first_t) <= 1e-4)
        extra = [int(run[q]) for q in close.tolist() if int(run[q]) not in members]
        return first_t, members + extra

    def next_timer(self) -> float | None:
        return None
