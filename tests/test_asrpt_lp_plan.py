"""Family ``asrpt``, ``exact``'s ``lp_bound``: whether the LP relaxation runs is planned.

:func:`ddlsched.models.asrpt_strengthen.lp_lower_bound` tries the LP (its bound
and the job order it gives the incumbent search) when ``LP_SHARE`` of the
deadline's plan (``Deadline.plan_s``, the time limit) reaches ``LP_MIN_S``, not
when that share of the time *left* does: the same instance and limit try it on
a quiet and on a loaded machine. The clock is moved instead of loading the
machine (``ddlsched.deadline``'s ``time.monotonic`` is replaced).
"""

from __future__ import annotations

import pytest

import ddlsched.deadline as deadline_module
from ddlsched.deadline import Deadline
from ddlsched.errors import TimeLimitReached
from ddlsched.models import asrpt_milp
from ddlsched.models.asrpt_exact import _integer_data, _job_modes
from ddlsched.models.asrpt_strengthen import LP_MIN_S, LP_SHARE, lp_lower_bound
from ddlsched.workloads.asrpt import tiny


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now


@pytest.fixture(scope="module")
def data():
    instance = tiny(2, num_jobs=6)
    modes, _ = _job_modes(instance, "highs", Deadline(60), False, 0)
    return _integer_data(instance, modes, 5000)[0]


@pytest.fixture
def attempts(monkeypatch):
    """The plans of the LP builds started (each stopped at once: only the decision counts)."""
    seen: list[float] = []

    def build(data, phase):
        seen.append(phase.plan_s)
        raise TimeLimitReached("stopped by the test")

    monkeypatch.setattr(asrpt_milp, "build_time_indexed", build)
    return seen


@pytest.fixture
def clock(monkeypatch):
    fake = _Clock()
    monkeypatch.setattr(deadline_module.time, "monotonic", fake.monotonic)
    return fake


def test_the_lp_is_tried_when_most_of_the_limit_is_gone(data, attempts, clock):
    limit = 10.0
    deadline = Deadline(limit)
    clock.now += 9.5  # a loaded machine spent most of the limit before the LP
    # the share of the time left (0.3 s) is below LP_MIN_S: the old rule skipped the LP
    assert LP_SHARE * deadline.remaining_s() < LP_MIN_S
    assert lp_lower_bound(data, deadline) is None  # (the build was stopped)
    assert attempts == [pytest.approx(LP_SHARE * limit)]


def test_a_limit_too_short_for_the_lp_never_tries_it(data, attempts, clock):
    deadline = Deadline(0.9 * LP_MIN_S / LP_SHARE)  # a share of the plan below LP_MIN_S
    assert lp_lower_bound(data, deadline) is None
    assert attempts == []


def test_a_sub_deadline_plans_from_its_share_of_the_limit(data, attempts, clock):
    method = Deadline(4.0)
    clock.now += 3.5
    solve = method.sub(0.5)  # one of two model solves: half of what is left, planned 2 s
    assert lp_lower_bound(data, solve) is None
    assert attempts == [pytest.approx(LP_SHARE * 2.0)]


def test_nothing_left_tries_nothing(data, attempts, clock):
    deadline = Deadline(10.0)
    clock.now += 11.0
    assert lp_lower_bound(data, deadline) is None
    assert attempts == []


def test_the_lp_itself_with_a_moved_clock(data, clock):
    fresh = lp_lower_bound(data, Deadline(60.0))
    late = Deadline(60.0)
    clock.now += 30.0  # half of the limit gone: the LP's share of the rest is still ample
    assert fresh is not None and lp_lower_bound(data, late) == fresh
