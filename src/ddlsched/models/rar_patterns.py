"""Placement patterns of RAR-DDLS up to symmetry of equal servers, and their GPUs (spec ``rar.md``).

The column space of the paper's reformulation (Eqs. 10-13), shared by the
``timeindexed`` ILP (:mod:`ddlsched.models.rar_timeindexed`), the LP rounding
(:mod:`ddlsched.models.rar_rounding`) and the Problem (14) bound ``load_lb``
(:mod:`ddlsched.models.rar_bounds`).

Servers of equal capacity form a class, and a pattern says how many GPUs a
job takes on each class; it uses the fewest servers of the class that can
hold them (more servers only lengthen the job). Durations are those of Eq.
(8)-(9) on that many servers at contention ``p = 1`` (``contention="free"``)
or ``p = max_contention`` (``"worst"``). When a job has more patterns than
``max_patterns``, it keeps a single pooled column (``G_j`` GPUs of the whole
cluster, shortest duration; the longest at worst contention): still a
relaxation, so every bound built on the catalogue stays valid.

:func:`assign_gpus` maps chosen (pattern, start) pairs to concrete GPUs, a
schedule the evaluator executes (ours: per class, the servers with the most
GPUs free at the start first; an unmet or pooled pattern takes the
earliest-free GPUs).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ddlsched.deadline import Deadline
from ddlsched.errors import InvalidInstanceError
from ddlsched.problems.rar import RarInstance
from ddlsched.problems.rar_schedule import RarAssignment, RarSchedule
from ddlsched.problems.rar_timing import (
    execution_slots,
    max_contention,
    max_servers,
    min_servers,
)

__all__ = ["PatternCatalogue", "assign_gpus", "pattern_catalogue"]


def _server_classes(instance: RarInstance) -> list[tuple[int, int]]:
    """(capacity, number of servers) per class of equal servers, largest first."""
    counts: dict[int, int] = {}
    for cap in instance.servers:
        counts[cap] = counts.get(cap, 0) + 1
    return sorted(counts.items(), reverse=True)


def _class_patterns(
    gpus: int, classes: Sequence[tuple[int, int]], limit: int
) -> list[tuple[int, ...]] | None:
    """GPU counts per server class summing to ``gpus`` that fit; ``None`` beyond ``limit``."""
    out: list[tuple[int, ...]] = []

    def rec(i: int, left: int, acc: tuple[int, ...]) -> bool:
        if i == len(classes):
            if left == 0:
                out.append(acc)
                if len(out) > limit:
                    return False
            return True
        cap, count = classes[i]
        for g in range(min(left, cap * count), -1, -1):
            if not rec(i + 1, left - g, (*acc, g)):
                return False
        return True

    return out if rec(0, gpus, ()) else None


def _pattern_servers(pattern: Sequence[int], classes: Sequence[tuple[int, int]]) -> int:
    return sum(math.ceil(g / cap) for g, (cap, _) in zip(pattern, classes, strict=True))


def _pick(
    instance: RarInstance,
    pattern: tuple[int, ...] | None,
    classes: Sequence[tuple[int, int]],
    servers_of_class: dict[int, list[int]],
    free_at: dict[tuple[int, int], int],
    start: int,
) -> list[tuple[int, int]]:
    """GPUs free at ``start`` meeting ``pattern`` (per class: fullest servers first); [] if none."""
    if pattern is None:
        return []
    picked: list[tuple[int, int]] = []
    for c, (cap, _) in enumerate(classes):
        need = pattern[c]
        candidates = sorted(
            servers_of_class[cap],
            key=lambda s: (-sum(1 for g in range(cap) if free_at[s, g] <= start), s),
        )
        for s in candidates:
            if need == 0:
                break
            free = [(s, g) for g in range(cap) if free_at[s, g] <= start]
            take = free[: min(need, len(free))]
            picked.extend(take)
            need -= len(take)
        if need:
            return []
    return picked


def assign_gpus(
    instance: RarInstance,
    chosen: dict[int, tuple[int, int]],
    catalogue: PatternCatalogue,
    fine_durations: dict[int, int],
    *,
    list_schedule: bool = False,
) -> RarSchedule:
    """Map chosen (pattern, start) pairs to concrete GPUs, greedily, job by job.

    ``chosen[j] = (k, start)``: pattern index and planned fine start slot of
    job ``j``; jobs are placed in order of ``(start, j)``, and
    ``fine_durations[j]`` (the pattern's planned duration) books their GPUs.
    Each class's GPUs go to the servers of that class with the most GPUs
    free at the start (by planned intervals). When a pattern cannot be met
    on concrete servers (the class aggregation allowed it) or is pooled, the
    job takes the earliest-free GPUs; the dispatch evaluator then delays it
    as needed, so the result is always a feasible schedule.

    ``list_schedule``: ``start`` only orders the jobs; each job starts at the
    earliest time (a GPU release time) at which its pattern can be met, as
    in list scheduling (used by the randomized rounding of
    :mod:`ddlsched.models.rar_rounding`).
    """
    classes, patterns = catalogue.classes, catalogue.patterns
    free_at = {gpu: 0 for gpu in instance.gpu_ids}
    servers_of_class = {
        cap: [s for s, c in enumerate(instance.servers) if c == cap] for cap, _ in classes
    }
    assignments = {}
    for j in sorted(chosen, key=lambda j: (chosen[j][1], j)):
        job = instance.jobs[j]
        k, start = chosen[j]
        pattern = patterns[j][k]
        if list_schedule:
            picked = []
            if pattern is not None:
                for moment in sorted(set(free_at.values())):
                    picked = _pick(instance, pattern, classes, servers_of_class, free_at, moment)
                    if picked:
                        start = moment
                        break
        else:
            picked = _pick(instance, pattern, classes, servers_of_class, free_at, start)
        if len(picked) != job.gpus:
            picked = sorted(instance.gpu_ids, key=lambda gpu: (free_at[gpu], gpu))[: job.gpus]
            if list_schedule:
                start = max(free_at[g] for g in picked)
        end = max(start, max(free_at[g] for g in picked)) + fine_durations[j]
        for gpu in picked:
            free_at[gpu] = end
        assignments[job.id] = RarAssignment(tuple(picked), start)
    return RarSchedule(assignments)


@dataclass(frozen=True)
class PatternCatalogue:
    """Placement patterns up to symmetry of equal servers, with their durations.

    ``patterns[j]`` lists GPU counts per server class (``None``: the pooled
    column of a job with more than ``max_patterns`` patterns);
    ``durations[j, k]`` is the execution time in slots of pattern ``k`` on
    the fewest servers it needs, at contention ``p`` (1, or the worst).
    """

    classes: tuple[tuple[int, int], ...]
    patterns: dict[int, list[tuple[int, ...] | None]]
    durations: dict[tuple[int, int], int]
    pooled: tuple[str, ...]


def pattern_catalogue(
    instance: RarInstance,
    max_patterns: int = 64,
    contention: str = "free",
    deadline: Deadline | None = None,
) -> PatternCatalogue:
    """Enumerate every job's patterns and durations (shared by ``timeindexed`` and ``load_lb``)."""
    deadline = deadline or Deadline.unlimited()
    classes = _server_classes(instance)
    p_plan = 1 if contention == "free" else max_contention(instance)
    net, rule = instance.network, instance.progress
    patterns: dict[int, list[tuple[int, ...] | None]] = {}
    durations: dict[tuple[int, int], int] = {}
    pooled = []
    for j, job in enumerate(instance.jobs):
        deadline.check("enumerating placement patterns")
        found = _class_patterns(job.gpus, classes, max_patterns)
        if found is None:
            pooled.append(job.id)
            patterns[j] = [None]
            spans = range(
                min_servers(job, instance.servers), max_servers(job, instance.servers) + 1
            )
            finite = [
                d
                for n in spans
                if not math.isinf(d := execution_slots(job, net, n, p_plan if n > 1 else 0, rule))
            ]
            if not finite:
                raise InvalidInstanceError(f"job {job.id!r} never progresses on any placement")
            durations[j, 0] = int(min(finite) if contention == "free" else max(finite))
            continue
        patterns[j] = []
        for pattern in found:
            n = _pattern_servers(pattern, classes)
            d = execution_slots(job, net, n, p_plan if n > 1 else 0, rule)
            if math.isinf(d):  # the job never progresses on this pattern
                continue
            durations[j, len(patterns[j])] = int(d)
            patterns[j].append(pattern)
        if not patterns[j]:
            raise InvalidInstanceError(f"job {job.id!r} never progresses on any placement")
    return PatternCatalogue(tuple(classes), patterns, durations, tuple(pooled))
