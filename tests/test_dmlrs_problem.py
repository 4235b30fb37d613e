"""Family dmlrs: instance format, rate model (Eq. 3, Fact 1) and evaluator (Eqs. 3-7), by hand."""

from __future__ import annotations

import copy
import json
import math

import pytest

from ddlsched.errors import InfeasibleScheduleError, InvalidInstanceError
from ddlsched.problems.dmlrs import (
    DmlrsInstance,
    DmlrsSchedule,
    Utility,
    evaluate,
    fastest_slots,
    per_sample_time,
    ps_needed,
    samples_in_slot,
    schedule_from_counts,
    schedule_from_json,
    schedule_to_json,
    workers_needed,
)
from ddlsched.workloads.dmlrs import PRESETS, generate, unfinishable_share

# One job: tau = 0.1 s, g = 1e9 B, gamma = 2, F = 4; b_ext = 1e9 B/s, b_int = 4e9 B/s.
# pi(b_ext) = 0.1 + 2 * 1e9 * 2 / (4 * 1e9) = 1.1 s/sample; pi(b_int) = 0.1 + 0.25 = 0.35 s.
# One slot of 110 s: a worker processes 100 samples at b_ext, 110 / 0.35 at b_int.
HAND = {
    "family": "dmlrs",
    "schema_version": 1,
    "slots": 4,
    "slot_s": 110.0,
    "b_int": 4e9,
    "b_ext": 1e9,
    "resources": ["gpu", "cpu"],
    "machines": [{"capacity": [2, 4]}, {"capacity": [2, 4]}],
    "jobs": [
        {
            "arrival_slot": 2,
            "epochs": 2,
            "samples": 200,
            "grad_bytes": 1e9,
            "tau_s": 0.1,
            "gamma": 2,
            "global_batch": 4,
            "worker": [1, 1],
            "ps": [0, 1],
            "utility": {"theta1": 10.0, "theta2": 1.0, "theta3": 1.0},
        },
        {
            "arrival_slot": 1,
            "epochs": 1,
            "samples": 50,
            "grad_bytes": 1e-9,
            "tau_s": 1.0,
            "gamma": 1,
            "global_batch": 2,
            "worker": [0, 1],
            "ps": [0, 1],
            "utility": {"theta1": 5.0, "theta2": 0.5, "theta3": 2.0},
        },
    ],
}


@pytest.fixture
def hand() -> DmlrsInstance:
    return DmlrsInstance.from_dict(copy.deepcopy(HAND))


def test_rate_model_by_hand(hand):
    job = hand.jobs[0]
    assert per_sample_time(job, hand.b_ext) == pytest.approx(1.1)
    assert per_sample_time(job, hand.b_int) == pytest.approx(0.35)
    assert samples_in_slot(job, 1, hand.b_ext, hand.slot_s) == pytest.approx(100.0)
    assert samples_in_slot(job, 2, hand.b_int, hand.slot_s) == pytest.approx(2 * 110 / 0.35)
    # D_i(v, b) = ceil(v pi / slot_s): 100 samples need 1 worker at b_ext, 101 need 2
    assert workers_needed(job, 100, hand.b_ext, hand.slot_s) == 1
    assert workers_needed(job, 101, hand.b_ext, hand.slot_s) == 2
    assert workers_needed(job, 400, hand.b_ext, hand.slot_s) == 4
    assert workers_needed(job, 400, hand.b_int, hand.slot_s) == math.ceil(400 * 0.35 / 110)
    assert workers_needed(job, 0, hand.b_ext, hand.slot_s) == 0
    # PS rule with ceilings: gamma = 2
    assert [ps_needed(job, w) for w in range(6)] == [0, 1, 1, 2, 2, 3]
    # d_min = ceil(V pi(b_int) / (F slot_s)) = ceil(400 * 0.35 / 440) = 1
    assert job.workload == 400
    assert fastest_slots(hand, 0) == 1


def test_utility_is_the_sigmoid():
    u = Utility(10.0, 1.0, 1.0)
    assert u(1.0) == pytest.approx(5.0)
    assert u(0.0) == pytest.approx(10.0 / (1 + math.exp(-1)))
    assert u(1e6) == 0.0  # no overflow


def test_fact1_internal_only_on_one_machine(hand):
    # job 0 in slot 2: 2 workers + 1 PS on machine 0 -> b_int: 2 * 110 / 0.35 = 628 samples >= 400
    one = schedule_from_counts([0], [(0, 2, 0, 2, 1)])
    ev = evaluate(hand, one)
    assert ev.completion_slot == {0: 2}
    assert ev.samples[0] == pytest.approx(2 * 110 / 0.35)
    assert ev.total_utility == pytest.approx(Utility(10, 1, 1)(0))
    assert ev.internal_share == 1.0
    # the same workers with the PS on machine 1 -> b_ext: 200 samples per slot, two slots
    split = schedule_from_counts([0], [(0, 2, 0, 2, 0), (0, 2, 1, 0, 1)])
    with pytest.raises(InfeasibleScheduleError, match="accepted but processes 200"):
        evaluate(hand, split)
    two = schedule_from_counts(
        [0], [(0, 2, 0, 2, 0), (0, 2, 1, 0, 1), (0, 3, 0, 2, 0), (0, 3, 1, 0, 1)]
    )
    ev = evaluate(hand, two)
    assert ev.completion_slot == {0: 3}
    assert ev.total_utility == pytest.approx(Utility(10, 1, 1)(1))
    assert ev.median_training_time_s == pytest.approx(2 * 110)
    assert ev.internal_share == 0.0
    # utilisation: gpu 4 worker-slots of 1 / (2 machines * 2 gpu * 4 slots)
    assert ev.utilisation["gpu"] == pytest.approx(4 / 16)


def test_completion_is_the_last_slot_with_workers(hand):
    # job 1 alone: 1 worker, tau 1 s, 110 samples per slot >= 50; a PS-only entry later
    # does not move the completion (Eq. 6 counts workers)
    s = schedule_from_counts([1], [(1, 1, 0, 1, 1), (1, 3, 1, 0, 1)])
    ev = evaluate(hand, s)
    assert ev.completion_slot == {1: 1}
    assert ev.total_utility == pytest.approx(Utility(5, 0.5, 2)(0))
    assert ev.rejected == 1 and ev.accepted == 1


@pytest.mark.parametrize(
    ("entries", "accepted", "unfinished", "message"),
    [
        ([(0, 2, 0, 3, 2)], [0], [], r"machine 0, slot 2, resource 'gpu'.*exceeds capacity"),
        ([(0, 1, 0, 1, 1)], [0], [], r"job 0, machine 0, slot 1: allocation before its arrival"),
        ([(0, 2, 0, 2, 0)], [0], [], r"job 0, slot 2: 0 PSs for 2 workers"),
        ([(1, 1, 0, 1, 1)], [], [], r"job 1 is rejected .* machine 0 in slot 1"),
        ([(0, 2, 0, 1, 1)], [0], [], r"job 0 is accepted but processes"),
        ([(1, 1, 0, 1, 1)], [], [1], r"job 1 is marked unfinished but processes"),
        ([(0, 5, 0, 1, 1)], [0], [], r"slot must be an integer in 1..4"),
        ([(0, 2, 7, 1, 1)], [0], [], r"machine must be an integer in 0..1"),
    ],
)
def test_evaluator_refusals_name_job_machine_slot(hand, entries, accepted, unfinished, message):
    schedule = schedule_from_counts(accepted, entries, unfinished)
    with pytest.raises(InfeasibleScheduleError, match=message):
        evaluate(hand, schedule)


def test_more_than_F_workers_refused(hand):
    data = copy.deepcopy(HAND)
    data["machines"] = [{"capacity": [8, 8]}, {"capacity": [8, 8]}]
    inst = DmlrsInstance.from_dict(data)
    s = schedule_from_counts([0], [(0, 2, 0, 3, 2), (0, 2, 1, 2, 1)])
    with pytest.raises(
        InfeasibleScheduleError, match=r"job 0, slot 2: 5 workers, more than F_i = 4"
    ):
        evaluate(inst, s)


def test_unfinished_earns_zero(hand):
    s = schedule_from_counts([], [(0, 2, 0, 1, 1)], unfinished=[0])
    ev = evaluate(hand, s)
    assert ev.total_utility == 0.0 and ev.unfinished == 1 and ev.median_training_time_s is None


def test_json_round_trip_and_count_form(hand):
    again = DmlrsInstance.from_dict(json.loads(json.dumps(hand.to_dict())))
    assert again == hand
    assert hand.to_dict()["machines"] == {"count": 2, "capacity": [2.0, 4.0]}
    s = schedule_from_counts([0], [(0, 2, 0, 2, 1)])
    ev = evaluate(hand, s)
    back = schedule_from_json(json.loads(json.dumps(schedule_to_json(s, ev))))
    assert back == s


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (("slots",), 0, "slots: must be >= 1"),
        (("slot_s",), -1.0, "slot_s: must be > 0"),
        (("b_ext",), 0.0, "b_ext: must be > 0"),
        (("b_int",), 5e8, r"b_int .* must be >= b_ext"),
        (("jobs", 0, "arrival_slot"), 5, r"jobs\[0\].arrival_slot: must be in 1..4"),
        (("jobs", 0, "arrival_slot"), 0, r"jobs\[0\].arrival_slot: must be >= 1"),
        (("jobs", 0, "utility", "theta1"), 0.0, r"theta1: must be > 0"),
        (("jobs", 0, "utility", "theta2"), -1.0, r"theta2: must be > 0"),
        (("jobs", 0, "worker"), [0, 0], r"jobs\[0\]: uses no resource"),
        (("jobs", 0, "epochs"), -3, r"jobs\[0\].epochs: must be >= 1"),
        (("jobs", 0, "tau_s"), 0.0, r"tau_s: must be > 0"),
        (("jobs", 0, "gamma"), 1.5, r"gamma: expected an integer"),
        (("jobs", 0, "grad_bytes"), float("nan"), r"grad_bytes: expected a finite number"),
        (("jobs", 0, "colour"), 3, r"unknown field\(s\) 'colour'"),
        (("machines",), {"count": 0, "capacity": [1, 1]}, r"machines.count: must be >= 1"),
        (("machines",), [{"capacity": [0, 1]}], r"capacity\[0\] \(gpu\): must be > 0"),
        (("schema_version",), 2, "schema_version: expected 1"),
    ],
)
def test_invalid_instances_name_the_field(path, value, message):
    data = copy.deepcopy(HAND)
    target = data
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    ps = data["jobs"][0]["ps"]
    if path[-1] == "worker":
        data["jobs"][0]["ps"] = [0, 0]
    with pytest.raises(InvalidInstanceError, match=message):
        DmlrsInstance.from_dict(data)
    data["jobs"][0]["ps"] = ps


def test_missing_field_refused():
    data = copy.deepcopy(HAND)
    del data["jobs"][1]["utility"]
    with pytest.raises(InvalidInstanceError, match=r"jobs\[1\]: missing field\(s\) 'utility'"):
        DmlrsInstance.from_dict(data)


def test_presets_round_trip_and_are_reproducible():
    for preset in ("paper", "tiny", "micro"):
        for seed in range(3):
            a = generate(preset, seed)
            assert DmlrsInstance.from_dict(json.loads(json.dumps(a.to_dict()))) == a
            assert generate(preset, seed).to_dict() == a.to_dict()
            assert a.meta["unfinishable_share"] == unfinishable_share(a)
    assert set(PRESETS) == {"paper", "tiny", "micro", "trace"}


def test_preset_sizes():
    paper = generate("paper", 0, jobs=7, machines=3, slots=9)
    assert (len(paper.jobs), paper.num_machines, paper.slots) == (7, 3, 9)
    for seed in range(20):
        tiny = generate("tiny", seed)
        assert 2 <= len(tiny.jobs) <= 4 and 1 <= tiny.num_machines <= 3 and 3 <= tiny.slots <= 6
        assert all(1 <= j.global_batch <= 4 and j.gamma in (1, 2) for j in tiny.jobs)
        micro = generate("micro", seed)
        assert len(micro.jobs) == 2 and micro.num_machines == 2 and micro.slots <= 3
        assert all(j.global_batch <= 2 for j in micro.jobs)
    with pytest.raises(InvalidInstanceError, match=r"parameter jobs must be int >= 1, <= 100000"):
        generate("paper", 0, jobs=0)
    with pytest.raises(InvalidInstanceError, match="has no parameter"):
        generate("paper", 0, colour=3)


def test_empty_schedule_is_feasible(hand):
    ev = evaluate(hand, DmlrsSchedule(accepted=()))
    assert ev.total_utility == 0.0 and ev.rejected == 2
