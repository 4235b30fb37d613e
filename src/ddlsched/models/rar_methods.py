"""Registry adapters for the ``rar`` formulations: ``exact``, ``timeindexed``, ``load_lb``.

``exact`` first runs the registered heuristics (``sjf_bco``, ``ls``,
``ff``) that exist and shrinks the model horizon to the best evaluated
makespan among them (see :mod:`ddlsched.models.rar`); ``info`` records which
one supplied the bound. Every number reported is either an evaluated
makespan (``objective``) or a valid lower bound (``bound``).
"""

from __future__ import annotations

import logging
import time
from typing import Any

from ddlsched.errors import DdlschedError
from ddlsched.models.rar import load_lb, solve_exact, timeindexed
from ddlsched.problems.rar import RarInstance
from ddlsched.registry import RunOptions, register_method
from ddlsched.solvers.backends import SolveLimits
from ddlsched.solvers.result import SolveResult, Status

__all__ = ["heuristic_incumbents"]

log = logging.getLogger(__name__)

_UB_HEURISTICS = ("sjf_bco", "ls", "ff")


def heuristic_incumbents(instance: RarInstance, seed: int = 0) -> list[SolveResult]:
    """Results of the cheap registered heuristics (those that returned a schedule)."""
    from ddlsched.registry import _METHODS

    out = []
    for name in _UB_HEURISTICS:
        method = _METHODS.get(("rar", name))
        if method is None:
            continue
        try:
            result = method.run(instance, RunOptions(seed=seed))
        except DdlschedError as exc:
            log.info("incumbent from %s failed: %s", name, exc)
            continue
        if result.schedule is not None and result.objective is not None:
            out.append(result)
    return out


def _positive_int(params, name: str, default: int) -> int:
    value = params.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise DdlschedError(f"{name} must be a positive integer, got {value!r}")
    return value


def _limits(options: RunOptions) -> SolveLimits:
    return SolveLimits(time_limit_s=options.time_limit_s, seed=options.seed)


def _result(name: str, options: RunOptions, **fields: Any) -> SolveResult:
    return SolveResult(family="rar", method=name, sense="min", seed=options.seed, **fields)


def _solve_fields(solve) -> dict[str, Any]:
    if solve is None:
        return {}
    return {
        "backend": solve.backend,
        "backend_version": solve.backend_version,
        "num_variables": solve.num_variables,
        "num_integer_variables": solve.num_integer_variables,
        "num_constraints": solve.num_constraints,
    }


@register_method(
    "rar",
    "exact",
    "exact",
    "time-indexed MILP of RAR-DDLS with contention (proves optimality on small instances)",
    params={"presolve_bounds": True},
)
def _exact(instance: RarInstance, options: RunOptions) -> SolveResult:
    """Exact optimum; with ``presolve_bounds`` (default) warm-started by valid bounds.

    The incumbent is the best evaluated schedule of the cheap heuristics and of
    ``timeindexed`` (which also supplies a valid lower bound, with at most a
    fifth of the time limit); the MILP then only has to rule out shorter
    schedules. ``presolve_bounds=false`` solves the bare MILP over ``T``.
    """
    started = time.perf_counter()
    incumbent = lower = None
    sources: dict[str, Any] = {}
    remaining = options.time_limit_s
    if options.params.get("presolve_bounds", True):
        candidates = heuristic_incumbents(instance, options.seed)
        budget = min(10.0, options.time_limit_s / 5)
        ti = timeindexed(
            instance,
            backend=options.backend,
            limits=SolveLimits(time_limit_s=budget, seed=options.seed),
        )
        remaining = max(1.0, options.time_limit_s - (time.perf_counter() - started))
        lower = ti.bound
        sources["timeindexed_bound"] = ti.bound
        if ti.schedule is not None:
            candidates.append(
                SolveResult(
                    "rar",
                    "timeindexed",
                    ti.status,
                    "min",
                    objective=ti.objective,
                    schedule=ti.schedule,
                )
            )
        if candidates:
            best = min(candidates, key=lambda r: r.objective)
            incumbent = best.schedule
            sources["incumbent_from"] = best.method
    report = solve_exact(
        instance,
        backend=options.backend,
        limits=SolveLimits(time_limit_s=remaining, seed=options.seed),
        incumbent=incumbent,
        lower_bound=lower,
    )
    info = {**sources, **report.info}
    if report.evaluation is not None:
        info["average_completion"] = report.evaluation.average_completion
        info["utilisation"] = report.evaluation.utilisation
    return _result(
        "exact",
        options,
        status=report.status,
        objective=report.objective,
        bound=report.bound,
        schedule=report.schedule,
        evaluation=report.evaluation,
        info=info,
        **_solve_fields(report.solve),
    )


@register_method(
    "rar",
    "timeindexed",
    "bound",
    "pattern x start-slot ILP, contention-free: lower bound + evaluated schedule",
    params={"slot_width": 1, "contention": "free", "max_patterns": 64},
)
def _timeindexed(instance: RarInstance, options: RunOptions) -> SolveResult:
    params = {"slot_width": 1, "contention": "free", "max_patterns": 64, **options.params}
    if params["contention"] not in ("free", "worst"):
        raise DdlschedError(f"contention must be 'free' or 'worst', got {params['contention']!r}")
    report = timeindexed(
        instance,
        backend=options.backend,
        limits=_limits(options),
        slot_width=_positive_int(params, "slot_width", 1),
        contention=params["contention"],
        max_patterns=_positive_int(params, "max_patterns", 64),
    )
    info = dict(report.info)
    info["solver_status"] = [str(s.status) for s in report.solves]
    fields = _solve_fields(report.solves[0] if report.solves else None)
    if report.solves:
        fields["num_variables"] = sum(s.num_variables for s in report.solves)
        fields["num_integer_variables"] = sum(s.num_integer_variables for s in report.solves)
        fields["num_constraints"] = sum(s.num_constraints for s in report.solves)
    return _result(
        "timeindexed",
        options,
        status=report.status,
        objective=report.objective,
        bound=report.bound,
        schedule=report.schedule,
        evaluation=report.evaluation,
        info=info,
        **fields,
    )


@register_method(
    "rar",
    "load_lb",
    "bound",
    "Problem (14) max-GPU-load bound and closed-form bounds (lower bounds only)",
    params={"max_patterns": 64},
)
def _load_lb(instance: RarInstance, options: RunOptions) -> SolveResult:
    report = load_lb(
        instance,
        backend=options.backend,
        limits=_limits(options),
        max_patterns=_positive_int(options.params, "max_patterns", 64),
    )
    return _result(
        "load_lb",
        options,
        status=Status.BOUND_ONLY,
        objective=None,
        bound=report.bound,
        info={"components": report.components},
        **_solve_fields(report.solve),
    )
