"""``exact_gpu_level_paper``: the paper's GPU-level baseline (replica x GPU binaries,
no count encoding) gives the aggregated ILP's optimum and a brute force's."""

from __future__ import annotations

import pytest
from test_placement_methods import TINY, brute_force
from tiers import sweep

from ddlsched.models.placement_gpu_level import build_gpu_level, build_gpu_level_paper
from ddlsched.solvers import Status
from ddlsched.workloads.placement import generate


@pytest.mark.parametrize("index", sweep([0, 4, 6, 7], 2))
def test_paper_gpu_level_equals_brute_force(index, solve, backend):
    inst = TINY[index]
    solved = solve("placement", "exact_gpu_level_paper", inst, backend, cross_check=False)
    assert solved.status is Status.OPTIMAL
    assert solved.evaluation.iteration_time_s == pytest.approx(brute_force(inst), rel=1e-9)
    assert solved.bound <= solved.evaluation.iteration_time_s * (1 + 1e-6)


@pytest.mark.parametrize("seed", [1, 5, 10])
def test_paper_gpu_level_equals_aggregated(seed, solve, backend):
    inst = generate("small", seed)
    paper = solve("placement", "exact_gpu_level_paper", inst, backend, cross_check=False)
    aggregated = solve("placement", "exact", inst, backend, cross_check=False)
    assert paper.status is Status.OPTIMAL is aggregated.status
    assert paper.evaluation.iteration_time_s == pytest.approx(
        aggregated.evaluation.iteration_time_s, rel=1e-9
    )
    assert paper.schedule.gpu_of_replica is not None  # a GPU per replica, decoded


def test_table2_case_with_a_whole_stage_on_one_server(shared_data, solve):
    """vgg16 on 16 GPUs, seed 1: the optimum puts a 4-replica stage on one server
    (the ``w`` binaries) and splits the others (the AllReduce secants); HiGHS with
    a loose big-M once claimed 3.27 s here."""
    inst = generate("table2", 1, model="vgg16", num_gpus=16)
    paper = solve("placement", "exact_gpu_level_paper", inst, cross_check=False)
    assert paper.status is Status.OPTIMAL
    assert paper.evaluation.iteration_time_s == pytest.approx(2.19423591552, rel=1e-9)


def test_paper_model_has_no_count_encoding():
    inst = generate("small", 3)
    paper, ours = build_gpu_level_paper(inst), build_gpu_level(inst)
    assert not hasattr(paper, "one_hot") and hasattr(ours, "one_hot")
    assert paper.y.dim() == ours.y.dim() == 4
    # binaries: y plus one "whole stage on m" per (stage, server) that can hold it
    assert len(paper.y) == len(ours.y)
    assert len(paper.w) < len(ours.w)
