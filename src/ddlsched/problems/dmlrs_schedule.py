"""Family ``dmlrs``: the rate model (Eq. 3, Fact 1), the schedule and the evaluator (Eqs. 3-7).

Paper: Yu, Liu, Wu, Ji, Bentley, IEEE TNSE 2022 (reading notes of the paper);
spec ``docs/families/dmlrs.md`` ("Rate model (Eq. 3, Fact 1)", "DMLRS (Eqs.
3-7) and what the evaluator checks"). The instance and the model this module implements are
described in :mod:`ddlsched.problems.dmlrs` (its sections "Rate model" and
"Evaluator"), which re-exports every name here.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ddlsched.errors import InfeasibleScheduleError, InvalidInstanceError
from ddlsched.jsonio import (
    check_fields,
    require_int,
)

if TYPE_CHECKING:
    from ddlsched.problems.dmlrs import DmlrsInstance, DmlrsJob

#: Relative slack on the samples an accepted job must process (Eq. 3): floating point only.
SAMPLE_RTOL = 1e-9
#: Relative slack on capacities (Eq. 5): floating point only.
CAPACITY_RTOL = 1e-9


# --------------------------------------------------------------------------- rate model


def per_sample_time(job: DmlrsJob, bandwidth: float) -> float:
    """``pi_i(b) = tau_i + 2 g_i gamma_i / (F_i b)``: seconds per sample of one worker (Eq. 3)."""
    return job.tau_s + 2.0 * job.grad_bytes * job.gamma / (job.global_batch * bandwidth)


def samples_in_slot(job: DmlrsJob, workers: int, bandwidth: float, slot_s: float) -> float:
    """Samples ``workers`` workers process in one slot at bandwidth ``bandwidth`` (Eq. 3)."""
    return slot_s * workers / per_sample_time(job, bandwidth)


def workers_needed(job: DmlrsJob, samples: float, bandwidth: float, slot_s: float) -> int:
    """``D_i(v, b) = ceil(v pi_i(b) / slot_s)`` (floating-point noise below 1e-9 ignored)."""
    if samples <= 0:
        return 0
    x = samples * per_sample_time(job, bandwidth) / slot_s
    return max(1, math.ceil(x * (1.0 - SAMPLE_RTOL)))


def ps_needed(job: DmlrsJob, workers: int) -> int:
    """The PS rule: ``ceil(workers / gamma_i)`` parameter servers (0 without workers)."""
    return -(-workers // job.gamma) if workers > 0 else 0


def fastest_slots(instance: DmlrsInstance, i: int) -> int:
    """``d_min_i = ceil(V_i pi_i(b_int) / (F_i slot_s))``: the fewest slots job ``i`` can take.

    All ``F_i`` workers at internal bandwidth, whatever the capacities (spec,
    ``U^r``); a lower bound on the slots of every schedule of the job.
    """
    job = instance.jobs[i]
    per_slot = samples_in_slot(job, job.global_batch, instance.b_int, instance.slot_s)
    return max(1, math.ceil(job.workload / per_slot * (1.0 - SAMPLE_RTOL)))


# --------------------------------------------------------------------------- schedule


@dataclass(frozen=True, order=True)
class Allocation:
    """``workers`` workers and ``ps`` parameter servers of ``job`` on ``machine`` in ``slot``."""

    job: int
    slot: int
    machine: int
    workers: int
    ps: int


@dataclass(frozen=True)
class DmlrsSchedule:
    """Accepted jobs, jobs left unfinished at ``T`` (earning 0) and sparse allocations.

    A job in neither set is rejected and has no allocation.
    """

    accepted: tuple[int, ...]
    unfinished: tuple[int, ...] = ()
    alloc: tuple[Allocation, ...] = ()
    info: Mapping[str, Any] = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class DmlrsEvaluation:
    """What the evaluator computed for a schedule (objective: ``total_utility``)."""

    total_utility: float
    accepted: int
    completed: int
    unfinished: int
    rejected: int
    completion_slot: dict[int, int]
    job_utility: dict[int, float]
    samples: dict[int, float]
    utilisation: dict[str, float]
    median_training_time_s: float | None
    internal_share: float | None  # share of job-slots with workers run at b_int

    def summary(self) -> dict[str, Any]:
        """The headline metrics copied into every result's ``info``."""
        out: dict[str, Any] = {
            "total_utility": self.total_utility,
            "accepted": self.accepted,
            "completed": self.completed,
            "unfinished": self.unfinished,
            "rejected": self.rejected,
            "median_training_time_s": self.median_training_time_s,
            "internal_share": self.internal_share,
        }
        for r, value in self.utilisation.items():
            out[f"utilisation_{r}"] = value
        return out


def _fail(message: str, **details: Any) -> InfeasibleScheduleError:
    exc = InfeasibleScheduleError(f"dmlrs: {message}")
    exc.details = details  # type: ignore[attr-defined]
    return exc


def _check_index(value: Any, where: str, low: int, high: int) -> int:
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, np.integer))
        or not low <= value <= high
    ):
        raise _fail(f"{where} must be an integer in {low}..{high}, got {value!r}", failure="index")
    return int(value)


def evaluate(instance: DmlrsInstance, schedule: DmlrsSchedule) -> DmlrsEvaluation:
    """Check every constraint of DMLRS (Eqs. 3-7) and compute the objective (module docstring).

    Raises :class:`~ddlsched.errors.InfeasibleScheduleError` naming the job,
    machine, slot and resource of the first violation.
    """
    n, T = len(instance.jobs), instance.slots
    accepted, unfinished = _checked_lists(schedule, n)
    active = set(accepted) | set(unfinished)
    per_slot = _entries_per_slot(instance, schedule, active)
    usage = _slot_usage(instance, per_slot, active)
    total_used = _check_capacities(instance, usage.used, per_slot)
    completion, utilities, train_times = _completions(instance, accepted, unfinished, usage)
    total_cap = instance.cap.sum(axis=0) * T
    utilisation = {r: float(total_used[k] / total_cap[k]) for k, r in enumerate(instance.resources)}
    samples = usage.samples
    return DmlrsEvaluation(
        total_utility=float(math.fsum(utilities[i] for i in sorted(utilities))),
        accepted=len(accepted),
        completed=len(accepted),
        unfinished=len(unfinished),
        rejected=n - len(active),
        completion_slot=completion,
        job_utility=utilities,
        samples={i: samples[i] for i in sorted(samples)},
        utilisation=utilisation,
        median_training_time_s=float(np.median(train_times)) if train_times else None,
        internal_share=usage.internal_slots / usage.job_slots if usage.job_slots else None,
    )


def _checked_lists(schedule: DmlrsSchedule, n: int) -> tuple[list[int], list[int]]:
    """The accepted and unfinished job lists: valid indices, no job twice (Eq. 6's ``x_i``)."""
    accepted = [_check_index(i, "accepted job", 0, n - 1) for i in schedule.accepted]
    unfinished = [_check_index(i, "unfinished job", 0, n - 1) for i in schedule.unfinished]
    if len(set(accepted)) != len(accepted) or len(set(unfinished)) != len(unfinished):
        raise _fail("a job is listed twice in accepted or unfinished", failure="duplicate")
    both = set(accepted) & set(unfinished)
    if both:
        raise _fail(f"job {min(both)} is both accepted and unfinished", failure="duplicate")
    return accepted, unfinished


def _entries_per_slot(
    instance: DmlrsInstance, schedule: DmlrsSchedule, active: set[int]
) -> dict[tuple[int, int], list[Allocation]]:
    """The non-empty entries per ``(job, slot)``: valid indices and counts, one entry per
    ``(job, slot, machine)``, none for a rejected job, none before arrival (Eq. 7)."""
    n, H, T = len(instance.jobs), instance.num_machines, instance.slots
    per_slot: dict[tuple[int, int], list[Allocation]] = defaultdict(list)
    seen: set[tuple[int, int, int]] = set()
    for a in schedule.alloc:
        i = _check_index(a.job, "allocation job", 0, n - 1)
        t = _check_index(a.slot, f"job {i}: allocation slot", 1, T)
        h = _check_index(a.machine, f"job {i}, slot {t}: machine", 0, H - 1)
        for name, v in (("workers", a.workers), ("ps", a.ps)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
                raise _fail(
                    f"job {i}, machine {h}, slot {t}: {name} must be a non-negative integer, "
                    f"got {v!r}",
                    failure="count",
                    job=i,
                    machine=h,
                    slot=t,
                )
        if (i, t, h) in seen:
            raise _fail(
                f"job {i}, machine {h}, slot {t}: two allocation entries", failure="duplicate"
            )
        seen.add((i, t, h))
        if a.workers == 0 and a.ps == 0:
            continue
        if i not in active:
            raise _fail(
                f"job {i} is rejected (neither accepted nor unfinished) but has an allocation "
                f"on machine {h} in slot {t}",
                failure="rejected_allocation",
                job=i,
                machine=h,
                slot=t,
            )
        if t < instance.jobs[i].arrival_slot:
            raise _fail(
                f"job {i}, machine {h}, slot {t}: allocation before its arrival slot "
                f"{instance.jobs[i].arrival_slot} (Eq. 7)",
                failure="before_arrival",
                job=i,
                machine=h,
                slot=t,
            )
        per_slot[(i, t)].append(a)
    return per_slot


@dataclass
class _SlotUsage:
    """What the job-slots of a schedule use and process (:func:`_slot_usage`)."""

    used: dict[tuple[int, int], np.ndarray]  # resource use per (machine, slot)
    samples: dict[int, float]  # samples processed per active job
    last_worker_slot: dict[int, int]
    job_slots: int  # job-slots with workers
    internal_slots: int  # of those, run at b_int (Fact 1)


def _slot_usage(
    instance: DmlrsInstance, per_slot: dict[tuple[int, int], list[Allocation]], active: set[int]
) -> _SlotUsage:
    """Check the worker cap (Eq. 4) and the PS rule of every job-slot; accumulate the
    resource use per ``(h, t)`` and the samples per job (Eq. 3, Fact 1)."""
    R = len(instance.resources)
    used: dict[tuple[int, int], np.ndarray] = defaultdict(lambda: np.zeros(R))
    alpha, beta = instance.alpha, instance.beta
    samples = dict.fromkeys(active, 0.0)
    last_worker_slot: dict[int, int] = {}
    job_slots = internal_slots = 0
    for (i, t), entries in sorted(per_slot.items()):
        job = instance.jobs[i]
        workers = sum(int(a.workers) for a in entries)
        servers = sum(int(a.ps) for a in entries)
        if workers > job.global_batch:
            raise _fail(
                f"job {i}, slot {t}: {workers} workers, more than F_i = {job.global_batch} (Eq. 4)",
                failure="worker_cap",
                job=i,
                slot=t,
            )
        if servers < ps_needed(job, workers):
            raise _fail(
                f"job {i}, slot {t}: {servers} PSs for {workers} workers, the PS rule needs "
                f"ceil({workers} / gamma = {job.gamma}) = {ps_needed(job, workers)}",
                failure="ps_rule",
                job=i,
                slot=t,
            )
        for a in entries:
            used[(a.machine, t)] += alpha[i] * a.workers + beta[i] * a.ps
        if workers > 0:
            internal = len(entries) == 1  # Fact 1: workers and PSs all on one machine
            bandwidth = instance.b_int if internal else instance.b_ext
            samples[i] += samples_in_slot(job, workers, bandwidth, instance.slot_s)
            last_worker_slot[i] = t
            job_slots += 1
            internal_slots += internal
    return _SlotUsage(used, samples, last_worker_slot, job_slots, internal_slots)


def _check_capacities(
    instance: DmlrsInstance,
    used: dict[tuple[int, int], np.ndarray],
    per_slot: dict[tuple[int, int], list[Allocation]],
) -> np.ndarray:
    """Check the capacities (Eq. 5) per ``(h, t)``; the total use per resource."""
    cap = instance.cap
    total_used = np.zeros(len(instance.resources))
    for (h, t), load in sorted(used.items()):
        over = load - cap[h] * (1.0 + CAPACITY_RTOL) - 1e-9
        if (over > 0).any():
            r = int(np.argmax(over > 0))
            users = sorted(
                {i for (i, tt), es in per_slot.items() if tt == t for a in es if a.machine == h}
            )
            raise _fail(
                f"machine {h}, slot {t}, resource {instance.resources[r]!r}: use {load[r]:g} "
                f"exceeds capacity {cap[h, r]:g} (Eq. 5; jobs {users})",
                failure="capacity",
                machine=h,
                slot=t,
                resource=instance.resources[r],
                job=users[0] if users else None,
            )
        total_used += load
    return total_used


def _completions(
    instance: DmlrsInstance, accepted: list[int], unfinished: list[int], usage: _SlotUsage
) -> tuple[dict[int, int], dict[int, float], list[float]]:
    """Check the samples (Eq. 3) of the accepted jobs and the labels of the unfinished ones;
    each accepted job's completion slot, utility and training time."""
    T, samples = instance.slots, usage.samples
    completion: dict[int, int] = {}
    utilities: dict[int, float] = {}
    train_times = []
    for i in accepted:
        job = instance.jobs[i]
        if samples[i] < job.workload * (1.0 - SAMPLE_RTOL):
            raise _fail(
                f"job {i} is accepted but processes {samples[i]:.6g} of its V_i = "
                f"{job.workload} samples by slot {T} (Eq. 3)",
                failure="short_of_samples",
                job=i,
            )
        t_done = usage.last_worker_slot[i]
        completion[i] = t_done
        utilities[i] = job.utility(t_done - job.arrival_slot)
        train_times.append((t_done - job.arrival_slot + 1) * instance.slot_s)
    for i in unfinished:
        if samples[i] >= instance.jobs[i].workload * (1.0 - SAMPLE_RTOL):
            raise _fail(
                f"job {i} is marked unfinished but processes all of its "
                f"{instance.jobs[i].workload} samples (list it as accepted)",
                failure="mislabelled",
                job=i,
            )
    return completion, utilities, train_times


# --------------------------------------------------------------------------- schedule JSON


def schedule_to_json(schedule: DmlrsSchedule, evaluation: DmlrsEvaluation | None = None) -> Any:
    """The spec's schedule JSON (plus completion slots and utilities when evaluated)."""
    out: dict[str, Any] = {
        "accepted": sorted(schedule.accepted),
        "unfinished": sorted(schedule.unfinished),
        "alloc": [
            {"job": a.job, "slot": a.slot, "machine": a.machine, "workers": a.workers, "ps": a.ps}
            for a in sorted(schedule.alloc)
        ],
    }
    if evaluation is not None:
        out["completion_slot"] = {str(i): t for i, t in sorted(evaluation.completion_slot.items())}
        out["job_utility"] = {str(i): u for i, u in sorted(evaluation.job_utility.items())}
    return out


def _int_list(value: Any, where: str) -> tuple[int, ...]:
    if not isinstance(value, list):
        raise InvalidInstanceError(f"{where}: expected a list of job indices, got {value!r}")
    return tuple(require_int(v, f"{where}[{k}]", minimum=0) for k, v in enumerate(value))


def schedule_from_json(data: Any) -> DmlrsSchedule:
    """Read the spec's schedule JSON (evaluation fields are ignored)."""
    data = check_fields(
        data, "schedule", ("accepted", "alloc"), ("unfinished", "completion_slot", "job_utility")
    )
    alloc_data = data["alloc"]
    if not isinstance(alloc_data, list):
        raise InvalidInstanceError(f"schedule.alloc: expected a list, got {alloc_data!r}")
    alloc = []
    for k, entry in enumerate(alloc_data):
        where = f"schedule.alloc[{k}]"
        entry = check_fields(entry, where, ("job", "slot", "machine", "workers", "ps"))
        alloc.append(
            Allocation(
                job=require_int(entry["job"], f"{where}.job", minimum=0),
                slot=require_int(entry["slot"], f"{where}.slot", minimum=1),
                machine=require_int(entry["machine"], f"{where}.machine", minimum=0),
                workers=require_int(entry["workers"], f"{where}.workers", minimum=0),
                ps=require_int(entry["ps"], f"{where}.ps", minimum=0),
            )
        )
    return DmlrsSchedule(
        accepted=_int_list(data["accepted"], "schedule.accepted"),
        unfinished=_int_list(data.get("unfinished", []), "schedule.unfinished"),
        alloc=tuple(alloc),
    )


def schedule_from_counts(
    accepted: Sequence[int],
    entries: Sequence[tuple[int, int, int, int, int]],
    unfinished: Sequence[int] = (),
) -> DmlrsSchedule:
    """A schedule from ``(job, slot, machine, workers, ps)`` tuples (zero entries dropped)."""
    alloc = tuple(
        sorted(
            Allocation(int(i), int(t), int(h), int(w), int(s))
            for i, t, h, w, s in entries
            if w > 0 or s > 0
        )
    )
    return DmlrsSchedule(tuple(sorted(accepted)), tuple(sorted(unfinished)), alloc)
