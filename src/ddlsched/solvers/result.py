"""The one result type of every method, heuristic or exact.

Modelled on Pyomo ``contrib.solver.common.results``: what you got is a
:class:`Status`; ``objective`` is the objective of the returned schedule *as
recomputed by the family evaluator* (never the solver's own number);
``bound`` is a valid dual bound on the optimum in the same sense (a lower
bound when minimising, an upper bound when maximising), ``None`` when
unknown, never 0 by default.
"""

from __future__ import annotations

import enum
import math
import platform
from dataclasses import dataclass, field
from functools import cache
from importlib import metadata
from typing import Any

__all__ = ["BACKENDS", "SolveResult", "Status", "relative_gap", "versions"]

# MILP backends of ddlsched.solvers.backends (named here so that callers need not import Pyomo).
BACKENDS = ("highs", "scip")


class Status(enum.StrEnum):
    """What a method returned.

    ``optimal``: a schedule proven optimal by the solver (gap closed).
    ``feasible``: a schedule without an optimality proof (every heuristic,
    and an exact method stopped by its time limit; ``bound`` then holds the
    solver's dual bound). ``bound_only``: a bounding method that returns a
    bound and no schedule. ``infeasible``: the solver proved there is no
    schedule (within the model's horizon). ``time_limit_no_solution``: the
    limit was hit before any schedule was found. ``error``: the method
    failed; ``info['error']`` says why.
    """

    OPTIMAL = "optimal"
    FEASIBLE = "feasible"
    BOUND_ONLY = "bound_only"
    INFEASIBLE = "infeasible"
    TIME_LIMIT_NO_SOLUTION = "time_limit_no_solution"
    ERROR = "error"


def relative_gap(objective: float | None, bound: float | None) -> float | None:
    """Return ``|objective - bound| / |objective|`` (``None`` if either is unknown)."""
    if objective is None or bound is None:
        return None
    if objective == bound:
        return 0.0
    denom = abs(objective)
    return math.inf if denom == 0 else abs(objective - bound) / denom


def _dist_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


@cache
def versions() -> dict[str, str | None]:
    """Versions of ddlsched, its solvers and Python, recorded in every result."""
    from ddlsched import __version__

    return {
        "ddlsched": __version__,
        "python": platform.python_version(),
        "pyomo": _dist_version("pyomo"),
        "highspy": _dist_version("highspy"),
        "ortools": _dist_version("ortools"),
        "numpy": _dist_version("numpy"),
        "numba": _dist_version("numba"),
    }


@dataclass
class SolveResult:
    """The outcome of one method on one instance.

    ``schedule`` is the family's schedule object (or ``None``);
    ``evaluation`` is what the family evaluator computed for it. ``info``
    holds method-specific decisions (theta found, kappa chosen, which of
    the numbers are valid bounds, ...).
    """

    family: str
    method: str
    status: Status
    sense: str  # "min" or "max"
    objective: float | None = None
    bound: float | None = None
    runtime_s: float = 0.0
    backend: str | None = None
    backend_version: str | None = None
    num_variables: int | None = None
    num_integer_variables: int | None = None
    num_constraints: int | None = None
    seed: int | None = None
    schedule: Any = None
    evaluation: Any = None
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def gap(self) -> float | None:
        """Relative gap between the evaluated objective and the bound."""
        return relative_gap(self.objective, self.bound)

    @property
    def is_optimal(self) -> bool:
        return self.status is Status.OPTIMAL

    def to_dict(self, schedule_json: Any = None) -> dict[str, Any]:
        """A JSON-ready dict (the CLI contract); ``schedule_json`` is the family's rendering."""
        gap = self.gap
        return {
            "family": self.family,
            "method": self.method,
            "status": str(self.status),
            "sense": self.sense,
            "objective": self.objective,
            "bound": self.bound,
            "gap": None if gap is None or math.isinf(gap) else gap,
            "runtime_s": self.runtime_s,
            "backend": self.backend,
            "backend_version": self.backend_version,
            "model_size": {
                "variables": self.num_variables,
                "integer_variables": self.num_integer_variables,
                "constraints": self.num_constraints,
            },
            "seed": self.seed,
            "versions": versions(),
            "info": _jsonable(self.info),
            "schedule": schedule_json,
        }


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if hasattr(value, "item") and callable(value.item):  # numpy scalars
        return value.item()
    return value
