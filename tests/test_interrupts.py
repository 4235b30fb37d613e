"""An interrupt that cannot be lost. Whatever swallows the deadline's
interrupt (a library that catches everything and goes on, a gc callback, a destructor), it
fires again until the block is left, within a bounded delay; it is never raised where
Python would only print it ("Exception ignored"), nor into the cleanup its own exception
unwinds through."""

from __future__ import annotations

import contextlib
import gc
import sys
import time
import weakref

import pytest

from ddlsched.deadline import Deadline
from ddlsched.errors import TimeLimitReached


def _busy(seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


def test_an_interrupt_caught_once_fires_again():
    started = time.monotonic()
    with pytest.raises(TimeLimitReached), Deadline(0.1).interrupting("swallowed once"):
        with contextlib.suppress(TimeLimitReached):  # a library swallows it...
            _busy(0.5)  # ...the first interrupt, which lands here
        _busy(10.0)
    assert time.monotonic() - started < 1.0


def test_work_after_a_library_caught_it_is_interrupted_too():
    started = time.monotonic()
    with pytest.raises(TimeLimitReached), Deadline(0.1).interrupting("a fallback"):
        try:
            _busy(0.5)
        except TimeLimitReached:
            fallback = True  # a library notes the failure, then computes a fallback
        if fallback:
            _busy(20.0)
    assert time.monotonic() - started < 1.0


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
    started = time.monotonic()
    try:
        with pytest.raises(TimeLimitReached), Deadline(0.1).interrupting("gc"):
            gc.collect()
            _busy(10.0)
    finally:
        gc.callbacks.remove(slow_callback)
    assert time.monotonic() - started < 3.0  # not 10 s: interrupted (3 s: loaded machines)
    assert not unraisable, [u.exc_value for u in unraisable]


def test_an_interrupt_is_not_raised_inside_a_destructor(unraisable):
    class Slow:
        def __del__(self):
            _busy(0.3)

    started = time.monotonic()
    with pytest.raises(TimeLimitReached), Deadline(0.1).interrupting("a destructor"):
        Slow()  # destroyed at once: __del__ runs past the deadline
        _busy(10.0)
    assert time.monotonic() - started < 3.0  # not 10 s: interrupted (3 s: loaded machines)
    assert not unraisable, [u.exc_value for u in unraisable]


def test_cleanup_while_the_interrupt_unwinds_is_not_cut():
    cleaned = []
    with pytest.raises(TimeLimitReached), Deadline(0.05).interrupting("cleanup"):
        try:
            _busy(10.0)
        finally:
            _busy(0.8)  # a slow cleanup (16 re-fires of 50 ms) runs to its end
            cleaned.append(True)
    assert cleaned == [True]


def test_an_interrupt_is_not_raised_inside_a_weakref_callback(unraisable):
    """``weakref.finalize`` (like ``WeakSet._remove``, seen during a Pyomo model build)
    runs when its object dies, where Python only prints an exception."""

    class Dying:
        pass

    started = time.monotonic()
    with pytest.raises(TimeLimitReached), Deadline(0.1).interrupting("a weakref callback"):
        obj = Dying()
        weakref.finalize(obj, _busy, 0.3)  # the deadline passes in here
        del obj
        _busy(10.0)
    assert time.monotonic() - started < 1.0
    assert not unraisable, [u.exc_value for u in unraisable]
