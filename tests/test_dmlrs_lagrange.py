"""``ub_lagrange`` of family ``dmlrs`` (``ddlsched.models.dmlrs_lagrange``).

* Validity: at least the brute-force optimum on ``micro`` instances (as generated and
  congested) and at least ``exact``'s proven optimum on ``tiny`` ones; never above
  ``ub_capacity`` (the reported bound is the smaller of the two).
* The search bites: on congested ``tiny`` instances (every job in slot 1, capacities
  halved) the subgradient steps lower the bound below ``ub_capacity`` and below the
  Lagrangian at the start.
* Same inputs, same iterates; the subgradient's pieces (usage of priced columns, machine
  classes) checked against the evaluator and by hand.
* The registered method: a bound-only result; a deadline that expires early still gives a
  valid bound or no answer, never a wrong one.

The 100-instance check is ``benchmarks/dmlrs_lagrange_validity.py``.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from dmlrs_brute_force import brute_force_optimum

from ddlsched.deadline import Deadline
from ddlsched.models.dmlrs import ExactFormulation
from ddlsched.models.dmlrs_dual import PricingSession
from ddlsched.models.dmlrs_lagrange import lagrange_bound, machine_classes, usage_of_columns
from ddlsched.problems.dmlrs import DmlrsInstance
from ddlsched.registry import RunOptions, run_method
from ddlsched.solvers import Status
from ddlsched.solvers.formulation import solve_formulation
from ddlsched.workloads.dmlrs import generate

TOL = 1e-6


def congested(instance: DmlrsInstance, scale: float = 0.5) -> DmlrsInstance:
    """Every job arriving in slot 1, capacities times ``scale``."""
    return dataclasses.replace(
        instance,
        jobs=tuple(dataclasses.replace(j, arrival_slot=1) for j in instance.jobs),
        capacity=tuple(tuple(c * scale for c in cap) for cap in instance.capacity),
    )


def optimum(instance: DmlrsInstance) -> float:
    outcome = solve_formulation(ExactFormulation(), instance, "highs")
    assert outcome.status is Status.OPTIMAL
    return outcome.claim.value


MICRO = [generate("micro", s) for s in range(4)] + [
    congested(generate("micro", s), scale) for s in range(4) for scale in (0.5, 0.75)
]


@pytest.mark.parametrize("k", range(len(MICRO)))
def test_at_least_the_brute_force_optimum(k):
    instance = MICRO[k]
    bound, info = lagrange_bound(instance, iterations=6)
    assert bound >= brute_force_optimum(instance) - TOL
    assert bound <= info["ub_capacity"] + TOL


CONGESTED = [congested(generate("tiny", s)) for s in (0, 4, 5, 9, 10)]


@pytest.mark.parametrize("k", range(len(CONGESTED)))
def test_steps_lower_the_bound_and_stay_valid(k):
    instance = CONGESTED[k]
    bound, info = lagrange_bound(instance, iterations=8)
    assert optimum(instance) - TOL <= bound
    assert bound < info["ub_capacity"] - 1e-3  # below the capacity LP: the method adds
    assert bound < info["start_bound"] - 1e-3  # the steps add to the start
    assert info["best_iteration"] >= 1
    assert min(info["history"]) == pytest.approx(bound)


@pytest.mark.parametrize("seed", range(6))
def test_at_least_exact_on_tiny(seed):
    instance = generate("tiny", seed)
    bound, _ = lagrange_bound(instance, iterations=4)
    assert bound >= optimum(instance) - TOL


def test_same_inputs_same_iterates():
    instance = CONGESTED[0]
    first = lagrange_bound(instance, iterations=5)[1]["history"]
    assert lagrange_bound(instance, iterations=5)[1]["history"] == first


def test_usage_of_columns_is_alpha_w_plus_beta_s():
    instance = generate("tiny", 2)
    zero = np.zeros((instance.num_machines, len(instance.resources), instance.slots))
    results = PricingSession(instance).price_all(zero)
    usage = usage_of_columns(instance, results)
    expected = np.zeros_like(usage)
    for i, result in enumerate(results):
        for slot, machine, workers, ps in result.column or ():
            for r in range(len(instance.resources)):
                expected[machine, r, slot - 1] += (
                    instance.jobs[i].worker[r] * workers + instance.jobs[i].ps[r] * ps
                )
    assert any(r.column for r in results)
    np.testing.assert_allclose(usage, expected)


def test_machine_classes_group_equal_capacities():
    instance = dataclasses.replace(
        generate("tiny", 0, machines=3),
        capacity=((2, 4, 16, 32), (4, 4, 16, 32), (2, 4, 16, 32)),
    )
    assert sorted(c.tolist() for c in machine_classes(instance)) == [[0, 2], [1]]


def test_registered_method_is_a_valid_bound():
    instance = CONGESTED[1]
    options = RunOptions(time_limit_s=120, params={"iterations": 4})
    result = run_method("dmlrs", "ub_lagrange", instance, options)
    assert result.status is Status.BOUND_ONLY
    assert result.bound >= optimum(instance) - TOL
    assert result.info["search_stopped"] in ("iterations", "zero_subgradient")
    assert not result.time_limit_hit


@pytest.mark.parametrize("method", ["ub_lagrange", "ub_branch"])
def test_expired_deadline_gives_no_wrong_bound(method):
    """Both searches of a dmlrs upper bound (the Lagrangian's, ``ub_branch``'s) cut at once."""
    instance = CONGESTED[2]
    truth = optimum(instance)
    for limit in (1e-4, 0.05):
        result = run_method(
            "dmlrs", method, instance, RunOptions(time_limit_s=limit), deadline=None
        )
        if result.bound is not None:
            assert result.bound >= truth - TOL
        else:
            assert result.status is Status.TIME_LIMIT_NO_SOLUTION


def test_deadline_during_the_search_keeps_the_best_iterate():
    instance = CONGESTED[3]
    bound, info = lagrange_bound(instance, iterations=10_000, deadline=Deadline(3.0))
    assert info["search_stopped"] == "time_limit"
    assert bound >= optimum(instance) - TOL
