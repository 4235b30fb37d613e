"""Kind ``scaling``: a method's running time grows no faster than the paper's order.

A complexity theorem (SJF-BCO's Theorem 6, ``O(n_g |J| N log N log T)``) says
how the running time grows with the instance's size. Over a sweep of sizes
(``over``: the rows' ``instance_size``, or a generator parameter) the claim
fits the log-log slope of the time (``metric``: a row column, ``runtime_s``
or ``wall_s``, or a key of the rows' metrics) against the size:

* per instance seed, the least-squares slope of ``log time`` on ``log size``
  over that seed's points (a seed needs two sizes at least);
* the fitted exponent, the slope of the per-size median over the seeds (a
  median of repeats, robust to a load spike on a shared machine).

``exponent`` is the paper's order as an exponent of the size at the swept
sizes (its log factors folded in: the claims file says how). The rule:

* **reproduced**: the t-interval of the mean per-seed slope lies at or
  below ``exponent`` (the time grows no faster than the paper says);
* **not reproduced**: it lies wholly above;
* **depends on seeds** otherwise.

*Ours* prints the fitted exponent, the per-seed slopes' mean and
half-width, the sizes and the time range.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ddlsched.bench.aggregate import solved_rows
from ddlsched.bench.claims import Claim
from ddlsched.bench.verdict_base import (
    DEPENDS,
    NOT_REPRODUCED,
    REPRODUCED,
    Verdict,
    _decide,
    _json_field,
    _label_rows,
    _missing,
    t_interval,
)

__all__ = ["TIME_COLUMNS", "log_log_slope", "scaling"]

#: Row columns a ``scaling`` claim may read as its time (other metrics: the rows' metrics).
TIME_COLUMNS = ("runtime_s", "wall_s")


def log_log_slope(sizes: list[float], times: list[float]) -> float:
    """The least-squares slope of ``log time`` on ``log size`` (nan below two sizes)."""
    x = np.log(np.asarray(sizes, dtype=float))
    y = np.log(np.asarray(times, dtype=float))
    if len(set(x.tolist())) < 2:
        return math.nan
    return float(np.polyfit(x, y, 1)[0])


def _points(claim: Claim, rows: pd.DataFrame) -> pd.DataFrame:
    """One row per (seed, size): the time, mean over method seeds, of the rows with a schedule."""
    solved = solved_rows(_label_rows(rows, claim.method))
    metric, over = claim.metric, claim.option("over")
    if metric in TIME_COLUMNS:
        time = pd.to_numeric(solved[metric], "coerce")
    else:
        time = pd.to_numeric(solved["metrics"].map(lambda t: _json_field(t, metric)), "coerce")
    if over == "instance_size":
        size = pd.to_numeric(solved["instance_size"], "coerce")
    else:
        size = pd.to_numeric(
            solved["instance_params"].map(lambda t: _json_field(t, over)), "coerce"
        )
    points = pd.DataFrame({"seed": solved["instance_seed"], "size": size, "time": time}).dropna()
    points = points[(points["size"] > 0) & (points["time"] > 0)]
    return points.groupby(["seed", "size"], as_index=False)["time"].mean()


def scaling(claim: Claim, rows: pd.DataFrame) -> Verdict:
    """The verdict of a ``scaling`` claim (module docstring) on the claim's rows."""
    points = _points(claim, rows)
    if points.empty:
        return _missing(claim, f"{claim.method} with {claim.metric} over {claim.option('over')}")
    slopes = {
        int(seed): log_log_slope(list(part["size"]), list(part["time"]))
        for seed, part in points.groupby("seed")
    }
    slopes = {seed: s for seed, s in slopes.items() if not math.isnan(s)}
    median = points.groupby("size")["time"].median()
    fitted = log_log_slope(list(median.index), list(median.values))
    if not slopes:
        return _missing(claim, f"two sizes of {claim.method} on one seed")
    mean, half = t_interval(slopes.values(), claim.option("confidence"))
    paper = float(claim.option("exponent"))
    if mean + half <= paper:
        verdict = REPRODUCED
    elif mean - half > paper:
        verdict = NOT_REPRODUCED
    else:
        verdict = DEPENDS
    sizes = sorted(median.index)
    ours = (
        f"exponent {fitted:.3g} (median over seeds; per seed {mean:.3g} ± {half:.2g}) "
        f"vs the paper's {paper:.3g}; size {sizes[0]:g}-{sizes[-1]:g}, "
        f"{claim.metric} {median.min():.3g}-{median.max():.3g}"
    )
    numbers = {
        "exponent": fitted,
        "seed_slopes": slopes,
        "mean": mean,
        "half_width": half,
        "paper_exponent": paper,
        "median_time": {str(k): float(v) for k, v in median.items()},
    }
    return _decide(claim, tuple(sorted(slopes)), verdict, ours, numbers=numbers)
