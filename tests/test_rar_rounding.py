"""rar.lp_rounding: LP bound <= optimum <= rounded makespan, reproducible, a hand-computed LP."""

from __future__ import annotations

import json

import pytest

from ddlsched.cli import main
from ddlsched.problems.rar import Network, RarInstance, RarJob
from ddlsched.problems.rar_schedule import evaluate, schedule_to_json
from ddlsched.solvers.result import Status
from ddlsched.workloads.rar import generate

NET = Network(b_e=1.0, b_i=20.0, C=50.0, alpha=0.1, xi1=1.0, xi2=0.002)


def job(job_id: str, gpus: int, iterations: int, grad: float = 0.05) -> RarJob:
    return RarJob(job_id, gpus, iterations, grad, 32, 0.0002, 0.004)


def two_gang_jobs() -> RarInstance:
    """Two 2-GPU jobs of 3 slots each on one 2-GPU server (tau = 0.0124, 80 iterations a slot)."""
    return RarInstance((2,), NET, (job("a", 2, 240, 0.0), job("b", 2, 240, 0.0)), 10)


def test_lp_value_of_two_gang_jobs_is_hand_computed(solve):
    """Two jobs of duration d = 3 that each need the whole server: the LP value is 1.5 d = 4.5.

    The model horizon is the LS schedule's makespan, 2d = 6 (the jobs run one
    after the other), so starts are 0..d. Let ``x[j,t]`` be the LP columns and
    ``act(u)`` the total active mass in slot ``u``; capacity gives
    ``act(u) <= 1`` and the total activity is ``2d``, so
    ``sum_u u act(u) >= 0 + 1 + ... + (2d - 1) = d (2d - 1)``. The left side is
    ``sum_j sum_t x[j,t] (d t + d (d - 1) / 2) = d S + d (d - 1)`` with
    ``S = sum_j sum_t t x[j,t]``, hence ``S >= d``: the mean completions
    ``d + sum_t t x[j,t]`` of the two jobs add up to at least ``3d``, and
    ``C >= max_j`` of them is at least ``1.5 d``. The split ``x[j,0] =
    x[j,d] = 1/2`` for both jobs fills every slot exactly and attains it. So
    the LP value is 4.5, its bound ``ceil(4.5) = 5``, below the optimum 6 (the
    GPU-time closed form, ``2 * 3 * 2 / 2 = 6``, is the method's bound).
    """
    inst = two_gang_jobs()
    result = solve("rar", "lp_rounding", inst)
    assert result.info["slot_width"] == 1 and result.info["model_horizon"] == 6
    assert result.info["lp_value"] == pytest.approx(4.5)
    assert result.info["lp_bound"] == 5
    assert result.bound == 6 and result.objective == 6 and result.status is Status.OPTIMAL


def _instances():
    yield "two-gang", two_gang_jobs()
    yield (
        "forced-split",
        RarInstance((2, 1), NET, (job("a", 3, 60), job("b", 2, 40), job("c", 1, 30)), 9),
    )
    yield (
        "shared-alpha1",
        RarInstance(
            (2, 2, 2),
            Network(1.0, 20.0, 50.0, 1.0, 1.0, 0.002),
            (job("a", 3, 30), job("b", 3, 30), job("c", 1, 40)),
            8,
        ),
    )
    for seed in (0, 1, 2, 3):
        yield f"small-{seed}", generate("small", seed)


@pytest.mark.parametrize(("name", "inst"), list(_instances()), ids=lambda v: str(v)[:14])
def test_lp_bound_below_optimum_below_rounded_makespan(name, inst, solve):
    exact = solve("rar", "exact", inst)
    assert exact.status is Status.OPTIMAL, name
    result = solve("rar", "lp_rounding", inst, trials=8)
    opt = exact.objective
    assert result.info["lp_bound"] <= opt and result.bound <= opt
    assert all(m >= opt for m in result.info["rounded_overruns"])
    feasible = [m for m in result.info["rounded_makespans"] if m >= 0]
    if not feasible:  # every rounding overran the horizon T: a bound only
        assert result.status is Status.BOUND_ONLY and result.objective is None
        return
    assert result.objective >= opt
    assert result.objective == evaluate(inst, result.schedule).makespan
    assert min(feasible) == result.objective and all(m >= opt for m in feasible)


def test_same_seed_same_schedule_and_draws(solve):
    inst = generate("small", 7)
    a, b = (solve("rar", "lp_rounding", inst, seed=3, trials=6) for _ in range(2))
    assert a.info["rounded_makespans"] == b.info["rounded_makespans"]
    assert schedule_to_json(a.schedule, a.evaluation) == schedule_to_json(b.schedule, b.evaluation)


def test_capacity_scaling_keeps_the_unscaled_bound(solve):
    inst = generate("small", 1)
    plain = solve("rar", "lp_rounding", inst, trials=4)
    scaled = solve("rar", "lp_rounding", inst, trials=4, delta=0.5)
    assert scaled.info["lp_bound"] == plain.info["lp_bound"]
    assert scaled.info["scaled_lp_value"] is None or (
        scaled.info["scaled_lp_value"] >= plain.info["lp_value"] - 1e-6
    )
    assert scaled.objective >= solve("rar", "exact", inst).objective


@pytest.mark.parametrize("method", ["lp_rounding", "timeindexed"])
@pytest.mark.parametrize(("width", "budget_mb"), [("1", "64"), ("auto", "1")])
def test_a_model_that_cannot_fit_is_refused_before_it_is_built(
    method, width, budget_mb, tmp_path, capsys, monkeypatch
):
    """Paper preset: slot width 1 in 64 MiB, or any width in 1 MiB: one line, exit 2, not built."""
    import ddlsched.models.rar_timeindexed as rar_timeindexed

    def never(*args, **kwargs):  # pragma: no cover - the refusal comes first
        raise AssertionError("the model was built")

    monkeypatch.setattr(rar_timeindexed, "_build_columns", never)
    path = tmp_path / "paper.json"
    generate("paper", 0).save(path)
    args = ["solve", "rar", str(path), "--method", method, "--param", f"slot_width={width}"]
    code = main([*args, "--memory-budget", budget_mb, "--json"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1
    assert "memory budget" in err[0] and "slot_width" in err[0]


def test_lp_rounding_reports_its_distribution(tmp_path, capsys):
    path = tmp_path / "small.json"
    generate("small", 4).save(path)
    code = main(
        ["solve", "rar", str(path), "--method", "lp_rounding", "--param", "trials=5", "--json"]
    )
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["status"] in ("optimal", "feasible")
    info = out["info"]
    assert len(info["rounded_makespans"]) == 5 and len(info["ratios_to_lp_bound"]) == 5
    assert info["best_rounded"] == out["objective"] == info["rounded_summary"]["min"]
