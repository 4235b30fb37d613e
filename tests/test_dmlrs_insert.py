"""Family ``dmlrs``: the insertion rules of ``improve`` (ours;
:mod:`ddlsched.heuristics.dmlrs_insert`).

On a constructed instance the lean plan takes in a job that the earliest-completion
insertion leaves out; the lean plan finishes by its completion and holds less; same seed
same schedule; a bad rule is a one-line error (exit 2 from the CLI).
"""

from __future__ import annotations

import numpy as np
import pytest
from dmlrs_improve_helpers import run_improve, small

from ddlsched.cli import main
from ddlsched.deadline import Deadline
from ddlsched.errors import DdlschedError
from ddlsched.heuristics.dmlrs_improve import ImproveSettings, _Search
from ddlsched.heuristics.dmlrs_insert import Inserter
from ddlsched.problems.dmlrs import DmlrsInstance, evaluate
from ddlsched.problems.dmlrs_schedule import schedule_from_counts
from ddlsched.workloads.dmlrs import generate

BIG, SMALL = 0, 1


def _job(workers: int, worker_slots: int, grad_bytes: float, theta1: float) -> dict:
    """A one-GPU-per-worker job from slot 1 needing ``worker_slots`` worker-slots at
    ``b_int``, at most ``workers`` workers per slot (``F``)."""
    return {
        "arrival_slot": 1, "epochs": 1, "samples": 3600 * worker_slots,
        "grad_bytes": grad_bytes, "tau_s": 1.0, "gamma": 1, "global_batch": workers,
        "worker": [1.0], "ps": [0.0],
        "utility": {"theta1": theta1, "theta2": 0.01, "theta3": 0.0},
    }  # fmt: skip


def spread() -> DmlrsInstance:
    """Two machines of 2 GPUs, T = 2. Job 0 (utility about 50) needs 4 worker-slots on one
    machine, at most 4 workers; a worker of it across machines (``b_ext``) processes 0.6
    of the samples, so 4 external workers (8,640 samples) beat 2 on one machine (7,200):
    the earliest plan takes the whole cluster in slot 1 and 2 GPUs in slot 2, and job 1
    (about 30; 2 workers for 2 slots, its gradients too small for the bandwidth to
    matter) cannot finish. The lean plan keeps job 0 on one machine in both slots (it
    still finishes in slot 2), which leaves job 1 the other machine."""
    data = {
        "family": "dmlrs", "schema_version": 1, "slots": 2, "slot_s": 3600.0,
        "b_int": 1e12, "b_ext": 1.5, "resources": ["gpu"],
        "machines": {"count": 2, "capacity": [2.0]},
        "jobs": [_job(4, 4, 2.0, 100.0), _job(2, 4, 1e-9, 60.0)],
    }  # fmt: skip
    return DmlrsInstance.from_dict(data)


def _first_pass(instance: DmlrsInstance, rule: str) -> _Search:
    search = _Search(instance, schedule_from_counts([], []), 0, rule)
    assert not search.first_pass(Deadline.unlimited())
    return search


def test_the_lean_plan_takes_in_a_job_the_earliest_plan_leaves_out():
    instance = spread()
    earliest = _first_pass(instance, "samples")
    assert sorted(earliest.plans) == [BIG]
    assert {h for t, h, _, _ in earliest.plans[BIG] if t == 1} == {0, 1}  # spread in slot 1
    for rule in ("lean", "both"):
        lean = _first_pass(instance, rule)
        assert sorted(lean.plans) == [BIG, SMALL], rule
        assert len({h for _, h, _, _ in lean.plans[BIG]}) == 1  # one machine throughout
        done = evaluate(instance, lean.schedule())
        assert set(done.completion_slot) == {BIG, SMALL}
        assert done.total_utility > evaluate(instance, earliest.schedule()).total_utility + 25.0


@pytest.mark.parametrize("rule", ["samples", "lean", "both"])
def test_the_first_pass_stops_between_jobs_at_the_deadline(rule):
    instance = spread()
    ticks = iter(range(100))
    deadline = Deadline(1.5, clock=lambda: float(next(ticks)))  # passes at the second check
    search = _Search(instance, schedule_from_counts([], []), 0, rule)
    assert search.first_pass(deadline)
    assert len(search.plans) == 1  # one job inserted before the clock ran out
    done = evaluate(instance, search.schedule())
    assert done.total_utility == pytest.approx(search.utility)


def test_the_lean_plan_finishes_by_its_completion_and_holds_less():
    instance = generate("paper", 1, jobs=50, machines=20, slots=20)
    inserter = Inserter(instance)
    empty = np.zeros((instance.slots + 1, instance.num_machines, len(instance.resources)))
    checked = 0
    for i in range(len(instance.jobs)):
        early = inserter.plan(i, empty)
        if early is None or len({t for t, *_ in early}) == len(early):
            continue  # cannot finish, or already one machine a slot
        finish = max(t for t, *_ in early)
        for last in (finish, instance.slots):
            lean = inserter.lean_plan(i, empty, last, inserter.profile(i, empty))
            assert lean is not None
            assert max(t for t, *_ in lean) <= last
            assert inserter.held(i, lean) <= inserter.held(i, early) + 1e-9
        checked += 1
    assert checked >= 3  # the instance's big jobs


def test_price_zero_keeps_the_earliest_completion():
    """With no price the job's own utility decides: never a later completion."""
    instance = generate("paper", 1, jobs=50, machines=20, slots=20)
    inserter = Inserter(instance)
    empty = np.zeros((instance.slots + 1, instance.num_machines, len(instance.resources)))
    for i in range(len(instance.jobs)):
        early = inserter.plan(i, empty)
        chosen = inserter.choose(i, empty, "lean", price=0.0)
        if early is not None:
            assert max(t for t, *_ in chosen) == max(t for t, *_ in early)


@pytest.mark.parametrize("rule", ["lean", "both"])
def test_same_seed_same_schedule(rule):
    instance = small(2)
    first = run_improve(instance, 5, max_windows=150, insert_plan=rule)
    second = run_improve(instance, 5, max_windows=150, insert_plan=rule)
    assert first.schedule == second.schedule
    assert first.info == second.info


def test_bad_rule_is_one_line_error():
    with pytest.raises(DdlschedError) as err:
        run_improve(generate("tiny", 0), insert_plan="greedy")
    assert "\n" not in str(err.value)
    with pytest.raises(DdlschedError) as err:
        run_improve(generate("tiny", 0), lean_price=-1.0)
    assert "\n" not in str(err.value)
    with pytest.raises(ValueError, match="insert_plan"):
        ImproveSettings(insert_plan="greedy")


def test_cli_bad_rule_exits_2(tmp_path, capsys):
    path = tmp_path / "tiny.json"
    assert main(["instance", "generate", "dmlrs", "--preset", "tiny", "-o", str(path)]) == 0
    args = ["solve", "dmlrs", str(path), "--method", "improve", "--param", 'insert_plan="x"']
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "ddlsched: error:" in err and "insert_plan" in err
    assert len(err.strip().splitlines()) == 1
