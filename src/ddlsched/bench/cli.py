"""``ddlsched bench``: run suites, and turn their results into tables and plots.

Commands::

    ddlsched bench run SUITE [--workers N] [--dask local|tcp://HOST:PORT] [--out DIR]
                             [--retry failed|time_limit|error] [--no-cache] [--fresh-seeds FIRST]
    ddlsched bench table RESULTS [--format md|latex|csv] [--output FILE] [--pool-groups]
                             [--version V] [--all-code]
    ddlsched bench verdict RESULTS... --claims FILE [--out DIR] [--format markdown|latex]
    ddlsched bench plot RESULTS [--out DIR] [--format png|pdf]
    ddlsched bench status RESULTS
    ddlsched bench validate SUITE [--out DIR] [--no-cache]
    ddlsched bench seeds REFERENCE FRESH... [--tolerance POINTS] [--output FILE]

``run`` and ``validate`` build each generated instance once per results
directory (:mod:`ddlsched.bench.instance_cache`; ``validate`` fills the cache
of the directory ``run`` will use); ``--no-cache`` builds every instance and
touches no cache. ``run`` recomputes the rows whose code changed
(:mod:`ddlsched.bench.fingerprint`) and says so.

Errors are :class:`~ddlsched.errors.DdlschedError` lines (exit status 2): a
fault of the result store and a corrupt results file too, naming the file;
flags are checked by :mod:`ddlsched.cli_types`. ``bench table --help``
explains every column (:data:`ddlsched.bench.tables.COLUMN_HELP`).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import signal
import sys
import textwrap
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ddlsched import cli_types
from ddlsched.cli_types import lazy_help
from ddlsched.errors import DdlschedError

__all__ = ["add_bench_commands"]


def _console(stderr: bool = False) -> Any:
    from ddlsched.console import console

    return console(stderr=stderr, width=None)


def _cmd_run(args: argparse.Namespace) -> int:
    from ddlsched.bench.retry import parse_retry
    from ddlsched.bench.runner import run_suite
    from ddlsched.bench.suite import load_suite
    from ddlsched.console import raise_interrupt, suite_progress, suite_tick

    parse_retry(args.retry)  # an unknown kind is refused before anything runs
    if getattr(args, "fresh_seeds", None) is not None:  # other seeds: bench/cli_seeds.py
        from ddlsched.bench.cli_seeds import load_fresh_suite

        suite, args.out = load_fresh_suite(
            args.suite, args.fresh_seeds, args.out, not args.no_cache
        )
    else:
        suite = load_suite(args.suite, cache=not args.no_cache, out=args.out)
    out = Path(args.out) if args.out else suite.output_dir()
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, raise_interrupt)
    err = _console(stderr=True)
    with suite_progress(err, args.quiet) as bar:
        tick = suite_tick(bar, suite.name)
        try:
            summary = run_suite(
                suite,
                out,
                workers=args.workers,
                dask=args.dask,
                on_progress=tick,
                limit=args.limit,
                retry=args.retry,
                instance_cache=not args.no_cache,
            )
        except KeyboardInterrupt:
            bar.stop()
            err.print(f"interrupted: finished rows are in {out}; run the same command to resume")
            return 130
    statuses = ", ".join(f"{k} {v}" for k, v in sorted(summary.status_counts.items()))
    retried = f" ({summary.retried} retried)" if args.retry else ""
    print(
        f"{suite.name}: {summary.done} task(s) run{retried}, {summary.skipped} already stored, "
        f"{summary.failed} failed ({statuses or 'none run'}) in {summary.elapsed_s:.1f} s "
        f"on {summary.executor} x{summary.workers}"
    )
    if summary.recomputed:
        print(summary.recomputed_line())
    print(f"results: {out}    table: ddlsched bench table {out}")
    return 0


def _cmd_table(args: argparse.Namespace) -> int:
    from ddlsched.bench import tables
    from ddlsched.bench.cli_verdict import mixed_rule
    from ddlsched.bench.provenance import code_note

    frame = tables.load_results(args.results, version=args.version, mixed=mixed_rule(args))
    if frame.empty:
        raise DdlschedError(f"no rows in {args.results}")
    if args.relative_to and not args.metrics:
        raise DdlschedError("--relative-to needs --metrics")
    if args.metrics:
        return _metric_table(frame, args)
    rated = tables.rows_with_ratios(frame)
    if args.rows:
        columns = [
            "family", "group", "instance_id", "instance_size", "label", "seed", "status",
            "objective", "bound", "ref_primal", "ref_dual", "ref_proven", "ref_primal_by",
            "ref_dual_by", "ratio_lo", "ratio_hi", "runtime_s", "key",
        ]  # fmt: skip
        text = rated[columns].to_csv(index=False, float_format="%.10g")
    else:
        summary = tables.summarize(rated, by_group=not args.pool_groups)
        note = tables.ratio_note(frame)
        code = code_note(frame)  # rows of other code: above the legend, or on stderr
        if code and args.format != "md":
            print(code, file=sys.stderr)
        note = f"{code}\n\n{note}" if code and args.format == "md" else note
        if args.format == "md":
            text = tables.to_markdown(summary, note)
        elif args.format == "latex":
            name = ", ".join(sorted(set(frame["suite"])))
            text = tables.to_latex(summary, caption=f"{name}: {note}", label=args.label)
        else:
            text = tables.to_csv(summary)
    _write(text, args.output)
    return 0


def _metric_table(frame, args: argparse.Namespace) -> int:
    from ddlsched.bench.metrics import metric_csv, metric_markdown, metric_table

    if args.format == "latex" or args.rows or args.pool_groups:
        raise DdlschedError("--metrics tables come as --format md or csv, one line per method")
    table = metric_table(frame, args.metrics, args.relative_to)
    text = metric_markdown(table) if args.format == "md" else metric_csv(table)
    _write(text, args.output)
    return 0


def _write(text: str, output: str | None) -> None:
    from ddlsched.bench.output import write_output

    write_output(text, output)


def _cmd_plot(args: argparse.Namespace) -> int:
    from ddlsched.bench.plots import plot_results

    out = Path(args.out) if args.out else Path(args.results) / "plots"
    try:
        paths = plot_results(args.results, out, fmt=args.format)
    except OSError as exc:  # an unwritable --out, a full disk
        path = exc.filename or out
        raise DdlschedError(f"{path}: cannot write ({exc.strerror or exc})") from None
    for path in paths:
        print(path)
    if not paths:
        print("no plots: no rows with objectives")
    return 0


def _cmd_worstcase(args: argparse.Namespace) -> int:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
    from rich.table import Table

    from ddlsched.bench.worstcase import save_report, search

    budgets = args.budgets
    from ddlsched.registry import get_family

    if get_family(args.family).worst_case is None:
        raise DdlschedError(f"family {args.family!r} offers no worst-case search space")
    with Progress(
        TextColumn("worst-case search"),
        BarColumn(),
        MofNCompleteColumn(),
        console=_console(stderr=True),
        disable=args.quiet,
    ) as bar:
        task = bar.add_task("search", total=args.candidates)
        report = search(
            args.family,
            budgets=budgets,
            candidates=args.candidates,
            seed=args.seed,
            time_limit_s=args.time_limit,
            progress=lambda done, total: bar.update(task, completed=done),
        )
    out = Path(args.out) if args.out else Path("results") / f"worstcase-{args.family}-s{args.seed}"
    paths = save_report(report, out, fmt=args.format)
    table = Table(
        title=f"{args.family}: worst ratio found (seed {args.seed}, {args.candidates} candidates)"
    )
    table.add_column(f"budget ({report.budget_name})", justify="right")
    for policy in report.policies:
        table.add_column(policy, justify="right")
    table.add_column("guarantee", justify="right")
    for budget in report.budgets:
        cells = []
        theory = None
        for policy in report.policies:
            w = report.witness(policy, budget)
            cells.append("-" if w is None else f"{w.ratio:.4f}")
            if w is not None and w.theory is not None and w.policy == report.policies[0]:
                theory = w.theory
        table.add_row(f"{budget:g}", *cells, "-" if theory is None else f"{theory:.4g}")
    console = _console()
    console.print(table)
    console.print(
        f"{report.evaluated} candidates solved ({report.unproven} without a proven optimum, "
        f"skipped; {report.duplicates} repeats) in {report.runtime_s:.1f} s"
    )
    for path in paths:
        console.print(str(path))
    return 0


def _cmd_status(args: argparse.Namespace) -> int:
    from ddlsched.bench.status import show_status

    show_status(Path(args.results), _console(), errors=args.errors)
    return 0


def _cmd_validate(args: argparse.Namespace) -> int:
    from ddlsched.bench.check import BUDGET_ENV
    from ddlsched.bench.estimate import estimate_task_time
    from ddlsched.bench.instance_cache import cache_dir_of
    from ddlsched.bench.suite import load_suite
    from ddlsched.bench.suite_values import SuiteCheckError
    from ddlsched.bench.tasks import expand

    budget = args.budget
    if budget is None and not args.no_cache and not os.environ.get(BUDGET_ENV):
        budget = math.inf  # what is built is kept: the run after reads it
    try:
        with _instance_bar() as on_instance:
            suite = load_suite(
                args.suite,
                cache=not args.no_cache,
                out=args.out,
                instance_budget_s=budget,
                on_instance=on_instance,
            )
    except SuiteCheckError as exc:
        check = exc.check
        if len(check.problems) > 1:  # one line per problem, then the verdict
            for line in check.lines():
                print(line, file=sys.stderr)
            raise DdlschedError(
                f"{args.suite}: {len(check.problems)} problems (above) would fail "
                f"{check.failing:,} of {check.tasks:,} task(s)"
            ) from None
        raise
    tasks = expand(suite)
    instances = len({t.instance_key for t in tasks})
    out = args.out or suite.output_dir()
    print(
        f"{args.suite}: valid suite {suite.name!r}: {instances} instance(s), "
        f"{len(tasks)} task(s), output {out}; {estimate_task_time(tasks, out).describe()}"
    )
    checked = suite.checked
    for note in checked.notes if checked is not None else ():
        print(f"note: {note}")
    if checked is not None and not args.no_cache and checked.instances_checked:
        cache = cache_dir_of(args.out or suite.output_dir())
        print(
            f"instance cache {cache}: {checked.instances_cached:,} of "
            f"{checked.instances_checked:,} checked instance(s) read from it, the others built"
        )
    if args.json:
        print(json.dumps([t.key for t in tasks]))
    return 0


@contextlib.contextmanager
def _instance_bar() -> Iterator[Callable[[int, int], None] | None]:
    """A progress bar of the instances checked, on stderr when it is a terminal."""
    if not sys.stderr.isatty():
        yield None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    bar = Progress(
        TextColumn("checking instances"),
        BarColumn(),
        MofNCompleteColumn(),
        console=_console(stderr=True),
        transient=True,
    )
    task = bar.add_task("instances", total=None)

    def update(done: int, total: int) -> None:
        bar.update(task, completed=done, total=total)

    with bar:
        yield update


def _budget_arg(text: str) -> float:
    """``--budget``: seconds >= 0, or ``all``."""
    if text.strip().lower() == "all":
        return math.inf
    return _BUDGET_SECONDS(text)


_BUDGET_SECONDS = cli_types.finite("a budget in seconds (or 'all')", 0, inclusive=True)


_DESCRIPTION = """\
Benchmark suites: run a suite (resumable: finished rows are kept and
skipped; a local process pool, or Dask), then the ratio table, figures and
status of its results directory; worstcase searches tiny instances for each
policy's worst ratio; validate checks a suite file; seeds compares the widths
of a suite's results on its seeds and on fresh ones (run --fresh-seeds).

Suites and every column of the results: benchmarks/PROTOCOL.md.
"""


def _columns_epilog() -> str:
    from ddlsched.bench.tables import COLUMN_HELP, SUMMARY_COLUMNS

    width = max(len(name) for name in COLUMN_HELP) + 2
    lines = ["columns of the ratio table (--format md or latex; csv splits intervals):"]
    for name, text in COLUMN_HELP.items():
        lines.append(
            textwrap.fill(
                text,
                width=78,
                initial_indent=f"  {name:<{width}}",
                subsequent_indent=" " * (width + 2),
            )
        )
    names = ", ".join(c for c in SUMMARY_COLUMNS if not c.startswith("ratio_"))
    lines.append(
        textwrap.fill(
            f"csv columns: {names}; ratio_mean, ratio_median and ratio_worst as *_lo and *_hi",
            width=78,
            initial_indent="  ",
            subsequent_indent="  ",
        )
    )
    return "\n".join(lines)


def _add_run(sub: Any) -> None:
    from ddlsched.bench.cli_seeds import add_fresh_seeds_flag

    p = sub.add_parser(
        "run",
        help="run a suite (resumes: finished rows are skipped)",
        description="Check the suite (as bench validate), then run every task that has "
        "no row in the results directory yet. " + _CACHE_HELP,
    )
    p.add_argument("suite", help="suite file (TOML), e.g. benchmarks/suites/quick.toml")
    p.add_argument(
        "--workers",
        type=cli_types.count(maximum=4096),
        help="worker processes, 1..4096 (default: all cores)",
    )
    p.add_argument(
        "--dask",
        metavar="ADDR",
        type=cli_types.dask_address,
        help="run on Dask: 'local' starts a LocalCluster; SCHEME://HOST:PORT (tcp, tls, ucx, "
        "ws, wss; e.g. tcp://10.0.0.5:8786) uses a running scheduler",
    )
    p.add_argument("--out", help="results directory (default: the suite's output)")
    _add_cache_flag(p)
    p.add_argument("--limit", type=cli_types.count(), help="run at most N (>= 1) pending tasks")
    p.add_argument(
        "--retry",
        action="append",
        metavar="KIND",
        help="also run again the suite's tasks whose latest row is of this kind: 'failed' "
        "(status error, time_limit or time_limit_no_solution; never no_solution, a method "
        "that found no schedule: a result), 'time_limit' (stopped by a "
        "time limit, with or without a schedule) or 'error' (the method failed, its "
        "worker crashed or ran out of memory); repeatable or comma-separated. Limits are not "
        "part of a row's identity: after raising time_limit_s, kill_after_s or memory_mb, "
        "this re-runs exactly the rows that failed; the new row replaces the old one in "
        "tables, both stay in the history. 'bench status' counts them",
    )
    add_fresh_seeds_flag(p)
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=_cmd_run)


def _add_table(sub: Any) -> None:
    from ddlsched.bench.cli_verdict import add_mix_versions_flag

    p = sub.add_parser(
        "table",
        help="ratio table of a results directory",
        description="One line per family, instance group and method: counts, ratios to the "
        "optimum (or certified intervals), shares, bounds and times. Ratios are "
        "heuristic / optimum when minimising, optimum / heuristic when maximising (>= 1), "
        "one per instance: for a method with several seeds, the ratio of expectations "
        "(of its mean objective over the seeds); mean, median and worst are over instances, "
        "without those where the ratio is infinite (counted in 'inf. ratio'). [lo, hi] is the "
        "certified interval [h / best schedule, h / best bound] when the optimum is not "
        "proven, [lo, no bound] when no finite bound is known; 'width' is the widest such "
        "interval's hi / lo - 1 (per instance, with the method of each end: "
        "benchmarks/intervals.py). 'ddlsched compare' prints the same table.",
    )
    lazy_help(p, _columns_epilog)
    p.add_argument("results", help="results directory")
    p.add_argument("--format", choices=("md", "latex", "csv"), default="md")
    p.add_argument("--output", "-o", help="write to this file instead of stdout")
    p.add_argument("--pool-groups", action="store_true", help="one line per method and family")
    p.add_argument(
        "--rows",
        action="store_true",
        help="per-row CSV with reference and ratios (ref_primal_by, ref_dual_by: the method "
        "labels of the instance's best schedule and best bound)",
    )
    add_mix_versions_flag(p)
    p.add_argument("--label", help="LaTeX \\label of the table")
    p.add_argument(
        "--metrics",
        metavar="LIST",
        type=cli_types.names,
        help="instead of ratios: the mean of these evaluation metrics (comma-separated, "
        "e.g. average_jct_s,makespan_s,p99_jct_s for muri_sim)",
    )
    p.add_argument(
        "--relative-to",
        metavar="LABEL",
        help="with --metrics: also each metric divided by this method's on the same instance",
    )
    p.set_defaults(func=_cmd_table)


def _add_plot(sub: Any) -> None:
    p = sub.add_parser("plot", help="ratio, runtime and paper-style figures")
    p.add_argument("results", help="results directory")
    p.add_argument("--out", help="directory of the figures (default RESULTS/plots)")
    p.add_argument("--format", choices=("png", "pdf", "svg"), default="png")
    p.set_defaults(func=_cmd_plot)


def _add_status(sub: Any) -> None:
    p = sub.add_parser(
        "status",
        help="manifest, runs (running, or killed), row counts, retries and failures "
        "of a results directory",
    )
    p.add_argument("results", help="results directory")
    p.add_argument(
        "--errors",
        type=cli_types.non_negative(),
        default=10,
        help="failed rows to show, >= 0 (default 10)",
    )
    p.set_defaults(func=_cmd_status)


def _add_worstcase(sub: Any) -> None:
    p = sub.add_parser(
        "worstcase",
        help="search tiny instances for each policy's worst ratio to the proven optimum",
        description=(
            "Seeded black-box search (ddlsched.bench.worstcase): every point is a certified "
            "lower bound on a policy's competitive ratio, its instance the witness. Writes "
            "the worst instances, a suite over them, a JSON report and a figure."
        ),
    )
    p.add_argument("family", help="a family offering a search space (asrpt, dmlrs)")
    p.add_argument(
        "--budgets",
        type=cli_types.numbers,
        default=[0.0, 1.0, 2.0, 4.0, 8.0],
        help="budgets, comma-separated finite numbers >= 0 (default 0,1,2,4,8)",
    )
    p.add_argument(
        "--candidates",
        type=cli_types.count(maximum=10_000_000),
        default=2000,
        help="candidates in all, >= 1 (default 2000)",
    )
    p.add_argument(
        "--seed",
        type=cli_types.seed,
        default=0,
        help=f"search seed, 0..{cli_types.MAX_SEED} (default 0)",
    )
    p.add_argument(
        "--time-limit",
        type=cli_types.seconds,
        default=10.0,
        help="seconds per exact solve, finite (default 10)",
    )
    p.add_argument("--out", help="output directory (default results/worstcase-FAMILY-sSEED)")
    p.add_argument("--format", choices=("png", "pdf", "svg"), default="png")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=_cmd_worstcase)


_CACHE_HELP = (
    "Each generated instance is built once per results directory: the check "
    "writes it to RESULTS/instances/<key>.json (key: family, preset, seed, "
    "parameters, ddlsched version); the next validate and the run's workers read "
    "that file (a corrupt or truncated one is rebuilt) instead of building the "
    "instance again. Delete RESULTS/instances after changing a generator without "
    "changing the version."
)


def _add_cache_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--no-cache",
        action="store_true",
        help="build every instance, neither reading nor writing RESULTS/instances",
    )


def _add_validate(sub: Any) -> None:
    p = sub.add_parser(
        "validate",
        help="check a suite file and count its tasks",
        description="Check a suite as a run would (names, parameters, backends, every "
        "instance built or loaded) and count its tasks, with the task time their time "
        "limits bound it by and, from the rows already in the results directory, an "
        "estimate and the tasks a run would skip. With the instance cache every "
        "instance is built (once: the next validate and the run read it); with "
        "--no-cache, what fits in $DDLSCHED_CHECK_BUDGET_S seconds (default 30). " + _CACHE_HELP,
    )
    p.add_argument("suite", help="suite file (TOML)")
    p.add_argument(
        "--budget",
        type=_budget_arg,
        default=None,
        metavar="SECONDS|all",
        help="seconds for building instances (default: all with the cache; else "
        "$DDLSCHED_CHECK_BUDGET_S or 30); what it leaves unchecked is a note",
    )
    p.add_argument(
        "--out",
        help="results directory whose instance cache the check fills and reads "
        "(default: the suite's output; give bench run's --out)",
    )
    _add_cache_flag(p)
    p.add_argument("--json", action="store_true", help="also print the task keys")
    p.set_defaults(func=_cmd_validate)


def add_bench_commands(subparsers: Any) -> None:
    """Add ``bench run|table|verdict|plot|status|worstcase|validate|seeds`` to the CLI's
    subparsers."""
    from ddlsched.bench.cli_seeds import add_seeds
    from ddlsched.bench.cli_verdict import add_verdict

    bench = subparsers.add_parser(
        "bench", help="benchmark suites: run, tables, plots, status", description=_DESCRIPTION
    )
    sub = bench.add_subparsers(dest="bench_command", required=True, parser_class=type(bench))
    _add_run(sub)
    _add_table(sub)
    add_verdict(sub)
    _add_plot(sub)
    _add_status(sub)
    _add_worstcase(sub)
    _add_validate(sub)
    add_seeds(sub)
