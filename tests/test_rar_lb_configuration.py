"""``lb_configuration`` (``models/rar_lb_configuration.py``): a valid configuration-LP bound.

Checks (its validity on 140 proven and 20 brute-forced optima is
``tests/test_rar_lower_bounds_valid.py``, shared with the other bounds): a hand-computed
instance where only two 3-GPU rings fit side by side on two 4-GPU servers
(the bound is 15, the closed forms and ``lb_binpacking`` 12, the optimum 18);
the rates of a hand-computed ring; the pricing MILP's optimum against an
enumeration of every configuration on random prices (and its upper bound
under a one-node budget); the same bound twice;
a round budget and a passed deadline that keep a valid, weaker bound.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from ddlsched.deadline import Deadline
from ddlsched.models.rar_bounds import closed_form_bounds
from ddlsched.models.rar_lb_binpacking import lb_binpacking
from ddlsched.models.rar_lb_configuration import (
    configuration_rates,
    lb_configuration,
    price,
)
from ddlsched.models.rar_search import search_exact
from ddlsched.problems.rar import Network, RarInstance, RarJob
from ddlsched.registry import RunOptions, run_method
from ddlsched.workloads.rar import generate

NETWORK = Network(b_e=1.0, b_i=1000.0, C=1000.0, alpha=0.0, xi1=1e-6, xi2=1e-6)


def three_gpu_rings(count: int) -> RarInstance:
    """``count`` 3-GPU rings of 18 iterations on two 4-GPU servers.

    On one server ``tau = 0.3 + 2 * 0.2 * (2/3) / 1000 + ... ~ 0.3003`` (3 iterations a
    slot: 6 slots); split, the inter-server term ``2 * 0.2 * (2/3) / 1 = 0.267`` makes
    ``tau ~ 0.567`` (1 iteration a slot: 18 slots). Two rings never share a server."""
    jobs = tuple(
        RarJob(
            id=f"r{k}",
            gpus=3,
            iterations=18,
            grad_size=0.2,
            batch=1,
            fwd_per_sample=0.0,
            bwd=0.3,
        )
        for k in range(count)
    )
    return RarInstance(servers=(4, 4), network=NETWORK, jobs=jobs, horizon=60)


def test_rates_of_a_hand_computed_ring():
    rates = configuration_rates(three_gpu_rings(1))
    assert rates.gpus == (3,) and rates.servers == (4, 4)
    assert rates.whole[0] == pytest.approx(3 / 18, rel=1e-8)  # 3 of 18 iterations a slot
    assert rates.split[0] == pytest.approx(1 / 18, rel=1e-8)


def test_two_rings_side_by_side_at_most():
    """Five rings, at most two whole at a time (6 of 8 GPUs; a third, split, needs 9):
    the LP needs 5 * 6 / 2 = 15 slots; gpu_time 90/8 -> 12, lb_binpacking 12 (15 items
    of 6 slots in 8 GPU bins: 2 per bin); the optimum 18 (three waves)."""
    inst = three_gpu_rings(5)
    assert max(closed_form_bounds(inst).values()) == 12
    assert lb_binpacking(inst).bound == 12
    result = lb_configuration(inst)
    assert result.bound == 15 and result.info["components"]["configuration"] == 15
    assert result.info["converged"] and not result.time_limit_hit
    opt = search_exact(inst)
    assert opt.proven and opt.makespan == 18


def _enumerated_value(rates, prices) -> float:
    """Best priced configuration by enumeration: each job absent, split, or whole on a server."""
    jobs = range(len(rates.gpus))
    choices = []
    for j in jobs:
        options = [(None, 0.0)]
        if rates.split[j] is not None:
            options.append((-1, rates.split[j]))
        if rates.whole[j] is not None:
            options += [(s, rates.whole[j]) for s, cap in enumerate(rates.servers)]
        choices.append(options)
    best = 0.0
    for combo in itertools.product(*choices):
        used = [0] * len(rates.servers)
        total = 0
        for j, (where, _) in zip(jobs, combo, strict=True):
            if where is None:
                continue
            total += rates.gpus[j]
            if where >= 0 and rates.gpus[j] >= 2:
                used[where] += rates.gpus[j]
            if where >= 0 and rates.gpus[j] > rates.servers[where]:
                break
        else:
            if total <= rates.num_gpus and all(
                u <= cap for u, cap in zip(used, rates.servers, strict=True)
            ):
                best = max(best, sum(prices[j] * r for j, (_, r) in enumerate(combo)))
    return best


@pytest.mark.parametrize("seed", range(8))
def test_pricing_milp_against_enumeration(seed):
    inst = generate("small", seed, num_jobs=5)
    rates = configuration_rates(inst)
    prices = np.random.default_rng(seed).uniform(0.0, 5.0, len(rates.gpus))
    prices[seed % len(prices)] = 0.0  # a job priced 0 is left out of the MILP
    answer = price(rates, prices)
    expected = _enumerated_value(rates, prices)
    assert answer.optimal
    assert answer.value == pytest.approx(expected, rel=1e-7, abs=1e-9)
    assert answer.value <= answer.upper <= expected + 2e-6


@pytest.mark.parametrize("seed", range(4))
def test_a_pricing_node_budget_keeps_an_upper_bound(seed):
    """One node: HiGHS may stop before proving, its dual bound still covers v*."""
    inst = generate("small", seed, num_jobs=5)
    rates = configuration_rates(inst)
    prices = np.random.default_rng(100 + seed).uniform(0.0, 5.0, len(rates.gpus))
    answer = price(rates, prices, max_nodes=1)
    expected = _enumerated_value(rates, prices)
    assert answer.value <= expected + 1e-9 <= answer.upper + 2e-9


def test_same_bound_twice():
    inst = generate("small", 16)
    first, second = lb_configuration(inst), lb_configuration(inst)
    assert first.bound == second.bound and first.info == second.info


def test_a_round_budget_keeps_a_valid_bound():
    inst = three_gpu_rings(5)
    short = lb_configuration(inst, rounds=1)
    assert not short.info["converged"] and short.info["rounds"] == 1
    assert max(closed_form_bounds(inst).values()) <= short.bound <= 15


def test_a_passed_deadline_keeps_the_closed_forms():
    ticks = iter(range(0, 10_000, 100))
    deadline = Deadline(1.0, clock=lambda: float(next(ticks)))
    result = lb_configuration(three_gpu_rings(5), deadline=deadline)
    assert result.time_limit_hit and "column generation" in result.info["stopped"]
    assert result.bound == 12  # gpu_time: no round done before the limit


def test_registered_method_through_the_pipeline():
    res = run_method("rar", "lb_configuration", three_gpu_rings(5), RunOptions(time_limit_s=60))
    assert res.status.value == "bound_only" and res.bound == 15
    assert not res.time_limit_hit and "stopped" not in res.info


def test_above_lb_binpacking_on_some_contention_instances():
    gains = 0
    for seed in range(12):
        inst = generate("contention", seed)
        gains += lb_configuration(inst).bound > lb_binpacking(inst).bound
    assert gains >= 1
