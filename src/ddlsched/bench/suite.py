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

import hashlib
import math
import os
import re
import tomllib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ddlsched.bench.instance_cache import cache_dir_of
from ddlsched.bench.suite_spec import InstanceSet, Limits, MethodSpec, Suite
from ddlsched.bench.suite_values import (
    SuiteCheckError,
    SuiteError,
    check_seeds,
    check_sweep,
    is_int,
)
from ddlsched.textin import InputFileError, check_tree, decode_utf8, nesting_position, read_bytes

__all__ = ["MAX_SUITE_BYTES", "MAX_SUITE_NESTING", "load_suite", "parse_suite"]

MAX_SUITE_BYTES = 4 * 1024 * 1024
#: The deepest nesting of arrays and tables in a suite file.
MAX_SUITE_NESTING = 32
_INT64_MAX = 2**63 - 1


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
                    table["seeds"] = check_seeds("seeds", table["seeds"])
                except SuiteError as exc:
                    raise exc.at(where) from None
            elif table.get("preset") is not None:
                raise SuiteError(f"{where}.seeds", "missing: give the generator seeds")
            if "sweep" in table:
                try:
                    table["sweep"] = check_sweep("sweep", table["sweep"])
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
                    table["seeds"] = check_seeds("seeds", table["seeds"])
                if "sweep" in table:
                    table["sweep"] = check_sweep("sweep", table["sweep"])
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
    if is_int(value) and not -_INT64_MAX - 1 <= value <= _INT64_MAX:
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


def _make_results_dir(directory: Path) -> list[Path]:
    """Create the results directory, or raise a one-line :class:`StoreError` naming it;
    the folders made, outermost first (removed again when the check refuses the suite)."""
    from ddlsched.bench.files import store_error

    missing = [p for p in (directory, *directory.parents) if not p.exists()][::-1]
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise store_error(directory, exc, "cannot create the results directory") from None
    if not os.access(directory, os.W_OK):
        raise store_error(directory, PermissionError("not writable"), "results directory")
    return missing


def _remove_if_empty(folders: list[Path]) -> None:
    for folder in reversed(folders):
        try:
            folder.rmdir()
        except OSError:  # not empty (the check cached an instance): keep it
            return


def load_suite(
    path: str | Path,
    *,
    check_registry: bool = True,
    instance_budget_s: float | None = None,
    cache: bool = False,
    out: str | Path | None = None,
    on_instance: Callable[[int, int], None] | None = None,
) -> Suite:
    """Read and validate a suite file.

    Always: the input gate, the schema and the size (``limits.max_tasks``).
    ``check_registry``: also that every name exists, then every check a run
    would make task by task (:func:`ddlsched.bench.check.check_suite`: method
    parameter values and backends; every instance generated or loaded, within
    ``instance_budget_s`` seconds (default :data:`ddlsched.bench.check.DEFAULT_BUDGET_S`,
    or ``$DDLSCHED_CHECK_BUDGET_S``; 0: none is). The problems found are one
    :class:`~ddlsched.bench.suite_values.SuiteCheckError`; what was left unchecked is in
    ``suite.checked.notes``. ``cache``: the instances are built into, and read back
    from, the instance cache of the results directory ``out`` (default: the suite's
    output; :mod:`ddlsched.bench.instance_cache`), so that a second check, and the
    run's workers, build none of them again. ``on_instance(done, total)``: the
    check's progress (:func:`~ddlsched.bench.check.check_suite`).
    """
    path = Path(path)
    data, raw = _read_toml(path)
    suite = parse_suite(data, base_dir=path.resolve().parent, source=str(path))
    suite = _with_hash(suite, hashlib.sha256(raw).hexdigest())
    suite.check_size()
    if check_registry:
        from ddlsched.bench.check import check_suite

        suite.validate_against_registry()
        # A results directory that cannot be made is one line, before any instance is built;
        # one made here for a suite the check then refuses is removed again.
        made = _make_results_dir(Path(out or suite.output_dir())) if cache else []
        cache_dir = cache_dir_of(out or suite.output_dir()) if cache else None
        try:
            report = check_suite(
                suite, budget_s=instance_budget_s, cache_dir=cache_dir, on_instance=on_instance
            )
            if report.problems:
                raise SuiteCheckError(report)
        except BaseException:
            _remove_if_empty(made)
            raise
        object.__setattr__(suite, "checked", report)
    return suite


def _with_hash(suite: Suite, digest: str) -> Suite:
    from dataclasses import replace

    return replace(suite, text_sha256=digest)
