"""The package's imports run downward only, and never in a circle.

Every ``import`` statement of ``src/ddlsched`` is read with :mod:`ast`,
the ones inside functions (lazy imports) included: a lazy import still is a
dependency. Imports under ``if TYPE_CHECKING:`` are left out: they never run
(a module that only names another in its annotations does not depend on it). A module may import modules of its own layer or of a lower one
(:data:`LAYERS`, lowest first); the module graph may have no cycle.
Discovery of families (``ddlsched.registry`` finding the modules of
``ddlsched.families``) is dynamic, by design, and not an import.

The layer order is the data flow of ``docs/architecture.md``: the data layer (problems)
knows no solver and no algorithm; workloads build instances; heuristics and
formulations solve them (formulations may use heuristics for incumbents);
simulators run policies; the pipeline and the registry wire families; the
benchmark platform and the CLI sit on top.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"

#: Layers, lowest first: (name, module prefixes).
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    (
        "base",
        (
            "ddlsched",  # the package __init__ (version only)
            "ddlsched.errors",
            "ddlsched.rng",
            "ddlsched.textin",
            "ddlsched.jsonio",
            "ddlsched.fieldspec",
            "ddlsched.datadir",
            "ddlsched.data",  # the data registry, hash checks, fetching (pooch)
            "ddlsched.deadline",
            "ddlsched.params",
            "ddlsched.progress",
            "ddlsched.cli_types",
            "ddlsched.console",  # the Rich console of every command
            "ddlsched.memory",
            "ddlsched.plugins",
        ),
    ),
    ("solvers", ("ddlsched.solvers",)),
    ("problems", ("ddlsched.problems",)),
    ("workloads", ("ddlsched.workloads",)),
    ("heuristics", ("ddlsched.heuristics",)),
    ("models", ("ddlsched.models",)),
    ("sim", ("ddlsched.sim",)),
    ("pipeline", ("ddlsched.pipeline",)),
    ("registry", ("ddlsched.registry",)),
    ("families", ("ddlsched.families",)),
    ("bench", ("ddlsched.bench",)),
    (
        "cli",
        (
            "ddlsched.cli",
            "ddlsched.cli_listings",
            "ddlsched.cli_simulate",
            "ddlsched.cli_instance",
            "ddlsched.instance_check",
            "ddlsched.conformance",
            "ddlsched.api",  # the public module of plug-ins: registry, families, conformance
            "ddlsched.cli_new",
            "ddlsched.cli_data",
            "ddlsched.cli_reproduce",
            "ddlsched.templates",  # the scaffold's method modules (package data)
        ),
    ),
]


def module_names(root: Path, package: str) -> dict[str, Path]:
    """``{dotted module name: file}`` of every module of ``package`` under ``root``."""
    out = {}
    for path in sorted((root / package.replace(".", "/")).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _is_type_checking(test: ast.expr) -> bool:
    """``TYPE_CHECKING`` or ``typing.TYPE_CHECKING``."""
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports_of(name: str, path: Path, known: set[str], package: str) -> set[str]:
    """Modules of ``package`` imported anywhere in ``path`` (lazy imports included)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    typing_only = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and _is_type_checking(node.test)
        for inner in ast.walk(node)
    }
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = name.split(".") if is_package else name.split(".")[:-1]
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            targets = []
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                targets.append(sub if sub in known else base)
        else:
            continue
        for target in targets:
            if target == package or target.startswith(package + "."):
                while target not in known and "." in target:
                    target = target.rsplit(".", 1)[0]
                if target in known and target != name:
                    found.add(target)
    return found


def import_graph(root: Path, package: str) -> dict[str, set[str]]:
    modules = module_names(root, package)
    known = set(modules)
    return {name: imports_of(name, path, known, package) for name, path in modules.items()}


def layer_of(module: str, layers: list[tuple[str, tuple[str, ...]]]) -> int:
    best, best_len = None, -1
    for index, (_, prefixes) in enumerate(layers):
        for prefix in prefixes:
            matches = module == prefix or module.startswith(prefix + ".")
            if matches and len(prefix) > best_len and (prefix.count(".") or module == prefix):
                best, best_len = index, len(prefix)
    if best is None:
        raise AssertionError(f"module {module} is in no layer: add it to LAYERS")
    return best


def upward_imports(graph, layers) -> list[str]:
    out = []
    for module, targets in sorted(graph.items()):
        for target in sorted(targets):
            if layer_of(target, layers) > layer_of(module, layers):
                out.append(
                    f"{module} ({layers[layer_of(module, layers)][0]}) imports {target} "
                    f"({layers[layer_of(target, layers)][0]})"
                )
    return out


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    sys.setrecursionlimit(max(10_000, sys.getrecursionlimit()))
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_every_module_is_in_a_layer():
    for module in import_graph(SRC, "ddlsched"):
        layer_of(module, LAYERS)


def test_no_upward_import():
    assert upward_imports(import_graph(SRC, "ddlsched"), LAYERS) == []


def test_no_import_circle():
    assert cycles(import_graph(SRC, "ddlsched")) == []


def test_problems_and_heuristics_import_no_solver():
    """Nothing in problems/ imports Pyomo or a solver; heuristics never import Pyomo.

    The rule of ``docs/architecture.md`` ("Layers and the import order").

    Neither may import ``ddlsched.solvers`` (lower in the layer order, but the
    way to Pyomo) nor a solver package directly, lazily or not.
    """
    graph = import_graph(SRC, "ddlsched")
    for module, targets in graph.items():
        if module.startswith(("ddlsched.problems", "ddlsched.heuristics")):
            solver_layer = sorted(t for t in targets if t.startswith("ddlsched.solvers"))
            assert not solver_layer, f"{module} imports {solver_layer}"
    for path in [
        *(SRC / "ddlsched/problems").rglob("*.py"),
        *(SRC / "ddlsched/heuristics").rglob("*.py"),
    ]:
        tree = ast.parse(path.read_text())
        names = {
            alias.name.split(".")[0]
            for node in ast.walk(tree)
            if isinstance(node, ast.Import)
            for alias in node.names
        } | {
            (node.module or "").split(".")[0]
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom)
        }
        assert not names & {"pyomo", "highspy", "ortools"}, path


# --------------------------------------------------------------------------- the checker itself


def _plant(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_checker_finds_a_planted_circle_and_an_upward_import(tmp_path):
    _plant(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/low/__init__.py": "",
            "pkg/low/a.py": "def f():\n    from pkg.low import b\n",  # lazy: still a dependency
            "pkg/low/b.py": "from pkg.low.a import f\n",
            "pkg/low/c.py": "import pkg.high.d\n",
            "pkg/high/__init__.py": "",
            "pkg/high/d.py": "from pkg.low import a\n",
        },
    )
    graph = import_graph(tmp_path, "pkg")
    layers = [("base", ("pkg",)), ("low", ("pkg.low",)), ("high", ("pkg.high",))]
    assert cycles(graph) == [["pkg.low.a", "pkg.low.b"]]
    assert upward_imports(graph, layers) == ["pkg.low.c (low) imports pkg.high.d (high)"]


def test_checker_is_quiet_on_a_clean_package(tmp_path):
    _plant(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/low/__init__.py": "",
            "pkg/low/a.py": "X = 1\n",
            "pkg/high/__init__.py": "",
            "pkg/high/d.py": "from pkg.low.a import X\nfrom . import e\n",
            "pkg/high/e.py": "",
        },
    )
    graph = import_graph(tmp_path, "pkg")
    layers = [("base", ("pkg",)), ("low", ("pkg.low",)), ("high", ("pkg.high",))]
    assert graph["pkg.high.d"] == {"pkg.low.a", "pkg.high.e"}
    assert cycles(graph) == [] and upward_imports(graph, layers) == []


def test_checker_leaves_out_imports_only_for_type_checking(tmp_path):
    _plant(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/low/__init__.py": "",
            "pkg/low/a.py": "from pkg.low.b import Y\n",
            "pkg/low/b.py": (
                "from typing import TYPE_CHECKING\nimport typing\nY = 1\n"
                "if TYPE_CHECKING:\n    from pkg.low.a import Z\n"
                "if typing.TYPE_CHECKING:\n    import pkg.low.a\n"
            ),
            "pkg/low/c.py": "import sys\nif sys.version_info > (3,):\n    from pkg.low.a import W\n",
        },
    )
    graph = import_graph(tmp_path, "pkg")
    assert graph["pkg.low.b"] == set()  # annotations only: no dependency, no circle
    assert graph["pkg.low.c"] == {"pkg.low.a"}  # any other `if` still counts
    assert cycles(graph) == []
