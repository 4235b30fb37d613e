"""Family ``muri``: multi-resource interleaving of DL training jobs (grouping problem).

Paper: Zhao et al., "Multi-Resource Interleaving for Deep Learning Training",
SIGCOMM 2022 (Sections 4.1-4.2, Algorithm 1);
spec ``docs/families/muri.md`` (the spec wins over the paper).

This module holds the grouping instance (jobs with a GPU count and a
per-iteration time on each of ``k`` resource types, used in the cyclic order
``0, 1, ..., k-1``), the interleaving timing model, the grouping type and the
evaluator: the ONE place that computes a grouping's objective. It imports no
solver.

Timing model (Eqs. 1-4):

* A group of ``p <= k`` jobs is placed at distinct stage offsets ``o_i``; the
  job at offset ``o`` uses resource ``(o + j) mod k`` in phase ``j``. One
  interleaved round lasts (Eq. 3)
  ``T = sum_{j=0}^{k-1} max_i t[i][(o_i + j) mod k]``;
  the best offsets are found by enumeration. ``T`` depends only on the
  offsets relative to the first job, so ``o_0 = 0`` and the others range
  over the ``(k-1)!/(k-p)!`` injective choices of ``{1, ..., k-1}``.
* Efficiency (Eq. 4): ``gamma = 1 - (1/k) sum_j (T - sum_i t[i][j]) / T``.
  A job alone has ``T = sum_j t[i][j]`` and ``gamma = 1/k``.
* Every member of a group completes one iteration per ``T``.

Choices the spec leaves open (written down here):

* A *grouping* is a partition of the jobs into groups of at most
  ``max_group_size`` (default ``k``) jobs of equal GPU count (the bucket
  rule of Sec. 4.2); singletons are allowed.
* The family objective (``efficiency``, maximised) is the sum of ``gamma``
  over the groups of two or more jobs: a job left alone is not a group and
  contributes 0, exactly as an unmatched vertex contributes nothing to a
  maximum-weight matching (so for ``k = 2`` Blossom's matching weight *is*
  the objective). The second objective (``period``, minimised) is the sum of
  ``T`` over all groups, singletons included (the time for every job to do
  one iteration, summed over groups); the evaluator always reports both.
* Ties in the offset enumeration keep the lexicographically first offsets.
* Times are in whatever unit the instance uses (the traces: ms); ``gamma``
  is unit-free.

An empty job list is refused with one line ("jobs: at least one job is
needed"; ours): a grouping of no jobs has no efficiency to report.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, ClassVar

import numpy as np

from ddlsched.errors import InfeasibleScheduleError, InvalidInstanceError
from ddlsched.fieldspec import AnyOf, Arr, Const, Field, Int, Null, Num, Obj, Str
from ddlsched.jsonio import (
    JsonInstance,
    check_fields,
    check_header,
    require_int,
    require_number,
)

__all__ = [
    "OBJECTIVES",
    "SCHEMA_VERSION",
    "GroupStats",
    "MuriGrouping",
    "MuriGroupingEvaluation",
    "MuriGroupingInstance",
    "MuriJob",
    "best_interleaving",
    "best_periods",
    "efficiency",
    "evaluate",
    "group_efficiencies",
    "grouping_from_json",
    "grouping_to_json",
    "interleaving_period",
    "offset_choices",
]

SCHEMA_VERSION = 1
OBJECTIVES = ("efficiency", "period")


# --------------------------------------------------------------------------- instance


@dataclass(frozen=True)
class MuriJob:
    """One job: its id, GPU count (a power of two) and per-resource iteration times."""

    id: str
    gpus: int
    times: tuple[float, ...]

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id:
            raise InvalidInstanceError(f"job id: expected a non-empty string, got {self.id!r}")
        where = f"job {self.id!r}"
        require_int(self.gpus, f"{where}.gpus", minimum=1)
        if self.gpus & (self.gpus - 1):
            raise InvalidInstanceError(f"{where}.gpus: must be a power of two, got {self.gpus}")
        if isinstance(self.times, (str, bytes)) or not isinstance(self.times, Iterable):
            raise InvalidInstanceError(f"{where}.times: expected a list of numbers")
        times = tuple(
            require_number(t, f"{where}.times[{j}]", minimum=0) for j, t in enumerate(self.times)
        )
        if not times:
            raise InvalidInstanceError(f"{where}.times: at least one resource time is needed")
        if sum(times) <= 0:
            raise InvalidInstanceError(f"{where}.times: the times must not all be 0")
        object.__setattr__(self, "times", times)

    @property
    def solo_period(self) -> float:
        """``T`` of the job alone: the sum of its resource times."""
        return float(sum(self.times))


JOB_SPEC = Obj(
    {
        "id": Field(Str(non_empty=True), "job id", "unique among the jobs"),
        "gpus": Field(Int(1), "GPUs", "GPU count, a power of two (only equal counts group)"),
        "times": Field(
            Arr(Num(0.0), min_items=1),
            "resource times",
            "time per iteration on each resource (num_resources of them, not all 0)",
        ),
    }
)
#: The JSON format of a ``muri`` instance (``ddlsched instance schema muri``).
FIELD_SPEC = Obj(
    {
        "family": Field(Const("muri"), "family", "the problem family of the file"),
        "schema_version": Field(Const(SCHEMA_VERSION), "schema version", "format version"),
        "name": Field(Str(), "name", "free text", required=False, default=""),
        "num_resources": Field(Int(1), "k", "resources a job's iteration cycles through"),
        "max_group_size": Field(
            AnyOf((Int(1), Null())),
            "max group size",
            "most jobs in a group, <= num_resources (default: num_resources)",
            required=False,
        ),
        "jobs": Field(Arr(JOB_SPEC, min_items=1, independent=True), "jobs", "the jobs to group"),
    }
)


@dataclass(frozen=True)
class MuriGroupingInstance(JsonInstance):
    """Jobs to group; ``num_resources`` is ``k``; groups hold at most ``max_group_size`` jobs."""

    jobs: tuple[MuriJob, ...]
    num_resources: int
    max_group_size: int | None = None
    name: str = ""

    family: ClassVar[str] = "muri"
    FIELD_SPEC: ClassVar[Obj] = FIELD_SPEC

    def __post_init__(self) -> None:
        object.__setattr__(self, "jobs", tuple(self.jobs))
        require_int(self.num_resources, "num_resources", minimum=1)
        if self.max_group_size is None:
            object.__setattr__(self, "max_group_size", self.num_resources)
        require_int(self.max_group_size, "max_group_size", minimum=1)
        if self.max_group_size > self.num_resources:
            raise InvalidInstanceError(
                f"max_group_size: at most num_resources = {self.num_resources} jobs can be "
                f"interleaved at distinct offsets, got {self.max_group_size}"
            )
        if not isinstance(self.name, str):
            raise InvalidInstanceError(f"name: expected a string, got {self.name!r}")
        if not self.jobs:
            raise InvalidInstanceError("jobs: at least one job is needed")
        seen: set[str] = set()
        for job in self.jobs:
            if not isinstance(job, MuriJob):
                raise InvalidInstanceError("jobs: expected MuriJob entries")
            if job.id in seen:
                raise InvalidInstanceError(f"jobs: duplicate job id {job.id!r}")
            seen.add(job.id)
            if len(job.times) != self.num_resources:
                raise InvalidInstanceError(
                    f"job {job.id!r}.times: expected {self.num_resources} resource times "
                    f"(num_resources), got {len(job.times)}"
                )
        # periods and efficiencies add up to max_group_size * k of these times: keep them finite
        total = sum(sum(job.times) for job in self.jobs)  # inf on overflow
        if not math.isfinite(total * self.max_group_size * self.num_resources):
            raise InvalidInstanceError(
                f"jobs: the resource times add up to {total:.3g}, too large to compute "
                "interleaving periods in double precision"
            )

    @property
    def k(self) -> int:
        return self.num_resources

    def job_index(self) -> dict[str, int]:
        return {job.id: i for i, job in enumerate(self.jobs)}

    def buckets(self) -> dict[int, list[int]]:
        """Job positions by GPU count (only jobs of one bucket may be grouped)."""
        out: dict[int, list[int]] = {}
        for i, job in enumerate(self.jobs):
            out.setdefault(job.gpus, []).append(i)
        return dict(sorted(out.items()))

    def times_array(self) -> np.ndarray:
        """``t[i][j]`` as an ``(n, k)`` float array."""
        return np.array([job.times for job in self.jobs], dtype=float)

    # -- JSON -------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        return {
            "family": "muri",
            "schema_version": SCHEMA_VERSION,
            "name": self.name,
            "num_resources": self.num_resources,
            "max_group_size": self.max_group_size,
            "jobs": [{"id": j.id, "gpus": j.gpus, "times": list(j.times)} for j in self.jobs],
        }

    @classmethod
    def from_dict(cls, data: Any) -> MuriGroupingInstance:
        """Build an instance from its JSON form; unknown fields are an error."""
        data = check_fields(data, "muri instance", *FIELD_SPEC.field_names)
        check_header(data, "muri", SCHEMA_VERSION)
        if not isinstance(data["jobs"], list):
            raise InvalidInstanceError("jobs: expected a list of job objects")
        jobs = []
        for i, raw in enumerate(data["jobs"]):
            fields = check_fields(raw, f"jobs[{i}]", *JOB_SPEC.field_names)
            if not isinstance(fields["times"], list):
                raise InvalidInstanceError(f"jobs[{i}].times: expected a list of numbers")
            jobs.append(MuriJob(id=fields["id"], gpus=fields["gpus"], times=tuple(fields["times"])))
        return cls(
            jobs=tuple(jobs),
            num_resources=data["num_resources"],
            max_group_size=data.get("max_group_size"),
            name=data.get("name", ""),
        )


# --------------------------------------------------------------------------- timing model


@lru_cache(maxsize=64)
def offset_choices(k: int, p: int) -> np.ndarray:
    """All offset vectors of a ``p``-job group with ``o_0 = 0`` (lexicographic), shape ``(m, p)``."""
    if not 1 <= p <= k:
        raise ValueError(f"a group of {p} jobs cannot be interleaved over {k} resources")
    rows = [(0, *rest) for rest in itertools.permutations(range(1, k), p - 1)]
    out = np.array(rows, dtype=np.int64).reshape(len(rows), p)
    out.setflags(write=False)
    return out


def interleaving_period(times: Sequence[Sequence[float]], offsets: Sequence[int]) -> float:
    """Eq. (3) for fixed offsets: ``T = sum_j max_i t[i][(o_i + j) mod k]``."""
    k = len(times[0])
    if len(offsets) != len(times) or len(set(o % k for o in offsets)) != len(offsets):
        raise ValueError("offsets must be distinct, one per job")
    return float(
        sum(max(t[(o + j) % k] for t, o in zip(times, offsets, strict=True)) for j in range(k))
    )


#: Elements of the array :func:`best_periods` gathers per batch of groups (float64: 32 MiB).
_GATHER_ELEMENTS = 1 << 22


def best_periods(times: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Best ``T`` (Eq. 3) of many groups at once.

    ``times`` has shape ``(G, p, k)`` (G groups of p jobs). Returns ``(T, offsets)``
    with ``T`` of shape ``(G,)`` and the chosen offsets of shape ``(G, p)``
    (the lexicographically first best ones).
    """
    times = np.asarray(times, dtype=float)
    num_groups, p, k = times.shape
    choices = offset_choices(k, p)  # (m, p)
    phases = (choices[:, :, None] + np.arange(k)[None, None, :]) % k  # (m, p, k)
    job_idx = np.broadcast_to(np.arange(p)[None, :, None], phases.shape)
    # batches of groups: the gathered array stays near _GATHER_ELEMENTS (32 MiB), whatever
    # the number of offset choices (5,040 for 8 jobs over 8 resources)
    batch = max(1, _GATHER_ELEMENTS // phases.size)
    best_period = np.empty(num_groups)
    best_choice = np.empty(num_groups, dtype=np.int64)
    for lo in range(0, num_groups, batch):
        # gathered[g, m, i, j] = t[g][i][(o_mi + j) mod k]
        gathered = times[lo : lo + batch][:, job_idx, phases]
        periods = gathered.max(axis=2).sum(axis=2)  # (G, m)
        best = periods.argmin(axis=1)
        best_period[lo : lo + batch] = periods[np.arange(len(best)), best]
        best_choice[lo : lo + batch] = best
    return best_period, choices[best_choice]


def best_interleaving(times: Sequence[Sequence[float]]) -> tuple[float, tuple[int, ...]]:
    """Best period ``T`` and offsets of one group (enumeration of the offsets)."""
    arr = np.asarray(times, dtype=float)[None]
    period, offsets = best_periods(arr)
    return float(period[0]), tuple(int(o) for o in offsets[0])


def efficiency(times: Sequence[Sequence[float]], period: float | None = None) -> float:
    """Eq. (4): ``gamma = 1 - (1/k) sum_j (T - sum_i t[i][j]) / T`` at the best offsets."""
    arr = np.asarray(times, dtype=float)
    if period is None:
        period, _ = best_interleaving(arr)
    k = arr.shape[1]
    used = arr.sum(axis=0)
    return float(1.0 - np.sum((period - used) / period) / k)


def group_efficiencies(times: np.ndarray, groups: Sequence[Sequence[int]]) -> np.ndarray:
    """``gamma`` (Eq. 4) of many groups of job positions at their best offsets, batched by size.

    ``times`` is :meth:`MuriGroupingInstance.times_array`; the same numbers as
    :func:`efficiency` at :func:`best_interleaving`'s period, vectorised.
    """
    out = np.empty(len(groups))
    k = times.shape[1]
    by_size: dict[int, list[int]] = {}
    for g, members in enumerate(groups):
        by_size.setdefault(len(members), []).append(g)
    for size, idx in by_size.items():
        members = np.array([groups[g] for g in idx], dtype=np.int64).reshape(len(idx), size)
        group_times = times[members]  # (G, p, k)
        periods, _ = best_periods(group_times)
        used = group_times.sum(axis=1)  # (G, k)
        out[idx] = 1.0 - ((periods[:, None] - used) / periods[:, None]).sum(axis=1) / k
    return out


# --------------------------------------------------------------------------- grouping


@dataclass(frozen=True)
class MuriGrouping:
    """A partition of the job ids into groups (singletons allowed)."""

    groups: tuple[tuple[str, ...], ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "groups", tuple(tuple(str(j) for j in g) for g in self.groups))


@dataclass(frozen=True)
class GroupStats:
    """One group as evaluated: members, best offsets, period ``T`` and ``gamma``."""

    members: tuple[str, ...]
    offsets: tuple[int, ...]
    period: float
    efficiency: float


@dataclass(frozen=True)
class MuriGroupingEvaluation:
    """What the evaluator computed for a grouping."""

    total_efficiency: float  # sum of gamma over groups of >= 2 jobs (the family objective)
    total_period: float  # sum of T over all groups, singletons included
    groups: tuple[GroupStats, ...]
    grouped_jobs: int  # jobs in groups of >= 2

    def objective(self, objective: str = "efficiency") -> float:
        return self.total_efficiency if objective == "efficiency" else self.total_period


def grouping_to_json(
    grouping: MuriGrouping, evaluation: MuriGroupingEvaluation | None = None
) -> Any:
    """Render a grouping (with each group's offsets, ``T`` and ``gamma`` when evaluated)."""
    if evaluation is None:
        return {"groups": [list(g) for g in grouping.groups]}
    return {
        "groups": [
            {
                "jobs": list(g.members),
                "offsets": list(g.offsets),
                "period": g.period,
                "efficiency": g.efficiency,
            }
            for g in evaluation.groups
        ]
    }


def grouping_from_json(data: Any) -> MuriGrouping:
    """Read back :func:`grouping_to_json`'s output."""
    data = check_fields(data, "grouping", required=("groups",))
    if not isinstance(data["groups"], list):
        raise InvalidInstanceError("grouping.groups: expected a list")
    groups = []
    for i, g in enumerate(data["groups"]):
        if isinstance(g, Mapping):
            g = check_fields(g, f"groups[{i}]", ("jobs",), ("offsets", "period", "efficiency"))[
                "jobs"
            ]
        if not isinstance(g, list):
            raise InvalidInstanceError(f"groups[{i}]: expected a list of job ids")
        groups.append(tuple(g))
    return MuriGrouping(tuple(groups))


def evaluate(instance: MuriGroupingInstance, grouping: MuriGrouping) -> MuriGroupingEvaluation:
    """Check a grouping and compute both objectives (the one place that does).

    Raises :class:`InfeasibleScheduleError` when a job is missing, repeated or
    unknown, a group is too large, or a group mixes GPU counts.
    """
    index = instance.job_index()
    seen: set[str] = set()
    for group in grouping.groups:
        if not group:
            raise InfeasibleScheduleError("grouping contains an empty group")
        if len(group) > instance.max_group_size:
            raise InfeasibleScheduleError(
                f"group {list(group)} has {len(group)} jobs > max_group_size "
                f"{instance.max_group_size}"
            )
        for job_id in group:
            if job_id not in index:
                raise InfeasibleScheduleError(f"grouping names unknown job {job_id!r}")
            if job_id in seen:
                raise InfeasibleScheduleError(f"job {job_id!r} is in two groups")
            seen.add(job_id)
        gpus = {instance.jobs[index[j]].gpus for j in group}
        if len(gpus) > 1:
            raise InfeasibleScheduleError(
                f"group {list(group)} mixes GPU counts {sorted(gpus)} (jobs are bucketed)"
            )
    missing = [job.id for job in instance.jobs if job.id not in seen]
    if missing:
        raise InfeasibleScheduleError(f"grouping leaves job(s) out: {missing}")
    stats = []
    total_eff = 0.0
    total_period = 0.0
    grouped = 0
    for group in grouping.groups:
        times = [instance.jobs[index[j]].times for j in group]
        period, offsets = best_interleaving(times)
        gamma = efficiency(times, period)
        stats.append(GroupStats(tuple(group), offsets, period, gamma))
        total_period += period
        if len(group) >= 2:
            total_eff += gamma
            grouped += len(group)
    return MuriGroupingEvaluation(
        total_efficiency=total_eff,
        total_period=total_period,
        groups=tuple(stats),
        grouped_jobs=grouped,
    )
