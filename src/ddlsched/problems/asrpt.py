"""Family ``asrpt``: online scheduling of pipeline-parallel jobs with predicted sizes.

Paper: "Prediction-Assisted Online Distributed Deep Learning Workload
Scheduling in GPU Clusters" (Luo, Liu, Lee, Shroff),
Section III (model: Eqs. 1-3 and 8); spec ``docs/families/asrpt.md`` (the
spec wins over the paper).

This module holds the instance: the cluster, the job configurations
(stored once per instance, referenced by jobs), the jobs with their true and
predicted iterations, their JSON form (:meth:`AsrptInstance.load`,
:meth:`AsrptInstance.save`) and the timing model: a job's per-iteration
time ``alpha_i`` (:func:`job_alpha`) is the ``placement`` family's (Eqs.
4-7), recomputed by :func:`ddlsched.problems.placement.evaluate` on the
job's own per-server GPU counts: each stage reserves ``x / g * B_inter`` of
its servers' NICs, so there is no inter-job contention. The schedule, the
evaluator (``sum_i C_i`` of Eq. 8 and the other metrics) and the schedule's
JSON form are :mod:`ddlsched.problems.asrpt_schedule`. It imports no solver
and no algorithm.

Choices the spec leaves open (written down here):

* The per-configuration constants (``alpha~_min``, ``alpha_max``, the
  communication-heavy class; spec "Instance") need Heavy-Edge, an
  algorithm, so they are computed in :mod:`ddlsched.heuristics.asrpt_config`
  (and ``alpha_lb`` in :mod:`ddlsched.models.asrpt`), cached per
  configuration and cluster; :func:`job_placement_instance` is the bridge
  to the ``placement`` family they all use.
* ``epsilon_bar`` (Eq. 9, iterations) and the prediction-error
  distribution are properties of the instance (:func:`prediction_error`),
  copied into every evaluation by the evaluator.

An empty job list is refused with one line ("jobs: at least one job is
needed"; ours): the competitive ratio of no job is undefined, and
the trace presets never make an empty window.

Numeric ranges (ours; checked on every instance, one line naming
the field): ``time_unit_s`` in ``[1e-9, 1e9]``; a job's ``arrival_s``,
``iterations`` and ``predicted_iterations`` at most ``1e12`` (completion
times then stay below ``1e17`` s, sums of 100,000 of them finite and exact
to far below a second); the stages' times and sizes are the ``placement``
family's (a stage of at most ``1e5`` s per iteration). A job whose
configuration needs more GPUs than the cluster has is refused, naming it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, ClassVar

import numpy as np

from ddlsched.errors import InfeasibleScheduleError, InvalidInstanceError
from ddlsched.fieldspec import Arr, Const, Field, FreeObj, Int, Map, Num, Obj, Str
from ddlsched.jsonio import (
    JsonInstance,
    check_fields,
    check_header,
    require_int,
    require_number,
)
from ddlsched.problems.placement import (
    ALLREDUCE_KINDS,
    STAGE_SPEC,
    Placement,
    PlacementInstance,
    Stage,
    stages_from_json,
    stages_to_json,
)
from ddlsched.problems.placement import evaluate as evaluate_placement

__all__ = [
    "MAX_CLUSTER_GPUS",
    "SCHEMA_VERSION",
    "AsrptInstance",
    "Cluster",
    "Job",
    "JobConfig",
    "job_alpha",
    "job_placement_instance",
    "prediction_error",
]

SCHEMA_VERSION = 1
#: Numeric ranges (module docstring).
TIME_UNIT_RANGE = (1e-9, 1e9)
MAX_JOB_NUMBER = 1e12
#: Largest cluster accepted (``G = M g``): the paper's is 2,000 GPUs; the
#: simulator and the exact model keep state per server.
MAX_CLUSTER_GPUS = 1_000_000
#: Shares of jobs by relative prediction error (spec, "Prediction"): the bins'
#: upper edges as fractions of ``n`` (``0`` exact, ``inf`` the rest).
ERROR_BINS = (("exact", 0.0), ("le_10pct", 0.1), ("le_50pct", 0.5), ("le_100pct", 1.0))


# --------------------------------------------------------------------------- instance


def _in_range(value: float, where: str, low: float, high: float) -> None:
    if not low <= value <= high:
        raise InvalidInstanceError(
            f"{where}: {value:.6g} is outside [{low:g}, {high:g}], the range the evaluator and "
            "the exact model hold (ddlsched.problems.asrpt, 'Numeric ranges')"
        )


CLUSTER_SPEC = Obj(
    {
        "servers": Field(Int(1), "M", f"servers; M g <= {MAX_CLUSTER_GPUS:,} GPUs"),
        "gpus_per_server": Field(Int(1), "g", "GPUs per server"),
        "b_inter": Field(Num(0.0, exclusive=True), "B_inter", "NIC bandwidth (bytes/s)"),
        "b_intra": Field(
            Num(0.0, exclusive=True), "B_intra", "intra-server bandwidth (bytes/s), >= B_inter / g"
        ),
    }
)
CONFIG_SPEC = Obj(
    {
        "allreduce": Field(Str(choices=ALLREDUCE_KINDS), "AllReduce", "rar: ring; tar: tree"),
        "stages": Field(Arr(STAGE_SPEC, min_items=1), "stages", "pipeline stages (placement's)"),
        "description": Field(Str(), "description", "where it comes from", required=False),
    }
)
JOB_SPEC = Obj(
    {
        "id": Field(Str(non_empty=True), "job id", "unique among the jobs"),
        "arrival_s": Field(Num(0.0, MAX_JOB_NUMBER), "r_i", "arrival time (s)"),
        "config": Field(Str(non_empty=True), "configuration", "a name of configs"),
        "iterations": Field(
            Int(1, int(MAX_JOB_NUMBER)), "n_i", "true iterations (revealed at completion)"
        ),
        "predicted_iterations": Field(
            Num(0.0, MAX_JOB_NUMBER), "predicted n_i", "the scheduler's prediction of n_i"
        ),
        "group": Field(Str(), "group", "prediction group key (provenance)", required=False),
        "features": Field(FreeObj(), "features", "meta-features (provenance)", required=False),
        "model": Field(Str(), "model", "model name (provenance)", required=False),
    }
)
#: The JSON format of an ``asrpt`` instance (``ddlsched instance schema asrpt``).
FIELD_SPEC = Obj(
    {
        "family": Field(Const("asrpt"), "family", "the problem family of the file"),
        "schema_version": Field(Const(SCHEMA_VERSION), "schema version", "format version"),
        "cluster": Field(CLUSTER_SPEC, "cluster", "M servers of g GPUs"),
        "time_unit_s": Field(
            Num(*TIME_UNIT_RANGE),
            "time unit",
            "the exact model's integer time grid (s)",
            required=False,
            default=0.001,
        ),
        "configs": Field(
            Map(CONFIG_SPEC, min_items=1), "configurations", "named job configurations"
        ),
        "jobs": Field(Arr(JOB_SPEC, min_items=1, independent=True), "jobs", "in arrival order"),
        "provenance": Field(FreeObj(), "provenance", "trace, window, predictor", required=False),
    }
)


@dataclass(frozen=True)
class Cluster:
    """``servers`` (``M``) of ``gpus_per_server`` (``g``) GPUs; bandwidths in bytes/s."""

    servers: int
    gpus_per_server: int
    b_inter: float
    b_intra: float

    def __post_init__(self) -> None:
        require_int(self.servers, "cluster.servers", minimum=1)
        g = require_int(self.gpus_per_server, "cluster.gpus_per_server", minimum=1)
        require_number(self.b_inter, "cluster.b_inter", minimum=0, strict=True)
        require_number(self.b_intra, "cluster.b_intra", minimum=0, strict=True)
        if self.servers * g > MAX_CLUSTER_GPUS:
            raise InvalidInstanceError(
                f"cluster: {self.servers} servers x {g} GPUs = {self.servers * g} GPUs exceeds "
                f"the limit of {MAX_CLUSTER_GPUS} (the simulator keeps state per server)"
            )
        if self.b_intra < self.b_inter / g:
            raise InvalidInstanceError(
                f"cluster.b_intra: {self.b_intra:.6g} B/s is below b_inter / g = "
                f"{self.b_inter / g:.6g} B/s (the model needs B_intra >= B_inter / g, "
                "so that no placement is slower than alpha_max)"
            )

    @property
    def num_gpus(self) -> int:
        """``G = M g``."""
        return self.servers * self.gpus_per_server

    def to_dict(self) -> dict[str, Any]:
        return {
            "servers": self.servers,
            "gpus_per_server": self.gpus_per_server,
            "b_inter": self.b_inter,
            "b_intra": self.b_intra,
        }


@dataclass(frozen=True)
class JobConfig:
    """A pipeline-parallel job configuration in the ``placement`` format.

    ``g_i = sum_s k_s`` (:attr:`num_gpus`); ``description`` says where it
    comes from (model, profile, stand-in), entering no formula.
    """

    allreduce: str
    stages: tuple[Stage, ...]
    description: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "stages", tuple(self.stages))

    @property
    def num_gpus(self) -> int:
        return sum(stage.replicas for stage in self.stages)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "allreduce": self.allreduce,
            "stages": stages_to_json(self.stages),
        }
        if self.description:
            out["description"] = self.description
        return out

    @classmethod
    def from_dict(cls, data: Any, where: str) -> JobConfig:
        data = check_fields(data, where, *CONFIG_SPEC.field_names)
        stages = stages_from_json(data["stages"], f"{where}.stages")
        description = data.get("description", "")
        if not isinstance(description, str):
            raise InvalidInstanceError(f"{where}.description: expected a string")
        return cls(allreduce=data["allreduce"], stages=tuple(stages), description=description)


@dataclass(frozen=True)
class Job:
    """One job: arrival ``r_i`` (s), configuration name, true iterations ``n_i``
    (revealed at completion), predicted iterations ``n~_i``, the group key and
    meta-feature values behind the prediction (provenance only) and an
    optional model name."""

    id: str
    arrival_s: float
    config: str
    iterations: int
    predicted_iterations: float
    group: str = ""
    features: Mapping[str, Any] = field(default_factory=dict)
    model: str = ""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "arrival_s": self.arrival_s,
            "config": self.config,
            "iterations": self.iterations,
            "predicted_iterations": self.predicted_iterations,
        }
        if self.group:
            out["group"] = self.group
        if self.features:
            out["features"] = dict(self.features)
        if self.model:
            out["model"] = self.model
        return out


@dataclass(frozen=True)
class AsrptInstance(JsonInstance):
    """A cluster, named configurations and jobs (spec ``asrpt.md``, "Instance").

    ``time_unit_s`` is the integer time grid of the exact model (default
    1 ms); ``provenance`` (trace, window, predictor, seed, prediction-error
    statistics) enters no formula. Jobs are kept in file order.
    """

    cluster: Cluster
    configs: Mapping[str, JobConfig]
    jobs: tuple[Job, ...]
    time_unit_s: float = 0.001
    provenance: Mapping[str, Any] = field(default_factory=dict)

    family: ClassVar[str] = "asrpt"
    FIELD_SPEC: ClassVar[Obj] = FIELD_SPEC
    __hash__ = None  # equality by value; configs and provenance are dicts

    def __post_init__(self) -> None:
        object.__setattr__(self, "jobs", tuple(self.jobs))
        object.__setattr__(self, "configs", dict(self.configs))
        if not isinstance(self.cluster, Cluster):
            raise InvalidInstanceError("cluster: expected a Cluster")
        require_number(self.time_unit_s, "time_unit_s", minimum=0, strict=True)
        _in_range(self.time_unit_s, "time_unit_s", *TIME_UNIT_RANGE)
        if not isinstance(self.provenance, Mapping):
            raise InvalidInstanceError("provenance: expected a JSON object")
        if not self.configs:
            raise InvalidInstanceError("configs: at least one configuration is needed")
        for name, config in self.configs.items():
            self._check_config(name, config)
        if not self.jobs:
            raise InvalidInstanceError("jobs: at least one job is needed")
        seen: set[str] = set()
        for i, job in enumerate(self.jobs):
            self._check_job(i, job)
            if job.id in seen:
                raise InvalidInstanceError(f"jobs[{i}].id: duplicate job id {job.id!r}")
            seen.add(job.id)

    def _check_config(self, name: str, config: JobConfig) -> None:
        where = f"configs[{name!r}]"
        if not isinstance(name, str) or not name:
            raise InvalidInstanceError(f"{where}: configuration names must be non-empty strings")
        if not isinstance(config, JobConfig):
            raise InvalidInstanceError(f"{where}: expected a JobConfig")
        if config.allreduce not in ALLREDUCE_KINDS:
            raise InvalidInstanceError(
                f"{where}.allreduce: must be one of {', '.join(ALLREDUCE_KINDS)}, "
                f"got {config.allreduce!r}"
            )
        if not config.stages:
            raise InvalidInstanceError(f"{where}.stages: at least one stage is needed")
        for s, stage in enumerate(config.stages):
            if not isinstance(stage, Stage):
                raise InvalidInstanceError(f"{where}.stages[{s}]: expected a Stage")
            stage.validate(f"{where}.stages[{s}]")
        # a configuration larger than the cluster is refused with the first job using it
        # (_check_job), naming the job; checked here on the largest part that fits
        packed = _packed(self.cluster, config)[: self.cluster.servers]
        try:  # the placement family's checks (boundary consistency, time scale)
            if sum(packed) >= config.num_gpus:
                job_placement_instance(self.cluster, config, packed)
        except InvalidInstanceError as exc:
            raise InvalidInstanceError(f"{where}: {exc}") from None

    def _check_job(self, i: int, job: Job) -> None:
        where = f"jobs[{i}]"
        if not isinstance(job, Job):
            raise InvalidInstanceError(f"{where}: expected a Job")
        if not isinstance(job.id, str) or not job.id:
            raise InvalidInstanceError(f"{where}.id: expected a non-empty string, got {job.id!r}")
        require_number(job.arrival_s, f"{where}.arrival_s (job {job.id})", minimum=0)
        if not isinstance(job.config, str) or job.config not in self.configs:
            raise InvalidInstanceError(
                f"{where}.config: unknown configuration {job.config!r} (job {job.id})"
            )
        gpus = self.configs[job.config].num_gpus
        if gpus > self.cluster.num_gpus:
            raise InvalidInstanceError(
                f"{where}: job {job.id} needs {gpus} GPUs (configuration {job.config!r}), "
                f"the cluster has {self.cluster.num_gpus}: it can never run"
            )
        require_int(job.iterations, f"{where}.iterations (job {job.id})", minimum=1)
        require_number(
            job.predicted_iterations, f"{where}.predicted_iterations (job {job.id})", minimum=0
        )
        for name in ("arrival_s", "iterations", "predicted_iterations"):
            _in_range(getattr(job, name), f"{where}.{name} (job {job.id})", 0.0, MAX_JOB_NUMBER)
        if not isinstance(job.group, str) or not isinstance(job.model, str):
            raise InvalidInstanceError(f"{where}: group and model must be strings (job {job.id})")
        if not isinstance(job.features, Mapping):
            raise InvalidInstanceError(f"{where}.features: expected a JSON object (job {job.id})")

    # -- derived ----------------------------------------------------------------

    @property
    def num_jobs(self) -> int:
        return len(self.jobs)

    def gpus(self, job: Job) -> int:
        """``g_i`` of ``job``."""
        return self.configs[job.config].num_gpus

    @property
    def max_gpus(self) -> int:
        """``g_max = max_i g_i``."""
        return max(self.gpus(job) for job in self.jobs)

    # -- JSON -------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "family": "asrpt",
            "schema_version": SCHEMA_VERSION,
            "cluster": self.cluster.to_dict(),
            "time_unit_s": self.time_unit_s,
            "configs": {name: config.to_dict() for name, config in self.configs.items()},
            "jobs": [job.to_dict() for job in self.jobs],
        }
        if self.provenance:
            out["provenance"] = dict(self.provenance)
        return out

    @classmethod
    def from_dict(cls, data: Any) -> AsrptInstance:
        """Build an instance from the spec's JSON format; unknown fields are an error."""
        data = check_fields(data, "asrpt instance", *FIELD_SPEC.field_names)
        check_header(data, "asrpt", SCHEMA_VERSION)
        raw = check_fields(data["cluster"], "cluster", *CLUSTER_SPEC.field_names)
        cluster = Cluster(
            servers=raw["servers"],
            gpus_per_server=raw["gpus_per_server"],
            b_inter=require_number(raw["b_inter"], "cluster.b_inter"),
            b_intra=require_number(raw["b_intra"], "cluster.b_intra"),
        )
        if not isinstance(data["configs"], Mapping):
            raise InvalidInstanceError("configs: expected an object of named configurations")
        configs = {
            name: JobConfig.from_dict(raw_cfg, f"configs[{name!r}]")
            for name, raw_cfg in data["configs"].items()
        }
        if not isinstance(data["jobs"], list):
            raise InvalidInstanceError("jobs: expected a list of job objects")
        jobs = []
        for i, raw_job in enumerate(data["jobs"]):
            fields = check_fields(raw_job, f"jobs[{i}]", *JOB_SPEC.field_names)
            jobs.append(
                Job(
                    id=fields["id"],
                    arrival_s=fields["arrival_s"],
                    config=fields["config"],
                    iterations=fields["iterations"],
                    predicted_iterations=fields["predicted_iterations"],
                    group=fields.get("group", ""),
                    features=fields.get("features", {}),
                    model=fields.get("model", ""),
                )
            )
        return cls(
            cluster=cluster,
            configs=configs,
            jobs=tuple(jobs),
            time_unit_s=data.get("time_unit_s", 0.001),
            provenance=data.get("provenance", {}),
        )


def _packed(cluster: Cluster, config: JobConfig) -> tuple[int, ...]:
    full, rest = divmod(config.num_gpus, cluster.gpus_per_server)
    return (cluster.gpus_per_server,) * full + ((rest,) if rest else ())


def job_placement_instance(
    cluster: Cluster, config: JobConfig, available: Sequence[int]
) -> PlacementInstance:
    """The ``placement`` instance of ``config`` on servers offering ``available`` GPUs."""
    return _placement_instance(cluster, config, tuple(int(a) for a in available))


@lru_cache(maxsize=65536)
def _placement_instance(
    cluster: Cluster, config: JobConfig, available: tuple[int, ...]
) -> PlacementInstance:
    return PlacementInstance(
        gpus_per_server=cluster.gpus_per_server,
        b_inter=cluster.b_inter,
        b_intra=cluster.b_intra,
        available=available,
        allreduce=config.allreduce,
        stages=config.stages,
    )


def job_alpha(cluster: Cluster, config: JobConfig, counts: tuple[tuple[int, ...], ...]) -> float:
    """``alpha`` of ``config`` placed with ``counts[s][k]`` replicas of stage ``s`` on
    the job's ``k``-th server (only the job's own servers; Eqs. 4-7)."""
    return _alpha(cluster, config, counts)


@lru_cache(maxsize=65536)
def _alpha(cluster: Cluster, config: JobConfig, counts: tuple[tuple[int, ...], ...]) -> float:
    width = len(counts[0]) if counts else 0
    per_server = tuple(sum(row[k] for row in counts) for k in range(width))
    if any(v < 1 for v in per_server):
        raise InfeasibleScheduleError("a listed server holds no replica of the job")
    instance = job_placement_instance(cluster, config, per_server)
    return evaluate_placement(instance, Placement(counts)).iteration_time_s


def prediction_error(instance: AsrptInstance) -> dict[str, float]:
    """``epsilon_bar`` (Eq. 9: ``sum_i |n_i - n~_i| / I``, iterations), the unseen share
    (``n~_i = 0``) and the shares of jobs by relative error ``|n - n~| / n``."""
    n = np.array([job.iterations for job in instance.jobs], dtype=float)
    pred = np.array([job.predicted_iterations for job in instance.jobs], dtype=float)
    err = np.abs(n - pred)
    rel = err / n
    out = {
        "epsilon_bar": float(err.mean()),
        "epsilon": float(err.sum()),
        "unseen_share": float(np.mean(pred == 0)),
    }
    lower = -math.inf
    for name, edge in ERROR_BINS:
        out[f"error_{name}"] = float(np.mean((rel > lower) & (rel <= edge)))
        lower = edge
    out["error_gt_100pct"] = float(np.mean(rel > 1.0))
    return out
