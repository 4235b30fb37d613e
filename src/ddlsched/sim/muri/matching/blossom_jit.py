"""Compiled (numba) version of :class:`ddlsched.sim.muri.matching.blossom._Blossom`.

The same algorithm, statement for statement, on numpy arrays, so that the
simulator's up to ~5x10^4 matchings of up to ~250 nodes per trace take seconds
rather than minutes. Nothing is reordered: the floats are summed in the same
order (numba does not contract or reassociate them unless ``fastmath`` is
asked for, and it is not), the scans visit indices in the same order, and
the queue is first in, first out. The only difference from the pure-Python
reference is storage:

* a blossom's members live in row ``b`` of ``FL`` (``FLN[b]`` of them);
* the queue is the array ``Q`` read from ``ctr[2]`` and written at
  ``ctr[3]``; a node is queued only when it becomes even, which happens at
  most once per phase, so ``n + 1`` places suffice (checked);
* the recursive ``set_st`` and the work lists of ``q_push`` and
  ``set_match`` use explicit arrays;
* the per-scan cache of blossom slacks is dropped: it only saves
  recomputing the same value (labels do not change during a scan, and the
  record ``(u, x)`` of an existing blossom ``x`` is not rewritten while
  ``u`` is scanned).

``tests/test_muri_sim.py`` checks that both versions return the same
matching on random tie-heavy graphs.
"""

from __future__ import annotations

import numpy as np
from numba import njit

# State tuple: (W, EU, EV, EW, FF, lab, sd, match, st, pa, S, slack, vis, FL, FLN, Q, ctr,
#               pending, stack, todo); ctr = [n_x, t, queue head, queue tail]; the last three
# are work lists of q_push, set_st and set_match (none of them calls another).


@njit(cache=True)
def _record_slack(W, EU, EV, lab, a, b):
    """Slack of the edge record stored at ``(a, b)``: ``lab[x] + lab[y] - 2 w(x, y)``."""
    x = EU[a, b]
    y = EV[a, b]
    return lab[x] + lab[y] - W[x, y] * 2.0


@njit(cache=True)
def _set_slack(s, x):
    W, EU, EV, EW, lab, st, S, slack, sd = s[0], s[1], s[2], s[3], s[5], s[8], s[10], s[11], s[6]
    n = W.shape[0] - 1
    slack[x] = 0
    for u in range(1, n + 1):
        if EW[u, x] > 0 and st[u] != x and S[st[u]] == 0:
            d = _record_slack(W, EU, EV, lab, u, x)
            if slack[x] == 0 or d < sd[x]:
                slack[x] = u
                sd[x] = d


@njit(cache=True)
def _merge_records(s, b):
    W, EU, EV, EW, FF, lab, FL, FLN, ctr = s[0], s[1], s[2], s[3], s[4], s[5], s[13], s[14], s[16]
    n = W.shape[0] - 1
    n_x = ctr[0]
    for x in range(1, n_x + 1):
        EW[b, x] = 0.0
        EW[x, b] = 0.0
    for x in range(1, n + 1):
        FF[b, x] = 0
    for i in range(FLN[b]):
        xs = FL[b, i]
        for x in range(1, n_x + 1):
            take = EW[b, x] <= 0
            if not take:
                take = _record_slack(W, EU, EV, lab, xs, x) < _record_slack(W, EU, EV, lab, b, x)
            if take:
                EU[b, x] = EU[xs, x]
                EV[b, x] = EV[xs, x]
                EW[b, x] = EW[xs, x]
                EU[x, b] = EU[x, xs]
                EV[x, b] = EV[x, xs]
                EW[x, b] = EW[x, xs]
        for x in range(1, n + 1):
            if FF[xs, x] != 0:
                FF[b, x] = xs


@njit(cache=True)
def _q_push(s, x):
    FL, FLN, Q, ctr = s[13], s[14], s[15], s[16]
    n = s[0].shape[0] - 1
    pending = s[17]
    head = 0
    tail = 1
    pending[0] = x
    while head < tail:
        y = pending[head]
        head += 1
        if y <= n:
            if ctr[3] >= Q.shape[0]:
                raise RuntimeError("blossom queue overflow")
            Q[ctr[3]] = y
            ctr[3] += 1
        else:
            for i in range(FLN[y]):
                pending[tail] = FL[y, i]
                tail += 1


@njit(cache=True)
def _set_st(s, x, b):
    st, FL, FLN = s[8], s[13], s[14]
    n = s[0].shape[0] - 1
    stack = s[18]
    top = 1
    stack[0] = x
    while top > 0:
        top -= 1
        y = stack[top]
        st[y] = b
        if y > n:
            for i in range(FLN[y]):
                stack[top] = FL[y, i]
                top += 1


@njit(cache=True)
def _reverse(FL, b, lo, hi):
    """Reverse ``FL[b, lo:hi]`` in place."""
    hi -= 1
    while lo < hi:
        FL[b, lo], FL[b, hi] = FL[b, hi], FL[b, lo]
        lo += 1
        hi -= 1


@njit(cache=True)
def _get_pr(s, b, xr):
    FL, FLN = s[13], s[14]
    m = FLN[b]
    pr = 0
    while pr < m and FL[b, pr] != xr:
        pr += 1
    if pr == m:
        raise RuntimeError("blossom member not found")
    if pr % 2 == 1:
        _reverse(FL, b, 1, m)
        return m - pr
    return pr


@njit(cache=True)
def _set_match(s, u, v):
    EU, EV, FF, match, FL, FLN = s[1], s[2], s[4], s[7], s[13], s[14]
    n = s[0].shape[0] - 1
    todo = s[19]
    head = 0
    tail = 1
    todo[0, 0] = u
    todo[0, 1] = v
    while head < tail:
        a = todo[head, 0]
        b = todo[head, 1]
        head += 1
        ru = EU[a, b]
        rv = EV[a, b]
        match[a] = rv
        if a <= n:
            continue
        xr = FF[a, ru]
        pr = _get_pr(s, a, xr)
        for i in range(pr):
            todo[tail, 0] = FL[a, i]
            todo[tail, 1] = FL[a, i ^ 1]
            tail += 1
        todo[tail, 0] = xr
        todo[tail, 1] = b
        tail += 1
        m = FLN[a]  # rotate left by pr: three reversals
        _reverse(FL, a, 0, pr)
        _reverse(FL, a, pr, m)
        _reverse(FL, a, 0, m)


@njit(cache=True)
def _augment(s, u, v):
    match, st, pa = s[7], s[8], s[9]
    while True:
        xnv = st[match[u]]
        _set_match(s, u, v)
        if xnv == 0:
            return
        nxt = st[pa[xnv]]
        _set_match(s, xnv, nxt)
        u = nxt
        v = xnv


@njit(cache=True)
def _get_lca(s, u, v):
    match, st, pa, vis, ctr = s[7], s[8], s[9], s[12], s[16]
    ctr[1] += 1
    t = ctr[1]
    while u != 0 or v != 0:
        if u != 0:
            if vis[u] == t:
                return u
            vis[u] = t
            u = st[match[u]]
            if u != 0:
                u = st[pa[u]]
        u, v = v, u
    return 0


@njit(cache=True)
def _append_path(s, b, m, x, lca):
    """Append the (even, odd) pairs from ``x`` up the tree to ``lca`` to blossom ``b``'s
    members from place ``m``, queueing each odd one; the new member count."""
    match, st, pa, FL = s[7], s[8], s[9], s[13]
    while x != lca:
        y = st[match[x]]
        FL[b, m] = x
        FL[b, m + 1] = y
        m += 2
        _q_push(s, y)
        x = st[pa[y]]
    return m


@njit(cache=True)
def _add_blossom(s, u, lca, v):
    lab, match, st, S, FL, FLN, ctr = s[5], s[7], s[8], s[10], s[13], s[14], s[16]
    n = s[0].shape[0] - 1
    b = n + 1
    while b <= ctr[0] and st[b] != 0:
        b += 1
    if b > ctr[0]:
        ctr[0] += 1
        st[b] = b
    lab[b] = 0.0
    S[b] = 0
    match[b] = match[lca]
    FL[b, 0] = lca
    m = _append_path(s, b, 1, u, lca)
    _reverse(FL, b, 1, m)
    FLN[b] = _append_path(s, b, m, v, lca)
    _set_st(s, b, b)
    _merge_records(s, b)
    _set_slack(s, b)


@njit(cache=True)
def _expand_blossom(s, b):
    EU, FF, S, slack, pa, st, FL, FLN = s[1], s[4], s[10], s[11], s[9], s[8], s[13], s[14]
    for i in range(FLN[b]):
        x = FL[b, i]
        _set_st(s, x, x)
    xr = FF[b, EU[b, pa[b]]]
    pr = _get_pr(s, b, xr)
    for i in range(0, pr, 2):
        xs = FL[b, i]
        xns = FL[b, i + 1]
        pa[xs] = EU[xns, xs]
        S[xs] = 1
        S[xns] = 0
        slack[xs] = 0
        _set_slack(s, xns)
        _q_push(s, xns)
    S[xr] = 1
    pa[xr] = pa[b]
    for i in range(pr + 1, FLN[b]):
        xs = FL[b, i]
        S[xs] = -1
        _set_slack(s, xs)
    st[b] = 0


@njit(cache=True)
def _on_found_edge(s, a, c):
    match, st, pa, S, slack = s[7], s[8], s[9], s[10], s[11]
    u = st[a]
    v = st[c]
    if S[v] == -1:
        pa[v] = a
        S[v] = 1
        nu = st[match[v]]
        slack[v] = 0
        slack[nu] = 0
        S[nu] = 0
        _q_push(s, nu)
    elif S[v] == 0:
        lca = _get_lca(s, u, v)
        if lca == 0:
            _augment(s, u, v)
            _augment(s, v, u)
            return True
        _add_blossom(s, u, lca, v)
    return False


@njit(cache=True)
def _scan(s):
    W, EU, EV, lab, sd, st, S, slack, Q, ctr = (
        s[0], s[1], s[2], s[5], s[6], s[8], s[10], s[11], s[15], s[16],
    )  # fmt: skip
    n = W.shape[0] - 1
    while ctr[2] < ctr[3]:
        u = Q[ctr[2]]
        ctr[2] += 1
        if S[st[u]] == 1:
            continue
        labu = lab[u]
        stu = st[u]
        for v in range(1, n + 1):
            wv = W[u, v]
            if wv > 0:
                x = st[v]
                if x != stu:
                    dv = labu + lab[v] - wv * 2.0
                    if dv <= 0:
                        if _on_found_edge(s, u, v):
                            return True
                        stu = st[u]
                    else:
                        if x != v:
                            dv = _record_slack(W, EU, EV, lab, u, x)
                        if slack[x] == 0 or dv < sd[x]:
                            slack[x] = u
                            sd[x] = dv
    return False


@njit(cache=True)
def _isclose(a, b):
    """``math.isclose(a, b, rel_tol=1e-5)`` for finite ``a`` and ``b``."""
    if a == b:
        return True
    return abs(b - a) <= 1e-5 * max(abs(a), abs(b))


@njit(cache=True)
def _phase(s):
    EU, EV, lab, sd, match, st, pa, S, slack, ctr = (
        s[1], s[2], s[5], s[6], s[7], s[8], s[9], s[10], s[11], s[16],
    )  # fmt: skip
    n = s[0].shape[0] - 1
    n_x = ctr[0]
    for x in range(n_x + 1):
        S[x] = -1
        slack[x] = 0
    ctr[2] = 0
    ctr[3] = 0
    for x in range(1, n_x + 1):
        if st[x] == x and match[x] <= 0:
            pa[x] = 0
            S[x] = 0
            _q_push(s, x)
    if ctr[3] == 0:
        return False
    while True:
        if _scan(s):
            return True
        n_x = ctr[0]
        d = np.inf
        for b in range(n + 1, n_x + 1):
            if st[b] == b and S[b] == 1 and lab[b] / 2.0 < d:  # Python's min(d, .)
                d = lab[b] / 2.0
        for x in range(1, n_x + 1):
            if st[x] == x and slack[x] != 0:
                if S[x] == -1:
                    if sd[x] < d:
                        d = sd[x]
                elif S[x] == 0 and sd[x] / 2.0 < d:
                    d = sd[x] / 2.0
        for u in range(1, n + 1):
            sv = S[st[u]]
            if sv == 0:
                if lab[u] <= d or _isclose(lab[u], d):
                    return False
                lab[u] -= d
            elif sv == 1:
                lab[u] += d
        for b in range(n + 1, n_x + 1):
            if st[b] == b:
                if S[b] == 0:
                    lab[b] += d * 2
                elif S[b] == 1:
                    lab[b] -= d * 2
        W = s[0]
        for x in range(1, n_x + 1):
            sl = slack[x]
            if sl != 0:
                sd[x] = _record_slack(W, EU, EV, lab, sl, x)
        ctr[2] = 0
        ctr[3] = 0
        for x in range(1, n_x + 1):
            sl = slack[x]
            if (
                st[x] == x
                and sl != 0
                and st[sl] != x
                and sd[x] <= 0
                and _on_found_edge(s, EU[sl, x], EV[sl, x])
            ):
                return True
        for b in range(n + 1, ctr[0] + 1):
            if st[b] == b and S[b] == 1 and lab[b] <= 0:
                _expand_blossom(s, b)


@njit(cache=True)
def blossom_mates(W, w_max):
    """Final ``match`` array of the Blossom on the 1-based weight matrix ``W``."""
    n = W.shape[0] - 1
    cap = 2 * n + 2
    EU = np.zeros((cap, cap), dtype=np.int64)
    EV = np.zeros((cap, cap), dtype=np.int64)
    EW = np.zeros((cap, cap))
    for u in range(n + 1):
        for v in range(n + 1):
            EU[u, v] = u
            EV[u, v] = v
            EW[u, v] = W[u, v]
    FF = np.zeros((cap, n + 1), dtype=np.int64)
    for x in range(1, n + 1):
        FF[x, x] = x
    lab = np.zeros(cap)
    lab[: n + 1] = w_max
    sd = np.zeros(cap)
    match = np.zeros(cap, dtype=np.int64)
    st = np.zeros(cap, dtype=np.int64)
    for x in range(n + 1):
        st[x] = x
    pa = np.zeros(cap, dtype=np.int64)
    S = np.full(cap, -1, dtype=np.int64)
    slack = np.zeros(cap, dtype=np.int64)
    vis = np.zeros(cap, dtype=np.int64)
    FL = np.zeros((cap, n + 1), dtype=np.int64)
    FLN = np.zeros(cap, dtype=np.int64)
    Q = np.zeros(n + 1, dtype=np.int64)
    ctr = np.array([n, 0, 0, 0], dtype=np.int64)
    pending = np.zeros(cap + 1, dtype=np.int64)
    stack = np.zeros(cap + 1, dtype=np.int64)
    todo = np.zeros((2 * cap + 2, 2), dtype=np.int64)
    s = (W, EU, EV, EW, FF, lab, sd, match, st, pa, S, slack, vis, FL, FLN, Q, ctr,
         pending, stack, todo)  # fmt: skip
    while _phase(s):
        pass
    return match
