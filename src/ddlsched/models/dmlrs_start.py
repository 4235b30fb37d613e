"""Family ``dmlrs``: the MIP start of ``exact``'s compact MILP (ours; switches ``start``,
``improve_start``).

Paper: Yu et al., IEEE TNSE 2022 (reading notes of the paper): DMLRS (Eqs.
3-7); spec ``docs/families/dmlrs.md``, ``exact``. Nothing here is the
paper's. :func:`best_heuristic_schedule` gives the schedule, :func:`start_values`
turns it into values of every variable of the strengthened model
(:mod:`ddlsched.models.dmlrs_strong`, whose normalisations and symbols this
module follows), handed to the solver as ``model.ddlsched_start`` (HiGHS: an
incumbent it checks; SCIP: a hint). A start the solver finds infeasible is
ignored by it; a start never changes what is proven.

* ``start``: the best of FIFO, DRF and PD-ORS (seeded with the run's seed),
  each re-evaluated by the family evaluator, within the method's deadline.
* ``improve_start``: that best schedule improved by ``improve``'s greedy
  large-neighbourhood search (:func:`ddlsched.heuristics.dmlrs_improve.improve`,
  from the three schedules above, the run's seed, no MIP windows), budgeted in
  windows (:data:`IMPROVE_WINDOWS`: the same start on every machine) and capped
  at :data:`IMPROVE_SHARE` of the time left (a search the cap stops gives a
  start that depends on the machine's speed; the proven optimum does not).
  Measured on the frontier suite's 64-job instances (seeds 0, 1, 4): the three
  heuristics give 47-50 % of the best known utility, the search 91-95 %.

:func:`start_values` normalises the schedule as the model's validity argument
does: surplus PSs dropped, with ``no_surplus`` surplus workers dropped, the
slots after the first in which the job's share reaches 1 dropped and the
slots before it too when that slot alone completes the job; machines sorted
per slot (symmetry rows); a job whose samples reach ``V_i`` only within the
evaluator's ``1e-9`` slack is dropped from the start.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from ddlsched.deadline import Deadline
from ddlsched.errors import DdlschedError
from ddlsched.models.dmlrs_strong import (
    MAX_PATTERN_WORKERS,
    JobFacts,
    finishes_alone,
    job_facts,
)
from ddlsched.problems.dmlrs import DmlrsInstance, DmlrsSchedule, evaluate
from ddlsched.solvers.dmlrs_machine import identical_pairs, load_weights

if TYPE_CHECKING:
    import pyomo.environ as pyo

__all__ = ["IMPROVE_SHARE", "IMPROVE_WINDOWS", "best_heuristic_schedule", "start_values"]

#: LNS windows of ``improve_start`` (ours: ``improve``'s search converges, 300 windows
#: without a gain, after about 350-1,000 windows on the frontier suite's 64-job instances).
IMPROVE_WINDOWS = 1_000
#: The most of the time left that ``improve_start``'s search may take.
IMPROVE_SHARE = 0.2


def best_heuristic_schedule(
    instance: DmlrsInstance,
    seed: int | None,
    deadline: Deadline,
    improve_windows: int = 0,
) -> DmlrsSchedule | None:
    """The best evaluated schedule of FIFO, DRF and PD-ORS (``start``), improved by
    ``improve_windows`` windows of ``improve``'s search when positive (``improve_start``);
    ``None`` if no heuristic ran.

    A heuristic that fails (an error, the deadline) is skipped: the start is a hint."""
    from ddlsched.heuristics.dmlrs_baselines import run_drf, run_fifo
    from ddlsched.heuristics.pd_ors import PdOrsSettings, run_pd_ors
    from ddlsched.solvers.dmlrs_slot_lp import HighsSlotSolvers

    runs = {
        "fifo": lambda: run_fifo(instance, deadline),
        "drf": lambda: run_drf(instance, deadline),
        "pd_ors": lambda: (
            run_pd_ors(instance, PdOrsSettings(), seed or 0, deadline, HighsSlotSolvers()).schedule
        ),
    }
    schedules: dict[str, DmlrsSchedule] = {}
    best, best_value = None, -math.inf
    for name, run in runs.items():
        try:
            schedule = run()
            value = evaluate(instance, schedule).total_utility
        except DdlschedError:  # TimeLimitReached included: the start is optional
            continue
        schedules[name] = schedule
        if value > best_value:
            best, best_value = schedule, value
    if improve_windows > 0 and schedules:
        improved = _improved(instance, schedules, seed, deadline, improve_windows)
        if improved is not None and evaluate(instance, improved).total_utility > best_value:
            best = improved
    return best


def _improved(
    instance: DmlrsInstance,
    schedules: dict[str, DmlrsSchedule],
    seed: int | None,
    deadline: Deadline,
    windows: int,
) -> DmlrsSchedule | None:
    """``improve``'s greedy search from ``schedules`` (``improve_start``), ``None`` if it
    failed."""
    from ddlsched.heuristics.dmlrs_improve import ImproveSettings, improve

    settings = ImproveSettings(starts=tuple(schedules), max_windows=windows, seed=seed or 0)
    try:
        schedule, _, _ = improve(
            instance,
            settings,
            lambda name, _deadline: schedules[name],
            deadline.sub(share=IMPROVE_SHARE),
        )
    except DdlschedError:  # the start is optional
        return None
    return schedule


def _slot_entries(schedule: DmlrsSchedule, accepted: set[int]) -> dict[tuple[int, int], dict]:
    """``{(job, slot): {machine: [workers, ps]}}`` of the accepted jobs."""
    out: dict[tuple[int, int], dict] = {}
    for a in schedule.alloc:
        if a.job in accepted and (a.workers or a.ps):
            out.setdefault((a.job, a.slot), {})[a.machine] = [a.workers, a.ps]
    return out


def _normalised(job: JobFacts, per_machine: dict) -> dict:
    """Exactly ``ceil(W / gamma)`` PSs (surplus dropped, first from machines without workers);
    machines left with nothing are removed."""
    workers = sum(w for w, _ in per_machine.values())
    surplus = sum(s for _, s in per_machine.values()) - (-(-workers // job.gamma))
    for h in sorted(per_machine, key=lambda h: (per_machine[h][0] > 0, h)):
        cut = min(surplus, per_machine[h][1])
        per_machine[h][1] -= cut
        surplus -= cut
    return {h: ws for h, ws in per_machine.items() if ws[0] or ws[1]}


def _slot_permutation(instance: DmlrsInstance, jobs: dict[int, JobFacts], slot_use: dict) -> dict:
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
    no_surplus = bool(getattr(model, "dmlrs_no_surplus", False))
    jobs = job_facts(instance, live, no_surplus)
    completion = evaluate(instance, schedule).completion_slot
    entries = _slot_entries(schedule, set(schedule.accepted) & set(live))
    per_slot: dict[int, dict[int, dict]] = {}
    kept: dict[int, int] = {}
    for i in sorted(set(schedule.accepted) & set(live)):
        uses = {t: _normalised(jobs[i], dict(pm)) for (j, t), pm in entries.items() if j == i}
        done = completion[i]
        if no_surplus:
            uses, done = _without_surplus(jobs[i], uses)
        share = sum(_share(jobs[i], pm) for pm in uses.values())
        if share < 1.0 or done is None or (i, done) not in model.c:  # the evaluator's slack
            continue
        kept[i] = done
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


def _share(job: JobFacts, per_machine: dict) -> float:
    """The share of ``V_i`` one slot of ``{machine: [workers, ps]}`` gives in the model."""
    rate = job.rate_int if len(per_machine) == 1 else job.rate_ext
    return rate * sum(w for w, _ in per_machine.values())


def _capped(job: JobFacts, per_machine: dict) -> dict:
    """At most the pattern's most workers (``int_top`` on one machine, ``ext_top`` on
    several): surplus workers dropped from the highest machines first, then the PSs."""
    while per_machine:
        one = len(per_machine) == 1
        top = int(job.int_top[next(iter(per_machine))]) if one else job.ext_top
        surplus = sum(w for w, _ in per_machine.values()) - top
        if surplus <= 0:
            break
        for k in sorted(per_machine, reverse=True):
            cut = min(surplus, per_machine[k][0])
            per_machine[k][0] -= cut
            surplus -= cut
        per_machine = _normalised(job, per_machine)
    return per_machine


def _without_surplus(job: JobFacts, uses: dict[int, dict]) -> tuple[dict[int, dict], int | None]:
    """The normalisation of ``no_surplus`` (module docstring): counts capped, slots after the
    first in which the model's share reaches 1 dropped (that slot is the completion, ``None``
    if none), and the slots before it dropped when it completes the job alone."""
    kept: dict[int, dict] = {}
    total = 0.0
    for t in sorted(uses):
        per_machine = _capped(job, uses[t])
        if not per_machine:
            continue
        kept[t] = per_machine
        total += _share(job, per_machine)
        if total >= 1.0:
            workers = sum(w for w, _ in per_machine.values())
            if finishes_alone(job, workers, internal=len(per_machine) == 1):
                return {t: per_machine}, t
            return kept, t
    return kept, None


def _set_slot(model, values: Any, job: JobFacts, i: int, t: int, pm: dict) -> None:
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
