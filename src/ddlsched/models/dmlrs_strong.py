"""Family ``dmlrs``: strengthenings of ``exact``'s compact MILP (ours), each switchable.

Paper: Yu et al., IEEE TNSE 2022 (reading notes of the paper): DMLRS (Eqs.
3-7); spec ``docs/families/dmlrs.md``, ``exact``.
None of this is the paper's or the spec's: every row and fixing here is
ours, added to the model of :mod:`ddlsched.models.dmlrs_milp` (whose rows
and symbols ``c, m, e, wI, sI, wE, sE`` this docstring uses) by
:func:`strengthen`, for ``exact`` only (the pricing of column generation
keeps the plain model). :class:`Strengthening` switches each one (all on
by default; ``exact``'s parameters of the same names), so that the old
model stays one parameter away and the frontier suite
(``benchmarks/suites/frontier-dmlrs.toml``) runs both side by side.

Validity (each cuts off no optimum; together neither). Start from any
optimum of the plain model and *normalise* it: (a) a mode (``m[i,h,t]`` or
``e[i,t]``) of a slot in which the job has no worker is set to 0 (its PSs
are 0 already: ``gamma sum s <= sum w + gamma - 1``); (b) the completion
``c[i,t] = 1`` of a job moves to the last slot ``t* <= t`` with workers
(the samples up to ``t*`` equal those up to ``t``; ``u_i`` is
non-increasing, so the value does not drop and the normalised schedule is
an optimum too; modes after ``t*`` are empty by (a)); (c) the machines of
each slot are sorted by load within each run of identical machines (the
plain model's symmetry rows, :mod:`ddlsched.models.dmlrs_milp`). The
normalised optimum satisfies every row below:

* ``earliest`` (dominance): job ``i`` processes at most ``r_i = max(rho_I
  max_h UwI[h], rho_E min(F_i, sum_h UwE[h]))`` of its workload per slot
  (``rho`` the per-worker share of ``V_i`` per slot at ``b_int``/``b_ext``,
  ``UwI``, ``UwE`` the most workers that fit on one machine with their PSs
  or alone, :func:`ddlsched.solvers.dmlrs_machine.machine_bounds`; one mode
  per slot), so it cannot complete before ``a_i + k_i - 1`` with ``k_i =
  ceil((1 - 1e-9) / r_i)``: those ``c[i,t]`` are fixed to 0 (and every
  ``c`` of a job with ``a_i + k_i - 1 > T``). The ``1e-9`` only ever fixes
  fewer. The plain model's ``d_min_i`` assumes ``F_i`` workers on one
  machine at ``b_int`` whatever the capacities; on ``tiny`` machines a job
  often fits one or two workers internally, and ``k_i`` is larger.
* ``completion_work``: ``c[i,t] <= sum_h m[i,h,t] + e[i,t]``: a job runs
  in its completion slot (normalisation (b)).
* ``patterns`` (an extended formulation of each mode): binaries
  ``y[i,h,t,W]`` (internal on ``h`` with ``W = 1..UwI[h]`` workers) with
  ``m = sum_W y``, ``wI = sum_W W y``, ``sI = sum_W ceil(W / gamma_i) y``,
  and ``z[i,t,W]`` (external with ``W = 1..min(F_i, sum_h UwE[h])`` workers
  in all) with ``e = sum_W z``, ``sum_h wE = sum_W W z``, ``sum_h sE =
  sum_W ceil(W / gamma_i) z``. The integer points are the plain model's
  with a used mode having at least one worker (normalisation (a)) and
  ``ceil(W / gamma_i)`` PSs (its dominance rows); the LP relaxation is
  tighter (the PSs of a fractional mode are no longer ``W / gamma_i``, and
  internal resource use is a convex combination of real allocations).
  Only for jobs with ``F_i <=`` :data:`MAX_PATTERN_WORKERS` (the number of
  binaries grows with ``F_i``); the others keep the plain rows.
* ``capacity_cuts`` (aggregated capacity rows; they add the pattern
  binaries if ``patterns`` is off): Eq. 5 written over the pattern
  binaries, per machine and slot (``sum_{i,W} (alpha_ir W + beta_ir
  ceil(W / gamma_i)) y[i,h,t,W] + alpha_ir wE + beta_ir sE <= C[h,r]``), and
  summed over the machines with the external totals (``sum_i sum_{h,W}
  use_ir(W) y + sum_W use_ir(W) z <= sum_h C[h,r]``). Both hold at every
  point of the pattern formulation (the first is Eq. 5 with ``wI, sI``
  substituted; the second sums Eq. 5 over machines with ``sum_h wE, sum_h
  sE`` substituted): nothing is cut off, but the rows are knapsacks over
  binaries, from which the solver derives cover and clique cuts that it
  does not find in the mixed rows of Eq. 5.
* ``start`` (a MIP start, changes no row): the best of FIFO, DRF and
  PD-ORS (seeded with the run's seed; :func:`best_heuristic_schedule`,
  each re-evaluated by the family evaluator, within the method's deadline)
  is normalised as above by :func:`start_values` (surplus PSs dropped,
  machines sorted per slot, a job whose samples reach ``V_i`` only within
  the evaluator's ``1e-9`` slack is dropped from the start) and handed to
  the solver as ``model.ddlsched_start`` (HiGHS: an incumbent it checks;
  SCIP: a hint). A start the solver finds infeasible is ignored by it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ddlsched.deadline import Deadline
from ddlsched.errors import DdlschedError
from ddlsched.models.dmlrs_milp import job_data
from ddlsched.problems.dmlrs import DmlrsInstance, DmlrsSchedule, evaluate
from ddlsched.solvers.dmlrs_machine import identical_pairs, load_weights, machine_bounds

if TYPE_CHECKING:
    import pyomo.environ as pyo

__all__ = [
    "MAX_PATTERN_WORKERS",
    "Strengthening",
    "best_heuristic_schedule",
    "earliest_completion",
    "start_values",
    "strengthen",
]

#: Pattern binaries only for jobs with at most this many workers ``F_i`` (ours: ``tiny``
#: has ``F <= 4``; ``paper``'s ``F`` up to 200 would multiply the binaries by up to 200).
MAX_PATTERN_WORKERS = 16
_RTOL = 1e-9


@dataclass(frozen=True)
class Strengthening:
    """Which strengthenings of the module docstring ``exact`` applies (all by default)."""

    earliest: bool = True
    completion_work: bool = True
    patterns: bool = True
    capacity_cuts: bool = True
    start: bool = True

    @classmethod
    def none(cls) -> Strengthening:
        """The plain model of :mod:`ddlsched.models.dmlrs_milp`."""
        return cls(False, False, False, False, False)

    @property
    def changes_model(self) -> bool:
        return self.earliest or self.completion_work or self.patterns or self.capacity_cuts


@dataclass(frozen=True)
class _Job:
    """What the strengthenings need of one job with variables."""

    arrival: int
    gamma: int
    worker_cap: int
    rate_int: float  # share of V_i per worker and slot at b_int
    rate_ext: float
    uwi: np.ndarray  # per machine, machine_bounds
    uwe: np.ndarray
    alpha: np.ndarray
    beta: np.ndarray


def _jobs(instance: DmlrsInstance, live: list[int]) -> dict[int, _Job]:
    out = {}
    for i in live:
        data = job_data(instance, i)
        uwi, _, uwe, _ = machine_bounds(
            instance.cap, data.alpha, data.beta, data.worker_cap, data.gamma
        )
        out[i] = _Job(
            arrival=instance.jobs[i].arrival_slot,
            gamma=data.gamma,
            worker_cap=data.worker_cap,
            rate_int=data.rate_int,
            rate_ext=data.rate_ext,
            uwi=uwi,
            uwe=uwe,
            alpha=data.alpha,
            beta=data.beta,
        )
    return out


def _external_most(job: _Job) -> int:
    return int(min(job.worker_cap, int(job.uwe.sum())))


def earliest_completion(instance: DmlrsInstance, i: int) -> int | None:
    """The earliest slot job ``i`` can complete in given the capacities (``earliest``),
    ``None`` if it cannot complete by ``T`` (or has no variable in the model)."""
    if job_data(instance, i) is None:
        return None
    job = _jobs(instance, [i])[i]
    per_slot = max(job.rate_int * int(job.uwi.max()), job.rate_ext * _external_most(job))
    if per_slot <= 0:
        return None
    slots = max(1, math.ceil((1.0 - _RTOL) / per_slot))
    done = job.arrival + slots - 1
    return done if done <= instance.slots else None


# --------------------------------------------------------------------------- rows


def strengthen(model: pyo.ConcreteModel, instance: DmlrsInstance, which: Strengthening) -> None:
    """Add the rows and fixings ``which`` selects to ``exact``'s model (module docstring)."""
    import pyomo.environ as pyo

    live = list(model.dmlrs_jobs)
    jobs = _jobs(instance, live)
    if which.earliest:
        for i in live:
            first = earliest_completion(instance, i)
            for (j, t), var in model.c.items():
                if j == i and (first is None or t < first):
                    var.setub(0)
    if which.completion_work:
        machines = range(instance.num_machines)
        model.completion_work = pyo.Constraint(
            list(model.c.keys()),
            rule=lambda _m, i, t: (
                model.c[i, t] <= sum(model.m[i, h, t] for h in machines) + model.e[i, t]
            ),
        )
    if which.patterns or which.capacity_cuts:
        _add_patterns(model, instance, jobs)
    if which.capacity_cuts:
        _add_capacity_cuts(model, instance, jobs)


def _add_patterns(model: pyo.ConcreteModel, instance: DmlrsInstance, jobs: dict[int, _Job]):
    """The pattern binaries ``y`` and ``z`` and their linking rows (module docstring)."""
    import pyomo.environ as pyo

    machines = range(instance.num_machines)
    small = [i for i, job in jobs.items() if job.worker_cap <= MAX_PATTERN_WORKERS]
    slots = {i: range(jobs[i].arrival, instance.slots + 1) for i in small}
    it = [(i, t) for i in small for t in slots[i]]
    iht = [(i, h, t) for i, t in it for h in machines]
    y_idx = [(i, h, t, w) for i, h, t in iht for w in range(1, int(jobs[i].uwi[h]) + 1)]
    z_idx = [(i, t, w) for i, t in it for w in range(1, _external_most(jobs[i]) + 1)]
    model.pat_int = pyo.Var(y_idx, domain=pyo.Binary)
    model.pat_ext = pyo.Var(z_idx, domain=pyo.Binary)
    y_of = {key: [] for key in iht}
    for i, h, t, w in y_idx:
        y_of[i, h, t].append(w)
    z_of = {key: [] for key in it}
    for i, t, w in z_idx:
        z_of[i, t].append(w)

    def ps(i: int, w: int) -> int:
        return -(-w // jobs[i].gamma)

    def internal(kind: str):
        def rule(_m, i, h, t):
            y = [(w, model.pat_int[i, h, t, w]) for w in y_of[i, h, t]]
            if kind == "mode":
                return model.m[i, h, t] == sum(v for _, v in y)
            if kind == "workers":
                return model.wI[i, h, t] == sum(w * v for w, v in y)
            return model.sI[i, h, t] == sum(ps(i, w) * v for w, v in y)

        return rule

    def external(kind: str):
        def rule(_m, i, t):
            z = [(w, model.pat_ext[i, t, w]) for w in z_of[i, t]]
            if kind == "mode":
                return model.e[i, t] == sum(v for _, v in z)
            if kind == "workers":
                return sum(model.wE[i, h, t] for h in machines) == sum(w * v for w, v in z)
            return sum(model.sE[i, h, t] for h in machines) == sum(ps(i, w) * v for w, v in z)

        return rule

    for kind in ("mode", "workers", "servers"):
        setattr(model, f"pat_int_{kind}", pyo.Constraint(iht, rule=internal(kind)))
        setattr(model, f"pat_ext_{kind}", pyo.Constraint(it, rule=external(kind)))


def _pattern_use(job: _Job, r: int, w: int) -> float:
    return float(job.alpha[r]) * w + float(job.beta[r]) * -(-w // job.gamma)


def _add_capacity_cuts(model: pyo.ConcreteModel, instance: DmlrsInstance, jobs: dict[int, _Job]):
    """Eq. 5 over the pattern binaries, per machine, and summed over the machines with the
    external totals ``z`` (module docstring)."""
    import pyomo.environ as pyo

    T, R, cap = instance.slots, len(instance.resources), instance.cap
    machines = range(instance.num_machines)
    present = {t: [i for i in jobs if jobs[i].arrival <= t] for t in range(1, T + 1)}
    used = {
        t: [r for r in range(R) if any(jobs[i].alpha[r] or jobs[i].beta[r] for i in present[t])]
        for t in present
    }
    y, z = model.pat_int, model.pat_ext

    def machine_use(i, h, t, r):
        job = jobs[i]
        if job.worker_cap <= MAX_PATTERN_WORKERS:
            internal = sum(
                _pattern_use(job, r, w) * y[i, h, t, w] for w in range(1, int(job.uwi[h]) + 1)
            )
        else:
            internal = (
                float(job.alpha[r]) * model.wI[i, h, t] + float(job.beta[r]) * model.sI[i, h, t]
            )
        return (
            internal
            + float(job.alpha[r]) * model.wE[i, h, t]
            + float(job.beta[r]) * model.sE[i, h, t]
        )

    per_machine = [(h, r, t) for t in present for h in machines for r in used[t]]
    model.cut_machine = pyo.Constraint(
        per_machine,
        rule=lambda _m, h, r, t: (
            sum(machine_use(i, h, t, r) for i in present[t]) <= float(cap[h, r])
        ),
    )

    def slot_use(i, t, r):
        job = jobs[i]
        if job.worker_cap > MAX_PATTERN_WORKERS:
            return sum(machine_use(i, h, t, r) for h in machines)
        internal = sum(
            _pattern_use(job, r, w) * y[i, h, t, w]
            for h in machines
            for w in range(1, int(job.uwi[h]) + 1)
        )
        external = sum(
            _pattern_use(job, r, w) * z[i, t, w] for w in range(1, _external_most(job) + 1)
        )
        return internal + external

    model.cut_slot = pyo.Constraint(
        [(r, t) for t in present for r in used[t]],
        rule=lambda _m, r, t: sum(slot_use(i, t, r) for i in present[t]) <= float(cap[:, r].sum()),
    )


# --------------------------------------------------------------------------- MIP start


def best_heuristic_schedule(
    instance: DmlrsInstance, seed: int | None, deadline: Deadline
) -> DmlrsSchedule | None:
    """The best evaluated schedule of FIFO, DRF and PD-ORS (``start``); ``None`` if none ran.

    A heuristic that fails (an error, the deadline) is skipped: the start is a hint."""
    from ddlsched.heuristics.dmlrs_baselines import run_drf, run_fifo
    from ddlsched.heuristics.pd_ors import PdOrsSettings, run_pd_ors
    from ddlsched.solvers.dmlrs_slot_lp import HighsSlotSolvers

    runs = (
        lambda: run_fifo(instance, deadline),
        lambda: run_drf(instance, deadline),
        lambda: (
            run_pd_ors(instance, PdOrsSettings(), seed or 0, deadline, HighsSlotSolvers()).schedule
        ),
    )
    best, best_value = None, -math.inf
    for run in runs:
        try:
            schedule = run()
            value = evaluate(instance, schedule).total_utility
        except DdlschedError:  # TimeLimitReached included: the start is optional
            continue
        if value > best_value:
            best, best_value = schedule, value
    return best


def _slot_entries(schedule: DmlrsSchedule, accepted: set[int]) -> dict[tuple[int, int], dict]:
    """``{(job, slot): {machine: [workers, ps]}}`` of the accepted jobs."""
    out: dict[tuple[int, int], dict] = {}
    for a in schedule.alloc:
        if a.job in accepted and (a.workers or a.ps):
            out.setdefault((a.job, a.slot), {})[a.machine] = [a.workers, a.ps]
    return out


def _normalised(job: _Job, per_machine: dict) -> dict:
    """Exactly ``ceil(W / gamma)`` PSs (surplus dropped, first from machines without workers);
    machines left with nothing are removed."""
    workers = sum(w for w, _ in per_machine.values())
    surplus = sum(s for _, s in per_machine.values()) - (-(-workers // job.gamma))
    for h in sorted(per_machine, key=lambda h: (per_machine[h][0] > 0, h)):
        cut = min(surplus, per_machine[h][1])
        per_machine[h][1] -= cut
        surplus -= cut
    return {h: ws for h, ws in per_machine.items() if ws[0] or ws[1]}


def _slot_permutation(instance: DmlrsInstance, jobs: dict[int, _Job], slot_use: dict) -> dict:
    """Machine ``h -> position`` sorting each run of identical machines by load, decreasing."""
    H, cap = instance.num_machines, instance.cap
    load = np.zeros(H)
    for i, per_machine in slot_use.items():
        for h, (w, s) in per_machine.items():
            lw, ls = load_weights(cap[h], jobs[i].alpha, jobs[i].beta)
            load[h] += lw * w + ls * s
    pairs, order, h = set(identical_pairs(cap)), {}, 0
    while h < H:
        end = h
        while end in pairs:
            end += 1
        run = sorted(range(h, end + 1), key=lambda k: (-load[k], k))
        order.update({old: h + pos for pos, old in enumerate(run)})
        h = end + 1
    return order


def start_values(
    model: pyo.ConcreteModel, instance: DmlrsInstance, schedule: DmlrsSchedule
) -> list[tuple[Any, float]]:
    """``(var, value)`` pairs of every variable of ``model`` for ``schedule`` (``start``)."""
    live = list(model.dmlrs_jobs)
    jobs = _jobs(instance, live)
    completion = evaluate(instance, schedule).completion_slot
    entries = _slot_entries(schedule, set(schedule.accepted) & set(live))
    per_slot: dict[int, dict[int, dict]] = {}
    kept: dict[int, int] = {}
    for i in sorted(set(schedule.accepted) & set(live)):
        uses = {t: _normalised(jobs[i], dict(pm)) for (j, t), pm in entries.items() if j == i}
        share = sum(
            (jobs[i].rate_int if len(pm) == 1 else jobs[i].rate_ext)
            * sum(w for w, _ in pm.values())
            for pm in uses.values()
        )
        if share < 1.0 or (i, completion[i]) not in model.c:  # within the evaluator's slack
            continue
        kept[i] = completion[i]
        for t, pm in uses.items():
            per_slot.setdefault(t, {})[i] = pm
    import pyomo.environ as pyo
    from pyomo.common.collections import ComponentMap

    values = ComponentMap((var, 0.0) for var in model.component_data_objects(pyo.Var))
    for i, t in kept.items():
        values[model.c[i, t]] = 1.0
    for t, slot_use in per_slot.items():
        order = _slot_permutation(instance, jobs, slot_use)
        for i, pm in slot_use.items():
            _set_slot(model, values, jobs[i], i, t, {order[h]: ws for h, ws in pm.items()})
    return list(values.items())


def _set_slot(model, values: Any, job: _Job, i: int, t: int, pm: dict) -> None:
    """The values of job ``i``'s slot ``t`` with ``pm = {machine: [workers, ps]}``."""
    if not pm:  # PSs only: dropped
        return
    workers = sum(w for w, _ in pm.values())
    patterns = hasattr(model, "pat_int") and job.worker_cap <= MAX_PATTERN_WORKERS
    if len(pm) == 1:
        ((h, (w, s)),) = pm.items()
        values[model.m[i, h, t]] = 1.0
        values[model.wI[i, h, t]] = float(w)
        values[model.sI[i, h, t]] = float(s)
        if patterns:
            values[model.pat_int[i, h, t, w]] = 1.0
        return
    values[model.e[i, t]] = 1.0
    for h, (w, s) in pm.items():
        values[model.wE[i, h, t]] = float(w)
        values[model.sE[i, h, t]] = float(s)
    if patterns:
        values[model.pat_ext[i, t, workers]] = 1.0
