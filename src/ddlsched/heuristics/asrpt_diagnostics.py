"""Where an A-SRPT run's flow time goes: the diagnostics of every A-SRPT run's ``info``.

Spec ``docs/families/asrpt.md``: A-SRPT is implemented as written, and its
poor results on light load and on the testbed come from Algorithm 1, Line 2
(a job joins ``pending_queue`` only at its virtual completion) fed by weak
predictions; these diagnostics show where the time goes. Written by
:meth:`ddlsched.heuristics.asrpt.AsrptPolicy.diagnostics` at the end of a run
(the simulator hands it each job's start and finish); nothing here changes
a decision. The baselines (:class:`ddlsched.heuristics.asrpt_baselines.QueuePolicy`)
record the same with ``e_i = r_i`` (ours: the spec asks for A-SRPT's; the
queueing, running and placement figures explain the baselines too).

Notation, per job ``i`` (instance order): arrival ``r_i``, eligibility
``e_i`` (the instant the job joins the pending order: its virtual completion
``c~_i`` under ``eligibility = virtual``, Algorithm 1; ``r_i`` under
``eligibility = arrival``), start ``t_i``, finish ``C_i``, GPUs ``g_i``;
``free(t) = G - sum_{j: t_j <= t < C_j} g_j`` the cluster's idle GPUs at
``t`` (half-open run intervals, as the evaluator's Eq. 3 sweep). Always
``r_i <= e_i <= t_i`` (A-SRPT never starts a job before it is eligible).

* ``hold_back_s = sum_i (e_i - r_i)``: time spent waiting for eligibility;
  ``queue_wait_s = sum_i (t_i - e_i)``: time eligible but not started (a
  head of line that does not fit, strict order, an open delay window);
  ``run_s = sum_i (C_i - t_i)``. Their sum is the total flow time
  ``sum_i (C_i - r_i)`` (up to rounding).
* ``hold_back_idle_s = sum_i |{t in [r_i, e_i) : free(t) >= g_i}|``: the
  part of the hold-back during which enough GPUs were idle for the job to
  run (it could have started then, on any servers: a selection may span
  servers). This is the time Line 2 costs on an idle cluster; a job
  waiting for eligibility on a full cluster adds nothing.
  ``hold_back_idle_by_job_s``: the per-job values (instance order), for
  instances of at most :data:`PER_JOB_MAX` jobs (trace windows keep only
  the totals, the count ``jobs_held_back_idle`` of jobs with a positive
  value and the largest ``hold_back_idle_max_s``); :func:`idle_wait`
  computes them for any size.
* ``queue_wait_idle_s``: the same measure over ``[e_i, t_i)`` (eligible,
  enough idle GPUs, not started: head-of-line blocking or a delay window).
* ``placement_slowdown = run_s / sum_i n_i alpha~_min_i``: the running time
  over what it would be if every job ran at ``alpha~_min`` (Heavy-Edge on
  the fewest servers); above 1 when placements split over servers cost
  communication (``None`` when the denominator is 0).
* ``virtual_work_ratio = sum_i g_i n~_i alpha~_i / G  /  sum_i g_i n_i
  alpha~_i / G``: predicted over true virtual work (1 for
  ``asrpt_perfect``; ``None`` when the true work is 0); and
  ``predicted_over_true_median``, the median of ``n~_i / n_i`` over jobs.
* ``utilisation``: busy GPU-seconds ``sum_i g_i (C_i - t_i)`` over ``G x
  (max_i C_i - min_i r_i)``, the evaluator's definition (0 for a zero
  makespan).

Cost: ``O(I log I)`` with numpy: the idle profile ``free(t)`` is a step
function over the ``<= 2 I`` start and finish instants; for each distinct
GPU demand ``d`` (a handful) the prefix integral of ``[free(t) >= d]`` is one
cumulative sum, and each job's measure is two look-ups in it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = [
    "PER_JOB_MAX",
    "IdleProfile",
    "idle_wait",
    "run_diagnostics",
    "utilisation",
    "virtual_work_ratio",
]

#: Instances of at most this many jobs get the per-job hold-back in ``info``.
PER_JOB_MAX = 2000


class IdleProfile:
    """The step function ``free(t)`` of a run, and the time with ``free(t) >= d`` between
    any two instants (module docstring, "Cost")."""

    def __init__(
        self,
        gpus: np.ndarray,
        num_gpus: int,
        start_s: np.ndarray,
        finish_s: np.ndarray,
        origin_s: float,
    ) -> None:
        # breakpoints b_0 < ... < b_K (b_0 <= origin_s); free[k] holds on [b_k, b_{k+1})
        points = np.unique(np.concatenate([start_s, finish_s, [origin_s]]))
        by_start = np.argsort(start_s, kind="stable")
        by_finish = np.argsort(finish_s, kind="stable")
        taken = np.concatenate([[0], np.cumsum(gpus[by_start])])
        given = np.concatenate([[0], np.cumsum(gpus[by_finish])])
        started = np.searchsorted(start_s[by_start], points, side="right")
        finished = np.searchsorted(finish_s[by_finish], points, side="right")
        self.points = points
        self.free = num_gpus - (taken[started] - given[finished])
        self._width = np.diff(points)
        self._prefix: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def _integral(self, demand: int) -> tuple[np.ndarray, np.ndarray]:
        cached = self._prefix.get(demand)
        if cached is None:
            enough = (self.free >= demand).astype(float)
            prefix = np.concatenate([[0.0], np.cumsum(self._width * enough[:-1])])
            cached = self._prefix[demand] = (enough, prefix)
        return cached

    def measure(self, gpus: np.ndarray, lo_s: np.ndarray, hi_s: np.ndarray) -> np.ndarray:
        """Per job, ``|{t in [lo, hi) : free(t) >= g}|`` (0 when ``hi <= lo``); every
        ``lo`` must be at or after the profile's origin."""
        points = self.points
        hi_s = np.maximum(hi_s, lo_s)
        k_lo = np.searchsorted(points, lo_s, side="right") - 1
        k_hi = np.searchsorted(points, hi_s, side="right") - 1
        out = np.zeros(len(gpus))
        for demand in np.unique(gpus).tolist():
            enough, prefix = self._integral(demand)
            mine = gpus == demand
            a, b = k_lo[mine], k_hi[mine]
            at_lo = prefix[a] + (lo_s[mine] - points[a]) * enough[a]
            at_hi = prefix[b] + (hi_s[mine] - points[b]) * enough[b]
            out[mine] = np.maximum(at_hi - at_lo, 0.0)
        return out


def idle_wait(
    gpus: Sequence[int],
    num_gpus: int,
    start_s: Sequence[float],
    finish_s: Sequence[float],
    lo_s: Sequence[float],
    hi_s: Sequence[float],
) -> np.ndarray:
    """Per job ``i``, the length of ``{t in [lo_i, hi_i) : free(t) >= g_i}``.

    ``free(t) = num_gpus - sum_{j: start_j <= t < finish_j} g_j``; ``free`` is
    ``num_gpus`` before the first start and after the last finish. An empty
    interval (``hi_i <= lo_i``) measures 0.
    """
    g = np.asarray(gpus, dtype=np.int64)
    if len(g) == 0:
        return np.zeros(0)
    lo = np.asarray(lo_s, dtype=float)
    start = np.asarray(start_s, dtype=float)
    profile = IdleProfile(
        g, num_gpus, start, np.asarray(finish_s, dtype=float), min(lo.min(), start.min())
    )
    return profile.measure(g, lo, np.asarray(hi_s, dtype=float))


def virtual_work_ratio(
    gpus: Sequence[int],
    predicted: Sequence[float],
    iterations: Sequence[int],
    alpha_min_s: Sequence[float],
) -> float | None:
    """``sum_i g_i n~_i alpha~_i / sum_i g_i n_i alpha~_i`` (``None`` if the latter is 0)."""
    weight = np.asarray(gpus, dtype=float) * np.asarray(alpha_min_s, dtype=float)
    true = float(np.sum(weight * np.asarray(iterations, dtype=float)))
    if not true > 0:
        return None
    return float(np.sum(weight * np.asarray(predicted, dtype=float))) / true


def utilisation(
    gpus: Sequence[int],
    num_gpus: int,
    arrival_s: Sequence[float],
    start_s: Sequence[float],
    finish_s: Sequence[float],
) -> float:
    """Busy GPU-seconds over ``G x (max C - min r)`` (0 for a zero makespan)."""
    finish = np.asarray(finish_s, dtype=float)
    makespan = float(finish.max() - np.min(arrival_s))
    busy = float(np.sum(np.asarray(gpus, dtype=float) * (finish - np.asarray(start_s))))
    return busy / (num_gpus * makespan) if makespan > 0 else 0.0


def run_diagnostics(
    *,
    gpus: Sequence[int],
    num_gpus: int,
    arrival_s: Sequence[float],
    eligible_s: Sequence[float],
    start_s: Sequence[float],
    finish_s: Sequence[float],
    predicted: Sequence[float],
    iterations: Sequence[int],
    alpha_min_s: Sequence[float],
    per_job: bool = True,
) -> dict[str, Any]:
    """The diagnostics of one run (module docstring), ready for ``info``; ``per_job``:
    add the per-job hold-back (instances of at most :data:`PER_JOB_MAX` jobs)."""
    g = np.asarray(gpus, dtype=np.int64)
    arrival = np.asarray(arrival_s, dtype=float)
    eligible = np.asarray(eligible_s, dtype=float)
    start = np.asarray(start_s, dtype=float)
    finish = np.asarray(finish_s, dtype=float)
    profile = IdleProfile(g, num_gpus, start, finish, float(arrival.min()))
    held = profile.measure(g, arrival, eligible)
    queued = profile.measure(g, eligible, start)
    n = np.asarray(iterations, dtype=float)
    ratios = np.asarray(predicted, dtype=float) / n
    run_s = float(np.sum(finish - start))
    packed_s = float(np.sum(n * np.asarray(alpha_min_s, dtype=float)))
    out: dict[str, Any] = {
        "hold_back_s": float(np.sum(eligible - arrival)),
        "hold_back_idle_s": float(np.sum(held)),
        "jobs_held_back_idle": int(np.count_nonzero(held > 0)),
        "hold_back_idle_max_s": float(held.max()),
        "queue_wait_s": float(np.sum(start - eligible)),
        "queue_wait_idle_s": float(np.sum(queued)),
        "run_s": run_s,
        "placement_slowdown": run_s / packed_s if packed_s > 0 else None,
        "virtual_work_ratio": virtual_work_ratio(gpus, predicted, iterations, alpha_min_s),
        "predicted_over_true_median": float(np.median(ratios)),
        "utilisation": utilisation(g, num_gpus, arrival, start, finish),
    }
    if per_job and len(held) <= PER_JOB_MAX:
        out["hold_back_idle_by_job_s"] = held.tolist()
    return out
