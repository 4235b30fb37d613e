"""The CP-SAT runner (:mod:`ddlsched.solvers.cpsat`): status mapping, limits, seed, workers.

The models are tiny and their answers known by hand: a feasible model with
a known optimum, an infeasible one, and a knapsack that CP-SAT cannot close
within a deterministic-time limit (a limit in CP-SAT's work units, so the
test does not depend on the machine's speed).
"""

from __future__ import annotations

import math
import random

import pytest

from ddlsched.deadline import Deadline
from ddlsched.solvers.cpsat import CpsatOptions, cpsat_status, model_size, solve_cpsat
from ddlsched.solvers.result import Status

cp_model = pytest.importorskip("ortools.sat.python.cp_model")


def _small_optimum():
    """min x + 2y s.t. x + y >= 3, x <= 2 (integers in [0, 5]): optimum 4 at (2, 1)."""
    model = cp_model.CpModel()
    x = model.new_int_var(0, 5, "x")
    y = model.new_int_var(0, 5, "y")
    model.add(x + y >= 3)
    model.add(x <= 2)
    model.minimize(x + 2 * y)
    return model, x, y


def _infeasible():
    model = cp_model.CpModel()
    x = model.new_int_var(0, 5, "x")
    model.add(x >= 3)
    model.add(x <= 2)
    return model


def _knapsack(items: int = 60):
    """A knapsack with values close to the weights: hard to prove optimal."""
    rng = random.Random(1)
    model = cp_model.CpModel()
    take = [model.new_bool_var(f"take{i}") for i in range(items)]
    weights = [rng.randint(1000, 100000) for _ in range(items)]
    values = [w + rng.randint(-50, 50) for w in weights]
    model.add(sum(w * t for w, t in zip(weights, take, strict=True)) <= sum(weights) // 2)
    model.maximize(sum(v * t for v, t in zip(values, take, strict=True)))
    return model, take


def test_an_optimum_is_optimal_with_its_value_and_bound():
    model, x, y = _small_optimum()
    run = solve_cpsat(model, Deadline(10))
    assert run.status is Status.OPTIMAL and run.message == "OPTIMAL"
    assert (run.value(x), run.value(y)) == (2, 1)
    assert run.objective == 4 and run.bound == 4
    assert run.has_solution and not run.time_limit_hit
    assert run.version.startswith("ortools ")


def test_a_satisfaction_model_found_is_optimal_without_objective_or_bound():
    model = cp_model.CpModel()
    flag = model.new_bool_var("flag")
    model.add_bool_or([flag])
    run = solve_cpsat(model)
    assert run.status is Status.OPTIMAL and run.boolean_value(flag) is True
    assert run.objective is None and run.bound is None


def test_an_infeasible_model_is_infeasible():
    run = solve_cpsat(_infeasible(), Deadline(10))
    assert run.status is Status.INFEASIBLE and not run.has_solution
    assert run.objective is None and run.bound is None and not run.time_limit_hit


def test_a_limit_that_cuts_the_search_gives_feasible_or_no_solution():
    model, _ = _knapsack()
    nothing = solve_cpsat(model, options=CpsatOptions(deterministic_time_s=1e-6))
    assert nothing.status is Status.TIME_LIMIT_NO_SOLUTION and nothing.message == "UNKNOWN"
    assert nothing.time_limit_hit and nothing.objective is None
    some = solve_cpsat(model, options=CpsatOptions(deterministic_time_s=1e-3))
    assert some.status is Status.FEASIBLE and some.time_limit_hit
    assert some.objective is not None and some.bound is not None
    assert some.objective < some.bound  # maximising: the proven bound lies above


def test_no_time_left_does_not_call_cp_sat():
    model, _, _ = _small_optimum()
    run = solve_cpsat(model, Deadline(10), time_limit_s=1e-4)
    assert run.status is Status.TIME_LIMIT_NO_SOLUTION and run.message == "no time left"
    assert run.solver is None and run.time_limit_hit and run.runtime_s == 0.0


def test_the_time_limit_is_what_remains_of_the_deadline_capped_by_time_limit_s():
    model, _, _ = _small_optimum()
    run = solve_cpsat(model, Deadline(30), CpsatOptions(seed=7, workers=2))
    params = run.solver.parameters
    assert 29 < params.max_time_in_seconds <= 30
    assert (params.random_seed, params.num_workers) == (7, 2)
    capped = solve_cpsat(model, Deadline(30), time_limit_s=2.5)
    assert capped.solver.parameters.max_time_in_seconds == 2.5
    unlimited = solve_cpsat(model)  # no deadline: CP-SAT's default (no limit) stays
    assert unlimited.solver.parameters.max_time_in_seconds == math.inf


def test_determinism_options_reach_cp_sat():
    model, _, _ = _small_optimum()
    run = solve_cpsat(model, options=CpsatOptions(interleave_search=True, deterministic_time_s=5))
    assert run.solver.parameters.interleave_search
    assert run.solver.parameters.max_deterministic_time == 5


def test_the_same_seed_and_one_worker_give_the_same_answer():
    answers = []
    for _ in range(2):
        model, take = _knapsack()
        run = solve_cpsat(model, options=CpsatOptions(seed=3, deterministic_time_s=1e-2))
        answers.append((run.status, run.objective, run.bound, [run.value(t) for t in take]))
    assert answers[0] == answers[1]


def test_status_names_map_explicitly_and_unknown_names_are_errors():
    assert cpsat_status("OPTIMAL") is Status.OPTIMAL
    assert cpsat_status("FEASIBLE") is Status.FEASIBLE
    assert cpsat_status("INFEASIBLE") is Status.INFEASIBLE
    assert cpsat_status("UNKNOWN") is Status.TIME_LIMIT_NO_SOLUTION
    assert cpsat_status("MODEL_INVALID") is Status.ERROR
    assert cpsat_status("SOMETHING_NEW") is Status.ERROR


def test_options_are_checked():
    with pytest.raises(ValueError, match="worker"):
        CpsatOptions(workers=0)
    with pytest.raises(ValueError, match="deterministic_time_s"):
        CpsatOptions(deterministic_time_s=0)


def test_model_size_counts_variables_and_constraints():
    model, _, _ = _small_optimum()
    assert model_size(model) == (2, 2, 2)
