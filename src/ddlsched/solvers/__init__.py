"""Solver layer: one result type for every method, and Pyomo backends.

``solve_model(model, backend, limits)`` runs a Pyomo model on HiGHS (the
default) or on SCIP through OR-Tools (the second opinion) and returns a
:class:`ModelSolve`; family formulations turn it, after decoding and
re-evaluating the schedule, into a :class:`SolveResult`.

The backends (and so Pyomo) are imported lazily, on first use, so that the
heuristics and the registry never pull in a solver.
"""

from ddlsched.solvers.result import BACKENDS, SolveResult, Status, relative_gap, versions

__all__ = [
    "BACKENDS",
    "ModelSolve",
    "SolveLimits",
    "SolveResult",
    "Status",
    "relative_gap",
    "solve_model",
    "versions",
]

_LAZY = {"ModelSolve", "SolveLimits", "solve_model"}


def __getattr__(name: str):
    if name in _LAZY:
        from ddlsched.solvers import backends

        return getattr(backends, name)
    raise AttributeError(f"module 'ddlsched.solvers' has no attribute {name!r}")
