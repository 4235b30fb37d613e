"""The interval report of results directories: how wide each table's certified ratio
intervals are (the columns: :mod:`ddlsched.bench.intervals_report`, which computes it;
``ddlsched reproduce PAPER`` writes the same report for a paper's results).

    python benchmarks/intervals.py RESULTS_DIR [RESULTS_DIR ...] --out benchmarks/results/intervals.md

``--explain FILE`` (default ``benchmarks/results/intervals-explained.toml`` when it exists)
holds, per table ``"family / group"``, why a row stays above 10 %; ``--note`` a paragraph
printed under the overview (``--note-file`` the same from a Markdown file); ``--sections
FILE`` Markdown sections printed after the overview and the explanations.

``--fresh REF=FRESH`` (repeatable) compares, per table, the rows of the results directory
``REF`` (one of ``RESULTS_DIR``) with those of ``FRESH``, the same suite cut run on instance
seeds ``REF`` never ran (several ``FRESH`` of one ``REF`` are read as one): the section
"Fresh instance seeds: the widths computed from the rows" (:mod:`ddlsched.bench.seed_sets`:
the same methods' widest and mean widths, and whether they agree within 1 point).

    python benchmarks/intervals.py runs/claims/dmlrs --fresh runs/claims/dmlrs=runs/fresh/dmlrs

A results directory without rows, a ``--fresh`` whose ``REF`` is not a ``RESULTS_DIR`` or
whose rows share an instance with it, or a missing file is one ``intervals: error:`` line,
exit status 2.
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
from ddlsched.bench.seed_sets import load_directories, section, seed_set_table
from ddlsched.errors import DdlschedError

#: Where the explanations of rows above 10 % are kept by default.
EXPLAINED = Path(__file__).resolve().parent / "results" / "intervals-explained.toml"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", nargs="+", type=Path, help="results directories")
    parser.add_argument("--out", type=Path, help="write the report here (default: stdout)")
    notes = parser.add_mutually_exclusive_group()
    notes.add_argument("--note", help="a paragraph printed under the overview")
    notes.add_argument("--note-file", type=Path, help="the note, from a Markdown file")
    parser.add_argument(
        "--sections", type=Path, help="Markdown sections printed after the explanations"
    )
    parser.add_argument(
        "--fresh",
        action="append",
        default=[],
        metavar="REF=FRESH",
        help="compare RESULTS_DIR REF with FRESH, run on other instance seeds (repeatable)",
    )
    parser.add_argument(
        "--explain",
        type=Path,
        default=EXPLAINED if EXPLAINED.exists() else None,
        help="TOML file of explanations of tables above 10 %% (default: %(default)s)",
    )
    args = parser.parse_args(argv)
    try:
        text = _report(args)
    except DdlschedError as exc:
        print(f"intervals: error: {exc}", file=sys.stderr)
        return 2
    if args.out:
        args.out.write_text(text)
    else:
        print(text)
    return 0


def _report(args: argparse.Namespace) -> str:
    pairs = _pairs(args.fresh)
    shown = [portable_path(p) for p in args.results]  # no path of this machine in the report
    shown += ["--out", portable_path(args.out)] if args.out else []
    shown += ['--note "..."'] if args.note else []
    for flag in ("note_file", "sections"):
        path = getattr(args, flag)
        shown += [f"--{flag.replace('_', '-')}", portable_path(path)] if path else []
    shown += [f"--fresh {portable_path(ref)}={portable_path(new)}" for ref, new in pairs]
    command = "python benchmarks/intervals.py " + " ".join(shown)
    note = _read(args.note_file).strip() if args.note_file else args.note
    extra = _read(args.sections).rstrip("\n").split("\n") if args.sections else []
    extra += ["", *_fresh_section(args.results, pairs)] if pairs else []
    return report(args.results, command, note, load_explanations(args.explain), extra)


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise DdlschedError(f"{path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise DdlschedError(f"{path}: not a UTF-8 text file") from None


def _pairs(given: Sequence[str]) -> list[tuple[str, str]]:
    """``--fresh REF=FRESH`` values as ``(REF, FRESH)``."""
    pairs = []
    for text in given:
        ref, sep, new = text.partition("=")
        if not sep or not ref or not new:
            raise DdlschedError(f"--fresh {text!r}: expected REF=FRESH")
        pairs.append((ref, new))
    return pairs


def _fresh_section(results: Sequence[Path], pairs: Sequence[tuple[str, str]]) -> list[str]:
    """The comparison's section: each REF's tables (named as the overview names them, by the
    directory) against its FRESH directories, read as one."""
    given = {Path(p).resolve(): Path(p) for p in results}
    fresh: dict[Path, list[str]] = {}
    for ref, new in pairs:
        key = Path(ref).resolve()
        if key not in given:
            raise DdlschedError(f"--fresh {ref}={new}: {ref} is not one of the results directories")
        fresh.setdefault(key, []).append(new)
    lines, sources = [], []
    for key, news in fresh.items():
        reference, rows = load_directories([given[key]]), load_directories(news)
        lines += seed_set_table(reference, rows, prefix=given[key].name)
        sources.append((portable_path(given[key]), [portable_path(n) for n in news]))
    return section(lines, sources)


if __name__ == "__main__":
    raise SystemExit(main())
