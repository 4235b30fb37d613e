"""Family ``dmlrs``: the single-job pricing of R-DMLRS's dual (Eqs. 10-11) and ``UB(p)``.

Paper: Yu et al., IEEE TNSE 2022 (reading notes of the paper): R-DMLRS (Eq.
8) and its dual (Eqs. 10-11). Spec ``docs/families/dmlrs.md``, "Bounds"
(``colgen`` and ``ub_prices``). Column generation
(:mod:`ddlsched.models.dmlrs_colgen`) prices with :class:`PricingSession`;
``ub_prices`` calls :func:`bound_at_prices`. The model of record is
:func:`ddlsched.models.dmlrs_milp.build_model`; the direct highspy solver is
:mod:`ddlsched.solvers.dmlrs_pricing`.

Pricing (spec, R-DMLRS dual): for prices ``p[h, r, t-1] >= 0`` (an array
of shape ``(H, R, T)``), job ``i``'s inner maximum ``max_pi u_i(pi) -
sum_{h,r,t} p (alpha w + beta s)`` over its single-job schedules within
the full capacities is :func:`~ddlsched.models.dmlrs_milp.build_model`
restricted to ``[i]`` with the priced usage subtracted from the objective
(``mode="milp"``), or its LP relaxation with every worker at ``b_int``
(``mode="lp"``, an upper bound on the inner maximum: every integral
schedule maps to a feasible point of equal objective). The empty schedule (value 0) is always feasible, so the
optimum is ``>= 0``. :class:`PricingSession` solves it many times: with
``backend="highs"`` directly in highspy
(:class:`ddlsched.solvers.dmlrs_pricing.SingleJobPricer`, one object per
job: the LP is one persistent model whose objective changes between
rounds; the MILP is an exact reformulation that aggregates machines of
equal price, rebuilt per call because it is small; measured on
``paper`` seed 0 at zero prices: 1.3 s for all 50 jobs; the per-machine
model of record, through Pyomo and HiGHS, took 108 s for the first 8 jobs
with 3 of them stopped at a 20 s limit), with ``backend="scip"``
through the Pyomo model (:func:`price_job_pyomo`, the statement of record,
also used by the tests to check the direct path). ``PricingSession`` with
``backend="highs"`` breaks ties between equally priced machines by the
caller's load (least first), then by a rotation per job, so that the
columns of different jobs spread over identical machines (it changes which
optimal schedule is returned, never the optimum). A MILP stopped by its
limit contributes its dual bound; a job that could not be priced in time contributes the trivial
bound ``u_i(d_min_i - 1)`` (valid: prices are non-negative), so
:func:`bound_at_prices` always returns a valid bound:

    UB(p) = sum_i lambda_i(p) + sum_{h,r,t} p[h,r,t] C[h,r],
    lambda_i(p) = max(0, inner maximum of job i, or an upper bound on it).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ddlsched.deadline import Deadline
from ddlsched.errors import InvalidInstanceError, TimeLimitReached, UnknownMethodError
from ddlsched.models.dmlrs import job_upper_bound
from ddlsched.models.dmlrs_milp import build_model, job_costs, job_data, model_arrays
from ddlsched.problems.dmlrs import SAMPLE_RTOL, DmlrsInstance, samples_in_slot
from ddlsched.solvers.dmlrs_pricing import SingleJobData, SingleJobPricer
from ddlsched.solvers.limits import SolveLimits

__all__ = [
    "PRICING_MODES",
    "PricingResult",
    "PricingSession",
    "bound_at_prices",
    "check_prices",
    "price_job",
    "price_job_pyomo",
]

PRICING_MODES = ("milp", "lp")


def check_prices(instance: DmlrsInstance, prices: Any) -> np.ndarray:
    """``prices`` as a float array of shape ``(H, R, T)``, finite and non-negative."""
    shape = (instance.num_machines, len(instance.resources), instance.slots)
    p = np.asarray(prices, dtype=float)
    if p.shape != shape:
        raise InvalidInstanceError(f"prices: expected shape {shape} (H, R, T), got {p.shape}")
    if not np.all(np.isfinite(p)) or np.any(p < 0):
        raise InvalidInstanceError("prices: must be finite and non-negative")
    return p


@dataclass(frozen=True)
class PricingResult:
    """Job ``i``'s pricing at prices ``p`` (module docstring).

    ``value``: the priced value ``u_i(pi) - usage . p`` of ``column`` (0 and
    ``column = None`` for the empty schedule). ``dual_bound``: an upper
    bound on the inner maximum, ``>= max(0, value)`` (``lambda_i``).
    ``column``: ``(slot, machine, workers, ps)`` entries (integers with
    ``mode="milp"``, fractional with ``"lp"``). ``utility``: the column's
    utility (the evaluator's with ``"milp"``; ``sum_t u c[t]`` with
    ``"lp"``). ``status``: ``optimal``, ``time_limit`` (solver stopped at
    its limit: its dual bound is used), ``trivial`` (not solved; the bound
    is :func:`~ddlsched.models.dmlrs.job_upper_bound`), ``infeasible_column`` (the solver's
    schedule fell short of ``V_i`` in the evaluator by floating-point
    noise and was dropped) or ``error``. ``model_value``: the solver's
    objective (``None`` without a solution).
    """

    value: float
    dual_bound: float
    column: tuple[tuple[int, int, float, float], ...] | None
    completion_slot: int | None
    utility: float = 0.0
    status: str = "optimal"
    seconds: float = 0.0
    model_value: float | None = None


def _column_from_arrays(
    instance: DmlrsInstance,
    i: int,
    costs: tuple[np.ndarray, np.ndarray],
    workers: np.ndarray,
    ps: np.ndarray,
    completion: np.ndarray,
    relax: bool,
) -> tuple[tuple[tuple[int, int, float, float], ...] | None, float, float, int | None, bool]:
    """``(column, value, utility, completion_slot, ok)`` from a solution's arrays."""
    job = instance.jobs[i]
    a = job.arrival_slot
    pw, pps = costs
    if relax:
        keep = (workers > 1e-9) | (ps > 1e-9)
        entries = tuple(
            (a + int(k), int(h), float(workers[h, k]), float(ps[h, k]))
            for k in range(workers.shape[1])
            for h in np.flatnonzero(keep[:, k])
        )
        utility = float(sum(job.utility(k) * completion[k] for k in np.flatnonzero(completion > 0)))
        cost = float(np.sum(pw * workers) + np.sum(pps * ps))
        value = utility - cost
        if not entries or value <= 0:
            return None, 0.0, 0.0, None, True
        return entries, value, utility, None, True
    busy = np.flatnonzero(workers.sum(axis=0) > 0)
    if not len(busy):
        return None, 0.0, 0.0, None, True
    entries_l = []
    samples = 0.0
    cost = 0.0
    for k in busy:
        hosts = np.flatnonzero((workers[:, k] > 0) | (ps[:, k] > 0))
        total = int(workers[:, k].sum())
        bandwidth = instance.b_int if len(hosts) == 1 else instance.b_ext
        samples += samples_in_slot(job, total, bandwidth, instance.slot_s)
        for h in hosts:
            w, s = int(workers[h, k]), int(ps[h, k])
            entries_l.append((a + int(k), int(h), w, s))
            cost += pw[h, k] * w + pps[h, k] * s
    if samples < job.workload * (1.0 - SAMPLE_RTOL):
        return None, 0.0, 0.0, None, False
    done = a + int(busy[-1])
    utility = float(job.utility(done - a))
    value = utility - float(cost)
    if value <= 0:
        return None, 0.0, 0.0, None, True
    return tuple(entries_l), value, utility, done, True


def _result(
    instance: DmlrsInstance,
    i: int,
    costs,
    relax: bool,
    status: str,
    objective: float | None,
    bound: float | None,
    arrays,
    seconds: float,
) -> PricingResult:
    trivial = job_upper_bound(instance, i)
    column, value, utility, done, ok = None, 0.0, 0.0, None, True
    if arrays is not None:
        column, value, utility, done, ok = _column_from_arrays(instance, i, costs, *arrays, relax)
    dual = trivial if bound is None else min(trivial, max(0.0, bound))
    dual = max(dual, value)
    if not ok:
        status = "infeasible_column"
    return PricingResult(value, dual, column, done, utility, status, seconds, objective)


def _empty(instance: DmlrsInstance, i: int, status: str) -> PricingResult:
    return PricingResult(0.0, job_upper_bound(instance, i), None, None, 0.0, status)


def price_job_pyomo(
    instance: DmlrsInstance,
    i: int,
    prices: Any,
    mode: str = "milp",
    backend: str = "highs",
    deadline: Deadline | None = None,
    limits: SolveLimits | None = None,
) -> PricingResult:
    """Job ``i``'s pricing through the Pyomo model (the statement of record)."""
    from ddlsched.solvers.backends import solve_model
    from ddlsched.solvers.result import Status

    if mode not in PRICING_MODES:
        raise UnknownMethodError(f"unknown pricing mode {mode!r} (choose from milp, lp)")
    p = check_prices(instance, prices)
    deadline = deadline or Deadline.unlimited()
    if job_data(instance, i) is None:
        return PricingResult(0.0, 0.0, None, None)
    relax = mode == "lp"
    started = time.perf_counter()
    model = build_model(instance, [i], p, relax=relax, deadline=deadline)
    solve = solve_model(model, backend, limits or SolveLimits(abs_gap=1e-6, rel_gap=1e-6), deadline)
    status = {
        Status.OPTIMAL: "optimal",
        Status.FEASIBLE: "time_limit",
        Status.TIME_LIMIT_NO_SOLUTION: "time_limit",
    }.get(solve.status, "error")
    arrays = model_arrays(model, instance, i) if solve.has_solution else None
    bound = solve.bound
    if relax and solve.status is not Status.OPTIMAL:
        bound = None
    if solve.status is Status.OPTIMAL:
        bound = solve.incumbent if bound is None else max(bound, solve.incumbent)
    return _result(
        instance,
        i,
        job_costs(instance, i, p),
        relax,
        status,
        solve.incumbent,
        bound,
        arrays,
        time.perf_counter() - started,
    )


@dataclass
class PricingSession:
    """Prices jobs of one instance again and again (module docstring).

    ``mode``: ``"milp"`` or ``"lp"``; ``backend``: ``"highs"`` (one
    :class:`~ddlsched.solvers.dmlrs_pricing.SingleJobPricer` per job, built
    on first use) or ``"scip"`` (the Pyomo model).
    """

    instance: DmlrsInstance
    mode: str = "milp"
    backend: str = "highs"
    mip_gap: float = 1e-6
    _pricers: dict[int, SingleJobPricer] = field(default_factory=dict, repr=False)
    _data: dict[int, SingleJobData | None] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if self.mode not in PRICING_MODES:
            raise UnknownMethodError(f"unknown pricing mode {self.mode!r} (choose from milp, lp)")
        if self.backend not in ("highs", "scip"):
            raise UnknownMethodError(f"unknown backend {self.backend!r} (choose from highs, scip)")

    def data(self, i: int) -> SingleJobData | None:
        """Job ``i``'s arrays (cached)."""
        if i not in self._data:
            self._data[i] = job_data(self.instance, i)
        return self._data[i]

    def _rank(self, i: int, load: np.ndarray | None) -> np.ndarray:
        """Machine preference of job ``i`` among equal prices, per slot ``a_i..T``.

        Least ``load[h, t]`` first (the master's use of the machine, when
        given), then a rotation by job (job ``i`` starts at machine ``i H /
        n``), so that jobs spread over identical machines instead of all
        choosing machine 0; it never changes a pricing optimum.
        """
        inst = self.instance
        H, a = inst.num_machines, inst.jobs[i].arrival_slot
        rotation = (np.arange(H) - (i * H) // max(1, len(inst.jobs))) % H
        num_k = inst.slots - a + 1
        rank = np.empty((H, num_k), dtype=np.int64)
        for k in range(num_k):
            primary = np.zeros(H) if load is None else load[:, a - 1 + k]
            rank[np.lexsort((rotation, primary)), k] = np.arange(H)
        return rank

    def price(
        self,
        i: int,
        prices: np.ndarray,
        deadline: Deadline | None = None,
        load: np.ndarray | None = None,
    ) -> PricingResult:
        """Job ``i``'s pricing at ``prices`` (already checked) within ``deadline``.

        ``load`` (shape ``(H, T)``, optional) steers the choice among equally
        priced machines (:meth:`_rank`).
        """
        deadline = deadline or Deadline.unlimited()
        data = self.data(i)
        if data is None:
            return PricingResult(0.0, 0.0, None, None)
        if deadline.remaining_s() <= 1e-3:
            return _empty(self.instance, i, "trivial")
        if self.backend == "scip":
            try:
                return price_job_pyomo(self.instance, i, prices, self.mode, "scip", deadline)
            except TimeLimitReached:  # the limit came while building the model
                return _empty(self.instance, i, "trivial")
        started = time.perf_counter()
        pricer = self._pricers.get(i)
        relax = self.mode == "lp"
        if pricer is None:
            pricer = SingleJobPricer(
                data, relax=relax, mip_rel_gap=self.mip_gap, mip_abs_gap=self.mip_gap
            )
            self._pricers[i] = pricer
        costs = job_costs(self.instance, i, prices)
        rank = None if relax else self._rank(i, load)
        sol = pricer.solve(costs[0], costs[1], deadline.remaining_s(), rank)
        arrays = None
        if sol.workers is not None:
            arrays = (sol.workers, sol.ps, sol.completion)
        return _result(
            self.instance,
            i,
            costs,
            relax,
            sol.status,
            sol.objective,
            sol.dual_bound,
            arrays,
            time.perf_counter() - started,
        )

    def price_all(
        self,
        prices: np.ndarray,
        deadline: Deadline | None = None,
        load: np.ndarray | None = None,
    ) -> list[PricingResult]:
        """Every job's pricing; each solve gets an equal share of what remains.

        A job reached after the deadline gets the trivial bound (status ``trivial``).
        """
        deadline = deadline or Deadline.unlimited()
        n = len(self.instance.jobs)
        todo = [i for i in range(n) if self.data(i) is not None]
        out: list[PricingResult] = [PricingResult(0.0, 0.0, None, None)] * n
        for pos, i in enumerate(todo):
            share = 1.0 / (len(todo) - pos)
            out[i] = self.price(i, prices, deadline.sub(share), load)
        return out


def price_job(
    instance: DmlrsInstance,
    i: int,
    prices: Any,
    mode: str = "milp",
    backend: str = "highs",
    deadline: Deadline | None = None,
) -> PricingResult:
    """Job ``i``'s inner maximum at ``prices`` (shape ``(H, R, T)``), one-off (module docstring)."""
    p = check_prices(instance, prices)
    return PricingSession(instance, mode, backend).price(i, p, deadline)


def bound_at_prices(
    instance: DmlrsInstance,
    prices: Any,
    mode: str = "milp",
    backend: str = "highs",
    deadline: Deadline | None = None,
    session: PricingSession | None = None,
) -> tuple[float, dict[str, Any]]:
    """``UB(p) = sum_i lambda_i(p) + sum p C`` (spec), always valid (module docstring).

    Returns ``(UB, info)``; ``info`` holds ``lambda`` (per job), ``price_term``
    (``sum p C``), counts of jobs per pricing status and the seconds spent.
    """
    p = check_prices(instance, prices)
    started = time.perf_counter()
    session = session or PricingSession(instance, mode, backend)
    results = session.price_all(p, deadline)
    lambdas = [r.dual_bound for r in results]
    price_term = float(np.sum(p * instance.cap[:, :, None]))
    bound = float(math.fsum(lambdas)) + price_term
    statuses: dict[str, int] = {}
    for r in results:
        statuses[r.status] = statuses.get(r.status, 0) + 1
    info = {
        "mode": session.mode,
        "backend": session.backend,
        "lambda": lambdas,
        "price_term": price_term,
        "pricing_status": statuses,
        "seconds": time.perf_counter() - started,
    }
    return bound, info
