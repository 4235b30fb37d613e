"""The ``rar`` CP-SAT search (``cpsat``; :mod:`ddlsched.models.rar_cpsat`).

Every budget here is CP-SAT's deterministic time with one worker, so no
outcome depends on the machine's speed.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from ddlsched.errors import SolverError
from ddlsched.models.rar_cpsat import inert_contention_level, lengths
from ddlsched.models.rar_cpsat_plan import Plan, PlannedJob, hint_plan, plan_to_schedule
from ddlsched.models.rar_cpsat_search import CpsatSettings, _makespan_bound, cpsat_search
from ddlsched.problems.rar import Network, RarInstance, RarJob
from ddlsched.problems.rar_schedule import evaluate, schedule_to_json
from ddlsched.problems.rar_timing import execution_slots, max_contention
from ddlsched.workloads.rar import generate

SETTINGS = CpsatSettings(work=5.0, workers=1, rounds=0)


def _inert(instance: RarInstance) -> RarInstance:
    """``instance`` with ``xi1`` so small that contention never acts (``k_j < 1``)."""
    return replace(instance, network=replace(instance.network, xi1=1e-6))


def _two_servers() -> RarInstance:
    network = Network(b_e=1.0, b_i=20.0, C=50.0, alpha=0.1, xi1=1.0, xi2=0.002)
    jobs = (
        RarJob("a", 2, 100, 0.05, 32, 0.0002, 0.004),
        RarJob("b", 3, 100, 0.05, 32, 0.0002, 0.004),
        RarJob("c", 1, 200, 0.05, 32, 0.0002, 0.004),
    )
    return RarInstance(servers=(2, 2), network=network, jobs=jobs, horizon=60)


# --------------------------------------------------------------------------- plans


def test_a_valid_plan_decodes_to_its_starts_and_ends():
    instance = _two_servers()
    # b is split over both servers, then a and c share the freed GPUs
    lengths_b = execution_slots(instance.jobs[1], instance.network, 2, 1, instance.progress)
    length_a = execution_slots(instance.jobs[0], instance.network, 1, 0, instance.progress)
    length_c = execution_slots(instance.jobs[2], instance.network, 1, 0, instance.progress)
    plan = Plan(
        (
            PlannedJob(lengths_b, length_a, {0: 2}),
            PlannedJob(0, lengths_b, {0: 2, 1: 1}),
            PlannedJob(lengths_b, length_c, {1: 1}),
        )
    )
    schedule = plan_to_schedule(instance, plan)
    evaluation = evaluate(instance, schedule)
    assert evaluation.start == {"a": lengths_b, "b": 0, "c": lengths_b}
    assert evaluation.finish == {
        "a": lengths_b + length_a,
        "b": lengths_b,
        "c": lengths_b + length_c,
    }
    assert evaluation.makespan == plan.makespan


def test_an_overfull_plan_is_refused():
    instance = _two_servers()
    plan = Plan(
        (PlannedJob(0, 5, {0: 2}), PlannedJob(2, 5, {0: 2, 1: 1}), PlannedJob(0, 5, {1: 1}))
    )
    with pytest.raises(SolverError, match="server 0 at slot 2"):
        plan_to_schedule(instance, plan)


def test_the_hint_of_an_inert_schedule_is_the_schedule():
    import ddlsched.families  # noqa: F401
    from ddlsched.heuristics.sjf_bco import sjf_bco

    instance = _inert(generate("small", 3))
    schedule = sjf_bco(instance).schedule
    data = lengths(instance)
    plan, how = hint_plan(instance, schedule, data.of, data.cap)
    evaluation = evaluate(instance, schedule)
    assert how == "evaluated"
    assert [job.start for job in plan.jobs] == [evaluation.start[j.id] for j in instance.jobs]
    assert plan.makespan == evaluation.makespan


# --------------------------------------------------------------------------- lengths


def test_the_inert_level_of_the_paper_presets():
    paper = generate("paper", 0)
    assert inert_contention_level(paper) == max_contention(paper)
    assert lengths(paper).cap is None and lengths(paper).contention_free
    contended = generate("paper-contention", 0)
    assert inert_contention_level(contended) == 4  # k_j = p / 4
    data = lengths(contended)
    assert data.cap == 4 and data.contention_free
    assert lengths(contended, split_cap=8).contention_free is False


@pytest.mark.parametrize(
    ("bound", "weight", "expected"),
    [(286.0, 1, 286), (285.2, 1, 286), (286 * 1000 + 999, 1000, 286), (287_000, 1000, 287)],
)
def test_the_makespan_bound_of_an_objective_bound(bound, weight, expected):
    assert _makespan_bound(bound, weight) == expected


# --------------------------------------------------------------------------- the search


@pytest.mark.parametrize("seed", range(6))
def test_the_decoded_schedule_is_no_worse_than_the_model(seed):
    instance = generate("small", seed)  # contention acts: lengths are upper bounds
    found = cpsat_search(instance, SETTINGS)
    assert found.schedule is not None
    assert evaluate(instance, found.schedule).makespan <= found.makespan
    assert found.bound is None  # a split cap below max_contention: a restriction


@pytest.mark.parametrize("seed", range(6))
def test_on_inert_contention_the_model_is_exact(solve, seed):
    instance = _inert(generate("small", seed))
    found = cpsat_search(instance, SETTINGS)
    assert found.proven and found.bound == found.makespan
    assert evaluate(instance, found.schedule).makespan == found.makespan
    exact = solve("rar", "exact", instance)
    assert exact.status == "optimal"
    assert found.makespan == exact.objective


@pytest.mark.parametrize("seed", range(4))
def test_a_restricted_model_is_never_below_the_optimum(solve, seed):
    instance = generate("small", seed)
    result = solve("rar", "cpsat", instance, work=5.0, workers=1, rounds=0)
    exact = solve("rar", "exact", instance)
    assert result.status == "feasible" and result.bound is None
    assert result.objective >= exact.objective


def test_same_seed_same_schedule():
    instance = _inert(generate("small", 5))
    first = cpsat_search(instance, CpsatSettings(work=0.5, workers=2, seed=3, rounds=2, window=3))
    second = cpsat_search(instance, CpsatSettings(work=0.5, workers=2, seed=3, rounds=2, window=3))
    assert schedule_to_json(first.schedule) == schedule_to_json(second.schedule)


def test_the_method_proves_an_inert_optimum_and_reports_its_bound(solve):
    instance = _inert(generate("small", 2))
    result = solve("rar", "cpsat", instance, work=5.0, workers=1, hint="none", rounds=0)
    assert result.status == "optimal"
    assert result.bound == result.objective
    assert result.info["bound_valid"] is True


# --------------------------------------------------------------------------- windows


@pytest.mark.parametrize("seed", range(4))
def test_windows_keep_the_plan_valid_and_never_worse(seed):
    from ddlsched.heuristics.rar_baselines import ff
    from ddlsched.models.rar_cpsat_plan import plan_violation
    from ddlsched.models.rar_cpsat_windows import WindowSettings, plan_score, window_search

    instance = generate("small", seed)
    data = lengths(instance)
    start, _ = hint_plan(instance, ff(instance).schedule, data.of, data.cap)
    settings = WindowSettings(rounds=6, size=3, work=0.5, seed=seed)
    found, info, cut = window_search(instance, data, start, settings)
    assert not cut and info["window_rounds"] == 6
    assert plan_violation(instance, found, data.cap) is None
    assert plan_score(instance, found) <= plan_score(instance, start)
    assert evaluate(instance, plan_to_schedule(instance, found)).makespan <= found.makespan
    again, _, _ = window_search(instance, data, start, settings)
    assert again == found


def test_the_search_with_windows_returns_a_schedule_within_the_model(solve):
    instance = generate("small", 7)
    result = solve("rar", "cpsat", instance, work=0.5, workers=1, rounds=4, window=3)
    assert result.status == "feasible"
    assert result.objective <= result.info["model_makespan"]
    # no windows when the whole solve proved its model optimal
    assert result.info.get("window_rounds", 0) in (0, 4)
