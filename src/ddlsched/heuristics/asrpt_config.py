"""Per-configuration constants of family ``asrpt`` and the cached Heavy-Edge mapping.

Spec ``docs/families/asrpt.md`` ("What an instance holds", A-SRPT's step 5); A-SRPT paper,
Sections III-B and IV-B. Nothing here is re-implemented: ``alpha_max`` is
:func:`ddlsched.problems.placement.alpha_max`, ``alpha~_min`` is
:func:`ddlsched.heuristics.heavy_edge.alpha_min` (Heavy-Edge on the fewest
servers) and every mapping is :func:`~ddlsched.heuristics.heavy_edge.heavy_edge`.

* :func:`config_constants`: ``alpha~_min``, ``alpha_max`` and the class
  ``comm_heavy = alpha_max / alpha~_min >= COMM_HEAVY`` (Algorithm 1,
  Line 8: ``>=``), cached per (cluster, configuration). ``alpha~_min`` is
  computed with Heavy-Edge seed 0 whatever the run's seed: it is a
  property of the configuration (it also converts trace durations into
  iterations), and Heavy-Edge's random picks only break ties between
  unconnected vertices.
* :func:`map_job`: Heavy-Edge on a selection of servers, cached per
  (cluster, configuration, availability pattern, seed): its result depends
  on nothing else (spec step 5: seeded once per run, not per job).
* :func:`select_servers`: most-free-first and least-free-first selection
  (spec step 4).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from ddlsched.heuristics.heavy_edge import alpha_min, heavy_edge
from ddlsched.problems.asrpt import Cluster, JobConfig, job_alpha, job_placement_instance
from ddlsched.problems.placement import alpha_max

__all__ = [
    "COMM_HEAVY",
    "ConfigConstants",
    "JobMapping",
    "config_constants",
    "map_job",
    "select_servers",
]

#: Algorithm 1's threshold of the communication-heavy class (the paper's 1.5).
COMM_HEAVY = 1.5


@dataclass(frozen=True)
class ConfigConstants:
    """``alpha~_min`` (an estimate, not a bound), ``alpha_max`` and their ratio."""

    alpha_min_s: float
    alpha_max_s: float

    @property
    def ratio(self) -> float:
        """``alpha_max / alpha~_min``."""
        return self.alpha_max_s / self.alpha_min_s if self.alpha_min_s > 0 else 1.0

    def comm_heavy(self, threshold: float = COMM_HEAVY) -> bool:
        """Line 8: communication-heavy when ``alpha_max / alpha~_min >= threshold``."""
        return self.ratio >= threshold


@lru_cache(maxsize=4096)
def config_constants(cluster: Cluster, config: JobConfig) -> ConfigConstants:
    """The constants of ``config`` on ``cluster`` (cached)."""
    packed = job_placement_instance(cluster, config, _fewest(cluster, config))
    return ConfigConstants(alpha_min_s=alpha_min(packed, seed=0), alpha_max_s=alpha_max(packed))


def _fewest(cluster: Cluster, config: JobConfig) -> tuple[int, ...]:
    full, rest = divmod(config.num_gpus, cluster.gpus_per_server)
    return (cluster.gpus_per_server,) * full + ((rest,) if rest else ())


@dataclass(frozen=True)
class JobMapping:
    """A Heavy-Edge mapping onto a selection: ``counts[s][k]`` replicas of stage
    ``s`` on the selection's ``k``-th server, and the resulting ``alpha``."""

    counts: tuple[tuple[int, ...], ...]
    alpha_s: float


@lru_cache(maxsize=65536)
def map_job(cluster: Cluster, config: JobConfig, take: tuple[int, ...], seed: int) -> JobMapping:
    """Heavy-Edge of ``config`` onto servers offering exactly ``take`` GPUs (in that order)."""
    instance = job_placement_instance(cluster, config, take)
    placement = heavy_edge(instance, seed)
    counts = placement.counts
    return JobMapping(counts=counts, alpha_s=job_alpha(cluster, config, counts))


def select_servers(free: Sequence[int], need: int, most_free: bool) -> list[tuple[int, int]]:
    """Servers and GPU counts ``[(server, take), ...]`` for a job of ``need`` GPUs.

    Most-free-first: servers by free GPUs descending (ties: lower index),
    taking all free GPUs of each until ``need`` are taken (the last server
    partly). Least-free-first: the servers with at least one free GPU,
    ascending (ties: lower index), same filling. The caller checks that
    ``sum(free) >= need``.
    """
    if most_free:
        order = sorted((m for m in range(len(free)) if free[m] > 0), key=lambda m: (-free[m], m))
    else:
        order = sorted((m for m in range(len(free)) if free[m] > 0), key=lambda m: (free[m], m))
    out = []
    left = need
    for m in order:
        if left == 0:
            break
        take = min(free[m], left)
        out.append((m, take))
        left -= take
    if left:
        raise ValueError(f"{need} GPUs requested, only {need - left} free")
    return out
