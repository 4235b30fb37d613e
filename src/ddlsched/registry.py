"""Families and methods, by name: the seam where every family plugs in.

A family module registers a :class:`Family` (how to load, generate and
render its instances) and its methods (heuristics, exact formulations,
bounds) with :func:`register_family` and :func:`register_method`. The CLI,
the compare command and the benchmark platform look everything up here,
so adding a family never touches them.

Registration happens when the modules listed in ``_PLUGIN_MODULES`` are
imported, lazily, on the first lookup.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ddlsched.errors import DdlschedError, UnknownMethodError
from ddlsched.solvers.result import BACKENDS, SolveResult, Status

__all__ = [
    "Family",
    "Method",
    "RunOptions",
    "families",
    "get_family",
    "get_method",
    "methods",
    "register_family",
    "register_method",
    "run_method",
]

# Modules whose import registers families and methods.
_PLUGIN_MODULES: tuple[str, ...] = (
    "ddlsched.families.rar",
    "ddlsched.families.debug",
    "ddlsched.families.muri",
    "ddlsched.families.muri_sim",
    "ddlsched.families.placement",
)

_FAMILIES: dict[str, Family] = {}
_METHODS: dict[tuple[str, str], Method] = {}
_loaded = False


@dataclass(frozen=True)
class RunOptions:
    """Options every method accepts; ``params`` holds method-specific ones."""

    time_limit_s: float = 60.0
    seed: int = 0
    backend: str = "highs"
    params: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not (isinstance(self.time_limit_s, (int, float)) and self.time_limit_s > 0):
            raise DdlschedError(f"time limit must be a positive number, got {self.time_limit_s!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise DdlschedError(f"seed must be a non-negative integer, got {self.seed!r}")
        if self.backend not in BACKENDS:
            raise DdlschedError(
                f"unknown backend {self.backend!r} (choose from {', '.join(BACKENDS)})"
            )


@dataclass(frozen=True)
class Method:
    """A named method of a family.

    ``kind`` is ``heuristic``, ``exact`` (returns a schedule and, when it
    finishes, a proof of optimality) or ``bound`` (returns a valid bound,
    perhaps a schedule too). ``run(instance, options)`` returns a
    :class:`SolveResult` whose objective the family evaluator computed.
    """

    family: str
    name: str
    kind: str
    run: Callable[[Any, RunOptions], SolveResult]
    summary: str
    params: Mapping[str, Any] = field(default_factory=dict)  # name -> default


@dataclass(frozen=True)
class Family:
    """A problem family: how to read, write, generate and render its instances.

    ``generate(preset, seed, **params)`` builds an instance from a named
    preset; ``schedule_json(result)`` renders a result's schedule for the
    CLI contract; ``cli_hook(subparsers)`` may add family-specific commands.
    """

    name: str
    sense: str  # "min" or "max"
    objective_name: str
    load: Callable[[Any], Any]
    from_dict: Callable[[Any], Any]
    generate: Callable[..., Any]
    presets: tuple[str, ...]
    schedule_json: Callable[[SolveResult], Any]
    summary: str = ""
    cli_hook: Callable[[Any], None] | None = None
    internal: bool = False  # hidden from listings (test and timing families)


def _load_plugins() -> None:
    global _loaded
    if not _loaded:
        _loaded = True
        for module in _PLUGIN_MODULES:
            importlib.import_module(module)


def register_family(family: Family) -> Family:
    _FAMILIES[family.name] = family
    return family


def register_method(
    family: str, name: str, kind: str, summary: str, params: Mapping[str, Any] | None = None
) -> Callable[[Callable[[Any, RunOptions], SolveResult]], Callable[[Any, RunOptions], SolveResult]]:
    """Decorator registering ``run(instance, options) -> SolveResult`` as a method."""
    if kind not in ("heuristic", "exact", "bound"):
        raise ValueError(f"unknown method kind {kind!r}")

    def decorate(run: Callable[[Any, RunOptions], SolveResult]):
        _METHODS[(family, name)] = Method(family, name, kind, run, summary, dict(params or {}))
        return run

    return decorate


def families(include_internal: bool = False) -> list[Family]:
    """Registered families by name; internal ones (``debug``) only on request."""
    _load_plugins()
    return [
        _FAMILIES[name]
        for name in sorted(_FAMILIES)
        if include_internal or not _FAMILIES[name].internal
    ]


def get_family(name: str) -> Family:
    _load_plugins()
    try:
        return _FAMILIES[name]
    except KeyError:
        raise UnknownMethodError(
            f"unknown family {name!r} (choose from {', '.join(sorted(_FAMILIES))})"
        ) from None


def methods(family: str) -> list[Method]:
    get_family(family)
    return [m for (f, _), m in sorted(_METHODS.items()) if f == family]


def get_method(family: str, name: str) -> Method:
    get_family(family)
    try:
        return _METHODS[(family, name)]
    except KeyError:
        names = ", ".join(m.name for m in methods(family))
        raise UnknownMethodError(
            f"unknown method {name!r} for family {family!r} (choose from {names})"
        ) from None


def run_method(
    family: str,
    name: str,
    instance: Any,
    options: RunOptions | None = None,
    *,
    raise_errors: bool = False,
):
    """Run a registered method; the wall time of the whole call is recorded.

    Unknown method parameters are refused. A :class:`DdlschedError` raised
    inside the method (a bad parameter value, an infeasible schedule, a
    solver failure) becomes a result with status ``error`` and the message in
    ``info['error']``, so that a benchmark records it and goes on; with
    ``raise_errors`` (the CLI's ``solve``) it propagates instead.
    """
    method = get_method(family, name)
    options = options or RunOptions()
    unknown = sorted(set(options.params) - set(method.params))
    if unknown:
        known = ", ".join(sorted(method.params)) or "none"
        raise DdlschedError(
            f"method {family}.{name} has no parameter(s) {', '.join(unknown)} (known: {known})"
        )
    started = time.perf_counter()
    try:
        result = method.run(instance, options)
    except DdlschedError as exc:
        if raise_errors:
            raise
        fam = get_family(family)
        result = SolveResult(
            family=family,
            method=name,
            status=Status.ERROR,
            sense=fam.sense,
            seed=options.seed,
            info={"error": str(exc)},
        )
    elapsed = time.perf_counter() - started
    if not result.runtime_s:
        result.runtime_s = elapsed
    result.info.setdefault("wall_time_s", elapsed)
    return result
