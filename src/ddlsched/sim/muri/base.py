"""What the policies that keep one list of unfinished jobs share (SRTF/SRSF, Themis, Muri).

The original's loops keep the unfinished jobs in one Python list, sorted
again (stably) at every event: completions leave it, arrivals join it at
its end. The jobs now running are ``running`` (in list order); the next
completion group is the earliest predicted end at the current iteration
time (:func:`~ddlsched.sim.muri.events.earliest_end_group`; for SRTF/SRSF
and Themis the current iteration time is the solo one, which only AntMan
and Muri change). No policy timer.
"""

from __future__ import annotations

import numpy as np

from ddlsched.sim.muri.events import earliest_end_group
from ddlsched.sim.muri.policy import EndEvent
from ddlsched.sim.muri.state import SimState

__all__ = ["JobListPolicy"]


class JobListPolicy:
    """The job-list bookkeeping of a policy; subclasses add ``merge``, ``advance``, ``schedule``."""

    def __init__(self, state: SimState):
        self.state = state
        self.order = np.zeros(0, dtype=np.int64)  # unfinished jobs in list order
        self.running = np.zeros(0, dtype=np.int64)  # running jobs in list order

    def on_complete(self, t: float, jobs: list[int]) -> None:
        self.order = self.order[~self.state.done[self.order]]

    def on_arrive(self, t: float, jobs: np.ndarray) -> None:
        self.order = np.concatenate([self.order, jobs])

    def next_completion(self, t: float) -> EndEvent | None:
        st = self.state
        run = self.running
        return earliest_end_group(run, t + st.remaining_iterations[run] * st.iteration_s[run])

    def next_timer(self) -> float | None:
        return None
