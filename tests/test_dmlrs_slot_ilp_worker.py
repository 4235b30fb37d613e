"""PD-ORS's slot ILP (``--param slot_solver=ilp``) in the HiGHS worker process.

Under a finite limit :meth:`~ddlsched.solvers.dmlrs_slot_lp.HighsSlotSolvers.ilp`
sends the ILP to :func:`ddlsched.solvers.highs_server.solve_mip` (killed at
the limit); without one it solves in-process. Checked here: the worker's
optimum is the in-process one, bit for bit, on ``dmlrs_slot`` instances;
``pd_ors slot_solver=ilp`` gives the same schedules either way, and the
objectives recorded when the ILP still ran in-process; a killed (or
time-limited) ILP makes the method report the limit (``time_limit_no_solution``,
``time_limit_hit``, ``info['stopped']`` naming the slot ILP).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from ddlsched.errors import TimeLimitReached
from ddlsched.registry import get_family
from ddlsched.solvers import Status, highs_server
from ddlsched.solvers.dmlrs_slot_lp import HighsSlotSolvers


def slot_instances():
    """``dmlrs_slot`` instances of the synthetic preset, half of them feasible."""
    family = get_family("dmlrs_slot")
    return [
        family.generate("synthetic", seed, machines=20, jobs=10, slots=8, load=0.3)
        for seed in range(12)
    ]


def ilp_args(instance):
    return (
        instance.pw, instance.pps, instance.alpha, instance.beta, instance.cap,
        instance.gamma, instance.global_batch, instance.demand,
    )  # fmt: skip


@pytest.fixture
def worker_calls(monkeypatch):
    """How many MIPs reached the worker process (``_Worker.solve``) during the test."""
    calls = []
    real = highs_server._Worker.solve

    def counting(self, mip, seconds, incumbents):
        calls.append(seconds)
        return real(self, mip, seconds, incumbents)

    monkeypatch.setattr(highs_server._Worker, "solve", counting)
    return calls


def test_the_worker_gives_the_in_process_optimum(worker_calls):
    solvers = HighsSlotSolvers()
    feasible = 0
    for instance in slot_instances():
        in_worker = solvers.ilp(*ilp_args(instance), 30.0)
        in_process = solvers.ilp(*ilp_args(instance), math.inf)
        assert (in_worker is None) == (in_process is None)
        if in_worker is not None:
            feasible += 1
            assert np.array_equal(in_worker.w, in_process.w)
            assert np.array_equal(in_worker.s, in_process.s)
            assert in_worker.objective == in_process.objective
    assert feasible >= 4  # the comparison is not vacuous
    assert len(worker_calls) == 12  # one per finite-limit ILP; none without a limit


#: ``pd_ors slot_solver=ilp`` objectives recorded with the in-process slot ILP (before
#: the ILP moved to the worker): (preset, seed, generator arguments) -> total utility.
RECORDED = [
    ("tiny", 0, {}, 220.41202478125885),
    ("tiny", 1, {}, 185.4451961130023),
    ("tiny", 2, {}, 111.4449135969509),
    ("paper", 0, {"jobs": 8, "machines": 10, "slots": 8}, 128.03601317193886),
]


@pytest.mark.parametrize(("preset", "seed", "sizes", "recorded"), RECORDED)
def test_pd_ors_ilp_schedules_are_the_same_in_the_worker(
    solve, worker_calls, preset, seed, sizes, recorded
):
    family = get_family("dmlrs")
    instance = family.generate(preset, seed, **sizes)
    limited = solve("dmlrs", "pd_ors", instance, seed=seed, slot_solver="ilp")
    assert worker_calls and limited.info["ilps_solved"] == len(worker_calls)
    unlimited = solve(
        "dmlrs", "pd_ors", instance, seed=seed, time_limit_s=math.inf, slot_solver="ilp"
    )
    assert limited.status is Status.FEASIBLE and unlimited.status is Status.FEASIBLE
    as_json = [
        json.dumps(family.schedule_to_json(r.schedule), sort_keys=True)
        for r in (limited, unlimited)
    ]
    assert as_json[0] == as_json[1]
    assert limited.objective == unlimited.objective == pytest.approx(recorded, rel=1e-12)


def _stopped_run(killed: bool):
    import highspy

    status = highspy.HighsModelStatus.kInterrupt if killed else highspy.HighsModelStatus.kTimeLimit
    return highs_server.DirectRun(status, math.nan, math.inf, False, None, killed=killed)


@pytest.mark.parametrize("killed", [True, False], ids=["worker killed", "HiGHS time limit"])
def test_a_stopped_slot_ilp_is_the_time_limit(solve, monkeypatch, killed):
    instance = next(i for i in slot_instances() if HighsSlotSolvers().ilp(*ilp_args(i)))
    seen = []

    def stopped(mip, seconds, **kwargs):
        seen.append(seconds)
        return _stopped_run(killed)

    monkeypatch.setattr(highs_server, "solve_mip", stopped)
    with pytest.raises(TimeLimitReached, match="slot ILP"):
        HighsSlotSolvers().ilp(*ilp_args(instance), 5.0)
    assert seen == [5.0]
    result = solve("dmlrs", "pd_ors", get_family("dmlrs").generate("tiny", 0), slot_solver="ilp")
    assert result.status is Status.TIME_LIMIT_NO_SOLUTION
    assert result.time_limit_hit and result.schedule is None
    assert "slot ILP" in result.info["stopped"]
    assert 0 < seen[-1] <= 60.0  # the time the method's deadline left
