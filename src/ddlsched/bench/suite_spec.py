"""Benchmark suites as validated dataclasses: limits, instance sets, methods, the suite.

The TOML form they are read from is in :mod:`ddlsched.bench.suite` (module
docstring; :func:`~ddlsched.bench.suite.load_suite` reads a file). Each
dataclass checks its fields when built (:mod:`ddlsched.bench.suite_values`),
:class:`Suite` also the cross-references (method families, labels, the
reference, method groups); :meth:`Suite.task_count` counts a suite's tasks
from its shape, without building one, and
:meth:`Suite.validate_against_registry` checks the names against the
registry.
"""

from __future__ import annotations

import glob
import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ddlsched.bench.suite_values import (
    DEFAULT_MAX_TASKS,
    MIN_MEMORY_MB,
    SuiteError,
    check_kill_after,
    check_name,
    check_params,
    check_positive,
    check_seeds,
    check_sweep,
    is_int,
    sweep_points,
)
from ddlsched.deadline import DEFAULT_TIME_LIMIT_S
from ddlsched.errors import DdlschedError

__all__ = ["InstanceSet", "Limits", "MethodSpec", "Suite"]

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
        check_positive("time_limit_s", self.time_limit_s)
        check_kill_after("kill_after_s", self.kill_after_s)
        if self.memory_mb is not None and (
            not is_int(self.memory_mb) or not MIN_MEMORY_MB <= self.memory_mb <= 2**40
        ):
            raise SuiteError(
                "memory_mb",
                f"expected an integer number of MiB >= {MIN_MEMORY_MB} (a worker needs that "
                f"to import its solvers), got {self.memory_mb!r}",
            )
        check_name("backend", self.backend)
        if not is_int(self.max_tasks) or not self.max_tasks >= 1:
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
        check_name("family", self.family)
        if self.files and self.preset is not None:
            raise SuiteError("files", "give either files or a preset, not both")
        if not self.files and self.preset is None:
            raise SuiteError("preset", "missing: give a generator preset (with seeds) or files")
        if self.preset is not None:
            check_name("preset", self.preset)
            check_seeds("seeds", self.seeds)
        elif self.seeds:
            raise SuiteError("seeds", "seeds apply to a preset, not to files")
        check_params("params", self.params)
        check_sweep("sweep", self.sweep)
        if self.files and (self.params or self.sweep):
            raise SuiteError("params", "parameters apply to a preset, not to files")
        overlap = sorted(set(self.params) & set(self.sweep))
        if overlap:
            raise SuiteError(f"sweep.{overlap[0]}", "also given in params")
        if self.group is not None:
            check_name("group", self.group)

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
        check_name("name", self.name)
        if not isinstance(self.groups, (list, tuple)):
            raise SuiteError("groups", f"expected a list of instance groups, got {self.groups!r}")
        for group in self.groups:
            check_name("groups", group)
        if self.family is not None:
            check_name("family", self.family)
        if self.label is not None:
            check_name("label", self.label)
        check_params("params", self.params)
        check_sweep("sweep", self.sweep)
        overlap = sorted(set(self.params) & set(self.sweep))
        if overlap:
            raise SuiteError(f"sweep.{overlap[0]}", "also given in params")
        check_seeds("seeds", self.seeds)
        check_positive("time_limit_s", self.time_limit_s, allow_none=True)
        check_kill_after("kill_after_s", self.kill_after_s)
        if self.backend is not None:
            check_name("backend", self.backend)

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
        check_name("suite.name", self.name)
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
            check_name("suite.reference", ref)
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
