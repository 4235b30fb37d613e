"""Progress of long work: library code says what it is doing, the CLI may show it.

Library modules call :func:`phase` (``progress.phase("solving rar_exact
with highs")``) and :func:`incumbent` (the objective and bound a solve
ended with). Both are no-ops, one global read, unless a listener is
installed with :func:`listening`; the library still never prints. The CLI's
``solve`` installs a :class:`State` and draws it as one transient line on
stderr when stderr is a terminal (``--quiet`` turns it off).

Thread-safe: a listener is installed and removed under a lock, and
:class:`State` guards its fields with its own; calls may come from any
thread. Worker processes of a benchmark install no listener.

The calls are made in the shared places only: :func:`ddlsched.registry.run_method`
(method start and end) and :func:`ddlsched.solvers.formulation.solve_formulation`
(building a model, solving it with a backend, the cross-check, and the
incumbent and bound of every solve).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Protocol

__all__ = ["Listener", "Snapshot", "State", "incumbent", "listening", "phase"]


class Listener(Protocol):
    """What :func:`phase` and :func:`incumbent` report to."""

    def phase(self, text: str) -> None: ...

    def incumbent(self, objective: float | None, bound: float | None, source: str) -> None: ...


_lock = threading.Lock()
_listener: Listener | None = None


def phase(text: str) -> None:
    """Report the step now under way (e.g. ``"building the rar_exact model (highs)"``)."""
    listener = _listener
    if listener is not None:
        listener.phase(text)


def incumbent(objective: float | None, bound: float | None, source: str = "") -> None:
    """Report the objective and the bound of a finished solve (``None``: unknown)."""
    listener = _listener
    if listener is not None:
        listener.incumbent(objective, bound, source)


@contextmanager
def listening(listener: Listener) -> Iterator[Listener]:
    """Install ``listener`` for the duration of the block (the previous one after it)."""
    global _listener
    with _lock:
        previous, _listener = _listener, listener
    try:
        yield listener
    finally:
        with _lock:
            _listener = previous


@dataclass(frozen=True)
class Snapshot:
    """What a :class:`State` knows at one moment."""

    phase: str
    elapsed_s: float
    objective: float | None
    bound: float | None
    source: str

    def text(self) -> str:
        """One line: ``phase  12.3 s  source: incumbent X, bound Y``."""
        parts = [self.phase, f"{self.elapsed_s:.1f} s"]
        known = [
            f"{name} {value:.6g}"
            for name, value in (("incumbent", self.objective), ("bound", self.bound))
            if value is not None
        ]
        if known:
            parts.append((f"{self.source}: " if self.source else "") + ", ".join(known))
        return "  ".join(parts)


class State:
    """A listener that keeps the latest phase, incumbent and bound (thread-safe)."""

    def __init__(self, first_phase: str = "starting") -> None:
        self._lock = threading.Lock()
        self._started = time.monotonic()
        self._phase = first_phase
        self._objective: float | None = None
        self._bound: float | None = None
        self._source = ""

    def phase(self, text: str) -> None:
        with self._lock:
            self._phase = text

    def incumbent(self, objective: float | None, bound: float | None, source: str) -> None:
        with self._lock:
            self._objective, self._bound, self._source = objective, bound, source

    def snapshot(self) -> Snapshot:
        with self._lock:
            return Snapshot(
                self._phase,
                time.monotonic() - self._started,
                self._objective,
                self._bound,
                self._source,
            )
