"""The LP of ``lb_timeindexed`` built directly as a sparse matrix for highspy (rar).

The statement of record is the Pyomo model of
:func:`ddlsched.models.rar_lb_columns.build_pyomo_lb`; at paper size it has
too many nonzeros for Pyomo's hand-over (each column sits in the capacity
rows of its ``D`` windows and the tail rows of its ``ceil(f / w)``
windows), so this module writes the *same LP* with cumulative auxiliary
columns (``docs/architecture.md``, "Solvers": a direct highspy path, with a test that it
returns the Pyomo model's optimum, ``tests/test_rar_lb_timeindexed.py``):

* ``S[i] = S[i-1] + x[i]`` along the starts of a pair (``S`` at the first
  start equals ``x``), so the mass of pair ``p`` covering window ``K`` is
  ``S[p, min(K, last)] - S[p, K - D]`` (the second term absent when
  ``K - D < 0``): two entries per capacity row instead of ``D``;
* ``P[j, K] = P[j, K+1] + sum(x[i] : i of job j, m_i = K + 1)`` with
  ``P[j, windows] = 0`` and ``m_i = floor(f_i / w)``, so ``P[j, K]`` is the
  mass of ``j``'s columns with ``f >= (K + 1) w`` (coefficient 1 in the
  tail row of ``K``); the tail row reads
  ``y[K] - P[j, K] - sum((f_i - K w) / w x[i] : m_i = K) >= 0``.

Substituting ``S`` and ``P`` gives back every row of the Pyomo model, and
every feasible point of it extends to one of this LP (set ``S`` and ``P``
by their definitions): the two LPs have the same optimum. The matrices
differ by design (the auxiliary columns). It is solved by
:class:`ddlsched.solvers.highs_lp.HighsLp` (HiGHS, dual simplex, with the
time limit given).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ddlsched.models.rar_lb_columns import LbColumns

__all__ = ["DirectLp", "build_direct_lb"]


class DirectLp:
    """``min cost x`` s.t. ``row_lower <= A x <= row_upper``, ``0 <= x <= col_upper``."""

    def __init__(self, cost, matrix, row_lower, row_upper, col_upper, num_x: int):
        self.cost = cost
        self.matrix = matrix
        self.row_lower = row_lower
        self.row_upper = row_upper
        self.col_upper = col_upper
        self.num_x = num_x  # the first num_x columns are x, then S, y, P

    @property
    def shape(self) -> tuple[int, int]:
        return self.matrix.shape


class _Triplets:
    """Rows of a sparse matrix appended in blocks, with their bounds."""

    def __init__(self) -> None:
        self.rows: list[np.ndarray] = []
        self.cols: list[np.ndarray] = []
        self.vals: list[np.ndarray] = []
        self.lower: list[np.ndarray] = []
        self.upper: list[np.ndarray] = []
        self.num_rows = 0

    def block(self, count: int, lower: float, upper: float) -> int:
        """Reserve ``count`` rows with bounds ``[lower, upper]``; returns the first row index."""
        first = self.num_rows
        self.lower.append(np.full(count, lower))
        self.upper.append(np.full(count, upper))
        self.num_rows += count
        return first

    def add(self, rows, cols, vals) -> None:
        rows = np.asarray(rows, dtype=np.int64)
        self.rows.append(rows)
        self.cols.append(np.asarray(cols, dtype=np.int64))
        self.vals.append(np.broadcast_to(np.asarray(vals, dtype=float), rows.shape).copy())

    def matrix(self, num_cols: int) -> sp.csc_matrix:
        coo = sp.coo_matrix(
            (np.concatenate(self.vals), (np.concatenate(self.rows), np.concatenate(self.cols))),
            shape=(self.num_rows, num_cols),
        )
        return coo.tocsc()


def _capacity_rows(cols: LbColumns, out: _Triplets, s0: int, y0: int) -> None:
    """``sum_p coefficient_p (S[p, min(K, last)] - S[p, K - D]) - capacity y[K] <= 0``."""
    inf = np.inf
    rows_of = [(cols.pair_gpus, cols.num_gpus)]
    rows_of += [(cols.pair_usage[:, c], cap * n) for c, (cap, n) in enumerate(cols.classes)]
    for coefficient, capacity in rows_of:
        first = out.block(cols.capacity_windows, -inf, 0.0)
        windows = np.arange(cols.capacity_windows)
        out.add(first + windows, y0 + windows, -float(capacity))
        for p in np.nonzero((coefficient > 0) & (cols.pair_coarse > 0) & (cols.pair_count > 0))[0]:
            d, last, base = (
                int(cols.pair_coarse[p]),
                int(cols.pair_count[p]) - 1,
                cols.pair_first[p],
            )
            window = np.arange(last + d)  # windows some start of p covers
            upper = np.minimum(window, last)
            out.add(first + window, s0 + base + upper, float(coefficient[p]))
            lower = window - d
            keep = lower >= 0
            out.add(first + window[keep], s0 + base + lower[keep], -float(coefficient[p]))


def build_direct_lb(cols: LbColumns) -> DirectLp:
    """The LP of the module docstring: columns ``x, S, y, P``, objective ``w sum_K y[K]``."""
    n, nw, nj = cols.num_columns, cols.windows, cols.num_jobs
    s0, y0, p0 = n, 2 * n, 2 * n + nw
    num_cols = p0 + nj * nw
    out = _Triplets()
    col = np.arange(n)
    jobs = cols.pair_job[cols.col_pair]
    # choice: sum of x over the job's columns = 1
    first = out.block(nj, 1.0, 1.0)
    out.add(first + jobs, col, 1.0)
    # S[i] - S[i-1] - x[i] = 0 (no S[i-1] at a pair's first start)
    first = out.block(n, 0.0, 0.0)
    out.add(first + col, s0 + col, 1.0)
    out.add(first + col, col, -1.0)
    later = cols.col_start > 0
    out.add(first + col[later], s0 + col[later] - 1, -1.0)
    _capacity_rows(cols, out, s0, y0)
    # y[K] - y[K+1] >= 0
    first = out.block(nw - 1, 0.0, np.inf)
    out.add(first + np.arange(nw - 1), y0 + np.arange(nw - 1), 1.0)
    out.add(first + np.arange(nw - 1), y0 + np.arange(1, nw), -1.0)
    _tail_rows(cols, out, col, jobs, y0, p0)
    cost = np.zeros(num_cols)
    cost[y0 : y0 + nw] = cols.slot_width
    upper = np.ones(num_cols)
    upper[y0 + nw - 1] = cols.last_window_share
    return DirectLp(
        cost,
        out.matrix(num_cols),
        np.concatenate(out.lower),
        np.concatenate(out.upper),
        upper,
        num_x=n,
    )


def _tail_rows(
    cols: LbColumns, out: _Triplets, col: np.ndarray, jobs: np.ndarray, y0: int, p0: int
) -> None:
    """``P`` definitions and the tail rows ``y[K] - P[j, K] - partial terms >= 0``."""
    w, nw, nj = cols.slot_width, cols.windows, cols.num_jobs
    full = cols.col_end // w  # m_i: windows the column's end covers entirely
    pj = (np.arange(nj)[:, None] * nw + np.arange(nw)[None, :]).ravel()  # P[j, K] offset
    # P[j, K] - P[j, K+1] - sum(x : m = K + 1) = 0, one row per (j, K)
    first = out.block(nj * nw, 0.0, 0.0)
    out.add(first + pj, p0 + pj, 1.0)
    inner = (np.arange(nj)[:, None] * nw + np.arange(nw - 1)[None, :]).ravel()
    out.add(first + inner, p0 + inner + 1, -1.0)
    counted = full >= 1
    out.add(first + jobs[counted] * nw + full[counted] - 1, col[counted], -1.0)
    # y[K] - P[j, K] - sum((f - K w) / w x : m = K, f > K w) >= 0
    first = out.block(nj * nw, 0.0, np.inf)
    windows = np.tile(np.arange(nw), nj)
    out.add(first + pj, y0 + windows, 1.0)
    out.add(first + pj, p0 + pj, -1.0)
    partial = (cols.col_end > full * w) & (full < nw)
    out.add(
        first + jobs[partial] * nw + full[partial],
        col[partial],
        -(cols.col_end[partial] - full[partial] * w) / w,
    )
