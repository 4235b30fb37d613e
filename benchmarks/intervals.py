"""The interval report of results directories: how wide each table's certified ratio
intervals are (the columns: :mod:`ddlsched.bench.intervals_report`, which computes it;
``ddlsched reproduce PAPER`` writes the same report for a paper's results).

    python benchmarks/intervals.py RESULTS_DIR [RESULTS_DIR ...] --out benchmarks/results/intervals.md

``--explain FILE`` (default ``benchmarks/results/intervals-explained.toml`` when it exists)
holds, per table ``"family / group"``, why a row stays above 10 %; ``--note`` a paragraph
printed under the overview. A results directory without rows is one ``intervals: error:``
line, exit status 2.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from ddlsched.bench.intervals_report import (  # noqa: F401 - the script's names, as before
    CITABLE_WIDTH,
    HEADERS,
    directory_report,
    explanation_of,
    load_explanations,
    method_line,
    report,
)
from ddlsched.bench.paths import portable_path
from ddlsched.errors import DdlschedError

#: Where the explanations of rows above 10 % are kept by default.
EXPLAINED = Path(__file__).resolve().parent / "results" / "intervals-explained.toml"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", nargs="+", type=Path, help="results directories")
    parser.add_argument("--out", type=Path, help="write the report here (default: stdout)")
    parser.add_argument("--note", help="a paragraph printed under the overview")
    parser.add_argument(
        "--explain",
        type=Path,
        default=EXPLAINED if EXPLAINED.exists() else None,
        help="TOML file of explanations of tables above 10 %% (default: %(default)s)",
    )
    args = parser.parse_args(argv)
    shown = [portable_path(p) for p in args.results]  # no path of this machine in the report
    shown += ["--out", portable_path(args.out)] if args.out else []
    shown += ['--note "..."'] if args.note else []
    command = "python benchmarks/intervals.py " + " ".join(shown)
    try:
        text = report(args.results, command, args.note, load_explanations(args.explain))
    except DdlschedError as exc:
        print(f"intervals: error: {exc}", file=sys.stderr)
        return 2
    if args.out:
        args.out.write_text(text)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
