"""Columns and the statement of record of ``lb_timeindexed`` (rar; a bound of ours).

The LP of :mod:`ddlsched.models.rar_lb_timeindexed` (its docstring has the
model and the proof of validity) indexes columns by (job ``j``, pattern
``k``, coarse start ``t``) on a grid of slot width ``w``. This module
enumerates them (:func:`lb_columns`: coarse duration ``D``, earliest fine
end ``f``, full-window count ``m = floor(f / w)``), counts the size of both
builds before anything is built (:func:`direct_size`, :func:`pyomo_size`),
and builds the Pyomo model, the statement of record
(:func:`build_pyomo_lb`). The direct highspy build of the same LP, with
cumulative auxiliary columns, is :mod:`ddlsched.models.rar_lb_direct`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pyomo.environ as pyo

from ddlsched.models.rar_patterns import PatternCatalogue
from ddlsched.models.rar_timegrid import grid_durations
from ddlsched.models.rar_timeindexed import _fine_end_lb
from ddlsched.problems.rar import RarInstance

__all__ = ["LbColumns", "build_pyomo_lb", "direct_size", "lb_columns", "pyomo_size"]


@dataclass(frozen=True)
class LbColumns:
    """The LP's columns on one grid, grouped by (job, pattern) pair.

    Per pair ``p``: ``pair_job[p]``, ``pair_usage[p]`` (GPUs per server
    class, zeros for a pooled column), ``pair_gpus[p]`` (``G_j``),
    ``pair_coarse[p]`` (``D``, fully covered windows), ``pair_first[p]``
    (index of its first column; its columns are contiguous, starts
    ``0..pair_count[p]-1``). Per column ``i``: ``col_pair``, ``col_start``
    (``t``), ``col_end`` (``f``, fine slots). ``windows``: ``ceil(H / w)``
    (the objective's ``y``); ``capacity_windows``: ``H // w``.
    """

    slot_width: int
    horizon: int
    windows: int
    capacity_windows: int
    classes: tuple[tuple[int, int], ...]
    num_gpus: int
    num_jobs: int
    pair_job: np.ndarray
    pair_usage: np.ndarray
    pair_gpus: np.ndarray
    pair_coarse: np.ndarray
    pair_first: np.ndarray
    pair_count: np.ndarray
    col_pair: np.ndarray
    col_start: np.ndarray
    col_end: np.ndarray

    @property
    def last_window_share(self) -> float:
        """Upper bound of the last ``y``: the share of the last window before ``H``."""
        return (self.horizon - (self.windows - 1) * self.slot_width) / self.slot_width

    @property
    def num_columns(self) -> int:
        return int(self.col_pair.size)

    def jobs_without_column(self) -> list[int]:
        """Jobs none of whose columns ends by the horizon (the LP is then infeasible)."""
        covered = set(self.pair_job[self.pair_count > 0].tolist())
        return [j for j in range(self.num_jobs) if j not in covered]


def lb_columns(
    instance: RarInstance, catalogue: PatternCatalogue, slot_width: int, horizon: int
) -> LbColumns:
    """Every column ``(j, k, t)`` whose earliest fine end ``f`` is at most ``horizon``."""
    w = slot_width
    coarse = grid_durations(catalogue.durations, w, schedule=False)
    pairs = [(j, k) for j in range(len(instance.jobs)) for k in range(len(catalogue.patterns[j]))]
    n_classes = len(catalogue.classes)
    usage = np.zeros((len(pairs), n_classes), dtype=np.int64)
    count = np.zeros(len(pairs), dtype=np.int64)
    pieces_pair, pieces_start, pieces_end = [], [], []
    for p, (j, k) in enumerate(pairs):
        pattern = catalogue.patterns[j][k]
        if pattern is not None:
            usage[p] = pattern
        d = catalogue.durations[j, k]
        # f(t) = d at t = 0, (t - 1) w + 1 + d after: increasing, so f <= H is a prefix of t
        if d > horizon:
            continue
        n = 1 + max(0, (horizon - d - 1) // w + 1)
        starts = np.arange(n, dtype=np.int64)
        ends = np.where(starts == 0, d, (starts - 1) * w + 1 + d)
        assert ends[-1] <= horizon and _fine_end_lb(n, d, w) > horizon
        count[p] = n
        pieces_pair.append(np.full(n, p, dtype=np.int64))
        pieces_start.append(starts)
        pieces_end.append(ends)
    first = np.concatenate([[0], np.cumsum(count)[:-1]]).astype(np.int64)
    empty = np.zeros(0, dtype=np.int64)
    return LbColumns(
        slot_width=w,
        horizon=horizon,
        windows=math.ceil(horizon / w),
        capacity_windows=horizon // w,
        classes=tuple(catalogue.classes),
        num_gpus=instance.num_gpus,
        num_jobs=len(instance.jobs),
        pair_job=np.array([j for j, _ in pairs], dtype=np.int64),
        pair_usage=usage,
        pair_gpus=np.array([instance.jobs[j].gpus for j, _ in pairs], dtype=np.int64),
        pair_coarse=np.array([coarse[pair] for pair in pairs], dtype=np.int64),
        pair_first=first,
        pair_count=count,
        col_pair=np.concatenate(pieces_pair) if pieces_pair else empty,
        col_start=np.concatenate(pieces_start) if pieces_start else empty,
        col_end=np.concatenate(pieces_end) if pieces_end else empty,
    )


def _capacity_rows_per_pair(cols: LbColumns) -> np.ndarray:
    """Capacity rows each pair enters: the cluster row and one per class it uses."""
    return 1 + (cols.pair_usage > 0).sum(axis=1)


def direct_size(cols: LbColumns) -> tuple[int, int, int]:
    """``(columns, rows, nonzeros)`` of the direct build (:mod:`~ddlsched.models.rar_lb_direct`).

    Columns ``x`` and ``S`` (one each per column), ``y`` (one per window),
    ``P`` (one per job and window); nonzeros: ``x`` in its choice, ``S``
    and ``P`` rows (3), ``S`` in two definition rows and in at most two
    entries of each capacity row over ``D + count`` windows.
    """
    n, windows = cols.num_columns, cols.windows
    covered = np.where(cols.pair_coarse > 0, cols.pair_count + cols.pair_coarse, 0)
    capacity = int((2 * covered * _capacity_rows_per_pair(cols)).sum())
    columns = 2 * n + windows + cols.num_jobs * windows
    rows = cols.num_jobs + n + 2 * cols.num_jobs * windows + windows * (2 + len(cols.classes))
    nonzeros = 5 * n + capacity + windows * (len(cols.classes) + 3) + 3 * cols.num_jobs * windows
    return columns, rows, nonzeros


def pyomo_size(cols: LbColumns) -> tuple[int, int]:
    """``(variables, nonzeros)`` of :func:`build_pyomo_lb`: each column in its ``D`` windows'
    capacity rows and in the tail rows of ``ceil(f / w)`` windows."""
    per_pair_capacity = cols.pair_coarse * _capacity_rows_per_pair(cols)
    capacity = int(per_pair_capacity[cols.col_pair].sum())
    tails = int(np.ceil(cols.col_end / cols.slot_width).sum())
    return cols.num_columns + cols.windows, cols.num_columns + capacity + tails


def build_pyomo_lb(cols: LbColumns) -> pyo.ConcreteModel:
    """The LP as a Pyomo model, the statement of record (rows as in the module docstring of
    :mod:`ddlsched.models.rar_lb_timeindexed`): ``x[i]`` per column, ``y[K]`` per window."""
    w = cols.slot_width
    m = pyo.ConcreteModel(name="rar_lb_timeindexed")
    m.x = pyo.Var(range(cols.num_columns), domain=pyo.UnitInterval)
    m.y = pyo.Var(range(cols.windows), domain=pyo.UnitInterval)
    m.y[cols.windows - 1].setub(cols.last_window_share)
    by_job: dict[int, list[int]] = {}
    for i, p in enumerate(cols.col_pair.tolist()):
        by_job.setdefault(int(cols.pair_job[p]), []).append(i)
    m.choose = pyo.Constraint(
        range(cols.num_jobs), rule=lambda m, j: sum(m.x[i] for i in by_job.get(j, [])) == 1
    )
    covering: dict[int, list[int]] = {}  # window -> columns fully covering it
    for i, (p, t) in enumerate(zip(cols.col_pair.tolist(), cols.col_start.tolist(), strict=True)):
        for window in range(t, t + int(cols.pair_coarse[p])):
            covering.setdefault(window, []).append(i)
    m.capacity = pyo.ConstraintList()
    for window, members in sorted(covering.items()):
        rows = [(cols.pair_gpus, cols.num_gpus)]
        rows += [(cols.pair_usage[:, c], cap * n) for c, (cap, n) in enumerate(cols.classes)]
        for coefficient, capacity in rows:
            terms = [
                int(coefficient[cols.col_pair[i]]) * m.x[i]
                for i in members
                if coefficient[cols.col_pair[i]]
            ]
            if terms:
                m.capacity.add(sum(terms) <= capacity * m.y[window])
    m.monotone = pyo.Constraint(range(cols.windows - 1), rule=lambda m, k: m.y[k] >= m.y[k + 1])
    m.tail = pyo.ConstraintList()
    for j in range(cols.num_jobs):
        for window in range(cols.windows):
            terms = [
                min(1.0, (int(cols.col_end[i]) - window * w) / w) * m.x[i]
                for i in by_job.get(j, [])
                if cols.col_end[i] > window * w
            ]
            if terms:
                m.tail.add(m.y[window] >= sum(terms))
    m.obj = pyo.Objective(expr=w * sum(m.y[k] for k in range(cols.windows)), sense=pyo.minimize)
    return m
