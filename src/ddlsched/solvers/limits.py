"""Settings of a solve (gaps, threads, seed, extra HiGHS options), without Pyomo.

Importable by the family wiring modules and the CLI without loading a solver.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ddlsched.deadline import DEFAULT_TIME_LIMIT_S, Deadline
from ddlsched.errors import ModelTooLargeError
from ddlsched.memory import model_bytes, require_memory

__all__ = ["MAX_MODEL_VARIABLES", "SolveLimits", "check_model_size"]

#: The largest model (variables) a formulation builds. Pyomo creates a block of
#: variables in one uninterruptible call, about 3 us a variable on the development
#: machine, and a million variables with their rows take gigabytes: past this a
#: model could neither be built within a time limit nor fit a laptop.
MAX_MODEL_VARIABLES = 1_000_000


def check_model_size(what: str, variables: int, hint: str, nonzeros: int | None = None) -> None:
    """Refuse to build a model beyond :data:`MAX_MODEL_VARIABLES` or the memory budget.

    ``variables`` and ``nonzeros`` (constraint-matrix entries; about ten per
    variable when not given) are the formulation's estimate before building;
    the bytes they need are :func:`ddlsched.memory.model_bytes`, checked
    against :func:`ddlsched.memory.budget_bytes`. ``hint`` names what would
    shrink the model (a ``--param``, another method).
    """
    if variables > MAX_MODEL_VARIABLES:
        raise ModelTooLargeError(
            f"{what}: the model would have about {variables:,} variables, more than the "
            f"{MAX_MODEL_VARIABLES:,} ddlsched builds; {hint}"
        )
    size = f"{variables:,} variables" + ("" if nonzeros is None else f", {nonzeros:,} nonzeros")
    require_memory(f"{what} ({size})", model_bytes(variables, nonzeros), hint)


@dataclass(frozen=True)
class SolveLimits:
    """Settings of a solve: gaps, threads, seed, extra HiGHS options.

    ``time_limit_s`` optionally caps each solver call; the time a method may
    take is its :class:`~ddlsched.deadline.Deadline`, handed to the solve
    functions separately. Without a deadline, a call starts one of
    ``time_limit_s`` (default :data:`~ddlsched.deadline.DEFAULT_TIME_LIMIT_S`).
    """

    time_limit_s: float | None = None
    rel_gap: float = 0.0
    abs_gap: float = 1e-6
    threads: int = 1
    seed: int = 0
    highs_options: tuple[tuple[str, object], ...] = ()  # extra HiGHS options (name, value)
    #: an LP solved by HiGHS also reports ``ModelSolve.dual_bound``
    #: (:mod:`ddlsched.solvers.lp_dual_bound`: weak duality at HiGHS's row duals)
    lp_dual_bound: bool = False

    def __post_init__(self) -> None:
        if self.time_limit_s is not None and not self.time_limit_s > 0:
            raise ValueError(f"time_limit_s must be > 0, got {self.time_limit_s!r}")
        if self.rel_gap < 0 or self.abs_gap < 0:
            raise ValueError("gap limits must be >= 0")

    def deadline(self) -> Deadline:
        """A deadline of ``time_limit_s`` (the default limit when unset), starting now."""
        return Deadline(DEFAULT_TIME_LIMIT_S if self.time_limit_s is None else self.time_limit_s)

    def seconds(self, deadline: Deadline | None) -> float:
        """The time one call may take under ``deadline`` (and the cap)."""
        cap = math.inf if self.time_limit_s is None else self.time_limit_s
        if deadline is None:
            return DEFAULT_TIME_LIMIT_S if self.time_limit_s is None else cap
        return min(cap, deadline.remaining_s())
