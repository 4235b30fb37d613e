"""A clock a test controls, for :class:`ddlsched.deadline.Deadline` (``clock=``).

A deadline read from a :class:`StepClock` passes after a fixed number of
reads (``tick_s`` per read) or when the test moves it on
(:meth:`StepClock.advance`), never because the machine was slow or fast: the
test decides where the time limit cuts. A :class:`PausableClock` runs in real
time except in the phases the test pauses it for.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager


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


class PausableClock:
    """The monotonic clock, less the time spent in :meth:`paused` blocks.

    For a test whose method may run in real time but one phase of which must
    never count against the deadline (its result is what the test checks):
    inside the block the clock stands still, whatever the machine's speed.
    """

    def __init__(self) -> None:
        self._paused_total_s = 0.0
        self._paused_at: float | None = None

    def __call__(self) -> float:
        """The current time: real time, less every pause, frozen during one."""
        if self._paused_at is not None:
            return self._paused_at
        return time.monotonic() - self._paused_total_s

    @contextmanager
    def paused(self) -> Iterator[None]:
        """Stop the clock for the duration of the block."""
        self._paused_at = self()
        began = time.monotonic()
        try:
            yield
        finally:
            self._paused_total_s += time.monotonic() - began
            self._paused_at = None
