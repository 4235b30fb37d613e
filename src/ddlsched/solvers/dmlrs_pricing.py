"""The single-job pricing problem of family ``dmlrs``, solved directly in highspy.

Spec ``docs/families/dmlrs.md``, "Bounds"
(``colgen`` and ``ub_prices``): for prices
``p[h, r, t] >= 0`` and one job ``i``, the inner maximum of the dual of
R-DMLRS (the paper's Eqs. 10-11),

    max_pi  u_i(pi) - sum_{h,r,t} p[h,r,t] (alpha[i,r] w[h,t] + beta[i,r] s[h,t]),

over the single-job schedules ``pi`` within the full capacities ``C``. The
statement of record is the Pyomo model :func:`ddlsched.models.dmlrs_milp.build_model`
restricted to one job (the compact MILP of DMLRS with one job, its
objective less the priced usage). Column generation solves this problem
thousands of times, and the per-machine MILP is slow on 100 machines
(seconds to minutes per job at zero prices: identical machines and slots
make it highly symmetric), so this module solves an exact reformulation
over plain arrays; ``tests/test_dmlrs_solvers.py`` checks that both give
the same optimum on random instances and prices.

Data (:class:`SingleJobData`, local slots ``k = 0..K-1`` for the global
slots ``a_i + k``): capacities ``C[h, r]``, demands ``alpha[r]``,
``beta[r]``, the worker cap ``F`` (Eq. 4), ``gamma``, the share of the
workload one worker processes in one slot at internal (``rate_int``) and
external (``rate_ext``) bandwidth, and the utility of completing in each
local slot (NaN where the job cannot complete). Prices enter as per-``(h,
k)`` worker and PS prices ``pw = sum_r p alpha``, ``ps = sum_r p beta``.

The MILP (``relax=False``), rebuilt at each call (it is small):

* binaries ``c[k]`` (completes in ``k``, only where it can), ``e[k]``
  (external mode in ``k``) and ``z[k, W]`` (internal mode with ``W``
  workers); ``sum_k c <= 1``; ``sum_W z[k, W] + e[k] <= sum_{k' >= k}
  c[k']`` (one mode per slot, none after completion or without acceptance);
* internal mode, aggregated exactly: ``W`` workers and ``ceil(W / gamma)``
  PSs on one machine, the cheapest machine on which they fit (its cost is
  the objective coefficient of ``z[k, W]``; the machine is recorded for
  decoding);
* external mode, aggregated exactly by *classes*: in slot ``k`` the machines
  of equal capacity and equal prices ``(pw, ps)`` are interchangeable, so
  only the class totals ``W[k, g], S[k, g]`` matter, with cost ``pw_g W +
  ps_g S``. The totals ``n_g`` machines can host are the integer points of
  ``n_g P_I``, ``P_I`` the integer hull of one machine's set ``{(w, s) in
  Z^2_+: alpha w + beta s <= C, w <= F, s <= ceil(F / gamma)}``: every
  lattice polygon has the integer decomposition property (it has a
  unimodular triangulation), so every integer point of ``n P_I`` is a sum of
  ``n`` integer points of ``P_I``, i.e. a placement on ``n`` machines
  (:func:`~ddlsched.solvers.dmlrs_machine.split_totals` finds one). Rows:
  the facets of ``P_I`` scaled by ``n_g``
  (:func:`~ddlsched.solvers.dmlrs_machine.hull_facets`), ``W, S <= n_g
  (max w, max s) e[k]``;
* per slot ``sum_g W <= F e[k]`` (Eq. 4), ``gamma sum_g S >= sum_g W`` (PS
  rule) and ``gamma sum_g S <= sum_g W + gamma - 1`` (dominance: exactly
  ``ceil(W / gamma)`` PSs; surplus PSs only use capacity);
* samples, cumulative and strengthened: ``sum_{k' <= k} (rate_int sum_W W
  z[k', W] + rate_ext sum_g W[k', g]) >= sum_{k' <= k} c[k']`` (the
  workload scaled to 1; exact, no slack);
* symmetry between slots: two consecutive slots with equal prices on every
  machine are interchangeable, and moving the larger slot's work earlier
  never delays completion, so their samples are ordered (``samples(k) >=
  samples(k + 1)``); sorting each run of such slots by samples keeps every
  row, so an optimum survives;
* maximise ``sum_k u[k] c[k]`` less the priced usage.

An external slot that the decoding places on one machine runs faster in
the evaluator (Fact 1): harmless.

The LP (``relax=True``, pricing ``"lp"``), one persistent model whose
costs change between calls: integrality relaxed and every worker at
``rate_int`` (internal bandwidth), so modes disappear; continuous ``c[k] in
[0, 1]``, ``w, s`` per ``(h, k)``; ``sum c <= 1``; ``sum_h w[h,k] <= F
sum_{k' >= k} c``; ``gamma sum_h s >= sum_h w``; capacities ``alpha w + beta
s <= C``; cumulative samples ``sum_{k' <= k} sum_h rate_int w >= sum_{k'
<= k} c``. Every integral schedule maps to a feasible point of equal
objective (``w = wI + wE``, ``rate_int >= rate_ext``), so its optimum bounds
the MILP's from above.

HiGHS options: no output, one thread, presolve off (the direct loops' setting,
:mod:`ddlsched.solvers.backends`), the MIP gaps given
to the constructor. A MILP stopped by its time limit reports HiGHS's
``mip_dual_bound`` (valid whatever the gap).

Time: HiGHS does not stop inside every phase of a MIP at its ``time_limit``
(one pricing MILP of ``colgen`` on a ``paper`` instance of 100 machines ran
more than 330 s at a 3.34 s limit). A MILP under a finite limit therefore
runs in the HiGHS worker process (:mod:`ddlsched.solvers.highs_server`),
which is killed at the limit: the MILP then reports ``time_limit`` with
neither a column nor a bound, and the job contributes its trivial bound
(:mod:`ddlsched.models.dmlrs_dual`), so ``UB(p)`` stays valid. The cost,
one round trip of plain arrays per MILP, is in ``benchmarks/results/platform.md``
(``benchmarks/pricing_worker_cost.py``); :data:`IN_WORKER` false solves
in-process. The LP (``relax=True``) stays in-process: its basis is kept
between calls, and the simplex checks its clock every few iterations.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from ddlsched.errors import SolverError
from ddlsched.solvers.dmlrs_machine import (
    MachineHull,
    hull_facets,
    machine_bounds,
    split_totals,
)
from ddlsched.solvers.highs_lp import new_highs
from ddlsched.solvers.highs_server import DirectRun, MipArrays, solve_mip

__all__ = ["IN_WORKER", "PricingSolution", "SingleJobData", "SingleJobPricer"]

#: Whether a pricing MILP under a finite limit runs in the HiGHS worker process, killed at
#: its limit (module docstring); ``benchmarks/pricing_worker_cost.py`` measures the cost.
IN_WORKER = True


@dataclass(frozen=True, eq=False)
class SingleJobData:
    """One job of a ``dmlrs`` instance as plain arrays (module docstring)."""

    capacity: np.ndarray  # (H, R)
    alpha: np.ndarray  # (R,)
    beta: np.ndarray  # (R,)
    worker_cap: int
    gamma: int
    rate_int: float
    rate_ext: float
    utility: np.ndarray  # (K,), NaN where the job cannot complete in that local slot

    @property
    def num_machines(self) -> int:
        return int(self.capacity.shape[0])

    @property
    def num_slots(self) -> int:
        return int(self.utility.shape[0])

    @property
    def completion_slots(self) -> np.ndarray:
        """Local slots in which the job can complete."""
        return np.flatnonzero(np.isfinite(self.utility))


# --------------------------------------------------------------------------- the solver


@dataclass(frozen=True)
class PricingSolution:
    """What one pricing solve returned (values in the model's units).

    ``status``: ``optimal``, ``time_limit`` (a limit stopped it; ``objective``
    is the incumbent if any, ``dual_bound`` HiGHS's bound if finite) or
    ``error``. ``workers``, ``ps``: per ``(h, k)`` (integers in the MILP);
    ``completion``: ``c[k]``; ``internal``: per ``k`` the machine of the
    internal mode, or -1.
    """

    status: str
    objective: float | None
    dual_bound: float | None
    workers: np.ndarray | None
    ps: np.ndarray | None
    completion: np.ndarray | None
    internal: np.ndarray | None
    seconds: float


class _Model:
    """Columns and COO rows of a model under construction."""

    def __init__(self) -> None:
        self.cost: list[float] = []
        self.upper: list[float] = []
        self.integer: list[bool] = []
        self.rows: list[int] = []
        self.cols: list[int] = []
        self.vals: list[float] = []
        self.row_lower: list[float] = []
        self.row_upper: list[float] = []

    def columns(self, n: int, upper, cost=0.0, integer: bool = True) -> np.ndarray:
        start = len(self.cost)
        self.cost.extend(np.broadcast_to(np.asarray(cost, dtype=float), (n,)).tolist())
        self.upper.extend(np.broadcast_to(np.asarray(upper, dtype=float), (n,)).tolist())
        self.integer.extend([integer] * n)
        return np.arange(start, start + n)

    def row(self, entries, lower: float, upper: float) -> int:
        r = len(self.row_lower)
        for col, val in entries:
            if val != 0.0:
                self.rows.append(r)
                self.cols.append(int(col))
                self.vals.append(float(val))
        self.row_lower.append(lower)
        self.row_upper.append(upper)
        return r

    def _matrix(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(start, index, value)``: the rows in compressed column form, entries ordered by
        column then row, duplicates summed (numpy only: importing scipy.sparse, seconds
        under load, could not be interrupted)."""
        num_cols, num_rows = len(self.cost), len(self.row_lower)
        key = np.asarray(self.cols, dtype=np.int64) * num_rows + np.asarray(
            self.rows, dtype=np.int64
        )
        unique, inverse = np.unique(key, return_inverse=True)
        value = np.bincount(inverse.reshape(-1), weights=self.vals, minlength=unique.size)
        start = np.searchsorted(unique // max(1, num_rows), np.arange(num_cols + 1))
        return (
            start.astype(np.int32),
            (unique % max(1, num_rows)).astype(np.int32),
            value.astype(float),
        )

    def mip_arrays(self, options, maximize: bool = True) -> MipArrays:
        """The model as plain arrays, for :func:`~ddlsched.solvers.highs_server.solve_mip`."""
        start, index, value = self._matrix()
        return MipArrays(
            cost=np.asarray(self.cost, dtype=float),
            col_lower=np.zeros(len(self.cost)),
            col_upper=np.asarray(self.upper, dtype=float),
            row_lower=np.asarray(self.row_lower, dtype=float),
            row_upper=np.asarray(self.row_upper, dtype=float),
            start=start,
            index=index,
            value=value,
            integer=np.asarray(self.integer, dtype=bool),
            maximize=maximize,
            options=tuple(options),
        )

    def to_highs(self, hs, maximize: bool = True):
        num_cols, num_rows = len(self.cost), len(self.row_lower)
        start, index, value = self._matrix()
        lp = hs.HighsLp()
        lp.num_col_ = num_cols
        lp.num_row_ = num_rows
        lp.col_cost_ = np.asarray(self.cost, dtype=float)
        lp.col_lower_ = np.zeros(num_cols)
        lp.col_upper_ = np.asarray(self.upper, dtype=float)
        lp.row_lower_ = np.asarray(self.row_lower, dtype=float)
        lp.row_upper_ = np.asarray(self.row_upper, dtype=float)
        lp.a_matrix_.format_ = hs.MatrixFormat.kColwise
        lp.a_matrix_.start_ = start
        lp.a_matrix_.index_ = index
        lp.a_matrix_.value_ = value
        lp.sense_ = hs.ObjSense.kMaximize if maximize else hs.ObjSense.kMinimize
        if any(self.integer):
            lp.integrality_ = [
                hs.HighsVarType.kInteger if v else hs.HighsVarType.kContinuous for v in self.integer
            ]
        return lp


class SingleJobPricer:
    """One job's pricing problem (module docstring), solved again and again.

    ``solve(worker_cost, ps_cost, time_limit_s)`` with ``worker_cost[h, k] =
    sum_r p[h, r, a + k] alpha[r]`` and ``ps_cost[h, k] = sum_r p[h, r, a + k]
    beta[r]``. ``relax=True``: the LP (one persistent model, warm-started);
    else the aggregated MILP (rebuilt per call, one reused HiGHS instance).
    """

    def __init__(
        self,
        data: SingleJobData,
        *,
        relax: bool = False,
        mip_rel_gap: float = 1e-6,
        mip_abs_gap: float = 1e-6,
    ) -> None:
        import highspy

        self.data = data
        self.relax = relax
        self._hs = highspy
        self._options = (
            ("output_flag", False),
            ("threads", 1),
            ("presolve", "off"),
            ("mip_rel_gap", mip_rel_gap),
            ("mip_abs_gap", mip_abs_gap),
        )
        self._highs = self._new_highs()
        d = data
        uwi, _, _, _ = machine_bounds(d.capacity, d.alpha, d.beta, d.worker_cap, d.gamma)
        self.sizes = np.arange(1, int(uwi.max()) + 1)
        self.size_ps = -(-self.sizes // d.gamma)
        self.fit = uwi[:, None] >= self.sizes[None, :]  # (H, sizes): internal option fits on h
        _, self._type_of = np.unique(d.capacity, axis=0, return_inverse=True)
        self._type_of = np.asarray(self._type_of).reshape(-1)
        self._hulls: dict[int, MachineHull] = {}
        if relax:
            self._build_lp()

    def _new_highs(self):
        return new_highs(self._options)

    def _hull(self, capacity_type: int) -> MachineHull:
        if capacity_type not in self._hulls:
            d = self.data
            h = int(np.flatnonzero(self._type_of == capacity_type)[0])
            self._hulls[capacity_type] = hull_facets(
                d.capacity[h], d.alpha, d.beta, d.worker_cap, d.gamma
            )
        return self._hulls[capacity_type]

    # ---------------------------------------------------------------- the LP

    def _build_lp(self) -> None:
        d = self.data
        inf = self._hs.kHighsInf
        num_h, num_k = d.num_machines, d.num_slots
        comp = d.completion_slots
        uwi, usi, uwe, use = machine_bounds(d.capacity, d.alpha, d.beta, d.worker_cap, d.gamma)
        uw, us = np.maximum(uwi, uwe), np.maximum(usi, use)
        model = _Model()
        c = model.columns(len(comp), 1.0, d.utility[comp], integer=False)
        w = model.columns(num_h * num_k, np.repeat(uw, num_k), integer=False).reshape(num_h, num_k)
        s = model.columns(num_h * num_k, np.repeat(us, num_k), integer=False).reshape(num_h, num_k)
        self.c_index = dict(zip(comp.tolist(), c.tolist(), strict=True))
        self.w, self.s = w, s
        model.row([(col, 1.0) for col in c], -inf, 1.0)
        gamma, cap_f = float(d.gamma), float(d.worker_cap)
        for k in range(num_k):
            later = [(self.c_index[kk], -cap_f) for kk in comp if kk >= k]
            model.row([(w[h, k], 1.0) for h in range(num_h)] + later, -inf, 0.0)
            model.row(
                [(w[h, k], 1.0) for h in range(num_h)] + [(s[h, k], -gamma) for h in range(num_h)],
                -inf,
                0.0,
            )
            for h in range(num_h):
                for r in range(d.alpha.shape[0]):
                    a_, b_ = float(d.alpha[r]), float(d.beta[r])
                    if a_ or b_:
                        model.row([(w[h, k], a_), (s[h, k], b_)], -inf, float(d.capacity[h, r]))
        for k in comp:
            entries = [(w[h, kk], d.rate_int) for kk in range(k + 1) for h in range(num_h)]
            entries += [(self.c_index[int(kk)], -1.0) for kk in comp if kk <= k]
            model.row(entries, 0.0, inf)
        self._highs.passModel(model.to_highs(self._hs))

    # ---------------------------------------------------------------- the MILP

    def _build_milp(
        self,
        worker_cost: np.ndarray,
        ps_cost: np.ndarray,
        rank: np.ndarray,
        end: float = math.inf,
    ) -> bool:
        """Build the MILP at these prices; ``False`` if ``time.perf_counter()`` passed
        ``end`` first (checked per slot: a build takes a second on 100 machines under
        load)."""
        d, hs = self.data, self._hs
        inf = hs.kHighsInf
        num_k = d.num_slots
        comp = d.completion_slots
        model = _Model()
        c = model.columns(len(comp), 1.0, d.utility[comp])
        self.c_index = dict(zip(comp.tolist(), c.tolist(), strict=True))
        model.row([(col, 1.0) for col in c], -inf, 1.0)
        # internal options: the cheapest machine holding W workers and ceil(W / gamma) PSs
        option = (
            worker_cost[:, :, None] * self.sizes[None, None, :]
            + ps_cost[:, :, None] * self.size_ps[None, None, :]
        )
        option = np.where(self.fit[:, None, :], option, np.inf)
        internal_cost = np.min(option, axis=0)
        # the host: a cheapest machine, ties broken by rank (lowest first)
        tied = option == internal_cost[None, :, :]
        self.internal_host = np.argmin(
            np.where(tied, rank[:, :, None], np.iinfo(np.int64).max), axis=0
        )  # (K, sizes)
        usable = np.isfinite(internal_cost)
        z = model.columns(
            internal_cost.size,
            usable.ravel().astype(float),
            -np.where(usable, internal_cost, 0.0).ravel(),
        ).reshape(internal_cost.shape)
        e = model.columns(num_k, 1.0)
        self.z, self.e = z, e
        # external classes per slot: machines of equal capacity type and equal prices
        self.classes: list[tuple[int, int, np.ndarray, int, int]] = []  # (k, type, hosts, Wc, Sc)
        gamma, cap_f = float(d.gamma), float(d.worker_cap)
        slot_samples = []
        for k in range(num_k):
            if time.perf_counter() > end:
                return False
            keys = np.column_stack([self._type_of, worker_cost[:, k], ps_cost[:, k]])
            _, label = np.unique(keys, axis=0, return_inverse=True)
            label = np.asarray(label).reshape(-1)
            work, serve = [], []
            for g in range(int(label.max()) + 1):
                hosts = np.flatnonzero(label == g)
                hosts = hosts[np.argsort(rank[hosts, k], kind="stable")]
                n = len(hosts)
                hull = self._hull(int(self._type_of[hosts[0]]))
                h0 = hosts[0]
                wc = model.columns(1, n * hull.max_w, -worker_cost[h0, k])[0]
                sc = model.columns(1, n * hull.max_s, -ps_cost[h0, k])[0]
                self.classes.append((k, int(self._type_of[h0]), hosts, int(wc), int(sc)))
                model.row([(wc, 1.0), (e[k], -float(n * hull.max_w))], -inf, 0.0)
                model.row([(sc, 1.0), (e[k], -float(n * hull.max_s))], -inf, 0.0)
                for a, b in zip(hull.normals[2:], hull.rhs[2:], strict=True):
                    model.row([(wc, a[0]), (sc, a[1])], -inf, float(n * b))
                work.append(wc)
                serve.append(sc)
            later = [(self.c_index[kk], -1.0) for kk in comp if kk >= k]
            model.row([(col, 1.0) for col in z[k]] + [(e[k], 1.0)] + later, -inf, 0.0)
            model.row([(col, 1.0) for col in work] + [(e[k], -cap_f)], -inf, 0.0)  # Eq. 4
            ps_row = [(col, 1.0) for col in work] + [(col, -gamma) for col in serve]
            model.row(ps_row, -inf, 0.0)  # gamma sum S >= sum W
            model.row([(col, -v) for col, v in ps_row], -inf, gamma - 1.0)  # exactly ceil
            slot_samples.append(
                [(z[k, j], d.rate_int * float(self.sizes[j])) for j in range(len(self.sizes))]
                + [(col, d.rate_ext) for col in work]
            )
        for k in comp:
            entries = [entry for kk in range(k + 1) for entry in slot_samples[kk]]
            entries += [(self.c_index[int(kk)], -1.0) for kk in comp if kk <= k]
            model.row(entries, 0.0, inf)
        for k in range(num_k - 1):
            if np.array_equal(worker_cost[:, k], worker_cost[:, k + 1]) and np.array_equal(
                ps_cost[:, k], ps_cost[:, k + 1]
            ):
                model.row(slot_samples[k] + [(col, -v) for col, v in slot_samples[k + 1]], 0.0, inf)
        self._mip = model.mip_arrays(self._options)  # a fresh Highs, and clock, per MILP
        return True

    def _decode_milp(self, x: np.ndarray):
        d = self.data
        workers = np.zeros((d.num_machines, d.num_slots))
        ps = np.zeros((d.num_machines, d.num_slots))
        internal = np.full(d.num_slots, -1, dtype=np.int64)
        for k, j in zip(*np.nonzero(x[self.z] > 0.5), strict=True):
            h = int(self.internal_host[k, j])
            internal[k] = h
            workers[h, k] = float(self.sizes[j])
            ps[h, k] = float(self.size_ps[j])
        for k, capacity_type, hosts, wc, sc in self.classes:
            if internal[k] >= 0:
                continue
            total_w, total_s = round(x[wc]), round(x[sc])
            if total_w == 0 and total_s == 0:
                continue
            parts = split_totals(self._hull(capacity_type), len(hosts), total_w, total_s)
            for h, (w, s) in zip(hosts, parts, strict=False):
                workers[h, k] = w
                ps[h, k] = s
        return workers, ps, internal

    # ---------------------------------------------------------------- solving

    def solve(
        self,
        worker_cost: np.ndarray,
        ps_cost: np.ndarray,
        time_limit_s: float,
        rank: np.ndarray | None = None,
    ) -> PricingSolution:
        """Solve at the given per-``(h, k)`` worker and PS prices (module docstring).

        ``rank[h, k]`` (default ``h``) orders machines of equal price in slot
        ``k`` when decoding (lowest first): the internal host among the
        cheapest machines, and the machines of a class that receive its
        totals. It changes which optimal schedule is returned, never the
        optimum.
        """
        d = self.data
        shape = (d.num_machines, d.num_slots)
        worker_cost = np.asarray(worker_cost, dtype=float)
        ps_cost = np.asarray(ps_cost, dtype=float)
        if worker_cost.shape != shape or ps_cost.shape != shape:
            raise SolverError(f"pricing costs must have shape {shape}")
        if rank is None:
            rank = np.repeat(np.arange(d.num_machines)[:, None], d.num_slots, axis=1)
        rank = np.asarray(rank, dtype=np.int64)
        if rank.shape != shape:
            raise SolverError(f"pricing ranks must have shape {shape}")
        if not time_limit_s > 1e-3:
            return PricingSolution("time_limit", None, None, None, None, None, None, 0.0)
        started = time.perf_counter()
        highs, hs = self._highs, self._hs
        if self.relax:
            index = np.concatenate([self.w.ravel(), self.s.ravel()]).astype(np.int32)
            values = -np.concatenate([worker_cost.ravel(), ps_cost.ravel()])
            highs.changeColsCost(len(index), index, values)
        else:
            built = self._build_milp(worker_cost, ps_cost, rank, started + time_limit_s)
            left = time_limit_s - (time.perf_counter() - started)
            if not (built and left > 1e-3):
                seconds = time.perf_counter() - started
                return PricingSolution("time_limit", None, None, None, None, None, None, seconds)
            time_limit_s = left
        if self.relax:
            # HiGHS 1.14's simplex compares ``time_limit`` with the run clock of the Highs
            # object, which adds up over its runs (the persistent LP: the limit is that
            # clock plus the budget). The LP stays in-process: its basis is kept between
            # calls, and the simplex checks its clock every few iterations.
            limit = highs.getRunTime() + float(time_limit_s)
            highs.setOptionValue("time_limit", limit if math.isfinite(limit) else hs.kHighsInf)
            highs.run()
            run = _read_lp(highs)
        else:  # in the worker process, killed at its limit (module docstring)
            run = solve_mip(self._mip, float(time_limit_s), in_worker=IN_WORKER)
        ms = hs.HighsModelStatus
        if run.model_status == ms.kOptimal:
            kind = "optimal"
        elif run.model_status in (ms.kTimeLimit, ms.kIterationLimit, ms.kInterrupt):
            kind = "time_limit"
        else:
            seconds = time.perf_counter() - started
            return PricingSolution("error", None, None, None, None, None, None, seconds)
        has_solution = kind == "optimal" or (not self.relax and run.primal_valid)
        objective = run.objective if has_solution else None
        if self.relax:
            bound = objective if kind == "optimal" else None
        else:
            bound = run.mip_dual_bound if math.isfinite(run.mip_dual_bound) else None
            if bound is not None and objective is not None:
                bound = max(bound, objective)
        if not has_solution:
            seconds = time.perf_counter() - started
            return PricingSolution(kind, None, bound, None, None, None, None, seconds)
        x = np.asarray(run.col_value)
        completion = np.zeros(d.num_slots)
        for k, col in self.c_index.items():
            completion[k] = x[col]
        if self.relax:
            workers, ps = x[self.w], x[self.s]
            internal = np.full(d.num_slots, -1, dtype=np.int64)
        else:
            workers, ps, internal = self._decode_milp(x)
        seconds = time.perf_counter() - started
        return PricingSolution(kind, objective, bound, workers, ps, completion, internal, seconds)

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        kind = "LP" if self.relax else "MILP"
        return f"SingleJobPricer({kind}, H={self.data.num_machines}, K={self.data.num_slots})"


def _read_lp(highs) -> DirectRun:
    """The persistent LP's answer, read in-process."""
    import highspy

    info = highs.getInfo()
    status = highs.getModelStatus()
    optimal = status == highspy.HighsModelStatus.kOptimal
    return DirectRun(
        model_status=status,
        objective=float(info.objective_function_value),
        mip_dual_bound=math.inf,
        primal_valid=optimal,
        col_value=highs.getSolution().col_value if optimal else None,
    )
