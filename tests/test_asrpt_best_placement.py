"""Family ``asrpt``: ``improve``'s ``best_placement`` start (ours;
:mod:`ddlsched.models.asrpt_best_placement`).

Checked: each configuration's placement is never slower than Heavy-Edge on the
fewest servers and strictly faster where the placement ILP finds better (``tiny``
seeds 5 and 7, found by search), the schedule passes the evaluator and is the same on
every run, ``improve`` with the start is never worse than without it, and a
placement ILP the time limit cuts (or leaves no time) is recorded: ``Placement.cut``,
the start's ``stopped`` phrase, and ``improve``'s ``time_limit_hit`` and ``info['stopped']``.
"""

from __future__ import annotations

import pytest
from asrpt_crowded import crowded

from ddlsched.deadline import Deadline
from ddlsched.errors import DdlschedError
from ddlsched.heuristics.asrpt_config import map_job
from ddlsched.heuristics.asrpt_improve import MODEL_STARTS, STARTS, parse_starts
from ddlsched.models import asrpt_best_placement
from ddlsched.models.asrpt_best_placement import best_placement_schedule, fastest_placements
from ddlsched.problems.asrpt import job_alpha
from ddlsched.problems.asrpt_schedule import evaluate, schedule_to_json
from ddlsched.registry import RunOptions, run_method
from ddlsched.solvers.result import Status, mark_stopped
from ddlsched.workloads.asrpt import tiny

RTOL = 1e-9


def _fewest_alpha(instance, name: str) -> float:
    cluster, config = instance.cluster, instance.configs[name]
    full, rest = divmod(config.num_gpus, cluster.gpus_per_server)
    fewest = (cluster.gpus_per_server,) * full + ((rest,) if rest else ())
    return map_job(cluster, config, fewest, 0).alpha_s


@pytest.mark.parametrize("seed", range(10))
def test_placements_are_never_slower_than_heavy_edge(seed):
    instance = tiny(seed)
    for name, placement in fastest_placements(instance, Deadline(60)).items():
        assert placement.alpha_s <= _fewest_alpha(instance, name) * (1 + RTOL)
        assert sum(placement.usage) == instance.configs[name].num_gpus
        assert placement.alpha_s == job_alpha(
            instance.cluster, instance.configs[name], placement.counts
        )


def test_the_ilp_placement_beats_heavy_edge_on_tiny_seeds_5_and_7():
    for seed, name in ((5, "c2"), (7, "c1")):
        instance = tiny(seed)
        placements = fastest_placements(instance, Deadline(60))
        assert {n for n, p in placements.items() if p.source == "ilp"} == {name}
        assert placements[name].alpha_s < _fewest_alpha(instance, name) * (1 - 1e-6)
        assert not any(p.cut for p in placements.values())


@pytest.mark.parametrize("instance", [tiny(5), tiny(7), crowded(7, 16, 1007, (5, 30))])
def test_schedule_is_feasible_and_deterministic(instance):
    first, stopped = best_placement_schedule(instance, Deadline(60))
    assert stopped == ""
    evaluation = evaluate(instance, first)  # raises if infeasible
    again, _ = best_placement_schedule(instance, Deadline(60))
    assert schedule_to_json(first) == schedule_to_json(again)
    arrivals = {job.id: job.arrival_s for job in instance.jobs}
    assert all(first.runs[j].start_s >= arrivals[j] for j in arrivals)
    assert evaluation.total_completion_s > 0


def test_parse_starts_names_the_model_start():
    assert parse_starts("all") == STARTS
    assert parse_starts("all+best_placement") == STARTS + MODEL_STARTS
    assert parse_starts("packed,best_placement") == ("packed", "best_placement")
    with pytest.raises(DdlschedError, match="best_placement"):
        parse_starts("best_placements")


def test_improve_with_the_start_is_never_worse():
    instance = crowded(7, 16, 1007, (5, 30))
    runs = {}
    for starts in ("all", "all+best_placement"):
        options = RunOptions(time_limit_s=60, seed=0, params={"starts": starts})
        runs[starts] = run_method("asrpt", "improve", instance, options, raise_errors=True)
    with_start = runs["all+best_placement"]
    assert with_start.objective <= runs["all"].objective * (1 + RTOL)
    assert "best_placement" in with_start.info["start_flow_s"]


def test_a_deadline_that_leaves_the_ilp_no_time_is_a_cut():
    instance = tiny(5)  # c2: the ILP beats Heavy-Edge (above); c1: Heavy-Edge is proven
    now = [0.0]
    deadline = Deadline(60, clock=lambda: now[0])
    now[0] = 60.0
    placements = fastest_placements(instance, deadline)
    assert placements["c2"].cut and placements["c2"].source == "heavy_edge"
    assert {n for n, p in placements.items() if p.cut} == {"c2"}
    schedule, stopped = best_placement_schedule(instance, deadline)
    assert stopped == "best_placement's placement ILPs of c2 at the time limit"
    evaluate(instance, schedule)


def _ilp_cut_by_the_clock(monkeypatch):
    """The placement ILP returns its optimum, but as the time limit leaves it: unproven."""
    real = asrpt_best_placement.solve_formulation

    def solve(*args, **kwargs):
        out = real(*args, **kwargs)
        out.status = Status.FEASIBLE
        return mark_stopped(out, "the placement ILP at the time limit")

    monkeypatch.setattr(asrpt_best_placement, "solve_formulation", solve)


def test_an_ilp_the_limit_cuts_makes_improve_say_so(monkeypatch):
    instance = tiny(5)
    options = RunOptions(time_limit_s=60, seed=0, params={"starts": "packed,best_placement"})
    proven = run_method("asrpt", "improve", instance, options, raise_errors=True)
    assert not proven.time_limit_hit and "stopped" not in proven.info
    _ilp_cut_by_the_clock(monkeypatch)
    placements = fastest_placements(instance, Deadline(60))
    assert placements["c2"].cut and placements["c2"].source == "ilp"
    cut = run_method("asrpt", "improve", instance, options, raise_errors=True)
    assert cut.time_limit_hit
    assert cut.info["stopped"] == "best_placement's placement ILPs of c2 at the time limit"
    assert cut.objective == proven.objective  # the same placements, only now unproven
