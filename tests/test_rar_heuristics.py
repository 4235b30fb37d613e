"""Tests of the ``rar`` heuristics: SJF-BCO (Alg. 1-3), FF, LS, RAND, Theorem 5.

Hand-made states pin the GPU rules; brute force pins the bisection and the
``kappa`` de-duplication; the evaluator (an independent checker) pins the
schedules. No comparison with exact optima here (the lead's tests do that).
"""

from __future__ import annotations

import dataclasses
import math
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ddlsched.errors import DdlschedError, InfeasibleScheduleError
from ddlsched.heuristics.rar_baselines import ff, ls, rand
from ddlsched.heuristics.rar_planning import (
    FirstFit,
    LeastBusy,
    PlanningData,
    PlanState,
    bisect_theta,
    place_job,
    run_pass,
    sjf_order,
)
from ddlsched.heuristics.sjf_bco import (
    FaFfp,
    Lbsgf,
    kappa_classes,
    kappa_sweep,
    sjf_bco,
    sjf_bco_theta,
    theorem5_bound,
)
from ddlsched.problems.rar import RarInstance, instance_from_parts
from ddlsched.problems.rar_schedule import evaluate
from ddlsched.problems.rar_timing import execution_slots, iteration_time
from ddlsched.registry import RunOptions, get_method, run_method
from ddlsched.solvers.result import Status
from ddlsched.workloads.rar import paper, small

METHODS = ("sjf_bco", "ff", "ls", "rand")
NETWORK = {"b_e": 1.0, "b_i": 20.0, "C": 50.0, "alpha": 0.1, "xi1": 1.0, "xi2": 0.002}


def job(job_id: str, gpus: int, iterations: int = 100, **kw) -> dict:
    base = {
        "id": job_id,
        "gpus": gpus,
        "iterations": iterations,
        "grad_size": 0.01,
        "batch": 16,
        "fwd_per_sample": 0.001,
        "bwd": 0.02,
    }
    return {**base, **kw}


def make(servers, jobs, horizon=200) -> RarInstance:
    return instance_from_parts(servers, NETWORK, jobs, horizon)


def plan_of(method: str, instance: RarInstance, seed: int = 0):
    if method == "sjf_bco":
        return sjf_bco(instance)
    if method == "ff":
        return ff(instance)
    if method == "ls":
        return ls(instance)
    return rand(instance, seed)


def gpu_orders(schedule, estimated_finish):
    """Per GPU: job ids in planned order (by estimated finish)."""
    per: dict[tuple[int, int], list[str]] = {}
    for job_id in sorted(estimated_finish, key=estimated_finish.__getitem__):
        for gpu in schedule[job_id].gpus:
            per.setdefault(gpu, []).append(job_id)
    return per


def check_valid(instance: RarInstance, plan) -> None:
    """Independent checks of a heuristic's plan: gang, ids, Lemma 2 invariant, execution."""
    schedule = plan.schedule
    assert set(schedule.assignments) == {j.id for j in instance.jobs}
    for j in instance.jobs:
        gpus = schedule[j.id].gpus
        assert len(gpus) == j.gpus == len(set(gpus))
        for s, g in gpus:
            assert 0 <= s < instance.num_servers and 0 <= g < instance.servers[s]
        assert schedule[j.id].start >= 0
    assert plan.max_accumulated <= plan.theta  # Lemma 2: no GPU's U exceeds theta
    relaxed = dataclasses.replace(instance, horizon=instance.horizon * 1000)
    evaluation = evaluate(relaxed, schedule)  # raises on any infeasibility but the horizon
    # Planned order on every GPU is the executed order (planned starts strictly increase).
    for order in gpu_orders(schedule, plan.estimated_finish).values():
        starts = [schedule[j].start for j in order]
        assert starts == sorted(set(starts))
        executed = [evaluation.start[j] for j in order]
        assert executed == sorted(executed)


# --------------------------------------------------------------------------- SJF order


def test_sjf_order_by_size_then_iterations_then_position():
    instance = make(
        [4, 4],
        [job("a", 4, 50), job("b", 1, 90), job("c", 2, 10), job("d", 1, 30), job("e", 1, 90)],
    )
    assert [instance.jobs[i].id for i in sjf_order(instance)] == ["d", "b", "e", "c", "a"]
    plan = sjf_bco(instance)
    # The simulated clock never moves back: planned starts follow the SJF order.
    starts = [plan.schedule[i].start for i in ("d", "b", "e", "c", "a")]
    assert starts == sorted(starts)


# --------------------------------------------------------------------------- GPU rules


def busy_state(instance: RarInstance) -> tuple[PlanningData, PlanState]:
    """Two servers of 2 GPUs; GPU (1, 0) runs a job until t = 5 (U = 5); clock 0."""
    data = PlanningData.build(instance)
    state = PlanState.empty(data)
    gpu = data.gpu_number(1, 0)
    state.accumulated[gpu] = 5.0
    state.free_at[gpu] = 5.0
    return data, state


def test_fa_ffp_packs_onto_busy_servers():
    instance = make([2, 2], [job("x", 1, 10)])
    data, state = busy_state(instance)
    placed = place_job(data, state, 0, FaFfp(), theta=100)
    # All idle GPUs have U = 0: the tie goes to the server that hosts running work.
    assert [(int(data.server_of_gpu[g]), int(data.local_gpu[g])) for g in placed.gpus] == [(1, 1)]
    # LS breaks the same tie by lower id.
    data, state = busy_state(instance)
    placed = place_job(data, state, 0, LeastBusy(), theta=100)
    assert placed.gpus.tolist() == [data.gpu_number(0, 0)]


def test_fa_ffp_least_busy_beats_busy_server_preference():
    instance = make([2, 2], [job("x", 1, 10)])
    data, state = busy_state(instance)
    state.accumulated[data.gpu_number(1, 1)] = 1.0  # the busy server's idle GPU is more loaded
    placed = place_job(data, state, 0, FaFfp(), theta=100)
    assert placed.gpus.tolist() == [data.gpu_number(0, 0)]


def lbsgf_state(instance: RarInstance) -> tuple[PlanningData, PlanState]:
    """Servers of 2, 4, 2 GPUs with mean U 5, 1, 1; GPU (0, 0) has U = 0."""
    data = PlanningData.build(instance)
    state = PlanState.empty(data)
    state.accumulated[:] = [0.0, 10.0, 1.0, 1.0, 1.0, 1.0, 2.0, 0.0]
    return data, state


@pytest.mark.parametrize(
    ("gpus", "lam", "servers", "chosen"),
    [
        (2, 1.0, [1], [(1, 0), (1, 1)]),
        (2, 2.0, [1], [(1, 0), (1, 1)]),  # lambda G = 4 still fits server 1
        (2, 3.0, [1, 2], [(2, 1), (1, 0)]),  # lambda G = 6 needs servers 1 and 2
        (5, 1.0, [1, 2], [(2, 1), (1, 0), (1, 1), (1, 2), (1, 3)]),
        (8, 1.0, [1, 2, 0], None),  # everything
    ],
)
def test_lbsgf_takes_fewest_least_busy_servers(gpus, lam, servers, chosen):
    instance = make([2, 4, 2], [job("x", gpus, 10)])
    data, state = lbsgf_state(instance)
    rule = Lbsgf((lam,))
    assert rule.selected_servers(data, state, 0).tolist() == servers
    placed = place_job(data, state, 0, rule, theta=1e6)
    got = [(int(data.server_of_gpu[g]), int(data.local_gpu[g])) for g in placed.gpus]
    if chosen is not None:
        assert got == chosen  # least U among the selected servers; (0, 0) with U = 0 unused
    assert {s for s, _ in got} <= set(servers)


def test_lbsgf_waits_for_its_selected_servers():
    instance = make([2, 2], [job("x", 2, 10)])
    data = PlanningData.build(instance)
    state = PlanState.empty(data)
    state.accumulated[:] = [3.0, 3.0, 1.0, 1.0]
    state.free_at[:] = [0.0, 0.0, 4.0, 4.0]  # the least busy server is running until t = 4
    placed = place_job(data, state, 0, Lbsgf((1.0,)), theta=1e6)
    assert placed.clock == 4.0
    assert placed.gpus.tolist() == [2, 3]
    # LS does not wait: it takes the idle server.
    state = PlanState.empty(data)
    state.accumulated[:] = [3.0, 3.0, 1.0, 1.0]
    state.free_at[:] = [0.0, 0.0, 4.0, 4.0]
    placed = place_job(data, state, 0, LeastBusy(), theta=1e6)
    assert placed.clock == 0.0 and placed.gpus.tolist() == [0, 1]


def test_place_job_fails_when_nothing_runs_and_theta_is_too_small():
    instance = make([2], [job("x", 2, 100)])
    data = PlanningData.build(instance)
    rho = data.rho_hat[0][1]
    assert place_job(data, PlanState.empty(data), 0, FirstFit(), theta=rho * 0.99) is None
    placed = place_job(data, PlanState.empty(data), 0, FirstFit(), theta=math.ceil(rho))
    assert placed is not None and placed.rho_hat == rho


def test_server_count_fixed_point_uses_actual_placement():
    # A 2-GPU job on two servers of 1 GPU: min_servers = 2, estimate on 2 servers.
    instance = make([1, 1, 2], [job("x", 2, 100)])
    data = PlanningData.build(instance)
    state = PlanState.empty(data)
    placed = place_job(data, state, 0, FirstFit(), theta=1e6)
    assert placed.gpus.tolist() == [0, 1]
    assert placed.rho_hat == pytest.approx(
        100 * iteration_time(instance.jobs[0], instance.network, 2, 1)
    )
    # LS from a state where server 2 is least busy: one server, the b_i estimate.
    state = PlanState.empty(data)
    state.accumulated[:2] = 1.0
    placed = place_job(data, state, 0, LeastBusy(), theta=1e6)
    assert placed.gpus.tolist() == [2, 3]
    assert placed.rho_hat == data.rho_hat[0][1]
    # U grows by rho_hat of the actual placement / u.
    assert state.accumulated.tolist() == [1.0, 1.0, placed.rho_hat, placed.rho_hat]


def test_fixed_point_redoes_with_more_servers_and_keeps_theta():
    # GPUs 0, 1 on server 0 are loaded; LS picks idle GPUs across servers 1 and 2.
    instance = make([2, 1, 1], [job("x", 2, 100)])
    data = PlanningData.build(instance)
    rho1, rho2 = data.rho_hat[0][1], data.rho_hat[0][2]
    assert rho2 > rho1
    state = PlanState.empty(data)
    state.accumulated[:2] = 5.0
    # theta admits the two-server estimate on the empty GPUs: placed on servers 1 and 2.
    placed = place_job(data, state, 0, LeastBusy(), theta=rho2)
    assert placed.gpus.tolist() == [2, 3] and placed.rho_hat == rho2
    # theta between the two estimates: the n = 2 filter leaves too few GPUs (server 0
    # is over theta too), nothing runs, the job fails: U never exceeds theta.
    state = PlanState.empty(data)
    state.accumulated[:2] = 5.0
    assert place_job(data, state, 0, LeastBusy(), theta=(rho1 + rho2) / 2) is None


# --------------------------------------------------------------------------- bisection, kappa


def naive_theta(data: PlanningData, theta: int, u: float = 1.0, lam: float = 1.0):
    """Alg. 1 lines 8-24 literally: every kappa = 1..n_g from scratch, discard failures."""
    fa, lb = FaFfp(), Lbsgf(tuple(lam for _ in data.gpus))
    best, best_makespan = None, float(data.instance.horizon)
    for kappa in range(1, max(data.gpus) + 1):
        result = run_pass(
            data, theta, lambda j, k=kappa: fa if data.gpus[j] <= k else lb, u, kappa=kappa
        )
        if result.feasible and result.makespan < best_makespan:
            best, best_makespan = result, result.makespan
    return best


def pass_signature(result):
    if result is None:
        return None
    return (
        result.kappa,
        result.makespan,
        [(p.job, p.gpus.tolist(), p.clock, p.rho_hat) for p in result.state.placements],
    )


def kappa_instances():
    yield make(
        [4, 2, 3],
        [
            job("a", 1, 50),
            job("b", 2, 80),
            job("c", 4, 40),
            job("d", 2, 60),
            job("e", 3, 30),
            job("f", 1, 90),
            job("g", 6, 20),
        ],
        horizon=60,
    )
    for seed in (1, 4, 9, 27):
        yield small(seed)


@pytest.mark.parametrize("instance", list(kappa_instances()))
def test_kappa_deduplication_equals_naive_loop(instance):
    data = PlanningData.build(instance)
    classes = kappa_classes(data)
    rule = Lbsgf(tuple(1.0 for _ in data.gpus))
    for theta in range(1, instance.horizon + 1):
        fast = sjf_bco_theta(data, theta, classes, rule)
        assert pass_signature(fast) == pass_signature(naive_theta(data, theta))


def test_kappa_classes():
    instance = make([8, 8], [job("a", 2), job("b", 2), job("c", 4), job("d", 8)])
    data = PlanningData.build(instance)
    # kappa = 1: no FA-FFP job; 2-3: two; 4-7: three; 8: all four.
    assert kappa_classes(data) == [(1, 0), (2, 2), (4, 3), (8, 4)]
    assert kappa_classes(data, [6]) == [(6, 3)]
    with pytest.raises(DdlschedError):
        kappa_classes(data, [0])


def scan(instance: RarInstance):
    data = PlanningData.build(instance)
    classes = kappa_classes(data)
    rule = Lbsgf(tuple(1.0 for _ in data.gpus))
    table = {t: sjf_bco_theta(data, t, classes, rule) for t in range(1, instance.horizon + 1)}
    return data, table


def replay_paper_rule(table, horizon):
    """Alg. 1 lines 5-7 and 22-30 replayed on a brute-force table of m_theta."""
    left, right, best_m, best_theta = 1, horizon, float(horizon), None
    while left <= right:
        theta = (left + right) // 2
        result = table[theta]
        if result is not None and result.makespan < best_m:
            best_m, best_theta, right = result.makespan, theta, theta - 1
        else:
            left = theta + 1
    return best_theta, best_m


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 5, 8])
def test_bisection_against_brute_force_scan(seed):
    instance = small(seed)
    data, table = scan(instance)
    feasible = [t for t, r in table.items() if r is not None]
    plan = sjf_bco(instance, data=data)
    theta, makespan = replay_paper_rule(table, instance.horizon)
    assert plan.theta == theta
    if theta is None:
        assert plan.schedule is None
        return
    assert plan.estimated_makespan == makespan
    # The paper rule returns the best estimated makespan over the probed thetas.
    assert makespan == min(m for _, m in plan.probes if m is not None)
    assert plan.theta in feasible
    # The textbook rule finds the smallest feasible theta when feasibility is monotone.
    monotone = feasible == list(range(min(feasible), instance.horizon + 1))
    tight = sjf_bco(instance, data=data, bisection="tightest")
    assert tight.theta in feasible
    if monotone:
        assert tight.theta == min(feasible)
        assert tight.estimated_makespan == table[min(feasible)].makespan
        assert tight.max_accumulated <= min(feasible)


def test_bisection_rules_on_a_synthetic_table():
    class Fake:
        def __init__(self, makespan):
            self.makespan = makespan

    # Feasible from 20 up, constant makespan: the paper rule stops improving at its
    # first probe; the tightest rule walks down to 20.
    def table(theta):
        return Fake(15.0) if theta >= 20 else None

    paper_rule = bisect_theta(table, 60, "paper")
    assert paper_rule.theta == 30
    assert bisect_theta(table, 60, "tightest").theta == 20
    assert [t for t, _ in paper_rule.probes][:2] == [30, 15]
    with pytest.raises(DdlschedError):
        bisect_theta(table, 60, "golden")


def test_fixed_kappa_and_sweep_agree():
    instance = small(4)
    points = kappa_sweep(instance)
    assert [p.kappa for p in points] == list(range(1, max(j.gpus for j in instance.jobs) + 1))
    for point in points:
        plan = sjf_bco(instance, kappa=point.kappa)
        assert point.estimated_makespan == plan.estimated_makespan
        if plan.schedule is not None and point.error is None:
            assert point.makespan == evaluate(instance, plan.schedule).makespan


# --------------------------------------------------------------------------- whole heuristics


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_heuristic_schedule_passes_the_evaluator(method, seed):
    instance = small(seed)
    plan = plan_of(method, instance, seed)
    check_valid(instance, plan)
    # Determinism: same inputs (and seed), same plan.
    again = plan_of(method, instance, seed)
    assert again.schedule == plan.schedule
    assert again.estimated_makespan == plan.estimated_makespan
    assert np.array_equal(again.accumulated, plan.accumulated)


@pytest.mark.parametrize("method", METHODS)
def test_registry_runs_each_method(method):
    instance = small(1)
    result = run_method("rar", method, instance, RunOptions(seed=7))
    assert result.status is Status.FEASIBLE, result.info.get("error")
    assert result.family == "rar" and result.method == method and result.sense == "min"
    assert result.bound is None and result.seed == 7
    evaluation = evaluate(instance, result.schedule)
    assert result.objective == evaluation.makespan
    info = result.info
    assert info["estimated_makespan"] > 0 and info["theta"] >= 1
    assert info["max_accumulated"] <= info["theta"]
    assert info["average_completion"] == evaluation.average_completion
    assert info["utilisation"] == evaluation.utilisation
    assert info["theorem5_bound"] == theorem5_bound(instance).bound
    if method == "sjf_bco":
        assert info["kappa"] >= 1
    result.to_dict()  # JSON-ready


def test_registry_params():
    instance = small(1)
    assert get_method("rar", "sjf_bco").params == {
        "kappa": None,
        "lambda_": 1.0,
        "u": 1.0,
        "p_est": 1,
        "bisection": "paper",
    }
    assert get_method("rar", "rand").params == {}
    result = run_method(
        "rar", "sjf_bco", instance, RunOptions(params={"kappa": 2, "lambda_": 2.0, "u": 1.5})
    )
    assert result.status is Status.FEASIBLE
    assert result.info["kappa"] == 2
    assert result.info["theorem5"]["u"] == 1.5
    with pytest.raises(DdlschedError):
        run_method("rar", "rand", instance, RunOptions(params={"u": 2.0}))
    with pytest.raises(DdlschedError):
        run_method("rar", "ls", instance, RunOptions(params={"kappa": 2}))
    # A bad value becomes an error result, not a crash.
    bad = run_method("rar", "sjf_bco", instance, RunOptions(params={"lambda_": 0.5}))
    assert bad.status is Status.ERROR and "lambda_" in bad.info["error"]


def test_registry_reports_no_solution_without_a_makespan():
    # small(27): a tight horizon; SJF-BCO and LS find no pass with estimate below T, the
    # executed schedules of FF and RAND overrun T. A result (no_solution), not an error.
    instance = small(27)
    for name, failure in (("sjf_bco", "no_schedule"), ("ls", "no_schedule")):
        result = run_method("rar", name, instance, raise_errors=True)
        assert result.status is Status.NO_SOLUTION and result.info["failure"] == failure
        assert result.info["reason"] == (
            f"{name} found no complete schedule with estimated makespan below the horizon T = 22"
        )
        assert result.objective is None and result.schedule is None
        assert "error" not in result.info
    result = run_method("rar", "ff", instance, raise_errors=True)
    assert result.status is Status.NO_SOLUTION and result.info["failure"] == "horizon_overrun"
    assert result.info["reason"].startswith("ff: schedule overruns the horizon: job 'j1'")
    result = run_method("rar", "rand", instance, RunOptions(seed=0))
    assert result.status is Status.NO_SOLUTION and result.info["failure"] == "horizon_overrun"
    assert "> horizon 22" in result.info["reason"] and "error" not in result.info
    assert result.objective is None and result.schedule is not None
    relaxed = dataclasses.replace(instance, horizon=10_000)
    assert result.info["makespan_beyond_horizon"] == evaluate(relaxed, result.schedule).makespan
    assert result.info["makespan_beyond_horizon"] > instance.horizon
    with pytest.raises(InfeasibleScheduleError):
        evaluate(instance, result.schedule)


def test_rand_same_seed_same_schedule():
    instance = paper(0)
    data = PlanningData.build(instance)
    first = rand(instance, 11, data=data)
    assert rand(instance, 11, data=data).schedule == first.schedule
    assert rand(instance, 12, data=data).schedule != first.schedule
    a = run_method("rar", "rand", instance, RunOptions(seed=5))
    b = run_method("rar", "rand", instance, RunOptions(seed=5))
    assert a.schedule == b.schedule and a.objective == b.objective


def test_paper_preset_all_methods():
    instance = paper(1)
    for method in METHODS:
        result = run_method("rar", method, instance, RunOptions(seed=1))
        assert result.status is Status.FEASIBLE, result.info.get("error")
        assert result.objective == evaluate(instance, result.schedule).makespan
        assert result.info["max_accumulated"] <= result.info["theta"]
        # Lemma 3 on the estimates: the planned makespan is at most n_g * W_max.
        n_g = max(j.gpus for j in instance.jobs)
        assert result.info["estimated_makespan"] <= n_g * result.info["max_accumulated"]


def test_accumulated_time_is_the_sum_of_estimates():
    instance = small(3)
    plan = sjf_bco(instance, u=2.0)
    data = PlanningData.build(instance)
    expected = np.zeros(data.num_gpus)
    for j in instance.jobs:
        per_server = plan.schedule[j.id].per_server()
        rho = data.rho_hat[instance.job_index()[j.id]][len(per_server)]
        for s, g in plan.schedule[j.id].gpus:
            expected[data.gpu_number(s, g)] += rho / 2.0
        finish = plan.estimated_finish[j.id]
        assert plan.schedule[j.id].start <= finish - rho + 1e-9  # start = floor(c) (or later)
    np.testing.assert_allclose(plan.accumulated, expected)


def test_parameter_validation():
    instance = small(1)
    with pytest.raises(DdlschedError):
        sjf_bco(instance, u=0)
    with pytest.raises(DdlschedError):
        sjf_bco(instance, lambda_={"nope": 2.0})
    with pytest.raises(DdlschedError):
        PlanningData.build(instance, p_est=-1)
    plan = sjf_bco(instance, lambda_={instance.jobs[0].id: 4.0})
    assert plan.schedule is not None


# --------------------------------------------------------------------------- Theorem 5


def test_theorem5_bound_by_hand():
    # One 2-GPU job on servers (1, 1): always split over 2 servers.
    instance = make([1, 1], [job("x", 2, 100)])
    net = instance.network
    x = instance.jobs[0]
    bound = theorem5_bound(instance)
    best = execution_slots(x, net, 2, 1, "floor")
    worst = execution_slots(x, net, 2, 1, "floor")  # max_contention = 1: one multi-GPU job
    rho_hat = 100 * iteration_time(x, net, 2, 1)
    assert bound.n_g == 2
    assert bound.phi == worst / best == 1.0
    assert bound.l == pytest.approx(rho_hat / worst)
    assert bound.bound == pytest.approx(2 * 1.0 * 1.0 / bound.l)


def test_theorem5_bound_properties():
    for seed in range(5):
        instance = small(seed)
        b = theorem5_bound(instance, u=1.5)
        assert b.n_g == max(j.gpus for j in instance.jobs)
        assert b.phi >= 1 and 0 < b.l <= 1 and b.u == 1.5
        assert b.bound == pytest.approx(b.n_g * b.phi * 1.5 / b.l)
        assert b.bound >= b.n_g
        assert b.u_min <= 1 + 1e-9  # u = 1 is valid with p_est = 1
    assert theorem5_bound(small(0), p_est=3).u_min >= theorem5_bound(small(0)).u_min
    b = theorem5_bound(paper(0))
    assert b.n_g == 32 and b.phi >= 1 and b.l <= 1


def test_heuristics_do_not_import_pyomo():
    code = (
        "import sys; import ddlsched.heuristics.sjf_bco, ddlsched.heuristics.rar_baselines; "
        "assert 'pyomo' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# --------------------------------------------------------------------------- property


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(seed=st.integers(0, 10_000), method=st.sampled_from(METHODS))
def test_every_heuristic_returns_a_valid_schedule(seed, method):
    instance = small(seed)
    plan = plan_of(method, instance, seed)
    result = run_method("rar", method, instance, RunOptions(seed=seed))
    if plan.schedule is None:
        # Documented failure on a tight horizon: no complete pass below T.
        assert result.status is Status.NO_SOLUTION and result.info["failure"] == "no_schedule"
        return
    check_valid(instance, plan)
    assert result.schedule == plan.schedule
    if result.status is Status.FEASIBLE:
        assert result.objective == evaluate(instance, plan.schedule).makespan
        assert result.objective <= instance.horizon
    else:
        assert result.status is Status.NO_SOLUTION
        assert result.info["failure"] == "horizon_overrun"
        assert result.info["makespan_beyond_horizon"] > instance.horizon
