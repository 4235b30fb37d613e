"""The strengthened ``exact`` of family ``dmlrs`` (``ddlsched.models.dmlrs_strong``).

* On 100 ``micro`` instances (50 as generated, 50 congested: both jobs in
  slot 1, capacities halved) the strengthened model (every row on) proves
  the brute-force optimum (``tests/dmlrs_brute_force.py``, independent of the
  MILP); each strengthening alone, and every one with the MIP start, on a
  sixth of them in turn; the plain model on a third;
* on ``tiny`` instances both backends prove the plain model's optimum with
  every strengthening (the SCIP cross-check agrees);
* the MIP start is a feasible point of the strengthened model (every row
  holds at its values) whose objective is the heuristic's utility less the
  jobs it drops; the earliest completion never exceeds an optimal schedule's
  completion and is later than ``d_min`` on some instances;
* a solve that ends at the limit without a schedule returns the start.
"""

from __future__ import annotations

import dataclasses

import pyomo.environ as pyo
import pytest
from dmlrs_brute_force import brute_force_optimum

from ddlsched.deadline import Deadline
from ddlsched.models.dmlrs import ExactFormulation, solve_exact
from ddlsched.models.dmlrs_strong import (
    Strengthening,
    best_heuristic_schedule,
    earliest_completion,
    start_values,
)
from ddlsched.problems.dmlrs import DmlrsInstance, evaluate, fastest_slots
from ddlsched.solvers import Status
from ddlsched.workloads.dmlrs import generate

ALL_ROWS = Strengthening(start=False)
NONE = Strengthening.none()
ONE_EACH = (  # each strengthening alone (capacity_cuts needs the pattern binaries)
    dataclasses.replace(NONE, earliest=True),
    dataclasses.replace(NONE, completion_work=True),
    dataclasses.replace(NONE, patterns=True),
    dataclasses.replace(NONE, capacity_cuts=True),
    dataclasses.replace(NONE, start=True),
    Strengthening(),  # every row and the start
)


def congested(instance: DmlrsInstance, scale: float) -> DmlrsInstance:
    """Every job arriving in slot 1, capacities times ``scale``."""
    return dataclasses.replace(
        instance,
        jobs=tuple(dataclasses.replace(j, arrival_slot=1) for j in instance.jobs),
        capacity=tuple(tuple(c * scale for c in cap) for cap in instance.capacity),
    )


MICRO = [generate("micro", s) for s in range(50)] + [
    congested(generate("micro", s), 0.5) for s in range(50)
]


def optimum(instance: DmlrsInstance, which: Strengthening, backend: str = "highs") -> float:
    outcome = solve_exact(instance, backend, 0, False, Deadline.unlimited(), strengthening=which)
    assert outcome.status is Status.OPTIMAL
    value = evaluate(instance, outcome.schedule).total_utility
    assert value == pytest.approx(outcome.claim.value, rel=1e-7, abs=1e-7)
    return value


@pytest.mark.parametrize("k", range(len(MICRO)))
def test_strengthened_exact_equals_brute_force_and_plain(k):
    instance = MICRO[k]
    truth = brute_force_optimum(instance)
    settings = [ALL_ROWS, ONE_EACH[k % len(ONE_EACH)]]
    if k % 3 == 0:
        settings.append(Strengthening.none())
    for which in settings:
        assert optimum(instance, which) == pytest.approx(truth, rel=1e-9, abs=1e-9), which


def test_micro_set_is_not_trivial():
    """The brute-force comparison covers optima below the sum of the jobs' best utilities."""
    below = sum(
        brute_force_optimum(instance)
        < sum(instance.jobs[i].utility(fastest_slots(instance, i) - 1) for i in range(2)) - 1e-6
        for instance in MICRO[::4]
    )
    assert below >= 5


TINY = [generate("tiny", s, jobs=5) for s in range(4)] + [
    congested(generate("tiny", s), 0.5) for s in range(2)
]


@pytest.mark.parametrize("k", range(len(TINY)))
def test_both_backends_prove_the_plain_optimum(k, backend):
    instance = TINY[k]
    plain = optimum(instance, Strengthening.none())
    assert optimum(instance, Strengthening(), backend) == pytest.approx(plain, rel=1e-7, abs=1e-7)


@pytest.mark.parametrize("k", [0, 3])
def test_scip_cross_check_agrees_on_the_strengthened_model(k):
    instance = TINY[k]
    outcome = solve_exact(instance, "highs", 0, True, Deadline.unlimited())
    assert outcome.info["cross_check"]["agree"] is True


def _violated_rows(model: pyo.ConcreteModel) -> list[str]:
    bad = []
    for row in model.component_data_objects(pyo.Constraint, active=True):
        value = pyo.value(row.body)
        if (row.lower is not None and value < pyo.value(row.lower) - 1e-6) or (
            row.upper is not None and value > pyo.value(row.upper) + 1e-6
        ):
            bad.append(row.name)
    for var in model.component_data_objects(pyo.Var):
        if (var.lb is not None and var.value < var.lb - 1e-9) or (
            var.ub is not None and var.value > var.ub + 1e-9
        ):
            bad.append(var.name)
    return bad


@pytest.mark.parametrize("seed", range(8))
def test_mip_start_is_feasible_and_worth_the_heuristic(seed):
    instance = generate("tiny", seed, jobs=8) if seed % 2 else congested(generate("tiny", seed), 1)
    schedule = best_heuristic_schedule(instance, 0, Deadline.unlimited())
    assert schedule is not None
    model = ExactFormulation(Strengthening()).build(instance, Deadline.unlimited())
    values = start_values(model, instance, schedule)
    assert len(values) == sum(1 for _ in model.component_data_objects(pyo.Var))
    for var, value in values:
        var.set_value(value, skip_validation=True)
    assert _violated_rows(model) == []
    evaluation = evaluate(instance, schedule)
    started = {i for (i, t), var in model.c.items() if var.value > 0.5}
    assert started <= set(schedule.accepted)
    dropped = sum(evaluation.job_utility[i] for i in set(schedule.accepted) - started)
    assert pyo.value(model.objective) == pytest.approx(evaluation.total_utility - dropped)
    assert len(started) >= len(schedule.accepted) - 1  # the slack drops a job at most rarely


def test_earliest_completion_is_a_lower_bound_and_tighter_than_d_min():
    for instance in MICRO[:40] + TINY:
        outcome = solve_exact(
            instance, "highs", 0, False, Deadline.unlimited(), strengthening=Strengthening.none()
        )
        for i, slot in evaluate(instance, outcome.schedule).completion_slot.items():
            assert earliest_completion(instance, i) <= slot
    later = 0
    for instance in MICRO + TINY:
        for i, job in enumerate(instance.jobs):
            d_min = job.arrival_slot + fastest_slots(instance, i) - 1
            if d_min <= instance.slots:  # the job has variables
                first = earliest_completion(instance, i)
                later += first is None or first > d_min
    assert later >= 5


def test_start_is_the_answer_when_the_solver_has_no_schedule(monkeypatch):
    import ddlsched.solvers.formulation as formulation_module
    from ddlsched.solvers.result import Outcome

    def no_schedule(*args, **kwargs):
        return Outcome(status=Status.TIME_LIMIT_NO_SOLUTION, time_limit_hit=True)

    monkeypatch.setattr(formulation_module, "solve_formulation", no_schedule)
    instance = TINY[0]
    outcome = solve_exact(instance, "highs", 0, False, Deadline.unlimited())
    assert outcome.status is Status.FEASIBLE and "fallback" in outcome.info
    best = best_heuristic_schedule(instance, 0, Deadline.unlimited())
    assert outcome.schedule == best
    plain = solve_exact(
        instance, "highs", 0, False, Deadline.unlimited(), strengthening=Strengthening.none()
    )
    assert plain.schedule is None  # without a start there is nothing to fall back on
