"""The ``ddlsched`` command line.

Commands::

    ddlsched methods [FAMILY]                       list families and methods (typed parameters)
    ddlsched presets [FAMILY]                       list presets and their typed parameters
    ddlsched instance generate FAMILY --preset P --seed N -o FILE [--set K=V ...]
    ddlsched instance check FILE [--family F]       every violation, with its JSON path
    ddlsched instance schema FAMILY                 the JSON Schema of FAMILY's instance file
    ddlsched solve FAMILY FILE --method M [--time-limit S] [--seed N]
                  [--backend highs|scip] [--param K=V ...] [--json] [--quiet]
    ddlsched compare FAMILY --preset P --seeds K [--methods a,b] [--time-limit S]
    ddlsched bench run|table|plot|status|validate|worstcase ...
    ddlsched simulate FAMILY ...                    (e.g. simulate muri --trace trace3 --policy muri-l)
    ddlsched new method FAMILY NAME [--out DIR]     write a method plug-in (ddlsched.cli_new)
    ddlsched data fetch|status [NAME ...]          fetch and check the public data (ddlsched.cli_data)
    ddlsched reproduce PAPER|all [--out DIR]        a paper's suites, verdicts, figures (ddlsched.cli_reproduce)

Help: ``ddlsched COMMAND --help`` lists the families (and, for ``solve`` and
``compare``, every family's methods; for ``instance generate`` its
presets); ``ddlsched methods FAMILY`` gives the methods' parameters with
types, ranges and help texts, ``ddlsched presets FAMILY`` the presets'
(``--set``); ``ddlsched bench table --help`` explains the table's columns.

Modules: this one builds the parser (one function per command) and runs
``instance generate``, ``solve`` and ``compare``; ``instance check`` and
``instance schema`` are :mod:`ddlsched.cli_instance`'s; ``methods`` and ``presets`` are
:mod:`ddlsched.cli_listings`'s, ``simulate`` :mod:`ddlsched.cli_simulate`'s
(one command for every family with a :class:`~ddlsched.registry.Simulation`),
``bench`` :mod:`ddlsched.bench.cli`'s.

Every flag is checked by an argparse type of :mod:`ddlsched.cli_types`
(seeds ``0..2147483647``, counts ``>= 1``, time limits finite and ``> 0``,
Dask addresses); ``--param`` and ``--set`` values by the method's or the
preset's typed parameter class (:mod:`ddlsched.params`: unknown names,
types, ranges, NaN, sizes a generator cannot make in seconds).

``solve`` shows one transient progress line on stderr (phase, elapsed time,
the last solve's incumbent and bound) when stderr is a terminal, unless
``--quiet``, or ``--json`` with its output piped or redirected (the
library reports through :mod:`ddlsched.progress`; it never prints).

Every error a user can cause (a malformed file, an impossible instance, an
unknown method, a bad option) prints one line ``ddlsched: error: ...`` on
stderr and exits with status 2. ``solve`` exits 0 with any result (a
method that found no schedule, ``no_solution``, included) except status
``error`` (1). Every status and exit code: README.md, "Statuses and exit
codes" (``ddlsched --help`` points there).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import math
import os
import sys
import textwrap
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from ddlsched import __version__, cli_types
from ddlsched.cli_instance import add_instance_check_commands
from ddlsched.cli_listings import cell, console, list_methods, list_presets
from ddlsched.cli_types import lazy_help
from ddlsched.deadline import DEFAULT_TIME_LIMIT_S
from ddlsched.errors import DdlschedError
from ddlsched.params import parse_assignments

__all__ = ["main"]

#: ``solve``: the method ran and its result has status ``error`` (README: "Statuses and exit codes").
EXIT_METHOD_ERROR = 1
#: A usage error or any error a user can cause (one line ``ddlsched: error: ...``).
EXIT_USAGE = 2
#: The reader of the output went away (``ddlsched ... | head``): 128 + SIGPIPE, as a shell reports.
EXIT_BROKEN_PIPE = 141


class _Parser(cli_types.LazyHelpParser):
    """argparse with one-line errors (its default prints the usage first) and lazy help texts."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_USAGE, f"ddlsched: error: {_one_line(message)}\n")


# --------------------------------------------------------------------------- commands


def _cmd_generate(args: argparse.Namespace) -> int:
    from ddlsched.registry import get_family

    fam = get_family(args.family)
    params = parse_assignments(args.set, "--set")
    instance = fam.generate(args.preset, args.seed, **params)
    instance.save(args.output)  # jsonio.JsonInstance: atomic, one line if it cannot write
    print(f"wrote {args.output} ({fam.name}, preset {args.preset}, seed {args.seed})")
    return 0


def _fmt(x: float | None, digits: int = 4) -> str:
    if x is None:
        return "-"
    if isinstance(x, float) and math.isinf(x):
        return "infinite"
    return f"{x:.{digits}g}"


def _cmd_solve(args: argparse.Namespace) -> int:
    from ddlsched.deadline import Deadline
    from ddlsched.errors import TimeLimitReached
    from ddlsched.registry import RunOptions, get_family, get_method, run_method
    from ddlsched.solvers.result import Status

    fam = get_family(args.family)
    get_method(fam.name, args.method)  # an unknown method: one line before loading
    options = RunOptions(
        time_limit_s=args.time_limit,
        seed=args.seed,
        backend=args.backend,
        params=parse_assignments(args.param, "--param"),
    )
    deadline = Deadline(options.time_limit_s)  # the limit covers loading the instance too
    try:
        with deadline.interrupting("loading the instance"):
            instance = fam.load(args.file)
    except TimeLimitReached:
        instance = None  # run_method reports time_limit_no_solution without running it
    load_s = deadline.elapsed_s()
    shown = (
        not args.quiet
        and sys.stderr.isatty()
        and not (args.json and not sys.stdout.isatty())  # JSON piped: a script reads it
    )
    with _progress_line(shown, f"{fam.name}.{args.method}"):
        result = run_method(
            fam.name, args.method, instance, options, raise_errors=True, deadline=deadline
        )
    result.info["load_s"] = load_s
    if args.json:
        print(json.dumps(result.to_dict(fam.schedule_json(result)), indent=2, allow_nan=False))
    else:
        screen = console()
        screen.print(f"[bold]{fam.name}.{args.method}[/bold] on {args.file}")
        screen.print(f"  status     {result.status}")
        if result.status is Status.NO_SOLUTION:
            screen.print(cell(f"  reason     {result.info.get('reason')}"))
        screen.print(f"  objective  {_fmt(result.objective, 8)}  ({fam.objective_name})")
        screen.print(f"  bound      {_fmt(result.bound, 8)}")
        screen.print(f"  gap        {_fmt(result.gap)}")
        screen.print(f"  runtime    {result.runtime_s:.3f} s")
        if result.solver_time_s is not None:
            screen.print(f"  solver     {result.solver_time_s:.3f} s")
        if result.time_limit_hit:
            screen.print("  stopped by the time limit")
        if result.backend:
            screen.print(f"  backend    {result.backend} {result.backend_version}")
        for key, value in result.info.items():
            if key != "reason" or result.status is not Status.NO_SOLUTION:
                screen.print(cell(f"  {key:<10} {value}"))
    return EXIT_METHOD_ERROR if result.status is Status.ERROR else 0


@contextlib.contextmanager
def _progress_line(shown: bool, what: str) -> Iterator[None]:
    """One transient line on stderr drawn from :mod:`ddlsched.progress` reports."""
    if not shown:
        yield
        return
    from rich.live import Live
    from rich.spinner import Spinner
    from rich.text import Text

    from ddlsched import progress

    state = progress.State(what)
    spinner = Spinner("dots")

    def render() -> Spinner:
        spinner.update(text=Text(state.snapshot().text()))
        return spinner

    screen = console(stderr=True)
    with (
        progress.listening(state),
        Live(get_renderable=render, console=screen, transient=True, refresh_per_second=8),
    ):
        yield


def _cmd_compare(args: argparse.Namespace) -> int:
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    from ddlsched.bench.compare import compare
    from ddlsched.bench.tables import (
        ratio_note,
        rows_markdown,
        summarize,
        to_csv,
        to_latex,
        to_markdown,
    )
    from ddlsched.registry import get_family

    fam = get_family(args.family)
    last = args.first_seed + args.seeds - 1
    if last > cli_types.MAX_SEED:
        raise DdlschedError(
            f"--first-seed {args.first_seed} with --seeds {args.seeds} reaches seed {last}, "
            f"beyond {cli_types.MAX_SEED}"
        )
    seeds = list(range(args.first_seed, args.first_seed + args.seeds))
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=console(stderr=True),
        transient=True,
        disable=not sys.stderr.isatty(),  # a log gets no bar (and no blank line)
    ) as progress:
        task = progress.add_task("compare", total=None)

        def tick(done: int, total: int, what: str) -> None:
            progress.update(task, completed=done, total=total, description=what)

        report = compare(
            fam.name,
            args.preset,
            seeds,
            args.methods,
            time_limit_s=args.time_limit,
            backend=args.backend,
            preset_params=parse_assignments(args.set, "--set"),
            on_progress=tick,
        )
    rated = report.rated()
    summary = summarize(rated)
    title = f"{fam.name}, preset {args.preset}, seeds {seeds[0]}..{seeds[-1]}: {fam.objective_name}"
    if args.format == "csv":
        print(to_csv(summary), end="")
        return 0
    if args.format == "latex":
        print(to_latex(summary, caption=f"{title}. {ratio_note(rated)}"), end="")
        return 0
    if args.detail:
        print(f"{title}: per instance\n\n{rows_markdown(rated)}")
    print(f"{title}\n\n{to_markdown(summary, ratio_note(rated))}", end="")
    return 0


# --------------------------------------------------------------------------- parser


def _families() -> list:
    from ddlsched.registry import families

    return families()


def _family_help() -> str:
    names = ", ".join(f.name for f in _families())
    return f"problem family: {names} (ddlsched methods lists their methods)"


def _by_family(title: str, items: Callable[[object], Sequence[str]]) -> Callable[[], str]:
    """An epilog listing ``items(family)`` for every family, wrapped."""

    def make() -> str:
        fams = _families()
        width = max(len(f.name) for f in fams) + 4
        lines = [title]
        for fam in fams:
            lines.append(
                textwrap.fill(
                    ", ".join(items(fam)),
                    width=78,
                    initial_indent=f"  {fam.name:<{width - 2}}",
                    subsequent_indent=" " * width,
                )
            )
        return "\n".join(lines)

    return make


def _methods_of(fam) -> list[str]:
    from ddlsched.registry import methods

    return [m.name for m in methods(fam.name)]


_METHODS_EPILOG = _by_family(
    "methods by family (their parameters: ddlsched methods FAMILY):",
    _methods_of,
)
_PRESETS_EPILOG = _by_family(
    "presets by family (their parameters: ddlsched presets FAMILY):",
    lambda fam: fam.presets,
)


def _family_argument(p: argparse.ArgumentParser, optional: bool = False) -> None:
    action = p.add_argument("family", nargs="?" if optional else None, metavar="FAMILY")
    lazy_help(action, (lambda: _family_help() + "; default: all") if optional else _family_help)


def _memory_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--memory-budget",
        type=cli_types.megabytes,
        metavar="MB",
        help="memory a method may allocate, MiB; larger models are refused before they are "
        "built (default: $DDLSCHED_MEMORY_BUDGET_MB, else half the machine's memory)",
    )


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The argument parser; family commands (``simulate FAMILY``) only when ``argv`` uses them."""
    parser = _Parser(
        prog="ddlsched",
        description="Scheduling distributed deep-learning jobs: heuristics against exact optima.",
        epilog="ddlsched COMMAND --help: the command's options, with the families, methods "
        "and presets it accepts. What each result status (optimal, no_solution, error, ...) "
        "and each exit code means: README.md, section 'Statuses and exit codes'.",
    )
    parser.add_argument("--version", action="version", version=f"ddlsched {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress to stderr")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    _add_listing_commands(sub)
    _add_instance_commands(sub)
    _add_solve_command(sub)
    _add_compare_command(sub)

    from ddlsched.bench.cli import add_bench_commands

    add_bench_commands(sub)
    _add_simulate_command(sub, load_families=_command(argv) == "simulate")
    from ddlsched.cli_new import add_new_command

    add_new_command(sub)
    from ddlsched.cli_data import add_data_command

    add_data_command(sub)
    from ddlsched.cli_reproduce import add_reproduce_command

    add_reproduce_command(sub)
    return parser


_SEED_HELP = f"in 0..{cli_types.MAX_SEED}"


def _add_listing_commands(sub: Any) -> None:
    """``methods`` and ``presets``."""
    p = sub.add_parser(
        "methods",
        help="list families and their methods (typed parameters)",
        description="Families, their methods and the methods' typed parameters "
        "(--param NAME=VALUE); with FAMILY also each parameter's help text.",
    )
    _family_argument(p, optional=True)
    p.set_defaults(func=list_methods)

    p = sub.add_parser(
        "presets",
        help="list the instance presets of each family and their parameters",
        description="Instance presets (instance generate --preset, compare --preset, suites) "
        "and their typed parameters (--set NAME=VALUE): type, range, default; with FAMILY "
        "also each parameter's help text.",
    )
    _family_argument(p, optional=True)
    p.set_defaults(func=list_presets)


def _add_instance_commands(sub: Any) -> None:
    """``instance generate`` and ``instance check``."""
    inst = sub.add_parser("instance", help="generate or check instance files")
    inst_sub = inst.add_subparsers(dest="instance_command", required=True, parser_class=_Parser)
    p = inst_sub.add_parser("generate", help="generate an instance from a preset")
    lazy_help(p, _PRESETS_EPILOG)
    _family_argument(p)
    p.add_argument("--preset", required=True, help="generator preset (listed below)")
    p.add_argument(
        "--seed", type=cli_types.seed, default=0, help=f"generator seed, {_SEED_HELP} (default 0)"
    )
    p.add_argument("-o", "--output", required=True, help="instance file to write (JSON)")
    p.add_argument(
        "--set",
        action="append",
        metavar="KEY=VALUE",
        help="preset parameter, VALUE in JSON (repeatable; ddlsched presets FAMILY lists them)",
    )
    p.set_defaults(func=_cmd_generate)
    add_instance_check_commands(inst_sub)  # check and schema: ddlsched.cli_instance


def _add_solve_command(sub: Any) -> None:
    p = sub.add_parser("solve", help="run one method on one instance file")
    lazy_help(p, _METHODS_EPILOG)
    _family_argument(p)
    p.add_argument(
        "file", metavar="FILE", help="instance file (JSON), e.g. from ddlsched instance generate"
    )
    p.add_argument("--method", required=True, help="one of the family's methods (listed below)")
    p.add_argument(
        "--time-limit",
        type=cli_types.seconds,
        default=DEFAULT_TIME_LIMIT_S,
        help="wall time of loading the instance and the whole method, s, finite (default "
        f"{DEFAULT_TIME_LIMIT_S:g}); it excludes only the interpreter's start-up and imports, "
        "and printing the result; runtime_s is the method's part, info.load_s the loading's",
    )
    p.add_argument(
        "--seed",
        type=cli_types.seed,
        default=0,
        help=f"seed of randomised methods and solvers, {_SEED_HELP} (default 0)",
    )
    p.add_argument("--backend", type=_backend, default="highs", help="MILP backend: highs or scip")
    p.add_argument(
        "--param",
        action="append",
        metavar="KEY=VALUE",
        help="method parameter, VALUE in JSON (repeatable; ddlsched methods FAMILY lists them)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress line on stderr")
    _memory_argument(p)
    p.set_defaults(func=_cmd_solve)


def _add_compare_command(sub: Any) -> None:
    p = sub.add_parser(
        "compare",
        help="all methods on generated instances, with ratios",
        description="Every method (or --methods) on --seeds generated instances (method "
        "seed = instance seed), and the ratio table of 'ddlsched bench table' over them: "
        "the same columns (ddlsched bench table --help explains each).",
    )
    lazy_help(p, lambda: _METHODS_EPILOG() + "\n\n" + _PRESETS_EPILOG())
    _family_argument(p)
    p.add_argument("--preset", default="small", help="generator preset (default small)")
    p.add_argument(
        "--seeds",
        type=cli_types.count(maximum=100_000),
        default=5,
        help="number of instances, 1..100000 (default 5)",
    )
    p.add_argument(
        "--first-seed", type=cli_types.seed, default=0, help=f"first seed, {_SEED_HELP} (default 0)"
    )
    p.add_argument("--methods", type=cli_types.names, help="comma-separated methods (default: all)")
    p.add_argument(
        "--time-limit",
        type=cli_types.seconds,
        default=DEFAULT_TIME_LIMIT_S,
        help=f"wall time of each method run, s, finite (default {DEFAULT_TIME_LIMIT_S:g})",
    )
    p.add_argument("--backend", type=_backend, default="highs", help="MILP backend: highs or scip")
    p.add_argument(
        "--set", action="append", metavar="KEY=VALUE", help="preset parameter, VALUE in JSON"
    )
    p.add_argument(
        "--format",
        choices=("md", "latex", "csv"),
        default="md",
        help="the ratio table as bench table prints it (default md)",
    )
    p.add_argument(
        "--detail",
        action="store_true",
        help="also print every (seed, method) row with its own ratio (md only)",
    )
    _memory_argument(p)
    p.set_defaults(func=_cmd_compare)


def _add_simulate_command(sub: Any, load_families: bool) -> None:
    """``simulate FAMILY``: one subcommand per trace-driven family (:mod:`ddlsched.cli_simulate`),
    added only when the command is used (it loads the families, and numpy)."""
    sim = sub.add_parser(
        "simulate",
        help="trace-driven simulation of an online family (ddlsched simulate FAMILY --help)",
        description="Replay a trace through a family's simulator: "
        "ddlsched simulate muri|asrpt --help.",
    )
    sim_sub = sim.add_subparsers(
        dest="simulate_family", required=True, parser_class=_Parser, metavar="FAMILY"
    )
    if load_families:
        from ddlsched.cli_simulate import add_simulate_commands

        add_simulate_commands(sim_sub)


def _backend(text: str) -> str:
    from ddlsched.solvers.result import BACKENDS

    return cli_types.choice(BACKENDS, "backend")(text)


def _command(argv: Sequence[str] | None) -> str | None:
    """The command word of ``argv`` (the first argument not starting with ``-``)."""
    args = sys.argv[1:] if argv is None else argv
    return next((a for a in args if not a.startswith("-")), None)


def _one_line(text: str) -> str:
    """``text`` with every control character (a newline or carriage return a file or a name
    carried into a message) written as its escape: an error is one line, whatever it quotes."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``ddlsched`` console script."""
    try:
        parser = build_parser(argv)
        try:
            args = parser.parse_args(argv)
        except SystemExit as exc:  # usage errors (status 2), --help and --version (0)
            return int(exc.code or 0)
        logging.basicConfig(
            level=logging.INFO if args.verbose else logging.WARNING,
            format="%(levelname)s %(name)s: %(message)s",
        )
        if getattr(args, "memory_budget", None) is not None:
            from ddlsched.memory import budget_for

            with budget_for(args.memory_budget):  # this process and the workers it starts
                return int(args.func(args) or 0)
        return int(args.func(args) or 0)
    except DdlschedError as exc:
        print(f"ddlsched: error: {_one_line(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    except MemoryError:
        print(
            "ddlsched: error: out of memory (set a smaller --memory-budget or instance)",
            file=sys.stderr,
        )
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("ddlsched: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (``ddlsched ... | head``): stop quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        with contextlib.suppress(OSError, ValueError):  # what is still buffered goes nowhere
            os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - no flush error at exit
        return EXIT_BROKEN_PIPE


def run() -> None:
    """The ``ddlsched`` console script: :func:`main`, then the process ends.

    After ``solve`` it ends without tearing its heap down (``os._exit``, once
    the output is flushed): freeing a large Pyomo model object by object took
    2 s after a 100,000-machine ``dmlrs_slot`` ILP, time the ``--time-limit``
    does not cover. Other commands (which may own worker processes and exit
    hooks) exit normally.
    """
    argv = sys.argv[1:]
    code = main(argv)
    if argv[:1] == ["solve"]:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):  # a closed pipe: nothing to say
                stream.flush()
        logging.shutdown()
        os._exit(code)
    sys.exit(code)


if __name__ == "__main__":  # pragma: no cover
    run()
