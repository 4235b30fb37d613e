"""The time-indexed models' grid depends on the instance and the time limit, not on the load.

A grid chosen from what *remains* of the deadline changed with how fast the machine ran before
the choice (the same instance and limit gave another slot width, and another answer, on a
loaded machine). The grid is chosen from the deadline's plan (the limit, or a phase's share of
it); these tests move the clock instead of loading the machine.
"""

from __future__ import annotations

import ddlsched.deadline as deadline_module
from ddlsched.deadline import Deadline
from ddlsched.models.rar_timegrid import choose_grid, model_horizon
from ddlsched.workloads.rar import generate


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now


def _grid(instance, deadline):
    horizon, _ = model_horizon(instance, None, "free", Deadline.unlimited())
    _, grid = choose_grid(instance, horizon, deadline=deadline)
    return grid.slot_width, grid.max_patterns


def test_a_sub_deadline_plans_its_share_of_the_parents_plan(monkeypatch):
    clock = _Clock()
    monkeypatch.setattr(deadline_module.time, "monotonic", clock.monotonic)
    root = Deadline(10.0)
    clock.now += 6.0  # a slow start: 4 s remain
    child = root.sub(0.5)
    assert child.limit_s == 2.0  # the cut follows the time that remains
    assert child.plan_s == 5.0  # the plan does not
    assert root.sub(0.5, at_most=3.0).plan_s == 3.0
    assert Deadline.unlimited().sub(0.25).plan_s == float("inf")


def test_the_grid_is_the_same_when_most_of_the_time_is_gone(monkeypatch):
    clock = _Clock()
    monkeypatch.setattr(deadline_module.time, "monotonic", clock.monotonic)
    seen = set()
    for seed in range(2):
        instance = generate("paper", seed)
        fresh = _grid(instance, Deadline(30.0))
        late = Deadline(30.0)
        clock.now += 25.0  # what a loaded machine may spend before the choice
        assert _grid(instance, late) == fresh
        seen.add(fresh[0])
        # the check means something only where less time would choose another grid
        assert _grid(instance, Deadline(5.0)) != fresh


def test_lb_timeindexed_plans_its_grid_from_the_limit_not_the_time_left(monkeypatch):
    import ddlsched.models.rar_lb_timeindexed as lb

    clock = _Clock()
    monkeypatch.setattr(deadline_module.time, "monotonic", clock.monotonic)
    seen: list[float] = []
    choose = lb.choose_lb_grid

    def spy(instance, catalogue, horizon, slot_width, memory, seconds):
        seen.append(seconds)
        return choose(instance, catalogue, horizon, slot_width, memory, seconds)

    monkeypatch.setattr(lb, "choose_lb_grid", spy)
    monkeypatch.setattr(lb, "solve_lb_lp", lambda *a: ("stopped", None, {"lp_status": "x"}))
    deadline = Deadline(30.0)
    clock.now += 25.0  # a loaded machine spent most of the limit before the choice
    lb.lb_timeindexed(generate("paper", 0), deadline=deadline, horizon=400)
    assert seen == [30.0]


def test_lb_timeindexed_cut_in_its_preparation_keeps_the_closed_forms(monkeypatch):
    import ddlsched.models.rar_lb_timeindexed as lb
    from ddlsched.errors import TimeLimitReached
    from ddlsched.models.rar_bounds import closed_form_bounds

    def interrupted(*args, **kwargs):
        raise TimeLimitReached("time limit of 10 s reached in preparing the lb_timeindexed LP")

    instance = generate("paper", 0)
    monkeypatch.setattr(lb, "model_horizon", interrupted)
    outcome = lb.lb_timeindexed(instance, deadline=Deadline(10.0))
    assert outcome.bound == max(closed_form_bounds(instance).values())
    assert outcome.time_limit_hit
    assert "preparing the lb_timeindexed LP" in outcome.info["stopped"]
