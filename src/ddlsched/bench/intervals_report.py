"""The interval report: how wide each table's certified ratio intervals are.

``python benchmarks/intervals.py RESULTS_DIR ... --out FILE`` and ``ddlsched reproduce``
write it (:func:`report`; :func:`directory_report` for one results directory).

At paper scale the optimum is rarely proven and a method's ratio is the certified
interval ``[lo, hi]`` of :mod:`ddlsched.bench.ratios` (``[h / best schedule, h / best
bound]`` when minimising, ``[best schedule / h, best bound / h]`` when maximising). Its
width ``hi / lo - 1`` equals the instance's relative gap ``best schedule / best bound - 1``
(inverted when maximising) whatever ``h``; a ratio is citable when that width is small
(at most 10 %, :data:`CITABLE_WIDTH`).

One table per results directory and instance group, one line per method with a schedule
(heuristics, exact methods, and bound methods that also return a schedule, e.g.
column generation's rounding: every method with a ratio), computed by the library
(:func:`ddlsched.bench.tables.instance_intervals`, the numbers of ``ddlsched bench
table``):

``instances``       instances of the group where the method has a ratio
``mean ratio``      the ``mean ratio`` of ``bench table`` (the means of the interval ends)
``widest``          the interval of the instance where the width is largest, and that instance
``width``           its width ``hi / lo - 1``; **bold** with ``> 10 %`` when above 10 %
``> 10 %``          instances whose width exceeds 10 %, of ``instances``
``limit``           per instance, which end limits the interval, counted over the instances
                    (:func:`ddlsched.bench.ratios.limiting_side`, a convention of ours: where
                    the optimum lies inside the bracket is unknown. ``none``: proven;
                    ``bound``: no finite bound, or the best bound comes from a method of kind
                    ``bound``, a relaxation or closed form no search tightened; ``both``: one
                    method supplied both ends (its own gap), or the bound is an exact
                    method's)
``schedule by``     the method labels that supplied the best schedule, counted over instances
``bound by``        the method labels that supplied the best bound, counted over instances

``--explain FILE`` (a TOML file, default ``benchmarks/results/intervals-explained.toml``
when it exists) holds, per table ``"family / group"``, why a row stays above 10 %:
``limit`` (which side and by how much), ``tried`` (what was tried, with the
results page section that measured it). The overview then has an ``explained`` column, and a
section lists every table above 10 % with its explanation, or ``not explained``: the
report never hides a wide row.

Each table's heading names the ddlsched version of its rows (``bench table``'s rule: the
newest version present when a directory holds several; the others are listed) and the
suite. Our choices: a method without any schedule in the group has no line (it appears
as a supplier of bounds); a group's lines come in ``bench table``'s order.
"""

from __future__ import annotations

import json
import math
import tomllib
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from ddlsched import __version__
from ddlsched.bench.aggregate import ratio_text
from ddlsched.bench.paths import portable_path
from ddlsched.bench.ratios import worst_width
from ddlsched.bench.store import read_rows
from ddlsched.bench.tables import (
    instance_intervals,
    line_order,
    load_results,
    rows_with_ratios,
    width_text,
)
from ddlsched.errors import DdlschedError

__all__ = [
    "CITABLE_WIDTH",
    "HEADERS",
    "directory_report",
    "explanation_of",
    "load_explanations",
    "method_line",
    "report",
    "report_and_widest",
]

#: A width above this is flagged: a ratio is citable when its interval is at most 10 % wide.
CITABLE_WIDTH = 0.10

HEADERS = (
    "method",
    "kind",
    "instances",
    "mean ratio",
    "widest",
    "width",
    "> 10 %",
    "limit",
    "schedule by",
    "bound by",
)


def _counts(values: pd.Series) -> str:
    """``a 7, b 3`` (most frequent first); ``-`` when empty."""
    counter = Counter(v for v in values if isinstance(v, str) and v)
    return ", ".join(f"{name} {n}" for name, n in counter.most_common()) or "-"


def _mean_interval(lines: pd.DataFrame) -> str:
    finite = lines[~lines["ratio_lo"].map(math.isinf)]
    if finite.empty:
        return "infinite" if len(lines) else "-"
    his = finite["ratio_hi"]
    hi = math.inf if his.map(math.isinf).any() else his.mean()
    return ratio_text(finite["ratio_lo"].mean(), hi)


def method_line(lines: pd.DataFrame, label: str, kind: str) -> list[str]:
    """The cells of one method's line from its :func:`instance_intervals` lines in a group."""
    rated = lines[lines["ratio_lo"].notna()]
    width = worst_width(rated["width"])
    if math.isnan(width):
        widest, flag = "-", ""
    else:
        at = rated[rated["width"] == width].iloc[0]
        widest = f"{ratio_text(at['ratio_lo'], at['ratio_hi'])} ({at['instance_id']})"
        flag = " > 10 %" if width > CITABLE_WIDTH else ""
    over = int((rated["width"] > CITABLE_WIDTH).sum())
    shown = width_text(width) + flag
    return [
        label,
        kind,
        str(len(rated)),
        _mean_interval(rated),
        widest,
        f"**{shown}**" if flag else shown,
        f"{over}/{len(rated)}",
        _counts(rated["limit"]),
        _counts(rated["ref_primal_by"]),
        _counts(rated["ref_dual_by"]),
    ]


def _markdown(cells: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(HEADERS) + " |", "|" + "|".join(":---" for _ in HEADERS) + "|"]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in cells]
    return lines


def _versions(directory: Path) -> list[str]:
    frame = read_rows(directory).to_pandas()
    return sorted(frame["ddlsched_version"].dropna().unique().tolist())


def _commit(directory: Path) -> str:
    """The git commit the directory's manifest records (the code of its last run)."""
    try:
        git = json.loads((directory / "manifest.json").read_text()).get("git") or {}
    except (OSError, ValueError):
        return "unknown"
    commit = str(git.get("commit") or "unknown")[:10]
    return commit + (" (dirty)" if git.get("dirty") else "")


def directory_report(directory: Path) -> tuple[list[str], list[tuple[str, float]]]:
    """The Markdown of one results directory and ``(table name, widest width)`` per group."""
    frame = load_results(directory)
    if frame.empty:
        raise DdlschedError(f"no rows in {directory}")
    rated = rows_with_ratios(frame)
    intervals = instance_intervals(rated)
    used = ", ".join(sorted(frame["ddlsched_version"].dropna().unique()))
    present = ", ".join(_versions(directory))
    suites = ", ".join(sorted(frame["suite"].dropna().unique()))
    out = [f"## {portable_path(directory)}", ""]
    out.append(
        f"Suite {suites}; rows of ddlsched {used} (versions present: {present}); the manifest "
        f"records git commit {_commit(directory)}."
    )
    widest = []
    for family, group in dict.fromkeys(zip(frame["family"], frame["group"], strict=True)):
        part = rated[(rated["family"] == family) & (rated["group"] == group)]
        sense = part["sense"].iloc[0]
        proven = part.drop_duplicates("instance_key")["ref_proven"]
        kinds = dict(zip(part["label"], part["kind"], strict=True))
        cells = []
        for _, _, label in line_order(part):
            mask = (
                (intervals["family"] == family)
                & (intervals["group"] == group)
                & (intervals["label"] == label)
            )
            if intervals[mask]["ratio_lo"].notna().any():
                cells.append(method_line(intervals[mask], label, kinds[label]))
        group_width = worst_width(
            intervals[(intervals["family"] == family) & (intervals["group"] == group)]["width"]
        )
        widest.append((f"{directory.name} / {family} / {group}", group_width))
        out += ["", f"### {family} / {group}", ""]
        out.append(
            f"{'minimising' if sense == 'min' else 'maximising'}; {len(proven)} instances, "
            f"{int(proven.sum())} with a proven optimum; widest interval width "
            f"{width_text(group_width)}."
        )
        out += ["", *_markdown(cells)]
    return [*out, ""], widest


def load_explanations(path: Path | None) -> dict[str, dict[str, str]]:
    """``{"family / group": {"limit": ..., "tried": ...}}`` from a TOML file (a key may also
    name the suite, ``"suite / family / group"``, which wins over the shorter one); ``{}``
    when ``path`` is None. A malformed file is a :class:`DdlschedError` naming it."""
    if path is None:
        return {}
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise DdlschedError(f"{path}: {exc}") from None
    tables = data.get("tables", {})
    for name, entry in tables.items():
        if not isinstance(entry, dict) or set(entry) - {"limit", "tried"} or not entry:
            raise DdlschedError(f"{path}: table {name!r}: expected keys 'limit' and 'tried'")
        if not all(isinstance(text, str) for text in entry.values()):
            raise DdlschedError(f"{path}: table {name!r}: 'limit' and 'tried' must be text")
    return tables


def explanation_of(name: str, explanations: dict[str, dict[str, str]]) -> dict[str, str] | None:
    """The entry of table ``name`` ("suite / family / group"): under its full name, else
    under "family / group"."""
    return explanations.get(name) or explanations.get(name.split(" / ", 1)[1])


def _explained_section(overview, explanations) -> list[str]:
    wide = [(n, w) for n, w in overview if not math.isnan(w) and w > CITABLE_WIDTH]
    if not wide:
        return []
    out = ["", "## Tables above 10 %: what limits them and what was tried", ""]
    for name, width in wide:
        entry = explanation_of(name, explanations)
        out.append(
            f"- **{name}** ({width_text(width)}): "
            + (
                f"*limit:* {entry.get('limit', '-')} *Tried:* {entry.get('tried', '-')}"
                if entry
                else "**not explained**"
            )
        )
    return out


def report(
    directories: Sequence[Path],
    command: str,
    note: str | None = None,
    explanations: dict[str, dict[str, str]] | None = None,
    extra: Sequence[str] = (),
) -> str:
    """The whole Markdown report: an overview of every table's widest width (and ``note``
    under it), the explanations of tables above 10 %, the lines of ``extra`` (sections the
    caller adds, e.g. :mod:`ddlsched.bench.seed_sets`' comparison), then the tables."""
    return report_and_widest(directories, command, note, explanations, extra)[0]


def report_and_widest(
    directories: Sequence[Path],
    command: str,
    note: str | None = None,
    explanations: dict[str, dict[str, str]] | None = None,
    extra: Sequence[str] = (),
) -> tuple[str, list[tuple[str, float]]]:
    """:func:`report`'s text and its overview: ``(table name, widest width)`` per table
    ("results directory / family / group"; NaN when no line of it has a ratio)."""

    explanations = explanations or {}
    sections, overview = [], []
    for directory in directories:
        lines, widest = directory_report(directory)
        sections += lines
        overview += widest
    head = [
        "# Interval report",
        "",
        f"Generated by `{command}` (ddlsched {__version__}; each table names the version "
        "of its rows). Columns: the docstring of `ddlsched.bench.intervals_report`; "
        "`ddlsched bench table` prints the same `width` per line (the widest instance).",
        "",
        "| table | widest width | within 10 % | explained |",
        "|:---|---:|:---|:---|",
    ]
    for name, width in overview:
        ok = "-" if math.isnan(width) else ("yes" if width <= CITABLE_WIDTH else "**no**")
        why = "-" if ok != "**no**" else ("yes" if explanation_of(name, explanations) else "**no**")
        head.append(f"| {name} | {width_text(width)} | {ok} | {why} |")
    if note:
        head += ["", note]
    head += _explained_section(overview, explanations)
    head += ["", *extra] if extra else []
    return "\n".join([*head, "", *sections]), overview
