"""Timing model of RAR-DDLS (Section 4.1, Eqs. 6-9): how fast a job runs where it is placed.

Paper: Yu, Ji, Rajan, Liu, MobiHoc 2022; spec
``docs/families/rar.md``. The instance is :mod:`ddlsched.problems.rar`; the
evaluator that executes a schedule with this model is
:mod:`ddlsched.problems.rar_schedule`.

For one slot and the set of active jobs with placements ``y_js`` (GPUs of
job ``j`` on server ``s``):

* ``n_j = #{s : y_js > 0}``; ``j`` is *split* on ``s`` when ``0 < y_js < G_j``
  (so a job is split exactly when ``n_j >= 2``).
* Eq. (6): ``p_j`` = max over the servers where ``j`` is split of the number
  of active jobs split on that server (``j`` included); ``p_j = 0`` when
  ``n_j = 1``.
* Eq. (7): ``k_j = xi1 * p_j``.
* ``B_j = b_i`` when ``n_j = 1``, else ``b_e / f(alpha, max(k_j, 1))`` with
  ``f(alpha, k) = k + alpha (k - 1)`` (the paper's linear example, Sec. 4.1).
* Eq. (8): ``tau_j = 2 m_j (G_j - 1) / (G_j B_j) + m_j (G_j - 1) / (G_j C)
  + xi2 n_j + df_j M_j + db_j`` (the first two terms vanish when ``G_j = 1``).
* Eq. (9): a job does ``floor(1 / tau_j)`` iterations per slot (rule
  ``floor``; ``fractional`` uses ``1 / tau_j``) and finishes in the first
  slot at whose end its cumulative iterations reach ``F_j``; ``T_j`` is that
  slot's index + 1.

Choice the spec leaves open (ours): ``floor(1 / tau)`` is taken with a
relative tolerance of 1e-9 (:data:`FLOOR_TOL`), so that ``tau = 0.02`` gives
50 iterations per slot despite ``1/0.02`` rounding to ``49.999...`` in binary
floating point; the ``fractional`` rule likewise treats cumulative progress
within ``1e-9 F_j`` of ``F_j`` as complete (:func:`slots_needed`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from ddlsched.errors import InvalidInstanceError
from ddlsched.problems.rar import Network, RarInstance, RarJob

__all__ = [
    "FLOOR_TOL",
    "bandwidth_degradation",
    "contention_levels",
    "execution_slots",
    "iteration_time",
    "iterations_per_slot",
    "max_contention",
    "max_servers",
    "min_servers",
    "slots_needed",
]

#: Relative tolerance of ``floor(1 / tau)`` and of a job's completion (module docstring).
FLOOR_TOL = 1e-9


def bandwidth_degradation(alpha: float, k: float) -> float:
    """``f(alpha, k) = k + alpha (k - 1)``: bandwidth-sharing degradation (Sec. 4.1)."""
    return k + alpha * (k - 1)


def iteration_time(job: RarJob, network: Network, num_servers: int, contention: int) -> float:
    """Per-iteration time ``tau_j`` in slots (Eq. 8).

    ``num_servers`` is ``n_j``; ``contention`` is ``p_j`` of Eq. (6) (ignored
    when ``n_j = 1``, where the ring stays inside one server at ``b_i``).
    """
    if num_servers < 1:
        raise ValueError("num_servers must be >= 1")
    gpus = job.gpus
    compute = network.xi2 * num_servers + job.fwd_per_sample * job.batch + job.bwd
    if gpus == 1:
        return compute
    if num_servers == 1:
        bandwidth = network.b_i
    else:
        k = network.xi1 * contention  # Eq. (7)
        bandwidth = network.b_e / bandwidth_degradation(network.alpha, max(k, 1.0))
    share = job.grad_size * (gpus - 1) / gpus
    return 2.0 * share / bandwidth + share / network.C + compute


def iterations_per_slot(tau: float, rule: str) -> float:
    """Iterations done in one slot: ``floor(1/tau)`` (Eq. 9) or ``1/tau``."""
    if tau <= 0:
        raise ValueError("tau must be > 0")
    rate = 1.0 / tau
    if rule == "floor":
        return float(math.floor(rate * (1.0 + FLOOR_TOL)))
    return rate


def execution_slots(job: RarJob, network: Network, num_servers: int, contention: int, rule: str):
    """Slots a job needs under constant conditions (``math.inf`` if it never progresses)."""
    rate = iterations_per_slot(iteration_time(job, network, num_servers, contention), rule)
    if rate <= 0:
        return math.inf
    return slots_needed(job.iterations, rate)


def slots_needed(remaining: float, rate: float, total: float | None = None) -> int:
    """Slots until ``remaining`` iterations are done at ``rate`` per slot.

    Done means within ``1e-9 * total`` iterations of the end (``total``: the
    job's ``F_j``, default ``remaining``), the evaluator's completion rule.
    """
    slack = FLOOR_TOL * (remaining if total is None else total)
    return max(1, math.ceil((remaining - slack) / rate))


def min_servers(job: RarJob, servers: Sequence[int]) -> int:
    """Fewest servers that can hold the job's gang (largest servers first)."""
    total = 0
    for count, cap in enumerate(sorted(servers, reverse=True), start=1):
        total += cap
        if total >= job.gpus:
            return count
    raise InvalidInstanceError(f"job {job.id!r} does not fit in the cluster")


def max_servers(job: RarJob, servers: Sequence[int]) -> int:
    """Most servers a job can span (one GPU per server at least)."""
    return min(job.gpus, len(servers))


def max_contention(instance: RarInstance) -> int:
    """Largest possible ``p_j``: jobs split on one server, at most ``O_s`` and the multi-GPU jobs."""
    multi = sum(1 for job in instance.jobs if job.gpus >= 2)
    return max(1, min(max(instance.servers), multi))


def contention_levels(placements: Mapping[str, Mapping[int, int]]) -> dict[str, int]:
    """``p_j`` of Eq. (6) for a set of simultaneously active jobs.

    ``placements`` maps each active job to ``{server: GPUs on that server}``
    (servers with 0 GPUs omitted).
    """
    split_count: dict[int, int] = {}
    for per_server in placements.values():
        if len(per_server) >= 2:
            for s in per_server:
                split_count[s] = split_count.get(s, 0) + 1
    levels = {}
    for job, per_server in placements.items():
        if len(per_server) >= 2:
            levels[job] = max(split_count[s] for s in per_server)
        else:
            levels[job] = 0
    return levels
