"""The modes of family ``asrpt``'s offline optimum: usage vectors and ``alpha*(u)``.

A-SRPT paper: Eqs. (1)-(3) (a job's GPUs per server) and the per-iteration
time of Eqs. (4)-(7); spec ``docs/families/asrpt.md``,
``exact``. Used by :mod:`ddlsched.models.asrpt_exact`.

Modes per job (:func:`usage_vectors`, :func:`count_usage_vectors`): every
GPU-count vector ``u`` over the ``M`` servers (``sum u = g_i``, ``u_m <=
g``), duration ``n_i alpha*(u)``.

``alpha*(u)`` (:func:`alpha_star`) is the ``placement`` optimum on
``available = u`` (the nonzero entries, sorted: a placement instance's
servers are interchangeable, so ``alpha*`` depends on ``u`` as a multiset and
is solved once per (configuration, sorted ``u``) and cached; the mode keeps
its per-server vector, and the placement's ``k``-th server maps to the
mode's ``k``-th server by usage, descending, then index). ``alpha*(u)`` is
proven by Heavy-Edge meeting the closed form
(:func:`~ddlsched.models.asrpt.alpha_closed_form`), else by the placement
ILP; a solve stopped by the deadline keeps its incumbent (Heavy-Edge's at
worst) for the rounded-up data and its dual bound for the rounded-down data.
Only proven values are cached.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

from ddlsched.deadline import Deadline
from ddlsched.errors import SolverError
from ddlsched.heuristics.asrpt_config import map_job
from ddlsched.models.asrpt import PLACEMENT_LIMITS, alpha_closed_form, leq
from ddlsched.models.placement import PlacementFormulation
from ddlsched.problems.asrpt import Cluster, JobConfig, job_placement_instance
from ddlsched.problems.placement import evaluate as evaluate_placement
from ddlsched.solvers.formulation import solve_formulation
from ddlsched.solvers.limits import SolveLimits
from ddlsched.solvers.result import Status

__all__ = ["AlphaStar", "alpha_star", "count_usage_vectors", "usage_vectors"]


@cache
def count_usage_vectors(servers: int, gpus_per_server: int, gpus: int) -> int:
    """How many vectors ``u`` in ``{0..g}^M`` sum to ``gpus`` (no enumeration)."""
    ways = [1] + [0] * gpus
    for _ in range(servers):
        nxt = [0] * (gpus + 1)
        for total, count in enumerate(ways):
            if count:
                for v in range(min(gpus_per_server, gpus - total) + 1):
                    nxt[total + v] += count
        ways = nxt
    return ways[gpus]


def usage_vectors(
    servers: int, gpus_per_server: int, gpus: int, *, non_increasing: bool = False
) -> list[tuple[int, ...]]:
    """Every ``u`` in ``{0..g}^M`` with ``sum u = gpus``, lexicographically descending
    (``non_increasing``: only ``u_0 >= u_1 >= ...``)."""
    out: list[tuple[int, ...]] = []

    def extend(prefix: tuple[int, ...], left: int) -> None:
        m = len(prefix)
        if m == servers:
            if left == 0:
                out.append(prefix)
            return
        top = min(gpus_per_server, left, prefix[-1] if non_increasing and prefix else left)
        for v in range(top, -1, -1):
            if left - v > (servers - m - 1) * gpus_per_server:
                break
            extend((*prefix, v), left - v)

    extend((), gpus)
    return out


@dataclass(frozen=True)
class AlphaStar:
    """``alpha*(u)`` of a configuration on ``available = usage`` (sorted, nonzero).

    ``value_s``: the best placement found (``counts[s][k]`` replicas of stage
    ``s`` on the ``k``-th server of ``usage``); ``bound_s``: a valid lower
    bound (equal to ``value_s`` when ``proven``).
    """

    usage: tuple[int, ...]
    value_s: float
    bound_s: float
    counts: tuple[tuple[int, ...], ...]
    proven: bool
    source: str


_ALPHA_STAR: dict[tuple[Cluster, JobConfig, tuple[int, ...]], AlphaStar] = {}


def alpha_star(
    cluster: Cluster,
    config: JobConfig,
    usage: tuple[int, ...],
    *,
    backend: str = "highs",
    deadline: Deadline | None = None,
    cross_check: bool = True,
    seed: int = 0,
) -> AlphaStar:
    """``alpha*(u)`` (module docstring): Heavy-Edge meeting the closed form, else the
    placement ILP within ``deadline``; proven values are cached."""
    usage = tuple(sorted((int(u) for u in usage if u), reverse=True))
    key = (cluster, config, usage)
    if key in _ALPHA_STAR:
        return _ALPHA_STAR[key]
    deadline = deadline or Deadline.unlimited()
    instance = job_placement_instance(cluster, config, usage)
    closed = alpha_closed_form(instance)
    mapping = map_job(cluster, config, usage, 0)
    if not leq(closed, mapping.alpha_s):
        raise SolverError(
            f"alpha*: the closed form {closed!r} s exceeds Heavy-Edge's {mapping.alpha_s!r} s"
        )
    if leq(mapping.alpha_s, closed):
        result = AlphaStar(
            usage, mapping.alpha_s, mapping.alpha_s, mapping.counts, True, "heavy_edge=bound"
        )
    else:
        result = _alpha_star_ilp(
            instance, usage, closed, mapping, backend, deadline, cross_check, seed
        )
    if result.proven:
        _ALPHA_STAR[key] = result
    return result


def _alpha_star_ilp(
    instance, usage, closed, mapping, backend, deadline, cross_check, seed
) -> AlphaStar:
    fallback = AlphaStar(usage, mapping.alpha_s, closed, mapping.counts, False, "heavy_edge")
    if not deadline.remaining_s() > 1e-3:
        return fallback
    out = solve_formulation(
        PlacementFormulation("aggregated"),
        instance,
        backend,
        SolveLimits(seed=seed, **PLACEMENT_LIMITS),
        cross_check,
        deadline=deadline,
    )
    agree = (out.info.get("cross_check") or {}).get("agree")
    value, counts = mapping.alpha_s, mapping.counts
    if out.schedule is not None:
        ilp_value = evaluate_placement(instance, out.schedule).iteration_time_s
        if ilp_value < value:
            value, counts = ilp_value, out.schedule.counts
    if out.status is Status.OPTIMAL and out.schedule is not None and agree is not False:
        if not leq(closed, value):
            raise SolverError(f"alpha*: the closed form {closed!r} s exceeds the optimum {value!r}")
        return AlphaStar(usage, value, value, counts, True, "ilp")
    bound = closed
    if agree is not False and out.bound is not None and math.isfinite(out.bound):
        bound = max(bound, min(out.bound, value))
    return AlphaStar(usage, value, bound, counts, False, "ilp_stopped")
