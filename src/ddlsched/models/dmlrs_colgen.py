"""``dmlrs.colgen``: the LP relaxation of R-DMLRS by column generation, and an offline schedule.

Paper: Yu et al., IEEE TNSE 2022 (reading notes of the paper): R-DMLRS (Eq.
8) and its dual (Eqs. 10-11). Spec ``docs/families/dmlrs.md``, "Bounds"
(``colgen``).

Master (:class:`ddlsched.solvers.dmlrs_master.ColumnMaster`): the LP over
the columns found so far, capacity rows ``(h, r, t)`` with duals ``p >=
0`` (only rows some column uses; prices elsewhere are 0) and ``sum_pi x_pi
<= 1`` per job with duals ``sigma_i``. Pricing
(:class:`ddlsched.models.dmlrs_dual.PricingSession`): per job the best
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
   at any ``p >= 0``, :func:`ddlsched.models.dmlrs_dual.bound_at_prices`); the
   best (smallest) is kept. A job's column is added when its priced value
   exceeds ``sigma_i`` by more than :data:`TOLERANCE` (relative to
   ``max(1, sigma_i)``).
   Stabilisation (``stabilisation``): ``"none"`` prices at the master's
   duals ``p_RMP``; ``"smoothing"`` is Wentges' dual smoothing (P.
   Wentges, "Weighted Dantzig-Wolfe decomposition for linear mixed-integer
   programming", Int. Trans. Oper. Res. 4(2):151-162, 1997) with the
   mis-pricing rule of Pessoa, Sadykov, Uchoa and Vanderbeck ("Automation
   and combination of linear-programming based stabilization techniques in
   column generation", INFORMS J. Comput. 30(2):339-360, 2018): price at
   ``p_s = alpha p_centre + (1 - alpha) p_RMP``, the centre being the
   prices of the best bound so far (``p = 0`` after round 0). A column is
   added when its reduced profit at the master's duals is positive. A round
   that adds none is a mis-pricing: price again with ``alpha_k = max(0, 1 -
   k (1 - alpha))`` at the ``k``-th mis-pricing of the same master
   solution, down to ``alpha = 0`` (unstabilised), so the method stops only
   where unstabilised column generation would. ``alpha`` in ``[0, 1)``
   (default 0.5; 0 is ``"none"``). Every priced point ``p_s >= 0`` is a
   dual point, so ``UB(p_s)`` is a valid bound whatever ``alpha`` (the
   tests check it against ``exact`` on 120 ``tiny`` instances).
4. Stop (``info['rounds_stopped']``): ``converged`` when no column prices out and every
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

The method ``colgen`` (:func:`solve_colgen`, its strategy) seeds the
master with the schedules of the seed heuristics the family passes (PD-ORS
with the run's seed, FIFO, DRF, Dorm; each within its share of the time
limit; one that runs out of time is skipped and named in
``seed_columns_cut``, one that cannot run on the instance is skipped and
named with its error in ``seed_columns_refused``) and reports the restricted
MILP's schedule with the bound (``feasible``), or the bound alone without
one. The limit changed the answer (``time_limit_hit``) when a round was cut
(``time_limit``), a pricing stopped at its share (``stalled``), the
restricted MILP stopped or a seed schedule was left out; ``info['stopped']``
then names each of these, and is absent otherwise; ``info['rounds_stopped']``
always says why the rounds ended (``converged``, ``iteration_limit``,
``master_error``, ``time_limit``, ``stalled``).
An instance without jobs gives the empty schedule with the bound 0.

Choices (ours): the tolerance; ``master_share`` (default 0.2); the
pricing time per job (an equal share of what remains of the round's
time); columns are deduplicated by their entries. A master LP's warm start
that needs more than ``max(10,000, 10 x the last master LP's)`` simplex
iterations is dropped and the LP solved cold (a degenerate warm start has
been seen to stall; ``info['master_cold_restarts']``). The budget is an
iteration count, not a time (it was ``max(5 s, 10 x the last LP's
seconds)``): a restart changes the basis, the duals and so the columns, and
with it the same instance and limit gave another bound on a loaded machine.
On ``paper`` seeds 0 and 1 the master LPs took 19 to 171 iterations (0.02 to
0.14 s at load 13, about 1,000 to 2,000 iterations a second): 10,000
iterations is several seconds there, as 5 s was, and neither rule restarted.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from ddlsched.deadline import Deadline
from ddlsched.errors import (
    DdlschedError,
    InfeasibleScheduleError,
    TimeLimitReached,
    UnknownMethodError,
)
from ddlsched.models.dmlrs import ub_trivial
from ddlsched.models.dmlrs_dual import PRICING_MODES, PricingResult, PricingSession
from ddlsched.problems.dmlrs import DmlrsInstance, DmlrsSchedule, evaluate, schedule_from_counts
from ddlsched.solvers.dmlrs_master import ColumnMaster
from ddlsched.solvers.result import Outcome, Status, mark_stopped

__all__ = [
    "STABILISATIONS",
    "TOLERANCE",
    "ColgenIteration",
    "ColgenResult",
    "colgen",
    "solve_colgen",
]

#: A column prices out when its value exceeds ``sigma_i + TOLERANCE max(1, sigma_i)``.
TOLERANCE = 1e-6

#: ``stabilisation`` of :func:`colgen` (module docstring).
STABILISATIONS = ("none", "smoothing")

#: A master LP's warm start gets ``max(PATIENCE_MIN_ITERATIONS, PATIENCE_FACTOR * the
#: last LP's)`` simplex iterations before it is restarted cold (module docstring).
PATIENCE_MIN_ITERATIONS = 10_000
PATIENCE_FACTOR = 10


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


class _Rounds:
    """The pricing rounds of column generation (module docstring) and what they keep: the
    best bound, the stability centre, the history, why they stopped and their timings."""

    def __init__(
        self,
        instance: DmlrsInstance,
        columns: _Columns,
        session: PricingSession,
        loop: Deadline,
        integral: bool,
        best: float,
        started: float,
    ) -> None:
        self.instance, self.columns, self.session = instance, columns, session
        self.loop, self.integral = loop, integral
        self.started = started  # perf_counter() at the start of colgen
        self.best = best
        self.center = np.zeros(columns.shape)  # the prices of the best bound so far
        self.history: list[ColgenIteration] = []
        self.stopped = ""
        self.master_value: float | None = None
        self.lp_solves = 0
        self.mispricings = 0
        self.pricing_s = self.master_s = 0.0
        self.last_lp_iterations = 0  # simplex iterations of the last master LP

    def price_round(
        self, prices, master_prices, sigma, alpha: float, load
    ) -> tuple[int, dict[str, int]]:
        """Price every job at ``prices``; add the columns that price out at the master's."""
        t0 = time.perf_counter()
        results: list[PricingResult] = self.session.price_all(prices, self.loop, load)
        self.pricing_s += time.perf_counter() - t0
        cap_t = self.instance.cap[:, :, None]
        ub = math.fsum(r.dual_bound for r in results) + float(np.sum(prices * cap_t))
        if ub < self.best:
            self.best, self.center = ub, prices
        added = 0
        for i, r in enumerate(results):
            if r.column is None:
                continue
            cost = _usage_cost(self.instance, i, r.column, master_prices)
            reduced = r.utility - cost - sigma[i]
            if reduced > TOLERANCE * max(1.0, sigma[i]):
                added += self.columns.add(i, r.utility, r.column, self.integral)[1]
        statuses: dict[str, int] = {}
        for r in results:
            statuses[r.status] = statuses.get(r.status, 0) + 1
        self.history.append(
            ColgenIteration(
                len(self.history),
                ub,
                self.best,
                self.master_value,
                alpha,
                added,
                self.columns.master.num_columns,
                time.perf_counter() - self.started,
                statuses,
            )
        )
        return added, statuses

    def patience_iterations(self) -> int:
        """The warm start's iteration budget before a cold restart (``ColumnMaster.solve_lp``):
        ``max(PATIENCE_MIN_ITERATIONS, PATIENCE_FACTOR * last LP's iterations)``."""
        return max(PATIENCE_MIN_ITERATIONS, PATIENCE_FACTOR * self.last_lp_iterations)

    def closed(self) -> bool:
        """The best bound meets the master's value: converged."""
        value = self.master_value
        return value is not None and self.best <= value + TOLERANCE * max(1.0, abs(value))

    def run(self, smoothing: float, max_rounds: int | None) -> None:
        """Round 0 at ``p = 0``, then master LP and pricing until converged or stopped."""
        zero = np.zeros(self.columns.shape)
        n = len(self.instance.jobs)
        _, statuses = self.price_round(zero, zero, np.zeros(n), 0.0, None)  # round 0: UB(0)
        if "trivial" in statuses or self.loop.expired():
            self.stopped = "time_limit"
        elif self.columns.master.num_columns == 0:  # no job can earn anything
            self.stopped, self.master_value = "converged", 0.0
        while not self.stopped:
            if max_rounds is not None and self.lp_solves >= max_rounds:
                self.stopped = "iteration_limit"
                break
            master = self.columns.master
            t0 = time.perf_counter()
            solution = master.solve_lp(
                self.loop.remaining_s(), patience_iterations=self.patience_iterations()
            )
            self.last_lp_iterations = master.last_iterations
            self.master_s += time.perf_counter() - t0
            self.lp_solves += 1
            if solution.status != "optimal":
                self.stopped = "time_limit" if solution.status == "time_limit" else "master_error"
                break
            self.master_value = solution.value
            master_prices = self.columns.prices(solution.duals)
            load = self.columns.load(solution.x)
            if self.closed():
                self.stopped = "converged"
                break
            self._price_until_added(master_prices, solution.sigma, load, smoothing)

    def _price_until_added(self, master_prices, sigma, load, smoothing: float) -> None:
        """Price at the smoothed prices; after the ``k``-th mis-pricing (nothing added) with
        ``alpha_k = max(0, 1 - k (1 - alpha))``, down to the master's duals."""
        alpha, mispricings = smoothing, 0
        while True:
            if alpha == 0:
                prices = master_prices
            else:
                prices = alpha * self.center + (1 - alpha) * master_prices
            added, statuses = self.price_round(prices, master_prices, sigma, alpha, load)
            if "trivial" in statuses or self.loop.expired():
                self.stopped = "time_limit"
            elif self.closed():
                self.stopped = "converged"
            elif not added and alpha == 0:
                self.stopped = "converged" if set(statuses) == {"optimal"} else "stalled"
            if self.stopped or added:
                break
            mispricings += 1
            self.mispricings += 1
            alpha = 1.0 - mispricings * (1.0 - smoothing)
            alpha = alpha if alpha > 1e-9 else 0.0


def _restricted_mip(
    columns: _Columns,
    instance: DmlrsInstance,
    deadline: Deadline,
    start_ids: np.ndarray | None,
    start_value: float,
) -> tuple[DmlrsSchedule | None, float | None, dict[str, Any]]:
    """The restricted master with integral ``x``: a feasible offline schedule, its value and
    the MILP's record: the better of the MILP's schedule (its optimum, or the last
    incumbent of a solve the limit cut) and the best given schedule (the MILP's start),
    ``mip_info['schedule_from']`` saying which."""
    schedule, schedule_value, mip_info = None, None, {}
    if not any(columns.master.integral):
        return schedule, schedule_value, mip_info
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
            mip_info["schedule_from"] = "milp"
        except InfeasibleScheduleError as exc:  # pragma: no cover - a bug if reached
            mip_info["error"] = str(exc)
    # the best given schedule, when the MILP (cut at the limit) found none or a worse one
    if start_ids is not None and (schedule_value is None or start_value > schedule_value):
        schedule = columns.schedule(start)
        schedule_value = start_value
        mip_info["schedule_from"] = "start"
    return schedule, schedule_value, mip_info


def colgen(
    instance: DmlrsInstance,
    initial: Sequence[DmlrsSchedule] = (),
    pricing: str = "milp",
    backend: str = "highs",
    deadline: Deadline | None = None,
    *,
    master_share: float = 0.2,
    stabilisation: str = "smoothing",
    alpha: float = 0.5,
    max_rounds: int | None = None,
) -> ColgenResult:
    """Column generation for the LP relaxation of R-DMLRS (module docstring).

    ``initial``: feasible schedules whose columns seed the master (e.g.
    PD-ORS's and the baselines'); an infeasible one raises
    :class:`~ddlsched.errors.InfeasibleScheduleError`. ``pricing``:
    ``"milp"`` or ``"lp"``; ``backend``: ``"highs"`` (direct highspy) or
    ``"scip"`` (pricing through the Pyomo model). ``deadline`` covers
    everything; the final restricted MILP gets what remains, at least
    ``master_share`` of it. ``stabilisation`` (``"none"``, ``"smoothing"``)
    and ``alpha`` in ``[0, 1)``: the dual smoothing of the module docstring.
    ``max_rounds`` caps the master LP solves after round 0.
    """
    if pricing not in PRICING_MODES:
        raise UnknownMethodError(f"unknown pricing {pricing!r} (choose from milp, lp)")
    if stabilisation not in STABILISATIONS:
        raise UnknownMethodError(
            f"unknown stabilisation {stabilisation!r} (choose from {', '.join(STABILISATIONS)})"
        )
    if not 0.0 <= alpha < 1.0:
        raise DdlschedError(f"alpha: must be in [0, 1), got {alpha!r}")
    deadline = deadline or Deadline.unlimited()
    started = time.perf_counter()
    trivial = ub_trivial(instance)
    columns = _Columns(instance)
    start_ids, start_value = _initial_columns(columns, instance, initial)
    session = PricingSession(instance, pricing, backend)
    loop = deadline.sub(1.0 - master_share) if math.isfinite(deadline.remaining_s()) else deadline
    rounds = _Rounds(instance, columns, session, loop, pricing == "milp", trivial, started)
    rounds.run(alpha if stabilisation == "smoothing" else 0.0, max_rounds)
    schedule, schedule_value, mip_info = _restricted_mip(
        columns, instance, deadline, start_ids, start_value
    )
    history = rounds.history
    return ColgenResult(
        bound=rounds.best,
        schedule=schedule,
        schedule_value=schedule_value,
        iterations=rounds.lp_solves,
        history=tuple(history),
        stopped=rounds.stopped,
        master_value=rounds.master_value,
        info={
            "pricing": pricing,
            "backend": backend,
            "stabilisation": stabilisation,
            "alpha": alpha if stabilisation == "smoothing" else 0.0,
            "mispricings": rounds.mispricings,
            "ub_trivial": trivial,
            "ub_zero": history[0].bound if history else None,
            "columns": columns.master.num_columns,
            "integral_columns": int(sum(columns.master.integral)),
            "rows": len(columns.master.keys),
            "pricing_s": rounds.pricing_s,
            "master_lp_s": rounds.master_s,
            "master_cold_restarts": columns.master.cold_restarts,
            "restricted_mip": mip_info,
            "seconds": time.perf_counter() - started,
        },
    )


#: A seed heuristic of ``colgen``: its name and a call that returns its schedule.
SeedRun = tuple[str, Callable[[], DmlrsSchedule]]


def _seed_schedules(
    seeds: Sequence[SeedRun],
) -> tuple[list[DmlrsSchedule], list[str], dict[str, str]]:
    """The seed schedules (a seed heuristic that fails or runs out of time is skipped), the
    names of those the time cut short, and why the others could not run (name -> error)."""
    out, cut, refused = [], [], {}
    for name, run in seeds:
        try:
            out.append(run())
        except TimeLimitReached:
            cut.append(name)
        except DdlschedError as exc:
            refused[name] = str(exc)
    return out, cut, refused


def _what_the_limit_stopped(rounds_stopped: str, mip_cut: bool, seeds_cut: list[str]) -> str:
    """``info['stopped']`` of ``colgen``: what the time limit stopped ("" if nothing)."""
    parts = []
    if rounds_stopped == "time_limit":
        parts.append("the pricing rounds at the time limit (time_limit)")
    elif rounds_stopped == "stalled":
        parts.append("a pricing MILP at its share of the time limit (stalled)")
    if mip_cut:
        parts.append("the restricted MILP at its time limit")
    if seeds_cut:
        parts.append("seed heuristics cut by the time limit: " + ", ".join(seeds_cut))
    return "; ".join(parts)


def solve_colgen(
    instance: DmlrsInstance,
    seeds: Sequence[SeedRun],
    pricing: str,
    backend: str,
    deadline: Deadline,
    max_rounds: int | None,
    stabilisation: str = "smoothing",
    alpha: float = 0.5,
) -> Outcome:
    """``colgen``'s strategy (module docstring): the seed schedules, then :func:`colgen`;
    the bound with the restricted MILP's schedule, and why the limit changed it."""
    if not instance.jobs:  # the empty schedule, and the bound 0 (module docstring)
        return Outcome(DmlrsSchedule(accepted=()), Status.FEASIBLE, bound=0.0)
    started = time.perf_counter()
    initial, seeds_cut, seeds_refused = _seed_schedules(seeds)
    seeded_s = time.perf_counter() - started
    result = colgen(
        instance,
        initial,
        pricing=pricing,
        backend=backend,
        deadline=deadline,
        stabilisation=stabilisation,
        alpha=alpha,
        max_rounds=max_rounds,
    )
    mip_cut = result.info.get("restricted_mip", {}).get("status") == "time_limit"
    # the limit changed the answer: a round cut (time_limit), a pricing stopped at its share
    # (stalled), the restricted MILP stopped, or a seed schedule left out
    limit_stopped = _what_the_limit_stopped(result.stopped, mip_cut, seeds_cut)
    info = {
        "pricing": pricing,
        "iterations": result.iterations,
        "rounds_stopped": result.stopped,  # why the rounds ended (``stopped``: what the limit cut)
        "seed_columns_cut": seeds_cut,
        "seed_columns_refused": seeds_refused,
        "master_value": result.master_value,
        "schedule_value": result.schedule_value,
        "history": [asdict(h) for h in result.history],
        "seed_columns_s": seeded_s,
        **result.info,
    }
    status = Status.BOUND_ONLY if result.schedule is None else Status.FEASIBLE
    outcome = Outcome(result.schedule, status, bound=result.bound, info=info)
    return mark_stopped(outcome, limit_stopped)
