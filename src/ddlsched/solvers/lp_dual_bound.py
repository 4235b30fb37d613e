"""A bound on an LP's optimum by weak duality at HiGHS's row duals: proven whatever
HiGHS's tolerances when every column has finite bounds (below: what holds otherwise).

The LP as HiGHS holds it::

    min (or max)  c x + c0   s.t.   L <= A x <= U,   l <= x <= u.

For *any* vector ``y`` (one entry a row) and ``d = c - A^T y``, every feasible
``x`` has ``c x = y (A x) + d x``, and each term is bounded by the row's or the
column's bounds: for a minimisation

    c x + c0 >= c0 + sum_i min(y_i L_i, y_i U_i) + sum_j min(d_j l_j, d_j u_j),

a maximisation the same with ``max`` (and ``0 * inf = 0``). In exact arithmetic
nothing here assumes ``y`` optimal or even dual feasible: a poor ``y`` gives a
poor bound, never a wrong one. So the value holds where the primal objective of a
solution HiGHS calls optimal need not: that point is feasible and optimal only
within HiGHS's primal and dual feasibility tolerances (``1e-7``), and its
objective can lie above the LP's optimum (a minimisation) by about those
tolerances times the size of the variables, which on a time-indexed LP of 10^5
columns is more than a ``1e-6`` relative margin.

Products with an infinite bound: a row whose ``y_i`` would meet an infinite bound
gets ``y_i = 0`` (allowed: any ``y``) before ``d`` is computed. A column whose
computed ``d_j`` is nonzero and meets an infinite bound (a minimisation: ``d_j >
0`` with ``l_j = -inf`` or ``d_j < 0`` with ``u_j = +inf``; a maximisation the
other way round) makes the bound at this ``y`` infinite (``-inf`` for a
minimisation, ``+inf`` for a maximisation: no bound): ``None`` is returned. At
optimal duals that does not happen in exact arithmetic (a free column's reduced
cost is 0, a column unbounded above has ``d_j >= 0``), so a ``None`` at HiGHS's
duals means they miss dual feasibility at such a column.

Rounding: the sum is computed with ``math.fsum`` over terms each rounded once,
and ``A^T y`` with numpy (a handful of roundings per entry, so each computed
``d_j`` is within a few ulps of ``sum_i |a_ij y_i|`` of the exact one);
:data:`RELATIVE_SLACK` times the magnitude of everything summed (the terms, and
each ``|a_ij y_i|`` times its column's largest finite bound) is taken off on the
safe side, far more than those roundings can move the value and far less than
any margin a caller applies. What is proven, exactly: the returned value is at
most (a maximisation: at least) ``c x + c0`` for every feasible ``x`` *when every
column has finite bounds* (then the slack covers the rounding of every ``d_j``
times the largest ``|x_j|``). A column with an infinite bound is not covered: its
largest ``|x_j|`` is infinite, so the rounding of ``d_j`` cannot be charged to the
slack. Its term is taken at the computed ``d_j`` (0 for a computed ``d_j = 0``,
the usual case of a free or basic column at HiGHS's duals, and ``d_j`` times the
finite bound when ``d_j`` points at it); if rounding hid an exact ``d_j`` of the
other sign, the exact bound at this ``y`` is infinite and the value holds only
for the feasible ``x`` whose unbounded columns stay within the slack over that
rounding (in practice: ``|x_j|`` up to about ``1e7`` times the other terms'
magnitude over ``sum_i |a_ij y_i|``). Every LP the toolkit asks for this bound
has finite column bounds (the ``asrpt`` time-indexed relaxation: every column in
``[0, 1]``), where the value is proven.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["RELATIVE_SLACK", "dual_bound"]

#: taken off the bound, times the sum of the magnitudes of its terms (module docstring)
RELATIVE_SLACK = 1e-9


def _extreme(coef: np.ndarray, lower: np.ndarray, upper: np.ndarray, low: bool) -> np.ndarray:
    """Per entry, the smaller (``low``) or larger product of ``coef`` with either bound;
    ``coef == 0`` gives 0 whatever the bounds (even infinite ones)."""
    with np.errstate(invalid="ignore"):
        a = np.where(coef == 0, 0.0, coef * lower)
        b = np.where(coef == 0, 0.0, coef * upper)
    return np.minimum(a, b) if low else np.maximum(a, b)


def dual_bound(highs: Any) -> float | None:
    """The weak-duality bound (module docstring) of the LP held by ``highs`` (a solved
    ``highspy.Highs``) at its row duals; ``None`` when HiGHS has no valid dual solution
    or the bound at those duals is infinite (a column's nonzero reduced cost meets an
    infinite bound of the column). Proven whatever HiGHS's tolerances when every
    column has finite bounds; with an unbounded column, only up to the rounding of its
    reduced cost (module docstring)."""
    solution = highs.getSolution()
    if not solution.dual_valid:
        return None
    lp = highs.getLp()
    minimize = int(lp.sense_) == 1  # ObjSense.kMinimize
    cost = np.asarray(lp.col_cost_, dtype=float)
    col_lower = np.asarray(lp.col_lower_, dtype=float)
    col_upper = np.asarray(lp.col_upper_, dtype=float)
    row_lower = np.asarray(lp.row_lower_, dtype=float)
    row_upper = np.asarray(lp.row_upper_, dtype=float)
    y = np.array(solution.row_dual, dtype=float)
    # a row whose dual would meet an infinite bound: y_i = 0 (any y gives a valid bound)
    needs_lower = (y > 0) if minimize else (y < 0)
    y[needs_lower & ~np.isfinite(row_lower)] = 0.0
    y[~needs_lower & (y != 0) & ~np.isfinite(row_upper)] = 0.0
    matrix = lp.a_matrix_
    start = np.asarray(matrix.start_, dtype=np.int64)
    index = np.asarray(matrix.index_, dtype=np.int64)
    value = np.asarray(matrix.value_, dtype=float)
    if int(matrix.format_) == 1:  # MatrixFormat.kColwise: entries of column j in start[j:j+1]
        columns = np.repeat(np.arange(lp.num_col_), np.diff(start))
        rows = index
    else:  # row-wise
        rows = np.repeat(np.arange(lp.num_row_), np.diff(start))
        columns = index
    products = value * y[rows]
    reduced = cost - np.bincount(columns, weights=products, minlength=lp.num_col_)
    row_terms = _extreme(y, row_lower, row_upper, minimize)
    col_terms = _extreme(reduced, col_lower, col_upper, minimize)
    terms = np.concatenate([row_terms, col_terms, [float(lp.offset_)]])
    if not np.all(np.isfinite(terms)):
        return None
    total = math.fsum(terms.tolist())
    reach = np.maximum(
        np.abs(np.where(np.isfinite(col_lower), col_lower, 0.0)),
        np.abs(np.where(np.isfinite(col_upper), col_upper, 0.0)),
    )
    rounding = np.bincount(columns, weights=np.abs(products), minlength=lp.num_col_) @ reach
    slack = RELATIVE_SLACK * (math.fsum(np.abs(terms).tolist()) + float(rounding))
    return total - slack if minimize else total + slack
