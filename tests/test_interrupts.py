"""An interrupt that cannot be lost. Whatever swallows the deadline's
interrupt (a library that catches everything and goes on, a gc callback, a destructor), it
fires again until the block is left, within a bounded delay; it is never raised where
Python would only print it ("Exception ignored"), nor into the cleanup its own exception
unwinds through.

No test reads the clock to pass: the work the deadline must cut is endless
(:func:`_forever`), so only the interrupt ends it; a lost interrupt hangs the test,
which the timeout then fails."""

from __future__ import annotations

import contextlib
import gc
import sys
import time
import weakref

import pytest

from ddlsched.deadline import Deadline
from ddlsched.errors import TimeLimitReached

#: a lost interrupt would spin forever: fail it (a thread: SIGALRM is the deadline's)
pytestmark = pytest.mark.timeout(300, method="thread")


def _forever() -> None:
    """Work that only an interrupt ends."""
    while True:
        pass


def _busy(seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


def test_an_interrupt_caught_once_fires_again():
    with pytest.raises(TimeLimitReached), Deadline(0.1).interrupting("swallowed once"):
        with contextlib.suppress(TimeLimitReached):  # a library swallows it...
            _forever()  # ...the first interrupt, the only way out of here
        _forever()


def test_work_after_a_library_caught_it_is_interrupted_too():
    with pytest.raises(TimeLimitReached), Deadline(0.1).interrupting("a fallback"):
        fallback = False
        try:
            _forever()
        except TimeLimitReached:
            fallback = True  # a library notes the failure, then computes a fallback
        if fallback:
            _forever()


@pytest.fixture
def unraisable():
    seen = []
    previous = sys.unraisablehook
    sys.unraisablehook = seen.append
    yield seen
    sys.unraisablehook = previous


def test_an_interrupt_is_not_raised_inside_a_gc_callback(unraisable):
    def slow_callback(phase, info):
        if phase == "start":
            _busy(0.3)  # the deadline passes in here: raising here would be swallowed

    gc.callbacks.append(slow_callback)
    try:
        with pytest.raises(TimeLimitReached), Deadline(0.1).interrupting("gc"):
            gc.collect()
            _forever()
    finally:
        gc.callbacks.remove(slow_callback)
    assert not unraisable, [u.exc_value for u in unraisable]


def test_an_interrupt_is_not_raised_inside_a_destructor(unraisable):
    class Slow:
        def __del__(self):
            _busy(0.3)

    with pytest.raises(TimeLimitReached), Deadline(0.1).interrupting("a destructor"):
        Slow()  # destroyed at once: __del__ runs past the deadline
        _forever()
    assert not unraisable, [u.exc_value for u in unraisable]


def test_cleanup_while_the_interrupt_unwinds_is_not_cut():
    cleaned = []
    with pytest.raises(TimeLimitReached), Deadline(0.05).interrupting("cleanup"):
        try:
            _forever()
        finally:
            _busy(0.8)  # a slow cleanup (16 re-fires of 50 ms) runs to its end
            cleaned.append(True)
    assert cleaned == [True]


def test_an_interrupt_is_not_raised_inside_a_weakref_callback(unraisable):
    """``weakref.finalize`` (like ``WeakSet._remove``, seen during a Pyomo model build)
    runs when its object dies, where Python only prints an exception."""

    class Dying:
        pass

    with pytest.raises(TimeLimitReached), Deadline(0.1).interrupting("a weakref callback"):
        obj = Dying()
        weakref.finalize(obj, _busy, 0.3)  # the deadline passes in here
        del obj
        _forever()
    assert not unraisable, [u.exc_value for u in unraisable]
