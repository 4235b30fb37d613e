"""The index page of ``ddlsched reproduce PAPER``: ``index.md`` and ``index.html``.

One page per paper (:func:`write_index`): the verdict count line, what ran (per suite:
the cut, tasks, wall time, what a larger budget would buy), the verdict table, the
widest certified interval per table (with ``--fresh-seeds``, each table's widths on both sets
of seeds), every figure (relative links), the command that
made each part with its time, and the versions and code fingerprints of the rows. The
page is built as a list of blocks, written once as Markdown and once as plain HTML (no
Markdown library needed).
"""

from __future__ import annotations

import datetime as dt
import html
import json
import math
import os
import platform
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ddlsched import __version__
from ddlsched.bench.tables import width_text
from ddlsched.errors import DdlschedError

__all__ = ["index_blocks", "to_html", "to_markdown", "write_index", "write_text"]

#: A block of the page: ("h1"|"h2"|"p"|"code"|"img", text) or ("table", headers, rows).
Block = tuple[Any, ...]


def _minutes(seconds: float) -> str:
    return f"{seconds:.1f} s" if seconds < 120 else f"{seconds / 60:.1f} min"


def _table_of(lines: Sequence[str]) -> Block:
    """A Markdown table's lines (header, rule, rows) as a table block."""

    def cells(line: str) -> list[str]:
        parts, cell, escaped = [], "", False
        for char in line.strip().strip("|"):
            if char == "|" and not escaped:
                parts.append(cell.strip())
                cell = ""
            else:
                cell += char
            escaped = char == "\\"
        return [*parts, cell.strip()]

    return ("table", cells(lines[0]), [cells(x) for x in lines[2:]])


def _verdict_blocks(markdown: str) -> list[Block]:
    """The verdict Markdown (its title and count line dropped) as blocks."""
    blocks: list[Block] = []
    lines = markdown.splitlines()[3:]
    i = 0
    while i < len(lines):
        if lines[i].startswith("|"):
            j = i
            while j < len(lines) and lines[j].startswith("|"):
                j += 1
            blocks.append(_table_of(lines[i:j]))
            i = j
        else:
            if lines[i].strip():
                blocks.append(("p", lines[i].lstrip("* ")))
            i += 1
    return blocks


def _code_summary(run: Any) -> list[str]:
    """Per results directory: the git commit, and each method's code fingerprint."""
    out = []
    for cut in run.cuts:
        try:
            manifest = json.loads((cut.results / "manifest.json").read_text())
        except (OSError, ValueError):
            continue
        git = manifest.get("git") or {}
        commit = str(git.get("commit") or "unknown")[:12] + (" (dirty)" if git.get("dirty") else "")
        code = (manifest.get("runs") or [{}])[-1].get("code") or {}
        prints = []
        for name, value in sorted(code.items()):
            mark = value.get("fingerprint") if isinstance(value, dict) else value
            prints.append(f"{name} {str(mark)[:10]}")
        out.append(
            f"{cut.cut.suite}: ddlsched {manifest.get('versions', {}).get('ddlsched', '-')} at "
            f"commit {commit}; code fingerprints: {', '.join(prints) or '-'}"
        )
    return out


def index_blocks(run: Any) -> list[Block]:
    """The page of a :class:`~ddlsched.bench.reproduce.PaperRun` as blocks."""
    plan = run.plan
    machine = platform.node() or "-"
    now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    blocks: list[Block] = [("h1", f"Reproduction: {plan.title}"), ("p", f"**{run.count_line}**")]
    try:
        load = " (load {:.1f} {:.1f} {:.1f})".format(*os.getloadavg())
    except OSError:  # no load average on this platform
        load = ""
    blocks.append(
        (
            "p",
            f"`ddlsched reproduce {plan.paper}` (plan `{plan.source.name}`), {now}, machine "
            f"{machine}{load}, ddlsched {__version__}: {_minutes(run.seconds.get('total', 0))} "
            f"in all. Plan budget: {plan.budget or '-'}.",
        )
    )
    blocks.append(("h2", "What ran"))
    rows = []
    for cut in [*run.cuts, *run.fresh_cuts]:
        statuses = ", ".join(f"{k} {v}" for k, v in sorted(cut.statuses.items())) or "-"
        rows.append(
            [
                f"[{cut.name}](suites/{cut.suite_file.name})",
                cut.cut.summary(),
                str(cut.tasks),
                str(cut.run),
                str(cut.stored),
                f"{cut.failed} ({statuses})",
                _minutes(cut.elapsed_s),
            ]
        )
    headers = ["suite", "cut", "tasks", "run now", "already stored", "failed", "wall"]
    blocks.append(("table", headers, rows))
    for cut in run.cuts:
        if cut.cut.larger_budget:
            blocks.append(
                ("p", f"A larger budget would buy ({cut.cut.suite}): {cut.cut.larger_budget}")
            )
    blocks += [("h2", "Verdicts"), ("p", "Full table: [verdict/verdict.md](verdict/verdict.md).")]
    blocks += _verdict_blocks(run.verdict_markdown)
    blocks.append(("h2", "Widest certified interval per table"))
    blocks.append(("p", "Per table, the widest interval's hi / lo - 1 (at most 10 %: citable); "
                        "every line: [intervals.md](intervals.md)."))  # fmt: skip
    wide = [[name, width_text(w), "-" if math.isnan(w) else ("yes" if w <= 0.10 else "**no**")]
            for name, w in run.widest]  # fmt: skip
    blocks.append(("table", ["table", "widest width", "within 10 %"], wide))
    if run.fresh_from is not None:
        blocks += _fresh_blocks(run)
    blocks.append(("h2", "Figures"))
    for path in [*run.verdict_figures, *run.figures]:
        blocks.append(("img", str(Path(path).relative_to(run.out))))
    if not run.figures and not run.verdict_figures:
        blocks.append(("p", "No figures: no rows with objectives."))
    blocks.append(("h2", "Commands"))
    timed = {"verdict": "verdict", "interval report": "intervals"}
    for part, command in run.commands:
        key = timed.get(part, f"run {part.removeprefix('rows of ')}")
        took = run.seconds.get(key)
        shown = f" ({_minutes(took)})" if took is not None and not part.startswith("fig") else ""
        blocks += [("p", f"{part}{shown}:"), ("code", command)]
    blocks.append(("p", f"figures: {_minutes(run.seconds.get('figures', 0))} in all."))
    blocks.append(("h2", "Versions and code"))
    versions = run.provenance.get("versions", {})
    shown = ", ".join(f"{n} {'/'.join(v)}" for n, v in versions.items()) or "-"
    blocks.append(("p", f"Row versions: {shown}."))
    blocks += [("p", line) for line in _code_summary(run)]
    return blocks


def _fresh_blocks(run: Any) -> list[Block]:
    """The widths on the plan's seeds and on the fresh ones (:mod:`ddlsched.bench.seed_sets`)."""
    from ddlsched.bench.seed_sets import markdown

    blocks: list[Block] = [
        ("h2", "Fresh instance seeds"),
        (
            "p",
            f"Each cut again on instance seeds from {run.fresh_from} on "
            f"(`fresh-{run.fresh_from}/`): the same methods' widest and mean widths on both "
            "sets, how often a random split of the seeds gives gaps as large, and whether they agree "
            "within 1 point; every line: "
            "[intervals.md](intervals.md).",
        ),
    ]
    if not run.fresh_lines:
        return [*blocks, ("p", "No table has rows on both sets of seeds.")]
    lines = markdown(run.fresh_lines)
    rule = lines.index("")
    blocks.append(_table_of(lines[:rule]))
    blocks += [("p", line.removeprefix("- ")) for line in lines[rule + 1 :]]
    return blocks


def to_markdown(blocks: Sequence[Block]) -> str:
    """The blocks as Markdown."""
    out: list[str] = []
    for block in blocks:
        kind = block[0]
        if kind in ("h1", "h2"):
            out += [("# " if kind == "h1" else "## ") + block[1], ""]
        elif kind == "p":
            out += [block[1], ""]
        elif kind == "code":
            out += ["```", block[1], "```", ""]
        elif kind == "img":
            out += [f"![{Path(block[1]).stem}]({block[1]})", ""]
        else:
            headers, rows = block[1], block[2]
            out.append("| " + " | ".join(headers) + " |")
            out.append("|" + "|".join(":---" for _ in headers) + "|")
            out += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in rows]
            out.append("")
    return "\n".join(out)


def _inline(text: str) -> str:
    """Escaped text with Markdown's **bold**, `code` and [text](link) as HTML."""
    text = html.escape(text, quote=False)
    text = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", text)
    text = re.sub(r"`([^`]+)`", r"<code>\1</code>", text)
    return re.sub(r"\[([^\]]+)\]\(([^)\s]+)\)", r'<a href="\2">\1</a>', text)


def to_html(blocks: Sequence[Block], title: str) -> str:
    """The blocks as one self-contained HTML page."""
    out = [
        "<!DOCTYPE html>",
        '<html><head><meta charset="utf-8">',
        f"<title>{html.escape(title)}</title>",
        "<style>body{font-family:sans-serif;max-width:70em;margin:auto}"
        "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px;"
        "text-align:left;vertical-align:top}img{max-width:48%}</style>",
        "</head><body>",
    ]
    for block in blocks:
        kind = block[0]
        if kind in ("h1", "h2", "p"):
            out.append(f"<{kind}>{_inline(block[1])}</{kind}>")
        elif kind == "code":
            out.append(f"<pre>{html.escape(block[1])}</pre>")
        elif kind == "img":
            link = html.escape(block[1])
            out.append(f'<a href="{link}"><img src="{link}" alt="{link}"></a>')
        else:
            out.append(
                "<table><tr>" + "".join(f"<th>{_inline(h)}</th>" for h in block[1]) + "</tr>"
            )
            for row in block[2]:
                cells = "".join(f"<td>{_inline(c.replace(chr(92) + '|', '|'))}</td>" for c in row)
                out.append(f"<tr>{cells}</tr>")
            out.append("</table>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` (its folder made); an OS error is one line naming the file."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise DdlschedError(
            f"{exc.filename or path}: cannot write ({exc.strerror or exc})"
        ) from None


def write_index(run: Any) -> list[Path]:
    """Write ``index.md`` and ``index.html`` into ``run.out``; return their paths."""
    blocks = index_blocks(run)
    paths = [run.out / "index.md", run.out / "index.html"]
    write_text(paths[0], to_markdown(blocks))
    write_text(paths[1], to_html(blocks, f"Reproduction: {run.plan.title}"))
    return paths
