"""``time_limit_hit`` and ``info['stopped']`` agree, for every registered method.

The rule (``docs/statuses.md``): a result the time limit cut has
``time_limit_hit`` and a non-empty ``info['stopped']`` saying what was cut;
a result nothing cut has neither (``info['stopped']`` is absent, a search that
ended for another reason names it under another key).

Every method of every family (hazardous platform methods aside) runs on its
family's smoke instance three ways: with a normal limit, and with a deadline
that a stepping clock makes pass after a fixed number of reads of the clock
(:class:`_SteppingClock`), so the place where the deadline passes in the
method's Python code does not depend on the machine's speed (a family whose
smoke instance reads a trace the data directory lacks is skipped). Where a method
finishes before it reads the clock that often, or a solver that runs on
its own clock ends first, that is fine: the assertion is only the agreement.

Then, one test per place where the flag used to come without a reason: the
solve of each model is replaced by one the limit cut before the solver could
report (no phrase of its own), so that the method's own wording is what
``info['stopped']`` must hold.
"""

from __future__ import annotations

import functools
import time
from dataclasses import replace
from typing import Any

import pytest

from ddlsched.errors import DdlschedError
from ddlsched.registry import RunOptions, families, get_family, methods, run_method
from ddlsched.solvers.backends import _out_of_time
from ddlsched.solvers.result import Status

#: (family, method) of every registered method that does not fail on purpose.
CASES = [
    (family.name, method.name)
    for family in families(include_internal=True)
    for method in methods(family.name)
    if not method.hazardous
]
#: Reads of the clock after the start of the run before its deadline passes.
CLOCK_READS = (3, 40)


class _SteppingClock:
    """``time`` for :mod:`ddlsched.deadline`: each ``monotonic()`` read moves ``step_s`` on.

    A deadline of 1 s then passes at the ``1 / step_s``-th read after it was
    started, whatever the machine's speed; every other function is ``time``'s.
    """

    def __init__(self, step_s: float) -> None:
        self.now = time.monotonic()
        self.step_s = step_s

    def monotonic(self) -> float:
        self.now += self.step_s
        return self.now

    def __getattr__(self, name: str) -> Any:
        return getattr(time, name)


@functools.cache
def _smoke(family: str) -> Any:
    """The family's smoke instance (generated once per process), or the one line saying
    why its data cannot be read (a trace missing from the data directory)."""
    fam = get_family(family)
    preset, params = fam.smoke
    instance = fam.generate(preset, 0, **dict(params))
    if fam.check_instance is not None:
        try:
            fam.check_instance(instance)  # a lazy instance reads its trace here
        except DdlschedError as exc:  # the family's own tests hold its data errors
            return f"{family}'s smoke instance needs the data directory: {exc}"
    return instance


def _smoke_or_skip(family: str) -> Any:
    instance = _smoke(family)
    if isinstance(instance, str):
        pytest.skip(instance)
    return instance


def assert_agree(result) -> None:
    """``time_limit_hit`` iff a non-empty ``info['stopped']``; the key absent otherwise."""
    where = f"{result.family}.{result.method} ({result.status})"
    stopped = result.info.get("stopped")
    if result.time_limit_hit:
        assert stopped, f"{where}: time_limit_hit without info['stopped']"
    else:
        assert "stopped" not in result.info, (
            f"{where}: info['stopped'] = {stopped!r} without time_limit_hit"
        )


@pytest.mark.parametrize("reads", CLOCK_READS)
@pytest.mark.parametrize(("family", "method"), CASES, ids=[f"{f}.{m}" for f, m in CASES])
def test_a_deadline_that_passes_agrees(family: str, method: str, reads: int, monkeypatch) -> None:
    instance = _smoke_or_skip(family)
    monkeypatch.setattr("ddlsched.deadline.time", _SteppingClock(1.0 / reads))
    result = run_method(family, method, instance, RunOptions(time_limit_s=1.0))
    assert_agree(result)


@pytest.mark.parametrize(("family", "method"), CASES, ids=[f"{f}.{m}" for f, m in CASES])
def test_a_normal_limit_agrees(family: str, method: str) -> None:
    result = run_method(family, method, _smoke_or_skip(family), RunOptions(time_limit_s=60.0))
    assert_agree(result)


# --------------------------------------------------------------------------- each site


def _cut(model, backend="highs", limits=None, deadline=None):
    """``solve_model`` cut by the limit before the solver could say anything (no phrase)."""
    return _out_of_time(model, backend, "no time left for the solver", "test")


@pytest.mark.parametrize(
    ("method", "module", "says"),
    [
        ("load_lb", "ddlsched.models.rar_bounds", "Problem (14)"),
        ("contention_lb", "ddlsched.models.rar_bounds", "Problem (14)"),
        ("timeindexed", "ddlsched.models.rar_timeindexed", "model"),
        ("lp_rounding", "ddlsched.models.rar_rounding", "rounding LP"),
    ],
)
def test_a_rar_solve_the_limit_cut_says_so(method: str, module: str, says: str, monkeypatch):
    monkeypatch.setattr(f"{module}.solve_model", _cut)
    result = run_method("rar", method, _smoke_or_skip("rar"), RunOptions(time_limit_s=60.0))
    assert result.time_limit_hit and says in result.info["stopped"], result.info
    assert_agree(result)


def test_rar_exact_search_cut_by_the_limit_says_so(monkeypatch) -> None:
    import ddlsched.models.rar_search as rar_search

    real = rar_search.search_exact

    def aborted(instance, **kwargs):  # the search's answer had the deadline passed in it
        return replace(real(instance, **kwargs), proven=False)

    monkeypatch.setattr(rar_search, "search_exact", aborted)
    options = RunOptions(time_limit_s=60.0, params={"search": "always"})
    result = run_method("rar", "exact", _smoke_or_skip("rar"), options)
    assert str(result.status) == "feasible"
    assert result.time_limit_hit and "branch-and-bound" in result.info["stopped"]


def test_asrpt_exact_model_cut_by_the_limit_says_so(monkeypatch) -> None:
    import ddlsched.models.asrpt_exact as asrpt_exact
    from ddlsched.problems.asrpt import AsrptInstance
    from ddlsched.workloads.asrpt import generate

    data = generate("tiny", 0).to_dict()  # jobs doubled: the closed forms prove nothing
    data["jobs"] += [{**job, "id": f"{job['id']}b"} for job in data["jobs"]]
    real = asrpt_exact.solve_integer

    def cut(*args, **kwargs):  # the model's solve stopped at the limit, without a bound
        res = real(*args, **kwargs)
        return replace(res, status=Status.FEASIBLE, bound=None, time_limit_hit=True)

    monkeypatch.setattr(asrpt_exact, "solve_integer", cut)
    instance = AsrptInstance.from_dict(data)
    result = run_method("asrpt", "exact", instance, RunOptions(time_limit_s=60.0))
    assert str(result.status) == "feasible"
    assert result.time_limit_hit and "upper model at the time limit" in result.info["stopped"]
