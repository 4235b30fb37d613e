"""Family ``muri``: timing model (Eqs. 1-4), grouping heuristics and the exact ILP."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ddlsched.cli import main
from ddlsched.errors import InfeasibleScheduleError, InvalidInstanceError
from ddlsched.heuristics.muri import blossom_grouping, multiround_grouping
from ddlsched.models.muri import candidate_groups
from ddlsched.problems.muri import (
    MuriGrouping,
    MuriGroupingInstance,
    MuriJob,
    best_interleaving,
    efficiency,
    evaluate,
    interleaving_period,
)
from ddlsched.registry import RunOptions, run_method
from ddlsched.workloads.muri import generate

# --------------------------------------------------------------------------- T and gamma


def test_two_resources_spec_cases():
    period, offsets = best_interleaving([(2, 1), (2, 1)])
    assert period == 4.0 and offsets == (0, 1)
    assert efficiency([(2, 1), (2, 1)]) == pytest.approx(0.75)
    period, _ = best_interleaving([(2, 0), (0, 2)])
    assert period == 2.0
    assert efficiency([(2, 0), (0, 2)]) == pytest.approx(1.0)


def test_three_resources_three_jobs_by_hand():
    # offsets (0,1,2): phases max(3,2,1) + max(0,0,0) + max(0,0,0) = 3;
    # offsets (0,2,1): max(3,0,0) + max(0,0,1) + max(0,2,0) = 6.
    times = [(3, 0, 0), (0, 2, 0), (0, 0, 1)]
    assert interleaving_period(times, (0, 1, 2)) == 3.0
    assert interleaving_period(times, (0, 2, 1)) == 6.0
    assert best_interleaving(times) == (3.0, (0, 1, 2))
    # gamma = 1 - (1/3) [(3-3)/3 + (3-2)/3 + (3-1)/3] = 2/3
    assert efficiency(times) == pytest.approx(2.0 / 3.0)
    # perfectly complementary jobs fill every phase: gamma = 1
    assert efficiency([(2, 1, 0), (0, 2, 1), (1, 0, 2)]) == pytest.approx(1.0)


def test_job_alone():
    assert best_interleaving([(1.5, 2.0, 0.5)]) == (4.0, (0,))
    assert efficiency([(1.5, 2.0, 0.5)]) == pytest.approx(1 / 3)


def test_group_larger_than_k_is_refused():
    with pytest.raises(ValueError):
        best_interleaving([(1, 1), (1, 1), (1, 1)])


# --------------------------------------------------------------------------- instance


def _instance(rows, k=None, max_group_size=None):
    k = k or len(rows[0][1])
    jobs = tuple(MuriJob(f"j{i}", g, tuple(t)) for i, (g, t) in enumerate(rows))
    return MuriGroupingInstance(jobs, k, max_group_size)


def test_json_round_trip(tmp_path):
    inst = generate("k3", 3, gpu_choices=[1, 2])
    path = tmp_path / "m.json"
    inst.save(path)
    assert MuriGroupingInstance.load(path) == inst


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda d: d["jobs"][0].update(gpus=3), "gpus"),
        (lambda d: d["jobs"][0].update(times=[1.0, 2.0]), "times"),
        (lambda d: d["jobs"][0].update(times=[-1.0, 2.0, 1.0]), r"times\[0\]"),
        (lambda d: d.update(colour="red"), "colour"),
        (lambda d: d.update(max_group_size=4), "max_group_size"),
        (lambda d: d["jobs"][1].update(id="j0"), "duplicate"),
    ],
)
def test_bad_instances_name_the_field(mutate, field):
    data = generate("k3", 0).to_dict()
    mutate(data)
    with pytest.raises(InvalidInstanceError, match=field):
        MuriGroupingInstance.from_dict(data)


def test_evaluator_rejects_bad_groupings():
    inst = _instance([(1, (1, 2)), (1, (2, 1)), (2, (1, 1))])
    with pytest.raises(InfeasibleScheduleError, match="mixes GPU"):
        evaluate(inst, MuriGrouping((("j0", "j2"), ("j1",))))
    with pytest.raises(InfeasibleScheduleError, match="leaves"):
        evaluate(inst, MuriGrouping((("j0", "j1"),)))
    with pytest.raises(InfeasibleScheduleError, match="two groups"):
        evaluate(inst, MuriGrouping((("j0", "j1"), ("j1",), ("j2",))))
    with pytest.raises(InfeasibleScheduleError, match="max_group_size"):
        evaluate(_instance([(1, (1, 2))] * 3), MuriGrouping((("j0", "j1", "j2"),)))


def test_objectives_count_groups_only_for_gamma():
    inst = _instance([(1, (2, 1)), (1, (2, 1)), (1, (3, 1))])
    ev = evaluate(inst, MuriGrouping((("j0", "j1"), ("j2",))))
    assert ev.total_efficiency == pytest.approx(0.75)
    assert ev.total_period == pytest.approx(4.0 + 4.0)


# --------------------------------------------------------------------------- heuristics vs exact

job_times = st.tuples(st.integers(0, 20).map(float), st.integers(0, 20).map(float)).filter(
    lambda t: sum(t) > 0
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from([1, 2]), job_times), min_size=2, max_size=8))
def test_blossom_equals_exact_for_pairs(solve, rows):
    inst = _instance(rows)
    heuristic = evaluate(inst, blossom_grouping(inst)).total_efficiency
    exact = solve("muri", "exact", inst)
    assert exact.status == "optimal"
    assert heuristic == pytest.approx(exact.objective, rel=1e-9, abs=1e-9)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(3, 4), st.integers(2, 9), st.integers(0, 10_000))
def test_multiround_never_beats_exact_and_respects_k(solve, k, n, seed):
    inst = generate("k3" if k == 3 else "k4", seed, num_jobs=n, gpu_choices=[1, 2])
    grouping = multiround_grouping(inst)
    assert all(len(g) <= k for g in grouping.groups)
    heuristic = evaluate(inst, grouping).total_efficiency
    exact = solve("muri", "exact", inst)
    assert exact.status == "optimal"
    assert heuristic <= exact.objective + 1e-9
    assert exact.bound is not None and exact.bound >= exact.objective - 1e-9


def test_pruning_keeps_the_optimum(solve):
    for seed in range(3):
        inst = generate("k4", seed)
        full = solve("muri", "exact", inst, prune=False)
        pruned = solve("muri", "exact", inst)
        assert pruned.objective == pytest.approx(full.objective, abs=1e-9)
        assert pruned.info["candidate_groups"] < full.info["candidate_groups"]
        p_full = solve("muri", "exact", inst, objective="period", prune=False)
        p_pruned = solve("muri", "exact", inst, objective="period")
        assert p_pruned.info["total_period"] == pytest.approx(p_full.info["total_period"])


def test_period_objective_partitions_and_beats_singletons(backend, solve):
    inst = generate("k3", 5)
    res = solve("muri", "exact", inst, backend, objective="period")
    assert res.info["period_status"] == "optimal"
    assert res.info["total_period"] <= sum(j.solo_period for j in inst.jobs) + 1e-9
    assert res.info["total_period"] <= evaluate(inst, multiround_grouping(inst)).total_period + 1e-9


def test_exact_backends_agree(backend, solve):
    inst = generate("k3", 7)
    res = solve("muri", "exact", inst, backend)
    ref = solve("muri", "exact", inst, "highs")
    assert res.status == "optimal"
    assert res.objective == pytest.approx(ref.objective, rel=1e-7)


def test_candidate_count_bucket40_without_pruning():
    inst = generate("bucket40", 0)
    cands = candidate_groups(inst, "efficiency", prune=False)
    assert len(cands.members) == math.comb(40, 2) + math.comb(40, 3) + math.comb(40, 4)


def test_registry_methods_are_evaluated():
    inst = generate("k4", 1)
    results = {
        m: run_method("muri", m, inst, RunOptions(time_limit_s=30))
        for m in ("blossom", "multiround", "exact")
    }
    for r in results.values():
        assert r.objective == pytest.approx(evaluate(inst, r.schedule).total_efficiency)
    assert results["exact"].objective >= results["multiround"].objective - 1e-9


def test_cli_solve_json(tmp_path, capsys):
    path = tmp_path / "m.json"
    assert main(["instance", "generate", "muri", "--preset", "small", "-o", str(path)]) == 0
    capsys.readouterr()
    for method in ("blossom", "multiround", "exact"):
        assert main(["solve", "muri", str(path), "--method", method, "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["family"] == "muri" and out["objective"] > 0
        assert all("offsets" in g for g in out["schedule"]["groups"])


def test_cli_bad_instance_is_one_line(tmp_path, capsys):
    path = tmp_path / "bad.json"
    path.write_text(
        json.dumps(
            {
                "family": "muri",
                "schema_version": 1,
                "num_resources": 2,
                "jobs": [{"id": "a", "gpus": 3, "times": [1, 2]}],
            }
        )
    )
    assert main(["solve", "muri", str(path), "--method", "blossom"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "gpus" in err[0]
