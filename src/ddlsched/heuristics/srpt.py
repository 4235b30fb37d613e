"""Preemptive SRPT on one machine with release times (offline replay of the online rule).

Used by family ``asrpt`` (spec ``docs/families/asrpt.md``): the bound
``lb_srpt`` (Lemma 1's single-machine relaxation with exact sizes), the
Lemma 3 check (SRPT on predicted and on true sizes), and the total
completion time ``OPT_A~1`` of A-SRPT's virtual machine. SRPT minimises
the total completion time on one preemptive machine (Schrage 1968), so
its total is the optimum of that relaxation.

Rule: at every instant the released, unfinished job with the least
remaining size runs; ties go to the earlier release, then the lower index.
A job of size 0 completes at its release. Times are floats; the event
loop is ``O(n log n)``.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence

__all__ = ["srpt_completion_times", "srpt_total_completion"]


def srpt_completion_times(releases: Sequence[float], sizes: Sequence[float]) -> list[float]:
    """Completion time of each job under preemptive SRPT (see the module docstring)."""
    n = len(releases)
    if len(sizes) != n:
        raise ValueError("releases and sizes must have the same length")
    order = sorted(range(n), key=lambda i: (releases[i], i))
    done = [math.nan] * n
    heap: list[tuple[float, float, int]] = []  # (remaining, release, index)
    t = 0.0
    k = 0
    while k < n or heap:
        if not heap:
            t = max(t, releases[order[k]])
        while k < n and releases[order[k]] <= t:
            i = order[k]
            heapq.heappush(heap, (float(sizes[i]), float(releases[i]), i))
            k += 1
        remaining, release, i = heapq.heappop(heap)
        next_release = releases[order[k]] if k < n else math.inf
        if t + remaining <= next_release:
            t += remaining
            done[i] = t
        else:
            ran = next_release - t
            t = next_release
            heapq.heappush(heap, (remaining - ran, release, i))
    return done


def srpt_total_completion(releases: Sequence[float], sizes: Sequence[float]) -> float:
    """``sum_i C_i`` of preemptive SRPT (:func:`srpt_completion_times`)."""
    return math.fsum(srpt_completion_times(releases, sizes))
