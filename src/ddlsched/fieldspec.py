"""Declarative field specs of the instance formats: one source for the loaders and the schemas.

Each family's instance class declares its JSON format once, as a tree of
the nodes below (``FIELD_SPEC``, a :class:`Obj`): the fields of every
object, which are required, their types and the numeric ranges the loader
checks, with a title and a description per field. Two readers use it:

* the loader (``from_dict``) takes the field names of each object from it
  (``check_fields(data, where, *SPEC.field_names)``), so a field added to
  the format is added in one place;
* :func:`json_schema` turns it into a JSON Schema (draft 2020-12), printed
  by ``ddlsched instance schema FAMILY`` and used by ``ddlsched instance
  check`` to report every structural violation with its JSON path;
  :meth:`Node.accepts` gives the schema's yes/no answer quickly (the tests
  hold it equal to the schema's on random mutations), so that only the
  items of a long list it refuses are validated for messages.

The ranges of a node are the loader's own constants (``MAX_GPUS``,
``RATE_RANGE``, ...), imported where the spec is declared. A spec states
what each field is on its own; checks across fields (a job naming a
server that does not exist, a job larger than the cluster) stay in the
loader, which ``instance check`` runs after the schema.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "SCHEMA_DIALECT",
    "AnyOf",
    "Arr",
    "Bool",
    "Const",
    "Field",
    "FreeObj",
    "Int",
    "Map",
    "Node",
    "Null",
    "Num",
    "Obj",
    "Scalars",
    "Str",
    "dataclass_spec",
    "json_schema",
]

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


class Node:
    """A node of a field spec: what one JSON value must be."""

    def schema(self) -> dict[str, Any]:  # pragma: no cover - every node has its own
        """The JSON Schema of this node (draft 2020-12)."""
        raise NotImplementedError

    def accepts(self, value: Any) -> bool:  # pragma: no cover - every node has its own
        """Whether the schema accepts ``value`` (the same answer, 20x faster than a
        general validator: ``instance check`` skips the list items it accepts)."""
        raise NotImplementedError


def _within(value: Any, minimum: Any, maximum: Any, exclusive: bool = False) -> bool:
    if minimum is not None and (value <= minimum if exclusive else value < minimum):
        return False
    return maximum is None or value <= maximum


@dataclass(frozen=True)
class Int(Node):
    """An integer (``true``/``false`` and integral floats such as ``4.0`` are refused)."""

    minimum: int | None = None
    maximum: int | None = None

    def schema(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "integer"}
        if self.minimum is not None:
            out["minimum"] = self.minimum
        if self.maximum is not None:
            out["maximum"] = self.maximum
        return out

    def accepts(self, value: Any) -> bool:
        return type(value) is int and _within(value, self.minimum, self.maximum)


@dataclass(frozen=True)
class Num(Node):
    """A finite number; ``exclusive`` makes the minimum strict (``> minimum``)."""

    minimum: float | None = None
    maximum: float | None = None
    exclusive: bool = False

    def schema(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "number"}
        if self.minimum is not None:
            out["exclusiveMinimum" if self.exclusive else "minimum"] = self.minimum
        if self.maximum is not None:
            out["maximum"] = self.maximum
        return out

    def accepts(self, value: Any) -> bool:
        return type(value) in (int, float) and _within(
            value, self.minimum, self.maximum, self.exclusive
        )


@dataclass(frozen=True)
class Str(Node):
    """A string; ``non_empty`` refuses ``""``; ``choices`` lists the allowed values."""

    non_empty: bool = False
    choices: tuple[str, ...] = ()

    def schema(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "string"}
        if self.choices:
            out["enum"] = list(self.choices)
        elif self.non_empty:
            out["minLength"] = 1
        return out

    def accepts(self, value: Any) -> bool:
        if type(value) is not str:
            return False
        return value in self.choices if self.choices else bool(value) or not self.non_empty


@dataclass(frozen=True)
class Bool(Node):
    """``true`` or ``false``."""

    def schema(self) -> dict[str, Any]:
        return {"type": "boolean"}

    def accepts(self, value: Any) -> bool:
        return type(value) is bool


@dataclass(frozen=True)
class Null(Node):
    """``null``."""

    def schema(self) -> dict[str, Any]:
        return {"type": "null"}

    def accepts(self, value: Any) -> bool:
        return value is None


@dataclass(frozen=True)
class Const(Node):
    """Exactly one value (an instance file's ``family`` and ``schema_version``)."""

    value: Any

    def schema(self) -> dict[str, Any]:
        return {"const": self.value}

    def accepts(self, value: Any) -> bool:  # JSON equality: 1 == 1.0, but true != 1
        return isinstance(value, bool) == isinstance(self.value, bool) and value == self.value


@dataclass(frozen=True)
class Arr(Node):
    """A list of ``items``; ``unique`` refuses repeated values.

    ``independent``: each item's checks across fields need only the item and
    the rest of the instance, not the other items (a job against the cluster),
    so ``instance check`` may run the loader on each item alone to report one
    violation per bad item; the schema is the same either way.
    """

    items: Node
    min_items: int = 0
    max_items: int | None = None
    unique: bool = False
    independent: bool = False

    def schema(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "array", "items": self.items.schema()}
        if self.min_items:
            out["minItems"] = self.min_items
        if self.max_items is not None:
            out["maxItems"] = self.max_items
        if self.unique:
            out["uniqueItems"] = True
        return out

    def accepts(self, value: Any) -> bool:
        if type(value) is not list or len(value) < self.min_items:
            return False
        if self.max_items is not None and len(value) > self.max_items:
            return False
        if not all(map(self.items.accepts, value)):
            return False
        return not self.unique or len({json.dumps(v, sort_keys=True) for v in value}) == len(value)


@dataclass(frozen=True)
class Map(Node):
    """An object of free keys (non-empty names) whose values are all ``values``."""

    values: Node
    min_items: int = 0

    def schema(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "type": "object",
            "propertyNames": {"minLength": 1},
            "additionalProperties": self.values.schema(),
        }
        if self.min_items:
            out["minProperties"] = self.min_items
        return out

    def accepts(self, value: Any) -> bool:
        return (
            type(value) is dict
            and len(value) >= self.min_items
            and all(value)
            and all(map(self.values.accepts, value.values()))
        )


@dataclass(frozen=True)
class Scalars(Node):
    """An object of free keys whose values are strings, numbers, booleans or ``null``."""

    def schema(self) -> dict[str, Any]:
        return {
            "type": "object",
            "additionalProperties": {"type": ["string", "number", "boolean", "null"]},
        }

    def accepts(self, value: Any) -> bool:
        scalar = (str, int, float, bool, type(None))
        return type(value) is dict and all(type(v) in scalar for v in value.values())


@dataclass(frozen=True)
class FreeObj(Node):
    """Any JSON object (provenance, features: recorded, entering no formula)."""

    def schema(self) -> dict[str, Any]:
        return {"type": "object"}

    def accepts(self, value: Any) -> bool:
        return type(value) is dict


@dataclass(frozen=True)
class AnyOf(Node):
    """One of several shapes (e.g. ``machines``: a list, or a count and one capacity)."""

    options: tuple[Node, ...]

    def schema(self) -> dict[str, Any]:
        return {"anyOf": [option.schema() for option in self.options]}

    def accepts(self, value: Any) -> bool:
        return any(option.accepts(value) for option in self.options)


@dataclass(frozen=True)
class Field:
    """One field of an object: its node, whether it is required, and what it means."""

    node: Node
    title: str
    description: str
    required: bool = True
    default: Any = None

    def schema(self) -> dict[str, Any]:
        """The field's node schema with its title, description and default."""
        out = {"title": self.title, "description": self.description, **self.node.schema()}
        if not self.required and self.default is not None:
            out["default"] = self.default
        return out


@dataclass(frozen=True)
class Obj(Node):
    """An object with exactly the declared fields (no others)."""

    fields: Mapping[str, Field] = field(default_factory=dict)

    @property
    def required(self) -> tuple[str, ...]:
        """The names of the required fields, in declaration order."""
        return tuple(name for name, f in self.fields.items() if f.required)

    @property
    def optional(self) -> tuple[str, ...]:
        """The names of the optional fields, in declaration order."""
        return tuple(name for name, f in self.fields.items() if not f.required)

    @property
    def field_names(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """``(required, optional)``: the arguments ``check_fields`` takes after ``where``."""
        return self.required, self.optional

    def schema(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "type": "object",
            "properties": {name: f.schema() for name, f in self.fields.items()},
        }
        if self.required:
            out["required"] = list(self.required)
        out["additionalProperties"] = False
        return out

    def accepts(self, value: Any) -> bool:
        if type(value) is not dict or not value.keys() <= self.fields.keys():
            return False
        for name, spec_field in self.fields.items():
            if name in value:
                if not spec_field.node.accepts(value[name]):
                    return False
            elif spec_field.required:
                return False
        return True


def json_schema(spec: Obj, family: str, title: str, description: str) -> dict[str, Any]:
    """The JSON Schema document (draft 2020-12, no ``$id``) of a family's instance file."""
    return {
        "$schema": SCHEMA_DIALECT,
        "title": title,
        "description": description,
        "x-ddlsched-family": family,
        **spec.schema(),
    }


#: The node of each annotation a settings dataclass may use (:func:`dataclass_spec`).
_ANNOTATION_NODES: dict[str, Node] = {
    "int": Int(),
    "float": Num(),
    "bool": Bool(),
    "str": Str(),
    "float | None": AnyOf((Num(), Null())),
    "int | None": AnyOf((Int(), Null())),
    "tuple[float, float]": Arr(Num(), min_items=2, max_items=2),
    "tuple[float, float, float]": Arr(Num(), min_items=3, max_items=3),
}


def dataclass_spec(cls: type, exclude: tuple[str, ...] = ()) -> Obj:
    """An object of optional fields, one per field of the dataclass ``cls`` (its overrides).

    Each field's node comes from its annotation (:data:`_ANNOTATION_NODES`), its
    description from the class docstring's ````name``: text`` entry, its default from
    the dataclass; ranges across values stay the class's own checks.
    """
    doc = " ".join((cls.__doc__ or "").split())
    fields = {}
    for item in dataclasses.fields(cls):
        if item.name in exclude or item.name.startswith("_"):
            continue
        annotation = str(item.type)
        if annotation not in _ANNOTATION_NODES:
            raise TypeError(f"{cls.__name__}.{item.name}: no node for {annotation!r}")
        said = re.search(rf"``{item.name}``: (.*?)(?= ``\w+``: |$)", doc)
        default = item.default if item.default is not dataclasses.MISSING else None
        fields[item.name] = Field(
            _ANNOTATION_NODES[annotation],
            item.name,
            said[1] if said else item.name,
            required=False,
            default=list(default) if isinstance(default, tuple) else default,
        )
    return Obj(fields)
