"""rar ``cpsat`` with ``placements=whole``: CP-SAT over whole rings, a search on the target."""

from __future__ import annotations

import itertools
from dataclasses import replace

import pytest

from ddlsched.cli import main
from ddlsched.models.rar_cpsat import lengths
from ddlsched.models.rar_cpsat_whole import TargetSearch, WholeSettings, whole_floor, whole_search
from ddlsched.problems.rar_schedule import evaluate, schedule_to_json
from ddlsched.workloads.rar import generate

pytest.importorskip("ortools")

WHOLE = dict(placements="whole", target_work=2.0, workers=2, max_targets=100)
DESCENT = dict(WHOLE, target_search="descent")


@pytest.mark.parametrize("seed", [4, 10, 11])
def test_the_option_is_never_worse_than_its_hint_and_gives_no_bound(solve, seed):
    instance = generate("small", seed)
    improved = solve("rar", "improve", instance)
    result = solve("rar", "cpsat", instance, **WHOLE)
    assert result.status == "feasible" and result.bound is None
    assert result.objective <= improved.objective == result.info["hint_makespan"]
    assert result.info["bound_valid"] is False


def test_whole_rings_cannot_beat_a_split_hint_and_the_floor_says_so_without_a_solve(solve):
    # seed 10: the optimum (12) splits a ring; whole rings reach 16 at best, and their
    # floor (15: the longest ring or a gang size's energy) is above the hint already
    instance = generate("small", 10)
    improved = solve("rar", "improve", instance)
    result = solve("rar", "cpsat", instance, **WHOLE)
    assert result.info["winner"] == "improve" and result.objective == improved.objective
    assert result.info["whole_floor"] == 15 > improved.objective
    assert result.info["whole_targets"] == []
    assert result.info["whole_stopped"] == "the whole-ring floor"


def test_the_floor_is_the_longest_ring_or_a_gang_size_energy():
    instance = generate("small", 10)
    durations = [int(d) for d in lengths(instance).single]
    floor = whole_floor(instance, durations)
    assert floor >= max(durations)
    assert floor * instance.num_gpus >= sum(
        job.gpus * d for job, d in zip(instance.jobs, durations, strict=True)
    )
    # a larger cluster of the same servers lowers the energy floor to the longest ring
    wide = replace(instance, servers=instance.servers * 20)
    assert whole_floor(wide, durations) == max(durations)


def test_the_gallop_doubles_its_step_then_bisects_towards_the_unmet_target():
    targets = TargetSearch("gallop", best=308, floor=287)
    asked = []
    for answer in (307, 305, 300, None, None, 298, None):
        target = targets.next()
        asked.append(target)
        if answer is None:
            assert targets.unmet(target)
        else:
            targets.met(answer)
    # 308-1, 307-2, 305-4 (met at 300), 300-8 unmet, (292+300)//2 unmet, (296+300)//2 met
    # at 298, (296+298)//2 unmet: the bisection has closed on [297, 298]
    assert asked == [307, 305, 301, 292, 296, 298, 297]
    assert targets.next() is None and targets.best == 298


def test_the_gallop_stops_at_the_floor_and_the_descent_at_its_first_unmet_target():
    gallop = TargetSearch("gallop", best=12, floor=10)
    assert gallop.next() == 11
    gallop.met(11)
    assert gallop.next() == 10  # 11 - 2 is below the floor: the floor itself
    gallop.met(10)
    assert gallop.next() is None
    descent = TargetSearch("descent", best=12, floor=3)
    assert descent.next() == 11
    descent.met(9)
    assert descent.next() == 8
    assert not descent.unmet(8)


@pytest.mark.parametrize("seed", [11, 12])
def test_without_a_hint_the_descent_reaches_the_optimum(solve, seed):
    instance = generate("small", seed)
    improved = solve("rar", "improve", instance)
    exact = solve("rar", "exact", instance)
    assert exact.status == "optimal"
    result = solve("rar", "cpsat", instance, hint="none", **DESCENT)
    assert result.objective == exact.objective <= improved.objective
    targets = result.info["whole_targets"]
    # each met target's schedule ends by it, and the next target is one slot below it
    for (target, _, makespan, _), (after, _, _, _) in itertools.pairwise(targets):
        assert makespan is not None and makespan <= target and after == makespan - 1
    assert result.info["whole_infeasible"] == [exact.objective - 1]


@pytest.mark.parametrize("seed", [7, 11, 12, 21])
def test_without_a_hint_the_gallop_reaches_the_descents_schedule(solve, seed):
    instance = generate("small", seed)
    descent = solve("rar", "cpsat", instance, hint="none", **DESCENT)
    result = solve("rar", "cpsat", instance, hint="none", **WHOLE)
    assert result.objective == descent.objective
    assert result.info["target_search"] == "gallop"
    targets = result.info["whole_targets"]
    assert all(target >= result.info["whole_floor"] for target, _, _, _ in targets)
    met = [makespan for _, _, makespan, _ in targets if makespan is not None]
    assert met == sorted(met, reverse=True) and met[-1] == result.objective
    assert all(m <= t for t, _, m, _ in targets if m is not None)


def test_every_ring_of_the_schedule_is_whole_and_the_search_is_deterministic():
    instance = generate("small", 9)
    settings = WholeSettings(work=1.0, workers=2, seed=5)
    first = whole_search(instance, settings)
    second = whole_search(instance, settings)
    assert schedule_to_json(first.schedule) == schedule_to_json(second.schedule)
    assert first.info["whole_targets"] == second.info["whole_targets"]
    servers = [len(a.per_server()) for a in first.schedule.assignments.values()]
    assert set(servers) == {1}
    assert evaluate(instance, first.schedule).makespan == first.makespan
    assert first.bound is None and first.model_bound is None and not first.proven


def test_a_job_that_fits_no_server_whole_leaves_the_hint(solve):
    instance = generate("small", 0)  # job j1 needs more GPUs than any server has
    found = whole_search(instance, WholeSettings(work=1.0, workers=1))
    assert found.schedule is None and "fits no server whole" in found.info["whole_stopped"]
    result = solve("rar", "cpsat", instance, **WHOLE)
    assert result.info["winner"] == "improve" and result.status == "feasible"


@pytest.mark.parametrize(
    "param",
    [
        "placements=split",
        "target_work=0",
        "target_work=x",
        "max_targets=0",
        "first_work=-1",
        "target_search=bisect",
    ],
)
def test_bad_parameters_are_one_line_errors(tmp_path, capsys, param):
    path = tmp_path / "small.json"
    main(["instance", "generate", "rar", "--preset", "small", "--seed", "4", "-o", str(path)])
    capsys.readouterr()
    code = main(["solve", "rar", str(path), "--method", "cpsat", "--param", param])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("ddlsched: error:"), err


def test_a_hint_that_overruns_the_horizon_starts_the_search_at_the_horizon(solve):
    instance = generate("small", 11)
    hint = solve("rar", "improve", instance).schedule  # makespan 11, the optimum
    tight = replace(instance, horizon=10)
    found = whole_search(tight, WholeSettings(work=1.0, workers=1), hint)
    assert found.info["hint_makespan"] is None
    assert found.info["whole_targets"][0][0] == 10 and found.schedule is None
    assert found.info["whole_infeasible"] == [10]


def test_a_solve_refused_for_no_time_left_is_a_time_limit_not_an_unmet_target(monkeypatch):
    """``solve_cpsat`` starts no solve when the deadline leaves at most ``NO_TIME_S``,
    before ``expired()`` is true: that is the clock, not a target proven out of reach."""
    from ddlsched.deadline import Deadline
    from ddlsched.models import rar_cpsat_whole
    from ddlsched.solvers.cpsat import CpsatRun
    from ddlsched.solvers.result import Status

    refused = CpsatRun(Status.TIME_LIMIT_NO_SOLUTION, "no time left", None, None, 0.0, True, "")
    monkeypatch.setattr(rar_cpsat_whole, "solve_cpsat", lambda *args: refused)
    instance = generate("small", 9)
    found = whole_search(instance, WholeSettings(work=1.0, workers=2), deadline=Deadline(100.0))
    assert found.info["whole_stopped"] == "time limit"
    assert found.time_limit_hit and found.schedule is None
    assert found.status is Status.TIME_LIMIT_NO_SOLUTION
