"""The server-pattern LP bound and MIP start of the aggregated placement ILP
(:mod:`ddlsched.models.placement_pattern_proof`, :mod:`ddlsched.solvers.placement_pattern_cover`)."""

from __future__ import annotations

import numpy as np
import pytest
from test_placement_methods import TINY, brute_force

from ddlsched.models.placement import PlacementFormulation, build_aggregated
from ddlsched.models.placement_bounds import coefficients
from ddlsched.models.placement_pattern_proof import pattern_search
from ddlsched.problems.placement import Placement, evaluate
from ddlsched.registry import RunOptions, run_method
from ddlsched.solvers import SolveLimits, Status, solve_formulation
from ddlsched.solvers.placement_pattern_cover import pattern_count, patterns
from ddlsched.workloads.placement import generate


@pytest.mark.parametrize("exact", [True, False])
def test_pattern_enumeration_and_count(exact):
    caps = [2, 3, 1, 4]
    table = patterns(caps, 5, exact=exact)
    assert len(table) == pattern_count(caps, 5, exact=exact) == len({tuple(r) for r in table})
    assert (table <= np.array(caps)).all()
    assert ((table.sum(axis=1) == 5) if exact else (table.sum(axis=1) <= 5)).all()


@pytest.mark.parametrize("index", range(len(TINY)))
def test_bound_below_brute_force_and_start_is_a_placement(index):
    inst = TINY[index]
    coef = coefficients(inst)
    search = pattern_search(inst, coef)
    optimum = brute_force(inst)
    assert search.bound / coef.scale <= optimum * (1 + 1e-9)
    assert search.counts is not None  # tiny: the integer pattern problem always solves
    alpha = evaluate(inst, Placement(search.counts)).iteration_time_s
    assert alpha == pytest.approx(search.value / coef.scale, rel=1e-9)
    assert alpha >= optimum * (1 - 1e-12)


TABLE2 = [("vgg16", 0, 32), ("gpt175b", 1, 32), ("bert24", 0, 16)]


@pytest.mark.parametrize(("model", "seed", "gpus"), TABLE2)
def test_table2_bound_and_start_against_the_ilp_without_them(model, seed, gpus, shared_data):
    inst = generate("table2", seed, model=model, num_gpus=gpus)
    limits = SolveLimits(time_limit_s=60, abs_gap=1e-7)
    plain = solve_formulation(PlacementFormulation(patterns=False), inst, "highs", limits)
    assert plain.status is Status.OPTIMAL
    optimum = evaluate(inst, plain.schedule).iteration_time_s
    coef = coefficients(inst)
    search = pattern_search(inst, coef)
    assert search.bound / coef.scale <= optimum * (1 + 1e-9)
    assert evaluate(inst, Placement(search.counts)).iteration_time_s >= optimum * (1 - 1e-12)
    fast = solve_formulation(PlacementFormulation(), inst, "highs", limits)
    assert fast.status is Status.OPTIMAL
    assert evaluate(inst, fast.schedule).iteration_time_s == pytest.approx(optimum, rel=1e-9)


def test_start_satisfies_the_symmetry_rows():
    """The start is handed to HiGHS and SCIP: it must be feasible in the model."""
    inst = generate("table2", 0, model="gpt175b", num_gpus=32)
    model = build_aggregated(inst)
    for var, value in model.ddlsched_start:
        var.set_value(value)
    for con in model.component_data_objects(
        active=True, ctype=__import__("pyomo").environ.Constraint
    ):
        body = con.body()
        assert con.lower is None or body >= con.lower() - 1e-6, con.name
        assert con.upper is None or body <= con.upper() + 1e-6, con.name


def test_exact_method_with_and_without_patterns_cross_checked(shared_data):
    inst = generate("table2", 1, model="vgg16", num_gpus=16)
    runs = [
        run_method("placement", "exact", inst, RunOptions(time_limit_s=60, params={"patterns": p}))
        for p in (True, False)
    ]
    assert all(r.status is Status.OPTIMAL for r in runs)
    assert runs[0].objective == pytest.approx(runs[1].objective, rel=1e-9)
    assert runs[0].info["cross_check"]["agree"] is True


def test_fill_finds_an_exact_cover_or_none():
    from ddlsched.solvers.placement_pattern_cover import _fill

    table = patterns([2, 2], 2, exact=True)  # (0,2), (1,1), (2,0)
    out = _fill([table], np.array([2]), np.array([1, 3]), 100)
    assert out is not None and out[0].sum(axis=0).tolist() == [1, 3] and len(out[0]) == 2
    assert _fill([table], np.array([2]), np.array([4, 1]), 100) is None  # needs 5 GPUs
    assert _fill([table], np.array([0]), np.array([0, 0]), 100)[0].shape == (0, 2)
