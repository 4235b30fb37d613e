"""Mutation moves over ``tiny`` asrpt instances, for the worst-case instance search.

The search (:mod:`ddlsched.bench.worstcase`) is generic over families: a
family supplies its tiny generator, these moves, a budget measure and its
exact method. For ``asrpt`` the budget is the prediction error
``epsilon_bar`` (Eq. 9, iterations); every move keeps an instance inside
the ``tiny`` preset's grid (arrivals whole multiples of ``time_unit_s``,
even iterations 2-20, horizon at most
:data:`~ddlsched.workloads.asrpt.TINY_HORIZON_UNITS` units), so ``exact``
proves it as fast as a generated one.

Moves (one per call, drawn uniformly):

* ``arrival``: a job's arrival becomes a random whole number of units in
  0-30 (then all arrivals shift so the first is at 0);
* ``iterations``: a job's true iterations become a random even number in
  2-20;
* ``prediction``: a job's prediction becomes 0 (unseen, probability 1/4),
  exact (1/4) or ``n exp(Z)`` (1/2), rounded to 3 decimals;
* ``config``: a job takes another configuration of the instance.

:func:`project` then scales every prediction error ``n~_i - n_i`` by the
same factor so that ``epsilon_bar`` does not exceed the budget (a budget of
0 gives perfect predictions). A move that would break the horizon is
undone (the instance comes back unchanged).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from ddlsched.problems.asrpt import AsrptInstance, job_placement_instance
from ddlsched.problems.placement import alpha_max
from ddlsched.workloads.asrpt import TINY_HORIZON_UNITS

__all__ = ["MOVES", "epsilon_bar", "mutate", "project"]

MOVES = ("arrival", "iterations", "prediction", "config")


def epsilon_bar(instance: AsrptInstance) -> float:
    """``sum_i |n_i - n~_i| / I`` (Eq. 9)."""
    return math.fsum(abs(j.iterations - j.predicted_iterations) for j in instance.jobs) / len(
        instance.jobs
    )


def _horizon_units(instance: AsrptInstance) -> float:
    cluster = instance.cluster
    total = max(j.arrival_s for j in instance.jobs)
    for job in instance.jobs:
        config = instance.configs[job.config]
        full, rest = divmod(config.num_gpus, cluster.gpus_per_server)
        packed = (cluster.gpus_per_server,) * full + ((rest,) if rest else ())
        total += job.iterations * alpha_max(job_placement_instance(cluster, config, packed))
    return total / instance.time_unit_s


def project(instance: AsrptInstance, budget: float) -> AsrptInstance:
    """Scale all prediction errors by one factor so that ``epsilon_bar <= budget``."""
    eps = epsilon_bar(instance)
    if eps <= budget:
        return instance
    factor = budget / eps
    jobs = tuple(
        replace(
            j,
            predicted_iterations=max(
                0.0,
                math.floor((j.iterations + (j.predicted_iterations - j.iterations) * factor) * 1000)
                / 1000
                if j.predicted_iterations >= j.iterations
                else math.ceil(
                    (j.iterations + (j.predicted_iterations - j.iterations) * factor) * 1000
                )
                / 1000,
            ),
        )
        for j in instance.jobs
    )
    return replace(instance, jobs=jobs)


def mutate(instance: AsrptInstance, rng: np.random.Generator, budget: float) -> AsrptInstance:
    """One random move (see the module docstring), projected onto the budget."""
    jobs = list(instance.jobs)
    k = int(rng.integers(len(jobs)))
    move = MOVES[int(rng.integers(len(MOVES)))]
    job = jobs[k]
    unit = instance.time_unit_s
    if move == "arrival":
        jobs[k] = replace(job, arrival_s=int(rng.integers(0, 31)) * unit)
        first = min(j.arrival_s for j in jobs)
        jobs = [replace(j, arrival_s=round(j.arrival_s - first, 10)) for j in jobs]
    elif move == "iterations":
        jobs[k] = replace(job, iterations=2 * int(rng.integers(1, 11)))
    elif move == "prediction":
        pick = rng.random()
        if pick < 0.25:
            predicted = 0.0
        elif pick < 0.5:
            predicted = float(job.iterations)
        else:
            predicted = round(job.iterations * math.exp(float(rng.standard_normal())), 3)
        jobs[k] = replace(job, predicted_iterations=predicted)
    else:
        names = sorted(instance.configs)
        jobs[k] = replace(job, config=names[int(rng.integers(len(names)))], group="")
        jobs[k] = replace(jobs[k], group=jobs[k].config)
    candidate = replace(instance, jobs=tuple(jobs))
    if _horizon_units(candidate) > TINY_HORIZON_UNITS:
        return instance
    return project(candidate, budget)
