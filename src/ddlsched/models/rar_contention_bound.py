"""Contention-aware lower bound of RAR-DDLS (``contention_lb``; a bound of ours).

The bounds of :mod:`ddlsched.models.rar_bounds` (``load_lb``: Problem (14)
and the closed forms) and ``timeindexed`` use contention-free durations
(``p_j = 1``). This module adds two bounds that charge contention (Eqs. 6-8
of the paper, spec ``rar.md``) to the rings that *must* be split, and
reports the maximum of them and of ``load_lb`` (all valid lower bounds, so
their maximum is one). Both bounds and their proofs are ours; the paper
states no lower bound with contention.

**Notation.** ``phi_j(n, p)`` is the per-slot progress of Eq. (9)
(``floor(1 / tau_j)`` or ``1 / tau_j``) with ``tau_j`` of Eq. (8) on ``n``
servers at contention ``p`` (``B_j = b_e / f(alpha, max(xi1 p, 1))``,
Eq. 7 and Sec. 4.1). ``tau_j`` is non-decreasing in ``p`` (``f`` increases
in ``k``), so ``phi_j(n, p) <= phi_j(n, 1)`` for ``p >= 1``. For ``n >= 2``
with ``phi_j(n, 1) > 0`` let ``rho_j(n, c) = phi_j(n, c) / phi_j(n, 1)``
(in ``[0, 1]``, non-increasing in ``c``) and
``W_j(n) = F_j (1 - 1e-9) / phi_j(n, 1)``. A placement with
``phi_j(n, 1) = 0`` never lets ``j`` progress and is excluded (a schedule
using it has no finite makespan).

**Must-split jobs.** ``M = {j : G_j > max_s O_s}``: ``j``'s gang fits on no
server, so in every schedule ``j`` runs on a fixed set of ``n_j >= 2``
servers for its whole execution (a schedule gives each job one GPU set) and
is split on each of them (spec: split when ``0 < y_js < G_j``).

**Normalised progress.** For ``j`` in ``M`` and slot ``t`` of its execution
let ``pi_j(t) = phi_j(n_j, p_j(t)) / phi_j(n_j, 1) = rho_j(n_j, p_j(t))``.
The job finishes when its cumulative iterations reach ``F_j`` (up to the
evaluator's tolerance ``1e-9 F_j``, :mod:`ddlsched.problems.rar_timing`), so
``sum_t pi_j(t) >= W_j(n_j) >= W_j := min_n W_j(n)`` (1), the sum over the
slots ``t < C`` of a schedule of makespan ``C``.

**Bound 1, per-server link (``link``).** Fix a slot and a server ``s`` on
which ``c_s`` jobs of ``M`` are split. By Eq. (6) each of them has
``p_j >= c_s`` (``p_j`` is the largest split count over its servers, and
split jobs outside ``M`` only raise it), so ``pi_j <= rho_j(n_j, c_s)``.
Each uses at least one GPU of ``s``, so ``c_s <= min(O_s, |M|)``. Hence
``sum_{j in M split on s} pi_j <= psi_s := max_{1 <= c <= min(O_s, |M|)}``
(sum of the ``c`` largest ``rho_j(c) = max_n rho_j(n, c)`` over ``M``).
Every ``j`` in ``M`` is on ``n_j`` servers, so summing over servers,
``sum_{j in M} n_j pi_j(t) <= Psi := sum_s psi_s`` in every slot. Summing
over the ``C`` slots and using (1) with ``n_j W_j(n_j) >= v_j :=
min_n n W_j(n)``: ``C >= sum_{j in M} v_j / Psi``. This is the
"communication work that must cross a server link over the link's best
throughput under ``f(alpha, k)``" of the issue, work measured in
contention-free slots times servers.

**Bound 2, co-split configurations (``serial``).** In a slot let ``K`` be
the running jobs of ``M``, on server sets ``A_j`` (``|A_j| = n_j >= 2``).
The per-server count of ``K``'s jobs ``cnt_s <= O_s`` (one GPU each at
least), ``p_j >= max_{s in A_j} cnt_s`` (Eq. 6, as above) and
``pi_j <= rhobar(n_j, p_j)`` with ``rhobar(n, c) = max_{i in M} rho_i(n, c)``
(over the jobs that can span ``n`` servers). So ``sum_{j in K} pi_j <= g :=``
the maximum, over every multiset of at most ``|M|`` server sets of size
``>= 2`` whose counts fit the capacities, of ``sum rhobar(|A|, max_{s in A}
cnt_s)``. Summing over slots with (1): ``C >= sum_{j in M} W_j / g``. When
contention is strong (``g = 1``: no co-split set processes more than one
job's worth of contention-free progress per slot), this is the serial time
of the must-split jobs, the value the contention-free bounds miss. ``g`` is
computed by enumeration only when the multisets number at most
:data:`MAX_CONFIGURATIONS` (small clusters; ``info`` says when it was
skipped). The exact search's "split serialisation" bound
(:mod:`ddlsched.models.rar_search`) is of the same kind; ours checks
capacities, uses the exact per-set contention instead of a least level,
and stands alone as a method.

Both are rounded up to an integer (makespans are integral,
:func:`~ddlsched.models.rar_bounds.ceil_bound`). Where ``M`` is empty (every
job fits on the largest server, as on ``paper`` and ``paper-contention``,
whose clusters have 32-GPU servers) both are 0 and the method returns
``load_lb``: a schedule may keep every ring on one server or split rings
without ever exceeding the inert contention level, so a bound that charges
contention needs rings that are forced to split.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

from ddlsched.deadline import Deadline
from ddlsched.models.rar_bounds import ceil_bound, load_lb
from ddlsched.problems.rar import RarInstance, RarJob
from ddlsched.problems.rar_timing import (
    FLOOR_TOL,
    iteration_time,
    iterations_per_slot,
    max_servers,
    min_servers,
)
from ddlsched.solvers.backends import SolveLimits
from ddlsched.solvers.result import Outcome, Status, mark_stopped

__all__ = [
    "MAX_CONFIGURATIONS",
    "co_split_throughput",
    "contention_components",
    "contention_lb",
    "must_split_jobs",
    "server_link_capacity",
]

#: Most multisets of server sets the ``serial`` bound enumerates (module docstring).
MAX_CONFIGURATIONS = 200_000


def must_split_jobs(instance: RarInstance) -> list[RarJob]:
    """The jobs whose gang fits on no server (``G_j > max_s O_s``): split in every schedule."""
    largest = max(instance.servers)
    return [job for job in instance.jobs if job.gpus > largest]


def _rate(job: RarJob, instance: RarInstance, n: int, p: int) -> float:
    """``phi_j(n, p)``: iterations per slot on ``n`` servers at contention ``p`` (Eqs. 8-9)."""
    tau = iteration_time(job, instance.network, n, p)
    return iterations_per_slot(tau, instance.progress)


def _split_spans(job: RarJob, instance: RarInstance) -> list[int]:
    """Server counts ``n >= 2`` the job can span and progress on without contention."""
    low = max(2, min_servers(job, instance.servers))
    high = max_servers(job, instance.servers)
    return [n for n in range(low, high + 1) if _rate(job, instance, n, 1) > 0]


def _ratio(job: RarJob, instance: RarInstance, n: int, c: int) -> float:
    """``rho_j(n, c) = phi_j(n, c) / phi_j(n, 1)``."""
    return _rate(job, instance, n, c) / _rate(job, instance, n, 1)


def _work(job: RarJob, instance: RarInstance, n: int) -> float:
    """``W_j(n)``: contention-free slots of work, with the evaluator's completion tolerance."""
    return job.iterations * (1.0 - FLOOR_TOL) / _rate(job, instance, n, 1)


def server_link_capacity(instance: RarInstance, jobs: Sequence[RarJob]) -> list[float]:
    """``psi_s`` per server: most normalised progress of ``jobs`` split on it in one slot."""
    spans = {job.id: _split_spans(job, instance) for job in jobs}
    capacities = []
    for cap in instance.servers:
        best = 0.0
        for c in range(1, min(cap, len(jobs)) + 1):
            ratios = sorted(
                (max((_ratio(j, instance, n, c) for n in spans[j.id]), default=0.0) for j in jobs),
                reverse=True,
            )
            best = max(best, sum(ratios[:c]))
        capacities.append(best)
    return capacities


def _server_sets(num_servers: int) -> list[tuple[int, ...]]:
    return [
        subset
        for size in range(2, num_servers + 1)
        for subset in itertools.combinations(range(num_servers), size)
    ]


def co_split_throughput(instance: RarInstance, jobs: Sequence[RarJob]) -> float | None:
    """``g`` of the ``serial`` bound (module docstring); ``None`` when too many configurations."""
    sets = _server_sets(instance.num_servers)
    total = sum(math.comb(len(sets) + k - 1, k) for k in range(1, len(jobs) + 1))
    if not jobs or total > MAX_CONFIGURATIONS:
        return None
    spans = {job.id: set(_split_spans(job, instance)) for job in jobs}
    cache: dict[tuple[int, int], float] = {}

    def rhobar(n: int, c: int) -> float:
        if (n, c) not in cache:
            cache[n, c] = max(
                (_ratio(j, instance, n, c) for j in jobs if n in spans[j.id]), default=0.0
            )
        return cache[n, c]

    best = 0.0
    for k in range(1, len(jobs) + 1):
        for combo in itertools.combinations_with_replacement(sets, k):
            counts = [0] * instance.num_servers
            for subset in combo:
                for s in subset:
                    counts[s] += 1
            if any(count > cap for count, cap in zip(counts, instance.servers, strict=True)):
                continue
            value = sum(rhobar(len(a), max(counts[s] for s in a)) for a in combo)
            best = max(best, value)
    return best


def contention_components(
    instance: RarInstance, split: Sequence[RarJob] | None = None
) -> dict[str, float | None]:
    """The two contention-aware bounds (``link``, ``serial``; 0 without must-split jobs).

    ``split``: the jobs charged, default :func:`must_split_jobs` (the only
    choice that makes the values lower bounds; others are what-ifs for
    diagnostics). ``serial`` is ``None`` when its enumeration is skipped (too
    many server sets).
    """
    chosen = must_split_jobs(instance) if split is None else split
    jobs = [job for job in chosen if _split_spans(job, instance)]
    if not jobs:
        return {"link": 0.0, "serial": 0.0}
    link_capacity = sum(server_link_capacity(instance, jobs))
    crossing = sum(min(n * _work(j, instance, n) for n in _split_spans(j, instance)) for j in jobs)
    components: dict[str, float | None] = {"link": ceil_bound(crossing / link_capacity)}
    g = co_split_throughput(instance, jobs)
    if g is None or g <= 0:
        components["serial"] = None
    else:
        work = sum(min(_work(j, instance, n) for n in _split_spans(j, instance)) for j in jobs)
        components["serial"] = ceil_bound(work / g)
    return components


def contention_lb(
    instance: RarInstance,
    *,
    backend: str = "highs",
    limits: SolveLimits | None = None,
    max_patterns: int = 64,
    deadline: Deadline | None = None,
) -> Outcome:
    """``max(load_lb, link, serial)``: every part a valid lower bound (module docstring)."""
    base = load_lb(
        instance, backend=backend, limits=limits, max_patterns=max_patterns, deadline=deadline
    )
    contention = contention_components(instance)
    components = {**base.info.get("components", {}), **contention}
    values = [v for v in components.values() if v is not None]
    if base.bound is not None:
        values.append(base.bound)
    info = {
        "components": components,
        "load_lb": base.bound,
        "must_split": [job.id for job in must_split_jobs(instance)],
        "serial_enumerated": contention["serial"] is not None,
    }
    outcome = Outcome(
        None,
        Status.BOUND_ONLY,
        bound=float(max(values)),
        backend=base.backend,
        backend_version=base.backend_version,
        model_size=base.model_size,
        solver_time_s=base.solver_time_s,
        info=info,
    )
    return mark_stopped(outcome, base.info.get("stopped", ""))
