"""The server-pattern bound and start of the aggregated placement ILP (``exact``).

Builds the pattern blocks of a :class:`~ddlsched.problems.placement.PlacementInstance`
(one block per availability value: its servers and the count vectors they
may hold, :func:`~ddlsched.solvers.placement_pattern_cover.patterns`), values each
pattern by Eqs. (4)-(7) (:func:`pattern_values`) and hands them to
:func:`~ddlsched.solvers.placement_pattern_cover.cover_search` (highspy); the
mathematics are in that module's docstring. :func:`pattern_search` returns
the bound and a placement for :func:`ddlsched.models.placement.build_aggregated`.

:func:`pattern_proof` goes on where the pattern LP leaves a gap: between
its bound (or the forced-split bound, whichever is larger) and the pattern
placement's value, the threshold search of
:mod:`ddlsched.solvers.placement_threshold` (CP-SAT over integer counts and
table constraints) finds the smallest threshold with a placement. When it
finishes, the placement is optimal without the ILP: method ``exact``
returns it (``info['proof']``), or, with the cross-check on, hands it to the
ILP as a start. On the hard Table II case (gpt175b, 32 GPUs, seed 4: pattern
LP bound 215 s, forced-split bound 423.05 s, optimum 423.53 s among values
within 0.1 %) it proves the optimum with two CP-SAT solves of ~0.1 s, where
HiGHS needed 12 s and 8,883 nodes on the aggregated ILP.
"""

from __future__ import annotations

import math
import sys
from collections import Counter
from dataclasses import dataclass

import numpy as np

from ddlsched.deadline import Deadline
from ddlsched.models.placement_bounds import (
    Coefficients,
    coefficients,
    forced_split_bound,
    split_costs,
    stage_terms,
)
from ddlsched.problems.placement import PlacementInstance
from ddlsched.solvers.placement_pattern_cover import (
    PATTERN_LIMIT,
    cover_search,
    pattern_count,
    patterns,
)
from ddlsched.solvers.placement_threshold import threshold_search

__all__ = [
    "PatternProof",
    "PatternSearch",
    "canonical",
    "pattern_proof",
    "pattern_search",
    "pattern_values",
    "placement_proof",
]

#: Largest number of allowed triples (over all stages and servers) the threshold search
#: hands CP-SAT; above it (stages of dozens of replicas on large servers) it is skipped.
THRESHOLD_TUPLE_LIMIT = 100_000
#: The first import of CP-SAT in a process takes ~0.6 s: with less time left than
#: this the threshold search is skipped rather than overrun the time limit.
_CP_SAT_IMPORT_S = 0.75


def pattern_values(
    instance: PlacementInstance, coef: Coefficients, table: np.ndarray
) -> np.ndarray:
    """``f(p)`` (model units) of every pattern (row of ``table``): the largest
    ``comp + comm + AllReduce`` term of the stages it holds (0 for the empty one)."""
    num, size = instance.num_stages, table.shape[0]
    out = np.zeros(size)
    for s, stage in enumerate(instance.stages):
        v = table[:, s]
        held = v > 0
        if not held.any():
            continue
        cost = np.zeros(stage.replicas + 1)
        for count in range(1, stage.replicas + 1):
            cost[count] = coef.cost[(s, count)]
        term = cost[v] + coef.comm0[s]
        if s > 0:
            term = term + coef.comm_prev[s] * table[:, s - 1]
        if s < num - 1:
            term = term + coef.comm_next[s] * table[:, s + 1]
        out = np.where(held, np.maximum(out, term), out)
    return out


@dataclass(frozen=True)
class PatternSearch:
    """What :func:`pattern_search` found (model units).

    ``bound``: ``alpha >= bound`` for every placement: the pattern LP bound,
    at least the ``lower`` bound given (to within 1e-9 relative: the smallest
    pattern value that is not below it), at least the largest over the
    availabilities of the smallest full pattern value (the servers exactly
    enough); only these two if HiGHS's infeasibility certificate did not check
    out;
    ``counts``: a placement (``counts[s][m]`` replicas of stage ``s`` on server
    ``m``) built from an integer pattern solution, servers of equal
    availability taking their patterns in non-increasing lexicographic order
    (so it satisfies the aggregated ILP's symmetry-breaking rows), or ``None``;
    ``value``: its largest pattern value (``alpha`` of the placement).
    """

    bound: float
    counts: tuple[tuple[int, ...], ...] | None
    value: float | None
    lp_solves: int
    mip_solves: int
    stopped: bool = False  # the deadline cut the pattern LPs (see cover_search)


def canonical(
    instance: PlacementInstance, counts: tuple[tuple[int, ...], ...]
) -> tuple[tuple[int, ...], ...]:
    """The same placement with the servers of equal availability holding their count
    vectors in non-increasing lexicographic order (the aggregated ILP's
    symmetry-breaking rows accept it as a start; alpha is unchanged)."""
    columns = [tuple(row[m] for row in counts) for m in range(instance.num_servers)]
    avails = sorted(set(instance.available))
    chosen = [
        [c for c, a in zip(columns, instance.available, strict=True) if a == avail]
        for avail in avails
    ]
    return _placement(instance, avails, chosen)


def _placement(instance: PlacementInstance, avails, chosen) -> tuple[tuple[int, ...], ...]:
    counts = [[0] * instance.num_servers for _ in instance.stages]
    for avail, table in zip(avails, chosen, strict=True):
        servers = [m for m, a in enumerate(instance.available) if a == avail]
        ordered = sorted((tuple(int(v) for v in row) for row in table), reverse=True)
        for m, row in zip(servers, ordered, strict=True):
            for s, v in enumerate(row):
                counts[s][m] = v
    return tuple(tuple(row) for row in counts)


def pattern_search(
    instance: PlacementInstance,
    coef: Coefficients,
    *,
    budget_s: float = math.inf,
    lower: float = 0.0,
    **options,
) -> PatternSearch | None:
    """The pattern LP bound and a placement for ``instance`` (model units);
    ``None`` when its servers have more than
    :data:`~ddlsched.solvers.placement_pattern_cover.PATTERN_LIMIT` patterns.
    ``lower``: a proven lower bound on alpha (the search starts there);
    ``options`` go to :func:`~ddlsched.solvers.placement_pattern_cover.cover_search`."""
    full = sum(instance.available) == instance.num_replicas
    counts = Counter(instance.available)
    size = 0
    for avail in counts:
        caps = [min(stage.replicas, avail) for stage in instance.stages]
        size += pattern_count(caps, avail, exact=full)
        if size > PATTERN_LIMIT:
            return None
    avails, tables, values = [], [], []
    for avail in sorted(counts):
        caps = [min(stage.replicas, avail) for stage in instance.stages]
        table = patterns(caps, avail, exact=full)
        avails.append(avail)
        tables.append(table)
        values.append(pattern_values(instance, coef, table))
    supply = np.array([counts[a] for a in avails], dtype=float)
    demand = np.array([stage.replicas for stage in instance.stages], dtype=float)
    if full:  # every server holds one of its full patterns: alpha >= the cheapest
        lower = max(lower, *(float(v.min()) for v in values))
    found = cover_search(tables, values, supply, demand, budget_s=budget_s, lower=lower, **options)
    placement = value = None
    if found.chosen is not None:
        placement = _placement(instance, avails, found.chosen)
        value = float(pattern_values(instance, coef, np.vstack(found.chosen)).max())
    return PatternSearch(
        found.bound, placement, value, found.lp_solves, found.mip_solves, found.stopped
    )


@dataclass(frozen=True)
class PatternProof:
    """The bound and placement behind method ``exact`` (model units).

    ``bound``: proven, ``alpha >= bound`` for every placement (the pattern
    search's bound, raised by the threshold search's); ``pattern_bound``: the
    pattern search's alone (the forced-split and smallest-full-pattern bounds
    and the certified pattern LP bound; ``None`` with too many patterns);
    ``counts``/``value``: the best placement found and its ``alpha`` (``None``
    if none); ``proof``: what closed the gap, ``"patterns"`` (the pattern
    search's bound meets its placement), ``"threshold"`` (CP-SAT) or ``None``
    (open); ``lp_solves``: pattern LPs solved (0 when a combinatorial bound was
    met directly); ``threshold_solves``/``threshold_s``: CP-SAT calls and their
    time.
    """

    bound: float
    pattern_bound: float | None
    counts: tuple[tuple[int, ...], ...] | None
    value: float | None
    proof: str | None
    lp_solves: int = 0
    threshold_solves: int = 0
    threshold_s: float = 0.0

    @property
    def closed(self) -> bool:
        return self.proof is not None


def _tuple_count(instance: PlacementInstance) -> int:
    num, total = instance.num_stages, 0
    for s, stage in enumerate(instance.stages):
        for avail in instance.available:
            prev = min(instance.stages[s - 1].replicas, avail) + 1 if s > 0 else 1
            nxt = min(instance.stages[s + 1].replicas, avail) + 1 if s < num - 1 else 1
            total += prev * (min(stage.replicas, avail) + 1) * nxt
    return total


def pattern_proof(
    instance: PlacementInstance,
    coef: Coefficients,
    *,
    deadline: Deadline | None = None,
) -> PatternProof:
    """Bound and placement from the patterns, closed by the threshold search if needed.

    The pattern search (:func:`pattern_search`: a short direct fill, short
    residual fills, no integer pattern solves) gets a fifth of the time left,
    its LPs the method's deadline (one cut by it proves nothing: the bounds
    proven before it stay, :func:`~ddlsched.solvers.placement_pattern_cover.cover_search`),
    the threshold search (skipped above :data:`THRESHOLD_TUPLE_LIMIT` triples)
    :data:`THRESHOLD_WORK` units of CP-SAT's deterministic time, and at most
    half of the wall time left after the pattern search: what it needs, not a
    share that grows with the deadline (each solve was given all that was left
    of half the time), and the same work on a loaded machine.
    """
    deadline = deadline or Deadline.unlimited()
    remaining = deadline.remaining_s()
    share = 0.2 * remaining if math.isfinite(remaining) else math.inf
    forced = forced_split_bound(instance, split_costs(instance, coef)) or 0.0
    # other arithmetic than the term values (can be an ulp above the term it equals)
    forced -= 1e-9 * max(1.0, abs(forced)) if forced > 0 else 0.0
    # with the threshold search behind it, the pattern search stays cheap
    options = {"direct_nodes": 200, "dfs_nodes": 300, "max_mips": 0}
    search = pattern_search(
        instance, coef, budget_s=share, lower=forced, deadline=deadline, **options
    )
    pattern_bound = search.bound if search is not None else None
    bound = pattern_bound if pattern_bound is not None else forced
    counts = search.counts if search is not None else None
    value = search.value if search is not None else None
    lp_solves = search.lp_solves if search is not None else 0
    if value is not None and bound >= value:
        return PatternProof(bound, pattern_bound, counts, value, "patterns", lp_solves)
    if _tuple_count(instance) > THRESHOLD_TUPLE_LIMIT:
        return PatternProof(bound, pattern_bound, counts, value, None, lp_solves)
    remaining = deadline.remaining_s()
    budget = 0.5 * remaining if math.isfinite(remaining) else math.inf
    if remaining < _CP_SAT_IMPORT_S and "ortools.sat.python.cp_model" not in sys.modules:
        # importing CP-SAT alone would overrun the time limit
        return PatternProof(bound, pattern_bound, counts, value, None, lp_solves)
    widest = max(instance.available)
    found = threshold_search(
        stage_terms(instance, coef, [min(st.replicas, widest) for st in instance.stages]),
        [stage.replicas for stage in instance.stages],
        list(instance.available),
        full=sum(instance.available) == instance.num_replicas,
        lower=bound,
        counts=counts,
        budget_s=budget,
        work=THRESHOLD_WORK,
    )
    return PatternProof(
        bound=max(bound, found.bound),
        pattern_bound=pattern_bound,
        counts=None if found.counts is None else canonical(instance, found.counts),
        value=found.value,
        proof="threshold" if found.closed else None,
        lp_solves=lp_solves,
        threshold_solves=found.solves,
        threshold_s=found.runtime_s,
    )


#: CP-SAT deterministic time the threshold search may spend (all its solves): the
#: searches that close a proof on the Table II instances used at most 0.25 of it (vgg16 on
#: 64 and 256 GPUs, ``benchmarks/results/placement.md``).
THRESHOLD_WORK = 10.0

_PROOF_CACHE: dict[PlacementInstance, tuple[PatternProof, float]] = {}


def placement_proof(instance: PlacementInstance, deadline: Deadline | None = None) -> PatternProof:
    """:func:`pattern_proof` of ``instance``, computed once: the last few instances'
    are kept (method ``exact`` reads it before building the ILP, the ILP and its
    cross-check read it again). An open proof is computed again when more time is
    left now than when it was computed."""
    deadline = deadline or Deadline.unlimited()
    remaining = deadline.remaining_s()
    cached = _PROOF_CACHE.get(instance)
    if cached is not None and (cached[0].closed or remaining <= cached[1]):
        return cached[0]
    _PROOF_CACHE.pop(instance, None)
    if len(_PROOF_CACHE) >= 4:
        _PROOF_CACHE.pop(next(iter(_PROOF_CACHE)))
    proof = pattern_proof(instance, coefficients(instance), deadline=deadline)
    _PROOF_CACHE[instance] = (proof, remaining)
    return proof
