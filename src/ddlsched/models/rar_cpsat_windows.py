"""Windows of the ``rar`` CP-SAT search (ours): re-solve a few jobs, the rest fixed.

Spec ``docs/families/rar.md``; the model is :mod:`ddlsched.models.rar_cpsat`
(:func:`~ddlsched.models.rar_cpsat.build_model` with ``fixed``), the plans
:mod:`ddlsched.models.rar_cpsat_plan`. A large-neighbourhood search whose moves
are exact: each round frees ``size`` jobs of the current plan, keeps every other
job where it is (start, GPUs per server) and lets CP-SAT place and time the
freed ones anew (any placement, the model's lengths), minimising
``W C + sum_j G_j C_j`` over the freed jobs (the makespan first) with the
current plan as a complete hint, within ``work`` units of CP-SAT's
deterministic time and one worker. The answer of a round is a valid plan
never worse than the current one by the score ``(C, sum_j G_j C_j)``; it
replaces the current plan when its score is lower.

Which jobs a round frees (seeded, ``make_rng(seed)``; each kind with
probability 1/2): ``tail``, every job that ends at the makespan (``size`` at
most) and the rest of ``size`` drawn uniformly from the other jobs among the
``2 size`` latest-ending (ties: lower index) - the end of the plan, where the
makespan is decided; ``window``, ``size`` consecutive jobs in order of start (ties:
lower index) from a uniformly drawn first position - holes in the middle
that later tail rounds can use. Round ``r`` runs CP-SAT with seed
``seed + r``. Same inputs, same plan, unless the wall-clock deadline stops a
round (then the search ends there, ``time_limit_hit``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import numpy as np

from ddlsched.deadline import Deadline
from ddlsched.models.rar_cpsat import Lengths, add_hint, build_model, decode_plan
from ddlsched.models.rar_cpsat_plan import Plan
from ddlsched.problems.rar import RarInstance
from ddlsched.rng import make_rng
from ddlsched.solvers.cpsat import CpsatOptions, solve_cpsat

__all__ = ["WindowSettings", "plan_score", "window_search"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class WindowSettings:
    """What :func:`window_search` does (module docstring)."""

    rounds: int = 100
    size: int = 24
    work: float = 1.0
    seed: int = 0


def plan_score(instance: RarInstance, plan: Plan) -> tuple[int, int]:
    """``(makespan, sum_j G_j C_j)`` of ``plan`` (lower is better)."""
    weighted = sum(job.gpus * p.end for job, p in zip(instance.jobs, plan.jobs, strict=True))
    return plan.makespan, weighted


def _free_jobs(plan: Plan, size: int, rng: np.random.Generator) -> tuple[str, list[int]]:
    """The kind of a round and the jobs it frees (module docstring)."""
    count = len(plan.jobs)
    size = min(size, count)
    if rng.random() < 0.5:
        latest = sorted(range(count), key=lambda j: (-plan.jobs[j].end, j))[: 2 * size]
        critical = [j for j in latest if plan.jobs[j].end == plan.makespan][:size]
        others = [j for j in latest if plan.jobs[j].end < plan.makespan]
        picked = rng.choice(len(others), size=min(len(others), size - len(critical)), replace=False)
        return "tail", sorted(critical + [others[int(i)] for i in picked])
    by_start = sorted(range(count), key=lambda j: (plan.jobs[j].start, j))
    first = int(rng.integers(count - size + 1))
    return "window", sorted(by_start[first : first + size])


def _round(
    instance: RarInstance,
    data: Lengths,
    plan: Plan,
    free: list[int],
    options: CpsatOptions,
    deadline,
) -> tuple[Plan | None, Any]:
    """One round: the freed jobs re-solved, the others fixed; the new plan (or ``None``)."""
    chosen = set(free)
    fixed = {j: job for j, job in enumerate(plan.jobs) if j not in chosen}
    model, variables = build_model(instance, data, plan.makespan, "lexicographic", fixed)
    add_hint(model, variables, plan, data)
    run = solve_cpsat(model, deadline, options)
    if not run.has_solution:
        return None, run
    return decode_plan(run, variables, instance, fixed), run


def window_search(
    instance: RarInstance,
    data: Lengths,
    plan: Plan,
    settings: WindowSettings,
    deadline: Deadline | None = None,
) -> tuple[Plan, dict[str, Any], bool]:
    """The best plan of ``settings.rounds`` rounds from ``plan``, its ``info``, whether cut."""
    rng = make_rng(settings.seed)
    current, score = plan, plan_score(instance, plan)
    improved = {"tail": 0, "window": 0}
    work = 0.0
    cut = False
    rounds = 0
    for r in range(settings.rounds):
        if deadline is not None and deadline.expired():
            cut = True
            break
        kind, free = _free_jobs(current, settings.size, rng)
        options = CpsatOptions(seed=settings.seed + r, deterministic_time_s=settings.work)
        found, run = _round(instance, data, current, free, options, deadline)
        rounds += 1
        if run.solver is not None:
            work += float(run.solver.deterministic_time)
        if run.time_limit_hit and deadline is not None and deadline.expired():
            cut = True
        if found is not None and plan_score(instance, found) < score:
            current, score = found, plan_score(instance, found)
            improved[kind] += 1
            log.info("rar cpsat windows: round %d (%s) -> %s", r, kind, score)
        if cut:
            break
    info = {
        "window_rounds": rounds,
        "window_improved": improved,
        "window_work": round(work, 3),
        "window_start_makespan": plan.makespan,
        "window_makespan": current.makespan,
    }
    return current, info, cut
