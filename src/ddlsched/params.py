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
``None`` and ``dict[str, float]``, and unions of them. Booleans are strict
(``1`` is not ``True``), integers refuse floats and booleans, floats accept
integers and must be finite.
"""

from __future__ import annotations

import dataclasses
import json
import math
import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from ddlsched.errors import DdlschedError

__all__ = [
    "NoParams",
    "ParamSpec",
    "build_params",
    "defaults",
    "param",
    "param_specs",
    "parse_assignments",
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
            }
        },
    )


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

    def describe(self) -> str:
        """``name: type [constraint] [| None] = default``."""
        constraint = f" {self.constraint}" if self.constraint else ""
        none = " | None" if self.optional else ""
        return f"{self.name}: {self.type_text}{constraint}{none} = {self.default!r}"


def _options(field: dataclasses.Field) -> dict[str, Any]:
    return dict(field.metadata.get(_META) or {})


def _alternatives(annotation: Any) -> tuple[Any, ...]:
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        return typing.get_args(annotation)
    return (annotation,)


def _type_name(annotation: Any) -> str:
    if annotation is type(None):
        return "none"
    if typing.get_origin(annotation) is dict:
        key, value = typing.get_args(annotation)
        return f"dict[{key.__name__}, {value.__name__}]"
    return annotation.__name__


@cache
def _fields(cls: type) -> tuple[tuple[dataclasses.Field, tuple[Any, ...]], ...]:
    if not (dataclasses.is_dataclass(cls) and isinstance(cls, type)):
        raise TypeError(f"{cls!r} is not a dataclass")
    hints = typing.get_type_hints(cls)
    out = []
    for field in dataclasses.fields(cls):
        kinds = _alternatives(hints[field.name])
        for kind in kinds:
            ok = kind in (bool, int, float, str, type(None)) or (
                typing.get_origin(kind) is dict and typing.get_args(kind) == (str, float)
            )
            if not ok:
                raise TypeError(f"{cls.__name__}.{field.name}: unsupported type {kind!r}")
        out.append((field, kinds))
    return tuple(out)


def _constraint_text(options: Mapping[str, Any]) -> str:
    parts = []
    if options.get("choices"):
        parts.append("in {" + ", ".join(options["choices"]) + "}")
    if options.get("minimum") is not None:
        parts.append(
            (">" if options.get("exclusive_minimum") else ">=") + f" {options['minimum']:g}"
        )
    if options.get("maximum") is not None:
        parts.append(f"<= {options['maximum']:g}")
    return ", ".join(parts)


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


def _convert(value: Any, kind: Any, options: Mapping[str, Any]) -> tuple[bool, Any]:
    """``(True, converted)`` when ``value`` is a valid ``kind``, else ``(False, None)``."""
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


def build_params(cls: type, values: Mapping[str, Any], where: str) -> Any:
    """Validate ``values`` against ``cls`` and return the parameter object.

    Unknown names raise ``DdlschedError("<where> has no parameter(s) ...")``;
    a value of the wrong type or out of range raises a ``DdlschedError``
    naming the parameter, its expected type and the value.
    """
    fields = _fields(cls)
    known = [field.name for field, _ in fields]
    unknown = sorted(set(values) - set(known))
    if unknown:
        raise DdlschedError(
            f"{where} has no parameter(s) {', '.join(unknown)} (known: {', '.join(known) or 'none'})"
        )
    kwargs = {}
    for field, kinds in fields:
        if field.name not in values:
            continue
        value = values[field.name]
        options = _options(field)
        for kind in kinds:
            ok, converted = _convert(value, kind, options)
            if ok:
                kwargs[field.name] = converted
                break
        else:
            spec = next(s for s in param_specs(cls) if s.name == field.name)
            expected = spec.describe().split(": ", 1)[1].rsplit(" = ", 1)[0]
            raise DdlschedError(
                f"{where}: parameter {field.name} must be {expected}, got {value!r}"
            )
    return cls(**kwargs)


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
