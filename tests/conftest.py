"""Test-wide settings and the helpers every test file shares.

Hypothesis runs the same examples on every run. A property test that draws
new examples on every CI run can fail on one run and pass on the next (a
HiGHS seed that cannot prove a rar optimum within the test's limit, say), and
a red CI lands nothing. The ``ci`` profile (the default) is derandomized: each
test sees a fixed sequence of examples, so a failure is reproducible and a
pass means the same thing every time. ``HYPOTHESIS_PROFILE=explore`` draws
fresh examples (and more of them) for a local search for counterexamples.

Shared fixtures (use them instead of writing a private helper):

- ``solve(family, method, instance, backend="highs", *, time_limit_s=60, seed=0,
  **params)``: one method through the pipeline (:func:`ddlsched.registry.run_method`),
  as ``ddlsched solve`` runs it; the method's own parameters go by keyword.
- ``cli(*argv)``: ``ddlsched ARGV`` in-process; returns ``(exit code, stdout, stderr)``.
- ``backend``: ``"highs"`` and then ``"scip"``; a test of an exact method (or a
  bound solved by a MILP/LP) that takes it runs once on each backend.
  A Hypothesis test whose strategies are positional maps them to its last arguments:
  put fixtures first (``def test_x(solve, seed, k)``).
- ``shared_data``: the shared data directory; the test is skipped without it.
- every test starts with an empty record of the data files read (``info["data_sha256"]``).

The tests run in parallel (pytest-xdist, ``-n auto``): a test writes only
under ``tmp_path``, opens no fixed port, and leaves no registration behind it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import pytest
import tiers
from hypothesis import settings

from ddlsched.datadir import data_dir
from ddlsched.solvers.result import BACKENDS

settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
settings.register_profile("explore", max_examples=200, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def solve_method(
    family: str,
    method: str,
    instance: Any,
    backend: str = "highs",
    *,
    time_limit_s: float = 60.0,
    seed: int = 0,
    **params: Any,
):
    """Run ``family``'s ``method`` on ``instance`` through the pipeline; the evaluated result."""
    from ddlsched.registry import RunOptions, run_method

    options = RunOptions(time_limit_s=time_limit_s, seed=seed, backend=backend, params=params)
    return run_method(family, method, instance, options)


@pytest.fixture(scope="session")
def solve() -> Callable[..., Any]:
    """:func:`solve_method`: ``solve(family, method, instance, backend, **params)``."""
    return solve_method


@pytest.fixture
def cli(capsys) -> Callable[..., tuple[int, str, str]]:
    """``cli(*argv)``: the command line in-process; ``(exit code, stdout, stderr)``."""
    from ddlsched.cli import main

    def call(*argv: Any) -> tuple[int, str, str]:
        code = main([str(arg) for arg in argv])
        out, err = capsys.readouterr()
        return code, out, err

    return call


@pytest.fixture(params=BACKENDS)
def backend(request) -> str:
    """Each backend of :data:`ddlsched.solvers.result.BACKENDS` in turn.

    Function scope: a session-scoped parameter would reorder the whole run by backend and
    rebuild every module fixture twice. (A Hypothesis test draws its backend instead:
    ``st.sampled_from(BACKENDS)``.)"""
    return request.param


@pytest.fixture
def shared_data():
    """The shared data directory (traces, DNN profiles); the test is skipped without it
    (README, "Data": tests that need the data skip on a machine that lacks it)."""
    root = data_dir()
    if root is None:
        pytest.skip("shared data directory absent")
    return root


@pytest.fixture(autouse=True)
def _fresh_data_record():
    """Each test starts with an empty record of the data files read
    (:mod:`ddlsched.data.provenance`), so that a result's ``info`` does not depend on what
    an earlier test of the same worker process read."""
    from ddlsched.data import provenance

    provenance.forget()


#: Tests that read the public traces or DNN profiles without a guard of their own (a suite,
#: a walk-through, a preset or a scaffold that loads them): skipped, not failed, in a
#: checkout with no data directory (``DDLSCHED_DATA`` unset and no development data folder
#: beside it); ``ddlsched data fetch`` makes them run.
NEEDS_DATA = (
    "test_docs_console.py::test_console_blocks_print_what_the_code_prints[docs/walkthroughs/placement.md]",
    "test_bench_input_gate.py::test_shipped_suites_validate[frontier-placement.toml]",
    "test_bench_input_gate.py::test_shipped_suites_validate[muri-ablation.toml]",
    "test_bench_input_gate.py::test_shipped_suites_validate[muri-traces.toml]",
    "test_bench_input_gate.py::test_shipped_suites_validate[placement.toml]",
    "test_instance_schema.py::test_schema_command_validates_instance_generate[muri_sim]",
    "test_instance_schema.py::test_valid_smoke_instance_has_no_violation[muri_sim]",
    "test_own_cluster.py::test_asrpt_instance_of_one_s_own_trace",
    "test_placement_limit_statuses.py::test_the_threshold_search_gets_work_not_a_share_of_the_deadline",
    "test_scaffold.py::test_the_scaffold_installs_and_passes_its_own_test[muri_sim]",
)


def pytest_addoption(parser) -> None:
    parser.addoption(
        "--full",
        action="store_true",
        help="the full tier: every instance of every sweep and every slow test (tests/tiers.py)",
    )


def pytest_configure(config) -> None:
    if config.getoption("--full"):
        os.environ[tiers.ENV] = "1"


_TIER_DESELECTED: list[int] = []  # per collection (one per xdist worker)


def _tier_line(deselected: int | None) -> str:
    if tiers.full():
        return "ddlsched tier: full (every sweep instance, slow tests included)"
    count = (
        f"{deselected} slow tests deselected" if deselected is not None else "slow tests deselected"
    )
    return f"ddlsched tier: CI (sampled sweeps, {count}; --full runs them)"


def pytest_report_header(config) -> str:
    return _tier_line(None)


def pytest_collection_modifyitems(config, items) -> None:
    if not tiers.full():
        # a test named on the command line (``file::test[id]``) runs whatever its tier
        named = {arg.removeprefix("./") for arg in config.args if "::" in arg}
        kept, out = [], []
        for item in items:
            slow = item.get_closest_marker("slow") is not None and item.nodeid not in named
            (out if slow else kept).append(item)
        if out:
            config.hook.pytest_deselected(items=out)
            items[:] = kept
        _TIER_DESELECTED.append(len(out))
        if hasattr(config, "workeroutput"):  # an xdist worker: report to the controller
            config.workeroutput["tier_deselected"] = len(out)
    if data_dir() is not None:
        return
    skip = pytest.mark.skip(
        reason="no data directory (set DDLSCHED_DATA, or run 'ddlsched data fetch')"
    )
    for item in items:
        if item.nodeid.removeprefix("tests/") in NEEDS_DATA:
            item.add_marker(skip)


def pytest_testnodedown(node, error) -> None:
    """xdist's controller: every worker collects the same items; keep one worker's count."""
    count = getattr(node, "workeroutput", {}).get("tier_deselected")
    if count is not None and not _TIER_DESELECTED:
        _TIER_DESELECTED.append(count)


def pytest_terminal_summary(terminalreporter) -> None:
    """The tier in the summary, which ``-q`` prints (it hides the header)."""
    terminalreporter.write_line(_tier_line(_TIER_DESELECTED[0] if _TIER_DESELECTED else None))
