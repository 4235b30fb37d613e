"""A clock a test controls, for :class:`ddlsched.deadline.Deadline` (``clock=``).

A deadline read from it passes after a fixed number of reads (``tick_s`` per
read) or when the test moves it on (:meth:`StepClock.advance`), never because
the machine was slow or fast: the test decides where the time limit cuts.
"""

from __future__ import annotations


class StepClock:
    """A monotonic clock that advances ``tick_s`` seconds each time it is read."""

    def __init__(self, tick_s: float = 0.0) -> None:
        self.now_s = 0.0
        self.tick_s = tick_s
        self.reads = 0

    def __call__(self) -> float:
        """The current time; the next read is ``tick_s`` later."""
        self.reads += 1
        now = self.now_s
        self.now_s += self.tick_s
        return now

    def advance(self, seconds: float) -> None:
        """Move the clock on by ``seconds`` (a phase that "took" that long)."""
        self.now_s += seconds
