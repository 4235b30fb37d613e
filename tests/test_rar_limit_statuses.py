"""rar ``timeindexed`` at worst contention: statuses that say what happened.

A solve the time limit cut is ``time_limit_no_solution`` (never "no schedule
within the horizon"), and a job whose worst-contention duration exceeds the
horizon, so that no model is built, is ``no_solution`` with the reason.
"""

from __future__ import annotations

import ddlsched.models.rar_timeindexed as rar_timeindexed
from ddlsched.problems.rar import RarInstance
from ddlsched.solvers.backends import _out_of_time
from ddlsched.workloads.rar import generate


def _cut_by_the_limit(model, backend="highs", limits=None, deadline=None):
    """What ``solve_model`` returns when the limit stops the solver before it has a point."""
    return _out_of_time(model, backend, "time limit", "test", stopped="the solver at its limit")


def test_a_cut_solve_is_a_time_limit_not_no_schedule(solve, monkeypatch) -> None:
    instance = generate("small", 0)
    monkeypatch.setattr(rar_timeindexed, "solve_model", _cut_by_the_limit)
    result = solve("rar", "timeindexed", instance, contention="worst", slot_width=1)
    assert str(result.status) == "time_limit_no_solution"
    assert result.time_limit_hit
    assert result.info["stopped"]
    assert "reason" not in result.info


def test_a_job_longer_than_the_horizon_is_no_solution_with_a_reason(solve) -> None:
    data = generate("small", 6, max_horizon=10).to_dict()
    data["jobs"] = [job for job in data["jobs"] if job["id"] in ("j0", "j1")]
    data["horizon"] = 2  # j1 does not fit in 2 slots with worst-contention durations
    instance = RarInstance.from_dict(data)
    result = solve("rar", "timeindexed", instance, contention="worst")
    assert str(result.status) == "no_solution"
    assert "horizon T = 2" in result.info["reason"]
    assert not result.time_limit_hit


def test_an_infeasible_worst_model_is_still_no_solution(solve) -> None:
    data = generate("small", 6, max_horizon=10).to_dict()
    data["jobs"] = [job for job in data["jobs"] if job["id"] in ("j0", "j1")]
    data["horizon"] = 3  # both fit alone, not one after the other
    result = solve("rar", "timeindexed", RarInstance.from_dict(data), contention="worst")
    assert str(result.status) == "no_solution"
    assert "no schedule within the horizon" in result.info["reason"]
    assert not result.time_limit_hit
