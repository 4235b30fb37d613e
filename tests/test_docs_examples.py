"""Every Python example of the plug-in guide is real: included verbatim, or run here.

A Python block of ``docs/`` is fenced as ```` ```python title=NAME ````. A block
titled ``src/ddlsched/templates/<family>.py`` must be that file, byte for byte
(the scaffold's template: ``tests/test_scaffold.py`` installs it and runs the
conformance kit on it); any other titled block is run here as a script in a
fresh interpreter. An untitled Python block is refused (nothing would test it).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from plugin_install import SRC, run

from ddlsched.cli_new import SUITE_PLANS

DOCS = Path(__file__).resolve().parents[1] / "docs"
ROOT = DOCS.parent
GUIDE = DOCS / "your-own-method.md"
BLOCK = re.compile(r"^```python(?P<info>[^\n]*)\n(?P<code>.*?)^```", re.S | re.M)
PAGES = sorted([GUIDE, *(DOCS / "methods").glob("*.md")])


def blocks(page: Path) -> list[tuple[str, str]]:
    """``(title, code)`` of every Python block of ``page`` (title ``""`` when missing)."""
    out = []
    for match in BLOCK.finditer(page.read_text()):
        title = re.search(r"title=(\S+)", match["info"])
        out.append((title.group(1) if title else "", match["code"]))
    return out


def test_every_family_has_a_page_with_its_template_verbatim():
    assert {p.stem for p in (DOCS / "methods").glob("*.md")} == set(SUITE_PLANS)
    for family in SUITE_PLANS:
        page = DOCS / "methods" / f"{family}.md"
        template = SRC / "ddlsched" / "templates" / f"{family}.py"
        included = [
            code for title, code in blocks(page) if title == f"src/{template.relative_to(SRC)}"
        ]
        assert included == [template.read_text()], family
        assert len(template.read_text().splitlines()) <= 30, family
        assert f"methods/{family}.md" in GUIDE.read_text()


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_python_block_is_titled(page):
    assert all(title for title, _ in blocks(page)), page


@pytest.mark.parametrize(
    ("page", "title", "code"),
    [
        (page, title, code)
        for page in PAGES
        for title, code in blocks(page)
        if title and not title.startswith("src/ddlsched/templates/")
    ],
    ids=lambda value: value.name if isinstance(value, Path) else str(value)[:30],
)
def test_every_other_example_runs(page, title, code, tmp_path):
    script = tmp_path / title
    script.write_text(code)
    done = run([str(script)], tmp_path, tmp_path, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_readme_points_to_the_guide_and_the_scaffold():
    readme = (ROOT / "README.md").read_text()
    assert "docs/your-own-method.md" in readme and "ddlsched new method" in readme
