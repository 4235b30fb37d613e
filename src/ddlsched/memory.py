"""The memory budget of a method: what it may allocate, and the one check against it.

Every method that allocates in proportion to its instance (an exact model,
a dense weight matrix, a per-GPU array, a graph of all job pairs) estimates
its need *before* allocating and calls :func:`require_memory`, which
refuses with a one-line :class:`~ddlsched.errors.ModelTooLargeError`
naming the estimate, the budget and what would shrink the need. A method
never starts an allocation it cannot finish, so a hostile size gets an
error, not a swap storm or an out-of-memory kill.

The budget, in order of precedence:

1. :func:`set_budget_mb` (the CLI's ``--memory-budget MB``);
2. the environment variable ``DDLSCHED_MEMORY_BUDGET_MB``;
3. :data:`DEFAULT_SHARE` of the machine's physical memory, or of the
   process's address-space limit (``RLIMIT_AS``, e.g. a benchmark task's
   ``memory_mb``) when that is smaller.

Estimates are deliberately coarse upper figures (per-element constants
measured on CPython 3.11, numpy 2, Pyomo 6; see :func:`model_bytes`); the
budget is a safety rail, not an accounting.

>>> require_memory("a tiny array", 1_000, "nothing")
>>> budget_bytes() > 0
True
"""

from __future__ import annotations

import math
import os
import resource
from collections.abc import Iterator
from contextlib import contextmanager

from ddlsched.errors import DdlschedError, ModelTooLargeError

__all__ = [
    "DEFAULT_SHARE",
    "ENV_VAR",
    "budget_bytes",
    "budget_for",
    "format_bytes",
    "model_bytes",
    "require_memory",
    "set_budget_mb",
]

#: Share of the machine's memory (or of the process's address-space limit) a method may use.
DEFAULT_SHARE = 0.5
#: Environment variable that sets the budget in MiB.
ENV_VAR = "DDLSCHED_MEMORY_BUDGET_MB"
#: Bytes a Pyomo model needs per variable and per nonzero, its rows and the solver's
#: copy included (measured: a model of one 10-term row per variable takes ~1.9 KB a
#: variable once built, ~4.4 KB after the hand-over to HiGHS; ~300 B per Pyomo
#: variable, ~600 B per row, ~24 B per nonzero in Pyomo alone).
BYTES_PER_VARIABLE = 2_500
BYTES_PER_NONZERO = 250

_override_bytes: int | None = None


def set_budget_mb(megabytes: float | None) -> None:
    """Set the process's budget in MiB (``None``: back to the environment or default)."""
    global _override_bytes
    if megabytes is None:
        _override_bytes = None
        return
    if isinstance(megabytes, bool) or not isinstance(megabytes, (int, float)):
        raise DdlschedError(f"memory budget must be a number of MiB, got {megabytes!r}")
    if not (math.isfinite(megabytes) and megabytes >= 1):
        raise DdlschedError(f"memory budget must be at least 1 MiB, got {megabytes!r}")
    _override_bytes = int(megabytes * 2**20)


@contextmanager
def budget_for(megabytes: float) -> Iterator[None]:
    """Within the block, the budget is ``megabytes`` here and in processes started here."""
    saved_env = os.environ.get(ENV_VAR)
    saved = _override_bytes
    set_budget_mb(megabytes)
    os.environ[ENV_VAR] = repr(float(megabytes))
    try:
        yield
    finally:
        globals()["_override_bytes"] = saved
        if saved_env is None:
            os.environ.pop(ENV_VAR, None)
        else:
            os.environ[ENV_VAR] = saved_env


def _physical_bytes() -> int:
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):  # not POSIX: assume 8 GiB
        return 8 * 2**30


def budget_bytes() -> int:
    """The memory a method may allocate, in bytes (see the module docstring)."""
    if _override_bytes is not None:
        return _override_bytes
    raw = os.environ.get(ENV_VAR)
    if raw:
        try:
            megabytes = float(raw)
        except ValueError:
            raise DdlschedError(f"{ENV_VAR}={raw!r}: expected a number of MiB") from None
        if not (math.isfinite(megabytes) and megabytes >= 1):
            raise DdlschedError(f"{ENV_VAR}={raw!r}: must be at least 1 MiB")
        return int(megabytes * 2**20)
    total = _physical_bytes()
    soft, _hard = resource.getrlimit(resource.RLIMIT_AS)
    if soft != resource.RLIM_INFINITY and soft > 0:
        total = min(total, soft)
    return int(total * DEFAULT_SHARE)


def format_bytes(nbytes: float) -> str:
    """``1.5 GiB``, ``300 MiB``, ``12 KiB``: a size for a message."""
    if not math.isfinite(nbytes):
        return "an unbounded amount"
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if nbytes >= size:
            return f"{nbytes / size:.3g} {unit}"
    return f"{int(nbytes)} B"


def model_bytes(variables: float, nonzeros: float | None = None) -> float:
    """Estimated bytes of a Pyomo model of that size and its solver copy.

    Without a nonzero count, ten nonzeros per variable are assumed.
    """
    if nonzeros is None:
        nonzeros = 10 * variables
    return BYTES_PER_VARIABLE * variables + BYTES_PER_NONZERO * nonzeros


def require_memory(what: str, nbytes: float, hint: str) -> None:
    """Refuse (before allocating) when ``what`` needs more than the budget.

    ``nbytes`` is the estimate; ``hint`` says what would shrink it (a
    ``--param``, a smaller instance). Raises
    :class:`~ddlsched.errors.ModelTooLargeError` with one line naming both.
    """
    budget = budget_bytes()
    if not nbytes <= budget:  # also refuses NaN and inf estimates
        raise ModelTooLargeError(
            f"{what} would need about {format_bytes(nbytes)}, more than the memory budget of "
            f"{format_bytes(budget)} (--memory-budget MB or {ENV_VAR} sets it); {hint}"
        )
