"""The weak-duality bound of an LP at HiGHS's row duals (:mod:`ddlsched.solvers.lp_dual_bound`):
never on the wrong side of the optimum, equal to it at optimal duals, and still valid at
duals that are not."""

from __future__ import annotations

import random

import pyomo.environ as pyo
import pytest

from ddlsched.solvers.backends import solve_model
from ddlsched.solvers.limits import SolveLimits
from ddlsched.solvers.lp_dual_bound import dual_bound


def _random_lp(seed: int, maximize: bool) -> pyo.ConcreteModel:
    """A bounded random LP with rows of every kind (<=, >=, ranged, equality), free and
    bounded columns and an objective constant."""
    rng = random.Random(seed)
    n, m = rng.randint(3, 12), rng.randint(2, 8)
    x0 = [rng.uniform(0, 5) for _ in range(n)]  # a feasible point
    model = pyo.ConcreteModel()
    model.x = pyo.Var(range(n), bounds=lambda _, j: (0, rng.choice([6.0, 10.0])))
    model.rows = pyo.ConstraintList()
    for _ in range(m):
        coefs = [rng.randint(-5, 9) for _ in range(n)]
        at = sum(c * v for c, v in zip(coefs, x0, strict=True))
        expr = sum(c * model.x[j] for j, c in enumerate(coefs))
        kind = rng.choice(["le", "ge", "range", "eq"])
        if kind == "le":
            model.rows.add(expr <= at + rng.uniform(0, 3))
        elif kind == "ge":
            model.rows.add(expr >= at - rng.uniform(0, 3))
        elif kind == "range":
            model.rows.add(pyo.inequality(at - 2, expr, at + 2))
        else:
            model.rows.add(expr == at)
    cost = [rng.uniform(-4, 4) for _ in range(n)]
    sense = pyo.maximize if maximize else pyo.minimize
    model.obj = pyo.Objective(
        expr=7.5 + sum(c * model.x[j] for j, c in enumerate(cost)), sense=sense
    )
    return model


@pytest.mark.parametrize("maximize", [False, True], ids=["min", "max"])
@pytest.mark.parametrize("seed", range(12))
def test_the_dual_bound_meets_the_optimum_from_the_right_side(seed, maximize):
    model = _random_lp(seed, maximize)
    out = solve_model(model, "highs", SolveLimits(lp_dual_bound=True))
    assert out.status == "optimal" and out.dual_bound is not None
    assert out.dual_bound == pytest.approx(out.incumbent, rel=1e-5, abs=1e-5)
    if maximize:
        assert out.dual_bound >= out.incumbent - 1e-9
    else:
        assert out.dual_bound <= out.incumbent + 1e-9


def test_no_dual_bound_unless_asked():
    assert solve_model(_random_lp(0, False), "highs").dual_bound is None


class _Perturbed:
    """A solved ``Highs`` whose row duals are off by ``shift`` (any duals give a bound)."""

    def __init__(self, highs, shift: float) -> None:
        self._highs, self._shift = highs, shift

    def getLp(self):
        return self._highs.getLp()

    def getSolution(self):
        solution = self._highs.getSolution()
        solution.row_dual = [y + self._shift for y in solution.row_dual]
        return solution


@pytest.mark.parametrize("shift", [-3.0, -0.1, 0.1, 3.0])
@pytest.mark.parametrize("seed", range(6))
def test_duals_off_the_optimum_still_give_a_valid_bound(seed, shift):
    from pyomo.contrib.solver.solvers.highs import Highs

    model = _random_lp(seed, maximize=False)
    solver = Highs()
    result = solver.solve(model)
    optimum = result.incumbent_objective
    bound = dual_bound(_Perturbed(solver._solver_model, shift))
    assert bound is None or bound <= optimum + 1e-9
    exact = dual_bound(solver._solver_model)
    assert exact == pytest.approx(optimum, rel=1e-5, abs=1e-5)
    if bound is not None:
        assert bound <= exact + 1e-9  # optimal duals give the best bound
