"""Solver layer: one result type for every method, and Pyomo backends.

``solve_model(model, backend, limits)`` runs a Pyomo model on HiGHS (the
default) or on SCIP through OR-Tools (the second opinion) and returns a
:class:`ModelSolve`; family formulations turn it, after decoding and
re-evaluating the schedule, into a :class:`SolveResult`.
"""

from ddlsched.solvers.backends import BACKENDS, ModelSolve, SolveLimits, solve_model
from ddlsched.solvers.result import SolveResult, Status, relative_gap, versions

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
