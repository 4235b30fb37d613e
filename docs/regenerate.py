"""Run the console blocks of the README and of ``docs/``, and rewrite or check their output.

    python docs/regenerate.py                 # rewrite every block's output in place
    python docs/regenerate.py --check         # exit 1 with a unified diff per stale block
    python docs/regenerate.py --check README.md docs/walkthroughs/rar.md

The convention (``tests/test_docs_console.py`` runs ``--check``: on the README in the CI tier,
on every page with ``--full``):

- A console block is fenced as ```` ```console ````. Its lines that start with
  ``$ `` are commands; the lines after a command, up to the next command, are
  what it prints (stdout and stderr merged in the order they were written,
  as a terminal shows them). A command runs in ``bash -o pipefail -c``, so
  pipes and ``; echo "exit $?"`` work.
- Every block of a page runs in order in one fresh temporary directory (a
  page is one session: a block may read a file an earlier block wrote). The
  directory holds a link ``benchmarks`` to the repository's ``benchmarks/``,
  so suites and scripts are named as in a clone, and a suite's relative
  ``output`` (``results/...``) lands inside the temporary directory.
- The environment is the caller's, plus: ``PATH`` starting with this
  interpreter's directory (``python`` and ``ddlsched`` are this
  installation's), ``PYTHONPATH`` with the repository's ``src``, ``COLUMNS=100``
  and ``LINES=50`` (Rich tables have a stable width), ``NO_COLOR=1``,
  ``TERM=dumb`` and ``PYTHONUNBUFFERED=1`` (the order of stdout and stderr).
  ``DDLSCHED_DATA`` is passed on as it is.
- The line just above a block may mark it (rare, and each mark says why):
  ``<!-- console: norun WHY -->`` leaves it unrun (e.g. it installs a
  package); ``<!-- console: needs-data -->`` runs it only when the public
  traces and profiles are present (``ddlsched data status`` exits 0), and
  otherwise reports it as skipped. A plain ```` ``` ```` block whose lines
  start with ``$ `` is refused: it would escape the check.

The output is masked before it is compared or written, so that only what
the code computes is checked (``MASKS`` below, applied in order):

1. the temporary directory and the repository's path -> ``<tmp>``, ``<repo>``;
2. a duration with its unit (``12.3 s``, ``0.4 ms``, ``1 min 13 s``) -> ``<time>``;
3. an ISO date or date and time -> ``<date>``;
4. a 40-hex git commit -> ``<commit>``; the ``ddlsched X.Y.Z`` version -> ``ddlsched <version>``;
5. in a Markdown table, every cell of a column whose header ends in
   ``time s`` or ``time (s)`` (``mean time s``, ``max time s``: run times)
   -> ``<time>``; after a CSV header line, every cell of a column whose name
   holds ``time`` and ends in ``_s`` (``runtime_max_s``) likewise.

A result that depends on the machine's speed is not masked: a block must use
instances its methods settle well inside their time limits, and methods
whose model is sized from the time left (rar's ``timeindexed``,
``lb_timeindexed``, ``lp_rounding`` with ``slot_width=auto``) only with a
limit far beyond what they need, or with their size fixed by ``--param``.
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "MASKS",
    "Block",
    "Outcome",
    "check_page",
    "console_pages",
    "mask",
    "parse_blocks",
    "render_block",
    "run_page",
]

ROOT = Path(__file__).resolve().parents[1]
FENCE = re.compile(r"^```(?P<info>[^\n`]*)\n(?P<body>.*?)^```[ \t]*$", re.S | re.M)
MARK = re.compile(r"<!--\s*console:\s*(?P<kind>norun|needs-data)\b(?P<why>.*?)-->\s*$")
PROMPT = "$ "
COMMAND_TIMEOUT_S = 600

MASKS: list[tuple[str, re.Pattern[str], str]] = [
    (
        "a duration with its unit",
        re.compile(r"\b\d+(?:\.\d+)?(?:e-?\d+)? ?(?:min \d+(?:\.\d+)? ?s|ms|min|s)\b(?![\w'\"])"),
        "<time>",
    ),
    (
        "an ISO date, with its time when present",
        re.compile(
            r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?\b"
        ),
        "<date>",
    ),
    ("a git commit", re.compile(r"\b[0-9a-f]{40}\b"), "<commit>"),
    ("ddlsched's version", re.compile(r"\bddlsched \d+\.\d+\.\d+\S*"), "ddlsched <version>"),
]
TIME_HEADER = re.compile(r"time s$|time \(s\)$")
CSV_TIME_COLUMN = re.compile(r"time\w*_s$")


@dataclass
class Block:
    """One console block: where it is, its commands with their recorded output, its mark."""

    page: Path
    line: int  # 1-based line of the opening fence
    start: int  # character offsets of the body inside the page's text
    end: int
    commands: list[tuple[str, str]]  # (command, recorded output without a final newline)
    mark: str = ""  # "", "norun" or "needs-data"

    @property
    def name(self) -> str:
        """``page:line``, the block's name in messages."""
        try:
            page = self.page.resolve().relative_to(ROOT)
        except ValueError:
            page = self.page
        return f"{page}:{self.line}"


@dataclass
class Outcome:
    """What running a page gave: the blocks whose output differs, the skipped ones, the time."""

    page: Path
    diffs: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    old_text: str = ""
    new_text: str = ""
    seconds: float = 0.0


def parse_blocks(page: Path, text: str | None = None) -> list[Block]:
    """Every console block of ``page``; a plain block of ``$ `` lines raises ``ValueError``."""
    text = page.read_text() if text is None else text
    blocks = []
    for match in FENCE.finditer(text):
        info = match["info"].strip()
        body = match["body"]
        line = text.count("\n", 0, match.start()) + 1
        if info != "console":
            if info == "" and any(row.startswith(PROMPT) for row in body.splitlines()):
                raise ValueError(
                    f"{page}:{line}: a block of '$ ' commands must be fenced as ```console"
                )
            continue
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        mark = MARK.search(before)
        outputs: list[tuple[str, list[str]]] = []
        for row in body.rstrip("\n").split("\n"):
            if row.startswith(PROMPT):
                outputs.append((row[len(PROMPT) :], []))
            elif not outputs:
                raise ValueError(f"{page}:{line}: a console block must start with '$ '")
            else:
                outputs[-1][1].append(row)
        commands = [(command, "\n".join(rows).strip("\n")) for command, rows in outputs]
        kind = mark["kind"] if mark else ""
        blocks.append(Block(page, line, match.start("body"), match.end("body"), commands, kind))
    return blocks


def mask(output: str, paths: dict[str, str] | None = None) -> str:
    """``output`` with every machine-dependent part replaced (the rules of ``MASKS``)."""
    for path, name in (paths or {}).items():
        output = output.replace(path, name)
    for _, pattern, replacement in MASKS:
        output = pattern.sub(replacement, output)
    lines = [row.rstrip() for row in output.split("\n")]
    return "\n".join(_mask_table_columns(lines)).strip("\n")


def _mask_table_columns(lines: list[str]) -> list[str]:
    """Lines with the time columns of Markdown tables and CSV output masked."""
    out: list[str] = []
    md_columns: set[int] = set()
    csv_columns: set[int] = set()
    for row in lines:
        if row.startswith("|"):
            cells = row.split("|")
            if not md_columns and not set(row) <= set("|:- "):
                headers = [cell.strip() for cell in cells]
                md_columns = {i for i, h in enumerate(headers) if TIME_HEADER.search(h)}
                if not md_columns:
                    md_columns = {-1}
            elif not set(row) <= set("|:- "):
                cells = [
                    " <time> " if i in md_columns and cell.strip() not in ("", "-") else cell
                    for i, cell in enumerate(cells)
                ]
            out.append("|".join(cells))
            continue
        md_columns = set()
        if re.fullmatch(r"[A-Za-z_]\w*(?:,[A-Za-z_]\w*)+", row):
            names = row.split(",")
            csv_columns = {i for i, name in enumerate(names) if CSV_TIME_COLUMN.search(name)}
        elif csv_columns and "," in row:
            cells = row.split(",")
            cells = [
                "<time>" if i in csv_columns and cell else cell for i, cell in enumerate(cells)
            ]
            row = ",".join(cells)
        else:
            csv_columns = set() if "," not in row else csv_columns
        out.append(row)
    return out


def render_block(commands: list[tuple[str, str]]) -> str:
    """The body of a console block (ending in a newline) for ``(command, output)`` pairs."""
    parts = []
    for command, output in commands:
        parts.append(f"{PROMPT}{command}\n")
        if output:
            parts.append(f"{output}\n")
    return "".join(parts)


def console_pages() -> list[Path]:
    """``README.md`` and every Markdown page under ``docs/`` that has a console block."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    return [page for page in pages if "```console" in page.read_text()]


def _environment(workdir: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in [str(ROOT / "src"), env.get("PYTHONPATH", "")] if p
    )
    env.update(COLUMNS="100", LINES="50", NO_COLOR="1", TERM="dumb", PYTHONUNBUFFERED="1")
    env.pop("FORCE_COLOR", None)
    env["HOME"] = env.get("HOME", str(workdir))
    return env


def _data_present(env: dict[str, str], workdir: Path) -> bool:
    result = subprocess.run(
        ["ddlsched", "data", "status"], cwd=workdir, env=env, capture_output=True, text=True
    )
    return result.returncode == 0


def run_page(page: Path, *, echo=None) -> Outcome:
    """Run every console block of ``page``; the outcome holds the diffs and the new text."""
    started = time.perf_counter()
    text = page.read_text()
    blocks = parse_blocks(page, text)
    outcome = Outcome(page, old_text=text)
    pieces: list[str] = []
    cursor = 0
    with tempfile.TemporaryDirectory(prefix="ddlsched-console-") as tmp:
        workdir = Path(tmp)
        (workdir / "benchmarks").symlink_to(ROOT / "benchmarks", target_is_directory=True)
        env = _environment(workdir)
        paths = {str(workdir.resolve()): "<tmp>", tmp: "<tmp>", str(ROOT): "<repo>"}
        data_present: bool | None = None
        for block in blocks:
            pieces.append(text[cursor : block.start])
            cursor = block.end
            if block.mark == "needs-data" and data_present is None:
                data_present = _data_present(env, workdir)
            if block.mark == "norun" or (block.mark == "needs-data" and not data_present):
                outcome.skipped.append(f"{block.name} ({block.mark})")
                pieces.append(text[block.start : block.end])
                continue
            if echo:
                echo(f"running {block.name} ({len(block.commands)} command(s))")
            fresh = [(command, _run(command, workdir, env, paths)) for command, _ in block.commands]
            old_body = render_block(block.commands)
            new_body = render_block(fresh)
            if new_body != old_body:
                outcome.diffs.append(
                    "".join(
                        difflib.unified_diff(
                            old_body.splitlines(keepends=True),
                            new_body.splitlines(keepends=True),
                            fromfile=f"{block.name} (recorded)",
                            tofile=f"{block.name} (now)",
                        )
                    )
                )
            pieces.append(new_body)
    pieces.append(text[cursor:])
    outcome.new_text = "".join(pieces)
    outcome.seconds = time.perf_counter() - started
    return outcome


def _run(command: str, workdir: Path, env: dict[str, str], paths: dict[str, str]) -> str:
    try:
        result = subprocess.run(
            ["bash", "-o", "pipefail", "-c", command],
            cwd=workdir,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=COMMAND_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        return f"<timed out after {COMMAND_TIMEOUT_S} s>"
    return mask(result.stdout, paths)


def check_page(page: Path) -> Outcome:
    """Run ``page``'s blocks without writing; ``outcome.diffs`` is empty when it is current."""
    return run_page(page)


def main(argv: list[str] | None = None) -> int:
    """The command line: rewrite (default) or ``--check`` the given pages (default: all)."""
    parser = argparse.ArgumentParser(
        prog="python docs/regenerate.py",
        description="Run the console blocks of README.md and docs/ and rewrite or check them.",
    )
    parser.add_argument("--check", action="store_true", help="do not write; exit 1 on a diff")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    parser.add_argument("pages", nargs="*", type=Path, help="Markdown files (default: all)")
    args = parser.parse_args(argv)
    try:
        pages = args.pages or console_pages()
        for page in pages:
            if not page.is_file():
                raise ValueError(f"{page}: no such file")
            parse_blocks(page)
    except ValueError as error:
        print(f"regenerate: error: {error}", file=sys.stderr)
        return 2
    echo = None if args.quiet else (lambda message: print(message, file=sys.stderr))
    stale = 0
    for page in pages:
        outcome = run_page(page, echo=echo)
        for skipped in outcome.skipped:
            print(f"skipped {skipped}", file=sys.stderr)
        if outcome.diffs and not args.check:
            if page.read_text() != outcome.old_text:
                print(f"regenerate: error: {page} changed while it ran; run again", file=sys.stderr)
                return 2
            page.write_text(outcome.new_text)
            print(f"{page}: {len(outcome.diffs)} block(s) rewritten", file=sys.stderr)
        elif outcome.diffs:
            stale += len(outcome.diffs)
            sys.stdout.write("".join(outcome.diffs))
        if echo:
            echo(f"{page}: {outcome.seconds:.1f} s")
    if stale:
        print(f"{stale} console block(s) out of date: python docs/regenerate.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
