"""Maximum-weight matching of typed nodes as a b-matching over type counts (``matching="types"``).

Muri pairs candidate nodes whose weights depend only on their profile types,
so a maximum-weight matching of the concrete nodes has the weight of

    ``max sum_{a <= b} w_ab n_ab`` s.t. ``sum_b n_ab + 2 n_aa <= c_a``, ``n`` integer

(type ``a`` has ``c_a`` nodes; ``n_ab`` pairs of types ``a`` and ``b``).
:class:`TypedMatcher` solves it exactly as a linear program over Edmonds'
b-matching polytope: the degree rows plus the odd-set rows ``sum_{a,b in S}
n_ab <= floor(c(S)/2)`` for ``c(S)`` odd, added as cutting planes
(:func:`violated_odd_set`) while the LP vertex is fractional; an integral
LP vertex is an optimal matching. If no violated odd set is found among the
fractional support (or the support has more than 14 types), the integer
program is solved instead. The LPs go to HiGHS through
:class:`ddlsched.solvers.highs_lp.HighsLp` (one reused instance per
matcher); solutions are memoised by the type counts.

Which maximum-weight matching this returns differs from the original's
Blossom (:mod:`ddlsched.sim.muri.matching.blossom`) where there are ties;
the caller pairs equal-type nodes in list order (earliest with earliest).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

__all__ = ["TypedMatcher", "violated_odd_set"]


def violated_odd_set(
    support: Sequence[int], ends: Sequence[tuple[int, int]], x: np.ndarray, cnt: Sequence[int]
) -> tuple[int, ...] | None:
    """A set ``S`` of ``support`` with ``c(S)`` odd and ``x(E[S]) > floor(c(S)/2)`` (smallest first)."""
    k = len(support)
    bit = {v: 1 << i for i, v in enumerate(support)}
    subsets = np.arange(1, 1 << k, dtype=np.int64)
    total = np.zeros(subsets.size, dtype=np.int64)
    for v, b in bit.items():
        total += np.where(subsets & b, cnt[v], 0)
    lhs = np.zeros(subsets.size)
    for p, (u, v) in enumerate(ends):
        if x[p] > 1e-9 and u in bit and v in bit:
            mask = bit[u] | bit[v]
            lhs += np.where((subsets & mask) == mask, x[p], 0.0)
    bad = np.flatnonzero((total % 2 == 1) & (lhs > total // 2 + 1e-7))
    if bad.size == 0:
        return None
    sizes = np.array([bin(int(s)).count("1") for s in subsets[bad]])
    chosen = int(subsets[bad[int(np.argmin(sizes))]])
    return tuple(v for v, b in bit.items() if chosen & b)


Pair = tuple[tuple[int, ...], tuple[int, ...], float]


class TypedMatcher:
    """Maximum-weight b-matching over node types, memoised by the type counts."""

    def __init__(self):
        self._cache: dict[tuple, list[tuple[tuple[int, ...], tuple[int, ...], int]]] = {}
        self._lp = None

    def _exact(self, types, pairs: list[Pair], counts) -> np.ndarray:
        pos = {t: i for i, t in enumerate(types)}
        ends = [(pos[a], pos[b]) for a, b, _ in pairs]
        cnt = [counts[t] for t in types]
        sets: list[tuple[int, ...]] = []
        for _ in range(50):
            x = self._solve(types, pairs, counts, sets, integer=False)
            frac = np.flatnonzero(np.abs(x - np.round(x)) > 1e-7).tolist()
            if not frac:
                return x
            # vertices joined to the fractional edges by positive edges
            support = {v for p in frac for v in ends[p]}
            positive = [ends[p] for p in np.flatnonzero(x > 1e-7).tolist()]
            grown = True
            while grown:
                grown = False
                for u, v in positive:
                    if (u in support) != (v in support):
                        support.update((u, v))
                        grown = True
            ordered = sorted(support)
            violated = violated_odd_set(ordered, ends, x, cnt) if len(ordered) <= 14 else None
            if violated is None:
                break
            sets.append(violated)
        return self._solve(types, pairs, counts, sets, integer=True)

    def _solve(self, types, pairs: list[Pair], counts, odd_sets, integer: bool) -> np.ndarray:
        """The LP (or, ``integer``, the integer program) with the degree and odd-set rows."""
        if self._lp is None:
            from ddlsched.solvers.highs_lp import HighsLp

            self._lp = HighsLp()
        pos = {t: i for i, t in enumerate(types)}
        n = len(pairs)
        num_types = len(types)
        rows = num_types + len(odd_sets)
        us = np.fromiter((pos[a] for a, _, _ in pairs), dtype=np.int64, count=n)
        vs = np.fromiter((pos[b] for _, b, _ in pairs), dtype=np.int64, count=n)
        cnt = np.array([counts[t] for t in types], dtype=np.int64)
        matrix = np.zeros((rows, n))
        cols = np.arange(n)
        matrix[us, cols] += 1.0
        matrix[vs, cols] += 1.0
        if odd_sets:
            member = np.zeros((len(odd_sets), num_types), dtype=bool)
            for k, subset in enumerate(odd_sets):
                member[k, list(subset)] = True
            matrix[num_types:, :] = member[:, us] & member[:, vs]
        odd_ub = [int(cnt[list(subset)].sum()) // 2 for subset in odd_sets]
        return self._lp.solve(
            np.fromiter((w for _, _, w in pairs), dtype=float, count=n),
            matrix,
            row_upper=np.concatenate([cnt.astype(float), np.array(odd_ub, dtype=float)]),
            col_lower=np.zeros(n),
            col_upper=np.where(us == vs, cnt[us] // 2, np.minimum(cnt[us], cnt[vs])).astype(float),
            maximize=True,
            integrality=[True] * n if integer else None,
            what="Muri matching",
        )

    def solve(
        self,
        counts: dict[tuple[int, ...], int],
        weight: Callable[[tuple[int, ...], tuple[int, ...]], float],
        size_of: Callable[[tuple[int, ...]], int],
        max_size: int,
    ) -> list[tuple[tuple[int, ...], tuple[int, ...], int]]:
        """``(type a, type b, number of pairs)``, heaviest pair first, of a maximum-weight matching.

        ``counts``: nodes per type; ``weight(a, b)``: weight of pairing a node
        of type ``a`` with one of ``b`` (pairs weighing ~0 or less are not
        edges); ``size_of``: a type's number of jobs (a pair may hold at most
        ``max_size``).
        """
        key = tuple(sorted(counts.items()))
        got = self._cache.get(key)
        if got is not None:
            return got
        types = sorted(counts)
        pairs: list[Pair] = []
        for a_i, a in enumerate(types):
            for b in types[a_i:]:
                if size_of(a) + size_of(b) > max_size:
                    continue
                if a == b and counts[a] < 2:
                    continue
                w = weight(a, b)
                if w > 0 and not math.isclose(w, 0.0, abs_tol=0.0, rel_tol=1e-5):
                    pairs.append((a, b, w))
        result: list[tuple[tuple[int, ...], tuple[int, ...], int]] = []
        if pairs:
            x = self._exact(types, pairs, counts)
            for p, (a, b, _) in enumerate(pairs):
                k = int(np.rint(x[p]))
                if k > 0:
                    result.append((a, b, k))
            result.sort(key=lambda r: -weight(r[0], r[1]))
        self._cache[key] = result
        return result
