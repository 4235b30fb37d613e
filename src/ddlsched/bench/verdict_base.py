"""What every verdict kind shares: the verdict words, :class:`Verdict` and :class:`Curve`,
Student t-intervals, and the reading of a claim's rows (its units, labels and values).

Split from :mod:`ddlsched.bench.verdict` (which re-exports the public names) so that the
kinds in other modules (:mod:`ddlsched.bench.verdict_lowest`) read rows the same way
without an import circle.
"""

from __future__ import annotations

import itertools
import json
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ddlsched.bench.aggregate import solved_rows
from ddlsched.bench.claims import Claim

__all__ = [
    "DEPENDS",
    "MISSING",
    "NOT_REPRODUCED",
    "REPRODUCED",
    "VACUOUS",
    "VERDICTS",
    "Curve",
    "Verdict",
    "move_signs",
    "t_interval",
]

REPRODUCED = "reproduced"
NOT_REPRODUCED = "not reproduced"
DEPENDS = "depends on seeds"
MISSING = "missing"
#: A bound that held with so much room (its closest approach, the largest ``lhs / rhs`` over
#: the rows, below the claim's ``vacuous_below``) that the comparison could not have failed.
VACUOUS = "vacuous"
#: Every verdict word, in the order of the per-paper count line.
VERDICTS = (REPRODUCED, NOT_REPRODUCED, DEPENDS, VACUOUS, MISSING)

#: Columns that identify an instance within a claim's groups (the pairing unit).
_UNIT = ["group", "preset", "instance_params", "instance_seed"]


@dataclass(frozen=True)
class Curve:
    """A claim's curve: x values, one curve per unit (label: its seed) and the mean."""

    over: str
    xs: tuple[float, ...]
    curves: dict[str, tuple[float, ...]]
    means: tuple[float, ...]
    halves: tuple[float, ...]


@dataclass(frozen=True)
class Verdict:
    """The outcome of one claim: verdict, our value as text, seeds, and the numbers."""

    claim: Claim
    verdict: str
    ours: str
    seeds: tuple[int, ...] = ()
    incomplete: bool = False
    note: str = ""
    numbers: dict[str, Any] = field(default_factory=dict)
    curve: Curve | None = None
    #: (units, distinct instances among them): units whose every label has the same
    #: objective count once (a generator that repeats an instance under several seeds).
    instances: tuple[int, int] | None = None
    #: (points read, points the claim's groups have): a pointwise claim read at fewer points
    #: than its rows name (a method missing at some of them) is incomplete.
    points: tuple[int, int] | None = None

    @property
    def shown(self) -> str:
        """The verdict as printed: a bound's closest approach beside it (``reproduced (closest
        lhs/rhs 0.97)``, ``vacuous (holds; closest lhs/rhs 0.0036)``), and ``incomplete:
        n/N seeds`` when seeds are missing, ``incomplete: n/N points`` when points are."""
        word = self.verdict
        closest = self.numbers.get("closest")
        if closest is not None and word in (REPRODUCED, VACUOUS, NOT_REPRODUCED):
            held = "holds; " if word == VACUOUS else ""
            word = f"{word} ({held}closest lhs/rhs {closest:.3g})"
        if not self.incomplete or self.verdict == MISSING:
            return word
        parts = []
        if not set(self.claim.seeds) <= set(self.seeds):
            parts.append(f"{len(self.seeds)}/{len(self.claim.seeds)} seeds")
        if self.points and self.points[0] < self.points[1]:
            parts.append(f"{self.points[0]}/{self.points[1]} points")
        return f"{word} (incomplete: {', '.join(parts)})" if parts else word


def t_interval(values: Any, confidence: float = 0.95) -> tuple[float, float]:
    """Mean and half-width of the Student t-interval (half-width inf below two values)."""
    from scipy.stats import t as student

    data = np.asarray(list(values), dtype=float)
    if data.size == 0:
        return math.nan, math.inf
    mean = float(data.mean())
    if data.size < 2:
        return mean, math.inf
    spread = float(data.std(ddof=1))
    half = float(student.ppf((1 + confidence) / 2, data.size - 1)) * spread / math.sqrt(data.size)
    return mean, half


def move_signs(curve: Any, tol: float = 0.0) -> list[int]:
    """Signs of consecutive moves (within ``tol``: flat, dropped), equal signs merged."""
    out: list[int] = []
    for before, after in itertools.pairwise(curve):
        move = after - before
        sign = 0 if abs(move) <= tol else (1 if move > 0 else -1)
        if sign and (not out or out[-1] != sign):
            out.append(sign)
    return out


def _spearman(xs: Any, ys: Any) -> float:
    from scipy.stats import spearmanr

    if len(set(ys)) < 2:
        return 0.0
    return float(spearmanr(xs, ys).statistic)


def _json_field(text: Any, key: str) -> Any:
    """The value at ``key`` of a JSON object; a dotted key walks nested objects
    (``theory.theorem1_bound``); None when absent."""
    try:
        value = json.loads(text or "{}")
    except (TypeError, ValueError):
        return None
    for part in key.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def _with_params(rows: pd.DataFrame, params: Any) -> pd.DataFrame:
    """The rows whose instance has every generator parameter of ``params`` at its value."""
    for name, value in params.items():
        rows = rows[rows["instance_params"].map(lambda t, n=name: _json_field(t, n)) == value]
    return rows


def _drop_params(rows: pd.DataFrame, names: Any) -> pd.DataFrame:
    """The rows with the generator parameters ``names`` taken out of ``instance_params`` (so
    that instances differing only in them pair up)."""
    names = set(names)
    rest = rows["instance_params"].map(
        lambda t: json.dumps({k: v for k, v in json.loads(t or "{}").items() if k not in names})
    )
    return rows.assign(instance_params=rest)


def _claim_rows(frame: pd.DataFrame, claim: Claim) -> pd.DataFrame:
    """Rows of the claim's suites, group, family, preset, instance parameters and seeds (and,
    with ``against_params``, of the instances at those parameters)."""
    keep = frame["suite"].isin(claim.suites) & frame["group"].isin(claim.groups)
    keep &= frame["instance_seed"].isin(claim.seeds)
    if claim.family:
        keep &= frame["family"] == claim.family
    if claim.preset:
        keep &= frame["preset"] == claim.preset
    rows = _with_params(frame[keep], claim.params)
    swap = claim.option("against_params")
    if swap and not rows.empty:
        rows = pd.concat([rows, _with_params(frame[keep], {**claim.params, **swap})])
    return rows


def _label_rows(rows: pd.DataFrame, label: str, swept: bool = False) -> pd.DataFrame:
    """Rows of a method label (``swept``: also its sweep points ``label[...]``)."""
    match = rows["label"] == label
    if swept:
        match |= rows["label"].str.startswith(f"{label}[")
    return rows[match]


def _values(rows: pd.DataFrame, metric: str, by: list[str]) -> pd.Series:
    """The metric per ``by`` key, mean over method seeds, of the rows with a schedule
    (``objective``, ``row.COLUMN``: a column of the row such as ``row.runtime_s``, the
    method's own time; else a key of the row's ``metrics``)."""
    solved = solved_rows(rows)
    if metric == "objective":
        value = solved["objective"].astype(float)
    elif metric.startswith("row.") and metric[4:] in solved.columns:
        value = pd.to_numeric(solved[metric[4:]], "coerce")
    else:
        value = pd.to_numeric(solved["metrics"].map(lambda t: _json_field(t, metric)), "coerce")
    solved = solved.assign(value=value).dropna(subset=["value"])
    if solved.empty:
        return pd.Series(dtype=float)
    return solved.groupby(by, sort=False)["value"].mean()


def _missing(claim: Claim, what: str) -> Verdict:
    where = f"suite {' or '.join(claim.suites)}, group {' or '.join(claim.groups)}"
    if claim.preset:
        where += f", preset {claim.preset}"
    note = f"no rows of {what} ({where}); run: {claim.run_command}"
    return Verdict(claim, MISSING, "-", note=note)


def _seeds(index: pd.Index) -> tuple[int, ...]:
    return tuple(sorted({int(s) for s in index.get_level_values("instance_seed")}))


def _decide(claim: Claim, seeds: tuple[int, ...], verdict: str, ours: str, **extra: Any) -> Verdict:
    incomplete = not set(claim.seeds) <= set(seeds)
    points = extra.get("points")
    incomplete |= bool(points and points[0] < points[1])
    return Verdict(claim, verdict, ours, seeds, incomplete, **extra)
