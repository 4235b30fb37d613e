"""``bench validate``'s task-time line: a bound from the time limits (not from the kill
deadline), an estimate from stored rows, and the tasks a run would skip."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from ddlsched.bench.estimate import estimate_task_time, format_duration
from ddlsched.bench.suite import load_suite
from ddlsched.bench.tasks import expand

SUITE = """
[suite]
name = "estimate"
output = "results/estimate"
[limits]
time_limit_s = 10
kill_after_s = 40
[[instances]]
family = "debug"
preset = "default"
seeds = {{ first = 0, count = {count} }}
[[methods]]
name = "heur"
[[methods]]
name = "exact"
"""


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the suite's results directory and instance cache


def _suite(tmp_path: Path, count: int) -> Path:
    path = tmp_path / f"suite{count}.toml"
    path.write_text(textwrap.dedent(SUITE.format(count=count)))
    return path


def _first_line(cli, *argv) -> str:
    code, out, err = cli("bench", "validate", *argv)
    assert code == 0, err
    return out.splitlines()[0]


def test_the_bound_sums_time_limits_not_kill_deadlines(tmp_path, cli):
    """2 instances x 2 methods at a 10 s limit: at most 40 s; the 40 s kill deadline
    of each task (what the line summed before: 160 s, "3 min") is no plan for a task."""
    line = _first_line(cli, _suite(tmp_path, 2))
    assert line.endswith(
        "4 task(s), output results/estimate; 4 task(s) to run, at most 40 s of task time "
        "(every task at its time limit: a bound, not an estimate)"
    ), line


def test_stored_rows_estimate_the_rest_and_done_tasks_cost_nothing(tmp_path, cli):
    out = tmp_path / "results" / "estimate"
    code, _, err = cli("bench", "run", _suite(tmp_path, 2), "--workers", "1", "-q")
    assert code == 0, err
    line = _first_line(cli, _suite(tmp_path, 2))
    assert line.endswith("all 4 task(s) already have rows of the same code: a run starts none")
    line = _first_line(cli, _suite(tmp_path, 3))
    assert "; 2 task(s) to run, at most 20 s of task time" in line, line
    assert "; 4 done already (stored rows of the same code)" in line
    assert "; estimate from stored rows of the same methods: " in line
    assert line.endswith(" for 2 task(s)")
    estimate = estimate_task_time(expand(load_suite(_suite(tmp_path, 3))), out)
    assert (estimate.tasks, estimate.done, estimate.measured) == (6, 4, 2)
    assert 0 < estimate.measured_s < estimate.limit_bound_s == 20


def test_tasks_of_methods_without_rows_are_not_guessed(tmp_path, cli):
    out = tmp_path / "results" / "estimate"
    assert cli("bench", "run", _suite(tmp_path, 1), "--workers", "1", "-q")[0] == 0
    more = _suite(tmp_path, 1).read_text() + '[[methods]]\nname = "sleep"\n'
    (tmp_path / "more.toml").write_text(more)
    estimate = estimate_task_time(expand(load_suite(tmp_path / "more.toml")), out)
    assert (estimate.tasks, estimate.done, estimate.measured) == (3, 2, 0)
    assert estimate.describe() == (
        "1 task(s) to run, at most 10 s of task time (every task at its time limit: a bound, "
        "not an estimate); 2 done already (stored rows of the same code)"
    )


def test_a_missing_results_directory_has_no_rows(tmp_path):
    tasks = expand(load_suite(_suite(tmp_path, 1)))
    estimate = estimate_task_time(tasks, tmp_path / "nowhere")
    assert (estimate.done, estimate.measured, estimate.limit_bound_s) == (0, 0, 20.0)


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(40, "40 s"), (160, "3 min"), (7200, "2.0 h"), (float("inf"), "inf")],
)
def test_format_duration(seconds, text):
    assert format_duration(seconds) == text
