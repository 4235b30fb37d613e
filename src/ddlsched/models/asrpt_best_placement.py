"""The ``best_placement`` start of family ``asrpt``'s ``improve`` (ours; not a paper heuristic).

A-SRPT paper: ``sum_i C_i`` (Eq. 8) under Eqs. (1)-(3), ``C_i = t_i + n_i
alpha_i`` with ``alpha_i`` of Eqs. (4)-(7); spec ``docs/families/asrpt.md``.
Every choice here is ours. Heavy-Edge on the fewest servers (the packed list
schedules, :mod:`ddlsched.heuristics.asrpt_packed`) can run a job several
times slower than its fastest placement: on Muri trace 2 at 10 Gbps, VGG-19
on 16 GPUs in 2 stages takes 6.33 s an iteration by Heavy-Edge and 2.12 s on
the placement ILP's optimum, the value ``lb_sum`` is built on.

Per configuration (:func:`fastest_placements`): the faster of Heavy-Edge on
the fewest servers and the ``placement`` family's aggregated ILP on
``available = (g,) * min(M, g_i)`` (the instance ``alpha_lb`` solves; its best
placement also when the deadline stops it, each ILP at most
``ALPHA_LB_TIME_LIMIT_S``; no cross-check: the evaluator recomputes ``alpha``);
the placement is kept as its per-server GPU counts (servers holding no
replica dropped). The ILP's limit is wall time (HiGHS has no deterministic
time limit; a node budget, ``mip_max_nodes``, bounds neither the root node's
work nor the time, so the wall-clock cap would stay), so an ILP it stops, or
one the deadline leaves no time to run, gives a placement that depends on the
machine's speed: :attr:`Placement.cut` records it, and
:func:`best_placement_schedule` names those configurations (``improve`` then
sets ``time_limit_hit`` and ``info['stopped']``). An ILP that ends within its
limit (proven optimal, abs. gap 1e-7) and one skipped because Heavy-Edge
already meets the closed-form bound are the same on every machine. The
schedule (:func:`best_placement_schedule`) is a list in arrival order (ties:
id), each job on its configuration's placement, taking per entry of its
per-server usage (largest first) the server, not yet taken, whose ``u``-th
soonest-free GPU frees soonest (ties: the lowest index), at the earliest time
``>= r_i`` at which all of them are free; no backfilling (as the packed
decoder), so Eq. (3) holds by construction. The evaluator re-checks it.
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass

import numpy as np

from ddlsched.deadline import Deadline
from ddlsched.errors import DdlschedError
from ddlsched.heuristics.asrpt_config import map_job
from ddlsched.models.asrpt import (
    ALPHA_LB_TIME_LIMIT_S,
    PLACEMENT_LIMITS,
    alpha_closed_form,
    leq,
)
from ddlsched.models.placement import PlacementFormulation
from ddlsched.problems.asrpt import AsrptInstance, job_alpha, job_placement_instance
from ddlsched.problems.asrpt_schedule import AsrptSchedule, JobRun
from ddlsched.solvers.formulation import solve_formulation
from ddlsched.solvers.limits import SolveLimits
from ddlsched.solvers.result import Status

__all__ = ["Placement", "best_placement_schedule", "fastest_placements"]

log = logging.getLogger(__name__)

_RTOL = 1e-9


@dataclass(frozen=True)
class Placement:
    """A configuration's placement: GPUs per server (descending), replicas per stage on
    each, the per-iteration time (s), where it comes from (``heavy_edge`` or ``ilp``)
    and whether a wall-clock limit cut its placement ILP (module docstring)."""

    usage: tuple[int, ...]
    counts: tuple[tuple[int, ...], ...]
    alpha_s: float
    source: str
    cut: bool = False


def fastest_placements(
    instance: AsrptInstance, deadline: Deadline, seed: int = 0
) -> dict[str, Placement]:
    """``{configuration: Placement}`` of the configurations the jobs use (module docstring)."""
    cluster = instance.cluster
    g = cluster.gpus_per_server
    out = {}
    for name in sorted({job.config for job in instance.jobs}):
        config = instance.configs[name]
        full, rest = divmod(config.num_gpus, g)
        fewest = (g,) * full + ((rest,) if rest else ())
        mapping = map_job(cluster, config, fewest, seed)
        best = Placement(fewest, mapping.counts, mapping.alpha_s, "heavy_edge")
        limit = deadline.sub(at_most=ALPHA_LB_TIME_LIMIT_S)
        counts, cut = _ilp_counts(instance, name, best.alpha_s, limit, seed)
        if counts is not None:
            candidate = _placement(instance, name, counts)
            if candidate.alpha_s < best.alpha_s * (1 - _RTOL):  # float noise is no gain
                best = candidate
        out[name] = dataclasses.replace(best, cut=cut)
    return out


def _ilp_counts(
    instance: AsrptInstance, config: str, heavy_edge_s: float, deadline: Deadline, seed: int
) -> tuple[tuple[tuple[int, ...], ...] | None, bool]:
    """The placement ILP's best counts on ``(g,) * min(M, g_i)`` (``None``: none found, or
    Heavy-Edge's ``heavy_edge_s`` already meets the closed-form bound: nothing to gain)
    and whether the wall clock cut the ILP or left it no time (module docstring)."""
    cluster = instance.cluster
    job = instance.configs[config]
    wide = job_placement_instance(
        cluster, job, (cluster.gpus_per_server,) * min(cluster.servers, job.num_gpus)
    )
    if leq(heavy_edge_s, alpha_closed_form(wide)):
        return None, False
    if not deadline.remaining_s() > 1e-3:
        return None, True
    try:
        out = solve_formulation(
            PlacementFormulation("aggregated"),
            wide,
            "highs",
            SolveLimits(seed=seed, **PLACEMENT_LIMITS),
            False,
            deadline=deadline,
        )
    except DdlschedError as exc:  # too large, or a backend failure: Heavy-Edge stays
        log.warning("best_placement: placement ILP failed on %s (%s)", config, exc)
        return None, False
    cut = out.time_limit_hit or out.status is Status.TIME_LIMIT_NO_SOLUTION
    return (None if out.schedule is None else out.schedule.counts), cut


def _placement(
    instance: AsrptInstance, config: str, counts: tuple[tuple[int, ...], ...]
) -> Placement:
    """The placement of ``counts`` without its empty servers, servers by GPUs held, its
    ``alpha`` as the evaluator computes it."""
    held = [sum(row[k] for row in counts) for k in range(len(counts[0]))]
    keep = sorted((k for k in range(len(held)) if held[k]), key=lambda k: (-held[k], k))
    kept = tuple(tuple(row[k] for k in keep) for row in counts)
    alpha = job_alpha(instance.cluster, instance.configs[config], kept)
    return Placement(tuple(held[k] for k in keep), kept, alpha, "ilp")


def best_placement_schedule(
    instance: AsrptInstance, deadline: Deadline, seed: int = 0
) -> tuple[AsrptSchedule, str]:
    """The arrival-order list on the fastest placements known and what the time limit cut
    in finding them (``""``: nothing; otherwise the configurations whose placement ILP
    it cut: the schedule then depends on the machine's speed; module docstring)."""
    placements = fastest_placements(instance, deadline, seed)
    cut = sorted(name for name, place in placements.items() if place.cut)
    stopped = (
        f"best_placement's placement ILPs of {', '.join(cut)} at the time limit" if cut else ""
    )
    cluster = instance.cluster
    free_from = np.zeros((cluster.servers, cluster.gpus_per_server))  # rows kept sorted
    runs = {}
    for job in sorted(instance.jobs, key=lambda job: (job.arrival_s, job.id)):
        place = placements[job.config]
        chosen: list[int] = []
        start = job.arrival_s
        for used in place.usage:
            at = free_from[:, used - 1].copy()
            at[chosen] = np.inf
            server = int(np.argmin(at))
            chosen.append(server)
            start = max(start, float(at[server]))
        finish = start + job.iterations * place.alpha_s
        for server, used in zip(chosen, place.usage, strict=True):
            free_from[server, :used] = finish
            free_from[server].sort()
        runs[job.id] = JobRun(start, tuple(chosen), place.counts)
    return AsrptSchedule(runs), stopped
