"""Regressions found in review: solver tolerances, odd networks, impossible horizons."""

from __future__ import annotations

import random

import pytest
from rar_brute_force import brute_force_makespan
from tiers import sweep

from ddlsched.errors import InvalidInstanceError
from ddlsched.problems.rar import Network, RarInstance, RarJob
from ddlsched.registry import RunOptions, run_method
from ddlsched.solvers.result import Status
from ddlsched.workloads.rar import small


def random_tiny(seed: int) -> RarInstance:
    """The reviewer's fuzz generator: 2-4 jobs on up to 3 servers, T = 10."""
    r = random.Random(seed)
    servers = r.choice([(2, 2), (2, 1), (3,), (2, 2, 1), (1, 1, 1), (2, 1, 1), (3, 2), (4, 2)])
    net = Network(
        b_e=1.0,
        b_i=r.choice([5.0, 20.0]),
        C=50.0,
        alpha=r.choice([0, 0.3, 1.0]),
        xi1=r.choice([0.5, 1.0]),
        xi2=r.choice([0.002, 0.01]),
    )
    jobs = [
        RarJob(
            f"j{i}",
            r.randint(1, min(3, sum(servers))),
            r.randint(10, 90),
            r.uniform(0.005, 0.08),
            32,
            0.0002,
            r.uniform(0.002, 0.02),
        )
        for i in range(r.choice([2, 3, 4]))
    ]
    return RarInstance(servers, net, tuple(jobs), 10, r.choice(["floor", "fractional"]))


# 62: HiGHS stopped at incumbent 8.999999 / bound 8.000000000000002 with a gap
# limit just below 1 and the continuous makespan; the optimum is 8. The other
# seeds are those of 0..19 whose brute force takes under 2 s (3, 7, 8, 11 and
# 17 take 4-50 s and pass too).
@pytest.mark.parametrize(
    "seed", sweep([62, 0, 1, 2, 4, 5, 6, 9, 10, 12, 13, 14, 15, 16, 18, 19], 3)
)
def test_bare_milp_matches_brute_force_on_random_tiny_instances(seed, solve):
    inst = random_tiny(seed)
    expected = brute_force_makespan(inst)
    report = solve("rar", "exact", inst, presolve_bounds=False, search="never")
    if expected == float("inf"):
        assert report.status is Status.INFEASIBLE
    else:
        assert report.status is Status.OPTIMAL
        assert report.objective == expected


def test_intra_server_bandwidth_below_inter_server_is_rejected():
    with pytest.raises(InvalidInstanceError, match="b_i"):
        Network(b_e=20.0, b_i=1.0, C=50.0, alpha=0.1, xi1=1.0, xi2=0.002)


def test_placements_without_progress_are_excluded_not_crashing(solve):
    # a 4-GPU job runs on the 4-GPU server (tau < 1) but not over 4 servers (tau > 1)
    net = Network(b_e=1.0, b_i=20.0, C=50.0, alpha=0.1, xi1=1.0, xi2=0.3)
    job = RarJob("big", 4, 6, 0.05, 32, 0.0002, 0.004)
    inst = RarInstance((4, 1, 1, 1, 1), net, (job, RarJob("s", 1, 8, 0.0, 8, 0.0002, 0.004)), 10)
    expected = brute_force_makespan(inst)
    assert solve("rar", "exact", inst, presolve_bounds=False, search="never").objective == expected
    assert solve("rar", "timeindexed", inst).bound <= expected
    assert solve("rar", "load_lb", inst).bound <= expected
    assert run_method("rar", "exact", inst, RunOptions(time_limit_s=30)).objective == expected


def test_job_longer_than_the_horizon_makes_the_instance_infeasible(solve):
    net = Network(b_e=1.0, b_i=20.0, C=50.0, alpha=0.1, xi1=1.0, xi2=0.002)
    inst = RarInstance((2,), net, (RarJob("long", 1, 5000, 0.0, 32, 0.0002, 0.004),), 30)
    assert solve("rar", "timeindexed", inst).status is Status.INFEASIBLE
    assert (
        solve("rar", "exact", inst, presolve_bounds=False, search="never").status
        is Status.INFEASIBLE
    )
    assert run_method("rar", "exact", inst, RunOptions(time_limit_s=30)).status is Status.INFEASIBLE


def test_small_preset_with_an_impossible_horizon_is_an_error():
    with pytest.raises(InvalidInstanceError, match="cannot fit"):
        small(0, max_horizon=3)
