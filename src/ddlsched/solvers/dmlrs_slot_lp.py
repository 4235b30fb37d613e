"""Problem (23) of PD-ORS (one job, one slot) solved directly in HiGHS (highspy).

Paper: Yu et al., IEEE TNSE 2022 (reading notes of the paper), Problem (23)
and Algorithm 4's external case; spec ``docs/families/dmlrs.md`` (``pd_ors``:
"The per-slot LPs are tiny and numerous ((T - a_i + 1) q per arrival):
solve them with highspy directly, changing only the right-hand side of (26)
between quanta and warm-starting; never build a Pyomo model per LP").

The problem, with the PS row the notes' (23) omits::

    min   sum_h pw[h] w_h + ps[h] s_h                               (23)
    s.t.  alpha[r] w_h + beta[r] s_h <= C^[h, r]   all h, r           (24)
          D <= sum_h w_h <= F                                       (26), (25)
          sum_h w_h - gamma sum_h s_h <= 0                          (PS row)
          w, s >= 0   (integer in the ILP)

Encoding (exact, ours): a row (24) of a resource only workers use (``beta[r]
= 0``) is the column bound ``w_h <= C^[h, r] / alpha[r]`` (likewise for
PSs), so only resources both use get rows; ``w_h <= F`` is added as a
column bound (implied by (25)); (25) and (26) share one ranged row, so a
new ``D`` changes one row bound. Negative residuals (floating-point noise
of ``C - rho``) are read as 0.

:class:`HighsSlotLp` is loaded once per (job, slot) and re-solved for a
sequence of ``D`` values: only the lower bound of the (25)-(26) row
changes, and HiGHS keeps its basis between solves (a warm start).
:meth:`HighsSlotLp.solve_shrunk` solves the shrunk LP of the revised
rounding (:mod:`ddlsched.heuristics.dmlrs_rounding`) in the same HiGHS
model: the upper bounds of rows (24) become ``C^ / G`` and those of the
columns the floored one-resource bounds over ``G``; :meth:`HighsSlotLp.solve`
puts the full LP's bounds back (both changes keep the basis). One
HiGHS object serves every LP a :class:`HighsSlotSolvers` opens (the model
is re-passed when another LP used it in between). The exact ILP
(:meth:`HighsSlotSolvers.ilp`) is the same model with integer ``w, s``
(MIP gap 0, presolve off: the direct loops' setting, see
:mod:`ddlsched.solvers.backends`), solved under a finite limit in the HiGHS
worker process, killed at the limit (:mod:`ddlsched.solvers.highs_server`:
HiGHS does not look at its clock in every phase of a MIP), and in-process
without one; the LPs stay in-process (simplex checks its clock). Its column bounds are rounded down to
integers: HiGHS 1.14 and 1.15 returned a suboptimal point with status
*Optimal* when an integer column had a fractional upper bound (found by
this module's test, seed 8: 26.784 instead of 17.343; the Pyomo model,
whose integer columns have no such bounds, was right). 1.16 solves such
columns right; the rounding stays, exact and free
(``tests/test_solver_regressions.py``, case 3).

Outcomes: an optimal solution (:class:`SlotLpSolution`), ``None`` when the
problem is infeasible, :class:`~ddlsched.errors.TimeLimitReached` when the
time limit stopped HiGHS or killed its worker (or none was left; an ILP's
incumbent is not kept: PD-ORS is all or nothing at the limit), and
:class:`~ddlsched.errors.SolverError` with HiGHS's status text on any other
outcome. ``tests/test_dmlrs_slot_lp.py`` checks both optima against the
Pyomo model of the same problem solved by
:func:`ddlsched.solvers.backends.solve_model` on random instances.
highspy is imported when the first problem is solved.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ddlsched.errors import SolverError, TimeLimitReached
from ddlsched.solvers.highs_lp import new_highs

__all__ = ["HighsSlotLp", "HighsSlotSolvers", "SlotLpSolution", "cost_scale", "solver_costs"]

#: HiGHS options of every slot LP and ILP.
OPTIONS: dict[str, object] = {
    "output_flag": False,
    "threads": 1,
    "presolve": "off",
    "solver": "simplex",
    "mip_rel_gap": 0.0,
}
#: Integer columns get ``floor(bound + INTEGER_BOUND_TOL)`` as their upper bound (docstring).
INTEGER_BOUND_TOL = 1e-9


@dataclass(frozen=True)
class SlotLpSolution:
    """An optimal ``w[h]``, ``s[h]`` (floats; integral for the ILP) and the objective."""

    w: np.ndarray
    s: np.ndarray
    objective: float


def _arrays(
    worker_price: Any,
    ps_price: Any,
    alpha: Any,
    beta: Any,
    residual: Any,
    gamma: int,
    max_workers: int,
) -> tuple[np.ndarray, ...]:
    pw = np.asarray(worker_price, dtype=float).ravel()
    ps = np.asarray(ps_price, dtype=float).ravel()
    alpha = np.asarray(alpha, dtype=float).ravel()
    beta = np.asarray(beta, dtype=float).ravel()
    H, R = pw.size, alpha.size
    res = np.maximum(np.asarray(residual, dtype=float).reshape(H, R), 0.0)
    if ps.size != H or beta.size != R:
        raise SolverError(
            f"slot LP: {H} worker prices, {ps.size} PS prices, {R}/{beta.size} demands"
        )
    if not (gamma >= 1 and max_workers >= 1):
        raise SolverError(f"slot LP: gamma ({gamma}) and F ({max_workers}) must be >= 1")
    return pw, ps, alpha, beta, res


def _build(
    highspy: Any,
    pw: np.ndarray,
    ps: np.ndarray,
    alpha: np.ndarray,
    beta: np.ndarray,
    res: np.ndarray,
    gamma: int,
    max_workers: int,
    demand: float,
    integer: bool,
) -> tuple[Any, int]:
    """The HighsLp of the module docstring and the index of its (25)-(26) row."""
    inf = highspy.kHighsInf
    H = pw.size
    both = np.flatnonzero((alpha > 0) & (beta > 0))
    only_w = np.flatnonzero((alpha > 0) & (beta == 0))
    only_s = np.flatnonzero((alpha == 0) & (beta > 0))
    ub_w = np.full(H, float(max_workers))
    if only_w.size:
        ub_w = np.minimum(ub_w, (res[:, only_w] / alpha[only_w]).min(axis=1))
    ub_s = np.full(H, inf)
    if only_s.size:
        ub_s = (res[:, only_s] / beta[only_s]).min(axis=1)
    if integer:  # HiGHS 1.14 and 1.15 mishandle fractional bounds of integer columns
        ub_w = np.floor(ub_w + INTEGER_BOUND_TOL)
        ub_s = np.where(np.isfinite(ub_s), np.floor(ub_s + INTEGER_BOUND_TOL), inf)
    nb = both.size
    row_sum, row_ps = nb * H, nb * H + 1
    num_rows = nb * H + 2
    # column w_h: rows k H + h (k-th shared resource), row_sum, row_ps
    h_idx = np.arange(H)
    w_rows = np.concatenate(
        [
            (np.arange(nb)[None, :] * H + h_idx[:, None]),
            np.full((H, 1), row_sum),
            np.full((H, 1), row_ps),
        ],
        axis=1,
    )
    w_vals = np.concatenate(
        [np.broadcast_to(alpha[both], (H, nb)), np.ones((H, 1)), np.ones((H, 1))], axis=1
    )
    s_rows = np.concatenate(
        [(np.arange(nb)[None, :] * H + h_idx[:, None]), np.full((H, 1), row_ps)], axis=1
    )
    s_vals = np.concatenate(
        [np.broadcast_to(beta[both], (H, nb)), np.full((H, 1), -float(gamma))], axis=1
    )
    index = np.concatenate([w_rows.ravel(), s_rows.ravel()]).astype(np.int32)
    value = np.concatenate([w_vals.ravel(), s_vals.ravel()]).astype(float)
    start = np.concatenate(
        [np.arange(H) * (nb + 2), H * (nb + 2) + np.arange(H + 1) * (nb + 1)]
    ).astype(np.int32)
    lp = highspy.HighsLp()
    lp.num_col_ = 2 * H
    lp.num_row_ = num_rows
    cost = np.concatenate([pw, ps])
    # Prices span L..U^r: the costs are centred on 1 (cost_scale; the objective is
    # recomputed unscaled by _run).
    lp.col_cost_ = solver_costs(cost)
    lp.col_lower_ = np.zeros(2 * H)
    lp.col_upper_ = np.concatenate([ub_w, ub_s])
    row_lower = np.full(num_rows, -inf)
    row_upper = np.empty(num_rows)
    row_upper[: nb * H] = res[:, both].T.ravel()
    row_lower[row_sum] = float(demand)
    row_upper[row_sum] = float(max_workers)
    row_upper[row_ps] = 0.0
    lp.row_lower_ = row_lower
    lp.row_upper_ = row_upper
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = start
    lp.a_matrix_.index_ = index
    lp.a_matrix_.value_ = value
    if integer:
        lp.integrality_ = [highspy.HighsVarType.kInteger] * (2 * H)
    return lp, row_sum


#: Costs below this share of the largest are set to 0 in the solver's model (docstring).
NEGLIGIBLE_COST = 1e-12


def solver_costs(cost: np.ndarray) -> np.ndarray:
    """The costs handed to HiGHS: those below :data:`NEGLIGIBLE_COST` times the largest set
    to 0, the rest multiplied by :func:`cost_scale`. With ``T = 80`` the price floor
    ``L`` of Eq. 14 reaches 1e-29 (``u_i(T - a_i)`` of a steep utility) while ``U^r`` is
    ~1e2: such costs are far below any solver tolerance, and left in they made HiGHS end
    with "Solve error" (Fig. 9's instances). Zeroed, they change an optimum's cost by at
    most 1e-12 of the largest cost per unit; objectives are recomputed with the true costs.
    """
    cost = np.asarray(cost, dtype=float)
    top = float(cost.max()) if cost.size else 0.0
    kept = np.where(cost < NEGLIGIBLE_COST * top, 0.0, cost)
    return kept * cost_scale(kept)


def cost_scale(cost: np.ndarray) -> float:
    """The factor ``1 / sqrt(min_pos max)`` that centres the positive costs on 1.

    Prices span ``L .. U^r`` (about e^20 apart, ``L ~ 1e-8``): unscaled, the small
    costs sit below HiGHS's tolerances (1e-7) and the solve ends at a non-optimal
    point; scaled to a smallest of 1, the largest reach 1e12 and HiGHS fails ("Solve
    error", seen at 10-20 machines). Centred, a spread of ``r`` becomes
    ``[r^-1/2, r^1/2]``: 1e-6 .. 1e6 for the widest spread met.
    """
    cost = np.asarray(cost, dtype=float)
    positive = cost[cost > 0]
    if positive.size == 0:
        return 1.0
    return float(1.0 / math.sqrt(positive.min() * positive.max()))


def _new_highs() -> Any:
    return new_highs(OPTIONS)


def _run(
    highs: Any, H: int, time_limit_s: float, what: str, cost: np.ndarray
) -> SlotLpSolution | None:
    """Run HiGHS; the solution, ``None`` if infeasible, or raise (module docstring)."""
    import highspy

    if not time_limit_s > 0:
        raise TimeLimitReached(f"time limit reached before {what}")
    # HiGHS 1.14's simplex compares ``time_limit`` with the run clock of the Highs object,
    # which accumulates over every run of a reused object: the limit is "clock so far +
    # budget" (else a long PD-ORS run would stop early once its LP time exceeded what is
    # left of the deadline).
    highs.setOptionValue(
        "time_limit",
        highs.getRunTime() + float(time_limit_s)
        if math.isfinite(time_limit_s)
        else highspy.kHighsInf,
    )
    highs.run()
    status = highs.getModelStatus()
    if status == highspy.HighsModelStatus.kOptimal:
        x = np.asarray(highs.getSolution().col_value, dtype=float)
        return SlotLpSolution(w=x[:H], s=x[H:], objective=float(np.dot(cost, x)))
    if status in (
        highspy.HighsModelStatus.kInfeasible,
        highspy.HighsModelStatus.kUnboundedOrInfeasible,
    ):
        # costs and variables are >= 0: the problem is never unbounded
        return None
    if status == highspy.HighsModelStatus.kTimeLimit:
        raise TimeLimitReached(f"time limit of {time_limit_s:g} s reached in {what}")
    raise SolverError(f"{what}: HiGHS returned {highs.modelStatusToString(status)}")


class HighsSlotLp:
    """The LP relaxation of one Problem (23), loaded once; :meth:`solve` for each ``D``.

    Obtained from :meth:`HighsSlotSolvers.lp`. Successive solves change only
    the lower bound of the (25)-(26) row and warm-start from the last basis;
    :meth:`solve_shrunk` also changes the bounds of rows (24) and of the
    columns (the shrunk LP of the revised rounding), :meth:`solve` restores them.
    """

    def __init__(
        self,
        owner: HighsSlotSolvers,
        lp: Any,
        row_sum: int,
        H: int,
        max_workers: int,
        cost: np.ndarray,
    ):
        self._owner = owner
        self._lp = lp
        self._row_sum = row_sum
        self._H = H
        self._max_workers = max_workers
        self._demand: float | None = None
        self._cost = cost  # unscaled (the model's costs are scaled: see _build)
        self._cap_rows = np.arange(row_sum, dtype=np.int32)  # rows (24): k H + h
        self._cap_upper = np.asarray(lp.row_upper_[:row_sum], dtype=float)
        self._col_upper = np.asarray(lp.col_upper_, dtype=float)
        self._shrunk: tuple[float, np.ndarray, np.ndarray] | None = None  # bounds in HiGHS

    def solve(self, demand: float, time_limit_s: float = math.inf) -> SlotLpSolution | None:
        """The LP optimum for covering demand ``demand`` (``None`` if infeasible)."""
        if demand > self._max_workers:  # (25) and (26) contradict each other
            return None
        highs = self._prepare(demand, None)
        return _run(highs, self._H, time_limit_s, f"slot LP (D = {demand})", self._cost)

    def solve_shrunk(
        self,
        demand: float,
        factor: float,
        worker_cap: np.ndarray,
        ps_cap: np.ndarray,
        time_limit_s: float = math.inf,
    ) -> SlotLpSolution | None:
        """The shrunk LP of the revised rounding (``None`` if infeasible).

        Rows (24) of resources both workers and PSs use get ``C^[h, r] /
        factor``; the columns get ``w_h <= min(F, worker_cap[h] / factor)`` and
        ``s_h <= ps_cap[h] / factor``, where the caller passes the one-resource
        bounds already floored (``inf``: no resource only PSs use); rows (25),
        (26) and the PS row are unchanged.
        """
        if demand > self._max_workers:
            return None
        shrink = (
            float(factor),
            np.minimum(float(self._max_workers), np.asarray(worker_cap, dtype=float) / factor),
            np.asarray(ps_cap, dtype=float) / factor,
        )
        highs = self._prepare(demand, shrink)
        return _run(highs, self._H, time_limit_s, f"shrunk slot LP (D = {demand})", self._cost)

    def _prepare(self, demand: float, shrink: tuple[float, np.ndarray, np.ndarray] | None) -> Any:
        """The loaded HiGHS object with the bounds of this ``D`` and shrink (None: full LP)."""
        highs = self._owner._lp_highs(self)
        if demand != self._demand:
            highs.changeRowBounds(self._row_sum, float(demand), float(self._max_workers))
            self._demand = demand
        if not _same_shrink(shrink, self._shrunk):
            if shrink is None:
                cap_upper, col_upper = self._cap_upper, self._col_upper
            else:
                factor, ub_w, ub_s = shrink
                cap_upper = self._cap_upper / factor
                col_upper = np.concatenate([ub_w, ub_s])
            if cap_upper.size:
                highs.changeRowsBounds(
                    cap_upper.size, self._cap_rows, np.full(cap_upper.size, -np.inf), cap_upper
                )
            cols = np.arange(col_upper.size, dtype=np.int32)
            highs.changeColsBounds(col_upper.size, cols, np.zeros(col_upper.size), col_upper)
            self._shrunk = shrink
        return highs

    def _load(self, highs: Any) -> None:
        highs.clearModel()
        highs.passModel(self._lp)
        self._demand = float(self._lp.row_lower_[self._row_sum])
        self._shrunk = None


def _same_shrink(
    a: tuple[float, np.ndarray, np.ndarray] | None, b: tuple[float, np.ndarray, np.ndarray] | None
) -> bool:
    if a is None or b is None:
        return a is b
    return a[0] == b[0] and np.array_equal(a[1], b[1]) and np.array_equal(a[2], b[2])


class HighsSlotSolvers:
    """Problem (23) solvers for PD-ORS and the ``dmlrs_slot`` family (HiGHS, no arguments).

    Implements the protocol :class:`ddlsched.heuristics.dmlrs_slot.SlotSolvers`:
    :meth:`lp` opens a reusable LP relaxation of one (job, slot);
    :meth:`ilp` solves the exact ILP for one ``D``.
    """

    def __init__(self) -> None:
        self._lp_highs_obj: Any = None
        self._active: HighsSlotLp | None = None

    def _lp_highs(self, session: HighsSlotLp) -> Any:
        if self._lp_highs_obj is None:
            self._lp_highs_obj = _new_highs()
        if self._active is not session:
            session._load(self._lp_highs_obj)
            self._active = session
        return self._lp_highs_obj

    def lp(
        self,
        worker_price: Any,
        ps_price: Any,
        alpha: Any,
        beta: Any,
        residual: Any,
        gamma: int,
        max_workers: int,
    ) -> HighsSlotLp:
        """The LP relaxation of Problem (23) with these data (``D`` given to ``solve``)."""
        import highspy

        pw, ps, a, b, res = _arrays(
            worker_price, ps_price, alpha, beta, residual, gamma, max_workers
        )
        lp, row_sum = _build(highspy, pw, ps, a, b, res, int(gamma), int(max_workers), 0.0, False)
        return HighsSlotLp(self, lp, row_sum, pw.size, int(max_workers), np.concatenate([pw, ps]))

    def ilp(
        self,
        worker_price: Any,
        ps_price: Any,
        alpha: Any,
        beta: Any,
        residual: Any,
        gamma: int,
        max_workers: int,
        demand: float,
        time_limit_s: float = math.inf,
    ) -> SlotLpSolution | None:
        """The exact ILP optimum of Problem (23) (integer ``w, s``); ``None`` if infeasible."""
        import highspy

        pw, ps, a, b, res = _arrays(
            worker_price, ps_price, alpha, beta, residual, gamma, max_workers
        )
        if demand > max_workers:
            return None
        lp, _ = _build(highspy, pw, ps, a, b, res, int(gamma), int(max_workers), demand, True)
        return _solve_ilp(lp, pw.size, time_limit_s, demand, np.concatenate([pw, ps]))


def _solve_ilp(
    lp: Any, H: int, time_limit_s: float, demand: float, cost: np.ndarray
) -> SlotLpSolution | None:
    """The slot ILP ``lp`` in the HiGHS worker process (module docstring): the rounded
    optimum, ``None`` if infeasible, or raise."""
    import highspy

    from ddlsched.solvers.highs_server import MipArrays, solve_mip

    what = f"slot ILP (D = {demand})"
    if not time_limit_s > 0:
        raise TimeLimitReached(f"time limit reached before {what}")
    run = solve_mip(MipArrays.from_lp(lp, OPTIONS), float(time_limit_s))
    status = run.model_status
    ms = highspy.HighsModelStatus
    if status == ms.kOptimal and run.primal_valid:
        x = np.asarray(run.col_value, dtype=float)
        w, s = np.round(x[:H]), np.round(x[H:])
        return SlotLpSolution(w=w, s=s, objective=float(np.dot(cost, x)))
    if status in (ms.kInfeasible, ms.kUnboundedOrInfeasible):
        return None  # costs and variables are >= 0: never unbounded
    if run.killed or status in (ms.kTimeLimit, ms.kInterrupt):
        how = "the worker was stopped" if run.killed else "HiGHS stopped"
        raise TimeLimitReached(f"time limit of {time_limit_s:g} s reached in {what} ({how})")
    raise SolverError(f"{what}: HiGHS returned {status}")
