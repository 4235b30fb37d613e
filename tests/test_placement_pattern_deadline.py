"""The pattern-cover search of ``placement exact`` under the method's deadline.

Each pattern LP gets ``time_limit`` = what the deadline leaves; no LP starts once
it has passed; an LP cut by it proves nothing, so the search keeps what was
proven before (the first pattern value not below ``lower``, or the certified LP
bound once the bisection has ended) and returns no placement. Its integer solves
run in the HiGHS worker process. The clock is moved, not the machine loaded
(:mod:`ddlsched.deadline`'s ``time.monotonic`` is replaced).
"""

from __future__ import annotations

import highspy
import pytest
from test_placement_methods import TINY, brute_force

import ddlsched.deadline as deadline_module
import ddlsched.solvers.placement_pattern_cover as cover
from ddlsched.deadline import Deadline
from ddlsched.models.placement_bounds import coefficients
from ddlsched.models.placement_pattern_proof import pattern_search
from ddlsched.solvers import highs_server

#: Needs 7 pattern LPs and, with the default options, 3 integer solves.
INSTANCE = TINY[7]


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch):
    fake = _Clock()
    monkeypatch.setattr(deadline_module.time, "monotonic", fake.monotonic)
    return fake


def _option(highs, name: str) -> float:
    """An option's value (highspy 1.16 returns ``(status, value)``)."""
    value = highs.getOptionValue(name)
    return float(value[1] if isinstance(value, tuple) else value)


def _lps_take(monkeypatch, clock, seconds: float) -> list[float]:
    """Every pattern LP advances the clock by ``seconds``; the limits handed to HiGHS."""
    limits: list[float] = []
    real = cover._run_lp

    def timed(highs, deadline):
        real(highs, deadline)
        limits.append(_option(highs, "time_limit") - highs.getRunTime())
        clock.now += seconds

    monkeypatch.setattr(cover, "_run_lp", timed)
    return limits


def test_the_full_search_as_reference():
    coef = coefficients(INSTANCE)
    full = pattern_search(INSTANCE, coef)
    assert full.lp_solves == 7 and full.mip_solves == 3 and not full.stopped
    assert full.bound / coef.scale <= brute_force(INSTANCE) * (1 + 1e-9)


def test_each_lp_gets_what_the_deadline_leaves(monkeypatch, clock):
    limits = _lps_take(monkeypatch, clock, 1.0)
    found = pattern_search(INSTANCE, coefficients(INSTANCE), deadline=Deadline(100.0))
    assert not found.stopped and found.lp_solves == 7
    # 100 s, less one second per LP before it (HiGHS's own run clock added back)
    assert limits == pytest.approx([100.0 - k for k in range(len(limits))], abs=0.05)


def test_a_deadline_passed_between_lps_keeps_the_first_value(monkeypatch, clock):
    coef = coefficients(INSTANCE)
    full = pattern_search(INSTANCE, coef)
    passed = Deadline(1.0)
    clock.now += 2.0
    none_run = pattern_search(INSTANCE, coef, deadline=passed)
    assert none_run.stopped and none_run.counts is None and none_run.lp_solves == 0
    first = none_run.bound  # what holds before any LP: the first value >= lower
    assert first < full.bound
    _lps_take(monkeypatch, clock, 1.0)
    cut = pattern_search(INSTANCE, coef, deadline=Deadline(2.5))  # the fourth LP never starts
    assert cut.stopped and cut.counts is None and cut.lp_solves == 3
    assert cut.bound == first


def test_a_cut_after_the_bisection_keeps_the_certified_bound(monkeypatch, clock):
    coef = coefficients(INSTANCE)
    full = pattern_search(INSTANCE, coef)
    _lps_take(monkeypatch, clock, 1.0)
    # the bound and its certificate take 6 LPs; the 7th, at the bound, never starts
    cut = pattern_search(INSTANCE, coef, deadline=Deadline(5.5))
    assert cut.stopped and cut.counts is None
    assert cut.bound == full.bound


class _StoppedHighs:
    """A ``Highs`` whose run ends at its time limit; records the option set."""

    def __init__(self) -> None:
        self.options: dict[str, float] = {}

    def getRunTime(self) -> float:
        return 3.0

    def setOptionValue(self, name: str, value: float) -> None:
        self.options[name] = value

    def run(self) -> None:
        pass

    def getModelStatus(self):
        return highspy.HighsModelStatus.kTimeLimit


def test_an_lp_stopped_by_its_time_limit_is_cut(clock):
    highs = _StoppedHighs()
    deadline = Deadline(10.0)
    clock.now += 4.0
    with pytest.raises(cover._LpCut):
        cover._run_lp(highs, deadline)
    assert highs.options["time_limit"] == pytest.approx(3.0 + 6.0)


def test_integer_solves_run_in_the_worker(monkeypatch):
    seen: list[float] = []
    real = highs_server.solve_mip

    def spy(mip, seconds, **kwargs):
        seen.append(seconds)
        assert mip.integer.all()
        return real(mip, seconds, **kwargs)

    monkeypatch.setattr(highs_server, "solve_mip", spy)
    found = pattern_search(INSTANCE, coefficients(INSTANCE))
    assert found.mip_solves == len(seen) == 3
    assert all(0 < s <= 2.0 for s in seen)  # mip_seconds, a safety net: finite, in the worker
    assert found.counts is not None


def test_a_killed_integer_solve_gives_no_placement_of_its_own(monkeypatch):
    def killed(mip, seconds, **kwargs):
        status = highspy.HighsModelStatus.kInterrupt
        return highs_server.DirectRun(status, float("nan"), float("inf"), False, None, killed=True)

    monkeypatch.setattr(highs_server, "solve_mip", killed)
    coef = coefficients(INSTANCE)
    found = pattern_search(INSTANCE, coef)
    assert found.counts is None and found.mip_solves > 0
    assert found.bound == pattern_search(INSTANCE, coef, max_mips=0).bound
