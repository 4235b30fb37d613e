"""Exact frontier report: how far each family's exact methods prove.

    ddlsched bench run benchmarks/suites/frontier-<family>.toml --workers 1 --out results/frontier-<family>
    python benchmarks/frontier.py results/frontier-* --out benchmarks/results/frontier.md

Reads the rows of one or more results directories (``ddlsched bench run`` output) and
prints, per family, instance group, size step (the group's instance parameters, e.g.
``num_jobs=8``: a swept parameter makes one step per value) and exact method label (a
strengthening switched on or off is its own label), one line:

``size``           the median ``instance_size`` of the group (the family's
                   :meth:`~ddlsched.families.Family.size`: jobs for asrpt, dmlrs, rar, muri;
                   GPUs for placement; jobs for dmlrs_slot)
``runs``           rows of the method in the group (one per instance)
``proven``         share of runs that ended with a proof: ``optimal``, or ``infeasible``
                   (proven to have no schedule: the slot problems of dmlrs_slot can be)
``median to proof`` the median wall time of the runs (``wall_s``: model building, the
                   solve and re-evaluation, as ``bench run`` records it) when at least
                   half the runs are proven, else ``> limit`` (the median run did not
                   prove within its limit)
``worst to proof`` the largest wall time when every run is proven, else ``> limit``
``median gap``     the median relative gap ``|objective - bound| / |objective|`` of the
                   runs that stopped without a proof (``-`` when all proved)
``limit``          the time limit of the runs (s)

The ``frontier`` of a family, instance group and method label is the largest size (then
step) at which every run proved within the limit (the bold line); a suite sweeps the size
inside one group. Our choices: a row with status ``error`` counts as not
proven (its message is listed under the table); ``wall_s`` rather than the solver's own
time, since a user waits for the whole run. Timings depend on the machine and its load:
record both with the figures (``benchmarks/results/platform.md``, "Exact frontier").
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from ddlsched import __version__
from ddlsched.bench.tables import load_results
from ddlsched.errors import DdlschedError

#: Statuses that end a run with a proof: an optimum, or that no schedule exists.
PROVEN = ("optimal", "infeasible")

HEADERS = (
    "family",
    "group",
    "step",
    "method",
    "size",
    "runs",
    "proven",
    "median to proof",
    "worst to proof",
    "median gap",
    "limit",
)


def _seconds(value: float) -> str:
    return f"{value:.1f} s" if value < 100 else f"{value:.0f} s"


def _gap(row: pd.Series) -> float:
    objective, bound = row["objective"], row["bound"]
    if not (isinstance(objective, float) and isinstance(bound, float)):
        return math.nan
    if math.isnan(objective) or math.isnan(bound) or objective == 0:
        return math.nan
    return abs(objective - bound) / abs(objective)


def group_line(runs: pd.DataFrame) -> dict[str, object]:
    """The figures of one (family, group, label) from its rows."""
    proven = runs["status"].isin(PROVEN)
    walls = runs["wall_s"].astype(float)
    limit = float(runs["time_limit_s"].max())
    share = float(proven.mean())
    median = float(walls.median()) if share >= 0.5 else math.inf
    worst = float(walls.max()) if share == 1.0 else math.inf
    gaps = runs[~proven].apply(_gap, axis=1) if (~proven).any() else pd.Series([], dtype=float)
    gaps = gaps.dropna()
    return {
        "size": float(runs["instance_size"].median()),
        "runs": len(runs),
        "proven": share,
        "median": median,
        "worst": worst,
        "gap": float(gaps.median()) if len(gaps) else math.nan,
        "limit": limit,
    }


def _natural(text: str) -> tuple:
    """Sort key: numbers in ``text`` compare as numbers (``jobs=10`` after ``jobs=4``)."""
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", text))


def _step(params: object) -> str:
    """``a=1, b=2`` from an ``instance_params`` JSON text (``-`` when none)."""
    try:
        values = json.loads(params) if isinstance(params, str) else {}
    except ValueError:
        values = {}
    return ", ".join(f"{k}={v}" for k, v in sorted(values.items())) or "-"


def frontier_lines(frame: pd.DataFrame) -> pd.DataFrame:
    """One line per (family, group, step, label) of exact methods, sorted by group, label
    and size; column ``frontier`` marks, per family, group and label, the largest size
    where every run proved."""
    exact = frame[frame["kind"] == "exact"]
    if exact.empty:
        raise DdlschedError("no rows of an exact method in the results")
    lines = []
    keys = ["family", "preset", "group", "instance_params", "label"]
    for (family, preset, group, params, label), runs in exact.groupby(
        keys, sort=False, dropna=False
    ):
        step = _step(params)
        line = {"family": family, "preset": preset, "group": group, "step": step, "label": label}
        lines.append({**line, **group_line(runs)})
    table = pd.DataFrame(lines)
    table["_order"] = table["step"].map(_natural)
    table = table.sort_values(["family", "group", "label", "size", "_order"]).drop(columns="_order")
    table["frontier"] = False
    for _, part in table.groupby(["family", "group", "label"]):
        full = part[part["proven"] == 1.0]
        if not full.empty:
            table.loc[full.index[-1], "frontier"] = True  # the largest (size, step)
    return table.reset_index(drop=True)


def _cells(line: pd.Series) -> list[str]:
    limit = f"> {line['limit']:.0f} s"
    cells = [
        line["family"],
        line["group"],
        line["step"],
        line["label"],
        f"{line['size']:g}",
        str(line["runs"]),
        f"{line['proven']:.0%}",
        limit if math.isinf(line["median"]) else _seconds(line["median"]),
        limit if math.isinf(line["worst"]) else _seconds(line["worst"]),
        "-" if math.isnan(line["gap"]) else f"{line['gap']:.1%}",
        f"{line['limit']:.0f}",
    ]
    return [f"**{c}**" for c in cells] if line["frontier"] else cells


def report(directories: Sequence[Path], command: str, note: str | None = None) -> str:
    """The Markdown report of the exact runs in ``directories``."""
    frames = [load_results(d) for d in directories]
    frame = pd.concat([f for f in frames if not f.empty], ignore_index=True) if frames else None
    if frame is None or frame.empty:
        raise DdlschedError("no rows in " + ", ".join(map(str, directories)))
    table = frontier_lines(frame)
    versions = ", ".join(sorted(frame["ddlsched_version"].dropna().unique()))
    out = [
        "# Exact frontier",
        "",
        f"Generated by `{command}` (ddlsched {__version__}; rows of {versions}). Columns: "
        "the docstring of `benchmarks/frontier.py`; **bold**: the largest size where every "
        "run proved within the limit.",
        "",
    ]
    if note:
        out += [note, ""]
    out.append("| " + " | ".join(HEADERS) + " |")
    out.append("|" + "|".join(":---" for _ in HEADERS) + "|")
    out += ["| " + " | ".join(_cells(line)) + " |" for _, line in table.iterrows()]
    errors = frame[(frame["kind"] == "exact") & (frame["status"] == "error")]
    if not errors.empty:
        out += ["", "Errors:", ""]
        for _, row in errors.iterrows():
            out.append(
                f"- {row['family']} {row['group']} {row['label']} {row['instance_id']}: "
                f"{str(row['error']).splitlines()[0][:200]}"
            )
    return "\n".join(out) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directories", nargs="+", type=Path, help="results directories")
    parser.add_argument("--out", type=Path, help="write the Markdown here (default: stdout)")
    parser.add_argument("--note", help="a paragraph under the heading (machine, load)")
    args = parser.parse_args(argv)
    command = "python benchmarks/frontier.py " + " ".join(
        str(a)
        for a in (argv if argv is not None else sys.argv[1:])
        if not str(a).startswith("--note") and a != args.note
    )
    try:
        text = report(args.directories, command, args.note)
    except DdlschedError as error:
        print(f"frontier: error: {error}", file=sys.stderr)
        return 2
    if args.out:
        args.out.write_text(text)
    else:
        print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
