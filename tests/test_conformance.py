"""Every registered family passes the conformance checks; deliberately broken ones do not."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from debug_family import register_debug_like

from ddlsched.conformance import check_family
from ddlsched.datadir import data_dir
from ddlsched.errors import UnknownMethodError
from ddlsched.params import NoParams
from ddlsched.problems.debug import (
    DebugEvaluation,
    DebugInstance,
    DebugSchedule,
)
from ddlsched.registry import (
    RunContext,
    families,
    get_family,
    register_method,
    unregister_family,
)
from ddlsched.solvers.result import Outcome, Status

NEEDS_DATA = {"muri_sim"}  # its smoke instance is a slice of a shared trace


@pytest.mark.parametrize("name", [f.name for f in families(include_internal=True)])
def test_registered_family_conforms(name, tmp_path):
    if name in NEEDS_DATA and data_dir() is None:
        pytest.skip("shared data directory absent")
    assert check_family(name, tmp_path) == []


# --------------------------------------------------------------------------- broken families


@dataclass(frozen=True)
class ClaimingSchedule(DebugSchedule):
    """A schedule that carries the objective its method claims for it."""

    claimed: float = 0.0


def _claimed_value(instance: DebugInstance, schedule: ClaimingSchedule) -> DebugEvaluation:
    # Broken on purpose: reads the method's number instead of computing value * scale.
    return DebugEvaluation(value=schedule.claimed)


@pytest.fixture
def broken_families():
    # "skips re-evaluation": its evaluator takes the heuristic's optimistic claim
    register_debug_like("broken_eval", _claimed_value)

    @register_method("broken_eval", "optimist", "heuristic", "claims 90 % of what it achieves")
    def _optimist(instance, params: NoParams, ctx: RunContext) -> Outcome:
        return Outcome(ClaimingSchedule(scale=1.0, claimed=0.9 * instance.value))

    # "returns a bound above its objective": a lower bound above the heuristic's value
    register_debug_like("broken_bound")

    @register_method("broken_bound", "heur", "heuristic", "the best schedule")
    def _heur(instance, params: NoParams, ctx: RunContext) -> Outcome:
        return Outcome(DebugSchedule(1.0))

    @register_method("broken_bound", "bound", "bound", "a 'lower bound' 10 % too high")
    def _bound(instance, params: NoParams, ctx: RunContext) -> Outcome:
        return Outcome(None, Status.BOUND_ONLY, bound=1.1 * instance.value)

    # an exact method whose own bound lies above its own objective
    register_debug_like("broken_exact")

    @register_method("broken_exact", "exact", "exact", "'proves' a bound above its schedule")
    def _exact(instance, params: NoParams, ctx: RunContext) -> Outcome:
        return Outcome(DebugSchedule(1.0), Status.OPTIMAL, bound=1.1 * instance.value)

    yield
    for name in ("broken_eval", "broken_bound", "broken_exact"):
        unregister_family(name)


def test_a_family_that_skips_reevaluation_fails(broken_families, tmp_path):
    problems = check_family("broken_eval", tmp_path)
    assert any("re-evaluat" in p for p in problems), problems


def test_a_family_with_a_bound_above_an_objective_fails(broken_families, tmp_path):
    problems = check_family("broken_bound", tmp_path)
    assert any("bound" in p and "beyond the objective" in p for p in problems), problems


def test_an_exact_method_with_its_bound_above_its_objective_fails(broken_families, tmp_path):
    problems = check_family("broken_exact", tmp_path)
    assert any("invalid bound" in p for p in problems), problems


@pytest.mark.parametrize(
    ("size", "expected"),
    [(None, "no size hook"), (lambda instance: -1, "not an integer"), (lambda i: 1.5, "not an")],
)
def test_a_family_without_a_valid_size_hook_fails(tmp_path, size, expected):
    register_debug_like("broken_size", size=size)

    @register_method("broken_size", "heur", "heuristic", "the best schedule")
    def _heur(instance, params: NoParams, ctx: RunContext) -> Outcome:
        return Outcome(DebugSchedule(1.0))

    try:
        problems = check_family("broken_size", tmp_path)
    finally:
        unregister_family("broken_size")
    assert [p for p in problems if "size" in p] and expected in " ".join(problems), problems


@pytest.mark.parametrize("name", [f.name for f in families(include_internal=True)])
def test_every_family_declares_its_size_and_its_preset_table(name):
    fam = get_family(name)
    assert fam.size is not None
    with pytest.raises(UnknownMethodError) as caught:
        fam.generate("no-such-preset", 0)
    assert str(caught.value).startswith(f"unknown {name} preset 'no-such-preset' (choose from ")
    assert ", ".join(fam.presets) in str(caught.value)


def test_the_broken_families_are_gone_afterwards():
    names = {f.name for f in families(True)}
    assert {"broken_eval", "broken_bound", "broken_exact", "broken_size"}.isdisjoint(names)
