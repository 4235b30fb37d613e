"""The one event loop of the simulator, shared by every policy.

Events (the original's per-policy loops in ``run_sim.py``, one skeleton):
arrival groups (submit times within ``rel 1e-9`` of an earlier event's
time join it, :func:`~ddlsched.sim.muri.state.group_times`, as the
original's ``search_dict_list`` does), the policy's predicted completion
groups (grouped the same way, :func:`earliest_end_group`, except Tiresias,
which takes the exact minimum, and AntMan, which also merges completions
within 1e-4 s of the first), and an optional policy timer (Tiresias' queue
jumps). How an arrival and a completion are merged is the policy's rule:
:func:`merge_equal` (the baselines: only when equal) or
:func:`merge_within_1e4` (Muri: within 1e-4 s, at the arrival's time). The
timer fires alone when it is strictly earlier than that event.

Per event: completions (state, then policy), arrivals (state, then
policy), progress of the running jobs, the waiting jobs' clocks set to the
event time, the policy's own bookkeeping, the policy's schedule, first
start times, measurements, next completion group and timer. The loop runs
while an arrival group is left or a job is unfinished; if nothing can
happen any more (no arrival, no completion, no timer) the cluster cannot
run the remaining jobs. The deadline is checked at every event (a
clock read: nothing next to an event's work).
"""

from __future__ import annotations

import math

import numpy as np

from ddlsched.deadline import Deadline
from ddlsched.errors import DdlschedError
from ddlsched.sim.muri.policy import EndEvent, Policy
from ddlsched.sim.muri.state import NEVER, SimState

__all__ = [
    "earliest_end_group",
    "merge_equal",
    "merge_within_1e4",
    "run_events",
    "stable_sort",
]


def _isclose_rel(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9)


def earliest_end_group(ids: np.ndarray, ends: np.ndarray) -> EndEvent | None:
    """The earliest completion group, ends grouped in list order within rel 1e-9 of a group's first."""
    if ids.size == 0:
        return None
    vmin = float(ends.min())
    near = np.flatnonzero(ends <= vmin + 1e-8 * abs(vmin) + 1e-300)
    group_t: list[float] = []
    group_j: list[list[int]] = []
    for p in near.tolist():
        v = float(ends[p])
        for k, gt in enumerate(group_t):
            if _isclose_rel(gt, v):
                group_j[k].append(int(ids[p]))
                break
        else:
            group_t.append(v)
            group_j.append([int(ids[p])])
    k = min(range(len(group_t)), key=lambda i: group_t[i])
    return group_t[k], group_j[k]


def stable_sort(order: np.ndarray, key: np.ndarray) -> np.ndarray:
    """``order`` sorted by ``key[order]``, ties in their present order (Python's stable sort)."""
    return order[np.argsort(key[order], kind="stable")]


def merge_equal(
    arrival_t: float | None, end_event: EndEvent | None
) -> tuple[float, bool, list[int] | None]:
    """The baselines' rule: the earlier of arrival and completion group; both when equal.

    A missing event counts as ``sys.maxsize`` seconds, as in the original.
    """
    start_t = arrival_t if arrival_t is not None else NEVER
    end_t = end_event[0] if end_event else NEVER
    if end_t < start_t:
        return end_t, False, end_event[1]  # type: ignore[index]
    if end_t > start_t:
        return start_t, True, None
    return start_t, True, end_event[1]  # type: ignore[index]


def merge_within_1e4(
    arrival_t: float | None, end_event: EndEvent | None
) -> tuple[float, bool, list[int] | None]:
    """Muri's rule: an arrival and a completion within 1e-4 s (absolute) happen at the arrival."""
    start_t = arrival_t if arrival_t is not None else math.inf
    end_t = end_event[0] if end_event else math.inf
    if (
        end_event is not None
        and arrival_t is not None
        and math.isclose(end_t, start_t, abs_tol=1e-4)
    ):
        return start_t, True, end_event[1]
    if end_t < start_t:
        return end_t, False, end_event[1]  # type: ignore[index]
    return start_t, True, None


def run_events(
    state: SimState, policy: Policy, deadline: Deadline | None = None, what: str = "simulating"
) -> None:
    """Run ``policy`` on ``state`` until every job has finished (see the module docstring)."""
    arrivals = state.arrival_groups
    num_groups = len(arrivals)
    next_group = 0
    end_event: EndEvent | None = None
    timer: float | None = None
    while next_group < num_groups or state.num_active:
        if deadline is not None:
            deadline.check(what)
        if next_group == num_groups and end_event is None and timer is None:
            raise DdlschedError("the cluster is not large enough to run the remaining jobs")
        arrival_t = arrivals[next_group][0] if next_group < num_groups else None
        t, take_arrivals, ends = policy.merge(arrival_t, end_event)
        if timer is not None and t > timer:
            t, take_arrivals, ends = timer, False, None
        if ends:
            state.complete(t, ends)
            policy.on_complete(t, ends)
        if take_arrivals:
            jobs = arrivals[next_group][1]
            next_group += 1
            state.arrive(jobs)
            policy.on_arrive(t, jobs)
        running = np.flatnonzero(state.running)
        last_check_s = state.last_check_s[running]
        state.progress(t, running)
        state.last_check_s[state.active & ~state.running] = t
        policy.advance(t, running, last_check_s)
        busy = policy.schedule(t)
        state.stamp_starts(t)
        state.record(t, busy)
        end_event = policy.next_completion(t)
        timer = policy.next_timer()
