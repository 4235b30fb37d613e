"""Pattern covers in highspy: the LP bound and integer solutions behind
:mod:`ddlsched.models.placement_pattern_proof` (the server-pattern bound of the
placement ILP; this module knows patterns, values and demands, not placements).

A server's terms of Eq. (7) depend on its own counts only (comp + AllReduce
on ``x[s,m]``, comm on ``x[s-1,m]`` and ``x[s+1,m]``; Eqs. 4-6), so a
server's *pattern* ``p = x[., m]`` has a value ``f(p)``, the largest term
of the stages it holds, and ``alpha = max_m f(x[., m])``. Servers of equal
availability are interchangeable: a placement is a count ``n[a, p]`` of
servers of availability ``a`` using pattern ``p`` with

    sum_p n[a, p] = (servers of availability a)      for every a
    sum_{a,p} p_s n[a, p] = k_s                        for every stage s  (Eq. 2)

(``p`` uses exactly ``a`` GPUs when the servers are exactly enough, the
Table II setting, else at most ``a``). ``alpha <= T`` is possible only if
this system has a solution using patterns with ``f(p) <= T``; its LP
relaxation having none proves ``alpha > T``. :func:`cover_search`
finds, by bisection over the sorted distinct pattern values, the smallest
``T`` whose LP is feasible: a valid lower bound on alpha (the LP is a
relaxation) that is as strong as a Dantzig-Wolfe (configuration)
reformulation of the aggregated ILP, and exact on most Table II cases
(``benchmarks/results/placement-scaling.md``). Servers of equal
availability are one block here: the symmetry the aggregated ILP breaks
with ordering rows is gone.

The patterns are enumerated (all count vectors with ``p_s <= min(k_s, a)``
summing to ``a``, or at most ``a``): ``C(a + S - 1, S - 1)`` of them for
one availability, 12,869 for 8-GPU servers and 8 stages. Above
:data:`PATTERN_LIMIT` patterns the bound is not computed (``None``).

Direct highspy (``docs/architecture.md``, "Solvers": a loop of small LPs): each LP has one
row per stage and per availability value, one column per allowed pattern;
HiGHS's model status only proposes infeasibility (presolve off, as
everywhere in the toolkit): the bound relies on it only when the Farkas ray
HiGHS returns is re-checked in numpy (:func:`_certified_infeasible`). ``tests/test_placement_scaling.py`` checks the
bound against brute-force and ILP optima.

Time: each LP gets ``time_limit`` = what the method's deadline leaves (simplex
looks at its clock), and no LP starts once it has passed; an LP cut by it
proves nothing, and :func:`cover_search` returns what was proven before it
(``tests/test_placement_pattern_deadline.py``, with a fake clock). The integer
pattern solves (a fallback for the start when rounding the LP fails) run in the
HiGHS worker process, killed at their limit (:mod:`ddlsched.solvers.highs_server`):
``placement exact`` asks for none (``max_mips=0``), but the default keeps them,
since without them the search finds no start where rounding fails (one of
``tests/test_placement_methods.py``'s eight tiny instances, and vgg16 on 32 GPUs,
seed 0, of ``tests/test_placement_scaling.py``; both tests use the start).
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass

import numpy as np

from ddlsched.deadline import Deadline
from ddlsched.errors import SolverError
from ddlsched.solvers.highs_lp import new_highs

__all__ = ["PATTERN_LIMIT", "CoverSearch", "cover_search", "pattern_count", "patterns"]

log = logging.getLogger(__name__)

#: Largest number of patterns (over all availability values) the bound enumerates.
PATTERN_LIMIT = 200_000
#: HiGHS options of the pattern LPs and their integer solves.
_LP_OPTIONS = (("output_flag", False), ("threads", 1), ("presolve", "off"))


class _LpCut(Exception):
    """A pattern LP stopped by the deadline (or none started: no time was left)."""


def _run_lp(highs, deadline: Deadline) -> None:
    """Run the LP loaded in ``highs`` with ``time_limit`` = what ``deadline`` leaves (added
    to the object's run clock, which accumulates over runs); :class:`_LpCut` when nothing
    is left or HiGHS stopped at that limit."""
    import highspy

    left = deadline.remaining_s()
    if not left > 0:
        raise _LpCut
    highs.setOptionValue(
        "time_limit", highs.getRunTime() + left if math.isfinite(left) else highspy.kHighsInf
    )
    highs.run()
    if highs.getModelStatus() == highspy.HighsModelStatus.kTimeLimit:
        raise _LpCut


def patterns(caps: list[int], total: int, *, exact: bool) -> np.ndarray:
    """Count vectors ``p`` with ``0 <= p_s <= caps[s]`` and ``sum p = total`` (``exact``)
    or ``<= total``, one per row in lexicographic order (``int64``, shape
    ``(N, len(caps))``).

    Stage by stage, every prefix is repeated once per count the next stage may
    take (at most what is left of ``total``; with ``exact``, at least what the
    later stages cannot hold), a few array operations per stage."""
    caps = [min(cap, total) for cap in caps]
    room = np.cumsum([0, *caps[::-1]])[::-1]  # room[s]: the most stages s.. can hold
    table = np.zeros((1, len(caps)), dtype=np.int64)
    used = np.zeros(1, dtype=np.int64)
    for s, cap in enumerate(caps):
        low = np.maximum(total - used - room[s + 1], 0) if exact else np.zeros_like(used)
        size = np.maximum(np.minimum(cap, total - used) - low + 1, 0)
        table = np.repeat(table, size, axis=0)
        first = np.repeat(np.cumsum(size) - size, size)  # each new row's block start
        table[:, s] = np.arange(table.shape[0]) - first + np.repeat(low, size)
        used = np.repeat(used, size) + table[:, s]
    return table


def pattern_count(caps: list[int], total: int, *, exact: bool) -> int:
    """How many rows :func:`patterns` returns, without enumerating them (a
    convolution per stage; counts above ``10**15`` are reported as ``10**15``)."""
    cap_at = 1e15
    ways = np.zeros(total + 1)  # ways[t]: prefixes using t GPUs
    ways[0] = 1.0
    for cap in caps:
        ways = np.minimum(np.convolve(ways, np.ones(min(cap, total) + 1))[: total + 1], cap_at)
    return int(min(ways[total] if exact else ways.sum(), cap_at))


def _allowed(blocks, values: list[np.ndarray], cap: float) -> list[np.ndarray]:
    """Per block, the patterns of value ``<= cap``."""
    return [table[vals <= cap] for (_, table), vals in zip(blocks, values, strict=True)]


def _matrix(allowed: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(start, index, value)`` of the pattern system, column-wise: a column per
    allowed pattern, 1 in its block's row and ``p_s`` in stage ``s``'s row."""
    num_blocks = len(allowed)
    rows, vals, keep = [], [], []
    for b, table in enumerate(allowed):  # column: 1 in block b's row, p_s in stage s's row
        size, num_stages = table.shape
        rows.append(
            np.hstack(
                [
                    np.full((size, 1), b),
                    num_blocks + np.arange(num_stages)[None, :].repeat(size, axis=0),
                ]
            )
        )
        vals.append(np.hstack([np.ones((size, 1)), table.astype(float)]))
        keep.append(np.hstack([np.ones((size, 1), dtype=bool), table > 0]))
    rows_a, vals_a, keep_a = np.vstack(rows), np.vstack(vals), np.vstack(keep)
    index, value = rows_a[keep_a], vals_a[keep_a]  # row-major: column by column
    starts = np.concatenate([[0], np.cumsum(keep_a.sum(axis=1))])
    return starts, index, value


def _pattern_lp(tables: list[np.ndarray], supply: np.ndarray, demand: np.ndarray):
    """The pattern LP ``sum_p n[a,p] = supply_a, sum_{a,p} p_s n[a,p] = demand_s, n >= 0``
    over the patterns of ``tables``, as a column-wise ``highspy.HighsLp`` (no objective)."""
    import highspy

    starts, index, value = _matrix(tables)
    num_cols = starts.size - 1
    rhs = np.concatenate([supply, demand]).astype(float)
    lp = highspy.HighsLp()
    lp.num_col_ = num_cols
    lp.num_row_ = rhs.size
    lp.col_cost_ = np.zeros(num_cols)
    lp.col_lower_ = np.zeros(num_cols)
    lp.col_upper_ = np.full(num_cols, highspy.kHighsInf)
    lp.row_lower_ = rhs
    lp.row_upper_ = rhs
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = starts.astype(np.int32)
    lp.a_matrix_.index_ = index.astype(np.int32)
    lp.a_matrix_.value_ = value.astype(float)
    return lp


def _solve(
    highs, allowed: list[np.ndarray], supply: np.ndarray, demand: np.ndarray, deadline: Deadline
) -> np.ndarray | None:
    """Solve the LP ``sum_p n[a,p] = supply_a, sum_{a,p} p_s n[a,p] = demand_s, n >= 0``
    over the ``allowed`` patterns in ``highs``: the column values, or ``None`` if
    infeasible (:class:`_LpCut` at the deadline)."""
    import highspy

    highs.clearModel()
    highs.passModel(_pattern_lp(allowed, supply, demand))
    _run_lp(highs, deadline)
    status = highs.getModelStatus()
    if status == highspy.HighsModelStatus.kInfeasible:
        return None
    if status != highspy.HighsModelStatus.kOptimal:
        raise SolverError(f"pattern LP: HiGHS returned {highs.modelStatusToString(status)}")
    return np.array(highs.getSolution().col_value)


def _solve_integer(
    allowed: list[np.ndarray],
    supply: np.ndarray,
    demand: np.ndarray,
    mip_nodes: int,
    seconds: float,
) -> np.ndarray | None:
    """The integer pattern problem over ``allowed`` in the HiGHS worker process
    (:mod:`ddlsched.solvers.highs_server`, killed after ``seconds``): any feasible
    solution within ``mip_nodes`` nodes (a node limit, not the time, ends it: the
    placement among tied ones does not depend on the load; the time is a safety net).
    The column values, or ``None`` (infeasible, or no solution by the limits)."""
    import highspy

    from ddlsched.solvers.highs_server import MipArrays, solve_mip

    lp = _pattern_lp(allowed, supply, demand)
    lp.integrality_ = [highspy.HighsVarType.kInteger] * lp.num_col_
    options = (*_LP_OPTIONS, ("mip_max_nodes", int(mip_nodes)), ("mip_rel_gap", 1.0))
    run = solve_mip(MipArrays.from_lp(lp, options), max(1e-3, seconds))
    if run.killed or not run.primal_valid:
        return None
    return np.array(run.col_value)


def _certified_infeasible(
    highs,
    allowed: list[np.ndarray],
    supply: np.ndarray,
    demand: np.ndarray,
) -> bool:
    """Check HiGHS's Farkas certificate for the LP just solved (infeasible): a
    ``y`` with ``y b > 0 >= y A`` (or both signs flipped). Any solution ``n >= 0``
    has ``sum n = sum supply``, so ``y b > max(0, max y A) * sum supply`` (with a
    margin) proves infeasibility in floating point without trusting the solver.
    Only the row duals ``y`` are used, checked over the ``allowed`` columns (an
    LP with more columns fixed at 0 gives a ray that is checked the same way)."""
    _, has_ray, ray = highs.getDualRay()
    if not has_ray:
        return False
    y = np.asarray(ray, dtype=float)
    y = y / max(np.abs(y).max(initial=0.0), 1e-300)
    starts, index, value = _matrix(allowed)
    rhs = np.concatenate([supply, demand]).astype(float)
    for sign in (1.0, -1.0):
        yb = sign * float(y @ rhs)
        ya = sign * np.add.reduceat(value * y[index], starts[:-1]) if value.size else np.zeros(0)
        worst = max(0.0, float(ya.max(initial=0.0)))
        if yb > worst * float(supply.sum()) + 1e-9 * (1.0 + np.abs(rhs).sum()):
            return True
    return False


def _warm_lp(
    blocks, values: list[np.ndarray], supply: np.ndarray, demand: np.ndarray, deadline: Deadline
):
    """``feasible(cap)``: is the pattern LP with the patterns of value ``<= cap``
    feasible? One LP with every pattern, the others' columns fixed at 0 per call,
    so each solve starts from the previous basis (:class:`_LpCut` at the deadline)."""
    import highspy

    tables = [table for _, table in blocks]
    every = np.concatenate(values)
    highs = new_highs(_LP_OPTIONS)
    lp = _pattern_lp(tables, supply, demand)
    num_cols = lp.num_col_
    highs.passModel(lp)
    columns = np.arange(num_cols, dtype=np.int32)
    lower = np.zeros(num_cols)

    def feasible(cap: float) -> bool:
        """Solve with the patterns of value ``<= cap``; the solution and the dual
        ray stay readable from ``feasible.highs``."""
        upper = np.where(every <= cap, highspy.kHighsInf, 0.0)
        highs.changeColsBounds(num_cols, columns, lower, upper)
        _run_lp(highs, deadline)
        feasible.calls += 1
        status = highs.getModelStatus()
        if status == highspy.HighsModelStatus.kOptimal:
            return True
        if status == highspy.HighsModelStatus.kInfeasible:
            return False
        raise SolverError(f"pattern LP: HiGHS returned {highs.modelStatusToString(status)}")

    feasible.highs = highs
    feasible.deadline = deadline
    feasible.calls = 0  # LPs solved (not cut by the deadline)
    return feasible


def _fill(
    allowed: list[np.ndarray], servers: np.ndarray, demand: np.ndarray, max_nodes: int
) -> list[np.ndarray] | None:
    """Give each of ``servers[b]`` servers of block ``b`` one allowed pattern so that
    the patterns add up to ``demand`` exactly: per block, the chosen patterns (rows),
    or ``None`` (none exists, or none found within ``max_nodes`` search nodes).

    Depth-first, servers one by one; a server of a block takes a pattern no larger
    (in the block's order) than the previous server of that block took, so each
    multiset of patterns is visited once; patterns larger than the demand left are
    skipped. Deterministic: no time limit."""
    if (servers < 0).any() or (demand < 0).any():
        return None
    order = [b for b, count in enumerate(servers) for _ in range(int(count))]
    if not order:
        return [t[:0] for t in allowed] if not demand.any() else None
    picks: list[int] = []
    nodes = 0

    def descend(depth: int, left: np.ndarray, limit: int) -> bool:
        nonlocal nodes
        if depth == len(order):
            return not left.any()
        nodes += 1
        if nodes > max_nodes:
            return False
        block = order[depth]
        table = allowed[block]
        same = depth > 0 and order[depth - 1] == block
        top = limit if same else table.shape[0] - 1
        fits = np.nonzero((table[: top + 1] <= left).all(axis=1))[0]
        for index in fits[::-1]:
            picks.append(int(index))
            if descend(depth + 1, left - table[index], int(index)):
                return True
            picks.pop()
            if nodes > max_nodes:
                return False
        return False

    if not descend(0, demand.copy(), 0):
        return None
    out = [[] for _ in allowed]
    for block, index in zip(order, picks, strict=True):
        out[block].append(allowed[block][index])
    return [
        np.array(rows, dtype=np.int64).reshape(len(rows), t.shape[1])
        for rows, t in zip(out, allowed, strict=True)
    ]


def _kept(values: list[np.ndarray], cap: float) -> np.ndarray:
    """Columns of the full pattern LP whose pattern value is ``<= cap``."""
    return np.concatenate(values) <= cap


def _split(allowed: list[np.ndarray], counts: np.ndarray) -> list[np.ndarray]:
    """Column values -> per block, an array of ``counts`` (integral, >= 0) of each column."""
    out, col = [], 0
    for table in allowed:
        out.append(counts[col : col + table.shape[0]])
        col += table.shape[0]
    return out


def _expand(allowed: list[np.ndarray], counts: list[np.ndarray]) -> list[np.ndarray]:
    """Per block, each pattern repeated as many times as it is used (rows)."""
    return [np.repeat(t, n, axis=0) for t, n in zip(allowed, counts, strict=True)]


@dataclass(frozen=True)
class CoverSearch:
    """What :func:`cover_search` found: ``bound`` (proven: the pattern LP's
    bound, or only the first value ``>= lower`` if HiGHS's infeasibility
    certificate did not check out), ``chosen`` (per block, the
    patterns of an integer solution, one row per server; ``None`` if none was
    found) and how many LPs and integer programs were solved; ``stopped``: the
    deadline cut the LPs (the bound is then what was proven before them)."""

    bound: float
    chosen: list[np.ndarray] | None
    lp_solves: int
    mip_solves: int
    stopped: bool = False


# Three phases (LP bisection, fill, integer search) share the deadline and what is proven
# so far; the deadline checks took it past 100 lines (to be split into the phases).
# size: three phases sharing the deadline and the proven state
def cover_search(
    tables: list[np.ndarray],
    values: list[np.ndarray],
    supply: np.ndarray,
    demand: np.ndarray,
    *,
    mip_nodes: int = 200,
    dfs_nodes: int = 2_000,
    mip_seconds: float = 2.0,
    max_mips: int = 6,
    budget_s: float = math.inf,
    lower: float = -math.inf,
    direct_nodes: int = 0,
    deadline: Deadline | None = None,
) -> CoverSearch:
    """The pattern LP bound, and an integer pattern solution.

    ``tables[b]``: the patterns of block ``b`` (rows), ``values[b]`` their
    values, ``supply[b]`` the servers of the block, ``demand[s]`` the
    replicas of stage ``s``.

    ``lower``: a proven lower bound on the answer (alpha), or ``-inf``.

    Bound: the smallest pattern value ``T >= lower`` whose pattern LP is
    feasible (module docstring), searched upward from ``lower`` at growing
    steps, then by bisection; every value below ``lower`` is excluded by it,
    so the LP just below ``T`` is solved (and its certificate checked) only
    when ``T`` lies above the first value ``>= lower``. With ``direct_nodes``,
    a depth-first fill of every server with the patterns of value ``<=`` that
    first value is tried before any LP: if it succeeds the bound is met and
    no LP is solved. Placement:
    the LP solution at ``T`` rounded down (less of it on each of three tries)
    and the residual servers and replicas filled by a depth-first search over
    the allowed patterns (:func:`_fill`, at most ``dfs_nodes`` nodes); if none
    of these finds one, the integer pattern problem (within ``mip_nodes`` nodes;
    ``mip_seconds`` is a safety net; no integer solve starts after
    ``budget_s`` seconds), the integer problem by bisection over the larger
    values (at most ``max_mips`` integer solves, the largest value always feasible):
    the first feasible threshold found gives the placement. The placement is
    a heuristic start only: nothing relies on an integer solve's
    "infeasible". The integer solves run in the HiGHS worker process, killed
    at their limit (:func:`_solve_integer`).

    ``deadline`` (the method's): each LP gets ``time_limit`` = what it leaves, and
    no LP starts once it has passed. An LP cut by it proves nothing: the search
    then returns what was proven before (the certified LP bound if the bisection
    had ended, else the first value ``>= lower``), no placement, ``stopped``.
    """
    deadline = deadline or Deadline.unlimited()
    started = time.perf_counter()
    demand = np.asarray(demand, dtype=float)
    supply = np.asarray(supply, dtype=float)
    candidates = np.unique(np.concatenate(values))
    lp_blocks = list(zip(supply, tables, strict=True))

    def solve_integer(index: int):
        allowed = _allowed(lp_blocks, values, float(candidates[index]))
        seconds = min(mip_seconds, budget_s - (time.perf_counter() - started))
        found = _solve_integer(
            allowed, supply, demand, mip_nodes, min(seconds, deadline.remaining_s())
        )
        if found is None:
            return allowed, None
        return allowed, _split(allowed, np.rint(found).astype(np.int64))

    # every value below `lower` is excluded by it: start there
    lo = min(
        int(np.searchsorted(candidates, lower - 1e-9 * max(1.0, abs(lower)))), candidates.size - 1
    )
    first = lo
    if direct_nodes > 0:  # the bound may already be met: fill every server directly
        direct = _fill(
            _allowed(lp_blocks, values, float(candidates[lo])),
            supply.astype(int),
            demand.astype(int),
            direct_nodes,
        )
        if direct is not None:
            return CoverSearch(float(candidates[lo]), direct, 0, 0)
    lp_feasible = _warm_lp(lp_blocks, values, supply, demand, deadline)
    highs = new_highs(_LP_OPTIONS)  # for the certificate's fresh LP
    try:
        bound_index, certified, lp_solves = _lp_bound(
            candidates, lp_blocks, values, supply, demand, lo, lp_feasible, highs
        )
    except _LpCut:  # only `lower` is proven (first: see above)
        return CoverSearch(float(candidates[first]), None, lp_feasible.calls, 0, stopped=True)
    proven = float(candidates[bound_index if certified else first])

    def out_of_budget() -> bool:
        return time.perf_counter() - started > budget_s or deadline.expired()

    # Round the LP solution at the bound down; the residual servers and replicas
    # (a few) go to a small integer problem over the same patterns.
    lp_solves += 1
    cap = float(candidates[bound_index])
    allowed = _allowed(lp_blocks, values, cap)
    try:
        feasible_at_bound = lp_feasible(cap)
    except _LpCut:
        return CoverSearch(proven, None, lp_solves, 0, stopped=True)
    if not feasible_at_bound:
        raise SolverError("pattern LP: infeasible at the bound it was found feasible at")
    solution = np.array(lp_feasible.highs.getSolution().col_value)[_kept(values, cap)]
    chosen = _rounded(allowed, _split(allowed, solution), supply, demand, dfs_nodes)
    mips = 0
    if chosen is None:
        chosen, mips = _bisected_mips(
            solve_integer, bound_index, candidates.size - 1, max_mips, out_of_budget
        )
    return CoverSearch(
        # without a checked certificate only `lower` is proven (first: see above)
        bound=proven,
        chosen=chosen,
        lp_solves=lp_solves,
        mip_solves=mips,
    )


def _lp_bound(
    candidates: np.ndarray,
    lp_blocks,
    values: list[np.ndarray],
    supply: np.ndarray,
    demand: np.ndarray,
    first: int,
    lp_feasible,
    highs,
) -> tuple[int, bool, int]:
    """The index of the smallest candidate value ``>= candidates[first]`` whose pattern LP
    is feasible (galloping up from ``first``, then bisecting), whether the LP just below
    it is certified infeasible, and the LPs solved (:func:`cover_search`)."""
    lo = first
    hi, lp_solves, step, bisect = candidates.size - 1, 0, 1, False  # the largest: all patterns
    while lo < hi:  # gallop up from `lower` (often tight), then bisect
        probe = (lo + hi) // 2 if bisect else min(lo + step - 1, hi - 1)
        step *= 2
        lp_solves += 1
        if lp_feasible(float(candidates[probe])):
            hi, bisect = probe, True
        else:
            lo = probe + 1
    bound_index, certified = lo, True
    if bound_index > first:  # certify "the LP just below the bound is infeasible"
        allowed = _allowed(lp_blocks, values, float(candidates[bound_index - 1]))
        lp_solves += 1
        below = float(candidates[bound_index - 1])
        certified = not lp_feasible(below) and (
            _certified_infeasible(lp_feasible.highs, allowed, supply, demand)
            or (  # a fresh LP with the allowed columns only, whose ray may check out
                _solve(highs, allowed, supply, demand, lp_feasible.deadline) is None
                and _certified_infeasible(highs, allowed, supply, demand)
            )
        )
        if not certified:
            log.warning("pattern LP: HiGHS's infeasibility certificate does not check out")
    return bound_index, certified, lp_solves


def _rounded(
    allowed: list[np.ndarray],
    fractional: list[np.ndarray],
    supply: np.ndarray,
    demand: np.ndarray,
    dfs_nodes: int,
) -> list[np.ndarray] | None:
    """The LP solution rounded down (less of it on each of three tries), the residual
    servers and replicas filled by :func:`_fill`; ``None`` when no try fills them."""
    for slack in (0, 1, 2):  # keep less of the LP solution each time: a larger residual
        base = [np.maximum(np.floor(n + 1e-9).astype(np.int64) - slack, 0) for n in fractional]
        used = np.array([n.sum() for n in base], dtype=int)
        placed = sum((t * n[:, None]).sum(axis=0) for t, n in zip(allowed, base, strict=True))
        left = (supply - used).astype(int)
        rest = _fill(allowed, left, (demand - placed).astype(int), dfs_nodes)
        if rest is not None:
            return [
                np.vstack([np.repeat(t, b, axis=0), r]) if len(r) else np.repeat(t, b, axis=0)
                for t, b, r in zip(allowed, base, rest, strict=True)
            ]
        if not any(n.any() for n in base):
            break
    return None


def _bisected_mips(
    solve, lo: int, hi: int, max_mips: int, out_of_budget
) -> tuple[list[np.ndarray] | None, int]:
    """Integer pattern problems by bisection over the candidate values ``lo..hi``
    (``solve(index)``), at most ``max_mips`` of them: the first feasible
    threshold's placement, improved below while solves remain; and the solves made."""
    chosen, mips = None, 0
    while chosen is None and mips < max_mips and lo <= hi and not out_of_budget():
        mid = (lo + hi) // 2
        mips += 1
        allowed, found = solve(mid)
        if found is None:
            lo = mid + 1
            continue
        chosen = _expand(allowed, found)
        while mips < max_mips and lo < mid and not out_of_budget():  # a better one below
            probe = (lo + mid - 1) // 2
            mips += 1
            allowed, better = solve(probe)
            if better is None:
                lo = probe + 1
            else:
                chosen, mid = _expand(allowed, better), probe
    return chosen, mips
