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
