"""``ub_capacity`` (ours): an upper bound of family ``dmlrs`` that sees the cluster's capacity.

Paper: Yu et al., IEEE TNSE 2022 (reading notes of the paper): DMLRS (Eqs.
3-7), the rate model of Eq. 3 with Fact 1. Spec ``docs/families/dmlrs.md``,
"Rate model (Eq. 3, Fact 1)" and "Bounds". The bound and its relaxation are ours
(a bound between the others: ``ub_trivial`` ignores the capacities, ``colgen`` does not run
at the sizes of Figs. 8-10).

The relaxation (a time-indexed LP over the whole cluster; per job ``i``
the local slots ``t = a_i..T``):

* ``y[i, t] in [0, 1]``: job ``i`` completes in slot ``t``, for ``t >=
  e_i`` only, ``e_i = a_i + d_i - 1`` with ``d_i = ceil(1 / rho_max_i)`` the
  fewest slots the job can take (below); utility ``u_i(t - a_i)``;
  ``Y[i, t] = sum_{t' <= t} y[i, t']`` (a column, ``Y[i, a_i - 1] = 0``)
  and ``Y[i, T] <= 1``;
* ``xI[i, t], xE[i, t] >= 0``: the job's workers in slot ``t`` in
  internal mode (all its workers and PSs on one machine: bandwidth
  ``b_int``, Fact 1) and in external mode (``b_ext``);
* *mode and activity*: ``xI / WI_i + xE / WE_i <= Y[i, T] - Y[i, t - 1]``
  (a job works only while accepted and not yet complete, in one mode per
  slot), ``WI_i = max_h`` of the most workers that fit on machine ``h``
  with ``ceil(w / gamma_i)`` PSs and ``w <= F_i``
  (:func:`~ddlsched.solvers.dmlrs_machine.machine_bounds`), ``WE_i`` the
  least of ``F_i`` (Eq. 4), the sum over machines of the workers that fit
  alone, and ``floor(min_r sum_h C[h, r] / (alpha[i, r] + beta[i, r] /
  gamma_i))``;
* *samples* (Eq. 3): ``W[i, t] = sum_{t' <= t} (rho_I xI + rho_E xE) >=
  Y[i, t]``, the work in units of ``V_i (1 - SAMPLE_RTOL)`` (the evaluator's
  tolerance): ``rho_b = slot_s / (pi_i(b) V_i (1 - SAMPLE_RTOL))`` per
  worker and slot, ``pi_i`` Eq. 3's per-sample time; ``rho_max_i =
  max(WI_i rho_I, WE_i rho_E)``, the most one slot can do;
* *capacity* (Eq. 5 summed over machines, PSs at their least ``w /
  gamma``): for every slot ``t`` and resource ``r``, ``sum_i (alpha[i, r]
  + beta[i, r] / gamma_i) (xI[i, t] + xE[i, t]) <= sum_h C[h, r]``;
* *packing* (Eq. 5 per machine, through dual feasible functions): for
  ``k = 1..K`` (parameter ``dff``, default 3) the function of Fekete and
  Schepers ("New classes of fast lower bounds for bin packing problems",
  Math. Program. 91:11-31, 2001) ``f_k(x) = x`` if ``(k + 1) x`` is an
  integer, else ``floor((k + 1) x) / k``, maps item sizes so that sizes
  summing to at most 1 still do; so on every machine ``sum f_k(alpha[i, r]
  / C[h, r]) w + f_k(beta[i, r] / C[h, r]) s <= 1``, and summed over
  machines, with each job's weight the least over machines, ``sum_i
  (phi_k(alpha[i, r]) + phi_k(beta[i, r]) / gamma_i) (xI + xE) <= H``
  (``phi_k(a) = min_{h: C[h, r] > 0} f_k(a / C[h, r])``). A row is kept
  only where some weight exceeds the plain size (``f_k(x) > x``: e.g. 3-GPU
  workers on 8-GPU machines, ``f_2 = 1/2``: at most two per machine);
* maximise ``sum_{i, t} u_i(t - a_i) y[i, t]``.

Validity (every feasible schedule maps to a feasible point of equal
utility). Take a schedule the evaluator accepts; for an accepted job ``i``
completing in ``t~_i`` set ``y[i, t~_i] = 1`` (else 0) and, in each slot
``t``, ``xI[i, t] = w`` when its ``w`` workers and all its PSs sit on one
machine (the evaluator then uses ``b_int``), else ``xE[i, t] = w``. Then:
``t~_i >= e_i``, since no slot processes more than ``rho_max_i`` of the
work (internal: ``w <= WI_i``, the workers and at least ``ceil(w /
gamma)`` PSs fit on one machine; external: ``w <= F_i``, each machine
holds at most the workers that fit on it alone, and ``alpha w + beta s <=
sum_h C`` with ``s >= w / gamma``), so the objective is the schedule's
utility; the mode row holds (one mode per slot, ``w`` within that mode's
bound, workers only in ``a_i..t~_i`` by Eqs. 6-7, none if rejected:
``Y[i, T] - Y[i, t - 1]`` is 1 exactly for ``t <= t~_i``); the samples
row holds because the job processes at least ``V_i (1 - SAMPLE_RTOL)``
samples by ``t~_i`` (the evaluator's test) and ``W`` is non-decreasing;
the capacity row is Eq. 5 summed over machines with ``s >= w / gamma``;
the packing rows hold machine by machine (the dual feasible function's
property) with ``s >= w / gamma``, and the least weight over machines
only lowers the left-hand side.
Hence LP optimum ``>=`` every schedule's utility ``>=`` ... in particular
``>= OPT``. Every ``y[i, t]`` has ``u_i(t - a_i) <= u_i(d_i - 1) <=
u_i(d_min_i - 1)`` (``d_i >= d_min_i``: ``rho_max_i`` is at most ``F_i``
workers at ``b_int``) and ``sum_t y <= 1``, so the bound never exceeds
``ub_trivial`` (also a test).

With ``integral=True`` (parameter ``integral``) the ``y`` are binary: a
MILP whose proven dual bound (HiGHS's ``mip_dual_bound``, never the
incumbent) is the bound; stopped at its limit, the bound is the smaller of
that dual bound and the LP's. The reported bound is ``min(LP, MILP dual
bound, ub_trivial)``.

Choices (ours): machines are aggregated (the per-machine packing of Eq. 5
is relaxed, except inside one machine for the internal mode and through the
packing rows); PSs count at ``w / gamma`` (their ceiling relaxed); ``dff =
3``; HiGHS directly through highspy (one thread, HiGHS's default LP
method; the model has ~15,000 rows at 100 jobs and ``T = 80``, too large
for a Pyomo hand-over per run to be worth it), and a second backend (SCIP
and GLOP through OR-Tools) solves the same arrays in the tests. A job that
cannot finish by ``T`` even at ``rho_max_i`` per slot has no column.
Measured on the paper's Fig. 6-10 instances (``benchmarks/results/dmlrs.md``,
"dmlrs capacity bound"): the binary ``y``, the packing rows and
``UB(p)`` at the LP's capacity duals with exact pricing
(:func:`capacity_prices`) each lower the bound by about 1 % or less.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from ddlsched.deadline import Deadline
from ddlsched.errors import SolverError
from ddlsched.problems.dmlrs import DmlrsInstance
from ddlsched.problems.dmlrs_schedule import SAMPLE_RTOL, per_sample_time
from ddlsched.solvers.dmlrs_machine import dual_feasible, machine_bounds

__all__ = [
    "CapacityModel",
    "JobSpeed",
    "build_capacity_model",
    "capacity_bound",
    "capacity_prices",
    "dual_feasible",
    "job_speed",
    "to_highs",
]


@dataclass(frozen=True)
class JobSpeed:
    """What one slot can do for one job (module docstring): the most workers in internal
    (``internal_workers``, ``WI``) and external (``external_workers``, ``WE``) mode, the
    share of the work one worker does in one slot (``rate_int``, ``rate_ext``), the fewest
    slots the job can take (``fewest_slots``, ``d_i``) and its resource use per worker
    (``per_worker[r] = alpha + beta / gamma``)."""

    internal_workers: int
    external_workers: int
    rate_int: float
    rate_ext: float
    fewest_slots: int
    per_worker: np.ndarray


def job_speed(instance: DmlrsInstance, i: int) -> JobSpeed:
    """Job ``i``'s :class:`JobSpeed` (module docstring: ``WI``, ``WE``, ``rho``, ``d_i``)."""
    job = instance.jobs[i]
    alpha, beta = instance.alpha[i], instance.beta[i]
    uwi, _, uwe, _ = machine_bounds(instance.cap, alpha, beta, job.global_batch, job.gamma)
    per_worker = alpha + beta / job.gamma
    used = per_worker > 0
    cluster = instance.cap.sum(axis=0)
    by_resource = math.floor(float(np.min(cluster[used] / per_worker[used])) * (1 + 1e-12))
    external = int(min(job.global_batch, int(uwe.sum()), by_resource))
    work = float(job.workload) * (1.0 - SAMPLE_RTOL)
    rate_int = instance.slot_s / (per_sample_time(job, instance.b_int) * work)
    rate_ext = instance.slot_s / (per_sample_time(job, instance.b_ext) * work)
    most = max(int(uwi.max()) * rate_int, external * rate_ext)
    fewest = math.ceil(1.0 / most * (1.0 - 1e-12)) if most > 0 else instance.slots + 1
    return JobSpeed(int(uwi.max()), external, rate_int, rate_ext, max(1, fewest), per_worker)


@dataclass
class CapacityModel:
    """The relaxation's arrays (module docstring), maximised: columns ``cost``, ``upper``
    (lower bounds 0), ``integer``; rows ``row_lower <= A x <= row_upper`` with ``A`` in
    COO form (``rows``, ``cols``, ``vals``); ``completion[(i, t)]`` is ``y[i, t]``'s
    column and ``slot_columns[(i, t)]`` those of ``(Y, W, xI, xE)`` (-1: no such mode);
    ``capacity_rows[(t, r)]`` is the summed capacity row of slot ``t`` and resource ``r``."""

    cost: list[float]
    upper: list[float]
    integer: list[bool]
    rows: list[int]
    cols: list[int]
    vals: list[float]
    row_lower: list[float]
    row_upper: list[float]
    completion: dict[tuple[int, int], int]
    slot_columns: dict[tuple[int, int], tuple[int, int, int, int]]
    capacity_rows: dict[tuple[int, int], int]

    @classmethod
    def empty(cls) -> CapacityModel:
        return cls([], [], [], [], [], [], [], [], {}, {}, {})

    @property
    def num_cols(self) -> int:
        return len(self.cost)

    @property
    def num_rows(self) -> int:
        return len(self.row_lower)

    def columns(self, n: int, upper: float, cost: Any = 0.0, integer: bool = False) -> np.ndarray:
        start = self.num_cols
        self.cost.extend(np.broadcast_to(np.asarray(cost, dtype=float), (n,)).tolist())
        self.upper.extend([float(upper)] * n)
        self.integer.extend([integer] * n)
        return np.arange(start, start + n)

    def row(self, entries: list[tuple[int, float]], lower: float, upper: float) -> int:
        r = self.num_rows
        for col, val in entries:
            self.rows.append(r)
            self.cols.append(int(col))
            self.vals.append(float(val))
        self.row_lower.append(lower)
        self.row_upper.append(upper)
        return r


def _add_job(
    model: CapacityModel, instance: DmlrsInstance, i: int, speed: JobSpeed, integral: bool
) -> list[tuple[int, int]]:
    """Job ``i``'s columns and rows; its ``(slot, column)`` of every mode column, for the
    capacity rows (module docstring)."""
    inf = math.inf
    job = instance.jobs[i]
    a, T = job.arrival_slot, instance.slots
    first = a + speed.fewest_slots - 1  # e_i
    slots = range(a, T + 1)
    done = model.columns(T - a + 1, 1.0)  # Y[i, t]
    work = model.columns(T - a + 1, inf)  # W[i, t]
    modes = [(speed.internal_workers, speed.rate_int), (speed.external_workers, speed.rate_ext)]
    present = [cap > 0 for cap, _ in modes]
    modes = [mode for mode, keep in zip(modes, present, strict=True) if keep]
    use: list[tuple[int, int]] = []
    for k, t in enumerate(slots):
        entries = [(done[k], 1.0)] + ([(done[k - 1], -1.0)] if k else [])
        if t >= first:
            y = model.columns(1, 1.0, job.utility(t - a), integer=integral)[0]
            model.completion[(i, t)] = int(y)
            entries.append((y, -1.0))
        model.row(entries, 0.0, 0.0)  # Y[t] = Y[t - 1] + y[t]
        cols = [model.columns(1, cap)[0] for cap, _ in modes]
        by_mode = iter(cols)
        x_int, x_ext = (int(next(by_mode)) if keep else -1 for keep in present)
        model.slot_columns[(i, t)] = (int(done[k]), int(work[k]), x_int, x_ext)
        flow = [(work[k], 1.0)] + ([(work[k - 1], -1.0)] if k else [])
        flow += [(col, -rate) for col, (_, rate) in zip(cols, modes, strict=True)]
        model.row(flow, 0.0, 0.0)  # W[t] = W[t - 1] + rho_I xI + rho_E xE
        model.row([(work[k], 1.0), (done[k], -1.0)], 0.0, inf)  # W[t] >= Y[t]
        active = [(col, 1.0 / cap) for col, (cap, _) in zip(cols, modes, strict=True)]
        active += [(done[-1], -1.0)] + ([(done[k - 1], 1.0)] if k else [])
        model.row(active, -inf, 0.0)  # mode and activity
        use.extend((t, int(col)) for col in cols)
    return use


def _packing_weights(instance: DmlrsInstance, k: int) -> np.ndarray:
    """``phi_k(alpha[i, r]) + phi_k(beta[i, r]) / gamma_i`` per ``(i, r)`` (module docstring)."""
    cap = instance.cap  # (H, R)
    gamma = np.asarray([job.gamma for job in instance.jobs], dtype=float)

    def least(demand: np.ndarray) -> np.ndarray:  # (n, R) -> min over machines of f_k
        with np.errstate(divide="ignore", invalid="ignore"):
            size = demand[:, None, :] / cap[None, :, :]
        value = np.where(cap[None, :, :] > 0, dual_feasible(np.nan_to_num(size), k), np.inf)
        value = value.min(axis=1)
        return np.where(demand > 0, value, 0.0)

    return least(instance.alpha) + least(instance.beta) / gamma[:, None]


def build_capacity_model(
    instance: DmlrsInstance,
    integral: bool = False,
    deadline: Deadline | None = None,
    dff: int = 3,
) -> CapacityModel:
    """The relaxation of the module docstring (``integral``: binary ``y``; ``dff``: the
    packing rows of ``f_1..f_dff``, none at 0)."""
    deadline = deadline or Deadline.unlimited()
    model = CapacityModel.empty()
    T, R = instance.slots, len(instance.resources)
    mode_columns: list[list[tuple[int, int]]] = []  # per job: (slot, column)
    for i, job in enumerate(instance.jobs):
        deadline.check("ub_capacity's model")
        speed = job_speed(instance, i)
        if job.arrival_slot + speed.fewest_slots - 1 > T:
            mode_columns.append([])  # cannot finish by T (no column)
            continue
        mode_columns.append(_add_job(model, instance, i, speed, integral))
    plain = instance.alpha + instance.beta / np.asarray([j.gamma for j in instance.jobs])[:, None]
    model.capacity_rows = _add_rows(model, mode_columns, plain, instance.cap.sum(axis=0), T)
    with np.errstate(divide="ignore", invalid="ignore"):
        sizes = np.where(instance.cap.min(axis=0) > 0, plain / instance.cap.min(axis=0), 0.0)
    for k in range(1, dff + 1):
        weights = _packing_weights(instance, k)
        useful = np.any(weights > sizes + 1e-12, axis=0)  # per resource
        weights = np.where(useful[None, :], weights, 0.0)
        _add_rows(model, mode_columns, weights, np.full(R, float(instance.num_machines)), T)
    return model


def _add_rows(
    model: CapacityModel,
    mode_columns: list[list[tuple[int, int]]],
    weight: np.ndarray,
    right: np.ndarray,
    slots: int,
) -> dict[tuple[int, int], int]:
    """Per slot and resource ``sum_i weight[i, r] (xI + xE) <= right[r]`` (rows without a
    positive weight are left out); the row of each ``(t, r)``."""
    R = weight.shape[1]
    load: list[list[tuple[int, float]]] = [[] for _ in range(slots * R)]
    for i, columns in enumerate(mode_columns):
        for r in np.flatnonzero(weight[i] > 0):
            for t, col in columns:
                load[(t - 1) * R + int(r)].append((col, float(weight[i, r])))
    rows = {}
    for key, entries in enumerate(load):
        if entries:
            rows[(key // R + 1, key % R)] = model.row(entries, -math.inf, float(right[key % R]))
    return rows


def to_highs(model: CapacityModel, hs: Any) -> Any:
    """``model`` as a ``highspy.HighsLp`` (``hs``: the ``highspy`` module), a maximisation:
    column-wise matrix (duplicate entries summed), columns in ``[0, upper]``, infinite
    bounds as HiGHS's; integer columns where ``model.integer`` says so."""
    import scipy.sparse as sp

    matrix = sp.csc_matrix(
        (model.vals, (model.rows, model.cols)), shape=(model.num_rows, model.num_cols)
    )
    matrix.sum_duplicates()
    matrix.sort_indices()
    inf = hs.kHighsInf
    lp = hs.HighsLp()
    lp.num_col_, lp.num_row_ = model.num_cols, model.num_rows
    lp.col_cost_ = np.asarray(model.cost, dtype=float)
    lp.col_lower_ = np.zeros(model.num_cols)
    lp.col_upper_ = np.minimum(np.asarray(model.upper, dtype=float), inf)
    lp.row_lower_ = np.maximum(np.asarray(model.row_lower, dtype=float), -inf)
    lp.row_upper_ = np.minimum(np.asarray(model.row_upper, dtype=float), inf)
    lp.a_matrix_.format_ = hs.MatrixFormat.kColwise
    lp.a_matrix_.start_ = np.asarray(matrix.indptr, dtype=np.int32)
    lp.a_matrix_.index_ = np.asarray(matrix.indices, dtype=np.int32)
    lp.a_matrix_.value_ = np.asarray(matrix.data, dtype=float)
    lp.sense_ = hs.ObjSense.kMaximize
    if any(model.integer):
        kinds = hs.HighsVarType
        lp.integrality_ = [kinds.kInteger if v else kinds.kContinuous for v in model.integer]
    return lp


def solve_highs(model: CapacityModel, time_limit_s: float) -> tuple[str, float | None]:
    """``(status, bound)`` of ``model`` in HiGHS: ``optimal`` with the optimum (an LP) or the
    proven dual bound (a MILP), ``time_limit`` with a MILP's dual bound (``None`` if none
    yet; an LP stopped early gives ``None``), or ``error``. A model without a completion
    column is optimal with 0. A MILP under a finite limit runs in the HiGHS worker process,
    killed at the limit (:mod:`ddlsched.solvers.highs_server`; no bound then)."""
    import highspy

    from ddlsched.solvers.highs_lp import new_highs
    from ddlsched.solvers.highs_server import MipArrays, solve_mip

    if not model.completion:  # no job can finish by T: nothing to earn
        return "optimal", 0.0
    integral = any(model.integer)
    options = [("output_flag", False), ("threads", 1), ("mip_rel_gap", 1e-6)]
    lp = to_highs(model, highspy)
    if integral:  # in the HiGHS worker process, killed at the limit (solvers/highs_server.py)
        run = solve_mip(MipArrays.from_lp(lp, options), float(time_limit_s))
        status, objective, dual_bound = run.model_status, run.objective, run.mip_dual_bound
    else:
        highs = new_highs(options)
        highs.passModel(lp)
        if math.isfinite(time_limit_s):
            highs.setOptionValue("time_limit", max(1e-3, float(time_limit_s)))
        highs.run()
        status, objective = highs.getModelStatus(), highs.getInfo().objective_function_value
        dual_bound = math.inf
    ms = highspy.HighsModelStatus
    if status == ms.kOptimal:
        kind = "optimal"
    elif status in (ms.kTimeLimit, ms.kIterationLimit, ms.kInterrupt):
        kind = "time_limit"
    else:
        return "error", None
    if not integral:
        return kind, float(objective) if kind == "optimal" else None
    bound = float(dual_bound)
    return kind, bound if math.isfinite(bound) else None


def capacity_prices(instance: DmlrsInstance) -> tuple[float, np.ndarray]:
    """The LP without packing rows (``dff = 0``) and its capacity rows' duals as prices
    ``p[h, r, t - 1]``, the same on every machine: ``(LP value, p)``. By LP duality, ``UB(p)``
    (:func:`ddlsched.models.dmlrs_dual.bound_at_prices`) with single-job pricing no weaker
    than this LP's per-job part is at most the LP value: a check of how much the exact
    pricing adds (``benchmarks/dmlrs_capacity.py``)."""
    import highspy

    from ddlsched.solvers.highs_lp import new_highs

    model = build_capacity_model(instance, dff=0)
    H, R, T = instance.num_machines, len(instance.resources), instance.slots
    prices = np.zeros((H, R, T))
    if not model.completion:
        return 0.0, prices
    highs = new_highs([("output_flag", False), ("threads", 1)])
    highs.passModel(to_highs(model, highspy))
    highs.run()
    if highs.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        raise SolverError("ub_capacity: the LP for the prices was not solved")
    duals = np.asarray(highs.getSolution().row_dual)
    for (t, r), row in model.capacity_rows.items():
        prices[:, r, t - 1] = max(0.0, float(duals[row]))
    return float(highs.getInfo().objective_function_value), prices


def capacity_bound(
    instance: DmlrsInstance,
    integral: bool = False,
    deadline: Deadline | None = None,
    dff: int = 3,
) -> tuple[float, dict[str, Any]]:
    """``(bound, info)``: ``min(LP, MILP dual bound if integral, ub_trivial)`` (module
    docstring); ``info`` holds each bound, the model's size, the statuses and the seconds.

    The LP must be solved (else :class:`~ddlsched.errors.SolverError`, or
    :class:`~ddlsched.errors.TimeLimitReached` at the deadline); the MILP gets the time
    left and, stopped at its limit, still gives its dual bound.
    """
    from ddlsched.models.dmlrs import ub_trivial

    deadline = deadline or Deadline.unlimited()
    started = time.perf_counter()
    trivial = ub_trivial(instance)
    info: dict[str, Any] = {"ub_trivial": trivial}
    model = build_capacity_model(instance, False, deadline, dff)
    info.update(columns=model.num_cols, rows=model.num_rows, nonzeros=len(model.vals))
    info["build_s"] = time.perf_counter() - started
    if not model.completion:  # no job can finish by T
        info["seconds"] = time.perf_counter() - started
        return 0.0, info
    status, lp = solve_highs(model, deadline.remaining_s())
    info["lp_status"], info["lp_bound"] = status, lp
    if lp is None:
        deadline.check("ub_capacity's LP")
        raise SolverError(f"ub_capacity: HiGHS stopped the LP with status {status}")
    bound = min(lp, trivial)
    if integral:
        model.integer = [False] * model.num_cols
        for col in model.completion.values():
            model.integer[col] = True
        status, milp = solve_highs(model, deadline.remaining_s())
        info["milp_status"], info["milp_bound"] = status, milp
        if milp is not None:
            bound = min(bound, milp)
    info["seconds"] = time.perf_counter() - started
    return max(0.0, bound), info
