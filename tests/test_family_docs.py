"""The per-family formulation pages of ``docs/families/`` keep up with the registry and the code.

Every built-in family (not internal) has a page ``docs/families/<family>.md``
that names every built-in method of the family in backticks (as
``ddlsched methods <family>`` lists it), and there is no page for a family that
does not exist. The pages' relative links and the repository paths they cite
(``models/rar.py``, ``tests/test_rar_models.py``, ``benchmarks/...``) must
exist, so a renamed module or script fails here rather than leaving a page
that points nowhere.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ddlsched import registry

ROOT = Path(__file__).resolve().parents[1]
PAGES = ROOT / "docs" / "families"
PACKAGE = ROOT / "src" / "ddlsched"

#: A Markdown link ``[text](target)``; the target is checked when it is relative.
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
#: A backticked repository path: a package layer or a top-level directory, then a file.
CITED_PATH = re.compile(
    r"`((?:src|tests|benchmarks|docs|problems|workloads|heuristics|models|solvers|sim"
    r"|families|bench|data)/[\w./-]+?\.(?:py|toml|md|json))(?:::[\w.]+)?`"
)


def builtin_families() -> dict[str, list[str]]:
    """``{family: [built-in method names]}`` of every built-in, listed family."""
    out = {}
    for family in registry.families():
        names = [m.name for m in registry.methods(family.name) if m.origin is None]
        if names:  # a family with no built-in method comes from a plug-in
            out[family.name] = names
    return out


FAMILIES = builtin_families()


def page_text(family: str) -> str:
    page = PAGES / f"{family}.md"
    assert page.is_file(), f"family {family!r} has no page {page.relative_to(ROOT)}"
    return page.read_text()


def test_the_registry_lists_the_families_of_the_pages():
    assert {"rar", "placement", "muri", "muri_sim"} <= set(FAMILIES)


def test_no_page_for_a_family_that_does_not_exist():
    stale = sorted({p.stem for p in PAGES.glob("*.md")} - set(FAMILIES))
    assert not stale, f"docs/families has pages for unknown families: {stale}"


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_family_has_a_page_naming_every_method(family):
    text = page_text(family)
    missing = [name for name in FAMILIES[family] if f"`{name}`" not in text]
    assert not missing, f"docs/families/{family}.md does not name method(s) {missing}"


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_the_page_links_its_schema(family):
    text = page_text(family)
    assert f"schemas/{family}.schema.json" in text, f"docs/families/{family}.md: no schema link"


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_relative_links_and_cited_paths_exist(family):
    page = PAGES / f"{family}.md"
    text = page_text(family)
    broken = []
    for target in LINK.findall(text):
        if "://" in target or target.startswith("#"):
            continue
        if not (page.parent / target.split("#", 1)[0]).exists():
            broken.append(target)
    for path in CITED_PATH.findall(text):
        if not ((ROOT / path).exists() or (PACKAGE / path).exists()):
            broken.append(path)
    assert not broken, f"docs/families/{family}.md points at missing files: {broken}"


def test_a_page_without_a_method_name_fails(tmp_path):
    """The method check is not vacuous: a page that drops a method name is caught."""
    family = "rar"
    text = page_text(family).replace("`lp_rounding`", "lp-rounding")
    missing = [name for name in FAMILIES[family] if f"`{name}`" not in text]
    assert missing == ["lp_rounding"]
