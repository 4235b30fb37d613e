"""Schedule of RAR-DDLS, its JSON form and the evaluator (Section 4.1, Eq. 9).

Paper: Yu, Ji, Rajan, Liu, MobiHoc 2022; spec
``docs/families/rar.md``. The evaluator :func:`evaluate` is the one place that
computes a ``rar`` schedule's makespan; it executes the schedule with the
timing model of :mod:`ddlsched.problems.rar_timing` (Eqs. 6-9). It imports
no solver.

Choices the spec leaves open (a careful reading, written down):

* The dispatch evaluator orders the jobs of a GPU by (planned start, job
  position in the instance); the order is the same on every GPU, so dispatch
  cannot deadlock.
* GPU utilisation is ``sum_j G_j (T_j - a_j) / (N * makespan)``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ddlsched.errors import InfeasibleScheduleError, InvalidInstanceError
from ddlsched.jsonio import check_fields, require_int
from ddlsched.problems.rar import RarInstance
from ddlsched.problems.rar_timing import (
    FLOOR_TOL,
    contention_levels,
    iteration_time,
    iterations_per_slot,
    slots_needed,
)

__all__ = [
    "RarAssignment",
    "RarEvaluation",
    "RarSchedule",
    "evaluate",
    "schedule_from_json",
    "schedule_to_json",
]


@dataclass(frozen=True)
class RarAssignment:
    """GPUs ``(server, gpu)`` of one job and its planned start slot."""

    gpus: tuple[tuple[int, int], ...]
    start: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "gpus", tuple((int(s), int(g)) for s, g in self.gpus))

    def per_server(self) -> dict[int, int]:
        counts: dict[int, int] = {}
        for s, _ in self.gpus:
            counts[s] = counts.get(s, 0) + 1
        return counts


@dataclass(frozen=True)
class RarSchedule:
    """A ``rar`` schedule: for every job id, its GPUs and planned start."""

    assignments: Mapping[str, RarAssignment]

    def __getitem__(self, job_id: str) -> RarAssignment:
        return self.assignments[job_id]


@dataclass(frozen=True)
class RarEvaluation:
    """What the evaluator computed: per-job start/finish, makespan and averages."""

    start: dict[str, int]
    finish: dict[str, int]
    makespan: int
    average_completion: float
    utilisation: float
    per_slot_rates: dict[str, list[tuple[int, int, float]]] = field(
        default_factory=dict, repr=False
    )


def schedule_to_json(schedule: RarSchedule, evaluation: RarEvaluation | None = None) -> dict:
    """Render a schedule as the CLI contract's JSON (per job: gpus, start, finish)."""
    out = {}
    for job_id, assignment in schedule.assignments.items():
        entry: dict[str, Any] = {
            "gpus": [list(g) for g in assignment.gpus],
            "planned_start": assignment.start,
        }
        if evaluation is not None:
            entry["start"] = evaluation.start[job_id]
            entry["finish"] = evaluation.finish[job_id]
        else:
            entry["start"] = assignment.start
        out[job_id] = entry
    return out


def schedule_from_json(data: Any) -> RarSchedule:
    """Read a schedule back from :func:`schedule_to_json`'s output."""
    if not isinstance(data, Mapping):
        raise InvalidInstanceError("schedule: expected an object keyed by job id")
    assignments = {}
    for job_id, entry in data.items():
        check_fields(
            entry, f"schedule[{job_id!r}]", ("gpus",), ("start", "planned_start", "finish")
        )
        start = entry.get("planned_start", entry.get("start"))
        assignments[job_id] = RarAssignment(
            gpus=tuple(tuple(g) for g in entry["gpus"]),
            start=require_int(start, "start", minimum=0),
        )
    return RarSchedule(assignments)


# --------------------------------------------------------------------------- evaluator


def _validate_schedule(instance: RarInstance, schedule: RarSchedule) -> None:
    ids = instance.job_index()
    unknown = sorted(set(schedule.assignments) - set(ids))
    if unknown:
        raise InfeasibleScheduleError(f"schedule names unknown job(s) {unknown}")
    missing = [job.id for job in instance.jobs if job.id not in schedule.assignments]
    if missing:
        raise InfeasibleScheduleError(f"schedule leaves job(s) unscheduled: {missing}")
    for job in instance.jobs:
        assignment = schedule.assignments[job.id]
        if len(assignment.gpus) != job.gpus:
            raise InfeasibleScheduleError(
                f"job {job.id!r} needs {job.gpus} GPUs (gang) but gets {len(assignment.gpus)}"
            )
        if len(set(assignment.gpus)) != len(assignment.gpus):
            raise InfeasibleScheduleError(f"job {job.id!r} lists a GPU twice")
        for s, g in assignment.gpus:
            if not (0 <= s < instance.num_servers and 0 <= g < instance.servers[s]):
                raise InfeasibleScheduleError(f"job {job.id!r}: GPU ({s}, {g}) does not exist")
        if isinstance(assignment.start, bool) or not isinstance(assignment.start, int):
            raise InfeasibleScheduleError(f"job {job.id!r}: start must be an integer slot")
        if assignment.start < 0:
            raise InfeasibleScheduleError(f"job {job.id!r}: negative start {assignment.start}")


def evaluate(
    instance: RarInstance, schedule: RarSchedule, *, record_rates: bool = False
) -> RarEvaluation:
    """Execute ``schedule`` with dispatch semantics and return its makespan.

    Each GPU runs its jobs in order of planned start; a job starts at the
    first slot ``>=`` its planned start at which all its GPUs have finished
    their earlier jobs. Contention is recomputed whenever the set of active
    jobs changes (it is constant in between, so the simulation jumps from
    event to event; this is exactly the slot-by-slot rule of Eq. 9).

    Raises :class:`InfeasibleScheduleError` for a wrong GPU count, a GPU that
    does not exist, a job that never progresses (``tau > 1`` slot under the
    ``floor`` rule), or a finish after the horizon (then with the details
    ``failure="horizon_overrun"`` and ``makespan_beyond_horizon``, the
    makespan the schedule has without the horizon).
    """
    _validate_schedule(instance, schedule)
    jobs = instance.jobs
    position = instance.job_index()
    order = sorted(jobs, key=lambda j: (schedule[j.id].start, position[j.id]))
    queues: dict[tuple[int, int], list[str]] = {}
    for job in order:
        for gpu in schedule[job.id].gpus:
            queues.setdefault(gpu, []).append(job.id)
    head = dict.fromkeys(queues, 0)  # index of the next job in each GPU queue
    placement = {job.id: schedule[job.id].per_server() for job in jobs}
    by_id = {job.id: job for job in jobs}

    pending = [job.id for job in order]
    active: dict[str, float] = {}  # job -> remaining iterations
    start: dict[str, int] = {}
    finish: dict[str, int] = {}
    rates_log: dict[str, list[tuple[int, int, float]]] = {}
    now = 0

    def ready(job_id: str) -> bool:
        return all(queues[g][head[g]] == job_id for g in schedule[job_id].gpus)

    while pending or active:
        # Start every job whose GPUs are free and whose planned start has come.
        still = []
        for job_id in pending:
            if schedule[job_id].start <= now and ready(job_id) and job_id not in active:
                active[job_id] = float(by_id[job_id].iterations)
                start[job_id] = now
            else:
                still.append(job_id)
        pending = still
        # Jobs at the head of all their queues but not yet due: next start event.
        next_start = min((schedule[j].start for j in pending if ready(j)), default=math.inf)
        if not active:
            if next_start is math.inf:  # pragma: no cover - excluded by the global order
                raise InfeasibleScheduleError("dispatch deadlock")
            now = int(next_start)
            continue
        rates = _rates(instance, {j: placement[j] for j in active}, by_id)
        step = min(slots_needed(active[j], rates[j], by_id[j].iterations) for j in active)
        if next_start is not math.inf:
            step = min(step, int(next_start) - now)
        if record_rates:
            for job_id, rate in rates.items():
                rates_log.setdefault(job_id, []).append((now, now + step, rate))
        now += step
        done = []
        for job_id in active:
            active[job_id] -= step * rates[job_id]
            if active[job_id] <= by_id[job_id].iterations * FLOOR_TOL:
                done.append(job_id)
        for job_id in done:
            del active[job_id]
            finish[job_id] = now
            for g in schedule[job_id].gpus:
                head[g] += 1

    return _evaluation(instance, start, finish, rates_log)


def _rates(
    instance: RarInstance,
    placements: Mapping[str, Mapping[int, int]],
    by_id: Mapping[str, Any],
) -> dict[str, float]:
    """Iterations per slot of the active jobs (``placements``: their GPUs per server), Eq. 6-9."""
    levels = contention_levels(placements)
    rates = {}
    for job_id, per_server in placements.items():
        job = by_id[job_id]
        tau = iteration_time(job, instance.network, len(per_server), levels[job_id])
        rate = iterations_per_slot(tau, instance.progress)
        if rate <= 0:
            raise InfeasibleScheduleError(
                f"job {job_id!r} never progresses: tau = {tau:.6g} slots > 1 under the "
                "'floor' progress rule"
            )
        rates[job_id] = rate
    return rates


def _evaluation(
    instance: RarInstance,
    start: dict[str, int],
    finish: dict[str, int],
    rates_log: dict[str, list[tuple[int, int, float]]],
) -> RarEvaluation:
    """The executed schedule's evaluation; a finish after the horizon raises (``evaluate``)."""
    jobs = instance.jobs
    position = instance.job_index()
    makespan = max(finish.values())
    if makespan > instance.horizon:
        late = max(finish, key=lambda j: (finish[j], -position[j]))
        raise InfeasibleScheduleError(
            f"schedule overruns the horizon: job {late!r} finishes at slot {finish[late]} "
            f"> horizon {instance.horizon}",
            failure="horizon_overrun",
            makespan_beyond_horizon=makespan,
        )
    busy = sum(job.gpus * (finish[job.id] - start[job.id]) for job in jobs)
    return RarEvaluation(
        start={job.id: start[job.id] for job in jobs},
        finish={job.id: finish[job.id] for job in jobs},
        makespan=makespan,
        average_completion=sum(finish.values()) / len(finish),
        utilisation=busy / (instance.num_gpus * makespan),
        per_slot_rates=rates_log,
    )
