"""Widths on a second set of instance seeds: do the same methods reach the same widths?

A certified interval's width (:mod:`ddlsched.bench.intervals_report`) is measured on the
instance seeds a suite ran. Whether it says something about the method rather than about
those seeds is checked by running the same suite cut on seeds it never ran (chosen before
the run) and comparing. :func:`seed_set_table` does that comparison from the rows, so the
verdict recomputes exactly; :func:`section` is the Markdown that
``python benchmarks/intervals.py ... --fresh REF=FRESH`` and ``ddlsched reproduce PAPER
--fresh-seeds FIRST`` add to the interval report.

Per table (family and group, named ``prefix / family / group``: the caller's prefix, else the
reference rows' suite) of either side:

* **methods compared**: the method labels with rows in the group on both sides (each
  directory's rows of its latest code per method, as every table). A label on one side only
  is named as left out and not used, on either side: the widths are the same methods'.
* **widths**: per instance, the width of its certified interval from the compared labels'
  rows only (:func:`ddlsched.bench.tables.instance_intervals`: the best schedule against the
  best bound); per side the widest (and its instance), the mean of the finite widths, and
  how many instances have no finite bound.
* **gap**: fresh minus reference, in percentage points, of the widest and of the mean.
* **within** (``tolerance``: 1 point by default): ``partial`` when a compared label's rows
  cover a different share of the instances on the two sides (a method not yet run on every
  instance): the check is not yet on the same methods everywhere; else ``-`` when no width
  is known, or no side has a finite bound (a table without a bound by design); ``no`` when
  one side has a finite widest width and the other not; else ``yes`` when both gaps are
  within the tolerance, ``no`` otherwise. A table with rows on one side only, or with no
  label on both, is listed with a note, never dropped. A label whose rows ran another
  method or other parameters on the two sides is an error: the widths would not be the same
  method's.
* **p, seed splits** (widest, mean; descriptive: ``within`` does not read it). Both sides'
  instance seeds are pooled, every seed with all its instances (a sweep's points, a preset's
  twins, and instances without a width, which then count in no width), and split again into
  two sets of the sides' sizes. For each split the same gaps are computed as above (the mean
  over instances, not over seeds); p is the share of the splits with a defined gap whose gap
  is at least the observed one in size, in either direction. Every split is used when there
  are at most :data:`MAX_SPLITS`; else that many are drawn uniformly, with replacement, by a
  generator of seed 0 (the same draws for every table of the same sizes), and p is
  ``(k + 1) / (n + 1)`` for k of the n draws, so never 0. Under the hypothesis that the two
  sets of seeds are alike (they come from the same generator), p is how often a gap this
  large arises from the choice of seeds alone; a small p says such a gap is rare among the
  splits, not why it arose (methods fitted to the reference seeds, harder draws, other run
  conditions), and a large one says the gap is consistent with a random choice of seeds,
  not that it came from one. With n and m seeds the smallest p is ``2 / C(n + m, n)`` when
  n = m (a split and its mirror image give the same gap), 0.10 for 3 + 3. p = 1 on the widest
  when the two seeds with the widest widths are on opposite sides: every split's widest gap
  is then at least the observed one, their difference. ``-`` (and ``splits`` (0, 0)) for a
  ``partial`` table, when an instance has no seed (read from a file) or a seed is on both
  sides; ``-`` for one statistic when its observed gap is not finite (the widest when an
  instance has no finite bound).

A fresh directory whose rows share an instance (its key: family, preset, seed and
parameters) with the reference is an error: those seeds are not fresh.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import numpy as np
import pandas as pd

from ddlsched.bench.ratios import worst_width
from ddlsched.bench.tables import instance_intervals, load_results, rows_with_ratios, width_text
from ddlsched.errors import DdlschedError
from ddlsched.rng import make_rng

__all__ = [
    "FRESH_HEADING",
    "MAX_SPLITS",
    "TOLERANCE",
    "SeedSetLine",
    "load_directories",
    "markdown",
    "section",
    "seed_set_table",
]

#: The largest gap, in widths (0.01: one percentage point), read as "the same width".
TOLERANCE = 0.01

#: The most splits of the pooled seeds enumerated; beyond it, this many are drawn.
MAX_SPLITS = 10_000

#: The heading of the comparison's section in the interval report.
FRESH_HEADING = "## Fresh instance seeds: the widths computed from the rows"

_NAN2 = (math.nan, math.nan)


@dataclass(frozen=True)
class SeedSetLine:
    """One table's widths on the reference seeds and on the fresh seeds (pairs: reference,
    fresh)."""

    family: str
    group: str
    prefix: str  # the table's name before "family / group" ("" for none)
    compared: tuple[str, ...] = ()  # labels with rows on both sides
    left_out: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())  # labels on one side only
    partial: tuple[str, ...] = ()  # "label a/n -> b/m": coverage differs between the sides
    seeds: tuple[tuple[int, ...], tuple[int, ...]] = ((), ())  # instance seeds
    instances: tuple[int, int] = (0, 0)
    unbounded: tuple[int, int] = (0, 0)  # instances without a finite bound
    widest: tuple[float, float] = _NAN2
    widest_at: tuple[str, str] = ("-", "-")  # the instances of the widest widths
    mean: tuple[float, float] = _NAN2  # of the finite widths
    p_value: tuple[float, float] = _NAN2  # seed splits' p: widest, mean (NaN: none)
    splits: tuple[int, int] = (0, 0)  # splits evaluated, of how many ((0, 0): no test)
    note: str = ""  # why nothing was compared ("" when something was)
    tolerance: float = TOLERANCE

    @property
    def name(self) -> str:
        """``prefix / family / group`` (``family / group`` without a prefix)."""
        return " / ".join(p for p in (self.prefix, self.family, self.group) if p)

    @property
    def gap_widest(self) -> float:
        """Fresh minus reference widest width (a fraction; NaN unless both are finite)."""
        return _gap(*self.widest)

    @property
    def gap_mean(self) -> float:
        """Fresh minus reference mean width (a fraction; NaN unless both are finite)."""
        return _gap(*self.mean)

    @property
    def within(self) -> str:
        """``yes``, ``no``, ``partial`` or ``-`` (the module docstring's rule)."""
        if self.note:
            return "-"
        if self.partial:
            return "partial"
        if any(math.isnan(w) for w in self.widest):
            return "-"
        finite = [math.isfinite(w) for w in self.widest]
        if not any(finite):
            return "-"
        if not all(finite):
            return "no"
        gaps = (self.gap_widest, self.gap_mean)
        if any(math.isnan(g) for g in gaps):
            return "-"
        return "yes" if all(abs(g) <= self.tolerance + 1e-12 for g in gaps) else "no"


def _gap(reference: float, fresh: float) -> float:
    if not (math.isfinite(reference) and math.isfinite(fresh)):
        return math.nan
    return fresh - reference


def load_directories(directories: Sequence[str | Path]) -> pd.DataFrame:
    """The rows of several results directories, each its rows of the latest code per method
    (:func:`ddlsched.bench.tables.load_results`), one frame; a directory without rows is a
    :class:`DdlschedError` naming it."""
    frames = []
    for directory in directories:
        frame = load_results(directory)
        if frame.empty:
            raise DdlschedError(f"no rows in {directory}")
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def _instance_widths(rows: pd.DataFrame) -> pd.DataFrame:
    """Per instance: ``instance_id``, ``instance_seed`` and ``width`` (NaN: no interval)."""
    lines = instance_intervals(rows_with_ratios(rows.reset_index(drop=True)))
    widths = lines.groupby("instance_key")["width"].agg(lambda w: worst_width(w.tolist()))
    ids = rows.drop_duplicates("instance_key").set_index("instance_key")
    out = ids[["instance_id", "instance_seed"]].join(widths.rename("width"))
    return out.reset_index()


def _suite_of(rows: pd.DataFrame) -> str:
    if "suite" not in rows:
        return ""
    return ", ".join(sorted({str(s) for s in rows["suite"].dropna()}))


def _seeds_of(rows: pd.DataFrame) -> tuple[int, ...]:
    """The instance seeds of a side (instances read from files have none)."""
    return tuple(sorted({int(s) for s in rows["instance_seed"].dropna()}))


def _method_runs(rows: pd.DataFrame, label: str) -> set[str]:
    """The method and parameters a label's rows ran (``method {params}``)."""
    same = rows[rows["label"] == label]
    params = same["params"] if "params" in same else pd.Series("", index=same.index)
    return {
        f"{m} {p}" if p and p != "{}" else str(m)
        for m, p in zip(same["method"], params.fillna(""), strict=True)
    }


def _coverage(rows: pd.DataFrame, label: str) -> tuple[int, int]:
    have = rows.loc[rows["label"] == label, "instance_key"].nunique()
    return have, rows["instance_key"].nunique()


def _side(widths: pd.DataFrame) -> tuple[float, str, float, int]:
    """The widest width (and its instance), the mean finite width, the unbounded count."""
    known = widths[widths["width"].notna()]
    if known.empty:
        return math.nan, "-", math.nan, 0
    widest = worst_width(known["width"].tolist())
    at = str(known.loc[known["width"] == widest, "instance_id"].iloc[0])
    unbounded = known["width"].map(math.isinf)
    finite = known["width"][~unbounded]
    return widest, at, float(finite.mean()) if len(finite) else math.nan, int(unbounded.sum())


def _seed_totals(widths: pd.DataFrame) -> pd.DataFrame | None:
    """Per instance seed: ``count`` and ``total`` of its finite widths and its ``widest``
    known width (-inf when none is known); None when an instance has no seed."""
    if widths.empty or widths["instance_seed"].isna().any():
        return None
    finite = widths["width"].where(widths["width"].map(math.isfinite))
    totals = (
        widths.assign(finite=finite)
        .groupby("instance_seed")
        .agg(count=("finite", "count"), total=("finite", "sum"), widest=("width", "max"))
    )
    return totals.fillna({"widest": -math.inf})


def _split_masks(pooled: int, fresh: int) -> tuple[np.ndarray, int]:
    """Boolean masks (a row per split: True for the seeds on the fresh side), and how many
    splits there are: all of them up to :data:`MAX_SPLITS`, else that many drawn."""
    total = math.comb(pooled, fresh)
    if total <= MAX_SPLITS:
        masks = np.zeros((total, pooled), dtype=bool)
        for row, chosen in enumerate(itertools.combinations(range(pooled), fresh)):
            masks[row, list(chosen)] = True
        return masks, total
    order = make_rng(0).random((MAX_SPLITS, pooled)).argsort(axis=1)
    masks = np.zeros((MAX_SPLITS, pooled), dtype=bool)
    np.put_along_axis(masks, order[:, :fresh], True, axis=1)
    return masks, total


def _split_test(
    ref: pd.DataFrame, new: pd.DataFrame
) -> tuple[tuple[float, float], tuple[int, int]]:
    """The seed splits' p values (widest, mean) and the splits (evaluated, all): the module
    docstring's rule."""
    sides = [_seed_totals(widths) for widths in (ref, new)]
    if any(s is None for s in sides) or set(sides[0].index) & set(sides[1].index):
        return _NAN2, (0, 0)
    pooled = pd.concat(sides)
    on_fresh_side = np.arange(len(pooled)) >= len(sides[0])
    masks, total = _split_masks(len(pooled), int(on_fresh_side.sum()))
    drawn = len(masks) < total
    observed = _gaps(pooled, on_fresh_side[np.newaxis, :])
    widest_p, mean_p = (
        _share_as_large(gaps, float(observed_gap[0]), drawn)
        for gaps, observed_gap in zip(_gaps(pooled, masks), observed, strict=True)
    )
    return (widest_p, mean_p), (len(masks), total)


def _share_as_large(gaps: np.ndarray, observed_gap: float, drawn: bool) -> float:
    """The share of the splits with a defined gap whose gap is at least ``observed_gap`` in
    size (``(k + 1) / (n + 1)`` when drawn); NaN when the observed gap is not finite."""
    if not math.isfinite(observed_gap):
        return math.nan
    defined = gaps[np.isfinite(gaps)]
    hits = int((np.abs(defined) >= abs(observed_gap) - 1e-12).sum())
    return (hits + 1) / (len(defined) + 1) if drawn else hits / len(defined)


def _gaps(pooled: pd.DataFrame, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per split (a mask row: True on the fresh side), fresh minus reference: the widest
    width and the mean of the finite widths (not finite where a side has no finite width or,
    for the widest, an instance without a finite bound)."""
    count, total, widest = (pooled[c].to_numpy(dtype=float) for c in ("count", "total", "widest"))
    with np.errstate(invalid="ignore", divide="ignore"):
        means = (masks @ total) / (masks @ count) - (~masks @ total) / (~masks @ count)
        if not np.all(widest < math.inf):
            return np.full(len(masks), math.nan), means
        fresh_widest = np.where(masks, widest, -np.inf).max(axis=1)
        return fresh_widest - np.where(masks, -np.inf, widest).max(axis=1), means


def _table_line(
    ref: pd.DataFrame, new: pd.DataFrame, family: str, group: str, prefix: str, tol: float
) -> SeedSetLine:
    base = {"family": family, "group": group, "prefix": prefix, "tolerance": tol}
    if ref.empty or new.empty:
        side = "fresh" if new.empty else "reference"
        return SeedSetLine(**base, note=f"no rows on the {side} seeds")
    ref_labels, new_labels = set(ref["label"]), set(new["label"])
    compared = sorted(ref_labels & new_labels)
    left_out = (tuple(sorted(ref_labels - new_labels)), tuple(sorted(new_labels - ref_labels)))
    if not compared:
        return SeedSetLine(**base, left_out=left_out, note="no method with rows on both sides")
    ref, new = ref[ref["label"].isin(compared)], new[new["label"].isin(compared)]
    for label in compared:
        runs = [_method_runs(rows, label) for rows in (ref, new)]
        if runs[0] != runs[1]:
            raise DdlschedError(
                f"{' / '.join(p for p in (prefix, family, group) if p)}: {label} is "
                f"{', '.join(sorted(runs[0]))} on the reference seeds and "
                f"{', '.join(sorted(runs[1]))} on the fresh ones: not the same method"
            )
    partial = []
    for label in compared:
        (a, n), (b, m) = _coverage(ref, label), _coverage(new, label)
        if a * m != b * n:
            partial.append(f"{label} {a}/{n} -> {b}/{m}")
    widths = [_instance_widths(rows) for rows in (ref, new)]
    sides = [_side(w) for w in widths]
    p_value, splits = (_NAN2, (0, 0)) if partial else _split_test(*widths)
    return SeedSetLine(
        **base,
        compared=tuple(compared),
        left_out=left_out,
        partial=tuple(partial),
        seeds=(_seeds_of(ref), _seeds_of(new)),
        instances=(ref["instance_key"].nunique(), new["instance_key"].nunique()),
        unbounded=(sides[0][3], sides[1][3]),
        widest=(sides[0][0], sides[1][0]),
        widest_at=(sides[0][1], sides[1][1]),
        mean=(sides[0][2], sides[1][2]),
        p_value=p_value,
        splits=splits,
    )


def seed_set_table(
    reference: pd.DataFrame,
    fresh: pd.DataFrame,
    tolerance: float = TOLERANCE,
    prefix: str | None = None,
) -> list[SeedSetLine]:
    """One :class:`SeedSetLine` per (family, group) of either side, the reference's first
    (module docstring); ``prefix`` names the tables (default: the reference rows' suite)."""
    shared = set(reference["instance_key"]) & set(fresh["instance_key"])
    if shared:
        ids = sorted(set(reference.loc[reference["instance_key"].isin(shared), "instance_id"]))
        raise DdlschedError(
            f"the fresh rows share {len(ids)} instance(s) with the reference ({', '.join(ids[:3])}"
            f"{', ...' if len(ids) > 3 else ''}): their seeds are not fresh"
        )
    name = _suite_of(reference) if prefix is None else prefix
    tables = [*zip(reference["family"], reference["group"], strict=True)]
    tables += zip(fresh["family"], fresh["group"], strict=True)
    out = []
    for family, group in dict.fromkeys(tables):
        ref = reference[(reference["family"] == family) & (reference["group"] == group)]
        new = fresh[(fresh["family"] == family) & (fresh["group"] == group)]
        out.append(_table_line(ref, new, family, group, name, tolerance))
    return out


def _seeds_text(seeds: Sequence[int]) -> str:
    seeds = sorted(seeds)
    if not seeds:
        return "files"
    if seeds == list(range(seeds[0], seeds[-1] + 1)) and len(seeds) > 2:
        return f"{seeds[0]}-{seeds[-1]}"
    return ", ".join(str(s) for s in seeds)


def _points(gap: float) -> str:
    if math.isnan(gap):
        return "-"
    return f"{100 * gap:+.2f}" if round(100 * gap, 2) else "+0.00"  # never "-0.00"


def _width(width: float) -> str:
    """Two decimals (gaps near a point need them); ``width_text``'s words otherwise."""
    return f"{100 * width:.2f} %" if math.isfinite(width) else width_text(width)


def _row(line: SeedSetLine) -> str:
    within = line.within
    shown = within if within in ("yes", "-") else f"**{within}**"
    if line.note:
        return f"| {line.name} | - | - | - | - | - | {shown} |"
    (w0, w1), (a0, a1) = line.widest, line.widest_at
    return (
        f"| {line.name} | {_seeds_text(line.seeds[0])} -> {_seeds_text(line.seeds[1])} "
        f"({line.instances[0]} / {line.instances[1]} instances) | {_width(w0)} ({a0}) -> "
        f"{_width(w1)} ({a1}) | {_width(line.mean[0])} -> {_width(line.mean[1])} | "
        f"{_points(line.gap_widest)}, {_points(line.gap_mean)} | {_p_text(line)} | {shown} |"
    )


def _p_text(line: SeedSetLine) -> str:
    """The seed splits' p values and how many splits were evaluated."""
    if all(math.isnan(p) for p in line.p_value):
        return "-"
    values = ", ".join("-" if math.isnan(p) else f"{p:.2f}" for p in line.p_value)
    done, total = line.splits
    if done == total:
        return f"{values} (all {total:,} splits)"
    count = f"{Decimal(total):.1e}".lower()  # Decimal: C(n, m) can pass float's range
    return f"{values} ({done:,} of {count} splits, drawn)"


def _methods(line: SeedSetLine) -> str:
    if line.note:
        return f"- {line.name}: {line.note}."
    text = f"- {line.name}: compared {', '.join(line.compared)}"
    for side, only in zip(("reference", "fresh"), line.left_out, strict=True):
        if only:
            text += f"; on the {side} seeds only (left out): {', '.join(only)}"
    if any(line.unbounded):
        text += (
            f"; without a finite bound: {line.unbounded[0]} of {line.instances[0]} reference "
            f"and {line.unbounded[1]} of {line.instances[1]} fresh instances"
        )
    if line.partial:
        text += "; **partial**, instances with rows (reference -> fresh): " + "; ".join(
            line.partial
        )
    return text + "."


def markdown(lines: Sequence[SeedSetLine]) -> list[str]:
    """The comparison as a Markdown table and, under it, each table's methods: compared,
    left out (one side only), instances without a bound, partial, or why none."""
    tol = f"{100 * (lines[0].tolerance if lines else TOLERANCE):g}"
    out = [
        "| table | seeds: reference -> fresh | widest width: reference -> fresh | mean width "
        "| gap in points: widest, mean | p, seed splits: widest, mean "
        f"| within {tol} point |",
        "|:---|:---|:---|:---|:---|:---|:---|",
        *map(_row, lines),
        "",
        *map(_methods, lines),
    ]
    return out


def section(
    lines: Sequence[SeedSetLine], sources: Sequence[tuple[str, Sequence[str]]]
) -> list[str]:
    """The interval report's section: :data:`FRESH_HEADING`, which directories were compared
    (``sources``: each reference and its fresh directories, as shown), and :func:`markdown`."""
    pairs = "; ".join(
        f"`{ref}` against " + ", ".join(f"`{f}`" for f in new) for ref, new in sources
    )
    return [
        FRESH_HEADING,
        "",
        "Per table, the rows of a results directory above (reference) against those of the same "
        "suite cut run on instance seeds it never ran (fresh), each side from the methods with "
        f"rows on both only (`ddlsched.bench.seed_sets`): {pairs}.",
        "",
        *markdown(lines),
    ]
