"""Algorithm 4 of PD-ORS: the slot data, the internal case and OASiS's slot subroutine.

Paper: Yu et al., IEEE TNSE 2022 (reading notes of the paper), Algorithm 4,
Problem (23); spec ``docs/families/dmlrs.md`` (PD-ORS's Algorithm 4 with
the revised internal case, OASiS, and the rounding study of family
``dmlrs_slot``). The external
case's rounding is :mod:`ddlsched.heuristics.dmlrs_rounding`. No solver is
imported here: the LP and ILP of Problem (23) come through the
:class:`SlotSolvers` protocol (implemented by
:class:`ddlsched.solvers.dmlrs_slot_lp.HighsSlotSolvers`).

One slot's data (:class:`SlotData`): worker and PS prices ``pw[h] = sum_r
p[h, r, t] alpha[r]``, ``ps[h] = sum_r p[h, r, t] beta[r]``, residual
capacities ``C^[h, r]``, ``gamma``, ``F``.

* Internal case (:class:`InternalCase`, Fact 1 at ``b_int``), two rules
  (parameter ``internal``):

  - ``demand`` (default, the revised spec; the notes' step 3 ``s = D /
    gamma``, ``w = gamma s``, i.e. exactly the ``D`` workers the slot
    needs): ``w = D``, ``s = ceil(D / gamma)``, requiring ``D <= F`` (Eq. 4);
    among the machines where ``w alpha[r] + s beta[r] <= C^[h, r]`` for every
    ``r``, the cheapest by ``pw[h] D + ps[h] s`` (ties: lower index). All
    machines are priced at once per ``D`` (``O(H R)``).
  - ``gamma_multiple`` (the first spec, kept as the ablation): ``s =
    ceil(D / gamma)`` PSs and ``w = gamma s`` workers, requiring ``w <= F``.
    Machines are sorted ONCE by the key ``gamma pw[h] + ps[h]`` ascending
    (ties: lower index); the first machine where ``s (alpha[r] gamma +
    beta[r]) <= C^[h, r]`` for every ``r`` is the cheapest feasible one, cost
    ``s`` times its key. Each ``D`` is answered in ``O(log H)`` from the
    prefix maximum of the largest ``s`` each machine can hold.

* OASiS (:class:`OasisCase`, spec "Baselines", ours): workers and PSs never
  share a machine; ``D`` workers one at a time on the machine with the
  lowest ``pw[h]`` that still fits (ties: lower index), then ``ceil(D /
  gamma)`` PSs one at a time on the lowest-``ps[h]`` machine holding none of
  the job's workers; infeasible if either step fails or ``D > F``. Prices do
  not change within a slot, so one at a time is filling machines in price
  order.

Ours: the capacity check of every candidate uses the slack of
:class:`SlotData` (PD-ORS passes a tighter one than the ``dmlrs_slot``
evaluator, so that the slacks of many jobs on one machine stay within the
``dmlrs`` evaluator's).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from ddlsched.errors import DdlschedError
from ddlsched.problems.dmlrs_slot import SlotAllocation, SlotInstance, capacity_slack

__all__ = [
    "INTERNAL_RULES",
    "InternalCase",
    "OasisCase",
    "SlotChoice",
    "SlotData",
    "SlotLp",
    "SlotSolution",
    "SlotSolvers",
    "lp_lower_bound",
    "max_units",
]

#: The internal case's rules (module docstring): ``demand`` (revised spec), ``gamma_multiple``.
INTERNAL_RULES = ("demand", "gamma_multiple")


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

    def solve_shrunk(
        self,
        demand: float,
        factor: float,
        worker_cap: np.ndarray,
        ps_cap: np.ndarray,
        time_limit_s: float = math.inf,
    ) -> SlotSolution | None:
        """The shrunk LP (:mod:`ddlsched.heuristics.dmlrs_rounding`); ``None`` if infeasible."""
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


def max_units(res: np.ndarray, per_unit: np.ndarray, cap: int) -> np.ndarray:
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
    """Algorithm 4's internal case for one (job, slot); :meth:`solve` per ``D`` (at ``b_int``).

    ``rule`` is ``demand`` (``w = D``, the revised spec) or ``gamma_multiple``
    (``w = gamma ceil(D / gamma)``, the first spec); module docstring.
    """

    def __init__(self, data: SlotData, rule: str = "demand"):
        if rule not in INTERNAL_RULES:
            raise DdlschedError(
                f"internal must be one of {', '.join(INTERNAL_RULES)}, got {rule!r}"
            )
        self.data, self.rule = data, rule
        self._room = data.residual + data.slack
        if rule == "gamma_multiple":
            # key_h = sum_r p[h, r, t] (alpha[r] gamma + beta[r]) = gamma pw[h] + ps[h]
            self.key = data.gamma * data.worker_price + data.ps_price
            self.order = np.argsort(self.key, kind="stable")  # sorted once (ties: lower index)
            bundle = data.alpha * data.gamma + data.beta
            cap = -(-data.max_workers // data.gamma)  # s never exceeds ceil(F / gamma)
            s_max = max_units(self._room, bundle, cap)
            self._prefix_max = np.maximum.accumulate(s_max[self.order])

    def solve(self, demand: int) -> SlotChoice | None:
        """The cheapest feasible machine for ``D = demand`` workers, or ``None``."""
        data = self.data
        s = -(-int(demand) // data.gamma)
        w = int(demand) if self.rule == "demand" else data.gamma * s
        if w > data.max_workers:  # Eq. 4
            return None
        if self.rule == "demand":
            fits = np.all(w * data.alpha + s * data.beta <= self._room, axis=1)
            if not fits.any():
                return None
            cost = np.where(fits, w * data.worker_price + s * data.ps_price, np.inf)
            h = int(np.argmin(cost))  # the first minimum: ties go to the lower index
        else:
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
        self.cap_w = max_units(room, data.alpha, cap)  # workers alone on h
        self.cap_s = max_units(room, data.beta, cap)  # PSs alone on h

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


def lp_lower_bound(data: SlotData, demand: int) -> float:
    """A lower bound on the LP (and ILP) optimum of Problem (23) for ``D = demand``.

    Every feasible point has ``sum w >= D`` and ``sum s >= D / gamma``, so its
    cost is at least ``D min_h pw[h] + (D / gamma) min_h ps[h]``.
    """
    return float(demand * data.worker_price.min() + demand / data.gamma * data.ps_price.min())
