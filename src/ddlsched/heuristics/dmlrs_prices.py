"""The price function of PD-ORS and OASiS (Eqs. 12-14).

Paper: Yu et al., IEEE TNSE 2022 (reading notes of the paper), Eqs. 12-14;
spec ``docs/families/dmlrs.md`` (``pd_ors``, "Price function").

* ``Q_h^r(rho) = L (U^r / L)^(rho / C[h, r])`` (Eq. 12): ``Q(0) = L``,
  ``Q(C[h, r]) = U^r``, increasing in ``rho`` when ``U^r > L``.
* ``U^r = max_{i: alpha[i, r] + beta[i, r] > 0} u_i(d_min_i - 1) /
  (alpha[i, r] + beta[i, r])`` (Eq. 13) with ``d_min_i = ceil(V_i pi_i(b) /
  (F_i slot_s))`` the fewest slots job ``i`` can take (``b = b_int``;
  ``b_ext`` for OASiS, which never runs at ``b_int``). Jobs that use none
  of ``r`` are left out (the notes' formula would divide by zero); a
  resource no job uses has no ``U^r`` (its price stays ``L``, and no job
  pays it). ``u_bound = "literal"`` takes the notes' ``u_i(d_min_i - a_i)``
  instead (the spec reads ``- a_i`` as a slip).
* ``L = min_i u_i(T - a_i) / (2 mu sum_r ceil(V_i pi_i(b_ext) / slot_s)
  (alpha[i, r] + beta[i, r]))`` (Eq. 14); ``mu > 0`` is not defined in the
  notes (ours: a parameter, default 1).
* ``bounds = "instance"`` (the paper's) computes ``U^r`` and ``L`` from the
  instance; ``bounds = "given"`` takes ``U`` (one value for every resource
  in use) and ``L`` as parameters, which makes the algorithm truly online.
* ``L < 1e-140`` or ``U^r > 1e80`` is refused (ours, a guard against hostile input;
  :data:`PRICE_RANGE`): the slot LP centres its costs by ``1 / sqrt(min
  max)``, whose product of two prices near ``L`` underflows below 1e-154
  (a ZeroDivisionError before this check).
* ``U^r <= L`` for a resource in use is refused
  (:class:`~ddlsched.errors.DdlschedError` naming the resource and both
  values): prices would not rise with use. ``L = 0`` (a utility that
  underflows) is refused likewise.

Prices are computed as ``L exp(ln(U^r / L) rho / C)``, which avoids
overflow for the large ratios ``U^r / L`` of the paper preset.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ddlsched.errors import DdlschedError
from ddlsched.problems.dmlrs import (
    SAMPLE_RTOL,
    DmlrsInstance,
    DmlrsJob,
    per_sample_time,
    workers_needed,
)

__all__ = ["BOUNDS", "PRICE_RANGE", "U_BOUNDS", "PriceFunction", "fewest_slots", "price_function"]

BOUNDS = ("instance", "given")
#: ``L`` and every ``U^r`` must lie in this range (module docstring).
PRICE_RANGE = (1e-140, 1e80)
U_BOUNDS = ("spec", "literal")


def fewest_slots(job: DmlrsJob, bandwidth: float, slot_s: float) -> int:
    """``d_min = ceil(V_i pi_i(b) / (F_i slot_s))``: the fewest slots at ``F_i`` workers at ``b``.

    At ``b = b_int`` this is :func:`ddlsched.problems.dmlrs.fastest_slots`
    (same floating-point guard).
    """
    per_slot = slot_s * job.global_batch / per_sample_time(job, bandwidth)
    return max(1, math.ceil(job.workload / per_slot * (1.0 - SAMPLE_RTOL)))


@dataclass(frozen=True)
class PriceFunction:
    """``Q_h^r`` of Eq. 12 for one instance: ``L`` and ``U^r`` (``None``: resource unused)."""

    resources: tuple[str, ...]
    L: float
    U: tuple[float | None, ...]
    bounds: str

    @property
    def log_ratio(self) -> np.ndarray:
        """``ln(U^r / L)`` per resource (0 for a resource no job uses)."""
        return np.array([0.0 if u is None else math.log(u / self.L) for u in self.U])

    def price(self, rho: np.ndarray, capacity: np.ndarray) -> np.ndarray:
        """``Q_h^r(rho) = L (U^r / L)^(rho / C[h, r])``, element-wise.

        ``rho`` and ``capacity`` broadcast with resources on their last
        axis, e.g. ``(H, R)`` or ``(R,)``.
        """
        return self.L * np.exp(self.log_ratio * (np.asarray(rho) / np.asarray(capacity)))

    def info(self) -> dict[str, Any]:
        """``U_r``, ``L``, ``ln_U_over_L`` (by resource; ``None`` when unused) and ``bounds``."""
        return {
            "U_r": dict(zip(self.resources, self.U, strict=True)),
            "L": self.L,
            "ln_U_over_L": {
                r: None if u is None else math.log(u / self.L)
                for r, u in zip(self.resources, self.U, strict=True)
            },
            "bounds": self.bounds,
        }


def _used(instance: DmlrsInstance) -> np.ndarray:
    """``used[i, r]``: job ``i`` uses resource ``r`` (``alpha + beta > 0``)."""
    if not instance.jobs:
        return np.zeros((0, len(instance.resources)), dtype=bool)
    return (instance.alpha + instance.beta) > 0


def _instance_L(instance: DmlrsInstance, mu: float) -> float:
    best = math.inf
    for i, job in enumerate(instance.jobs):
        worker_slots = workers_needed(job, job.workload, instance.b_ext, instance.slot_s)
        per_unit = float((instance.alpha[i] + instance.beta[i]).sum())
        value = job.utility(instance.slots - job.arrival_slot) / (
            2.0 * mu * worker_slots * per_unit
        )
        best = min(best, value)
    return best


def _instance_U(instance: DmlrsInstance, u_bound: str, bandwidth: float) -> list[float | None]:
    used = _used(instance)
    out: list[float | None] = []
    for r in range(len(instance.resources)):
        best: float | None = None
        for i, job in enumerate(instance.jobs):
            if not used[i, r]:
                continue
            d_min = fewest_slots(job, bandwidth, instance.slot_s)
            delay = d_min - 1 if u_bound == "spec" else d_min - job.arrival_slot
            value = job.utility(delay) / float(instance.alpha[i, r] + instance.beta[i, r])
            best = value if best is None else max(best, value)
        out.append(best)
    return out


def price_function(
    instance: DmlrsInstance,
    *,
    mu: float = 1.0,
    bounds: str = "instance",
    u_bound: str = "spec",
    U: float | None = None,
    L: float | None = None,
    bandwidth: str = "int",
) -> PriceFunction:
    """``U^r`` and ``L`` of Eqs. 13-14 for ``instance`` (module docstring).

    ``bandwidth`` is ``"int"`` (PD-ORS: ``d_min`` at ``b_int``) or ``"ext"``
    (OASiS). With ``bounds = "given"``, ``U`` and ``L`` are required and
    ``U`` is used for every resource some job uses. An instance without jobs
    gets ``L = 1`` and no ``U^r`` (nothing is ever priced).
    """
    if bounds not in BOUNDS:
        raise DdlschedError(f"bounds must be one of {', '.join(BOUNDS)}, got {bounds!r}")
    if u_bound not in U_BOUNDS:
        raise DdlschedError(f"u_bound must be one of {', '.join(U_BOUNDS)}, got {u_bound!r}")
    if bandwidth not in ("int", "ext"):
        raise DdlschedError(f"bandwidth must be 'int' or 'ext', got {bandwidth!r}")
    if not (
        isinstance(mu, (int, float)) and not isinstance(mu, bool) and mu > 0 and math.isfinite(mu)
    ):
        raise DdlschedError(f"mu must be a positive finite number, got {mu!r}")
    in_use = _used(instance).any(axis=0)
    if bounds == "given":
        for name, value in (("U", U), ("L", L)):
            if value is None:
                raise DdlschedError(f"bounds = given needs the parameter {name}")
            if (
                isinstance(value, bool)
                or not isinstance(value, (int, float))
                or not (math.isfinite(value) and value > 0)
            ):
                raise DdlschedError(f"{name} must be a positive finite number, got {value!r}")
        assert U is not None and L is not None
        lower = float(L)
        uppers: list[float | None] = [float(U) if use else None for use in in_use]
    else:
        if not instance.jobs:
            return PriceFunction(instance.resources, 1.0, (None,) * len(instance.resources), bounds)
        lower = _instance_L(instance, float(mu))
        b = instance.b_int if bandwidth == "int" else instance.b_ext
        uppers = _instance_U(instance, u_bound, b)
    if not lower > 0:
        raise DdlschedError(
            f"L = {lower!r} is not positive (a utility u_i(T - a_i) underflows); "
            "give bounds = given with U and L"
        )
    low, high = PRICE_RANGE
    if not lower >= low:
        raise DdlschedError(
            f"L = {lower:.6g} is below {low:g} (a utility u_i(T - a_i) that has almost "
            "vanished): the slot problems' prices would underflow; give bounds = given with "
            "U and L, or a smaller mu"
        )
    for r, upper in zip(instance.resources, uppers, strict=True):
        if upper is not None and not upper <= high:
            raise DdlschedError(
                f"resource {r!r}: U^r = {upper:.6g} is above {high:g}: the slot problems' "
                "prices would overflow"
            )
        if upper is not None and not upper > lower:
            raise DdlschedError(
                f"resource {r!r}: U^r = {upper:.6g} <= L = {lower:.6g}; prices would not rise "
                "with use (Eq. 12)"
            )
    return PriceFunction(instance.resources, lower, tuple(uppers), bounds)
