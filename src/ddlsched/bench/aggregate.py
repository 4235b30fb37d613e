"""Statistics of certified ratio intervals, shared by ``compare`` and the suite tables."""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = ["NO_BOUND", "IntervalStats", "interval_stats", "mean_inf", "ratio_text"]

#: How a ratio interval's infinite upper end prints: no finite bound on the optimum is known.
NO_BOUND = "no bound"
_TOL = 1e-9


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


def ratio_text(lo: float | None, hi: float | None) -> str:
    """A ratio or a certified interval as text (``compare`` and the suite tables).

    ``1.2500`` when the ends agree; ``[1.2000, 1.3000]`` otherwise; an
    infinite upper end prints as ``[1.2000, no bound]`` (no finite bound on
    the optimum is known: the ratio is at least the lower end); a ratio
    infinite at both ends (an objective of 0 against a positive optimum,
    when maximising) prints as ``infinite``; no ratio as ``-``.
    """
    if lo is None or hi is None or math.isnan(lo):
        return "-"
    if math.isinf(lo):
        return "infinite"
    if abs(hi - lo) <= _TOL * max(1.0, abs(lo)):
        return f"{lo:.4f}"
    return f"[{lo:.4f}, {NO_BOUND if math.isinf(hi) else f'{hi:.4f}'}]"
