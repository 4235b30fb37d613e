"""A Pyomo HiGHS MILP in the worker process (solvers/highs_worker.py): same answer,
killed at the limit, reaped."""

from __future__ import annotations

import os
import random
import time

import pyomo.environ as pyo
import pytest

from ddlsched.deadline import Deadline
from ddlsched.errors import SolverError
from ddlsched.registry import RunOptions, get_family, run_method
from ddlsched.solvers import highs_server, highs_worker
from ddlsched.solvers.backends import SolveLimits, solve_model

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the worker needs fork")


@pytest.fixture(autouse=True)
def children(monkeypatch):
    """The pids this test forked (the worker is started afresh for the test)."""
    highs_server.shutdown()
    pids: list[int] = []
    real = os.fork

    def fork() -> int:
        pid = real()
        if pid:
            pids.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", fork)
    yield pids
    highs_server.shutdown()


def _left(pids: list[int]) -> list[int]:
    """The children of ``pids`` still running or not reaped (zombies)."""
    left = []
    for pid in pids:
        try:
            os.waitpid(pid, os.WNOHANG)  # (0, 0): running; (pid, status): a zombie
            left.append(pid)
        except ChildProcessError:  # reaped by the worker code: gone
            pass
    return left


@pytest.fixture
def forks(monkeypatch):
    """The wall-time budgets of the solves that went to the worker (``solve_mip``)."""
    calls: list[float] = []
    real = highs_server.solve_mip

    def counted(mip, seconds, **kwargs):
        calls.append(seconds)
        return real(mip, seconds, **kwargs)

    monkeypatch.setattr(highs_server, "solve_mip", counted)
    return calls


@pytest.fixture
def small_threshold(monkeypatch):
    monkeypatch.setattr(highs_worker, "WORKER_MIN_COLUMNS", 1)


def _never_returns(mip, time_limit_s):
    """HiGHS not looking at its clock (HiGHS 1.16's presolve on a huge slot ILP)."""
    time.sleep(600)


def knapsack(n: int, seed: int) -> pyo.ConcreteModel:
    rng = random.Random(seed)
    weight = [rng.randint(10, 99) for _ in range(n)]
    value = [w + rng.randint(0, 9) for w in weight]
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(n), domain=pyo.Binary)
    m.cap = pyo.Constraint(expr=sum(weight[i] * m.x[i] for i in range(n)) <= sum(weight) // 2)
    m.obj = pyo.Objective(expr=sum(value[i] * m.x[i] for i in range(n)), sense=pyo.maximize)
    return m


def market_split(rows: int = 4, seed: int = 0) -> pyo.ConcreteModel:
    """Cornuejols-Dawande market split: tiny, and far beyond a second of branch and bound."""
    rng = random.Random(seed)
    n = 10 * rows
    a = [[rng.randint(0, 99) for _ in range(n)] for _ in range(rows)]
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(n), domain=pyo.Binary)
    m.up = pyo.Var(range(rows), bounds=(0, None))
    m.down = pyo.Var(range(rows), bounds=(0, None))
    m.split = pyo.Constraint(
        range(rows),
        rule=lambda m, i: (
            sum(a[i][j] * m.x[j] for j in range(n)) + m.up[i] - m.down[i] == sum(a[i]) // 2
        ),
    )
    m.obj = pyo.Objective(expr=sum(m.up[i] + m.down[i] for i in range(rows)))
    return m


def _values(model: pyo.ConcreteModel) -> dict[str, float | None]:
    return {v.name: v.value for v in model.component_data_objects(pyo.Var)}


def test_a_small_milp_through_the_worker_gives_the_in_process_answer(forks, monkeypatch, children):
    models = {}
    solves = {}
    for threshold in (10**9, 1):
        monkeypatch.setattr(highs_worker, "WORKER_MIN_COLUMNS", threshold)
        models[threshold] = knapsack(60, seed=3)
        solves[threshold] = solve_model(models[threshold], "highs", deadline=Deadline(30))
    assert len(forks) == 1  # only the forced one went through the worker
    inside, worker = solves[10**9], solves[1]
    assert inside.status == worker.status == "optimal"
    assert (worker.incumbent, worker.bound, worker.message) == (
        inside.incumbent,
        inside.bound,
        inside.message,
    )
    assert _values(models[1]) == _values(models[10**9])
    assert any(v == 1 for v in _values(models[1]).values())  # values were loaded
    assert len(children) == 1  # the worker, forked once
    highs_server.shutdown()
    assert not _left(children)


def test_an_objective_constant_and_a_mip_start_reach_the_worker(forks, monkeypatch):
    models = {}
    for threshold in (10**9, 1):
        monkeypatch.setattr(highs_worker, "WORKER_MIN_COLUMNS", threshold)
        model = knapsack(25, seed=4)
        model.obj.expr = model.obj.expr + 17.5
        model.ddlsched_start = [(model.x[i], 0.0) for i in range(25)]
        models[threshold] = (model, solve_model(model, "highs", deadline=Deadline(30)))
    (inside_model, inside), (worker_model, worker) = models[10**9], models[1]
    assert len(forks) == 1 and worker.status == inside.status == "optimal"
    assert worker.incumbent == inside.incumbent and worker.bound == inside.bound
    assert pyo.value(worker_model.obj) == pytest.approx(worker.incumbent)
    assert _values(worker_model) == _values(inside_model)


def test_a_formulation_through_the_worker_decodes_the_same_schedule(forks, monkeypatch):
    instance = get_family("dmlrs_slot").generate("synthetic", 2, machines=40, jobs=20)
    options = RunOptions(time_limit_s=30)
    monkeypatch.setattr(highs_worker, "WORKER_MIN_COLUMNS", 10**9)
    inside = run_method("dmlrs_slot", "ilp", instance, options)
    monkeypatch.setattr(highs_worker, "WORKER_MIN_COLUMNS", 1)
    worker = run_method("dmlrs_slot", "ilp", instance, options)
    assert len(forks) == 1
    assert inside.status == worker.status == "optimal"
    assert worker.schedule == inside.schedule and worker.objective == inside.objective
    assert worker.bound == inside.bound


def test_no_finite_limit_or_an_lp_stays_in_process(forks, small_threshold):
    solve_model(knapsack(20, seed=1), "highs", SolveLimits(), Deadline.unlimited())
    lp = knapsack(20, seed=1)
    lp.x.domain = pyo.UnitInterval
    solve_model(lp, "highs", SolveLimits(), Deadline(30))
    assert forks == []


def _first_item_then_silence(mip, time_limit_s):
    """HiGHS finding one solution (the first item alone), then never returning."""
    values = [1.0] + [0.0] * (mip.cost.size - 1)
    highs_server._incumbent_sink("incumbent", (float(mip.cost[0]), values))
    time.sleep(600)


def _item_and_bound_then_silence(mip, time_limit_s):
    """HiGHS finding one solution and a dual bound (the sum of every value), then never
    returning."""
    values = [1.0] + [0.0] * (mip.cost.size - 1)
    highs_server._incumbent_sink("incumbent", (float(mip.cost[0]), values))
    highs_server._incumbent_sink("bound", float(sum(mip.cost)))
    time.sleep(600)


def test_a_worker_killed_at_the_limit_keeps_its_last_incumbent(
    forks, small_threshold, monkeypatch, children
):
    monkeypatch.setattr(highs_server, "_run", _first_item_then_silence)  # the worker forked next
    model = knapsack(20, seed=1)
    solve = solve_model(model, "highs", deadline=Deadline(5.0))
    # the worker was given what remained of the deadline, no more (it kills at that time)
    assert len(forks) == 1 and 0 < forks[0] <= 5.0
    assert solve.status == "feasible" and solve.time_limit_hit and solve.bound is None
    assert "killed at the time limit" in solve.stopped and "last incumbent" in solve.stopped
    assert solve.incumbent == pyo.value(model.obj) > 0  # its values, loaded
    assert model.x[0].value == 1 and all(model.x[i].value == 0 for i in range(1, 20))
    assert children and not _left(children)


def test_a_worker_killed_at_the_limit_keeps_its_last_bound(
    forks, small_threshold, monkeypatch, children
):
    monkeypatch.setattr(highs_server, "_run", _item_and_bound_then_silence)
    model = knapsack(20, seed=1)
    solve = solve_model(model, "highs", deadline=Deadline(5.0))
    assert solve.status == "feasible" and solve.time_limit_hit
    total = sum(model.obj.expr.linear_coefs)  # the bound the stand-in sent
    assert solve.bound == pytest.approx(total) and solve.bound > solve.incumbent
    assert "last incumbent and its last dual bound" in solve.stopped
    assert children and not _left(children)


def _bound_then_silence(mip, time_limit_s):
    """HiGHS sending a dual bound (the sum of every value) and no solution, then never
    returning."""
    highs_server._incumbent_sink("bound", float(sum(mip.cost)))
    time.sleep(600)


def test_a_worker_killed_before_a_solution_keeps_its_last_bound(
    forks, small_threshold, monkeypatch, children
):
    monkeypatch.setattr(highs_server, "_run", _bound_then_silence)
    model = knapsack(20, seed=1)
    solve = solve_model(model, "highs", deadline=Deadline(3.0))
    assert solve.status == "time_limit_no_solution" and solve.incumbent is None
    assert solve.bound == pytest.approx(sum(model.obj.expr.linear_coefs))
    assert "before HiGHS found a solution; its last dual bound is kept" in solve.stopped
    # and none when HiGHS sent no bound either
    monkeypatch.setattr(highs_server, "_run", _never_returns)
    solve = solve_model(knapsack(20, seed=1), "highs", deadline=Deadline(2.0))
    assert solve.status == "time_limit_no_solution" and solve.bound is None
    assert children and not _left(children)


def test_the_worker_reports_improving_solutions_as_highs_finds_them(monkeypatch):
    from pyomo.contrib.solver.solvers.highs import Highs

    found: list[float] = []
    bounds: list[float] = []

    def sink(kind, value):
        (found.append(value[0]) if kind == "incumbent" else bounds.append(value))

    monkeypatch.setattr(highs_server, "_incumbent_sink", sink)
    model = knapsack(12, seed=5)
    solve_model(model, "highs", deadline=Deadline.unlimited())  # in-process: the optimum
    solver = Highs()
    solver.set_instance(model)
    mip = highs_server.MipArrays.from_lp(solver._solver_model.getLp(), {"output_flag": False})
    run = highs_server._run(mip, 60.0)
    assert found and found[-1] == pytest.approx(run.objective)
    assert run.objective == pytest.approx(pyo.value(model.obj))
    # the dual bounds sent (a maximisation: non-increasing), each above the optimum
    assert bounds and bounds == sorted(bounds, reverse=True)
    assert all(b >= run.objective - 1e-6 for b in bounds)


def test_a_worker_at_its_own_limit_answers_in_time(forks, small_threshold):
    # HiGHS told to stop at 0.5 s, the deadline 60 s away: its own answer, not a kill
    limits = SolveLimits(highs_options=(("time_limit", 0.5),))
    solve = solve_model(market_split(), "highs", limits, Deadline(60))
    assert len(forks) == 1
    assert solve.time_limit_hit and solve.stopped == ""
    assert solve.status in ("feasible", "time_limit_no_solution")
    assert solve.message.startswith("maxTimeLimit")


def test_the_killed_worker_reports_through_the_method(
    forks, small_threshold, monkeypatch, children
):
    """info.stopped of a method whose solve was killed (the ``dmlrs_slot`` ILP)."""
    monkeypatch.setattr(highs_server, "_run", _never_returns)  # the worker forked next
    instance = get_family("dmlrs_slot").generate("synthetic", 2, machines=40, jobs=20)
    # 5 s: room for building the model first on a loaded machine; the solve gets what is left
    result = run_method("dmlrs_slot", "ilp", instance, RunOptions(time_limit_s=5.0))
    assert len(forks) == 1 and 0 < forks[0] <= 5.0
    assert result.status == "time_limit_no_solution" and result.time_limit_hit
    assert "worker process was killed" in result.info["stopped"]
    assert children and not _left(children)


def test_a_worker_that_dies_gives_one_line(small_threshold, monkeypatch, children):
    def crash(mip, time_limit_s):
        os.kill(os.getpid(), 9)

    monkeypatch.setattr(highs_server, "_run", crash)
    with pytest.raises(SolverError) as caught:
        solve_model(knapsack(20, seed=1), "highs", deadline=Deadline(30))
    assert "killed by signal 9 (SIGKILL) before answering" in str(caught.value)
    assert "\n" not in str(caught.value)
    assert children and not _left(children)


def test_use_worker_threshold():
    big = highs_worker.WORKER_MIN_COLUMNS
    assert big == 1  # every MILP under a finite limit
    assert highs_worker.use_worker(big, 1, 60.0, 1)
    assert not highs_worker.use_worker(big, 0, 60.0, 1)  # an LP
    assert not highs_worker.use_worker(big, 1, float("inf"), 1)
    assert not highs_worker.use_worker(big, 1, 60.0, 2)


def test_a_failed_fork_solves_in_process(forks, small_threshold, monkeypatch):
    def no_fork():
        raise OSError(12, "Cannot allocate memory")

    monkeypatch.setattr(highs_server.os, "fork", no_fork)
    model = knapsack(30, seed=2)
    solve = solve_model(model, "highs", deadline=Deadline(30))
    assert len(forks) == 1 and solve.status == "optimal" and solve.stopped == ""
    assert any(v == 1 for v in _values(model).values())
