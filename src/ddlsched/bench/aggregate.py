"""Per-instance ratios of expectations and statistics of certified ratio intervals.

The ratio tables (:mod:`ddlsched.bench.tables`, which ``compare`` renders
too) and ``benchmarks/dmlrs_tables.py`` aggregate through here. ``docs/architecture.md``,
"Ratios": for a seeded (randomized) method the headline is the ratio of
expectations per instance. :func:`instance_ratios` therefore first reduces
a method's rows on one instance (one per seed) to ``E[obj]``, the mean
objective over the seeds that returned a schedule, and then takes the
certified ratio interval of ``E[obj]`` against the instance's reference
(:func:`ddlsched.bench.ratios.ratio_interval`): ``OPT / E[u]`` when
maximising, ``E[cost] / OPT`` when minimising. A method with one row per
instance gets its plain per-row ratio. Our choices: rows with status
``error``, ``time_limit`` or ``no_solution`` have no objective and do not
enter ``E[obj]`` (they are counted in their own columns); an instance whose
ratio is infinite (when maximising: ``E[obj] = 0`` while some schedule
earns more) is left out of the mean, median and worst over instances and
counted instead (:func:`finite_stats`), so that a single method that earned
nothing on one instance does not make a mean ``infinite``.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import pandas as pd

from ddlsched.bench.ratios import Reference, ratio_interval
from ddlsched.bench.retry import FAILED_STATUSES

__all__ = [
    "INSTANCE_RATIO_COLUMNS",
    "NO_BOUND",
    "IntervalStats",
    "finite_stats",
    "instance_ratios",
    "interval_stats",
    "mean_inf",
    "ratio_text",
    "solved_rows",
]

#: The columns of :func:`instance_ratios`, one line per method label and instance.
INSTANCE_RATIO_COLUMNS = (
    "family",
    "group",
    "label",
    "instance_key",
    "instance_id",
    "runs",
    "solved",
    "zero_runs",
    "mean_objective",
    "ref_proven",
    "ratio_lo",
    "ratio_hi",
)

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


def finite_stats(
    intervals: Sequence[tuple[float, float]],
) -> tuple[IntervalStats | None, int]:
    """:func:`interval_stats` of the intervals with a finite lower end, and how many had none.

    An interval whose lower end is infinite is a ratio known to be infinite
    (a maximised objective of 0 against a positive schedule); it would make
    every mean ``infinite``, so it is counted instead. An infinite upper end
    alone (no finite bound) stays: the statistics bracket it.
    """
    finite = [(lo, hi) for lo, hi in intervals if not math.isinf(lo)]
    return interval_stats(finite), len(intervals) - len(finite)


def _none(value: object) -> float | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return float(value)  # type: ignore[arg-type]


def solved_rows(rows: pd.DataFrame) -> pd.DataFrame:
    """The rows with an objective that counts: a schedule, and not a failed row."""
    return rows[rows["objective"].notna() & ~rows["status"].isin(sorted(FAILED_STATUSES))]


def instance_ratios(rated: pd.DataFrame) -> pd.DataFrame:
    """The ratio of expectations of every method label on every instance.

    ``rated`` holds result rows (the store's columns ``family, group, label,
    instance_key, instance_id, sense, status, objective``) with their
    instance's reference ``ref_primal, ref_dual, ref_proven``
    (:func:`ddlsched.bench.tables.rows_with_ratios`). One line per (family,
    group, label, instance): ``runs`` (its rows, one per seed), ``solved``
    (rows with an objective, not a failed row), ``zero_runs``
    (solved rows whose objective is 0: when maximising, runs that earned
    nothing), ``mean_objective`` (``E[obj]`` over the solved rows),
    ``ref_proven`` and ``ratio_lo, ratio_hi``, the certified interval of the
    ratio of ``E[obj]`` to the optimum (NaN without a solved row or a
    reference). Lines come in the order of the rows' first appearance.
    """
    lines = []
    keys = ["family", "group", "label", "instance_key"]
    for (family, group, label, instance_key), rows in rated.groupby(keys, sort=False):
        solved = solved_rows(rows)
        first = rows.iloc[0]
        mean = float(solved["objective"].mean()) if len(solved) else math.nan
        reference = Reference(
            primal=_none(first["ref_primal"]),
            dual=_none(first["ref_dual"]),
            proven=bool(first["ref_proven"]),
        )
        ratio = ratio_interval(_none(mean), reference, first["sense"])
        lo, hi = ratio if ratio is not None else (math.nan, math.nan)
        lines.append(
            {
                "family": family,
                "group": group,
                "label": label,
                "instance_key": instance_key,
                "instance_id": first["instance_id"],
                "runs": len(rows),
                "solved": len(solved),
                "zero_runs": int((solved["objective"] == 0).sum()),
                "mean_objective": mean,
                "ref_proven": reference.proven,
                "ratio_lo": lo,
                "ratio_hi": hi,
            }
        )
    return pd.DataFrame(lines, columns=list(INSTANCE_RATIO_COLUMNS))
