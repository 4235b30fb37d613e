"""Family asrpt, data layer: instance validation, JSON round-trip, the evaluator by hand."""

from __future__ import annotations

import copy
import json
import math

import pytest

from ddlsched.errors import InfeasibleScheduleError, InvalidInstanceError
from ddlsched.problems.asrpt import AsrptInstance, prediction_error
from ddlsched.problems.asrpt_schedule import (
    AsrptSchedule,
    JobRun,
    evaluate,
    schedule_from_json,
    schedule_to_json,
)
from ddlsched.workloads.asrpt import tiny

B = 1e9


def _stage(k, fwd, bwd, h=0.0):
    return {
        "replicas": k,
        "fwd_s": fwd,
        "bwd_s": bwd,
        "in_bytes": 0.0,
        "out_bytes": 0.0,
        "param_bytes": h,
    }


def hand_dict():
    """Two servers of 2 GPUs; ``one`` (1 GPU, alpha 0.3 s) and ``two`` (2 replicas of a
    data-parallel stage: AllReduce 2 (k-1) h / k = 1e8 B, 0.1 s on one server at B_intra,
    0.2 s split at x/g B_inter = B/2; alpha 0.3 s together, 0.4 s split)."""
    return {
        "family": "asrpt",
        "schema_version": 1,
        "cluster": {"servers": 2, "gpus_per_server": 2, "b_inter": B, "b_intra": B},
        "time_unit_s": 0.1,
        "configs": {
            "one": {"allreduce": "rar", "stages": [_stage(1, 0.1, 0.2)]},
            "two": {"allreduce": "rar", "stages": [_stage(2, 0.1, 0.1, 1e8)]},
        },
        "jobs": [
            {"id": "a", "arrival_s": 0.0, "config": "one", "iterations": 10,
             "predicted_iterations": 12.0},
            {"id": "b", "arrival_s": 1.0, "config": "two", "iterations": 5,
             "predicted_iterations": 0.0, "group": "g2", "features": {"gpus": 2}},
            {"id": "c", "arrival_s": 0.0, "config": "two", "iterations": 2,
             "predicted_iterations": 2.0},
        ],
    }  # fmt: skip


def hand_schedule(c_start=0.0):
    return AsrptSchedule(
        {
            "a": JobRun(0.0, (0,), ((1,),)),
            "b": JobRun(1.0, (0, 1), ((1, 1),)),
            "c": JobRun(c_start, (1,), ((2,),)),
        }
    )


def test_evaluator_hand_computed():
    inst = AsrptInstance.from_dict(hand_dict())
    ev = evaluate(inst, hand_schedule())
    assert ev.alpha_s == pytest.approx((0.3, 0.4, 0.3))
    assert ev.finish_s == pytest.approx((3.0, 3.0, 0.6))
    assert ev.total_completion_s == pytest.approx(6.6)
    assert ev.total_flow_s == pytest.approx(5.6)
    assert ev.makespan_s == pytest.approx(3.0)
    # busy GPU-seconds 1 x 3 + 2 x 2 + 2 x 0.6 = 8.2 over G x makespan = 12
    assert ev.utilisation == pytest.approx(8.2 / 12)
    assert ev.mean_jct_s == pytest.approx(5.6 / 3)
    assert ev.p50_jct_s == pytest.approx(2.0)
    # epsilon_bar = (2 + 5 + 0) / 3 (Eq. 9)
    assert ev.epsilon_bar == pytest.approx(7 / 3)


def test_half_open_intervals_and_overcommit():
    inst = AsrptInstance.from_dict(hand_dict())
    evaluate(inst, hand_schedule(c_start=0.4))  # c runs [0.4, 1.0), b starts at 1.0
    with pytest.raises(InfeasibleScheduleError, match=r"server 1 over-committed at t = 1\.0"):
        evaluate(inst, hand_schedule(c_start=0.8))


@pytest.mark.parametrize(
    ("run", "message"),
    [
        (JobRun(-0.5, (1,), ((2,),)), "before its arrival"),
        (JobRun(0.0, (1, 1), ((1, 1),)), "listed twice"),
        (JobRun(0.0, (2,), ((2,),)), "server 2 does not exist"),
        (JobRun(0.0, (1,), ((1,),)), "1 replicas placed, k_s = 2"),
        (JobRun(0.0, (0,), ((3,),)), "3 replicas placed"),
        (JobRun(0.0, (1,), ((2,), (0,))), "2 stage rows"),
    ],
)
def test_evaluator_rejects(run, message):
    inst = AsrptInstance.from_dict(hand_dict())
    sched = hand_schedule()
    runs = dict(sched.runs)
    runs["c"] = run
    with pytest.raises(InfeasibleScheduleError, match=message):
        evaluate(inst, AsrptSchedule(runs))


def test_missing_and_unknown_jobs_in_schedule():
    inst = AsrptInstance.from_dict(hand_dict())
    runs = dict(hand_schedule().runs)
    del runs["b"]
    with pytest.raises(InfeasibleScheduleError, match="job b is not scheduled"):
        evaluate(inst, AsrptSchedule(runs))
    runs = dict(hand_schedule().runs)
    runs["zz"] = JobRun(0.0, (0,), ((1,),))
    with pytest.raises(InfeasibleScheduleError, match="unknown job"):
        evaluate(inst, AsrptSchedule(runs))


def _broken(mutate):
    data = hand_dict()
    mutate(data)
    return data


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d.pop("jobs"), "missing field"),
        (lambda d: d.update(extra=1), "unknown field"),
        (lambda d: d["jobs"][0].update(colour="red"), "unknown field"),
        (lambda d: d["jobs"][1].update(id="a"), "duplicate job id 'a'"),
        (lambda d: d["jobs"][0].update(arrival_s=-1.0), "arrival_s.*must be >= 0"),
        (lambda d: d["jobs"][0].update(arrival_s=math.inf), "finite number"),
        (lambda d: d["jobs"][0].update(arrival_s=math.nan), "finite number"),
        (lambda d: d["jobs"][0].update(iterations=0), "iterations.*>= 1"),
        (lambda d: d["jobs"][0].update(iterations=2.5), "iterations.*integer"),
        (lambda d: d["jobs"][0].update(predicted_iterations=-1), "predicted_iterations"),
        (lambda d: d["jobs"][0].update(config="nope"), "unknown configuration 'nope'"),
        (lambda d: d["cluster"].update(servers=1, gpus_per_server=1), "needs 2 GPUs"),
        (lambda d: d["cluster"].update(b_intra=B / 4), "b_intra.*below b_inter / g"),
        (lambda d: d["cluster"].update(b_inter=0), "b_inter.*> 0"),
        (lambda d: d["cluster"].update(servers=10**9), "exceeds the limit"),
        (lambda d: d["configs"]["one"]["stages"][0].update(fwd_s=-1), "fwd_s"),
        (lambda d: d["configs"]["one"].update(allreduce="star"), "allreduce"),
        (lambda d: d.update(jobs=[]), "at least one job"),
        (lambda d: d.update(family="rar"), "family"),
        (lambda d: d.update(time_unit_s=0), "time_unit_s"),
    ],
)
def test_invalid_instances(mutate, message):
    with pytest.raises(InvalidInstanceError, match=message):
        AsrptInstance.from_dict(_broken(mutate))


def test_json_round_trip_and_schedule_round_trip():
    inst = AsrptInstance.from_dict(hand_dict())
    again = AsrptInstance.from_dict(json.loads(json.dumps(inst.to_dict())))
    assert again.to_dict() == inst.to_dict()
    sched = hand_schedule()
    ev = evaluate(inst, sched)
    data = json.loads(json.dumps(schedule_to_json(sched, ev)))
    assert data["jobs"][1]["alpha_s"] == pytest.approx(0.4)
    back = schedule_from_json(data)
    assert evaluate(inst, back).total_completion_s == ev.total_completion_s


def test_tiny_preset_round_trips_and_is_on_the_grid():
    for seed in range(30):
        inst = tiny(seed)
        data = copy.deepcopy(inst.to_dict())
        assert AsrptInstance.from_dict(data).to_dict() == inst.to_dict()
        for job in inst.jobs:
            units = job.arrival_s / inst.time_unit_s
            assert abs(units - round(units)) < 1e-9
            assert job.iterations % 2 == 0


def test_prediction_error_bins():
    inst = AsrptInstance.from_dict(hand_dict())
    err = prediction_error(inst)
    assert err["unseen_share"] == pytest.approx(1 / 3)
    assert err["error_exact"] == pytest.approx(1 / 3)  # c
    assert err["error_le_50pct"] == pytest.approx(1 / 3)  # a: 2/10
    assert err["error_le_100pct"] == pytest.approx(1 / 3)  # b: 5/5
    assert err["error_gt_100pct"] == 0.0
