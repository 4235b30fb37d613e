"""Family ``placement``: instance validation, JSON, and hand-computed per-iteration times."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ddlsched.errors import InfeasibleScheduleError, InvalidInstanceError
from ddlsched.heuristics.heavy_edge import alpha_min
from ddlsched.problems.placement import (
    Placement,
    PlacementInstance,
    Stage,
    alpha_max,
    evaluate,
    fewest_servers,
    placement_from_json,
    placement_to_json,
)
from ddlsched.workloads.placement import (
    availability_pattern,
    distinct_availability_pattern,
    generate,
)

# Round numbers: g = 4, B_inter = 1e9 B/s, B_intra = 1e11 B/s.
# Stage 0: k=1, comp 0.03 s, dout 1e6 B, h 1e7 B; its din (7e9) must be ignored.
# Stage 1: k=2, comp 0.015 s, din 5e5 B (= 1e6 * 1 / 2), h 2e7 B; its dout (9e9) ignored.
STAGES = (
    Stage(replicas=1, fwd_s=0.01, bwd_s=0.02, in_bytes=7e9, out_bytes=1e6, param_bytes=1e7),
    Stage(replicas=2, fwd_s=0.005, bwd_s=0.01, in_bytes=5e5, out_bytes=9e9, param_bytes=2e7),
)


def make(available, allreduce="rar", stages=STAGES) -> PlacementInstance:
    return PlacementInstance(
        gpus_per_server=4,
        b_inter=1e9,
        b_intra=1e11,
        available=tuple(available),
        allreduce=allreduce,
        stages=stages,
    )


def test_single_server_all_intra():
    inst = make([3])
    ev = evaluate(inst, Placement(((1,), (2,))))
    # stage 0: 0.03 + 2*1e6*2/2 / 1e11 (all of stage 1 local) = 0.03002
    comp, comm, ar = ev.stage_server_time_s[(0, 0)]
    assert (comp, ar) == (pytest.approx(0.03), 0.0)
    assert comm == pytest.approx(2e-5)
    # stage 1: 0.015 + 2*5e5/1e11 + AllReduce 2*(2-1)*2e7/2 / 1e11 = 0.01521
    assert sum(ev.stage_server_time_s[(1, 0)]) == pytest.approx(0.015 + 1e-5 + 2e-4)
    assert ev.iteration_time_s == pytest.approx(0.03002)
    assert ev.bottleneck == (0, 0)
    assert ev.servers_used == 1


def test_split_stage_ring_allreduce():
    inst = make([2, 1])
    ev = evaluate(inst, Placement(((1, 0), (1, 1))))
    # stage 0 on m0: g * 2*1e6*(2-1)/2 / 1e9 + 2*1e6*1/2 / 1e11
    assert sum(ev.stage_server_time_s[(0, 0)]) == pytest.approx(0.03 + 4e-3 + 1e-5)
    # stage 1 split: AllReduce 2*(2-1)*2e7 / (2 * (1/4) * 1e9) = 0.08
    assert ev.stage_server_time_s[(1, 0)][2] == pytest.approx(0.08)
    assert sum(ev.stage_server_time_s[(1, 0)]) == pytest.approx(0.015 + 1e-5 + 0.08)
    # stage 1 on m1: its input crosses the NIC: g * 2*5e5*1/1 / 1e9 = 4e-3
    assert sum(ev.stage_server_time_s[(1, 1)]) == pytest.approx(0.015 + 4e-3 + 0.08)
    assert ev.iteration_time_s == pytest.approx(0.099)
    assert ev.bottleneck == (1, 1)


def test_tree_allreduce_halves_the_data():
    inst = make([2, 1], allreduce="tar")
    ev = evaluate(inst, Placement(((1, 0), (1, 1))))
    assert ev.stage_server_time_s[(1, 1)][2] == pytest.approx(0.04)
    assert ev.iteration_time_s == pytest.approx(0.015 + 4e-3 + 0.04)
    intra = evaluate(make([3], allreduce="tar"), Placement(((1,), (2,))))
    assert intra.stage_server_time_s[(1, 0)][2] == pytest.approx(1e-4)


def test_first_and_last_stage_drop_missing_neighbour():
    inst = make([1, 1, 1])
    ev = evaluate(inst, Placement(((1, 0, 0), (0, 1, 1))))
    # stage 0 alone: only its dout term, all over the NIC: 4 * 2*1e6*2/2 / 1e9 = 8e-3
    assert ev.stage_server_time_s[(0, 0)][1] == pytest.approx(8e-3)
    # stage 1 replicas: only the din term (stage 1 is last): 4 * 2*5e5 / 1e9 = 4e-3
    assert ev.stage_server_time_s[(1, 1)][1] == pytest.approx(4e-3)


def test_alpha_max_and_min():
    inst = make([2, 1])
    # stage 1 alone per server: 0.015 + 4e-3 + 2*1*2e7/2 / (1e9/4) = 0.099
    assert alpha_max(inst) == pytest.approx(0.099)
    # fewest servers: 3 replicas on one 4-GPU server -> the single-server time
    assert fewest_servers(3, 4) == (3,)
    assert fewest_servers(10, 4) == (4, 4, 2)
    assert alpha_min(inst) == pytest.approx(0.03002)
    assert alpha_min(inst) <= alpha_max(inst)


def test_infeasible_placements_are_refused():
    inst = make([2, 1])
    with pytest.raises(InfeasibleScheduleError, match="k_s"):
        evaluate(inst, Placement(((1, 0), (1, 0))))
    with pytest.raises(InfeasibleScheduleError, match="server 1"):
        evaluate(inst, Placement(((0, 1), (1, 1))))
    with pytest.raises(InfeasibleScheduleError, match="stage rows"):
        evaluate(inst, Placement(((1, 0),)))


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"available": (5,)}, "available[0]"),
        ({"available": (1,)}, "available"),
        ({"allreduce": "butterfly"}, "allreduce"),
        ({"b_inter": 0.0}, "b_inter"),
        ({"gpus_per_server": 0}, "gpus_per_server"),
        ({"stages": ()}, "stages"),
    ],
)
def test_validation_names_the_field(change, field):
    with pytest.raises(InvalidInstanceError, match=field.replace("[", r"\[").replace("]", r"\]")):
        replace(make([3]), **change)


def test_stage_boundary_consistency_is_checked():
    bad = (STAGES[0], replace(STAGES[1], in_bytes=1e6))
    with pytest.raises(InvalidInstanceError, match=r"stages\[1\]\.in_bytes"):
        make([3], stages=bad)
    with pytest.raises(InvalidInstanceError, match=r"stages\[0\]\.replicas"):
        make([3], stages=(replace(STAGES[0], replicas=0), STAGES[1]))


def test_json_round_trip_and_strict_fields(tmp_path):
    inst = generate("small", 3)
    path = tmp_path / "inst.json"
    inst.save(path)
    assert PlacementInstance.load(path) == inst
    data = json.loads(path.read_text())
    data["stages"][0]["colour"] = "red"
    path.write_text(json.dumps(data))
    with pytest.raises(InvalidInstanceError, match="colour"):
        PlacementInstance.load(path)
    with pytest.raises(InvalidInstanceError, match="no such file"):
        PlacementInstance.load(tmp_path / "missing.json")


def test_spec_example_file_parses():
    spec_example = {
        "family": "placement",
        "schema_version": 1,
        "gpus_per_server": 8,
        "b_inter": 1.25e9,
        "b_intra": 3.0e11,
        "available": [4, 2, 1, 1],
        "allreduce": "rar",
        "stages": [
            {
                "replicas": 2,
                "fwd_s": 0.010,
                "bwd_s": 0.020,
                "in_bytes": 1.0e6,
                "out_bytes": 2.0e6,
                "param_bytes": 5.0e7,
            }
        ],
    }
    inst = PlacementInstance.from_dict(spec_example)
    assert inst.num_replicas == 2 and inst.num_servers == 4


def test_placement_json_round_trip():
    inst = make([2, 1])
    placement = Placement.from_servers(inst, [[0], [0, 1]])
    assert placement.counts == ((1, 0), (1, 1))
    data = placement_to_json(placement, evaluate(inst, placement))
    back = placement_from_json(json.loads(json.dumps(data)))
    assert back.counts == placement.counts
    assert back.gpu_of_replica == placement.gpu_of_replica


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 40), st.integers(1, 8))
def test_availability_pattern_sums_to_the_job(seed, gpus, per_server):
    pattern = availability_pattern(seed, gpus, per_server)
    assert sum(pattern) == gpus
    assert all(1 <= a <= per_server for a in pattern)
    assert pattern == availability_pattern(seed, gpus, per_server)


def test_table2_seeds_draw_distinct_patterns():
    """Seed k of table2 is the k-th distinct pattern (servers interchangeable) among the
    draws of seeds 0, 1, ...: seeds 0-39 of 16 GPUs give 40 patterns, seed 0 its own draw
    (the plain draws of seeds 2 and 3 are one pattern in another server order)."""
    drawn = [availability_pattern(seed, 16) for seed in range(40)]
    assert sorted(drawn[2]) == sorted(drawn[3])
    patterns = [distinct_availability_pattern(seed, 16)[0] for seed in range(40)]
    assert len({tuple(sorted(p)) for p in patterns}) == 40
    assert patterns[0] == drawn[0] and all(sum(p) == 16 for p in patterns)
    firsts = []
    for pattern in drawn:
        if tuple(sorted(pattern)) not in {tuple(sorted(f)) for f in firsts}:
            firsts.append(pattern)
    assert patterns[: len(firsts)] == firsts[:40]
    instances = [generate("table2", seed, model="gpt175b") for seed in (2, 3)]
    assert sorted(instances[0].available) != sorted(instances[1].available)
    # Two GPUs have two patterns, (2,) and (1, 1): seed 5 repeats one, and says so.
    pattern, note = distinct_availability_pattern(5, 2)
    assert pattern == distinct_availability_pattern(1, 2)[0] and "only 2 distinct" in note
    assert distinct_availability_pattern(1, 2)[1] == ""


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000))
def test_small_preset_round_trips_and_alpha_is_bracketed(seed):
    inst = generate("small", seed)
    assert PlacementInstance.from_dict(json.loads(json.dumps(inst.to_dict()))) == inst
    low, high = alpha_min(inst), alpha_max(inst)
    assert math.isfinite(low) and math.isfinite(high)
