"""Family ``asrpt``: the bound ``lb_lagrange`` (ours; :mod:`ddlsched.models.asrpt_lagrange`).

Checked against proven optima (``exact``) on 120 tiny instances (``tiny`` and
``tiny-comm``, seeds 0-59), against ``lb_sum`` / ``lb_srpt`` / ``lb_busy`` (never
below them), on a hand-computed multiplier, the inner minimisation against a
dense scan, the relaxation's list schedules against the capacity, and through
the method pipeline.
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np
import pytest
from asrpt_optima import GENERATORS, SEEDS
from asrpt_optima import instance as _instance
from asrpt_optima import optimum as _optimum
from tiers import full, sample, sweep

from ddlsched.deadline import Deadline
from ddlsched.models.asrpt import alpha_lbs, lb_srpt, lb_sum
from ddlsched.models.asrpt_comm_bound import lb_busy
from ddlsched.models.asrpt_lagrange import (
    greedy_relaxed_starts,
    lagrangian_value,
    lb_lagrange,
    relaxation_bound,
)
from ddlsched.solvers.result import Status

TOL = 1e-9


@cache
def _bounds(preset: str, seed: int) -> tuple[float, float, float, float]:
    """``lb_sum``, ``lb_srpt``, ``lb_busy`` and the Lagrangian alone (not maxed with lb_busy)."""
    instance = _instance(preset, seed)
    lbs = alpha_lbs(instance)
    return (
        lb_sum(instance, alpha_lbs=lbs),
        lb_srpt(instance, alpha_lbs=lbs),
        lb_busy(instance, alpha_lbs_of=lbs).value_s,
        lb_lagrange(instance, alpha_lbs_of=lbs, slots=200, iterations=300).value_s,
    )


# --------------------------------------------------------------------------- by hand


def test_lagrangian_value_by_hand():
    # three jobs of p = 1 on 1 GPU each, G = 2, all released at 0: OPT of the relaxation
    # is 1 + 1 + 2 = 4. lambda = 1 on [0, 1), 0 on [1, 2): f(0) = 0 + 1 + 1 = 2 and f(1) =
    # 1 + 1 + 0 = 2 for each job, so L = 3 * 2 - G * 1 = 4: the multiplier proves OPT.
    ones = np.ones(3)
    value, starts = lagrangian_value(
        np.zeros(3), ones, ones, 2.0, np.array([0.0, 1.0, 2.0]), np.array([1.0, 0.0])
    )
    assert value == pytest.approx(4.0)
    assert set(starts.tolist()) <= {0.0, 1.0}
    # lambda = 0 is lb_sum
    value, starts = lagrangian_value(
        np.array([0.0, 5.0]), np.array([2.0, 3.0]), np.array([1.0, 2.0]), 2.0,
        np.array([0.0, 10.0]), np.array([0.0]),
    )  # fmt: skip
    assert value == pytest.approx(2.0 + 8.0)
    assert starts.tolist() == [0.0, 5.0]


def test_the_ascent_finds_the_hand_optimum():
    out = relaxation_bound([0.0, 0.0, 0.0], [1.0, 1.0, 1.0], [1, 1, 1], 2.0, iterations=500)
    assert 3.0 + 0.5 < out.value_s <= 4.0 + 1e-9
    assert out.relaxation_ub_s == pytest.approx(4.0)


def _f(s, duration, gpus, boundaries, lam):
    """``f_i(s)`` of the module docstring, written out again."""
    return (
        s
        + duration
        + gpus * (np.interp(s + duration, boundaries, lam) - np.interp(s, boundaries, lam))
    )


def test_inner_minimum_is_exact_against_a_dense_scan():
    """The minimiser's value is attained, and no start on a fine scan beats it."""
    rng = np.random.default_rng(5)
    for _ in range(40):
        boundaries = np.concatenate(([0.0], np.sort(rng.uniform(0, 50, 12)), [60.0]))
        density = rng.uniform(0, 2, len(boundaries) - 1) * (
            rng.uniform(size=len(boundaries) - 1) < 0.6
        )
        release, duration, gpus = (
            rng.uniform(0, 40),
            rng.uniform(0.5, 15),
            float(rng.integers(1, 5)),
        )
        value, starts = lagrangian_value(
            np.array([release]), np.array([duration]), np.array([gpus]), 4.0, boundaries, density
        )
        lam = np.concatenate(([0.0], np.cumsum(density * np.diff(boundaries))))
        capacity = 4.0 * lam[-1]
        scan = _f(np.linspace(release, release + 200.0, 200_001), duration, gpus, boundaries, lam)
        assert value + capacity <= scan.min() + 1e-9
        attained = _f(starts, duration, gpus, boundaries, lam)[0]
        assert attained == pytest.approx(value + capacity, abs=1e-9)
        assert starts[0] >= release


@pytest.mark.parametrize("by_work", [True, False])
def test_relaxed_list_schedule_respects_the_capacity(by_work):
    rng = np.random.default_rng(3)
    releases = rng.uniform(0, 20, 60)
    durations = rng.uniform(0.1, 8, 60)
    gpus = rng.integers(1, 9, 60).astype(float)
    priority = gpus * durations if by_work else releases
    starts = greedy_relaxed_starts(releases, durations, gpus, 10.0, priority)
    assert (starts >= releases).all()
    for t in np.concatenate((starts, starts + durations)):
        running = (starts <= t) & (t < starts + durations)
        assert gpus[running].sum() <= 10.0
        # work-conserving: a released job waiting at a start or end time does not fit
        waiting = (releases <= t) & (t < starts)
        assert (gpus[waiting] > 10.0 - gpus[running].sum()).all()


def test_refuses_bad_input():
    with pytest.raises(ValueError, match="same length"):
        relaxation_bound([0.0], [1.0, 2.0], [1.0], 2.0)
    with pytest.raises(ValueError, match="g_i <= G"):
        relaxation_bound([0.0], [1.0], [3.0], 2.0)


# --------------------------------------------------------------------------- against OPT


@pytest.mark.parametrize("seed", sweep(SEEDS, 4))
@pytest.mark.parametrize("preset", sorted(GENERATORS))
def test_lb_lagrange_is_valid(preset, seed):
    total_sum, _, _, lagrange = _bounds(preset, seed)
    assert lagrange <= _optimum(preset, seed) * (1 + TOL), (preset, seed)
    assert lagrange >= total_sum * (1 - TOL), (preset, seed)  # lambda = 0 is an iterate


def test_lb_lagrange_gains_on_the_proven_set():
    """The test set discriminates: the Lagrangian is strictly above every older bound on
    some instances, and the same ascent with the capacity halved (an invalid relaxation)
    exceeds a proven optimum somewhere, so a wrong capacity term would be caught. (Counts of
    the full tier; the CI tier's every fourth seed asks for a proportionate share.)"""
    better = over = 0
    for preset in GENERATORS:
        for seed in sample(SEEDS, 4):
            total_sum, total_srpt, busy, lagrange = _bounds(preset, seed)
            better += lagrange > max(total_sum, total_srpt, busy) * (1 + 1e-6)
            instance = _instance(preset, seed)
            lbs = alpha_lbs(instance)
            halved = relaxation_bound(
                [j.arrival_s for j in instance.jobs],
                [j.iterations * lbs[j.config].value_s for j in instance.jobs],
                [instance.configs[j.config].num_gpus for j in instance.jobs],
                instance.cluster.num_gpus / 2,
                slots=200,
                iterations=300,
            ) if all(instance.configs[j.config].num_gpus <= instance.cluster.num_gpus / 2
                     for j in instance.jobs) else None  # fmt: skip
            over += halved is not None and halved.value_s > _optimum(preset, seed) * (1 + 1e-6)
    assert better >= (10 if full() else 2)
    assert over >= 1


@cache
def _patient(preset: str, seed: int) -> float:
    """The Lagrangian alone with the testbed suite's ascent (2,000 iterations, patience 50)."""
    instance = _instance(preset, seed)
    return lb_lagrange(
        instance, alpha_lbs_of=alpha_lbs(instance), slots=200, iterations=2000, patience=50
    ).value_s


@pytest.mark.parametrize("preset", sorted(GENERATORS))
def test_a_patient_ascent_is_valid_and_climbs_further(preset):
    """Patience decides the strength only: never above a proven optimum (the even seeds,
    30 instances per preset; every twelfth seed in the CI tier, whose optima the other
    sampled tests share), and at least the default ascent's bound on most of them."""
    higher = lower = 0
    for seed in sample(SEEDS[::2], 6):
        patient, default = _patient(preset, seed), _bounds(preset, seed)[3]
        assert patient <= _optimum(preset, seed) * (1 + TOL), (preset, seed)
        higher += patient > default * (1 + 1e-9)
        lower += patient < default * (1 - 1e-9)
    assert higher >= 1 and lower <= higher, (higher, lower)


def test_patience_on_a_burst():
    """Thirty unit jobs of 1-3 GPUs released together on 4 GPUs: the patient ascent's
    bound is strictly above the default ascent's (the default halves its step too soon)."""
    rng = np.random.default_rng(7)
    gpus = rng.integers(1, 4, 30).astype(float)
    durations = rng.uniform(1.0, 5.0, 30)
    releases = np.zeros(30)
    default = relaxation_bound(releases, durations, gpus, 4.0, slots=200, iterations=2000)
    patient = relaxation_bound(
        releases, durations, gpus, 4.0, slots=200, iterations=2000, patience=50
    )
    assert patient.value_s > default.value_s * (1 + 1e-4), (patient, default)
    assert patient.value_s <= patient.relaxation_ub_s * (1 + TOL)
    with pytest.raises(ValueError, match="patience must be at least 1"):
        relaxation_bound(releases, durations, gpus, 4.0, patience=0)


# --------------------------------------------------------------------------- pipeline


def test_lb_lagrange_through_the_pipeline(solve):
    instance = _instance("tiny", 3)
    result = solve("asrpt", "lb_lagrange", instance, slots=200, iterations=300)
    assert result.status is Status.BOUND_ONLY
    total_sum, total_srpt, busy, lagrange = _bounds("tiny", 3)
    assert result.bound == pytest.approx(max(busy, lagrange))
    assert result.bound >= max(total_sum, total_srpt) * (1 - TOL)
    assert result.info["lb_busy"] == pytest.approx(busy)
    releases = math.fsum(j.arrival_s for j in instance.jobs)
    assert result.info["flow_bound"] == pytest.approx(result.bound - releases)
    assert result.info["relaxation_ub"] >= result.info["lagrangian"] * (1 - TOL)


def test_an_expired_deadline_keeps_a_valid_bound():
    instance = _instance("tiny-comm", 4)
    lbs = alpha_lbs(instance)
    deadline = Deadline(1e-9)
    out = lb_lagrange(instance, deadline, alpha_lbs_of=lbs)
    assert out.stopped == "time limit" or out.iterations == 1
    assert out.value_s == pytest.approx(lb_sum(instance, alpha_lbs=lbs))
