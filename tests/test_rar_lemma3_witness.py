"""A certified counterexample to SJF-BCO's Lemma 3 (makespan <= n_g W_max), found by
``benchmarks/worst_inequalities.py`` (seed 1) and cut to one job.

Lemma 3's proof bounds each GPU's busy time by W_max, the largest accumulated *estimated*
time ``sum rho_hat / u``. Under the paper's own assumption ``rho_hat in [l rho, u rho]`` the
executed time ``rho`` may exceed ``rho_hat / u``; with the paper's progress rule (``floor(1 /
tau)`` iterations per slot) it does whenever ``1 / tau`` is not an integer. One job on one
GPU (n_g = 1, no waiting, no contention) then runs ``ceil(F / floor(1 / tau))`` slots
against W_max = ``F tau``: 8 slots against 7.05.
"""

from __future__ import annotations

import math

import pytest

from ddlsched.problems.rar import Network, RarInstance, RarJob
from ddlsched.problems.rar_timing import iteration_time
from ddlsched.registry import RunOptions, run_method

JOB = RarJob(
    id="j0",
    gpus=1,
    iterations=136,
    grad_size=0.00857833792254672,
    batch=8,
    fwd_per_sample=0.0017473509525543613,
    bwd=0.035842918962241906,
)
NETWORK = Network(b_e=1.0, b_i=20.0, C=50.0, alpha=0.1, xi1=1.0, xi2=0.002)


def test_lemma3_fails_on_one_single_gpu_job():
    instance = RarInstance((2,), NETWORK, (JOB,), 17, "floor")
    tau = iteration_time(JOB, NETWORK, 1, 0)
    assert 0.0518 < tau < 0.0519 and 1 / tau % 1 > 0  # 19.3 iterations a slot, 19 counted
    result = run_method("rar", "sjf_bco", instance, RunOptions())
    w_max, n_g = result.info["max_accumulated"], result.info["theorem5"]["n_g"]
    assert w_max == pytest.approx(JOB.iterations * tau)  # rho_hat = F tau, one job on its GPU
    assert result.objective == math.ceil(JOB.iterations / math.floor(1 / tau)) == 8
    assert n_g == 1 and result.objective > n_g * w_max  # 8 > 7.05: Lemma 3 fails
    # Theorem 5 still holds: 8 slots is the optimum here, within n_g phi u / l of it.
    assert result.objective <= result.info["theorem5"]["bound"] * 8
