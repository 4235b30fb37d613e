"""The ``contention`` preset and the contention-aware exact search (``models/rar_search.py``).

Checks: the preset's floor (contention decides the optimum on at least half
of a fixed seed set, proven by the search); the search equals an independent
brute force (``tests/rar_brute_force.py``: every timetable of bounded starts,
executed slot by slot with its own contention count; on 2-job instances
every concrete GPU set executed by the evaluator) on contention-bound tiny
instances; the deadline; same seed same schedule; the size refusal.
"""

from __future__ import annotations

import itertools
from dataclasses import replace

import pytest
from fake_clock import StepClock
from rar_brute_force import brute_force_makespan

from ddlsched.deadline import Deadline
from ddlsched.errors import InfeasibleScheduleError, ModelTooLargeError
from ddlsched.models.rar_search import search_exact, search_schedule
from ddlsched.problems.rar import RarInstance
from ddlsched.problems.rar_schedule import RarAssignment, RarSchedule, evaluate
from ddlsched.registry import RunOptions, run_method
from ddlsched.workloads.rar import CONTENTION_FLOOR, generate

#: Tiny contention-bound instances (3 jobs, iterations / 4) whose brute force takes < 0.5 s.
TINY_SEEDS = (5, 8, 12, 20, 23, 26, 27, 28, 35, 39, 46, 48, 49, 50, 52, 54, 55, 58, 59, 60)


def contention_free(instance: RarInstance) -> RarInstance:
    """The same instance without contention: ``xi1 p_j < 1`` keeps ``B_j = b_e`` (Eq. 7)."""
    return replace(instance, network=replace(instance.network, xi1=1e-3))


def tiny(seed: int) -> RarInstance:
    inst = generate("contention", seed, num_jobs=3)
    jobs = tuple(replace(j, iterations=max(1, j.iterations // 4)) for j in inst.jobs)
    return replace(inst, jobs=jobs)


# --------------------------------------------------------------------------- brute force


def brute_force_evaluator(inst: RarInstance, max_start: int) -> int:
    """Best makespan over every concrete GPU set and planned start, by the evaluator."""
    gpu_ids = inst.gpu_ids
    options = [
        [
            (gpus, st)
            for gpus in itertools.combinations(gpu_ids, job.gpus)
            for st in range(max_start + 1)
        ]
        for job in inst.jobs
    ]
    best = None
    for combo in itertools.product(*options):
        sched = RarSchedule(
            {job.id: RarAssignment(g, st) for job, (g, st) in zip(inst.jobs, combo, strict=True)}
        )
        try:
            m = evaluate(inst, sched).makespan
        except InfeasibleScheduleError:
            continue
        best = m if best is None else min(best, m)
    return best


# --------------------------------------------------------------------------- tests


def test_preset_floor_contention_decides_on_half():
    """Seeds 0-9: the proven optimum exceeds the contention-free optimum on >= half."""
    binds = 0
    for seed in range(10):
        inst = generate("contention", seed)
        opt = search_exact(inst)
        free = search_exact(contention_free(inst))
        assert opt.proven and free.proven
        binds += opt.makespan > free.makespan
    assert binds / 10 >= CONTENTION_FLOOR >= 0.5


def test_timeindexed_bound_is_the_contention_free_optimum():
    inst = generate("contention", 0)
    ti = run_method("rar", "timeindexed", inst, RunOptions(time_limit_s=30))
    assert ti.bound == search_exact(contention_free(inst)).makespan
    assert search_exact(inst).makespan > ti.bound


@pytest.mark.parametrize("seed", TINY_SEEDS)
def test_search_equals_brute_force_on_contention_bound_tiny(seed):
    inst = tiny(seed)
    result = search_exact(inst)
    assert result.proven
    opt = result.makespan
    # the search's schedule, executed by the evaluator, has the makespan it claims
    assert evaluate(inst, search_schedule(inst, result)).makespan == opt
    # no timetable is shorter (brute force), and contention binds (a shorter one without it)
    assert brute_force_makespan(inst, below=opt) == opt
    assert brute_force_makespan(contention_free(inst), below=opt, first=True) < opt


def test_search_equals_evaluator_brute_force_on_two_jobs():
    """Every concrete GPU set and planned start, executed by the evaluator itself."""
    for seed in (0, 3):
        full = tiny(seed)
        inst = replace(full, jobs=full.jobs[:2])
        result = search_exact(inst)
        assert brute_force_evaluator(inst, result.makespan) == result.makespan


def test_exact_uses_the_search_and_proves_a_contention_bound_optimum():
    inst = generate("contention", 3)
    res = run_method("rar", "exact", inst, RunOptions(time_limit_s=60))
    assert str(res.status) == "optimal"
    assert res.info["exact_method"] == "search" and res.info["proof"] == "search"
    assert res.objective == res.bound > res.info["timeindexed_bound"]


def test_deadline_returns_incumbent_and_valid_bound():
    inst = generate("contention", 23)
    opt = 23  # proven by the search (benchmarks/results/rar-contention.md)
    deadline = Deadline(1e-6)
    result = search_exact(inst, deadline=deadline)
    assert not result.proven
    assert result.bound <= opt
    if result.makespan is not None:
        assert result.makespan >= opt


def test_exact_time_limit_is_not_optimal_when_the_search_stops():
    """The search stops at its first deadline check (a clock of the test's: 1 s per read)."""
    inst = generate("contention", 23)
    options = RunOptions(time_limit_s=1.5, params={"presolve_bounds": False, "search": "always"})
    deadline = Deadline(1.5, clock=StepClock(tick_s=1.0))
    res = run_method("rar", "exact", inst, options, deadline=deadline)
    assert str(res.status) in ("feasible", "time_limit_no_solution")
    assert res.bound is None or res.bound <= 23  # the optimum (see above)


def test_same_seed_same_schedule_and_seed_independent_optimum():
    inst = generate("contention", 0)
    runs = [
        run_method("rar", "exact", inst, RunOptions(time_limit_s=60, seed=s)) for s in (0, 0, 1)
    ]
    assert runs[0].schedule == runs[1].schedule
    assert {(str(r.status), r.objective) for r in runs} == {("optimal", runs[0].objective)}


def test_search_refuses_large_instances_in_one_line():
    inst = generate("contention", 0, num_jobs=9)
    with pytest.raises(ModelTooLargeError, match="exact search: 9 jobs > 8") as err:
        search_exact(inst)
    assert "\n" not in str(err.value)
    res = run_method("rar", "exact", inst, RunOptions(params={"search": "always"}))
    assert str(res.status) == "error"


def test_auto_hands_an_unfinished_search_to_the_milp(monkeypatch):
    """The test's clock cuts the search after a few deadline checks (0.05 s a read) and
    then says the search used the whole limit: the MILP starts with the search's incumbent
    and bound at the deadline, whatever the machine's speed."""
    import ddlsched.models.rar_search as rar_search

    clock = StepClock(tick_s=0.05)
    real_search = rar_search.search_exact

    def search_using_the_limit(*args, **kwargs):
        result = real_search(*args, **kwargs)
        clock.advance(1.0)
        return result

    monkeypatch.setattr(rar_search, "search_exact", search_using_the_limit)
    inst = generate("contention", 23)
    options = RunOptions(time_limit_s=0.5, params={"presolve_bounds": False})
    res = run_method("rar", "exact", inst, options, deadline=Deadline(0.5, clock=clock))
    assert res.info["exact_method"] == "milp" and res.info["search"]["nodes"] > 0
    assert str(res.status) == "feasible"
    assert res.bound <= 23 <= res.objective  # 23: the optimum (see above)
