"""Typed method parameters: one frozen dataclass per method, validated in one place.

A method declares its parameters as a frozen dataclass whose fields are
made with :func:`param` (default, help text, range, choices)::

    @dataclass(frozen=True)
    class ExactParams:
        prune: bool = param(True, "drop dominated candidate groups")
        rounds: int | None = param(None, "matching rounds", minimum=0)

The registry turns a user's ``--param KEY=VALUE`` mapping into an instance
with :func:`build_params` (unknown names, wrong types, values out of range:
one-line errors naming the parameter), and ``ddlsched methods`` lists
:func:`param_specs`. Supported types: ``bool``, ``int``, ``float``, ``str``,
``None``, ``dict[str, float]``, ``dict[str, Any]`` (any JSON object, checked
by its consumer), lists written as ``tuple[X, ...]`` (``X`` an ``int``, a
``float`` or a fixed ``tuple[int, int]``; JSON lists become tuples, and a
range applies to every number inside), and unions of them. Booleans are
strict (``1``, ``"yes"`` or ``"maybe"`` are not ``True``), integers refuse
floats and booleans, floats accept integers and must be finite (``NaN`` and
``Infinity`` are refused). A string parameter that names a directory to write
(``param(None, ..., directory=True)``) must be one that can be created and
written: :func:`writable_directory` tries (creating and removing a probe file;
directories it had to create are removed again), so that ``solve`` and
``bench validate`` refuse ``/proc/x`` or a path under a file with one line.

Instance generators (``ddlsched/workloads``) use the same machinery for
their presets' parameters (``--set KEY=VALUE``) without writing a second
dataclass: :func:`signature_params` derives the frozen parameter class from
the generator's own signature (names, types and defaults are written once,
there) and a :func:`declare` per parameter adds what a signature cannot say
(help text, range, choices)::

    def small(seed=0, *, num_jobs: int | None = None, max_horizon: int = 60): ...

    SMALL_PARAMS = signature_params(small, "RarSmallParams", {
        "num_jobs": declare("jobs (default: 4-8, drawn)", minimum=1, maximum=10_000),
        "max_horizon": declare("horizon cap T, slots", minimum=1, maximum=100_000),
    })

A parameter the signature has and the declaration lacks (or the other way
round) is a ``TypeError`` at import time, so the two cannot drift apart.

A family's presets are a :class:`PresetTable`: preset name -> builder and
parameter class; its ``generate`` is the family's ``generate(preset, seed,
**params)`` (an unknown preset is one line listing the known ones, the
parameters are checked before the builder runs)::

    PRESET_TABLE = PresetTable("rar", {"small": small}, {"small": SMALL_PARAMS})
    generate = PRESET_TABLE.generate
"""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import json
import math
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from ddlsched.errors import DdlschedError, InvalidInstanceError, UnknownMethodError

__all__ = [
    "LazyParams",
    "NoParams",
    "ParamSpec",
    "PresetTable",
    "build_params",
    "checked_kwargs",
    "declare",
    "defaults",
    "param",
    "param_specs",
    "parse_assignments",
    "signature_params",
    "writable_directory",
]

_META = "ddlsched_param"


def param(
    default: Any,
    help: str = "",
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    exclusive_minimum: bool = False,
    choices: Sequence[str] | None = None,
    directory: bool = False,
) -> Any:
    """A dataclass field of a method's parameter class (see the module docstring)."""
    return dataclasses.field(
        default=default,
        metadata={
            _META: {
                "help": help,
                "minimum": minimum,
                "maximum": maximum,
                "exclusive_minimum": exclusive_minimum,
                "choices": tuple(choices) if choices is not None else None,
                "directory": directory,
            }
        },
    )


def writable_directory(path: str) -> str | None:
    """``None`` if ``path`` is (or can be created as) a directory this process can write
    into, else the reason. Tries: creates the missing directories and a probe file, then
    removes both (nothing is left behind); the only test that holds for root, for
    ``/proc`` and for read-only mounts."""
    import os
    import tempfile
    from pathlib import Path

    if not path or "\x00" in path:
        return "an empty name or a NUL byte"
    target = Path(path)
    missing = []
    probe = target
    while not probe.exists() and probe != probe.parent:
        missing.append(probe)
        probe = probe.parent
    try:
        target.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=target):
            pass
    except OSError as exc:
        return exc.strerror or type(exc).__name__
    finally:
        for made in missing:  # deepest first
            with contextlib.suppress(OSError):
                os.rmdir(made)
    return None


def parse_name_list(text: str, choices: tuple, what: str, named: Mapping) -> tuple[str, ...]:
    """A comma-separated subset of ``choices`` (order kept) or a ``named`` set by its name;
    else a one-line :class:`DdlschedError` naming ``what`` (improve's ``starts``)."""
    if text.strip() in named:
        return named[text.strip()]
    names = tuple(dict.fromkeys(part.strip() for part in text.split(",") if part.strip()))
    unknown = [name for name in names if name not in choices]
    if unknown or not names:
        sets = "".join(f"{n!r}, " for n in named)
        raise DdlschedError(
            f"{what}: unknown {what.rstrip('s')} {', '.join(unknown) or repr(text)}; "
            f"expected {sets.rstrip(', ') + ' or ' if sets else ''}names among {', '.join(choices)}"
        )
    return names


@dataclass(frozen=True)
class NoParams:
    """The parameter class of a method without parameters."""


@dataclass(frozen=True)
class ParamSpec:
    """One parameter as listed by ``ddlsched methods``."""

    name: str
    type_text: str  # the accepted types, None excepted
    default: Any
    constraint: str
    help: str
    optional: bool = False  # None is accepted too

    @property
    def required(self) -> bool:
        """The parameter has no default: it must be given."""
        return self.default is dataclasses.MISSING

    def expected(self) -> str:
        """``type [constraint] [| None]``: what a value must be."""
        constraint = f" {self.constraint}" if self.constraint else ""
        none = " | None" if self.optional else ""
        return f"{self.type_text}{constraint}{none}"

    def describe(self) -> str:
        """``name: type [constraint] [| None] = default`` (``(required)`` without a default)."""
        if self.required:
            default = "(required)"
        elif isinstance(self.default, tuple):  # as written with --set / --param: JSON
            default = f"= {json.dumps(self.default)}"
        else:
            default = f"= {self.default!r}"
        return f"{self.name}: {self.expected()} {default}"


def _options(field: dataclasses.Field) -> dict[str, Any]:
    return dict(field.metadata.get(_META) or {})


def _alternatives(annotation: Any) -> tuple[Any, ...]:
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        return typing.get_args(annotation)
    return (annotation,)


def _type_name(annotation: Any) -> str:
    if annotation is type(None):
        return "none"
    origin = typing.get_origin(annotation)
    if origin is dict:
        key, value = typing.get_args(annotation)
        return "object" if value is Any else f"dict[{key.__name__}, {value.__name__}]"
    if origin is tuple:
        args = typing.get_args(annotation)
        if len(args) == 2 and args[1] is Ellipsis:
            return f"list[{_type_name(args[0])}]"
        return "[" + ", ".join(_type_name(a) for a in args) + "]"
    return annotation.__name__


def _supported(kind: Any, nested: bool = False) -> bool:
    """A type :func:`build_params` can check (module docstring)."""
    if kind in (int, float):
        return True
    if nested:  # inside a list: numbers, or fixed tuples of numbers
        args = typing.get_args(kind)
        return (
            typing.get_origin(kind) is tuple
            and Ellipsis not in args
            and all(a in (int, float) for a in args)
        )
    if kind in (bool, str, type(None)):
        return True
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if origin is dict:
        return args in ((str, float), (str, Any))
    if origin is tuple:
        return len(args) == 2 and args[1] is Ellipsis and _supported(args[0], nested=True)
    return False


@cache
def _fields(cls: type) -> tuple[tuple[dataclasses.Field, tuple[Any, ...]], ...]:
    if not (dataclasses.is_dataclass(cls) and isinstance(cls, type)):
        raise TypeError(f"{cls!r} is not a dataclass")
    hints = typing.get_type_hints(cls)
    out = []
    for field in dataclasses.fields(cls):
        kinds = _alternatives(hints[field.name])
        for kind in kinds:
            if not _supported(kind):
                raise TypeError(f"{cls.__name__}.{field.name}: unsupported type {kind!r}")
        out.append((field, kinds))
    return tuple(out)


def _constraint_text(options: Mapping[str, Any]) -> str:
    parts = []
    if options.get("choices"):
        parts.append("in {" + ", ".join(options["choices"]) + "}")
    if options.get("minimum") is not None:
        parts.append(
            (">" if options.get("exclusive_minimum") else ">=") + f" {_number(options['minimum'])}"
        )
    if options.get("maximum") is not None:
        parts.append(f"<= {_number(options['maximum'])}")
    if options.get("directory"):
        parts.append("a writable directory")
    return ", ".join(parts)


def _number(value: float) -> str:
    """``10000000`` rather than ``1e+07``; ``0.5`` as is."""
    return str(int(value)) if float(value).is_integer() and abs(value) < 1e15 else f"{value:g}"


def param_specs(cls: type) -> list[ParamSpec]:
    """The parameters of ``cls`` with their types, defaults and constraints."""
    specs = []
    for field, kinds in _fields(cls):
        options = _options(field)
        specs.append(
            ParamSpec(
                name=field.name,
                type_text=" | ".join(_type_name(k) for k in kinds if k is not type(None)),
                default=field.default,
                constraint=_constraint_text(options),
                help=options.get("help", ""),
                optional=type(None) in kinds,
            )
        )
    return specs


def defaults(cls: type) -> dict[str, Any]:
    """``{name: default}`` of a parameter class."""
    return {field.name: field.default for field, _ in _fields(cls)}


def _in_range(number: float, options: Mapping[str, Any]) -> bool:
    low, high = options.get("minimum"), options.get("maximum")
    if low is not None and (number <= low if options.get("exclusive_minimum") else number < low):
        return False
    return high is None or number <= high


def _finite_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _convert_items(value: Any, kind: Any, options: Mapping[str, Any]) -> tuple[bool, Any]:
    """A JSON list (or a tuple) as the tuple type ``kind``, every item converted."""
    if not isinstance(value, (list, tuple)):
        return False, None
    args = typing.get_args(kind)
    items = args[:1] * len(value) if args[1:] == (Ellipsis,) else args
    if len(items) != len(value):
        return False, None
    out = []
    for item, item_kind in zip(value, items, strict=True):
        ok, converted = _convert(item, item_kind, options)
        if not ok:
            return False, None
        out.append(converted)
    return True, tuple(out)


def _convert(value: Any, kind: Any, options: Mapping[str, Any]) -> tuple[bool, Any]:
    """``(True, converted)`` when ``value`` is a valid ``kind``, else ``(False, None)``."""
    if typing.get_origin(kind) is tuple:
        return _convert_items(value, kind, options)
    if typing.get_origin(kind) is dict and typing.get_args(kind)[1] is Any:
        ok = isinstance(value, Mapping) and all(isinstance(k, str) for k in value)
        return ok, dict(value) if ok else None
    if kind is type(None):
        return value is None, None
    if kind is bool:
        return isinstance(value, bool), value
    if kind is int:
        ok = isinstance(value, int) and not isinstance(value, bool) and _in_range(value, options)
        return ok, value
    if kind is float:
        ok = _finite_number(value) and _in_range(float(value), options)
        return ok, float(value) if ok else None
    if kind is str:
        choices = options.get("choices")
        return isinstance(value, str) and (not choices or value in choices), value
    # dict[str, float]: every value a finite number in range
    if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
        return False, None
    if not all(_finite_number(v) and _in_range(float(v), options) for v in value.values()):
        return False, None
    return True, {k: float(v) for k, v in value.items()}


def _field_value(
    cls: type,
    field: dataclasses.Field,
    kinds: tuple[Any, ...],
    value: Any,
    where: str,
    error: type[DdlschedError],
) -> Any:
    """``value`` converted to the first of ``kinds`` it fits, or ``error`` naming the field."""
    options = _options(field)
    for kind in kinds:
        ok, converted = _convert(value, kind, options)
        if ok:
            break
    else:
        spec = next(s for s in param_specs(cls) if s.name == field.name)
        raise error(
            f"{where}: parameter {field.name} must be {spec.expected()}, got {_shown(value)}"
        )
    if options.get("directory") and isinstance(converted, str):
        reason = writable_directory(converted)
        if reason is not None:
            raise error(
                f"{where}: parameter {field.name} must be a writable directory, "
                f"got {_shown(converted)} ({reason})"
            )
    return converted


def build_params(
    cls: type,
    values: Mapping[str, Any],
    where: str,
    error: type[DdlschedError] = DdlschedError,
) -> Any:
    """Validate ``values`` against ``cls`` and return the parameter object.

    Unknown names raise ``error("<where> has no parameter(s) ...")``; a
    value of the wrong type or out of range raises ``error`` naming the
    parameter, its expected type and the value; so does a missing required
    parameter (a field without default).
    """
    fields = _fields(cls)
    known = [field.name for field, _ in fields]
    unknown = sorted(set(values) - set(known))
    if unknown:
        raise error(
            f"{where} has no parameter(s) {', '.join(unknown)} (known: {', '.join(known) or 'none'})"
        )
    kwargs = {}
    for field, kinds in fields:
        if field.name not in values:
            if field.default is dataclasses.MISSING:
                raise error(f"{where}: parameter {field.name} is required")
            continue
        kwargs[field.name] = _field_value(cls, field, kinds, values[field.name], where, error)
    return cls(**kwargs)


def _shown(value: Any, limit: int = 80) -> str:
    """``repr(value)``, shortened: an error message stays one readable line."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def checked_kwargs(
    cls: type,
    values: Mapping[str, Any],
    where: str,
    error: type[DdlschedError] = DdlschedError,
) -> dict[str, Any]:
    """:func:`build_params`, then the *given* names with their converted values.

    For calling a function whose signature ``cls`` was derived from
    (:func:`signature_params`): the function's own defaults apply to the rest.
    """
    checked = build_params(cls, values, where, error)
    return {name: getattr(checked, name) for name in values}


@dataclass(frozen=True)
class Declared:
    """What a generator's signature cannot say about a parameter (:func:`declare`)."""

    help: str
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: bool = False
    choices: tuple[str, ...] | None = None


def declare(
    help: str,
    *,
    minimum: float | None = None,
    maximum: float | None = None,
    exclusive_minimum: bool = False,
    choices: Sequence[str] | None = None,
) -> Declared:
    """Help text and range of one parameter of :func:`signature_params` (as :func:`param`)."""
    return Declared(
        help, minimum, maximum, exclusive_minimum, tuple(choices) if choices is not None else None
    )


class LazyParams(Mapping[str, type]):
    """``{preset: parameter class}`` whose classes are made on first use.

    For generators in modules slow to import (pandas): listing the presets
    or generating another preset does not import them.
    """

    def __init__(self, makers: Mapping[str, Callable[[], type]]) -> None:
        self._makers = dict(makers)
        self._made: dict[str, type] = {}

    def __getitem__(self, key: str) -> type:
        if key not in self._made:
            self._made[key] = self._makers[key]()
        return self._made[key]

    def __iter__(self) -> typing.Iterator[str]:
        return iter(self._makers)

    def __len__(self) -> int:
        return len(self._makers)


@dataclass(frozen=True, eq=False)
class PresetTable:
    """A family's presets: ``builders[preset](seed, **params)`` and ``params[preset]``.

    ``params`` maps each preset to its parameter class (:func:`signature_params`;
    a :class:`LazyParams` too); ``hint`` ends the unknown-preset message (what
    else the family reads); a builder's exceptions of a type in
    ``builder_errors`` become one-line :class:`~ddlsched.errors.InvalidInstanceError`
    ``preset 'P': ...`` (generators whose own checks raise ``ValueError``).
    """

    family: str
    builders: Mapping[str, Callable[..., Any]]
    params: Mapping[str, type]
    hint: str = ""
    builder_errors: tuple[type[Exception], ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        """The preset names, in the table's order."""
        return tuple(self.builders)

    def builder(self, preset: str) -> Callable[..., Any]:
        """The builder of ``preset``; an unknown one is one line listing the known ones."""
        try:
            return self.builders[preset]
        except KeyError:
            raise UnknownMethodError(
                f"unknown {self.family} preset {preset!r} "
                f"(choose from {', '.join(self.builders)}{self.hint})"
            ) from None

    def generate(self, preset: str, seed: int = 0, /, **params: Any) -> Any:
        """The instance of ``preset`` from ``seed``, ``params`` checked (``--set``)."""
        return self.build(preset, seed, params)

    def build(self, preset: str, seed: int, params: Mapping[str, Any], **injected: Any) -> Any:
        """:meth:`generate` with ``injected`` keywords passed to the builder unchecked
        (values the family supplies, not the user: a price function, a heuristic)."""
        build = self.builder(preset)
        where = f"{self.family} preset {preset!r}"
        kwargs = checked_kwargs(self.params[preset], params, where, InvalidInstanceError)
        try:
            return build(seed, **kwargs, **injected)
        except self.builder_errors as exc:
            raise InvalidInstanceError(f"preset {preset!r}: {exc}") from None


def signature_params(
    fn: Callable[..., Any],
    name: str,
    declared: Mapping[str, Declared],
    *,
    defaults: Mapping[str, Any] | None = None,
    exclude: Sequence[str] = (),
) -> type:
    """A frozen parameter class from ``fn``'s signature (module docstring).

    Every parameter of ``fn`` but the first (the seed), ``*args``/``**kwargs``
    and ``exclude`` (values injected by the caller, not the user's) becomes a
    field: its type from the annotation, its default from the signature
    (``defaults`` overrides them: presets that share one generator), its
    help and range from ``declared[name]``. A parameter without a default is
    required.
    """
    hints = typing.get_type_hints(fn)
    defaults = dict(defaults or {})
    params = list(inspect.signature(fn).parameters.values())[1:]
    names = [
        p.name
        for p in params
        if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and p.name not in exclude
    ]
    if set(names) != set(declared) or not set(defaults) <= set(names):
        raise TypeError(
            f"{name}: the parameters of {fn.__qualname__} ({', '.join(names)}) and the declared "
            f"ones ({', '.join(declared)}) differ"
        )
    fields = []
    for p in params:
        if p.name not in names:
            continue
        spec = declared[p.name]
        default = defaults.get(p.name, p.default)
        metadata = {_META: {k: v for k, v in dataclasses.asdict(spec).items()}}
        if default is inspect.Parameter.empty:
            fields.append((p.name, hints[p.name], dataclasses.field(metadata=metadata)))
        else:
            fields.append(
                (p.name, hints[p.name], dataclasses.field(default=default, metadata=metadata))
            )
    fields.sort(key=lambda f: f[2].default is not dataclasses.MISSING)  # required first
    cls = dataclasses.make_dataclass(name, fields, frozen=True)
    cls.__module__ = fn.__module__
    param_specs(cls)  # an unsupported type fails here, at import time
    return cls


def parse_assignments(pairs: Sequence[str] | None, what: str) -> dict[str, Any]:
    """``["k=v", ...]`` from the command line as a dict; values are JSON, else strings.

    ``-`` in keys becomes ``_`` (``--param cross-check=true``). A pair without
    ``=`` is a one-line error naming the option ``what``.
    """
    out: dict[str, Any] = {}
    for pair in pairs or ():
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise DdlschedError(f"{what}: expected KEY=VALUE, got {pair!r}")
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError:
            parsed = value
        out[key.replace("-", "_")] = parsed
    return out
