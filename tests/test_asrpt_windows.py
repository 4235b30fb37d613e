"""Family ``asrpt``: the CP-SAT window moves of ``improve`` (ours;
:mod:`ddlsched.models.asrpt_windows`).

Checked: a move never worsens a schedule, its output passes the evaluator, the same
seed gives the same schedule, a window holding every job of a small 1-GPU-server
instance reaches ``exact``'s proven optimum from a poor start, ``improve`` runs
the moves behind its switch, and a window solve the deadline ends (not the
deterministic budget) stops the moves with ``time limit`` and ``time_limit_hit``,
even when it is the window that reaches ``max_windows``.
"""

from __future__ import annotations

import dataclasses
import math

import pytest
from asrpt_crowded import crowded

from ddlsched.deadline import Deadline
from ddlsched.heuristics.asrpt_packed import PackedDecoder, arrival_order
from ddlsched.models import asrpt_windows
from ddlsched.models.asrpt_exact import solve_exact
from ddlsched.models.asrpt_windows import WindowSettings, cpsat_windows, improve_with_windows
from ddlsched.problems.asrpt import AsrptInstance
from ddlsched.problems.asrpt_schedule import AsrptSchedule, evaluate, schedule_to_json
from ddlsched.registry import RunOptions, run_method
from ddlsched.solvers.cpsat import solve_cpsat
from ddlsched.solvers.result import Status

#: Integer-grid slack of a window move (module docstring: a few units of the last
#: finish over TIME_STEPS per job), relative.
GRID_RTOL = 1e-4


def _config(replicas: int) -> dict:
    stage = {"replicas": replicas, "fwd_s": 0.05, "bwd_s": 0.05, "in_bytes": 0.0,
             "out_bytes": 0.0, "param_bytes": 0.0}  # fmt: skip
    return {"allreduce": "rar", "stages": [stage]}


def _one_gpu_servers() -> AsrptInstance:
    """3 servers x 1 GPU, 7 jobs of 1-3 GPUs arriving together: placements equivalent."""
    gpus = [3, 1, 2, 1, 3, 2, 1]
    iterations = [12, 2, 4, 3, 8, 2, 1]
    arrivals = [0.0, 0.1, 0.1, 0.2, 0.3, 0.3, 0.4]
    data = {
        "family": "asrpt",
        "schema_version": 1,
        "cluster": {"servers": 3, "gpus_per_server": 1, "b_inter": 1.25e9, "b_intra": 1.25e9},
        "configs": {f"c{k}": _config(k) for k in (1, 2, 3)},
        "jobs": [],
    }
    for i, (g, n, a) in enumerate(zip(gpus, iterations, arrivals, strict=True)):
        job = {"id": f"j{i}", "arrival_s": a, "config": f"c{g}", "iterations": n}
        data["jobs"].append(job | {"predicted_iterations": float(n), "group": f"c{g}"})
    return AsrptInstance.from_dict(data)


def _poor_schedule(instance: AsrptInstance) -> AsrptSchedule:
    """The packed list in reverse arrival order (long jobs first on the crowded sets)."""
    decoder = PackedDecoder(instance)
    order = arrival_order(instance)[::-1]
    return decoder.schedule(order, decoder.decode(order))


def _moves(instance: AsrptInstance, schedule: AsrptSchedule, **settings):
    return cpsat_windows(instance, schedule, WindowSettings(**settings), Deadline(120))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_moves_never_worsen_and_stay_feasible(seed):
    instance = crowded(seed, 14, rng_seed=2000 + seed, iterations=(5, 30))
    start = _poor_schedule(instance)
    before = evaluate(instance, start).total_completion_s
    moved, info, cut = _moves(instance, start, window=5, max_windows=6, dtime=0.2, seed=seed)
    after = evaluate(instance, moved).total_completion_s  # raises if infeasible
    assert not cut
    assert after <= before
    assert info["cpsat_model"] == "per_server"
    assert info["cpsat_windows_solved"] >= 1
    if info["cpsat_windows_accepted"]:
        assert after < before
        assert info["cpsat_gain"] == pytest.approx(1 - after / before)
    else:
        assert moved is start


def test_moves_gain_on_a_poor_start():
    instance = _one_gpu_servers()
    start = _poor_schedule(instance)
    moved, info, _ = _moves(instance, start, window=3)
    assert info["cpsat_model"] == "pooled"
    assert info["cpsat_windows_accepted"] >= 1
    assert (
        evaluate(instance, moved).total_completion_s < evaluate(instance, start).total_completion_s
    )


def test_moves_are_deterministic():
    instance = crowded(1, 14, rng_seed=2001, iterations=(5, 30))
    start = _poor_schedule(instance)
    runs = [_moves(instance, start, window=6, max_windows=4, dtime=0.2, seed=3) for _ in range(2)]
    assert schedule_to_json(runs[0][0]) == schedule_to_json(runs[1][0])
    assert runs[0][1] == runs[1][1]


@pytest.mark.slow
def test_a_window_of_every_job_reaches_the_proven_optimum():
    instance = _one_gpu_servers()
    exact = solve_exact(instance, time_limit_s=60)
    assert exact.status is Status.OPTIMAL
    optimum = evaluate(instance, exact.schedule).total_completion_s
    start = _poor_schedule(instance)
    assert evaluate(instance, start).total_completion_s > optimum * (1 + 10 * GRID_RTOL)
    moved, info, _ = _moves(instance, start, window=len(instance.jobs), dtime=50.0)
    assert info["cpsat_windows_optimal"] >= 1
    value = evaluate(instance, moved).total_completion_s
    assert math.isclose(value, optimum, rel_tol=GRID_RTOL)


def test_settings_refuse_bad_values():
    with pytest.raises(ValueError, match="at least 2"):
        WindowSettings(window=1)
    with pytest.raises(ValueError, match="dtime"):
        WindowSettings(dtime=0.0)


def _improve(instance: AsrptInstance, **params):
    options = RunOptions(time_limit_s=60, seed=0, params=params)
    return run_method("asrpt", "improve", instance, options, raise_errors=True)


def test_improve_runs_the_moves_behind_its_switch():
    instance = crowded(2, 16, rng_seed=1002, iterations=(5, 30))
    off = _improve(instance, starts="packed")
    on = _improve(instance, starts="packed", cpsat_windows=4, cpsat_window=6, cpsat_dtime=0.2)
    assert "cpsat_windows_solved" not in off.info
    assert on.info["cpsat_windows_solved"] >= 1
    assert on.objective <= off.objective
    assert on.info["winner"].endswith("+cpsat") == (on.info["cpsat_windows_accepted"] > 0)


class _Clock:
    """A test clock: the deadline passes when a test says so, not with the machine's speed."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _unfinished_solves(monkeypatch, clock: _Clock | None) -> list[int]:
    """Every window solve returns CP-SAT's solution unproven (``feasible``), as a limit
    leaves it; with ``clock``, the deadline passes during the solve (the clock ended it),
    without, it does not (the deterministic budget did). The list counts the solves."""
    calls: list[int] = []

    def solve(model, deadline, options):
        run = solve_cpsat(model, None, options)
        calls.append(1)
        if clock is not None:
            clock.now += 1e6
        return dataclasses.replace(run, status=Status.FEASIBLE, time_limit_hit=True)

    monkeypatch.setattr(asrpt_windows, "solve_cpsat", solve)
    return calls


@pytest.mark.parametrize("max_windows", [1, 0])
def test_a_window_solve_the_clock_ends_stops_the_moves_and_says_so(monkeypatch, max_windows):
    instance = _one_gpu_servers()
    clock = _Clock()
    calls = _unfinished_solves(monkeypatch, clock)
    settings = WindowSettings(window=3, max_windows=max_windows, dtime=0.5)
    start = _poor_schedule(instance)
    moved, info, cut = cpsat_windows(instance, start, settings, Deadline(100.0, clock=clock))
    assert cut
    assert info["cpsat_stopped"] == "time limit"
    assert len(calls) == info["cpsat_windows_solved"] == 1
    evaluate(instance, moved)  # the answer so far is feasible
    improve_info = {"winner": "lns"}
    clock.now = 0.0
    _, cut = improve_with_windows(
        instance, start, settings, Deadline(100.0, clock=clock), improve_info, False
    )
    assert cut
    assert improve_info["stopped"] == "the CP-SAT window moves at the time limit after 1 windows"


def test_a_window_solve_the_deterministic_budget_ends_is_not_a_time_limit(monkeypatch):
    instance = _one_gpu_servers()
    clock = _Clock()
    calls = _unfinished_solves(monkeypatch, None)
    settings = WindowSettings(window=3, max_windows=2, dtime=0.5)
    start = _poor_schedule(instance)
    _, info, cut = cpsat_windows(instance, start, settings, Deadline(100.0, clock=clock))
    assert not cut
    assert info["cpsat_stopped"] == "max_windows"
    assert len(calls) == info["cpsat_windows_solved"] == 2
