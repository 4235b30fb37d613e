"""The solver layer: both backends in one process, status mapping, limits."""

from __future__ import annotations

import pyomo.environ as pyo
import pytest

from ddlsched.errors import UnknownMethodError
from ddlsched.solvers import BACKENDS, SolveLimits, Status, solve_model, versions
from ddlsched.solvers.result import SolveResult, relative_gap


def knapsack(sense=pyo.maximize) -> pyo.ConcreteModel:
    m = pyo.ConcreteModel()
    values, weights = [10.5, 13, 7.25, 8, 4], [5, 7, 4, 3, 1]
    m.x = pyo.Var(range(5), domain=pyo.Binary)
    m.cap = pyo.Constraint(expr=sum(w * m.x[i] for i, w in enumerate(weights)) <= 10)
    m.obj = pyo.Objective(expr=sum(v * m.x[i] for i, v in enumerate(values)) + 1.5, sense=sense)
    return m


def test_highspy_and_ortools_import_and_solve_in_one_process():
    import highspy  # noqa: F401
    import ortools  # noqa: F401

    answers = {}
    for backend in BACKENDS:
        m = knapsack()
        res = solve_model(m, backend)
        assert res.status is Status.OPTIMAL, backend
        answers[backend] = (res.incumbent, [round(pyo.value(m.x[i])) for i in range(5)])
        # values were loaded into the model, constant term included
        assert pyo.value(m.obj) == pytest.approx(res.incumbent)
    # best: items 0, 3, 4 (weights 5 + 3 + 1 = 9, value 22.5) plus the constant 1.5
    assert answers["highs"] == answers["scip"] == (24.0, [1, 0, 0, 1, 1])


@pytest.mark.parametrize("backend", BACKENDS)
def test_infeasible_model(backend):
    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.Binary)
    m.c = pyo.Constraint(expr=m.x >= 2)
    m.o = pyo.Objective(expr=m.x)
    assert solve_model(m, backend).status is Status.INFEASIBLE


@pytest.mark.parametrize("backend", BACKENDS)
def test_minimisation_bound_is_a_lower_bound(backend):
    m = knapsack(pyo.minimize)
    res = solve_model(m, backend)
    assert res.status is Status.OPTIMAL
    assert res.bound <= res.incumbent + 1e-9
    assert res.num_variables == 5 and res.num_integer_variables == 5 and res.num_constraints == 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_time_limit_never_claims_optimal_without_proof(backend):
    # a hard-ish MILP (many symmetric binaries) under a tiny limit
    m = pyo.ConcreteModel()
    n = 60
    m.x = pyo.Var(range(n), range(n // 2), domain=pyo.Binary)
    m.assign = pyo.Constraint(
        range(n), rule=lambda m, i: sum(m.x[i, k] for k in range(n // 2)) == 1
    )
    m.machine_load = pyo.Var(range(n // 2), domain=pyo.NonNegativeReals)
    m.c = pyo.Constraint(
        range(n // 2),
        rule=lambda m, k: (
            m.machine_load[k] == sum((7 + (i * 37) % 11) * m.x[i, k] for i in range(n))
        ),
    )
    m.mx = pyo.Var()
    m.top = pyo.Constraint(range(n // 2), rule=lambda m, k: m.mx >= m.machine_load[k])
    m.o = pyo.Objective(expr=m.mx)
    res = solve_model(m, backend, SolveLimits(time_limit_s=0.05))
    assert res.status in (Status.OPTIMAL, Status.FEASIBLE, Status.TIME_LIMIT_NO_SOLUTION)
    if res.status is Status.FEASIBLE:
        assert res.bound is None or res.bound <= res.incumbent + 1e-6


def test_unknown_backend_is_a_one_line_error():
    with pytest.raises(UnknownMethodError, match="unknown backend 'cplex'"):
        solve_model(knapsack(), "cplex")


def test_limits_are_validated():
    with pytest.raises(ValueError):
        SolveLimits(time_limit_s=0)


def test_result_gap_and_versions():
    assert relative_gap(10.0, 8.0) == pytest.approx(0.2)
    assert relative_gap(None, 3.0) is None
    r = SolveResult("rar", "exact", Status.OPTIMAL, "min", objective=5.0, bound=5.0)
    d = r.to_dict()
    assert d["gap"] == 0.0 and d["status"] == "optimal"
    v = versions()
    assert v["highspy"].startswith("1.16") and v["ortools"] and v["ddlsched"]


class _SteppingClock:
    """``time`` for :mod:`ddlsched.deadline` in which each ``monotonic()`` read is 1 s on."""

    def __init__(self) -> None:
        import time

        self.time, self.now = time, time.monotonic()

    def monotonic(self) -> float:
        self.now += 1.0
        return self.now

    def __getattr__(self, name: str):
        return getattr(self.time, name)


def test_a_deadline_that_passes_before_scip_gets_the_model_is_out_of_time(monkeypatch):
    """The deadline passes between ``solve_model``'s check (time left) and the MPS file
    (read 3 of the stepping clock): the answer the HiGHS path gives for a cut hand-over."""
    from ddlsched.deadline import Deadline

    monkeypatch.setattr("ddlsched.deadline.time", _SteppingClock())
    deadline = Deadline(2.5)  # read 1; solve_model's check is read 2 (0.5 s left)
    res = solve_model(knapsack(), "scip", deadline=deadline)
    assert res.status is Status.TIME_LIMIT_NO_SOLUTION and res.time_limit_hit
    assert "writing the MPS file" in res.message and res.backend == "scip"
    assert res.what_stopped("the knapsack")


def test_the_deadline_interrupts_the_mps_file_being_written(monkeypatch):
    """A write that would not end by the limit is cut by the deadline's interrupt."""
    import time

    from ddlsched.deadline import Deadline

    model = knapsack()

    def endless_write(*args, **kwargs):
        give_up = time.monotonic() + 20.0  # far beyond the limit: a failure, not a hang
        while time.monotonic() < give_up:
            time.sleep(0.01)
        raise AssertionError("the deadline did not interrupt the MPS write")

    monkeypatch.setattr(model, "write", endless_write)
    res = solve_model(model, "scip", deadline=Deadline(1.0))
    assert res.status is Status.TIME_LIMIT_NO_SOLUTION and res.time_limit_hit
