"""dmlrs: a start that cannot run is skipped and recorded; ``colgen``'s ``time_limit_hit``
and ``info['stopped']`` agree."""

from __future__ import annotations

import math

from ddlsched.deadline import Deadline
from ddlsched.errors import TimeLimitReached
from ddlsched.models.dmlrs_colgen import solve_colgen
from ddlsched.problems.dmlrs import DmlrsInstance
from ddlsched.workloads.dmlrs import generate


def _oasis_refuses() -> DmlrsInstance:
    """``tiny`` seed 0 with ten times the samples and a steep utility: at ``b_ext`` every
    job's ``u_i(d_min_i - 1)`` is so small that ``U^r <= L`` (OASiS refuses, Eq. 12),
    while PD-ORS (``b_int``), FIFO and DRF run."""
    data = generate("tiny", 0).to_dict()
    for job in data["jobs"]:
        job["samples"] *= 10
        job["utility"] = {"theta1": 80.0, "theta2": 1.0, "theta3": 1.0}
    return DmlrsInstance.from_dict(data)


def test_improve_skips_a_start_that_refuses_the_instance(solve) -> None:
    instance = _oasis_refuses()
    assert str(solve("dmlrs", "oasis", instance).status) == "error"  # the premise
    result = solve("dmlrs", "improve", instance)
    assert str(result.status) == "feasible"
    assert "U^r" in result.info["starts_refused"]["oasis"]
    assert "oasis" not in result.info["start_utility"]
    assert result.objective >= max(result.info["start_utility"].values()) - 1e-9
    assert not result.time_limit_hit


def test_improve_without_any_start_that_runs_is_no_solution(solve) -> None:
    result = solve("dmlrs", "improve", _oasis_refuses(), starts="oasis")
    assert str(result.status) == "no_solution"
    assert "oasis" in result.info["reason"] and "U^r" in result.info["reason"]


def _cut() -> None:
    raise TimeLimitReached("time limit of 1 s reached in a seed heuristic")


def test_colgen_stopped_names_what_the_limit_cut() -> None:
    """Column generation converges, but the limit cut a seed heuristic: the answer was
    changed by the limit, and ``stopped`` says so (it said ``converged``)."""
    instance = generate("tiny", 0)
    outcome = solve_colgen(
        instance, [("pd_ors", _cut)], "milp", "highs", Deadline(math.inf), max_rounds=None
    )
    assert outcome.info["rounds_stopped"] == "converged"
    assert outcome.time_limit_hit
    assert "pd_ors" in outcome.info["stopped"] and "converged" not in outcome.info["stopped"]


def test_colgen_not_cut_reports_why_the_rounds_ended() -> None:
    instance = generate("tiny", 0)
    outcome = solve_colgen(instance, [], "milp", "highs", Deadline(math.inf), max_rounds=None)
    assert not outcome.time_limit_hit
    assert outcome.info["rounds_stopped"] == "converged" and "stopped" not in outcome.info


def _killed_restricted_mip(monkeypatch, keep: str) -> list[bool]:
    """``solve_mip`` of the restricted MILP as a run the limit killed with an incumbent:
    HiGHS's own solution (``keep="solution"``) or the empty one, worse than every seed
    (``keep="empty"``). Returns the ``incumbents`` flag of each call."""
    import highspy

    import ddlsched.solvers.dmlrs_master as dmlrs_master
    from ddlsched.solvers.highs_server import DirectRun

    real, asked = dmlrs_master.solve_mip, []

    def killed(mip, seconds, *, in_worker=True, incumbents=False):
        asked.append(incumbents)
        run = real(mip, math.inf, in_worker=False)
        x = run.col_value if keep == "solution" else [0.0] * len(mip.cost)
        value = run.objective if keep == "solution" else 0.0
        return DirectRun(highspy.HighsModelStatus.kInterrupt, value, math.inf, True, x, True)

    monkeypatch.setattr(dmlrs_master, "solve_mip", killed)
    return asked


def _fifo_seed(instance: DmlrsInstance):
    from ddlsched.heuristics.dmlrs_baselines import run_fifo

    return [("fifo", lambda: run_fifo(instance, Deadline(math.inf)))]


def test_colgen_keeps_the_incumbent_of_a_restricted_mip_cut_by_the_limit(monkeypatch):
    instance = generate("tiny", 0)
    asked = _killed_restricted_mip(monkeypatch, "solution")
    outcome = solve_colgen(
        instance, _fifo_seed(instance), "milp", "highs", Deadline(math.inf), None
    )
    assert asked == [True]  # the worker sends its incumbents: a kill keeps the last one
    mip = outcome.info["restricted_mip"]
    assert mip["status"] == "time_limit" and mip["schedule_from"] == "milp"
    assert outcome.schedule is not None and outcome.info["schedule_value"] == mip["value"]
    assert outcome.time_limit_hit and "restricted MILP" in outcome.info["stopped"]


def test_colgen_keeps_the_seed_when_the_cut_incumbent_is_worse(monkeypatch):
    from ddlsched.problems.dmlrs_schedule import evaluate

    instance = generate("tiny", 0)
    _killed_restricted_mip(monkeypatch, "empty")
    seeds = _fifo_seed(instance)
    fifo_value = evaluate(instance, seeds[0][1]()).total_utility
    assert fifo_value > 0  # the premise: the empty schedule is worse
    outcome = solve_colgen(instance, seeds, "milp", "highs", Deadline(math.inf), None)
    assert outcome.info["restricted_mip"]["schedule_from"] == "start"
    assert evaluate(instance, outcome.schedule).total_utility == fifo_value
    assert outcome.time_limit_hit and "restricted MILP" in outcome.info["stopped"]
