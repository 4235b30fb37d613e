"""Approximation ratios against an optimum, or certified intervals against bounds.

DESIGN.md: minimisation ratio = heuristic / optimum (>= 1), maximisation
ratio = optimum / heuristic (>= 1). When the optimum is not proven, the
best known numbers bracket it: the best evaluated schedule (``primal``) and
the tightest valid solver bound (``dual``). For minimisation
``dual <= OPT <= primal`` and the ratio of a schedule of value ``h`` lies in
the certified interval ``[h / primal, h / dual]``; for maximisation
``primal <= OPT <= dual`` and it lies in ``[primal / h, dual / h]``.

A ratio below 1 for a correct pair means a model or an evaluator is wrong,
so :func:`ratio_interval` raises :class:`RatioError` instead of printing one.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from ddlsched.solvers.result import SolveResult, Status

__all__ = ["RatioError", "Reference", "best_reference", "ratio_interval"]

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
