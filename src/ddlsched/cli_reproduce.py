"""``ddlsched reproduce PAPER|all``: each paper reproduced by one command.

::

    ddlsched reproduce PAPER|all [--out DIR] [--workers N] [--dask ADDR] [--dry-run]
                                 [--fresh-seeds FIRST] [--benchmarks DIR] [-q]

Runs the paper's reproduction plan (``benchmarks/reproduce/<paper>.toml``,
:mod:`ddlsched.bench.reproduce_plan`), then its verdicts, interval report, figures and
index page into ``DIR/<paper>/`` (:mod:`ddlsched.bench.reproduce`). Resumable: the
result stores are ``bench run``'s, so running the command again finishes only what is
missing. ``--dry-run`` lists what would run. ``--fresh-seeds FIRST`` also runs every cut
with seeded instance sets (unless its plan says ``fresh = false``) on instance seeds from
``FIRST`` on and compares the widths (:mod:`ddlsched.bench.seed_sets`); a fresh seed a suite
names, for any paper asked, is an error before anything runs. An unknown paper, a missing data file, an
unwritable ``--out`` or a missing ``benchmarks/`` is one ``ddlsched: error:`` line (exit
status 2).
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ddlsched import cli_types
from ddlsched.console import raise_interrupt

__all__ = ["add_reproduce_command"]

_DESCRIPTION = """\
Reproduce a paper with one command: run the suites of its reproduction plan
(benchmarks/reproduce/PAPER.toml: which groups, seeds and methods of which suites, each
with a budget in rounds where the method has one, chosen so that a paper takes under an
hour on 2 cores), then 'bench verdict' with its claims (claims whose suites the plan leaves
out print 'missing'), the interval report and the figures, into DIR/PAPER/ with one index
page (index.md, index.html). 'all' reproduces every paper in turn. Resumable: run the same
command again and only the tasks without a row run. --fresh-seeds FIRST also runs every
cut with seeded instance sets again on instance seeds its suite never names (FIRST,
FIRST+1, ...: as many per instance set as the cut's; choose them before running; a plan's
cut may opt out with fresh = false) into DIR/PAPER/fresh-FIRST/, and the interval report
and the index page compare each table's widths on both sets of seeds with the same
methods. The
plans, what they leave out and what a larger budget buys: docs/reproduce.md.
"""


@contextmanager
def _bars(quiet: bool) -> Iterator[Callable[[str], Callable[[Any], None] | None]]:
    """A progress bar per suite, as ``bench run`` draws it (on stderr)."""
    from rich.console import Console

    from ddlsched.console import suite_progress, suite_tick

    console = Console(stderr=True, highlight=False, soft_wrap=True)
    with suite_progress(console, quiet) as bar:
        yield lambda name: suite_tick(bar, name)


def _cmd_reproduce(args: argparse.Namespace) -> int:
    from ddlsched.bench.reproduce import check_writable, plan_lines, reproduce_paper
    from ddlsched.bench.reproduce_plan import check_fresh, find_benchmarks, load_plan, plan_names

    benchmarks = find_benchmarks(args.benchmarks)
    names = plan_names(benchmarks) if args.paper == "all" else [args.paper]
    plans = [load_plan(name, benchmarks) for name in names]  # every name checked first
    if args.fresh_seeds is not None:  # and every paper's fresh seeds, before anything runs
        for plan in plans:
            check_fresh(plan, benchmarks / "suites", args.fresh_seeds)
    out = Path(args.out)
    if args.dry_run:
        for plan in plans:
            print("\n".join(plan_lines(plan, out, benchmarks / "suites", args.fresh_seeds)))
        return 0
    check_writable(out)
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, raise_interrupt)
    for plan in plans:
        with _bars(args.quiet) as progress:
            try:
                run = reproduce_paper(
                    plan,
                    out,
                    benchmarks,
                    workers=args.workers,
                    dask=args.dask,
                    progress=progress,
                    fresh_from=args.fresh_seeds,
                )
            except KeyboardInterrupt:
                where = f"{out / plan.paper / 'results'}"
                if args.fresh_seeds is not None:
                    where += f" and {out / plan.paper / f'fresh-{args.fresh_seeds}'}"
                print(
                    f"interrupted: finished rows are in {where}; run the same command to resume",
                    file=sys.stderr,
                )
                return 130
        took = run.seconds["total"]
        print(run.count_line)
        print(f"{plan.paper}: {took / 60:.1f} min; index: {run.out / 'index.md'}")
    return 0


def add_reproduce_command(sub: Any) -> None:
    """Add ``reproduce`` to the CLI's subparsers."""
    p = sub.add_parser(
        "reproduce",
        help="reproduce a paper: its suites, verdicts, intervals, figures and an index page",
        description=_DESCRIPTION,
    )
    p.add_argument("paper", help="the paper (rar, placement, muri, asrpt, dmlrs) or 'all'")
    p.add_argument(
        "--out", default="reproduce", help="output directory (default ./reproduce): DIR/PAPER/"
    )
    p.add_argument(
        "--workers",
        type=cli_types.count(maximum=4096),
        help="worker processes, 1..4096 (default: all cores)",
    )
    p.add_argument(
        "--dask",
        metavar="ADDR",
        type=cli_types.dask_address,
        help="run on Dask: 'local' starts a LocalCluster; SCHEME://HOST:PORT uses a running "
        "scheduler (as bench run --dask)",
    )
    p.add_argument(
        "--dry-run", action="store_true", help="list what would run (tasks, already stored)"
    )
    p.add_argument(
        "--fresh-seeds",
        metavar="FIRST",
        type=cli_types.seed,
        help="also run every cut with seeded instance sets on instance seeds FIRST, FIRST+1, "
        "... (as many as the cut's; none its suite names) into DIR/PAPER/fresh-FIRST/ and "
        "compare the widths on both sets of seeds",
    )
    p.add_argument(
        "--benchmarks",
        metavar="DIR",
        help="the repository's benchmarks/ folder (default: found beside the package, or "
        "./benchmarks)",
    )
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=_cmd_reproduce)
