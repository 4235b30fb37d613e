"""Brute force over every allocation of a ``dmlrs`` instance (``micro`` preset size).

Independent of the MILP: it enumerates, per job, every single-job schedule
slot by slot (every split of ``W = 0..F_i`` workers and of the PSs over the
machines), keeps the ones that complete, applies the evaluator's own rules
(Fact 1: a slot runs at ``b_int`` exactly when its entries sit on one
machine; samples with the evaluator's relative slack; completion = the last
slot with workers), then combines the jobs' schedules with capacity checks
(vectorised over the last job).

Two restrictions, both dominance arguments (an optimal schedule satisfying
them always exists):

* exactly ``ceil(W / gamma_i)`` PSs in a slot with ``W`` workers: removing
  surplus PSs keeps the PS rule, lowers every capacity use, keeps the
  samples (the rate uses ``gamma_i``; fewer machines can only turn
  ``b_ext`` into ``b_int``) and keeps the completion slot (defined by the
  workers);
* no PS-only entries (slots without workers): removing them frees
  capacity and changes neither samples nor completion.

Rejected and unfinished jobs earn nothing, so only accepted jobs (with a
completing schedule) are allocated.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from ddlsched.problems.dmlrs import SAMPLE_RTOL, DmlrsInstance, samples_in_slot


def _splits(total: int, machines: int):
    """Every way to put ``total`` identical items on ``machines`` machines."""
    if machines == 1:
        yield (total,)
        return
    for first in range(total + 1):
        for rest in _splits(total - first, machines - 1):
            yield (first, *rest)


def _slot_options(instance: DmlrsInstance, i: int) -> list[tuple[tuple[int, int, int], ...]]:
    """Every allocation of job ``i`` in one slot: tuples of ``(machine, workers, ps)``."""
    job = instance.jobs[i]
    H = instance.num_machines
    options: list[tuple[tuple[int, int, int], ...]] = [()]
    for workers in range(1, job.global_batch + 1):
        servers = -(-workers // job.gamma)
        for w_split in _splits(workers, H):
            for s_split in _splits(servers, H):
                entry = tuple(
                    (h, w, s)
                    for h, (w, s) in enumerate(zip(w_split, s_split, strict=True))
                    if w or s
                )
                use = np.zeros((H, len(instance.resources)))
                for h, w, s in entry:
                    use[h] += instance.alpha[i] * w + instance.beta[i] * s
                if np.all(use <= instance.cap + 1e-9):
                    options.append(entry)
    return options


def job_schedules(instance: DmlrsInstance, i: int) -> tuple[np.ndarray, np.ndarray]:
    """``(utilities, usages)`` of job ``i``'s completing schedules, plus the empty one.

    ``usages[j]`` is the flat ``(H, R, T)`` use; schedules with equal use are
    merged (the best utility kept).
    """
    job = instance.jobs[i]
    H, R, T = instance.num_machines, len(instance.resources), instance.slots
    slots = list(range(job.arrival_slot, T + 1))
    options = _slot_options(instance, i)
    best: dict[bytes, tuple[float, np.ndarray]] = {}
    empty = np.zeros(H * R * T)
    best[empty.tobytes()] = (0.0, empty)
    for choice in itertools.product(options, repeat=len(slots)):
        samples, last = 0.0, None
        usage = np.zeros((H, R, T))
        for t, entry in zip(slots, choice, strict=True):
            if not entry:
                continue
            workers = sum(w for _, w, _ in entry)
            bandwidth = instance.b_int if len(entry) == 1 else instance.b_ext
            samples += samples_in_slot(job, workers, bandwidth, instance.slot_s)
            last = t
            for h, w, s in entry:
                usage[h, :, t - 1] += instance.alpha[i] * w + instance.beta[i] * s
        if last is None or samples < job.workload * (1.0 - SAMPLE_RTOL):
            continue
        utility = job.utility(last - job.arrival_slot)
        key = usage.tobytes()
        if key not in best or best[key][0] < utility:
            best[key] = (utility, usage.ravel())
    utilities = np.array([u for u, _ in best.values()])
    usages = np.array([use for _, use in best.values()])
    return utilities, usages


def brute_force_optimum(instance: DmlrsInstance) -> float:
    """The offline optimum of DMLRS (total utility), by enumeration."""
    T = instance.slots
    cap = np.repeat(instance.cap[:, :, None], T, axis=2).ravel() * (1 + 1e-9) + 1e-9
    per_job = [job_schedules(instance, i) for i in range(len(instance.jobs))]

    def search(k: int, used: np.ndarray) -> float:
        utilities, usages = per_job[k]
        fits = np.all(usages + used[None, :] <= cap[None, :], axis=1)
        if k == len(per_job) - 1:
            return float(utilities[fits].max())
        best = -math.inf
        for j in np.flatnonzero(fits):
            best = max(best, utilities[j] + search(k + 1, used + usages[j]))
        return best

    return search(0, np.zeros_like(cap))
