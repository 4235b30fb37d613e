"""A-SRPT's virtual single machine ``A~1``: preemptive SRPT, online and incremental.

Spec ``docs/families/asrpt.md``, A-SRPT's step 1; A-SRPT paper,
Sec. IV-C-1 and Algorithm 1, Line 2. Job ``i`` has size ``p~_i = (g_i / G)
n~_i alpha~_min_i`` and release ``r_i``; ties by earlier release, then
index. :class:`VirtualSrpt` changes state only at releases and at its own
completions, with the float operations of
:func:`ddlsched.heuristics.srpt.srpt_completion_times`, so its completion
times equal that function's bit for bit (tested). Re-exported by
:mod:`ddlsched.heuristics.asrpt`, whose policies drive it.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence

__all__ = ["VirtualSrpt"]


class VirtualSrpt:
    """Preemptive SRPT on one machine, online (A-SRPT's instance ``A~1``).

    A heap of ``(remaining, release, index)``; only the running job (the top)
    progresses, accounted lazily: ``clock`` is when the top's ``remaining`` was
    last brought up to date. The state changes only at :meth:`release` and
    at completions (:meth:`complete_due`), with the float operations of
    :func:`ddlsched.heuristics.srpt.srpt_completion_times`.
    """

    __slots__ = ("_arrival", "_heap", "_sizes", "clock", "updated_top")

    def __init__(self, sizes: Sequence[float], arrival_s: Sequence[float]) -> None:
        self._sizes = sizes
        self._arrival = arrival_s
        self._heap: list[tuple[float, float, int]] = []
        self.clock = 0.0
        #: After :meth:`release`: the entry of the job running when the group was
        #: released, its remaining size brought up to date (None: the machine was idle).
        self.updated_top: tuple[float, float, int] | None = None

    def next_completion_s(self) -> float:
        """When the running job completes if nothing is released before (``inf``: idle)."""
        heap = self._heap
        return self.clock + heap[0][0] if heap else math.inf

    def complete_due(self, t: float) -> list[tuple[float, int]]:
        """Complete the jobs that finish by ``t``: ``[(completion time, index), ...]`` in order."""
        heap = self._heap
        done = []
        while heap and self.clock + heap[0][0] <= t:
            remaining, _, i = heapq.heappop(heap)
            self.clock = self.clock + remaining
            done.append((self.clock, i))
        return done

    def release(self, t: float, jobs: Sequence[int]) -> list[tuple[float, int]]:
        """Release ``jobs`` (one arrival group) at ``t``; the completions up to ``t`` first."""
        done = self.complete_due(t)
        heap = self._heap
        self.updated_top = None
        if heap:
            remaining, release, i = heap[0]
            heap[0] = self.updated_top = (remaining - (t - self.clock), release, i)  # shrinks
        self.clock = t
        for i in jobs:
            heapq.heappush(heap, (float(self._sizes[i]), float(self._arrival[i]), i))
        return done
