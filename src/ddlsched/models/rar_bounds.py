"""Lower bounds of RAR-DDLS without time: closed forms and Problem (14) (spec ``rar.md``).

The bounding formulations of spec ``rar.md`` ("Exact and bounding") are
``timeindexed`` (the pattern x start-slot ILP of Eqs. 10-13,
:mod:`ddlsched.models.rar_timeindexed`) and ``load_lb`` here; the exact MILP
is :mod:`ddlsched.models.rar`.

``load_lb`` — Problem (14): assign each job to ``G_j`` GPUs so as to
minimise the largest GPU load, with each job's shortest contention-free
duration ``rho_min_j`` (fewest servers). Any schedule's makespan is at least
its largest GPU load, so the optimum of (14) is a lower bound; we solve it
with loads aggregated per server (``sum_j y[j,s] rho_min_j <= O_s L``, a
relaxation, so still valid), and report the maximum of it and the closed
forms ``max_j rho_min_j`` and ``ceil(sum_j G_j rho_min_j / N)``.

All makespans are integral, so every lower bound ``b`` is reported as
``ceil(b - 1e-6)``, and solves stop once ``incumbent - bound < 1``
(:func:`integral_limits`). The closed forms and :func:`rho_min` here are
shared with the exact MILP, the search and the time-indexed models.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ddlsched.deadline import Deadline
from ddlsched.errors import InvalidInstanceError
from ddlsched.models.rar_patterns import pattern_catalogue
from ddlsched.problems.rar import RarInstance, RarJob
from ddlsched.problems.rar_timing import execution_slots, max_servers, min_servers
from ddlsched.solvers.limits import SolveLimits
from ddlsched.solvers.result import Outcome, Status, mark_stopped

if TYPE_CHECKING:  # Pyomo is imported by load_lb only: the closed forms serve heuristics too
    from ddlsched.solvers.backends import ModelSolve

__all__ = [
    "ceil_bound",
    "closed_form_bounds",
    "integral_limits",
    "load_lb",
    "rho_min",
    "solves_outcome",
]


# Makespans are integers and the makespan variables are integer: stop once
# incumbent - bound <= 0.5 (a gap just below 1 is within solver tolerances).
_INTEGRAL_GAP = 0.5


def ceil_bound(value: float | None) -> float | None:
    """A lower bound on an integral makespan, rounded up (``ceil(b - 1e-6)``)."""
    return None if value is None else float(math.ceil(value - 1e-6))


def integral_limits(limits: SolveLimits | None) -> SolveLimits:
    """``limits`` with the absolute gap raised so that a solve stops at integrality.

    Makespans are integral: a gap below 1 proves optimality (module
    docstring). Every other setting, ``highs_options`` included, is kept.
    """
    limits = limits or SolveLimits()
    return replace(limits, abs_gap=max(limits.abs_gap, _INTEGRAL_GAP))


def rho_min(job: RarJob, instance: RarInstance) -> int:
    """Shortest execution time of a job in slots, over every server count, without contention."""
    best = math.inf
    for n in range(min_servers(job, instance.servers), max_servers(job, instance.servers) + 1):
        best = min(
            best, execution_slots(job, instance.network, n, 1 if n > 1 else 0, instance.progress)
        )
    if math.isinf(best):
        raise InvalidInstanceError(
            f"job {job.id!r} never progresses on any placement (tau > 1 slot under 'floor')"
        )
    return int(best)


def closed_form_bounds(instance: RarInstance) -> dict[str, float]:
    """The closed-form lower bounds ``max_j rho_min_j`` and ``ceil(sum_j G_j rho_min_j / N)``."""
    durations = [rho_min(job, instance) for job in instance.jobs]
    energy = sum(job.gpus * d for job, d in zip(instance.jobs, durations, strict=True))
    return {
        "longest_job": float(max(durations)),
        "gpu_time": float(math.ceil(energy / instance.num_gpus - 1e-9)),
    }


def solve_model(*args: Any, **kwargs: Any) -> ModelSolve:
    """:func:`ddlsched.solvers.backends.solve_model`, imported (with Pyomo) at the first
    solve, not with this module."""
    from ddlsched.solvers.backends import solve_model as solve

    return solve(*args, **kwargs)


def solves_outcome(solves: Sequence[ModelSolve]) -> dict[str, Any]:
    """Backend, summed model size and solver time of several solves (Outcome fields).

    Whether the limit cut them is recorded apart, with what it cut
    (:meth:`ModelSolve.what_stopped` and :func:`~ddlsched.solvers.result.mark_stopped`)."""
    if not solves:
        return {}
    return {
        "backend": solves[0].backend,
        "backend_version": solves[0].backend_version,
        "model_size": tuple(
            sum(size) for size in zip(*(s.model_size for s in solves), strict=True)
        ),
        "solver_time_s": sum(s.runtime_s for s in solves),
    }


# --------------------------------------------------------------------------- load bound


def load_lb(
    instance: RarInstance,
    *,
    backend: str = "highs",
    limits: SolveLimits | None = None,
    max_patterns: int = 64,
    deadline: Deadline | None = None,
) -> Outcome:
    """Problem (14) bound: choose a pattern per job to minimise the largest GPU load.

    Loads are averaged over the GPUs of each server class (and of the whole
    cluster), a relaxation of the per-GPU maximum, with the contention-free
    pattern durations of :func:`pattern_catalogue` (the same ones as
    ``timeindexed``, so any ``timeindexed`` schedule of makespan ``C`` gives a
    load solution with ``L <= C``: ``load_lb <= timeindexed`` by construction
    when ``slot_width = 1`` and both are solved to optimality; with time
    aggregation either may be larger).
    Reported together with the closed-form bounds (``info['components']``);
    every part is valid.
    """
    import pyomo.environ as pyo

    limits = limits or SolveLimits()
    deadline = deadline or limits.deadline()
    jobs = instance.jobs
    cat = pattern_catalogue(instance, max_patterns, "free", deadline)
    cols = [(j, k) for j in range(len(jobs)) for k in range(len(cat.patterns[j]))]
    m = pyo.ConcreteModel(name="rar_load_lb")
    m.u = pyo.Var(cols, domain=pyo.Binary)
    m.L = pyo.Var(domain=pyo.NonNegativeReals)
    m.choose = pyo.Constraint(
        range(len(jobs)), rule=lambda m, j: sum(m.u[j, k] for k in range(len(cat.patterns[j]))) == 1
    )
    m.job_fits = pyo.Constraint(
        range(len(jobs)),
        rule=lambda m, j: (
            sum(cat.durations[j, k] * m.u[j, k] for k in range(len(cat.patterns[j]))) <= m.L
        ),
    )
    m.class_load = pyo.ConstraintList()
    for c, (cap, count) in enumerate(cat.classes):
        terms = [
            cat.patterns[j][k][c] * cat.durations[j, k] * m.u[j, k]
            for j, k in cols
            if cat.patterns[j][k] is not None and cat.patterns[j][k][c]
        ]
        if terms:
            m.class_load.add(sum(terms) <= cap * count * m.L)
    m.cluster_load = pyo.Constraint(
        expr=sum(jobs[j].gpus * cat.durations[j, k] * m.u[j, k] for j, k in cols)
        <= instance.num_gpus * m.L
    )
    m.obj = pyo.Objective(expr=m.L, sense=pyo.minimize)
    deadline.check("building the Problem (14) model")
    solve = solve_model(m, backend, limits, deadline)
    components: dict[str, float | None] = dict(closed_form_bounds(instance))
    components["problem14"] = ceil_bound(solve.bound) if solve.bound is not None else None
    valid = [v for v in components.values() if v is not None]
    outcome = Outcome(
        None,
        Status.BOUND_ONLY,
        bound=float(max(valid)),
        info={"components": components},
        **solves_outcome([solve]),
    )
    # cut: the closed forms and the solver's bound so far (None without one) stand
    return mark_stopped(outcome, solve.what_stopped("the Problem (14) load model"))
