"""Code fingerprints: which code made a row, so that edited code is run again.

A benchmark row is identified by its task (instance recipe, group, method,
parameters, seed, backend: :attr:`ddlsched.bench.tasks.Task.key`) and carries
the fingerprint of the code that produced it (``code_fingerprint``). A row is
reused by a later run only when its fingerprint equals the one the current
code has; otherwise the task runs again and the new row replaces the old one
in tables (the store's history keeps both).

What a method's fingerprint covers (:func:`method_fingerprint`), function by
function rather than file by file (:mod:`ddlsched.bench.code_units`):

* the **units** it reaches: starting from the registered adapter, every
  top-level function, class (methods included), module-level assignment and
  statement that fills a module-level table, that it names, and that those
  name in turn, inside ddlsched, the plug-in's own package and the module of
  a script or notebook that defined it. Each unit is hashed by its syntax
  tree, so comments, blank lines, docstrings and formatting change nothing
  (a lambda, e.g. a family hook written inline, is named by its syntax tree
  too, not by its line, so that lines added above it change nothing either);
  names are resolved statically through each module's imports (lazy imports
  inside functions, both arms of an ``ImportError`` fallback, star imports
  and a package's lazy ``__getattr__`` included); nothing is imported to
  compute a fingerprint. A name that cannot be resolved in a module makes
  that whole module part of the fingerprint;
* the **methods it runs by name** (``run_method("dmlrs", "fifo", ...)`` with
  literal strings): their fingerprints;
* the family's own machinery that makes every row: its hooks (evaluator,
  objective, loader, generator, schedule JSON) and the re-evaluation
  (:func:`ddlsched.pipeline.finish`);
* the method's parameter class, its kind, the values a factory closed over
  (a policy's name), and the versions of the numerical and solver packages
  the reached units import (numpy, scipy, pyomo, highspy, ortools, ...);
* for a plug-in, its distribution name and version, and the hash of its own
  units (:class:`ddlsched.plugins.PluginOrigin` names the plug-in);
* for a method defined in a notebook cell (module ``__main__``): the syntax
  tree of the function's source as the session holds it (else its compiled
  code), and what its globals and closure hold at the time: functions
  (followed), plain values and numpy arrays (hashed by value), other objects
  (by their attributes and class).

Editing ``check_u`` in ``heuristics/sjf_bco.py`` therefore changes the
fingerprint of every method whose code reaches ``check_u`` and of no other.
A unit is a whole top-level name: a dictionary of policies counts whole, so
editing one policy class recomputes the methods that reach the dictionary.
Package ``__init__`` files hold no unit a method reaches
(``ddlsched/__init__.py`` is the version string), so a version bump alone
recomputes nothing. Data files (traces, profiles) are not code: results
identify them by their SHA-256, not by a fingerprint. What cannot be seen
statically is not covered: code reached only through strings other than a
method's name (``importlib.import_module(name)`` with a computed name) or
through a registry filled as a side effect of importing another module.

An instance's key uses :func:`instance_fingerprint`, the fingerprint of its
family's generator and loader: a changed generator makes new instances.
Fingerprints are computed once per registered adapter and per state of the
files they read (a module edited in a long-lived process is read again).
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import functools
import hashlib
import inspect
import json
import marshal
import sys
import textwrap
import types
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any

from ddlsched.bench.code_units import (
    Unit,
    Walk,
    is_module,
    method_calls,
    module_file,
    node_digest,
)

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


@dataclass(frozen=True)
class CodeFingerprint:
    """The fingerprint of the code behind one method (or one family's instances).

    ``digest`` is what rows record and compare; ``units`` maps each unit
    reached (``module:name``) to the first 12 hex digits of the SHA-256 of
    its source; ``modules`` the modules hashed whole (a name that could not
    be resolved in them); ``packages`` the third-party versions included;
    ``plugin`` names the plug-in (group, entry point, module, distribution,
    version, the hash of its own units) or is ``None`` for ddlsched's own;
    ``called`` the fingerprints of the methods it runs by name.
    """

    digest: str
    units: dict[str, str] = field(default_factory=dict)
    modules: dict[str, str] = field(default_factory=dict)
    packages: dict[str, str | None] = field(default_factory=dict)
    plugin: dict[str, Any] | None = None
    called: dict[str, str | None] = field(default_factory=dict)

    def origin(self) -> dict[str, Any]:
        """What a row records beside the digest: the plug-in, or ``{"source": "ddlsched"}``."""
        if self.plugin is None:
            return {"source": "ddlsched"}
        if self.plugin.get("group") == "session":
            return {"source": "session", **self.plugin}
        return {"source": "plugin", **self.plugin}


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# --------------------------------------------------------------------------- runtime objects


def _unwrap(value: Any) -> Any:
    while isinstance(value, functools.partial):
        value = value.func
    if isinstance(value, (staticmethod, classmethod)) or inspect.ismethod(value):
        value = value.__func__
    return inspect.unwrap(value) if callable(value) else value


def _canonical(value: Any) -> Any:
    """A JSON-ready form of a plain value whose text does not depend on the hash seed
    (sets sorted, dictionary keys of any type, every value tagged with its type)."""
    if isinstance(value, (str, int, float, bool, type(None))):
        return [type(value).__name__, repr(value)]
    if isinstance(value, bytes):
        return ["bytes", value.hex()]
    if isinstance(value, (set, frozenset)):
        items = sorted(json.dumps(_canonical(v)) for v in value)
        return [type(value).__name__, items]
    if isinstance(value, (list, tuple)):
        return [type(value).__name__, [_canonical(v) for v in value]]
    if isinstance(value, dict):
        pairs = sorted(
            (json.dumps(_canonical(k)), json.dumps(_canonical(v))) for k, v in value.items()
        )
        return ["dict", pairs]
    return ["object", type(value).__qualname__]


def _plain(value: Any, depth: int = 0) -> bool:
    if depth > 20:
        return False
    if isinstance(value, (str, int, float, bool, bytes, type(None))):
        return True
    if isinstance(value, (tuple, list, frozenset, set)):
        return all(_plain(x, depth + 1) for x in value)
    if isinstance(value, dict):
        return all(_plain(k, depth + 1) and _plain(x, depth + 1) for k, x in value.items())
    return False


def _value_digest(value: Any) -> str:
    return _sha(json.dumps(_canonical(value)).encode())[:12]


def _array_digest(value: Any) -> str | None:
    """A numpy array by its dtype, shape and bytes (``None``: not an array)."""
    tobytes, dtype, shape = (getattr(value, n, None) for n in ("tobytes", "dtype", "shape"))
    if not callable(tobytes) or dtype is None or shape is None:
        return None
    try:
        return _sha(f"{dtype}|{shape}|".encode() + tobytes())[:12]
    except (TypeError, ValueError):
        return None


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


_STDLIB = frozenset(getattr(sys, "stdlib_module_names", ())) | {"builtins", "__future__"}


def _own_top(module: str | None) -> str | None:
    """The top-level package of ``module`` when it is code of the user's (a plug-in, a
    script, a notebook): not the standard library, not a tracked third-party package."""
    if not module:
        return None
    top = module.split(".")[0]
    if top in _STDLIB or top in _TRACKED_PACKAGES or (top != "__main__" and not is_module(top)):
        return None
    return top


def _reach_object(walk: Walk, value: Any, where: str, depth: int = 0) -> None:
    """Add what a runtime object stands for: a unit of a module with a source file, a
    function of a session (hashed here), a constant (hashed by value)."""
    if isinstance(value, types.ModuleType):
        if not walk.tracked(value.__name__):
            walk.external.add(value.__name__.split(".")[0])
        return
    value = _unwrap(value)
    if _plain(value):
        walk.units[f"{where}:value:{_value_digest(value)}"] = _value_digest(value)
        return
    array = _array_digest(value)
    if array is not None:
        walk.units[f"{where}:array:{array}"] = array
        return
    if depth > 8:  # a deep structure of objects: the rest by type only
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
        elif isinstance(getattr(value, "__dict__", None), dict):
            _reach_object(walk, dict(vars(value)), where, depth + 1)
        _reach_object(walk, type(value), where, depth + 1)
        return
    module = getattr(value, "__module__", None) or "__main__"
    qualname = getattr(value, "__qualname__", "") or ""
    top_name = qualname.split(".")[0]
    # ``__main__`` is read at run time: in a notebook its file is the kernel's launcher.
    static = module != "__main__" and is_module(module)
    if static and top_name and top_name != "<lambda>":
        walk.add_unit(module, top_name)
        for cell in getattr(value, "__closure__", None) or ():  # a factory's arguments
            try:
                _reach_object(walk, cell.cell_contents, f"{module}:{qualname}", depth + 1)
            except ValueError:  # an empty cell
                continue
        return
    _reach_session(walk, value, module)


def _session_digest(value: Any) -> str:
    """A function or class of a session by its syntax tree (comments and docstrings left
    out), else by its compiled code."""
    try:
        source = textwrap.dedent(inspect.getsource(value))
        return node_digest(ast.parse(source))[:12]
    except (OSError, TypeError, SyntaxError):
        code = getattr(value, "__code__", None)
        return _code_digest(code) if code is not None else _sha(repr(value).encode())[:12]


def _reach_session(walk: Walk, value: Any, module: str) -> None:
    """A function or class without a source file a walk can read (a notebook cell, a
    lambda): its syntax tree, and what it names, found at run time."""
    qualname = getattr(value, "__qualname__", repr(value))
    code = getattr(value, "__code__", None)
    digest = _session_digest(value)
    if module != "__main__" and is_module(module):
        # a lambda of a module file: named by its syntax tree, not its line, so that lines
        # added or removed above it change nothing
        key = f"{module}:{qualname}#{digest}"
    else:
        key = f"{module}:{qualname}@{getattr(code, 'co_firstlineno', 0)}"
    if key in walk.units:
        return
    walk.units[key] = digest
    with contextlib.suppress(OSError, TypeError, SyntaxError):
        walk.methods |= method_calls(ast.parse(textwrap.dedent(inspect.getsource(value))))
    members = [value]
    if isinstance(value, type):
        members = [m for m in vars(value).values() if inspect.isfunction(_unwrap(m))]
        for base in value.__mro__[1:]:
            if base is not object:
                _reach_object(walk, base, key)
    for member in members:
        func = _unwrap(member)
        code = getattr(func, "__code__", None)
        if code is None:
            continue
        names = _names(code)
        scope = getattr(func, "__globals__", {})
        for name in sorted(names):
            if name not in scope:
                continue
            target = scope[name]
            if isinstance(target, types.ModuleType) and walk.tracked(target.__name__):
                for attr in sorted(names):  # ``sb.sjf_bco(...)``: the module's names it uses
                    if attr in vars(target):
                        _reach_object(walk, getattr(target, attr), key)
            else:
                _reach_object(walk, target, key)
        for cell in getattr(func, "__closure__", None) or ():
            try:
                _reach_object(walk, cell.cell_contents, key)
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
    roots = list(roots)
    inside = {"ddlsched"}
    if plugin is not None:
        inside.add(plugin.module.split(".")[0])
    for root in roots:  # a plug-in family's hooks, a script's functions
        top = _own_top(getattr(_unwrap(root), "__module__", None))
        if top is not None:
            inside.add(top)
    walk = Walk(inside)
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
    called = {}
    for family, name in sorted(walk.methods):  # methods it runs by name
        called[f"{family}.{name}"] = _called_digest(family, name)
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
        "called": called,
        "plugin": plugin_info,
        "extra": extra,
    }
    digest = _sha(json.dumps(payload, sort_keys=True).encode())[:16]
    return CodeFingerprint(digest, units_sorted, modules_sorted, packages, plugin_info, called)


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

#: (family, method) -> (the adapter fingerprinted, the state of the files it reached, its
#: fingerprint); see method_fingerprint.
_METHOD_CACHE: dict[tuple[str, str], tuple[Any, tuple[Any, ...], CodeFingerprint]] = {}


def _file_states(fingerprint: CodeFingerprint) -> tuple[Any, ...]:
    """(path, modification time, size) of every module file a fingerprint read."""
    modules = {key.split(":", 1)[0] for key in (*fingerprint.units, *fingerprint.modules)}
    states = []
    for module in sorted(modules):
        path = module_file(module)
        if path is None:
            continue
        try:
            stat = path.stat()
        except OSError:
            states.append((str(path), None, None))
            continue
        states.append((str(path), stat.st_mtime_ns, stat.st_size))
    return tuple(states)


#: Methods whose fingerprint is being computed (a method that runs itself by name).
_IN_PROGRESS: set[tuple[str, str]] = set()


def _called_digest(family: str, name: str) -> str | None:
    """The fingerprint of a method another method runs by name (``None``: not registered,
    or a cycle)."""
    from ddlsched.errors import DdlschedError

    if (family, name) in _IN_PROGRESS:
        return None
    try:
        return method_fingerprint(family, name).digest
    except DdlschedError:
        return None


def method_fingerprint(family: str, name: str) -> CodeFingerprint:
    """The fingerprint of the code of method ``family.name`` as registered now.

    Computed once per registered adapter and per state of the files it
    reaches: re-registering a method (an edited notebook cell) gives it a new
    fingerprint.
    """
    from ddlsched.registry import get_family, get_method

    method = get_method(family, name)
    cached = _METHOD_CACHE.get((family, name))
    if cached is not None and cached[0] is method.run and _file_states(cached[2]) == cached[1]:
        return cached[2]
    fam = get_family(family)
    hooks = [getattr(fam, h) for h in _FAMILY_HOOKS if callable(getattr(fam, h, None))]
    _IN_PROGRESS.add((family, name))
    try:
        fingerprint = _fingerprint(
            [method.run, method.params_type, *hooks],
            _PIPELINE_UNITS,
            getattr(method, "origin", None),
            extra=f"{family}.{name}:{method.kind}",
        )
    finally:
        _IN_PROGRESS.discard((family, name))
    _METHOD_CACHE[(family, name)] = (method.run, _file_states(fingerprint), fingerprint)
    return fingerprint


#: family -> (its generator, the fingerprint of its generator and loader).
_INSTANCE_CACHE: dict[str, tuple[Any, CodeFingerprint]] = {}


def _instance_fingerprint(family: str) -> CodeFingerprint:
    from ddlsched.registry import get_family

    fam = get_family(family)
    cached = _INSTANCE_CACHE.get(family)
    if cached is not None and cached[0] is fam.generate:
        return cached[1]
    fingerprint = _fingerprint([fam.generate, fam.from_dict, fam.load], (), None, extra=family)
    _INSTANCE_CACHE[family] = (fam.generate, fingerprint)
    return fingerprint


def instance_fingerprint(family: str) -> str:
    """The fingerprint of family ``family``'s instance generator and loader (a plug-in
    family's own modules included)."""
    return _instance_fingerprint(family).digest


def describe(fingerprint: CodeFingerprint) -> dict[str, Any]:
    """A JSON-ready description (what the manifest records per method)."""
    return {
        "digest": fingerprint.digest,
        "origin": fingerprint.origin(),
        "units": fingerprint.units,
        "modules": fingerprint.modules,
        "packages": fingerprint.packages,
        "called": fingerprint.called,
    }
