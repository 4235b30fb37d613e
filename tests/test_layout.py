"""The layout rules, checked on the source tree.

* no module over 600 lines;
* no function over 100 lines unless the line right above its ``def`` (or
  decorators) is a comment ``# size: <why>``;
* the family map is true: every module under problems/, workloads/,
  heuristics/, models/, sim/ and solvers/ is named (``:mod:`ddlsched.X.Y```)
  in the map of exactly one family or in the shared core's map. A map is
  the section ``Modules of the family:`` of a family module's docstring
  (``ddlsched/families/<family>.py``), or ``Modules of the shared core:`` of
  ``ddlsched/families/__init__.py``: from that line to the first non-blank
  line that neither starts a bullet (``* ``) nor continues one (indented).
  A docstring may name a module elsewhere (outside its map) freely.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "ddlsched"
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 100
LAYERS = ("problems", "workloads", "heuristics", "models", "sim", "solvers")
MOD_RE = re.compile(r":mod:`~?(ddlsched(?:\.\w+)+)`")


def _modules() -> list[Path]:
    return sorted(p for p in SRC.rglob("*.py") if "__pycache__" not in p.parts)


def _dotted(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _too_long_functions(path: Path) -> list[str]:
    lines = path.read_text().splitlines()
    found = []
    for node in ast.walk(ast.parse("\n".join(lines))):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        length = node.end_lineno - node.lineno + 1
        if length <= MAX_FUNCTION_LINES:
            continue
        first = min([node.lineno] + [d.lineno for d in node.decorator_list])
        above = lines[first - 2].strip() if first >= 2 else ""
        if not above.startswith("# size:"):
            found.append(f"{_dotted(path)}.{node.name}: {length} lines")
    return found


MAP_HEADINGS = ("Modules of the family:", "Modules of the shared core:")


def _named(doc: str | None) -> set[str]:
    """The modules named in the map section of ``doc`` (empty without one)."""
    lines = (doc or "").splitlines()
    starts = [i for i, line in enumerate(lines) if line.strip() in MAP_HEADINGS]
    if not starts:
        return set()
    section = []
    for line in lines[starts[0] + 1 :]:
        if line.strip() and not line.startswith(("* ", "  ")):
            break
        section.append(line)
    return set(MOD_RE.findall("\n".join(section)))


def _family_maps() -> dict[str, set[str]]:
    maps = {}
    for path in sorted((SRC / "families").glob("*.py")):
        doc = ast.get_docstring(ast.parse(path.read_text()))
        maps["<shared core>" if path.stem == "__init__" else path.stem] = _named(doc)
    return maps


def test_no_module_over_600_lines():
    long = [
        f"{_dotted(p)}: {n}"
        for p in _modules()
        if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES
    ]
    assert not long, "modules over 600 lines: " + ", ".join(long)


def test_no_function_over_100_lines_without_a_reason():
    long = [f for p in _modules() for f in _too_long_functions(p)]
    assert not long, "functions over 100 lines without '# size:' above: " + "; ".join(long)


def test_every_layer_module_is_on_exactly_one_map():
    maps = _family_maps()
    problems = []
    for path in _modules():
        rel = path.relative_to(SRC).parts
        if rel[0] not in LAYERS or (path.name == "__init__.py" and len(rel) == 2):
            continue
        name = _dotted(path)
        # a subpackage (sim/muri/...) is listed by its package name
        owners = [
            f
            for f, mods in maps.items()
            if name in mods or any(name.startswith(m + ".") and m.count(".") >= 2 for m in mods)
        ]
        if len(owners) != 1:
            problems.append(f"{name}: listed by {owners or 'no family'}")
    assert not problems, "; ".join(problems)


def test_every_map_entry_exists():
    known = {_dotted(p) for p in _modules()}
    missing = [
        f"{fam}: {m}"
        for fam, mods in _family_maps().items()
        for m in mods
        if m not in known and not any(k.startswith(m + ".") for k in known)
    ]
    assert not missing, "maps name modules that do not exist: " + ", ".join(missing)
