"""``ddlsched reproduce PAPER``: a paper's plan run, then its verdicts, intervals and figures.

For a :class:`~ddlsched.bench.reproduce_plan.Plan`, into ``OUT/<paper>/``:

``suites/<suite>.toml``      the cut of each suite the plan runs (its name kept)
``results/<suite>/``         its result store (as ``bench run --out``; resumable: a second
                             run finishes only the tasks without a row)
``verdict/``                 ``bench verdict`` with the paper's claims on every results
                             directory (``verdict.md``, ``.tex``, ``.json``, curve figures)
``intervals.md``             the interval report (:mod:`ddlsched.bench.intervals_report`)
``figures/<suite>/``         ``bench plot`` of each results directory
``index.md``, ``index.html`` one page: the verdict count line and table, the widest
                             interval per table, the figures, the commands, versions and
                             code fingerprints, the time of each part
``timing.json``              the wall time of each part, in seconds

With ``fresh_from`` (``--fresh-seeds FIRST``) every cut with seeded instance sets (and not
``fresh = false`` in the plan) runs again on instance seeds its suite never names, as many
per set as the cut's, from ``FIRST`` on
(:func:`~ddlsched.bench.reproduce_plan.cut_suite_text`): ``suites/<suite>-fresh-FIRST.toml``
into ``fresh-FIRST/<suite>/`` (one directory per choice of seeds, so two choices never mix);
the interval report and the index page then compare each table's widths
on both sets of seeds with the same methods (:mod:`ddlsched.bench.seed_sets`). The verdicts
read the plan's seeds only (``bench verdict --seeds`` reads others).

Claims whose suites the plan leaves out stay in the verdict as ``missing``. Errors are
one-line :class:`~ddlsched.errors.DdlschedError` s: an unwritable ``OUT``, a suite the
check refuses (its first problem, e.g. a missing data file and the ``ddlsched data
fetch NAME`` that gets it).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ddlsched.bench.reproduce_index import write_text
from ddlsched.bench.reproduce_plan import Cut, Plan, check_fresh, cut_suite_text, runs_fresh
from ddlsched.errors import DdlschedError

__all__ = ["CutRun", "PaperRun", "check_writable", "plan_lines", "reproduce_paper"]


@dataclass
class CutRun:
    """One cut: its suite file, results directory, task counts and wall time."""

    cut: Cut
    suite_file: Path
    results: Path
    tasks: int = 0
    run: int = 0
    stored: int = 0
    failed: int = 0
    statuses: dict[str, int] = field(default_factory=dict)
    elapsed_s: float = 0.0
    reference: CutRun | None = None  # for a cut on fresh instance seeds: the plan's own

    @property
    def fresh(self) -> bool:
        """Whether this is the cut on fresh instance seeds."""
        return self.reference is not None

    @property
    def name(self) -> str:
        """The suite, and `` on fresh seeds`` for a fresh-seed cut."""
        return self.cut.suite + (" on fresh seeds" if self.fresh else "")


@dataclass
class PaperRun:
    """What ``reproduce`` did for one paper (the index page is written from it)."""

    plan: Plan
    out: Path
    cuts: list[CutRun]
    count_line: str = ""
    verdict_markdown: str = ""
    widest: list[tuple[str, float]] = field(default_factory=list)
    figures: list[Path] = field(default_factory=list)
    verdict_figures: list[Path] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)
    commands: list[tuple[str, str]] = field(default_factory=list)
    provenance: dict[str, Any] = field(default_factory=dict)
    fresh_from: int | None = None
    fresh_cuts: list[CutRun] = field(default_factory=list)
    fresh_lines: list[Any] = field(default_factory=list)  # seed_sets.SeedSetLine per table


def _shown(path: Path) -> str:
    """``path`` as the index page quotes it: no absolute path of this machine."""
    from ddlsched.bench.paths import portable_path

    return str(portable_path(path))


def check_writable(out: Path) -> None:
    """Make ``out`` (and its parents), or raise one line saying why it cannot be written."""
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DdlschedError(f"{out}: cannot write ({exc.strerror or exc})") from None
    if not os.access(out, os.W_OK | os.X_OK):
        raise DdlschedError(f"{out}: cannot write (permission denied)")


def _current_keys(results: Path, tasks: Sequence[Any]) -> set[str]:
    """The keys of ``tasks`` whose latest stored row was made by the task's own code (a
    row of other code runs again, as ``bench run`` decides: :func:`stale_row`)."""
    from ddlsched.bench.runner import stale_row
    from ddlsched.bench.store import read_rows

    if not (results / "manifest.json").exists():
        return set()
    table = read_rows(results).select(["key", "code_fingerprint"])
    latest = {row["key"]: row for row in table.to_pylist()}
    return {t.key for t in tasks if t.key in latest and not stale_row(t, latest[t.key])}


def _load_cut(cut_run: CutRun) -> Any:
    """The cut's suite, checked as ``bench run`` checks it (instances cached in its
    results directory); the check's first problem is the error line."""
    from ddlsched.bench.suite import load_suite
    from ddlsched.bench.suite_values import SuiteCheckError

    try:
        return load_suite(cut_run.suite_file, cache=True, out=cut_run.results)
    except SuiteCheckError as exc:
        lines = exc.check.lines()
        more = f" (and {len(lines) - 1} more problem(s))" if len(lines) > 1 else ""
        raise DdlschedError(f"{lines[0]}{more}") from None


def plan_lines(plan: Plan, out: Path, suites: Path, fresh_from: int | None = None) -> list[str]:
    """``--dry-run``: per cut, what runs (tasks, already stored, worst-case task time) and
    what a larger budget would buy, and with ``fresh_from`` its fresh-seed cut's tasks;
    nothing is run or written under ``out``."""
    import tempfile

    from ddlsched.bench.suite import load_suite
    from ddlsched.bench.tasks import expand

    lines = [f"{plan.paper}: {plan.title} (plan {plan.source}; {plan.budget or 'no estimate'})"]
    with tempfile.TemporaryDirectory() as tmp:
        for cut in plan.cuts:
            runs = [(cut.suite, None, out / plan.paper / "results" / cut.suite)]
            if fresh_from is not None and runs_fresh(cut, suites):
                fresh_dir = out / plan.paper / f"fresh-{fresh_from}" / cut.suite
                runs.append((f"{cut.suite} on fresh seeds", fresh_from, fresh_dir))
            for name, first, results in runs:
                path = Path(tmp) / f"{cut.suite}.toml"
                path.write_text(cut_suite_text(cut, suites, fresh_from=first), encoding="utf-8")
                suite = load_suite(path, check_registry=False)
                tasks = expand(suite)
                keys = _current_keys(results, tasks)
                stored = len(keys)
                worst = sum(t.kill_after_s for t in tasks if t.key not in keys)
                lines.append(
                    f"  {name}: {len(tasks)} task(s), {stored} already stored by the current "
                    f"code in {results}, "
                    f"{len(tasks) - stored} to run (at most {worst / 3600:.1f} h of task time, "
                    "every task at its kill limit)"
                )
            if fresh_from is not None and len(runs) == 1:
                lines.append(f"  {cut.suite}: no fresh-seed cut ({_no_fresh(cut)})")
            lines.append(f"    cut: {cut.summary()}")
            if cut.larger_budget:
                lines.append(f"    a larger budget would buy: {cut.larger_budget}")
    fresh = ", the widths on both sets of seeds" if fresh_from is not None else ""
    lines.append(
        f"  then: bench verdict with benchmarks/claims/{plan.claims}.toml, the interval report"
        f"{fresh}, the figures and {out / plan.paper / 'index.md'}"
    )
    return lines


def _no_fresh(cut: Cut) -> str:
    return "the plan says fresh = false" if not cut.fresh else "no seeded instance set"


def _run_cuts(
    run: PaperRun,
    cut_runs: Sequence[CutRun],
    suites: Path,
    workers: int | None,
    dask: str | None,
    progress: Callable[[str], Callable[[Any], None] | None],
) -> None:
    from ddlsched.bench.runner import run_suite

    for cut_run in cut_runs:
        start = time.perf_counter()
        first = run.fresh_from if cut_run.fresh else None
        note = f"plan {run.plan.source}"
        write_text(cut_run.suite_file, cut_suite_text(cut_run.cut, suites, note, first))
        suite = _load_cut(cut_run)
        summary = run_suite(
            suite,
            cut_run.results,
            workers=workers,
            dask=dask,
            on_progress=progress(f"{run.plan.paper}/{cut_run.name}"),
        )
        cut_run.tasks = summary.done + summary.skipped
        cut_run.run, cut_run.stored, cut_run.failed = summary.done, summary.skipped, summary.failed
        cut_run.statuses = dict(summary.status_counts)
        cut_run.elapsed_s = time.perf_counter() - start
        run.seconds[f"run {cut_run.name}"] = cut_run.elapsed_s
        shown = f" --workers {workers}" if workers else ""
        shown += f" --dask {dask}" if dask else ""
        run.commands.append(
            (
                f"rows of {cut_run.name}",
                f"ddlsched bench run {_shown(cut_run.suite_file)} --out "
                f"{_shown(cut_run.results)}{shown}",
            )
        )


def _verdict(run: PaperRun, benchmarks: Path) -> None:
    import pandas as pd

    from ddlsched.bench.claims import load_claims
    from ddlsched.bench.provenance import latest_code
    from ddlsched.bench.tables import load_results
    from ddlsched.bench.verdict import evaluate_claims
    from ddlsched.bench.verdict_report import (
        count_line,
        figures,
        provenance,
        to_json,
        to_latex,
        to_markdown,
    )

    start = time.perf_counter()
    claims_file = benchmarks / "claims" / f"{run.plan.claims}.toml"
    claims = load_claims(claims_file)
    dirs = [c.results for c in run.cuts]
    frames = [load_results(d) for d in dirs]
    found = [f for f in frames if not f.empty]
    frame = latest_code(pd.concat(found, ignore_index=True)) if found else frames[0]
    verdicts = evaluate_claims(frame, claims.claims)
    run.provenance = provenance(dirs, frame, claims)
    out = run.out / "verdict"
    run.verdict_markdown = to_markdown(verdicts, run.provenance, claims.title, claims.paper)
    write_text(out / "verdict.md", run.verdict_markdown)
    write_text(out / "verdict.tex", to_latex(verdicts, run.provenance, claims.title))
    write_text(out / "verdict.json", to_json(verdicts, run.provenance, claims.paper))
    try:
        run.verdict_figures = figures(verdicts, out, fmt="png")
    except OSError as exc:
        raise DdlschedError(
            f"{exc.filename or out}: cannot write ({exc.strerror or exc})"
        ) from None
    run.count_line = count_line(claims.paper, verdicts)
    run.seconds["verdict"] = time.perf_counter() - start
    run.commands.append(
        (
            "verdict",
            f"ddlsched bench verdict {' '.join(map(_shown, dirs))} --claims "
            f"{_shown(claims_file)} --out {_shown(out)}",
        )
    )


def _intervals(run: PaperRun, benchmarks: Path) -> None:
    from ddlsched.bench.intervals_report import load_explanations, report_and_widest

    start = time.perf_counter()
    dirs = [c.results for c in run.cuts]
    explained = benchmarks / "results" / "intervals-explained.toml"
    out = run.out / "intervals.md"
    command = f"python benchmarks/intervals.py {' '.join(map(_shown, dirs))}"
    for fresh in run.fresh_cuts:
        command += f" --fresh {_shown(fresh.reference.results)}={_shown(fresh.results)}"
    command += f" --out {_shown(out)}"
    extra = ["", *_fresh_section(run)] if run.fresh_cuts else []
    explanations = load_explanations(explained if explained.exists() else None)
    text, run.widest = report_and_widest(dirs, command, None, explanations, extra)
    write_text(out, text)
    run.seconds["intervals"] = time.perf_counter() - start
    run.commands.append(("interval report", command))


def _fresh_section(run: PaperRun) -> list[str]:
    """The widths of each cut's tables on the plan's seeds and on the fresh ones (the
    section ``benchmarks/intervals.py --fresh`` writes for the same directories)."""
    from ddlsched.bench.seed_sets import section, seed_set_table
    from ddlsched.bench.tables import load_results

    run.fresh_lines, sources = [], []
    for fresh in run.fresh_cuts:
        reference, rows = load_results(fresh.reference.results), load_results(fresh.results)
        if reference.empty or rows.empty:
            continue
        run.fresh_lines += seed_set_table(reference, rows, prefix=fresh.results.name)
        sources.append((_shown(fresh.reference.results), [_shown(fresh.results)]))
    return section(run.fresh_lines, sources)


def _figures(run: PaperRun) -> None:
    from ddlsched.bench.plots import plot_results

    start = time.perf_counter()
    for cut_run in run.cuts:
        out = run.out / "figures" / cut_run.cut.suite
        try:
            run.figures += plot_results(cut_run.results, out, fmt="png")
        except OSError as exc:
            path = exc.filename or out
            raise DdlschedError(f"{path}: cannot write ({exc.strerror or exc})") from None
        run.commands.append(
            (
                f"figures of {cut_run.cut.suite}",
                f"ddlsched bench plot {_shown(cut_run.results)} --out {_shown(out)}",
            )
        )
    run.seconds["figures"] = time.perf_counter() - start


def reproduce_paper(
    plan: Plan,
    out: Path,
    benchmarks: Path,
    *,
    workers: int | None = None,
    dask: str | None = None,
    progress: Callable[[str], Callable[[Any], None] | None] = lambda name: None,
    fresh_from: int | None = None,
) -> PaperRun:
    """Run ``plan``'s cuts into ``out/<paper>/results`` (and, with ``fresh_from``, on fresh
    instance seeds into ``out/<paper>/fresh-<fresh_from>``), then its verdicts, interval report, figures
    and index page (module docstring); ``progress(name)`` gives each cut's ``on_progress``
    callback. Returns what was done; the index page is written."""
    from ddlsched.bench.reproduce_index import write_index

    start = time.perf_counter()
    paper_dir = out / plan.paper
    check_writable(paper_dir)
    cuts = [
        CutRun(cut, paper_dir / "suites" / f"{cut.suite}.toml", paper_dir / "results" / cut.suite)
        for cut in plan.cuts
    ]
    run = PaperRun(plan=plan, out=paper_dir, cuts=cuts, fresh_from=fresh_from)
    suites = benchmarks / "suites"
    if fresh_from is not None:
        check_fresh(plan, suites, fresh_from)  # a bad choice of seeds fails before anything runs
        run.fresh_cuts = [
            CutRun(
                c.cut,
                paper_dir / "suites" / f"{c.cut.suite}-fresh-{fresh_from}.toml",
                paper_dir / f"fresh-{fresh_from}" / c.cut.suite,
                reference=c,
            )
            for c in cuts
            if runs_fresh(c.cut, suites)
        ]
    _run_cuts(run, cuts, suites, workers, dask, progress)
    _run_cuts(run, run.fresh_cuts, suites, workers, dask, progress)
    _verdict(run, benchmarks)
    _intervals(run, benchmarks)
    _figures(run)
    run.seconds["total"] = time.perf_counter() - start
    write_index(run)
    write_text(paper_dir / "timing.json", json.dumps(run.seconds, indent=2) + "\n")
    return run
