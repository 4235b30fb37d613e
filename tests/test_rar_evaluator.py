"""The rar evaluator: hand-computed executions, dispatch, errors, JSON round-trip."""

from __future__ import annotations

import dataclasses
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ddlsched.errors import InfeasibleScheduleError, InvalidInstanceError
from ddlsched.problems.rar import Network, RarInstance, RarJob
from ddlsched.problems.rar_schedule import (
    RarAssignment,
    RarSchedule,
    evaluate,
    schedule_from_json,
    schedule_to_json,
)
from ddlsched.workloads.rar import generate

NET = Network(b_e=1.0, b_i=20.0, C=50.0, alpha=0.1, xi1=1.0, xi2=0.002)


def job(job_id: str, gpus: int, iterations: int) -> RarJob:
    return RarJob(
        job_id, gpus, iterations, grad_size=0.05, batch=32, fwd_per_sample=0.0002, bwd=0.004
    )


def two_jobs(progress: str = "floor", horizon: int = 20) -> RarInstance:
    return RarInstance((2, 2), NET, (job("A", 2, 20), job("B", 2, 40)), horizon, progress)


def sched(**entries: tuple[list[tuple[int, int]], int]) -> RarSchedule:
    return RarSchedule(
        {k: RarAssignment(tuple(gpus), start) for k, (gpus, start) in entries.items()}
    )


CROSSED = sched(A=([(0, 0), (1, 0)], 0), B=([(0, 1), (1, 1)], 0))


def test_contention_changes_when_a_job_leaves_floor():
    # Both split on both servers: p = 2, tau = 0.1199, 8 iterations/slot.
    # A: 20 iterations -> 3 slots. B: 24 done by slot 3, then alone (p = 1,
    # tau = 0.0649, 15/slot): 16 left -> 2 more slots -> finishes at 5.
    ev = evaluate(two_jobs(), CROSSED)
    assert ev.start == {"A": 0, "B": 0}
    assert ev.finish == {"A": 3, "B": 5}
    assert ev.makespan == 5
    assert ev.average_completion == 4.0
    assert ev.utilisation == pytest.approx((2 * 3 + 2 * 5) / (4 * 5))


def test_contention_changes_when_a_job_leaves_fractional():
    # rates 1/0.1199 = 8.340 then 1/0.0649 = 15.408: A needs 2.4 slots -> 3;
    # B has 40 - 3 * 8.340 = 14.98 left, done within one more slot -> 4.
    ev = evaluate(two_jobs("fractional"), CROSSED)
    assert ev.finish == {"A": 3, "B": 4}


def test_each_job_on_its_own_server_runs_at_intra_server_speed():
    # n = 1: tau = 0.0154, 64 iterations/slot: both finish in one slot.
    ev = evaluate(two_jobs(), sched(A=([(0, 0), (0, 1)], 0), B=([(1, 0), (1, 1)], 0)))
    assert ev.finish == {"A": 1, "B": 1}


def test_dispatch_waits_for_earlier_jobs_on_shared_gpus():
    inst = RarInstance((2, 2), NET, (job("A", 2, 20), job("B", 2, 40), job("C", 1, 10)), 20)
    schedule = sched(
        A=([(0, 0), (1, 0)], 0),
        B=([(0, 1), (1, 1)], 0),
        C=([(0, 0)], 0),  # same planned start as A, later in the instance: waits for A
    )
    ev = evaluate(inst, schedule)
    assert ev.start["C"] == 3 and ev.finish["C"] == 4  # 10 iterations at 80/slot
    # a later planned start is honoured even when the GPU is free earlier
    later = sched(A=([(0, 0), (1, 0)], 0), B=([(0, 1), (1, 1)], 0), C=([(0, 0)], 7))
    assert evaluate(inst, later).start["C"] == 7


def test_planned_order_not_instance_order_decides_dispatch():
    inst = RarInstance((2,), NET, (job("A", 2, 64), job("B", 2, 64)), 20)
    ev = evaluate(inst, sched(A=([(0, 0), (0, 1)], 5), B=([(0, 0), (0, 1)], 0)))
    assert ev.start == {"B": 0, "A": 5}
    # B (planned first) runs first even though A precedes it in the instance
    ev = evaluate(inst, sched(A=([(0, 0), (0, 1)], 1), B=([(0, 0), (0, 1)], 0)))
    assert ev.start == {"B": 0, "A": 1}


@pytest.mark.parametrize(
    ("schedule", "message"),
    [
        (sched(A=([(0, 0)], 0), B=([(0, 1), (1, 1)], 0)), "needs 2 GPUs"),
        (sched(A=([(0, 0), (2, 0)], 0), B=([(0, 1), (1, 1)], 0)), "does not exist"),
        (sched(A=([(0, 0), (0, 0)], 0), B=([(0, 1), (1, 1)], 0)), "twice"),
        (sched(A=([(0, 0), (1, 0)], -1), B=([(0, 1), (1, 1)], 0)), "negative start"),
        (sched(A=([(0, 0), (1, 0)], 0)), "unscheduled"),
        (
            sched(A=([(0, 0), (1, 0)], 0), B=([(0, 1), (1, 1)], 0), Z=([(0, 0)], 0)),
            "unknown job",
        ),
    ],
)
def test_infeasible_schedules_are_rejected(schedule, message):
    with pytest.raises(InfeasibleScheduleError, match=message):
        evaluate(two_jobs(), schedule)


def test_horizon_overrun_is_reported_not_truncated():
    with pytest.raises(InfeasibleScheduleError, match="finishes at slot 5 > horizon 4"):
        evaluate(two_jobs(horizon=4), CROSSED)


def test_job_that_never_progresses_is_an_error():
    slow = RarJob("S", 1, 10, 0.0, 1, 0.0, 2.0)  # tau = 2.002 slots > 1
    inst = RarInstance((1,), NET, (slow,), 50)
    with pytest.raises(InfeasibleScheduleError, match="never progresses"):
        evaluate(inst, sched(S=([(0, 0)], 0)))


def test_instance_json_round_trip(tmp_path):
    inst = generate("small", 3)
    path = tmp_path / "i.json"
    inst.save(path)
    assert RarInstance.load(path) == inst
    assert json.loads(path.read_text())["family"] == "rar"


def test_spec_example_file_parses():
    data = {
        "family": "rar",
        "schema_version": 1,
        "servers": [4, 4],
        "network": {"b_e": 1.0, "b_i": 20.0, "C": 50.0, "alpha": 0.1, "xi1": 1.0, "xi2": 0.002},
        "jobs": [
            {
                "id": "j0",
                "gpus": 2,
                "iterations": 1000,
                "grad_size": 0.05,
                "batch": 32,
                "fwd_per_sample": 0.0002,
                "bwd": 0.004,
            }
        ],
        "horizon": 60,
        "progress": "floor",
    }
    inst = RarInstance.from_dict(data)
    assert inst.servers == (4, 4) and inst.jobs[0].gpus == 2


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d.update(extra=1), "unknown field"),
        (lambda d: d["jobs"][0].update(colour="red"), "unknown field"),
        (lambda d: d["network"].update(beta=1), "unknown field"),
        (lambda d: d["jobs"][0].update(gpus=-2), "gpus"),
        (lambda d: d["jobs"][0].update(gpus=99), "cluster has"),
        (lambda d: d["jobs"][0].update(grad_size="big"), "grad_size"),
        (lambda d: d["network"].update(xi1=1.5), "xi1"),
        (lambda d: d.update(servers=[]), "servers"),
        (lambda d: d.update(progress="ceil"), "progress"),
        (lambda d: d.update(family="muri"), "family"),
        (lambda d: d.pop("horizon"), "missing"),
        (lambda d: d["jobs"].append(dict(d["jobs"][0])), "duplicate job id"),
    ],
)
def test_bad_instances_are_rejected_naming_the_field(mutate, message):
    data = generate("small", 1).to_dict()
    mutate(data)
    with pytest.raises(InvalidInstanceError, match=message):
        RarInstance.from_dict(data)


def test_schedule_json_round_trip():
    ev = evaluate(two_jobs(), CROSSED)
    rendered = schedule_to_json(CROSSED, ev)
    assert rendered["B"]["finish"] == 5
    assert schedule_from_json(json.loads(json.dumps(rendered))) == CROSSED


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), alpha=st.floats(0.0, 1.0))
def test_evaluator_is_monotone_in_progress(seed, alpha):
    """More contention degradation (larger alpha) never finishes a job earlier."""
    inst = generate("small", seed)
    rng_gpus = inst.gpu_ids
    # a simple valid schedule: first G_j GPUs in a rotating order, staggered starts
    assignments = {}
    for i, j in enumerate(inst.jobs):
        offset = (i * 3) % len(rng_gpus)
        gpus = [rng_gpus[(offset + k) % len(rng_gpus)] for k in range(j.gpus)]
        assignments[j.id] = RarAssignment(tuple(gpus), i % 3)
    schedule = RarSchedule(assignments)
    roomy = dataclasses.replace(inst, horizon=10_000)
    worse = dataclasses.replace(
        roomy, network=dataclasses.replace(inst.network, alpha=inst.network.alpha + alpha)
    )
    fast, slow = evaluate(roomy, schedule), evaluate(worse, schedule)
    assert all(fast.finish[j] <= slow.finish[j] for j in fast.finish)
    assert fast.makespan <= slow.makespan
