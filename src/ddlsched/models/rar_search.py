"""Contention-aware exact search for RAR-DDLS: branch-and-bound over timetables.

The compact MILP of :mod:`ddlsched.models.rar` keeps its dual bound at the
contention-free value when contention decides the optimum (its LP relaxation
spreads the contention indicators); this module proves such optima by a
depth-first branch-and-bound whose leaves are executed exactly like the
evaluator executes a schedule (spec ``rar.md``, Eqs. 6-9).

**Search space.** A node is a slot boundary ``t`` and a *state*: the jobs
still to start, and for every running job its placement *pattern* (GPUs per
server, ``y_js`` of the paper) and its remaining iterations. At ``t`` the
search chooses a subset of the waiting jobs to start now, each with a
pattern that fits the free GPUs (jobs taken in index order, so every subset
once), then advances: by one slot, or straight to the next completion when
no waiting job fits the free GPUs. Between two starts or completions every
rate is constant, so a slot step applies Eq. (9) to each running job at the
contention ``p_j`` of Eq. (6) of the running set.

**Why an optimal schedule is in it (completeness).** Execute any schedule
with the evaluator: it yields a *timetable*, for each job a start slot and
a GPU set, no GPU used by two jobs at once. GPUs of one server are
identical in Eqs. 6-8, so the timetable's makespan depends only on the
starts and the per-server counts; conversely the search's timetable, with
planned starts equal to its starts, is executed by the evaluator exactly
as planned (:func:`search_schedule` decodes GPU ids by interval colouring;
each job finds its GPUs free at its planned start). The search enumerates
*every* start slot of every job, idle insertion included (contention can
make delaying a job worth it: a split job that waits for another split job
to finish may finish earlier than one that shares its servers), with four
exceptions that lose no optimum:

* nothing runs and nothing starts at ``t``: shifting every later start one
  slot earlier gives the same execution one slot sooner, so at least one
  job starts;
* no waiting job fits the free GPUs: free GPUs change only at completions,
  so the next decision is at the next completion;
* a running set in which some job would do no iteration per slot (``tau > 1``
  under ``floor``) is cut: the evaluator rejects such a schedule;
* patterns are enumerated up to automorphisms of the state (servers of
  equal capacity holding the same GPUs of every running job are
  interchangeable; permuting them maps a subtree onto an isomorphic one).

Pruning is by valid lower bounds only (below) and by *dominance*: state
``(t, R)`` dominates ``(t', R')`` with the same waiting jobs and running
patterns when ``t <= t'`` and ``R <= R'`` componentwise. Proof: run the
second state's continuation (same starts, shifted by ``t - t'``) from the
first; by induction over slots, its running set is a subset of the second's
(jobs finish no later), so every split count of Eq. (6) and every ``p_j``
is no larger, every rate of Eq. (9) no smaller (rates decrease in ``p``),
the remaining iterations stay componentwise smaller and the GPUs are free
no later: the continuation is feasible and finishes no later. A fully
explored state with no schedule below the incumbent is stored; a dominated
state is skipped. States are keyed up to the same server symmetry.

**Lower bounds** at a node, each a valid bound on every completion:

* every running job needs its remaining iterations at its best rate
  (``p_j = 1``, its own split), every waiting job at least its shortest
  contention-free execution ``rho_min`` (``rar_bounds.rho_min``);
* GPU time: remaining GPU-slots of all jobs over the ``N`` GPUs;
* split serialisation (the contention-aware bound): measure the work of
  every job that is or must be split (``G_j`` above the largest server) in
  slots of its contention-free execution. When ``k`` split jobs run at once,
  each has ``p_j >= L(k)``, the least contention any of ``k`` jobs spread
  over at least two servers each can have on this cluster (computed by
  enumerating their server sets; ``L(k) = 1`` where that is too costly), so
  a slot processes at most ``g = max_k`` (sum of the ``k`` largest
  ``phi_j(L(k)) / phi_j(1)``) units of that work. The remaining split work
  ``W`` needs at least ``W / g`` slots. Under strong contention ``g = 1``:
  split jobs may as well run one after another, and the bound is their
  serial time, the value the contention-free bounds miss.

Scope: the ``floor`` progress rule (integral rates, so the slot steps are
exact), at most :data:`MAX_JOBS` jobs, :data:`MAX_SERVERS` servers and
:data:`MAX_GPUS` GPUs; larger instances are refused with
:class:`~ddlsched.errors.ModelTooLargeError` (the search is exponential in
the number of jobs). The search checks its deadline every
:data:`_CHECK_EVERY` nodes and then returns its incumbent with the root
lower bound (status not proven). It is deterministic: no seed enters it.

It lives in ``models/`` next to the MILP because it is the family's second
exact formulation (``models/`` holds formulations, ``solvers/`` generic
solver machinery); it is pure Python and imports neither Pyomo nor a solver.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

from ddlsched.deadline import Deadline
from ddlsched.errors import ModelTooLargeError
from ddlsched.problems.rar import RarInstance
from ddlsched.problems.rar_schedule import RarAssignment, RarSchedule
from ddlsched.problems.rar_timing import (
    contention_levels,
    iteration_time,
    iterations_per_slot,
    max_servers,
    min_servers,
)

__all__ = [
    "MAX_GPUS",
    "MAX_JOBS",
    "MAX_SERVERS",
    "SearchResult",
    "check_search_size",
    "search_exact",
    "search_schedule",
]

#: Largest instance the search accepts (jobs, servers, GPUs).
MAX_JOBS = 8
MAX_SERVERS = 4
MAX_GPUS = 16
_CHECK_EVERY = 512
_TOL = 1e-9
#: Most server-set multisets enumerated for one ``L(k)`` (else ``L(k) = 1``).
_MAX_CONFIGS = 50_000


@dataclass(frozen=True)
class SearchResult:
    """What the search found: the best timetable, its makespan and a valid lower bound.

    ``starts[j]``, ``patterns[j]`` (GPUs per server) and ``finishes[j]`` of job index ``j``
    (``None`` when no schedule beat ``upper``); ``proven`` says the search
    finished, so ``bound == makespan`` (or, without a schedule, no schedule
    with makespan below ``upper`` exists). ``nodes`` counts the nodes
    visited.
    """

    starts: tuple[int, ...] | None
    patterns: tuple[tuple[int, ...], ...] | None
    finishes: tuple[int, ...] | None
    makespan: int | None
    bound: int
    proven: bool
    nodes: int
    root_bound: int


def check_search_size(instance: RarInstance) -> None:
    """Raise :class:`ModelTooLargeError` (one line) if the search does not apply."""
    if instance.progress != "floor":
        raise ModelTooLargeError(
            "exact search: only the 'floor' progress rule is supported (use search=never)"
        )
    sizes = (
        ("jobs", len(instance.jobs), MAX_JOBS),
        ("servers", instance.num_servers, MAX_SERVERS),
        ("GPUs", instance.num_gpus, MAX_GPUS),
    )
    for what, value, cap in sizes:
        if value > cap:
            raise ModelTooLargeError(
                f"exact search: {value} {what} > {cap}, too large for the enumeration "
                "(use search=never for the MILP)"
            )


def _least_contention(num_servers: int, k: int) -> int:
    """``L(k)``: least ``p_j`` over every job when ``k`` split jobs run at once.

    Each split job is on at least two servers; ``p_j`` is the largest number
    of split jobs on one of its servers (Eq. 6). Enumerates multisets of
    server sets (capacities ignored: a relaxation, so the value stays a
    lower bound); 1 when the enumeration is too large.
    """
    if k <= 1:
        return 1
    subsets = [
        c
        for size in range(2, num_servers + 1)
        for c in itertools.combinations(range(num_servers), size)
    ]
    if math.comb(len(subsets) + k - 1, k) > _MAX_CONFIGS:
        return 1
    best = k
    for combo in itertools.combinations_with_replacement(subsets, k):
        counts = [0] * num_servers
        for subset in combo:
            for s in subset:
                counts[s] += 1
        best = min(best, min(max(counts[s] for s in subset) for subset in combo))
        if best == 1:
            break
    return best


class _Search:
    """The branch-and-bound state shared by the recursion (one instance, one run)."""

    def __init__(self, instance: RarInstance, upper: int, lower: int, deadline: Deadline):
        self.inst = instance
        self.net = instance.network
        self.caps = tuple(instance.servers)
        self.num_servers = len(self.caps)
        self.jobs = instance.jobs
        self.n_jobs = len(self.jobs)
        self.deadline = deadline
        self.upper = upper  # look for makespans < upper
        self.lower = lower
        self.best: tuple | None = None
        self.nodes = 0
        self.aborted = False  # the deadline stopped the search
        self.closed = False  # an incumbent met the lower bound: nothing left to prove
        self.seen: dict[tuple, list[tuple[int, tuple[float, ...]]]] = {}
        self._rates: dict[tuple, dict[int, float]] = {}
        self._rate_cache: dict[tuple[int, int, int], float] = {}
        max_cap = max(self.caps)
        self.must_split = [job.gpus > max_cap for job in self.jobs]
        self.rho_min = [self._rho_min(j) for j in range(self.n_jobs)]
        self.perms = self._server_perms()
        self.g = self._split_throughput()

    # -- rates -----------------------------------------------------------------

    def rate(self, j: int, n: int, p: int) -> float:
        key = (j, n, p)
        if key not in self._rate_cache:
            tau = iteration_time(self.jobs[j], self.net, n, p)
            self._rate_cache[key] = iterations_per_slot(tau, "floor")
        return self._rate_cache[key]

    def best_rate(self, j: int, n: int) -> float:
        return self.rate(j, n, 1 if n > 1 else 0)

    def _rho_min(self, j: int) -> float:
        job = self.jobs[j]
        best = math.inf
        for n in range(min_servers(job, self.caps), max_servers(job, self.caps) + 1):
            r = self.best_rate(j, n)
            if r > 0:
                best = min(best, _slots(job.iterations, r))
        return best

    def _split_throughput(self) -> float:
        """``g``: most contention-free split work one slot can process (module docstring)."""
        multi = [j for j, job in enumerate(self.jobs) if job.gpus >= 2 and self.num_servers >= 2]
        g = 1.0
        for k in range(2, len(multi) + 1):
            level = _least_contention(self.num_servers, k)
            ratios = []
            for j in multi:
                job = self.jobs[j]
                spans = range(max(2, min_servers(job, self.caps)), max_servers(job, self.caps) + 1)
                ratios.append(
                    max(
                        (
                            self.rate(j, n, level) / self.best_rate(j, n)
                            for n in spans
                            if self.best_rate(j, n) > 0
                        ),
                        default=0.0,
                    )
                )
            g = max(g, sum(sorted(ratios, reverse=True)[:k]))
        return g

    def _server_perms(self) -> list[tuple[int, ...]]:
        """Permutations of the servers that keep every capacity (the symmetry group)."""
        perms = []
        for perm in itertools.permutations(range(self.num_servers)):
            if all(self.caps[perm[s]] == self.caps[s] for s in range(self.num_servers)):
                perms.append(perm)
        return perms

    # -- bounds ----------------------------------------------------------------

    def bound(self, t: int, active: list[list], waiting: int) -> int:
        """A lower bound on the makespan of every completion of the node (module docstring)."""
        best = t
        area = 0.0
        split_work = 0.0
        for job_index, _pattern, n, remaining, _ in active:
            r = self.best_rate(job_index, n)
            d = _slots(remaining, r, self.jobs[job_index].iterations)
            best = max(best, t + d)
            area += self.jobs[job_index].gpus * d
            if n > 1:
                split_work += remaining / r
        for j in range(self.n_jobs):
            if waiting >> j & 1:
                d = self.rho_min[j]
                best = max(best, t + d)
                area += self.jobs[j].gpus * d
                if self.must_split[j]:
                    split_work += self._split_work(j)
        best = max(best, t + math.ceil(area / self.inst.num_gpus - _TOL))
        best = max(best, t + math.ceil(split_work / self.g - _TOL))
        return int(best)

    def _split_work(self, j: int) -> float:
        job = self.jobs[j]
        spans = range(max(2, min_servers(job, self.caps)), max_servers(job, self.caps) + 1)
        return min(job.iterations / self.best_rate(j, n) for n in spans if self.best_rate(j, n) > 0)

    # -- patterns --------------------------------------------------------------

    def patterns(self, j: int, free: Sequence[int], active: list[list]) -> list[tuple[int, ...]]:
        """Every way to place job ``j`` on the free GPUs, up to symmetry of the state."""
        gpus = self.jobs[j].gpus
        if gpus > sum(free):
            return []
        # servers are interchangeable when capacity, free GPUs and every running job match
        signature = [
            (self.caps[s], free[s], tuple(entry[1][s] for entry in active))
            for s in range(self.num_servers)
        ]
        out = []
        for counts in _compositions(gpus, free):
            if any(
                counts[s] < counts[s2]
                for s in range(self.num_servers)
                for s2 in range(s + 1, self.num_servers)
                if signature[s] == signature[s2]
            ):
                continue
            n = sum(1 for c in counts if c)
            if self.best_rate(j, n) <= 0:
                continue
            out.append(counts)
        # fewest servers first: the greedy dive meets short incumbents early
        out.sort(key=lambda c: (sum(1 for x in c if x), [-x for x in c]))
        return out

    # -- state key and dominance -------------------------------------------------

    def key(self, waiting: int, active: list[list]) -> tuple[tuple, tuple[float, ...]]:
        entries = sorted(active, key=lambda e: e[0])
        best_patterns = None
        for perm in self.perms:
            mapped = tuple(tuple(e[1][perm[s]] for s in range(self.num_servers)) for e in entries)
            if best_patterns is None or mapped < best_patterns:
                best_patterns = mapped
        jobs = tuple(e[0] for e in entries)
        return (waiting, jobs, best_patterns), tuple(e[3] for e in entries)

    def dominated(self, key: tuple, t: int, remaining: tuple[float, ...]) -> bool:
        for t0, rem0 in self.seen.get(key, ()):
            if t0 <= t and all(a <= b + _TOL for a, b in zip(rem0, remaining, strict=True)):
                return True
        return False

    def remember(self, key: tuple, t: int, remaining: tuple[float, ...]) -> None:
        kept = [
            (t0, rem0)
            for t0, rem0 in self.seen.get(key, ())
            if not (t <= t0 and all(a <= b + _TOL for a, b in zip(remaining, rem0, strict=True)))
        ]
        kept.append((t, remaining))
        self.seen[key] = kept

    # -- recursion ---------------------------------------------------------------

    def tick(self) -> bool:
        self.nodes += 1
        if self.nodes % _CHECK_EVERY == 0 and self.deadline.expired():
            self.aborted = True
        return self.aborted or self.closed

    def at_time(self, t: int, active: list[list], waiting: int, free: list[int], path) -> None:
        """Explore every decision from slot boundary ``t`` (start sets, then advance)."""
        if self.tick():
            return
        if not waiting and not active:
            makespan = max(finish for *_, finish in path.values())
            if makespan < self.upper:
                self.upper = makespan
                order = range(self.n_jobs)
                self.best = (
                    tuple(path[j][0] for j in order),
                    tuple(path[j][1] for j in order),
                    tuple(path[j][2] for j in order),
                    makespan,
                )
                self.closed = makespan <= self.lower
            return
        if self.bound(t, active, waiting) >= self.upper:
            return
        key, remaining = self.key(waiting, active)
        if self.dominated(key, t, remaining):
            return
        self.choose(t, active, waiting, free, path, 0)
        if not (self.aborted or self.closed):
            # explored in full: no completion below the (final) incumbent is left in it,
            # and the incumbent only decreases, so a later visit is useless
            self.remember(key, t, remaining)

    def choose(self, t, active, waiting, free, path, first: int) -> None:
        """Start further jobs (index ``>= first``) at ``t``, or stop choosing and advance."""
        for j in range(first, self.n_jobs):
            if not (waiting >> j & 1):
                continue
            for counts in self.patterns(j, free, active):
                if self.tick():
                    return
                n = sum(1 for c in counts if c)
                entry = [j, counts, n, float(self.jobs[j].iterations), t]
                active.append(entry)
                for s, c in enumerate(counts):
                    free[s] -= c
                path[j] = (t, counts, None)
                rest = waiting & ~(1 << j)
                if self.bound(t, active, rest) < self.upper:
                    self.choose(t, active, rest, free, path, j + 1)
                del path[j]
                for s, c in enumerate(counts):
                    free[s] += c
                active.pop()
                if self.aborted or self.closed:
                    return
        if active:  # nothing running and nothing started: never optimal (module docstring)
            self.advance(t, active, waiting, free, path)

    def advance(self, t: int, active: list[list], waiting: int, free: list[int], path) -> None:
        """Run the active jobs to the next decision point and recurse."""
        rates = self.contention_rates(active)
        if any(rates[e[0]] <= 0 for e in active):
            return  # a job that never progresses: the evaluator rejects such a schedule
        fits = any(waiting >> j & 1 and self.jobs[j].gpus <= sum(free) for j in range(self.n_jobs))
        if fits:
            step = 1
        else:
            step = min(_slots(e[3], rates[e[0]], self.jobs[e[0]].iterations) for e in active)
        new_active = []
        finished = []
        for entry in active:
            j = entry[0]
            remaining = entry[3] - step * rates[j]
            if remaining <= self.jobs[j].iterations * _TOL:
                finished.append(entry)
            else:
                new_active.append([j, entry[1], entry[2], remaining, entry[4]])
        new_free = list(free)
        new_path = dict(path)
        for entry in finished:
            for s, c in enumerate(entry[1]):
                new_free[s] += c
            start, counts, _ = path[entry[0]]
            new_path[entry[0]] = (start, counts, t + step)
        self.at_time(t + step, new_active, waiting, new_free, new_path)

    def contention_rates(self, active: list[list]) -> dict[int, float]:
        """Iterations per slot of every running job at the contention of Eq. (6)."""
        config = tuple(sorted((e[0], e[1]) for e in active))
        cached = self._rates.get(config)
        if cached is None:
            placements = {j: {s: c for s, c in enumerate(counts) if c} for j, counts in config}
            levels = contention_levels(placements)
            cached = {j: self.rate(j, len(placements[j]), levels[j]) for j, _ in config}
            self._rates[config] = cached
        return cached


def _compositions(total: int, caps: Sequence[int]) -> list[tuple[int, ...]]:
    """Every vector ``c`` with ``sum c = total`` and ``0 <= c_s <= caps_s``."""
    out: list[tuple[int, ...]] = []

    def rec(s: int, left: int, prefix: list[int]) -> None:
        if s == len(caps):
            if left == 0:
                out.append(tuple(prefix))
            return
        room = sum(caps[s + 1 :])
        for c in range(min(caps[s], left), -1, -1):
            if left - c <= room:
                rec(s + 1, left - c, [*prefix, c])

    rec(0, total, [])
    return out


def _slots(remaining: float, rate: float, total: float | None = None) -> int:
    """Slots to finish ``remaining`` iterations at ``rate`` (the evaluator's completion rule)."""
    slack = _TOL * (remaining if total is None else total)
    return max(1, math.ceil((remaining - slack) / rate))


def search_exact(
    instance: RarInstance,
    *,
    upper: int | None = None,
    lower: int = 0,
    deadline: Deadline | None = None,
) -> SearchResult:
    """Branch-and-bound for the optimal makespan (module docstring for the argument).

    Looks for schedules with makespan below ``upper`` (default ``T + 1``: any
    schedule within the horizon); ``lower`` is a known valid lower bound (the
    search stops as soon as it meets it). Raises
    :class:`~ddlsched.errors.ModelTooLargeError` when the instance is out of
    scope (:func:`check_search_size`).
    """
    check_search_size(instance)
    deadline = deadline or Deadline.unlimited()
    horizon_cap = instance.horizon + 1
    upper = horizon_cap if upper is None else min(int(upper), horizon_cap)
    search = _Search(instance, upper, lower, deadline)
    waiting = (1 << search.n_jobs) - 1
    root = max(int(lower), search.bound(0, [], waiting))
    if root < search.upper:
        search.at_time(0, [], waiting, list(search.caps), {})
    proven = not search.aborted
    if search.best is not None:
        starts, patterns, finishes, makespan = search.best
        bound = makespan if proven else min(root, makespan)
        return SearchResult(starts, patterns, finishes, makespan, bound, proven, search.nodes, root)
    bound = upper if proven else min(root, upper)
    return SearchResult(None, None, None, None, bound, proven, search.nodes, root)


def search_schedule(instance: RarInstance, result: SearchResult) -> RarSchedule:
    """Concrete GPU ids for the search's timetable (interval colouring per server).

    Jobs are taken by start slot; each gets the lowest-numbered GPUs of its
    servers whose previous job has finished (the search's finish slots) by
    its start. Planned starts are the timetable's starts, so the evaluator
    executes the schedule as the search did.
    """
    if result.starts is None or result.patterns is None or result.finishes is None:
        raise ValueError("the search found no schedule")
    order = sorted(range(len(instance.jobs)), key=lambda j: (result.starts[j], j))
    busy_until = dict.fromkeys(instance.gpu_ids, 0)
    assignments: dict[str, RarAssignment] = {}
    for j in order:
        start = result.starts[j]
        gpus = []
        for s, count in enumerate(result.patterns[j]):
            free = [g for g in range(instance.servers[s]) if busy_until[s, g] <= start]
            gpus.extend((s, g) for g in free[:count])
        for gpu in gpus:
            busy_until[gpu] = result.finishes[j]
        assignments[instance.jobs[j].id] = RarAssignment(tuple(gpus), start)
    return RarSchedule({job.id: assignments[job.id] for job in instance.jobs})
