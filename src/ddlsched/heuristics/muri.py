"""Muri's grouping heuristics: Blossom for pairs, the multi-round algorithm for k > 2.

Paper: Zhao et al., SIGCOMM 2022, Sec. 4.1 ("Computing optimal grouping
plans": maximum weight matching with weights ``gamma(u, v)``, Blossom,
``O(|V|^3)``) and Sec. 4.2, Algorithm 1 (multi-round grouping); spec
``docs/families/muri.md``, sections "Grouping, objective and evaluator",
"`blossom`" and "`multiround`". The original simulator's
Blossom implementation is ``simulator/matching.py`` of github
Rivendile/Muri; here the matching is networkx's
:func:`~networkx.algorithms.matching.max_weight_matching` (Galil's
``O(n^3)`` weighted Blossom).

Guarantees (with the family objective of :mod:`ddlsched.problems.muri`,
the sum of ``gamma`` over groups of >= 2 jobs):

* :func:`blossom_grouping` with groups of at most 2 jobs is **exact**: a
  grouping into pairs is a matching and its objective is the matching's
  weight.
* :func:`multiround_grouping` runs ``ceil(log2 max_group_size)`` rounds;
  each is a maximum-weight matching over the current nodes (jobs or merged
  groups) of one GPU bucket, with an edge ``(u, v)`` only when
  ``|u| + |v| <= max_group_size`` and weight ``gamma(u ∪ v)`` at the best
  offsets; every matched pair is merged. No approximation guarantee; it
  never forms a group larger than ``max_group_size``. Complexity
  ``O(n^3 log k)`` matching plus the offset enumeration of each edge.

Choices the spec leaves open: nodes enter the matching graph in instance
order, bucket by bucket (ascending GPU count); ``maxcardinality=False``
(a maximum-*weight* matching, as in the paper); the members of a merged
group keep the order "u's members, then v's" with ``u`` the earlier node.
"""

from __future__ import annotations

import logging
import math

import numpy as np

from ddlsched.memory import require_memory
from ddlsched.problems.muri import MuriGrouping, MuriGroupingInstance, group_efficiencies

__all__ = ["blossom_grouping", "matching_round", "multiround_grouping"]

log = logging.getLogger(__name__)


def matching_round(
    times: np.ndarray, nodes: list[tuple[int, ...]], max_group_size: int
) -> list[tuple[int, ...]]:
    """One round of Algorithm 1 on one bucket: match the nodes and merge each pair."""
    # the pair list, the group times gathered for them and networkx's edge dicts
    num_pairs = len(nodes) * (len(nodes) - 1) / 2
    require_memory(
        f"the matching graph of {len(nodes):,} nodes ({num_pairs:,.0f} pairs)",
        num_pairs * (600 + 16 * max_group_size * times.shape[1]),
        "use fewer jobs per GPU bucket",
    )
    pairs = [
        (a, b)
        for a in range(len(nodes))
        for b in range(a + 1, len(nodes))
        if len(nodes[a]) + len(nodes[b]) <= max_group_size
    ]
    if not pairs:
        return list(nodes)
    import networkx as nx  # imported here: a 0.15 s import the CLI must not pay

    weights = group_efficiencies(times, [nodes[a] + nodes[b] for a, b in pairs])
    graph = nx.Graph()
    graph.add_nodes_from(range(len(nodes)))
    for (a, b), w in zip(pairs, weights, strict=True):
        if w > 0:
            graph.add_edge(a, b, weight=float(w))
    matching = nx.max_weight_matching(graph, maxcardinality=False)
    partner: dict[int, int] = {}
    for a, b in matching:
        partner[a], partner[b] = b, a
    merged: list[tuple[int, ...]] = []
    for a in range(len(nodes)):
        b = partner.get(a)
        if b is None:
            merged.append(nodes[a])
        elif a < b:
            merged.append(nodes[a] + nodes[b])
    return merged


def multiround_grouping(instance: MuriGroupingInstance, rounds: int | None = None) -> MuriGrouping:
    """Algorithm 1: ``ceil(log2 k)`` rounds of maximum-weight matching per GPU bucket.

    ``rounds`` overrides the number of rounds (default ``ceil(log2
    max_group_size)``, at least 1).
    """
    size = instance.max_group_size
    if rounds is None:
        rounds = max(1, math.ceil(math.log2(size))) if size > 1 else 0
    times = instance.times_array()
    groups: list[tuple[int, ...]] = []
    for gpus, members in instance.buckets().items():
        nodes = [(i,) for i in members]
        for r in range(rounds):
            new_nodes = matching_round(times, nodes, size)
            log.debug(
                "bucket %d GPUs, round %d: %d -> %d nodes", gpus, r, len(nodes), len(new_nodes)
            )
            if len(new_nodes) == len(nodes):
                break
            nodes = new_nodes
        groups.extend(nodes)
    ids = [job.id for job in instance.jobs]
    return MuriGrouping(tuple(tuple(ids[i] for i in g) for g in groups))


def blossom_grouping(instance: MuriGroupingInstance) -> MuriGrouping:
    """Maximum-weight matching into pairs (Sec. 4.1), bucket by bucket: one round.

    Exact for groups of at most two jobs (``max_group_size = 2``, e.g. two
    resource types); for larger ``k`` it is the first round of Algorithm 1.
    """
    return multiround_grouping(instance, rounds=1 if instance.max_group_size >= 2 else 0)
