"""rar ``cpsat`` with ``placements=whole``: CP-SAT over whole rings, a descent on the target."""

from __future__ import annotations

import itertools
from dataclasses import replace

import pytest

from ddlsched.cli import main
from ddlsched.models.rar_cpsat_whole import WholeSettings, whole_search
from ddlsched.problems.rar_schedule import evaluate, schedule_to_json
from ddlsched.workloads.rar import generate

pytest.importorskip("ortools")

WHOLE = dict(placements="whole", target_work=2.0, workers=2, max_targets=100)


@pytest.mark.parametrize("seed", [4, 10, 11])
def test_the_option_is_never_worse_than_its_hint_and_gives_no_bound(solve, seed):
    instance = generate("small", seed)
    improved = solve("rar", "improve", instance)
    result = solve("rar", "cpsat", instance, **WHOLE)
    assert result.status == "feasible" and result.bound is None
    assert result.objective <= improved.objective == result.info["hint_makespan"]
    assert result.info["bound_valid"] is False


def test_whole_rings_cannot_beat_a_split_hint_and_the_hint_is_kept(solve):
    # seed 10: the optimum (12) splits a ring; whole rings reach 16 at best
    instance = generate("small", 10)
    improved = solve("rar", "improve", instance)
    result = solve("rar", "cpsat", instance, **WHOLE)
    assert result.info["winner"] == "improve" and result.objective == improved.objective
    unmet = result.info["whole_targets"][-1]
    assert unmet[0] == improved.objective - 1 and unmet[2] is None


@pytest.mark.parametrize("seed", [11, 12])
def test_without_a_hint_the_descent_reaches_the_optimum(solve, seed):
    instance = generate("small", seed)
    improved = solve("rar", "improve", instance)
    exact = solve("rar", "exact", instance)
    assert exact.status == "optimal"
    result = solve("rar", "cpsat", instance, hint="none", **WHOLE)
    assert result.objective == exact.objective <= improved.objective
    targets = result.info["whole_targets"]
    # each met target's schedule ends by it, and the next target is one slot below it
    for (target, _, makespan, _), (after, _, _, _) in itertools.pairwise(targets):
        assert makespan is not None and makespan <= target and after == makespan - 1
    assert result.info["whole_infeasible"] == [exact.objective - 1]


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
    "param", ["placements=split", "target_work=0", "target_work=x", "max_targets=0"]
)
def test_bad_parameters_are_one_line_errors(tmp_path, capsys, param):
    path = tmp_path / "small.json"
    main(["instance", "generate", "rar", "--preset", "small", "--seed", "4", "-o", str(path)])
    capsys.readouterr()
    code = main(["solve", "rar", str(path), "--method", "cpsat", "--param", param])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("ddlsched: error:"), err


def test_a_hint_that_overruns_the_horizon_starts_the_descent_at_the_horizon(solve):
    instance = generate("small", 11)
    hint = solve("rar", "improve", instance).schedule  # makespan 11, the optimum
    tight = replace(instance, horizon=10)
    found = whole_search(tight, WholeSettings(work=1.0, workers=1), hint)
    assert found.info["hint_makespan"] is None
    assert found.info["whole_targets"][0][0] == 10 and found.schedule is None
    assert found.info["whole_infeasible"] == [10]
