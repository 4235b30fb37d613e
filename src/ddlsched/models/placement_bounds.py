"""Valid bounds on ``alpha`` (Eq. 7) that tighten the placement ILPs.

Pure arithmetic on a :class:`~ddlsched.problems.placement.PlacementInstance`
(no Pyomo, no solver), used by :mod:`ddlsched.models.placement` and
:mod:`ddlsched.models.placement_gpu_level` for the one-hot count values and
the ``comm`` expression of Eq. (5) (:func:`count_values`, :func:`comm_expr`), the
big-M constants, the variable bound of ``alpha`` and the valid inequalities
of the aggregated ILP. Every quantity here is in the models' time unit
(milliseconds, or finer for sub-second jobs: :func:`time_scale`) unless its
name says ``_s``.

Server patterns
    The terms of Eq. (7) on one server ``m`` depend only on that server's
    own counts: ``comp + AllReduce`` on ``x[s,m]`` (Eqs. 4, 6) and ``comm``
    on ``x[s-1,m]`` and ``x[s+1,m]`` (Eq. 5). Call a server's count vector
    ``p = x[., m]`` its *pattern* and ``f(p)`` the largest term of the
    stages it holds. Then ``alpha >= f(x[., m])`` for every server, and for
    every stage ``s`` and value ``v``

        alpha >= plower(s, v) := min { f(p) : p a pattern of the server, p_s = v }

    whenever ``x[s,m] = v``. A pattern of a server with ``avail_m`` free GPUs
    holds at most ``min(k_s, avail_m)`` replicas of each stage and at most
    ``avail_m`` in all; exactly ``avail_m`` when the servers are exactly
    enough (``sum avail = sum k``, every server is then full, the Table II
    setting). :func:`server_pattern_lower` computes ``plower`` for all
    ``(s, v)`` at once by dynamic programming along the pipeline (a prefix
    and a suffix table over ``(GPUs used, p_{s-1}, p_s)``), so the cost grows
    with ``S * avail * k^3``, not with the number of patterns.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ddlsched.problems.placement import PlacementInstance, allreduce_time, comm_time

__all__ = [
    "Coefficients",
    "big_m",
    "coefficients",
    "comm_expr",
    "comm_lower",
    "count_values",
    "forced_split_bound",
    "max_count",
    "pattern_table_size",
    "server_pattern_lower",
    "split_costs",
    "stage_terms",
    "time_scale",
    "upper_bound_ms",
]

MS = 1000.0  # model time unit: milliseconds (for instances whose terms reach 1 s)


@dataclass(frozen=True)
class Coefficients:
    """Per-stage constants of the linearised Eqs. (4)-(6), in milliseconds."""

    scale: float  # model time units per second (1000: milliseconds)
    cost: dict[tuple[int, int], float]  # (s, v>=1) -> comp_s + AR_s(v)
    comm0: dict[int, float]  # comm_s(0, 0)
    comm_prev: dict[int, float]  # d comm_s / d x[s-1,m]
    comm_next: dict[int, float]  # d comm_s / d x[s+1,m]

    def term(self, s: int, prev: int, v: int, nxt: int) -> float:
        """``comp + comm + AllReduce`` of stage ``s`` with ``v >= 1`` replicas on a server
        holding ``prev`` replicas of stage ``s-1`` and ``nxt`` of stage ``s+1``."""
        return (
            self.cost[(s, v)] + self.comm0[s] + self.comm_prev[s] * prev + self.comm_next[s] * nxt
        )


def time_scale(instance: PlacementInstance) -> float:
    """Model time units per second: milliseconds, or finer for jobs whose largest
    possible term is under a second, so that it is at least 1000 units (the solvers'
    absolute tolerances, ~1e-6, stay negligible)."""
    worst = instance.largest_term_s
    if not worst > 0 or worst >= 1.0:
        return MS
    return 10.0 ** math.ceil(math.log10(MS / worst))


def coefficients(instance: PlacementInstance) -> Coefficients:
    """The linearisation constants of Eqs. (4)-(6) for ``instance``, in model units."""
    unit = time_scale(instance)
    cost, comm0, comm_prev, comm_next = {}, {}, {}, {}
    for s, stage in enumerate(instance.stages):
        for v in range(1, stage.replicas + 1):
            cost[(s, v)] = unit * (stage.compute_s + allreduce_time(instance, s, v))
        base = comm_time(instance, s, 0, 0)
        comm0[s] = unit * base
        comm_prev[s] = unit * (comm_time(instance, s, 1, 0) - base) if s > 0 else 0.0
        last = s == instance.num_stages - 1
        comm_next[s] = unit * (comm_time(instance, s, 0, 1) - base) if not last else 0.0
    return Coefficients(unit, cost, comm0, comm_prev, comm_next)


def max_count(instance: PlacementInstance, s: int, m: int) -> int:
    """Largest possible ``x[s,m]`` (0 for a stage index outside the pipeline)."""
    if not 0 <= s < instance.num_stages:
        return 0
    return min(instance.stages[s].replicas, instance.available[m])


def big_m(instance: PlacementInstance, coef: Coefficients, s: int, m: int) -> float:
    """Largest value of ``comm_s(x[s-1,m], x[s+1,m])`` over the counts' ranges."""
    hi_prev, hi_next = max_count(instance, s - 1, m), max_count(instance, s + 1, m)
    corners = [
        coef.comm0[s] + coef.comm_prev[s] * p + coef.comm_next[s] * n
        for p in (0, hi_prev)
        for n in (0, hi_next)
    ]
    return max(0.0, *corners)


def comm_lower(instance: PlacementInstance, coef: Coefficients, s: int, m: int, v: int) -> float:
    """Smallest ``comm_s`` possible when ``x[s,m] = v``: the neighbours share the other
    ``avail_m - v`` GPUs of the server."""
    room = instance.available[m] - v
    best = math.inf
    for p in range(min(max_count(instance, s - 1, m), room) + 1):
        for n in range(min(max_count(instance, s + 1, m), room - p) + 1):
            best = min(best, coef.comm0[s] + coef.comm_prev[s] * p + coef.comm_next[s] * n)
    return best


def split_costs(instance: PlacementInstance, coef: Coefficients) -> dict[tuple[int, int], float]:
    """``split[s, mu]``: a lower bound on alpha when stage ``s`` has a server
    holding at most ``mu`` of its replicas (``1 <= mu < k_s``).

    ``split[s, mu] = min_{m, 1 <= u <= mu} lower(s, m, u)``. A stage with a
    share ``0 < v < k_s`` on some server has a server holding at most
    ``min(v, k_s - v)`` of its replicas (its other servers share ``k_s - v``).
    """
    # comm_lower depends on a server only through its availability: one server per value
    server_of_avail: dict[int, int] = {}
    for m, avail in enumerate(instance.available):
        server_of_avail.setdefault(avail, m)
    out = {}
    for s, stage in enumerate(instance.stages):
        best = math.inf
        for mu in range(1, stage.replicas):
            for avail, m in server_of_avail.items():
                if mu <= avail:
                    best = min(best, coef.cost[(s, mu)] + comm_lower(instance, coef, s, m, mu))
            out[s, mu] = best
    return out


def forced_split_bound(
    instance: PlacementInstance, split: dict[tuple[int, int], float]
) -> float | None:
    """A valid lower bound on alpha from the shares a full server can hold.

    When the servers are exactly enough (``sum avail = sum k``) every server
    is full: its shares ``v_s`` add up to ``avail_m``. A partial share
    ``0 < v_s < k_s`` costs at least ``split[s, min(v_s, k_s - v_s)]``; a
    dynamic programme over the stages finds, for each server, the cheapest
    way to fill it (the smallest possible largest cost), and the bound is
    the largest of these over the servers (``None`` when it is 0: every
    server can be filled with whole stages).
    """
    if sum(instance.available) != instance.num_replicas:
        return None
    bound = 0.0
    for avail in instance.available:
        best = [0.0] + [math.inf] * avail  # best[t]: cheapest max penalty filling t GPUs
        for s, stage in enumerate(instance.stages):
            k = stage.replicas
            new = list(best)
            for used in range(avail + 1):
                if best[used] == math.inf:
                    continue
                for v in range(1, min(k, avail - used) + 1):
                    penalty = 0.0 if v == k else split[s, min(v, k - v)]
                    value = max(best[used], penalty)
                    if value < new[used + v]:
                        new[used + v] = value
            best = new
        if math.isfinite(best[avail]):
            bound = max(bound, best[avail])
    return bound if bound > 0 else None


def upper_bound_ms(instance: PlacementInstance, coef: Coefficients) -> float:
    """A valid upper bound on any placement's alpha, for the variable's domain."""
    worst = 0.0
    for s in range(instance.num_stages):
        top = max(coef.cost[(s, v)] for v in range(1, instance.stages[s].replicas + 1))
        worst = max(
            worst, top + max(big_m(instance, coef, s, m) for m in range(instance.num_servers))
        )
    return worst * (1 + 1e-6) + 1e-6


# --------------------------------------------------------------------------- server patterns


def _term_tables(
    instance: PlacementInstance, coef: Coefficients, caps: list[int], width: int
) -> list[np.ndarray]:
    """``G[s][a, b, n]``: the term of stage ``s`` holding ``b`` replicas next to ``a``
    of stage ``s-1`` and ``n`` of stage ``s+1`` (0 when ``b = 0``; ``inf`` for counts
    out of range, including a neighbour outside the pipeline holding any)."""
    num = instance.num_stages
    tables = []
    for s, terms in enumerate(stage_terms(instance, coef, caps)):
        table = np.full((width, width, width), np.inf)
        top_a = caps[s - 1] if s > 0 else 0
        top_n = caps[s + 1] if s < num - 1 else 0
        table[: top_a + 1, : caps[s] + 1, : top_n + 1] = terms[
            : top_a + 1, : caps[s] + 1, : top_n + 1
        ]
        tables.append(table)
    return tables


def stage_terms(
    instance: PlacementInstance, coef: Coefficients, caps: list[int] | None = None
) -> list[np.ndarray]:
    """``T[s][a, b, n]``: the term of stage ``s`` holding ``b >= 1`` replicas next to ``a``
    of stage ``s-1`` and ``n`` of stage ``s+1`` (axes of length 1 at the pipeline's ends;
    0 at ``b = 0``), by :meth:`Coefficients.term`, the arithmetic of the pattern values.
    Counts run up to ``caps[s]`` (default: the stage's replicas; a server never holds
    more than its free GPUs, so callers cap at the largest availability: the tables
    grow with the cube of the caps)."""
    num = instance.num_stages
    caps = caps or [stage.replicas for stage in instance.stages]
    out = []
    for s in range(num):
        top_a = caps[s - 1] if s > 0 else 0
        top_n = caps[s + 1] if s < num - 1 else 0
        table = np.zeros((top_a + 1, caps[s] + 1, top_n + 1))
        for a in range(top_a + 1):
            for n in range(top_n + 1):
                for b in range(1, caps[s] + 1):
                    table[a, b, n] = coef.term(s, a, b, n)
        out.append(table)
    return out


def pattern_table_size(instance: PlacementInstance, capacity: int) -> int:
    """Entries of the largest array :func:`server_pattern_lower` builds for ``capacity``
    (its time and memory grow with it; callers skip the bound above a limit)."""
    width = max(min(stage.replicas, capacity) for stage in instance.stages) + 1
    return (capacity + 1) * width**3


def server_pattern_lower(
    instance: PlacementInstance, coef: Coefficients, capacity: int, *, full: bool
) -> np.ndarray:
    """``plower[s, v]`` (ms): the smallest largest term of any pattern of a server with
    ``capacity`` free GPUs holding ``v`` replicas of stage ``s`` (module docstring).

    ``full`` requires the pattern to use all ``capacity`` GPUs (servers exactly
    enough); otherwise it may use fewer (the empty pattern's value is 0).
    Entries are ``inf`` where no pattern has ``p_s = v``.
    """
    num = instance.num_stages
    caps = [min(stage.replicas, capacity) for stage in instance.stages]
    width = max(caps) + 1
    used_dim = capacity + 1
    terms = _term_tables(instance, coef, caps, width)

    # prefix[s][u, a, b]: min over p_0..p_s with sum u, p_{s-1} = a, p_s = b of the
    # largest term of stages 0..s-1 (their neighbours are all fixed).
    prefix = []
    first = np.full((used_dim, width, width), np.inf)
    for b in range(caps[0] + 1):
        first[b, 0, b] = 0.0
    prefix.append(first)
    for s in range(num - 1):
        step = np.maximum(prefix[s][:, :, :, None], terms[s][None, :, :, :]).min(axis=1)
        nxt = np.full((used_dim, width, width), np.inf)
        for n in range(caps[s + 1] + 1):
            nxt[n:, :, n] = step[: used_dim - n, :, n]
        prefix.append(nxt)

    # suffix[s][r, b, n]: given p_s = b, min over p_{s+1}.. with p_{s+1} = n and sum r
    # of the largest term of stages s+1..S-1 (n = 0 for the last stage).
    suffix: list[np.ndarray] = [np.empty(0)] * num
    last = np.full((used_dim, width, width), np.inf)
    last[0, :, 0] = 0.0
    suffix[num - 1] = last
    for s in range(num - 2, -1, -1):
        # step[r', b, n] = min_{n'} max(G[s+1][b, n, n'], suffix[s+1][r', n, n'])
        step = np.maximum(terms[s + 1][None, :, :, :], suffix[s + 1][:, None, :, :]).min(axis=3)
        cur = np.full((used_dim, width, width), np.inf)
        for n in range(caps[s + 1] + 1):
            cur[n:, :, n] = step[: used_dim - n, :, n]
        suffix[s] = cur

    out = np.full((num, width), np.inf)
    for s in range(num):
        rest = suffix[s]
        if not full:  # any total up to the capacity: best suffix using at most r GPUs
            rest = np.minimum.accumulate(rest, axis=0)
        rest = rest[::-1]  # rest[u] pairs with a prefix using u GPUs
        for v in range(caps[s] + 1):
            # max over (u, a, n) of prefix[u, a, v], G[a, v, n], suffix[cap - u, v, n]
            combined = np.maximum(
                np.maximum(prefix[s][:, :, v][:, :, None], terms[s][None, :, v, :]),
                rest[:, v, :][:, None, :],
            )
            out[s, v] = combined.min()
    return out


def comm_expr(model, coef: Coefficients, instance: PlacementInstance, s: int, m: int):
    """``comm[s,m]`` of Eq. (5), linear in the neighbours' counts ``model.x`` (model units)."""
    expr = coef.comm0[s]
    if s > 0 and coef.comm_prev[s]:
        expr = expr + coef.comm_prev[s] * model.x[s - 1, m]
    if s < instance.num_stages - 1 and coef.comm_next[s]:
        expr = expr + coef.comm_next[s] * model.x[s + 1, m]
    return expr


def count_values(instance: PlacementInstance) -> list[tuple[int, int, int]]:
    """Every ``(s, m, v)`` with ``0 <= v <=`` :func:`max_count` ``(s, m)``: the one-hot values."""
    return [
        (s, m, v)
        for s in range(instance.num_stages)
        for m in range(instance.num_servers)
        for v in range(max_count(instance, s, m) + 1)
    ]
