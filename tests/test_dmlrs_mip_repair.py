"""Family ``dmlrs``: ``improve``'s MIP repair (ours; :mod:`ddlsched.models.dmlrs_mip_repair`).

The MIP windows never lower the utility (against the same run without them),
every answer is the evaluator's, the same seed gives the same schedule, a
window holding every job reaches ``exact``'s proven optimum on ``tiny``
instances where the greedy search alone stays below it, the repair's plans
fit the capacity the other jobs leave (``reserved``), a deadline that passes
(an injected clock, never the machine's speed) stops the MIP phase with the
search's best schedule and says so, and ``info`` says what ran.
"""

from __future__ import annotations

import numpy as np
import pytest
from dmlrs_improve_helpers import run_improve, small
from fake_clock import StepClock

from ddlsched.deadline import Deadline
from ddlsched.errors import DdlschedError
from ddlsched.families.dmlrs import _run_start
from ddlsched.heuristics.dmlrs_improve import ImproveSettings, improve
from ddlsched.models.dmlrs_milp import build_model
from ddlsched.models.dmlrs_mip_repair import MipRepair
from ddlsched.problems.dmlrs import evaluate
from ddlsched.registry import RunContext, run_method
from ddlsched.solvers.result import Status
from ddlsched.workloads.dmlrs import generate

TOL = 1e-6
#: A weak greedy search (one start, one window): leaves room for the MIP windows.
WEAK = {"starts": "fifo", "patience": 1, "window": 1}


def _improve(instance, seed: int = 0, **params):
    return run_improve(instance, seed, 120, **params)


@pytest.mark.parametrize("seed", [0, 1])
def test_mip_windows_never_lower_the_utility(seed):
    instance = small(seed)
    greedy = _improve(instance, seed, **WEAK)
    mip = _improve(instance, seed, **WEAK, mip_windows=6, mip_window=4)
    assert mip.status is Status.FEASIBLE
    assert mip.info["greedy_utility"] == pytest.approx(greedy.info["lns_utility"])
    assert mip.info["lns_utility"] >= mip.info["greedy_utility"] - TOL
    assert mip.objective >= greedy.objective - TOL
    assert mip.objective == pytest.approx(evaluate(instance, mip.schedule).total_utility)


def test_info_says_what_ran():
    instance = small(2)
    plain = _improve(instance, 2, **WEAK)
    assert not any(key.startswith("mip") for key in plain.info)
    mip = _improve(instance, 2, **WEAK, mip_windows=3, mip_window=3)
    assert mip.info["mip_windows_tried"] == 3
    assert mip.info["mip_stopped"] == "mip_windows"
    assert sum(mip.info["mip_solves"].values()) == 3
    assert set(mip.info["mip_solves"]) <= {"optimal", "node limit", "no solution", "no job"}
    assert 0 <= mip.info["mip_windows_accepted"] <= 3
    assert "stopped" not in mip.info and not mip.time_limit_hit


def test_same_seed_same_answer():
    instance = small(3)
    first = _improve(instance, 5, **WEAK, mip_windows=4, mip_window=4, mip_nodes=50)
    second = _improve(instance, 5, **WEAK, mip_windows=4, mip_window=4, mip_nodes=50)
    assert first.schedule == second.schedule
    assert first.info["mip_solves"] == second.info["mip_solves"]


@pytest.mark.parametrize("seed", [0, 2, 7])
def test_a_window_of_every_job_reaches_the_exact_optimum(seed):
    instance = generate("tiny", seed)
    optimum = run_method("dmlrs", "exact", instance, raise_errors=True)
    assert optimum.status is Status.OPTIMAL
    greedy = _improve(instance, seed, **WEAK)
    assert greedy.objective < optimum.objective - TOL  # measured: room on these seeds
    every = 2 * len(instance.jobs)  # half scheduled (all of them), the rest all the others
    mip = _improve(instance, seed, **WEAK, mip_windows=1, mip_window=every)
    assert mip.info["mip_solves"] == {"optimal": 1}
    assert mip.objective == pytest.approx(optimum.objective, abs=TOL)


def test_plans_fit_the_capacity_the_others_leave():
    instance = small(0)
    greedy = _improve(instance, 0, **WEAK)
    used = np.zeros((instance.slots + 1, instance.num_machines, len(instance.resources)))
    for a in greedy.schedule.alloc:
        used[a.slot, a.machine] += instance.alpha[a.job] * a.workers + instance.beta[a.job] * a.ps
    free = [i for i in range(len(instance.jobs)) if i not in greedy.schedule.accepted]
    plans, how = MipRepair(instance, max_nodes=100)(free, used, {}, Deadline(120))
    assert how in ("optimal", "node limit", "no solution")
    for i, plan in (plans or {}).items():
        for t, h, w, s in plan:
            used[t, h] += instance.alpha[i] * w + instance.beta[i] * s
    assert (used[1:] <= instance.cap * (1 + 1e-9)).all()
    # no capacity left at all: every job of the window is rejected
    full = np.broadcast_to(instance.cap, used.shape).copy()
    plans, how = MipRepair(instance)(free, full, {}, Deadline(120))
    assert how == "optimal" and plans == {}


def test_reserved_must_match_the_instance():
    instance = generate("tiny", 0)
    with pytest.raises(ValueError, match="reserved must have shape"):
        build_model(instance, reserved=np.zeros((1, 1, 1)))


def test_a_deadline_that_passes_stops_the_mip_windows():
    """The clock jumps past the deadline during the first window's solve: that window is
    undone, the phase ends at the time limit and says so; the answer is the greedy one."""
    instance = small(1)
    clock = StepClock()
    deadline = Deadline(1000.0, clock=clock)
    real = MipRepair(instance, max_nodes=50)

    def late_repair(jobs, reserved, current, sub):
        clock.advance(2000.0)  # the solve "took" longer than the whole limit
        return real(jobs, reserved, current, sub)

    ctx = RunContext(seed=0, backend="highs", deadline=Deadline(120))
    settings = ImproveSettings(starts=("fifo",), patience=1, window=1, mip_windows=5)
    schedule, info, cut = improve(
        instance, settings, lambda name, dl: _run_start(instance, name, ctx, dl), deadline,
        late_repair,
    )  # fmt: skip
    assert cut
    assert info["mip_stopped"] == "time limit"
    assert info["mip_windows_tried"] == 1 and info["mip_windows_accepted"] == 0
    assert "MIP windows at the time limit" in info["stopped"]
    assert info["lns_utility"] == pytest.approx(info["greedy_utility"])
    assert evaluate(instance, schedule).total_utility == pytest.approx(
        max(info["lns_utility"], *info["start_utility"].values())
    )


def test_a_cut_solve_through_the_pipeline_says_so(monkeypatch):
    from ddlsched.solvers.backends import _out_of_time

    def cut(model, backend="highs", limits=None, deadline=None):
        return _out_of_time(model, backend, "no time left for the solver", "test")

    monkeypatch.setattr("ddlsched.models.dmlrs_mip_repair.solve_model", cut)
    result = _improve(small(0), 0, **WEAK, mip_windows=3)
    assert result.time_limit_hit
    assert "MIP windows" in result.info["stopped"]
    assert result.info["mip_solves"] == {"time limit": 1}


def test_improve_without_a_repair_refuses_mip_windows():
    with pytest.raises(ValueError, match="needs a repair"):
        improve(generate("tiny", 0), ImproveSettings(mip_windows=1), None, Deadline(10))


@pytest.mark.parametrize("params", [{"mip_window": 0}, {"mip_nodes": 0}, {"mip_windows": -1}])
def test_bad_parameter_is_one_line_error(params):
    with pytest.raises(DdlschedError) as err:
        _improve(generate("tiny", 0), **params)
    assert "\n" not in str(err.value)


def test_the_mip_windows_run_on_what_the_greedy_search_left(monkeypatch):
    """The greedy search spends its half of the limit (the clock moved on 600 of 1000 s):
    the MIP phase still runs on the rest, and the answer says the greedy search was cut."""
    import ddlsched.heuristics.dmlrs_improve as module

    instance = small(1)
    clock = StepClock()
    deadline = Deadline(1000.0, clock=clock)
    greedy = module._Search.run

    def half_spent(self, settings, sub):
        greedy(self, settings, sub)
        clock.advance(600.0)
        return "time limit"

    monkeypatch.setattr(module._Search, "run", half_spent)
    ctx = RunContext(seed=0, backend="highs", deadline=Deadline(120))
    settings = ImproveSettings(starts=("fifo",), patience=1, window=1, mip_windows=3)
    _, info, cut = improve(
        instance, settings, lambda name, dl: _run_start(instance, name, ctx, dl), deadline,
        MipRepair(instance, max_nodes=50),
    )  # fmt: skip
    assert cut and info["mip_windows_tried"] == 3 and info["mip_stopped"] == "mip_windows"
    assert "(its half, with MIP windows)" in info["stopped"]
    assert info["lns_utility"] >= info["greedy_utility"] - TOL
