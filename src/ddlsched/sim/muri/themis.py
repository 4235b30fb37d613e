"""Themis: finish-time-fairness allocation at every event, then greedy MS-YARN placement.

Models ``run_sim.py::themis_sim_jobs`` of the original (github
Rivendile/Muri, ``simulator/``). At every event each unfinished job gets
a GPU share ``x`` of the min-max finish-time-fairness problem (its
elapsed time plus its remaining iterations at the share's throughput,
over its isolated time). The original solves that LP with cvxpy/ECOS; its
optimum is not unique, and the published Themis numbers depend on the
solver's choice. Here it is solved exactly by bisection on the fairness
level (:func:`themis_shares`), every job getting the smallest share that
meets it. The isolated time is its cumulated part plus the remaining
iterations over the isolated allocation (``min(ceil(G / m) / g, 1)`` of
the job's GPUs): in ``reference`` that allocation is not multiplied by the
throughput, mixing units as the original does;
``themis_isolated_units="seconds"`` (``paper``) fixes it.

Jobs are chosen in descending order of (share over executed time, or
``1e9 x`` share before the first run; share deficit; share), stably, and
placed with MS-YARN; the chosen jobs are then placed again in descending
GPU count order, and those that fit run. Arrivals and completions are
merged only when equal.
"""

from __future__ import annotations

import math

import numpy as np

from ddlsched.sim.muri.base import JobListPolicy
from ddlsched.sim.muri.events import merge_equal
from ddlsched.sim.muri.state import SimState

__all__ = ["Themis", "themis_shares"]


def themis_shares(ratio_num, coef, denom, g, total, tput) -> np.ndarray:
    """min over x of max_i (E_i + r_i / (tput_i x_i)) / D_i s.t. sum g_i x_i <= G, 0 <= x <= 1.

    ``ratio_num`` = E_i (elapsed), ``coef`` = r_i, ``denom`` = D_i (isolated time).
    Bisection on the level ``L``: job ``i`` needs ``x_i >= r_i / (tput_i (L D_i - E_i))``.
    """
    n = ratio_num.size

    def need(level: float) -> np.ndarray | None:
        slack = level * denom - ratio_num
        if np.any(slack <= 0):
            return None
        x = coef / (tput * slack)
        if np.any(x > 1.0) or float(np.dot(g, x)) > total:
            return None
        return x

    lo = float(np.max((ratio_num + coef / tput) / denom))  # every job at x = 1
    lo = max(lo * (1 - 1e-12), 0.0)
    hi = max(lo, 1.0) * 2.0
    for _ in range(200):
        if need(hi) is not None:
            break
        hi *= 2.0
    else:  # pragma: no cover - infeasible only if the cluster is too small
        return np.full(n, min(1.0, total / max(1, int(g.sum()))))
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        if need(mid) is None:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-12 * hi:
            break
    x = need(hi)
    assert x is not None
    return x


class Themis(JobListPolicy):
    """``themis_sim_jobs``: shares, the priority order, placement."""

    merge = staticmethod(merge_equal)

    def __init__(self, state: SimState):
        super().__init__(state)
        num_jobs = state.num_jobs
        self.seconds_units = state.config.themis_isolated_units == "seconds"
        self.throughput = 1.0 / state.solo_iteration_s
        self.cumulated_isolated = np.zeros(num_jobs)
        self.previous_remaining = np.full(num_jobs, np.nan)
        self.previous_isolated = np.full(num_jobs, np.nan)
        self.should_have_run = np.zeros(num_jobs)  # integral of the share over time
        self.last_event_t = 0.0

    def on_arrive(self, t: float, jobs: np.ndarray) -> None:
        super().on_arrive(t, jobs)
        self.should_have_run[jobs] = 0.0

    def advance(self, t: float, running: np.ndarray, last_check_s: np.ndarray) -> None:
        pass

    def schedule(self, t: float) -> int:
        st = self.state
        order = self.order
        if order.size:
            total = st.config.num_gpus
            tput = self.throughput
            remaining = st.remaining_iterations
            m = order.size
            alloc = np.minimum(math.ceil(total / m) / st.gpus[order], 1.0)
            iso = alloc * tput[order] if self.seconds_units else alloc
            seen = ~np.isnan(self.previous_remaining[order])
            upd = order[seen]
            self.cumulated_isolated[upd] += (
                self.previous_remaining[upd] - remaining[upd]
            ) / self.previous_isolated[upd]
            denom = self.cumulated_isolated[order] + remaining[order] / iso
            x = themis_shares(
                t - st.submit_s[order],
                remaining[order],
                denom,
                st.gpus[order].astype(float),
                total,
                tput[order],
            )
            self.previous_remaining[order] = remaining[order]
            self.previous_isolated[order] = iso
            executed = st.executed_s[order]
            sort_val = np.where(executed == 0, x * 1e9, x / np.where(executed == 0, 1.0, executed))
            deficit = self.should_have_run[order] - executed
            self.should_have_run[order] += x * (t - self.last_event_t)
            keys = np.lexsort((-x, -deficit, -sort_val))  # descending, stable
            # Python's sort(reverse=True) keeps equal keys in their original order
            chosen_order = order[keys]
            free = [st.gpus_per_node] * st.num_nodes
            chosen = chosen_order[st.place_in_order(chosen_order, free)]
            is_chosen = np.zeros(st.num_jobs, dtype=bool)
            is_chosen[chosen] = True
            order = order[np.argsort(-st.gpus[order], kind="stable")]
            free = [st.gpus_per_node] * st.num_nodes
            cand = order[is_chosen[order]]
            placed_c = st.place_in_order(cand, free)
            placed = np.zeros(st.num_jobs, dtype=bool)
            placed[cand[placed_c]] = True
            st.running[order] = placed[order]
            self.order = order
        self.running = order[st.running[order]]
        self.last_event_t = t
        return int(st.gpus[self.running].sum())
