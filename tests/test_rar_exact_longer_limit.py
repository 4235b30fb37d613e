"""rar ``exact`` at a longer time limit never returns a worse schedule than at a shorter one.

``timeindexed`` chooses its grid from the time planned for it: given the whole
of a long limit it plans a finer grid, whose build the limit can cut before
any schedule exists. The fake ``timeindexed`` below stands for that: it
returns its schedule when planned for at most 120 s and is cut while
building when planned for more. The deadlines read a clock that stands
still (``tests/fake_clock.py``), so where the limit cuts is the test's
choice, not the machine's speed.
"""

from __future__ import annotations

import pytest
from fake_clock import StepClock

from ddlsched.deadline import Deadline
from ddlsched.errors import TimeLimitReached
from ddlsched.heuristics.sjf_bco import sjf_bco
from ddlsched.models.rar_bounds import closed_form_bounds
from ddlsched.problems.rar_schedule import RarAssignment, RarSchedule, evaluate
from ddlsched.registry import RunOptions, run_method
from ddlsched.solvers.result import Outcome, Status
from ddlsched.workloads.rar import generate

DELAY = 7  # slots the heuristic start is delayed by: the timeindexed schedule beats it


@pytest.fixture(scope="module")
def paper():
    return generate("paper", 0)


@pytest.fixture
def cut_when_planned_long(paper, monkeypatch):
    """Heuristic starts worse than timeindexed's schedule; timeindexed cut above a 120 s plan."""
    import ddlsched.models.rar_exact as rar_exact
    import ddlsched.models.rar_timeindexed as rar_timeindexed

    good = sjf_bco(paper).schedule
    late = RarSchedule(
        {j: RarAssignment(a.gpus, a.start + DELAY) for j, a in good.assignments.items()}
    )
    late_makespan = evaluate(paper, late).makespan
    assert evaluate(paper, good).makespan < late_makespan
    monkeypatch.setattr(rar_exact, "_incumbents", lambda instance: [("ls", late, late_makespan)])
    plans = []

    def fake_timeindexed(instance, *, deadline, **kwargs):
        plans.append(deadline.plan_s)
        if deadline.plan_s > 120.0:
            raise TimeLimitReached("time limit reached in building the timeindexed ILP")
        bound = float(max(closed_form_bounds(instance).values()))
        return Outcome(good, Status.FEASIBLE, bound=bound, info={})

    monkeypatch.setattr(rar_timeindexed, "timeindexed", fake_timeindexed)
    return plans, evaluate(paper, good).makespan, late_makespan


def _exact(instance, limit_s: float):
    deadline = Deadline(limit_s, clock=StepClock())
    return run_method("rar", "exact", instance, RunOptions(time_limit_s=limit_s), deadline=deadline)


def test_a_longer_limit_whose_timeindexed_build_is_cut_keeps_the_shorter_limits_schedule(
    paper, cut_when_planned_long
):
    plans, good_makespan, late_makespan = cut_when_planned_long
    short = _exact(paper, 120.0)
    assert short.objective == good_makespan < late_makespan
    plans.clear()
    long = _exact(paper, 900.0)
    assert long.objective <= short.objective
    assert short.info["schedule_from"] == long.info["schedule_from"] == "timeindexed"
    assert long.status is Status.FEASIBLE
    # the first run is planned as at 120 s, the second (cut) on the rest of the limit
    assert plans == [120.0, 780.0]
    runs = long.info["timeindexed_runs"]
    assert runs[0]["makespan"] == good_makespan and "building" in runs[1]["stopped"]
    assert long.bound <= long.objective


def test_exact_never_returns_a_longer_schedule_than_its_best_start(paper, monkeypatch):
    """A MILP schedule longer than the best start (it cannot happen by construction; the
    check keeps it so) is replaced by the start, and ``info`` says why."""
    import ddlsched.models.rar as rar_model
    import ddlsched.models.rar_exact as rar_exact
    import ddlsched.models.rar_timeindexed as rar_timeindexed

    good = sjf_bco(paper).schedule
    good_makespan = evaluate(paper, good).makespan
    late = RarSchedule(
        {j: RarAssignment(a.gpus, a.start + DELAY) for j, a in good.assignments.items()}
    )
    monkeypatch.setattr(rar_exact, "_incumbents", lambda instance: [("ls", good, good_makespan)])

    def no_timeindexed(instance, *, deadline, **kwargs):
        raise TimeLimitReached("stop here")

    def longer_milp(instance, **kwargs):
        return Outcome(late, Status.FEASIBLE, bound=float(good_makespan - 1), info={})

    monkeypatch.setattr(rar_timeindexed, "timeindexed", no_timeindexed)
    monkeypatch.setattr(rar_model, "solve_exact", longer_milp)
    result = _exact(paper, 60.0)
    assert result.objective == good_makespan and result.status is Status.FEASIBLE
    assert result.info["schedule_from"] == "ls" and "not shorter" in result.info["schedule_why"]


def test_a_presolve_that_spends_the_limit_says_the_milp_did_not_start(paper, monkeypatch):
    import ddlsched.models.rar_timeindexed as rar_timeindexed

    clock = StepClock()

    def slow_timeindexed(instance, *, deadline, **kwargs):
        clock.advance(100.0)
        raise TimeLimitReached("time limit reached in building the timeindexed ILP")

    monkeypatch.setattr(rar_timeindexed, "timeindexed", slow_timeindexed)
    options = RunOptions(time_limit_s=60.0)
    result = run_method("rar", "exact", paper, options, deadline=Deadline(60.0, clock=clock))
    assert "the MILP did not start" in result.info["stopped"] and result.time_limit_hit
    assert result.status is Status.FEASIBLE and result.info["schedule_from"] == "sjf_bco"
