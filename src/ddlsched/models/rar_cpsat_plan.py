"""Plans of the ``rar`` CP-SAT search: per-server GPU counts on fixed intervals.

Spec ``docs/families/rar.md``; the model is :mod:`ddlsched.models.rar_cpsat`.
A *plan* gives every job a start slot, a length in slots (the model's
duration of its placement, an upper bound of what the evaluator gives it,
:mod:`ddlsched.models.rar_cpsat`) and its GPUs per server
``{server: count}``. A plan is *valid* when on every server the counts of the
jobs running at any slot sum to at most ``O_s`` and, with a split cap, at most
``cap`` split rings run on it at once. This module turns a schedule into a
valid plan (the CP-SAT model's hint) and a valid plan into a schedule
(concrete GPU ids), both without a solver.

GPU ids (:func:`plan_to_schedule`): on each server the jobs are taken in
order of start (ties: instance order) and each takes, among the GPUs free at
its start (their last job ended at or before it), the ones that became free
last (ties: lower id). A valid plan always has enough free GPUs: the jobs
still holding a GPU at slot ``t`` all run at ``t``, so they hold at most
``O_s - count`` of them (interval-graph colouring, by induction on the starts).
The planned start of each job is its plan start; :func:`plan_to_schedule`'s
docstring says why the evaluator then starts every job there.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from ddlsched.errors import InfeasibleScheduleError, SolverError
from ddlsched.problems.rar import RarInstance
from ddlsched.problems.rar_schedule import RarAssignment, RarSchedule, evaluate

__all__ = ["Plan", "PlannedJob", "hint_plan", "plan_to_schedule", "plan_violation"]


@dataclass(frozen=True)
class PlannedJob:
    """One job of a plan: start slot, length in slots and GPUs per server."""

    start: int
    length: int
    per_server: Mapping[int, int]

    @property
    def end(self) -> int:
        return self.start + self.length

    @property
    def split(self) -> bool:
        return len(self.per_server) >= 2


@dataclass(frozen=True)
class Plan:
    """A plan (module docstring): one :class:`PlannedJob` per job, in instance order."""

    jobs: tuple[PlannedJob, ...]

    @property
    def makespan(self) -> int:
        return max(job.end for job in self.jobs)


#: ``length(job_index, per_server)``: the model's duration of that placement.
LengthOf = Callable[[int, Mapping[int, int]], int]


def plan_violation(instance: RarInstance, plan: Plan, split_cap: int | None) -> str | None:
    """Why ``plan`` is not valid (the first server and slot over a limit), or ``None``."""
    horizon = plan.makespan
    used = np.zeros((instance.num_servers, horizon + 1), dtype=np.int64)
    split = np.zeros_like(used)
    for job in plan.jobs:
        for server, count in job.per_server.items():
            used[server, job.start : job.end] += count
            if job.split:
                split[server, job.start : job.end] += 1
    capacity = np.asarray(instance.servers, dtype=np.int64)[:, None]
    over = np.argwhere(used > capacity)
    if over.size:
        server, slot = (int(v) for v in over[0])
        return f"server {server} holds {int(used[server, slot])} GPUs at slot {slot}"
    if split_cap is not None:
        over = np.argwhere(split > split_cap)
        if over.size:
            server, slot = (int(v) for v in over[0])
            return f"server {server} runs {int(split[server, slot])} split rings at slot {slot}"
    return None


def hint_plan(
    instance: RarInstance, schedule: RarSchedule, length: LengthOf, split_cap: int | None
) -> tuple[Plan, str]:
    """A valid plan with ``schedule``'s placements, and how it was made.

    ``'evaluated'``: the evaluated starts with the model's lengths, when that
    plan is valid (on ``paper`` the model's lengths are the evaluated ones, so
    it is the schedule itself). Otherwise ``'serial'``: the jobs in order of
    evaluated start (ties: instance order), each at the earliest slot where
    its counts fit every server of its placement (and the split cap) for its
    whole length.
    """
    try:
        evaluation = evaluate(instance, schedule)
    except InfeasibleScheduleError:  # an overrun still gives an order: the planned starts
        evaluation = None
    starts = [
        evaluation.start[job.id] if evaluation is not None else schedule[job.id].start
        for job in instance.jobs
    ]
    placements = [schedule[job.id].per_server() for job in instance.jobs]
    lengths = [length(j, placements[j]) for j in range(len(instance.jobs))]
    plan = Plan(
        tuple(PlannedJob(starts[j], lengths[j], placements[j]) for j in range(len(instance.jobs)))
    )
    if evaluation is not None and plan_violation(instance, plan, split_cap) is None:
        return plan, "evaluated"
    order = sorted(range(len(instance.jobs)), key=lambda j: (starts[j], j))
    horizon = sum(lengths) + 1
    used = np.zeros((instance.num_servers, horizon), dtype=np.int64)
    split = np.zeros_like(used)
    capacity = np.asarray(instance.servers, dtype=np.int64)
    placed: dict[int, PlannedJob] = {}
    for j in order:
        per_server, size = placements[j], lengths[j]
        is_split = len(per_server) >= 2
        start = 0
        while True:
            clash = [
                int(np.flatnonzero(used[s, start : start + size] + k > capacity[s]).max())
                for s, k in per_server.items()
                if (used[s, start : start + size] + k > capacity[s]).any()
            ]
            if is_split and split_cap is not None:
                clash += [
                    int(np.flatnonzero(split[s, start : start + size] >= split_cap).max())
                    for s in per_server
                    if (split[s, start : start + size] >= split_cap).any()
                ]
            if not clash:
                break
            start += max(clash) + 1
        for s, k in per_server.items():
            used[s, start : start + size] += k
            if is_split:
                split[s, start : start + size] += 1
        placed[j] = PlannedJob(start, size, per_server)
    return Plan(tuple(placed[j] for j in range(len(instance.jobs)))), "serial"


def plan_to_schedule(instance: RarInstance, plan: Plan) -> RarSchedule:
    """The schedule of a valid plan: GPU ids by colouring, planned start = plan start.

    The evaluator then starts every job at its plan start, and a job finishes
    no later than its plan end when its length bounds its evaluated duration
    under the contention the plan allows: by induction on the starts, a job's
    predecessors on its GPUs (planned earlier, intervals disjoint from its own)
    have finished by its start, so the jobs running at any slot are among the
    plan's jobs at that slot. Raises :class:`SolverError` for a plan that is
    not valid (a server short of free GPUs).
    """
    width = max(instance.servers)
    free_at = np.full((instance.num_servers, width), -1, dtype=np.int64)
    gpus: dict[int, list[tuple[int, int]]] = {j: [] for j in range(len(instance.jobs))}
    items = sorted(
        (job.start, j, server, count)
        for j, job in enumerate(plan.jobs)
        for server, count in job.per_server.items()
    )
    for start, j, server, count in items:
        times = free_at[server, : instance.servers[server]]
        eligible = np.flatnonzero(times <= start)
        if eligible.size < count:
            raise SolverError(
                f"rar cpsat: the plan puts {count} GPUs of job {instance.jobs[j].id!r} on server "
                f"{server} at slot {start}, where only {eligible.size} are free"
            )
        picked = eligible[np.lexsort((eligible, -times[eligible]))[:count]]
        times[picked] = plan.jobs[j].end
        gpus[j].extend((server, int(g)) for g in picked)
    return RarSchedule(
        {
            job.id: RarAssignment(tuple(sorted(gpus[j])), plan.jobs[j].start)
            for j, job in enumerate(instance.jobs)
        }
    )
