"""Muri's matching as the authors' simulator computes it (tie-breaking included).

The original (github Rivendile/Muri, ``simulator/matching.py``,
``_Blossom_Same``) pairs the candidate nodes of one GPU bucket with an
O(n^3) primal-dual weighted Blossom on floats: vertex labels start at the
largest weight, one augmenting path per phase, blossoms numbered ``n+1...``
and recycled, each blossom keeping one "best" edge record per other index.
Which of several maximum-weight matchings it returns depends on its scan
orders, and the simulator's numbers depend on that. :func:`blossom_match`
re-implements the algorithm step for step (no code is copied), including
every detail that decides ties:

* the weight matrix is directed: entry ``(u, v)`` is the weight of ``u``'s
  jobs followed by ``v``'s; the slack of the edge record ``(a, b)`` is
  ``lab[a] + lab[b] - 2 w(a, b)``, evaluated in that float order;
* vertices are queued in index order and scanned first in, first out; the
  members of a nested blossom are queued breadth-first (the original's
  ``q_push`` uses a FIFO); a scanned vertex visits its neighbours in index
  order;
* an edge is tight when its slack is ``<= 0``; a phase ends the matching as
  soon as an even vertex's label is ``<= d`` or within relative ``1e-5`` of
  the dual step ``d`` (so the result need not be maximum); an odd blossom
  is expanded when its label is ``<= 0``;
* a vertex's "slack" partner is replaced only by a strictly smaller slack;
  a new blossom's record for index ``x`` is replaced by a member's when the
  blossom's has weight ``<= 0`` or the member's slack is strictly smaller.

Speed (the simulator calls this up to ~5x10^4 times per trace, after
memoisation): :class:`_Blossom` is the readable pure-Python statement of the
algorithm, used for graphs of fewer than :data:`COMPILED_FROM` nodes; larger
graphs go to the same algorithm compiled with numba
(:mod:`ddlsched.sim.muri.matching.blossom_jit`, 5-8x faster at 160 nodes;
numba is imported only then, on the first such graph). Both give the same
matchings on the tests' random tie-heavy graphs.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Sequence

import numpy as np

__all__ = ["blossom_match"]

#: Graphs with at least this many nodes use the compiled version.
COMPILED_FROM = 8


class _Blossom:
    """Pure-Python state of one run; indices 1..n are nodes, n+1.. blossoms, 0 is "none"."""

    def __init__(self, W: list[list[float]], w_max: float):
        n = len(W) - 1
        self.n = n
        cap = 2 * n + 2
        self.W = W
        self._init_records(W, cap)
        self.lab = [0.0] * cap
        for x in range(n + 1):
            self.lab[x] = w_max
        self.match = [0] * cap
        self.st = list(range(n + 1)) + [0] * (cap - n - 1)
        self.pa = [0] * cap
        self.S = [-1] * cap
        self.slack = [0] * cap
        self.sd = [0.0] * cap  # slack of the record (slack[x], x) at the current labels
        self.vis = [0] * cap
        self.flower: list[list[int]] = [[] for _ in range(cap)]
        self.n_x = n
        self.t = 0
        self.q: deque[int] = deque()

    # -- edge records (pure Python: lists of lists) -----------------------------------------

    def _init_records(self, W: list[list[float]], cap: int) -> None:
        n = self.n
        self.eu = [[0] * cap for _ in range(cap)]
        self.ev = [[0] * cap for _ in range(cap)]
        self.ew = [[0.0] * cap for _ in range(cap)]
        for u in range(n + 1):
            eu, ev, ew = self.eu[u], self.ev[u], self.ew[u]
            eu[: n + 1] = [u] * (n + 1)
            ev[: n + 1] = range(n + 1)
            ew[: n + 1] = W[u]
        self.flower_from = [[0] * (n + 1) for _ in range(cap)]
        for x in range(1, n + 1):
            self.flower_from[x][x] = x

    def rec(self, a: int, b: int) -> tuple[int, int]:
        """Endpoints of the edge record stored at (a, b)."""
        return self.eu[a][b], self.ev[a][b]

    def delta(self, a: int, b: int) -> float:
        """Slack of the record stored at (a, b)."""
        x, y = self.eu[a][b], self.ev[a][b]
        lab = self.lab
        return lab[x] + lab[y] - self.W[x][y] * 2.0

    def from_member(self, b: int, x: int) -> int:
        """The member of blossom ``b`` that holds node ``x``."""
        return self.flower_from[b][x]

    def update_slack(self, u: int, x: int) -> None:
        d = self.delta(u, x)
        if self.slack[x] == 0 or d < self.sd[x]:
            self.slack[x] = u
            self.sd[x] = d

    def set_slack(self, x: int) -> None:
        self.slack[x] = 0
        st, S = self.st, self.S
        for u in range(1, self.n + 1):
            if self.ew[u][x] > 0 and st[u] != x and S[st[u]] == 0:
                self.update_slack(u, x)

    def merge_records(self, b: int, fl: list[int]) -> None:
        """Edge records and node owners of the new blossom ``b`` from its members."""
        n, n_x = self.n, self.n_x
        eu, ev, ew = self.eu, self.ev, self.ew
        eub, evb, ewb = eu[b], ev[b], ew[b]
        for x in range(1, n_x + 1):
            ewb[x] = 0.0
            ew[x][b] = 0.0
        ffb = self.flower_from[b]
        for x in range(1, n + 1):
            ffb[x] = 0
        lab, W = self.lab, self.W
        for xs in fl:
            eus, evs, ews = eu[xs], ev[xs], ew[xs]
            for x in range(1, n_x + 1):
                if ewb[x] <= 0 or (
                    lab[eus[x]] + lab[evs[x]] - W[eus[x]][evs[x]] * 2.0
                    < lab[eub[x]] + lab[evb[x]] - W[eub[x]][evb[x]] * 2.0
                ):
                    eub[x], evb[x], ewb[x] = eus[x], evs[x], ews[x]
                    eux, evx, ewx = eu[x], ev[x], ew[x]
                    eux[b], evx[b], ewx[b] = eux[xs], evx[xs], ewx[xs]
            ffs = self.flower_from[xs]
            for x in range(1, n + 1):
                if ffs[x] != 0:
                    ffb[x] = xs

    # -- the algorithm ---------------------------------------------------------------------

    def q_push(self, x: int) -> None:
        pending = deque((x,))
        n = self.n
        while pending:
            y = pending.popleft()
            if y <= n:
                self.q.append(y)
            else:
                pending.extend(self.flower[y])

    def set_st(self, x: int, b: int) -> None:
        self.st[x] = b
        if x > self.n:
            for y in self.flower[x]:
                self.set_st(y, b)

    def get_pr(self, b: int, xr: int) -> int:
        fl = self.flower[b]
        pr = fl.index(xr)
        if pr % 2 == 1:
            fl[1:] = fl[:0:-1]
            return len(fl) - pr
        return pr

    def set_match(self, u: int, v: int) -> None:
        todo = deque(((u, v),))
        n = self.n
        while todo:
            a, b = todo.popleft()
            ru, rv = self.rec(a, b)
            self.match[a] = rv
            if a <= n:
                continue
            xr = self.from_member(a, ru)
            pr = self.get_pr(a, xr)
            fl = self.flower[a]
            for i in range(pr):
                todo.append((fl[i], fl[i ^ 1]))
            todo.append((xr, b))
            self.flower[a] = fl[pr:] + fl[:pr]

    def augment(self, u: int, v: int) -> None:
        st, pa = self.st, self.pa
        while True:
            xnv = st[self.match[u]]
            self.set_match(u, v)
            if xnv == 0:
                return
            nxt = st[pa[xnv]]
            self.set_match(xnv, nxt)
            u, v = nxt, xnv

    def get_lca(self, u: int, v: int) -> int:
        self.t += 1
        t, vis, st = self.t, self.vis, self.st
        while u != 0 or v != 0:
            if u != 0:
                if vis[u] == t:
                    return u
                vis[u] = t
                u = st[self.match[u]]
                if u != 0:
                    u = st[self.pa[u]]
            u, v = v, u
        return 0

    def add_blossom(self, u: int, lca: int, v: int) -> None:
        st = self.st
        b = self.n + 1
        while b <= self.n_x and st[b] != 0:
            b += 1
        if b > self.n_x:
            self.n_x += 1
            st[b] = b
        self.lab[b] = 0.0
        self.S[b] = 0
        self.match[b] = self.match[lca]
        fl = [lca]
        x = u
        while x != lca:
            y = st[self.match[x]]
            fl += (x, y)
            self.q_push(y)
            x = st[self.pa[y]]
        fl[1:] = fl[:0:-1]
        x = v
        while x != lca:
            y = st[self.match[x]]
            fl += (x, y)
            self.q_push(y)
            x = st[self.pa[y]]
        self.flower[b] = fl
        self.set_st(b, b)
        self.merge_records(b, fl)
        self.set_slack(b)

    def expand_blossom(self, b: int) -> None:
        fl = self.flower[b]
        for x in fl:
            self.set_st(x, x)
        xr = self.from_member(b, self.rec(b, self.pa[b])[0])
        pr = self.get_pr(b, xr)
        fl = self.flower[b]
        S = self.S
        for i in range(0, pr, 2):
            xs, xns = fl[i], fl[i + 1]
            self.pa[xs] = self.rec(xns, xs)[0]
            S[xs], S[xns] = 1, 0
            self.slack[xs] = 0
            self.set_slack(xns)
            self.q_push(xns)
        S[xr], self.pa[xr] = 1, self.pa[b]
        for i in range(pr + 1, len(fl)):
            xs = fl[i]
            S[xs] = -1
            self.set_slack(xs)
        self.st[b] = 0

    def on_found_edge(self, a: int, c: int) -> bool:
        """The record with real endpoints (a, c) is tight; ``True``: augmented."""
        st, S = self.st, self.S
        u, v = st[a], st[c]
        if S[v] == -1:
            self.pa[v] = a
            S[v] = 1
            nu = st[self.match[v]]
            self.slack[v] = self.slack[nu] = 0
            S[nu] = 0
            self.q_push(nu)
        elif S[v] == 0:
            lca = self.get_lca(u, v)
            if lca == 0:
                self.augment(u, v)
                self.augment(v, u)
                return True
            self.add_blossom(u, lca, v)
        return False

    def scan(self) -> bool:
        """Scan the queued vertices (FIFO); ``True``: an augmenting path was found."""
        n = self.n
        st, slack, lab, sd, S = self.st, self.slack, self.lab, self.sd, self.S
        W, q = self.W, self.q
        while q:
            u = q.popleft()
            if S[st[u]] == 1:
                continue
            Wu = W[u]
            labu = lab[u]
            stu = st[u]
            seen: dict[int, float] = {}  # slack of (u, blossom) in this scan
            for v in range(1, n + 1):
                wv = Wu[v]
                if wv > 0:
                    x = st[v]
                    if x != stu:
                        dv = labu + lab[v] - wv * 2.0
                        if dv <= 0:
                            if self.on_found_edge(u, v):
                                return True
                            stu = st[u]
                        else:
                            if x != v:
                                got = seen.get(x)
                                if got is None:
                                    got = seen[x] = self.delta(u, x)
                                dv = got
                            if slack[x] == 0 or dv < sd[x]:
                                slack[x] = u
                                sd[x] = dv
        return False

    def phase(self) -> bool:
        """Look for one augmenting path; ``False`` ends the matching."""
        n, n_x = self.n, self.n_x
        st, S, slack, lab, match, sd = self.st, self.S, self.slack, self.lab, self.match, self.sd
        for x in range(n_x + 1):
            S[x] = -1
            slack[x] = 0
        self.q = deque()
        for x in range(1, n_x + 1):
            if st[x] == x and match[x] <= 0:
                self.pa[x] = 0
                S[x] = 0
                self.q_push(x)
        if not self.q:
            return False
        while True:
            if self.scan():
                return True
            n_x = self.n_x
            d = math.inf
            for b in range(n + 1, n_x + 1):
                if st[b] == b and S[b] == 1:
                    d = min(d, lab[b] / 2.0)
            for x in range(1, n_x + 1):
                if st[x] == x and slack[x] != 0:
                    if S[x] == -1:
                        d = min(d, sd[x])
                    elif S[x] == 0:
                        d = min(d, sd[x] / 2.0)
            for u in range(1, n + 1):
                s = S[st[u]]
                if s == 0:
                    if lab[u] <= d or math.isclose(lab[u], d, rel_tol=1e-5):
                        return False
                    lab[u] -= d
                elif s == 1:
                    lab[u] += d
            for b in range(n + 1, n_x + 1):
                if st[b] == b:
                    if S[b] == 0:
                        lab[b] += d * 2
                    elif S[b] == 1:
                        lab[b] -= d * 2
            for x in range(1, n_x + 1):
                if slack[x] != 0:
                    sd[x] = self.delta(slack[x], x)
            self.q = deque()
            for x in range(1, n_x + 1):
                s = slack[x]
                if (
                    st[x] == x
                    and s != 0
                    and st[s] != x
                    and sd[x] <= 0
                    and self.on_found_edge(*self.rec(s, x))
                ):
                    return True
            for b in range(n + 1, self.n_x + 1):
                if st[b] == b and S[b] == 1 and lab[b] <= 0:
                    self.expand_blossom(b)


def blossom_match(w: Sequence[Sequence[float]]) -> list[int]:
    """Partner of each node (``-1``: single) as the original's Blossom pairs them.

    ``w[u][v]``: weight of grouping node ``u`` (first) with ``v``; ``<= 0``
    means no edge; the diagonal is ignored. Nodes are 0-based here.
    """
    n = len(w)
    W = [[0.0] * (n + 1) for _ in range(n + 1)]
    for u in range(n):
        row = W[u + 1]
        src = w[u]
        for v in range(n):
            if u != v:
                row[v + 1] = float(src[v])
    w_max = max(max(r) for r in W)
    if not w_max > 0:
        return [-1] * n
    if n < COMPILED_FROM:
        bl = _Blossom(W, w_max)
        while bl.phase():
            pass
        match = bl.match
    else:
        from ddlsched.sim.muri.matching.blossom_jit import blossom_mates

        match = blossom_mates(np.array(W, dtype=np.float64), w_max).tolist()
    out = [-1] * n
    for u in range(1, n + 1):
        v = match[u]
        if v > 0 and match[v] == u:
            out[u - 1] = v - 1
    return out
