"""Threshold proofs for placement: "is there a placement with ``alpha <= T``?" in CP-SAT.

Behind :func:`ddlsched.models.placement_pattern_proof.pattern_proof` (the bound
and the placement of method ``exact``); this module knows stage terms,
counts and servers, not instances.

``alpha`` (Eq. 7) is the largest term over the ``(s, m)`` with ``x[s,m] >
0``, and the term of stage ``s`` on server ``m`` depends on that server's
own counts only: ``term_s(x[s-1,m], x[s,m], x[s+1,m])`` (Eqs. 4-6). So
``alpha <= T`` holds for a placement exactly when

    sum_m x[s,m] = k_s                       for every stage (Eq. 2)
    sum_s x[s,m] <= avail_m  (= when the servers are exactly enough)
    (x[s-1,m], x[s,m], x[s+1,m]) in A_s(T)   for every (s, m)

with ``A_s(T)`` the triples whose middle count is 0 or whose term is
``<= T``. The terms are compared with ``T`` here, in Python, with the same
floating-point arithmetic as the pattern values
(:meth:`~ddlsched.models.placement_bounds.Coefficients.term`); the
solver sees integer counts and table constraints only (``docs/architecture.md``: CP-SAT
for models written natively with integer data), so its answer involves no
tolerance. Every ``alpha`` is one of the terms, so the optimum is the
smallest term value ``T`` whose problem is feasible: :func:`threshold_search`
finds it by a search over the sorted distinct term values (upward from a
proven lower bound at growing steps, then bisection) up to the value of a
known placement. An "infeasible" at ``T``
proves ``alpha > T``, hence ``alpha >=`` the next larger term value.

CP-SAT runs through :mod:`ddlsched.solvers.cpsat` (its status mapping:
``infeasible`` proves ``alpha > T``, ``optimal`` or ``feasible`` give a
placement, anything else leaves ``T`` undecided), single-threaded with a
fixed seed (deterministic when the search finishes within its budget: the
same instance gives the same placement; a search cut short by the clock
depends on the machine's load), each solve within what is left of the
budget; a solve that ends undecided stops the search and keeps what was
proven (a valid bound, possibly below the placement's value).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ddlsched.solvers.cpsat import CpsatOptions, solve_cpsat
from ddlsched.solvers.result import Status

__all__ = ["ThresholdSearch", "threshold_search"]


@dataclass(frozen=True)
class ThresholdSearch:
    """What :func:`threshold_search` proved and found (model units).

    ``bound``: ``alpha >= bound`` for every placement; ``counts`` and
    ``value``: the best placement known (``counts[s][m]``) and its largest
    term, or ``None`` if the search found none and was given none; ``closed``:
    ``bound >= value`` (the placement is optimal); ``solves``: CP-SAT calls;
    ``runtime_s``: their total time; ``work``: their deterministic time.
    """

    bound: float
    counts: tuple[tuple[int, ...], ...] | None
    value: float | None
    solves: int
    runtime_s: float
    work: float = 0.0

    @property
    def closed(self) -> bool:
        return self.value is not None and self.bound >= self.value


def _feasible(
    terms: Sequence[np.ndarray],
    replicas: Sequence[int],
    available: Sequence[int],
    full: bool,
    cap: float,
    seconds: float,
    seed: int,
    work: float = math.inf,
) -> tuple[bool | None, tuple[tuple[int, ...], ...] | None, float]:
    """Is there a placement whose terms are all ``<= cap``? ``(True, counts)``,
    ``(False, None)``, or ``(None, None)`` when CP-SAT did not decide in ``seconds`` (wall)
    or ``work`` (CP-SAT's deterministic time); then the deterministic time it used."""
    from ortools.sat.python import cp_model

    num_stages, num_servers = len(replicas), len(available)
    model = cp_model.CpModel()
    x = [
        [model.new_int_var(0, min(k, a), f"x{s}_{m}") for m, a in enumerate(available)]
        for s, k in enumerate(replicas)
    ]
    zero = model.new_constant(0)
    for s, k in enumerate(replicas):
        model.add(sum(x[s]) == k)
    for m, a in enumerate(available):
        used = sum(x[s][m] for s in range(num_stages))
        model.add(used == a) if full else model.add(used <= a)
    for s in range(num_stages):
        table = terms[s]  # table[prev, v, nxt]
        ok = (table <= cap) | (np.arange(table.shape[1]) == 0)[None, :, None]
        for m, a in enumerate(available):
            top = [
                min(replicas[s - 1], a) if s > 0 else 0,
                min(replicas[s], a),
                min(replicas[s + 1], a) if s < num_stages - 1 else 0,
            ]
            sub = ok[: top[0] + 1, : top[1] + 1, : top[2] + 1]
            prev, v, nxt = np.nonzero(sub)
            keep = prev + v + nxt <= a  # never empty: (0, 0, 0) is always allowed
            tuples = np.stack([prev[keep], v[keep], nxt[keep]], axis=1).tolist()
            left = x[s - 1][m] if s > 0 else zero
            right = x[s + 1][m] if s < num_stages - 1 else zero
            model.add_allowed_assignments([left, x[s][m], right], tuples)
    options = CpsatOptions(seed=seed, deterministic_time_s=work if math.isfinite(work) else None)
    run = solve_cpsat(model, None, options, time_limit_s=max(1e-3, seconds))
    used = float(run.solver.deterministic_time) if run.solver is not None else 0.0
    if run.status is Status.INFEASIBLE:
        return False, None, used
    if run.has_solution:
        counts = tuple(
            tuple(run.value(x[s][m]) for m in range(num_servers)) for s in range(num_stages)
        )
        return True, counts, used
    return None, None, used


def _value(terms: Sequence[np.ndarray], counts) -> float:
    """The largest term of a placement (``counts[s][m]``)."""
    num_stages = len(counts)
    worst = 0.0
    for s, row in enumerate(counts):
        for m, v in enumerate(row):
            if v:
                prev = counts[s - 1][m] if s > 0 else 0
                nxt = counts[s + 1][m] if s < num_stages - 1 else 0
                worst = max(worst, float(terms[s][prev, v, nxt]))
    return worst


def threshold_search(
    terms: Sequence[np.ndarray],
    replicas: Sequence[int],
    available: Sequence[int],
    *,
    full: bool,
    lower: float,
    counts: tuple[tuple[int, ...], ...] | None = None,
    budget_s: float = math.inf,
    work: float = math.inf,
    seed: int = 0,
) -> ThresholdSearch:
    """The smallest ``T`` with a placement of ``alpha <= T`` (module docstring).

    Probes the candidate values upward from ``lower`` at growing steps (1, 2,
    4, ...: the bound is usually tight or nearly so) until one is feasible,
    then bisects between the last infeasible and the best feasible one.

    ``terms[s]``: array ``[prev, v, nxt]`` of stage ``s``'s term (model units;
    ``prev``/``nxt`` axes of length 1 at the ends of the pipeline; any value at
    ``v = 0``); ``lower``: a proven lower bound on ``alpha`` (to within 1e-9
    relative: the first candidate is the smallest term value not below
    ``lower`` minus that); ``counts``: a known
    placement (its value is the search's upper end), or ``None`` to search up to
    the largest term. Stops when ``budget_s`` seconds are spent, or ``work``
    units of CP-SAT's deterministic time (a budget that does not depend on the
    machine's speed nor on the time limit: the search gets what it needs).
    """
    started = time.perf_counter()
    from ortools.sat.python import cp_model  # noqa: F401  (first import ~0.6 s: counted here)

    values = np.unique(np.concatenate([t[:, 1:, :].ravel() for t in terms]))
    best = counts
    upper = _value(terms, counts) if counts is not None else float(values[-1])
    # `lower` may come from other arithmetic (an ulp off a term value): a tolerance
    candidates = values[(values >= lower - 1e-9 * max(1.0, abs(lower))) & (values <= upper)]
    # invariant: every candidate below index lo is infeasible (proven); the one at
    # index hi is feasible if best is not None (best's value is a term value <= upper)
    lo, hi, solves, spent = 0, candidates.size - 1, 0, 0.0

    def index_of(placement) -> int:
        return min(int(np.searchsorted(candidates, _value(terms, placement))), candidates.size - 1)

    if best is not None:
        hi = index_of(best)
    step, bisect = 1, False  # gallop up from the lower bound (usually tight), then bisect
    while True:
        top = hi if best is None else hi - 1  # the largest index still undecided
        left = budget_s - (time.perf_counter() - started)
        if lo > top or left <= 1e-3 or not work - spent > 1e-3:
            break
        probe = (lo + top) // 2 if bisect else min(lo + step - 1, top)
        step *= 2
        solves += 1
        answer, found, used = _feasible(
            terms, replicas, available, full, float(candidates[probe]), left, seed, work - spent
        )
        spent += used
        if answer is None:  # undecided within the budget: keep what is proven
            break
        if answer:
            best, hi, bisect = found, index_of(found), True
        else:
            lo = probe + 1
    # every candidate below lo is infeasible and every smaller value is below `lower`
    bound = float(candidates[lo]) if lo < candidates.size else lower
    value = _value(terms, best) if best is not None else None
    return ThresholdSearch(
        bound=bound,
        counts=best,
        value=value,
        solves=solves,
        runtime_s=time.perf_counter() - started,
        work=spent,
    )
