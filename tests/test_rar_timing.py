"""Hand-computed values of the rar timing model (Eqs. 6-9) and its properties."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ddlsched.problems.rar import Network, RarJob
from ddlsched.problems.rar_timing import (
    bandwidth_degradation,
    contention_levels,
    execution_slots,
    iteration_time,
    iterations_per_slot,
)

NET = Network(b_e=1.0, b_i=20.0, C=50.0, alpha=0.1, xi1=1.0, xi2=0.002)
# compute = df * M + db = 0.0002 * 32 + 0.004 = 0.0104
JOB4 = RarJob(
    "j", gpus=4, iterations=1000, grad_size=0.05, batch=32, fwd_per_sample=0.0002, bwd=0.004
)
JOB1 = RarJob(
    "s", gpus=1, iterations=100, grad_size=0.05, batch=32, fwd_per_sample=0.0002, bwd=0.004
)


def test_degradation_is_one_without_contention():
    assert bandwidth_degradation(0.1, 1) == 1.0
    assert bandwidth_degradation(0.1, 2) == pytest.approx(2.1)
    assert bandwidth_degradation(0.0, 3) == 3.0


def test_not_split_uses_intra_server_bandwidth():
    # share = m (G-1)/G = 0.0375; 2*0.0375/20 + 0.0375/50 + 0.002*1 + 0.0104
    assert iteration_time(JOB4, NET, 1, 0) == pytest.approx(0.00375 + 0.00075 + 0.002 + 0.0104)
    # contention is irrelevant on one server
    assert iteration_time(JOB4, NET, 1, 5) == iteration_time(JOB4, NET, 1, 0)


def test_split_contention_levels_one_two_three():
    base = 0.00075 + 0.002 * 2 + 0.0104
    assert iteration_time(JOB4, NET, 2, 1) == pytest.approx(0.075 * 1.0 + base)  # f = 1
    assert iteration_time(JOB4, NET, 2, 2) == pytest.approx(0.075 * 2.1 + base)  # f = 2.1
    assert iteration_time(JOB4, NET, 2, 3) == pytest.approx(0.075 * 3.2 + base)  # f = 3.2
    assert iteration_time(JOB4, NET, 3, 1) == pytest.approx(0.075 + 0.00075 + 0.006 + 0.0104)


def test_xi1_scales_contention_and_k_below_one_is_clamped():
    net = Network(b_e=1.0, b_i=20.0, C=50.0, alpha=0.1, xi1=0.5, xi2=0.002)
    base = 0.00075 + 0.004 + 0.0104
    # k = 0.5 * 3 = 1.5, f = 1.5 + 0.1 * 0.5 = 1.55
    assert iteration_time(JOB4, net, 2, 3) == pytest.approx(0.075 * 1.55 + base)
    # k = 0.5 * 1 = 0.5 < 1: bandwidth b_e / f(alpha, 1) = b_e
    assert iteration_time(JOB4, net, 2, 1) == pytest.approx(0.075 + base)


def test_single_gpu_job_has_no_communication_terms():
    assert iteration_time(JOB1, NET, 1, 0) == pytest.approx(0.002 + 0.0104)


def test_floor_versus_fractional_progress():
    tau = iteration_time(JOB4, NET, 2, 2)  # 0.17265
    assert iterations_per_slot(tau, "floor") == 5
    assert iterations_per_slot(tau, "fractional") == pytest.approx(1 / 0.17265)
    # floor is robust to binary rounding: 1/0.02 is 49.999... in floating point
    assert iterations_per_slot(0.02, "floor") == 50
    assert iterations_per_slot(1.5, "floor") == 0
    # 1000 iterations at 59 per slot (tau = 0.0169): ceil(1000/59) = 17 slots
    assert execution_slots(JOB4, NET, 1, 0, "floor") == 17
    assert execution_slots(JOB4, NET, 1, 0, "fractional") == math.ceil(1000 * 0.0169)


def test_contention_levels_eq6():
    placements = {
        "a": {0: 1, 1: 1},  # split on 0 and 1
        "b": {1: 2, 2: 1},  # split on 1 and 2
        "c": {2: 4},  # on one server: p = 0
        "d": {2: 1, 3: 1},  # split on 2 and 3
    }
    levels = contention_levels(placements)
    # server 1 hosts splits of a, b (2); server 2 hosts b, d (2); server 0: a (1)
    assert levels == {"a": 2, "b": 2, "c": 0, "d": 2}
    assert contention_levels({"x": {0: 1, 1: 1}}) == {"x": 1}


@given(
    gpus=st.integers(2, 32),
    grad=st.floats(0.0, 1.0),
    alpha=st.floats(0.0, 2.0),
    xi1=st.floats(0.01, 1.0),
    n=st.integers(2, 8),
    p=st.integers(1, 16),
)
def test_tau_non_decreasing_in_contention_and_servers(gpus, grad, alpha, xi1, n, p):
    net = Network(b_e=1.0, b_i=20.0, C=50.0, alpha=alpha, xi1=xi1, xi2=0.001)
    job = RarJob("j", gpus, 100, grad, 16, 0.0001, 0.001)
    assert iteration_time(job, net, n, p + 1) >= iteration_time(job, net, n, p)
    assert iteration_time(job, net, n + 1, p) >= iteration_time(job, net, n, p)
    assert iteration_time(job, net, 2, 1) >= iteration_time(job, net, 1, 0)
