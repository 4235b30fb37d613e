"""The units of source code a fingerprint hashes, found statically (:mod:`ast`).

A *unit* is a top-level name of a module: a function or class (with its
decorators and methods), a module-level assignment, a ``for`` target. Each
unit is hashed by its syntax tree (:func:`ast.dump`, docstrings left out),
so comments, blank lines, docstrings and formatting change no hash; every
other edit of its code does. Every module-level statement that mentions a
name also belongs to that name's unit (``TABLE["x"] = f``, ``register(f)``,
``Cls.attr = ...``), so a table filled after its definition is covered.

:class:`Walk` follows the names a unit loads through its module's imports
(every binding of an alias: both arms of a ``try``/``except ImportError``
import count), lazy imports inside functions, ``from X import *``, and a
package's lazy ``__getattr__`` (a string naming a submodule that holds the
name), collecting the units reached inside the tracked top-level packages,
the third-party packages reached outside them, the modules that had to be
hashed whole (a name that could not be resolved), and the methods called by
name (``run_method("rar", "sjf_bco", ...)``, ``get_method(...)`` with literal
strings), whose own fingerprints then count too.

Modules are read once per (path, modification time, size): an edited file
is read again in a long-lived process (a notebook).
"""

from __future__ import annotations

import ast
import builtins
import functools
import hashlib
import importlib.util
import sys
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["ModuleInfo", "UnitInfo", "Walk", "module_file", "module_info", "node_digest"]

Unit = tuple[str, str]  # (module, top-level name)
Binding = tuple[str, str | None]  # (module, attribute or None for the module itself)
#: Units that are metadata, not behaviour: the version string.
NOT_HASHED = frozenset({("ddlsched", "__version__")})
#: Calls that name a method by strings: the method called counts as used.
_METHOD_CALLS = frozenset({"run_method", "get_method", "simulate"})


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# --------------------------------------------------------------------------- files


@functools.cache
def _top_dirs(top: str) -> tuple[Path, ...]:
    """The folders of top-level package ``top`` (several for a namespace package),
    found without importing it."""
    module = sys.modules.get(top)
    paths = getattr(module, "__path__", None) if module is not None else None
    if paths is None:
        try:
            spec = importlib.util.find_spec(top)  # a top-level name: nothing is imported
        except (ImportError, ValueError):
            return ()
        paths = spec.submodule_search_locations if spec is not None else None
    return tuple(Path(p) for p in paths) if paths else ()


@functools.cache
def module_file(name: str) -> Path | None:
    """The source file of module ``name`` (``None``: not a Python source module); found
    from its top-level package's folders, so that asking imports nothing."""
    module = sys.modules.get(name)
    path = getattr(module, "__file__", None) if module is not None else None
    if path is not None:
        return Path(path) if str(path).endswith(".py") else None
    top, _, rest = name.partition(".")
    for folder in _top_dirs(top):
        if not rest:
            init = folder / "__init__.py"
            if init.is_file():
                return init
            continue
        base = folder.joinpath(*rest.split("."))
        for candidate in (base.with_suffix(".py"), base / "__init__.py"):
            if candidate.is_file():
                return candidate
    return None


def is_module(name: str) -> bool:
    """Whether ``name`` is a module with a source file."""
    return module_file(name) is not None


# --------------------------------------------------------------------------- syntax


def _strip_docstrings(node: ast.AST) -> ast.AST:
    for sub in ast.walk(node):
        body = getattr(sub, "body", None)
        if (
            isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Module))
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            sub.body = body[1:] or [ast.Pass()]
    return node


def node_digest(node: ast.AST) -> str:
    """The hash of a syntax tree: comments, blank lines, docstrings and formatting left out."""
    return _sha(ast.dump(_strip_docstrings(node), include_attributes=False).encode())


def _dotted(node: ast.AST) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def method_calls(node: ast.AST, walk: bool = True) -> set[tuple[str, str]]:
    """``(family, method)`` of the calls in ``node`` (``walk=False``: of ``node`` itself, a
    call) that name a method by literal strings."""
    found = set()
    for sub in ast.walk(node) if walk else (node,):
        if not isinstance(sub, ast.Call) or len(sub.args) < 2:
            continue
        callee = _dotted(sub.func) or ""
        first, second = sub.args[0], sub.args[1]
        if (
            callee.rsplit(".", 1)[-1] in _METHOD_CALLS
            and isinstance(first, ast.Constant)
            and isinstance(second, ast.Constant)
            and isinstance(first.value, str)
            and isinstance(second.value, str)
        ):
            found.add((first.value, second.value))
    return found


def _absolute(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = module if is_package else module.rpartition(".")[0]
    for _ in range(node.level - 1):
        package = package.rpartition(".")[0]
    return f"{package}.{node.module}" if node.module else package


def import_bindings(
    node: ast.Import | ast.ImportFrom, module: str, is_package: bool
) -> list[tuple[str, Binding]]:
    """``(alias, (module, attribute))`` for each name an import statement binds."""
    found: list[tuple[str, Binding]] = []
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.asname:
                found.append((alias.asname, (alias.name, None)))
            else:  # ``import a.b`` binds ``a``; ``a.b.f`` is resolved part by part
                top = alias.name.split(".")[0]
                found.append((top, (top, None)))
        return found
    base = _absolute(module, is_package, node)
    for alias in node.names:
        if alias.name != "*":
            found.append((alias.asname or alias.name, (base, alias.name)))
    return found


@dataclass
class UnitInfo:
    """One unit: its digest, the names it loads, the imports inside it, the methods it
    calls by name."""

    digests: list[str] = field(default_factory=list)
    names: set[str] = field(default_factory=set)
    imports: dict[str, list[Binding]] = field(default_factory=dict)
    methods: set[tuple[str, str]] = field(default_factory=set)

    @property
    def digest(self) -> str:
        return _sha("".join(self.digests).encode())[:12]


@dataclass
class ModuleInfo:
    """A module's units, its module-level imports (every binding of each alias), the
    modules it star-imports, the string constants it holds, and its file's hash."""

    units: dict[str, UnitInfo]
    imports: dict[str, list[Binding]]
    stars: list[str]
    strings: set[str]
    digest: str


def _add(info: ModuleInfo, name: str, node: ast.AST, module: str, is_package: bool) -> None:
    """Add ``node`` to unit ``name``: one walk of its tree collects the names it loads,
    the imports inside it and the methods it calls by name, and strips its docstrings."""
    unit = info.units.setdefault(name, UnitInfo())
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            if isinstance(sub.ctx, ast.Load):
                unit.names.add(sub.id)
        elif isinstance(sub, ast.Attribute):
            if isinstance(sub.ctx, ast.Load):
                dotted = _dotted(sub)
                if dotted:
                    unit.names.add(dotted)
        elif isinstance(sub, ast.Call):
            unit.methods |= method_calls(sub, walk=False)
        elif isinstance(sub, (ast.Import, ast.ImportFrom)):
            for alias, binding in import_bindings(sub, module, is_package):
                unit.imports.setdefault(alias, []).append(binding)
        elif isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            body = sub.body
            if (
                body
                and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)
            ):
                sub.body = body[1:] or [ast.Pass()]
    unit.digests.append(_sha(ast.dump(node, include_attributes=False).encode()))


def _stored_bases(node: ast.AST) -> set[str]:
    """Names a statement stores into: ``x = ...`` and the base of ``x[k] = ...``, ``x.a = ...``."""
    found = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
            found.add(sub.id)
        elif isinstance(sub, (ast.Subscript, ast.Attribute)) and isinstance(sub.ctx, ast.Store):
            base = sub.value
            while isinstance(base, (ast.Subscript, ast.Attribute)):
                base = base.value
            if isinstance(base, ast.Name):
                found.add(base.id)
    return found


def _parse(module: str, path: Path, raw: bytes) -> ModuleInfo | None:
    try:
        tree = ast.parse(raw)
    except (SyntaxError, ValueError):
        return None
    is_package = path.name == "__init__.py"
    info = ModuleInfo({}, {}, [], set(), _sha(raw)[:12])

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                _add(info, node.name, node, module, is_package)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
                    info.stars.append(_absolute(module, is_package, node))
                for alias, binding in import_bindings(node, module, is_package):
                    info.imports.setdefault(alias, []).append(binding)
            elif isinstance(node, (ast.For, ast.AsyncFor)):
                for name in _stored_bases(node.target):
                    _add(info, name, node.iter, module, is_package)
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
            else:  # assignments, and statements that may fill a table: ``register(f)``
                targets = _stored_bases(node)
                if not targets and isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
                    callee = _dotted(node.value.func)  # ``register(f)``, ``TABLE.update(...)``
                    targets = {callee.split(".")[0]} if callee else set()
                for name in targets:
                    _add(info, name, node, module, is_package)

    visit(tree.body)
    if "__getattr__" in info.units:  # a lazy package: the names its strings give
        info.strings = {
            sub.value
            for sub in ast.walk(tree)
            if isinstance(sub, ast.Constant)
            and isinstance(sub.value, str)
            and sub.value.isidentifier()
        }
    return info


@functools.lru_cache(maxsize=4096)
def _parse_cached(module: str, path: str, mtime_ns: int, size: int) -> ModuleInfo | None:
    try:
        raw = Path(path).read_bytes()
    except OSError:
        return None
    return _parse(module, Path(path), raw)


def module_info(module: str) -> ModuleInfo | None:
    """The units of ``module``, read again when its file changed."""
    path = module_file(module)
    if path is None:
        return None
    try:
        stat = path.stat()
    except OSError:
        return None
    return _parse_cached(module, str(path), stat.st_mtime_ns, stat.st_size)


# --------------------------------------------------------------------------- the walk


class Walk:
    """The units, whole modules, third-party packages and methods reached from some roots."""

    def __init__(self, inside: set[str]) -> None:
        self.inside = inside
        self.units: dict[str, str] = {}
        self.modules: dict[str, str] = {}
        self.external: set[str] = set()
        self.methods: set[tuple[str, str]] = set()
        self._stack: list[Unit] = []

    def tracked(self, module: str) -> bool:
        return module.split(".")[0] in self.inside

    def add_unit(self, module: str, name: str) -> None:
        if (module, name) in NOT_HASHED:
            return
        if self.tracked(module):
            self._stack.append((module, name))
        else:
            self.external.add(module.split(".")[0])

    def whole(self, module: str) -> None:
        info = module_info(module)
        if info is not None:
            self.modules[module] = info.digest

    def run(self) -> None:
        while self._stack:
            module, name = self._stack.pop()
            key = f"{module}:{name}"
            if key in self.units:
                continue
            info = module_info(module)
            if info is None:
                continue
            unit = info.units.get(name)
            if unit is None:
                self._missing(module, name, info)
                continue
            self.units[key] = unit.digest
            self.methods |= unit.methods
            for binding in info.imports.get(name, ()):  # also imported (then filled here)
                self.follow(binding, [])
            for dotted in sorted(unit.names):
                self._resolve(module, info, dotted, unit.imports)

    def _missing(self, module: str, name: str, info: ModuleInfo) -> None:
        if name in info.imports:  # a re-export: follow it
            for binding in info.imports[name]:
                self.follow(binding, [])
            return
        if is_module(f"{module}.{name}"):
            return  # a submodule used as a name: its units are reached attribute by attribute
        found = False
        for star in info.stars:  # ``from X import *``
            if self.tracked(star):
                self.add_unit(star, name)
                found = True
        if "__getattr__" in info.units:  # a lazy package: the submodules its strings name
            self.add_unit(module, "__getattr__")
            for text in sorted(info.strings):
                for candidate in (f"{module}.{text}", text):
                    sub = module_info(candidate) if is_module(candidate) else None
                    if sub is not None and name in sub.units:
                        self.add_unit(candidate, name)
                        found = True
        if not found and not hasattr(builtins, name):
            self.whole(module)  # cannot say where it comes from: the whole module counts

    def _resolve(
        self, module: str, info: ModuleInfo, dotted: str, local: dict[str, list[Binding]]
    ) -> None:
        head, *rest = dotted.split(".")
        if head in local:
            for binding in local[head]:
                self.follow(binding, rest)
            return
        if head in info.units:
            self.add_unit(module, head)
        if head in info.imports:
            for binding in info.imports[head]:
                self.follow(binding, rest)
        elif head not in info.units and info.stars and not hasattr(builtins, head):
            self._missing(module, head, info)
        # anything else: a builtin, a parameter or a local variable

    def follow(self, binding: Binding, rest: list[str]) -> None:
        """Reach what ``binding`` (an import) and the attribute path ``rest`` name."""
        module, attr = binding
        if not self.tracked(module):
            self.external.add(module.split(".")[0])
            return
        parts = ([attr] if attr is not None else []) + rest
        while parts:
            name = parts[0]
            if is_module(f"{module}.{name}"):
                module, parts = f"{module}.{name}", parts[1:]
                continue
            self.add_unit(module, name)
            return
        # a module used as a value: nothing reached through it by name
