"""``ddlsched bench verdict``: the verdicts on a paper's claims from results directories.

::

    ddlsched bench verdict RESULTS [RESULTS ...] --claims FILE [--out DIR]
                           [--format markdown|latex] [--version V] [--all-code]
                           [--seeds FIRST-LAST]

Reads the claims file (:func:`ddlsched.bench.claims.load_claims`), the rows
of every results directory (:func:`ddlsched.bench.tables.load_results`: per
method, the rows of its latest code fingerprint, across the directories too,
unless ``--all-code``), and
evaluates every claim (:mod:`ddlsched.bench.verdict`). Prints the verdict
table (rich on a terminal, else ``--format``), writes ``verdict.md``,
``verdict.tex``, ``verdict.json`` and one figure per curve claim to
``--out`` (default: the first results directory's ``verdict/``). A bad
claims file, an unreadable results directory or an unwritable ``--out``
is one ``ddlsched: error:`` line (exit status 2).

``--seeds FIRST-LAST`` (or a comma list) evaluates every claim on these
instance seeds instead of its own: a confirmation run on fresh seeds, with
the rules of the claims file fixed before those rows existed (the verdict
table's seeds column shows them).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from ddlsched.errors import DdlschedError

__all__ = ["add_mix_versions_flag", "add_verdict", "mixed_rule"]


def add_mix_versions_flag(parser: argparse.ArgumentParser) -> None:
    """``--version`` and ``--all-code`` (``bench table`` and ``bench verdict``)."""
    parser.add_argument("--version", help="only the rows of this ddlsched version")
    parser.add_argument(
        "--all-code",
        action="store_true",
        help="use every row, whichever version of its method's code made it (default: per "
        "method, only the rows of its latest code fingerprint)",
    )
    # Rows of several ddlsched versions used to be refused; rows are now chosen per method
    # by their code fingerprint, so the old flag is accepted and changes nothing.
    parser.add_argument("--mix-versions", action="store_true", help=argparse.SUPPRESS)


def mixed_rule(args: argparse.Namespace) -> str:
    """The ``mixed`` argument of :func:`ddlsched.bench.tables.load_results` for these flags."""
    return "mix" if args.all_code else "latest"


def _load(args: argparse.Namespace) -> Any:
    import pandas as pd

    from ddlsched.bench.provenance import latest_code
    from ddlsched.bench.tables import load_results

    frames = [load_results(d, version=args.version, mixed=mixed_rule(args)) for d in args.results]
    found = [f for f in frames if not f.empty]
    frame = pd.concat(found, ignore_index=True) if found else frames[0]
    if len(found) > 1 and not args.all_code:  # one method's code across directories too
        frame = latest_code(frame)
    return frame


def parse_seeds(text: str) -> tuple[int, ...]:
    """``"20-39"`` or ``"1,3,5"`` (non-negative, increasing, no repeats) as a tuple of
    seeds; anything else is a :class:`DdlschedError` naming it."""
    try:
        if "-" in text:
            first, last = (int(part) for part in text.split("-"))
            seeds = tuple(range(first, last + 1))
        else:
            seeds = tuple(int(part) for part in text.split(","))
    except ValueError:
        seeds = ()
    if not seeds or min(seeds) < 0 or list(seeds) != sorted(set(seeds)):
        raise DdlschedError(
            f"--seeds {text!r}: expected FIRST-LAST or increasing seeds a,b,c (>= 0)"
        )
    return seeds


def _cmd_verdict(args: argparse.Namespace) -> int:
    from ddlsched.bench.claims import load_claims
    from ddlsched.bench.verdict import evaluate_claims
    from ddlsched.bench.verdict_report import (
        figures,
        provenance,
        rich_table,
        to_json,
        to_latex,
        to_markdown,
    )

    claims = load_claims(args.claims)
    if args.seeds is not None:
        seeds = parse_seeds(args.seeds)
        claims = replace(claims, claims=tuple(replace(c, seeds=seeds) for c in claims.claims))
    frame = _load(args)
    verdicts = evaluate_claims(frame, claims.claims)
    prov = provenance(args.results, frame, claims)
    markdown = to_markdown(verdicts, prov, claims.title, claims.paper)
    latex = to_latex(verdicts, prov, claims.title)
    out = Path(args.out) if args.out else Path(args.results[0]) / "verdict"
    try:
        out.mkdir(parents=True, exist_ok=True)
        (out / "verdict.md").write_text(markdown)
        (out / "verdict.tex").write_text(latex)
        (out / "verdict.json").write_text(to_json(verdicts, prov, claims.paper))
        paths = figures(verdicts, out, fmt="png")
    except OSError as exc:
        raise DdlschedError(
            f"{exc.filename or out}: cannot write ({exc.strerror or exc})"
        ) from None
    if sys.stdout.isatty() and not args.format:
        from rich.console import Console

        Console(soft_wrap=False).print(rich_table(verdicts, prov, claims.title))
    else:
        sys.stdout.write(latex if args.format == "latex" else markdown)
    written = ", ".join(str(p) for p in [out / "verdict.md", out / "verdict.tex", *paths])
    print(f"written: {written}", file=sys.stderr)
    return 0


def add_verdict(sub: Any) -> None:
    """Add ``bench verdict`` to the ``bench`` subparsers."""
    p = sub.add_parser(
        "verdict",
        help="verdicts on a paper's claims (benchmarks/claims/<paper>.toml) from results",
        description="Evaluate every claim of a claims file on the rows of the results "
        "directories: the comparison it names (a paired difference whose t-interval lies "
        "below or above 0, the side of 0 per point over the seeds, a ratio within a range, a "
        "monotone or shaped curve with a flat tolerance, a flag or an inequality that must hold "
        "on every run) and its rule for reproduced / not reproduced / depends on seeds. A claim "
        "without rows is 'missing' and names the command that runs its suite; one with only "
        "some of its seeds (or, pointwise, some of its points) is marked incomplete. Prints the table (claim, paper's value, ours "
        "with its interval and seed count, verdict) and writes verdict.md, verdict.tex "
        "(booktabs), verdict.json and one figure per curve claim, with the provenance of the "
        "rows (ddlsched version and git commit, solver versions, machine, suite file hash, "
        "dates). The claims format: benchmarks/claims/README.md.",
    )
    p.add_argument("results", nargs="+", help="results directories (bench run's output)")
    p.add_argument("--claims", required=True, help="claims file, e.g. benchmarks/claims/rar.toml")
    p.add_argument("--out", help="directory of the verdict files (default RESULTS/verdict)")
    p.add_argument(
        "--format",
        choices=("markdown", "latex"),
        help="what to print (default: a table on a terminal, markdown otherwise)",
    )
    p.add_argument(
        "--seeds",
        metavar="FIRST-LAST",
        help="evaluate every claim on these instance seeds instead of its own (e.g. 20-39, "
        "or 1,3,5): a confirmation run on fresh seeds, the rules fixed before its rows existed",
    )
    add_mix_versions_flag(p)
    p.set_defaults(func=_cmd_verdict)
