"""Lower-bound tests of RAR-DDLS that see jobs rigid in time *and* simultaneous on their GPUs.

The bounds of :mod:`~ddlsched.models.rar_lb_binpacking` (one GPU's runs whole and in
sequence) and :mod:`~ddlsched.models.rar_lb_configuration` (the rings running at one
moment fit the servers, time fluid) each see one half. The tests here see both at the
cluster level; each answers "can a schedule have makespan ``<= C``?" and is monotone in
``C``. Durations are ``rho_min_j`` (:func:`~ddlsched.models.rar_bounds.rho_min`): every
placement of job ``j`` takes at least that many slots, contention included (``tau_j`` is
non-decreasing in ``p_j`` and ``n_j``, spec ``rar.md``).

**The relaxation they share.** Take a schedule of makespan ``C``; job ``j`` holds its
``G_j`` GPUs during one interval of length ``p_j >= rho_min_j`` inside ``[0, C)``.
Shortening every interval to ``rho_min_j`` from its start keeps this true, and at every
slot the jobs running hold distinct GPUs: ``sum_{j active} G_j <= N``. So every schedule
gives a *cumulative* schedule (rigid intervals, demands ``G_j``, capacity ``N``) of the
durations ``rho_min_j`` within ``C``. What it drops: which server a GPU is on (a ring's
GPUs on one server or split, Eq. 8's inter-server term beyond ``rho_min``).

1. **Block bin packing** (:func:`blocks_refute`; a two-dimensional dual-feasible-function
   bound, Fekete & Schepers 2004, with the DFF ``f_lam(G) = floor(G / lam) /
   floor(N / lam)`` on the GPU dimension and every DFF at once on the time dimension).
   Proof: ``sum_i floor(G_i / lam) <= floor(sum_i G_i / lam)``, so at every slot the running
   jobs hold at most ``K = floor(N / lam)`` *blocks* when job ``j`` counts
   ``b_j = floor(G_j / lam)``. The intervals form an interval graph; give each job ``b_j``
   copies (still an interval graph). Its largest clique (the most blocks at one slot, by
   Helly's property of intervals) is ``<= K``, and interval graphs are perfect, so the copies
   can be coloured with ``K`` colours, overlapping copies apart. A colour is a set of
   pairwise disjoint intervals inside ``[0, C)``: a bin of capacity ``C``. So the ``b_j``
   items of size ``rho_min_j`` pack into ``K`` bins of capacity ``C``, and the pooled
   arc-flow LP of :func:`~ddlsched.models.rar_lb_binpacking.packing_refutes` (its number of
   bins rounded up) refutes ``C`` when no such packing exists. ``lam = 1`` is
   ``lb_binpacking``'s pooled LP; ``lam > 1`` weighs a gang of ``G_j >= lam`` GPUs by
   ``floor(G_j / lam) / floor(N / lam)`` instead of ``G_j / N``, larger when ``lam`` does not
   divide ``N``, and drops the smaller jobs. Monotone: a packing within ``C`` is one within
   ``C + 1``. Every DFF ``g`` of the time dimension is a dual solution of that LP, so the LP
   is at least the best product bound ``sum_j f_lam(G_j) g(p_j / C) <= 1``.
2. **Energetic reasoning** (:func:`energetic_refutes`; Baptiste, Le Pape & Nuijten 1999,
   release 0 and deadline ``C`` for every job). In a window ``[a, b)`` job ``j`` runs at
   least ``min(b - a, max(0, min(b, p) - a), max(0, b - max(a, C - p)))`` slots whatever its
   start in ``[0, C - p]`` (the overlap is smallest at a shift to either end), and that
   minimum is non-decreasing in ``p``, so ``rho_min_j`` gives a lower bound. With the blocks
   of test 1: ``sum_j b_j * overlap_j <= K (b - a)`` for every window, refuted otherwise; the
   windows are bounded by ``0, C, rho_min_j, C - rho_min_j`` (the relevant windows of the
   reference when all releases are 0 and all deadlines ``C``). The jobs longer than
   ``C / 2`` all run in ``[C - p, p)`` and their blocks meet there: the one-slot windows
   around ``C / 2`` are that check. Monotone: every overlap shrinks as ``C`` grows.

Both are relaxations of the cumulative schedule above, so no bound of this module exceeds
that schedule's least makespan (``benchmarks/rar_rigid_bounds.py`` finds such schedules with
CP-SAT: the ceiling of every bound that sees rigidity and simultaneity without servers).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from ddlsched.deadline import Deadline
from ddlsched.models.rar_bounds import closed_form_bounds, rho_min
from ddlsched.models.rar_lb_binpacking import GangItems, packing_refutes
from ddlsched.problems.rar import RarInstance

__all__ = [
    "RigidJobs",
    "blocks_refute",
    "energetic_refutes",
    "least_unrefuted",
    "rigid_jobs",
    "rigid_refutes",
]


@dataclass(frozen=True)
class RigidJobs:
    """The cumulative relaxation's data: per job its GPUs and ``rho_min``; the cluster's GPUs."""

    gpus: tuple[int, ...]
    durations: tuple[int, ...]
    num_gpus: int

    def block_sizes(self) -> tuple[int, ...]:
        """The block sizes ``lam`` worth testing: ``1`` and every distinct ``G_j > 1``."""
        return tuple(sorted(set(self.gpus) | {1}))


def rigid_jobs(instance: RarInstance) -> RigidJobs:
    """Each job's GPUs and shortest duration ``rho_min`` (module docstring)."""
    return RigidJobs(
        tuple(job.gpus for job in instance.jobs),
        tuple(rho_min(job, instance) for job in instance.jobs),
        instance.num_gpus,
    )


def _blocks(jobs: RigidJobs, block: int) -> tuple[list[int], list[int], int]:
    """``(blocks per job, durations, K)`` of the jobs that hold a block of ``block`` GPUs."""
    counts = [g // block for g in jobs.gpus]
    keep = [k for k, count in enumerate(counts) if count > 0]
    return (
        [counts[k] for k in keep],
        [jobs.durations[k] for k in keep],
        jobs.num_gpus // block,
    )


def blocks_refute(
    jobs: RigidJobs, capacity: int, block: int, deadline: Deadline | None = None
) -> bool | None:
    """Test 1 (module docstring): ``True`` when no packing of the blocks within ``capacity``.

    ``None`` when the deadline cut the LP before it answered."""
    counts, durations, bins = _blocks(jobs, block)
    if not counts:
        return False
    by_size: dict[int, int] = defaultdict(int)
    for count, duration in zip(counts, durations, strict=True):
        by_size[duration] += count
    sizes = sorted(by_size)
    items = GangItems(
        class_size=(block,),
        class_gpus=(bins,),
        group_sizes=tuple((size,) for size in sizes),
        group_gpus=tuple(by_size[size] for size in sizes),
        pooled_sizes=tuple(sizes),
    )
    answer, _ = packing_refutes(items, capacity, deadline)
    return answer


def energetic_refutes(jobs: RigidJobs, capacity: int, block: int = 1) -> bool:
    """Test 2 (module docstring): ``True`` when some window needs more block-slots than it has."""
    counts, durations, bins = _blocks(jobs, block)
    if any(p > capacity for p in durations):
        return True
    if not counts:
        return False
    weight = np.array(counts, dtype=np.int64)
    length = np.array(durations, dtype=np.int64)
    points = np.array(
        sorted({0, capacity} | set(durations) | {capacity - p for p in durations}), dtype=np.int64
    )
    for i, start in enumerate(points[:-1]):
        ends = points[i + 1 :, None]  # one row per window [start, end), one column per job
        early = np.maximum(0, np.minimum(ends, length) - start)  # started at 0
        late = np.maximum(0, ends - np.maximum(start, capacity - length))  # ended at C
        need = (np.minimum(np.minimum(ends - start, early), late) * weight).sum(axis=1)
        if (need > bins * (ends[:, 0] - start)).any():
            return True
    return False


def rigid_refutes(
    jobs: RigidJobs, capacity: int, deadline: Deadline | None = None
) -> tuple[bool | None, str]:
    """Either test at any block size refutes ``capacity``: ``(True, which)``, ``(False, '')``,
    or ``(None, '')`` when the deadline cut an LP first."""
    deadline = deadline or Deadline.unlimited()
    for block in jobs.block_sizes():
        if energetic_refutes(jobs, capacity, block):
            return True, f"energetic, blocks of {block}"
    for block in jobs.block_sizes():
        if deadline.expired():
            return None, ""
        answer = blocks_refute(jobs, capacity, block, deadline)
        if answer is None:
            return None, ""
        if answer:
            return True, f"bin packing, blocks of {block}"
    return False, ""


def least_unrefuted(
    instance: RarInstance,
    *,
    start: int | None = None,
    max_probes: int = 1000,
    deadline: Deadline | None = None,
) -> tuple[int, list[tuple[int, str]]]:
    """The least makespan ``C >= start`` that neither test refutes, by a scan upwards.

    ``start`` defaults to the closed forms (proven bounds); every ``C`` below the value
    returned is refuted (monotone tests) or below ``start``. Returns the value and the
    refuted probes with the test that refuted each. A cut deadline or ``max_probes``
    ends the scan at the last refuted probe plus one, still a valid bound."""
    jobs = rigid_jobs(instance)
    low = int(max(closed_form_bounds(instance).values())) if start is None else start
    refuted: list[tuple[int, str]] = []
    for capacity in range(low, low + max_probes):
        answer, which = rigid_refutes(jobs, capacity, deadline)
        if not answer:
            return capacity, refuted
        refuted.append((capacity, which))
    return low + max_probes, refuted
