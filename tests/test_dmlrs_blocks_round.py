"""``blocks_round`` of family ``dmlrs`` (``ddlsched.models.dmlrs_blocks_round``).

* A schedule the evaluator accepts and a bound: the schedule never above ``exact``'s proven
  optimum nor the brute-force optimum, never below the rounded relaxation's schedule, the
  bound never below either; on ``tiny`` seeds 2 and 3, where ``modes=true`` proves the
  optimum, schedule and bound meet there.
* Same inputs and seed, same schedule (the node budgets, not the clock, end the MILPs).
* The packing by hand: a block placed whole on the one machine it fits on with its PSs, a
  block that fits nowhere left out, external workers as many as fit with the PS rule; a job
  whose placed allocation falls short of its samples is topped up from free capacity (by its
  planned completion, else by ``T``) or, when that cannot be, dropped with its allocation,
  the least valuable first (``top_up=false``: dropped).
* Without an incumbent, ``improve``'s usual starts (``info['start']`` says so).
* The registered method: parameters checked (one line, exit 2), no job, an early deadline,
  ``bound_only`` when the limit stops every start after the relaxation has a bound and no
  incumbent, ``info['stopped']`` naming what the limit cut; the top-up keeps a job on its
  own machine on a tie and drops the jobs left when the deadline stops it.
"""

from __future__ import annotations

import dataclasses

import pytest
from dmlrs_brute_force import brute_force_optimum
from test_dmlrs_lagrange import MICRO, congested, optimum

from ddlsched.deadline import Deadline
from ddlsched.models import dmlrs_blocks_round
from ddlsched.models.dmlrs_blocks_round import RelaxedPlan, pack_slot, round_point
from ddlsched.problems.dmlrs import evaluate
from ddlsched.registry import RunOptions, run_method
from ddlsched.solvers import Status
from ddlsched.workloads.dmlrs import generate

TOL = 1e-6


def _run(instance, limit=60.0, **params):
    return run_method(
        "dmlrs", "blocks_round", instance, RunOptions(time_limit_s=limit, params=params)
    )


@pytest.mark.parametrize("k", [0, 3, 5, 7, 9])
def test_at_most_the_brute_force_optimum(k):
    instance = MICRO[k]
    result = _run(instance)
    truth = brute_force_optimum(instance)
    assert result.status is Status.FEASIBLE
    assert result.objective <= truth + TOL <= result.bound + 2 * TOL


TINY = [generate("tiny", s) for s in (0, 1, 4)] + [congested(generate("tiny", s)) for s in (1, 5)]


@pytest.mark.parametrize("k", range(len(TINY)))
def test_a_schedule_between_its_start_and_the_optimum(k):
    instance = TINY[k]
    result = _run(instance)
    utility = evaluate(instance, result.schedule).total_utility
    assert utility == pytest.approx(result.objective, abs=TOL)
    truth = optimum(instance)
    assert utility <= truth + TOL <= result.bound + 2 * TOL
    assert utility >= result.info["relaxation_schedule_utility"] - TOL
    assert result.info["start"] == "relaxation"
    assert result.info["best_start"] == "relaxation"


@pytest.mark.parametrize("seed", [2, 3])
def test_reaches_the_optimum_the_one_mode_relaxation_proves(seed):
    instance = generate("tiny", seed)
    result = _run(instance)
    assert result.info["relaxation"]["status"] == "optimal"
    assert result.objective == pytest.approx(optimum(instance), rel=1e-6)
    assert result.bound == pytest.approx(result.objective, rel=1e-6)


def test_same_inputs_same_schedule():
    instance = congested(generate("tiny", 5))
    first, again = _run(instance, nodes=3), _run(instance, nodes=3)
    assert first.schedule == again.schedule
    assert first.info["relaxation"]["nodes"] <= 3 + 1
    assert not first.time_limit_hit


def _two_machines():
    base = generate("tiny", 0)
    # a worker 1 GPU + 2 CPUs, a PS 3 CPUs, gamma 2; machines (4 GPUs, 16 CPUs), (16, 6)
    job = dataclasses.replace(
        base.jobs[0], gamma=2, global_batch=8, worker=(1.0, 2.0), ps=(0.0, 3.0), arrival_slot=1
    )
    return dataclasses.replace(
        base,
        jobs=(job, dataclasses.replace(job)),
        resources=("gpu", "cpu"),
        capacity=((4.0, 16.0), (16.0, 6.0)),
        slots=2,
    )


def test_packing_by_hand():
    instance = _two_machines()
    # a block of 4 workers and 2 PSs (4 GPUs, 14 CPUs) fits only machine 0
    how, placed = pack_slot(instance, {0: (4, 0)}, 100, 10.0)
    assert how == "optimal" and placed == {0: [(0, 4, 2)]}
    # a block of 5 workers fits no machine (5 GPUs on machine 0, 19 CPUs on either)
    assert pack_slot(instance, {0: (5, 0)}, 100, 10.0)[1] == {}
    # beside that block, external workers: machine 0 has 2 CPUs left, machine 1 6 CPUs:
    # 2 workers and 1 PS (7 CPUs) do not fit machine 1; 1 worker there and its PS on
    # machine 0 is refused too (3 CPUs > 2); one worker with its PS on machine 1 (5 CPUs)
    how, placed = pack_slot(instance, {0: (4, 0), 1: (0, 3)}, 100, 10.0)
    assert placed[0] == [(0, 4, 2)]
    assert sum(w for _, w, _ in placed[1]) == 1
    assert sum(s for _, _, s in placed[1]) >= 1


def test_a_job_short_of_samples_is_dropped():
    instance = _two_machines()
    job = instance.jobs[0]
    from ddlsched.problems.dmlrs_schedule import samples_in_slot

    per_slot = samples_in_slot(job, 4, instance.b_int, instance.slot_s)
    # V_i = epochs * samples: 1.5 slots of 4 workers (two slots: done), 2.5 (short)
    jobs = (
        dataclasses.replace(job, epochs=1, samples=int(1.5 * per_slot)),
        dataclasses.replace(job, epochs=1, samples=int(2.5 * per_slot)),
    )
    instance = dataclasses.replace(instance, jobs=jobs, capacity=((8.0, 32.0), (8.0, 32.0)))
    plan = RelaxedPlan({0: {1: (4, 0.0), 2: (4, 0.0)}, 1: {1: (4, 0.0), 2: (4, 0.0)}}, {})
    schedule, info = round_point(instance, plan, 100, Deadline(30.0), top_up=False)
    assert info["short_jobs"] == [1] and info["dropped"] == [1] and info["topped_up"] == []
    assert schedule.accepted == (0,) and {a.job for a in schedule.alloc} == {0}
    assert evaluate(instance, schedule).completed == 1
    # with the top-up (the default), job 1 takes the 2 more worker-slots it lacks from its
    # machine's free capacity (each machine holds one block: 4 of its 8 GPUs)
    schedule, info = round_point(instance, plan, 100, Deadline(30.0))
    assert info["short_jobs"] == [1] and info["topped_up"] == [1] and info["dropped"] == []
    assert schedule.accepted == (0, 1)
    assert sum(a.workers for a in schedule.alloc if a.job == 1) == 10
    assert evaluate(instance, schedule).completed == 2


def _short_pair(capacity, epochs=(2.5, 2.5), thetas=(10.0, 20.0)):
    """Two copies of ``_two_machines``' job, each needing ``epochs`` slots of 4 workers
    at ``b_int``, of utilities ``theta1`` ``thetas``, on machines of ``capacity``."""
    from ddlsched.problems.dmlrs import Utility
    from ddlsched.problems.dmlrs_schedule import samples_in_slot

    instance = _two_machines()
    job = instance.jobs[0]
    per_slot = samples_in_slot(job, 4, instance.b_int, instance.slot_s)
    jobs = tuple(
        dataclasses.replace(
            job, epochs=1, samples=int(e * per_slot), utility=Utility(theta, 0.5, 10.0)
        )
        for e, theta in zip(epochs, thetas, strict=True)
    )
    return dataclasses.replace(instance, jobs=jobs, capacity=capacity)


def test_a_short_job_is_topped_up_after_its_planned_completion():
    # machines of 4 GPUs: slot 1 is full (a block of 4 on each), so job 1, planned in slot
    # 1 only and 1.5 slots of work, cannot reach its samples by its planned completion;
    # slot 2 is free: 2 workers there (1 PS) finish it, one slot later
    instance = _short_pair(((4.0, 16.0), (4.0, 16.0)), epochs=(1.0, 1.5))
    plan = RelaxedPlan({0: {1: (4, 0.0)}, 1: {1: (4, 0.0)}}, {}, completion={0: 1, 1: 1})
    schedule, info = round_point(instance, plan, 100, Deadline(30.0))
    assert info["topped_up"] == [1] and info["dropped"] == []
    late = [a for a in schedule.alloc if a.job == 1 and a.slot == 2]
    assert [(a.workers, a.ps) for a in late] == [(2, 1)]
    result = evaluate(instance, schedule)
    assert result.completed == 2


def test_when_both_cannot_be_topped_up_the_less_valuable_job_is_dropped():
    # one machine of 8 GPUs, both jobs planned as blocks of 4 in slots 1-2, each short of
    # half a slot: no free GPU; job 0 (theta1 10) is dropped, job 1 (20) grows into its
    # GPUs; with the utilities swapped, the other way round
    for thetas, kept in (((10.0, 20.0), 1), ((20.0, 10.0), 0)):
        instance = _short_pair(((8.0, 32.0),), thetas=thetas)
        plan = RelaxedPlan(
            {i: {1: (4, 0.0), 2: (4, 0.0)} for i in (0, 1)}, {}, completion={0: 2, 1: 2}
        )
        schedule, info = round_point(instance, plan, 100, Deadline(30.0))
        assert info["short_jobs"] == [0, 1]
        assert info["dropped"] == [1 - kept] and info["topped_up"] == [kept]
        assert schedule.accepted == (kept,)
        assert evaluate(instance, schedule).completed == 1


def test_without_an_incumbent_improve_runs_from_its_starts(monkeypatch):
    instance = generate("tiny", 1)
    monkeypatch.setattr(
        dmlrs_blocks_round,
        "relaxation_point",
        lambda *args, **kwargs: RelaxedPlan({}, {"status": "node limit"}),
    )
    result = _run(instance, starts="fifo,drf")
    assert result.status is Status.FEASIBLE and result.bound is None
    assert result.info["start"].startswith("improve's starts")
    assert set(result.info["start_utility"]) == {"fifo", "drf"}


@pytest.mark.parametrize("param", ["nodes=0", "relax_share=0", "relax_share=1.5", "pack_nodes=-1"])
def test_bad_parameter_is_one_line_and_exit_2(cli, tmp_path, param):
    path = tmp_path / "tiny.json"
    generate("tiny", 2).save(path)
    code, _, err = cli("solve", "dmlrs", str(path), "--method", "blocks_round", "--param", param)
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and param.split("=")[0] in err


def test_no_job_is_the_empty_schedule():
    instance = dataclasses.replace(generate("tiny", 0), jobs=())
    result = _run(instance)
    assert result.status in (Status.FEASIBLE, Status.OPTIMAL) and result.objective == 0.0
    assert result.bound == 0.0


def test_an_early_deadline_gives_a_schedule_or_no_answer():
    instance = congested(generate("tiny", 5))
    truth = optimum(instance)
    for limit in (1e-6, 0.05, 0.3):
        result = _run(instance, limit=limit)
        if result.schedule is not None:
            assert result.objective <= truth + TOL
        if result.bound is not None:
            assert result.bound >= truth - TOL
        elif result.schedule is not None:
            # a schedule without a bound (on a slow machine the limit can fall there,
            # e.g. the empty schedule, utility 0): feasible, never more
            assert result.status is Status.FEASIBLE
        else:
            assert result.status is Status.TIME_LIMIT_NO_SOLUTION


def test_a_limit_that_stops_every_start_keeps_the_relaxations_bound(monkeypatch):
    # the relaxation has a bound but no incumbent, and the limit stops each of improve's
    # usual starts: the bound alone, bound_only
    from ddlsched.errors import TimeLimitReached
    from ddlsched.heuristics import dmlrs_improve
    from ddlsched.models.dmlrs import ub_trivial

    instance = congested(generate("tiny", 5))
    monkeypatch.setattr(
        dmlrs_blocks_round,
        "relaxation_point",
        lambda *args, **kwargs: RelaxedPlan(
            {}, {"status": "time limit"}, bound=ub_trivial(instance)
        ),
    )

    def stopped(*args, **kwargs):
        raise TimeLimitReached("the time limit stopped every start of improve")

    monkeypatch.setattr(dmlrs_improve, "improve", stopped)
    result = _run(instance)
    assert result.status is Status.BOUND_ONLY and result.schedule is None
    assert result.bound >= optimum(instance) - TOL and result.time_limit_hit
    assert result.info["stopped"].startswith("the relaxation at its share")
    assert "bound kept" in result.info["stopped"]


def test_the_own_machine_wins_a_tie():
    # job 0: 4 workers, 2 PSs on machine 1 (8 GPUs); job 1 holds 2 GPUs there; machine 0
    # has 6 GPUs: both can hold 6 workers of job 0, which stays where it is
    instance = dataclasses.replace(_two_machines(), capacity=((6.0, 32.0), (8.0, 32.0)))
    cells = dmlrs_blocks_round._Cells(instance)
    cells.add(0, 1, 1, 4, 2)
    cells.add(1, 1, 1, 2, 1)
    assert dmlrs_blocks_round._grown(cells, 0, 1, 1e12) == {1: [6, 3]}


def test_a_top_up_the_deadline_stops_drops_the_rest(monkeypatch):
    instance = _short_pair(((4.0, 16.0), (4.0, 16.0)), epochs=(1.0, 1.5))
    plan = RelaxedPlan({0: {1: (4, 0.0)}, 1: {1: (4, 0.0)}}, {}, completion={0: 1, 1: 1})
    now = [0.0]
    real = dmlrs_blocks_round.pack_slot

    def slow_pack(*args, **kwargs):  # the packing uses up the time
        now[0] += 6.0
        return real(*args, **kwargs)

    monkeypatch.setattr(dmlrs_blocks_round, "pack_slot", slow_pack)
    schedule, info = round_point(instance, plan, 100, Deadline(10.0, clock=lambda: now[0]))
    assert info["short_jobs"] == [1] and info["top_up_stopped"]
    assert info["dropped"] == [1] and schedule.accepted == (0,)
    assert evaluate(instance, schedule).completed == 1


def test_stopped_names_what_the_limit_cut(monkeypatch):
    # only a slot packing cut: info['stopped'] names the packings, not the relaxation
    real = dmlrs_blocks_round.round_point

    def cut_packing(*args, **kwargs):
        schedule, info = real(*args, **kwargs)
        return schedule, {**info, "slot_milps": {"time limit": 1}}

    monkeypatch.setattr(dmlrs_blocks_round, "round_point", cut_packing)
    result = _run(congested(generate("tiny", 5)), nodes=3)
    assert result.time_limit_hit and result.info["relaxation"]["status"] != "time limit"
    assert result.info["stopped"].startswith("slot packings")
