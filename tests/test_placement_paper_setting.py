"""The ``table2`` preset's paper setting and stage planners."""

from __future__ import annotations

import importlib.util
import itertools
import math
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ddlsched.cli import main
from ddlsched.datadir import data_dir
from ddlsched.errors import InvalidInstanceError
from ddlsched.heuristics.heavy_edge import heavy_edge
from ddlsched.problems.placement import (
    Placement,
    PlacementInstance,
    Stage,
    alpha_max,
    evaluate,
)
from ddlsched.workloads.placement import generate
from ddlsched.workloads.profiles import Layer, ModelProfile, comm_aware_plan, load_profile
from ddlsched.workloads.profiles.paper import gpt_slice_profile, vgg19_profile
from ddlsched.workloads.profiles.planner import stage_costs

needs_data = pytest.mark.skipif(
    data_dir() is None,
    reason="shared data directory absent (set DDLSCHED_DATA to the folder holding profiles/)",
)
BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "placement_table2.py"


def _bench():
    spec = importlib.util.spec_from_file_location("placement_table2", BENCH)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("placement_table2", module)  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@needs_data
def test_vgg19_profile_follows_table1_and_pipedream():
    vgg16, vgg19 = load_profile("pipedream/vgg16"), vgg19_profile()
    assert vgg19.batch_size == 32 and vgg19.num_layers == vgg16.num_layers + 6
    assert vgg19.param_bytes / 4 == pytest.approx(143.67e6, rel=1e-3)  # Table I: 144M
    copies = [lay for lay in vgg19.layers if "VGG19 copy" in lay.name]
    assert len(copies) == 6 and sum(lay.name.count("Conv2d") for lay in copies) == 3
    originals = vgg19.compute_s - sum(lay.fwd_s + lay.bwd_s for lay in copies)
    assert originals == pytest.approx(vgg16.compute_s * 32 / 128)
    assert vgg19.input_bytes == 32 * 3 * 224 * 224 * 4


def test_gpt_slice_is_three_uniform_fp32_blocks():
    prof = gpt_slice_profile("gpt-175b")
    h, b, s = 12288, 16, 512
    assert prof.num_layers == 3 and prof.batch_size == 16
    assert len({(lay.fwd_s, lay.param_bytes, lay.out_bytes) for lay in prof.layers}) == 1
    assert prof.layers[0].param_bytes == (12 * h * h + 13 * h) * 4
    assert prof.layers[0].out_bytes == prof.input_bytes == b * s * h * 4
    flops = 24 * b * s * h * h + 4 * b * s * s * h
    assert prof.layers[0].fwd_s == pytest.approx(flops / 10e12)


@needs_data
def test_paper_setting_instances():
    vgg = generate("table2", 0, model="vgg16", setting="paper")
    assert vgg.num_stages == 4 and vgg.num_replicas == 16 and "paper/vgg19" in vgg.description
    assert vgg.gpus_per_server == 8 and vgg.b_inter == 1.25e9 and vgg.b_intra == 3e11
    gpt = generate("table2", 0, model="gpt175b", setting="paper", planner="comm_aware")
    assert gpt.num_stages == 3 and gpt.num_replicas == 16
    # the default is unchanged: compute-balanced cuts of PipeDream's VGG-16
    default = generate("table2", 0, model="vgg16")
    assert default.replicas == (2, 4, 5, 5)
    assert "[[0, 3], [3, 6], [6, 14], [14, 41]]" in default.description


def test_paper_setting_refuses_models_it_does_not_define(capsys):
    with pytest.raises(InvalidInstanceError, match="no paper profile for model 'bert24'"):
        generate("table2", 0, model="bert24", setting="paper")
    argv = "instance generate placement --preset table2 -o - --set model=gpt175b"
    code = main([*argv.split(), "--set", "planner=balanced"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "planner" in err


def test_presets_command_lists_setting_and_planner(capsys):
    assert main(["presets", "placement"]) == 0
    out = capsys.readouterr().out
    assert "setting" in out and "comm_aware" in out and "paper" in out


def _profile(times, params, outs, input_bytes):
    layers = [
        Layer(f"l{i}", t / 3, 2 * t / 3, p, o)
        for i, (t, p, o) in enumerate(zip(times, params, outs, strict=True))
    ]
    return ModelProfile("test", tuple(layers), 1, input_bytes)


@settings(max_examples=40, deadline=None)
@given(
    st.integers(1, 5).flatmap(
        lambda n: st.tuples(
            st.lists(st.floats(0.01, 5.0), min_size=n, max_size=n),
            st.lists(st.floats(0.0, 5e9), min_size=n, max_size=n),
            st.lists(st.floats(0.0, 5e9), min_size=n, max_size=n),
        )
    ),
    st.floats(0.0, 5e9),
    st.integers(1, 4),
    st.integers(0, 4),
)
def test_comm_aware_plan_is_optimal(layers, input_bytes, num_stages, extra):
    """Brute force over every cut and replica vector: least bottleneck, then least sum."""
    times, params, outs = layers
    prof = _profile(times, params, outs, input_bytes)
    n = len(times)
    num_stages = min(num_stages, n)
    gpus = num_stages + extra
    bw = 1.25e9
    cost = stage_costs(prof, gpus, bw)
    plan = comm_aware_plan(prof, num_stages=num_stages, num_gpus=gpus, bandwidth_Bps=bw)
    assert sum(plan.replicas) == gpus and plan.bounds[0][0] == 0 and plan.bounds[-1][1] == n
    got = [cost[a, b, k] for (a, b), k in zip(plan.bounds, plan.replicas, strict=True)]
    best = (math.inf, math.inf)
    for cuts in itertools.combinations(range(1, n), num_stages - 1):
        bounds = list(zip((0, *cuts), (*cuts, n), strict=True))
        for ks in itertools.product(range(1, gpus + 1), repeat=num_stages):
            if sum(ks) == gpus:
                c = [cost[a, b, k] for (a, b), k in zip(bounds, ks, strict=True)]
                best = min(best, (max(c), sum(c)))
    assert max(got) == pytest.approx(best[0], rel=1e-9)
    assert sum(got) == pytest.approx(best[1], rel=1e-6)


def test_stage_cost_formula_by_hand():
    prof = _profile([3.0, 6.0], [1e9, 2e9], [4e9, 0.0], 2e9)
    cost = stage_costs(prof, 4, 1e9)
    # layers [0, 1) on 2 replicas: (3 + 2 * 4e9 / 1e9) / 2 + 2 (1/2) 1e9 / 1e9
    assert cost[0, 1, 2] == pytest.approx((3 + 8) / 2 + 1)  # no term for the input
    # layer 1 on 3 replicas: (6 + 2 * 4e9 / 1e9) / 3 + 2 (2/3) 2e9 / 1e9
    assert cost[1, 2, 3] == pytest.approx(14 / 3 + 8 / 3)
    assert cost[0, 2, 1] == pytest.approx(9)  # the whole model on one GPU: compute only
    assert math.isinf(cost[1, 1, 1]) and math.isinf(cost[0, 1, 0])


@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.tuples(st.floats(0.01, 5.0), st.floats(0, 5e9), st.floats(1, 5e9)), min_size=2),
    st.integers(0, 5),
)
def test_comm_aware_cost_is_alpha_max(layers, extra):
    """With ``B = B_inter / g`` the planner's bottleneck is the instance's ``alpha_max``."""
    prof = _profile(*(list(col) for col in zip(*layers, strict=True)), 3e9)
    stages = min(3, len(layers))
    plan = comm_aware_plan(prof, num_stages=stages, num_gpus=stages + extra, bandwidth_Bps=1e9 / 8)
    cost = stage_costs(prof, stages + extra, 1e9 / 8)
    bottleneck = max(cost[a, b, k] for (a, b), k in zip(plan.bounds, plan.replicas, strict=True))
    inst = PlacementInstance(8, 1e9, 3e11, (8, 8), "rar", plan.stages())
    assert bottleneck == pytest.approx(alpha_max(inst), rel=1e-9)


def test_benchmark_diagnostics_are_valid_placements():
    bench = _bench()
    stages = (
        Stage(2, 0.01, 0.02, 1e6, 4e6, 5e7),
        Stage(2, 0.01, 0.02, 4e6, 1e6, 1e8),
    )
    inst = PlacementInstance(4, 1.25e9, 3e11, (2, 1, 1), "rar", stages)
    diag = bench.heavy_edge_sum_growth(inst)
    assert evaluate(inst, diag).iteration_time_s >= 0
    # count-level cut weight: stages split 1+1 over servers 1, 2; stage 0 whole on server 0
    he = heavy_edge(inst, 0)
    assert bench.cut_weight(inst, he) >= 0
    split = Placement.from_servers(inst, [[0, 0], [1, 2]])
    # stage 1's ring (one edge, 2 * 1/2 * 1e8) + all 4 inter-stage pairs (2 * 4e6 / 2 each)
    assert bench.cut_weight(inst, split) == pytest.approx(1e8 + 4 * 4e6)
