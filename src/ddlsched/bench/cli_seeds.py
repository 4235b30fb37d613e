"""Your suite on instance seeds it never ran, and the widths on both sets of seeds.

Commands::

    ddlsched bench run SUITE --fresh-seeds FIRST [--out DIR] ...
    ddlsched bench seeds REFERENCE FRESH... [--tolerance POINTS] [--output FILE]

``bench run --fresh-seeds FIRST`` runs the suite again on instance seeds ``FIRST``,
``FIRST + 1``, ... (as many per instance set as the suite names). What it runs
(:func:`fresh_suite`, through :func:`ddlsched.bench.reproduce_plan.cut_suite_text`) is the
suite with, in each seeded instance set, the seeds replaced; instance sets read from files
left out, and the methods of a family then without instances; ``reference`` and method
``groups`` kept as far as they name what is left; ``output`` set to the results directory.
That suite file is written into the results directory as ``suite-fresh-FIRST.toml`` (so
``bench run`` on it resumes into the same place), whose default is the suite's own with
``-fresh-FIRST`` appended. Refused before anything runs, in one line: a fresh seed the suite
names for the same family and preset (in any group), one beyond the largest seed, a results
directory that is the suite's own or that holds another choice of fresh seeds.

``bench seeds`` then compares the certified intervals' widths of the two results
directories, table by table, with the same methods
(:func:`ddlsched.bench.seed_sets.seed_set_table`: widest and mean widths, their gaps,
``within``, the seed-split p values), as the interval report's section on fresh seeds. It
refuses directories of different suites (no suite name in common), a label whose method or
parameters differ between the sides, shared instances, and a comparison of nothing.
Choose the fresh seeds before running them, and write them down.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ddlsched import cli_types
from ddlsched.errors import DdlschedError

__all__ = ["add_fresh_seeds_flag", "add_seeds", "fresh_suite", "load_fresh_suite"]


def fresh_results_dir(suite: str | Path, first: int, out: str | Path | None) -> Path:
    """The results directory of ``suite`` on fresh seeds from ``first`` (``out``, else the
    suite's output with ``-fresh-FIRST``); refused when it is the suite's own or holds
    another choice of fresh seeds (module docstring)."""
    from ddlsched.bench.suite import load_suite

    own = load_suite(Path(suite), check_registry=False).output_dir()  # a malformed file: its error
    results = Path(out) if out is not None else Path(f"{own.resolve()}-fresh-{first}")
    if results.resolve() == own.resolve():
        raise DdlschedError(
            f"--out {results} is the suite's own results directory: the fresh rows would mix "
            "with its rows"
        )
    mine = f"suite-fresh-{first}.toml"
    others = sorted(p.name for p in results.glob("suite-fresh-*.toml") if p.name != mine)
    if others:
        raise DdlschedError(
            f"{results} holds another choice of fresh seeds ({others[0]}): give another --out"
        )
    return results


def fresh_suite(suite: str | Path, first: int, out: str | Path | None) -> tuple[Path, Path, bool]:
    """Write ``suite`` on instance seeds from ``first`` on (module docstring) into its results
    directory (:func:`fresh_results_dir`); the suite file written, the results directory and
    whether this call created it."""
    from ddlsched.bench.reproduce_plan import Cut, cut_suite_text

    path = Path(suite)
    out = fresh_results_dir(path, first, out)
    text = cut_suite_text(
        Cut(suite=path.stem),
        path.parent,
        fresh_from=first,
        source=path,
        head=f"{path.name} on fresh instance seeds from {first} (instance sets of files left "
        "out), written by ddlsched bench run --fresh-seeds.",
        output=str(out.resolve()),
    )
    target = out / f"suite-fresh-{first}.toml"
    created = not out.exists()
    try:
        out.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise DdlschedError(f"cannot write {target}: {exc.strerror or exc}") from None
    return target, out, created


def load_fresh_suite(suite: str, first: int, out: str | None, cache: bool) -> tuple[Any, str]:
    """:func:`fresh_suite`, then the suite written, loaded and checked as ``bench run`` does
    (:func:`ddlsched.bench.suite.load_suite`); a results directory this call created is
    removed again when the check refuses the suite. The suite and the results directory."""
    import shutil

    from ddlsched.bench.suite import load_suite

    path, results, created = fresh_suite(suite, first, out)
    try:
        return load_suite(path, cache=cache, out=results), str(results)
    except DdlschedError:
        if created:
            shutil.rmtree(results, ignore_errors=True)
        raise


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
    from ddlsched.bench.output import write_output
    from ddlsched.bench.seed_sets import load_directories, markdown, seed_set_table

    if not 0 <= args.tolerance <= 100:
        raise DdlschedError(f"--tolerance must be 0..100 points, got {args.tolerance:g}")
    reference = load_directories([args.reference])
    fresh = load_directories(args.fresh)
    suites = [set(rows["suite"].dropna()) for rows in (reference, fresh)]
    if not suites[0] & suites[1]:
        raise DdlschedError(
            f"the fresh rows are of suite {', '.join(sorted(suites[1]))}, the reference's of "
            f"{', '.join(sorted(suites[0]))}: compare runs of the same suite"
        )
    tolerance = args.tolerance / 100 + 0.0  # + 0.0: "-0" reads as 0
    lines = seed_set_table(reference, fresh, tolerance=tolerance)
    if all(line.note for line in lines):
        raise DdlschedError("no table has rows of the same methods on both sides")
    write_output("\n".join(markdown(lines)) + "\n", args.output)
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
        help="the largest gap read as the same width, in percentage points, 0..100 (default 1)",
    )
    p.add_argument("--output", "-o", help="write to this file instead of stdout")
    p.set_defaults(func=_cmd_seeds)
