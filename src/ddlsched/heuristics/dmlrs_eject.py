"""The ejection move of ``improve`` (family ``dmlrs``; ours, not a paper heuristic).

Paper: Yu et al., IEEE TNSE 2022: DMLRS, Eqs. 3-7; spec ``docs/families/dmlrs.md``.
Every choice here is ours. :mod:`ddlsched.heuristics.dmlrs_improve`'s LNS frees
windows of a few jobs and re-inserts them at their earliest completion; a job that
needs most of the cluster for several slots fits only when every job overlapping
those slots leaves, which no small window does. The ejection move takes such a job in
by force: for an unscheduled job ``j`` and a completion slot ``c`` of it,

1. ``j``'s *target plan* finishes by ``c``, on an empty cluster. ``lean`` (parameter
   ``place``, default): the internal mode on one machine (the most workers that fit,
   ``b_int``) in slots ``a_j..k``, then an even share of the samples left in each slot
   to ``c`` (the better mode per slot), ``k`` the latest slot that still lets the job
   finish by ``c`` (``Inserter.plan(..., finish=c, internal_until=k)``,
   :mod:`ddlsched.heuristics.dmlrs_insert`). The earliest-completion insertion takes the mode that processes more samples in a slot, which for a large job is the
   external one even when ``b_ext`` makes a worker 12 times slower (Fig. 6 seed 1's job
   44: 282 worker-slots at ``b_ext``, 23 at ``b_int``): the lean plan holds the fewest
   GPUs the completion allows. ``reserve`` and ``insert``: the even share in every slot
   from ``a_j`` (a later ``c`` needs fewer workers per slot). On identical machines the empty cluster's machines are taken in
   the order of the load the schedule puts on them over ``a_j..c`` (least first, ties
   by index), so that a job on one machine lands on the least-loaded one; on distinct
   machines in their own order.
2. Evicted (parameter ``evict``): ``machines``, every scheduled job with capacity on a
   (slot, machine) cell where the target plan does not fit beside the others; or
   ``slots``, every scheduled job running in any slot of the target plan.
3. ``j`` goes in first: ``lean`` and ``reserve``, its target plan (it fits once the
   colliding jobs left); ``insert``, the insertion's earliest completion on the
   capacity the eviction freed (the target plan when it cannot finish), which takes
   the most workers in every slot again.
4. The evicted jobs are re-inserted by the insertion, then every unscheduled job is
   tried once, both in decreasing order of the best utility ``u_i(d_min_i - 1)``
   (``improve``'s first pass; ties by index).
5. ``windows`` LNS windows of ``improve`` (its window size and random stream) repair
   the schedule from there, each kept when it raises the utility: a forced job costs
   the others most right after the move, and greedy re-insertion alone seldom wins
   it back (measured on Fig. 6 seed 1; ``benchmarks/dmlrs_eject.py``).
6. The move is kept when the evaluator's total utility then exceeds the one before the
   move (relative 1e-12), else everything since step 1 is undone.

A pass takes the unscheduled jobs that can finish by ``T`` in decreasing order of their
best utility, each once, and for each tries at most ``completions`` completion slots
until one is kept: with ``reserve`` and ``insert`` ``e_j, e_j + 1, ...`` (none past
``T``), ``e_j`` the slot the insertion finishes ``j`` in on an empty cluster (the
earliest with the insertion's placements; ``a_j + d_min_j - 1`` assumes ``F_j`` workers
on one machine, which a large job cannot have); with ``lean`` ``l_j, l_j - 1, ...`` (none
before ``e_j``), ``l_j`` the slot the internal mode alone finishes ``j`` in (``T`` when it
cannot): the leanest plan first; with ``both`` (``lean`` then ``reserve``) both lists,
so up to twice ``completions`` moves per job. Every (job, completion) tried is one move of the budget ``moves``. The moves
themselves draw nothing at random; the repair windows draw from ``improve``'s stream,
so the run's seed fixes the answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Protocol

import numpy as np

from ddlsched.deadline import Deadline
from ddlsched.problems.dmlrs import DmlrsInstance

__all__ = [
    "EVICT",
    "PLACE",
    "EjectSettings",
    "EjectStats",
    "completions",
    "eject_pass",
    "evicted_by",
    "target_plan",
    "try_move",
]

EVICT = ("machines", "slots")
PLACE = ("lean", "reserve", "insert", "both")
_RTOL = 1e-12
#: ``(slot, machine, workers, ps)``: one entry of a job's plan.
PlanEntry = tuple[int, int, int, int]


@dataclass(frozen=True)
class EjectSettings:
    """What the ejection move does (module docstring)."""

    moves: int = 0  # budget of (job, completion) moves (0: the move is off)
    completions: int = 3  # completion slots tried per job (their order: module docstring)
    windows: int = 500  # LNS windows repairing the schedule after each move (0: none)
    evict: str = "machines"  # one of EVICT
    place: str = "lean"  # one of PLACE


@dataclass
class EjectStats:
    """What the moves did so far: moves tried, kept, and the jobs each kept move took in."""

    tried: int = 0
    kept: int = 0
    windows: int = 0  # repair windows run over all moves
    evicted: int = 0  # jobs evicted over the kept moves
    taken_in: list[int] | None = None


class _Planner(Protocol):
    instance: DmlrsInstance
    limit: np.ndarray
    alpha: np.ndarray
    beta: np.ndarray

    def plan(
        self, i: int, used: np.ndarray, finish: int = 0, internal_until: int = 0
    ) -> list[PlanEntry] | None: ...


class _Search(Protocol):
    instance: DmlrsInstance
    inserter: _Planner
    used: np.ndarray
    plans: dict[int, list[PlanEntry]]
    value: dict[int, float]
    utility: float
    tried: int
    accepted: int

    def use(self, i: int, plan: Sequence[PlanEntry], sign: float) -> None: ...

    def insert(self, jobs: Sequence[int]) -> None: ...

    def score(self) -> float: ...

    def window(self, size: int) -> bool: ...


def _machine_order(search: _Search, first: int, last: int) -> np.ndarray:
    """Machines by the load the schedule puts on them over slots ``first..last``."""
    inst = search.instance
    if not inst.identical_machines:
        return np.arange(inst.num_machines)
    load = (search.used[first : last + 1] / inst.cap[None, :, :]).max(axis=2).sum(axis=0)
    return np.lexsort((np.arange(inst.num_machines), load))


def target_plan(search: _Search, j: int, finish: int, lean: bool = False) -> list[PlanEntry] | None:
    """Job ``j``'s plan finishing by ``finish`` on an empty cluster (module docstring, 1;
    ``lean``: internal first, as long as the job can still finish by ``finish``)."""
    inst = search.instance
    empty = np.zeros_like(search.used)
    plan = None
    first = inst.jobs[j].arrival_slot
    for until in range(finish, first - 1, -1) if lean else ():
        plan = search.inserter.plan(j, empty, finish=finish, internal_until=until)
        if plan is not None:
            break
    plan = plan or search.inserter.plan(j, empty, finish=finish)
    if plan is None:
        return None
    order = _machine_order(search, inst.jobs[j].arrival_slot, finish)
    return [(t, int(order[h]), w, s) for t, h, w, s in plan]


def evicted_by(search: _Search, j: int, plan: Sequence[PlanEntry], evict: str) -> list[int]:
    """The scheduled jobs ``plan`` of job ``j`` evicts (module docstring, 2)."""
    ins = search.inserter
    if evict == "slots":
        slots = {t for t, _, _, _ in plan}
        return sorted(i for i, p in search.plans.items() if any(t in slots for t, *_ in p))
    need: dict[tuple[int, int], np.ndarray] = {}
    for t, h, w, s in plan:
        cell = need.setdefault((t, h), np.zeros(len(ins.limit[h])))
        cell += ins.alpha[j] * w + ins.beta[j] * s
    clash = {cell for cell, d in need.items() if (search.used[cell] + d > ins.limit[cell[1]]).any()}
    return sorted(i for i, p in search.plans.items() if any((t, h) in clash for t, h, _, _ in p))


def _by_value(search: _Search, jobs: Sequence[int]) -> list[int]:
    return sorted(jobs, key=lambda i: (-search.value.get(i, 0.0), i))


def try_move(
    search: _Search,
    j: int,
    finish: int,
    settings: EjectSettings,
    window: int,
    stats: EjectStats,
    deadline: Deadline,
) -> int | None:
    """One ejection move (module docstring, 1-6; ``window`` jobs per repair window):
    the jobs it evicted when kept, else ``None`` (the schedule undone)."""
    plan = target_plan(search, j, finish, lean=settings.place == "lean")
    if plan is None:
        return None
    evicted = evicted_by(search, j, plan, settings.evict)
    saved_used, saved_plans, before = search.used.copy(), dict(search.plans), search.utility
    for i in evicted:
        search.use(i, search.plans.pop(i), -1.0)
    placed = search.inserter.plan(j, search.used) if settings.place == "insert" else None
    search.plans[j] = placed or plan
    search.use(j, search.plans[j], +1.0)
    search.insert(_by_value(search, evicted))
    search.insert(_by_value(search, [i for i in search.value if i not in search.plans]))
    search.utility = search.score()
    counters = search.tried, search.accepted
    for _ in range(settings.windows):
        if deadline.expired():
            break
        search.window(window)
        stats.windows += 1
    search.tried, search.accepted = counters  # the window search's own counts
    if search.utility > before * (1.0 + _RTOL) + _RTOL:
        return len(evicted)
    search.used, search.plans, search.utility = saved_used, saved_plans, before
    return None


def _finish(plan: Sequence[PlanEntry] | None) -> int | None:
    return None if plan is None else max(t for t, _, _, _ in plan)


def completions(search: _Search, j: int, settings: EjectSettings) -> list[tuple[int, str]]:
    """The (completion slot, target plan) pairs a pass tries for job ``j``, in order
    (module docstring; ``both``: the lean ones, then the reserved even shares)."""
    empty = np.zeros_like(search.used)
    earliest = _finish(search.inserter.plan(j, empty))
    if earliest is None:
        return []
    slots, count = search.instance.slots, settings.completions
    pairs = []
    if settings.place in ("lean", "both"):
        leanest = _finish(search.inserter.plan(j, empty, finish=slots, internal_until=slots))
        latest = slots if leanest is None else leanest
        pairs += [(c, "lean") for c in range(latest, max(earliest, latest - count + 1) - 1, -1)]
    if settings.place != "lean":
        place = "reserve" if settings.place == "both" else settings.place
        pairs += [(c, place) for c in range(earliest, min(slots, earliest + count - 1) + 1)]
    return pairs


def eject_pass(
    search: _Search, settings: EjectSettings, window: int, stats: EjectStats, deadline: Deadline
) -> str:
    """One pass of the move over the unscheduled jobs (module docstring): ``kept`` when
    a move was kept, ``converged`` when none was, ``moves`` when the budget ran out,
    ``time limit`` when the deadline did."""
    kept = False
    for j in _by_value(search, [i for i in search.value if i not in search.plans]):
        if j in search.plans:  # a kept move took it in
            continue
        for finish, place in completions(search, j, settings):
            if stats.tried >= settings.moves:
                return "moves"
            if deadline.expired():
                return "time limit"
            stats.tried += 1
            move = replace(settings, place=place)
            evicted = try_move(search, j, finish, move, window, stats, deadline)
            if evicted is not None:
                stats.kept += 1
                stats.evicted += evicted
                stats.taken_in = [*(stats.taken_in or []), j]
                kept = True
                break
    return "kept" if kept else "converged"
