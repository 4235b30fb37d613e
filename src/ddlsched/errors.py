"""The exceptions of ddlsched.

Every error a user can cause (a bad file, an impossible instance, an unknown
method) derives from :class:`DdlschedError`; the CLI turns these into a
one-line message and exit status 2.
"""

__all__ = [
    "DdlschedError",
    "InfeasibleScheduleError",
    "InvalidInstanceError",
    "ModelTooLargeError",
    "NoScheduleFound",
    "SolverClaimError",
    "SolverError",
    "StoreError",
    "TimeLimitReached",
    "UnknownMethodError",
]


class DdlschedError(Exception):
    """Base class of the errors a user can cause."""


class InvalidInstanceError(DdlschedError, ValueError):
    """An instance (or instance file) is malformed; the message names the field."""


class InfeasibleScheduleError(DdlschedError, ValueError):
    """A schedule violates the family's rules (capacity, gang, horizon, ...).

    ``details`` holds machine-readable facts the evaluator established on
    the way (e.g. ``failure="horizon_overrun"`` and the makespan the
    schedule would have had); the method pipeline copies them into the
    result's ``info``.
    """

    def __init__(self, message: str, **details: object) -> None:
        super().__init__(message)
        self.details = details


class UnknownMethodError(DdlschedError, KeyError):
    """A method, family, backend or preset name is not known."""

    def __str__(self) -> str:  # KeyError quotes its message; we do not.
        return str(self.args[0]) if self.args else ""


class SolverError(DdlschedError, RuntimeError):
    """A solver backend is unavailable or failed in a way that is not a status."""


class ModelTooLargeError(DdlschedError):
    """A model would be too large to build; refused before it is built (``docs/architecture.md``).

    The message names the estimated size, the cap and a parameter that
    would shrink the model.
    """


class SolverClaimError(SolverError):
    """A solver's claim (objective, bound) disagrees with the family evaluator.

    Raised in one place, :func:`ddlsched.pipeline.finish`; a benchmark
    records it as an ``error`` row. It means a formulation or an evaluator
    is wrong, never a user mistake.
    """


class TimeLimitReached(DdlschedError):
    """A method ran out of its time limit before it had anything to report.

    Raised by :meth:`ddlsched.deadline.Deadline.check`; the method pipeline
    turns it into a result with status ``time_limit_no_solution``.
    """


class NoScheduleFound(DdlschedError):
    """A heuristic or a rounding ended without a schedule: a result, not a failure.

    Raised where a method gives up (no feasible draw, no plan within the
    horizon); :func:`ddlsched.registry.run_method` turns it into a result with
    status ``no_solution``, the message in ``info['reason']`` and ``details``
    added to ``info`` (never raised to the caller, not even to ``ddlsched
    solve``, which exits 0). Not a proof that no schedule exists
    (``infeasible`` is one).
    """

    def __init__(self, reason: str, **details: object) -> None:
        super().__init__(reason)
        self.details = details


class StoreError(DdlschedError):
    """A results directory cannot be written or read.

    A full disk, a permission error, a corrupt or truncated results file:
    the message is one line naming the file and the reason (``<path>:
    cannot write (No space left on device)``). Rows written before the
    fault are kept.
    """
