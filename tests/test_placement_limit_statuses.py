"""placement exact methods: a cross-check the time limit cut is said, not hidden.

``exact_gpu_level_paper`` reported ``optimal`` with ``time_limit_hit`` and no
reason when only the SCIP cross-check was cut: the HiGHS optimum stands
(proven), the cross-check did not confirm it, and ``info['stopped']`` says so.
"""

from __future__ import annotations

import pytest

import ddlsched.solvers.formulation as formulation
from ddlsched.errors import TimeLimitReached
from ddlsched.registry import get_family


@pytest.fixture
def cross_check_cut(monkeypatch):
    """The second solve of every formulation (the cross-check) is cut by the limit."""
    real = formulation._solve_once

    def solve_once(form, instance, backend, limits, deadline, cap=None):
        if cap is not None:
            raise TimeLimitReached("time limit of 60 s reached in building the model")
        return real(form, instance, backend, limits, deadline)

    monkeypatch.setattr(formulation, "_solve_once", solve_once)


@pytest.mark.parametrize("method", ["exact_gpu_level_paper", "exact_gpu_level"])
def test_a_cut_cross_check_is_named_in_stopped(solve, cross_check_cut, method: str) -> None:
    family = get_family("placement")
    preset, params = family.smoke
    instance = family.generate(preset, 0, **params)
    result = solve("placement", method, instance)
    assert str(result.status) == "optimal"  # HiGHS proved it; the cross-check did not run
    assert result.info["cross_check"]["agree"] is None
    assert result.time_limit_hit
    assert "cross-check with scip" in result.info["stopped"]


def test_an_uncut_cross_check_stops_nothing(solve) -> None:
    family = get_family("placement")
    preset, params = family.smoke
    result = solve("placement", "exact_gpu_level_paper", family.generate(preset, 0, **params))
    assert result.info["cross_check"]["agree"] is True
    assert not result.time_limit_hit and "stopped" not in result.info


def test_the_threshold_search_gets_work_not_a_share_of_the_deadline(monkeypatch) -> None:
    """The threshold search's budget is CP-SAT work, the same at every time limit."""
    import ddlsched.models.placement_pattern_proof as proof_module
    from ddlsched.deadline import Deadline
    from ddlsched.models.placement import coefficients
    from ddlsched.workloads.placement import generate

    works = []
    real = proof_module.threshold_search

    def spy(*args, **kwargs):
        works.append(kwargs["work"])
        return real(*args, **kwargs)

    monkeypatch.setattr(proof_module, "threshold_search", spy)
    instance = generate("table2", 0, model="vgg16", num_gpus=64)  # closed by the threshold
    proofs = [
        proof_module.pattern_proof(instance, coefficients(instance), deadline=Deadline(limit))
        for limit in (10.0, 1000.0)
    ]
    assert works == [proof_module.THRESHOLD_WORK] * 2
    assert proofs[0].bound == proofs[1].bound and proofs[0].proof == proofs[1].proof == "threshold"


def test_heavy_edge_is_not_run_after_the_deadline() -> None:
    """An unfinished ILP keeps its incumbent; Heavy-Edge (70 s on 4,096 GPUs) is not run
    past the limit."""
    from ddlsched.deadline import Deadline
    from ddlsched.heuristics.heavy_edge import heavy_edge
    from ddlsched.models.placement_exact import _keep_proof
    from ddlsched.models.placement_pattern_proof import PatternProof
    from ddlsched.solvers.result import Outcome, Status

    family = get_family("placement")
    preset, params = family.smoke
    instance = family.generate(preset, 0, **params)
    incumbent = heavy_edge(instance, 0)
    proof = PatternProof(0.0, None, None, None, None, 0)
    expired = Deadline(1e-6)
    outcome = _keep_proof(instance, Outcome(incumbent, Status.FEASIBLE), proof, 1.0, 0, expired)
    assert outcome.schedule is incumbent and outcome.info["incumbent_from"] == "milp"
    assert "Heavy-Edge" in outcome.info["heavy_edge_skipped"]
