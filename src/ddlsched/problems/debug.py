"""Family ``debug``: a synthetic problem for testing and timing the benchmark platform.

Not a scheduling problem, and the smallest complete family (the example of
``CONTRIBUTING.md``). An instance holds a ``size`` (reported as the
instance size) and a ``value``; a schedule is a factor ``scale >= 1``; the
evaluator computes the objective ``value * scale`` (minimised), so the best
schedule has ``scale = 1`` and objective ``value``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

from ddlsched.errors import InfeasibleScheduleError, InvalidInstanceError
from ddlsched.jsonio import JsonInstance, check_fields, check_header, require_number

__all__ = [
    "DebugEvaluation",
    "DebugInstance",
    "DebugSchedule",
    "evaluate",
    "schedule_from_json",
    "schedule_to_json",
]

SCHEMA_VERSION = 1


@dataclass(frozen=True)
class DebugInstance(JsonInstance):
    """A synthetic instance: ``size`` (reported as the instance size) and ``value``."""

    size: int
    value: float

    family: ClassVar[str] = "debug"

    def __post_init__(self) -> None:
        if isinstance(self.size, bool) or not isinstance(self.size, int) or self.size < 1:
            raise InvalidInstanceError(f"debug: size must be a positive integer, got {self.size!r}")
        if (
            isinstance(self.value, bool)
            or not isinstance(self.value, (int, float))
            or not math.isfinite(self.value)
            or self.value <= 0
        ):
            raise InvalidInstanceError(f"debug: value must be positive, got {self.value!r}")

    def to_dict(self) -> dict[str, Any]:
        return {
            "family": "debug",
            "schema_version": SCHEMA_VERSION,
            "size": self.size,
            "value": self.value,
        }

    @classmethod
    def from_dict(cls, data: Any) -> DebugInstance:
        data = check_fields(data, "debug", ("family", "schema_version"), ("size", "value"))
        check_header(data, "debug", SCHEMA_VERSION)
        value = require_number(data.get("value", 1.0), "value")
        return cls(size=data.get("size", 1), value=value)


@dataclass(frozen=True)
class DebugSchedule:
    """A schedule of the debug problem: the factor by which it misses the optimum."""

    scale: float


@dataclass(frozen=True)
class DebugEvaluation:
    """What the evaluator computed: the objective ``value * scale``."""

    value: float


def evaluate(instance: DebugInstance, schedule: DebugSchedule) -> DebugEvaluation:
    """The objective of ``schedule`` (the one place that computes it); ``scale >= 1``."""
    if not (math.isfinite(schedule.scale) and schedule.scale >= 1):
        raise InfeasibleScheduleError(f"debug: scale must be >= 1, got {schedule.scale!r}")
    return DebugEvaluation(value=instance.value * schedule.scale)


def schedule_to_json(schedule: DebugSchedule, evaluation: DebugEvaluation | None = None) -> Any:
    """The JSON of ``schedule``: its ``scale``, and the evaluated ``value`` if given."""
    out: dict[str, Any] = {"scale": schedule.scale}
    if evaluation is not None:
        out["value"] = evaluation.value
    return out


def schedule_from_json(data: Any) -> DebugSchedule:
    """The schedule of its JSON (``scale``; a ``value`` is allowed and ignored)."""
    data = check_fields(data, "schedule", ("scale",), ("value",))
    return DebugSchedule(require_number(data["scale"], "schedule.scale"))
