"""Family ``dmlrs``: the ejection move of ``improve`` (ours;
:mod:`ddlsched.heuristics.dmlrs_eject`).

On a constructed instance the move takes in a job that ``improve``'s windows of 3 jobs
cannot; never below the same run without the move; same seed same schedule; the move
budget; a deadline that passes during the moves; the lean target plan; the parameters'
one-line errors.
"""

from __future__ import annotations

import pytest
from dmlrs_improve_helpers import run_improve, small
from fake_clock import StepClock
from tiers import sweep

from ddlsched.deadline import Deadline
from ddlsched.errors import DdlschedError
from ddlsched.families.dmlrs import _run_start
from ddlsched.heuristics.dmlrs_eject import EjectSettings, target_plan
from ddlsched.heuristics.dmlrs_improve import ImproveSettings, improve
from ddlsched.problems.dmlrs import DmlrsInstance, DmlrsSchedule, evaluate
from ddlsched.registry import RunContext
from ddlsched.workloads.dmlrs import generate

TOL = 1e-6
LIMIT_S = 3600.0  # a safety net: the budgets in moves and windows end every run here


def _improve(instance, seed: int = 0, **params):
    return run_improve(instance, seed, LIMIT_S, **params)


BIG = 4  # the big job of blocked()


def _job(arrival: int, workers: int, worker_slots: int, theta1: float) -> dict:
    """A one-GPU-per-worker job needing ``worker_slots`` worker-slots, at most ``workers``
    workers per slot (``F``); its utility is about ``theta1 / 2`` whenever it finishes."""
    return {
        "arrival_slot": arrival, "epochs": 1, "samples": 3600 * worker_slots,
        "grad_bytes": 1.0, "tau_s": 1.0, "gamma": 1, "global_batch": workers,
        "worker": [1.0], "ps": [0.0],
        "utility": {"theta1": theta1, "theta2": 0.01, "theta3": 0.0},
    }  # fmt: skip


def blocked() -> DmlrsInstance:
    """Two machines of 2 GPUs, T = 4. Jobs 0-1 arrive in slot 1, jobs 2-3 in slot 2, each
    needing one GPU for 2 slots (utility about 15); job 4 (about 50) arrives in slot 2 and
    needs 9 GPU-slots, 4 a slot at most. FIFO runs jobs 0-3 at once (slot 2 full, slot
    3 half), which leaves job 4 six GPU-slots of the 12 in slots 2-4; freeing one small job
    gives at most 8, so no window that frees one scheduled job (``window`` 3) takes it in.
    Job 4 with jobs 0 and 1 (about 80) beats the four small jobs (about 60)."""
    jobs = [_job(1, 1, 2, 30.0), _job(1, 1, 2, 30.0), _job(2, 1, 2, 30.0), _job(2, 1, 2, 30.0)]
    jobs.append(_job(2, 4, 9, 100.0))
    data = {
        "family": "dmlrs", "schema_version": 1, "slots": 4, "slot_s": 3600.0,
        "b_int": 1e10, "b_ext": 1e10, "resources": ["gpu"],
        "machines": {"count": 2, "capacity": [2.0]}, "jobs": jobs,
    }  # fmt: skip
    return DmlrsInstance.from_dict(data)


WEAK = {"starts": "fifo", "window": 3}


def test_the_move_takes_in_a_job_the_windows_cannot():
    instance = blocked()
    plain = _improve(instance, 0, **WEAK)
    assert BIG not in plain.evaluation.completion_slot
    assert plain.info["completed"] == 4  # the four small jobs
    for place in ("lean", "reserve", "insert", "both"):
        moved = _improve(instance, 0, **WEAK, eject_moves=10, eject_place=place)
        assert BIG in moved.evaluation.completion_slot, place
        assert moved.info["eject_taken_in"][0] == BIG
        assert moved.info["eject_moves_kept"] >= 1
        assert moved.objective > plain.objective + 15.0  # job 4 replaces two small jobs
        assert moved.objective == pytest.approx(evaluate(instance, moved.schedule).total_utility)


@pytest.mark.parametrize("seed", sweep([0, 1, 2], 3))
def test_never_below_the_run_without_the_move(seed):
    instance = small(seed)
    plain = _improve(instance, seed, max_windows=300)
    for evict in ("machines", "slots"):
        moved = _improve(
            instance, seed, max_windows=300, eject_moves=6, eject_windows=50, eject_evict=evict
        )
        assert moved.objective >= plain.objective - TOL
        assert moved.info["lns_utility"] >= plain.info["lns_utility"] - TOL
        assert moved.info["eject_moves_tried"] <= 6
        assert moved.info["eject_windows"] <= 6 * 50
        assert "stopped" not in moved.info and not moved.time_limit_hit


def test_same_seed_same_schedule():
    instance = small(3)
    params = {"max_windows": 200, "eject_moves": 5, "eject_windows": 40}
    first = _improve(instance, 7, **params)
    second = _improve(instance, 7, **params)
    assert first.schedule == second.schedule
    assert first.info == second.info


def test_the_budget_in_moves_ends_the_passes():
    instance = blocked()
    result = _improve(instance, 0, **WEAK, eject_moves=1, eject_windows=0)
    assert result.info["eject_moves_tried"] == 1
    assert result.info["eject_stopped"] == "moves"
    assert result.info["eject_windows"] == 0
    off = _improve(instance, 0, **WEAK)
    assert "eject_moves_tried" not in off.info  # off by default: improve as before


def test_a_deadline_that_passes_stops_the_moves(monkeypatch):
    """The clock jumps past the deadline during the first move's repair windows: the
    move is judged on what it did, the passes end at the time limit and say so."""
    import ddlsched.heuristics.dmlrs_improve as module

    instance = blocked()
    clock = StepClock()
    deadline = Deadline(1000.0, clock=clock)
    window, run = module._Search.window, module._Search.run
    moving = []  # set once the window search has ended: the windows are the moves' repairs

    def run_then_move(self, settings, sub):
        how = run(self, settings, sub)
        moving.append(True)
        return how

    def slow_window(self, size):
        if moving and clock.now_s < 2000.0:
            clock.advance(2000.0)  # the first repair window "took" the whole limit
        return window(self, size)

    monkeypatch.setattr(module._Search, "window", slow_window)
    monkeypatch.setattr(module._Search, "run", run_then_move)
    ctx = RunContext(seed=0, backend="highs", deadline=Deadline(120))
    settings = ImproveSettings(starts=("fifo",), window=3, eject=EjectSettings(moves=10))
    schedule, info, cut = improve(
        instance, settings, lambda name, dl: _run_start(instance, name, ctx, dl), deadline
    )
    assert cut
    assert info["eject_stopped"] == "time limit"
    assert info["eject_moves_tried"] == 1 and info["eject_windows"] == 1
    assert "ejection moves at the time limit" in info["stopped"]
    assert evaluate(instance, schedule).total_utility >= info["start_utility"]["fifo"] - TOL


def test_the_lean_plan_runs_internal_first_and_holds_fewer_gpus():
    """Fig. 6's job 44 (paper seed 1, 20 machines): at external bandwidth it needs about 12
    times the worker-slots it needs on one machine; the lean plan finishing in slot 20
    runs on one machine first and holds fewer GPU-slots than the even share's."""
    from ddlsched.heuristics.dmlrs_improve import _Search

    instance = generate("paper", 1, jobs=50, machines=20, slots=20)
    search = _Search(instance, DmlrsSchedule(accepted=()), 0)  # an empty cluster
    gpu = instance.resources.index("gpu")

    def gpu_slots(plan):
        return sum(instance.alpha[44][gpu] * w for _, _, w, _ in plan)

    lean = target_plan(search, 44, 20, lean=True)
    share = target_plan(search, 44, 20)
    assert lean is not None and share is not None
    first = [h for t, h, _, _ in lean if t == instance.jobs[44].arrival_slot]
    assert len(first) == 1  # one machine: the internal mode
    assert gpu_slots(lean) < 0.5 * gpu_slots(share)
    assert max(t for t, *_ in lean) <= 20


@pytest.mark.parametrize(
    "params",
    [
        {"eject_moves": -1},
        {"eject_completions": 0},
        {"eject_windows": -1},
        {"eject_evict": "all"},
        {"eject_place": "late"},
    ],
)
def test_bad_parameter_is_one_line_error(params):
    with pytest.raises(DdlschedError) as err:
        _improve(generate("tiny", 0), **params)
    assert "\n" not in str(err.value)
