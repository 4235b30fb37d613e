"""Benchmark suites: the one-line error and the checks of a suite's field values.

:class:`SuiteError` names the file and the field of every problem of a suite
(``quick.toml: instances[0].seeds: expected a list of non-negative integers,
got 'x'``); the ``check_*`` functions check one field's value (names, time
limits and kill deadlines, seeds, parameter tables, sweeps) for the
dataclasses of :mod:`ddlsched.bench.suite_spec` and the reader of
:mod:`ddlsched.bench.suite`; :func:`sweep_points` expands a sweep.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ddlsched.cli_types import MAX_SEED
from ddlsched.errors import DdlschedError

__all__ = [
    "DEFAULT_MAX_TASKS",
    "MAX_SEEDS",
    "MIN_KILL_AFTER_S",
    "MIN_MEMORY_MB",
    "SuiteCheckError",
    "SuiteError",
    "check_kill_after",
    "check_name",
    "check_params",
    "check_positive",
    "check_seeds",
    "check_sweep",
    "is_int",
    "is_number",
    "sweep_points",
]

_NAME_RE = re.compile(r"^[A-Za-z0-9_.-]+$")
#: The most seeds one seed list or ``{first, count}`` may name.
MAX_SEEDS = 100_000
#: The most tasks a suite may have unless its ``[limits] max_tasks`` says otherwise
#: (counted from the suite's shape before any task is built).
DEFAULT_MAX_TASKS = 200_000
#: The smallest ``memory_mb`` (MiB): below it a worker cannot even import its solvers.
MIN_MEMORY_MB = 256
#: The shortest ``kill_after_s`` (s): below it a worker is killed while it starts.
MIN_KILL_AFTER_S = 1.0
#: The largest suite file (bytes), checked before reading.


class SuiteError(DdlschedError, ValueError):
    """A suite file is malformed; the message names the file and the field."""

    def __init__(self, field_path: str, message: str, source: str | None = None) -> None:
        self.field_path = field_path
        self.message = message
        self.source = source
        super().__init__(self._text())

    def _text(self) -> str:
        where = ": ".join(p for p in (self.source, self.field_path) if p)
        return f"{where}: {self.message}" if where else self.message

    def at(self, prefix: str) -> SuiteError:
        """The same error, one level deeper (``prefix.field``)."""
        path = f"{prefix}.{self.field_path}" if self.field_path else prefix
        return SuiteError(path, self.message, self.source)

    def in_file(self, source: str) -> SuiteError:
        return SuiteError(self.field_path, self.message, source)


class SuiteCheckError(SuiteError):
    """What :func:`ddlsched.bench.check.check_suite` found, as one error.

    ``check`` (a :class:`~ddlsched.bench.check.SuiteCheck`) has every
    problem, one line each (``check.lines()``), with the tasks it would fail.
    """

    def __init__(self, check: Any) -> None:
        self.check = check
        super().__init__("", check.summary(), check.source)


# --------------------------------------------------------------------------- value checks


def is_int(value: Any) -> bool:
    """Whether ``value`` is an ``int`` (a ``bool`` is not)."""
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: Any) -> bool:
    """Whether ``value`` is an ``int`` or a ``float`` (a ``bool`` is not)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def check_name(name: str, value: Any) -> str:
    """A name: one or more letters, digits, ``.``, ``-`` and ``_``."""
    if not isinstance(value, str) or not _NAME_RE.match(value):
        raise SuiteError(name, f"expected a name of letters, digits, '.', '-', '_', got {value!r}")
    return value


def check_positive(name: str, value: Any, allow_none: bool = False) -> float | None:
    """A time limit: a finite number of seconds > 0."""
    if value is None and allow_none:
        return None
    if not is_number(value) or not value > 0 or not math.isfinite(value):
        raise SuiteError(name, f"expected a positive finite number of seconds, got {value!r}")
    return float(value)


def check_kill_after(name: str, value: Any) -> float | None:
    """A kill deadline: ``None`` or a finite number of seconds >= :data:`MIN_KILL_AFTER_S`."""
    if value is None:
        return None
    if not is_number(value) or not math.isfinite(value) or not value >= MIN_KILL_AFTER_S:
        raise SuiteError(
            name,
            f"expected a finite number of seconds >= {MIN_KILL_AFTER_S:g} "
            f"(a worker needs that to start), got {value!r}",
        )
    return float(value)


def check_seeds(name: str, value: Any) -> tuple[int, ...]:
    """A list of distinct non-negative integers, or ``{first = F, count = N}``."""
    if isinstance(value, Mapping):
        unknown = sorted(set(value) - {"first", "count"})
        if unknown:
            raise SuiteError(f"{name}.{unknown[0]}", "unknown field (expected first, count)")
        first, count = value.get("first", 0), value.get("count")
        if not is_int(first) or not 0 <= first <= MAX_SEED:
            raise SuiteError(f"{name}.first", f"expected a seed in 0..{MAX_SEED}, got {first!r}")
        if not is_int(count) or not 1 <= count <= MAX_SEEDS:
            raise SuiteError(
                f"{name}.count", f"expected an integer from 1 to {MAX_SEEDS:,}, got {count!r}"
            )
        if first + count - 1 > MAX_SEED:
            raise SuiteError(f"{name}", f"seeds beyond {MAX_SEED} (first {first}, count {count})")
        return tuple(range(first, first + count))
    if (
        not isinstance(value, (list, tuple))
        or not value
        or not all(is_int(s) and 0 <= s <= MAX_SEED for s in value)
    ):
        shown = value if not isinstance(value, (list, tuple)) or len(value) <= 20 else "[...]"
        raise SuiteError(name, f"expected a list of seeds in 0..{MAX_SEED}, got {shown!r}")
    if len(value) > MAX_SEEDS:
        raise SuiteError(name, f"{len(value):,} seeds, more than {MAX_SEEDS:,}")
    if len(set(value)) != len(value):
        raise SuiteError(name, "seeds repeat: " + _first_repeat(value))
    return tuple(value)


def _first_repeat(values: Sequence[Any]) -> str:
    seen: set[Any] = set()
    for value in values:
        if value in seen:
            return f"{value!r} is listed twice"
        seen.add(value)
    return ""  # pragma: no cover


def check_params(name: str, value: Any) -> dict[str, Any]:
    """A table of parameters whose values are plain (JSON) values, as a ``dict``."""
    if not isinstance(value, Mapping):
        raise SuiteError(name, f"expected a table of parameters, got {value!r}")
    for key, item in value.items():
        try:
            json.dumps(item)
        except (TypeError, ValueError):
            raise SuiteError(f"{name}.{key}", f"not a plain value: {item!r}") from None
    return dict(value)


def check_sweep(name: str, value: Any) -> dict[str, tuple[Any, ...]]:
    """A sweep: a table of parameters, each a non-empty list of values (as a tuple;
    :func:`sweep_points` expands it)."""
    params = check_params(name, value)
    out = {}
    for key, items in params.items():
        if not isinstance(items, (list, tuple)) or not items:
            raise SuiteError(f"{name}.{key}", f"expected a non-empty list of values, got {items!r}")
        out[key] = tuple(items)
    return out


def sweep_points(
    params: Mapping[str, Any], sweep: Mapping[str, Sequence[Any]]
) -> list[dict[str, Any]]:
    """Every combination of the sweep's values, each merged over ``params``."""
    if not sweep:
        return [dict(params)]
    keys = list(sweep)
    return [
        {**params, **dict(zip(keys, combo, strict=True))}
        for combo in itertools.product(*(sweep[k] for k in keys))
    ]
