"""The threshold proof of method ``exact`` (:mod:`ddlsched.solvers.placement_threshold`,
:func:`ddlsched.models.placement_pattern_proof.pattern_proof`) against a brute force, and
the method's proof paths."""

from __future__ import annotations

import pytest
from test_placement_methods import TINY, brute_force

from ddlsched.heuristics.heavy_edge import heavy_edge
from ddlsched.models.placement import build_aggregated
from ddlsched.models.placement_bounds import coefficients, stage_terms
from ddlsched.models.placement_pattern_proof import _PROOF_CACHE, pattern_proof
from ddlsched.problems.placement import Placement, evaluate
from ddlsched.registry import RunOptions, run_method
from ddlsched.solvers import Status
from ddlsched.solvers.placement_threshold import threshold_search
from ddlsched.workloads.placement import generate

# 20 more tiny instances: 2-4 stages, servers of varied sizes, both AllReduce kinds
MORE = [
    generate("small", 100 + i, num_stages=2 + i % 3, allreduce="tar" if i % 4 == 3 else "rar")
    for i in range(20)
]
CASES = [*TINY, *MORE]


def _search(inst, **kwargs):
    coef = coefficients(inst)
    found = threshold_search(
        stage_terms(inst, coef),
        [s.replicas for s in inst.stages],
        list(inst.available),
        full=sum(inst.available) == inst.num_replicas,
        **kwargs,
    )
    return coef, found


@pytest.mark.parametrize("index", range(len(CASES)))
def test_threshold_search_equals_brute_force(index):
    inst = CASES[index]
    optimum = brute_force(inst)
    coef, found = _search(inst, lower=0.0)  # from nothing: no bound, no placement
    assert found.closed
    alpha = evaluate(inst, Placement(found.counts)).iteration_time_s
    assert alpha == pytest.approx(optimum, rel=1e-9)
    assert found.value / coef.scale == pytest.approx(optimum, rel=1e-9)
    assert found.bound == found.value
    # from Heavy-Edge's placement as the known one: the same optimum
    start = heavy_edge(inst, 0).counts
    _, again = _search(inst, lower=0.0, counts=start)
    assert again.closed and again.value == found.value


@pytest.mark.parametrize("index", range(0, len(CASES), 3))
def test_threshold_search_out_of_budget_keeps_a_valid_bound(index):
    inst = CASES[index]
    optimum = brute_force(inst)
    start = heavy_edge(inst, 0).counts
    coef, found = _search(inst, lower=0.0, counts=start, budget_s=0.0)
    assert found.solves == 0 and found.counts == start
    assert found.bound / coef.scale <= optimum * (1 + 1e-12)


@pytest.mark.parametrize("index", range(len(CASES)))
def test_pattern_proof_brackets_brute_force(index):
    inst = CASES[index]
    optimum = brute_force(inst)
    coef = coefficients(inst)
    proof = pattern_proof(inst, coef)
    assert proof.bound / coef.scale <= optimum * (1 + 1e-9)
    assert proof.closed  # tiny: the threshold search always finishes
    alpha = evaluate(inst, Placement(proof.counts)).iteration_time_s
    assert alpha == pytest.approx(optimum, rel=1e-9)


def test_hard_table2_case_is_proven_by_the_threshold_search():
    """gpt175b on 32 GPUs, seed 4: the pattern LP bound is 215 s, the forced-split bound
    423.05 s, the optimum 423.53 s (values 423.05, 423.37, 423.53 s within 0.1 %); the
    aggregated ILP alone needs ~12 s and ~9,000 nodes in HiGHS 1.14."""
    inst = generate("table2", 4, model="gpt175b", num_gpus=32)
    _PROOF_CACHE.clear()
    run = run_method(
        "placement", "exact", inst, RunOptions(time_limit_s=60, params={"cross_check": False})
    )
    assert run.status is Status.OPTIMAL
    assert run.info["proof"] == "threshold"
    assert run.objective == pytest.approx(423.53294185594876, rel=1e-12)
    assert run.bound == pytest.approx(run.objective, rel=1e-12)
    assert run.info["pattern_proof"]["pattern_bound_s"] < 424


@pytest.mark.parametrize(("model", "seed", "gpus"), [("vgg16", 0, 32), ("gpt175b", 4, 32)])
def test_threshold_placement_is_a_valid_ilp_start(model, seed, gpus, shared_data):
    """CP-SAT's placement is put in the ILP's symmetry order: HiGHS must accept it."""
    import pyomo.environ as pyo

    inst = generate("table2", seed, model=model, num_gpus=gpus)
    _PROOF_CACHE.clear()
    model_ = build_aggregated(inst)
    assert model_.pattern_proof.proof == "threshold"
    for var, value in model_.ddlsched_start:
        var.set_value(value)
    for con in model_.component_data_objects(active=True, ctype=pyo.Constraint):
        body = con.body()
        assert con.lower is None or body >= con.lower() - 1e-6, con.name
        assert con.upper is None or body <= con.upper() + 1e-6, con.name


def test_threshold_proof_is_re_proven_by_the_ilps_with_the_cross_check(shared_data):
    inst = generate("table2", 0, model="vgg16", num_gpus=32)
    _PROOF_CACHE.clear()
    fast = run_method(
        "placement", "exact", inst, RunOptions(time_limit_s=60, params={"cross_check": False})
    )
    assert fast.info["proof"] == "threshold"
    checked = run_method("placement", "exact", inst, RunOptions(time_limit_s=60))
    assert checked.status is Status.OPTIMAL and checked.info["proof"] == "milp"
    assert checked.info["pattern_proof"]["agrees"] is True
    assert checked.info["cross_check"]["agree"] is True
    assert checked.objective == pytest.approx(fast.objective, rel=1e-9)
    # the ILP alone on request, and the same placement twice (deterministic)
    milp = run_method(
        "placement",
        "exact",
        inst,
        RunOptions(time_limit_s=60, params={"cross_check": False, "milp": True}),
    )
    assert milp.info["proof"] == "milp" and milp.objective == pytest.approx(fast.objective)
    _PROOF_CACHE.clear()
    again = run_method(
        "placement", "exact", inst, RunOptions(time_limit_s=60, params={"cross_check": False})
    )
    assert again.schedule == fast.schedule


@pytest.mark.parametrize("limit", [0.05, 0.3])
def test_exact_under_a_short_limit_keeps_a_valid_bound_and_a_placement(limit):
    inst = generate("table2", 4, model="gpt175b", num_gpus=32)  # optimum 423.53 s
    _PROOF_CACHE.clear()
    run = run_method(
        "placement", "exact", inst, RunOptions(time_limit_s=limit, params={"cross_check": False})
    )
    assert run.status in (Status.FEASIBLE, Status.OPTIMAL)
    assert run.schedule is not None
    assert run.bound is not None and run.bound <= 423.53294185594876 * (1 + 1e-12)
    assert run.objective >= 423.53294185594876 * (1 - 1e-12)


def test_keep_proof_prefers_the_best_placement_and_the_higher_bound():
    from ddlsched.deadline import Deadline
    from ddlsched.models.placement_bounds import time_scale
    from ddlsched.models.placement_exact import _keep_proof
    from ddlsched.models.placement_pattern_proof import PatternProof
    from ddlsched.registry import RunContext
    from ddlsched.solvers.result import Outcome

    inst = TINY[0]
    optimum = brute_force(inst)
    coef = coefficients(inst)
    proof = pattern_proof(inst, coef)
    scale = time_scale(inst)
    ctx = RunContext(seed=0, backend="highs", deadline=Deadline.unlimited())
    empty = Outcome(status=Status.TIME_LIMIT_NO_SOLUTION, bound=0.0, time_limit_hit=True)
    kept = _keep_proof(inst, empty, proof, scale, ctx.seed)
    assert kept.status is Status.FEASIBLE and kept.info["incumbent_from"] == "patterns"
    assert evaluate(inst, kept.schedule).iteration_time_s == pytest.approx(optimum, rel=1e-9)
    assert kept.bound == proof.bound / scale
    bare = PatternProof(0.0, None, None, None, None)
    kept = _keep_proof(inst, empty, bare, scale, ctx.seed)
    assert kept.info["incumbent_from"] == "heavy_edge" and kept.claim is None
    assert kept.schedule == heavy_edge(inst, 0)


def test_compare_with_proof_agreement_time_limit_and_disagreement():
    from ddlsched.models.placement_bounds import time_scale
    from ddlsched.models.placement_exact import _compare_with_proof
    from ddlsched.solvers.result import Claim, Outcome

    # the first case where Heavy-Edge is strictly worse than the optimum
    inst, optimum = next(
        (c, opt)
        for c in CASES
        if evaluate(c, heavy_edge(c, 0)).iteration_time_s > (opt := brute_force(c)) * (1 + 1e-6)
    )
    coef = coefficients(inst)
    proof = pattern_proof(inst, coef)
    scale = time_scale(inst)
    right = Placement(proof.counts)
    worse = heavy_edge(inst, 0)

    def ilp(status, placement):
        value = evaluate(inst, placement).iteration_time_s
        return Outcome(placement, status, bound=optimum, claim=Claim(value, proven=True))

    report = {}
    same = _compare_with_proof(inst, ilp(Status.OPTIMAL, right), proof, scale, report)
    assert report["agrees"] is True and same.status is Status.OPTIMAL
    report = {}
    stopped = _compare_with_proof(inst, ilp(Status.FEASIBLE, worse), proof, scale, report)
    assert report["agrees"] is None and stopped.status is Status.OPTIMAL
    assert stopped.schedule == right
    report = {}  # the ILP "proves" a worse alpha: one side is wrong, nothing is proven
    wrong = _compare_with_proof(inst, ilp(Status.OPTIMAL, worse), proof, scale, report)
    assert report["agrees"] is False and wrong.status is Status.FEASIBLE
    assert wrong.bound is None and wrong.schedule == right and "disagree" in wrong.info["warning"]


@pytest.mark.parametrize(("seed", "gpus", "max_replicas"), [(29, 3, 5), (57, 2, 3)])
def test_forced_split_bound_an_ulp_above_the_optimum_is_not_trusted(
    seed, gpus, max_replicas, monkeypatch
):
    """Without the pattern search (too many patterns), the forced-split bound is the
    threshold search's lower end; it is computed in other arithmetic and here lies an
    ulp above the optimum's term value (the optimum must stay a candidate)."""
    import ddlsched.models.placement_pattern_proof as patterns_module

    inst = generate("small", seed, num_stages=2, max_replicas=max_replicas, gpus_per_server=gpus)
    monkeypatch.setattr(patterns_module, "PATTERN_LIMIT", 0)
    _PROOF_CACHE.clear()
    run = run_method(
        "placement", "exact", inst, RunOptions(time_limit_s=60, params={"cross_check": False})
    )
    _PROOF_CACHE.clear()
    assert run.status is Status.OPTIMAL and run.info["proof"] == "threshold"
    assert run.objective == pytest.approx(brute_force(inst), rel=1e-9)


def test_an_open_proof_is_recomputed_with_more_time():
    from ddlsched.deadline import Deadline
    from ddlsched.models.placement_pattern_proof import placement_proof

    inst = generate("table2", 4, model="gpt175b", num_gpus=32)
    _PROOF_CACHE.clear()
    short = placement_proof(inst, Deadline(0.001))
    assert not short.closed
    assert placement_proof(inst, Deadline(60)).proof == "threshold"
    assert placement_proof(inst, Deadline(0.001)).closed  # a closed proof is kept


def test_term_tables_are_capped_at_the_largest_server(monkeypatch, shared_data):
    """The tables grow with the cube of the counts: a 10,000-GPU job (1,250 replicas a
    stage) ran out of memory when they ran up to the replicas instead of the servers'
    free GPUs (at most 8 here)."""
    import ddlsched.models.placement_bounds as bounds_module
    import ddlsched.models.placement_pattern_proof as patterns_module
    from ddlsched.solvers.placement_threshold import ThresholdSearch

    sizes = []
    real = bounds_module.stage_terms

    def recording(instance, coef, caps=None):
        tables = real(instance, coef, caps)
        sizes.extend(t.size for t in tables)
        return tables

    def no_search(terms, replicas, available, *, full, lower, counts=None, budget_s=0.0, work=0.0):
        return ThresholdSearch(lower, counts, None, 0, 0.0)  # the tables are what counts

    monkeypatch.setattr(bounds_module, "stage_terms", recording)
    monkeypatch.setattr(patterns_module, "stage_terms", recording)
    monkeypatch.setattr(patterns_module, "threshold_search", no_search)
    monkeypatch.setattr(patterns_module, "PATTERN_LIMIT", 0)  # straight to the threshold
    inst = generate("table2", 0, model="bert24", num_gpus=128)  # 16 replicas a stage
    assert max(s.replicas for s in inst.stages) > 9 >= max(inst.available) + 1
    _PROOF_CACHE.clear()
    pattern_proof(inst, coefficients(inst))
    build_aggregated(inst)
    _PROOF_CACHE.clear()
    assert sizes and max(sizes) <= 9**3
