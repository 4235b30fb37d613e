"""The console blocks of the README and of ``docs/`` print what the code prints now.

``docs/regenerate.py`` runs every ```` ```console ```` block and compares its
masked output with the recorded one; a stale block fails here with the
unified diff, and ``python docs/regenerate.py`` rewrites it. The unit tests
below pin the convention (parsing, masking, the marks) on small pages.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def _load_regenerate():
    spec = importlib.util.spec_from_file_location(
        "docs_regenerate", ROOT / "docs" / "regenerate.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


regenerate = _load_regenerate()


#: Replayed in the CI tier: the README (the walk-throughs, 12-38 s each on 2 cores, in the
#: full tier; ``python docs/regenerate.py --check`` replays them all).
CI_PAGES = {ROOT / "README.md"}


def _pages() -> list:
    return [
        page if page in CI_PAGES else pytest.param(page, marks=pytest.mark.slow)
        for page in regenerate.console_pages()
    ]


@pytest.mark.parametrize("page", _pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_console_blocks_print_what_the_code_prints(page):
    outcome = regenerate.check_page(page)
    diffs = "".join(outcome.diffs)
    assert not outcome.diffs, f"stale console block(s); run python docs/regenerate.py\n{diffs}"


def test_readme_and_walkthroughs_have_checked_console_blocks():
    pages = {p.relative_to(ROOT).as_posix() for p in regenerate.console_pages()}
    assert "README.md" in pages
    for family in ("rar", "placement", "muri", "asrpt", "dmlrs"):
        assert f"docs/walkthroughs/{family}.md" in pages
    for page in regenerate.console_pages():
        blocks = regenerate.parse_blocks(page)
        unrun = [b for b in blocks if b.mark == "norun"]
        assert len(unrun) <= 1, f"{page}: more than one unrun block"
    readme_blocks = regenerate.parse_blocks(README)
    assert all(b.mark == "" for b in readme_blocks), "every README block runs, data or not"
    commands = [command for b in readme_blocks for command, _ in b.commands]
    for step in ("instance generate rar", "solve rar", "compare rar", "bench run", "bench table"):
        assert any(step in command for command in commands), step


def test_readme_keeps_the_two_commands_verbatim():
    text = README.read_text()
    assert (
        'python3 -m venv .venv && . .venv/bin/activate && pip install -e ".[test]" && '
        "python -m pytest -q -n auto --dist worksteal"
    ) in text
    assert (
        "ddlsched bench run benchmarks/suites/quick.toml --workers 2 && "
        "ddlsched bench table results/quick"
    ) in text


@pytest.mark.parametrize(
    "page",
    [
        README,
        ROOT / "docs" / "cli.md",
        ROOT / "docs" / "statuses.md",
        *sorted((ROOT / "docs" / "walkthroughs").glob("*.md")),
    ],
    ids=lambda p: p.name,
)
def test_no_machine_path_and_no_internal_issue_number(page):
    text = page.read_text()
    assert "/work/" not in text and "../shared" not in text
    assert not re.search(r"\bissues? \d+", text, re.I), "name the thing, not its issue number"


def test_parse_splits_commands_from_their_output(tmp_path):
    page = tmp_path / "p.md"
    page.write_text(
        "text\n```console\n$ echo a\na\n\n$ true\n```\n"
        "<!-- console: norun installs a package -->\n```console\n$ pip install x\n```\n"
        "```\nnot a console block\n```\n"
    )
    first, second = regenerate.parse_blocks(page)
    assert first.commands == [("echo a", "a"), ("true", "")]
    assert first.line == 2 and first.mark == ""
    assert second.mark == "norun" and second.commands == [("pip install x", "")]


def test_a_plain_block_of_commands_is_refused(tmp_path):
    page = tmp_path / "p.md"
    page.write_text("```\n$ ddlsched methods\n```\n")
    with pytest.raises(ValueError, match="```console"):
        regenerate.parse_blocks(page)


def test_mask_replaces_times_dates_paths_and_time_columns():
    output = (
        "quick: 720 task(s) run in 24.5 s on local x2 (1 min 13 s) at 2026-11-28 21:15:02\n"
        "wrote /tmp/x/a.json, commit 0123456789abcdef0123456789abcdef01234567, ddlsched 0.3.0\n"
        "| method | mean ratio | mean time s | max time s |\n"
        "|:---|---:|---:|---:|\n"
        "| ff | 1.3153 | 9.97e-04 | 0.00141 |\n"
        "\n"
        "method,ratio_mean_lo,time_mean_s\n"
        "ff,1.3153,0.0012\n"
    )
    masked = regenerate.mask(output, {"/tmp/x": "<tmp>"})
    assert masked.splitlines() == [
        "quick: 720 task(s) run in <time> on local x2 (<time>) at <date>",
        "wrote <tmp>/a.json, commit <commit>, ddlsched <version>",
        "| method | mean ratio | mean time s | max time s |",
        "|:---|---:|---:|---:|",
        "| ff | 1.3153 | <time> | <time> |",
        "",
        "method,ratio_mean_lo,time_mean_s",
        "ff,1.3153,<time>",
    ]


def test_mask_keeps_what_the_code_computes():
    for kept in ("27.0 24 1", "optimal 23.0 23.0 bounds", "feasible 1506.83 36 accepted, 64 slots"):
        assert regenerate.mask(kept) == kept


def test_stdout_and_stderr_keep_their_order(tmp_path):
    page = tmp_path / "p.md"
    page.write_text(
        "```console\n$ python -c \"import sys; print('out'); print('err', file=sys.stderr)\"; "
        'echo "exit $?"\nout\nerr\nexit 0\n```\n'
    )
    assert regenerate.run_page(page).diffs == []


def test_check_reports_a_stale_block_and_rewrite_fixes_it(tmp_path):
    page = tmp_path / "p.md"
    page.write_text("```console\n$ echo fresh; echo took 1.5 s\nstale\n```\n")
    outcome = regenerate.run_page(page)
    assert len(outcome.diffs) == 1 and "-stale" in outcome.diffs[0]
    assert "+fresh" in outcome.diffs[0] and "+took <time>" in outcome.diffs[0]
    assert regenerate.main(["--check", "-q", str(page)]) == 1
    assert regenerate.main(["-q", str(page)]) == 0
    assert (
        page.read_text() == "```console\n$ echo fresh; echo took 1.5 s\nfresh\ntook <time>\n```\n"
    )
    assert regenerate.main(["--check", "-q", str(page)]) == 0


def test_blocks_of_a_page_share_one_directory_with_benchmarks_reachable(tmp_path):
    page = tmp_path / "p.md"
    page.write_text(
        "```console\n$ echo hi > f.txt\n```\n"
        "```console\n$ cat f.txt; ls benchmarks/suites/quick.toml; echo $COLUMNS $NO_COLOR\n"
        "hi\nbenchmarks/suites/quick.toml\n100 1\n```\n"
    )
    assert regenerate.run_page(page).diffs == []


def test_a_missing_page_is_a_one_line_error(tmp_path, capsys):
    assert regenerate.main(["--check", str(tmp_path / "none.md")]) == 2
    assert capsys.readouterr().err.count("\n") == 1
