"""The results pages (``benchmarks/RESULTS.md`` and ``benchmarks/results/*.md``): every
benchmark script they cite exists, every link and anchor resolves, each paper page
opens with its contents, and nothing under ``benchmarks/`` names work by an internal
issue number."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks"
PAGES = ["rar", "placement", "muri", "asrpt", "dmlrs", "platform"]


def _anchor(title: str) -> str:
    """GitHub's anchor of a Markdown heading."""
    return re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")


def _incoming(path: Path) -> bool:
    """Figures other work drops for the pages (``results/incoming-*.md``), not yet placed."""
    return path.name.startswith("incoming-")


def _result_files() -> list[Path]:
    pages = sorted(p for p in (BENCH / "results").glob("*.md") if not _incoming(p))
    return [BENCH / "RESULTS.md", *pages]


def _anchors(path: Path) -> set[str]:
    return {_anchor(line.lstrip("#")) for line in path.read_text().splitlines() if line[:1] == "#"}


def test_the_index_links_every_page_and_each_page_opens_with_its_contents():
    index = (BENCH / "RESULTS.md").read_text()
    for name in PAGES:
        assert f"](results/{name}.md)" in index, name
        text = (BENCH / "results" / f"{name}.md").read_text()
        head = text.split("\n## ", 1)[0]
        assert "Contents:" in head, name
        sections = [line[3:] for line in text.splitlines() if line.startswith("## ")]
        for title in sections:
            assert f"](#{_anchor(title)})" in head, (name, title)


@pytest.mark.parametrize("path", _result_files(), ids=lambda p: p.name)
def test_every_link_of_a_results_page_resolves(path):
    text = path.read_text()
    for target, fragment in re.findall(r"\]\(([\w./-]*?\.md)?(?:#([\w-]+))?\)", text):
        file = (path.parent / target) if target else path
        assert file.exists(), (path.name, target)
        if fragment:
            assert fragment in _anchors(file), (path.name, target, fragment)


@pytest.mark.parametrize("path", _result_files(), ids=lambda p: p.name)
def test_every_benchmark_script_a_results_page_cites_exists(path):
    cited = set(re.findall(r"\bbenchmarks/([\w-]+\.py)\b", path.read_text()))
    missing = sorted(name for name in cited if not (BENCH / name).exists())
    assert not missing, missing


def test_no_internal_issue_number_under_benchmarks():
    pattern = re.compile(r"\b[Ii]ssues?[ -]#?\d+")
    found = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in sorted(BENCH.rglob("*"))
        if path.suffix in {".md", ".py", ".toml", ".txt", ".json"} and not _incoming(path)
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if pattern.search(line)
    ]
    assert not found, found
