"""``contention_lb`` (``models/rar_contention_bound.py``): a valid, contention-aware lower bound.

Checks: bound <= the proven optimum on 100 small instances (``contention``
seeds 0-39 and ``small`` seeds 0-39 proven by the exact search, 20 tiny
contention-bound instances by the independent brute force of
``tests/rar_brute_force.py``); the bound is never below ``load_lb`` and is
strictly above it on most ``contention`` instances; a hand-computed
instance (two must-split rings on three servers) where ``load_lb = 10``,
``link = 14`` and ``serial = 20 = OPT``; no contention part without
must-split jobs; the ``serial`` enumeration is skipped on large clusters.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from rar_brute_force import brute_force_makespan
from rar_optima import proven_makespan
from tiers import sweep

from ddlsched.models.rar_bounds import load_lb
from ddlsched.models.rar_contention_bound import (
    contention_components,
    contention_lb,
    must_split_jobs,
)
from ddlsched.models.rar_search import search_exact
from ddlsched.problems.rar import Network, RarInstance, RarJob
from ddlsched.registry import RunOptions, run_method
from ddlsched.workloads.rar import generate

#: Tiny contention-bound instances whose brute force is fast (as in tests/test_rar_contention.py).
TINY_SEEDS = (5, 8, 12, 20, 23, 26, 27, 28, 35, 39, 46, 48, 49, 50, 52, 54, 55, 58, 59, 60)


def tiny(seed: int) -> RarInstance:
    inst = generate("contention", seed, num_jobs=3)
    jobs = tuple(replace(j, iterations=max(1, j.iterations // 4)) for j in inst.jobs)
    return replace(inst, jobs=jobs)


def two_rings() -> RarInstance:
    """Two 4-GPU rings on three 3-GPU servers, communication-bound, strong contention.

    Eq. 8 with share ``m (G-1)/G = 0.5``, ``b_e = 100``, ``C = 50``,
    ``xi2 = 5e-4``: ``tau(2, p=1) = 0.01 f + 0.01 + 0.001 = 0.021`` ->
    47 iterations per slot, 470 iterations in 10 slots (``load_lb`` = 10:
    longest job; GPU time ceil(80 / 9) = 9). Any two rings spread over
    three servers share one (``p = 2``, ``f(2, 2) = 4``): ``tau = 0.051``
    -> 19 per slot (three servers: 0.052 -> 19 of 45), so together they
    process at most 19/47 + 19/45 < 1 contention-free slot per slot:
    ``serial = 10 + 10 = 20``. ``link``: each server takes at most
    ``psi_s = 1`` (one ring at rate 1, two at 0.84), three servers;
    each ring crosses two servers: ``ceil(2 * 2 * 10 / 3) = 14``.
    """
    network = Network(b_e=100.0, b_i=2000.0, C=50.0, alpha=2.0, xi1=1.0, xi2=5e-4)
    jobs = tuple(
        RarJob(
            id=name,
            gpus=4,
            iterations=470,
            grad_size=2.0 / 3.0,
            batch=1,
            fwd_per_sample=0.0,
            bwd=0.0,
        )
        for name in ("a", "b")
    )
    return RarInstance(servers=(3, 3, 3), network=network, jobs=jobs, horizon=40)


def _bound(instance: RarInstance) -> tuple[float, float]:
    """(contention_lb, load_lb) of an instance."""
    return contention_lb(instance).bound, load_lb(instance).bound


def test_hand_computed_two_rings():
    inst = two_rings()
    result = contention_lb(inst)
    parts = result.info["components"]
    assert load_lb(inst).bound == 10
    assert parts["link"] == 14 and parts["serial"] == 20
    assert result.bound == 20
    opt = search_exact(inst)
    assert opt.proven and opt.makespan == 20


def test_registered_method_through_the_pipeline():
    res = run_method("rar", "contention_lb", two_rings(), RunOptions(time_limit_s=30))
    assert res.status.value == "bound_only" and res.bound == 20


@pytest.mark.parametrize("seed", sweep(range(40), 5))
def test_below_the_optimum_on_contention(seed):
    inst = generate("contention", seed)
    bound, base = _bound(inst)
    assert base <= bound <= proven_makespan("contention", seed)


@pytest.mark.parametrize("seed", sweep(range(40), 5))
def test_below_the_optimum_on_small(seed):
    inst = generate("small", seed)
    bound, base = _bound(inst)
    assert base <= bound <= proven_makespan("small", seed)


@pytest.mark.parametrize("seed", TINY_SEEDS)
def test_below_the_brute_force_optimum(seed):
    inst = tiny(seed)
    bound, _ = _bound(inst)
    # the brute force finds a makespan <= bound unless the optimum exceeds it
    assert brute_force_makespan(inst, below=bound) >= bound


def test_strictly_above_load_lb_on_most_contention_instances():
    gains = 0
    for seed in range(40):
        bound, base = _bound(generate("contention", seed))
        gains += bound > base
    assert gains >= 30


def test_no_contention_part_without_must_split_rings():
    inst = generate("paper-contention", 0)
    assert max(inst.servers) == 32 and not must_split_jobs(inst)
    assert contention_components(inst) == {"link": 0.0, "serial": 0.0}


def test_serial_enumeration_is_skipped_on_large_clusters():
    base = two_rings()
    inst = replace(base, servers=(3,) * 12)
    parts = contention_components(inst)
    assert parts["serial"] is None and parts["link"] > 0
