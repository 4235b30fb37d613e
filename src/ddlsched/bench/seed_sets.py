"""Widths on a second set of instance seeds: do the same methods reach the same widths?

A certified interval's width (:mod:`ddlsched.bench.intervals_report`) is measured on the
instance seeds a suite ran. Whether it says something about the method rather than about
those seeds is checked by running the same suite cut on seeds it never ran (chosen before
the run) and comparing. :func:`seed_set_table` does that comparison from the rows, so the
verdict recomputes exactly; ``python benchmarks/intervals.py ... --fresh REF=FRESH``
appends it to the interval report (:func:`markdown`).

Per table (family and group; named with the reference rows' suite) of the reference rows
that the fresh rows also have:

* **methods compared**: the method labels with rows in the group on both sides (each
  directory's rows of its latest code per method, as every table). A label on one side only
  is named in ``left out`` and not used, on either side: the widths are the same methods'.
* **widths**: per instance, the width of its certified interval from the compared labels'
  rows only (:func:`ddlsched.bench.tables.instance_intervals`: the best schedule against the
  best bound); per side the widest (and its instance) and the mean of the finite widths.
* **gap**: fresh minus reference, in percentage points, of the widest and of the mean.
  ``within`` is ``yes`` when both gaps are within ``tolerance`` (1 point by default).
* **partial**: a compared label whose rows cover a different share of the instances on the
  two sides (a method still running on one side, or left out on some instances) is named
  with both shares; ``within`` then reads ``partial``: the check is not yet on the same
  methods everywhere.

A fresh directory whose rows share an instance (its key: family, preset, seed and
parameters) with the reference is an error: those seeds are not fresh.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ddlsched.bench.ratios import worst_width
from ddlsched.bench.tables import instance_intervals, load_results, rows_with_ratios, width_text
from ddlsched.errors import DdlschedError

__all__ = ["TOLERANCE", "SeedSetLine", "load_directories", "markdown", "seed_set_table"]

#: The largest gap, in widths (0.01: one percentage point), read as "the same width".
TOLERANCE = 0.01


@dataclass(frozen=True)
class SeedSetLine:
    """One table's widths on the reference seeds and on the fresh seeds."""

    family: str
    group: str
    suite: str  # the reference rows' suite ("" when the rows name none)
    compared: tuple[str, ...]  # labels with rows on both sides
    left_out: tuple[str, ...]  # labels on one side only ("label (reference)" / "(fresh)")
    partial: tuple[str, ...]  # "label a/n -> b/m": coverage differs between the sides
    seeds: tuple[tuple[int, ...], tuple[int, ...]]  # instance seeds: reference, fresh
    instances: tuple[int, int]
    widest: tuple[float, float]
    widest_at: tuple[str, str]  # the instances of the widest widths
    mean: tuple[float, float]
    tolerance: float = TOLERANCE

    @property
    def name(self) -> str:
        """``suite / family / group`` (``family / group`` without a suite), as the interval
        report's overview names its tables."""
        return " / ".join(p for p in (self.suite, self.family, self.group) if p)

    @property
    def gap_widest(self) -> float:
        """Fresh minus reference widest width (a fraction; NaN when either is unknown)."""
        return _gap(*self.widest)

    @property
    def gap_mean(self) -> float:
        """Fresh minus reference mean width (a fraction)."""
        return _gap(*self.mean)

    @property
    def within(self) -> str:
        """``yes``, ``no``, ``partial`` (coverage differs) or ``-`` (a width unknown)."""
        gaps = (self.gap_widest, self.gap_mean)
        if any(math.isnan(g) for g in gaps):
            return "-"
        if self.partial:
            return "partial"
        return "yes" if all(abs(g) <= self.tolerance + 1e-12 for g in gaps) else "no"


def _gap(reference: float, fresh: float) -> float:
    if math.isnan(reference) or math.isnan(fresh) or math.isinf(reference) or math.isinf(fresh):
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


def _seeds_of(widths: pd.DataFrame) -> tuple[int, ...]:
    """The instance seeds of a side (instances read from files have none)."""
    return tuple(sorted({int(s) for s in widths["instance_seed"].dropna()}))


def _coverage(rows: pd.DataFrame, label: str) -> tuple[int, int]:
    have = rows.loc[rows["label"] == label, "instance_key"].nunique()
    return have, rows["instance_key"].nunique()


def _side(widths: pd.DataFrame) -> tuple[float, str, float]:
    known = widths[widths["width"].notna()]
    if known.empty:
        return math.nan, "-", math.nan
    widest = worst_width(known["width"].tolist())
    at = str(known.loc[known["width"] == widest, "instance_id"].iloc[0])
    finite = known["width"][~known["width"].map(math.isinf)]
    return widest, at, float(finite.mean()) if len(finite) else math.nan


def seed_set_table(
    reference: pd.DataFrame, fresh: pd.DataFrame, tolerance: float = TOLERANCE
) -> list[SeedSetLine]:
    """One :class:`SeedSetLine` per (family, group) with rows on both sides, in the
    reference's order (module docstring)."""
    shared = set(reference["instance_key"]) & set(fresh["instance_key"])
    if shared:
        ids = sorted(set(reference.loc[reference["instance_key"].isin(shared), "instance_id"]))
        raise DdlschedError(
            f"the fresh rows share {len(ids)} instance(s) with the reference ({', '.join(ids[:3])}"
            f"{', ...' if len(ids) > 3 else ''}): their seeds are not fresh"
        )
    out = []
    pairs = zip(reference["family"], reference["group"], strict=True)
    for family, group in dict.fromkeys(pairs):
        ref = reference[(reference["family"] == family) & (reference["group"] == group)]
        new = fresh[(fresh["family"] == family) & (fresh["group"] == group)]
        if new.empty:
            continue
        ref_labels, new_labels = set(ref["label"]), set(new["label"])
        compared = sorted(ref_labels & new_labels)
        left_out = sorted(
            [f"{label} (reference)" for label in ref_labels - new_labels]
            + [f"{label} (fresh)" for label in new_labels - ref_labels]
        )
        ref, new = ref[ref["label"].isin(compared)], new[new["label"].isin(compared)]
        partial = []
        for label in compared:
            (a, n), (b, m) = _coverage(ref, label), _coverage(new, label)
            if a * m != b * n:
                partial.append(f"{label} {a}/{n} -> {b}/{m}")
        sides = [_instance_widths(ref), _instance_widths(new)] if compared else []
        if not sides:
            continue
        (w0, at0, m0), (w1, at1, m1) = _side(sides[0]), _side(sides[1])
        out.append(
            SeedSetLine(
                family=family,
                group=group,
                suite=_suite_of(ref),
                compared=tuple(compared),
                left_out=tuple(left_out),
                partial=tuple(partial),
                seeds=tuple(_seeds_of(s) for s in sides),
                instances=(len(sides[0]), len(sides[1])),
                widest=(w0, w1),
                widest_at=(at0, at1),
                mean=(m0, m1),
                tolerance=tolerance,
            )
        )
    return out


def _seeds_text(seeds: Sequence[int]) -> str:
    seeds = sorted(seeds)
    if not seeds:
        return "files"
    if seeds and seeds == list(range(seeds[0], seeds[-1] + 1)) and len(seeds) > 2:
        return f"{seeds[0]}-{seeds[-1]}"
    return ", ".join(str(s) for s in seeds)


def _points(gap: float) -> str:
    return "-" if math.isnan(gap) else f"{100 * gap:+.2f}"


def _width(width: float) -> str:
    """Two decimals (gaps near a point need them); ``width_text``'s words otherwise."""
    return f"{100 * width:.2f} %" if math.isfinite(width) else width_text(width)


def markdown(lines: Sequence[SeedSetLine]) -> list[str]:
    """The comparison as a Markdown table and, under it, each table's methods: compared,
    left out (one side only) and partial."""
    tol = f"{100 * (lines[0].tolerance if lines else TOLERANCE):g}"
    out = [
        "| table | seeds: reference -> fresh | widest width: reference -> fresh | mean width "
        f"| gap in points: widest, mean | within {tol} point |",
        "|:---|:---|:---|:---|:---|:---|",
    ]
    for line in lines:
        (w0, w1), (a0, a1) = line.widest, line.widest_at
        within = line.within
        out.append(
            f"| {line.name} | {_seeds_text(line.seeds[0])} -> "
            f"{_seeds_text(line.seeds[1])} ({line.instances[0]} / {line.instances[1]} "
            f"instances) | {_width(w0)} ({a0}) -> {_width(w1)} ({a1}) | "
            f"{_width(line.mean[0])} -> {_width(line.mean[1])} | "
            f"{_points(line.gap_widest)}, {_points(line.gap_mean)} | "
            f"{within if within in ('yes', '-') else f'**{within}**'} |"
        )
    out.append("")
    for line in lines:
        text = f"- {line.name}: compared {', '.join(line.compared)}"
        for side in ("reference", "fresh"):
            only = [x.rsplit(" (", 1)[0] for x in line.left_out if x.endswith(f"({side})")]
            if only:
                text += f"; on the {side} seeds only (left out): {', '.join(only)}"
        if line.partial:
            text += "; **partial**, instances with rows (reference -> fresh): " + "; ".join(
                line.partial
            )
        out.append(text + ".")
    return out
