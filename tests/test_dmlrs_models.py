"""Exact and bounding formulations of family ``dmlrs`` (``ddlsched.models.dmlrs``, ``dmlrs_milp``, ``dmlrs_dual``, ``dmlrs_colgen``).

* ``exact`` equals a brute force over every allocation
  (``tests/dmlrs_brute_force.py``) on ``micro`` instances as generated and
  on congested variants (both jobs arriving in slot 1, capacities halved or
  cut by a quarter: the optimum falls below ``ub_trivial`` and external
  slots appear);
* HiGHS and SCIP agree on tiny instances (the formulation's cross-check
  proves the same optimum with both), and the decoded schedule re-evaluates
  to the MILP's objective;
* the chain ``exact <= colgen bound (milp and lp pricing) <= ub_trivial``,
  ``UB(0) <= ub_trivial``, ``UB(p) >= exact`` at random prices, and the
  restricted-master schedule evaluates to at most ``exact``;
* colgen with LP pricing converges to the compact LP relaxation at
  ``b_int`` (it is a Dantzig-Wolfe decomposition of it);
* a deadline that cuts the first pricing round still gives a valid bound;
  the exact model refuses instances above its size cap with the counts.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from dmlrs_brute_force import brute_force_optimum

from ddlsched.deadline import Deadline
from ddlsched.errors import InvalidInstanceError, ModelTooLargeError
from ddlsched.models.dmlrs import ExactFormulation, job_upper_bound, ub_trivial
from ddlsched.models.dmlrs_colgen import colgen
from ddlsched.models.dmlrs_dual import bound_at_prices, price_job
from ddlsched.models.dmlrs_milp import build_model
from ddlsched.problems.dmlrs import (
    DmlrsInstance,
    evaluate,
    fastest_slots,
    schedule_from_counts,
)
from ddlsched.solvers import SolveLimits, Status, solve_model
from ddlsched.solvers.formulation import solve_formulation
from ddlsched.workloads.dmlrs import generate

TOL = 1e-6


def congested(instance: DmlrsInstance, scale: float) -> DmlrsInstance:
    """Every job arriving in slot 1, capacities times ``scale``."""
    return dataclasses.replace(
        instance,
        jobs=tuple(dataclasses.replace(j, arrival_slot=1) for j in instance.jobs),
        capacity=tuple(tuple(c * scale for c in cap) for cap in instance.capacity),
    )


def solve_exact(instance: DmlrsInstance, cross_check: bool = False, backend: str = "highs"):
    outcome = solve_formulation(ExactFormulation(), instance, backend, cross_check=cross_check)
    assert outcome.status is Status.OPTIMAL
    return outcome


MICRO = [generate("micro", s) for s in range(6)] + [
    congested(generate("micro", s), scale) for s in range(6) for scale in (0.5, 0.75)
]


@pytest.mark.parametrize("k", range(len(MICRO)))
def test_exact_equals_brute_force(k, backend):
    instance = MICRO[k]
    outcome = solve_exact(instance, backend=backend)
    assert outcome.claim.value == pytest.approx(brute_force_optimum(instance), rel=1e-9, abs=1e-9)


def test_congested_micro_cases_are_not_trivial():
    """The brute-force comparison covers optima below ``ub_trivial`` and external slots."""
    below, external = 0, 0
    for instance in MICRO:
        evaluation = evaluate(instance, solve_exact(instance).schedule)
        below += evaluation.total_utility < ub_trivial(instance) - 1e-6
        external += evaluation.internal_share is not None and evaluation.internal_share < 1
    assert below >= 5 and external >= 3


TINY = [generate("tiny", s) for s in range(10)] + [
    congested(generate("tiny", s), 0.5) for s in range(3)
]


@pytest.mark.parametrize("k", range(len(TINY)))
def test_exact_highs_and_scip_agree_and_decode(k):
    instance = TINY[k]
    outcome = solve_exact(instance, cross_check=True)
    assert outcome.info["cross_check"]["agree"] is True
    evaluation = evaluate(instance, outcome.schedule)
    assert evaluation.total_utility == pytest.approx(outcome.claim.value, rel=1e-7, abs=1e-7)
    assert outcome.bound >= evaluation.total_utility - TOL
    assert evaluation.total_utility <= ub_trivial(instance) + TOL


@pytest.mark.parametrize("k", range(len(TINY)))
def test_bound_chain(k):
    instance = TINY[k]
    exact = solve_exact(instance).claim.value
    trivial = ub_trivial(instance)
    for pricing in ("milp", "lp"):
        result = colgen(instance, pricing=pricing)
        assert result.stopped == "converged"
        assert exact - TOL <= result.bound <= trivial + TOL
        assert result.history[0].bound <= trivial + TOL  # UB(0)
        assert result.master_value <= result.bound + TOL
        if result.schedule is not None:
            value = evaluate(instance, result.schedule).total_utility
            assert value == pytest.approx(result.schedule_value)
            assert value <= exact + TOL
    milp = colgen(instance, pricing="milp")
    assert milp.schedule is not None  # every priced column is integral


@pytest.mark.parametrize("seed", range(6))
def test_bound_at_random_prices_is_valid(seed):
    instance = TINY[seed] if seed < 3 else congested(generate("tiny", seed), 0.5)
    exact = solve_exact(instance).claim.value
    rng = np.random.default_rng(seed)
    H, R, T = instance.num_machines, len(instance.resources), instance.slots
    for _ in range(3):
        prices = rng.uniform(0, 5, size=(H, R, T)) * (rng.random((H, R, T)) < 0.5)
        for mode in ("milp", "lp"):
            bound, info = bound_at_prices(instance, prices, mode)
            assert bound >= exact - TOL
            assert info["price_term"] == pytest.approx(
                float(np.sum(prices * instance.cap[:, :, None]))
            )
            assert all(lam >= 0 for lam in info["lambda"])
        lp_bound, _ = bound_at_prices(instance, prices, "lp")
        milp_bound, _ = bound_at_prices(instance, prices, "milp")
        assert milp_bound <= lp_bound + TOL  # the LP relaxes the MILP


@pytest.mark.parametrize("seed", range(4))
def test_priced_columns_are_feasible_single_job_schedules(seed):
    instance = congested(generate("tiny", seed), 0.5)
    rng = np.random.default_rng(seed)
    H, R, T = instance.num_machines, len(instance.resources), instance.slots
    prices = rng.uniform(0, 2, size=(H, R, T)) * (rng.random((H, R, T)) < 0.3)
    for i in range(len(instance.jobs)):
        result = price_job(instance, i, prices, "milp")
        assert result.dual_bound >= result.value - TOL
        assert result.dual_bound <= job_upper_bound(instance, i) + TOL
        if result.column is None:
            assert result.value == 0.0
            continue
        schedule = schedule_from_counts([i], [(i, t, h, w, s) for t, h, w, s in result.column])
        evaluation = evaluate(instance, schedule)
        assert evaluation.completion_slot[i] == result.completion_slot
        assert evaluation.job_utility[i] == pytest.approx(result.utility)
        cost = sum(
            float(prices[h, :, t - 1] @ (instance.alpha[i] * w + instance.beta[i] * s))
            for t, h, w, s in result.column
        )
        assert result.value == pytest.approx(result.utility - cost)
        assert result.value == pytest.approx(result.dual_bound, rel=1e-5, abs=1e-5)


@pytest.mark.parametrize("seed", range(4))
def test_lp_colgen_converges_to_the_compact_lp(seed):
    instance = congested(generate("tiny", seed), 0.5)
    model = build_model(instance, relax=True)
    solve = solve_model(model, "highs", SolveLimits())
    assert solve.status is Status.OPTIMAL
    result = colgen(instance, pricing="lp")
    assert result.stopped == "converged"
    assert result.bound == pytest.approx(solve.incumbent, rel=1e-6, abs=1e-6)


def test_colgen_keeps_the_given_schedule():
    instance = congested(generate("tiny", 1), 0.5)
    exact = solve_exact(instance)
    result = colgen(instance, [exact.schedule], pricing="lp")
    assert result.schedule is not None
    assert evaluate(instance, result.schedule).total_utility == pytest.approx(exact.claim.value)


def test_colgen_is_deterministic():
    instance = congested(generate("tiny", 2), 0.5)
    a, b = colgen(instance), colgen(instance)
    assert a.bound == b.bound and a.iterations == b.iterations
    assert a.schedule == b.schedule


def test_deadline_in_the_first_round_falls_back_to_valid_bounds():
    instance = generate("tiny", 0)
    result = colgen(instance, deadline=Deadline(1e-6))
    assert result.stopped == "time_limit"
    assert result.bound == pytest.approx(ub_trivial(instance))
    bound, info = bound_at_prices(instance, np.zeros((2, 4, 5)), deadline=Deadline(1e-6))
    assert bound == pytest.approx(ub_trivial(instance))
    assert info["pricing_status"] == {"trivial": 4}


def test_ub_trivial_by_hand():
    instance = generate("tiny", 3)
    expected = 0.0
    for i, job in enumerate(instance.jobs):
        d = fastest_slots(instance, i)
        if job.arrival_slot + d - 1 <= instance.slots:
            expected += job.utility(d - 1)
    assert ub_trivial(instance) == pytest.approx(expected)
    late = dataclasses.replace(
        instance,
        jobs=tuple(dataclasses.replace(j, arrival_slot=instance.slots) for j in instance.jobs),
    )
    assert ub_trivial(late) == pytest.approx(
        sum(j.utility(0) for i, j in enumerate(late.jobs) if fastest_slots(late, i) == 1)
    )


def test_exact_refuses_instances_above_its_cap():
    instance = generate("paper", 0)
    with pytest.raises(ModelTooLargeError, match=r"50 jobs x 100 machines x 20 slots"):
        ExactFormulation().build(instance, Deadline(60))


def test_prices_are_checked():
    instance = generate("tiny", 0)
    with pytest.raises(InvalidInstanceError, match="shape"):
        bound_at_prices(instance, np.zeros((1, 1, 1)))
    with pytest.raises(InvalidInstanceError, match="non-negative"):
        bound_at_prices(instance, -np.ones((2, 4, 5)))
    assert math.isfinite(bound_at_prices(instance, np.zeros((2, 4, 5)))[0])


def test_scip_pricing_agrees_with_highs():
    instance = congested(generate("tiny", 4), 0.5)
    rng = np.random.default_rng(4)
    H, R, T = instance.num_machines, len(instance.resources), instance.slots
    prices = rng.uniform(0, 2, size=(H, R, T)) * (rng.random((H, R, T)) < 0.4)
    for mode in ("milp", "lp"):
        highs, _ = bound_at_prices(instance, prices, mode, "highs")
        scip, info = bound_at_prices(instance, prices, mode, "scip")
        assert scip == pytest.approx(highs, rel=1e-6, abs=1e-6)
        assert info["backend"] == "scip"
