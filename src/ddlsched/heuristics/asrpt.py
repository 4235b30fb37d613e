"""The online policies of family ``asrpt``: A-SRPT (Algorithm 1) and the policy factory.

Paper: "Prediction-Assisted Online Distributed Deep Learning Workload
Scheduling in GPU Clusters" (Luo, Liu, Lee, Shroff),
Sec. IV-C (Algorithm 1) and Sec. V-A-1-d (baselines); spec
``docs/families/asrpt.md``, sections "The event loop", "`asrpt` (heuristic):
A-SRPT, Algorithm 1" and "Baselines" (the spec wins over the paper). Line numbers below are
Algorithm 1's.

A-SRPT (:class:`AsrptPolicy`, ``asrpt`` and ``asrpt_perfect``):

* Virtual machine ``A~1`` (spec step 1): preemptive SRPT on one machine,
  job ``i`` of size ``p~_i = (g_i / G) n~_i alpha~_min_i`` released at
  ``r_i`` (:func:`virtual_sizes`), ties by earlier arrival, then by the
  job's index in the instance's job order (the "id" of the spec). It is
  incremental (:class:`~ddlsched.heuristics.asrpt_virtual.VirtualSrpt`: a
  heap by remaining size with lazy progress accounting) and its state changes only at releases and at its
  own completions, with the same float operations as
  :func:`ddlsched.heuristics.srpt.srpt_completion_times`, so its completion
  times equal that function's bit for bit (tested). It depends on arrivals
  and predictions only, never on the real schedule;
  :func:`virtual_completion_times` replays it alone. ``n~_i = 0`` (an unseen
  job) completes at its arrival.
* ``pending_queue`` (Line 2): jobs are appended at their virtual completion,
  in the virtual machine's completion order.
* Head of line (Lines 3-5, 31-32): while no delay window is open, the head
  starts if ``g_i`` is at most the cluster's free GPUs (any such job can be
  placed: a selection may span servers); otherwise nothing starts before the
  next event (strict order, no backfilling).
* Communication-heavy (Line 8, ``alpha_max / alpha~_min >= comm_heavy``):
  most-free-first selection + Heavy-Edge (Lines 9-11); start now if
  ``alpha / alpha~_min <= comm_heavy`` (Lines 12-13), else ``kappa = alpha``
  (Line 16) and a window until ``t + tau p~_i`` (Line 17; ``tau =
  delay_factor``). At every real completion inside the window (its end
  included) the selection and Heavy-Edge are recomputed on the current
  availability and the job starts at the first with ``alpha < kappa``
  (Lines 18-20, strict); else it starts at the window's end with the
  placement computed there (Line 23). No GPUs are reserved. With
  ``delay_blocks`` (default, the paper: Line 17's loop advances the
  scheduler's own clock) nothing else starts while the window is open.
* Otherwise least-free-first + Heavy-Edge, start now (Lines 26-28).
* ``asrpt_perfect``: the same with ``n~_i := n_i`` (sizes and windows).
* ``eligibility`` (spec revision 2026-11-25): ``virtual`` (default) is
  Algorithm 1 as above; ``arrival`` (ours, not the paper's) makes a job
  eligible at its arrival, the queue kept in the virtual machine's
  completion order: the virtually completed jobs first (``pending_queue``),
  then the others as SRPT would complete them if nothing else arrived
  (:mod:`ddlsched.heuristics.asrpt_arrival`). The virtual machine itself is
  unchanged (it never sees the real schedule), and so are the head-of-line
  rule and Lines 8-28.
* Diagnostics (:meth:`AsrptPolicy.diagnostics`, at the end of a run):
  hold-back time (waiting for eligibility, in all and while enough GPUs were
  idle), queueing and running time, the placements' slowdown, predicted /
  true virtual work, utilisation
  (:mod:`ddlsched.heuristics.asrpt_diagnostics`). The baselines record the
  same with eligibility at arrival (no hold-back, no per-job list).

The baselines (:class:`~ddlsched.heuristics.asrpt_baselines.QueuePolicy`)
are :mod:`ddlsched.heuristics.asrpt_baselines`; the protocol of the event
loop (:class:`~ddlsched.heuristics.asrpt_policy.OnlinePolicy`), the server
selection + Heavy-Edge every policy shares and the job table are
:mod:`ddlsched.heuristics.asrpt_policy`; :func:`make_policy` builds any of
them.

Choices the spec leaves open (written down here):

* The window's length is computed as ``tau * p~_i`` (the spec's ``tau (g_i /
  G) n~_i alpha~_min_i`` with the product ``p~_i`` of the virtual machine).
  A window of length 0 (``tau = 0``, ``n~_i = 0``, or one that does not move
  ``t`` in floating point) is opened and ends at once: the job starts now
  with the placement just computed, counted as ``delays_opened`` and
  ``started_at_deadline``.
* The ratio ``alpha / alpha~_min`` is taken as 1 when ``alpha~_min = 0`` (the
  convention of :class:`~ddlsched.heuristics.asrpt_config.ConfigConstants`).
* A completion at the very instant a window opens is not "inside" it (the
  window opens after that instant's events); a completion at the window's
  end is, and an improvement found there counts as ``started_on_improvement``.
* ``delay_blocks = false`` (ablation, not the paper): the head of line goes
  on past a job whose window opens, so several windows may be open, each
  job with its own ``kappa`` and end; at a real completion each open window
  (in opening order) is re-checked if its job fits the free GPUs. At its
  end a job that fits starts with the placement computed there; one that no
  longer fits (other jobs took the GPUs) waits in an overdue line ahead of
  ``pending_queue``, strict, and starts most-free-first + Heavy-Edge as soon
  as it fits (``started_after_deadline``). With ``delay_blocks = true`` this
  cannot happen: nothing starts during a window and GPUs are only freed.
* Decision counts (:meth:`~ddlsched.heuristics.asrpt_policy.OnlinePolicy.decision_counts`): for A-SRPT
  ``comm_heavy_jobs`` (jobs of the class), ``started_immediately``
  (class members started at Line 13), ``delays_opened`` (windows opened,
  Line 16), of which ``started_on_improvement`` (Line 20),
  ``started_at_deadline`` (Line 23) and ``started_after_deadline`` (the
  ablation's overdue starts), ``delay_wait_s`` (the time from each window's
  opening to its job's start, summed), and ``virtual_total_completion_s``
  (``OPT_A~1``, the sum of the virtual completion times).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from numbers import Integral

from ddlsched.errors import DdlschedError, UnknownMethodError
from ddlsched.heuristics.asrpt_arrival import ELIGIBILITIES, ArrivalQueue
from ddlsched.heuristics.asrpt_baselines import BASELINES, QueuePolicy
from ddlsched.heuristics.asrpt_cluster import FreeGpus
from ddlsched.heuristics.asrpt_config import COMM_HEAVY
from ddlsched.heuristics.asrpt_policy import JobTable, OnlinePolicy, PolicyBase, Start
from ddlsched.heuristics.asrpt_virtual import VirtualSrpt
from ddlsched.problems.asrpt import AsrptInstance

__all__ = [
    "ELIGIBILITIES",
    "POLICIES",
    "SERVER_SELECTIONS",
    "AsrptPolicy",
    "FreeGpus",
    "VirtualSrpt",
    "make_policy",
]

POLICIES: tuple[str, ...] = ("asrpt", "asrpt_perfect", *BASELINES)
SERVER_SELECTIONS: tuple[str, ...] = ("most_free", "least_free", "asrpt")


# --------------------------------------------------------------------------- A-SRPT


@dataclass(slots=True)
class _Window:
    job: int
    kappa_s: float
    end_s: float
    open_s: float


class AsrptPolicy(PolicyBase):
    """A-SRPT, Algorithm 1, event-driven (see the module docstring)."""

    def __init__(
        self,
        instance: AsrptInstance,
        table: JobTable,
        *,
        perfect: bool = False,
        delay_factor: float = 1.0,
        comm_heavy: float = COMM_HEAVY,
        delay_blocks: bool = True,
        eligibility: str = "virtual",
        seed: int = 0,
    ) -> None:
        super().__init__(instance, table, seed)
        self.delay_factor = delay_factor
        self.comm_heavy = comm_heavy
        self.delay_blocks = delay_blocks
        self.eligibility = eligibility
        self.perfect = perfect
        self.sizes = table.sizes(perfect)
        self.heavy = tuple(ratio >= comm_heavy for ratio in table.heavy_ratio)  # Line 8
        self.vm = VirtualSrpt(self.sizes, table.arrival_s)
        self.virtual_completion_s = [math.nan] * len(self.sizes)
        self.eligible_s = [math.nan] * len(self.sizes)
        self.pending: deque[int] = deque()
        # eligibility = arrival: the arrived jobs not yet virtually completed, in order
        self.waiting = ArrivalQueue(len(self.sizes)) if eligibility == "arrival" else None
        self.overdue: deque[int] = deque()
        self.windows: list[_Window] = []
        self._completed = False
        self.counts = {
            "comm_heavy_jobs": sum(self.heavy),
            "started_immediately": 0,
            "delays_opened": 0,
            "started_on_improvement": 0,
            "started_at_deadline": 0,
            "started_after_deadline": 0,
            "delay_wait_s": 0.0,
        }

    # -- events ------------------------------------------------------------------

    def _append(self, done: list[tuple[float, int]]) -> None:
        waiting = self.waiting
        for completion, i in done:  # Line 2, in virtual completion order
            self.virtual_completion_s[i] = completion
            if waiting is None:
                self.eligible_s[i] = completion
                self.pending.append(i)
            elif waiting.discard(i):  # arrival variant: still waiting, now virtually done
                self.pending.append(i)

    def on_complete(self, t: float, jobs: Sequence[int]) -> None:
        self._completed = True

    def on_arrive(self, t: float, jobs: Sequence[int]) -> None:
        vm = self.vm
        self._append(vm.release(t, jobs))
        waiting = self.waiting
        if waiting is not None:  # eligible at arrival, in the virtual machine's order
            if vm.updated_top is not None:
                waiting.update(vm.updated_top)
            sizes = self.sizes
            arrival = self.table.arrival_s
            for i in jobs:  # the virtual machine's own entry
                self.eligible_s[i] = t
                waiting.add((float(sizes[i]), float(arrival[i]), i))

    def on_time(self, t: float) -> None:
        self._append(self.vm.complete_due(t))

    def next_event_s(self) -> float:
        t = self.vm.next_completion_s()
        for window in self.windows:
            t = min(t, window.end_s)
        return t

    # -- decisions ---------------------------------------------------------------

    def _ratio(self, i: int, alpha_s: float) -> float:
        alpha_min_s = self.table.alpha_min_s[i]
        return alpha_s / alpha_min_s if alpha_min_s > 0 else 1.0

    def _serve_windows(self, t: float, cluster: FreeGpus, completed: bool, out: list) -> None:
        """Lines 17-23 for every open window at ``t``."""
        gpus = self.table.gpus
        still = []
        for window in self.windows:
            i = window.job
            trial = None
            if completed and gpus[i] <= cluster.total:  # Line 18: recompute on availability
                trial = self._trial(i, cluster, True)
                if trial[2].alpha_s < window.kappa_s:  # Lines 19-20 (strict)
                    out.append(self._launch(i, cluster, *trial))
                    self.counts["started_on_improvement"] += 1
                    self.counts["delay_wait_s"] += t - window.open_s
                    continue
            if t >= window.end_s:
                if gpus[i] <= cluster.total:  # Line 23: the placement computed at the end
                    if trial is None:
                        trial = self._trial(i, cluster, True)
                    out.append(self._launch(i, cluster, *trial))
                    self.counts["started_at_deadline"] += 1
                    self.counts["delay_wait_s"] += t - window.open_s
                else:  # only with delay_blocks = false
                    self.overdue.append(i)
                continue
            still.append(window)
        self.windows = still

    def schedule(self, t: float, cluster: FreeGpus) -> list[Start]:
        out: list[Start] = []
        completed, self._completed = self._completed, False
        if self.windows:
            self._serve_windows(t, cluster, completed, out)
            if self.delay_blocks and self.windows:
                return out  # Line 17's loop holds the scheduler
        gpus = self.table.gpus
        overdue = self.overdue
        while overdue:
            i = overdue[0]
            if gpus[i] > cluster.total:
                return out
            overdue.popleft()
            out.append(self._start(i, cluster, True))
            self.counts["started_after_deadline"] += 1
        pending = self.pending
        waiting = self.waiting
        counts = self.counts
        while True:
            if pending:
                i = pending[0]  # Line 4
            elif waiting is not None and (head := waiting.peek()) is not None:
                i = head  # arrival variant: the first not yet virtually completed
            else:
                break
            if gpus[i] > cluster.total:  # Lines 5, 31-32: wait for the next event
                break
            if pending:  # Line 7
                pending.popleft()
            else:
                waiting.pop()  # type: ignore[union-attr]
            if not self.heavy[i]:  # Lines 26-28: least-free-first, start now
                out.append(self._start(i, cluster, False))
                continue
            servers, takes, mapping = self._trial(i, cluster, True)  # Lines 9-11
            if self._ratio(i, mapping.alpha_s) <= self.comm_heavy:  # Lines 12-13
                out.append(self._launch(i, cluster, servers, takes, mapping))
                counts["started_immediately"] += 1
                continue
            counts["delays_opened"] += 1  # Line 16: kappa = alpha
            end_s = t + self.delay_factor * self.sizes[i]  # Line 17
            if end_s <= t:  # a window of length 0 ends at once (Line 23)
                out.append(self._launch(i, cluster, servers, takes, mapping))
                counts["started_at_deadline"] += 1
                continue
            self.windows.append(_Window(i, mapping.alpha_s, end_s, t))
            if self.delay_blocks:
                break
        return out

    def decision_counts(self) -> dict[str, float]:
        out: dict[str, float] = dict(self.counts)
        out["virtual_total_completion_s"] = math.fsum(self.virtual_completion_s)
        return out

    def diagnostics(self, start_s: Sequence[float], finish_s: Sequence[float]) -> dict:
        """Hold-back, queueing, virtual work and utilisation (:mod:`.asrpt_diagnostics`)."""
        table = self.table
        predicted = table.iterations if self.perfect else table.predicted
        return {
            "eligibility": self.eligibility,
            **self._diagnostics(self.eligible_s, start_s, finish_s, predicted, per_job=True),
        }


# --------------------------------------------------------------------------- factory


def make_policy(
    name: str,
    instance: AsrptInstance,
    *,
    delay_factor: float = 1.0,
    comm_heavy: float = COMM_HEAVY,
    delay_blocks: bool = True,
    eligibility: str = "virtual",
    server_selection: str = "most_free",
    seed: int = 0,
) -> OnlinePolicy:
    """The policy ``name`` (one of :data:`POLICIES`) on ``instance``, ready for the loop.

    ``delay_factor``, ``comm_heavy``, ``delay_blocks`` and ``eligibility`` apply to
    ``asrpt`` and ``asrpt_perfect``; ``server_selection`` to the baselines (with ``asrpt``,
    ``comm_heavy`` sets the class threshold). Heavy-Edge uses ``seed``.
    """
    if name not in POLICIES:
        raise UnknownMethodError(
            f"unknown asrpt policy {name!r} (choose from {', '.join(POLICIES)})"
        )
    if isinstance(delay_factor, bool) or not (
        isinstance(delay_factor, (int, float)) and math.isfinite(delay_factor) and delay_factor >= 0
    ):
        raise DdlschedError(f"delay_factor must be a finite number >= 0, got {delay_factor!r}")
    if isinstance(comm_heavy, bool) or not (
        isinstance(comm_heavy, (int, float)) and math.isfinite(comm_heavy) and comm_heavy > 0
    ):
        raise DdlschedError(f"comm_heavy must be a finite number > 0, got {comm_heavy!r}")
    if eligibility not in ELIGIBILITIES:
        raise DdlschedError(
            f"eligibility must be one of {', '.join(ELIGIBILITIES)}, got {eligibility!r}"
        )
    if server_selection not in SERVER_SELECTIONS:
        raise DdlschedError(
            f"server_selection must be one of {', '.join(SERVER_SELECTIONS)}, "
            f"got {server_selection!r}"
        )
    if isinstance(seed, bool) or not isinstance(seed, Integral) or seed < 0:
        raise DdlschedError(f"seed must be a non-negative integer, got {seed!r}")
    seed = int(seed)
    table = JobTable.of(instance)
    if name in ("asrpt", "asrpt_perfect"):
        return AsrptPolicy(
            instance,
            table,
            perfect=name == "asrpt_perfect",
            delay_factor=float(delay_factor),
            comm_heavy=float(comm_heavy),
            delay_blocks=bool(delay_blocks),
            eligibility=eligibility,
            seed=seed,
        )
    key, strict = BASELINES[name]
    if server_selection == "asrpt":
        most_free = [ratio >= comm_heavy for ratio in table.heavy_ratio]
    else:
        most_free = [server_selection == "most_free"] * len(table.gpus)
    return QueuePolicy(instance, table, key=key, strict=strict, most_free=most_free, seed=seed)
