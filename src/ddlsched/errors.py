"""The exceptions of ddlsched.

Every error a user can cause (a bad file, an impossible instance, an unknown
method) derives from :class:`DdlschedError`; the CLI turns these into a
one-line message and exit status 2.
"""

__all__ = [
    "DdlschedError",
    "InfeasibleScheduleError",
    "InvalidInstanceError",
    "SolverError",
    "UnknownMethodError",
]


class DdlschedError(Exception):
    """Base class of the errors a user can cause."""


class InvalidInstanceError(DdlschedError, ValueError):
    """An instance (or instance file) is malformed; the message names the field."""


class InfeasibleScheduleError(DdlschedError, ValueError):
    """A schedule violates the family's rules (capacity, gang, horizon, ...)."""


class UnknownMethodError(DdlschedError, KeyError):
    """A method, family, backend or preset name is not known."""

    def __str__(self) -> str:  # KeyError quotes its message; we do not.
        return str(self.args[0]) if self.args else ""


class SolverError(DdlschedError, RuntimeError):
    """A solver backend is unavailable or failed in a way that is not a status."""
