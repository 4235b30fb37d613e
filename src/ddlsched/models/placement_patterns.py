"""The server-pattern bound and start of the aggregated placement ILP (``exact``).

Builds the pattern blocks of a :class:`~ddlsched.problems.placement.PlacementInstance`
(one block per availability value: its servers and the count vectors they
may hold, :func:`~ddlsched.solvers.placement_patterns.patterns`), values each
pattern by Eqs. (4)-(7) (:func:`pattern_values`) and hands them to
:func:`~ddlsched.solvers.placement_patterns.cover_search` (highspy); the
mathematics are in that module's docstring. :func:`pattern_search` returns
the bound and a placement for :func:`ddlsched.models.placement.build_aggregated`.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

import numpy as np

from ddlsched.models.placement_bounds import Coefficients
from ddlsched.problems.placement import PlacementInstance
from ddlsched.solvers.placement_patterns import (
    PATTERN_LIMIT,
    cover_search,
    pattern_count,
    patterns,
)

__all__ = ["PatternSearch", "pattern_search", "pattern_values"]


def pattern_values(
    instance: PlacementInstance, coef: Coefficients, table: np.ndarray
) -> np.ndarray:
    """``f(p)`` (model units) of every pattern (row of ``table``): the largest
    ``comp + comm + AllReduce`` term of the stages it holds (0 for the empty one)."""
    num, size = instance.num_stages, table.shape[0]
    out = np.zeros(size)
    for s, stage in enumerate(instance.stages):
        v = table[:, s]
        held = v > 0
        if not held.any():
            continue
        cost = np.zeros(stage.replicas + 1)
        for count in range(1, stage.replicas + 1):
            cost[count] = coef.cost[(s, count)]
        term = cost[v] + coef.comm0[s]
        if s > 0:
            term = term + coef.comm_prev[s] * table[:, s - 1]
        if s < num - 1:
            term = term + coef.comm_next[s] * table[:, s + 1]
        out = np.where(held, np.maximum(out, term), out)
    return out


@dataclass(frozen=True)
class PatternSearch:
    """What :func:`pattern_search` found (model units).

    ``bound``: the pattern LP bound (``alpha >= bound`` for every placement;
    ``None`` if HiGHS's infeasibility certificate did not check out);
    ``counts``: a placement (``counts[s][m]`` replicas of stage ``s`` on server
    ``m``) built from an integer pattern solution, servers of equal
    availability taking their patterns in non-increasing lexicographic order
    (so it satisfies the aggregated ILP's symmetry-breaking rows), or ``None``;
    ``value``: its largest pattern value (``alpha`` of the placement).
    """

    bound: float | None
    counts: tuple[tuple[int, ...], ...] | None
    value: float | None
    lp_solves: int
    mip_solves: int


def _placement(instance: PlacementInstance, avails, chosen) -> tuple[tuple[int, ...], ...]:
    counts = [[0] * instance.num_servers for _ in instance.stages]
    for avail, table in zip(avails, chosen, strict=True):
        servers = [m for m, a in enumerate(instance.available) if a == avail]
        ordered = sorted((tuple(int(v) for v in row) for row in table), reverse=True)
        for m, row in zip(servers, ordered, strict=True):
            for s, v in enumerate(row):
                counts[s][m] = v
    return tuple(tuple(row) for row in counts)


def pattern_search(
    instance: PlacementInstance, coef: Coefficients, *, budget_s: float = math.inf, **options
) -> PatternSearch | None:
    """The pattern LP bound and a placement for ``instance`` (model units);
    ``None`` when its servers have more than
    :data:`~ddlsched.solvers.placement_patterns.PATTERN_LIMIT` patterns.
    ``options`` go to :func:`~ddlsched.solvers.placement_patterns.cover_search`."""
    full = sum(instance.available) == instance.num_replicas
    counts = Counter(instance.available)
    size = 0
    for avail in counts:
        caps = [min(stage.replicas, avail) for stage in instance.stages]
        size += pattern_count(caps, avail, exact=full)
        if size > PATTERN_LIMIT:
            return None
    avails, tables, values = [], [], []
    for avail in sorted(counts):
        caps = [min(stage.replicas, avail) for stage in instance.stages]
        table = patterns(caps, avail, exact=full)
        avails.append(avail)
        tables.append(table)
        values.append(pattern_values(instance, coef, table))
    supply = np.array([counts[a] for a in avails], dtype=float)
    demand = np.array([stage.replicas for stage in instance.stages], dtype=float)
    found = cover_search(tables, values, supply, demand, budget_s=budget_s, **options)
    placement = value = None
    if found.chosen is not None:
        placement = _placement(instance, avails, found.chosen)
        value = float(pattern_values(instance, coef, np.vstack(found.chosen)).max())
    return PatternSearch(found.bound, placement, value, found.lp_solves, found.mip_solves)
