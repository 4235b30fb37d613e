"""The verdict table of ``ddlsched bench verdict``: Markdown, LaTeX, rich, figures, provenance.

One line per claim: its id, the paper's value, ours (with its interval and
seed count) and the verdict (:mod:`ddlsched.bench.verdict`). Every file
carries the provenance of the rows: per results
directory, the suite, its file and SHA-256, the ddlsched version and git
commit recorded in the manifest, the machine, the run dates and the load average
recorded at the runs' starts and ends (times, and answers a time limit cut, move with
it; "load not recorded" for results made before ddlsched recorded it); the solver
versions found in the rows' ``versions``; the claims file and its SHA-256;
the date of the verdict. A curve claim (``monotone``, ``shaped``) gets one
figure: the mean curve with its t-interval bars and every seed's curve
(matplotlib, Agg, as ``bench plot``). Markdown and LaTeX (booktabs) reuse
the table helpers of :mod:`ddlsched.bench.tables`.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from ddlsched.bench.claims import ClaimsFile
from ddlsched.bench.paths import portable_path
from ddlsched.bench.store import read_manifest
from ddlsched.bench.tables import markdown_lines, tex_escape
from ddlsched.bench.verdict import MISSING, VERDICTS, Verdict

__all__ = [
    "HEADERS",
    "count_line",
    "figures",
    "provenance",
    "rich_table",
    "to_json",
    "to_latex",
    "to_markdown",
]

#: The columns of the verdict table.
HEADERS = ("claim", "paper's value", "ours", "seeds", "rule", "verdict")

_SHORT = {"not reproduced": "not", "depends on seeds": "depends"}


def count_line(paper: str, verdicts: Sequence[Verdict]) -> str:
    """One line: the paper and its count of verdicts, ``reproduced 12 / not 5 / depends 3 /
    vacuous 4 / missing 0 (28 claims)``; incomplete ones (read on part of their seeds or
    points) are counted by their verdict and named after the total: ``(28 claims, 2
    incomplete)``."""
    counts = {word: sum(v.verdict == word for v in verdicts) for word in VERDICTS}
    parts = " / ".join(f"{_SHORT.get(word, word)} {n}" for word, n in counts.items())
    partial = sum(v.incomplete and v.verdict != MISSING for v in verdicts)
    tail = f", {partial} incomplete" if partial else ""
    return f"{paper}: {parts} ({len(verdicts)} claims{tail})"


def _rule_text(verdict: Verdict) -> str:
    """When the claim's rule was written (before / after its rows) and its confirmation."""
    claim = verdict.claim
    if not claim.rule_written:
        return "-"
    return claim.rule_written + (f"; {claim.confirmation}" if claim.confirmation else "")


def _seed_text(seeds: Sequence[int]) -> str:
    if not seeds:
        return "-"
    if list(seeds) == list(range(seeds[0], seeds[-1] + 1)):
        return f"{len(seeds)} ({seeds[0]}-{seeds[-1]})" if len(seeds) > 1 else str(seeds[0])
    return f"{len(seeds)} ({', '.join(map(str, seeds))})"


def _cells(verdict: Verdict) -> list[str]:
    claim = verdict.claim
    name = f"{claim.id}: {claim.text}"
    ours = verdict.ours if not verdict.note else f"{verdict.ours}; {verdict.note}"
    return [name, claim.paper_value, ours, _seed_text(verdict.seeds), _rule_text(verdict),
            verdict.shown]  # fmt: skip


def provenance(
    directories: Sequence[str | Path], frame: pd.DataFrame, claims: ClaimsFile
) -> dict[str, Any]:
    """Where the rows and the rules come from (module docstring), as a JSON-able dict."""
    results = []
    for directory in directories:
        manifest = read_manifest(directory)
        runs = manifest.get("runs", [])
        results.append(
            {
                "directory": portable_path(directory),
                "suite": manifest.get("suite"),
                "suite_file": portable_path(manifest.get("suite_file")),
                "suite_sha256": manifest.get("suite_sha256"),
                "ddlsched": manifest.get("versions", {}).get("ddlsched"),
                "git": manifest.get("git", {}),
                "machine": manifest.get("machine", {}),
                "first_run": min((r.get("started_at", "") for r in runs), default=None),
                "last_run": max((r.get("finished_at") or "" for r in runs), default=None),
                "load": _load_range(runs),
            }
        )
    solvers: dict[str, set[str]] = {}
    if not frame.empty:
        for text in frame["versions"].dropna().unique():
            for name, version in json.loads(text).items():
                solvers.setdefault(name, set()).add(str(version))
    return {
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "claims_file": portable_path(claims.path),
        "claims_sha256": claims.sha256,
        "row_versions": sorted(frame["ddlsched_version"].dropna().unique()) if len(frame) else [],
        "versions": {name: sorted(found) for name, found in sorted(solvers.items())},
        "results": results,
    }


def _load_range(runs: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """Over the runs that wrote rows: the lowest and highest 1-minute load average recorded at
    their starts and ends, and how many of them recorded none (results made before ddlsched
    recorded it); ``None`` when no run wrote rows."""
    writing = [r for r in runs if (r.get("rows_written") or 0) > 0]
    if not writing:
        return None
    loads, unrecorded = [], 0
    for run in writing:
        known = [run.get(k) for k in ("load_at_start", "load_at_end")]
        known = [x for x in known if isinstance(x, (int, float))]
        loads += known
        unrecorded += not known
    return {
        "range": [min(loads), max(loads)] if loads else None,
        "runs": len(writing),
        "unrecorded": unrecorded,
    }


def _load_text(load: dict[str, Any] | None) -> str:
    if not load or not load["range"]:
        return ", load not recorded"
    low, high = load["range"]
    shown = f"{low:.1f}" if round(low, 1) == round(high, 1) else f"{low:.1f}-{high:.1f}"
    text = f", load {shown} (1-minute average at the starts and ends of the runs that wrote rows"
    if load["unrecorded"]:
        text += f"; not recorded for {load['unrecorded']} of those {load['runs']} runs"
    return text + ")"


def _provenance_lines(prov: dict[str, Any]) -> list[str]:
    lines = [
        f"verdict of {prov['date']}; claims {prov['claims_file']} "
        f"(sha256 {prov['claims_sha256'][:12]})",
    ]
    for res in prov["results"]:
        git = res["git"] or {}
        commit = (git.get("commit") or "unknown")[:12] + (" (dirty)" if git.get("dirty") else "")
        machine = res["machine"] or {}
        lines.append(
            f"rows {res['directory']}: suite {res['suite']} ({res['suite_file']}, sha256 "
            f"{(res['suite_sha256'] or '-')[:12]}), ddlsched {res['ddlsched']} at commit "
            f"{commit}, machine {machine.get('hostname', '-')} ({machine.get('platform', '-')}, "
            f"{machine.get('cpu_count', '-')} CPUs), run {res['first_run']} to {res['last_run']}"
            + _load_text(res.get("load"))
        )
    versions = ", ".join(f"{name} {'/'.join(v)}" for name, v in prov["versions"].items())
    lines.append(f"row versions: {versions or '-'}")
    return lines


def to_markdown(
    verdicts: Sequence[Verdict], prov: dict[str, Any], title: str, paper: str = ""
) -> str:
    """The verdict table as Markdown under the per-paper count line (:func:`count_line`),
    with the provenance and the rules' source below."""
    lines = [f"# Verdicts: {title}", "", count_line(paper or title, verdicts), ""]
    lines += markdown_lines(list(HEADERS), [_cells(v) for v in verdicts], left=len(HEADERS))
    lines += ["", "Provenance:", ""]
    lines += [f"* {line}" for line in _provenance_lines(prov)]
    lines += [
        "",
        "Intervals: Student t over the seeds (mean ± half-width). The rule of each claim is "
        f"in {prov['claims_file']}; the kinds: benchmarks/claims/README.md.",
    ]
    return "\n".join(lines) + "\n"


def to_latex(verdicts: Sequence[Verdict], prov: dict[str, Any], title: str) -> str:
    """The verdict table as a booktabs ``table`` (needs ``\\usepackage{booktabs}``)."""
    lines = [f"% {line}" for line in _provenance_lines(prov)]
    lines += [r"\begin{table}[t]", r"\centering", r"\small"]
    caption = f"{title}: verdicts on the paper's claims, {count_line('', verdicts)[2:]} "
    caption += f"({_provenance_lines(prov)[0]})"
    lines += [rf"\caption{{{tex_escape(caption)}}}"]
    lines += [r"\begin{tabular}{p{4.5cm}p{2.2cm}p{4.5cm}lp{1.6cm}p{2.2cm}}", r"\toprule"]
    lines.append(" & ".join(tex_escape(h) for h in HEADERS) + r" \\")
    lines.append(r"\midrule")
    for verdict in verdicts:
        cells = (tex_escape(c).replace("±", r"$\pm$") for c in _cells(verdict))
        lines.append(" & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    return "\n".join(lines) + "\n"


def to_json(verdicts: Sequence[Verdict], prov: dict[str, Any], paper: str) -> str:
    """Every verdict with its numbers, seeds and the claim's fields, and the provenance."""
    records = [
        {
            "claim": v.claim.id,
            "verdict": v.verdict,
            "shown": v.shown,
            "rule_written": v.claim.rule_written,
            "confirmation": v.claim.confirmation,
            "incomplete": v.incomplete,
            "ours": v.ours,
            "note": v.note,
            "seeds": list(v.seeds),
            "numbers": v.numbers,
            "instances": list(v.instances) if v.instances else None,
            "rule": dataclasses.asdict(v.claim),
        }
        for v in verdicts
    ]
    counts = {word: sum(v.verdict == word for v in verdicts) for word in VERDICTS}
    body = {"paper": paper, "counts": counts, "provenance": prov, "verdicts": records}
    return json.dumps(body, indent=1, default=str) + "\n"


_STYLE = {"reproduced": "green", "not reproduced": "red", "depends on seeds": "yellow",
          "vacuous": "magenta"}  # fmt: skip


def rich_table(verdicts: Sequence[Verdict], prov: dict[str, Any], title: str) -> Any:
    """A :class:`rich.table.Table` of the verdicts (the terminal's view)."""
    from rich.table import Table

    table = Table(
        title=f"Verdicts: {title}\n{count_line('', verdicts)[2:]}",
        caption="\n".join(_provenance_lines(prov)),
    )
    for header in HEADERS:
        table.add_column(header, overflow="fold")
    for verdict in verdicts:
        cells = _cells(verdict)
        style = _STYLE.get(verdict.verdict, "dim")
        table.add_row(*cells[:-1], f"[{style}]{cells[-1]}[/{style}]")
    return table


def figures(verdicts: Sequence[Verdict], out: Path, fmt: str = "png") -> list[Path]:
    """One figure per curve claim: every seed's curve (thin) and the mean with its bars."""
    from ddlsched.bench.plots import _pyplot, _save

    plt = _pyplot()
    paths = []
    for verdict in verdicts:
        curve = verdict.curve
        if curve is None:
            continue
        fig, ax = plt.subplots(figsize=(5.5, 3.8))
        for values in curve.curves.values():
            ax.plot(curve.xs, values, color="0.75", lw=0.7)
        halves = [0.0 if h == float("inf") else h for h in curve.halves]
        ax.errorbar(curve.xs, curve.means, yerr=halves, fmt="o-", color="C0", capsize=3,
                    label=f"mean, {verdict.claim.option('confidence'):.0%} t-interval")  # fmt: skip
        if min(curve.xs) > 0 and max(curve.xs) >= 16 * min(curve.xs):
            ax.set_xscale("log", base=2)  # doubling steps (kappa 1..32)
        ax.set_xlabel(curve.over)
        against = verdict.claim.option("against")
        ax.set_ylabel(f"{verdict.claim.metric}, {verdict.claim.method} / {against}" if against
                      else verdict.claim.metric)  # fmt: skip
        ax.set_title(f"{verdict.claim.id}: {verdict.shown}", fontsize=9)
        ax.legend(fontsize=7)
        paths.append(_save(fig, out, f"verdict-{verdict.claim.id}", fmt))
    return paths
