"""Family ``dmlrs``: one machine's ``(workers, PSs)`` set for one job, its bounds and integer hull.

Spec ``docs/families/dmlrs.md``, ``exact`` and "Bounds"; the
capacities of Eq. 5, the worker cap of Eq. 4 and the PS rule for one job on
one machine ``{(w, s) in Z^2_+: alpha w + beta s <= C, w <= F, s <=
ceil(F / gamma)}``. Used by the compact MILP
(:mod:`ddlsched.models.dmlrs_milp`: the variable bounds of
:func:`machine_bounds`, the symmetry rows of :func:`identical_pairs` and
:func:`load_weights`) and by the direct pricing solver
(:mod:`ddlsched.solvers.dmlrs_pricing`: the external mode aggregated by
machine classes over the facets of the integer hull ``P_I``,
:func:`hull_facets`, decoded by :func:`split_totals`). Every lattice polygon
has the integer decomposition property (a unimodular triangulation), so
every integer point of ``n P_I`` is a sum of ``n`` integer points of ``P_I``,
i.e. a placement on ``n`` machines; a capacity is met up to a relative and
absolute slack of ``1e-9`` (floating point only).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ddlsched.errors import SolverError

__all__ = [
    "MachineHull",
    "dual_feasible",
    "hull_facets",
    "identical_pairs",
    "load_weights",
    "machine_bounds",
    "split_totals",
]

_EPS = 1e-9


def _fits(capacity: np.ndarray, alpha: np.ndarray, beta: np.ndarray, w: int, s: int) -> bool:
    return bool(np.all(alpha * w + beta * s <= capacity * (1 + _EPS) + _EPS))


def _max_count(capacity: np.ndarray, demand: np.ndarray, cap: int) -> int:
    used = demand > 0
    if not used.any():
        return cap
    return int(min(cap, math.floor(float(np.min(capacity[used] / demand[used])) + _EPS)))


def machine_bounds(
    capacity: np.ndarray, alpha: np.ndarray, beta: np.ndarray, worker_cap: int, gamma: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per machine ``(UwI, UsI, UwE, UsE)``: the most workers and PSs of one job on it.

    Internal: the largest ``w <= F`` with ``w`` workers and ``ceil(w / gamma)``
    PSs fitting together, and that many PSs. External: the most workers that
    fit alone (at most ``F``) and the most PSs that fit alone (at most
    ``ceil(F / gamma)``, enough for ``F`` workers).
    """
    num_h = capacity.shape[0]
    ps_cap = -(-worker_cap // gamma)
    uwi = np.zeros(num_h, dtype=np.int64)
    usi = np.zeros(num_h, dtype=np.int64)
    uwe = np.zeros(num_h, dtype=np.int64)
    use = np.zeros(num_h, dtype=np.int64)
    for h in range(num_h):
        cap = capacity[h]
        w = _max_count(cap, alpha, worker_cap)
        while w > 0 and not _fits(cap, alpha, beta, w, -(-w // gamma)):
            w -= 1
        uwi[h], usi[h] = w, -(-w // gamma)
        uwe[h] = _max_count(cap, alpha, worker_cap)
        use[h] = _max_count(cap, beta, ps_cap)
    return uwi, usi, uwe, use


def identical_pairs(capacity: np.ndarray) -> list[int]:
    """Machines ``h`` with the same capacity as machine ``h + 1`` (symmetry rows)."""
    return [h for h in range(capacity.shape[0] - 1) if np.array_equal(capacity[h], capacity[h + 1])]


def load_weights(
    capacity_row: np.ndarray, alpha: np.ndarray, beta: np.ndarray
) -> tuple[float, float]:
    """``(sum_r alpha[r] / C[r], sum_r beta[r] / C[r])``: a worker's and a PS's load."""
    return float(np.sum(alpha / capacity_row)), float(np.sum(beta / capacity_row))


def _cross(o, a, b) -> int:
    return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])


@dataclass(frozen=True, eq=False)
class MachineHull:
    """One machine's integer points ``P ∩ Z^2`` and the facets ``a . (w, s) <= b`` of ``P_I``."""

    points: np.ndarray  # (m, 2) integer points, (0, 0) included
    normals: np.ndarray  # (f, 2)
    rhs: np.ndarray  # (f,)
    max_w: int
    max_s: int

    def contains(self, totals: np.ndarray, copies: int) -> np.ndarray:
        """Which rows of ``totals`` (``(m, 2)``) lie in ``copies * P_I``."""
        if copies <= 0:
            return np.all(totals == 0, axis=1)
        ok = np.all(totals >= 0, axis=1)
        if len(self.rhs):
            ok &= np.all(totals @ self.normals.T <= copies * self.rhs + 1e-9, axis=1)
        return ok


def hull_facets(
    capacity_row: np.ndarray, alpha: np.ndarray, beta: np.ndarray, worker_cap: int, gamma: int
) -> MachineHull:
    """The integer hull ``P_I`` of one machine's ``(w, s)`` set (module docstring).

    Its facets are integer inequalities ``a . (w, s) <= b`` (besides ``w, s >=
    0``); a degenerate hull (a segment on an axis, or the origin) is given by
    ``max_w``/``max_s`` and the facets ``w <= max_w``, ``s <= max_s``, ``w <= 0``
    or ``s <= 0`` that describe it.
    """
    max_w = _max_count(capacity_row, alpha, worker_cap)
    max_s = _max_count(capacity_row, beta, -(-worker_cap // gamma))
    pts = [
        (w, s)
        for w in range(max_w + 1)
        for s in range(max_s + 1)
        if _fits(capacity_row, alpha, beta, w, s)
    ]
    points = np.asarray(pts, dtype=np.int64).reshape(-1, 2)
    normals: list[tuple[int, int]] = [(1, 0), (0, 1)]
    rhs: list[int] = [max_w, max_s]
    if max_w > 0 and max_s > 0:
        # Andrew's monotone chain: the upper-right boundary of a down-closed point set
        ordered = sorted(pts)
        lower: list[tuple[int, int]] = []
        for p in ordered:
            while len(lower) >= 2 and _cross(lower[-2], lower[-1], p) <= 0:
                lower.pop()
            lower.append(p)
        upper: list[tuple[int, int]] = []
        for p in reversed(ordered):
            while len(upper) >= 2 and _cross(upper[-2], upper[-1], p) <= 0:
                upper.pop()
            upper.append(p)
        hull = lower[:-1] + upper[:-1]  # counter-clockwise
        for j, p in enumerate(hull):
            q = hull[(j + 1) % len(hull)]
            a = (q[1] - p[1], p[0] - q[0])  # outward normal of edge p -> q (counter-clockwise)
            g = math.gcd(abs(a[0]), abs(a[1])) or 1
            a = (a[0] // g, a[1] // g)
            b = a[0] * p[0] + a[1] * p[1]
            if a[0] >= 0 and a[1] >= 0 and (a[0] > 0 or a[1] > 0):
                normals.append(a)
                rhs.append(b)
    return MachineHull(
        points, np.asarray(normals, dtype=float), np.asarray(rhs, dtype=float), max_w, max_s
    )


def split_totals(hull: MachineHull, copies: int, workers: int, ps: int) -> list[tuple[int, int]]:
    """``copies`` integer points of ``P_I`` summing to ``(workers, ps)`` (module docstring).

    Greedy: at each step the first point (most workers, then most PSs) whose
    remainder still lies in ``(copies - 1) P_I``; the integer decomposition
    property of lattice polygons guarantees one exists. Zero points are
    dropped from the answer.
    """
    order = np.lexsort((-hull.points[:, 1], -hull.points[:, 0]))
    points = hull.points[order]
    left = np.array([workers, ps], dtype=np.int64)
    out: list[tuple[int, int]] = []
    for used in range(copies):
        if not left.any():
            break
        rest = left[None, :] - points
        ok = np.flatnonzero(hull.contains(rest, copies - used - 1))
        if not len(ok):
            raise SolverError(
                f"dmlrs pricing: ({workers}, {ps}) does not split over {copies} machines"
            )
        p = points[ok[0]]
        out.append((int(p[0]), int(p[1])))
        left = left - p
    if left.any():
        raise SolverError(f"dmlrs pricing: ({workers}, {ps}) does not split over {copies} machines")
    return [p for p in out if p != (0, 0)]


def dual_feasible(x: np.ndarray, k: int) -> np.ndarray:
    """Fekete and Schepers' dual feasible function ``f_k(x)`` ("New classes of fast lower
    bounds for bin packing problems", Math. Program. 91:11-31, 2001) of item sizes ``x`` as
    shares of a machine's capacity: ``x`` where ``(k + 1) x`` is an integer (up to ``1e-9``),
    else ``floor((k + 1) x) / k``. Items that fit one machine keep ``sum f_k <= 1``: the
    packing rows of ``ub_capacity`` and of ``exact``'s ``packing`` switch."""
    scaled = (k + 1) * np.asarray(x, dtype=float)
    whole = np.abs(scaled - np.round(scaled)) <= 1e-9
    return np.where(whole, x, np.floor(scaled) / k)
