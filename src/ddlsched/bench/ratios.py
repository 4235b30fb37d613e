"""Approximation ratios against an optimum, or certified intervals against bounds.

``docs/architecture.md``: minimisation ratio = heuristic / optimum (>= 1), maximisation
ratio = optimum / heuristic (>= 1). When the optimum is not proven, the
best known numbers bracket it: the best evaluated schedule (``primal``) and
the tightest valid solver bound (``dual``). For minimisation
``dual <= OPT <= primal`` and the ratio of a schedule of value ``h`` lies in
the certified interval ``[h / primal, h / dual]``; for maximisation
``primal <= OPT <= dual`` and it lies in ``[primal / h, dual / h]``.

A ratio below 1 for a correct pair means a model or an evaluator is wrong,
so :func:`ratio_interval` raises :class:`RatioError` instead of printing one.

Interval widths: the width of ``[lo, hi]`` is ``hi / lo - 1``; for a
ratio of ``h`` it equals ``primal / dual - 1`` (``dual / primal - 1`` when
maximising), the relative gap of the instance's bracket, whatever ``h``.
:func:`sides` names the method label that supplied each end, and
:func:`limiting_side` which end limits the interval by a convention of ours,
stated in its docstring (the optimum's position inside the bracket is
unknown, so no rule can prove it).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ddlsched.solvers.result import SolveResult, Status

__all__ = [
    "LIMIT_BOTH",
    "LIMIT_BOUND",
    "LIMIT_NONE",
    "RatioError",
    "Reference",
    "Sides",
    "best_reference",
    "interval_width",
    "limiting_side",
    "ratio_interval",
    "sides",
    "worst_width",
]

_TOL = 1e-6


class RatioError(AssertionError):
    """A ratio below 1: a schedule beat a proven optimum or a valid bound."""


@dataclass(frozen=True)
class Reference:
    """What is known of one instance's optimum.

    ``primal``: objective of the best evaluated schedule; ``dual``: the
    tightest valid bound; ``proven``: some method proved optimality, and
    then ``primal == dual == OPT``.
    """

    primal: float | None
    dual: float | None
    proven: bool

    @property
    def optimum(self) -> float | None:
        return self.primal if self.proven else None


def best_reference(results: Iterable[SolveResult], sense: str) -> Reference:
    """Combine the results of all methods on one instance into the tightest bracket."""
    if sense not in ("min", "max"):
        raise ValueError(f"sense must be 'min' or 'max', got {sense!r}")
    results = list(results)
    better_primal = min if sense == "min" else max
    better_dual = max if sense == "min" else min
    primal = dual = None
    optimal_values = []
    for r in results:
        if r.status is Status.ERROR:
            continue
        if r.objective is not None and r.status in (Status.OPTIMAL, Status.FEASIBLE):
            primal = r.objective if primal is None else better_primal(primal, r.objective)
        if r.bound is not None:
            dual = r.bound if dual is None else better_dual(dual, r.bound)
        if r.status is Status.OPTIMAL and r.objective is not None:
            optimal_values.append(r.objective)
    if optimal_values:
        opt = better_primal(optimal_values)
        return Reference(primal=opt, dual=opt, proven=True)
    return Reference(primal=primal, dual=dual, proven=False)


def _quotient(numerator: float, denominator: float) -> float:
    """``numerator / denominator`` as a ratio of two objective values (both >= 0).

    ``0 / 0`` is 1 (the two values are equal: a method that earns nothing on
    an instance where nothing can be earned is optimal there); ``x / 0`` with
    ``x > 0`` is infinite.
    """
    if denominator > 0:
        return numerator / denominator
    return 1.0 if numerator <= 0 else math.inf


def ratio_interval(
    value: float | None, reference: Reference, sense: str
) -> tuple[float, float] | None:
    """Certified interval ``(lo, hi)`` of the ratio of ``value`` to the optimum.

    ``lo == hi`` when the optimum is proven; ``hi`` is ``inf`` when no dual
    bound is known; ``None`` when ``value`` is None or no schedule is known.
    Raises :class:`RatioError` when ``value`` beats the optimum or the bound.
    """
    if value is None or reference.primal is None:
        return None
    primal, dual = reference.primal, reference.dual
    if sense == "min":
        beats = dual is not None and value < dual * (1 - _TOL)
        lo = _quotient(value, primal)
        hi = _quotient(value, dual) if dual is not None else math.inf
    else:
        beats = dual is not None and value > dual * (1 + _TOL)
        lo = _quotient(primal, value)
        hi = _quotient(dual, value) if dual is not None else math.inf
    if beats:
        raise RatioError(
            f"objective {value} beats the reference (best schedule {primal}, bound {dual}, "
            f"proven={reference.proven}): a model or an evaluator is wrong"
        )
    if reference.proven:
        hi = lo
    # Any schedule's ratio is >= 1; a schedule better than the best known
    # primal (not among the compared results) only tightens the bracket.
    return (max(lo, 1.0), max(hi, 1.0))


# --------------------------------------------------------------------------- interval widths

#: The ``limit`` of an interval (:func:`limiting_side`).
LIMIT_NONE = "none"
LIMIT_BOUND = "bound"
LIMIT_BOTH = "both"


@dataclass(frozen=True)
class Sides:
    """Who supplied each end of one instance's bracket: the method label of the best
    schedule (``primal_by``) and of the tightest bound (``dual_by``); with a proven optimum,
    the method that proved it, for both. ``None`` when no method supplied that end."""

    primal_by: str | None
    dual_by: str | None


def interval_width(lo: float, hi: float) -> float:
    """``hi / lo - 1`` of a certified ratio interval: 0 for a point, ``inf`` without a finite
    upper end, NaN without an interval (or with an infinite lower end: no finite ratio)."""
    if lo is None or hi is None or math.isnan(lo) or math.isnan(hi) or math.isinf(lo):
        return math.nan
    if math.isinf(hi):
        return math.inf
    return max(hi / lo - 1.0, 0.0)


def worst_width(widths: Iterable[float]) -> float:
    """The largest of interval widths, leaving out NaN (no interval): ``inf`` when one has no
    finite upper end, NaN when none is known (the ``width`` column of ``bench table``)."""
    known = [w for w in widths if not math.isnan(w)]
    return max(known) if known else math.nan


def sides(results: Sequence[tuple[str, SolveResult]], reference: Reference, sense: str) -> Sides:
    """The :class:`Sides` of one instance from ``(label, result)`` pairs and its reference
    (:func:`best_reference` of the same results). Results with status error supply neither
    end, as in :func:`best_reference`; on a tie the first label in ``results`` is named."""
    primal_by = dual_by = proved_by = None
    for label, r in results:
        if r.status is Status.ERROR:
            continue
        schedule = r.status in (Status.OPTIMAL, Status.FEASIBLE) and r.objective is not None
        if schedule and primal_by is None and r.objective == reference.primal:
            primal_by = label
        if schedule and proved_by is None and r.status is Status.OPTIMAL:
            proved_by = label if r.objective == reference.primal else None
        if r.bound is not None and dual_by is None and r.bound == reference.dual:
            dual_by = label
    if reference.proven:
        return Sides(proved_by, proved_by)
    return Sides(primal_by, dual_by)


def limiting_side(width: float, evidence: Sides, dual_kind: str | None) -> str:
    """Which end of a certified interval limits it: a convention of ours, not a proof.

    Where the optimum lies inside ``[best bound, best schedule]`` is unknown, so no rule
    can prove which end is loose. Ours, by who supplied the ends (``dual_kind``: the kind
    of the method of the best bound): ``none`` for a point (width 0: the optimum is proven
    or the ends meet); ``bound`` when no finite bound is known (width inf); ``both`` when one
    method supplied both ends (its own gap: a time-limited exact method, a column
    generation with its rounded schedule; only a stronger run of it or a new method on
    either side closes it); ``bound`` when the best bound comes from a method of kind
    ``bound`` (a relaxation or a closed form, which no search has tightened, while the
    schedule side has been searched by every heuristic); ``both`` otherwise (the bound is
    an exact method's, tightened by its search, and a heuristic beat its incumbent).
    """
    if math.isnan(width):
        return ""
    if width <= _TOL:
        return LIMIT_NONE
    if math.isinf(width):
        return LIMIT_BOUND
    if evidence.primal_by is not None and evidence.primal_by == evidence.dual_by:
        return LIMIT_BOTH
    return LIMIT_BOUND if dual_kind == "bound" else LIMIT_BOTH
