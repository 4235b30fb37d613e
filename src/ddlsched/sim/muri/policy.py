"""The interface between the event loop (:mod:`ddlsched.sim.muri.events`) and a policy.

A policy is built on the run's :class:`~ddlsched.sim.muri.state.SimState`
by its factory (:data:`ddlsched.sim.muri.POLICIES`) and owns its own
bookkeeping (its job list order, queues, GPU-level state, ...). The loop
owns everything common: event selection, the job life cycle in the state,
progress, start times, measurements, deadlock detection and the deadline.

Per event the loop calls, in this order (the state has already been
updated where said):

1. ``merge(arrival_t, end_event)``: the policy's rule joining the next
   arrival group (time ``arrival_t``, ``None`` when no arrival is left) and
   its own next completion group ``end_event`` into one event; returns the
   event time, whether the arrival group is taken, and the finishing jobs
   (``None``: none). Then, if ``next_timer()`` gave a time earlier than
   that event, the event is the timer alone (no arrivals, no completions).
2. ``on_complete(t, jobs)`` after :meth:`SimState.complete`.
3. ``on_arrive(t, jobs)`` after :meth:`SimState.arrive`.
4. ``advance(t, running, last_check_s)`` after :meth:`SimState.progress` of
   the running jobs ``running`` (ascending job index; ``last_check_s``:
   their last checks before this progress) and after every waiting job's
   last check was set to ``t``.
5. ``schedule(t)``: decide which jobs run from ``t`` on (set
   ``state.running``, and ``state.iteration_s`` / ``state.overhead_s``
   where they change); returns the GPUs in use. The loop then stamps first
   start times and records the measurements.
6. ``next_completion(t)``: the next completion group ``(time, jobs)`` of
   the jobs now running, or ``None``; ``next_timer()``: the time of the
   policy's next own event (Tiresias' queue jumps) or ``None``.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

__all__ = ["EndEvent", "Policy"]

#: A completion group: its time and the jobs that finish then (in the policy's list order).
EndEvent = tuple[float, list[int]]


class Policy(Protocol):
    """What a scheduling policy provides to the event loop (see the module docstring)."""

    def merge(
        self, arrival_t: float | None, end_event: EndEvent | None
    ) -> tuple[float, bool, list[int] | None]:
        """The next event: ``(time, take the arrival group, finishing jobs or None)``."""
        ...

    def on_complete(self, t: float, jobs: list[int]) -> None:
        """Jobs ``jobs`` finished at ``t``."""
        ...

    def on_arrive(self, t: float, jobs: np.ndarray) -> None:
        """Jobs ``jobs`` arrived at ``t``."""
        ...

    def advance(self, t: float, running: np.ndarray, last_check_s: np.ndarray) -> None:
        """The running jobs ``running`` progressed from ``last_check_s`` to ``t``."""
        ...

    def schedule(self, t: float) -> int:
        """Decide the running jobs from ``t`` on; the number of GPUs in use."""
        ...

    def next_completion(self, t: float) -> EndEvent | None:
        """The next completion group of the running jobs, or ``None``."""
        ...

    def next_timer(self) -> float | None:
        """The time of the policy's next own event, or ``None``."""
        ...
