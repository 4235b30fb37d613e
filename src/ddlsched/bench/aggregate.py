"""Statistics of certified ratio intervals, shared by ``compare`` and the suite tables."""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = ["IntervalStats", "interval_stats", "mean_inf"]


def mean_inf(values: Iterable[float]) -> float:
    """The mean, ``inf`` if any value is infinite (``fmean`` would give ``nan`` for inf - inf)."""
    values = list(values)
    return math.inf if any(math.isinf(v) for v in values) else statistics.fmean(values)


@dataclass(frozen=True)
class IntervalStats:
    """Mean, median and worst of certified ratio intervals (each an interval)."""

    mean: tuple[float, float]
    median: tuple[float, float]
    worst: tuple[float, float]


def interval_stats(intervals: Sequence[tuple[float, float]]) -> IntervalStats | None:
    """Bracket the mean, median and worst ratio from per-row intervals ``(lo, hi)``.

    Mean, median and maximum are monotone in each value, so applying them to
    the lower ends and to the upper ends brackets the true statistic.
    """
    if not intervals:
        return None
    los = [lo for lo, _ in intervals]
    his = [hi for _, hi in intervals]
    return IntervalStats(
        mean=(statistics.fmean(los), mean_inf(his)),
        median=(statistics.median(los), statistics.median(his)),
        worst=(max(los), max(his)),
    )
