"""Every rar lower bound of ours is a lower bound: at most the optimum the exact search
proves (``small`` seeds 0-99, ``contention`` seeds 0-39: 140 proven optima, each computed
once for every bound) and at most the brute force's optimum on tiny instances, and never
below the closed forms. The bounds: ``lb_binpacking``
(:mod:`ddlsched.models.rar_lb_binpacking`) and ``lb_configuration``
(:mod:`ddlsched.models.rar_lb_configuration`); each module's own tests pin its model."""

from __future__ import annotations

from dataclasses import replace

import pytest
from rar_brute_force import brute_force_makespan
from rar_optima import proven_makespan
from tiers import sweep

from ddlsched.models.rar_bounds import closed_form_bounds
from ddlsched.models.rar_lb_binpacking import lb_binpacking
from ddlsched.models.rar_lb_configuration import lb_configuration
from ddlsched.problems.rar import RarInstance
from ddlsched.workloads.rar import generate

#: Tiny contention-bound instances whose brute force is fast (as in tests/test_rar_contention.py).
TINY_SEEDS = (5, 8, 12, 20, 23, 26, 27, 28, 35, 39, 46, 48, 49, 50, 52, 54, 55, 58, 59, 60)

#: The bounds checked, each a function of the instance that returns a SolveResult.
BOUNDS = {"lb_binpacking": lb_binpacking, "lb_configuration": lb_configuration}


def tiny(seed: int) -> RarInstance:
    inst = generate("contention", seed, num_jobs=3)
    jobs = tuple(replace(j, iterations=max(1, j.iterations // 4)) for j in inst.jobs)
    return replace(inst, jobs=jobs)


PROVEN = [("small", seed) for seed in range(100)] + [("contention", seed) for seed in range(40)]


@pytest.mark.parametrize(("preset", "seed"), sweep(PROVEN, 5))
def test_every_bound_is_below_the_proven_optimum(preset, seed):
    inst = generate(preset, seed)
    opt = proven_makespan(preset, seed)
    closed = max(closed_form_bounds(inst).values())
    for name, bound_of in BOUNDS.items():
        result = bound_of(inst)
        assert not result.time_limit_hit, name
        assert closed <= result.bound <= opt, name
    assert lb_configuration(inst).info["converged"]


@pytest.mark.parametrize("seed", sweep(TINY_SEEDS, 2))
def test_every_bound_is_below_the_brute_force_optimum(seed):
    inst = tiny(seed)
    for name, bound_of in BOUNDS.items():
        bound = bound_of(inst).bound
        # the brute force finds a makespan <= bound unless the optimum exceeds it
        assert brute_force_makespan(inst, below=bound) >= bound, name
