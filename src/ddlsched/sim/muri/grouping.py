"""Muri's grouping: which candidate jobs run, and which of them share GPUs.

Models the grouping part of ``run_sim.py::multi_resource_blossom_same_sim_jobs``
of the original (github Rivendile/Muri, ``simulator/``) and of
``matching.py`` (``_Blossom_Same``). A *node* is a tuple of jobs (one job,
or a group formed so far), all of one GPU count (a *bucket*).

1. Candidate admission (:meth:`Grouping.admit`): in the policy's order,
   every ``packing_num``-th job of each bucket is a leader; leaders are
   placed with MS-YARN on an empty cluster in order (a bucket stops at its
   first leader that does not fit); each placed leader admits itself and
   the next ``packing_num - 1`` jobs of its bucket as candidates.
2. While the candidates need more GPUs than the cluster has, the nodes of
   every bucket are matched and each matched pair merged into one node
   (:meth:`Grouping.match_repeatedly`, at most ``packing_num`` rounds; a
   round stops merging as soon as the rest fit). ``matching="reference"``:
   the original's Blossom (:func:`~ddlsched.sim.muri.matching.blossom_match`)
   on the complete graph of the bucket's nodes in list order, with the
   original's directed float weights (node ``u``'s jobs then ``v``'s:
   :meth:`Grouping.ordered_weight`), memoised by the sequence of node types.
   ``matching="types"``: the type-level b-matching
   (:class:`~ddlsched.sim.muri.matching.TypedMatcher`), equal-type nodes
   paired in list order (earliest with earliest), a pair weighing the larger
   of its two member orders (:meth:`Grouping.pair_weight`). The original also
   runs the matching when the candidates already fit, then splits every pair
   again; here that round is skipped (same outcome).
3. Without Blossom (``blossom=False``, the paper's "Muri-L without
   Blossom", :meth:`Grouping.consecutive`): each leader's group is itself and
   the next candidates of its bucket, merged while the candidates need more
   GPUs than the cluster has. The original then also changes the 4-job
   interference factor to 1.3/1.015; set ``interference`` to reproduce that.
4. ``autopack`` (:meth:`Grouping.autopack`): every group slower than its
   members' summed solo iteration times is split; the nodes are then placed
   in the policy's order and those that fit are kept.

A group's period uses the actual member order (higher-priority job first),
as the original does when it merges; its start overhead is the sum of its
members' (:meth:`Grouping.overhead_s`).
"""

from __future__ import annotations

import numpy as np

from ddlsched.sim.muri.matching import TypedMatcher, blossom_match
from ddlsched.sim.muri.state import SimState
from ddlsched.sim.muri.timing import DEFAULT_OVERHEAD_S, START_OVERHEAD_S, GroupPeriods

__all__ = ["Buckets", "Grouping", "Node"]

#: A node of the matching: one job or a group of jobs, in member order.
Node = tuple[int, ...]
#: Nodes by GPU count (bucket), buckets in the order they first appear.
Buckets = dict[int, list[Node]]


class Grouping:
    """Memoised node weights and the grouping steps of one simulation run."""

    def __init__(self, state: SimState, periods: GroupPeriods):
        self.state = state
        self.config = state.config
        self.periods = periods
        self.total_gpus = state.config.num_gpus
        self.packing_num = state.config.packing_num
        self.matcher = TypedMatcher()
        self._type_list: list[int] = state.type_of.tolist()
        self._overhead: dict[Node, float] = {}
        self._type_key: dict[Node, tuple[int, ...]] = {}
        self._pair_weight: dict[tuple[tuple[int, ...], tuple[int, ...]], float] = {}
        self._job_sum: dict[int, float] = {}
        self._ordered_weight: dict[tuple[tuple[int, ...], tuple[int, ...]], float] = {}
        self._partners: dict[tuple[tuple[int, ...], ...], dict[int, int]] = {}

    # -- node properties -----------------------------------------------------------------

    def overhead_s(self, node: Node, gpus: int) -> float:
        """Start overhead of a group: the sum of its members' at its GPU count."""
        got = self._overhead.get(node)
        if got is None:
            table = START_OVERHEAD_S.get(gpus, {})
            models = self.state.models
            got = self._overhead[node] = float(
                sum(table.get(models[m], DEFAULT_OVERHEAD_S) for m in node)
            )
        return got

    def node_types(self, node: Node) -> tuple[int, ...]:
        """The profile types of a node's members, in member order."""
        type_list = self._type_list
        return tuple(type_list[j] for j in node)

    def type_key(self, node: Node) -> tuple[int, ...]:
        """The sorted profile types of a node (its type in the b-matching)."""
        got = self._type_key.get(node)
        if got is None:
            type_list = self._type_list
            got = self._type_key[node] = tuple(sorted(type_list[j] for j in node))
        return got

    def pair_weight(self, a: tuple[int, ...], b: tuple[int, ...]) -> float:
        """``matching="types"``: weight of two node types, the better of the two member orders."""
        got = self._pair_weight.get((a, b))
        if got is None:
            periods = self.periods
            got = self._pair_weight[(a, b)] = max(periods.weight(a + b), periods.weight(b + a))
        return got

    def _type_sum(self, t: int) -> float:
        got = self._job_sum.get(t)
        if got is None:
            r0, r1, r2 = (float(x) for x in self.state.type_resource_s[t])
            got = self._job_sum[t] = (r0 + r1) + r2
        return got

    def ordered_weight(self, a: tuple[int, ...], b: tuple[int, ...]) -> float:
        """``matching="reference"``: node ``a``'s jobs then ``b``'s (0: the group is too large).

        The original's directed weight, its float sums in its order.
        """
        got = self._ordered_weight.get((a, b))
        if got is None:
            types = a + b
            if len(types) > self.packing_num:
                got = 0.0
            elif self.config.weight_model == "used_ratio":
                used = 0.0
                for t in types:
                    used += self._type_sum(t)
                got = used / (self.periods.period(types) * 4)
            else:
                got = self.periods.weight(types)
            self._ordered_weight[(a, b)] = got
        return got

    def reference_partners(self, nodes: list[Node]) -> dict[int, int]:
        """Positions paired by the original's Blossom (memoised by the node type sequence)."""
        seq = tuple(self.node_types(nd) for nd in nodes)
        got = self._partners.get(seq)
        if got is None:
            w = [
                [self.ordered_weight(a, b) if i != k else 0.0 for k, b in enumerate(seq)]
                for i, a in enumerate(seq)
            ]
            mate = blossom_match(w)
            got = self._partners[seq] = {p: q for p, q in enumerate(mate) if q >= 0}
        return got

    def typed_partners(self, nodes: list[Node]) -> dict[int, int]:
        """Positions paired by the type-level b-matching, equal types in list order."""
        keys = [self.type_key(nd) for nd in nodes]
        counts: dict[tuple[int, ...], int] = {}
        for k in keys:
            counts[k] = counts.get(k, 0) + 1
        plan = self.matcher.solve(counts, self.pair_weight, len, self.packing_num)
        partner: dict[int, int] = {}
        if plan:
            by_type: dict[tuple[int, ...], list[int]] = {}
            for p, k in enumerate(keys):
                by_type.setdefault(k, []).append(p)
            for a, b, cnt in plan:
                la, lb = by_type[a], by_type[b]
                for _ in range(cnt):
                    if a == b:
                        u, v = la.pop(0), la.pop(0)
                    else:
                        u, v = la.pop(0), lb.pop(0)
                    partner[u], partner[v] = v, u
        return partner

    # -- the steps -----------------------------------------------------------------------

    def admit(self, order: np.ndarray) -> tuple[Buckets, dict[int, int]]:
        """Candidate nodes per bucket and each bucket's number of placed leaders (step 1)."""
        st = self.state
        packing_num = self.packing_num
        gs = st.gpus[order]
        buckets = list(dict.fromkeys(gs.tolist()))
        members = {g: order[gs == g] for g in buckets}
        is_leader = np.zeros(order.size, dtype=bool)
        for g in buckets:
            where = np.flatnonzero(gs == g)
            is_leader[where[::packing_num]] = True
        free = [st.gpus_per_node] * st.num_nodes
        leaders = dict.fromkeys(buckets, 0)
        failed: set[int] = set()
        for p in np.flatnonzero(is_leader).tolist():
            g = int(gs[p])
            if g in failed:
                continue
            if st.yarn(free, g):
                leaders[g] += 1
            else:
                failed.add(g)
                if len(failed) == len(buckets):
                    break
        candidates = {
            g: [(int(j),) for j in members[g][: min(leaders[g] * packing_num, members[g].size)]]
            for g in buckets
        }
        return candidates, leaders

    def match_repeatedly(self, bucket_nodes: Buckets, required: int) -> Buckets:
        """Repeated matching of candidate nodes while they need more GPUs than the cluster has."""
        total = self.total_gpus
        if required <= total:  # every candidate runs alone (the original matches, then splits)
            return bucket_nodes
        reference = self.config.matching == "reference"
        for _ in range(self.packing_num):
            ready: list[tuple[int, Node, Node | None]] = []
            for g, nodes in bucket_nodes.items():
                partner: dict[int, int] = {}
                if len(nodes) > 1:
                    partner = (
                        self.reference_partners(nodes) if reference else self.typed_partners(nodes)
                    )
                for p in range(len(nodes)):
                    q = partner.get(p)
                    if q is None:
                        ready.append((g, nodes[p], None))
                    elif q < p:
                        ready.append((g, nodes[q], nodes[p]))
            new: Buckets = {g: [] for g in bucket_nodes}
            for g, first, second in ready:
                if second is None:
                    new[g].append(first)
                elif required <= total:
                    new[g].extend([first, second])
                else:
                    new[g].append(first + second)
                    required -= g
            bucket_nodes = new
            if required <= total:
                break
        return bucket_nodes

    def consecutive(self, bucket_nodes: Buckets, leaders: dict[int, int], required: int) -> Buckets:
        """``blossom=False``: each leader groups the next candidates of its bucket (step 3)."""
        total = self.total_gpus
        packing_num = self.packing_num
        out: Buckets = {}
        for g, nodes in bucket_nodes.items():
            out[g] = []
            for i in range(leaders[g]):
                head = list(nodes[i * packing_num])
                for jn in range(1, packing_num):
                    p = jn + i * packing_num
                    if p >= len(nodes):
                        break
                    if required > total:
                        head.extend(nodes[p])
                        required -= g
                    else:
                        out[g].append(nodes[p])
                out[g].append(tuple(head))
        return out

    def autopack(self, packings: Buckets, order: np.ndarray) -> Buckets:
        """Split every group slower than its members' summed solo times; keep the fitting nodes."""
        st = self.state
        rank = np.empty(st.num_jobs, dtype=np.int64)
        rank[order] = np.arange(order.size)
        items = []
        for g, nodes in packings.items():
            for nd in nodes:
                types = tuple(int(st.type_of[j]) for j in nd)
                if (
                    len(nd) > 1
                    and self.periods.period(types) / float(sum(st.solo_iteration_s[list(nd)])) > 1
                ):
                    items.extend((g, (j,), rank[j]) for j in nd)
                else:
                    items.append((g, nd, min(rank[j] for j in nd)))
        items.sort(key=lambda e: e[2])
        free = [st.gpus_per_node] * st.num_nodes
        out: Buckets = {}
        for g, nd, _ in items:
            if st.yarn(free, g):
                out.setdefault(g, []).append(nd)
        return out

    def plan(self, order: np.ndarray) -> Buckets:
        """The nodes (groups) to place, per bucket, for jobs in the policy's ``order``."""
        bucket_nodes, leaders = self.admit(order)
        required = sum(g * len(v) for g, v in bucket_nodes.items())
        if self.config.blossom:
            packings = self.match_repeatedly(bucket_nodes, required)
        else:
            packings = self.consecutive(bucket_nodes, leaders, required)
        if self.config.autopack:
            packings = self.autopack(packings, order)
        return packings
