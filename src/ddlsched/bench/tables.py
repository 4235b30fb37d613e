"""Ratio tables from stored rows: per family, instance group and method label.

Ratios follow :mod:`ddlsched.bench.ratios` and are computed here, at table
time, from *all* rows of an instance: the best evaluated schedule, the
tightest bound and any proof of optimality of any method (the reference
method of the suite, usually ``exact`` or a named bound, supplies the proof
or the bound). Each row gets the certified interval ``[ratio_lo, ratio_hi]``
of its ratio (a point when the optimum is proven). A method's ratio on an
instance is its ratio of expectations (:func:`ddlsched.bench.aggregate.instance_ratios`):
with several seeds, the ratio of the mean objective over its seeds
(``docs/architecture.md``, "Ratios"); with one row, that row's ratio. The ratio columns
are statistics over instances.

Summary columns (one line per family, group and method label):

``rows``            rows of the method in the group (one per instance and seed)
``solved``          rows with a schedule (an objective)
``no_solution``     rows with status ``no_solution`` (the method ended without a schedule:
                    a result, not a failure)
``errors``          rows with status ``error`` (the software or a solver failed, or the
                    process died)
``time_limits``     rows the time limit cut short: killed by the platform at their
                    wall-clock deadline (status ``time_limit``), stopped without a
                    schedule (``time_limit_no_solution``), or answering with what the
                    limit left them (``time_limit_hit``: an incumbent and its bound,
                    a weaker bound)
``zero_runs``       solved rows whose objective is 0 (maximising: runs that earned nothing)
``mean_objective``  mean objective of the solved rows
``ratio_mean``      mean over instances of the method's ratio there (an interval when not
                    all optima are proven: the means of the interval ends)
``ratio_median``    median over instances (the medians of the interval ends)
``ratio_worst``     largest ratio over instances (the maxima of the interval ends)
``infinite_ratio``  instances left out of the three ratio columns because the method's
                    ratio there is infinite (maximising: ``E[obj] = 0`` while some schedule
                    earns more)
``exact``           share of the instances with a ratio whose ratio is exact (optimum proven)
``certified_opt``   share of rows whose schedule is certified optimal (ratio interval ends at 1)
``width``           the largest certified-interval width ``hi / lo - 1`` over the
                    instances with a ratio (0 when every optimum is proven; infinite
                    when some instance has no finite bound). Our choice: the worst
                    instance, not the mean, since a table is citable only when every
                    instance's interval is narrow (within 10 %)
``mean_bound``      mean bound reported by the method (bound and exact methods)
``runtime_mean_s``  mean runtime (the method's own, or wall time of failed rows)
``runtime_max_s``   largest runtime

Rows of methods without a schedule (bounds) have no ratio. Error,
time-limit and no-solution rows count in ``rows`` but not in the ratios.
``compare`` renders its table through :func:`summarize` and the renderers
here too (:meth:`ddlsched.bench.compare.CompareReport.frame`).
"""

from __future__ import annotations

import logging
import math
import re
from pathlib import Path
from typing import Any

import pandas as pd

from ddlsched.bench.aggregate import (
    NO_BOUND,
    IntervalStats,
    finite_stats,
    instance_ratios,
    interval_stats,
    ratio_text,
    solved_rows,
)
from ddlsched.bench.ratios import (
    RatioError,
    Sides,
    best_reference,
    interval_width,
    limiting_side,
    ratio_interval,
    sides,
    worst_width,
)
from ddlsched.bench.retry import FAILED_STATUSES
from ddlsched.bench.store import read_rows
from ddlsched.bench.tasks import STATUS_TIME_LIMIT
from ddlsched.errors import DdlschedError
from ddlsched.solvers.result import SolveResult, Status

__all__ = [
    "COLUMN_HELP",
    "HEADERS",
    "INTERVAL_COLUMNS",
    "SUMMARY_COLUMNS",
    "IntervalStats",
    "instance_intervals",
    "interval_stats",
    "line_order",
    "load_results",
    "markdown_lines",
    "ratio_note",
    "rows_markdown",
    "rows_with_ratios",
    "summarize",
    "tex_escape",
    "to_csv",
    "to_latex",
    "to_markdown",
    "width_text",
]

log = logging.getLogger(__name__)

_TOL = 1e-9

SUMMARY_COLUMNS = (
    "family",
    "group",
    "method",
    "kind",
    "rows",
    "solved",
    "no_solution",
    "errors",
    "time_limits",
    "zero_runs",
    "mean_objective",
    "ratio_mean",
    "ratio_median",
    "ratio_worst",
    "infinite_ratio",
    "exact",
    "certified_opt",
    "width",
    "mean_bound",
    "runtime_mean_s",
    "runtime_max_s",
)


_KIND_ORDER = {"heuristic": 0, "exact": 1, "bound": 2}


def _natural(label: str) -> list[Any]:
    """Sort key: ``kappa=2`` before ``kappa=10``."""
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", label)]


def load_results(
    directory: str | Path, version: str | None = None, mixed: str = "latest"
) -> pd.DataFrame:
    """Rows of a results directory as a DataFrame: per method, those of its latest code.

    Each method keeps the rows of its most recent code fingerprint
    (:func:`ddlsched.bench.provenance.latest_code`: an edited method's old rows
    never mix with its new ones); ``frame.attrs`` says what was left out.
    ``version``: keep only rows of that ddlsched version. ``mixed="mix"`` keeps
    every row (the history of every fingerprint, for diagnosis).
    """
    from ddlsched.bench.provenance import latest_code

    frame = read_rows(directory).to_pandas()
    if frame.empty:
        return frame
    if version is not None:
        frame = frame[frame["ddlsched_version"] == version]
        if frame.empty:
            raise DdlschedError(f"no rows of ddlsched version {version} in {directory}")
    if mixed == "mix":
        return frame.reset_index(drop=True)
    return latest_code(frame.reset_index(drop=True))


def _none(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def _as_result(row: pd.Series) -> SolveResult:
    status = row["status"]
    try:
        status = Status(status)
    except ValueError:  # time_limit: the platform killed it, nothing is known
        status = Status.ERROR
    return SolveResult(
        family=row["family"],
        method=row["method"],
        status=status,
        sense=row["sense"],
        objective=_none(row["objective"]),
        bound=_none(row["bound"]),
    )


def rows_with_ratios(frame: pd.DataFrame) -> pd.DataFrame:
    """Add ``ref_primal, ref_dual, ref_proven, ratio_lo, ratio_hi`` to every row.

    Also who supplied the instance's bracket (:func:`ddlsched.bench.ratios.sides`):
    ``ref_primal_by, ref_dual_by`` (method labels).

    Raises :class:`DdlschedError` (naming instance and method) when a row
    beats its instance's proven optimum or bound: a model or an evaluator is
    wrong, and no table is printed from such rows.
    """
    frame = frame.copy()
    for col in ("ref_primal", "ref_dual", "ratio_lo", "ratio_hi"):
        frame[col] = float("nan")
    frame["ref_proven"] = False
    frame["ref_primal_by"] = frame["ref_dual_by"] = None
    if frame.empty:
        return frame
    # Instance sizes are reported by the worker before the method runs; a
    # killed task's row may lack it while its siblings have it.
    sizes = frame.groupby("instance_key")["instance_size"].transform("max")
    frame["instance_size"] = frame["instance_size"].fillna(sizes)
    for _, index in frame.groupby("instance_key").groups.items():
        part = frame.loc[index]
        sense = part["sense"].iloc[0]
        labelled = [(r["label"], _as_result(r)) for _, r in part.iterrows()]
        reference = best_reference([result for _, result in labelled], sense)
        evidence = sides(labelled, reference, sense)
        frame.loc[index, "ref_primal"] = reference.primal
        frame.loc[index, "ref_dual"] = reference.dual
        frame.loc[index, "ref_proven"] = reference.proven
        frame.loc[index, "ref_primal_by"] = evidence.primal_by
        frame.loc[index, "ref_dual_by"] = evidence.dual_by
        for i in index:
            objective = _none(frame.at[i, "objective"])
            if frame.at[i, "status"] in FAILED_STATUSES:
                objective = None
            try:
                ratio = ratio_interval(objective, reference, sense)
            except RatioError as exc:
                raise DdlschedError(
                    f"{frame.at[i, 'family']} {frame.at[i, 'instance_id']}: "
                    f"{frame.at[i, 'label']} {exc}"
                ) from None
            if ratio is not None:
                frame.at[i, "ratio_lo"], frame.at[i, "ratio_hi"] = ratio
    return frame


#: The columns :func:`instance_intervals` adds to :func:`ddlsched.bench.aggregate.instance_ratios`.
INTERVAL_COLUMNS = (
    "sense",
    "ref_primal",
    "ref_dual",
    "ref_primal_by",
    "ref_dual_by",
    "width",
    "limit",
)


def instance_intervals(rated: pd.DataFrame) -> pd.DataFrame:
    """One line per (family, group, method label, instance): its certified interval, width
    and what limits it.

    The lines of :func:`ddlsched.bench.aggregate.instance_ratios` plus
    :data:`INTERVAL_COLUMNS`: the instance's best schedule and best bound and the method
    labels that supplied them, ``width`` (``hi / lo - 1``,
    :func:`ddlsched.bench.ratios.interval_width`) and ``limit``
    (:func:`ddlsched.bench.ratios.limiting_side`).
    """
    if "ratio_lo" not in rated:
        rated = rows_with_ratios(rated)
    per_instance = instance_ratios(rated)
    if per_instance.empty:
        return per_instance.reindex(columns=[*per_instance.columns, *INTERVAL_COLUMNS])
    keep = ["sense", "ref_primal", "ref_dual", "ref_primal_by", "ref_dual_by"]
    refs = rated.drop_duplicates("instance_key").set_index("instance_key")[keep]
    out = per_instance.join(refs, on="instance_key")
    pairs = zip(rated["family"], rated["label"], strict=True)
    kinds = dict(zip(pairs, rated["kind"], strict=True))
    out["width"] = [
        interval_width(lo, hi) for lo, hi in zip(out["ratio_lo"], out["ratio_hi"], strict=True)
    ]
    out["limit"] = [
        limiting_side(width, Sides(primal_by, dual_by), kinds.get((family, dual_by)))
        for width, primal_by, dual_by, family in zip(
            out["width"], out["ref_primal_by"], out["ref_dual_by"], out["family"], strict=True
        )
    ]
    return out


def width_text(width: float) -> str:
    """A width as a percentage (``12.3%``); ``no bound`` when infinite, ``-`` when NaN."""
    if width is None or math.isnan(width):
        return "-"
    if math.isinf(width):
        return NO_BOUND
    return f"{100 * width:.1f}%"


def line_order(frame: pd.DataFrame) -> list[tuple[str, str, str]]:
    """(family, group, method label) of a summary's lines: groups as first stored, and
    within a group heuristics, then exact methods, then bounds, each in natural order."""
    lines = []
    for family, group in dict.fromkeys(zip(frame["family"], frame["group"], strict=True)):
        part = frame[(frame["family"] == family) & (frame["group"] == group)]
        kinds = dict(zip(part["label"], part["kind"], strict=True))
        order = sorted(kinds, key=lambda lb: (_KIND_ORDER.get(kinds[lb], 9), _natural(lb)))
        lines += [(family, group, label) for label in order]
    return lines


def summarize(frame: pd.DataFrame, by_group: bool = True) -> pd.DataFrame:
    """One line per (family, group, method label): the columns of :data:`SUMMARY_COLUMNS`.

    Interval columns are split into ``*_lo`` and ``*_hi`` numbers.
    ``by_group=False`` pools all groups of a family (``group`` = ``all``).
    """
    if "ratio_lo" not in frame:
        frame = rows_with_ratios(frame)
    frame = frame.copy()
    if not by_group:
        frame["group"] = "all"
    per_instance = instance_ratios(frame)
    lines = []
    for family, group, label in line_order(frame):
        rows = frame[
            (frame["family"] == family) & (frame["group"] == group) & (frame["label"] == label)
        ]
        instances = per_instance[
            (per_instance["family"] == family)
            & (per_instance["group"] == group)
            & (per_instance["label"] == label)
        ]
        rated = instances[instances["ratio_lo"].notna()]
        intervals = list(zip(rated["ratio_lo"], rated["ratio_hi"], strict=True))
        stats, infinite = finite_stats(intervals)
        bounds = rows["bound"].dropna()
        exact = rated["ratio_lo"] == rated["ratio_hi"]
        certified = rows["ratio_hi"].notna() & (rows["ratio_hi"] <= 1 + _TOL)
        line = {
            "family": family,
            "group": group,
            "method": label,
            "kind": rows["kind"].iloc[0],
            "rows": len(rows),
            "solved": int(instances["solved"].sum()),
            "no_solution": int((rows["status"] == "no_solution").sum()),
            "errors": int((rows["status"] == "error").sum()),
            "time_limits": int(limited_rows(rows).sum()),
            "zero_runs": int(instances["zero_runs"].sum()),
            "mean_objective": solved_rows(rows)["objective"].mean(),
            "infinite_ratio": infinite,
            "exact": exact.mean() if len(rated) else math.nan,
            "certified_opt": certified.mean(),
            "width": worst_width(interval_width(lo, hi) for lo, hi in intervals),
            "mean_bound": bounds.mean() if len(bounds) else math.nan,
            "runtime_mean_s": rows["runtime_s"].mean(),
            "runtime_max_s": rows["runtime_s"].max(),
        }
        for name in ("mean", "median", "worst"):
            lo, hi = getattr(stats, name) if stats else (math.nan, math.nan)
            line[f"ratio_{name}_lo"] = lo
            line[f"ratio_{name}_hi"] = hi
        lines.append(line)
    return pd.DataFrame(lines)


# --------------------------------------------------------------------------- rendering


def _num(value: Any, digits: int = 4) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, float) and math.isinf(value):
        return "inf"
    return f"{value:.{digits}g}" if abs(value) >= 1e-3 or value == 0 else f"{value:.2e}"


def _share(value: float) -> str:
    return "-" if isinstance(value, float) and math.isnan(value) else f"{value:.0%}"


#: The printed header of each summary column (Markdown and LaTeX).
HEADERS = {
    "family": "family",
    "group": "group",
    "method": "method",
    "kind": "kind",
    "rows": "rows",
    "solved": "solved",
    "no_solution": "no solution",
    "errors": "errors",
    "time_limits": "time limits",
    "zero_runs": "zero runs",
    "mean_objective": "mean obj.",
    "ratio_mean": "mean ratio",
    "ratio_median": "median ratio",
    "ratio_worst": "worst ratio",
    "infinite_ratio": "inf. ratio",
    "exact": "ratio exact",
    "certified_opt": "cert. opt.",
    "width": "width",
    "mean_bound": "mean bound",
    "runtime_mean_s": "mean time s",
    "runtime_max_s": "max time s",
}


def limited_rows(rows: pd.DataFrame) -> pd.Series:
    """Which rows the time limit cut short (the ``time_limits`` column, module docstring)."""
    status = rows["status"]
    hit = rows["time_limit_hit"] if "time_limit_hit" in rows else pd.Series(False, rows.index)
    return (
        (status == STATUS_TIME_LIMIT)
        | (status == "time_limit_no_solution")
        | hit.fillna(False).astype(bool)
    )


#: What each column of the ratio table means, by its printed header (``bench table --help``;
#: benchmarks/PROTOCOL.md, "Ratios and table columns", says the same).
COLUMN_HELP = {
    "family, group": "the family and the suite's instance group of the line",
    "method, kind": "the method's label in the suite (its name and parameters) and its kind: "
    "heuristic, exact or bound",
    "rows": "rows of the method in the group (one per instance and seed)",
    "solved": "rows with a schedule (an objective)",
    "no solution": "rows with status no_solution: the method ended without a schedule (e.g. "
    "none within the horizon, no feasible rounding); a result, not a failure, never retried",
    "errors": "rows with status error: the software or a solver failed, or the process died",
    "time limits": "rows the time limit cut short: killed at the suite's kill_after_s (the "
    "method overran its limit), stopped without a schedule (time_limit_no_solution), or "
    "answering with what the limit left them (time_limit_hit: an incumbent and its bound, a "
    "weaker bound)",
    "zero runs": "solved rows whose objective is 0 (when maximising: runs that earned nothing)",
    "mean obj.": "mean objective of the solved rows",
    "mean ratio": "mean over instances of the method's ratio to the instance optimum "
    "(heuristic / optimum when minimising, optimum / heuristic when maximising, >= 1). A "
    "method with several seeds on an instance has there its ratio of expectations: optimum "
    "/ mean objective over its seeds (mean / optimum when minimising). [lo, hi] when some "
    "optima are only bounded: the means of the certified intervals' ends; [lo, no bound] "
    "when the interval of some instance has no finite upper end (no finite bound on its "
    "optimum is known)",
    "median ratio": "median over instances (the medians of the interval ends)",
    "worst ratio": "largest ratio over instances (the maxima of the interval ends)",
    "inf. ratio": "instances left out of the mean, median and worst ratio because the "
    "method's ratio there is infinite: when maximising, it earned nothing on average "
    "(E[obj] = 0) while some schedule earns more",
    "ratio exact": "share of the instances with a ratio whose ratio is a number: their "
    "optimum is proven by some method",
    "cert. opt.": "share of rows whose schedule is certified optimal (its ratio interval ends "
    "at 1)",
    "width": "the widest certified interval over the instances with a ratio: the largest "
    "hi / lo - 1 (as %; the same as best schedule / best bound - 1 of the instance, inverted "
    "when maximising); 0.0% when every optimum is proven, 'no bound' when some instance has "
    "no finite bound. The worst instance, not the mean: a ratio is citable only when every "
    "interval is narrow. Per instance, with the method that supplied each end: "
    "benchmarks/intervals.py",
    "mean bound": "mean bound the method reported (exact and bound methods; lower when "
    "minimising, upper when maximising)",
    "mean time s, max time s": "the method's runtime, mean and largest (wall time of the "
    "whole method; of the worker for failed rows)",
}


_COUNTS = ("rows", "solved", "no_solution", "errors", "time_limits", "zero_runs", "infinite_ratio")


def _cells(summary: pd.DataFrame, latex: bool = False) -> list[list[str]]:
    out = []
    for _, line in summary.iterrows():
        cells = []
        for col in SUMMARY_COLUMNS:
            if col.startswith("ratio_"):
                cells.append(ratio_text(line[f"{col}_lo"], line[f"{col}_hi"]))
            elif col == "width":
                cells.append(
                    width_text(line[col]).replace("%", r"\%") if latex else width_text(line[col])
                )
            elif col in ("exact", "certified_opt"):
                cells.append(_share(line[col]).replace("%", r"\%") if latex else _share(line[col]))
            elif col in _COUNTS:
                cells.append(str(int(line[col])))
            elif col in ("mean_objective", "mean_bound"):
                cells.append(_num(line[col], 6))
            elif col.startswith("runtime"):
                cells.append(_num(line[col], 3))
            else:
                cells.append(tex_escape(str(line[col])) if latex else str(line[col]))
        out.append(cells)
    return out


def ratio_note(frame: pd.DataFrame) -> str:
    """The legend printed under a ratio table (what its ratios and counts mean)."""
    senses = set(frame["sense"]) if "sense" in frame and not frame.empty else {"min"}
    parts = []
    if "min" in senses:
        parts.append("heuristic / optimum when minimising")
    if "max" in senses:
        parts.append("optimum / heuristic when maximising")
    over = "Mean, median and worst ratio are over instances"
    if "max" in senses:
        over += (
            ", leaving out the 'inf. ratio' instances (nothing earned on average, E[obj] = 0, "
            "where a schedule earns more)"
        )
    return (
        "ratio = " + "; ".join(parts) + ", per instance; with several seeds, of the mean "
        f"objective over the seeds (the ratio of expectations). {over}. A single number: "
        "optimum proven on every instance; [lo, hi]: certified interval from the best "
        "schedule and the best bound; [lo, no bound]: no finite upper end (no finite bound on "
        "the optimum is known), the ratio is at least lo. 'no solution': rows that ended "
        "without a schedule (a result, not an error). Every column: ddlsched bench table --help."
    )


def markdown_lines(headers: list[str], rows: list[list[str]], left: int) -> list[str]:
    """Markdown table lines; the first ``left`` columns are left-aligned, the others right."""
    lines = ["| " + " | ".join(headers) + " |"]
    lines.append("|" + "|".join(":---" if i < left else "---:" for i in range(len(headers))) + "|")
    for cells in rows:
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return lines


def to_markdown(summary: pd.DataFrame, note: str | None = None) -> str:
    """A GitHub-flavoured Markdown table."""
    lines = markdown_lines([HEADERS[c] for c in SUMMARY_COLUMNS], _cells(summary), left=4)
    if note:
        lines.extend(["", note])
    return "\n".join(lines) + "\n"


def rows_markdown(rated: pd.DataFrame) -> str:
    """Every row of :func:`rows_with_ratios` as Markdown: instance, method, status, seed,
    objective, bound, its own ratio (certified interval) and runtime (``compare --detail``)."""
    headers = ["instance", "method", "status", "seed", "objective", "bound", "ratio", "time s"]
    cells = [
        [
            str(row["instance_id"]),
            str(row["label"]),
            str(row["status"]),
            str(row["seed"]),
            _num(row["objective"], 6),
            _num(row["bound"], 6),
            ratio_text(row["ratio_lo"], row["ratio_hi"]),
            _num(row["runtime_s"], 3),
        ]
        for _, row in rated.iterrows()
    ]
    return "\n".join(markdown_lines(headers, cells, left=3)) + "\n"


_TEX_SPECIALS = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def tex_escape(text: str) -> str:
    """``text`` with LaTeX's special characters escaped (captions, headers and cells)."""
    return "".join(_TEX_SPECIALS.get(char, char) for char in text)


def to_latex(summary: pd.DataFrame, caption: str | None = None, label: str | None = None) -> str:
    """A booktabs ``table`` (needs ``\\usepackage{booktabs}``)."""
    align = "".join(
        "l" if c in ("family", "group", "method", "kind") else "r" for c in SUMMARY_COLUMNS
    )
    lines = [r"\begin{table}[t]", r"\centering", r"\small"]
    if caption:
        lines.append(rf"\caption{{{tex_escape(caption)}}}")
    if label:
        lines.append(rf"\label{{{label}}}")
    lines += [rf"\begin{{tabular}}{{{align}}}", r"\toprule"]
    lines.append(" & ".join(tex_escape(HEADERS[c]) for c in SUMMARY_COLUMNS) + r" \\")
    lines.append(r"\midrule")
    previous = None
    for (_, line), cells in zip(summary.iterrows(), _cells(summary, latex=True), strict=True):
        current = (line["family"], line["group"])
        if previous is not None and current != previous:
            lines.append(r"\midrule")
        previous = current
        lines.append(" & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    return "\n".join(lines) + "\n"


def to_csv(summary: pd.DataFrame) -> str:
    """Plain numbers (interval ends as ``*_lo`` / ``*_hi`` columns)."""
    return summary.to_csv(index=False, float_format="%.10g")
