"""The strengthened ``exact`` of family ``dmlrs`` (``ddlsched.models.dmlrs_strong``).

* On 100 ``micro`` instances (50 as generated, 50 congested: both jobs in
  slot 1, capacities halved) the strengthened model (every row on) proves
  the brute-force optimum (``tests/dmlrs_brute_force.py``, independent of the
  MILP); each strengthening alone, and every one with the MIP start, on a
  tenth of them in turn; the plain model on a third; a deliberately wrong
  ``no_surplus`` (every mode completes its job alone) or ``packing`` (a
  function that is not dual feasible) is caught by the same comparison, and
  the set has jobs whose modes do and do not complete them alone;
* ``no_surplus`` and ``packing`` on the counts of jobs without pattern
  binaries (the plain path) keep the optimum; ``finishing_workers`` is the least count;
* on ``tiny`` instances both backends prove the plain model's optimum with
  every strengthening (the SCIP cross-check agrees);
* the MIP start is a feasible point of the strengthened model (every row
  holds at its values) whose objective is the heuristic's utility less the
  jobs it drops; the earliest completion never exceeds an optimal schedule's
  completion and is later than ``d_min`` on some instances;
* a solve that ends at the limit without a schedule returns the start;
  ``improve_start``'s start is at least the heuristics' and the same twice.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pyomo.environ as pyo
import pytest
from dmlrs_brute_force import brute_force_optimum
from tiers import sweep

from ddlsched.deadline import Deadline
from ddlsched.models.dmlrs import ExactFormulation, solve_exact
from ddlsched.models.dmlrs_milp import job_data
from ddlsched.models.dmlrs_start import IMPROVE_WINDOWS, best_heuristic_schedule, start_values
from ddlsched.models.dmlrs_strong import (
    Strengthening,
    earliest_completion,
    finishes_alone,
    finishing_workers,
    job_facts,
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
    dataclasses.replace(NONE, no_surplus=True),
    dataclasses.replace(NONE, packing=True),
    dataclasses.replace(NONE, start=True, improve_start=True),
    dataclasses.replace(NONE, solver_symmetry=True),
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


@pytest.mark.parametrize("k", sweep(range(len(MICRO)), 3))
def test_strengthened_exact_equals_brute_force_and_plain(k):
    instance = MICRO[k]
    truth = brute_force_optimum(instance)
    settings = [ALL_ROWS, ONE_EACH[k % len(ONE_EACH)]]
    if k % 3 == 0:
        settings.append(Strengthening.none())
    for which in settings:
        assert optimum(instance, which) == pytest.approx(truth, rel=1e-9, abs=1e-9), which


@pytest.mark.parametrize("seed", [50, 53, 57])
def test_capacity_cuts_where_no_job_fits_a_machine(seed):
    """At a third of the capacities no job of these ``micro`` instances fits one worker on a
    machine: the aggregated capacity rows have no variable there (the sum is 0); they are
    left out, not handed to Pyomo as ``0 <= C`` (which it refuses)."""
    instance = congested(generate("micro", seed), 0.35)
    truth = brute_force_optimum(instance)
    for which in (ALL_ROWS, dataclasses.replace(Strengthening.none(), capacity_cuts=True)):
        assert optimum(instance, which) == pytest.approx(truth, rel=1e-9, abs=1e-9), which


def _wrong_optima(monkeypatch, which: Strengthening) -> int:
    """How many ``micro`` instances (every other one) ``which`` proves a wrong optimum on."""
    wrong = 0
    for instance in MICRO[::2]:
        outcome = solve_exact(
            instance, "highs", 0, False, Deadline.unlimited(), strengthening=which
        )
        value = evaluate(instance, outcome.schedule).total_utility
        wrong += value < brute_force_optimum(instance) - 1e-6
    return wrong


def test_a_wrong_no_surplus_row_is_caught(monkeypatch):
    """Every mode declared to complete its job alone cuts off the optima with a job that
    runs in two slots: the brute-force comparison sees it."""
    import ddlsched.models.dmlrs_strong as strong

    monkeypatch.setattr(strong, "finishes_alone", lambda job, workers, internal: True)
    assert _wrong_optima(monkeypatch, dataclasses.replace(NONE, no_surplus=True)) >= 1


def test_a_wrong_packing_row_is_caught(monkeypatch):
    """``f(x) = min(1, 2 x)`` is not dual feasible (two items of 0.4 fit, 0.8 + 0.8 > 1)."""
    import ddlsched.models.dmlrs_strong as strong

    monkeypatch.setattr(strong, "dual_feasible", lambda x, k: np.minimum(1.0, 2 * x))
    assert _wrong_optima(monkeypatch, dataclasses.replace(NONE, packing=True)) >= 1


def test_micro_set_has_jobs_completed_alone_and_not():
    """``no_surplus``'s rows matter on the set: some jobs' modes complete them in one slot,
    some jobs' modes never do."""
    alone = never = 0
    for instance in MICRO:
        facts = job_facts(instance, [i for i in range(2) if job_data(instance, i)], True)
        for job in facts.values():
            top = int(job.int_top.max())
            if top and finishes_alone(job, top, internal=True):
                alone += 1
            elif not finishes_alone(job, job.ext_top, internal=False):
                never += 1
    assert alone >= 10 and never >= 10


@pytest.mark.parametrize("rate", [0.5, 1.0, 0.3, 2.5, 1 / 3, 0.999999])
def test_finishing_workers_is_the_least_count(rate):
    workers = finishing_workers(rate)
    assert workers * rate >= 1.0 + 1e-9
    assert workers == 1 or (workers - 1) * rate < 1.0 + 1e-9


@pytest.mark.parametrize("k", range(0, 100, 10))
def test_rows_on_jobs_without_patterns_keep_the_optimum(monkeypatch, k):
    """With no pattern binaries (every job above the limit), ``no_surplus`` only bounds the
    counts and ``packing`` weighs the plain counts: the optimum is the brute force's."""
    import ddlsched.models.dmlrs_strong as strong

    monkeypatch.setattr(strong, "MAX_PATTERN_WORKERS", 0)
    instance = MICRO[k]
    which = dataclasses.replace(NONE, no_surplus=True, packing=True)
    assert optimum(instance, which) == pytest.approx(brute_force_optimum(instance), abs=1e-9)


def test_improved_start_is_at_least_the_heuristics_and_reproducible():
    instance = generate("tiny", 1, jobs=24)
    plain = best_heuristic_schedule(instance, 3, Deadline.unlimited())
    improved = best_heuristic_schedule(instance, 3, Deadline.unlimited(), improve_windows=200)
    again = best_heuristic_schedule(instance, 3, Deadline.unlimited(), improve_windows=200)
    assert improved == again
    gain = evaluate(instance, improved).total_utility - evaluate(instance, plain).total_utility
    assert gain > 1e-6


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


@pytest.mark.parametrize("k", sweep(range(len(TINY)), 4))
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


@pytest.mark.parametrize("seed", sweep(range(8), 3))  # as generated and congested
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
    best = best_heuristic_schedule(instance, 0, Deadline.unlimited(), IMPROVE_WINDOWS)
    assert outcome.schedule == best
    plain = solve_exact(
        instance, "highs", 0, False, Deadline.unlimited(), strengthening=Strengthening.none()
    )
    assert plain.schedule is None  # without a start there is nothing to fall back on
