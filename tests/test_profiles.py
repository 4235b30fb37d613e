"""DNN profiles: loaders of the real profiles, analytic GPTs, the stage planner."""

from __future__ import annotations

import itertools
import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ddlsched.datadir import data_dir, data_file
from ddlsched.problems.placement import PlacementInstance
from ddlsched.workloads.placement import TABLE2_MODELS, table2
from ddlsched.workloads.profiles import (
    PROFILE_NAMES,
    Layer,
    ModelProfile,
    cut_bytes,
    gpt_profile,
    load_profile,
    plan_stages,
)
from ddlsched.workloads.profiles.planner import balanced_cuts, replica_counts

needs_data = pytest.mark.skipif(
    data_dir() is None,
    reason="shared data directory absent (set DDLSCHED_DATA to the folder holding profiles/)",
)
FILE_PROFILES = [n for n in PROFILE_NAMES if not n.startswith("analytic/")]


def test_cut_bytes_counts_each_producer_once():
    # a -> b -> c -> d and a skip a -> d: the cut after b carries a's and b's outputs.
    order = ["a", "b", "c", "d"]
    sizes = {"a": 10.0, "b": 20.0, "c": 30.0, "d": 40.0}
    edges = [("a", "b"), ("b", "c"), ("c", "d"), ("a", "d"), ("a", "c")]
    assert cut_bytes(order, sizes, edges) == [10.0, 30.0, 40.0, 0.0]


@needs_data
def test_pipedream_vgg16_matches_the_file():
    text = data_file("profiles", "pipedream", "vgg16", "graph.txt").read_text()
    fwd = sum(float(x) for x in re.findall(r"forward_compute_time=([0-9.]+)", text))
    bwd = sum(float(x) for x in re.findall(r"backward_compute_time=([0-9.]+)", text))
    params = sum(float(x) for x in re.findall(r"parameter_size=([0-9.]+)", text))
    prof = load_profile("pipedream/vgg16")
    assert prof.num_layers == 41
    assert prof.compute_s == pytest.approx((fwd + bwd) / 1000)
    assert prof.param_bytes == pytest.approx(params)
    assert prof.batch_size == 128
    assert prof.layers[0].name.startswith("node1 Input")
    assert "pipedream" in prof.provenance["source"]


@needs_data
def test_pipedream_multi_output_activations_are_summed():
    prof = load_profile("pipedream/gnmt")
    assert prof.num_layers == 48 and prof.compute_s > 0


@needs_data
def test_dnn_partitioning_bert24():
    raw = json.loads(data_file("profiles", "dnn-partitioning", "bert24_training.json").read_text())
    prof = load_profile("dnn-partitioning/bert24")
    assert prof.num_layers == sum(1 for n in raw["nodes"] if not n["isBackwardNode"])
    total = sum(n["fpgaLatency"] for n in raw["nodes"]) / 1000
    assert prof.compute_s == pytest.approx(total)
    assert max(lay.out_bytes for lay in prof.layers[:-1]) > 0


@needs_data
def test_piper_bert32():
    raw = json.loads(data_file("profiles", "piper", "bert32a100.json").read_text())
    prof = load_profile("piper/bert32a100")
    per_sample = sum(
        next(t for t in n["TMPCs"]["1"] if t["id"] == "vanilla")["timePerSample"]
        for n in raw["nodes"]
    )
    assert prof.compute_s == pytest.approx(per_sample * prof.batch_size)
    assert sum(1 for lay in prof.layers if "ParallelTransformerLayer" in lay.name) == 32


def test_analytic_gpt_parameter_counts():
    assert gpt_profile("gpt-175b").param_bytes / 2 == pytest.approx(175e9, rel=0.02)
    assert gpt_profile("gpt-6.7b").param_bytes / 2 == pytest.approx(6.7e9, rel=0.05)
    prof = gpt_profile("gpt-6.7b")
    block = prof.layers[1]
    assert block.bwd_s == pytest.approx(2 * block.fwd_s)
    assert block.out_bytes == 32 * 512 * 4096 * 2


@pytest.mark.parametrize("name", [*FILE_PROFILES, "analytic/gpt-175b"])
def test_planner_preserves_layer_times_and_boundaries(name):
    if not name.startswith("analytic/") and data_dir() is None:
        pytest.skip("shared data directory absent")
    prof = load_profile(name)
    num_stages = min(4, prof.num_layers)
    for comm_aware in (None, 1.25e9):
        plan = plan_stages(
            prof, num_stages=num_stages, num_gpus=10, boundary_bandwidth_Bps=comm_aware
        )
        stages = plan.stages()
        assert sum(s.replicas for s in stages) == 10
        total = sum(s.replicas * (s.fwd_s + s.bwd_s) for s in stages)
        assert total == pytest.approx(prof.compute_s, rel=1e-9)
        assert sum(s.param_bytes for s in stages) == pytest.approx(prof.param_bytes)
        # the stage-boundary consistency of the placement instance holds
        PlacementInstance(8, 1.25e9, 3e11, (8, 2), "rar", stages)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0.0, 10.0), min_size=1, max_size=7), st.integers(1, 4))
def test_balanced_cuts_is_optimal(times, num_stages):
    num_stages = min(num_stages, len(times))
    bounds = balanced_cuts(times, num_stages)
    assert bounds[0][0] == 0 and bounds[-1][1] == len(times)
    assert all(a < b for a, b in bounds)
    got = max(sum(times[a:b]) for a, b in bounds)
    best = min(
        max(sum(times[a:b]) for a, b in zip((0, *cuts), (*cuts, len(times)), strict=True))
        for cuts in itertools.combinations(range(1, len(times)), num_stages - 1)
    )
    assert got == pytest.approx(best)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0.1, 10.0), min_size=1, max_size=4), st.integers(0, 5))
def test_replica_counts_minimise_the_max_per_replica_time(times, extra):
    gpus = len(times) + extra
    counts = replica_counts(times, gpus)
    assert sum(counts) == gpus
    got = max(t / k for t, k in zip(times, counts, strict=True))
    best = min(
        max(t / k for t, k in zip(times, ks, strict=True))
        for ks in itertools.product(range(1, extra + 2), repeat=len(times))
        if sum(ks) == gpus
    )
    assert got == pytest.approx(best)


def test_profile_validation():
    with pytest.raises(ValueError, match="fwd_s"):
        Layer("bad", -1.0, 0.0, 0.0, 0.0)
    with pytest.raises(ValueError, match="no layers"):
        ModelProfile("empty", (), 1, 0.0)
    with pytest.raises(ValueError, match="num_gpus"):
        plan_stages(gpt_profile("gpt-6.7b"), num_stages=8, num_gpus=4)


@pytest.mark.parametrize("model", sorted(TABLE2_MODELS))
def test_table2_cases_are_valid(model):
    if not TABLE2_MODELS[model].profile.startswith("analytic/") and data_dir() is None:
        pytest.skip("shared data directory absent")
    inst = table2(5, model=model)
    assert sum(inst.available) == inst.num_replicas == TABLE2_MODELS[model].num_gpus
    assert inst.b_inter == 1.25e9 and inst.b_intra == 3e11 and inst.gpus_per_server == 8
    assert table2(5, model=model) == inst
