"""Families and methods, by name: the seam where every family plugs in.

A family is wired by one module, ``ddlsched/families/<name>.py`` (the only
module of the family that imports this one): it registers a
:class:`Family` (how to load, generate, evaluate and render its instances
and schedules) and its methods with :func:`register_family` and
:func:`register_method`. The CLI, ``compare`` and the benchmark platform
look everything up here, so adding a family touches none of them.

Discovery, on the first lookup: every module of the package
:mod:`ddlsched.families` (no hand-kept list), then every entry point of the
group ``ddlsched.families`` (how another installed package adds a family:
``[project.entry-points."ddlsched.families"] myfam = "mypkg.myfam"``), then
every entry point of the group ``ddlsched.methods`` (a package adding
methods to existing families). Each plug-in loads all or nothing and may
not shadow a method or name an unknown family (:mod:`ddlsched.plugins`:
the rules, and where a method comes from, ``Method.origin``); a broken one
is listed by :func:`broken_plugins` and breaks only the commands naming it.
A method registered outside any entry point (a notebook cell) is a
``session`` method: registering it again replaces it. Plug-ins import from
:mod:`ddlsched.api` only.

Every method runs through :func:`run_method`: parameters are validated
against the method's parameter class (:mod:`ddlsched.params`), a
:class:`~ddlsched.deadline.Deadline` covers the whole method, and the
adapter's :class:`~ddlsched.solvers.result.Outcome` becomes a
:class:`~ddlsched.solvers.result.SolveResult` in one place,
:func:`ddlsched.pipeline.finish` (re-evaluation, claim and bound checks).
``CONTRIBUTING.md`` walks through adding a family and a method.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import logging
import math
import pkgutil
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ddlsched import progress
from ddlsched.cli_types import MAX_SEED
from ddlsched.deadline import DEFAULT_TIME_LIMIT_S, Deadline
from ddlsched.errors import (
    DdlschedError,
    ModelTooLargeError,
    NoScheduleFound,
    TimeLimitReached,
    UnknownMethodError,
)
from ddlsched.memory import budget_bytes, format_bytes
from ddlsched.params import NoParams, ParamSpec, build_params, defaults, param_specs
from ddlsched.pipeline import finish
from ddlsched.plugins import (
    FAMILIES_GROUP,
    METHODS_GROUP,
    SESSION_GROUP,
    BrokenPlugin,
    PluginOrigin,
    Staging,
    active_staging,
    load_group,
    why_missing,
)
from ddlsched.rng import make_rng
from ddlsched.solvers.result import BACKENDS, Outcome, SolveResult, Status

__all__ = [
    "ENTRY_POINT_GROUP",
    "METHODS_ENTRY_POINT_GROUP",
    "METHOD_KINDS",
    "Family",
    "Method",
    "RunContext",
    "RunOptions",
    "Simulation",
    "WorstCaseSpace",
    "broken_plugins",
    "families",
    "get_family",
    "get_method",
    "methods",
    "register_family",
    "register_method",
    "run_method",
    "simulate",
    "unregister_family",
    "unregister_method",
]

if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger(__name__)

#: Entry-point group through which installed packages add families.
ENTRY_POINT_GROUP = FAMILIES_GROUP
#: Entry-point group through which installed packages add methods to existing families.
METHODS_ENTRY_POINT_GROUP = METHODS_GROUP
_FAMILY_PACKAGE = "ddlsched.families"
#: ``heuristic``: a schedule, no proof; ``exact``: a schedule and, when it
#: finishes, a proof of optimality; ``bound``: a valid bound (perhaps a schedule).
METHOD_KINDS = ("heuristic", "exact", "bound")

_FAMILIES: dict[str, Family] = {}
_METHODS: dict[tuple[str, str], Method] = {}
_BROKEN: list[BrokenPlugin] = []
_loaded = False


@dataclass(frozen=True)
class RunOptions:
    """What a user chooses for one run; ``params`` holds the method's own parameters.

    ``time_limit_s`` is wall time for the whole method (``math.inf``: none).
    """

    time_limit_s: float = DEFAULT_TIME_LIMIT_S
    seed: int = 0
    backend: str = "highs"
    params: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        limit = self.time_limit_s
        if isinstance(limit, bool) or not isinstance(limit, (int, float)) or not limit > 0:
            raise DdlschedError(f"time limit must be a positive number, got {limit!r}")
        if (
            isinstance(self.seed, bool)
            or not isinstance(self.seed, int)
            or not 0 <= self.seed <= MAX_SEED
        ):
            raise DdlschedError(f"seed must be an integer in 0..{MAX_SEED}, got {self.seed!r}")
        if self.backend not in BACKENDS:
            raise DdlschedError(
                f"unknown backend {self.backend!r} (choose from {', '.join(BACKENDS)})"
            )


@dataclass(frozen=True)
class RunContext:
    """What an adapter receives besides the instance and its parameters."""

    seed: int
    backend: str
    deadline: Deadline

    def rng(self) -> np.random.Generator:
        """A fresh ``numpy.random.Generator`` seeded with :attr:`seed` (same seed, same draws)."""
        return make_rng(self.seed)


Adapter = Callable[[Any, Any, RunContext], Outcome]


@dataclass(frozen=True)
class Method:
    """A named method of a family: ``run(instance, params, context) -> Outcome``.

    ``params_type`` is the method's frozen parameter dataclass
    (:mod:`ddlsched.params`); ``params`` its defaults by name. ``origin``
    says where it comes from (:class:`~ddlsched.plugins.PluginOrigin`;
    ``None``: built in).
    """

    family: str
    name: str
    kind: str
    run: Adapter
    summary: str
    params_type: type = NoParams
    hazardous: bool = False  # fails on purpose: hangs, crashes or raises (platform tests)
    interruptible: bool = False  # pure Python throughout: interrupted at the deadline
    origin: PluginOrigin | None = None

    @property
    def params(self) -> dict[str, Any]:
        """``{name: default}`` of the method's parameters."""
        return defaults(self.params_type)

    def param_specs(self) -> list[ParamSpec]:
        """The parameters with their types, ranges and help texts."""
        return param_specs(self.params_type)


@dataclass(frozen=True)
class WorstCaseSpace:
    """What a family offers the worst-case instance search (:mod:`ddlsched.bench.worstcase`).

    ``generate(seed, budget)`` draws a tiny instance within the budget;
    ``mutate(instance, rng, budget)`` makes one random move and keeps the
    result within the budget (and small enough for ``exact``);
    ``budget(instance)`` measures it (e.g. the prediction error);
    ``policies`` are the heuristics searched against ``exact``, the family's
    exact method (only proven optima count); ``theory(results)`` reads, from
    the policies' results on one instance (by name), the ratio a theorem
    guarantees there (``None``: none, or undefined).
    """

    generate: Callable[[int, float], Any]
    mutate: Callable[[Any, Any, float], Any]
    budget: Callable[[Any], float]
    budget_name: str
    policies: tuple[str, ...]
    exact: str = "exact"
    theory: Callable[[Mapping[str, SolveResult]], float | None] | None = None


@dataclass(frozen=True)
class Simulation:
    """How a trace-driven family opts into ``ddlsched simulate COMMAND`` (:mod:`ddlsched.cli_simulate`).

    The command is the same for every such family: ``--trace`` and ``--policy``
    (one of ``policies()``, methods of the family), the family's own flags
    (``add_options(parser)``), ``--seed``, ``--set KEY=VALUE`` (parsed into
    ``knobs``), ``--param`` (method parameters; only with ``param_help``),
    ``--time-limit`` (default: none) and ``--json``. ``build(args, knobs)``
    makes the instance from the parsed flags; the policy runs through
    :func:`simulate` (so :func:`run_method`); ``report(instance, result)`` is
    the JSON object ``--json`` prints, ``rows(instance, result)`` the table's
    rows otherwise (default: ``report``'s, objects left out), under
    ``title(args, instance)``. Nothing here may import a solver.
    """

    command: str
    help: str
    description: str
    trace_help: str
    policies: Callable[[], Sequence[str]]
    seed_help: str
    set_help: str
    build: Callable[[Any, dict[str, Any]], Any]
    report: Callable[[Any, SolveResult], Mapping[str, Any]]
    title: Callable[[Any, Any], str]
    add_options: Callable[[Any], None] | None = None
    rows: Callable[[Any, SolveResult], Mapping[str, Any]] | None = None
    param_help: str | None = None


@dataclass(frozen=True)
class Family:
    """A problem family: its instances, its evaluator and objective, its schedules.

    ``generate(preset, seed, **params)`` builds an instance from a named
    preset; ``evaluate(instance, schedule)`` is the family evaluator (raises
    :class:`~ddlsched.errors.InfeasibleScheduleError`), ``objective(evaluation)``
    reads the objective off its result; ``schedule_to_json(schedule,
    evaluation)`` and ``schedule_from_json(data)`` render and read schedules;
    ``smoke`` is the (preset, parameters) of a small instance on which every
    method runs in seconds (the conformance test's);
    ``evaluation_summary(evaluation)`` the headline metrics copied into every
    result's ``info`` (what ``ddlsched solve`` shows);
    ``simulation`` opens a trace-driven family to ``ddlsched simulate``
    (:class:`Simulation`); ``worst_case``
    opens the family to ``ddlsched bench worstcase``; ``preset_params`` maps
    each preset to its typed parameter class (:mod:`ddlsched.params`; what
    ``generate`` checks ``--set`` against and ``ddlsched presets`` lists);
    ``check_instance(instance)`` reads what a method would read before it
    runs and raises :class:`~ddlsched.errors.DdlschedError` if that fails (a
    lazy instance's trace file), so that ``ddlsched bench validate`` finds it
    before a run. ``size(instance)`` is the instance size every benchmark row
    reports (``instance_size``: jobs, machines or stage replicas; ``None``
    where it is unknown before a method runs); every family declares it (the
    conformance check requires it).
    """

    name: str
    sense: str  # "min" or "max"
    objective_name: str
    load: Callable[[Any], Any]
    from_dict: Callable[[Any], Any]
    generate: Callable[..., Any]
    presets: tuple[str, ...]
    evaluate: Callable[[Any, Any], Any]
    objective: Callable[[Any], float]
    schedule_to_json: Callable[[Any, Any], Any]
    schedule_from_json: Callable[[Any], Any]
    smoke: tuple[str, Mapping[str, Any]]
    summary: str = ""
    evaluation_summary: Callable[[Any], Mapping[str, Any]] | None = None
    simulation: Simulation | None = None
    internal: bool = False  # hidden from listings (test and timing families)
    worst_case: WorstCaseSpace | None = None
    preset_params: Mapping[str, type] = field(default_factory=dict)
    check_instance: Callable[[Any], None] | None = None
    size: Callable[[Any], int | None] | None = None

    def __post_init__(self) -> None:
        if self.sense not in ("min", "max"):
            raise ValueError(f"family {self.name}: sense must be 'min' or 'max'")

    def schedule_json(self, result: SolveResult) -> Any:
        """The JSON rendering of a result's schedule (``None`` without one)."""
        if result.schedule is None:
            return None
        return self.schedule_to_json(result.schedule, result.evaluation)


def _import_family(module: str) -> None:
    importlib.import_module(module)


def _load_plugins() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    # The wiring modules are found, not imported by name: dynamic discovery is the
    # point (an import of ddlsched.families here would also run against the layers).
    spec = importlib.util.find_spec(_FAMILY_PACKAGE)
    for info in pkgutil.iter_modules(spec.submodule_search_locations, _FAMILY_PACKAGE + "."):
        if not info.name.rsplit(".", 1)[-1].startswith("_"):
            _import_family(info.name)
    for group in (FAMILIES_GROUP, METHODS_GROUP):  # families first: methods may need them
        _BROKEN.extend(load_group(group, _import_family, _commit))


def _commit(stage: Staging) -> None:
    """Register what a plug-in staged (it imported cleanly and nothing clashed)."""
    _FAMILIES.update(stage.families)
    _METHODS.update(stage.methods)


def _described(method: Method) -> str:
    return "built in" if method.origin is None else f"from {method.origin.describe()}"


def register_family(family: Family) -> Family:
    """Add ``family`` to the registry (called by its wiring module).

    While a plug-in loads, the family is staged (:mod:`ddlsched.plugins`);
    a plug-in may not replace an existing family.
    """
    stage = active_staging()
    if stage is None:
        _FAMILIES[family.name] = family
    elif family.name in _FAMILIES or family.name in stage.families:
        stage.clashes.append(f"it registers family {family.name!r}, which already exists")
    else:
        stage.families[family.name] = family
    return family


def _session_origin(family: str, name: str, module: str) -> PluginOrigin:
    """Check a session registration of ``family.name`` (see :mod:`ddlsched.plugins`)."""
    _load_plugins()
    if family not in _FAMILIES:
        choices = ", ".join(f.name for f in families(include_internal=True))
        raise UnknownMethodError(
            f"cannot register method {family}.{name}: unknown family {family!r} "
            f"(choose from {choices})"
        )
    existing = _METHODS.get((family, name))
    if existing is not None and (existing.origin is None or existing.origin.group != SESSION_GROUP):
        raise DdlschedError(
            f"cannot register method {family}.{name}: a method of that name is "
            f"{_described(existing)}; a session method may not shadow it (choose another name)"
        )
    return PluginOrigin(SESSION_GROUP, name, module, None, None)


def _register(method: Method) -> None:
    """File ``method`` as built in, staged for a loading plug-in, or as a session method."""
    key = (method.family, method.name)
    stage = active_staging()
    if stage is not None:
        method = dataclasses.replace(method, origin=stage.origin)
        if method.family not in _FAMILIES and method.family not in stage.families:
            stage.clashes.append(
                f"it registers {method.family}.{method.name} for an unknown family "
                f"{method.family!r}"
            )
        elif key in stage.methods or key in _METHODS:
            where = "twice" if key in stage.methods else _described(_METHODS[key])
            stage.clashes.append(f"it registers {method.family}.{method.name}, which is {where}")
        stage.methods[key] = method
        return
    module = getattr(method.run, "__module__", None) or "__main__"
    if module == "ddlsched" or module.startswith("ddlsched."):  # built in (origin None)
        if key in _METHODS and _METHODS[key].origin is not None:
            raise DdlschedError(f"method {key[0]}.{key[1]} is {_described(_METHODS[key])}")
        _METHODS[key] = method
        return
    origin = _session_origin(method.family, method.name, module)
    if key in _METHODS:
        log.info("session method %s.%s replaced", method.family, method.name)
    _METHODS[key] = dataclasses.replace(method, origin=origin)


def register_method(
    family: str,
    name: str,
    kind: str,
    summary: str,
    params: type = NoParams,
    *,
    hazardous: bool = False,
    interruptible: bool = False,
) -> Callable[[Adapter], Adapter]:
    """Decorator registering ``run(instance, params, context) -> Outcome`` as a method.

    ``params`` is the method's parameter dataclass (:mod:`ddlsched.params`);
    ``hazardous`` marks a method that fails on purpose (hangs, kills its
    process, raises: the ``debug`` family's platform tests); the conformance
    checks do not run it. ``interruptible`` marks a method that is pure
    Python from end to end (no solver, nothing it must finish once started,
    e.g. networkx's matching): :func:`run_method` interrupts it at the
    deadline (:meth:`~ddlsched.deadline.Deadline.interrupting`), and it
    reports ``time_limit_no_solution``. Others check the deadline themselves.

    Where the method comes from decides the rules (:mod:`ddlsched.plugins`):
    a built-in module registers directly; a loading plug-in stages it; from
    anywhere else it is a session method, which may replace a session method
    of the same name but raises :class:`~ddlsched.errors.DdlschedError` when it
    would shadow a built-in or plug-in method, and
    :class:`~ddlsched.errors.UnknownMethodError` for an unknown family.
    """
    if kind not in METHOD_KINDS:
        raise ValueError(f"unknown method kind {kind!r}")
    param_specs(params)  # a bad parameter class fails at registration, not at run time

    def decorate(run: Adapter) -> Adapter:
        _register(Method(family, name, kind, run, summary, params, hazardous, interruptible))
        return run

    return decorate


def unregister_method(family: str, name: str) -> None:
    """Remove one method, whatever its origin (tests and sessions); unknown names are ignored."""
    _METHODS.pop((family, name), None)


def unregister_family(name: str) -> None:
    """Remove a family and its methods (tests that register throw-away families)."""
    _FAMILIES.pop(name, None)
    for key in [k for k in _METHODS if k[0] == name]:
        del _METHODS[key]


def broken_plugins() -> list[BrokenPlugin]:
    """The plug-ins that failed to load or were rejected, each with its one-line reason."""
    _load_plugins()
    return list(_BROKEN)


def families(include_internal: bool = False) -> list[Family]:
    """Registered families by name; internal ones (``debug``) only on request."""
    _load_plugins()
    return [
        _FAMILIES[name]
        for name in sorted(_FAMILIES)
        if include_internal or not _FAMILIES[name].internal
    ]


def get_family(name: str) -> Family:
    """The family ``name``; :class:`~ddlsched.errors.UnknownMethodError` names the known ones."""
    _load_plugins()
    try:
        return _FAMILIES[name]
    except KeyError:
        why = why_missing(_BROKEN, name, None)
        if why:
            raise UnknownMethodError(why) from None
        choices = ", ".join(f.name for f in families())
        raise UnknownMethodError(f"unknown family {name!r} (choose from {choices})") from None


def methods(family: str) -> list[Method]:
    """The methods of ``family``, by name."""
    get_family(family)
    return [m for (f, _), m in sorted(_METHODS.items()) if f == family]


def get_method(family: str, name: str) -> Method:
    """The method ``family.name``; a missing one is one line saying why (a broken plug-in)."""
    get_family(family)
    try:
        return _METHODS[(family, name)]
    except KeyError:
        why = why_missing(_BROKEN, family, name)
        if why:
            raise UnknownMethodError(why) from None
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
    deadline: Deadline | None = None,
) -> SolveResult:
    """Run a registered method on ``instance`` and return its evaluated result.

    Unknown parameter names raise :class:`~ddlsched.errors.DdlschedError`.
    The time limit covers everything from here on (parameter checks, the
    method, the re-evaluation); ``runtime_s`` is that wall time. A
    :class:`DdlschedError` inside (a bad parameter value, an infeasible
    schedule, a solver failure, a claim the evaluator refutes) becomes a
    result with status ``error`` and the message in ``info['error']``, so that
    a benchmark records it and goes on; with ``raise_errors`` (the CLI's
    ``solve``) it propagates instead. A method that runs out of time before
    it has a schedule or a bound reports ``time_limit_no_solution``, with
    where it stopped in ``info['stopped']``. A method that ends without a
    schedule (:class:`~ddlsched.errors.NoScheduleFound`, or an outcome with
    status ``no_solution``) reports ``no_solution`` with ``info['reason']``:
    a result, never raised, not even with ``raise_errors``.

    ``deadline`` (default: one of ``options.time_limit_s``, started here) is
    one the caller started earlier: ``ddlsched solve`` starts it before
    loading the instance, so that the limit covers the whole command. A
    deadline already passed gives ``time_limit_no_solution`` without running
    the method. ``runtime_s`` counts from here either way.
    """
    method = get_method(family, name)
    fam = get_family(family)
    options = options or RunOptions()
    where = f"method {family}.{name}"
    unknown = sorted(set(options.params) - set(method.params))
    if unknown:
        build_params(method.params_type, options.params, where)  # raises, naming them
    started = time.monotonic()
    deadline = deadline or Deadline(options.time_limit_s)
    progress.phase(f"running {family}.{name}")
    try:
        params = build_params(method.params_type, options.params, where)
        deadline.check(f"{family}.{name} before it started (loading the instance)")
        context = RunContext(seed=options.seed, backend=options.backend, deadline=deadline)
        if method.interruptible:  # long pure-Python work that cannot check the deadline itself
            with deadline.interrupting(f"{family}.{name}"):
                outcome = method.run(instance, params, context)
        else:
            outcome = method.run(instance, params, context)
        result = finish(
            fam, name, instance, outcome, seed=options.seed, runtime_s=time.monotonic() - started
        )
    except TimeLimitReached as exc:
        outcome = Outcome(None, Status.TIME_LIMIT_NO_SOLUTION, info={"stopped": str(exc)})
        result = finish(fam, name, instance, outcome, seed=options.seed, runtime_s=0.0)
    except NoScheduleFound as exc:
        outcome = Outcome(None, Status.NO_SOLUTION, info={**exc.details, "reason": str(exc)})
        result = finish(fam, name, instance, outcome, seed=options.seed, runtime_s=0.0)
    except MemoryError:
        result = None  # handled below, once the frames holding the arrays are gone
    except DdlschedError as exc:
        if raise_errors:
            raise
        outcome = Outcome(None, Status.ERROR, info={"error": str(exc)})
        result = finish(fam, name, instance, outcome, seed=options.seed, runtime_s=0.0)
    if result is None:  # an estimate below the budget was wrong: say so, on one line
        failure = ModelTooLargeError(
            f"{where} ran out of memory (the memory budget is {format_bytes(budget_bytes())}; "
            "the process's memory or address-space limit was reached first)"
        )
        if raise_errors:
            raise failure
        outcome = Outcome(None, Status.ERROR, info={"error": str(failure)})
        result = finish(fam, name, instance, outcome, seed=options.seed, runtime_s=0.0)
    result.runtime_s = time.monotonic() - started
    progress.phase(f"{family}.{name}: {result.status}")
    return result


def simulate(
    family: str,
    policy: str,
    instance: Any,
    *,
    params: Mapping[str, Any] | None = None,
    seed: int = 0,
    time_limit_s: float = math.inf,
    raise_errors: bool = False,
) -> SolveResult:
    """Run ``policy``, one of the family's :class:`Simulation` policies, on ``instance``.

    An unknown policy is one line naming the policies; the run goes through
    :func:`run_method` (``time_limit_s``: none by default).
    """
    fam = get_family(family)
    if fam.simulation is None:
        raise UnknownMethodError(f"family {family!r} has no simulator")
    policies = tuple(fam.simulation.policies())
    if policy not in policies:
        raise DdlschedError(f"unknown policy {policy!r} (choose from {', '.join(policies)})")
    options = RunOptions(time_limit_s=time_limit_s, seed=seed, params=params or {})
    return run_method(family, policy, instance, options, raise_errors=raise_errors)
