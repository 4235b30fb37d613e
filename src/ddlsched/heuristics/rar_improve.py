"""Method ``improve`` of family ``rar`` (ours; not a paper heuristic).

Paper: SJF-BCO (MobiHoc 2022); spec
``docs/families/rar.md``. The objective is the makespan in slots of the
schedule executed by :func:`ddlsched.problems.rar_schedule.evaluate` (the
timing model of Eqs. 6-9, contention included). Every choice here is ours.
The method starts from the best schedule it knows and improves it by a
large-neighbourhood search (LNS) over priority lists; every candidate is
scored by the evaluator, and the answer is re-evaluated by the pipeline like
any method's.

Starts (parameter ``starts``): the family's heuristics ``sjf_bco``, ``ff``
and ``ls`` with their default parameters, and optionally ``timeindexed``
(the contention-free pattern ILP, with ``timeindexed_share`` of the time
limit; ``starts=all``), each evaluated. A start without a schedule
(``no_schedule``, or the limit stopped it first) is skipped
(``info['starts_skipped']``); a start the time limit stopped, or left out
because the limit had passed once a start had a schedule (the starts do not
read the limit themselves), is in ``info['starts_time_limit']``: the answer
then depends on the machine's speed, so ``time_limit_hit`` is set.

Search space: priority lists of the jobs, decoded by :class:`ListDecoder`, a
serial list scheduler on GPU availability (no backfilling into earlier idle
time). Durations are ``d_j(n)``, the slots of Eq. (9) at the contention-free
rate (Eq. 8 with ``p = 1`` when split, ``p = 0`` on one server, exact
there), and ``d_j(n, p)`` at contention level ``p``. Job ``j``, in list order, gets the earliest-finishing of two
candidates: one server (the ``G_j`` earliest-free GPUs of the server that
finishes it first; ties: earlier start, then the tighter server), or the
``G_j`` globally earliest-free GPUs, taken from the fewest servers (the
servers with the most GPUs free at that start first), run at ``d_j(n, p)``
with ``p`` = 1 + the most split rings already planned on one of its servers
that overlap ``[start, start + d_j(n))`` (Eq. 6 on the plan; the planned
rings are not slowed in turn); ties go to one server. On a server the job takes the GPUs free at its start
that became free last (best fit). The planned start is the decoded start:
a GPU's jobs are planned in list order with strictly increasing starts, so
the evaluator's dispatch order is the list order; where contention makes a
split ring slower than ``d_j(n)``, dispatch delays its successors.

First list: the better, by evaluated score, of the longest-first order
(``d_j`` on the fewest servers descending; ties: more GPUs, then instance
order) and each start's order of evaluated starts (ties: instance order).

Score of a schedule: ``(makespan, sum_j G_j T_j)``, lexicographic, from the
evaluator (the second part prefers lists that finish GPU time earlier and
breaks the plateaus of the makespan). A schedule that overruns the horizon
scores by its makespan beyond the horizon (it can lead the search but is
never returned while a start has a schedule within the horizon; the pipeline
reports an overrun as ``no_solution``).

LNS, seeded (``make_rng(seed)``): each move draws its kind with equal
chances: *reinsert* one of the ``window`` latest-finishing jobs (evaluated
finish; ties: later list position) at a uniformly drawn earlier position,
or *swap* two jobs at most ``window`` positions apart (the first position
uniform among all but the last). The candidate list is decoded and evaluated; it is accepted when
its score is at most the current one (sideways moves allowed). The search
stops after ``iterations`` candidates (``search_stopped = 'iterations'``), after
``patience`` candidates without a strict improvement (``'stalled'``), when
the makespan reaches ``lower_bound`` (``'bound'``: the family passes the
closed forms of ``load_lb``, ``max_j rho_min_j`` and
``ceil(sum_j G_j rho_min_j / N)``, valid with contention, so the list is
then optimal), or at the time limit (``'time limit'``: the answer then
depends on the machine's speed, so ``time_limit_hit`` is set). Same seed, same stop reason other
than the time limit: same schedule.

The answer is the better of the LNS list's schedule and the best start
(never worse than the best start). ``info``: ``start_makespan`` per start,
``best_start``, ``list_start`` and ``list_start_makespan``,
``lns_makespan``, ``improvement`` (``1 - answer / best start``),
``winner`` (``lns`` or the start's name), ``candidates`` / ``accepted`` /
``improved``, ``search_stopped`` (why the search ended); ``stopped`` only when
the time limit cut the search or a start (what it cut, as every method says it).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ddlsched.deadline import Deadline
from ddlsched.errors import InfeasibleScheduleError, TimeLimitReached
from ddlsched.params import parse_name_list
from ddlsched.problems.rar import RarInstance
from ddlsched.problems.rar_schedule import RarAssignment, RarSchedule, evaluate
from ddlsched.problems.rar_timing import execution_slots, max_servers, min_servers
from ddlsched.rng import make_rng

__all__ = [
    "DEFAULT_STARTS",
    "STARTS",
    "ImproveSettings",
    "ListDecoder",
    "improve",
    "parse_starts",
]

log = logging.getLogger(__name__)

STARTS = ("sjf_bco", "ff", "ls", "timeindexed")
DEFAULT_STARTS = ("sjf_bco", "ff", "ls")
#: ``run_start(name, deadline)``: a start's schedule (``None`` when it has none) and
#: whether the time limit stopped it.
StartRunner = Callable[[str, Deadline], tuple[RarSchedule | None, bool]]
Score = tuple[int, int]


def parse_starts(text: str) -> tuple[str, ...]:
    """``default``, ``all`` or a comma-separated subset of :data:`STARTS` (one-line error)."""
    return parse_name_list(text, STARTS, "starts", {"default": DEFAULT_STARTS, "all": STARTS})


@dataclass(frozen=True)
class ImproveSettings:
    """What :func:`improve` does (module docstring)."""

    starts: tuple[str, ...] = DEFAULT_STARTS
    iterations: int = 1000  # 0: no cap
    patience: int = 400  # 0: no cap
    window: int = 8
    seed: int = 0
    lower_bound: int = 0  # stop when the makespan reaches it (0: never)


# --------------------------------------------------------------------------- decoder


class ListDecoder:
    """Serial list scheduling on GPU availability (module docstring)."""

    def __init__(self, instance: RarInstance) -> None:
        self.instance = instance
        self.capacity = np.asarray(instance.servers, dtype=np.int64)
        self.gpus = [job.gpus for job in instance.jobs]
        self.durations: list[list[float]] = []
        for job in instance.jobs:
            low, high = min_servers(job, instance.servers), max_servers(job, instance.servers)
            row = [math.inf] * (high + 1)
            for n in range(low, high + 1):
                row[n] = execution_slots(
                    job, instance.network, n, 1 if n > 1 else 0, instance.progress
                )
            self.durations.append(row)
        self._contended: dict[tuple[int, int, int], float] = {}

    def shortest(self, job: int) -> float:
        """``d_j`` on the fewest servers that hold the job."""
        return self.durations[job][min_servers(self.instance.jobs[job], self.instance.servers)]

    def longest_first(self) -> list[int]:
        """The longest-first order (module docstring)."""
        return sorted(range(len(self.gpus)), key=lambda j: (-self.shortest(j), -self.gpus[j], j))

    def _one_server(self, ordered: np.ndarray, job: int) -> tuple[Any, ...] | None:
        """Earliest-finishing single server (``ordered``: free times sorted per server)."""
        count, rows = self.gpus[job], self.durations[job]
        if len(rows) < 2 or math.isinf(rows[1]):
            return None
        starts = ordered[:, count - 1]  # inf where the server is too small
        server = int(np.lexsort((self.capacity - count, starts))[0])
        start = int(starts[server])
        return ((start + rows[1], start, 0), ((server, count),), start)

    def _split_duration(self, job: int, taken: list, start: int, splits: list) -> float:
        """``d_j(n, p)``, ``p`` = 1 + the planned split rings overlapping it on its servers."""
        n = len(taken)
        base = self.durations[job][n]
        end = start + base
        rivals = max(sum(a < end and b > start for a, b in splits[s]) for s, _ in taken)
        if not rivals:
            return base
        key = (job, n, 1 + rivals)
        if key not in self._contended:
            self._contended[key] = execution_slots(
                self.instance.jobs[job],
                self.instance.network,
                n,
                1 + rivals,
                self.instance.progress,
            )
        return self._contended[key]

    def _split(self, free: np.ndarray, job: int, splits: list) -> tuple[Any, ...] | None:
        """The ``G_j`` earliest-free GPUs from the fewest servers."""
        count = self.gpus[job]
        start = int(np.partition(free, count - 1, axis=None)[count - 1])
        ready = (free <= start).sum(axis=1)
        taken, left = [], count
        for server in np.argsort(-ready, kind="stable"):
            k = min(left, int(ready[server]))
            taken.append((int(server), k))
            left -= k
            if left == 0:
                break
        if len(taken) < 2:
            return None
        duration = self._split_duration(job, taken, start, splits)
        return ((start + duration, start, 1), tuple(taken), start)

    def decode(self, order: list[int]) -> RarSchedule:
        """The planned schedule of ``order`` (GPUs and planned starts)."""
        width = int(self.capacity.max())
        free = np.zeros((self.capacity.size, width))
        free[np.arange(width)[None, :] >= self.capacity[:, None]] = math.inf  # no such GPU
        assignments: dict[str, RarAssignment] = {}
        splits: list[list[tuple[int, float]]] = [[] for _ in self.capacity]
        for job in order:
            single = self._one_server(np.sort(free, axis=1), job)
            split = self._split(free, job, splits)
            (finish, _, _), taken, start = min(
                (c for c in (single, split) if c), key=lambda c: c[0]
            )
            chosen = []
            for server, k in taken:
                if len(taken) > 1:
                    splits[server].append((start, finish))
                times = free[server]
                eligible = np.flatnonzero(times <= start)
                picked = eligible[np.argsort(-times[eligible], kind="stable")[:k]]
                times[picked] = finish
                chosen.extend((server, int(g)) for g in picked)
            assignments[self.instance.jobs[job].id] = RarAssignment(tuple(sorted(chosen)), start)
        return RarSchedule({job.id: assignments[job.id] for job in self.instance.jobs})


# --------------------------------------------------------------------------- scoring


@dataclass(frozen=True)
class Scored:
    """A schedule, its score and every job's evaluated finish (instance order)."""

    schedule: RarSchedule
    score: Score
    finish: tuple[int, ...]

    @property
    def makespan(self) -> int:
        return self.score[0]


def score(instance: RarInstance, schedule: RarSchedule) -> Scored:
    """The evaluator's score of ``schedule`` (module docstring; overruns scored beyond ``T``)."""
    try:
        evaluation = evaluate(instance, schedule)
    except InfeasibleScheduleError as exc:
        if exc.details.get("failure") != "horizon_overrun":
            raise
        beyond = int(exc.details["makespan_beyond_horizon"])  # type: ignore[call-overload]
        return Scored(schedule, (beyond, 0), tuple(beyond for _ in instance.jobs))
    finish = tuple(evaluation.finish[job.id] for job in instance.jobs)
    weighted = sum(job.gpus * t for job, t in zip(instance.jobs, finish, strict=True))
    return Scored(schedule, (evaluation.makespan, weighted), finish)


def within_horizon(instance: RarInstance, scored: Scored) -> bool:
    """Whether ``scored`` ends within the horizon ``T`` (an overrun is scored beyond ``T``)."""
    return scored.makespan <= instance.horizon


# --------------------------------------------------------------------------- search


class _Search:
    """The LNS over priority lists (module docstring)."""

    def __init__(
        self,
        instance: RarInstance,
        decoder: ListDecoder,
        order: list[int],
        first: Scored,
        settings: ImproveSettings,
    ) -> None:
        self.instance = instance
        self.decoder = decoder
        self.order = list(order)
        self.current = first
        self.settings = settings
        self.rng = make_rng(settings.seed)
        self.candidates = self.accepted = self.improved = 0

    def _move(self) -> list[int]:
        order, window, rng = list(self.order), self.settings.window, self.rng
        n = len(order)
        if rng.random() < 0.5:
            position = {job: pos for pos, job in enumerate(order)}
            finish = self.current.finish
            late = sorted(range(n), key=lambda j: (-finish[j], -position[j]))[:window]
            job = late[int(rng.integers(len(late)))]
            old = position[job]
            new = int(rng.integers(old)) if old > 0 else 0
            order.insert(new, order.pop(old))
        else:
            first = int(rng.integers(max(1, n - 1)))
            other = min(n - 1, first + 1 + int(rng.integers(window)))
            order[first], order[other] = order[other], order[first]
        return order

    def run(self, deadline: Deadline) -> str:
        """Candidates until a stop rule fires; the rule's name."""
        settings = self.settings
        since = 0
        while True:
            if settings.lower_bound and self.current.makespan <= settings.lower_bound:
                return "bound"
            if settings.iterations and self.candidates >= settings.iterations:
                return "iterations"
            if settings.patience and since >= settings.patience:
                return "stalled"
            if deadline.expired():
                return "time limit"
            order = self._move()
            candidate = score(self.instance, self.decoder.decode(order))
            self.candidates += 1
            since += 1
            if candidate.score <= self.current.score:
                if candidate.score < self.current.score:
                    self.improved += 1
                    since = 0
                self.accepted += 1
                self.order, self.current = order, candidate


def start_order(instance: RarInstance, scored: Scored) -> list[int]:
    """A start's jobs in the order of their evaluated starts (ties: instance order)."""
    evaluation = evaluate(instance, scored.schedule) if within_horizon(instance, scored) else None
    if evaluation is None:
        key = [scored.schedule[job.id].start for job in instance.jobs]
    else:
        key = [evaluation.start[job.id] for job in instance.jobs]
    return sorted(range(len(instance.jobs)), key=lambda j: (key[j], j))


def _starts(
    instance: RarInstance,
    settings: ImproveSettings,
    run_start: StartRunner,
    deadline: Deadline,
    info: dict[str, Any],
) -> dict[str, Scored]:
    """Every start's scored schedule (a start without one is skipped)."""
    scored: dict[str, Scored] = {}
    skipped, cut = [], []
    for name in settings.starts:
        if scored and deadline.expired():  # one start at least: the answer needs a schedule
            skipped.append(name)
            cut.append(name)
            continue
        try:
            schedule, limited = run_start(name, deadline)
        except TimeLimitReached:
            schedule, limited = None, True
        if limited:
            cut.append(name)
        if schedule is None:
            skipped.append(name)
        else:
            scored[name] = score(instance, schedule)
    if skipped:
        info["starts_skipped"] = skipped
    if cut:
        info["starts_time_limit"] = cut
    return scored


def improve(
    instance: RarInstance, settings: ImproveSettings, run_start: StartRunner, deadline: Deadline
) -> tuple[RarSchedule, dict[str, Any], bool]:
    """The improved schedule, its ``info`` and whether the time limit stopped the search.

    ``run_start(name, deadline)`` runs one of :data:`STARTS` (the family's methods;
    this layer cannot import the models): the start's schedule (``None`` for none) and
    whether the time limit stopped it.
    """
    info: dict[str, Any] = {}
    starts = _starts(instance, settings, run_start, deadline, info)
    decoder = ListDecoder(instance)
    lists = {"longest_first": decoder.longest_first()}
    lists.update({f"{name} order": start_order(instance, s) for name, s in starts.items()})
    decoded = {name: score(instance, decoder.decode(order)) for name, order in lists.items()}
    list_name = min(decoded, key=lambda name: decoded[name].score)
    search = _Search(instance, decoder, lists[list_name], decoded[list_name], settings)
    stopped = search.run(deadline.sub(share=0.95))  # the rest: choosing the answer
    final = search.current
    candidates = {"lns": final, **starts}
    feasible = [name for name in candidates if within_horizon(instance, candidates[name])]
    winner = min(feasible or candidates, key=lambda name: candidates[name].score)
    best_start = min(starts, key=lambda name: starts[name].score) if starts else None
    info.update(
        start_makespan={name: s.makespan for name, s in starts.items()},
        best_start=best_start,
        list_start=list_name,
        list_start_makespan=decoded[list_name].makespan,
        lns_makespan=final.makespan,
        improvement=(
            1.0 - candidates[winner].makespan / starts[best_start].makespan if best_start else None
        ),
        winner=winner,
        candidates=search.candidates,
        accepted=search.accepted,
        improved=search.improved,
        search_stopped=stopped,
    )
    log.info("rar improve: %s makespan %d (%s)", winner, candidates[winner].makespan, stopped)
    cuts = []
    if stopped == "time limit":
        cuts.append(f"the list search at the time limit after {search.candidates} candidates")
    if info.get("starts_time_limit"):
        cuts.append(f"the start(s) {', '.join(info['starts_time_limit'])} at the time limit")
    if cuts:
        info["stopped"] = "; ".join(cuts)
    return candidates[winner].schedule, info, bool(cuts)
