"""Dorm, the per-slot MILP baseline of family ``dmlrs`` (spec "Baselines", ``dorm``).

Paper: Yu, Liu, Wu, Ji, Bentley, "Toward Efficient Online Scheduling for
Distributed Machine Learning Systems", IEEE TNSE 2022 (reading notes of
the paper), which compares PD-ORS with Dorm (Figs. 6-7); spec
``docs/families/dmlrs.md``. Dorm (Sun et al., "Dorm: dynamically
partitioning resources for distributed machine learning", 2017) re-solves
a resource-partitioning MILP whenever the job set changes; here it runs in
every slot of the shared slot loop
(:func:`ddlsched.heuristics.dmlrs_baselines.simulate_slots`: no admission
control, every job runs until done or ``T``, bandwidth by Fact 1 from the
realised placement, ``cap_i = min(F_i, D_i(remaining_i, b_ext))``).

The MILP of slot ``t`` over its active jobs ``i`` and machines ``h``
(:func:`build_slot_model`):

* integer ``w[i, h], s[i, h] >= 0`` (workers, PSs), binary ``y_i``
  (job ``i`` is served);
* capacities ``sum_i alpha[i, r] w[i, h] + beta[i, r] s[i, h] <= C[h, r]``
  per machine and resource (Eq. 5);
* ``sum_h w[i, h] <= cap_i`` (Eq. 4 and the cap);
* ``gamma_i sum_h s[i, h] >= sum_h w[i, h]`` (the PS rule);
* ``sum_h w[i, h] >= y_i``;
* lexicographic objective: most served jobs, then the normalised
  utilisation ``U = sum_{h, r} (alpha[i, r] w[i, h] + beta[i, r] s[i, h])
  / sum_h C[h, r]``, as one weighted objective ``max (R + 1) sum_i y_i +
  U``. The weight makes it lexicographic: the capacity rows give ``0 <= U
  <= R`` (each resource's use is at most its total capacity), so a
  solution serving ``k + 1`` jobs scores at least ``(R + 1)(k + 1)`` and
  one serving ``k`` at most ``(R + 1) k + R < (R + 1)(k + 1)``. A solve
  stopped at an absolute gap below 1 (default ``util_gap = 0.01``)
  therefore serves the most jobs, and its utilisation is within
  ``util_gap`` of the best (units: one fully used resource is 1); a solve
  stopped at its time limit serves ``k`` jobs where ``floor(bound / (R +
  1))`` may be more, and those slots are counted
  (``slots_served_unproven``).

Choices of ours (stated):

* Dorm's fairness and adjustment-overhead terms are not in the notes and
  are omitted (spec).
* PS upper row ``gamma_i sum_h s[i, h] <= sum_h w[i, h] + gamma_i - 1``,
  i.e. exactly ``ceil(W_i / gamma_i)`` PSs. Without it the utilisation
  term rewards PSs beyond the PS rule, which do not speed a job up (spec,
  "Rate model"), take capacity the MILP would otherwise give to workers,
  and turn a job's slot external under Fact 1 when placed on another
  machine.
* Variable bounds ``w[i, h] <= min(cap_i, floor(min_r C[h, r] / alpha[i, r]))``
  and ``s[i, h] <= ceil(cap_i / gamma_i)`` (implied by the rows; they
  tighten the relaxation).
* HiGHS runs with the options of :mod:`ddlsched.solvers.backends` (presolve
  on since highspy 1.16), SCIP on request (``backend="scip"``).
* Work, not time, ends a slot's search (``slot_node_limit``, default
  :data:`DEFAULT_SLOT_NODE_LIMIT` = 200 branch-and-bound nodes, HiGHS's
  ``mip_max_nodes``): a slot stopped by its time limit keeps whatever
  incumbent HiGHS had reached by then, which depends on how fast the
  machine ran. Measured on the Fig. 6 point with 10 machines (paper seed
  3, 50 jobs, ``T = 20``, where 17-19 of the 20 slots do not close within
  the budget): a 10 s slot limit gave utility 67.82 and 72.68 in two runs
  of the same code (load 15-30); 200 nodes gave 67.39 in two runs at
  loads 8 and 10 (77 s and 161 s); 1,000 nodes gave 84.22 (405 s). HiGHS
  runs single-threaded, so a node budget gives the same incumbent on
  every machine. On the 100-machine point every slot closes at the root
  (the same utility with 20 nodes, 200 nodes or 10 s). ``0`` removes the
  budget (the time limit alone decides, as before).
* Time: slot ``t`` of ``T`` still gets ``min(slot_time_limit_s, 0.8
  remaining / (T - t + 1))`` seconds (default ``slot_time_limit_s`` 60 s,
  a safety net the node budget normally reaches first), ``remaining`` what
  the method's deadline leaves: an even share of the time left (the other
  20 % covers model building and the hand-over to the solver), so that a
  run under the method's time limit reaches ``T`` instead of spending it
  all on the first slots. A slot cut by time is counted
  (``slots_at_time_limit``) apart from one that used its node budget
  (``slots_at_node_limit``); ``info['load_dependent']`` is true when any
  slot was cut by time: that row may differ on another machine. The SCIP
  backend has no node budget here (time only).
* Utilisation gap ``util_gap`` (default 0.01, must be below 1): proving
  the utilisation term optimal to ``1e-6`` is a multi-dimensional
  bin-packing proof that routinely takes HiGHS more than 10 s per slot on
  ``paper`` instances, while the served count is already proven.
* Greedy start (``greedy_start``, default on): the Pyomo HiGHS interface
  takes no MIP start, and HiGHS may stop at its limit
  with a poor incumbent on large slots (one serving a single job where 40
  can be served) or with none at all. When a slot stops at its time limit,
  the FIFO and DRF allocations of the slot
  (:mod:`ddlsched.heuristics.dmlrs_baselines`), both feasible for the
  MILP (their PS counts are exactly ``ceil(W_i / gamma_i)``), replace the
  incumbent (or its absence) when their MILP objective
  (:func:`slot_objective`) is higher, as a MIP start would have;
  ``slots_greedy_start`` counts the replacements, ``slots_at_limit`` the
  slots stopped at their limit (node budget or time). A proven solve is never replaced.
* A slot whose solver fails (an exception, status ``error`` or
  ``infeasible``: the all-zero allocation is feasible), or which ends
  without a solution when ``greedy_start`` is off, raises
  :class:`~ddlsched.errors.SolverError` naming the slot (an error row,
  never a silent wrong schedule); past the method's deadline it raises
  :class:`~ddlsched.errors.TimeLimitReached` instead.

Size: ``2 n_t H + n_t`` variables and ``H R + 4 n_t`` rows for ``n_t``
active jobs; refused beyond :data:`~ddlsched.solvers.limits.MAX_MODEL_VARIABLES`
(:func:`~ddlsched.solvers.limits.check_model_size`) before it is built.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pyomo.environ as pyo

from ddlsched.deadline import Deadline
from ddlsched.errors import DdlschedError, SolverError
from ddlsched.heuristics.dmlrs_baselines import (
    SlotDemand,
    SlotEntry,
    check_slot_allocation,
    drf_slot,
    fifo_slot,
    simulate_slots,
)
from ddlsched.problems.dmlrs import DmlrsInstance, DmlrsSchedule
from ddlsched.solvers.backends import solve_model
from ddlsched.solvers.limits import SolveLimits, check_model_size
from ddlsched.solvers.result import Status

__all__ = [
    "DEFAULT_SLOT_NODE_LIMIT",
    "DEFAULT_SLOT_TIME_LIMIT_S",
    "DEFAULT_UTIL_GAP",
    "DormStats",
    "build_slot_model",
    "dorm_slot",
    "run_dorm",
    "slot_objective",
]

#: Default time limit of one slot's MILP (s); never more than the method's deadline leaves.
#: A safety net: the node budget normally ends an unproven slot first (module docstring).
DEFAULT_SLOT_TIME_LIMIT_S = 60.0
#: Default branch-and-bound node budget of one slot's MILP (HiGHS ``mip_max_nodes``).
DEFAULT_SLOT_NODE_LIMIT = 200
#: Share of the time left that the remaining slots' solves may take (the rest covers
#: model building and the hand-over to the solver).
TIME_SHARE = 0.8
#: Default absolute gap of a slot MILP: the utilisation term within 0.01 of its best.
DEFAULT_UTIL_GAP = 1e-2


@dataclass
class DormStats:
    """What the slot MILPs did (``as_info`` gives the method's ``info``)."""

    backend: str = "highs"
    slots_solved: int = 0
    slots_at_limit: int = 0
    slots_at_node_limit: int = 0
    slots_at_time_limit: int = 0
    slots_served_unproven: int = 0
    slots_greedy_start: int = 0
    solver_time_s: float = 0.0
    build_time_s: float = 0.0
    max_variables: int = 0
    served: list[int] = field(default_factory=list)

    def as_info(self) -> dict[str, Any]:
        """The counters as a flat dict (the method's ``info``)."""
        return {
            "backend": self.backend,
            "slots_solved": self.slots_solved,
            "slots_at_limit": self.slots_at_limit,
            "slots_at_node_limit": self.slots_at_node_limit,
            "slots_at_time_limit": self.slots_at_time_limit,
            "load_dependent": self.slots_at_time_limit > 0,
            "slots_served_unproven": self.slots_served_unproven,
            "slots_greedy_start": self.slots_greedy_start,
            "solver_time_s": self.solver_time_s,
            "build_time_s": self.build_time_s,
            "max_variables": self.max_variables,
            "jobs_served_per_slot_max": max(self.served, default=0),
        }


def _served_weight(instance: DmlrsInstance) -> float:
    """``R + 1``: the weight of a served job that makes the objective lexicographic."""
    return float(len(instance.resources) + 1)


def build_slot_model(instance: DmlrsInstance, demand: SlotDemand) -> pyo.ConcreteModel:
    """Dorm's MILP of one slot (module docstring); positions ``k`` index ``demand.jobs``."""
    jobs = demand.jobs
    n_active, num_machines = len(jobs), instance.num_machines
    check_model_size(
        f"dorm slot {demand.slot}",
        2 * n_active * num_machines + n_active,
        "use fewer machines or jobs per slot",
    )
    # Python floats: a numpy scalar times a Pyomo variable goes through numpy's ufunc machinery
    total_np = instance.cap.sum(axis=0)
    w_coef = (instance.alpha[list(jobs)] / total_np).sum(axis=1).tolist()
    s_coef = (instance.beta[list(jobs)] / total_np).sum(axis=1).tolist()
    alpha = instance.alpha[list(jobs)].tolist()
    beta = instance.beta[list(jobs)].tolist()
    cap = instance.cap.tolist()
    gamma = [instance.jobs[i].gamma for i in jobs]
    K, H, R = range(n_active), range(num_machines), range(len(instance.resources))

    def w_bound(m, k, h):
        most = demand.caps[k]
        for r in R:
            if alpha[k][r] > 0:
                most = min(most, math.floor(cap[h][r] / alpha[k][r] * (1 + 1e-12)))
        return (0, most)

    def s_bound(m, k, h):
        return (0, -(-demand.caps[k] // gamma[k]))

    m = pyo.ConcreteModel(name=f"dorm_slot_{demand.slot}")
    m.w = pyo.Var(K, H, domain=pyo.NonNegativeIntegers, bounds=w_bound)
    m.s = pyo.Var(K, H, domain=pyo.NonNegativeIntegers, bounds=s_bound)
    m.y = pyo.Var(K, domain=pyo.Binary)

    # Eq. 5: capacities per machine and resource
    rows = [(h, r) for h in H for r in R]

    def capacity(m, h, r):
        terms = [alpha[k][r] * m.w[k, h] for k in K if alpha[k][r] > 0]
        terms += [beta[k][r] * m.s[k, h] for k in K if beta[k][r] > 0]
        if not terms:
            return pyo.Constraint.Skip
        return pyo.quicksum(terms) <= cap[h][r]

    m.capacity = pyo.Constraint(rows, rule=capacity)

    def workers(m, k):
        return pyo.quicksum(m.w[k, h] for h in H)

    def servers(m, k):
        return pyo.quicksum(m.s[k, h] for h in H)

    # Eq. 4 and the cap: at most cap_i workers
    m.worker_cap = pyo.Constraint(K, rule=lambda m, k: workers(m, k) <= demand.caps[k])
    # the PS rule: gamma_i S >= W, and (ours) no PS beyond ceil(W / gamma_i)
    m.ps_low = pyo.Constraint(K, rule=lambda m, k: gamma[k] * servers(m, k) >= workers(m, k))
    m.ps_high = pyo.Constraint(
        K, rule=lambda m, k: gamma[k] * servers(m, k) <= workers(m, k) + gamma[k] - 1
    )
    # served: at least one worker
    m.served = pyo.Constraint(K, rule=lambda m, k: workers(m, k) >= m.y[k])

    weight = _served_weight(instance)
    utilisation = pyo.quicksum(
        [w_coef[k] * m.w[k, h] for k in K for h in H if w_coef[k] > 0]
        + [s_coef[k] * m.s[k, h] for k in K for h in H if s_coef[k] > 0]
    )
    m.obj = pyo.Objective(
        expr=weight * pyo.quicksum(m.y[k] for k in K) + utilisation,
        sense=pyo.maximize,
    )
    return m


def slot_objective(instance: DmlrsInstance, entries: Sequence[SlotEntry]) -> float:
    """The slot MILP's objective ``(R + 1) (served jobs) + U`` of an allocation."""
    total = instance.cap.sum(axis=0)
    served = len({i for i, _, w, _ in entries if w > 0})
    use = sum(
        float(((instance.alpha[i] * w + instance.beta[i] * s) / total).sum())
        for i, _, w, s in entries
    )
    return _served_weight(instance) * served + use


def _decode(m: pyo.ConcreteModel, demand: SlotDemand, num_machines: int) -> list[SlotEntry]:
    entries = []
    for k, i in enumerate(demand.jobs):
        for h in range(num_machines):
            w = round(float(m.w[k, h].value or 0.0))
            s = round(float(m.s[k, h].value or 0.0))
            if w > 0 or s > 0:
                entries.append((i, h, w, s))
    return entries


def _checked(
    instance: DmlrsInstance, demand: SlotDemand, entries: list[SlotEntry], where: str
) -> list[SlotEntry]:
    try:
        check_slot_allocation(instance, demand, entries)
    except ValueError as exc:
        raise SolverError(f"{where}: the solver's rounded solution is infeasible: {exc}") from exc
    return entries


def _one_line(message: object) -> str:
    return " ".join(str(message).split())


def dorm_slot(
    instance: DmlrsInstance,
    demand: SlotDemand,
    *,
    backend: str = "highs",
    slot_time_limit_s: float = DEFAULT_SLOT_TIME_LIMIT_S,
    util_gap: float = DEFAULT_UTIL_GAP,
    greedy_start: bool = True,
    deadline: Deadline | None = None,
    stats: DormStats | None = None,
    slot_node_limit: int = DEFAULT_SLOT_NODE_LIMIT,
) -> list[SlotEntry]:
    """Solve Dorm's MILP of one slot; the entries ``(job, machine, workers, ps)``.

    The solve gets ``min(slot_time_limit_s, what the deadline leaves)`` and
    ``slot_node_limit`` branch-and-bound nodes (HiGHS; ``0``: no budget) and
    stops at the absolute gap ``util_gap`` (``< 1``: the served count is
    then proven maximal). With ``greedy_start``, the FIFO and DRF
    allocations of the slot stand in for a MIP start (module docstring).
    Raises :class:`~ddlsched.errors.SolverError` (naming the slot) when the
    solver fails, or ends without a solution and ``greedy_start`` is off, and
    :class:`~ddlsched.errors.TimeLimitReached` when the method's deadline
    has passed.
    """
    if not 0 <= util_gap < 1:
        raise ValueError(f"util_gap must be in [0, 1), got {util_gap!r}")
    if not (isinstance(slot_node_limit, int) and slot_node_limit >= 0):
        raise ValueError(f"slot_node_limit must be an integer >= 0, got {slot_node_limit!r}")
    deadline = deadline or Deadline.unlimited()
    stats = stats if stats is not None else DormStats(backend=backend)
    where = f"dorm slot {demand.slot}"
    start = time.perf_counter()
    m = build_slot_model(instance, demand)
    stats.build_time_s += time.perf_counter() - start
    deadline.check(f"{where}: building the MILP")
    nodes = (("mip_max_nodes", slot_node_limit),) if slot_node_limit > 0 else ()
    limits = SolveLimits(
        time_limit_s=slot_time_limit_s, rel_gap=0.0, abs_gap=util_gap, highs_options=nodes
    )
    try:
        solve = solve_model(m, backend, limits, deadline)
    except DdlschedError as exc:
        if isinstance(exc, SolverError):
            raise SolverError(f"{where}: {_one_line(exc)}") from exc
        raise
    except Exception as exc:  # a solver fault is an error row, never a crash
        raise SolverError(f"{where}: {backend} failed: {_one_line(exc)}") from exc
    stats.slots_solved += 1
    stats.solver_time_s += solve.runtime_s
    stats.max_variables = max(stats.max_variables, solve.num_variables)
    if solve.status == Status.OPTIMAL:
        entries = _checked(instance, demand, _decode(m, demand, instance.num_machines), where)
    elif solve.status == Status.FEASIBLE or (
        solve.status == Status.TIME_LIMIT_NO_SOLUTION and greedy_start
    ):
        stats.slots_at_limit += 1
        if solve.time_limit_hit:
            stats.slots_at_time_limit += 1
        else:
            stats.slots_at_node_limit += 1
        entries = []
        if solve.status == Status.FEASIBLE:
            entries = _checked(instance, demand, _decode(m, demand, instance.num_machines), where)
        if greedy_start:
            value = slot_objective(instance, entries) if entries else -math.inf
            replaced = False
            for greedy in (fifo_slot, drf_slot):
                candidate = greedy(instance, demand)
                candidate_value = slot_objective(instance, candidate)
                if candidate_value > value + 1e-9:
                    entries, value, replaced = candidate, candidate_value, True
            stats.slots_greedy_start += int(replaced)
    else:
        deadline.check(where)
        raise SolverError(
            f"{where}: {backend} ended without a solution ({solve.status}, "
            f"{_one_line(solve.message)})"
        )
    served = len({i for i, _, w, _ in entries if w > 0})
    stats.served.append(served)
    if solve.status != Status.OPTIMAL:
        bound = solve.bound
        most = math.floor(bound / _served_weight(instance) + 1e-9) if bound is not None else None
        if most is None or most > served:
            stats.slots_served_unproven += 1
    return entries


def run_dorm(
    instance: DmlrsInstance,
    backend: str = "highs",
    slot_time_limit_s: float = DEFAULT_SLOT_TIME_LIMIT_S,
    deadline: Deadline | None = None,
    *,
    util_gap: float = DEFAULT_UTIL_GAP,
    greedy_start: bool = True,
    slot_node_limit: int = DEFAULT_SLOT_NODE_LIMIT,
) -> tuple[DmlrsSchedule, dict[str, Any]]:
    """The ``dorm`` baseline: the shared slot loop with :func:`dorm_slot` in every slot.

    Slot ``t`` (of ``T``) gets ``slot_node_limit`` nodes and ``min(slot_time_limit_s,
    0.8 remaining / (T - t + 1))`` seconds, ``remaining`` what the deadline
    leaves (module docstring). Returns the schedule (accepted = completed jobs, unfinished
    = jobs with an allocation not done by ``T``) and ``info``: slots solved,
    slots stopped at their limit with an incumbent (by nodes, by time; whether
    the row depends on the load), slots where a greedy
    start replaced the incumbent, slots whose served count is not proven
    maximal, solver and model-building time, the largest model.
    """
    if not slot_time_limit_s > 0:
        raise ValueError(f"slot_time_limit_s must be > 0, got {slot_time_limit_s!r}")
    deadline = deadline or Deadline.unlimited()
    stats = DormStats(backend=backend)

    def allocate(inst: DmlrsInstance, demand: SlotDemand) -> Sequence[SlotEntry]:
        share = TIME_SHARE * deadline.remaining_s() / (inst.slots - demand.slot + 1)
        return dorm_slot(
            inst,
            demand,
            backend=backend,
            slot_time_limit_s=max(1e-3, min(slot_time_limit_s, share)),
            util_gap=util_gap,
            greedy_start=greedy_start,
            deadline=deadline,
            stats=stats,
            slot_node_limit=slot_node_limit,
        )

    schedule = simulate_slots(instance, allocate, deadline)
    info = stats.as_info()
    info["slot_time_limit_s"] = slot_time_limit_s
    info["util_gap"] = util_gap
    info["greedy_start"] = greedy_start
    info["slot_node_limit"] = slot_node_limit
    return schedule, info
