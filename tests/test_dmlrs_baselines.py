"""Family dmlrs: the baselines FIFO, DRF and Dorm (spec "Baselines"), on hand instances."""

from __future__ import annotations

from collections import defaultdict

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ddlsched.deadline import Deadline
from ddlsched.errors import ModelTooLargeError, SolverError, TimeLimitReached
from ddlsched.heuristics.dmlrs_baselines import (
    drf_slot,
    fifo_slot,
    job_cap,
    run_drf,
    run_fifo,
    simulate_slots,
    slot_demand,
)
from ddlsched.models import dmlrs_dorm
from ddlsched.models.dmlrs_dorm import dorm_slot, run_dorm, slot_objective
from ddlsched.problems.dmlrs import DmlrsInstance, evaluate, ps_needed
from ddlsched.solvers.backends import ModelSolve
from ddlsched.solvers.result import Status
from ddlsched.workloads.dmlrs import generate

BIG = 10**6  # samples: a job that never finishes asks for F_i workers in every slot


def make(
    capacity,
    jobs,
    *,
    slots=3,
    resources=("cpu",),
    slot_s=100.0,
    b_int=1.0,
    b_ext=1.0,
) -> DmlrsInstance:
    """A hand instance; each job dict overrides the defaults below."""
    default = {
        "arrival_slot": 1,
        "epochs": 1,
        "samples": BIG,
        "grad_bytes": 1e-12,  # ~0: pi = tau (0 is refused: a size)
        "tau_s": 1.0,
        "gamma": 1,
        "global_batch": 1,
        "worker": [1] * len(resources),
        "ps": [0] * len(resources),
        "utility": {"theta1": 10.0, "theta2": 1.0, "theta3": 1.0},
    }
    return DmlrsInstance.from_dict(
        {
            "family": "dmlrs",
            "schema_version": 1,
            "slots": slots,
            "slot_s": slot_s,
            "b_int": b_int,
            "b_ext": b_ext,
            "resources": list(resources),
            "machines": [{"capacity": list(c)} for c in capacity],
            "jobs": [{**default, **job} for job in jobs],
        }
    )


def first_slot(instance: DmlrsInstance, slot: int = 1):
    return slot_demand(instance, slot, [0.0] * len(instance.jobs))


# --------------------------------------------------------------------------- the slot loop


def test_slot_demand_orders_by_arrival_then_index_and_caps():
    inst = make(
        [(10,)],
        [
            {"arrival_slot": 2, "global_batch": 3},
            {"arrival_slot": 1, "global_batch": 2},
            {"arrival_slot": 2, "global_batch": 5, "samples": 150},  # D(150, b_ext) = 2 < F
            {"arrival_slot": 3},
        ],
    )
    demand = first_slot(inst, 2)
    assert demand.jobs == (1, 0, 2)
    assert demand.caps == (2, 3, 2)
    assert job_cap(inst, 2, 150.0) == 2
    assert job_cap(inst, 2, 100.0) == 1


def test_fact1_bandwidth_and_completion():
    # pi(b) = tau + 2 g gamma / (F b) = 0.5 + 2 * 0.5 / (2 b): 1.0 s at b_ext = 1, 0.625 s at
    # b_int = 4; slot of 100 s: a worker processes 100 samples at b_ext, 160 at b_int. V = 300.
    job = {"samples": 300, "grad_bytes": 0.5, "tau_s": 0.5, "global_batch": 2}
    # one machine with room for both bundles: internal, 2 * 160 >= 300, done in slot 1
    roomy = make([(4,)], [job], b_int=4.0)
    sched = run_fifo(roomy)
    assert sched.accepted == (0,) and sched.unfinished == ()
    assert evaluate(roomy, sched).completion_slot == {0: 1}
    # two machines with room for one bundle each: slot 1 external (200 samples), slot 2 asks
    # for D(100, b_ext) = 1 worker, on one machine: internal, 160 >= 100, done in slot 2
    split = make([(1,), (1,)], [job], b_int=4.0)
    sched = run_fifo(split)
    assert [(a.slot, a.machine, a.workers) for a in sched.alloc] == [
        (1, 0, 1),
        (1, 1, 1),
        (2, 0, 1),
    ]
    ev = evaluate(split, sched)
    assert ev.completion_slot == {0: 2}
    assert ev.samples[0] == pytest.approx(200 + 160)


def test_unfinished_and_never_served_jobs():
    inst = make(
        [(2,)],
        [
            {"global_batch": 1},  # never finishes: unfinished
            {"worker": [3], "arrival_slot": 3},  # fits no machine: unfinished, never served
            {"samples": 50, "arrival_slot": 2},  # served in slot 2, done
        ],
    )
    sched = run_drf(inst)
    assert sched.accepted == (2,)
    assert sched.unfinished == (0, 1)  # no admission control: nobody is rejected
    ev = evaluate(inst, sched)
    assert ev.rejected == 0 and ev.unfinished == 2 and ev.completion_slot == {2: 2}
    # under DRF too, a job whose bundle fits nowhere blocks the slot once its share is smallest
    blocked = make([(2,)], [{"worker": [3]}, {"samples": 50}])
    assert run_drf(blocked).alloc == () and run_fifo(blocked).alloc == ()


def test_simulate_slots_refuses_a_bad_allocation():
    inst = make([(4,)], [{"global_batch": 1}])
    with pytest.raises(ValueError, match="above its cap"):
        simulate_slots(inst, lambda _inst, _demand: [(0, 0, 2, 2)])
    with pytest.raises(ValueError, match="PSs"):
        simulate_slots(inst, lambda _inst, _demand: [(0, 0, 1, 0)])


def test_deadline_is_checked():
    inst = make([(4,)], [{}])
    deadline = Deadline(1e-9)
    with pytest.raises(TimeLimitReached):
        run_fifo(inst, deadline)


# --------------------------------------------------------------------------- FIFO and DRF


def test_fifo_order_and_stop_at_first_misfit():
    # one machine of 5 CPUs; order 1 (arrived in slot 1), 0, 2 (slot 2, by index). Job 1 takes
    # its worker (2 CPUs), job 0 one bundle (4 used); job 0's second bundle fits nowhere: the
    # slot ends and job 2 gets nothing although its 1 CPU is free (DL2's rule).
    inst = make(
        [(5,)],
        [
            {"arrival_slot": 2, "global_batch": 2, "worker": [2]},
            {"arrival_slot": 1, "global_batch": 1, "worker": [2]},
            {"arrival_slot": 2, "global_batch": 1, "worker": [1]},
        ],
    )
    assert fifo_slot(inst, first_slot(inst, 2)) == [(0, 0, 1, 1), (1, 0, 1, 1)]
    # without the misfit every job is served, in arrival order
    roomy = make(
        [(7,)],
        [
            {"arrival_slot": 2, "global_batch": 2, "worker": [2]},
            {"arrival_slot": 1, "global_batch": 1, "worker": [2]},
            {"arrival_slot": 2, "global_batch": 1, "worker": [1]},
        ],
    )
    assert fifo_slot(roomy, first_slot(roomy, 2)) == [(0, 0, 2, 2), (1, 0, 1, 1), (2, 0, 1, 1)]


def test_drf_smallest_dominant_share_ties_and_stop():
    # 5 CPUs; A = job 0 (workers of 2 CPUs, cap 2), B = job 1 (workers of 1, cap 3).
    # A (tie at 0, lower index) -> 2/5; B -> 1/5; B -> 2/5; tie at 2/5: A, which needs 2 CPUs
    # with 1 left: fits nowhere, the slot ends (B's third worker would have fitted).
    inst = make([(5,)], [{"global_batch": 2, "worker": [2]}, {"global_batch": 3, "worker": [1]}])
    assert drf_slot(inst, first_slot(inst)) == [(0, 0, 1, 1), (1, 0, 2, 2)]
    # FIFO on the same slot: A takes both workers, B one
    assert fifo_slot(inst, first_slot(inst)) == [(0, 0, 2, 2), (1, 0, 1, 1)]


def test_drf_dominant_share_over_resources_and_arrival_tie():
    # GPU 2, CPU 10 in total. A = job 0 arrives in slot 2 (1 GPU per worker), B = job 1 in
    # slot 1 (1 CPU per worker). Tie at 0: B (earlier arrival). Then A (0 < 1/10), then B up
    # to 5 workers (5/10 = A's 1/2), tie: B (arrival) -> 6/10, then A (1/2) -> 1, then B until
    # its cap 8.
    inst = make(
        [(2, 10)],
        [
            {"arrival_slot": 2, "global_batch": 4, "worker": [1, 0], "ps": [0, 0]},
            {"arrival_slot": 1, "global_batch": 8, "worker": [0, 1], "ps": [0, 0]},
        ],
        resources=("gpu", "cpu"),
    )
    entries = drf_slot(inst, first_slot(inst, 2))
    assert entries == [(0, 0, 2, 2), (1, 0, 8, 8)]


def test_least_loaded_machine_and_ps_bundles():
    # machines of 4 and 8 CPUs, workers of 1 CPU, gamma = 4 (one PS, of no CPU, with the
    # first worker): loads 0/0 -> h0 (tie), .25/0 -> h1, .25/.125 -> h1, .25/.25 -> h0.
    inst = make([(4,), (8,)], [{"global_batch": 4, "gamma": 4}])
    assert fifo_slot(inst, first_slot(inst)) == [(0, 0, 2, 1), (0, 1, 2, 0)]
    # a machine where the bundle does not fit is skipped even when least loaded
    inst = make(
        [(1, 100), (4, 100)],
        [{"global_batch": 2, "worker": [2, 1], "ps": [0, 1]}],
        resources=("gpu", "cpu"),
    )
    assert fifo_slot(inst, first_slot(inst)) == [(0, 1, 2, 2)]


# --------------------------------------------------------------------------- Dorm


def test_dorm_serves_the_most_jobs_before_utilisation():
    # 4 CPUs: job 0 alone fills the machine (utilisation 1, 1 job); jobs 1 and 2 together
    # serve 2 jobs. Then utilisation: job 1 takes 3 workers, filling the machine.
    inst = make(
        [(4,)],
        [
            {"global_batch": 1, "worker": [4]},
            {"global_batch": 3, "worker": [1]},
            {"global_batch": 1, "worker": [1]},
        ],
    )
    demand = first_slot(inst)
    for backend in ("highs", "scip"):
        entries = dorm_slot(inst, demand, backend=backend, util_gap=1e-6)
        assert sorted(entries) == [(1, 0, 3, 3), (2, 0, 1, 1)]
    assert slot_objective(inst, [(1, 0, 3, 3), (2, 0, 1, 1)]) == pytest.approx(2 * 2 + 1.0)
    # DRF and FIFO both serve job 0 first here
    assert fifo_slot(inst, demand) == [(0, 0, 1, 1)]


@pytest.mark.parametrize("seed", range(6))
def test_dorm_highs_and_scip_serve_as_many_jobs(seed):
    inst = generate("tiny", seed)
    demand = first_slot(inst, inst.slots)  # every job active, nothing processed
    values = {}
    for backend in ("highs", "scip"):
        entries = dorm_slot(inst, demand, backend=backend, util_gap=1e-6)
        values[backend] = (
            len({i for i, _, w, _ in entries if w > 0}),
            slot_objective(inst, entries),
        )
    assert values["highs"][0] == values["scip"][0]
    assert values["highs"][1] == pytest.approx(values["scip"][1], abs=1e-5)


def _ps_rule_exact(instance, schedule):
    workers, servers = defaultdict(int), defaultdict(int)
    for a in schedule.alloc:
        workers[a.job, a.slot] += a.workers
        servers[a.job, a.slot] += a.ps
    return all(servers[k] == ps_needed(instance.jobs[k[0]], w) for k, w in workers.items())


def _run_all(instance):
    yield "fifo", run_fifo(instance)
    yield "drf", run_drf(instance)
    yield "dorm", run_dorm(instance, slot_time_limit_s=2.0)[0]


@pytest.mark.parametrize("seed", range(20))
def test_every_baseline_passes_the_evaluator_on_tiny(seed):
    inst = generate("tiny", seed)
    for name, sched in _run_all(inst):
        ev = evaluate(inst, sched)
        assert ev.completed + ev.unfinished + ev.rejected == len(inst.jobs), name
        assert _ps_rule_exact(inst, sched), name


def test_every_baseline_passes_the_evaluator_on_a_small_paper_instance():
    inst = generate("paper", 0, jobs=10, machines=5, slots=6)
    for name, sched in _run_all(inst):
        ev = evaluate(inst, sched)
        assert ev.completed == len(sched.accepted), name
        assert _ps_rule_exact(inst, sched), name


def test_same_input_same_output():
    inst = generate("paper", 1, jobs=10, machines=5, slots=6)
    assert run_fifo(inst) == run_fifo(inst)
    assert run_drf(inst) == run_drf(inst)
    tiny = generate("tiny", 4)
    first, info = run_dorm(tiny)
    assert info["slots_at_limit"] == 0  # proven solves: reproducible
    assert run_dorm(tiny)[0] == first


def test_dorm_info_counts_slots():
    inst = generate("tiny", 2)
    _, info = run_dorm(inst)
    assert info["slots_solved"] >= 1
    assert info["slots_at_limit"] == info["slots_greedy_start"] == 0
    assert info["slots_served_unproven"] == 0
    assert info["solver_time_s"] >= 0


def _fake_solve(status):
    def solve(model, backend="highs", limits=None, deadline=None):
        return ModelSolve(
            status=status,
            incumbent=None,
            bound=None,
            runtime_s=0.0,
            backend=backend,
            backend_version="",
            num_variables=0,
            num_integer_variables=0,
            num_constraints=0,
            message="mocked",
        )

    return solve


def test_dorm_solver_failure_is_a_solver_error(monkeypatch):
    inst = make([(4,)], [{}])

    def boom(*args, **kwargs):
        raise RuntimeError("highspy exploded\nsecond line")

    monkeypatch.setattr(dmlrs_dorm, "solve_model", boom)
    with pytest.raises(SolverError, match="dorm slot 1: highs failed: highspy exploded second"):
        run_dorm(inst)
    for status in (Status.ERROR, Status.INFEASIBLE):
        monkeypatch.setattr(dmlrs_dorm, "solve_model", _fake_solve(status))
        with pytest.raises(SolverError, match="dorm slot 1"):
            run_dorm(inst)
    monkeypatch.setattr(dmlrs_dorm, "solve_model", _fake_solve(Status.TIME_LIMIT_NO_SOLUTION))
    with pytest.raises(SolverError, match="without a solution"):
        run_dorm(inst, greedy_start=False)


def test_dorm_greedy_start_replaces_a_missing_incumbent(monkeypatch):
    inst = make([(4,)], [{"global_batch": 2, "samples": 200}])
    monkeypatch.setattr(dmlrs_dorm, "solve_model", _fake_solve(Status.TIME_LIMIT_NO_SOLUTION))
    sched, info = run_dorm(inst)
    assert sched.accepted == (0,)
    assert info["slots_at_limit"] == info["slots_greedy_start"] == 1
    assert info["slots_served_unproven"] == 1
    evaluate(inst, sched)


def test_dorm_refuses_a_model_too_large(monkeypatch):
    import ddlsched.solvers.limits as limits

    monkeypatch.setattr(limits, "MAX_MODEL_VARIABLES", 2)
    inst = make([(4,), (4,)], [{}])
    with pytest.raises(ModelTooLargeError, match="dorm slot 1"):
        run_dorm(inst)


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    jobs=st.integers(1, 30),
    machines=st.integers(1, 8),
    slots=st.integers(1, 10),
)
def test_fifo_and_drf_schedules_are_feasible(seed, jobs, machines, slots):
    inst = generate("paper", seed, jobs=jobs, machines=machines, slots=slots)
    for sched in (run_fifo(inst), run_drf(inst)):
        ev = evaluate(inst, sched)
        assert ev.completed + ev.unfinished + ev.rejected == jobs
        assert _ps_rule_exact(inst, sched)


def test_dorm_gives_each_slot_a_node_budget(monkeypatch):
    seen = []
    real = dmlrs_dorm.solve_model

    def spy(model, backend="highs", limits=None, deadline=None):
        seen.append(dict(limits.highs_options))
        return real(model, backend, limits, deadline)

    monkeypatch.setattr(dmlrs_dorm, "solve_model", spy)
    inst = generate("tiny", 2)
    run_dorm(inst)
    assert seen and all(o == {"mip_max_nodes": 200} for o in seen)
    seen.clear()
    run_dorm(inst, slot_node_limit=0)  # no budget: the time limit alone
    assert seen and all(o == {} for o in seen)
    with pytest.raises(ValueError, match="slot_node_limit"):
        run_dorm(inst, slot_node_limit=-1)


def test_dorm_stopped_by_its_node_budget_is_the_same_everywhere():
    # 12 jobs on 3 machines: the first slot does not close at the root (without a budget it
    # runs to its time limit); one node of budget stops it by work, not by time
    inst = generate("paper", 3, jobs=12, machines=3, slots=2)
    first, info = run_dorm(inst, slot_node_limit=1)
    assert info["slots_at_node_limit"] >= 1
    assert info["slots_at_time_limit"] == 0 and info["load_dependent"] is False
    assert run_dorm(inst, slot_node_limit=1)[0] == first


@pytest.mark.parametrize("time_cut", [False, True])
def test_dorm_tells_a_node_budget_from_a_time_limit(monkeypatch, time_cut):
    from ddlsched import api

    inst = make([(4,)], [{"global_batch": 2, "samples": 200}])

    def solve(model, backend="highs", limits=None, deadline=None):
        out = _fake_solve(Status.TIME_LIMIT_NO_SOLUTION)(model, backend, limits, deadline)
        out.time_limit_hit = time_cut
        return out

    monkeypatch.setattr(dmlrs_dorm, "solve_model", solve)
    result = api.run_method("dmlrs", "dorm", inst)
    info = result.info
    assert info["slots_at_time_limit"] == int(time_cut)
    assert info["slots_at_node_limit"] == int(not time_cut)
    assert info["load_dependent"] is time_cut
    assert result.time_limit_hit is time_cut
    assert ("stopped" in info) is time_cut
