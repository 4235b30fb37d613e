"""``ub_blocks`` of family ``dmlrs`` (``ddlsched.models.dmlrs_blocks``).

* Validity: at least the brute-force optimum on ``micro`` instances (as generated and
  congested) and at least ``exact``'s proven optimum on ``tiny`` ones (as generated and
  congested), as an LP, with binary completions and with binary blocks; never above
  ``ub_capacity``'s LP (its rows are all kept) nor, with binary completions, above its MILP.
* It bites where the modes mix: on ``tiny`` seeds 2 and 3 ``ub_capacity`` is 20 % and 15 %
  above the optimum, ``modes=true`` proves the optimum.
* The block weights by hand (demand with ``ceil(w / gamma)`` PSs, ``f_k`` of the block as one
  item, machines it does not fit on left out).
* The registered method: a bound-only result, parameters checked (one line, exit 2), same
  inputs same bound; no job: the bound 0; an early deadline: a valid bound or no answer.

The 120-instance check is ``benchmarks/dmlrs_blocks.py --validity``.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from dmlrs_brute_force import brute_force_optimum
from test_dmlrs_lagrange import MICRO, congested, optimum

from ddlsched.models.dmlrs_blocks import block_weights, blocks_bound, build_block_model
from ddlsched.models.dmlrs_capacity import capacity_bound
from ddlsched.registry import RunOptions, run_method
from ddlsched.solvers import Status
from ddlsched.workloads.dmlrs import generate

TOL = 1e-6
VARIANTS = [{}, {"integral": True}, {"modes": True}]


@pytest.mark.parametrize("k", range(len(MICRO)))
def test_at_least_the_brute_force_optimum(k):
    instance = MICRO[k]
    truth = brute_force_optimum(instance)
    top = capacity_bound(instance)[0]
    for variant in VARIANTS:
        bound, _ = blocks_bound(instance, **variant)
        assert truth - TOL <= bound <= top + TOL


TINY = [generate("tiny", s) for s in range(6)] + [congested(generate("tiny", s)) for s in range(6)]


@pytest.mark.parametrize("k", range(len(TINY)))
def test_at_least_exact_and_at_most_ub_capacity(k):
    instance = TINY[k]
    truth = optimum(instance)
    lp = capacity_bound(instance)[0]
    milp = capacity_bound(instance, integral=True)[0]
    bounds = [blocks_bound(instance, **variant)[0] for variant in VARIANTS]
    assert all(bound >= truth - TOL for bound in bounds)
    assert bounds[0] <= lp + TOL
    assert bounds[1] <= milp + TOL and bounds[2] <= bounds[1] + TOL


@pytest.mark.parametrize("seed", [2, 3])
def test_one_mode_a_slot_closes_what_the_mix_leaves_open(seed):
    instance = generate("tiny", seed)
    truth = optimum(instance)
    assert capacity_bound(instance, integral=True)[0] > 1.1 * truth  # the mix: >= 15 % above
    bound, info = blocks_bound(instance, modes=True)
    assert info["milp_status"] == "optimal"
    assert bound == pytest.approx(truth, rel=1e-6)


def test_block_weights_by_hand():
    base = generate("tiny", 0)
    # a worker 1 GPU + 2 CPUs, a PS 3 CPUs, gamma 2; machines (8 GPUs, 16 CPUs), (16, 13)
    job = dataclasses.replace(
        base.jobs[0], gamma=2, global_batch=8, worker=(1.0, 2.0), ps=(0.0, 3.0)
    )
    instance = dataclasses.replace(
        base, jobs=(job,), resources=("gpu", "cpu"), capacity=((8.0, 16.0), (16.0, 13.0))
    )
    weights = block_weights(instance, 0, 5, 2)
    workers = np.arange(1, 6)
    assert np.allclose(weights[0, :, 0], workers)
    assert np.allclose(weights[0, :, 1], 2 * workers + 3 * np.ceil(workers / 2))
    # 3 workers and 2 PSs: 12 CPUs, more than half of either machine: one block weighs 1
    # under f_1 (each worker 2/16 and PS 3/16 alone would weigh 0); 3 GPUs: 0 on both
    assert weights[1, 2, 1] == pytest.approx(1.0)
    assert weights[1, 2, 0] == pytest.approx(0.0)
    # 4 workers and 2 PSs: 14 CPUs fit only the first machine, where 4 GPUs are 1/2 (kept
    # by f_1); the second machine (4/16: f_1 = 0) is left out
    assert weights[1, 3, 0] == pytest.approx(0.5)
    # 5 workers and 3 PSs: 19 CPUs fit no machine: weight 0 (no such block)
    assert weights[0, 4, 1] == pytest.approx(19.0)
    assert np.allclose(weights[1:, 4, :], 0.0)


def test_model_keeps_every_ub_capacity_row_and_adds_blocks():
    instance = generate("tiny", 2)
    model = build_block_model(instance, modes=True)
    columns = model.capacity
    assert model.blocks and all(columns.integer[c] for cs in model.blocks.values() for c in cs)
    assert all(columns.integer[c] for c in columns.completion.values())
    relaxed = build_block_model(instance)
    assert not any(relaxed.capacity.integer)


def _instance_file(tmp_path):
    path = tmp_path / "tiny.json"
    generate("tiny", 2).save(path)
    return path


def test_registered_method_is_a_valid_bound():
    instance = congested(generate("tiny", 5))
    options = RunOptions(time_limit_s=120, params={"modes": True})
    first = run_method("dmlrs", "ub_blocks", instance, options)
    again = run_method("dmlrs", "ub_blocks", instance, options)
    assert first.status is Status.BOUND_ONLY
    assert first.bound >= optimum(instance) - TOL
    assert first.bound == again.bound
    assert not first.time_limit_hit


@pytest.mark.parametrize("param", ["dff=-1", "dff=11", "modes=maybe", "integral=2", "nodes=3"])
def test_bad_parameter_is_one_line_and_exit_2(cli, tmp_path, param):
    path = _instance_file(tmp_path)
    code, _, err = cli("solve", "dmlrs", str(path), "--method", "ub_blocks", "--param", param)
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and param.split("=")[0] in err


def test_no_job_is_the_bound_zero():
    instance = dataclasses.replace(generate("tiny", 0), jobs=())
    result = run_method("dmlrs", "ub_blocks", instance, RunOptions(params={"modes": True}))
    assert result.status is Status.BOUND_ONLY and result.bound == 0.0


def test_an_early_deadline_gives_a_valid_bound_or_no_answer():
    instance = congested(generate("tiny", 5))
    truth = optimum(instance)
    for limit in (1e-6, 0.05):
        options = RunOptions(time_limit_s=limit, params={"modes": True})
        result = run_method("dmlrs", "ub_blocks", instance, options)
        if result.status is Status.BOUND_ONLY:
            assert result.bound >= truth - TOL
        else:
            assert result.status is Status.TIME_LIMIT_NO_SOLUTION
