"""rar formulations against brute force, each other, the second backend and the heuristics."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rar_brute_force import brute_force_makespan

from ddlsched.models.rar_bounds import closed_form_bounds
from ddlsched.problems.rar import Network, RarInstance, RarJob
from ddlsched.problems.rar_schedule import evaluate
from ddlsched.registry import RunOptions, methods, run_method
from ddlsched.solvers.result import Status
from ddlsched.workloads.rar import generate

NET = Network(b_e=1.0, b_i=20.0, C=50.0, alpha=0.1, xi1=1.0, xi2=0.002)


def J(job_id, gpus, iterations, grad=0.05):
    return RarJob(
        job_id, gpus, iterations, grad_size=grad, batch=32, fwd_per_sample=0.0002, bwd=0.004
    )


# Tiny instances with contention, splitting and packing trade-offs; the brute
# force enumerates every placement vector and start slot.
TINY = {
    # two 2-GPU jobs on 2 x 2 GPUs: side by side on one server each (no split)
    "pack": RarInstance((2, 2), NET, (J("a", 2, 100), J("b", 2, 100), J("c", 1, 60)), 8),
    # a 3-GPU job must split over (2, 1): contention with another split job
    "forced-split": RarInstance((2, 1), NET, (J("a", 3, 60), J("b", 2, 40), J("c", 1, 30)), 9),
    # three 2-GPU jobs on (2, 2): one waits or all split
    "queue": RarInstance((2, 2), NET, (J("a", 2, 150), J("b", 2, 90), J("c", 2, 60)), 9),
    # heavy gradient: splitting is very slow, so jobs queue on one server
    "heavy-grad": RarInstance(
        (2, 1, 1), NET, (J("a", 2, 40, 0.3), J("b", 2, 40, 0.3), J("c", 1, 50)), 8
    ),
    # fractional progress rule
    "fractional": RarInstance(
        (2, 2), NET, (J("a", 3, 70), J("b", 1, 100), J("c", 2, 45)), 8, progress="fractional"
    ),
    # one server of 3
    "one-server": RarInstance((3,), NET, (J("a", 2, 120), J("b", 1, 80), J("c", 3, 50)), 9),
    # 3-GPU jobs on 2+2+2 GPUs: running two together makes them share a
    # server (p = 2); contention decides the optimum (6, against 4 without it)
    "shared-alpha1": RarInstance(
        (2, 2, 2),
        Network(1.0, 20.0, 50.0, 1.0, 1.0, 0.002),
        (J("a", 3, 30), J("b", 3, 30), J("c", 1, 40)),
        8,
    ),
    "shared-alpha03": RarInstance(
        (2, 2, 2),
        Network(1.0, 20.0, 50.0, 0.3, 1.0, 0.002),
        (J("a", 3, 40), J("b", 3, 25), J("c", 2, 60)),
        8,
    ),
    "shared-xi1": RarInstance(
        (2, 2, 2), Network(1.0, 20.0, 50.0, 0.5, 0.6, 0.002), (J("a", 3, 36), J("b", 3, 36)), 8
    ),
}

# Optima without contention degradation (alpha = 0, xi1 -> 0), to show the
# cases above where contention changes the answer.
CONTENTION_BINDS = {"shared-alpha1": (6, 4), "shared-alpha03": (6, 4), "shared-xi1": (4, 3)}


class _BruteForceOptima(dict):
    """``TINY``'s brute-force optima, each computed when first read (a parallel worker
    computes only those of its own tests)."""

    def __missing__(self, name: str) -> float:
        self[name] = optimum = brute_force_makespan(TINY[name])
        return optimum


@pytest.fixture(scope="session")
def brute():
    return _BruteForceOptima()


@pytest.mark.parametrize("name", sorted(TINY))
def test_exact_milp_equals_brute_force(name, brute, solve, backend):
    inst = TINY[name]
    # the bare MILP over the whole horizon
    report = solve("rar", "exact", inst, backend, presolve_bounds=False, search="never")
    assert report.status is Status.OPTIMAL
    assert report.info["proof"] == "milp"
    assert report.objective == brute[name]
    # the evaluator's makespan of the decoded schedule equals the MILP objective
    assert report.info["model_makespan"] == report.objective
    assert evaluate(inst, report.schedule).makespan == report.objective


@pytest.mark.parametrize("name", sorted(TINY))
def test_exact_method_with_presolved_bounds_equals_brute_force(name, brute):
    result = run_method("rar", "exact", TINY[name], RunOptions(time_limit_s=60))
    assert result.status is Status.OPTIMAL
    assert result.objective == brute[name] == result.bound


@pytest.mark.parametrize("name", ["forced-split", "fractional", "shared-alpha1"])
def test_highs_and_scip_agree(name, brute, solve):
    inst = TINY[name]
    highs = solve("rar", "exact", inst, "highs", presolve_bounds=False, search="never")
    scip = solve("rar", "exact", inst, "scip", presolve_bounds=False, search="never")
    assert highs.status is scip.status is Status.OPTIMAL
    assert highs.objective == scip.objective == brute[name]
    assert scip.backend == "scip" and "ortools" in scip.backend_version
    ti_h, ti_s = (
        solve("rar", "timeindexed", inst, "highs"),
        solve("rar", "timeindexed", inst, "scip"),
    )
    assert ti_h.bound == ti_s.bound
    assert (
        solve("rar", "load_lb", inst, "highs").bound == solve("rar", "load_lb", inst, "scip").bound
    )


@pytest.mark.parametrize("name", sorted(TINY))
def test_bounds_bracket_the_brute_force_optimum(name, brute, solve):
    inst = TINY[name]
    lb = solve("rar", "load_lb", inst).bound
    ti = solve("rar", "timeindexed", inst)
    assert lb <= ti.bound <= brute[name]
    assert ti.objective is None or brute[name] <= ti.objective
    assert max(closed_form_bounds(inst).values()) <= lb


@pytest.mark.parametrize("name", sorted(CONTENTION_BINDS))
def test_contention_decides_the_optimum(name, brute, solve):
    with_contention, without = CONTENTION_BINDS[name]
    inst = TINY[name]
    relaxed = dataclasses.replace(
        inst, network=dataclasses.replace(inst.network, alpha=0.0, xi1=0.01)
    )
    assert brute[name] == with_contention
    assert brute_force_makespan(relaxed) == without
    assert (
        solve("rar", "timeindexed", inst).bound == without
    )  # the contention-free bound is strict here


def test_time_limited_exact_reports_incumbent_and_bound_never_false_optimal(solve):
    inst = generate("small", 2)  # the bare MILP does not close within a second
    report = solve("rar", "exact", inst, time_limit_s=1.0, presolve_bounds=False, search="never")
    assert report.status in (Status.FEASIBLE, Status.TIME_LIMIT_NO_SOLUTION, Status.OPTIMAL)
    if report.status is not Status.OPTIMAL:
        assert report.bound is None or report.objective is None or report.bound <= report.objective
        assert report.info["proof"] is None


def test_exact_on_impossible_horizon_is_infeasible(solve):
    inst = dataclasses.replace(TINY["queue"], horizon=2)
    assert (
        solve("rar", "exact", inst, presolve_bounds=False, search="never").status
        is Status.INFEASIBLE
    )


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_time_aggregation_keeps_the_bound_valid(seed, solve):
    inst = generate("small", seed)
    opt = run_method("rar", "exact", inst, RunOptions(time_limit_s=60)).objective
    for width in (2, 3, 5):
        agg = solve("rar", "timeindexed", inst, slot_width=width)
        assert agg.bound is None or agg.bound <= opt
        assert agg.objective is None or agg.objective >= opt


def test_worst_contention_mode_reports_no_bound_but_a_valid_schedule(solve):
    inst = generate("small", 4)
    worst = solve("rar", "timeindexed", inst, contention="worst")
    assert worst.bound is None and worst.info["bound_valid"] is False
    assert worst.objective == evaluate(inst, worst.schedule).makespan


def test_worst_contention_mode_without_a_schedule_is_no_solution(solve):
    # small(27) with T = 18: no worst-contention schedule fits (a result, not an error; the
    # contention-free model proves the instance infeasible)
    inst = dataclasses.replace(generate("small", 27), horizon=18)
    worst = solve("rar", "timeindexed", inst, contention="worst")
    assert worst.status is Status.NO_SOLUTION and worst.objective is None
    assert worst.info["reason"] == (
        "no schedule found with worst-contention durations: the model has no schedule "
        "within the horizon"
    )
    assert solve("rar", "timeindexed", inst).status is Status.INFEASIBLE


def test_pattern_cap_pools_jobs_and_keeps_the_bound_valid(solve):
    inst = generate("small", 5)
    opt = run_method("rar", "exact", inst, RunOptions(time_limit_s=60)).objective
    capped = solve("rar", "timeindexed", inst, max_patterns=1)
    assert capped.info["pooled_jobs"]
    assert capped.bound <= opt <= capped.objective
    assert solve("rar", "load_lb", inst, max_patterns=1).bound <= opt


def _heuristics():
    return [m.name for m in methods("rar") if m.kind == "heuristic"]


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 100_000))
def test_bound_chain_on_random_small_instances(seed):
    """load_lb <= timeindexed bound <= exact <= every heuristic (and ratios >= 1)."""
    inst = generate("small", seed, max_horizon=40)
    options = RunOptions(time_limit_s=60, seed=seed)
    lb = run_method("rar", "load_lb", inst, options).bound
    ti = run_method("rar", "timeindexed", inst, options)
    exact = run_method("rar", "exact", inst, options)
    assert exact.status is Status.OPTIMAL
    assert lb <= ti.bound <= exact.objective <= ti.objective
    for name in _heuristics():
        result = run_method("rar", name, inst, options)
        if result.status is Status.NO_SOLUTION:  # a heuristic may overrun the horizon
            continue
        assert exact.objective <= result.objective, name


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 100_000))
def test_sjf_bco_ratio_never_exceeds_theorem5_bound(seed):
    inst = generate("small", seed, max_horizon=40)
    exact = run_method("rar", "exact", inst, RunOptions(time_limit_s=60, seed=seed))
    result = run_method("rar", "sjf_bco", inst, RunOptions(seed=seed))
    if result.objective is None:  # a horizon overrun: nothing to compare
        return
    assert exact.status is Status.OPTIMAL
    assert result.objective / exact.objective <= result.info["theorem5_bound"] + 1e-9


@pytest.mark.parametrize(
    "method", ["sjf_bco", "ff", "ls", "rand", "exact", "timeindexed", "load_lb"]
)
def test_same_seed_same_output(method):
    from ddlsched.problems.rar_schedule import schedule_to_json

    inst = generate("small", 11)
    a = run_method("rar", method, inst, RunOptions(time_limit_s=30, seed=5))
    b = run_method("rar", method, inst, RunOptions(time_limit_s=30, seed=5))
    assert (a.status, a.objective, a.bound) == (b.status, b.objective, b.bound)
    if a.schedule is not None:
        assert schedule_to_json(a.schedule, a.evaluation) == schedule_to_json(
            b.schedule, b.evaluation
        )
