"""``dmlrs.colgen``: the LP relaxation of R-DMLRS by column generation, and an offline schedule.

Paper: Yu et al., IEEE TNSE 2022 (reading notes, seed 002): R-DMLRS (Eq.
8) and its dual (Eqs. 10-11). Spec ``shared/specs/dmlrs.md``, "R-DMLRS and
its dual" and "Exact and bounding formulations" (3).

Master (:class:`ddlsched.solvers.dmlrs_master.ColumnMaster`): the LP over
the columns found so far, capacity rows ``(h, r, t)`` with duals ``p >=
0`` (only rows some column uses; prices elsewhere are 0) and ``sum_pi x_pi
<= 1`` per job with duals ``sigma_i``. Pricing
(:class:`ddlsched.models.dmlrs.PricingSession`): per job the best
single-job schedule at prices ``p`` (``pricing="milp"``: the exact
single-job MILP; ``"lp"``: its LP relaxation with every worker at
``b_int``).

Algorithm (:func:`colgen`):

1. Columns of the given schedules (each accepted job's entries, a
   single-job schedule with the utility the evaluator gives it).
2. Round 0 prices every job at ``p = 0``: its best schedule on an empty
   cluster becomes a column, and ``UB(0) = sum_i lambda_i(0)`` is the first
   bound (never above ``ub_trivial``).
3. Each further round solves the master LP, prices every job at its duals
   ``p`` and computes ``UB(p) = sum_i lambda_i(p) + sum p C`` (a valid bound
   at any ``p >= 0``, :func:`ddlsched.models.dmlrs.bound_at_prices`); the
   best (smallest) is kept. A job's column is added when its priced value
   exceeds ``sigma_i`` by more than :data:`TOLERANCE` (relative to
   ``max(1, sigma_i)``).
4. Stop (``stopped``): ``converged`` when no column prices out and every
   pricing was solved to optimality, or when the best bound meets the
   master LP value (then both equal the LP optimum up to the tolerance);
   ``stalled`` when no column prices out but some pricing stopped at its
   time limit (its dual bound keeps ``UB`` valid, the master cannot grow);
   ``time_limit``; ``iteration_limit``. A round the deadline cuts gives
   the jobs it did not price their trivial bound ``u_i(d_min_i - 1)``, so
   the bound is always valid (at worst ``ub_trivial``).
5. The restricted master with integral ``x`` over the integral columns
   (MILP, HiGHS; the time left, at least ``master_share`` of the limit,
   started from the best given schedule) gives a feasible offline
   schedule: chosen columns of different jobs that fit the capacities
   together. With ``pricing="lp"`` the priced columns are fractional (LP
   points) and only the given schedules' columns are integral: the method
   is then a bound (spec: "bound only, faster"); its limit is the compact
   LP relaxation at ``b_int`` over all jobs (a Dantzig-Wolfe decomposition
   of it), which bounds the R-DMLRS LP from above.

Choices (ours): the tolerance; ``master_share`` (default 0.2); the
pricing time per job (an equal share of what remains of the round's
time); columns are deduplicated by their entries.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ddlsched.deadline import Deadline
from ddlsched.errors import InfeasibleScheduleError, UnknownMethodError
from ddlsched.models.dmlrs import PRICING_MODES, PricingResult, PricingSession, ub_trivial
from ddlsched.problems.dmlrs import DmlrsInstance, DmlrsSchedule, evaluate, schedule_from_counts
from ddlsched.solvers.dmlrs_master import ColumnMaster

__all__ = ["TOLERANCE", "ColgenIteration", "ColgenResult", "colgen"]

#: A column prices out when its value exceeds ``sigma_i + TOLERANCE max(1, sigma_i)``.
TOLERANCE = 1e-6


@dataclass(frozen=True)
class ColgenIteration:
    """One pricing round: ``UB(p)`` at its prices, the master LP value those came from
    (``None`` in round 0, ``p = 0``), columns added, total columns, seconds since the
    start, and the pricing statuses."""

    round: int
    bound: float
    best_bound: float
    master_value: float | None
    alpha: float
    columns_added: int
    columns: int
    seconds: float
    pricing_status: dict[str, int]


@dataclass(frozen=True)
class ColgenResult:
    """What :func:`colgen` found (module docstring).

    ``bound``: the best ``UB(p)`` (valid); ``schedule``: the restricted
    master MILP's schedule (``None`` without integral columns or solution)
    and ``schedule_value`` its evaluated utility; ``iterations``: master LP
    solves; ``history``: one entry per pricing round.
    """

    bound: float
    schedule: DmlrsSchedule | None
    schedule_value: float | None
    iterations: int
    history: tuple[ColgenIteration, ...]
    stopped: str
    master_value: float | None
    info: dict[str, Any] = field(default_factory=dict)


def _usage_cost(
    instance: DmlrsInstance,
    job: int,
    entries: Sequence[tuple[int, int, float, float]],
    prices: np.ndarray,
) -> float:
    """``sum_{h,r,t} p[h,r,t] use[h,r,t]`` of one job's entries."""
    alpha, beta = instance.alpha[job], instance.beta[job]
    return float(sum(float(prices[h, :, t - 1] @ (alpha * w + beta * s)) for t, h, w, s in entries))


class _Columns:
    """The master and what its columns hold."""

    def __init__(self, instance: DmlrsInstance) -> None:
        self.instance = instance
        H, R, T = instance.num_machines, len(instance.resources), instance.slots
        self.shape = (H, R, T)
        self.master = ColumnMaster(len(instance.jobs), np.repeat(instance.cap.ravel(), T))
        self.entries: list[tuple[tuple[int, int, float, float], ...]] = []
        self._seen: dict[tuple, int] = {}

    def add(
        self,
        job: int,
        utility: float,
        entries: Sequence[tuple[int, int, float, float]],
        integral: bool,
    ) -> tuple[int, bool]:
        """Add a column unless the same one is there: ``(its index, whether it is new)``."""
        entries = tuple(sorted(entries))
        key = (job, integral, tuple((t, h, round(w, 9), round(s, 9)) for t, h, w, s in entries))
        if key in self._seen:
            return self._seen[key], False
        _, R, T = self.shape
        alpha, beta = self.instance.alpha[job], self.instance.beta[job]
        keys, amounts = [], []
        for t, h, w, s in entries:
            use = alpha * w + beta * s
            for r in np.flatnonzero(use):
                keys.append((h * R + int(r)) * T + t - 1)
                amounts.append(float(use[r]))
        col = self.master.add_column(job, utility, np.asarray(keys), np.asarray(amounts), integral)
        self._seen[key] = col
        self.entries.append(entries)
        return col, True

    def prices(self, duals: dict[int, float]) -> np.ndarray:
        p = np.zeros(int(np.prod(self.shape)))
        for key, value in duals.items():
            p[key] = value
        return p.reshape(self.shape)

    def load(self, x: np.ndarray) -> np.ndarray:
        """The master's use of each machine and slot, ``sum_r use / C``, shape ``(H, T)``."""
        H, _, T = self.shape
        load = np.zeros((H, T))
        cap = self.instance.cap
        for col in np.flatnonzero(x > 1e-9):
            job = self.master.job[col]
            alpha, beta = self.instance.alpha[job], self.instance.beta[job]
            for t, h, w, s in self.entries[col]:
                load[h, t - 1] += x[col] * float(np.sum((alpha * w + beta * s) / cap[h]))
        return load

    def schedule(self, x: np.ndarray) -> DmlrsSchedule:
        accepted, rows = [], []
        for col in np.flatnonzero(x > 0.5):
            job = self.master.job[col]
            accepted.append(job)
            rows.extend((job, t, h, int(w), int(s)) for t, h, w, s in self.entries[col])
        return schedule_from_counts(accepted, rows)


def _initial_columns(
    columns: _Columns, instance: DmlrsInstance, initial: Sequence[DmlrsSchedule]
) -> tuple[np.ndarray | None, float]:
    """Add the given schedules' columns; the best one's start vector and value."""
    best_start, best_value = None, -math.inf
    for schedule in initial:
        evaluation = evaluate(instance, schedule)
        by_job: dict[int, list[tuple[int, int, float, float]]] = {}
        for a in schedule.alloc:
            if a.job in evaluation.job_utility and (a.workers or a.ps):
                by_job.setdefault(a.job, []).append((a.slot, a.machine, a.workers, a.ps))
        ids = []
        for job, utility in evaluation.job_utility.items():
            ids.append(columns.add(job, utility, by_job.get(job, []), True)[0])
        if evaluation.total_utility > best_value:
            best_value = evaluation.total_utility
            best_start = np.asarray(ids, dtype=np.int64)
    return best_start, best_value


def colgen(
    instance: DmlrsInstance,
    initial: Sequence[DmlrsSchedule] = (),
    pricing: str = "milp",
    backend: str = "highs",
    deadline: Deadline | None = None,
    *,
    master_share: float = 0.2,
    smoothing: float = 0.5,
    max_rounds: int | None = None,
) -> ColgenResult:
    """Column generation for the LP relaxation of R-DMLRS (module docstring).

    ``initial``: feasible schedules whose columns seed the master (e.g.
    PD-ORS's and the baselines'); an infeasible one raises
    :class:`~ddlsched.errors.InfeasibleScheduleError`. ``pricing``:
    ``"milp"`` or ``"lp"``; ``backend``: ``"highs"`` (direct highspy) or
    ``"scip"`` (pricing through the Pyomo model). ``deadline`` covers
    everything; the final restricted MILP gets what remains, at least
    ``master_share`` of it. ``max_rounds`` caps the pricing rounds after
    round 0.
    """
    if pricing not in PRICING_MODES:
        raise UnknownMethodError(f"unknown pricing {pricing!r} (choose from milp, lp)")
    deadline = deadline or Deadline.unlimited()
    started = time.perf_counter()
    n = len(instance.jobs)
    trivial = ub_trivial(instance)
    best = trivial
    columns = _Columns(instance)
    start_ids, start_value = _initial_columns(columns, instance, initial)
    session = PricingSession(instance, pricing, backend)
    loop = deadline.sub(1.0 - master_share) if math.isfinite(deadline.remaining_s()) else deadline
    cap_t = instance.cap[:, :, None]

    zero = np.zeros(columns.shape)
    center = zero  # the prices of the best bound so far (the stability centre)
    history: list[ColgenIteration] = []
    stopped = ""
    master_value: float | None = None
    lp_solves = 0
    pricing_s = master_s = last_lp_s = 0.0

    def price_round(prices, master_prices, sigma, alpha, load) -> tuple[float, int, dict[str, int]]:
        """Price every job at ``prices``; add the columns that price out at the master's."""
        nonlocal best, center, pricing_s
        t0 = time.perf_counter()
        results: list[PricingResult] = session.price_all(prices, loop, load)
        pricing_s += time.perf_counter() - t0
        ub = math.fsum(r.dual_bound for r in results) + float(np.sum(prices * cap_t))
        if ub < best:
            best, center = ub, prices
        added = 0
        for i, r in enumerate(results):
            if r.column is None:
                continue
            reduced = r.utility - _usage_cost(instance, i, r.column, master_prices) - sigma[i]
            if reduced > TOLERANCE * max(1.0, sigma[i]):
                added += columns.add(i, r.utility, r.column, pricing == "milp")[1]
        statuses: dict[str, int] = {}
        for r in results:
            statuses[r.status] = statuses.get(r.status, 0) + 1
        history.append(
            ColgenIteration(
                len(history),
                ub,
                best,
                master_value,
                alpha,
                added,
                columns.master.num_columns,
                time.perf_counter() - started,
                statuses,
            )
        )
        return ub, added, statuses

    def closed() -> bool:
        return master_value is not None and best <= master_value + TOLERANCE * max(
            1.0, abs(master_value)
        )

    _, _, statuses = price_round(zero, zero, np.zeros(n), 0.0, None)  # round 0: UB(0)
    if "trivial" in statuses or loop.expired():
        stopped = "time_limit"
    elif columns.master.num_columns == 0:  # no job can earn anything
        stopped, master_value = "converged", 0.0
    while not stopped:
        if max_rounds is not None and lp_solves >= max_rounds:
            stopped = "iteration_limit"
            break
        t0 = time.perf_counter()
        solution = columns.master.solve_lp(loop.remaining_s(), patience_s=max(5.0, 10 * last_lp_s))
        last_lp_s = time.perf_counter() - t0
        master_s += last_lp_s
        lp_solves += 1
        if solution.status != "optimal":
            stopped = "time_limit" if solution.status == "time_limit" else "master_error"
            break
        master_value = solution.value
        master_prices = columns.prices(solution.duals)
        load = columns.load(solution.x)
        if closed():
            stopped = "converged"
            break
        alpha = smoothing
        while True:
            prices = master_prices if alpha == 0 else alpha * center + (1 - alpha) * master_prices
            _, added, statuses = price_round(prices, master_prices, solution.sigma, alpha, load)
            if "trivial" in statuses or loop.expired():
                stopped = "time_limit"
            elif closed():
                stopped = "converged"
            elif not added and alpha == 0:
                stopped = "converged" if set(statuses) == {"optimal"} else "stalled"
            if stopped or added:
                break
            alpha = 0.0  # mispricing: price at the master's duals

    # the restricted master with integral x: a feasible offline schedule
    schedule, schedule_value, mip_info = None, None, {}
    if any(columns.master.integral):
        start = None
        if start_ids is not None:
            start = np.zeros(columns.master.num_columns)
            start[start_ids] = 1.0
        t0 = time.perf_counter()
        mip = columns.master.solve_mip(deadline.remaining_s(), start)
        mip_info = {
            "status": mip.status,
            "value": mip.value,
            "bound": mip.bound,
            "seconds": time.perf_counter() - t0,
        }
        if mip.x is not None:
            candidate = columns.schedule(mip.x)
            try:
                schedule_value = evaluate(instance, candidate).total_utility
                schedule = candidate
            except InfeasibleScheduleError as exc:  # pragma: no cover - a bug if reached
                mip_info["error"] = str(exc)
        if schedule is None and start_ids is not None:  # the best given schedule
            schedule = columns.schedule(start)
            schedule_value = start_value
    return ColgenResult(
        bound=best,
        schedule=schedule,
        schedule_value=schedule_value,
        iterations=lp_solves,
        history=tuple(history),
        stopped=stopped,
        master_value=master_value,
        info={
            "pricing": pricing,
            "backend": backend,
            "ub_trivial": trivial,
            "ub_zero": history[0].bound if history else None,
            "columns": columns.master.num_columns,
            "integral_columns": int(sum(columns.master.integral)),
            "rows": len(columns.master.keys),
            "pricing_s": pricing_s,
            "master_lp_s": master_s,
            "master_cold_restarts": columns.master.cold_restarts,
            "restricted_mip": mip_info,
            "seconds": time.perf_counter() - started,
        },
    )
