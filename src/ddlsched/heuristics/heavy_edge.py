"""Heavy-Edge GPU mapping (A-SRPT paper, Section IV-B; spec ``docs/families/placement.md``).

The job is a graph ``Omega = (V, E)``: a vertex per stage replica; between
adjacent stages an edge for every replica pair, weight ``2 dout_{s-1} / k_s``
(``= 2 din_s / k_{s-1}``); inside a replicated stage the AllReduce edges,
a ring (RAR, weight ``2 (k_s - 1) h_s / k_s``) or the edges of two binary
trees (TAR, weight ``(k_s - 1) h_s / k_s``). Servers are filled in
descending order of free GPUs:

1. if the unassigned vertices fit on the server, they all go there;
2. a 1-GPU server takes the unassigned vertex of minimum total edge weight;
3. otherwise the server's ``node_set`` is seeded with the heaviest edge
   between two unassigned vertices (both ends join), or, when no such edge
   exists, the unassigned end of the heaviest edge to an already assigned
   vertex; then, repeatedly, the unassigned vertex with the heaviest edge
   to ``node_set`` joins; a uniformly random unassigned vertex (seeded)
   joins when none is connected. This stops when the server is full.

Guarantee: none (a greedy balanced graph cut; the problem is NP-complete,
the paper cites [35]); ``alpha(Heavy-Edge) >= alpha(OPT)`` always, and the
Table II benchmark measures the gap. Complexity: ``O(|V|^2)`` time with a
dense weight matrix (``|V| = g_i``), well under a millisecond for the
paper's jobs.

Choices the spec leaves open (written down here):

* Vertices are numbered stage-major ``(s, r)``; ties between equally heavy
  edges or vertices go to the lowest number (row-major for edge pairs), so
  the result is deterministic except for the random picks of step 3.
* "Minimum total edge weight" (step 2) is the vertex's total weight over
  all its edges in ``Omega`` (static, not only to unassigned vertices).
* Servers of equal availability keep their instance order (stable sort).
* When ``sum(available) > g_i`` the servers are filled in order until all
  vertices are placed (rule 1 covers "fit exactly" and "fit").
* A ring over ``k = 2`` replicas is one edge; TAR uses the heap-ordered
  binary tree over replicas ``0..k-1`` and the same tree over the reversed
  order (leaves of one are inner nodes of the other, as in NCCL's double
  binary tree); a pair linked in both trees gets both weights.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ddlsched.memory import require_memory
from ddlsched.problems.placement import Placement, PlacementInstance, evaluate, fewest_servers
from ddlsched.rng import make_rng

__all__ = ["alpha_min", "heavy_edge", "job_graph", "tree_edges"]


def tree_edges(k: int) -> list[tuple[int, int]]:
    """Edges (with multiplicity) of the two binary trees of TAR over ``k`` replicas."""
    edges = []
    for i in range(1, k):
        parent = (i - 1) // 2
        edges.append((parent, i))  # tree 1: heap order
        edges.append((k - 1 - parent, k - 1 - i))  # tree 2: the mirror
    return edges


def job_graph(instance: PlacementInstance) -> tuple[np.ndarray, list[tuple[int, int]]]:
    """The weight matrix of ``Omega`` (bytes) and the ``(stage, replica)`` of each vertex."""
    stages = instance.stages
    offsets = np.cumsum([0] + [st.replicas for st in stages])
    num_vertices = int(offsets[-1])
    # the dense matrix, and the submatrices and row maxima heavy_edge takes of it
    require_memory(
        f"Heavy-Edge's weight matrix of {num_vertices:,} replicas",
        3 * 8 * float(num_vertices) ** 2,
        "use fewer GPUs (replicas) per job",
    )
    weights = np.zeros((num_vertices, num_vertices))
    vertices = [(s, r) for s, st in enumerate(stages) for r in range(st.replicas)]
    for s, st in enumerate(stages):
        lo, hi = int(offsets[s]), int(offsets[s + 1])
        k = st.replicas
        if s > 0:
            prev_lo = int(offsets[s - 1])
            w = 2.0 * stages[s - 1].out_bytes / k  # 2 dout_{s-1} / k_s
            weights[prev_lo:lo, lo:hi] += w
            weights[lo:hi, prev_lo:lo] += w
        if k >= 2:
            if instance.allreduce == "rar":
                w = 2.0 * (k - 1) * st.param_bytes / k
                pairs = {tuple(sorted((r, (r + 1) % k))) for r in range(k)}
            else:
                w = (k - 1) * st.param_bytes / k
                pairs = tree_edges(k)
            for a, b in pairs:
                weights[lo + a, lo + b] += w
                weights[lo + b, lo + a] += w
    return weights, vertices


def heavy_edge(instance: PlacementInstance, seed: int | np.random.Generator = 0) -> Placement:
    """Map every stage replica to a server by the Heavy-Edge rule (Sec. IV-B)."""
    rng = make_rng(seed)
    weights, vertices = job_graph(instance)
    num_vertices = len(vertices)
    total_weight = weights.sum(axis=1)
    unassigned = np.ones(num_vertices, dtype=bool)
    server_of = np.full(num_vertices, -1, dtype=int)
    order = sorted(range(instance.num_servers), key=lambda m: (-instance.available[m], m))
    remaining = num_vertices

    def take(v: int, m: int) -> None:
        nonlocal remaining
        unassigned[v] = False
        server_of[v] = m
        remaining -= 1

    for m in order:
        if remaining == 0:
            break
        capacity = instance.available[m]
        if remaining <= capacity:  # rule 1
            for v in np.flatnonzero(unassigned):
                take(int(v), m)
            continue
        if capacity == 1:  # rule 2
            free = np.flatnonzero(unassigned)
            take(int(free[np.argmin(total_weight[free])]), m)
            continue
        # rule 3: seed with the heaviest edge, then grow by heaviest edge to node_set
        free = np.flatnonzero(unassigned)
        sub = weights[np.ix_(free, free)]
        placed = 0
        if sub.size and sub.max() > 0:
            i, j = np.unravel_index(int(np.argmax(sub)), sub.shape)
            first, second = int(free[i]), int(free[j])
            take(first, m)
            take(second, m)
            connection = np.maximum(weights[first], weights[second])
            placed = 2
        else:
            done = np.flatnonzero(~unassigned)
            cross = weights[np.ix_(free, done)] if done.size else np.zeros((free.size, 0))
            if cross.size and cross.max() > 0:
                v = int(free[int(np.argmax(cross.max(axis=1)))])
            else:
                v = int(free[int(rng.integers(free.size))])
            take(v, m)
            connection = weights[v].copy()
            placed = 1
        while placed < capacity:
            candidates = np.where(unassigned, connection, -1.0)
            v = int(np.argmax(candidates))
            if candidates[v] <= 0:
                free = np.flatnonzero(unassigned)
                v = int(free[int(rng.integers(free.size))])
            take(v, m)
            connection = np.maximum(connection, weights[v])
            placed += 1

    server_of_replica: list[list[int]] = [[] for _ in instance.stages]
    for v, (s, _) in enumerate(vertices):
        server_of_replica[s].append(int(server_of[v]))
    return Placement.from_servers(instance, server_of_replica)


def alpha_min(instance: PlacementInstance, seed: int = 0) -> float:
    """``alpha~_min`` (Sec. IV-B): Heavy-Edge's ``alpha`` on the fewest servers.

    The job's ``g_i`` replicas on ``ceil(g_i / g)`` servers, all but the last
    giving ``g`` GPUs (:func:`~ddlsched.problems.placement.fewest_servers`),
    mapped by :func:`heavy_edge` with ``seed`` and scored by the evaluator.
    An estimate of the fastest placement, not a bound (spec ``asrpt.md``).
    """
    packed = replace(
        instance, available=fewest_servers(instance.num_replicas, instance.gpus_per_server)
    )
    return evaluate(packed, heavy_edge(packed, seed)).iteration_time_s
