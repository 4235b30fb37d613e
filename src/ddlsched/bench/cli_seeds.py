"""Your suite on instance seeds it never ran, and the widths on both sets of seeds.

Commands::

    ddlsched bench run SUITE --fresh-seeds FIRST [--out DIR] ...
    ddlsched bench seeds REFERENCE FRESH... [--tolerance POINTS] [--output FILE]

``bench run --fresh-seeds FIRST`` runs the whole suite again on instance seeds ``FIRST``,
``FIRST + 1``, ... (as many per instance set as the suite names; instance sets read from
files have no seeds and are left out): the suite's file with only the seeds changed
(:func:`fresh_suite`) is written into the results directory as ``suite-fresh-FIRST.toml``,
whose default is the suite's own with ``-fresh-FIRST`` appended. A fresh seed the suite
names in that set, or one beyond the largest seed, is a one-line error before anything
runs. ``bench seeds`` then compares the certified intervals' widths of the two results
directories, table by table, with the same methods
(:func:`ddlsched.bench.seed_sets.seed_set_table`: widest and mean widths, their gaps,
``within``, the seed-split p values), as the interval report's section on fresh seeds.
Choose the fresh seeds before running them, and write them down.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ddlsched import cli_types
from ddlsched.errors import DdlschedError

__all__ = ["add_fresh_seeds_flag", "add_seeds", "fresh_suite"]


def fresh_suite(suite: str | Path, first: int, out: str | Path | None) -> tuple[Path, Path]:
    """Write ``suite`` on instance seeds from ``first`` on (module docstring) into its results
    directory (``out``, else the suite's output with ``-fresh-FIRST``); the suite file written
    and the results directory."""
    from ddlsched.bench.reproduce_plan import Cut, cut_suite_text
    from ddlsched.bench.suite import load_suite

    path = Path(suite)
    own = load_suite(path, check_registry=False)  # a malformed file: its one-line error
    out = Path(out) if out is not None else Path(f"{own.output_dir()}-fresh-{first}")
    text = cut_suite_text(
        Cut(suite=path.stem),
        path.parent,
        note=f"the seeds of {path} replaced; results in {out}",
        fresh_from=first,
        source=path,
        writer="ddlsched bench run --fresh-seeds",
    )
    target = out / f"suite-fresh-{first}.toml"
    try:
        out.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise DdlschedError(f"{target}: cannot write ({exc.strerror or exc})") from None
    return target, out


def add_fresh_seeds_flag(parser: argparse.ArgumentParser) -> None:
    """``--fresh-seeds FIRST`` of ``bench run``."""
    parser.add_argument(
        "--fresh-seeds",
        metavar="FIRST",
        type=cli_types.seed,
        help="run the suite on instance seeds FIRST, FIRST+1, ... instead (as many per "
        "instance set as it names; none it names; sets of files left out), into OUT (default: "
        "the suite's output with -fresh-FIRST), which also gets the suite file it ran; then "
        "'ddlsched bench seeds' compares the widths on both sets of seeds",
    )


def _cmd_seeds(args: argparse.Namespace) -> int:
    from ddlsched.bench.seed_sets import load_directories, markdown, seed_set_table

    if not 0 <= args.tolerance <= 100:
        raise DdlschedError(f"--tolerance must be 0..100 points, got {args.tolerance:g}")
    reference = load_directories([args.reference])
    fresh = load_directories(args.fresh)
    lines = seed_set_table(reference, fresh, tolerance=args.tolerance / 100)
    text = "\n".join(markdown(lines)) + "\n"
    if args.output:
        try:
            Path(args.output).write_text(text, encoding="utf-8")
        except OSError as exc:
            raise DdlschedError(f"cannot write {args.output}: {exc.strerror or exc}") from None
    else:
        sys.stdout.write(text)
    return 0


def add_seeds(sub: Any) -> None:
    """Add ``bench seeds`` to the ``bench`` subparsers."""
    p = sub.add_parser(
        "seeds",
        help="widths on two sets of instance seeds: do the same methods reach the same widths?",
        description="Compare the certified intervals of a results directory (REFERENCE) with "
        "those of the same suite run on instance seeds it never ran (FRESH: 'bench run SUITE "
        "--fresh-seeds FIRST'; several directories are read as one). Per table (family and "
        "group): the methods with rows on both sides (the others named as left out), both "
        "sets' seeds, the widest width with its instance, the mean width, the gaps in "
        "points, how often a random split of the pooled seeds gives gaps as large (p), and "
        "whether both gaps are within the tolerance ('partial' while a method covers a "
        "different share of the instances on the two sides). Rows sharing an instance with "
        "the reference are refused: those seeds are not fresh. Prints Markdown.",
    )
    p.add_argument("reference", help="results directory of the suite's own seeds")
    p.add_argument("fresh", nargs="+", help="results directories on the fresh seeds")
    p.add_argument(
        "--tolerance",
        type=float,
        default=1.0,
        metavar="POINTS",
        help="the largest gap read as the same width, in percentage points (default 1)",
    )
    p.add_argument("--output", "-o", help="write to this file instead of stdout")
    p.set_defaults(func=_cmd_seeds)
