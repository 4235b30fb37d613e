"""``dmlrs colgen``: when a master LP's warm start is dropped for a cold solve.

The rule is an iteration count (``max(PATIENCE_MIN_ITERATIONS, PATIENCE_FACTOR *
the last LP's simplex iterations)``), not a measured time: a cold restart changes
the basis, the duals and so the columns, and a time rule made the same instance
and limit give another bound on a loaded machine. Here the clock is faked (every
``time.perf_counter`` call a second or a minute later) and the budgets handed to
the master, the restarts and the bounds stay the same.
"""

from __future__ import annotations

import time

import numpy as np
import pytest
from test_dmlrs_solvers import _random_master

import ddlsched.models.dmlrs_colgen as colgen_module
from ddlsched.solvers import dmlrs_master
from ddlsched.solvers.dmlrs_master import NO_ITERATION_LIMIT, ColumnMaster
from ddlsched.workloads.dmlrs import generate


def _grow(master: ColumnMaster, rng: np.random.Generator, count: int) -> None:
    for _ in range(count):
        keys = rng.choice(3000, size=40, replace=False)
        master.add_column(
            int(rng.integers(0, 50)),
            float(rng.uniform(1, 50)),
            keys,
            rng.integers(1, 6, size=40).astype(float),
        )


def _option(highs, name: str) -> float:
    value = highs.getOptionValue(name)
    return value[1] if isinstance(value, tuple) else value


def test_a_warm_start_over_its_iterations_is_solved_cold():
    master, rng = _random_master(400)
    master.solve_lp()
    _grow(master, rng, 100)
    limited = master.solve_lp(patience_iterations=5)
    assert master.cold_restarts == 1
    assert master.last_iterations > 5  # the cold solve's, not the cut warm start's
    assert _option(master._highs, "simplex_iteration_limit") == NO_ITERATION_LIMIT
    fresh, fresh_rng = _random_master(400)  # the same master, warm-started without a budget
    fresh.solve_lp()
    _grow(fresh, fresh_rng, 100)
    unlimited = fresh.solve_lp()
    assert fresh.cold_restarts == 0
    assert limited.status == unlimited.status == "optimal"
    assert limited.value == pytest.approx(unlimited.value, rel=1e-9)


def test_a_generous_budget_changes_nothing():
    master, rng = _random_master(400)
    master.solve_lp()
    _grow(master, rng, 100)
    solution = master.solve_lp(patience_iterations=10_000)
    assert master.cold_restarts == 0 and solution.status == "optimal"
    assert 0 < master.last_iterations < 10_000


class _Clock:
    """``time.perf_counter`` moving ``step`` seconds a call (a slow or loaded machine)."""

    def __init__(self, step: float) -> None:
        self.now, self.step = 0.0, step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def _run(monkeypatch, step: float | None, min_iterations: int, factor: int):
    """colgen on a tiny instance, 6 rounds, LP pricing; the budgets handed to the master."""
    budgets: list[int | None] = []
    iterations: list[int] = []
    real = dmlrs_master.ColumnMaster.solve_lp

    def spy(self, time_limit_s=float("inf"), patience_iterations=None):
        budgets.append(patience_iterations)
        solution = real(self, time_limit_s, patience_iterations)
        iterations.append(self.last_iterations)
        return solution

    with monkeypatch.context() as patch:
        patch.setattr(dmlrs_master.ColumnMaster, "solve_lp", spy)
        patch.setattr(colgen_module, "PATIENCE_MIN_ITERATIONS", min_iterations)
        patch.setattr(colgen_module, "PATIENCE_FACTOR", factor)
        if step is not None:
            patch.setattr(time, "perf_counter", _Clock(step))
        result = colgen_module.colgen(
            generate("paper", 3, jobs=8, machines=4, slots=8), pricing="lp", max_rounds=6
        )
    return budgets, iterations, result


@pytest.mark.parametrize(("min_iterations", "factor"), [(10_000, 10), (1, 1)])
def test_the_budget_and_the_answer_do_not_depend_on_the_clock(monkeypatch, min_iterations, factor):
    runs = [_run(monkeypatch, step, min_iterations, factor) for step in (None, 1.0, 60.0)]
    budgets, iterations, result = runs[0]
    assert len(budgets) >= 2
    assert all(b == budgets and i == iterations for b, i, _ in runs)
    assert budgets[0] == min_iterations  # no LP before the first
    for k in range(1, len(budgets)):
        assert budgets[k] == max(min_iterations, factor * iterations[k - 1])
    for _, _, other in runs[1:]:
        assert other.bound == result.bound
        assert other.master_value == result.master_value
        assert other.info["master_cold_restarts"] == result.info["master_cold_restarts"]
        assert [h.bound for h in other.history] == [h.bound for h in result.history]
    if factor == 1:  # a budget of the last LP's own count: the tight rule restarts
        assert result.info["master_cold_restarts"] > 0
    else:
        assert result.info["master_cold_restarts"] == 0
