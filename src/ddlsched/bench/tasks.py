"""Tasks: one (instance, method, parameters, seed) of a suite, its key and its row.

:func:`expand` turns a :class:`~ddlsched.bench.suite_spec.Suite` into tasks;
:func:`execute` runs one task (in a worker process) and returns its result
row, a flat dict holding everything the tables and plots need (see
:data:`ROW_FIELDS`). A task's :attr:`Task.key` is a content hash of the
instance recipe (family, preset, parameters and seed, or the instance
file's bytes), its group, the method, its parameters, seed and backend: what
the experiment is. Which code ran it is the row's ``code_fingerprint``
(:mod:`ddlsched.bench.fingerprint`: the method's own code, what it uses
inside ddlsched, and for a plug-in its distribution, version and source
hash); a stored row is reused only when its fingerprint is the current
code's, so an edited method is run again (the new row replaces the old one
in tables; the store's history keeps both) and a method whose code did not
change is not, whatever the package version says. A generated instance's
key (``instance_key``) holds the fingerprint of its family's generator, so
a changed generator makes new instances.

A row's identity leaves out the limits of the task (``time_limit_s``,
``kill_after_s``, ``memory_mb``): they bound how long and how large a run may
be, they do not define the experiment. Raising a limit in the suite therefore
keeps every stored row (a plain re-run runs nothing new), and
``bench run --retry failed`` (or ``time_limit``, ``error``; see
:mod:`ddlsched.bench.retry`) re-runs exactly the rows that failed under the
old limits: the new row has the same key and replaces the old one in tables,
the old one stays in the store's history. Each row records the limits it ran
under (``time_limit_s``, ``kill_after_s``). Two methods of one suite that
differ only in their limits would share keys, so such a suite is refused
(run that comparison into two results directories).

A task ships its instance's recipe, not the instance, so a task is a few
hundred bytes whichever executor ships it. The worker reads the instance
from the run's instance cache (:mod:`ddlsched.bench.instance_cache`,
``<results>/instances/``, filled by the suite's check before the run) and
builds it from its recipe only when the cache has no sound file of it
(generators are deterministic, bit for bit), then caches it.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import socket
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ddlsched.bench.suite_spec import InstanceSet, Suite
from ddlsched.bench.suite_values import SuiteError, sweep_points
from ddlsched.errors import DdlschedError

__all__ = [
    "ROW_FIELDS",
    "STATUS_TIME_LIMIT",
    "InstanceSpec",
    "Task",
    "build_instance",
    "execute",
    "expand",
    "failure_row",
    "generated_instance",
    "instance_size",
    "instance_specs",
]

log = logging.getLogger(__name__)

#: Row status of a task killed by the platform at its ``kill_after_s`` deadline.
STATUS_TIME_LIMIT = "time_limit"

#: The columns of a result row, in order (name, meaning).
ROW_FIELDS: dict[str, str] = {
    "key": "content hash of the task (instance recipe, group, method, params, seed, backend)",
    "suite": "name of the suite that produced the row",
    "family": "problem family",
    "group": "instance group (table row group)",
    "instance_id": "readable instance name, unique within family and group",
    "instance_key": "content hash of the instance recipe and its generator's code (rows of one instance share it)",
    "instance_size": "number of jobs (or stage replicas) of the instance; null if never built",
    "preset": "generator preset (null for files)",
    "instance_seed": "generator seed (null for files)",
    "instance_params": "generator parameters, JSON",
    "instance_file": "instance file path (null for generated instances)",
    "method": "registered method name",
    "label": "method label in tables (name, plus swept parameters)",
    "kind": "heuristic, exact or bound",
    "params": "method parameters, JSON",
    "seed": "method seed",
    "backend": "MILP backend requested",
    "time_limit_s": "time limit handed to the method, s",
    "kill_after_s": "wall-clock deadline of the task, s",
    "sense": "min or max",
    "status": "optimal, feasible, bound_only, infeasible, time_limit_no_solution, no_solution, "
    "error, time_limit",
    "objective": "objective of the returned schedule, recomputed by the family evaluator",
    "bound": "valid dual bound reported by the method (same sense)",
    "gap": "relative gap |objective - bound| / |objective|",
    "runtime_s": "wall time of the method (what its time limit bounds), s",
    "solver_time_s": "time spent inside solver calls, s (null for heuristics)",
    "time_limit_hit": "whether the time limit stopped the method (or the platform killed it)",
    "wall_s": "wall time of the task in the worker (instance build or cache read + method), s",
    "backend_version": "solver version used",
    "num_variables": "model size: variables",
    "num_integer_variables": "model size: integer variables",
    "num_constraints": "model size: constraints",
    "error": "why the task failed (error / time_limit rows)",
    "metrics": "scalar fields of the evaluation (e.g. average completion), JSON",
    "info": "method-specific information, JSON",
    "versions": "ddlsched, Python and solver versions of the worker, JSON",
    "ddlsched_version": "ddlsched version of the worker",
    "code_fingerprint": "fingerprint of the code that made the row (the method, what it uses, a plug-in's source)",
    "code_origin": "where that code came from, JSON: ddlsched or the plug-in (distribution, version, source hash), git commit and dirty flag",
    "worker": "host:pid of the worker process",
    "finished_at": "UTC time the row was produced, ISO 8601",
}


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def _digest(payload: Any) -> str:
    return hashlib.sha256(_canonical(payload).encode()).hexdigest()[:32]


@functools.cache
def _file_sha256(path: str) -> str:
    from ddlsched.jsonio import MAX_JSON_BYTES
    from ddlsched.textin import read_bytes

    raw = read_bytes(path, max_bytes=MAX_JSON_BYTES, what="an instance file")  # the input gate
    return hashlib.sha256(raw).hexdigest()


@dataclass(frozen=True)
class InstanceSpec:
    """How to build one instance: a generator recipe or a file (with its hash)."""

    family: str
    group: str
    instance_id: str
    preset: str | None = None
    seed: int | None = None
    params_json: str = "{}"
    file: str | None = None
    file_sha256: str | None = None
    #: The run's instance cache folder (:mod:`ddlsched.bench.instance_cache`), absolute;
    #: ``None``: no cache. Not part of the instance's identity.
    cache_dir: str | None = field(default=None, compare=False)

    @property
    def params(self) -> dict[str, Any]:
        return json.loads(self.params_json)

    def key(self, code: str) -> str:
        """The instance's content hash (rows' ``instance_key``): its recipe, and ``code``,
        the fingerprint of its family's generator and loader
        (:func:`ddlsched.bench.fingerprint.instance_fingerprint`)."""
        return _digest({"instance": self.recipe(), "code": code})

    def recipe(self) -> dict[str, Any]:
        if self.file is not None:
            return {"family": self.family, "file_sha256": self.file_sha256}
        return {
            "family": self.family,
            "preset": self.preset,
            "seed": self.seed,
            "params": self.params,
        }


@dataclass(frozen=True)
class Task:
    """One method run on one instance: the unit of work of every executor."""

    suite: str
    instance: InstanceSpec
    method: str
    label: str
    kind: str
    params_json: str
    seed: int
    backend: str
    time_limit_s: float
    kill_after_s: float
    memory_mb: int | None
    version: str
    #: The fingerprint of the method's code when the task was made (rows record the
    #: worker's own, :func:`ddlsched.bench.fingerprint.method_fingerprint`).
    code_fingerprint: str = ""
    #: The fingerprint of the instance's generator and loader (in ``instance_key``).
    instance_code: str = ""
    #: A method registered in this session (a notebook cell), pickled for the worker
    #: process, which does not import it (:mod:`ddlsched.bench.session`); ``None``:
    #: the worker finds the method in its own registry.
    session_method: bytes | None = field(default=None, compare=False, repr=False)
    #: The origin of that session method (JSON, with the hash of its source), made here.
    session_origin: str | None = field(default=None, compare=False, repr=False)

    @property
    def params(self) -> dict[str, Any]:
        return json.loads(self.params_json)

    @property
    def instance_key(self) -> str:
        return self.instance.key(self.instance_code)

    @property
    def key(self) -> str:
        return _digest(
            {
                "instance": self.instance.recipe(),
                "group": self.instance.group,
                "method": self.method,
                "params": self.params,
                "seed": self.seed,
                "backend": self.backend,
            }
        )


def _instance_id(preset: str, seed: int, point: dict[str, Any], swept: list[str]) -> str:
    suffix = "".join(f",{k}={point[k]}" for k in swept)
    return f"{preset}/s{seed}{suffix}"


def instance_specs(
    suite: Suite,
    inst_set: InstanceSet,
    cache_dir: str | os.PathLike[str] | None = None,
    *,
    hash_files: bool = True,
) -> list[InstanceSpec]:
    """The instances of ``inst_set`` (sweep point by sweep point, seed by seed; or its files).

    ``cache_dir``: the run's instance cache folder, given to generated instances;
    ``hash_files=False`` leaves ``file_sha256`` out (a file the suite's check reads
    through the family's ``load``, where a bad file is a problem it reports).
    """
    specs: list[InstanceSpec] = []
    if inst_set.preset is not None:
        cache = os.path.abspath(cache_dir) if cache_dir is not None else None
        for point in sweep_points(inst_set.params, inst_set.sweep):
            for seed in inst_set.seeds:
                specs.append(
                    InstanceSpec(
                        family=inst_set.family,
                        group=inst_set.group_name,
                        instance_id=_instance_id(
                            inst_set.preset, seed, point, list(inst_set.sweep)
                        ),
                        preset=inst_set.preset,
                        seed=seed,
                        params_json=_canonical(point),
                        cache_dir=cache,
                    )
                )
        return specs
    for pattern in inst_set.files:
        for path in suite.expand_files(pattern):
            try:
                rel = os.path.relpath(path, suite.base_dir)
            except ValueError:
                rel = str(path)
            specs.append(
                InstanceSpec(
                    family=inst_set.family,
                    group=inst_set.group_name,
                    instance_id=rel,
                    file=str(path),
                    file_sha256=_file_sha256(str(path)) if hash_files else None,
                )
            )
    return specs


def expand(suite: Suite, cache_dir: str | os.PathLike[str] | None = None) -> list[Task]:
    """All tasks of a suite, in a stable order (instance set, instance, method, seed).

    A suite of more than ``limits.max_tasks`` tasks is refused before any is built.
    ``cache_dir``: the run's instance cache folder (:mod:`ddlsched.bench.instance_cache`;
    ``None``: workers build every instance).
    """
    from ddlsched import __version__
    from ddlsched.bench.fingerprint import instance_fingerprint, method_fingerprint
    from ddlsched.bench.session import session_payload
    from ddlsched.registry import get_method

    suite.check_size()
    tasks: list[Task] = []
    seen: dict[str, str] = {}  # key -> label
    code_of: dict[tuple[str, str], tuple[Any, ...]] = {}
    for inst_set in suite.instances:
        specs = instance_specs(suite, inst_set, cache_dir)
        for spec in specs:
            for method_spec in suite.methods:
                if suite.family_of(method_spec) != spec.family:
                    continue
                if method_spec.groups and spec.group not in method_spec.groups:
                    continue
                pair = (spec.family, method_spec.name)
                if pair not in code_of:  # once per method: fingerprints, a session's pickle
                    fingerprint = method_fingerprint(*pair)
                    payload = session_payload(*pair)
                    code_of[pair] = (
                        get_method(*pair).kind,
                        fingerprint.digest,
                        instance_fingerprint(spec.family),
                        payload,
                        _canonical(fingerprint.origin()) if payload is not None else None,
                    )
                kind, code, instance_code, payload, origin = code_of[pair]
                time_limit = method_spec.time_limit_s or suite.limits.time_limit_s
                kill_after = method_spec.kill_after_s or suite.limits.kill_deadline(time_limit)
                for label, params in method_spec.variants():
                    for seed in method_spec.seeds:
                        task = Task(
                            suite=suite.name,
                            instance=spec,
                            method=method_spec.name,
                            label=label,
                            kind=kind,
                            params_json=_canonical(params),
                            seed=seed,
                            backend=method_spec.backend or suite.limits.backend,
                            time_limit_s=float(time_limit),
                            kill_after_s=float(kill_after),
                            memory_mb=suite.limits.memory_mb,
                            version=__version__,
                            code_fingerprint=code,
                            instance_code=instance_code,
                            session_method=payload,
                            session_origin=origin,
                        )
                        if task.key in seen:
                            if seen[task.key] == label:  # the same run listed twice
                                continue
                            raise SuiteError(
                                "methods",
                                f"{seen[task.key]!r} and {label!r} run the same tasks (a row is "
                                "identified by instance, method, parameters, seed and backend, "
                                "not by limits): give them different parameters, or "
                                "run one of them into another results directory",
                                suite.source,
                            )
                        seen[task.key] = label
                        tasks.append(task)
    return tasks


# --------------------------------------------------------------------------- execution


def generated_instance(
    spec: InstanceSpec, code: str, *, make_dir: bool = False
) -> tuple[Any, bool]:
    """The generated instance of ``spec`` and whether it was read from the cache.

    Read from ``spec.cache_dir`` when that holds a sound file of it (the key
    under ``code``, the generator's fingerprint), else built from its recipe and
    written there; ``make_dir``:
    create a missing cache folder (the suite's check does; a worker does not, so
    that a remote Dask worker makes no folder on its machine).
    """
    from ddlsched.bench import instance_cache
    from ddlsched.registry import get_family

    fam = get_family(spec.family)
    if spec.cache_dir is None:
        return fam.generate(spec.preset, spec.seed, **spec.params), False
    key, recipe = spec.key(code), spec.recipe()
    instance = instance_cache.load(spec.cache_dir, key, recipe, code, fam.from_dict)
    if instance is not None:
        return instance, True
    instance = fam.generate(spec.preset, spec.seed, **spec.params)
    instance_cache.store(spec.cache_dir, key, recipe, code, instance, make_dir=make_dir)
    return instance, False


@functools.lru_cache(maxsize=64)
def build_instance(spec: InstanceSpec, code: str | None = None) -> Any:
    """The instance of ``spec`` (kept per process: many methods share one instance):
    its file loaded, or the generated instance (:func:`generated_instance`, cached
    under ``code``, default the fingerprint of this process's generator)."""
    from ddlsched.bench.fingerprint import instance_fingerprint
    from ddlsched.registry import get_family

    if spec.file is not None:
        return get_family(spec.family).load(spec.file)
    return generated_instance(spec, code or instance_fingerprint(spec.family))[0]


def instance_size(instance: Any, family: str) -> int | None:
    """The instance's size by its family's declared ``size`` hook (``None``: none declared)."""
    from ddlsched.registry import get_family

    hook = get_family(family).size
    size = hook(instance) if hook is not None else None
    return size if isinstance(size, int) and not isinstance(size, bool) else None


def _scalars(obj: Any) -> dict[str, Any]:
    """Scalar (number, string, bool) attributes of a dataclass or dict, for ``metrics``."""
    import dataclasses

    if obj is None:
        return {}
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        items = {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
    elif isinstance(obj, dict):
        items = obj
    else:
        return {}
    out = {}
    for key, value in items.items():
        if hasattr(value, "item") and callable(value.item) and not isinstance(value, (list, dict)):
            try:
                value = value.item()
            except (TypeError, ValueError):
                continue
        if isinstance(value, (int, float, str, bool)) or value is None:
            out[str(key)] = value
    return out


def _jsonable(value: Any) -> str:
    from ddlsched.solvers.result import _jsonable as to_plain

    try:
        return json.dumps(to_plain(value), sort_keys=True, default=str)
    except (TypeError, ValueError):
        return json.dumps(str(value))


def _base_row(task: Task) -> dict[str, Any]:
    from ddlsched.registry import get_family

    spec = task.instance
    return {
        "key": task.key,
        "suite": task.suite,
        "family": spec.family,
        "group": spec.group,
        "instance_id": spec.instance_id,
        "instance_key": task.instance_key,
        "instance_size": None,
        "preset": spec.preset,
        "instance_seed": spec.seed,
        "instance_params": spec.params_json,
        "instance_file": spec.file,
        "method": task.method,
        "label": task.label,
        "kind": task.kind,
        "params": task.params_json,
        "seed": task.seed,
        "backend": task.backend,
        "time_limit_s": task.time_limit_s,
        "kill_after_s": task.kill_after_s,
        "sense": get_family(spec.family).sense,
        "status": "error",
        "objective": None,
        "bound": None,
        "gap": None,
        "runtime_s": None,
        "solver_time_s": None,
        "time_limit_hit": None,
        "wall_s": None,
        "backend_version": None,
        "num_variables": None,
        "num_integer_variables": None,
        "num_constraints": None,
        "error": None,
        "metrics": "{}",
        "info": "{}",
        "versions": "{}",
        "ddlsched_version": task.version,
        "code_fingerprint": task.code_fingerprint or None,
        "code_origin": None,
        "worker": None,
        "finished_at": None,
    }


def _finish(row: dict[str, Any]) -> dict[str, Any]:
    from ddlsched.solvers.result import versions

    row["versions"] = _canonical(versions())
    row["ddlsched_version"] = versions()["ddlsched"]
    row["finished_at"] = datetime.now(UTC).isoformat(timespec="milliseconds")
    return row


def failure_row(
    task: Task,
    status: str,
    error: str,
    wall_s: float | None,
    instance_size: int | None = None,
    worker: str | None = None,
) -> dict[str, Any]:
    """The row of a task that produced no result (killed, crashed, lost)."""
    row = _base_row(task)
    row.update(
        status=status,
        error=error,
        wall_s=wall_s,
        runtime_s=wall_s,
        time_limit_hit=status == STATUS_TIME_LIMIT,
        instance_size=instance_size,
        worker=worker,
    )
    return _finish(row)


def _finite(value: Any) -> float | None:
    import math

    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def execute(task: Task, on_started: Callable[[int | None], None] | None = None) -> dict[str, Any]:
    """Run ``task`` here and return its row; never raises for a failing method.

    ``on_started(instance_size)`` is called once the instance is built,
    before the method runs (the sandbox reports the size to its parent so
    that a later kill still records it).
    """
    from ddlsched.bench.provenance import code_row
    from ddlsched.bench.session import install_session_method
    from ddlsched.registry import RunOptions, run_method

    started = time.perf_counter()
    row = _base_row(task)
    row["worker"] = f"{socket.gethostname()}:{os.getpid()}"
    try:
        instance = build_instance(task.instance, task.instance_code or None)
        row["instance_size"] = instance_size(instance, task.instance.family)
        if on_started is not None:
            on_started(row["instance_size"])
        options = RunOptions(
            time_limit_s=task.time_limit_s,
            seed=task.seed,
            backend=task.backend,
            params=task.params,
        )
        install_session_method(task)
        row.update(code_row(task))
        result = run_method(task.instance.family, task.method, instance, options)
    except DdlschedError as exc:
        row["error"] = str(exc)
    except MemoryError:
        row["error"] = "MemoryError: the task ran out of memory (limits.memory_mb)"
    except Exception as exc:  # a bug in a method must not stop the suite
        frames = traceback.extract_tb(exc.__traceback__)
        where = f" at {frames[-1].filename}:{frames[-1].lineno}" if frames else ""
        row["error"] = f"{type(exc).__name__}: {exc}{where}"
        log.debug("task %s failed", task.key, exc_info=True)
    else:
        gap = result.gap
        row.update(
            status=str(result.status),
            objective=_finite(result.objective),
            bound=_finite(result.bound),
            gap=_finite(gap),
            runtime_s=float(result.runtime_s),
            solver_time_s=_finite(result.solver_time_s),
            time_limit_hit=bool(result.time_limit_hit),
            backend_version=result.backend_version,
            num_variables=result.num_variables,
            num_integer_variables=result.num_integer_variables,
            num_constraints=result.num_constraints,
            error=result.info.get("error") if result.status == "error" else None,
            metrics=_jsonable(_scalars(result.evaluation)),
            info=_jsonable(result.info),
        )
        if result.backend:
            row["backend"] = result.backend
    row["wall_s"] = time.perf_counter() - started
    if row["runtime_s"] is None:
        row["runtime_s"] = row["wall_s"]
    return _finish(row)
