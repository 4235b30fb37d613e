"""Algorithm 4's external case of PD-ORS: ``G_delta``, randomized rounding and repair.

Paper: Yu et al., IEEE TNSE 2022 (reading notes of the paper), Algorithm 4,
Problem (23) with rows (24)-(26), the rounding of Eqs. 27-28; spec
``docs/families/dmlrs.md`` (PD-ORS: Algorithm 4's rounding, the draws and
``G_delta``). The rounding is the revised one: the full LP's optimum fills
machines to capacity, so scaled by ``G_delta > 1`` it broke row (24) in
almost every draw (4,335 of 4,354 slot problems on ``paper`` seed 0 had no
feasible draw); the shrunk LP and the repair below keep the scaled point
inside the packing rows in expectation. No solver is imported here: the LPs
come through :class:`ddlsched.heuristics.dmlrs_slot.SlotLp`.

``G_delta`` (ours; the paper's Eqs. 31-32 are not in the notes):
``g_delta(D, delta) = 1 + (ln(1/delta) + sqrt(ln(1/delta)^2 + 2 D
ln(1/delta))) / D``, the smallest ``G`` for which the Chernoff lower tail
bounds the failure of the covering row (26) of the scaled and rounded point
by ``delta``; exactly 1 at ``delta = 1``; ``scale = "none"`` takes ``G = 1``.

Two rules (parameter ``rounding``):

* ``shrunk`` (default, the revised spec): (1) the *shrunk LP*: Problem
  (23)'s LP relaxation with every capacity of row (24) divided by ``G`` and
  the one-resource bounds floored before the division (``w_h <=
  floor(min_{r: beta[r] = 0, alpha[r] > 0} C^[h, r] / alpha[r]) / G``, the
  same for ``s_h`` over the resources only PSs use; :func:`unit_caps`);
  rows (25), (26) and the PS row unchanged. If it is infeasible, the full
  LP's point is rounded instead (``lp = "full"`` in the statistics). (2) Its
  optimum ``x^`` is scaled by ``G`` and each variable rounded up with
  probability equal to the fractional part (Eqs. 27-28). (3) Each draw is
  repaired (:func:`repair`), in this order: (a) on a machine where the draw
  breaks (24), both of its counts become ``floor(G x^)``, or ``floor(x^)`` if
  that still breaks (24) (ours: counts 0 if even that breaks, by floating
  point only; never seen); (b) workers above ``D`` are removed, highest
  worker price ``pw[h]`` first; (c) missing PSs (``gamma sum s < sum w``)
  are added one at a time on the machine with the lowest ``ps[h]`` that has
  room (ours: any machine of the slot, the LP's support or not, on which one
  more PS keeps row (24) within the capacity check's slack), then PSs above
  ``ceil(sum w / gamma)`` are removed, highest ``ps[h]`` first. A repaired draw is feasible iff ``sum w >= D``, (24),
  (25) and the PS row hold.
* ``literal`` (the first spec, kept as the ablation): the full LP's optimum
  scaled by ``G`` and rounded, no repair.

Ties (ours): adding goes to the lower machine index among equal prices,
removing to the higher one (the reverse of the adding order).

Draw rule (spec "Draws", ours where the notes' Step 11 would loop forever):
``S`` draws, keep the cheapest feasible (repaired) draw (ties: the first);
if none is feasible draw on, up to ``10 S`` in all, and stop at the first
feasible one; if still none, the external case is infeasible. All draws of
a batch are one array operation (the continuation batch of ``9 S`` draws is
drawn at once and cut at its first feasible draw: the same distribution as
drawing one at a time); the repair is vectorised over the draws.

Statistics per call (:class:`RoundingStats`): ``G``, which LP was rounded,
the draws, the share of draws meeting (26) and breaking each packing row
before repair ((24) on any machine and resource, (25), the PS row), the
draws feasible before and after repair, and per repair step the draws it
changed. The covering guarantee ``1 - delta`` applies to the unrepaired
draw.

Ours: LP values within ``1e-9`` of an integer are snapped to it before
scaling (solver noise), and values below ``1e-9`` are 0; every capacity
check uses the slack of :class:`~ddlsched.heuristics.dmlrs_slot.SlotData`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ddlsched.errors import DdlschedError
from ddlsched.heuristics.dmlrs_slot import SlotChoice, SlotData, SlotLp, SlotSolution

__all__ = [
    "MAX_DRAWS",
    "REPAIR_STEPS",
    "ROUNDINGS",
    "SCALES",
    "Draws",
    "Repaired",
    "RoundingStats",
    "draw_bytes",
    "draw_roundings",
    "g_delta",
    "repair",
    "round_external",
    "round_solution",
    "scale_factor",
    "unit_caps",
]

SCALES = ("chernoff", "none")
ROUNDINGS = ("shrunk", "literal")
#: Repair steps, in order (module docstring): (a), (b), (c) adding, (c) removing.
REPAIR_STEPS = ("capacity", "workers_removed", "ps_added", "ps_removed")
#: LP values closer than this to an integer are snapped to it (solver noise).
SNAP = 1e-9
#: The continuation rule: at most this many times ``S`` draws in all.
MAX_DRAWS_FACTOR = 10
#: The most draws ``S`` per rounding (ours, against hostile input): up to ``10 S`` draws are held at once
#: over the LP's support (about ``80 (R + 6)`` bytes a draw and machine).
MAX_DRAWS = 100_000


def draw_bytes(draws: int, machines: int, resources: int) -> float:
    """Bytes the ``10 S`` draws of one rounding may hold at once, over ``machines``
    machines of support (at most every machine): the uniforms, the counts, the load per
    resource and the repair's copies, 8 bytes each."""
    return 8.0 * MAX_DRAWS_FACTOR * draws * machines * (resources + 8)


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


def scale_factor(demand: float, delta: float, scale: str) -> float:
    """``G``: :func:`g_delta` with ``scale = "chernoff"``, 1 with ``"none"``."""
    if scale not in SCALES:
        raise DdlschedError(f"scale must be one of {', '.join(SCALES)}, got {scale!r}")
    return g_delta(demand, delta) if scale == "chernoff" else 1.0


def _floor_units(room: np.ndarray, per_unit: np.ndarray) -> np.ndarray:
    """Per machine, the largest integer ``n`` with ``n per_unit[r] <= room[h, r]`` for every
    ``r`` with ``per_unit[r] > 0`` (``inf`` when there is none); a float ``floor`` that
    overshoots is corrected downward, so the count passes the capacity check."""
    used = per_unit > 0
    if not used.any():
        return np.full(room.shape[0], np.inf)
    n = np.floor(np.maximum(np.min(room[:, used] / per_unit[used], axis=1), 0.0))
    over = np.any(n[:, None] * per_unit[used] > room[:, used], axis=1)
    return np.where(over, np.maximum(n - 1.0, 0.0), n)


def unit_caps(data: SlotData) -> tuple[np.ndarray, np.ndarray]:
    """The floored one-resource bounds of the shrunk LP, per machine (before dividing by G).

    ``worker_cap[h] = floor(min_{r: beta[r] = 0, alpha[r] > 0} C^[h, r] / alpha[r])``
    and ``ps_cap[h]`` the same over the resources only PSs use (``inf`` when
    there is no such resource); floored with the capacity check's slack, so
    that a count at the cap passes that check. ``F`` is not one of them: row
    (25) stays as it is (the LP keeps ``w_h <= F``, which (25) implies).
    """
    room = data.residual + data.slack
    only_w = np.where((data.alpha > 0) & (data.beta == 0), data.alpha, 0.0)
    only_s = np.where((data.alpha == 0) & (data.beta > 0), data.beta, 0.0)
    return _floor_units(room, only_w), _floor_units(room, only_s)


# --------------------------------------------------------------------------- draws


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


# --------------------------------------------------------------------------- repair


@dataclass(frozen=True, eq=False)
class Repaired:
    """Repaired draws on every machine: ``w[d, h]``, ``s[d, h]``, per draw ``feasible``,
    ``cost`` and, per step of :data:`REPAIR_STEPS`, whether it changed the draw."""

    w: np.ndarray
    s: np.ndarray
    feasible: np.ndarray
    cost: np.ndarray
    changed: dict[str, np.ndarray]

    def join(self, other: Repaired, used: int) -> Repaired:
        """These draws followed by the first ``used`` of ``other``."""
        return Repaired(
            *(
                np.concatenate([getattr(self, name), getattr(other, name)[:used]])
                for name in ("w", "s", "feasible", "cost")
            ),
            changed={
                k: np.concatenate([self.changed[k], other.changed[k][:used]]) for k in self.changed
            },
        )


def _greedy(amount: np.ndarray, limit: np.ndarray) -> np.ndarray:
    """Per draw, take ``amount[d]`` units from ``limit[d, :]`` in column order."""
    before = np.cumsum(limit, axis=1) - limit
    return np.clip(amount[:, None] - before, 0, limit)


def _fits(data: SlotData, w: np.ndarray, s: np.ndarray, machines: np.ndarray) -> np.ndarray:
    """Per draw and machine of ``machines`` (the last axis of ``w``, ``s``): (24) holds."""
    load = w[..., None] * data.alpha + s[..., None] * data.beta
    return np.all(load <= data.residual[machines] + data.slack[machines], axis=-1)


def _ps_room(data: SlotData, w: np.ndarray, s: np.ndarray, most: int) -> np.ndarray:
    """Per draw and machine (all of them), the PSs that still fit (at most ``most``)."""
    used = data.beta > 0
    if not used.any():
        return np.full(w.shape, most, dtype=float)
    free = data.residual + data.slack - w[..., None] * data.alpha - s[..., None] * data.beta
    k = np.floor(np.min(free[..., used] / data.beta[used], axis=-1))
    k = np.clip(k, 0, most)
    over = ~_fits(data, w, s + k, np.arange(data.num_machines))
    return np.where(over, np.maximum(k - 1, 0), k)


def _on_all(counts: np.ndarray, support: np.ndarray, num_machines: int) -> np.ndarray:
    """Counts on ``support`` (last axis) spread over every machine."""
    out = np.zeros((counts.shape[0], num_machines))
    out[:, support] = counts
    return out


def _order(prices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Column orders for adding (ascending, ties: lower index) and removing (the reverse)."""
    up = np.argsort(prices, kind="stable")
    return up, up[::-1]


def repair(
    data: SlotData, draws: Draws, w_hat: np.ndarray, s_hat: np.ndarray, G: float, demand: int
) -> Repaired:
    """Steps (a)-(c) of the revised rounding (module docstring) on every draw at once.

    ``w_hat``, ``s_hat`` are the LP point (on every machine) that was scaled by
    ``G`` and rounded. Steps (a) and (b) act on the draws' support; step (c)
    may add PSs on any machine.
    """
    support = draws.machines
    w, s = draws.w.copy(), draws.s.copy()
    changed: dict[str, np.ndarray] = {}
    # (a) a machine that breaks (24): floor(G x^), else floor(x^), else nothing (ours)
    broken = ~_fits(data, w, s, support)
    changed["capacity"] = broken.any(axis=1)
    if changed["capacity"].any():
        x_w = _snap(np.asarray(w_hat, float)[support])
        x_s = _snap(np.asarray(s_hat, float)[support])
        fw, fs = np.floor(_snap(G * x_w)), np.floor(_snap(G * x_s))
        still = ~_fits(data, fw, fs, support)
        fw, fs = np.where(still, np.floor(x_w), fw), np.where(still, np.floor(x_s), fs)
        still = ~_fits(data, fw, fs, support)
        fw, fs = np.where(still, 0.0, fw), np.where(still, 0.0, fs)
        w, s = np.where(broken, fw, w), np.where(broken, fs, s)
    # (b) workers above D, highest pw first
    excess = w.sum(axis=1) - demand
    changed["workers_removed"] = excess > 0
    _, down = _order(data.worker_price[support])
    w[:, down] -= _greedy(np.maximum(excess, 0), w[:, down])
    total_w = w.sum(axis=1)
    # (c) missing PSs on the lowest ps with room (any machine), then PSs above
    # ceil(sum w / gamma), highest ps first
    ps_needed = np.ceil(total_w / data.gamma)
    missing = ps_needed - s.sum(axis=1)
    changed["ps_added"] = missing > 0
    machines = support
    if changed["ps_added"].any():  # go to every machine
        machines = np.arange(data.num_machines)
        w, s = _on_all(w, support, data.num_machines), _on_all(s, support, data.num_machines)
        up, _ = _order(data.ps_price)
        room = _ps_room(data, w, s, int(missing.max()))
        added = _greedy(np.maximum(missing, 0), room[:, up])
        s[:, up] += added
        changed["ps_added"] = added.sum(axis=1) > 0  # a draw no machine had room for: unchanged
    surplus = s.sum(axis=1) - ps_needed
    changed["ps_removed"] = surplus > 0
    _, down = _order(data.ps_price[machines])
    s[:, down] -= _greedy(np.maximum(surplus, 0), s[:, down])
    total_s = s.sum(axis=1)
    feasible = (
        (total_w >= demand)
        & (total_w <= data.max_workers)
        & (data.gamma * total_s >= total_w)
        & _fits(data, w, s, machines).all(axis=1)
    )
    cost = w @ data.worker_price[machines] + s @ data.ps_price[machines]
    if machines is support:  # back on every machine
        w, s = _on_all(w, support, data.num_machines), _on_all(s, support, data.num_machines)
    return Repaired(w, s, feasible, cost, changed)


# --------------------------------------------------------------------------- one call


@dataclass(frozen=True)
class RoundingStats:
    """One rounding call (module docstring).

    ``lp``: the LP whose point was rounded (``shrunk`` or ``full``);
    ``covering_share``: draws meeting (26) before repair;
    ``capacity_break_share``, ``worker_cap_break_share``, ``ps_break_share``:
    draws breaking (24), (25), the PS row before repair;
    ``feasible_draws_unrepaired``: draws meeting every row before repair;
    ``feasible_draws``: draws feasible after repair (``literal``: no repair,
    the same number); ``repairs``: per step, the draws it changed.
    """

    g_delta: float
    draws: int
    covering_share: float
    capacity_break_share: float
    worker_cap_break_share: float
    ps_break_share: float
    feasible_draws: int
    feasible: bool
    lp: str = "full"
    feasible_draws_unrepaired: int = 0
    repairs: dict[str, int] = field(default_factory=dict)


def _stats(made: Draws, G: float, feasible_after: np.ndarray, picked: bool, lp: str,
           repairs: dict[str, int]) -> RoundingStats:  # fmt: skip
    n = int(made.cover.size)
    return RoundingStats(
        g_delta=G,
        draws=n,
        covering_share=float(made.cover.sum()) / n,
        capacity_break_share=float((~made.cap_ok).sum()) / n,
        worker_cap_break_share=float((~made.f_ok).sum()) / n,
        ps_break_share=float((~made.ps_ok).sum()) / n,
        feasible_draws=int(feasible_after.sum()),
        feasible=picked,
        lp=lp,
        feasible_draws_unrepaired=int(made.feasible.sum()),
        repairs=repairs,
    )


def _check_draws(draws: int) -> None:
    if isinstance(draws, bool) or not isinstance(draws, int) or not 1 <= draws <= MAX_DRAWS:
        raise DdlschedError(f"S must be an integer in 1..{MAX_DRAWS}, got {draws!r}")


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
    """The ``literal`` rule: scale the LP optimum by ``G_delta``, round, no repair.

    Returns the chosen feasible draw (``None`` if no draw was feasible) and
    the call's statistics. ``draws`` is ``S``.
    """
    G = scale_factor(demand, delta, scale)
    _check_draws(draws)
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
    stats = _stats(made, G, made.feasible, pick is not None, "full", {})
    if pick is None:
        return None, stats
    w_pick = made.w[pick].astype(np.int64)
    s_pick = made.s[pick].astype(np.int64)
    keep = (w_pick > 0) | (s_pick > 0)
    machines = made.machines[keep]
    w_pick, s_pick = w_pick[keep], s_pick[keep]
    cost = float(data.worker_price[machines] @ w_pick + data.ps_price[machines] @ s_pick)
    return SlotChoice(machines, w_pick, s_pick, cost, "external"), stats


def round_repaired(
    data: SlotData,
    w_hat: np.ndarray,
    s_hat: np.ndarray,
    demand: int,
    G: float,
    rng: np.random.Generator,
    *,
    draws: int = 10,
    lp: str = "shrunk",
) -> tuple[SlotChoice | None, RoundingStats]:
    """Steps (2)-(3) of the ``shrunk`` rule: scale ``x^`` by ``G``, round, repair every
    draw, and apply the draw rule to the repaired draws (module docstring)."""
    _check_draws(draws)
    made = draw_roundings(data, w_hat, s_hat, demand, G, rng, draws)
    fixed = repair(data, made, w_hat, s_hat, G, demand)
    pick: int | None = None
    if fixed.feasible.any():
        pick = int(np.argmin(np.where(fixed.feasible, fixed.cost, np.inf)))
    else:
        more = draw_roundings(data, w_hat, s_hat, demand, G, rng, (MAX_DRAWS_FACTOR - 1) * draws)
        more_fixed = repair(data, more, w_hat, s_hat, G, demand)
        used = more.w.shape[0]
        if more_fixed.feasible.any():  # stop at the first feasible draw
            used = int(np.argmax(more_fixed.feasible)) + 1
            pick = draws + used - 1
        made = made + more.head(used)
        fixed = fixed.join(more_fixed, used)
    repairs = {k: int(fixed.changed[k].sum()) for k in REPAIR_STEPS}
    stats = _stats(made, G, fixed.feasible, pick is not None, lp, repairs)
    if pick is None:
        return None, stats
    w_pick = fixed.w[pick].astype(np.int64)
    s_pick = fixed.s[pick].astype(np.int64)
    machines = np.flatnonzero((w_pick > 0) | (s_pick > 0))
    cost = float(
        data.worker_price[machines] @ w_pick[machines] + data.ps_price[machines] @ s_pick[machines]
    )
    return SlotChoice(machines, w_pick[machines], s_pick[machines], cost, "external"), stats


def round_external(
    data: SlotData,
    session: SlotLp,
    full: SlotSolution,
    demand: int,
    rng: np.random.Generator,
    *,
    delta: float = 0.1,
    draws: int = 10,
    scale: str = "chernoff",
    rounding: str = "shrunk",
    time_limit_s: float = math.inf,
) -> tuple[SlotChoice | None, RoundingStats]:
    """Algorithm 4's rounded external case for ``D = demand`` (module docstring).

    ``full`` is the full LP's optimum (a :class:`~ddlsched.heuristics.dmlrs_slot.
    SlotSolution`, solved by the caller: it is also the cost bound used for
    pruning); ``session`` re-solves the same LP shrunk (``rounding =
    "shrunk"``).
    """
    if rounding not in ROUNDINGS:
        raise DdlschedError(f"rounding must be one of {', '.join(ROUNDINGS)}, got {rounding!r}")
    if rounding == "literal":
        return round_solution(
            data, full.w, full.s, demand, rng, delta=delta, draws=draws, scale=scale
        )
    G = scale_factor(demand, delta, scale)
    worker_cap, ps_cap = unit_caps(data)
    shrunk = session.solve_shrunk(demand, G, worker_cap, ps_cap, time_limit_s)
    point, lp = (full, "full") if shrunk is None else (shrunk, "shrunk")
    return round_repaired(
        data, np.asarray(point.w), np.asarray(point.s), demand, G, rng, draws=draws, lp=lp
    )
