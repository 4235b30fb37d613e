"""Family ``placement``: Heavy-Edge and both ILPs against a brute force, backends, CLI."""

from __future__ import annotations

import itertools
import json
import math
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ddlsched.cli import main
from ddlsched.heuristics.heavy_edge import heavy_edge, job_graph, tree_edges
from ddlsched.models.placement import build_aggregated
from ddlsched.models.placement_gpu_level import build_gpu_level
from ddlsched.problems.placement import Placement, PlacementInstance, Stage, evaluate
from ddlsched.registry import RunOptions, run_method
from ddlsched.solvers import Status
from ddlsched.workloads.placement import generate


def brute_force(inst: PlacementInstance) -> float:
    """Minimum alpha over every count matrix (independent of the models)."""

    def rows(k, capacity):
        for combo in itertools.product(*(range(min(k, c) + 1) for c in capacity)):
            if sum(combo) == k:
                yield combo

    best = math.inf

    def extend(prefix, capacity):
        nonlocal best
        s = len(prefix)
        if s == inst.num_stages:
            best = min(best, evaluate(inst, Placement(tuple(prefix))).iteration_time_s)
            return
        for row in rows(inst.stages[s].replicas, capacity):
            extend([*prefix, row], [c - r for c, r in zip(capacity, row, strict=True)])

    extend([], list(inst.available))
    return best


def tiny_instances() -> list[PlacementInstance]:
    out = [generate("small", seed, num_stages=3) for seed in range(4)]
    out += [generate("small", seed, num_stages=2, allreduce="tar") for seed in (5, 6)]
    out.append(generate("small", 7, num_stages=4, max_replicas=2))
    # more free GPUs than replicas: servers may stay partly empty
    extra = generate("small", 8, num_stages=3)
    out.append(replace(extra, available=(*extra.available, 2)))
    return out


TINY = tiny_instances()


@pytest.mark.parametrize("index", range(len(TINY)))
def test_both_ilps_equal_brute_force(index, solve, backend):
    inst = TINY[index]
    optimum = brute_force(inst)
    for method in ("exact", "exact_gpu_level"):
        solved = solve("placement", method, inst, backend, cross_check=False)
        assert solved.status is Status.OPTIMAL
        assert solved.evaluation.iteration_time_s == pytest.approx(optimum, rel=1e-9)
        assert solved.bound == pytest.approx(optimum, rel=1e-6)
    he = evaluate(inst, heavy_edge(inst, 0)).iteration_time_s
    assert he >= optimum * (1 - 1e-12)


@pytest.mark.parametrize("seed", [11, 12, 13])
def test_aggregated_ablations_agree(seed, solve):
    inst = generate("small", seed, num_stages=3)
    a = solve("placement", "exact", inst, "highs", cross_check=False)
    b = solve(
        "placement", "exact", inst, "highs", cross_check=False, symmetry_breaking=False, cuts=False
    )
    assert a.evaluation.iteration_time_s == pytest.approx(b.evaluation.iteration_time_s, rel=1e-9)
    assert a.evaluation.iteration_time_s == pytest.approx(brute_force(inst), rel=1e-9)


@pytest.mark.parametrize("method", ["exact", "exact_gpu_level"])
def test_highs_and_scip_agree(method, solve):
    for seed in (1, 2):
        inst = generate("small", seed, num_stages=3)
        highs = solve("placement", method, inst, "highs", cross_check=False)
        scip = solve("placement", method, inst, "scip", cross_check=False)
        assert scip.status is Status.OPTIMAL
        assert scip.evaluation.iteration_time_s == pytest.approx(
            highs.evaluation.iteration_time_s, rel=1e-9
        )


def test_gpu_level_decodes_a_gpu_mapping(solve):
    inst = TINY[0]
    solved = solve("placement", "exact_gpu_level", inst, "highs", cross_check=False)
    gpus = [g for row in solved.schedule.gpu_of_replica for g in row]
    assert len(set(gpus)) == inst.num_replicas
    assert all(0 <= j < inst.available[m] for m, j in gpus)


def test_model_sizes_differ():
    inst = generate("small", 3, num_stages=3)
    agg, gpu = build_aggregated(inst), build_gpu_level(inst)
    assert len(agg.z) < len(gpu.y) + len(gpu.w)


# --------------------------------------------------------------------------- Heavy-Edge


def test_heavy_edge_paper_figure_2():
    """Fig. 2: 3 stages x 2 replicas on servers (4, 1, 1); the AllReduce ring of
    stage 1 is the heaviest edge (20 MB), so S1 and its neighbour S2 share the
    4-GPU server."""
    stages = (
        Stage(2, 0.01, 0.02, 0.0, 1e6, 2e7),  # ring edge 2*(1/2)*2e7 = 20 MB
        Stage(2, 0.01, 0.02, 1e6, 1e5, 1e3),
        Stage(2, 0.01, 0.02, 1e5, 0.0, 1e3),
    )
    inst = PlacementInstance(8, 1.25e9, 3e11, (4, 1, 1), "rar", stages)
    placement = heavy_edge(inst, 0)
    assert placement.counts == ((2, 0, 0), (2, 0, 0), (0, 1, 1))


def test_heavy_edge_graph_weights():
    inst = PlacementInstance(
        8,
        1.25e9,
        3e11,
        (8,),
        "rar",
        (Stage(2, 0.01, 0.01, 0.0, 3e6, 1e7), Stage(3, 0.01, 0.01, 2e6, 0.0, 3e7)),
    )
    weights, vertices = job_graph(inst)
    assert vertices == [(0, 0), (0, 1), (1, 0), (1, 1), (1, 2)]
    assert weights[0, 2] == pytest.approx(2 * 3e6 / 3)  # 2 dout_{s-1} / k_s
    assert weights[0, 1] == pytest.approx(2 * 1 * 1e7 / 2)  # ring of 2: one edge
    assert weights[2, 3] == pytest.approx(2 * 2 * 3e7 / 3)  # ring of 3
    assert (weights == weights.T).all()
    tar = job_graph(replace(inst, allreduce="tar"))[0]
    assert tar[0, 1] == pytest.approx(2 * (1e7 / 2))  # pair in both trees
    assert len(tree_edges(4)) == 6


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 5_000), st.integers(0, 100))
def test_heavy_edge_is_feasible_deterministic_and_never_beats_optimum(seed, he_seed):
    inst = generate("small", seed, num_stages=2, max_replicas=3)
    a, b = heavy_edge(inst, he_seed), heavy_edge(inst, he_seed)
    assert a == b
    alpha = evaluate(inst, a).iteration_time_s  # raises if infeasible
    assert alpha >= brute_force(inst) * (1 - 1e-12)


# --------------------------------------------------------------------------- registry / CLI


@pytest.mark.parametrize("method", ["heavy_edge", "exact", "exact_gpu_level"])
def test_registry_methods(method):
    inst = TINY[1]
    result = run_method("placement", method, inst, RunOptions(time_limit_s=30))
    assert result.objective == pytest.approx(evaluate(inst, result.schedule).iteration_time_s)
    if method == "heavy_edge":
        assert result.status is Status.FEASIBLE and result.bound is None
    else:
        assert result.status is Status.OPTIMAL
        assert result.bound <= result.objective * (1 + 1e-6)
        assert result.num_integer_variables > 0 and result.backend == "highs"


def test_cli_generate_and_solve(tmp_path, capsys):
    path = tmp_path / "case.json"
    assert (
        main(
            [
                "instance",
                "generate",
                "placement",
                "--preset",
                "small",
                "--seed",
                "4",
                "-o",
                str(path),
                "--set",
                "num_stages=2",
            ]
        )
        == 0
    )
    capsys.readouterr()
    for method, backend in (
        ("heavy_edge", "highs"),
        ("exact", "scip"),
        ("exact_gpu_level", "highs"),
    ):
        assert (
            main(
                [
                    "solve",
                    "placement",
                    str(path),
                    "--method",
                    method,
                    "--backend",
                    backend,
                    "--json",
                ]
            )
            == 0
        )
        out = json.loads(capsys.readouterr().out)
        assert out["status"] in ("optimal", "feasible")
        assert out["objective"] > 0 and out["runtime_s"] >= 0
        rows = out["schedule"]["placement"]
        assert len(rows) == 2
    assert out["backend"] == "highs"


def test_cli_errors_are_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"family": "placement"}))
    assert main(["solve", "placement", str(bad), "--method", "exact"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "missing field" in err
    assert (
        main(
            [
                "instance",
                "generate",
                "placement",
                "--preset",
                "nope",
                "-o",
                str(tmp_path / "x.json"),
            ]
        )
        == 2
    )


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 5_000), st.sampled_from(["rar", "tar"]))
def test_aggregated_ilp_equals_brute_force_on_random_tiny_jobs(solve, seed, allreduce):
    inst = generate("small", seed, num_stages=3, max_replicas=2, allreduce=allreduce)
    solved = solve("placement", "exact", inst, "highs", cross_check=False)
    assert solved.status is Status.OPTIMAL
    assert solved.evaluation.iteration_time_s == pytest.approx(brute_force(inst), rel=1e-9)
    assert solved.bound <= solved.evaluation.iteration_time_s * (1 + 1e-6)


def test_known_highs_restart_issue_on_a_32_gpu_vgg_case(solve):
    """HiGHS 1.14 with presolve and MIP restarts on claimed 3.308 s here on the
    aggregated ILP of commit 419a110; SCIP, other HiGHS seeds and the GPU-level
    ILP find 2.655 s. ddlsched runs the placement ILPs with restarts off
    (models.placement.HIGHS_OPTIONS). Today's model is solved right with
    restarts on too: this stays as a HiGHS-SCIP agreement check."""
    from ddlsched.datadir import data_dir

    if data_dir() is None:
        pytest.skip("shared data directory absent")
    from ddlsched.workloads.placement import table2

    inst = table2(2, model="vgg16", num_gpus=32)
    highs = solve("placement", "exact", inst, "highs", cross_check=False)
    scip = solve("placement", "exact", inst, "scip", cross_check=False)
    assert highs.evaluation.iteration_time_s == pytest.approx(
        scip.evaluation.iteration_time_s, rel=1e-9
    )
