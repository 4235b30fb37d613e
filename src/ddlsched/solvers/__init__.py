"""Solver layer: what methods report, the Pyomo backends, and the formulation interface.

``solve_model(model, backend, limits, deadline)`` runs a Pyomo model on
HiGHS (the default) or on SCIP through OR-Tools (the second opinion) and
returns a :class:`ModelSolve`; ``solve_formulation(formulation, instance,
backend, limits, cross_check)`` builds, solves, decodes and cross-checks a
:class:`Formulation` and returns the method's :class:`Outcome`.
:mod:`ddlsched.solvers.highs_lp` solves many tiny LPs directly in highspy.

The backends (and so Pyomo) are imported lazily, on first use, so that the
heuristics, the registry and the CLI never pull in a solver.
"""

from ddlsched.solvers.limits import SolveLimits
from ddlsched.solvers.result import (
    BACKENDS,
    Claim,
    Outcome,
    SolveResult,
    Status,
    relative_gap,
    versions,
)

__all__ = [
    "BACKENDS",
    "Claim",
    "Formulation",
    "ModelSolve",
    "Outcome",
    "SolveLimits",
    "SolveResult",
    "Status",
    "relative_gap",
    "solve_formulation",
    "solve_model",
    "versions",
]

_LAZY = {
    "ModelSolve": "backends",
    "solve_model": "backends",
    "Formulation": "formulation",
    "solve_formulation": "formulation",
}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"ddlsched.solvers.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'ddlsched.solvers' has no attribute {name!r}")
