"""The pending order of A-SRPT's ``eligibility = arrival`` variant (ours, not the paper's).

Spec ``docs/families/asrpt.md`` (the ``eligibility`` parameter, added to test
whether waiting for the virtual completion is what costs A-SRPT on weak
predictions): under ``eligibility = arrival`` a job is eligible at its arrival
and the queue keeps the virtual-completion order (Algorithm 1, Line 2, orders
``pending_queue`` by the virtual machine's completions; Algorithm 1 itself
makes a job eligible only at its virtual completion, which this variant drops).

Online, the virtual-completion order of the jobs that have not yet
completed on the virtual machine is not known; what is known at ``t`` is the
order in which preemptive SRPT would complete them if nothing else arrived:
ascending remaining virtual size, ties by release, then index, i.e. the
order of the virtual machine's own heap entries ``(remaining, release,
index)``. So the variant's queue at ``t`` is: the virtually completed,
unstarted jobs in completion order (A-SRPT's ``pending_queue``), then the
virtually unfinished, unstarted jobs in that heap order. The relative order
of two jobs never changes (only the running virtual job's remaining size
shrinks, and it is the smallest); an arrival may enter anywhere.

:class:`ArrivalQueue` holds the second part: a heap mirroring the virtual
machine's entries for the jobs still waiting. The virtual machine brings the
running job's stored remaining size up to date only when a group is released
(:attr:`ddlsched.heuristics.asrpt.VirtualSrpt.updated_top`); the mirror
receives the same update (:meth:`ArrivalQueue.update`), so its keys are
always the virtual machine's stored keys and its order is the virtual
machine's. Stale entries (superseded keys, jobs that left) are dropped
lazily; every operation is ``O(log I)`` amortised.
"""

from __future__ import annotations

import heapq

__all__ = ["ELIGIBILITIES", "ArrivalQueue"]

#: A-SRPT's ``eligibility`` parameter: ``virtual`` (Algorithm 1: eligible at the
#: virtual completion) or ``arrival`` (ours: eligible at arrival, this module's order).
ELIGIBILITIES: tuple[str, ...] = ("virtual", "arrival")

Entry = tuple[float, float, int]  # (remaining virtual size, release, job index)


class ArrivalQueue:
    """Waiting jobs that have not completed on the virtual machine, in its order."""

    __slots__ = ("_heap", "_key")

    def __init__(self, num_jobs: int) -> None:
        self._heap: list[Entry] = []
        self._key: list[float | None] = [None] * num_jobs  # None: not waiting here

    def add(self, entry: Entry) -> None:
        """A job arrived: its virtual machine entry ``(size, release, index)``."""
        self._key[entry[2]] = entry[0]
        heapq.heappush(self._heap, entry)

    def update(self, entry: Entry) -> None:
        """The virtual machine updated a job's stored remaining size (if it still waits)."""
        i = entry[2]
        if self._key[i] is not None:
            self._key[i] = entry[0]
            heapq.heappush(self._heap, entry)

    def discard(self, i: int) -> bool:
        """Job ``i`` leaves (it completed on the virtual machine); whether it was waiting."""
        was = self._key[i] is not None
        self._key[i] = None
        return was

    def peek(self) -> int | None:
        """The first waiting job, or None."""
        heap = self._heap
        key = self._key
        while heap and key[heap[0][2]] != heap[0][0]:
            heapq.heappop(heap)  # stale: superseded or left
        return heap[0][2] if heap else None

    def pop(self) -> int:
        """Remove and return the first waiting job (:meth:`peek` must have found one)."""
        i = self.peek()
        if i is None:
            raise IndexError("pop from an empty ArrivalQueue")
        heapq.heappop(self._heap)
        self._key[i] = None
        return i
