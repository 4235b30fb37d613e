"""rar.timeindexed at the paper's scale: the grid is chosen, recorded and honoured; the time
limit covers model building (no timing assertions: a broken limit makes the test hang).

The deadlines read the tests' clocks (``tests/fake_clock.py``): where the time limit cuts
is chosen by the test, not by the machine's speed."""

from __future__ import annotations

import pytest
from fake_clock import PausableClock, StepClock

from ddlsched.deadline import Deadline
from ddlsched.models.rar_bounds import closed_form_bounds
from ddlsched.models.rar_timegrid import choose_grid, model_counts
from ddlsched.registry import RunOptions, run_method
from ddlsched.solvers.limits import MAX_MODEL_VARIABLES
from ddlsched.solvers.result import Status
from ddlsched.workloads.rar import generate


@pytest.fixture(scope="module")
def paper():
    return generate("paper", 0)


def test_auto_grid_fits_the_limits_and_an_explicit_width_is_kept(paper):
    catalogue, grid = choose_grid(paper, 397, deadline=Deadline(60.0, clock=StepClock()))
    assert grid.auto and grid.within_time and grid.slot_width > 1
    assert grid.variables <= MAX_MODEL_VARIABLES
    assert grid.to_info()["slot_width"] == grid.slot_width
    coarse = {key: max(0, (d + 1) // grid.slot_width - 1) for key, d in catalogue.durations.items()}
    assert model_counts(coarse, catalogue.patterns, 397 // grid.slot_width)[0] <= grid.variables
    # a longer time limit never chooses a coarser grid
    _, roomy = choose_grid(paper, 397, deadline=Deadline(600.0, clock=StepClock()))
    assert roomy.slot_width <= grid.slot_width
    kept_deadline = Deadline(1.0, clock=StepClock())
    _, kept = choose_grid(paper, 397, slot_width=4, max_patterns=8, deadline=kept_deadline)
    assert (kept.slot_width, kept.max_patterns) == (4, 8)


def test_paper_timeindexed_returns_a_valid_bound_and_schedule(paper, monkeypatch):
    """The LS/FF incumbent that sets the horizon does not count against the limit (the
    clock stands still while it runs): the horizon comes from it on any machine."""
    import ddlsched.models.rar_timegrid as rar_timegrid

    clock = PausableClock()
    real_incumbent = rar_timegrid.incumbent_makespan

    def incumbent_off_the_clock(instance):
        with clock.paused():
            return real_incumbent(instance)

    monkeypatch.setattr(rar_timegrid, "incumbent_makespan", incumbent_off_the_clock)
    deadline = Deadline(8.0, clock=clock)
    result = run_method(
        "rar", "timeindexed", paper, RunOptions(time_limit_s=8.0), deadline=deadline
    )
    info = result.info
    assert info["grid_auto"] and info["slot_width"] > 1 and info["bound_valid"]
    assert info["horizon_from"].startswith("incumbent")
    closed = closed_form_bounds(paper)
    assert result.bound >= max(closed.values())
    if result.objective is not None:
        assert result.bound <= result.objective <= info["model_horizon"] * 2


def test_the_time_limit_stops_model_building_and_keeps_the_closed_form_bound(paper, monkeypatch):
    """The test's clock stands still until the columns are being built, then passes the
    limit: the build's first deadline check stops it, on any machine."""
    import ddlsched.models.rar_timeindexed as rar_timeindexed

    clock = StepClock()
    real_build = rar_timeindexed._build_columns

    def build_past_the_limit(*args, **kwargs):
        clock.advance(3.0)
        return real_build(*args, **kwargs)

    monkeypatch.setattr(rar_timeindexed, "_build_columns", build_past_the_limit)
    options = RunOptions(time_limit_s=3.0, params={"slot_width": 4})
    deadline = Deadline(3.0, clock=clock)
    result = run_method("rar", "timeindexed", paper, options, deadline=deadline)
    assert "building" in result.info["stopped"] and result.time_limit_hit
    assert result.status is Status.BOUND_ONLY
    assert result.bound == max(closed_form_bounds(paper).values())


def test_exact_gives_timeindexed_the_whole_limit_when_its_milp_would_be_refused(paper, monkeypatch):
    """At the paper's size the MILP over the incumbent's horizon is refused for its size, so
    the presolve's timeindexed gets the whole time limit (not a fifth, at most 10 s). The
    clock stands still: the preparation before it takes no time on any machine."""
    import ddlsched.models.rar_timeindexed as rar_timeindexed

    seen = []

    def fake_timeindexed(instance, *, deadline, **kwargs):
        seen.append(deadline.remaining_s())
        raise rar_timeindexed.TimeLimitReached("stop here")

    monkeypatch.setattr(rar_timeindexed, "timeindexed", fake_timeindexed)
    options = RunOptions(time_limit_s=50.0)
    result = run_method("rar", "exact", paper, options, deadline=Deadline(50.0, clock=StepClock()))
    assert seen and seen[0] > 40.0
    assert result.info["timeindexed_share"].startswith("all")
    assert "milp_skipped" in result.info and result.status is Status.FEASIBLE
    small = generate("small", 0)
    seen.clear()
    small_deadline = Deadline(50.0, clock=StepClock())
    small_result = run_method("rar", "exact", small, options, deadline=small_deadline)
    assert seen and seen[0] <= 10.0
    assert small_result.info["timeindexed_share"].startswith("a fifth")
