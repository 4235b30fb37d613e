"""Benchmark suites: validated dataclasses loaded from TOML files.

A suite names the instances (a family's generator preset with parameters and
a list of seeds, or instance files), the methods with their parameters, the
reference method that certifies the optimum (an exact method, or a named
bound), the limits of one task and where results go::

    [suite]
    name = "quick"                     # letters, digits, '-', '_'
    description = "rar small: heuristics against the exact optimum"
    reference = "exact"                # label(s) of exact or bound methods below: "exact",
                                       # or ["exact", "load_lb"]
    output = "results/quick"           # default results/<name> (relative to the cwd)

    [limits]
    time_limit_s = 20                  # handed to every method (solver limit; > 0, finite)
    kill_after_s = 40                  # wall clock per task, >= 1 s; the worker is killed after
    memory_mb = 4096                   # address-space limit of a worker, >= 256 (optional)
    backend = "highs"                  # MILP backend of exact methods
    max_tasks = 200000                 # refuse a suite of more tasks (default 200,000)

    [[instances]]
    family = "rar"
    preset = "small"
    seeds = [0, 1, 2]                  # or { first = 0, count = 10 } (at most 100,000)
    params = { }                       # preset parameters
    sweep = { }                        # parameter -> list: one instance per combination
    group = "small"                    # table row group (default: the preset)

    [[instances]]
    family = "rar"
    files = ["instances/*.json"]       # instance files (globs), relative to the suite
    group = "hand"

    [[methods]]
    name = "sjf_bco"                   # registered method of the family
    family = "rar"                     # optional when the suite has one family
    label = "sjf_bco"                  # unique name in tables (default: the name)
    params = { }                       # method parameters
    sweep = { }                        # parameter -> list: one method variant each
    seeds = [0]                        # seeds of a randomised method (default [0])
    groups = ["small"]                 # only these instance groups (default: all of the family)
    time_limit_s = 60                  # overrides [limits]
    kill_after_s = 90
    backend = "highs"

Trace slices are generator presets with parameters (``preset = "trace"``,
``params = { trace = "..." }``, ``sweep = { start = [0, 200, 400] }``): the
family's generator decides what its parameters mean.

Every problem is reported as one :class:`SuiteError` line naming the file and
the field, e.g. ``quick.toml: instances[0].seeds: expected a list of
non-negative integers, got 'x'``.

The file goes through the input gate (:mod:`ddlsched.textin`: a regular file
of at most :data:`MAX_SUITE_BYTES`, strict UTF-8, a byte-order mark
tolerated); a TOML syntax error names its line and column; nesting deeper
than :data:`MAX_SUITE_NESTING` levels, integers outside the 64-bit range
(TOML's own) and ``nan``/``inf`` floats are refused, naming the field and
the value. :func:`load_suite` then checks the registry (families, presets,
methods, parameter names, files), the suite's size (``limits.max_tasks``,
counted without building a task) and, with :mod:`ddlsched.bench.check`,
everything a run would check task by task (method parameter values,
backends, each instance generated or loaded), so that a suite that loads
never fails a task for a reason known in advance.
"""

from __future__ import annotations

import glob
import hashlib
import itertools
import json
import math
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ddlsched.cli_types import MAX_SEED
from ddlsched.deadline import DEFAULT_TIME_LIMIT_S
from ddlsched.errors import DdlschedError
from ddlsched.textin import InputFileError, check_tree, decode_utf8, nesting_position, read_bytes

__all__ = [
    "DEFAULT_MAX_TASKS",
    "MAX_SEEDS",
    "MAX_SUITE_BYTES",
    "MAX_SUITE_NESTING",
    "MIN_KILL_AFTER_S",
    "MIN_MEMORY_MB",
    "InstanceSet",
    "Limits",
    "MethodSpec",
    "Suite",
    "SuiteCheckError",
    "SuiteError",
    "load_suite",
    "parse_suite",
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
MAX_SUITE_BYTES = 4 * 1024 * 1024
#: The deepest nesting of arrays and tables in a suite file.
MAX_SUITE_NESTING = 32
_INT64_MAX = 2**63 - 1


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


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _check_name(name: str, value: Any) -> str:
    if not isinstance(value, str) or not _NAME_RE.match(value):
        raise SuiteError(name, f"expected a name of letters, digits, '.', '-', '_', got {value!r}")
    return value


def _check_positive(name: str, value: Any, allow_none: bool = False) -> float | None:
    """A time limit: a finite number of seconds > 0."""
    if value is None and allow_none:
        return None
    if not _is_number(value) or not value > 0 or not math.isfinite(value):
        raise SuiteError(name, f"expected a positive finite number of seconds, got {value!r}")
    return float(value)


def _check_kill_after(name: str, value: Any) -> float | None:
    """A kill deadline: ``None`` or a finite number of seconds >= :data:`MIN_KILL_AFTER_S`."""
    if value is None:
        return None
    if not _is_number(value) or not math.isfinite(value) or not value >= MIN_KILL_AFTER_S:
        raise SuiteError(
            name,
            f"expected a finite number of seconds >= {MIN_KILL_AFTER_S:g} "
            f"(a worker needs that to start), got {value!r}",
        )
    return float(value)


def _check_seeds(name: str, value: Any) -> tuple[int, ...]:
    """A list of distinct non-negative integers, or ``{first = F, count = N}``."""
    if isinstance(value, Mapping):
        unknown = sorted(set(value) - {"first", "count"})
        if unknown:
            raise SuiteError(f"{name}.{unknown[0]}", "unknown field (expected first, count)")
        first, count = value.get("first", 0), value.get("count")
        if not _is_int(first) or not 0 <= first <= MAX_SEED:
            raise SuiteError(f"{name}.first", f"expected a seed in 0..{MAX_SEED}, got {first!r}")
        if not _is_int(count) or not 1 <= count <= MAX_SEEDS:
            raise SuiteError(
                f"{name}.count", f"expected an integer from 1 to {MAX_SEEDS:,}, got {count!r}"
            )
        if first + count - 1 > MAX_SEED:
            raise SuiteError(f"{name}", f"seeds beyond {MAX_SEED} (first {first}, count {count})")
        return tuple(range(first, first + count))
    if (
        not isinstance(value, (list, tuple))
        or not value
        or not all(_is_int(s) and 0 <= s <= MAX_SEED for s in value)
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


def _check_params(name: str, value: Any) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise SuiteError(name, f"expected a table of parameters, got {value!r}")
    for key, item in value.items():
        try:
            json.dumps(item)
        except (TypeError, ValueError):
            raise SuiteError(f"{name}.{key}", f"not a plain value: {item!r}") from None
    return dict(value)


def _check_sweep(name: str, value: Any) -> dict[str, tuple[Any, ...]]:
    params = _check_params(name, value)
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


# --------------------------------------------------------------------------- dataclasses


@dataclass(frozen=True)
class Limits:
    """Limits of one task: the solver's time limit, the kill deadline and memory.

    ``time_limit_s`` is handed to the method (``RunOptions.time_limit_s``);
    ``kill_after_s`` is the wall-clock deadline after which the platform
    kills the worker process and records a ``time_limit`` row (default
    ``1.5 * time_limit_s + 10``; at least :data:`MIN_KILL_AFTER_S`);
    ``memory_mb`` caps a worker's address space (Linux ``RLIMIT_AS``; at
    least :data:`MIN_MEMORY_MB`; ``None``: no cap); ``max_tasks`` is the most
    tasks the suite may have (:data:`DEFAULT_MAX_TASKS`).
    """

    time_limit_s: float = DEFAULT_TIME_LIMIT_S
    kill_after_s: float | None = None
    memory_mb: int | None = None
    backend: str = "highs"
    max_tasks: int = DEFAULT_MAX_TASKS

    def __post_init__(self) -> None:
        _check_positive("time_limit_s", self.time_limit_s)
        _check_kill_after("kill_after_s", self.kill_after_s)
        if self.memory_mb is not None and (
            not _is_int(self.memory_mb) or not MIN_MEMORY_MB <= self.memory_mb <= 2**40
        ):
            raise SuiteError(
                "memory_mb",
                f"expected an integer number of MiB >= {MIN_MEMORY_MB} (a worker needs that "
                f"to import its solvers), got {self.memory_mb!r}",
            )
        _check_name("backend", self.backend)
        if not _is_int(self.max_tasks) or not self.max_tasks >= 1:
            raise SuiteError("max_tasks", f"expected a positive integer, got {self.max_tasks!r}")

    def kill_deadline(self, time_limit_s: float) -> float:
        return self.kill_after_s if self.kill_after_s is not None else 1.5 * time_limit_s + 10.0


@dataclass(frozen=True)
class InstanceSet:
    """Instances of one family: a generator preset over seeds (and a sweep), or files."""

    family: str
    preset: str | None = None
    seeds: tuple[int, ...] = ()
    params: Mapping[str, Any] = field(default_factory=dict)
    sweep: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)
    files: tuple[str, ...] = ()
    group: str | None = None

    def __post_init__(self) -> None:
        _check_name("family", self.family)
        if self.files and self.preset is not None:
            raise SuiteError("files", "give either files or a preset, not both")
        if not self.files and self.preset is None:
            raise SuiteError("preset", "missing: give a generator preset (with seeds) or files")
        if self.preset is not None:
            _check_name("preset", self.preset)
            _check_seeds("seeds", self.seeds)
        elif self.seeds:
            raise SuiteError("seeds", "seeds apply to a preset, not to files")
        _check_params("params", self.params)
        _check_sweep("sweep", self.sweep)
        if self.files and (self.params or self.sweep):
            raise SuiteError("params", "parameters apply to a preset, not to files")
        overlap = sorted(set(self.params) & set(self.sweep))
        if overlap:
            raise SuiteError(f"sweep.{overlap[0]}", "also given in params")
        if self.group is not None:
            _check_name("group", self.group)

    @property
    def group_name(self) -> str:
        return self.group or self.preset or "files"

    def points(self) -> list[dict[str, Any]]:
        """The preset's parameters at every sweep point."""
        return sweep_points(self.params, self.sweep)


@dataclass(frozen=True)
class MethodSpec:
    """A registered method with parameters (and a sweep), seeds and limit overrides."""

    name: str
    family: str | None = None
    label: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    sweep: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)
    seeds: tuple[int, ...] = (0,)
    time_limit_s: float | None = None
    kill_after_s: float | None = None
    backend: str | None = None
    groups: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        _check_name("name", self.name)
        if not isinstance(self.groups, (list, tuple)):
            raise SuiteError("groups", f"expected a list of instance groups, got {self.groups!r}")
        for group in self.groups:
            _check_name("groups", group)
        if self.family is not None:
            _check_name("family", self.family)
        if self.label is not None:
            _check_name("label", self.label)
        _check_params("params", self.params)
        _check_sweep("sweep", self.sweep)
        overlap = sorted(set(self.params) & set(self.sweep))
        if overlap:
            raise SuiteError(f"sweep.{overlap[0]}", "also given in params")
        _check_seeds("seeds", self.seeds)
        _check_positive("time_limit_s", self.time_limit_s, allow_none=True)
        _check_kill_after("kill_after_s", self.kill_after_s)
        if self.backend is not None:
            _check_name("backend", self.backend)

    def variants(self) -> list[tuple[str, dict[str, Any]]]:
        """``(label, params)`` per sweep point; swept values appear in the label."""
        base = self.label or self.name
        out = []
        for point in sweep_points(self.params, self.sweep):
            if self.sweep:
                suffix = ",".join(f"{k}={point[k]}" for k in self.sweep)
                out.append((f"{base}[{suffix}]", point))
            else:
                out.append((base, point))
        return out


@dataclass(frozen=True)
class Suite:
    """A validated benchmark suite; see the module docstring for the TOML form."""

    name: str
    instances: tuple[InstanceSet, ...]
    methods: tuple[MethodSpec, ...]
    reference: tuple[str, ...] = ()
    limits: Limits = field(default_factory=Limits)
    description: str = ""
    output: str | None = None
    base_dir: Path = Path(".")
    source: str | None = None  # the suite file, when loaded from one
    text_sha256: str | None = None  # hash of the file's bytes
    #: What :func:`load_suite`'s per-task checks found (a
    #: :class:`ddlsched.bench.check.SuiteCheck`: notes such as instances left
    #: unchecked by the time budget), ``None`` when they did not run.
    checked: Any = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        _check_name("suite.name", self.name)
        if not self.instances:
            raise SuiteError("instances", "missing: a suite needs at least one [[instances]] set")
        if not self.methods:
            raise SuiteError("methods", "missing: a suite needs at least one [[methods]] entry")
        suite_families = {s.family for s in self.instances}
        labels: dict[str, int] = {}
        for i, spec in enumerate(self.methods):
            if spec.family is None and len(suite_families) > 1:
                raise SuiteError(
                    f"methods[{i}].family",
                    f"missing: the suite has several families ({', '.join(sorted(suite_families))})",
                )
            fam = spec.family or next(iter(suite_families))
            if fam not in suite_families:
                raise SuiteError(f"methods[{i}].family", f"no [[instances]] of family {fam!r}")
            for label, _ in spec.variants():
                key = f"{fam}/{label}"
                if key in labels:
                    raise SuiteError(
                        f"methods[{i}].label",
                        f"label {label!r} already used by methods[{labels[key]}] (set label)",
                    )
                labels[key] = i
        if isinstance(self.reference, str):
            object.__setattr__(self, "reference", (self.reference,))
        if not isinstance(self.reference, (list, tuple)):
            raise SuiteError(
                "suite.reference", f"expected a label or a list, got {self.reference!r}"
            )
        known = {k.split("/", 1)[1] for k in labels}
        for ref in self.reference:
            _check_name("suite.reference", ref)
            if ref not in known:
                raise SuiteError(
                    "suite.reference",
                    f"{ref!r} is not a method label of the suite "
                    f"(labels: {', '.join(sorted(known))})",
                )
        groups_of = {}
        for inst in self.instances:
            groups_of.setdefault(inst.family, set()).add(inst.group_name)
        for i, spec in enumerate(self.methods):
            fam = spec.family or next(iter(suite_families))
            for group in spec.groups:
                if group not in groups_of.get(fam, ()):
                    raise SuiteError(
                        f"methods[{i}].groups",
                        f"no instance group {group!r} of family {fam!r} "
                        f"(groups: {', '.join(sorted(groups_of.get(fam, ())))})",
                    )

    def family_of(self, spec: MethodSpec) -> str:
        return spec.family or self.instances[0].family

    @property
    def families(self) -> list[str]:
        return sorted({s.family for s in self.instances})

    def output_dir(self) -> Path:
        return Path(self.output) if self.output else Path("results") / self.name

    # ----------------------------------------------------------------- size, counted

    def instance_count(self, inst: InstanceSet) -> int:
        """How many instances ``inst`` names (sweep points x seeds, or matching files)."""
        if inst.preset is None:
            return sum(len(self.expand_files(pattern)) for pattern in inst.files)
        return math.prod(len(values) for values in inst.sweep.values()) * len(inst.seeds)

    def applies(self, spec: MethodSpec, inst: InstanceSet) -> bool:
        """Whether the method ``spec`` runs on the instances of ``inst``."""
        if self.family_of(spec) != inst.family:
            return False
        return not spec.groups or inst.group_name in spec.groups

    @staticmethod
    def runs_per_instance(spec: MethodSpec) -> int:
        """Tasks of ``spec`` on one instance: sweep points x seeds."""
        return math.prod(len(values) for values in spec.sweep.values()) * len(spec.seeds)

    def tasks_per_instance(self, inst: InstanceSet) -> int:
        """Tasks on each instance of ``inst``: every applicable method's runs."""
        return sum(self.runs_per_instance(m) for m in self.methods if self.applies(m, inst))

    def task_count(self) -> int:
        """The number of tasks, counted from the suite's shape (no task is built).

        An upper bound of ``len(expand(suite))``: a run listed twice counts twice.
        """
        return sum(self.instance_count(i) * self.tasks_per_instance(i) for i in self.instances)

    def check_size(self) -> int:
        """:meth:`task_count`, refused above ``limits.max_tasks`` (fast: nothing is built)."""
        total = self.task_count()
        if total > self.limits.max_tasks:
            sizes = ", ".join(
                f"instances[{k}]: {self.instance_count(inst):,} x {self.tasks_per_instance(inst):,}"
                for k, inst in enumerate(self.instances)
            )
            raise SuiteError(
                "",
                f"{total:,} tasks, more than limits.max_tasks = {self.limits.max_tasks:,} "
                f"(instances x tasks per instance: {sizes}); raise [limits] max_tasks "
                "if you mean it",
                self.source,
            )
        return total

    def validate_against_registry(self) -> None:
        """Check families, presets, methods, instance files and reference kinds (what
        :func:`ddlsched.bench.tasks.expand` needs); method parameters and backends are
        :mod:`ddlsched.bench.check`'s (grouped, with the tasks they affect)."""
        from ddlsched.registry import get_family, get_method

        for i, inst in enumerate(self.instances):
            try:
                fam = get_family(inst.family)
            except DdlschedError as exc:
                raise SuiteError(f"instances[{i}].family", str(exc), self.source) from None
            if inst.preset is not None and inst.preset not in fam.presets:
                raise SuiteError(
                    f"instances[{i}].preset",
                    f"unknown preset {inst.preset!r} of family {fam.name!r} "
                    f"(choose from {', '.join(fam.presets)})",
                    self.source,
                )
            for pattern in inst.files:
                if not self.expand_files(pattern):
                    raise SuiteError(
                        f"instances[{i}].files", f"no file matches {pattern!r}", self.source
                    )
        for i, spec in enumerate(self.methods):
            fam_name = self.family_of(spec)
            try:
                method = get_method(fam_name, spec.name)
            except DdlschedError as exc:
                raise SuiteError(f"methods[{i}].name", str(exc), self.source) from None
            is_reference = set(self.reference) & {lb for lb, _ in spec.variants()}
            if is_reference and method.kind not in ("exact", "bound"):
                raise SuiteError(
                    "suite.reference",
                    f"{spec.label or spec.name!r} is a {method.kind}; the reference must be an "
                    "exact method or a bound",
                    self.source,
                )

    def expand_files(self, pattern: str) -> list[Path]:
        path = Path(pattern)
        if not path.is_absolute():
            path = self.base_dir / path
        return sorted(Path(p) for p in glob.glob(str(path)))

    @property
    def sha256(self) -> str:
        """Hash of the suite file's bytes, or of its parsed content."""
        if self.text_sha256:
            return self.text_sha256
        payload = json.dumps(
            {
                "name": self.name,
                "instances": [repr(s) for s in self.instances],
                "methods": [repr(m) for m in self.methods],
                "reference": list(self.reference),
                "limits": repr(self.limits),
            },
            sort_keys=True,
        )
        return hashlib.sha256(payload.encode()).hexdigest()


# --------------------------------------------------------------------------- parsing


def _take(table: Any, where: str, allowed: Sequence[str]) -> dict[str, Any]:
    if not isinstance(table, Mapping):
        raise SuiteError(where, f"expected a table, got {table!r}")
    unknown = [k for k in table if k not in allowed]
    if unknown:
        raise SuiteError(
            f"{where}.{unknown[0]}" if where else unknown[0],
            f"unknown field (expected one of {', '.join(allowed)})",
        )
    return dict(table)


def _build(cls: type, where: str, kwargs: dict[str, Any]) -> Any:
    try:
        return cls(**kwargs)
    except SuiteError as exc:
        raise exc.at(where) from None


def _str_or_none(where: str, value: Any) -> str | None:
    if value is not None and not isinstance(value, str):
        raise SuiteError(where, f"expected a string, got {value!r}")
    return value


def parse_suite(
    data: Mapping[str, Any], *, base_dir: Path = Path("."), source: str | None = None
) -> Suite:
    """Build a :class:`Suite` from parsed TOML (errors name ``source`` and the field)."""
    try:
        top = _take(data, "", ["suite", "limits", "instances", "methods"])
        head = _take(top.get("suite", {}), "suite", ["name", "description", "reference", "output"])
        if "name" not in head:
            raise SuiteError("suite.name", "missing")
        description = _str_or_none("suite.description", head.get("description", "")) or ""
        output = _str_or_none("suite.output", head.get("output"))
        limits_table = _take(
            top.get("limits", {}),
            "limits",
            ["time_limit_s", "kill_after_s", "memory_mb", "backend", "max_tasks"],
        )
        limits = _build(Limits, "limits", limits_table)
        raw_instances = top.get("instances", [])
        if not isinstance(raw_instances, list):
            raise SuiteError("instances", "expected an array of tables [[instances]]")
        instances = []
        for i, raw in enumerate(raw_instances):
            where = f"instances[{i}]"
            table = _take(
                raw, where, ["family", "preset", "seeds", "params", "sweep", "files", "group"]
            )
            if "family" not in table:
                raise SuiteError(f"{where}.family", "missing")
            files = table.pop("files", ())
            if isinstance(files, str):
                files = [files]
            if not isinstance(files, (list, tuple)) or not all(isinstance(f, str) for f in files):
                raise SuiteError(f"{where}.files", f"expected a list of paths, got {files!r}")
            table["files"] = tuple(files)
            if "seeds" in table:
                try:
                    table["seeds"] = _check_seeds("seeds", table["seeds"])
                except SuiteError as exc:
                    raise exc.at(where) from None
            elif table.get("preset") is not None:
                raise SuiteError(f"{where}.seeds", "missing: give the generator seeds")
            if "sweep" in table:
                try:
                    table["sweep"] = _check_sweep("sweep", table["sweep"])
                except SuiteError as exc:
                    raise exc.at(where) from None
            instances.append(_build(InstanceSet, where, table))
        raw_methods = top.get("methods", [])
        if not isinstance(raw_methods, list):
            raise SuiteError("methods", "expected an array of tables [[methods]]")
        methods = []
        for i, raw in enumerate(raw_methods):
            where = f"methods[{i}]"
            table = _take(
                raw,
                where,
                [
                    "name",
                    "family",
                    "label",
                    "params",
                    "sweep",
                    "seeds",
                    "time_limit_s",
                    "kill_after_s",
                    "backend",
                    "groups",
                ],
            )
            if "name" not in table:
                raise SuiteError(f"{where}.name", "missing")
            try:
                if "seeds" in table:
                    table["seeds"] = _check_seeds("seeds", table["seeds"])
                if "sweep" in table:
                    table["sweep"] = _check_sweep("sweep", table["sweep"])
                if "groups" in table:
                    groups = table["groups"]
                    table["groups"] = tuple(groups) if isinstance(groups, list) else groups
            except SuiteError as exc:
                raise exc.at(where) from None
            methods.append(_build(MethodSpec, where, table))
        return Suite(
            name=head["name"],
            description=description,
            reference=head.get("reference", ()),
            output=output,
            limits=limits,
            instances=tuple(instances),
            methods=tuple(methods),
            base_dir=base_dir,
            source=source,
        )
    except SuiteError as exc:
        raise exc.in_file(source) if source else exc from None


def _toml_scalar(value: Any) -> str | None:
    """Why a parsed TOML value is refused in a suite, or ``None``."""
    if isinstance(value, float) and not math.isfinite(value):
        return f"{value!r} is not a finite number (nan and inf are refused in suites)"
    if _is_int(value) and not -_INT64_MAX - 1 <= value <= _INT64_MAX:
        return f"{value} is outside TOML's 64-bit integer range"
    return None


def _read_toml(path: Path) -> tuple[dict[str, Any], bytes]:
    """The parsed suite file and its bytes, through the input gate; errors are SuiteErrors."""
    source = str(path)
    try:
        raw = read_bytes(path, max_bytes=MAX_SUITE_BYTES, what="a suite file")
        text = decode_utf8(raw, path)
    except InputFileError as exc:
        raise SuiteError("", exc.detail, source) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        match = re.fullmatch(r"(.*) \(at line (\d+), column (\d+)\)", message, re.DOTALL)
        if match:
            where = f"line {match.group(2)}, column {match.group(3)}: {match.group(1)}"
        else:
            where = message.replace(" (at end of document)", " at the end of the file")
        raise SuiteError("", f"not valid TOML ({where})", source) from None
    except RecursionError:
        at = nesting_position(text, MAX_SUITE_NESTING, toml=True)
        where = f"line {at[0]}, column {at[1]}: " if at else ""
        raise SuiteError(
            "", f"not valid TOML ({where}nested more than {MAX_SUITE_NESTING} levels deep)", source
        ) from None
    except ValueError as exc:  # Python refuses integers of more than 4,300 digits
        digits = re.search(r"[0-9][0-9_]{19,}", text)
        where = ""
        if digits:
            line = text.count("\n", 0, digits.start()) + 1
            column = digits.start() - text.rfind("\n", 0, digits.start())
            where = f"line {line}, column {column}: "
        detail = "an integer outside TOML's 64-bit range" if "digits" in str(exc) else str(exc)
        raise SuiteError("", f"not valid TOML ({where}{detail})", source) from None
    bad = check_tree(data, max_depth=MAX_SUITE_NESTING, scalar=_toml_scalar)
    if bad is not None:
        raise SuiteError(bad[0], bad[1], source)
    return data, raw


def load_suite(
    path: str | Path,
    *,
    check_registry: bool = True,
    instance_budget_s: float | None = None,
) -> Suite:
    """Read and validate a suite file.

    Always: the input gate, the schema and the size (``limits.max_tasks``).
    ``check_registry``: also that every name exists, then every check a run
    would make task by task (:func:`ddlsched.bench.check.check_suite`: method
    parameter values and backends; every instance generated or loaded, within
    ``instance_budget_s`` seconds (default :data:`ddlsched.bench.check.DEFAULT_BUDGET_S`,
    or ``$DDLSCHED_CHECK_BUDGET_S``; 0: none is). The problems found are one
    :class:`~ddlsched.bench.check.SuiteCheckError`; what was left unchecked is in
    ``suite.checked.notes``.
    """
    path = Path(path)
    data, raw = _read_toml(path)
    suite = parse_suite(data, base_dir=path.resolve().parent, source=str(path))
    suite = _with_hash(suite, hashlib.sha256(raw).hexdigest())
    suite.check_size()
    if check_registry:
        from ddlsched.bench.check import check_suite

        suite.validate_against_registry()
        report = check_suite(suite, budget_s=instance_budget_s)
        if report.problems:
            raise SuiteCheckError(report)
        object.__setattr__(suite, "checked", report)
    return suite


def _with_hash(suite: Suite, digest: str) -> Suite:
    from dataclasses import replace

    return replace(suite, text_sha256=digest)
