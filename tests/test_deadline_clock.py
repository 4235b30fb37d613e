"""``Deadline(clock=...)``: a deadline reads only the clock it is given, and so do its
sub-deadlines (the tests' way to cut a method at a point that does not depend on speed)."""

from __future__ import annotations

import math

import pytest
from fake_clock import StepClock

from ddlsched.deadline import Deadline
from ddlsched.errors import TimeLimitReached


def test_a_deadline_and_its_sub_deadlines_pass_when_the_given_clock_says_so():
    clock = StepClock()
    deadline = Deadline(10.0, clock=clock)
    phase = deadline.sub(0.5)
    assert (deadline.remaining_s(), phase.remaining_s()) == (10.0, 5.0)
    assert not phase.expired() and phase.elapsed_s() == 0.0
    clock.advance(5.0)
    assert phase.expired() and not deadline.expired()
    assert deadline.remaining_s() == 5.0 and phase.remaining_s() == 0.0
    clock.advance(5.0)
    with pytest.raises(TimeLimitReached, match="time limit of 10 s reached in a test"):
        deadline.check("a test")


def test_a_ticking_clock_expires_after_a_fixed_number_of_reads():
    clock = StepClock(tick_s=1.0)
    deadline = Deadline(3.0, clock=clock)  # read 1: started at 0
    assert [deadline.expired() for _ in range(4)] == [False, False, True, True]
    assert clock.reads == 5


def test_the_default_clock_is_the_monotonic_one():
    assert math.isinf(Deadline.unlimited().remaining_s())
    assert 0 < Deadline(5.0).remaining_s() <= 5.0


def test_import_within_stops_a_cold_import_at_the_deadline(tmp_path, monkeypatch):
    import pytest

    from ddlsched.deadline import Deadline, import_within
    from ddlsched.errors import TimeLimitReached

    import_within("json", Deadline(1e-6), "a test")  # already there: no wait
    (tmp_path / "ddlsched_slow_module.py").write_text("import time\ntime.sleep(5)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(TimeLimitReached, match="importing ddlsched_slow_module for a test"):
        import_within("ddlsched_slow_module", Deadline(0.05), "a test")
