"""The repository stands on its own: no committed file points outside it.

Every committed ``*.py``, ``*.md``, ``*.toml``, ``*.ipynb`` and ``*.json`` file (``git
ls-files``) is read line by line for two kinds of reference a reader of a clone cannot follow:

* a path outside the repository: a sibling ``shared/`` folder of the development machine (its
  specs, papers, design or style notes, also when named bare as ``DESIGN.md`` or ``STYLE.md``,
  files this repository does not have) or an absolute path of that machine (``/work/``). What
  those notes said lives in ``docs/`` (``docs/architecture.md``, ``docs/contributing.md``,
  ``docs/families/``) and in the module docstrings;
* an issue number of the project's own tracker (``issue 25``, ``issues 11 and 22``): name the
  thing itself ("the certified intervals", "the column-generation bound"). An issue of another
  project is a reference a reader can look up and is written with its repository, as in
  ``ERGO-Code/HiGHS issue 2957``; that form passes.

Every page of ``docs/`` that a committed file cites (``docs/families/rar.md``) exists, and every
relative link of a committed Markdown file resolves, so that the pointers that replaced the
outside ones lead somewhere.

The allow-list is one entry: the development data directory ``../shared/data``, the documented
second place of the data lookup (``docs/data.md``), may be named by the files that implement or
document that lookup, and by nothing else.

The tests that look for such references themselves (this file, the portable-paths test of
benchmark files and the console-block test of the documentation) are not read: they have to
spell the patterns. A failure names every offending ``file:line``.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SUFFIXES = (".py", ".md", ".toml", ".ipynb", ".json")
#: The tests that look for these references themselves and so have to spell the patterns.
CHECKERS = frozenset(
    {
        Path(__file__).resolve().relative_to(ROOT).as_posix(),
        "tests/test_portable_paths.py",  # machine paths in benchmark files and test data
        "tests/test_docs_console.py",  # machine paths and issue numbers in console blocks
    }
)

#: A path that leaves the repository: the development machine's shared folder or its root.
OUTSIDE_RE = re.compile(
    r"\.\./shared|shared/specs|shared/papers|shared/DESIGN|shared/STYLE|shared/data|/work/"
    r"|\b(?:DESIGN|STYLE)\.md"
)
#: An issue number (``issue 25``, ``Issues 13 and 23``, ``issue #7``, ``issue-25``).
ISSUE_RE = re.compile(r"\b[Ii]ssues?(?:\s+|-)#?\d+")
#: What may stand right before an issue number of another project: its ``owner/repository``.
FOREIGN_REPO_RE = re.compile(r"[\w.-]+/[\w.-]+\s+$")

#: The one allowed outside path and the files that may name it: the development data
#: directory is the documented second step of the data lookup (``ddlsched.datadir``).
DEV_DATA = "../shared/data"
DEV_DATA_FILES = frozenset(
    {
        "src/ddlsched/datadir.py",  # the lookup itself
        "src/ddlsched/cli_data.py",  # ``ddlsched data`` prints the lookup order
        "docs/data.md",  # the lookup order, documented
        "tests/test_data_fetch.py",  # switches the lookup off to test the others
        "README.md",  # may state the lookup order
    }
)


def _committed_files() -> list[str]:
    """The committed text files this test reads (paths relative to the repository root)."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: the committed files are unknown")
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split("\0")
    return sorted(
        name
        for name in listed
        if name.endswith(SUFFIXES) and name not in CHECKERS and (ROOT / name).is_file()
    )


def outside_references(name: str, line: str) -> list[str]:
    """The paths leaving the repository on ``line`` of file ``name`` (allow-list applied)."""
    if name in DEV_DATA_FILES:
        line = line.replace(DEV_DATA, "")
    return [match.group(0) for match in OUTSIDE_RE.finditer(line)]


def internal_issues(line: str) -> list[str]:
    """The issue numbers on ``line`` that do not name another project's repository."""
    return [
        match.group(0)
        for match in ISSUE_RE.finditer(line)
        if not FOREIGN_REPO_RE.search(line[: match.start()])
    ]


def _offences(check) -> list[str]:
    found = []
    for name in _committed_files():
        text = (ROOT / name).read_text(encoding="utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), start=1):
            hits = check(name, line)
            if hits:
                found.append(f"{name}:{number}: {', '.join(hits)}: {line.strip()[:120]}")
    return found


def test_the_checks_catch_what_they_are_for() -> None:
    """The patterns find the references they exist for and pass the allowed forms."""
    assert outside_references("src/x.py", "spec ``shared/specs/rar.md``") == ["shared/specs"]
    assert outside_references("x.md", "see ../shared/DESIGN.md") == ["../shared", "DESIGN.md"]
    assert outside_references("x.json", '"directory": "/work/runs/asrpt"') == ["/work/"]
    assert outside_references("x.md", "else ../shared/data") == ["../shared"]
    assert outside_references("docs/data.md", "2. `../shared/data` beside the repository") == []
    assert outside_references("docs/data.md", "the notes in ../shared/specs") == ["../shared"]
    assert outside_references("x.py", "the data directory (docs/data.md)") == []
    assert outside_references("x.py", "(DESIGN.md: 1e-6)") == ["DESIGN.md"]
    assert outside_references("x.md", "docs/architecture.md") == []
    assert internal_issues("(ours, issue 25; a bound)") == ["issue 25"]
    assert internal_issues("Fuzzing (issues 13 and 23)") == ["issues 13"]
    assert internal_issues("Issue 23, item 3: an interrupt") == ["Issue 23"]
    assert internal_issues("see issue #7") == ["issue #7"]
    assert internal_issues("the issue-25 benchmark") == ["issue-25"]
    assert internal_issues("(ERGO-Code/HiGHS issues 1501, 2226)") == []
    assert internal_issues("the issue of the week, 3 items") == []
    assert broken_links("docs/architecture.md", "[data](data.md), [web](https://x.org/a.md)") == []
    assert broken_links("docs/architecture.md", "[gone](nowhere.md#top)") == ["nowhere.md"]
    assert broken_links("src/x.py", "[gone](nowhere.md)") == []


def test_no_file_points_outside_the_repository() -> None:
    """No committed file names a path outside the repository (the data fallback aside)."""
    found = _offences(outside_references)
    assert not found, "paths outside the repository:\n" + "\n".join(found)


def test_no_file_names_an_internal_issue_number() -> None:
    """No committed file names work by an internal issue number."""
    found = _offences(lambda name, line: internal_issues(line))
    assert not found, "internal issue numbers (name the thing itself):\n" + "\n".join(found)


#: A page of ``docs/`` named in a file (``docs/families/rar.md``, ``docs/data.md``).
DOCS_PAGE_RE = re.compile(r"\bdocs/[\w./-]+\.md\b")


def test_every_cited_docs_page_exists() -> None:
    """Every ``docs/....md`` page a committed file names is in the repository."""
    committed = set(_committed_files())
    found = _offences(
        lambda name, line: [page for page in DOCS_PAGE_RE.findall(line) if page not in committed]
    )
    assert not found, "pages of docs/ that do not exist:\n" + "\n".join(found)


#: A Markdown link's target: ``[text](target)`` (an optional ``#anchor`` after it).
LINK_RE = re.compile(r"\]\(([^)\s#]+)(?:#[^)]*)?\)")


def broken_links(name: str, line: str) -> list[str]:
    """The relative link targets on ``line`` of Markdown file ``name`` that do not exist."""
    if not name.endswith(".md"):
        return []
    folder = (ROOT / name).parent
    return [
        target
        for target in LINK_RE.findall(line)
        if "://" not in target
        and not target.startswith("mailto:")
        and not (folder / target).exists()
    ]


def test_relative_markdown_links_resolve() -> None:
    """Every relative link of a committed Markdown file leads to a file or folder of the clone."""
    found = _offences(broken_links)
    assert not found, "links that lead nowhere:\n" + "\n".join(found)
