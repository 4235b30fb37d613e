"""The weak-duality bound of an LP at HiGHS's row duals (:mod:`ddlsched.solvers.lp_dual_bound`):
never on the wrong side of the optimum, equal to it at optimal duals, and still valid at
duals that are not; with a free and an unbounded column, the optimum at optimal duals and
no bound (``None``) at duals whose reduced cost meets an infinite column bound."""

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


def _unbounded_columns_lp(maximize: bool) -> pyo.ConcreteModel:
    """``min x + 2 w - v`` (``x`` free, ``w >= 0`` unbounded above, ``0 <= v <= 4``) s.t.
    ``x - v >= 1``, ``x + w >= 3``: optimum 1 (``v`` in [2, 4], ``x = 1 + v``, ``w = 0``);
    the maximisation is ``max -(x + 2 w - v)``, optimum -1."""
    model = pyo.ConcreteModel()
    model.x = pyo.Var()
    model.w = pyo.Var(bounds=(0, None))
    model.v = pyo.Var(bounds=(0, 4))
    model.a = pyo.Constraint(expr=model.x - model.v >= 1)
    model.b = pyo.Constraint(expr=model.x + model.w >= 3)
    cost = model.x + 2 * model.w - model.v
    model.obj = pyo.Objective(
        expr=-cost if maximize else cost, sense=pyo.maximize if maximize else pyo.minimize
    )
    return model


@pytest.mark.parametrize("maximize", [False, True], ids=["min", "max"])
def test_free_and_unbounded_columns_at_optimal_duals_give_the_optimum(maximize):
    """At HiGHS's duals the free column's reduced cost is 0 and the column unbounded
    above has one of the sign that meets its finite bound: a finite bound, the optimum."""
    from pyomo.contrib.solver.solvers.highs import Highs

    solver = Highs()
    optimum = solver.solve(_unbounded_columns_lp(maximize)).incumbent_objective
    assert optimum == pytest.approx(-1.0 if maximize else 1.0)
    bound = dual_bound(solver._solver_model)
    assert bound == pytest.approx(optimum, rel=1e-7, abs=1e-7)
    assert (bound >= optimum - 1e-9) if maximize else (bound <= optimum + 1e-9)


@pytest.mark.parametrize("shift", [-0.5, 0.5, 2.5])
def test_a_reduced_cost_that_meets_an_infinite_bound_gives_no_bound(shift):
    """Row duals shifted by ``shift`` (a negative one on a ``>=`` row set to 0) no
    longer sum to ``x``'s cost 1: the free column ``x`` gets a nonzero reduced cost (and
    for ``shift = 2.5`` the column ``w``, unbounded above, a negative one), so weak
    duality at those duals bounds nothing (``-inf``): ``None``, never a finite value
    claimed as a bound."""
    from pyomo.contrib.solver.solvers.highs import Highs

    solver = Highs()
    solver.solve(_unbounded_columns_lp(maximize=False))
    assert dual_bound(solver._solver_model) is not None
    assert dual_bound(_Perturbed(solver._solver_model, shift)) is None
