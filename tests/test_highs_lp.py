"""The direct highspy path (:mod:`ddlsched.solvers.highs_lp`) against the Pyomo model.

``docs/architecture.md`` ("Solvers") allows a direct highspy path for thousands of tiny
LPs only with a test that it returns the Pyomo model's optimum on random
instances: random bounded LPs and MILPs (a few columns and rows, both
senses, some rows two-sided, some one-sided), solved by
:class:`~ddlsched.solvers.highs_lp.HighsLp` (one reused instance, as the
simulator uses it) and as a Pyomo model by
:func:`ddlsched.solvers.backends.solve_model` on HiGHS; the optimal
objective values must agree (rel 1e-7).
"""

from __future__ import annotations

import doctest

import numpy as np
import pyomo.environ as pyo
import pytest

import ddlsched.solvers.highs_lp as highs_lp
from ddlsched.errors import DdlschedError
from ddlsched.solvers import SolveLimits, Status, solve_model
from ddlsched.solvers.highs_lp import HighsLp

SEEDS = range(30)


def random_problem(seed: int, integer: bool) -> dict:
    """A feasible, bounded problem: the rows hold at a random point inside the column bounds."""
    rng = np.random.default_rng(seed)
    num_cols = int(rng.integers(2, 7))
    num_rows = int(rng.integers(1, 6))
    matrix = np.round(rng.uniform(-5, 5, size=(num_rows, num_cols)), 2)
    matrix[rng.random(matrix.shape) < 0.3] = 0.0
    col_lower = -rng.integers(0, 4, size=num_cols).astype(float)
    col_upper = rng.integers(1, 6, size=num_cols).astype(float)
    is_integer = rng.random(num_cols) < 0.6 if integer else np.zeros(num_cols, dtype=bool)
    point = rng.uniform(col_lower, col_upper)
    point[is_integer] = np.round(point[is_integer])
    activity = matrix @ point
    row_upper = activity + rng.uniform(0, 3, size=num_rows)
    row_lower = np.where(
        rng.random(num_rows) < 0.5, activity - rng.uniform(0, 3, size=num_rows), -np.inf
    )
    return {
        "cost": np.round(rng.uniform(-10, 10, size=num_cols), 3),
        "matrix": matrix,
        "row_lower": row_lower,
        "row_upper": row_upper,
        "col_lower": col_lower,
        "col_upper": col_upper,
        "integrality": is_integer,
        "maximize": bool(rng.random() < 0.5),
    }


def pyomo_optimum(p: dict) -> float:
    """The same problem as a Pyomo model, solved through the solver layer (HiGHS)."""
    m = pyo.ConcreteModel()
    cols = range(len(p["cost"]))
    m.x = pyo.Var(cols, bounds=lambda _m, j: (p["col_lower"][j], p["col_upper"][j]))
    for j in cols:
        m.x[j].domain = pyo.Integers if p["integrality"][j] else pyo.Reals
    m.rows = pyo.ConstraintList()
    for i, row in enumerate(p["matrix"]):
        lower = None if np.isinf(p["row_lower"][i]) else float(p["row_lower"][i])
        expr = sum(float(a) * m.x[j] for j, a in enumerate(row) if a != 0)
        if isinstance(expr, (int, float)):  # an empty row: its bounds hold at 0 by construction
            continue
        m.rows.add((lower, expr, float(p["row_upper"][i])))
    m.obj = pyo.Objective(
        expr=sum(float(c) * m.x[j] for j, c in enumerate(p["cost"])),
        sense=pyo.maximize if p["maximize"] else pyo.minimize,
    )
    res = solve_model(m, "highs", SolveLimits(time_limit_s=30.0, rel_gap=0.0, abs_gap=0.0))
    assert res.status is Status.OPTIMAL
    return float(res.incumbent)


def direct(lp: HighsLp, p: dict, sparse: bool = False) -> tuple[np.ndarray, float]:
    matrix = p["matrix"]
    if sparse:
        import scipy.sparse

        matrix = scipy.sparse.csr_matrix(matrix)
    x = lp.solve(
        p["cost"],
        matrix,
        row_upper=p["row_upper"],
        row_lower=p["row_lower"],
        col_lower=p["col_lower"],
        col_upper=p["col_upper"],
        maximize=p["maximize"],
        integrality=p["integrality"],
    )
    assert lp.objective_value is not None
    return x, lp.objective_value


def check_solution(p: dict, x: np.ndarray, objective: float) -> None:
    """An independent check of the returned point: bounds, rows, integrality, objective.

    Within HiGHS's ``mip_feasibility_tolerance`` (1e-6): highspy 1.16 returns MILP
    points up to 4e-7 outside a row (seeds 21 and 22; 1.14 stayed within 1e-7 here)."""
    tol = 1e-6
    assert np.all(x >= p["col_lower"] - tol) and np.all(x <= p["col_upper"] + tol)
    activity = p["matrix"] @ x
    assert np.all(activity <= p["row_upper"] + tol) and np.all(activity >= p["row_lower"] - tol)
    assert np.allclose(x[p["integrality"]], np.round(x[p["integrality"]]), atol=tol)
    assert float(p["cost"] @ x) == pytest.approx(objective, rel=1e-9, abs=1e-9)


@pytest.fixture(scope="module")
def lp() -> HighsLp:
    return HighsLp()  # one instance for every problem, as the simulator reuses it


@pytest.mark.parametrize("integer", [False, True], ids=["lp", "milp"])
@pytest.mark.parametrize("seed", SEEDS)
def test_direct_highspy_returns_the_pyomo_optimum(lp, seed, integer):
    p = random_problem(seed, integer)
    x, objective = direct(lp, p)
    check_solution(p, x, objective)
    assert objective == pytest.approx(pyomo_optimum(p), rel=1e-7, abs=1e-9)


@pytest.mark.parametrize("seed", range(5))
def test_sparse_and_dense_matrices_give_the_same_problem(lp, seed):
    p = random_problem(seed, integer=True)
    x_dense, obj_dense = direct(lp, p)
    x_sparse, obj_sparse = direct(lp, p, sparse=True)
    assert obj_sparse == obj_dense
    assert x_sparse.tolist() == x_dense.tolist()


def test_non_optimal_status_raises(lp):
    # x0 + x1 >= 3 with both columns in [0, 1]: infeasible
    with pytest.raises(DdlschedError, match="tiny: HiGHS returned Infeasible"):
        lp.solve(
            [1.0, 1.0],
            [[1.0, 1.0]],
            row_upper=[np.inf],
            row_lower=[3.0],
            col_upper=[1.0, 1.0],
            what="tiny",
        )
    assert lp.objective_value is None
    # the instance is still usable afterwards
    x = lp.solve([1.0, 1.0], [[1.0, 1.0]], row_upper=[1.5], col_upper=[1.0, 1.0], maximize=True)
    assert lp.objective_value == pytest.approx(1.5)
    assert float(x.sum()) == pytest.approx(1.5)


def test_docstring_example():
    assert doctest.testmod(highs_lp).failed == 0
