"""Mutation moves on tiny ``dmlrs`` instances for the worst-case search (``bench worstcase``).

The search (:mod:`ddlsched.bench.worstcase`) looks, per budget, for each
online policy's worst instance against the proven optimum. The budget of
``dmlrs`` (ours) is the largest time sensitivity ``theta2`` of the
utilities (the paper's range is [0.01, 1]): the steeper a job's utility,
the more a late start costs, so the budget measures how hard being online
can be. Every move keeps the instance valid and ``tiny``-sized (at most 4
jobs, 3 machines, 6 slots; ``F <= 4``, ``gamma <= 2``), small enough for
``exact``.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ddlsched.problems.dmlrs import DmlrsInstance, DmlrsJob, Utility
from ddlsched.workloads.dmlrs import tiny

__all__ = ["generate", "mutate", "theta2_max"]

_MIN_THETA2 = 0.01


def theta2_max(instance: DmlrsInstance) -> float:
    """The budget measure: the largest ``theta2`` over the jobs."""
    return max((j.utility.theta2 for j in instance.jobs), default=0.0)


def _clip(instance: DmlrsInstance, budget: float) -> DmlrsInstance:
    cap = max(float(budget), _MIN_THETA2)
    jobs = tuple(
        replace(j, utility=replace(j.utility, theta2=min(j.utility.theta2, cap)))
        for j in instance.jobs
    )
    return replace(instance, jobs=jobs, meta={})


def generate(seed: int, budget: float) -> DmlrsInstance:
    """A ``tiny`` instance with every ``theta2`` at most ``budget``."""
    return _clip(tiny(seed), budget)


def _move_job(job: DmlrsJob, rng: np.random.Generator, slots: int) -> DmlrsJob:
    move = int(rng.integers(7))
    if move == 0:
        return replace(
            job, arrival_slot=int(np.clip(job.arrival_slot + rng.choice([-1, 1]), 1, slots))
        )
    if move == 1:
        return replace(job, epochs=max(1, job.epochs + int(rng.choice([-1, 1]))))
    if move == 2:
        return replace(job, global_batch=int(np.clip(job.global_batch + rng.choice([-1, 1]), 1, 4)))
    if move == 3:
        return replace(job, gamma=3 - job.gamma if job.gamma in (1, 2) else 1)
    if move == 4:
        u = job.utility
        return replace(job, utility=Utility(float(rng.uniform(1, 100)), u.theta2, u.theta3))
    if move == 5:
        u = job.utility
        return replace(job, utility=Utility(u.theta1, float(rng.uniform(0.01, 1)), u.theta3))
    scale = float(rng.choice([0.5, 2.0]))
    return replace(job, samples=max(1, round(job.samples * scale)))


def mutate(instance: DmlrsInstance, rng: np.random.Generator, budget: float) -> DmlrsInstance:
    """One random move (a job's arrival, epochs, ``F``, ``gamma``, utility or size; or the
    horizon), kept valid and within the budget."""
    if rng.random() < 0.15:
        slots = int(np.clip(instance.slots + rng.choice([-1, 1]), 3, 6))
        jobs = tuple(replace(j, arrival_slot=min(j.arrival_slot, slots)) for j in instance.jobs)
        return _clip(replace(instance, slots=slots, jobs=jobs), budget)
    i = int(rng.integers(len(instance.jobs)))
    jobs = list(instance.jobs)
    jobs[i] = _move_job(jobs[i], rng, instance.slots)
    return _clip(replace(instance, jobs=tuple(jobs)), budget)
