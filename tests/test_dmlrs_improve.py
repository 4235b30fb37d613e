"""Family ``dmlrs``: the method ``improve`` (ours; :mod:`ddlsched.heuristics.dmlrs_improve`).

``improve`` against its starts run separately through the pipeline (never
worse than the best), against proven optima (``exact``) on 40 ``tiny``
instances (never above: the evaluator and the LNS agree), for reproducibility,
the insertion alone on an empty cluster, the time limit and bad parameters.
"""

from __future__ import annotations

import numpy as np
import pytest
from dmlrs_improve_helpers import run_improve, small
from tiers import sample, sweep

from ddlsched.cli import main
from ddlsched.errors import DdlschedError
from ddlsched.heuristics.dmlrs_improve import STARTS, _Inserter, parse_starts
from ddlsched.problems.dmlrs import evaluate, fastest_slots, ps_needed
from ddlsched.problems.dmlrs_schedule import schedule_from_counts
from ddlsched.registry import RunOptions, run_method
from ddlsched.solvers.result import Status
from ddlsched.workloads.dmlrs import generate

TOL = 1e-6


def _improve(instance, seed: int = 0, **params):
    return run_improve(instance, seed, 60, **params)


@pytest.mark.parametrize("seed", sweep([0, 1, 2], 3))
def test_never_worse_than_its_best_start(seed):
    instance = small(seed)
    starts = {
        name: run_method("dmlrs", name, instance, RunOptions(seed=seed), raise_errors=True)
        for name in STARTS
    }
    best = max(result.objective for result in starts.values())
    result = _improve(instance, seed)
    assert result.status is Status.FEASIBLE
    assert result.objective >= best - TOL
    for name, start in starts.items():  # the starts it reports are the pipeline's
        assert result.info["start_utility"][name] == pytest.approx(start.objective)
    assert result.objective == pytest.approx(evaluate(instance, result.schedule).total_utility)


def test_at_most_the_proven_optimum_on_tiny_instances():
    """Seeds 0-39 of ``tiny`` in the full tier, every fourth in the CI tier."""
    gains = 0
    for seed in sample(range(40), 4):
        instance = generate("tiny", seed)
        optimum = run_method("dmlrs", "exact", instance, raise_errors=True)
        assert optimum.status is Status.OPTIMAL
        result = _improve(instance, seed)
        assert result.objective <= optimum.objective + TOL, seed
        start = max(result.info["start_utility"].values())
        gains += result.objective > start + TOL
    assert gains >= 1  # the LNS beats its start somewhere (measured: on several)


def test_same_seed_same_schedule():
    instance = small(3)
    first = _improve(instance, 7, max_windows=200)
    second = _improve(instance, 7, max_windows=200)
    assert first.info["search_stopped"] in ("max_windows", "converged")
    assert "stopped" not in first.info
    assert first.schedule == second.schedule
    assert first.objective == second.objective


def test_insertion_alone_finishes_at_the_fastest_on_an_empty_cluster():
    """A job whose ``F_i`` workers and PSs fit on one machine finishes at ``a_i + d_min_i - 1``
    (the fastest any schedule can), and the plan is a valid one-job schedule."""
    checked = 0
    for seed in range(10):
        instance = generate("tiny", seed)
        inserter = _Inserter(instance)
        used = np.zeros((instance.slots + 1, instance.num_machines, len(instance.resources)))
        for i, job in enumerate(instance.jobs):
            plan = inserter.plan(i, used)
            fastest = job.arrival_slot + fastest_slots(instance, i) - 1
            if fastest > instance.slots:
                assert plan is None
                continue
            full = instance.alpha[i] * job.global_batch + instance.beta[i] * ps_needed(
                job, job.global_batch
            )
            if not (full <= instance.cap).all(axis=1).any():
                continue
            checked += 1
            finish = max(t for t, _, _, _ in plan)
            assert finish == fastest, (seed, i)
            alone = schedule_from_counts([i], [(i, t, h, w, s) for t, h, w, s in plan])
            utility = evaluate(instance, alone).total_utility
            assert utility == pytest.approx(job.utility(finish - job.arrival_slot))
    assert checked >= 10


def test_time_limit_is_reported():
    result = run_method(
        "dmlrs", "improve", small(0), RunOptions(time_limit_s=1e-3), raise_errors=True
    )
    assert result.status is Status.TIME_LIMIT_NO_SOLUTION or result.time_limit_hit


@pytest.mark.parametrize(
    "params",
    [{"starts": "pd_ors,nope"}, {"starts": ""}, {"window": 0}, {"patience": -1}],
)
def test_bad_parameter_is_one_line_error(params):
    with pytest.raises(DdlschedError) as err:
        _improve(generate("tiny", 0), **params)
    assert "\n" not in str(err.value)


def test_parse_starts():
    assert parse_starts("all") == STARTS
    assert parse_starts("fifo, drf,fifo") == ("fifo", "drf")


def test_cli_bad_starts_exits_2(tmp_path, capsys):
    path = tmp_path / "tiny.json"
    assert main(["instance", "generate", "dmlrs", "--preset", "tiny", "-o", str(path)]) == 0
    code = main(["solve", "dmlrs", str(path), "--method", "improve", "--param", 'starts="x"'])
    assert code == 2
    assert "ddlsched: error: starts" in capsys.readouterr().err
