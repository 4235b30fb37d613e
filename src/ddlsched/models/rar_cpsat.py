"""The CP-SAT model of ``rar`` (ours; method ``cpsat``): placements as per-server GPU counts.

Paper: SJF-BCO (MobiHoc 2022), RAR-DDLS; spec ``docs/families/rar.md``. The
objective is the makespan in slots of the schedule executed by
:func:`ddlsched.problems.rar_schedule.evaluate` (Eqs. 6-9). The search that
solves this model (whole, then in windows) is
:mod:`ddlsched.models.rar_cpsat_search`; every schedule it returns is the
decoding of a model solution, and the pipeline re-evaluates it.

Model (:func:`build_model`), for each job ``j`` with ``G_j`` GPUs:

* a start ``S_j``; for every server ``s`` with ``O_s >= G_j`` a literal
  ``w_js`` and an optional interval ``[S_j, S_j + d_j(1))`` of demand ``G_j``
  on ``s`` (the ring inside one server);
* for a job of ``G_j >= 2`` GPUs: a literal ``z_j``, per server a literal ``u_js`` and a count
  ``y_js in [u_js, min(G_j - 1, O_s) u_js]`` with ``sum_s y_js = G_j z_j``,
  ``n_j = sum_s u_js``, a length ``D_j = d_j(n_j)`` (an element constraint)
  and per server an optional interval ``[S_j, S_j + D_j)`` of demand ``y_js``,
  present with ``u_js``: every placement of the job over ``n >= 2`` servers
  (``y_js <= G_j - 1`` makes a split use two servers at least);
* ``sum_s w_js + z_j = 1``; the makespan ``C >= S_j + length_j``.

Per server: a cumulative of capacity ``O_s`` over every interval on it; with a
split cap ``c`` (below) a second one of capacity ``c`` over the split parts
(demand 1). Redundant: a cumulative of capacity ``N = sum_s O_s`` over one
interval per job (its length, demand ``G_j``); ``C <= H`` (the hint's
makespan, else the instance horizon ``T``; ``target`` lowers it). Objective
(``objective``): ``C``, or (``lexicographic``, the default) ``W C + sum_j G_j C_j``
with ``C_j`` the job's end and ``W = H sum_j G_j + 1``, so that a smaller ``C``
always wins and the second term gives the search a slope on the makespan's
plateaus (improve's score); CP-SAT's objective bound ``LB`` then bounds the
makespan by ``floor(LB / W)`` (:func:`_makespan_bound`).

Lengths. ``d_j(1)`` is Eq. (9)'s slots on one server (no contention term);
``d_j(n)``, ``n >= 2``, the slots at contention level ``p = c``
(:func:`ddlsched.problems.rar_timing.execution_slots`). ``c`` (``split_cap``):
``auto`` takes the largest ``p <= max_contention`` at which every job's
split lengths equal their contention-free ones (``paper``: contention is
inert, so ``c = max_contention`` and no cap constraint is needed;
``paper-contention``: ``k_j = p / 4``, so ``c = 4``). The cap constraint is
added when ``c < max_contention``.

Why a solution decodes to a schedule no worse than the model says
(:func:`ddlsched.models.rar_cpsat_plan.plan_to_schedule`): the GPU ids come
from an interval colouring per server and each job's planned start is
``S_j``; by induction on the starts every job starts at ``S_j`` and at any
slot the running jobs are among the model's, so at most ``c`` split rings
share a server, ``p_j <= c``, and (``tau`` is non-decreasing in ``p``) the
job's rate is at least the rate its length was computed at: it finishes by
``S_j + length_j <= C``. On ``paper`` the lengths are exactly the evaluator's,
so the evaluated makespan equals ``C``.

When the model's bound is a bound (:attr:`ddlsched.models.rar_cpsat_search.CpsatSearch.bound`). Claim: with
no cap constraint and every length the contention-free one,
the model's optimum is at most the true optimum ``T*``. Proof: take an
optimal schedule and execute it. Each job runs on fixed GPUs from its start
``a_j`` for ``T_j - a_j`` slots, and in every slot its rate is at most the
contention-free rate of its placement (``p_j >= 1`` on a split ring and
``tau`` non-decreasing in ``p``; one server has no contention term), so
``T_j - a_j >= d_j(n_j)``. Shortening each run to ``[a_j, a_j + d_j(n_j))``
keeps the GPUs of a server disjoint in time, so the per-server counts satisfy
every cumulative; ``y_js <= G_j - 1`` holds on every server of a split ring,
and ``T* <= H`` whenever the model has a solution (its decoding is a schedule
of makespan at most ``H``; the bound is reported only with a solution).
That point of the model has ``C = max_j (a_j + d_j(n_j)) <= T*``. So
CP-SAT's ``best_objective_bound`` is a lower bound of ``T*``, and an
``OPTIMAL`` answer is the optimum. Otherwise (a cap
constraint, lengths above the contention-free ones) the model is a
restriction and its bound is not reported (``CpsatSearch.model_bound``
keeps it, for information only).

CP-SAT runs through :mod:`ddlsched.solvers.cpsat` with ``random_seed = seed``,
``num_workers = workers`` (``interleave_search`` when ``workers > 1``, a
deterministic multi-worker search) and ``max_deterministic_time = work``:
same inputs, same answer, unless the wall-clock deadline stops it first
(``CpsatSearch.time_limit_hit``). The hint is complete (every variable).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ddlsched.errors import InvalidInstanceError
from ddlsched.models.rar_cpsat_plan import Plan, PlannedJob
from ddlsched.problems.rar import RarInstance
from ddlsched.problems.rar_timing import execution_slots, max_contention, max_servers

__all__ = [
    "Lengths",
    "add_hint",
    "build_model",
    "decode_plan",
    "inert_contention_level",
    "lengths",
]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Lengths:
    """Each job's model lengths: on one server, and over ``n`` servers (index ``n``)."""

    single: tuple[int | None, ...]  # None: the job fits no server
    split: tuple[tuple[int, ...], ...]  # split[j][n] for n >= 2 (entries 0, 1 unused)
    level: int  # the contention level c the split lengths are computed at
    cap: int | None  # the split cap constraint (None: not needed)
    contention_free: bool  # every length is the contention-free one

    def of(self, job: int, per_server: Mapping[int, int]) -> int:
        """The model length of ``job`` on ``per_server`` (GPUs per server)."""
        if len(per_server) == 1:
            value = self.single[job]
            if value is None:  # pragma: no cover - a one-server placement exists then
                raise InvalidInstanceError(f"job {job} fits no server")
            return value
        return self.split[job][len(per_server)]


def _slots(instance: RarInstance, job_index: int, n: int, p: int) -> int:
    value = execution_slots(instance.jobs[job_index], instance.network, n, p, instance.progress)
    if math.isinf(value):
        raise InvalidInstanceError(
            f"job {instance.jobs[job_index].id!r} never progresses over {n} servers at "
            f"contention {p} (tau > 1 slot under 'floor')"
        )
    return int(value)


def inert_contention_level(instance: RarInstance) -> int:
    """The largest ``p <= max_contention`` at which no split length exceeds its ``p = 1`` value."""
    top = max_contention(instance)
    level = 1
    multi = [j for j, job in enumerate(instance.jobs) if job.gpus >= 2]
    for p in range(2, top + 1):
        for j in multi:
            for n in range(2, max_servers(instance.jobs[j], instance.servers) + 1):
                if _slots(instance, j, n, p) != _slots(instance, j, n, 1):
                    return level
        level = p
    return level


def lengths(instance: RarInstance, split_cap: int | None = None) -> Lengths:
    """The model lengths at split cap ``split_cap`` (``None``: auto, module docstring)."""
    top = max_contention(instance)
    level = inert_contention_level(instance) if split_cap is None else min(split_cap, top)
    single: list[int | None] = []
    split: list[tuple[int, ...]] = []
    free = True
    for j, job in enumerate(instance.jobs):
        fits = any(cap >= job.gpus for cap in instance.servers)
        single.append(_slots(instance, j, 1, 0) if fits else None)
        row = [0, 0]
        for n in range(2, max_servers(job, instance.servers) + 1):
            row.append(_slots(instance, j, n, level))
            free = free and row[-1] == _slots(instance, j, n, 1)
        split.append(tuple(row))
    return Lengths(tuple(single), tuple(split), level, None if level >= top else level, free)


# --------------------------------------------------------------------------- model


@dataclass
class _Vars:
    """The model's variables a hint and a decoding need."""

    start: list[Any] = field(default_factory=list)
    whole: list[dict[int, Any]] = field(default_factory=list)  # j -> {server: w_js}
    split: list[Any] = field(default_factory=list)  # z_j or None
    part: list[dict[int, Any]] = field(default_factory=list)  # j -> {server: u_js}
    count: list[dict[int, Any]] = field(default_factory=list)  # j -> {server: y_js}
    servers_used: list[Any] = field(default_factory=list)  # n_j or None
    split_length: list[Any] = field(default_factory=list)  # D_j or None
    length: list[Any] = field(default_factory=list)  # the job's length (variable)
    end: list[Any] = field(default_factory=list)  # the job's end C_j
    makespan: Any = None
    weight: int = 1  # objective = weight * makespan (+ sum_j G_j C_j when weight > 1)


def _splittable(instance: RarInstance, data: Lengths, job: int) -> bool:
    """Whether the job has split modes (two GPUs or more, two servers or more)."""
    return instance.jobs[job].gpus >= 2 and len(data.split[job]) > 2


def build_model(
    instance: RarInstance,
    data: Lengths,
    horizon: int,
    objective: str = "makespan",
    fixed: Mapping[int, PlannedJob] | None = None,
) -> tuple[Any, _Vars]:
    """The CP-SAT model of the module docstring, makespan at most ``horizon``.

    ``fixed`` (job index -> its planned job) keeps those jobs where they are: their
    parts enter the cumulatives as fixed intervals and the makespan is at least their
    end; they have no variables (their entries in the returned variables are empty).
    """
    fixed = fixed or {}
    from ortools.sat.python import cp_model

    model = cp_model.CpModel()
    v = _Vars()
    v.makespan = model.new_int_var(0, horizon, "makespan")
    on_server: list[list[tuple[Any, Any]]] = [[] for _ in instance.servers]  # (interval, demand)
    split_parts: list[list[Any]] = [[] for _ in instance.servers]
    everything: list[tuple[Any, int]] = []
    for j, job in enumerate(instance.jobs):
        if j in fixed:
            _add_fixed_job(model, v, fixed[j], job.gpus, (on_server, split_parts, everything))
            continue
        single = data.single[j]
        can_split = _splittable(instance, data, j)
        options = ([single] if single is not None else []) + (
            list(data.split[j][2:]) if can_split else []
        )
        start = model.new_int_var(0, max(0, horizon - min(options)), f"S[{j}]")
        v.start.append(start)
        choices = []
        whole: dict[int, Any] = {}
        if single is not None:
            for s, cap in enumerate(instance.servers):
                if cap >= job.gpus:
                    lit = model.new_bool_var(f"w[{j},{s}]")
                    interval = model.new_optional_fixed_size_interval_var(
                        start, single, lit, f"W[{j},{s}]"
                    )
                    on_server[s].append((interval, job.gpus))
                    whole[s] = lit
                    choices.append(lit)
        v.whole.append(whole)
        part: dict[int, Any] = {}
        count: dict[int, Any] = {}
        if can_split:
            z = _add_split_mode(model, v, (instance, data, j, horizon), start, (part, count),
                                (on_server, split_parts))  # fmt: skip
            choices.append(z)
        else:
            v.split.append(None)
            v.servers_used.append(None)
            v.split_length.append(None)
        v.part.append(part)
        v.count.append(count)
        model.add_exactly_one(choices)
        job_length = model.new_int_var(min(options), max(options), f"L[{j}]")
        if can_split and single is not None:
            model.add(job_length == single).only_enforce_if(~v.split[j])
            model.add(job_length == v.split_length[j]).only_enforce_if(v.split[j])
        elif can_split:
            model.add(job_length == v.split_length[j])
        v.length.append(job_length)
        job_end = model.new_int_var(0, horizon, f"C[{j}]")
        v.end.append(job_end)
        model.add(v.makespan >= job_end)
        everything.append((model.new_interval_var(start, job_length, job_end, f"J[{j}]"), job.gpus))
    for s, cap in enumerate(instance.servers):
        if on_server[s]:
            model.add_cumulative([i for i, _ in on_server[s]], [d for _, d in on_server[s]], cap)
        if data.cap is not None and len(split_parts[s]) > data.cap:
            model.add_cumulative(split_parts[s], [1] * len(split_parts[s]), data.cap)
    model.add_cumulative([i for i, _ in everything], [d for _, d in everything], instance.num_gpus)
    if objective == "lexicographic":
        ends = [(job.gpus, v.end[j]) for j, job in enumerate(instance.jobs) if j not in fixed]
        v.weight = sum(w for w, _ in ends) * horizon + 1
        model.minimize(v.weight * v.makespan + sum(w * c for w, c in ends))
    else:
        model.minimize(v.makespan)
    return model, v


def _add_split_mode(
    model: Any,
    v: _Vars,
    where: tuple[RarInstance, Lengths, int, int],
    start: Any,
    maps: tuple[dict[int, Any], dict[int, Any]],
    lists: tuple[list[list[tuple[Any, Any]]], list[list[Any]]],
) -> Any:
    """Job ``j``'s split mode (:func:`build_model`): a count of GPUs on each server it
    uses, one interval shared by its parts whose length is the table's for the number
    of servers used; fills ``maps`` (server -> used literal, server -> count) and the
    per-server ``lists``; returns the mode's literal."""
    from ortools.sat.python import cp_model

    instance, data, j, horizon = where
    part, count = maps
    on_server, split_parts = lists
    job = instance.jobs[j]
    table = data.split[j]
    z = model.new_bool_var(f"z[{j}]")
    n = model.new_int_var(0, len(table) - 1, f"n[{j}]")
    length = model.new_int_var_from_domain(
        cp_model.Domain.from_values(sorted(set(table[2:]))), f"D[{j}]"
    )
    end = model.new_int_var(0, horizon, f"E[{j}]")
    for s, cap in enumerate(instance.servers):
        u = model.new_bool_var(f"u[{j},{s}]")
        top = min(job.gpus - 1, cap)
        y = model.new_int_var(0, top, f"y[{j},{s}]")
        model.add(y >= u)
        model.add(y <= top * u)
        model.add_implication(u, z)
        interval = model.new_optional_interval_var(start, length, end, u, f"P[{j},{s}]")
        on_server[s].append((interval, y))
        split_parts[s].append(interval)
        part[s], count[s] = u, y
    model.add(sum(count.values()) == job.gpus * z)
    model.add(n == sum(part.values()))
    model.add_element(n, [table[2]] * 2 + list(table[2:]), length)
    v.split.append(z)
    v.servers_used.append(n)
    v.split_length.append(length)
    return z


def _add_fixed_job(model: Any, v: _Vars, planned: PlannedJob, gpus: int, lists: Any) -> None:
    """A fixed job (:func:`build_model`'s ``fixed``): constant intervals, no variables."""
    on_server, split_parts, everything = lists
    for s, count in planned.per_server.items():
        interval = model.new_fixed_size_interval_var(planned.start, planned.length, "")
        on_server[s].append((interval, count))
        if planned.split:
            split_parts[s].append(interval)
    everything.append((model.new_fixed_size_interval_var(planned.start, planned.length, ""), gpus))
    model.add(v.makespan >= planned.end)
    for column in (v.start, v.split, v.servers_used, v.split_length, v.length, v.end):
        column.append(None)
    for mapping in (v.whole, v.part, v.count):
        mapping.append({})


def add_hint(model: Any, v: _Vars, plan: Plan, data: Lengths) -> None:
    """Hint every variable with ``plan`` (a valid plan: the model's point)."""
    for j, job in enumerate(plan.jobs):
        if v.start[j] is None:  # a fixed job
            continue
        model.add_hint(v.start[j], job.start)
        model.add_hint(v.length[j], job.length)
        model.add_hint(v.end[j], job.end)
        split = job.split
        only = next(iter(job.per_server)) if not split else None
        for s, lit in v.whole[j].items():
            model.add_hint(lit, s == only)
        if v.split[j] is not None:
            model.add_hint(v.split[j], split)
            model.add_hint(v.servers_used[j], len(job.per_server) if split else 0)
            model.add_hint(v.split_length[j], job.length if split else data.split[j][2])
            for s, u in v.part[j].items():
                count = job.per_server.get(s, 0) if split else 0
                model.add_hint(u, count > 0)
                model.add_hint(v.count[j][s], count)
    model.add_hint(v.makespan, plan.makespan)


def decode_plan(
    run: Any, v: _Vars, instance: RarInstance, fixed: Mapping[int, PlannedJob] | None = None
) -> Plan:
    """The plan of CP-SAT's solution (``fixed`` jobs as they were)."""
    jobs = []
    for j in range(len(instance.jobs)):
        if fixed and j in fixed:
            jobs.append(fixed[j])
            continue
        per_server = {s: 1 for s, lit in v.whole[j].items() if run.boolean_value(lit)}
        if per_server:
            per_server = {next(iter(per_server)): instance.jobs[j].gpus}
        else:
            per_server = {s: run.value(y) for s, y in v.count[j].items() if run.value(y) > 0}
        jobs.append(PlannedJob(run.value(v.start[j]), run.value(v.length[j]), per_server))
    return Plan(tuple(jobs))
