"""Algorithm 4 of PD-ORS: ``theta(t, v)``, the cost of one job's work in one slot.

Paper: Yu et al., IEEE TNSE 2022 (reading notes, seed 002), Algorithm 4,
Problem (23), rounding (27)-(28); spec ``shared/specs/dmlrs.md`` ("PD-ORS",
"``G_delta``", "Baselines: oasis", "Rounding study"). No solver is imported
here: the LP and ILP of Problem (23) come through the :class:`SlotSolvers`
protocol (implemented by :class:`ddlsched.solvers.slot_lp.HighsSlotSolvers`).

One slot's data (:class:`SlotData`): worker and PS prices ``pw[h] = sum_r
p[h, r, t] alpha[r]``, ``ps[h] = sum_r p[h, r, t] beta[r]``, residual
capacities ``C^[h, r]``, ``gamma``, ``F``.

* Internal case (:class:`InternalCase`, Fact 1 at ``b_int``): ``s =
  ceil(D / gamma)`` PSs and ``w = gamma s`` workers on one machine,
  requiring ``w <= F`` (Eq. 4). Machines are sorted ONCE by the key ``sum_r
  p[h, r, t] (alpha[r] gamma + beta[r]) = gamma pw[h] + ps[h]`` ascending
  (ties: lower index); the first machine where ``s (alpha[r] gamma +
  beta[r]) <= C^[h, r]`` for every ``r`` is the cheapest feasible one, cost
  ``s`` times its key. Each ``D`` is answered in ``O(log H)`` from the
  prefix maximum of the largest ``s`` each machine can hold (exactly the
  first feasible machine of the sorted scan).
* External case (``b_ext``): the LP relaxation of Problem (23) with the PS
  row, scaled by ``G_delta`` and rounded (:func:`round_solution`), or the
  exact ILP. ``g_delta(D, delta) = 1 + (ln(1/delta) + sqrt(ln(1/delta)^2 +
  2 D ln(1/delta))) / D`` (ours: the Chernoff lower tail for the covering
  row (26); exactly 1 at ``delta = 1``); ``scale = "none"`` takes ``G = 1``.
  Each variable rounds up with probability equal to the fractional part of
  ``G x^`` (Eqs. 27-28). Draw rule (ours, spec): ``S`` draws, keep the
  cheapest feasible one (ties: the first); if none is feasible draw on, up
  to ``10 S`` in all, and stop at the first feasible one; if still none,
  the case is infeasible. All draws of a batch are one array operation (the
  continuation batch of ``9 S`` draws is drawn at once and cut at its first
  feasible draw: the same distribution as drawing one at a time).
  Statistics per call (:class:`RoundingStats`): ``G_delta``, draws, the
  share of draws meeting (26) and the share breaking each packing row
  ((24) on any machine and resource, (25), the PS row), feasible or not.
* OASiS (:class:`OasisCase`, spec "Baselines", ours): workers and PSs never
  share a machine; ``D`` workers one at a time on the machine with the
  lowest ``pw[h]`` that still fits (ties: lower index), then ``ceil(D /
  gamma)`` PSs one at a time on the lowest-``ps[h]`` machine holding none of
  the job's workers; infeasible if either step fails or ``D > F``. Prices do
  not change within a slot, so one at a time is filling machines in price
  order.

Ours: LP values within ``1e-9`` of an integer are snapped to it before
scaling (solver noise), and values below ``1e-9`` are 0; the capacity
check of every candidate uses the slack of :class:`SlotData` (PD-ORS
passes a tighter one than the ``dmlrs_slot`` evaluator, so that the
slacks of many jobs on one machine stay within the ``dmlrs`` evaluator's).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from ddlsched.errors import DdlschedError
from ddlsched.problems.dmlrs_slot import SlotAllocation, SlotInstance, capacity_slack

__all__ = [
    "SCALES",
    "Draws",
    "InternalCase",
    "OasisCase",
    "RoundingStats",
    "SlotChoice",
    "SlotData",
    "SlotLp",
    "SlotSolution",
    "SlotSolvers",
    "draw_roundings",
    "g_delta",
    "lp_lower_bound",
    "round_solution",
]

SCALES = ("chernoff", "none")
#: LP values closer than this to an integer are snapped to it (solver noise).
SNAP = 1e-9
#: The continuation rule: at most this many times ``S`` draws in all.
MAX_DRAWS_FACTOR = 10


# --------------------------------------------------------------------------- protocol


class SlotSolution(Protocol):
    """An optimal solution of Problem (23) or its relaxation."""

    @property
    def w(self) -> np.ndarray: ...

    @property
    def s(self) -> np.ndarray: ...

    @property
    def objective(self) -> float: ...


class SlotLp(Protocol):
    """The LP relaxation of one (job, slot), loaded once and re-solved per ``D``."""

    def solve(self, demand: float, time_limit_s: float = math.inf) -> SlotSolution | None:
        """The optimum for covering demand ``demand``; ``None`` when infeasible."""
        ...


class SlotSolvers(Protocol):
    """What the wiring passes in: LP sessions and the exact ILP of Problem (23)."""

    def lp(
        self,
        worker_price: np.ndarray,
        ps_price: np.ndarray,
        alpha: np.ndarray,
        beta: np.ndarray,
        residual: np.ndarray,
        gamma: int,
        max_workers: int,
    ) -> SlotLp:
        """Load the LP relaxation of one (job, slot)."""
        ...

    def ilp(
        self,
        worker_price: np.ndarray,
        ps_price: np.ndarray,
        alpha: np.ndarray,
        beta: np.ndarray,
        residual: np.ndarray,
        gamma: int,
        max_workers: int,
        demand: float,
        time_limit_s: float = math.inf,
    ) -> SlotSolution | None:
        """The exact ILP optimum (integer ``w, s``); ``None`` when infeasible."""
        ...


# --------------------------------------------------------------------------- data


@dataclass(frozen=True, eq=False)
class SlotData:
    """One (job, slot) of Problem (23) without ``D`` (module docstring).

    ``slack[h, r]`` is the absolute slack allowed on (24) (floating point only).
    """

    worker_price: np.ndarray  # pw[h], (H,)
    ps_price: np.ndarray  # ps[h], (H,)
    alpha: np.ndarray  # (R,)
    beta: np.ndarray  # (R,)
    residual: np.ndarray  # C^[h, r], (H, R)
    gamma: int
    max_workers: int  # F
    slack: np.ndarray  # (H, R)

    @property
    def num_machines(self) -> int:
        """``H``."""
        return int(self.worker_price.size)

    @classmethod
    def from_instance(cls, instance: SlotInstance) -> SlotData:
        """The data of a ``dmlrs_slot`` instance, with its evaluator's slack."""
        return cls(
            worker_price=instance.pw,
            ps_price=instance.pps,
            alpha=instance.alpha,
            beta=instance.beta,
            residual=instance.cap,
            gamma=instance.gamma,
            max_workers=instance.global_batch,
            slack=capacity_slack(instance.cap),
        )

    def fits(self, w: np.ndarray, s: np.ndarray, machines: np.ndarray | None = None) -> np.ndarray:
        """Whether (24) holds for counts ``w, s`` (last axis: ``machines``, default all).

        Returns a boolean array over the leading axes.
        """
        res = self.residual if machines is None else self.residual[machines]
        slack = self.slack if machines is None else self.slack[machines]
        load = w[..., None] * self.alpha + s[..., None] * self.beta
        return np.all(load <= res + slack, axis=(-2, -1))


@dataclass(frozen=True, eq=False)
class SlotChoice:
    """An integral allocation of one slot: ``workers[k]``, ``ps[k]`` on ``machines[k]``.

    ``case`` is ``internal``, ``external`` (rounded LP), ``ilp`` or ``oasis``.
    """

    machines: np.ndarray
    workers: np.ndarray
    ps: np.ndarray
    cost: float
    case: str

    def to_allocation(self, num_machines: int) -> SlotAllocation:
        """The dense :class:`~ddlsched.problems.dmlrs_slot.SlotAllocation`."""
        w = [0] * num_machines
        s = [0] * num_machines
        for h, a, b in zip(self.machines, self.workers, self.ps, strict=True):
            w[int(h)] += int(a)
            s[int(h)] += int(b)
        return SlotAllocation(tuple(w), tuple(s))


def _cost(data: SlotData, machines: np.ndarray, w: np.ndarray, s: np.ndarray) -> float:
    return float(data.worker_price[machines] @ w + data.ps_price[machines] @ s)


def _max_units(res: np.ndarray, per_unit: np.ndarray, cap: int) -> np.ndarray:
    """Per machine, the largest integer ``n <= cap`` with ``n per_unit[r] <= res[h, r]``, all r.

    ``res`` already includes the slack; a float ``floor`` is corrected downward
    where it overshoots, so the result passes the same check as :meth:`SlotData.fits`.
    """
    used = per_unit > 0
    if not used.any():
        return np.full(res.shape[0], cap, dtype=np.int64)
    ratio = np.min(res[:, used] / per_unit[used], axis=1)
    n = np.floor(np.minimum(np.maximum(ratio, 0.0), float(cap))).astype(np.int64)
    over = np.any(n[:, None] * per_unit[used] > res[:, used], axis=1)
    n[over] -= 1
    return np.maximum(n, 0)


# --------------------------------------------------------------------------- internal case


class InternalCase:
    """Algorithm 4's internal case for one (job, slot); :meth:`solve` per ``D`` (at ``b_int``)."""

    def __init__(self, data: SlotData):
        self.data = data
        # key_h = sum_r p[h, r, t] (alpha[r] gamma + beta[r]) = gamma pw[h] + ps[h]
        self.key = data.gamma * data.worker_price + data.ps_price
        self.order = np.argsort(self.key, kind="stable")  # sorted once (ties: lower index)
        bundle = data.alpha * data.gamma + data.beta
        cap = -(-data.max_workers // data.gamma)  # s never exceeds ceil(F / gamma)
        s_max = _max_units(data.residual + data.slack, bundle, cap)
        self._prefix_max = np.maximum.accumulate(s_max[self.order])

    def solve(self, demand: int) -> SlotChoice | None:
        """The cheapest feasible machine for ``D = demand`` workers, or ``None``."""
        data = self.data
        s = -(-int(demand) // data.gamma)
        w = data.gamma * s
        if w > data.max_workers:  # Eq. 4
            return None
        pos = int(np.searchsorted(self._prefix_max, s, side="left"))
        if pos >= self._prefix_max.size:
            return None
        h = int(self.order[pos])
        machines = np.array([h])
        workers, ps = np.array([w]), np.array([s])
        return SlotChoice(machines, workers, ps, _cost(data, machines, workers, ps), "internal")


# --------------------------------------------------------------------------- OASiS


class OasisCase:
    """OASiS's slot subroutine (ours, module docstring); :meth:`solve` per ``D`` (at ``b_ext``)."""

    def __init__(self, data: SlotData):
        self.data = data
        room = data.residual + data.slack
        self.order_w = np.argsort(data.worker_price, kind="stable")
        self.order_s = np.argsort(data.ps_price, kind="stable")
        cap = data.max_workers
        self.cap_w = _max_units(room, data.alpha, cap)  # workers alone on h
        self.cap_s = _max_units(room, data.beta, cap)  # PSs alone on h

    @staticmethod
    def _fill(
        order: np.ndarray, cap: np.ndarray, need: int
    ) -> tuple[np.ndarray, np.ndarray] | None:
        caps = cap[order]
        cum = np.cumsum(caps)
        if cum.size == 0 or cum[-1] < need:
            return None
        last = int(np.searchsorted(cum, need, side="left"))
        take = caps[: last + 1].copy()
        take[-1] -= int(cum[last]) - need
        keep = take > 0
        return order[: last + 1][keep], take[keep]

    def solve(self, demand: int) -> SlotChoice | None:
        """``D = demand`` workers then ``ceil(D / gamma)`` PSs, never on a common machine."""
        data = self.data
        demand = int(demand)
        if demand > data.max_workers:
            return None
        workers = self._fill(self.order_w, self.cap_w, demand)
        if workers is None:
            return None
        w_machines, w_counts = workers
        free = np.ones(data.num_machines, dtype=bool)
        free[w_machines] = False
        order_s = self.order_s[free[self.order_s]]
        servers = self._fill(order_s, self.cap_s, -(-demand // data.gamma))
        if servers is None:
            return None
        s_machines, s_counts = servers
        machines = np.concatenate([w_machines, s_machines])
        w = np.concatenate([w_counts, np.zeros(s_machines.size, dtype=np.int64)])
        s = np.concatenate([np.zeros(w_machines.size, dtype=np.int64), s_counts])
        return SlotChoice(machines, w, s, _cost(data, machines, w, s), "oasis")


# --------------------------------------------------------------------------- rounding


def g_delta(demand: float, delta: float) -> float:
    """``G_delta = 1 + (ln(1/delta) + sqrt(ln(1/delta)^2 + 2 D ln(1/delta))) / D`` (ours).

    The smallest ``G`` with ``(G - 1)^2 D >= 2 ln(1/delta) G``: by the
    Chernoff lower tail the rounded covering row (26) then fails with
    probability at most ``delta``. Exactly 1 at ``delta = 1``.
    """
    if not (isinstance(delta, (int, float)) and 0.0 < delta <= 1.0):
        raise DdlschedError(f"delta must be in (0, 1], got {delta!r}")
    if not demand > 0:
        raise DdlschedError(f"G_delta: the demand D must be > 0, got {demand!r}")
    ell = math.log(1.0 / delta)
    return 1.0 + (ell + math.sqrt(ell * ell + 2.0 * demand * ell)) / demand


@dataclass(frozen=True)
class RoundingStats:
    """One rounding call: ``G_delta``, draws made, and the shares of those draws.

    ``covering_share``: meeting (26); ``capacity_break_share``: breaking (24)
    on some machine and resource; ``worker_cap_break_share``: breaking (25);
    ``ps_break_share``: breaking the PS row; ``feasible_draws``: draws meeting
    every row.
    """

    g_delta: float
    draws: int
    covering_share: float
    capacity_break_share: float
    worker_cap_break_share: float
    ps_break_share: float
    feasible_draws: int
    feasible: bool


def _snap(x: np.ndarray) -> np.ndarray:
    x = np.where(x < SNAP, 0.0, x)
    nearest = np.round(x)
    return np.where(np.abs(x - nearest) < SNAP, nearest, x)


@dataclass(frozen=True, eq=False)
class Draws:
    """``n`` independent roundings of one scaled LP point, on its support ``machines``.

    ``w[d, k]``, ``s[d, k]``: draw ``d``'s counts on ``machines[k]``; per draw
    the rows met: ``cover`` (26), ``cap_ok`` (24, every machine and resource),
    ``f_ok`` (25), ``ps_ok`` (PS row); ``feasible`` (all four) and ``cost``.
    """

    machines: np.ndarray
    w: np.ndarray
    s: np.ndarray
    cover: np.ndarray
    cap_ok: np.ndarray
    f_ok: np.ndarray
    ps_ok: np.ndarray

    @property
    def feasible(self) -> np.ndarray:
        """Per draw: every row met."""
        return self.cover & self.cap_ok & self.f_ok & self.ps_ok

    def head(self, n: int) -> Draws:
        """The first ``n`` draws."""
        return Draws(
            self.machines,
            self.w[:n],
            self.s[:n],
            self.cover[:n],
            self.cap_ok[:n],
            self.f_ok[:n],
            self.ps_ok[:n],
        )

    def __add__(self, other: Draws) -> Draws:
        """The draws of ``self`` followed by those of ``other`` (same support)."""
        return Draws(
            self.machines,
            *(
                np.concatenate([getattr(self, name), getattr(other, name)])
                for name in ("w", "s", "cover", "cap_ok", "f_ok", "ps_ok")
            ),
        )


def draw_roundings(
    data: SlotData,
    w_hat: np.ndarray,
    s_hat: np.ndarray,
    demand: int,
    scale_factor: float,
    rng: np.random.Generator,
    n: int,
) -> Draws:
    """``n`` draws of Eqs. 27-28 at ``w' = G w^``, ``s' = G s^`` (``G = scale_factor``), at once.

    Each variable rounds up with probability equal to the fractional part of
    its scaled value, independently; LP values are snapped first (module
    docstring). Zero variables stay 0, so only the LP's support is drawn.
    """
    w_hat = _snap(np.asarray(w_hat, dtype=float))
    s_hat = _snap(np.asarray(s_hat, dtype=float))
    machines = np.flatnonzero((w_hat > 0) | (s_hat > 0))
    w_scaled, s_scaled = scale_factor * w_hat[machines], scale_factor * s_hat[machines]
    w_floor, s_floor = np.floor(w_scaled), np.floor(s_scaled)
    u = rng.random((n, 2, machines.size))
    w = w_floor + (u[:, 0] < w_scaled - w_floor)  # up with probability = fractional part
    s = s_floor + (u[:, 1] < s_scaled - s_floor)
    total_w, total_s = w.sum(axis=1), s.sum(axis=1)
    load = w[..., None] * data.alpha + s[..., None] * data.beta
    room = data.residual[machines] + data.slack[machines]
    return Draws(
        machines=machines,
        w=w,
        s=s,
        cover=total_w >= demand,  # (26)
        cap_ok=np.all(load <= room, axis=(1, 2)),  # (24)
        f_ok=total_w <= data.max_workers,  # (25)
        ps_ok=data.gamma * total_s >= total_w,  # PS row
    )


def round_solution(
    data: SlotData,
    w_hat: np.ndarray,
    s_hat: np.ndarray,
    demand: int,
    rng: np.random.Generator,
    *,
    delta: float = 0.1,
    draws: int = 10,
    scale: str = "chernoff",
) -> tuple[SlotChoice | None, RoundingStats]:
    """Scale the LP optimum by ``G_delta`` and round it with the draw rule (module docstring).

    Returns the chosen feasible draw (``None`` if no draw was feasible) and
    the call's statistics. ``draws`` is ``S``.
    """
    if scale not in SCALES:
        raise DdlschedError(f"scale must be one of {', '.join(SCALES)}, got {scale!r}")
    if isinstance(draws, bool) or not isinstance(draws, int) or draws < 1:
        raise DdlschedError(f"S must be an integer >= 1, got {draws!r}")
    G = g_delta(demand, delta) if scale == "chernoff" else 1.0
    made = draw_roundings(data, w_hat, s_hat, demand, G, rng, draws)
    pick: int | None = None
    feasible = made.feasible
    if feasible.any():
        pw, ps = data.worker_price[made.machines], data.ps_price[made.machines]
        cost = np.where(feasible, made.w @ pw + made.s @ ps, np.inf)
        pick = int(np.argmin(cost))  # the cheapest feasible draw (ties: the first)
    else:
        more = draw_roundings(data, w_hat, s_hat, demand, G, rng, (MAX_DRAWS_FACTOR - 1) * draws)
        feasible = more.feasible
        if feasible.any():  # stop at the first feasible draw
            used = int(np.argmax(feasible)) + 1
            pick = draws + used - 1
            made = made + more.head(used)
        else:
            made = made + more
    n = int(made.cover.size)
    stats = RoundingStats(
        g_delta=G,
        draws=n,
        covering_share=float(made.cover.sum()) / n,
        capacity_break_share=float((~made.cap_ok).sum()) / n,
        worker_cap_break_share=float((~made.f_ok).sum()) / n,
        ps_break_share=float((~made.ps_ok).sum()) / n,
        feasible_draws=int(made.feasible.sum()),
        feasible=pick is not None,
    )
    if pick is None:
        return None, stats
    w_pick = made.w[pick].astype(np.int64)
    s_pick = made.s[pick].astype(np.int64)
    keep = (w_pick > 0) | (s_pick > 0)
    machines = made.machines[keep]
    w_pick, s_pick = w_pick[keep], s_pick[keep]
    return SlotChoice(
        machines, w_pick, s_pick, _cost(data, machines, w_pick, s_pick), "external"
    ), stats


def lp_lower_bound(data: SlotData, demand: int) -> float:
    """A lower bound on the LP (and ILP) optimum of Problem (23) for ``D = demand``.

    Every feasible point has ``sum w >= D`` and ``sum s >= D / gamma``, so its
    cost is at least ``D min_h pw[h] + (D / gamma) min_h ps[h]``.
    """
    return float(demand * data.worker_price.min() + demand / data.gamma * data.ps_price.min())
