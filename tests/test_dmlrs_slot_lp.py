"""Problem (23) of PD-ORS: the direct highspy path against the Pyomo model, and the instance type.

``docs/architecture.md`` ("Solvers") allows a direct highspy path only with a test that it
returns the Pyomo model's optimum on random instances. Here: random Problem
(23) instances (with the spec's PS row; some resources used only by workers
or only by PSs, some machines full, some instances infeasible) solved by
:class:`~ddlsched.solvers.dmlrs_slot_lp.HighsSlotSolvers` (one LP session per
instance, re-solved for every ``D`` with warm starts, as PD-ORS uses it; and
the exact ILP) and as a Pyomo model written row by row from the paper's
(23)-(26), solved by :func:`ddlsched.solvers.backends.solve_model`: equal
optima (rel 1e-7), equal infeasibility. Also: the ``dmlrs_slot`` instance
type (JSON round trip, refusals) and its evaluator.
"""

from __future__ import annotations

import contextlib
import json
import math

import numpy as np
import pyomo.environ as pyo
import pytest

from ddlsched.errors import InfeasibleScheduleError, InvalidInstanceError, TimeLimitReached
from ddlsched.problems.dmlrs_slot import (
    SlotAllocation,
    SlotInstance,
    evaluate,
    schedule_from_json,
    schedule_to_json,
)
from ddlsched.solvers import SolveLimits, Status, solve_model
from ddlsched.solvers.dmlrs_slot_lp import HighsSlotSolvers

SEEDS = range(32)


def random_slot(seed: int) -> dict:
    """A random Problem (23) (not always feasible)."""
    rng = np.random.default_rng(seed)
    H = int(rng.integers(1, 6))
    R = int(rng.integers(1, 4))
    alpha = rng.integers(0, 4, R).astype(float)
    beta = rng.integers(0, 4, R).astype(float)
    if rng.random() < 0.3:
        alpha = np.round(rng.uniform(0, 3, R), 2)
    if not (alpha + beta).any():
        alpha[0] = 1.0
    residual = rng.integers(0, 13, (H, R)).astype(float)
    residual[rng.random(H) < 0.2] = 0.0  # full machines
    return {
        "pw": np.round(rng.uniform(0, 10, H), 3),
        "ps": np.round(rng.uniform(0, 10, H), 3),
        "alpha": alpha,
        "beta": beta,
        "residual": residual,
        "gamma": int(rng.integers(1, 4)),
        "F": int(rng.integers(1, 9)),
    }


def pyomo_optimum(p: dict, demand: int, integer: bool) -> float | None:
    """Problem (23) with the PS row, row by row as in the paper; ``None`` if infeasible."""
    H, R = p["residual"].shape
    m = pyo.ConcreteModel()
    domain = pyo.NonNegativeIntegers if integer else pyo.NonNegativeReals
    m.w = pyo.Var(range(H), domain=domain)
    m.s = pyo.Var(range(H), domain=domain)
    m.cap = pyo.ConstraintList()  # (24)
    for h in range(H):
        for r in range(R):
            if p["alpha"][r] or p["beta"][r]:
                m.cap.add(
                    float(p["alpha"][r]) * m.w[h] + float(p["beta"][r]) * m.s[h]
                    <= float(p["residual"][h, r])
                )
    m.batch = pyo.Constraint(expr=sum(m.w[h] for h in range(H)) <= p["F"])  # (25)
    m.cover = pyo.Constraint(expr=sum(m.w[h] for h in range(H)) >= demand)  # (26)
    m.ps_row = pyo.Constraint(
        expr=p["gamma"] * sum(m.s[h] for h in range(H)) >= sum(m.w[h] for h in range(H))
    )
    m.obj = pyo.Objective(
        expr=sum(float(p["pw"][h]) * m.w[h] + float(p["ps"][h]) * m.s[h] for h in range(H))
    )
    res = solve_model(m, "highs", SolveLimits(time_limit_s=30.0, rel_gap=0.0, abs_gap=0.0))
    if res.status is Status.INFEASIBLE:
        return None
    assert res.status is Status.OPTIMAL, res
    return float(res.incumbent)


def args(p: dict) -> tuple:
    return (p["pw"], p["ps"], p["alpha"], p["beta"], p["residual"], p["gamma"], p["F"])


def check_point(p: dict, w: np.ndarray, s: np.ndarray, demand: int, objective: float) -> None:
    """An independent check of a returned point: every row of (24)-(26), the PS row, the cost."""
    tol = 1e-6
    assert np.all(w >= -tol) and np.all(s >= -tol)
    load = w[:, None] * p["alpha"] + s[:, None] * p["beta"]
    assert np.all(load <= p["residual"] + tol)
    assert demand - tol <= w.sum() <= p["F"] + tol
    assert p["gamma"] * s.sum() >= w.sum() - tol
    assert float(p["pw"] @ w + p["ps"] @ s) == pytest.approx(objective, rel=1e-7, abs=1e-7)


@pytest.fixture(scope="module")
def solvers() -> HighsSlotSolvers:
    return HighsSlotSolvers()  # one object for every problem, as PD-ORS uses it


@pytest.mark.parametrize("seed", SEEDS)
def test_lp_session_and_ilp_return_the_pyomo_optima(solvers, seed):
    p = random_slot(seed)
    session = solvers.lp(*args(p))
    demands = sorted({1, (p["F"] + 1) // 2, p["F"], p["F"] + 1})
    for demand in demands:  # increasing D, warm starts; F + 1 is infeasible
        lp = session.solve(demand)
        ilp = solvers.ilp(*args(p), demand)
        want_lp = pyomo_optimum(p, demand, integer=False)
        want_ilp = pyomo_optimum(p, demand, integer=True)
        if want_lp is None:
            assert lp is None
        else:
            assert lp is not None
            check_point(p, lp.w, lp.s, demand, lp.objective)
            assert lp.objective == pytest.approx(want_lp, rel=1e-7, abs=1e-9)
        if want_ilp is None:
            assert ilp is None
        else:
            assert ilp is not None
            assert np.array_equal(ilp.w, np.round(ilp.w)) and np.array_equal(ilp.s, np.round(ilp.s))
            check_point(p, ilp.w, ilp.s, demand, ilp.objective)
            assert ilp.objective == pytest.approx(want_ilp, rel=1e-7, abs=1e-9)
            assert lp is not None and lp.objective <= ilp.objective + 1e-9


def test_interleaved_sessions_reload_their_model(solvers):
    a, b = random_slot(1), random_slot(2)
    first, second = solvers.lp(*args(a)), solvers.lp(*args(b))
    expected = [pyomo_optimum(a, 1, False), pyomo_optimum(b, 1, False)]
    for _ in range(2):
        got = [first.solve(1), second.solve(1)]
        for sol, want in zip(got, expected, strict=True):
            assert (sol is None) == (want is None)
            if sol is not None:
                assert sol.objective == pytest.approx(want, rel=1e-7, abs=1e-9)


def test_no_time_left_raises_time_limit(solvers):
    p = random_slot(3)
    with pytest.raises(TimeLimitReached):
        solvers.lp(*args(p)).solve(1, time_limit_s=0.0)
    with pytest.raises(TimeLimitReached):
        solvers.ilp(*args(p), 1, time_limit_s=0.0)


# --------------------------------------------------------------------------- the instance type


def slot_instance(**changes) -> SlotInstance:
    base = {
        "resources": ("gpu", "cpu"),
        "worker_price": (1.0, 2.0),
        "ps_price": (0.5, 0.25),
        "worker": (1.0, 2.0),
        "ps": (0.0, 1.0),
        "residual": ((2.0, 8.0), (4.0, 4.0)),
        "gamma": 2,
        "global_batch": 4,
        "demand": 3,
        "meta": {"job": 3, "slot": 2, "k": 5},
    }
    base.update(changes)
    return SlotInstance(**base)


def test_slot_instance_round_trips_through_json(tmp_path):
    inst = slot_instance()
    path = tmp_path / "slot.json"
    inst.save(path)
    back = SlotInstance.load(path)
    assert back == inst and back.meta == inst.meta
    assert json.loads(path.read_text())["family"] == "dmlrs_slot"


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d.update(extra=1), "unknown field"),
        (lambda d: d["machines"][0].update(speed=1), "unknown field"),
        (lambda d: d.update(demand=0), "demand: must be >= 1"),
        (lambda d: d.update(gamma=1.5), "gamma: expected an integer"),
        (lambda d: d["machines"][1].update(worker_price=-1), r"worker_price: must be >= 0"),
        (lambda d: d["machines"][1].update(residual=[1.0]), "expected a list of 2 numbers"),
        (lambda d: d.update(worker=[0, 0], ps=[0, 0]), "uses no resource"),
        (lambda d: d.update(family="dmlrs"), "family: expected 'dmlrs_slot'"),
        (lambda d: d.update(meta={"a": [1]}), "meta: expected an object of scalars"),
    ],
)
def test_slot_instance_refuses_bad_files(mutate, message):
    data = slot_instance().to_dict()
    mutate(data)
    with pytest.raises(InvalidInstanceError, match=message) as err:
        SlotInstance.from_dict(data)
    assert "\n" not in str(err.value)


def test_slot_evaluator_cost_and_rows():
    inst = slot_instance()
    # 2 workers + 1 PS on machine 0 (gpu 2 <= 2, cpu 5 <= 8), 1 worker + 1 PS on machine 1
    alloc = SlotAllocation(w=(2, 1), s=(1, 1))
    ev = evaluate(inst, alloc)
    assert ev.cost == pytest.approx(2 * 1.0 + 1 * 0.5 + 1 * 2.0 + 1 * 0.25)
    assert (ev.workers, ev.ps, ev.machines_used, ev.single_machine) == (3, 2, 2, False)
    assert schedule_from_json(json.loads(json.dumps(schedule_to_json(alloc, ev)))) == alloc
    cases = [
        (SlotAllocation((3, 0), (2, 0)), r"row \(24\): machine 0, resource 'gpu'"),
        (SlotAllocation((2, 1), (1, 3)), r"row \(24\): machine 1, resource 'cpu'"),
        (SlotAllocation((2, 0), (1, 0)), r"row \(26\): 2 workers, fewer than D = 3"),
        (SlotAllocation((2, 1), (1, 0)), "PS row: 1 PSs for 3 workers"),
        (SlotAllocation((2, 1, 0), (1, 1, 0)), "expected 2 counts"),
        (SlotAllocation((2, -1), (1, 1)), "w.1.: must be a non-negative integer"),
    ]
    for alloc, message in cases:
        with pytest.raises(InfeasibleScheduleError, match=message):
            evaluate(inst, alloc)
    big = slot_instance(residual=((9.0, 99.0), (9.0, 99.0)), demand=3, global_batch=3)
    with pytest.raises(InfeasibleScheduleError, match=r"row \(25\): 4 workers, more than F = 3"):
        evaluate(big, SlotAllocation((4, 0), (2, 0)))
    single = evaluate(big, SlotAllocation((3, 0), (2, 0)))
    assert single.single_machine and single.machines_used == 1


def test_slot_instance_accepts_an_infeasible_demand_and_the_solvers_say_so(solvers):
    inst = slot_instance(demand=9)  # D > F
    assert inst.demand > inst.global_batch
    a = (inst.pw, inst.pps, inst.alpha, inst.beta, inst.cap, inst.gamma, inst.global_batch)
    assert solvers.lp(*a).solve(inst.demand) is None
    assert solvers.ilp(*a, inst.demand) is None
    assert math.isfinite(solvers.lp(*a).solve(3).objective)


def test_reused_lp_honours_a_fresh_budget_after_long_use():
    """HiGHS 1.14 checks an LP's time_limit against the run clock of the reused Highs
    object: the budget of each solve is added to that clock (no early 'time limit').

    A spy on the ``time_limit`` handed to HiGHS checks it (the run clock stands still
    between runs): whether a real 0.02 s budget suffices would depend on the machine."""
    import numpy as np

    from ddlsched.solvers.dmlrs_slot_lp import HighsSlotSolvers

    rng = np.random.default_rng(0)
    H = 40
    solvers = HighsSlotSolvers()
    lp = solvers.lp(
        rng.uniform(1, 2, H), rng.uniform(1, 2, H), np.array([1.0, 2.0]), np.array([0.0, 1.0]),
        np.full((H, 2), 4.0), 2, 60,
    )  # fmt: skip
    while solvers._lp_highs_obj is None or solvers._lp_highs_obj.getRunTime() < 0.05:
        for demand in (10, 20, 30, 40):
            assert lp.solve(demand, time_limit_s=10.0) is not None
    highs = solvers._lp_highs_obj
    handed: list[tuple[float, float]] = []  # (run clock, time_limit) of each solve
    real_set = highs.setOptionValue

    def spy(name, value):
        if name == "time_limit":
            handed.append((highs.getRunTime(), value))
        return real_set(name, value)

    highs.setOptionValue = spy
    # the run clock is past 0.05 s: a limit of 0.02 s on it would stop every solve at once
    for demand in (10, 20, 30, 40):
        assert lp.solve(demand, time_limit_s=1e6) is not None
    with contextlib.suppress(TimeLimitReached):  # 0.02 s of a busy machine may not do
        lp.solve(10, time_limit_s=0.02)
    assert len(handed) == 5 and handed[0][0] >= 0.05
    offsets = [limit - clock for clock, limit in handed]
    assert offsets == pytest.approx([1e6] * 4 + [0.02], rel=0, abs=1e-6)
