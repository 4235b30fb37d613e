"""Family ``asrpt``: the strengthenings of ``exact`` cut off no optimum.

:mod:`ddlsched.models.asrpt_strengthen`. The strengthened model (every
strengthening on, the default) must prove the same optimum as the model
without them (every one off) on >= 100 small instances: tiny (drawn, and 4
jobs), tiny-comm, and tiny instances with every job doubled at the same
arrival (identical jobs, so the symmetry constraints bind). Each added bound
must lie at or below the optimum; each strengthening alone is run on a part
of the instances; instances with twins are checked against the brute force
of ``test_asrpt_models`` as well.
"""

from __future__ import annotations

import dataclasses
from functools import cache

import pytest
from test_asrpt_models import brute_force
from tiers import sweep

from ddlsched.deadline import Deadline
from ddlsched.models.asrpt_exact import solve_exact
from ddlsched.models.asrpt_integer import make_data
from ddlsched.models.asrpt_strengthen import (
    Strengthening,
    identical_classes,
    improve_schedule,
    improved_incumbent,
    lp_lower_bound,
    objective_lower_bound,
    release_classes,
    search_incumbent,
    sorted_within_classes,
)
from ddlsched.problems.asrpt import AsrptInstance
from ddlsched.problems.asrpt_schedule import AsrptSchedule, evaluate
from ddlsched.solvers.result import Status
from ddlsched.workloads.asrpt import tiny, tiny_comm

REL = 1e-9


def _twins(seed: int) -> AsrptInstance:
    """``tiny(seed, num_jobs=2)`` with every job doubled at the same arrival."""
    base = tiny(seed, num_jobs=2)
    jobs = list(base.jobs)
    for job in base.jobs:
        jobs.append(dataclasses.replace(job, id=job.id + "b"))
    return dataclasses.replace(base, jobs=tuple(jobs))


def _staggered(seed: int) -> AsrptInstance:
    """``tiny(seed, num_jobs=2)`` with every job doubled, the copy released one or two
    time units later (same mode list, different releases: ``release_order`` binds)."""
    base = tiny(seed, num_jobs=2)
    jobs = list(base.jobs)
    for k, job in enumerate(base.jobs):
        later = job.arrival_s + (1 + (seed + k) % 2) * base.time_unit_s
        jobs.append(dataclasses.replace(job, id=job.id + "b", arrival_s=later))
    return dataclasses.replace(base, jobs=tuple(jobs))


#: 114 small instances: (label, builder); tiny seeds 13 and 16 left out (slow)
CASES = (
    [(f"tiny-{s}", lambda s=s: tiny(s)) for s in range(32) if s not in (13, 16)]
    + [(f"tiny4-{s}", lambda s=s: tiny(s, num_jobs=4)) for s in range(30, 70)]
    + [(f"comm-{s}", lambda s=s: tiny_comm(s)) for s in range(24)]
    + [(f"twins-{s}", lambda s=s: _twins(s)) for s in range(20)]
)
ONE_AT_A_TIME = [
    Strengthening(**{f.name: f.name == name for f in dataclasses.fields(Strengthening)})
    for name in (
        "incumbent_search",
        "objective_bound",
        "lp_bound",
        "symmetry",
        "lp_relaxation",
        "improve_incumbent",
        "job_windows",
        "release_order",
        "milp_proof",
    )
]


@cache
def _instance(index: int) -> AsrptInstance:
    return CASES[index][1]()


@cache
def _old(index: int) -> float:
    out = solve_exact(_instance(index), time_limit_s=60, strengthening=Strengthening.none())
    assert out.status is Status.OPTIMAL and out.claim is not None and out.claim.proven
    return out.claim.value


def _check(index: int, strengthening: Strengthening) -> None:
    instance = _instance(index)
    out = solve_exact(instance, time_limit_s=60, strengthening=strengthening)
    assert out.status is Status.OPTIMAL and out.claim is not None and out.claim.proven
    value = evaluate(instance, out.schedule).total_completion_s
    assert value == pytest.approx(_old(index), rel=REL)
    assert out.claim.value == pytest.approx(value, rel=REL)
    optimum_units = out.info["objective_units"]
    for solve in out.info["solves"].values():
        for name, bound in (solve.get("added_bounds") or {}).items():
            assert bound <= optimum_units, name


@pytest.mark.parametrize("index", sweep(range(len(CASES)), 4), ids=[label for label, _ in CASES])
def test_strengthened_exact_equals_the_old_model(index):
    _check(index, Strengthening())


@pytest.mark.parametrize("index", range(0, len(CASES), 4), ids=lambda i: CASES[i][0])
def test_each_strengthening_alone_equals_the_old_model(index):
    _check(index, ONE_AT_A_TIME[(index // 4) % len(ONE_AT_A_TIME)])


@pytest.mark.parametrize("seed", range(6))
def test_twins_equal_the_brute_force(seed):
    instance = _twins(seed)
    out = solve_exact(instance, time_limit_s=60)
    assert out.status is Status.OPTIMAL
    value = evaluate(instance, out.schedule).total_completion_s
    assert brute_force(instance) == pytest.approx(value, rel=REL, abs=1e-6)


@pytest.mark.parametrize("seed", range(6))
def test_staggered_twins_equal_the_brute_force(seed):
    instance = _staggered(seed)
    data = _data(instance)
    assert release_classes(data), "the instance must have a class for the test to bind"
    out = solve_exact(instance, time_limit_s=60)
    assert out.status is Status.OPTIMAL
    value = evaluate(instance, out.schedule).total_completion_s
    assert brute_force(instance) == pytest.approx(value, rel=REL, abs=1e-6)
    alone = Strengthening(release_order=True, **{f: False for f in _OTHERS})
    out_alone = solve_exact(instance, time_limit_s=60, strengthening=alone)
    assert out_alone.status is Status.OPTIMAL
    alone_value = evaluate(instance, out_alone.schedule).total_completion_s
    assert alone_value == pytest.approx(value, rel=REL)


_OTHERS = [f.name for f in dataclasses.fields(Strengthening) if f.name != "release_order"]


def test_release_classes_order_by_release_and_sort_the_hint():
    data = _data(_staggered(1))
    classes = release_classes(data)
    for members in classes:
        releases = [data.release[i] for i in members]
        assert releases == sorted(releases) and len(set(releases)) > 1
    hint = sorted_within_classes(data.incumbent, classes)
    for members in classes:
        starts = [hint.start[i] for i in members]
        assert starts == sorted(starts)
        assert all(hint.start[i] >= data.release[i] for i in members)
    assert hint.objective(data) == data.incumbent.objective(data)


def _data(instance: AsrptInstance):
    from ddlsched.models.asrpt_exact import _integer_data, _job_modes

    modes, _ = _job_modes(instance, "highs", Deadline(60), False, 0)
    return _integer_data(instance, modes, 5000)[0]


def test_twins_form_classes_and_the_hint_is_sorted():
    data = _data(_twins(0))
    classes = identical_classes(data)
    # job 0 has fewer modes (non-increasing u only) than its twin 2
    assert [1, 3] in classes
    hint = sorted_within_classes(data.incumbent, classes)
    for members in classes:
        starts = [hint.start[i] for i in members]
        assert starts == sorted(starts)
    assert hint.objective(data) == data.incumbent.objective(data)


@pytest.mark.parametrize("seed", range(8))
def test_searched_incumbent_is_feasible_and_no_worse(seed):
    from ddlsched.models.asrpt_integer import to_schedule

    instance = tiny(seed, num_jobs=6)
    data = _data(instance)
    found = search_incumbent(data)
    assert found.objective(data) <= data.incumbent.objective(data)
    schedule = to_schedule(data, found)  # the evaluator refuses an infeasible schedule
    total = evaluate(instance, schedule).total_completion_s
    assert total == pytest.approx(found.objective(data) * instance.time_unit_s, rel=REL)


def test_bounds_can_fail_when_the_data_lie():
    """The bounds read the data: durations halved give smaller bounds (the check has teeth)."""
    data = _data(tiny(2, num_jobs=6))
    halved = [[dataclasses.replace(m, duration=m.duration // 2) for m in ms] for ms in data.modes]
    smaller = make_data(data.instance, "down", data.release, halved)
    assert objective_lower_bound(smaller) < objective_lower_bound(data)
    lp, lp_small = lp_lower_bound(data, Deadline(30)), lp_lower_bound(smaller, Deadline(30))
    assert lp is not None and lp_small is not None and lp_small.bound < lp.bound
    assert sorted(lp.order) == list(range(data.num_jobs))


def _renumbered(schedule: AsrptSchedule, servers: int) -> AsrptSchedule:
    """``schedule`` with server ``m`` renamed ``servers - 1 - m`` (an equivalent schedule)."""
    runs = {
        job: dataclasses.replace(run, servers=tuple(servers - 1 - m for m in run.servers))
        for job, run in schedule.runs.items()
    }
    return AsrptSchedule(runs)


@pytest.mark.parametrize("seed", range(8))
def test_improved_incumbent_is_feasible_and_no_worse_than_improve(seed):
    """improve's schedule mapped onto the integer data (either server numbering): feasible
    for the evaluator, its integer value the evaluated one, and no worse than improve's
    own total (whole data: the serial schedule in improve's order only shifts jobs left)."""
    from ddlsched.models.asrpt_integer import to_schedule

    instance = tiny(seed, num_jobs=10, servers=2)
    data = _data(instance)
    schedule = improve_schedule(data, Deadline(30))
    assert schedule is not None
    improve_units = evaluate(instance, schedule).total_completion_s / instance.time_unit_s
    for candidate in (schedule, _renumbered(schedule, instance.cluster.servers)):
        found = improved_incumbent(data, candidate)
        assert found is not None
        assert data.modes[0][found.mode[0]].usage == tuple(
            sorted(data.modes[0][found.mode[0]].usage, reverse=True)
        )
        total = evaluate(instance, to_schedule(data, found)).total_completion_s
        assert total == pytest.approx(found.objective(data) * instance.time_unit_s, rel=REL)
        assert found.objective(data) <= improve_units * (1 + REL)


def test_improve_incumbent_beats_the_serial_search():
    """On a frontier instance (20 jobs) improve's schedule beats the searched serial
    incumbent; it becomes the incumbent and no window grows."""
    from ddlsched.models.asrpt_strengthen import with_incumbent

    instance = tiny(2, num_jobs=20)
    data = _data(instance)
    searched = search_incumbent(data)
    found = improved_incumbent(data, improve_schedule(data, Deadline(30)))
    assert found is not None and found.objective(data) < searched.objective(data)
    tighter, searched_data = with_incumbent(data, found), with_incumbent(data, searched)
    assert tighter.incumbent == found
    assert all(a <= b for a, b in zip(tighter.latest_end, searched_data.latest_end, strict=True))


@pytest.mark.parametrize("seed", sweep(range(6), 2))
def test_job_windows_hold_the_optimum_and_are_no_wider(seed):
    """Per job, the bound on the other jobs' total lies at or below their total in a
    proven optimum, and the windows are no wider than the floors'."""
    from ddlsched.models.asrpt_strengthen import with_incumbent, with_job_windows

    instance = tiny(seed, num_jobs=6)
    data = _data(instance)
    out = solve_exact(instance, time_limit_s=60, strengthening=Strengthening.none())
    assert out.status is Status.OPTIMAL
    optimum = out.info["objective_units"]
    windowed = with_job_windows(data)
    assert windowed.others_bound is not None
    ends = [
        s + data.modes[i][k].duration
        for i, (s, k) in enumerate(zip(*_solution(out, data), strict=True))
    ]
    for i, bound in enumerate(windowed.others_bound):
        assert bound <= optimum - ends[i]
        assert ends[i] <= windowed.latest_end[i] <= data.latest_end[i]
    assert with_incumbent(windowed, windowed.incumbent).others_bound == windowed.others_bound
    large = _data(tiny(seed, num_jobs=12))
    windows = with_job_windows(large).latest_end
    assert all(a <= b for a, b in zip(windows, large.latest_end, strict=True))


def test_job_windows_are_tighter_with_a_good_incumbent():
    """With improve's incumbent on a 20-job frontier instance, the per-job windows hold
    at least 40 % fewer start slots than the floors' windows."""
    from ddlsched.models.asrpt_strengthen import with_incumbent, with_job_windows

    data = _data(tiny(0, num_jobs=20))
    found = improved_incumbent(data, improve_schedule(data, Deadline(30)))
    assert found is not None
    data = with_incumbent(data, found)

    def slots(d) -> int:
        return sum(d.latest_end[i] - d.release[i] for i in range(d.num_jobs))

    assert slots(with_job_windows(data)) < 0.6 * slots(data)


def _solution(out, data) -> tuple[list[int], list[int]]:
    """Starts (units) and modes of ``out``'s schedule on ``data`` (whole data)."""
    unit = data.instance.time_unit_s
    starts, modes = [], []
    for i, job in enumerate(data.instance.jobs):
        run = out.schedule.runs[job.id]
        counts = [0] * data.instance.cluster.servers
        for m, gpus in run.gpus_on().items():
            counts[m] += gpus
        usage = {tuple(counts), tuple(reversed(counts))}
        k = next(k for k, mode in enumerate(data.modes[i]) if mode.usage in usage)
        starts.append(round(run.start_s / unit))
        modes.append(k)
    return starts, modes


def test_lp_bound_is_the_dual_bound_not_the_primal_objective(monkeypatch):
    """The bound rounds up the proven weak-duality bound alone: a primal objective below
    it (possible within HiGHS's tolerances) does not pull it down."""
    from ddlsched.solvers import backends

    data = _data(tiny(2, num_jobs=6))
    proven = lp_lower_bound(data, Deadline(30))
    assert proven is not None and proven.bound == 244
    real = backends.solve_model

    def primal_below(*args, **kwargs):
        out = real(*args, **kwargs)
        return dataclasses.replace(out, incumbent=out.incumbent - 5.0)

    monkeypatch.setattr(backends, "solve_model", primal_below)
    lowered = lp_lower_bound(data, Deadline(30))
    assert lowered is not None and lowered.bound == proven.bound


def test_lp_bound_stays_below_a_known_schedule():
    """``tiny(3, num_jobs=20)`` has a schedule of 1,187 units (the time-indexed MILP finds
    it and proves it optimal, ``solver=milp``, about 30 s); the IPM without crossover
    reported the LP as 1187.0039 and the bound became 1,188."""
    data = _data(tiny(3, num_jobs=20))
    lp = lp_lower_bound(data, Deadline(120))
    assert lp is not None and lp.bound <= 1187


@pytest.mark.parametrize("index", sweep(range(0, 40, 5), 2), ids=lambda i: CASES[i][0])
def test_milp_proof_after_a_cpsat_that_proves_nothing(index, monkeypatch):
    """CP-SAT left no time: the time-indexed MILP proves the old model's optimum on the
    same data, and the result says which model's schedule it is."""
    import ddlsched.models.asrpt_exact as exact

    monkeypatch.setattr(exact, "CPSAT_SHARE", 1e-9)
    instance = _instance(index)
    out = solve_exact(instance, time_limit_s=60)
    assert out.status is Status.OPTIMAL
    assert "upper/milp" in out.info["solves"]
    assert out.info["solves"]["upper/cpsat"]["status"] != "optimal"
    assert evaluate(instance, out.schedule).total_completion_s == pytest.approx(
        _old(index), rel=REL
    )
    off = solve_exact(instance, time_limit_s=60, strengthening=Strengthening(milp_proof=False))
    assert "upper/milp" not in off.info["solves"]


def test_cpsat_effort_is_reported():
    """Every CP-SAT solve records its deterministic time, branches and conflicts."""
    out = solve_exact(tiny(0, num_jobs=10), time_limit_s=60)
    search = out.info["solves"]["upper/cpsat"]["search"]
    assert set(search) == {"deterministic_time", "branches", "conflicts"}
    assert all(value >= 0 for value in search.values()) and search["deterministic_time"] > 0


def test_a_model_bound_above_a_schedule_claims_no_optimum(monkeypatch):
    """A scheduling model whose lower bound lies above a schedule (a solver's error, e.g. an
    LP value rounded up past the optimum) is caught: no optimality is claimed, the model's
    bound is dropped, and two solves that disagree that way are a disagreement."""
    import ddlsched.models.asrpt_exact as exact
    from ddlsched.models.asrpt_solve import agreement

    real = exact.solve_integer

    def inflated(*args, **kwargs):
        res = real(*args, **kwargs)
        if res.objective is not None:
            res = dataclasses.replace(res, bound=res.objective + 7, status=Status.FEASIBLE)
        return res

    monkeypatch.setattr(exact, "solve_integer", inflated)
    out = solve_exact(tiny(1, num_jobs=4), time_limit_s=60)
    assert out.status is Status.FEASIBLE and "model" not in out.info["bounds"]
    assert out.bound <= evaluate(tiny(1, num_jobs=4), out.schedule).total_completion_s
    assert "no optimality claimed" in out.info["error_note"]
    solve = real(*_integer_args(tiny(1, num_jobs=4)))
    high = dataclasses.replace(solve, bound=solve.objective + 1, status=Status.FEASIBLE)
    assert agreement(high, solve) is False and agreement(solve, solve) is not False


def _integer_args(instance: AsrptInstance):
    """``solve_integer``'s arguments for ``instance``'s whole data (CP-SAT, one thread)."""
    data = _data(instance)
    return data, "cpsat", "highs", Deadline(60), (False, 0, 1, Strengthening())
