"""Status ``no_solution``: a method that ends without a schedule is a result, not an error.

Through every layer: the three ways a method says it (an outcome, the
``NoScheduleFound`` exception, an evaluator failure the adapter lists), the
CLI's exit codes, and the platform (a finished task: never re-run, not
counted as failed, its own column in the tables).
"""

from __future__ import annotations

import json
import textwrap

import pytest
from debug_family import register_debug_like

from ddlsched.bench.runner import run_suite
from ddlsched.bench.store import read_rows
from ddlsched.bench.suite import load_suite
from ddlsched.bench.tables import load_results, summarize
from ddlsched.cli import main
from ddlsched.errors import InfeasibleScheduleError, NoScheduleFound
from ddlsched.problems.debug import DebugEvaluation, DebugInstance, DebugSchedule
from ddlsched.registry import register_method, run_method, unregister_family
from ddlsched.solvers.result import Outcome, Status
from ddlsched.workloads.rar import generate

INSTANCE = DebugInstance(size=3, value=10.0)


def _overrunning(instance: DebugInstance, schedule: DebugSchedule) -> DebugEvaluation:
    """The debug evaluator, with a 'horizon' at scale 2 that a schedule may overrun."""
    if schedule.scale > 2:
        raise InfeasibleScheduleError("overruns the horizon", failure="horizon_overrun")
    if schedule.scale < 1:
        raise InfeasibleScheduleError("scale below 1", failure="bad_scale")
    return DebugEvaluation(value=instance.value * schedule.scale)


@pytest.fixture
def family():
    register_debug_like("nosol_test", _overrunning)

    def method(name, outcome):
        register_method("nosol_test", name, "heuristic", name)(lambda inst, p, ctx: outcome())

    def raises():
        raise NoScheduleFound("gave up after 5 draws", draws=5)

    method("says_so", lambda: Outcome(None, Status.NO_SOLUTION, info={"reason": "no plan"}))
    method("silent", lambda: Outcome(None, Status.NO_SOLUTION))
    method("raises", raises)
    overrun = ("horizon_overrun",)
    method("overruns", lambda: Outcome(DebugSchedule(3.0), no_solution_failures=overrun))
    method("overruns_unlisted", lambda: Outcome(DebugSchedule(3.0)))
    method("bad_listed_other", lambda: Outcome(DebugSchedule(0.5), no_solution_failures=overrun))
    method("contradiction", lambda: Outcome(DebugSchedule(1.0), Status.NO_SOLUTION))
    method("fails", lambda: Outcome(None, Status.ERROR, info={"error": "solver crashed"}))
    yield "nosol_test"
    unregister_family("nosol_test")


def test_the_three_ways_to_say_no_schedule(family):
    said = run_method(family, "says_so", INSTANCE, raise_errors=True)
    assert said.status is Status.NO_SOLUTION and said.info == {"reason": "no plan"}
    assert said.objective is None and said.schedule is None
    assert "error" not in said.info
    silent = run_method(family, "silent", INSTANCE, raise_errors=True)
    assert silent.info["reason"] == "nosol_test.silent found no schedule without saying why"
    raised = run_method(family, "raises", INSTANCE, raise_errors=True)  # never raised
    assert raised.status is Status.NO_SOLUTION
    assert raised.info == {"reason": "gave up after 5 draws", "draws": 5}
    overran = run_method(family, "overruns", INSTANCE, raise_errors=True)
    assert overran.status is Status.NO_SOLUTION and overran.objective is None
    assert overran.info["reason"] == "overruns: overruns the horizon"
    assert overran.info["failure"] == "horizon_overrun" and "error" not in overran.info


def test_other_failures_stay_errors(family):
    # an evaluator failure the method did not list is a bug: error
    unlisted = run_method(family, "overruns_unlisted", INSTANCE)
    assert unlisted.status is Status.ERROR and "reason" not in unlisted.info
    other = run_method(family, "bad_listed_other", INSTANCE)
    assert other.status is Status.ERROR and other.info["failure"] == "bad_scale"
    contradiction = run_method(family, "contradiction", INSTANCE)
    assert contradiction.status is Status.ERROR
    assert "no_solution but returned a schedule" in contradiction.info["error"]


def test_cli_exit_codes(family, tmp_path, capsys):
    path = tmp_path / "debug.json"
    INSTANCE.save(path)
    assert main(["solve", family, str(path), "--method", "raises", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["status"] == "no_solution" and data["objective"] is None
    assert data["info"]["reason"] == "gave up after 5 draws"
    assert main(["solve", family, str(path), "--method", "says_so"]) == 0
    out = capsys.readouterr().out
    assert "status     no_solution" in out and "reason     no plan" in out
    assert main(["solve", family, str(path), "--method", "fails", "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["info"]["error"] == "solver crashed"
    assert main(["solve", family, str(path), "--method", "nope"]) == 2
    assert capsys.readouterr().err.startswith("ddlsched: error: unknown method")


def test_cli_solve_of_a_rar_heuristic_without_a_schedule(tmp_path, capsys):
    # small(27): a tight horizon, SJF-BCO finds no plan below it (the quick suite's seed 27)
    path = tmp_path / "s27.json"
    generate("small", 27).save(path)
    code = main(["solve", "rar", str(path), "--method", "sjf_bco", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["status"] == "no_solution"
    assert data["info"]["reason"] == (
        "sjf_bco found no complete schedule with estimated makespan below the horizon T = 22"
    )
    assert main(["--help"]) == 0
    assert "Statuses and exit codes" in capsys.readouterr().out


SUITE = """
[suite]
name = "nosol"
[[instances]]
family = "debug"
preset = "default"
seeds = [0, 1, 2]
group = "g"
[[methods]]
name = "none"
seeds = [0, 1]
[[methods]]
name = "noop"
"""


def test_a_no_solution_row_is_a_finished_task(tmp_path, capsys):
    path = tmp_path / "nosol.toml"
    path.write_text(textwrap.dedent(SUITE))
    out = tmp_path / "out"
    first = run_suite(load_suite(path), out, workers=1)
    assert first.done == 9 and first.failed == 0
    assert first.status_counts == {"no_solution": 6, "feasible": 3}
    rows = read_rows(out).to_pylist()
    none = [r for r in rows if r["method"] == "none"]
    assert all(r["objective"] is None and r["error"] is None for r in none)
    assert json.loads(none[0]["info"])["reason"] == "debug.none: no schedule on purpose"
    again = run_suite(load_suite(path), out, workers=1, retry=["failed", "error", "time_limit"])
    assert (again.done, again.skipped) == (0, 9)  # resumed: nothing re-run
    summary = summarize(load_results(out)).set_index("method")
    assert summary.loc["none", "no_solution"] == 6 and summary.loc["none", "errors"] == 0
    assert summary.loc["none", "solved"] == 0 and summary.loc["noop", "no_solution"] == 0
    assert main(["bench", "run", str(path), "--out", str(out), "--workers", "1", "-q"]) == 0
    assert "0 task(s) run, 9 already stored, 0 failed" in capsys.readouterr().out
    assert main(["bench", "status", str(out)]) == 0
    status = capsys.readouterr().out
    assert "--retry failed: 0 row(s)" in status and "no_solution" in status
