"""The rigid-and-simultaneous tests of ``models/rar_lb_rigid.py``: valid, and what each sees.

Hand-computed instances: three 2-GPU rings on one 3-GPU server (only one runs at a time: the
optimum 18 is what the blocks of two GPUs prove, the closed forms and ``lb_binpacking`` say 12);
two rings longer than half the makespan whose GPUs meet in the middle (energetic reasoning).
Validity: at most the optimum the exact search proves (``small`` seeds 0-19; seeds 0-99 and
``contention`` 0-39 are ``benchmarks/rar_rigid_bounds.py --proven 100 40``) and the brute
force's optimum on tiny instances; monotone in the makespan tested.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from rar_brute_force import brute_force_makespan
from rar_optima import proven_makespan
from tiers import sweep

from ddlsched.models.rar_bounds import closed_form_bounds
from ddlsched.models.rar_lb_binpacking import lb_binpacking
from ddlsched.models.rar_lb_rigid import (
    RigidJobs,
    blocks_refute,
    energetic_refutes,
    least_unrefuted,
    rigid_jobs,
    rigid_refutes,
)
from ddlsched.models.rar_search import search_exact
from ddlsched.problems.rar import Network, RarInstance, RarJob
from ddlsched.workloads.rar import generate

NETWORK = Network(b_e=1.0, b_i=1000.0, C=1000.0, alpha=0.0, xi1=1e-6, xi2=1e-6)


def two_gpu_rings_on_three_gpus(count: int) -> RarInstance:
    """``count`` 2-GPU rings of 18 iterations on one 3-GPU server, 6 slots each.

    ``tau = 0.3 + 2 * 0.2 * (1/2) / 1000 + 0.2 * (1/2) / 1000 + 1e-6 ~ 0.30025``:
    3 iterations a slot, 6 slots; one server, so no ring can split."""
    jobs = tuple(
        RarJob(
            id=f"r{k}",
            gpus=2,
            iterations=18,
            grad_size=0.2,
            batch=1,
            fwd_per_sample=0.0,
            bwd=0.3,
        )
        for k in range(count)
    )
    return RarInstance(servers=(3,), network=NETWORK, jobs=jobs, horizon=60)


def test_blocks_of_two_see_one_ring_at_a_time():
    """gpu_time ceil(3 * 2 * 6 / 3) = 12, lb_binpacking 12 (6 items of 6 in 3 GPU bins);
    blocks of 2: 3 items of 6 in floor(3 / 2) = 1 bin, so 18, the optimum."""
    inst = two_gpu_rings_on_three_gpus(3)
    jobs = rigid_jobs(inst)
    assert jobs.durations == (6, 6, 6) and jobs.num_gpus == 3
    assert max(closed_form_bounds(inst).values()) == 12
    assert lb_binpacking(inst).bound == 12
    assert blocks_refute(jobs, 17, 2) and not blocks_refute(jobs, 18, 2)
    assert not blocks_refute(jobs, 12, 1)  # the GPU bins alone see nothing
    bound, refuted = least_unrefuted(inst)
    assert bound == 18
    assert [c for c, _ in refuted] == list(range(12, 18))
    opt = search_exact(inst)
    assert opt.proven and opt.makespan == 18


def test_long_rings_meet_in_the_middle():
    """A 3-GPU and a 2-GPU job of 6 slots on 4 GPUs: within C = 11 both run in [5, 6)
    (5 GPUs > 4); within 12 one may follow the other. Blocks of 2: 1 + 1 <= 2, no refutation."""
    jobs = RigidJobs(gpus=(3, 2), durations=(6, 6), num_gpus=4)
    assert energetic_refutes(jobs, 11)
    assert not energetic_refutes(jobs, 12)
    assert not energetic_refutes(jobs, 11, block=2)
    assert energetic_refutes(jobs, 5)  # a job longer than the makespan


def test_monotone_in_the_makespan():
    """A refuted makespan has every smaller one refuted (the scan's premise)."""
    for seed in range(6):
        inst = generate("small", seed)
        jobs = rigid_jobs(inst)
        bound, _ = least_unrefuted(inst)
        for capacity in range(max(jobs.durations), bound):
            assert rigid_refutes(jobs, capacity)[0], (seed, capacity)
        for capacity in range(bound, bound + 4):
            assert not rigid_refutes(jobs, capacity)[0], (seed, capacity)


@pytest.mark.parametrize("seed", sweep(range(20), 5))
def test_below_the_proven_optimum(seed):
    inst = generate("small", seed)
    bound, _ = least_unrefuted(inst)
    assert max(closed_form_bounds(inst).values()) <= bound <= proven_makespan("small", seed)


@pytest.mark.parametrize("seed", (5, 8, 12, 20, 23))
def test_below_the_brute_force_optimum(seed):
    inst = generate("contention", seed, num_jobs=3)
    inst = replace(
        inst, jobs=tuple(replace(j, iterations=max(1, j.iterations // 4)) for j in inst.jobs)
    )
    bound, _ = least_unrefuted(inst)
    assert brute_force_makespan(inst, below=bound) >= bound
