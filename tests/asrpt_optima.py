"""Proven optima of asrpt's ``tiny`` and ``tiny-comm`` instances, shared by the tests of
the family's bounds (``lb_busy``, ``lb_lagrange``, ``lb_branch``): each optimum is solved
by ``exact`` (CP-SAT) once per test run, shared by its xdist workers
(:mod:`shared_optima`)."""

from __future__ import annotations

from functools import cache

from shared_optima import shared

from ddlsched.models.asrpt_exact import solve_exact
from ddlsched.problems.asrpt import AsrptInstance
from ddlsched.problems.asrpt_schedule import evaluate
from ddlsched.solvers.result import Status
from ddlsched.workloads.asrpt import tiny, tiny_comm

#: The presets and seeds of the proven set (2 x 60 instances).
GENERATORS = {"tiny": tiny, "tiny-comm": tiny_comm}
SEEDS = range(60)


@cache
def instance(preset: str, seed: int) -> AsrptInstance:
    """The ``preset`` instance of ``seed`` (cached: the tests compare several bounds on it)."""
    return GENERATORS[preset](seed)


@cache
def optimum(preset: str, seed: int) -> float:
    """Its total completion time at the proven optimum (120 s limit: slack for a loaded machine;
    a run that does not prove fails the test that asked); solved once per test run
    (:mod:`shared_optima`)."""
    return shared(f"asrpt-{preset}-{seed}", lambda: _solve(preset, seed))


def _solve(preset: str, seed: int) -> float:
    inst = instance(preset, seed)
    out = solve_exact(inst, time_limit_s=120)
    assert out.status is Status.OPTIMAL, (preset, seed, out.status)
    return evaluate(inst, out.schedule).total_completion_s
