"""Code fingerprints: which code made a row, so that edited code is run again.

A benchmark row is identified by its task (instance recipe, group, method,
parameters, seed, backend: :attr:`ddlsched.bench.tasks.Task.key`) and carries
the fingerprint of the code that produced it (``code_fingerprint``). A row is
reused by a later run only when its fingerprint equals the one the current
code has; otherwise the task runs again and the new row replaces the old one
in tables (the store's history keeps both).

What a method's fingerprint covers (:func:`method_fingerprint`), function by
function rather than file by file:

* the **units** it reaches: starting from the registered adapter, every
  top-level function, class (methods included) and module-level assignment
  that it names, and that those name in turn, across ddlsched's modules and
  the plug-in's own package. Each unit is hashed by its source text
  (decorators included). Names are resolved statically with :mod:`ast`
  through each module's imports, lazy imports inside functions included,
  so nothing is imported to compute a fingerprint. A name that cannot be
  resolved inside a module (a ``from X import *``) makes that whole module
  part of the fingerprint;
* the family's own machinery that makes every row: its hooks (evaluator,
  objective, loader, generator, schedule JSON) and the re-evaluation
  (:func:`ddlsched.pipeline.finish`);
* the method's parameter class, its kind, the values a factory closed over
  (a policy's name), and the versions of the numerical and solver packages
  the reached units import (numpy, scipy, pyomo, highspy, ortools, ...);
* for a plug-in, its distribution name and version, and the hash of its own
  units (:class:`ddlsched.registry.PluginOrigin` names the plug-in);
* for a method defined in a notebook cell (module ``__main__``, no file):
  the function's source as the session holds it, or its compiled code.

Editing ``check_u`` in ``heuristics/sjf_bco.py`` therefore changes the
fingerprint of every method whose code reaches ``check_u`` and of no other;
a comment or a function nobody calls changes none. Package ``__init__``
files hold no unit a method reaches (``ddlsched/__init__.py`` is the version
string), so a version bump alone recomputes nothing.

An instance's key uses :func:`instance_fingerprint`, the fingerprint of its
family's generator and loader: a changed generator makes new instances.
Fingerprints are computed once per registered adapter and process; a module
is read and parsed once.
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import functools
import hashlib
import importlib.util
import inspect
import json
import marshal
import sys
import types
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

__all__ = [
    "CodeFingerprint",
    "describe",
    "instance_fingerprint",
    "method_fingerprint",
]

#: Third-party packages whose version is part of a fingerprint when reached code imports them.
_TRACKED_PACKAGES = {
    "numpy": "numpy",
    "scipy": "scipy",
    "pandas": "pandas",
    "networkx": "networkx",
    "numba": "numba",
    "pyomo": "pyomo",
    "highspy": "highspy",
    "ortools": "ortools",
    "sklearn": "scikit-learn",
}
#: Modules that make every row of every family (the re-evaluation), by unit.
_PIPELINE_UNITS = (("ddlsched.pipeline", "finish"),)

Unit = tuple[str, str]  # (module, top-level name)
#: Units that are metadata, not behaviour: the version string.
_NOT_HASHED = frozenset({("ddlsched", "__version__")})


@dataclass(frozen=True)
class CodeFingerprint:
    """The fingerprint of the code behind one method (or one family's instances).

    ``digest`` is what rows record and compare; ``units`` maps each unit
    reached (``module:name``) to the first 12 hex digits of the SHA-256 of
    its source; ``modules`` the modules hashed whole (a name that could not
    be resolved in them); ``packages`` the third-party versions included;
    ``plugin`` names the plug-in (group, entry point, module, distribution,
    version, the hash of its own units) or is ``None`` for ddlsched's own.
    """

    digest: str
    units: dict[str, str] = field(default_factory=dict)
    modules: dict[str, str] = field(default_factory=dict)
    packages: dict[str, str | None] = field(default_factory=dict)
    plugin: dict[str, Any] | None = None

    def origin(self) -> dict[str, Any]:
        """What a row records beside the digest: the plug-in, or ``{"source": "ddlsched"}``."""
        if self.plugin is None:
            return {"source": "ddlsched"}
        if self.plugin.get("group") == "session":
            return {"source": "session", **self.plugin}
        return {"source": "plugin", **self.plugin}


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# --------------------------------------------------------------------------- module files


@functools.cache
def _top_dir(top: str) -> Path | None:
    """The folder of top-level package ``top`` (found without importing it)."""
    module = sys.modules.get(top)
    paths = getattr(module, "__path__", None) if module is not None else None
    if paths is None:
        try:
            spec = importlib.util.find_spec(top)  # a top-level name: nothing is imported
        except (ImportError, ValueError):
            return None
        paths = spec.submodule_search_locations if spec is not None else None
    return Path(next(iter(paths))) if paths else None


@functools.cache
def _module_file(name: str) -> Path | None:
    """The source file of module ``name`` (``None``: not a Python source module); found
    from its top-level package's folder, so that asking imports nothing."""
    module = sys.modules.get(name)
    path = getattr(module, "__file__", None) if module is not None else None
    if path is not None:
        return Path(path) if str(path).endswith(".py") else None
    top, _, rest = name.partition(".")
    folder = _top_dir(top)
    if folder is None:
        return None
    if not rest:
        init = folder / "__init__.py"
        return init if init.is_file() else None
    base = folder.joinpath(*rest.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


# --------------------------------------------------------------------------- static units


@dataclass
class _UnitInfo:
    source: str
    names: set[str]  # dotted names it loads ("np.zeros", "check_u")
    imports: dict[str, tuple[str, str | None]]  # imports inside it: alias -> (module, attr)


@dataclass
class _ModuleInfo:
    units: dict[str, _UnitInfo]
    imports: dict[str, tuple[str, str | None]]  # module-level: alias -> (module, attr)
    star: bool  # a ``from X import *``: names may come from anywhere
    digest: str


def _dotted(node: ast.AST) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def _absolute(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = module if is_package else module.rpartition(".")[0]
    for _ in range(node.level - 1):
        package = package.rpartition(".")[0]
    return f"{package}.{node.module}" if node.module else package


def _import_aliases(
    node: ast.Import | ast.ImportFrom, module: str, is_package: bool
) -> dict[str, tuple[str, str | None]]:
    found: dict[str, tuple[str, str | None]] = {}
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.asname:
                found[alias.asname] = (alias.name, None)
            else:  # ``import a.b`` binds ``a``
                top = alias.name.split(".")[0]
                found[top] = (top, None)
        return found
    base = _absolute(module, is_package, node)
    for alias in node.names:
        if alias.name != "*":
            found[alias.asname or alias.name] = (base, alias.name)
    return found


def _loads(node: ast.AST) -> set[str]:
    """Dotted names loaded inside ``node`` (``np.zeros``, ``check_u``)."""
    names: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Attribute) and isinstance(sub.ctx, ast.Load):
            dotted = _dotted(sub)
            if dotted:
                names.add(dotted)
        elif isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load):
            names.add(sub.id)
    return names


def _segment(lines: list[str], node: ast.AST) -> str:
    first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])
    return "".join(lines[first - 1 : node.end_lineno])


def _targets(node: ast.AST) -> list[str]:
    found = []
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
            found.append(sub.id)
    return found


@functools.cache
def _module_info(module: str) -> _ModuleInfo | None:
    """The units of ``module`` (top-level defs, classes, assignments), read once."""
    path = _module_file(module)
    if path is None:
        return None
    try:
        raw = path.read_bytes()
        tree = ast.parse(raw)
    except (OSError, SyntaxError, ValueError):
        return None
    lines = raw.decode("utf-8", errors="replace").splitlines(keepends=True)
    is_package = path.name == "__init__.py"
    info = _ModuleInfo({}, {}, False, _sha(raw)[:12])

    def add(name: str, source: str, node: ast.AST) -> None:
        names = _loads(node)
        inner: dict[str, tuple[str, str | None]] = {}
        for sub in ast.walk(node):
            if isinstance(sub, (ast.Import, ast.ImportFrom)):
                inner.update(_import_aliases(sub, module, is_package))
        unit = info.units.get(name)
        if unit is None:
            info.units[name] = _UnitInfo(source, names, inner)
        else:  # defined twice (branches of an ``if``): both count
            unit.source += source
            unit.names |= names
            unit.imports.update(inner)

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                add(node.name, _segment(lines, node), node)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
                    info.star = True
                info.imports.update(_import_aliases(node, module, is_package))
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                for name in _targets(node):
                    add(name, _segment(lines, node), node)
            elif isinstance(node, (ast.For, ast.AsyncFor)):
                for name in _targets(node.target):
                    add(name, ast.unparse(node.iter), node.iter)
                visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.If):
                if _dotted(node.test) == "TYPE_CHECKING":
                    continue  # annotations only: never runs
                visit(node.body)
                visit(node.orelse)
            elif isinstance(node, (ast.With, ast.AsyncWith)):
                visit(node.body)
            elif isinstance(node, ast.Try):
                for block in (node.body, node.orelse, node.finalbody):
                    visit(block)
                for handler in node.handlers:
                    visit(handler.body)

    visit(tree.body)
    return info


def _is_submodule(name: str) -> bool:
    return _module_file(name) is not None


class _Walk:
    """The units, whole modules and third-party packages reached from some roots."""

    def __init__(self, inside: tuple[str, ...]) -> None:
        self.inside = inside
        self.units: dict[str, str] = {}
        self.modules: dict[str, str] = {}
        self.external: set[str] = set()
        self._stack: list[Unit] = []

    def tracked(self, module: str) -> bool:
        return module.split(".")[0] in self.inside

    def add_unit(self, module: str, name: str) -> None:
        if (module, name) in _NOT_HASHED:
            return
        if self.tracked(module):
            self._stack.append((module, name))
        else:
            self.external.add(module.split(".")[0])

    def whole(self, module: str) -> None:
        info = _module_info(module)
        if info is not None:
            self.modules[module] = info.digest

    def run(self) -> None:
        while self._stack:
            module, name = self._stack.pop()
            key = f"{module}:{name}"
            if key in self.units or module in self.modules:
                continue
            info = _module_info(module)
            if info is None:
                continue
            unit = info.units.get(name)
            if unit is None:
                self._missing(module, name, info)
                continue
            self.units[key] = _sha(unit.source.encode())[:12]
            for dotted in sorted(unit.names):
                self._resolve(module, info, dotted, unit.imports)

    def _missing(self, module: str, name: str, info: _ModuleInfo) -> None:
        if name in info.imports:  # a re-export: follow it
            self._follow(info.imports[name], [])
        elif _is_submodule(f"{module}.{name}"):
            return  # a submodule used as a name: its units are reached attribute by attribute
        elif info.star or not hasattr(builtins, name):
            self.whole(module)  # cannot say where it comes from: the whole module counts

    def _resolve(
        self,
        module: str,
        info: _ModuleInfo,
        dotted: str,
        local: dict[str, tuple[str, str | None]],
    ) -> None:
        head, *rest = dotted.split(".")
        if head in local:
            self._follow(local[head], rest)
        elif head in info.units:
            self.add_unit(module, head)
        elif head in info.imports:
            self._follow(info.imports[head], rest)
        # anything else: a builtin, a parameter or a local variable

    def _follow(self, target: tuple[str, str | None], rest: list[str]) -> None:
        module, attr = target
        if not self.tracked(module):
            self.external.add(module.split(".")[0])
            return
        parts = ([attr] if attr is not None else []) + rest
        while parts:
            name = parts[0]
            if _is_submodule(f"{module}.{name}"):
                module, parts = f"{module}.{name}", parts[1:]
                continue
            self.add_unit(module, name)
            return
        # a module used as a value: nothing reached through it by name


# --------------------------------------------------------------------------- runtime objects


def _unwrap(value: Any) -> Any:
    while isinstance(value, functools.partial):
        value = value.func
    if isinstance(value, (staticmethod, classmethod)) or inspect.ismethod(value):
        value = value.__func__
    return inspect.unwrap(value) if callable(value) else value


def _plain(value: Any) -> bool:
    if isinstance(value, (str, int, float, bool, bytes, type(None))):
        return True
    if isinstance(value, (tuple, list, frozenset, set)):
        return all(_plain(x) for x in value)
    if isinstance(value, dict):
        return all(_plain(k) and _plain(x) for k, x in value.items())
    return False


def _value_digest(value: Any) -> str:
    return _sha(json.dumps(value, sort_keys=True, default=repr).encode())[:12]


def _code_digest(code: types.CodeType) -> str:
    try:
        return _sha(marshal.dumps(code))[:12]
    except ValueError:  # pragma: no cover - unmarshallable constants
        return _sha(code.co_code)[:12]


def _names(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names(const)
    return names


def _reach_object(walk: _Walk, value: Any, where: str, depth: int = 0) -> None:
    """Add what a runtime object stands for: a unit of a module with a source file, a
    function of a session (hashed here), a constant (hashed by value)."""
    if depth > 4:
        return
    if isinstance(value, types.ModuleType):
        if not walk.tracked(value.__name__):
            walk.external.add(value.__name__.split(".")[0])
        return
    value = _unwrap(value)
    if _plain(value):
        walk.units[f"{where}:value:{_value_digest(value)}"] = _value_digest(value)
        return
    if isinstance(value, (tuple, list, frozenset, set)):
        for item in value:
            _reach_object(walk, item, where, depth + 1)
        return
    if isinstance(value, dict):
        for key, item in value.items():
            _reach_object(walk, key, where, depth + 1)
            _reach_object(walk, item, where, depth + 1)
        return
    if not (inspect.isfunction(value) or isinstance(value, type)):
        if dataclasses.is_dataclass(value):
            for f in dataclasses.fields(value):
                _reach_object(walk, getattr(value, f.name), where, depth + 1)
        _reach_object(walk, type(value), where, depth + 1)
        return
    module = getattr(value, "__module__", None) or "__main__"
    qualname = getattr(value, "__qualname__", "") or ""
    top_name = qualname.split(".")[0]
    # ``__main__`` is read at run time: in a notebook its file is the kernel's launcher.
    static = module != "__main__" and _module_file(module) is not None
    if static and top_name and top_name != "<lambda>":
        walk.add_unit(module, top_name)
        for cell in getattr(value, "__closure__", None) or ():  # a factory's arguments
            try:
                _reach_object(walk, cell.cell_contents, f"{module}:{qualname}", depth + 1)
            except ValueError:  # an empty cell
                continue
        return
    _reach_session(walk, value, module, depth)


def _reach_session(walk: _Walk, value: Any, module: str, depth: int) -> None:
    """A function or class without a source file (a notebook cell): its source as the
    session holds it (else its compiled code), and what it names, found at run time."""
    qualname = getattr(value, "__qualname__", repr(value))
    key = f"{module}:{qualname}"
    if key in walk.units:
        return
    try:
        walk.units[key] = _sha(inspect.getsource(value).encode())[:12]
    except (OSError, TypeError):
        code = getattr(value, "__code__", None)
        walk.units[key] = _code_digest(code) if code is not None else _sha(qualname.encode())[:12]
    members = [value]
    if isinstance(value, type):
        members = [m for m in vars(value).values() if inspect.isfunction(_unwrap(m))]
        for base in value.__mro__[1:]:
            if base is not object:
                _reach_object(walk, base, key, depth + 1)
    for member in members:
        func = _unwrap(member)
        code = getattr(func, "__code__", None)
        if code is None:
            continue
        scope = getattr(func, "__globals__", {})
        for name in sorted(_names(code)):
            if name in scope:
                _reach_object(walk, scope[name], key, depth + 1)
        for cell in getattr(func, "__closure__", None) or ():
            try:
                _reach_object(walk, cell.cell_contents, key, depth + 1)
            except ValueError:
                continue


# --------------------------------------------------------------------------- fingerprints


@functools.cache
def _dist_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _fingerprint(
    roots: Iterable[Any], units: Iterable[Unit], plugin: Any | None, extra: str = ""
) -> CodeFingerprint:
    inside: tuple[str, ...] = ("ddlsched",)
    if plugin is not None:
        inside = (*inside, plugin.module.split(".")[0])
    walk = _Walk(inside)
    for module, name in units:
        walk.add_unit(module, name)
    for root in roots:
        _reach_object(walk, root, "root")
    walk.run()
    packages = {
        _TRACKED_PACKAGES[top]: _dist_version(_TRACKED_PACKAGES[top])
        for top in sorted(walk.external)
        if top in _TRACKED_PACKAGES
    }
    plugin_info = None
    if plugin is not None:
        top = plugin.module.split(".")[0]
        own = {
            k: v
            for k, v in sorted({**walk.units, **walk.modules}.items())
            if k.split(":")[0].split(".")[0] == top
        }
        plugin_info = {
            "group": plugin.group,
            "name": plugin.name,
            "module": plugin.module,
            "distribution": plugin.distribution,
            "version": plugin.version,
            "source_sha256": _sha(json.dumps(own, sort_keys=True).encode()),
        }
    units_sorted = dict(sorted(walk.units.items()))
    modules_sorted = dict(sorted(walk.modules.items()))
    payload = {
        "units": units_sorted,
        "modules": modules_sorted,
        "packages": packages,
        "plugin": plugin_info,
        "extra": extra,
    }
    digest = _sha(json.dumps(payload, sort_keys=True).encode())[:16]
    return CodeFingerprint(digest, units_sorted, modules_sorted, packages, plugin_info)


_FAMILY_HOOKS = (
    "load",
    "from_dict",
    "generate",
    "evaluate",
    "objective",
    "schedule_to_json",
    "schedule_from_json",
    "evaluation_summary",
    "size",
)

#: (family, method) -> (the adapter fingerprinted, its fingerprint); see method_fingerprint.
_METHOD_CACHE: dict[tuple[str, str], tuple[Any, CodeFingerprint]] = {}


def method_fingerprint(family: str, name: str) -> CodeFingerprint:
    """The fingerprint of the code of method ``family.name`` as registered now.

    Computed once per registered adapter: re-registering a method (an edited
    notebook cell) gives it a new fingerprint.
    """
    from ddlsched.registry import get_family, get_method

    method = get_method(family, name)
    cached = _METHOD_CACHE.get((family, name))
    if cached is not None and cached[0] is method.run:
        return cached[1]
    fam = get_family(family)
    hooks = [getattr(fam, h) for h in _FAMILY_HOOKS if callable(getattr(fam, h, None))]
    fingerprint = _fingerprint(
        [method.run, method.params_type, *hooks],
        _PIPELINE_UNITS,
        getattr(method, "origin", None),
        extra=f"{family}.{name}:{method.kind}",
    )
    _METHOD_CACHE[(family, name)] = (method.run, fingerprint)
    return fingerprint


@functools.cache
def _instance_fingerprint(family: str) -> CodeFingerprint:
    from ddlsched.registry import get_family

    fam = get_family(family)
    return _fingerprint([fam.generate, fam.from_dict, fam.load], (), None, extra=family)


def instance_fingerprint(family: str) -> str:
    """The fingerprint of family ``family``'s instance generator and loader."""
    return _instance_fingerprint(family).digest


def describe(fingerprint: CodeFingerprint) -> dict[str, Any]:
    """A JSON-ready description (what the manifest records per method)."""
    return {
        "digest": fingerprint.digest,
        "origin": fingerprint.origin(),
        "units": fingerprint.units,
        "modules": fingerprint.modules,
        "packages": fingerprint.packages,
    }


def changed_units(old: CodeFingerprint, new: CodeFingerprint) -> list[str]:
    """The units (and whole modules) whose hash differs between two fingerprints."""
    a = {**old.units, **old.modules}
    b = {**new.units, **new.modules}
    return sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))
