"""Time limits: one default, and one deadline object passed down a method.

A method's time limit is wall time for the whole method: model building,
every sub-solve and any cross-check included. :func:`ddlsched.registry.run_method`
starts a :class:`Deadline` when the method starts and hands it down; a
sub-model gets what remains (or a share of it), never a fixed slice, so
the method cannot overrun by construction except by the granularity of the
work between two checks (a Pyomo constraint block, a solver's hand-over;
``benchmarks/results/platform.md`` states the measured margin).

>>> d = Deadline(5.0)
>>> 0 < d.remaining_s() <= 5.0
True
>>> Deadline.unlimited().remaining_s()
inf
"""

from __future__ import annotations

import _weakrefset
import gc
import math
import signal
import sys
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

from ddlsched.errors import TimeLimitReached

__all__ = ["DEFAULT_TIME_LIMIT_S", "Deadline", "import_within"]

#: Longest single arming of the interrupt timer (``setitimer`` overflows near 1e10 s).
_ARM_MAX_S = 1e6
#: Delay before the interrupt fires again (it re-fires until the block is left).
_REFIRE_S = 0.05
#: Delay when it landed where it must not be raised (an import, a gc callback, ``__del__``).
_POSTPONE_S = 0.02
#: Whether an :meth:`Deadline.interrupting` block is active (nested blocks are no-ops).
_interrupting = False

#: The default time limit of every method, in seconds (the only place it is written).
DEFAULT_TIME_LIMIT_S = 60.0


class Deadline:
    """A point in (monotonic) time by which a method must have returned.

    ``Deadline(limit_s)`` starts now; ``limit_s`` may be ``math.inf``.
    ``clock`` (``None``: :func:`time.monotonic`) is read for every time the
    deadline tells; a test hands in its own clock, so that when the deadline
    passes does not depend on the machine's speed (its :meth:`sub` deadlines
    read the same clock).
    """

    __slots__ = ("_clock", "_end", "limit_s", "plan_s", "started")

    def __init__(
        self, limit_s: float = DEFAULT_TIME_LIMIT_S, clock: Callable[[], float] | None = None
    ) -> None:
        if not (isinstance(limit_s, (int, float)) and not isinstance(limit_s, bool)) or not (
            limit_s > 0
        ):
            raise ValueError(f"a time limit must be a positive number of seconds, got {limit_s!r}")
        self.limit_s = float(limit_s)
        #: The time planned for the work under this deadline: the limit for a deadline made
        #: from a limit, ``share x`` the parent's plan (capped at ``at_most``) for a
        #: :meth:`sub` deadline. Unlike :meth:`remaining_s` it does not depend on how fast
        #: the machine ran before: size choices made from it (a time grid, a model's size)
        #: are the same on a quiet and on a loaded machine.
        self.plan_s = self.limit_s
        self._clock = time.monotonic if clock is None else clock
        self.started = self._clock()
        self._end = self.started + self.limit_s

    @classmethod
    def unlimited(cls) -> Deadline:
        """A deadline that never comes."""
        return cls(math.inf)

    def elapsed_s(self) -> float:
        """Seconds since the deadline was started."""
        return self._clock() - self.started

    def remaining_s(self) -> float:
        """Seconds left (0 once expired; ``inf`` when unlimited)."""
        return max(0.0, self._end - self._clock())

    def expired(self) -> bool:
        return self._clock() >= self._end

    def check(self, what: str = "the method") -> None:
        """Raise :class:`~ddlsched.errors.TimeLimitReached` if the deadline has passed."""
        if self.expired():
            raise TimeLimitReached(f"time limit of {self.limit_s:g} s reached in {what}")

    def budget_s(self, share: float = 1.0, at_most: float | None = None) -> float:
        """Seconds a phase may use: ``share`` of what remains, capped at ``at_most``."""
        seconds = self.remaining_s() * share
        return seconds if at_most is None else min(seconds, at_most)

    def sub(self, share: float = 1.0, at_most: float | None = None) -> Deadline:
        """A deadline for one phase: :meth:`budget_s`, never later than this one."""
        child = Deadline.__new__(Deadline)
        child._clock = self._clock
        child.started = self._clock()
        child.limit_s = self.budget_s(share, at_most)
        plan_s = self.plan_s * share
        child.plan_s = plan_s if at_most is None else min(plan_s, at_most)
        child._end = min(self._end, child.started + child.limit_s)
        return child

    @contextmanager
    def interrupting(
        self, what: str = "the method", error: Callable[[str], BaseException] = TimeLimitReached
    ) -> Iterator[None]:
        """Raise ``error(message)`` (:class:`~ddlsched.errors.TimeLimitReached`) inside the
        block at the deadline.

        For work that cannot check the deadline itself: Pyomo constructing a
        block of constraints, a pure-Python library routine (networkx's
        matching). A ``SIGALRM`` timer interrupts the main thread at the next
        Python bytecode once the deadline passes (a C call, e.g. a solver,
        finishes first, so never wrap a solve that has its own limit). Never
        wrap a block that hands its output to a thread, such as Pyomo's
        ``capture_output``: interrupted there, the thread is left reading a
        pipe that the block's exit closes (the HiGHS hand-over in
        ``solvers/backends.py`` adds the model outside Pyomo's capture). Never
        inside an import (a module interrupted half-way stays broken for the
        rest of the process): it tries again 20 ms later. A no-op off the
        main thread (Dask workers), without a
        finite deadline, or when a timer is already running (an outer block
        then interrupts).

        An interrupt cannot be lost: once the deadline has passed it
        fires again every :data:`_REFIRE_S` until the block is left, so a
        library that catches it, or a callback where Python swallows it,
        only delays it. It is never raised where Python would only print it
        ("Exception ignored in ..."): inside a ``__del__``, a gc callback or a
        weakref callback of the standard library (``WeakSet``, ``finalize``) it
        is postponed by :data:`_POSTPONE_S`, as in an import. While our own
        exception is being handled (a ``finally`` or ``except`` clause: the
        cleanup of a library it unwinds through, such as Pyomo's restoring of
        the output streams) it is not raised again: a cleanup cut half-way
        leaves the library broken (Pyomo then raised a RuntimeError). Work
        that a library does after catching it runs outside the clause and
        is interrupted.
        """
        global _interrupting
        if (
            _interrupting
            or not math.isfinite(self._end)
            or threading.current_thread() is not threading.main_thread()
            or signal.getitimer(signal.ITIMER_REAL)[0] > 0  # someone else's timer
        ):
            yield
            return
        active = True

        def expire(signum: int, frame: FrameType | None) -> None:
            if not active:  # the block is being left: never raise in its teardown
                return
            if not self.expired():  # armed in steps of at most _ARM_MAX_S
                signal.setitimer(signal.ITIMER_REAL, min(self.remaining_s(), _ARM_MAX_S) + 1e-3)
                return
            if _swallowed_here(frame):
                signal.setitimer(signal.ITIMER_REAL, _POSTPONE_S)
                return
            signal.setitimer(signal.ITIMER_REAL, _REFIRE_S)  # cancelled when the block exits
            if isinstance(sys.exc_info()[1], error):  # our exception is unwinding: let it
                return
            raise error(f"time limit of {self.limit_s:g} s reached in {what}")

        previous = signal.signal(signal.SIGALRM, expire)
        _interrupting = True
        try:
            signal.setitimer(signal.ITIMER_REAL, max(min(self.remaining_s(), _ARM_MAX_S), 1e-4))
            try:
                yield
            except BaseException as exc:
                # a library caught the interrupt and raised its own error (Pyomo's rule
                # inspection turns it into a TypeError): it is still the time limit
                if not isinstance(exc, error) and _caused_by(exc, error):
                    raise error(f"time limit of {self.limit_s:g} s reached in {what}") from exc
                raise
        finally:
            active = False
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous if previous is not None else signal.SIG_DFL)
            _interrupting = False

    def __repr__(self) -> str:
        return f"Deadline(limit_s={self.limit_s:g}, remaining_s={self.remaining_s():.3f})"


#: Background imports started by :func:`import_within` (module name -> thread).
_IMPORTS: dict[str, threading.Thread] = {}
_IMPORTS_LOCK = threading.Lock()


def import_within(module: str, deadline: Deadline, what: str) -> None:
    """Import ``module`` if the deadline lets it finish; else raise
    :class:`~ddlsched.errors.TimeLimitReached` at the deadline, naming ``what``.

    An import cannot be interrupted (one cut half-way leaves the module broken
    for the rest of the process), and how long it takes depends on the
    machine's load (Pyomo: 0.8 s cold on a quiet machine, more than 5 s at
    load 12). So it runs in a background (daemon) thread, and the caller waits
    for it only until the deadline: a method that cannot have the module in
    time stops at its limit, and the import goes on in the background for
    the next caller (which then waits for it to end, by the import lock).
    A method's adapter calls it, then imports the module with a plain ``from
    ... import ...`` statement (a no-op by then), which the code fingerprint of
    the method (:mod:`ddlsched.bench.fingerprint`) reads to cover the module.
    """
    with _IMPORTS_LOCK:
        thread = _IMPORTS.get(module)
        if thread is None and module in sys.modules:  # imported (not by us, or by us: done)
            return
        if thread is None:
            thread = threading.Thread(
                target=_import_quietly, args=(module,), name=f"import {module}", daemon=True
            )
            _IMPORTS[module] = thread
            thread.start()
    remaining = deadline.remaining_s()
    thread.join(None if not math.isfinite(remaining) else remaining)
    if thread.is_alive():
        raise TimeLimitReached(
            f"time limit of {deadline.limit_s:g} s reached in importing {module} for {what}"
        )


def _import_quietly(module: str) -> None:
    import contextlib
    import importlib

    with contextlib.suppress(Exception):  # the caller's own import raises it again
        importlib.import_module(module)


#: The standard library's weakref modules: their callbacks (``WeakSet._remove``, a
#: ``WeakValueDictionary``'s ``remove``, ``weakref.finalize``) run when an object dies,
#: where an exception is only printed. A library's own ``weakref.ref(obj, callback)``
#: cannot be told apart from ordinary code; an interrupt swallowed there fires again.
_WEAKREF_FILES = frozenset({weakref.__file__, _weakrefset.__file__})


def _swallowed_here(frame: FrameType | None) -> bool:
    """Whether an exception raised in ``frame`` would be swallowed or leave a module half
    imported: inside an import, a ``__del__``, a gc callback or the standard library's
    weakref callbacks."""
    callbacks = {getattr(cb, "__code__", None) for cb in gc.callbacks}
    while frame is not None:
        code = frame.f_code
        if (
            code.co_filename.startswith("<frozen importlib")
            or code.co_name == "__del__"
            or code in callbacks
            or code.co_filename in _WEAKREF_FILES
        ):
            return True
        frame = frame.f_back
    return False


def _caused_by(exc: BaseException, kind: type[BaseException]) -> bool:
    """Whether ``kind`` is in ``exc``'s chain of causes and contexts."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, kind):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False
