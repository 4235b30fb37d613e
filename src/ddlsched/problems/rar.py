"""Family ``rar``: RAR-DDLS, offline makespan scheduling of ring-all-reduce jobs.

Paper: Yu, Ji, Rajan, Liu, "On Scheduling Ring-All-Reduce Learning Jobs in
Multi-Tenant GPU Clusters with Communication Contention", MobiHoc 2022;
spec ``docs/families/rar.md``.

This module holds the instance (servers ``O_s``, network, jobs, horizon ``T``,
progress rule) and its JSON form. The timing model of Section 4.1 (Eqs. 6-9)
is :mod:`ddlsched.problems.rar_timing`; the schedule, its JSON and the
evaluator (the one place that computes a ``rar`` schedule's makespan) are
:mod:`ddlsched.problems.rar_schedule`. It imports no solver.

Numeric ranges (ours): the bandwidths ``b_e``, ``b_i`` and the
reduction speed ``C`` lie in ``[1e-9, 1e9]`` (data per slot), ``alpha`` in
``[0, 1e6]``, a job's ``grad_size``, ``batch``, ``fwd_per_sample`` and
``bwd`` in ``[0, 1e9]``; so Eq. (8)'s ``tau_j`` is finite and positive at any
contention (``b_e = 5e-324`` divided by ``f(alpha, k)`` underflowed to 0: a
ZeroDivisionError in every heuristic). A job that cannot do one iteration
per slot under the ``floor`` rule is refused by each method, with one line.

An empty job list is refused with one line ("jobs: at least one job is
needed"; ours): an offline makespan problem without a job has
nothing for a method to decide, and refusing it keeps every method and bound
free of the empty case.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from ddlsched.errors import InvalidInstanceError
from ddlsched.fieldspec import Arr, Const, Field, Int, Num, Obj, Str
from ddlsched.jsonio import (
    JsonInstance,
    check_fields,
    check_header,
    require_int,
    require_number,
)

__all__ = [
    "MAX_GPUS",
    "PROGRESS_RULES",
    "Network",
    "RarInstance",
    "RarJob",
]

PROGRESS_RULES = ("floor", "fractional")
#: The most GPUs an instance may have: schedules name concrete GPUs and every method keeps
#: per-GPU state (arrays, GPU lists), so a cluster of 10^9 GPUs is refused at load time.
MAX_GPUS = 1_000_000
SCHEMA_VERSION = 1


# --------------------------------------------------------------------------- instance


#: Numeric ranges (ours; module docstring, "Numeric ranges").
RATE_RANGE = (1e-9, 1e9)
MAX_ALPHA = 1e6
MAX_JOB_NUMBER = 1e9


def _in_range(value: float, where: str, bounds: tuple[float, float]) -> None:
    low, high = bounds
    if not low <= value <= high:
        raise InvalidInstanceError(
            f"{where}: {value!r} is outside [{low:g}, {high:g}], the range the timing model "
            "holds (ddlsched.problems.rar, 'Numeric ranges')"
        )


@dataclass(frozen=True)
class Network:
    """Cluster network and GPU parameters, all in slot units.

    ``b_e``/``b_i``: inter-/intra-server bandwidth (data per slot); ``C``: GPU
    reduction speed (data per slot); ``alpha >= 0``: contention degradation;
    ``xi1 in (0, 1]``: contention scale (Eq. 7); ``xi2 in (0, 1]``: overhead
    per server (Sec. 4.1, 2-3).
    """

    b_e: float
    b_i: float
    C: float
    alpha: float
    xi1: float
    xi2: float

    def __post_init__(self) -> None:
        for name in ("b_e", "b_i", "C"):
            require_number(getattr(self, name), f"network.{name}", minimum=0, strict=True)
            _in_range(getattr(self, name), f"network.{name}", RATE_RANGE)
        require_number(self.alpha, "network.alpha", minimum=0)
        _in_range(self.alpha, "network.alpha", (0.0, MAX_ALPHA))
        if self.b_i < self.b_e:
            # The model (and every bound) assumes that keeping a ring inside one
            # server is never slower than crossing servers (spec: b_i >> b_e).
            raise InvalidInstanceError(
                f"network.b_i: intra-server bandwidth {self.b_i!r} must be >= b_e {self.b_e!r}"
            )
        for name in ("xi1", "xi2"):
            value = require_number(getattr(self, name), f"network.{name}", minimum=0, strict=True)
            if value > 1:
                raise InvalidInstanceError(f"network.{name}: must be in (0, 1], got {value!r}")


@dataclass(frozen=True)
class RarJob:
    """One RAR training job (gang of ``gpus`` workers, ``iterations`` iterations).

    ``grad_size`` is ``m_j`` (data), ``batch`` is ``M_j`` (samples),
    ``fwd_per_sample`` is ``df_j`` and ``bwd`` is ``db_j`` (slots).
    """

    id: str
    gpus: int
    iterations: int
    grad_size: float
    batch: float
    fwd_per_sample: float
    bwd: float

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id:
            raise InvalidInstanceError(f"job id: expected a non-empty string, got {self.id!r}")
        where = f"job {self.id!r}"
        require_int(self.gpus, f"{where}.gpus", minimum=1)
        require_int(self.iterations, f"{where}.iterations", minimum=1)
        require_number(self.grad_size, f"{where}.grad_size", minimum=0)
        require_number(self.batch, f"{where}.batch", minimum=0, strict=True)
        require_number(self.fwd_per_sample, f"{where}.fwd_per_sample", minimum=0)
        require_number(self.bwd, f"{where}.bwd", minimum=0)
        for name in ("grad_size", "batch", "fwd_per_sample", "bwd"):
            _in_range(getattr(self, name), f"{where}.{name}", (0.0, MAX_JOB_NUMBER))


def _rate(title: str, description: str) -> Field:
    return Field(Num(RATE_RANGE[0], RATE_RANGE[1]), title, description)


def _job_number(title: str, description: str, exclusive: bool = False) -> Field:
    return Field(Num(0.0, MAX_JOB_NUMBER, exclusive=exclusive), title, description)


NETWORK_SPEC = Obj(
    {
        "b_e": _rate("b_e", "inter-server bandwidth (data per slot); b_i >= b_e"),
        "b_i": _rate("b_i", "intra-server bandwidth (data per slot)"),
        "C": _rate("C", "GPU reduction speed (data per slot)"),
        "alpha": Field(Num(0.0, MAX_ALPHA), "alpha", "contention degradation (Eq. 7)"),
        "xi1": Field(Num(0.0, 1.0, exclusive=True), "xi1", "contention scale in (0, 1] (Eq. 7)"),
        "xi2": Field(Num(0.0, 1.0, exclusive=True), "xi2", "overhead per server in (0, 1]"),
    }
)
JOB_SPEC = Obj(
    {
        "id": Field(Str(non_empty=True), "job id", "unique among the jobs"),
        "gpus": Field(Int(1), "GPUs", "gang size: workers of the ring, at most the cluster's"),
        "iterations": Field(Int(1), "iterations", "training iterations to run"),
        "grad_size": _job_number("m_j", "gradient size (data)"),
        "batch": _job_number("M_j", "mini-batch size (samples), > 0", exclusive=True),
        "fwd_per_sample": _job_number("df_j", "forward time per sample (slots)"),
        "bwd": _job_number("db_j", "backward time per mini-batch (slots)"),
    }
)
#: The JSON format of a ``rar`` instance (:mod:`ddlsched.fieldspec`): the loader's field
#: names and ranges; ``ddlsched instance schema rar`` prints it as a JSON Schema.
FIELD_SPEC = Obj(
    {
        "family": Field(Const("rar"), "family", "the problem family of the file"),
        "schema_version": Field(Const(SCHEMA_VERSION), "schema version", "format version"),
        "servers": Field(
            Arr(Int(1, MAX_GPUS), min_items=1),
            "servers",
            f"GPUs per server (O_s); at most {MAX_GPUS:,} GPUs in all",
        ),
        "network": Field(NETWORK_SPEC, "network", "cluster network and GPU parameters (slots)"),
        "jobs": Field(Arr(JOB_SPEC, min_items=1, independent=True), "jobs", "the jobs to schedule"),
        "horizon": Field(Int(1), "horizon", "T: the number of time slots"),
        "progress": Field(
            Str(choices=PROGRESS_RULES),
            "progress rule",
            "floor: whole iterations per slot; fractional: fractions count",
            required=False,
            default="floor",
        ),
    }
)


@dataclass(frozen=True)
class RarInstance(JsonInstance):
    """A RAR-DDLS instance: servers, network, jobs, horizon ``T`` and progress rule."""

    servers: tuple[int, ...]
    network: Network
    jobs: tuple[RarJob, ...]
    horizon: int
    progress: str = "floor"

    family: ClassVar[str] = "rar"
    FIELD_SPEC: ClassVar[Obj] = FIELD_SPEC

    def __post_init__(self) -> None:
        object.__setattr__(self, "servers", tuple(self.servers))
        object.__setattr__(self, "jobs", tuple(self.jobs))
        if not self.servers:
            raise InvalidInstanceError("servers: at least one server is needed")
        for s, cap in enumerate(self.servers):
            require_int(cap, f"servers[{s}]", minimum=1, maximum=MAX_GPUS)
        if sum(self.servers) > MAX_GPUS:
            raise InvalidInstanceError(
                f"servers: {sum(self.servers):,} GPUs in all, more than the {MAX_GPUS:,} "
                "ddlsched models (every method keeps per-GPU state)"
            )
        if not isinstance(self.network, Network):
            raise InvalidInstanceError("network: expected a Network")
        if not self.jobs:
            raise InvalidInstanceError("jobs: at least one job is needed")
        seen: set[str] = set()
        total = sum(self.servers)
        for job in self.jobs:
            if not isinstance(job, RarJob):
                raise InvalidInstanceError("jobs: expected RarJob entries")
            if job.id in seen:
                raise InvalidInstanceError(f"jobs: duplicate job id {job.id!r}")
            seen.add(job.id)
            if job.gpus > total:
                raise InvalidInstanceError(
                    f"job {job.id!r}.gpus: requests {job.gpus} GPUs but the cluster has {total}"
                )
        require_int(self.horizon, "horizon", minimum=1)
        if self.progress not in PROGRESS_RULES:
            raise InvalidInstanceError(
                f"progress: must be one of {', '.join(PROGRESS_RULES)}, got {self.progress!r}"
            )

    # -- derived quantities -------------------------------------------------

    @property
    def num_servers(self) -> int:
        return len(self.servers)

    @property
    def num_gpus(self) -> int:
        return sum(self.servers)

    @property
    def gpu_ids(self) -> list[tuple[int, int]]:
        """All GPU ids ``(server, gpu)`` in server order."""
        return [(s, g) for s, cap in enumerate(self.servers) for g in range(cap)]

    def job_index(self) -> dict[str, int]:
        return {job.id: i for i, job in enumerate(self.jobs)}

    # -- JSON -------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        net = self.network
        return {
            "family": "rar",
            "schema_version": SCHEMA_VERSION,
            "servers": list(self.servers),
            "network": {
                "b_e": net.b_e,
                "b_i": net.b_i,
                "C": net.C,
                "alpha": net.alpha,
                "xi1": net.xi1,
                "xi2": net.xi2,
            },
            "jobs": [
                {
                    "id": j.id,
                    "gpus": j.gpus,
                    "iterations": j.iterations,
                    "grad_size": j.grad_size,
                    "batch": j.batch,
                    "fwd_per_sample": j.fwd_per_sample,
                    "bwd": j.bwd,
                }
                for j in self.jobs
            ],
            "horizon": self.horizon,
            "progress": self.progress,
        }

    @classmethod
    def from_dict(cls, data: Any) -> RarInstance:
        """Build an instance from the spec's JSON format; unknown fields are an error."""
        data = check_fields(data, "rar instance", *FIELD_SPEC.field_names)
        check_header(data, "rar", SCHEMA_VERSION)
        if not isinstance(data["servers"], list):
            raise InvalidInstanceError("servers: expected a list of GPU counts")
        net = check_fields(data["network"], "network", *NETWORK_SPEC.field_names)
        network = Network(**{k: require_number(net[k], f"network.{k}") for k in net})
        if not isinstance(data["jobs"], list):
            raise InvalidInstanceError("jobs: expected a list of job objects")
        jobs = []
        for i, raw in enumerate(data["jobs"]):
            fields = check_fields(raw, f"jobs[{i}]", *JOB_SPEC.field_names)
            jobs.append(RarJob(**fields))
        return cls(
            servers=tuple(data["servers"]),
            network=network,
            jobs=tuple(jobs),
            horizon=data["horizon"],
            progress=data.get("progress", "floor"),
        )


def instance_from_parts(
    servers: Iterable[int],
    network: Mapping[str, float],
    jobs: Iterable[Mapping[str, Any]],
    horizon: int,
    progress: str = "floor",
) -> RarInstance:
    """Convenience constructor from plain dicts (tests, notebooks)."""
    return RarInstance(
        servers=tuple(servers),
        network=Network(**network),
        jobs=tuple(RarJob(**job) for job in jobs),
        horizon=horizon,
        progress=progress,
    )
