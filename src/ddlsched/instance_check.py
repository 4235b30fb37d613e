"""Every violation of an instance file, each with its JSON path.

Two sources, in this order (``ddlsched instance check FILE``):

1. The family's loader (``from_dict``, then the family's ``check_instance``
   when it has one, e.g. ``muri_sim`` reading its trace). A file it accepts
   is valid, and nothing else runs (a valid 100,000-job file is checked as
   fast as it loads).
2. When the loader refuses the file: the family's JSON Schema (generated
   from the field spec the loader reads, :mod:`ddlsched.fieldspec`) reports
   every structural violation (types, missing and unknown fields, ranges of
   single fields). When the structure is sound, the loader's own checks are
   the semantic ones (cross references, a job larger than the cluster): the
   loader stops at its first, so each item of a list whose items the spec
   marks ``independent`` (the jobs) is checked again on its own against the
   rest of the instance, which finds one violation per bad item.

A file naming another known family (a ``rar`` instance checked as
``asrpt``) gets one violation, ``this is a rar instance``, not a list of
unknown fields.

Each :class:`Violation` is ``$.jobs[3].gpus: must be a positive integer, got -2``;
loader messages are mapped to a path from the location they start with
(``jobs[3].id``, ``job 'j3'.gpus``, ``network.b_i``) or the field they name
first (``muri_sim: seed must be ...``), else ``$``.

Long lists stay fast: the schema validates only the items the field spec
refuses (:meth:`ddlsched.fieldspec.Node.accepts`, the schema's own answer),
so three bad jobs among 100,000 cost about a second, not the half minute a
general validator takes over the whole file.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ddlsched.errors import DdlschedError, InvalidInstanceError
from ddlsched.fieldspec import Arr, Obj, json_schema
from ddlsched.jsonio import other_family_message
from ddlsched.registry import Family, families, get_family

__all__ = [
    "CheckReport",
    "Violation",
    "check_data",
    "field_spec",
    "instance_schema",
    "schema_violations",
    "spec_violations",
]

#: Items of one list checked one at a time by the loader, at most (each check loads the
#: rest of the instance again); beyond, the loader's first violation is the only one.
MAX_ITEMS_ONE_BY_ONE = 2_000

_TYPE_WORDS = {
    "integer": "an integer",
    "number": "a finite number",
    "string": "a string",
    "boolean": "true or false",
    "null": "null",
    "array": "a list",
    "object": "a JSON object",
}
_NAME = re.compile(r"[A-Za-z_]\w*")
_LOCATION = re.compile(r"[A-Za-z_]\w*(?:\[(?:\d+|'[^']*')\]|\.[A-Za-z_]\w*)*")
_PARENTHESES = re.compile(r"\s*\([^()]*\)")


@dataclass(frozen=True)
class Violation:
    """One thing wrong with an instance file: where (a JSON path) and what."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


@dataclass(frozen=True)
class CheckReport:
    """What :func:`check_data` found: the family checked against, and every violation.

    ``first_error`` is the loader's own one-line message (``None`` when it
    accepted the file): what ``solve`` would say.
    """

    family: str
    violations: tuple[Violation, ...]
    first_error: str | None = None

    @property
    def ok(self) -> bool:
        return not self.violations


def field_spec(fam: Family) -> Obj | None:
    """The field spec of a family's instance class (``FIELD_SPEC``), or ``None``."""
    owner = getattr(fam.from_dict, "__self__", None)
    spec = getattr(owner, "FIELD_SPEC", None)
    return spec if isinstance(spec, Obj) else None


def instance_schema(family: str) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of ``family``'s instance file, from its field spec."""
    fam = get_family(family)
    spec = field_spec(fam)
    if spec is None:
        raise DdlschedError(f"family {fam.name!r} declares no field spec (no JSON Schema)")
    owner = fam.from_dict.__self__  # type: ignore[attr-defined]
    doc = (owner.__doc__ or "").strip().split("\n\n")[0]
    return json_schema(spec, fam.name, f"ddlsched {fam.name} instance", " ".join(doc.split()))


# --------------------------------------------------------------------------- schema


@functools.cache
def _validator_class() -> Any:
    """Draft 2020-12 whose integers are JSON integers only (``4.0`` is not, as for the
    loaders)."""
    from jsonschema import Draft202012Validator, validators

    checker = Draft202012Validator.TYPE_CHECKER.redefine(
        "integer", lambda _checker, value: isinstance(value, int) and not isinstance(value, bool)
    )
    return validators.extend(Draft202012Validator, type_checker=checker)


def _validator(schema: Mapping[str, Any]) -> Any:
    return _validator_class()(schema)


def json_path(parts: Iterable[Any]) -> str:
    """``$.jobs[3].gpus`` from ``["jobs", 3, "gpus"]``."""
    out = "$"
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _NAME.fullmatch(str(part)):
            out += f".{part}"
        else:
            out += f"[{str(part)!r}]"
    return out


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _number(limit: float) -> str:
    """A schema bound as written: ``2147483647``, ``1e+09``, ``0.5``."""
    if isinstance(limit, int):
        return str(limit)
    short = f"{limit:g}"
    return short if float(short) == limit else repr(limit)


def _describe(error: Any) -> list[Violation]:
    """The violations of one jsonschema error, in ddlsched's words."""
    kind, limit, value = error.validator, error.validator_value, error.instance
    path = json_path(error.absolute_path)
    if kind == "anyOf":  # the violations of the shape whose type the value has
        for option in range(len(limit)):
            inner = [e for e in error.context if e.relative_schema_path[0] == option]
            if not any(e.validator == "type" and not e.relative_path for e in inner):
                return [v for e in inner for v in _describe(e)]
        shapes = " or ".join(_TYPE_WORDS.get(str(o.get("type")), "?") for o in limit)
        return [Violation(path, f"expected {shapes}, got {_shown(value)}")]
    if kind == "required":
        missing = [name for name in limit if name not in value]
        return [
            Violation(json_path([*error.absolute_path, name]), "missing field") for name in missing
        ]
    if kind == "additionalProperties":
        known = set(error.schema.get("properties", {}))
        return [
            Violation(json_path([*error.absolute_path, name]), "unknown field")
            for name in sorted(set(value) - known)
        ]
    integer = error.schema.get("type") == "integer"
    words = {
        "type": lambda: f"expected {_TYPE_WORDS.get(str(limit), str(limit))}, got {_shown(value)}",
        "minimum": lambda: (
            f"must be a positive integer, got {_shown(value)}"
            if integer and limit == 1
            else f"must be >= {_number(limit)}, got {_shown(value)}"
        ),
        "exclusiveMinimum": lambda: f"must be > {_number(limit)}, got {_shown(value)}",
        "maximum": lambda: f"must be <= {_number(limit)}, got {_shown(value)}",
        "enum": lambda: f"must be one of {', '.join(map(str, limit))}, got {_shown(value)}",
        "const": lambda: f"expected {limit!r}, got {_shown(value)}",
        "minItems": lambda: f"expected at least {limit} item(s), got {len(value)}",
        "maxItems": lambda: f"expected at most {limit:,} items, got {len(value):,}",
        "minProperties": lambda: f"expected at least {limit} entr(ies), got none",
        "minLength": lambda: "must be a non-empty string",
        "uniqueItems": lambda: f"expected distinct values, got {_shown(value)}",
    }
    message = words[kind]() if kind in words else error.message
    return [Violation(path, message)]


def schema_violations(schema: Mapping[str, Any], data: Any) -> list[Violation]:
    """Every violation of ``schema`` by ``data``, in document order, with its JSON path."""
    out: list[Violation] = []
    for error in _validator(schema).iter_errors(data):
        out.extend(v for v in _describe(error) if v not in out)
    return sorted(out, key=lambda v: _path_key(v.path))


def spec_violations(spec: Obj, schema: Mapping[str, Any], data: Any) -> list[Violation]:
    """:func:`schema_violations` of a family's file, fast on long lists.

    The items of each top-level list that the spec accepts (:meth:`Node.accepts`, the
    schema's answer in a fraction of the time) are left out of the validation: a
    100,000-job file with three bad jobs is checked in seconds, not a minute.
    """
    if not isinstance(data, Mapping) or spec.accepts(data):
        return [] if isinstance(data, Mapping) else schema_violations(schema, data)
    reduced, kept = dict(data), {}
    for name, spec_field in spec.fields.items():
        items = data.get(name)
        if isinstance(spec_field.node, Arr) and isinstance(items, list):
            kept[name] = [
                i for i, item in enumerate(items) if not spec_field.node.items.accepts(item)
            ]
            reduced[name] = [items[i] for i in kept[name]]
    lists = {
        name: {k: v for k, v in schema["properties"][name].items() if k != "items"} for name in kept
    }
    items_only = {
        **schema,
        "properties": {
            **schema["properties"],
            **{name: {"items": schema["properties"][name]["items"]} for name in kept},
        },
    }
    found = []
    for violation in schema_violations(items_only, reduced):
        match = re.match(r"\$\.(\w+)\[(\d+)\]", violation.path)
        if match and match[1] in kept:
            index = kept[match[1]][int(match[2])]
            violation = Violation(
                f"$.{match[1]}[{index}]" + violation.path[match.end() :], violation.message
            )
        found.append(violation)
    for name, list_schema in lists.items():  # the lists' own keywords, on the whole list
        found.extend(
            Violation(f"$.{name}" + v.path[1:], v.message)
            for v in schema_violations(list_schema, data[name])
        )
    return sorted(found, key=lambda v: _path_key(v.path))


def _path_key(path: str) -> list[Any]:
    """A JSON path's parts, indices as numbers: ``$.jobs[10]`` after ``$.jobs[9]``."""
    return [(0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.findall(r"\w+", path)]


# --------------------------------------------------------------------------- the loader


def _locate(message: str, data: Any) -> Violation:
    """A loader message as a violation: its leading location (if any) as a JSON path."""
    head, sep, rest = message.partition(": ")
    if not sep or not isinstance(data, Mapping):
        return Violation("$", message)
    location = _PARENTHESES.sub("", head).strip()
    named = re.fullmatch(r"job '([^']*)'(.*)", location)
    if named and isinstance(data.get("jobs"), list):
        ids = [job.get("id") if isinstance(job, Mapping) else None for job in data["jobs"]]
        if named[1] in ids:
            location = f"jobs[{ids.index(named[1])}]{named[2]}"
    if _LOCATION.fullmatch(location) and _NAME.match(location)[0] in data:  # type: ignore[index]
        return Violation("$." + location, rest)
    # "muri_sim: seed must be ...", "trace file not found: ...": the field the words name
    for words, said in ((rest, rest), (head, message)):
        first = _NAME.match(words)
        if first and first[0] in data:
            return Violation(f"$.{first[0]}", said)
        for key, value in data.items():
            if first and isinstance(value, Mapping) and first[0] in value:
                return Violation(f"$.{key}.{first[0]}", said)
    for word in _NAME.findall(rest):  # a setting named further on ("... packing_num <= 4")
        for key, value in data.items():
            if isinstance(value, Mapping) and word in value:
                return Violation(f"$.{key}.{word}", rest)
    return Violation("$", message)


def _loader_error(fam: Family, data: Any, source: str = "") -> str | None:
    """The loader's one-line refusal of ``data`` (``None``: accepted), in the words
    ``load`` uses for a file named ``source`` (``ddlsched solve`` says the same)."""
    prefix = f"{source}: " if source else ""
    try:
        instance = fam.from_dict(data)
    except DdlschedError as exc:
        return f"{prefix}{exc}"
    except (TypeError, ValueError, KeyError, IndexError, AttributeError, ArithmeticError) as exc:
        return (
            f"{prefix}malformed instance ({type(exc).__name__}: {exc}; unexpected: "
            "please report it if the file is valid)"
        )
    if fam.check_instance is not None:  # what a method reads first (muri_sim: its trace)
        try:
            fam.check_instance(instance)
        except DdlschedError as exc:
            return str(exc)
    return None


def _one_by_one(fam: Family, spec: Obj, data: Mapping[str, Any]) -> list[Violation]:
    """The loader's violation of each item of the ``independent`` lists, item by item."""
    found: list[Violation] = []
    for name, spec_field in spec.fields.items():
        items = data.get(name)
        node = spec_field.node
        if not (isinstance(node, Arr) and node.independent and isinstance(items, list)):
            continue
        if not 1 < len(items) <= MAX_ITEMS_ONE_BY_ONE:
            continue
        alone = f"$.{name}[0]"
        for i, item in enumerate(items):
            error = _loader_error(fam, {**data, name: [item]})
            if error is None:
                continue
            where = _locate(error, {**data, name: [item]})
            if _inside(where.path, alone):
                found.append(Violation(f"$.{name}[{i}]" + where.path[len(alone) :], where.message))
    return found


def _without_bad_items(
    fam: Family, spec: Obj, data: Mapping[str, Any], found: list[Violation]
) -> list[Violation]:
    """The loader's violation of the instance without the items already found bad (e.g. a
    duplicate id after an oversized job), its path in the file's numbering."""
    kept_data, kept_index = dict(data), {}
    for name, spec_field in spec.fields.items():
        items = data.get(name)
        if not (isinstance(spec_field.node, Arr) and spec_field.node.independent):
            continue
        if not isinstance(items, list):
            continue
        bad = {i for i in range(len(items)) for v in found if _inside(v.path, f"$.{name}[{i}]")}
        if bad and len(bad) < len(items):
            kept_index[name] = [i for i in range(len(items)) if i not in bad]
            kept_data[name] = [items[i] for i in kept_index[name]]
    if not kept_index:
        return []
    error = _loader_error(fam, kept_data)
    if error is None:
        return []
    where = _locate(error, kept_data)
    for name, index in kept_index.items():
        match = re.match(rf"\$\.{name}\[(\d+)\]", where.path)
        if match:
            path = f"$.{name}[{index[int(match[1])]}]" + where.path[match.end() :]
            return [Violation(path, where.message)]
    return [where]


def _inside(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith((prefix + ".", prefix + "["))


def check_data(data: Any, family: str, source: str = "") -> CheckReport:
    """Every violation of ``data`` (a parsed instance file) as an instance of ``family``.

    ``source``: the file's name, which the loader's message (``first_error``) starts with.
    """
    fam = get_family(family)
    other = other_family_message(data, fam.name)
    if other is not None:
        first = f"{source}: {other}" if source else other
        return CheckReport(fam.name, (Violation("$.family", other),), first)
    error = _loader_error(fam, data, source)
    if error is None:
        return CheckReport(fam.name, ())
    spec = field_spec(fam)
    found = spec_violations(spec, instance_schema(fam.name), data) if spec is not None else []
    if not found:
        bare = error.removeprefix(f"{source}: ") if source else error
        found = [_locate(bare, data)]
        if spec is not None and isinstance(data, Mapping):
            found.extend(v for v in _one_by_one(fam, spec, data) if v not in found)
            found.extend(v for v in _without_bad_items(fam, spec, data, found) if v not in found)
    return CheckReport(fam.name, tuple(found), error)


def family_of(data: Any) -> str:
    """The family an instance file names in its ``family`` field (one line if it names none)."""
    named = data.get("family") if isinstance(data, Mapping) else None
    if not isinstance(named, str) or named not in {fam.name for fam in families()}:
        raise InvalidInstanceError(
            f"family: the file names no known family ({named!r}); give --family"
        )
    return named
