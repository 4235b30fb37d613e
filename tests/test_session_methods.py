"""A method registered in the session (a notebook cell, a script) runs on the local workers.

The worker processes are fresh interpreters: the task ships the method
(ddlsched.bench.session) with its fingerprint. Registering it again with other
code recomputes its rows, and only its rows; a method of ddlsched cannot be
replaced this way.
"""

from __future__ import annotations

import dataclasses
import json
from types import SimpleNamespace

import cloudpickle
import pytest

from ddlsched import api
from ddlsched.bench.runner import run_suite
from ddlsched.bench.session import install_session_method, session_payload
from ddlsched.bench.suite import parse_suite
from ddlsched.bench.tables import load_results
from ddlsched.errors import DdlschedError
from ddlsched.problems.debug import DebugSchedule
from ddlsched.registry import get_method


def _register(scale: float) -> None:
    @api.register_method("debug", "mine", "heuristic", "the instance value times a factor")
    def mine(instance, params: api.NoParams, ctx: api.RunContext) -> api.Outcome:
        return api.Outcome(DebugSchedule(scale))


@pytest.fixture
def session_method():
    _register(1.5)
    yield
    api.unregister_method("debug", "mine")


def _suite():
    return parse_suite(
        {
            "suite": {"name": "session", "reference": "exact"},
            "limits": {"time_limit_s": 20, "kill_after_s": 40},
            "instances": [{"family": "debug", "preset": "default", "seeds": [0, 1, 2]}],
            "methods": [{"name": "mine"}, {"name": "exact"}],
        }
    )


def test_a_session_method_runs_on_workers_and_is_recomputed_when_edited(tmp_path, session_method):
    out = tmp_path / "results"
    first = run_suite(_suite(), out, workers=1)
    assert (first.done, first.failed) == (6, 0)
    frame = load_results(out)
    mine = frame[frame["method"] == "mine"]
    assert len(mine) == 3 and set(mine["status"]) == {"feasible"}
    origin = json.loads(mine["code_origin"].iloc[0])
    assert origin["source"] == "session" and origin["module"] == __name__
    assert origin["source_sha256"]
    exact_fingerprint = set(frame.loc[frame["method"] == "exact", "code_fingerprint"])

    unchanged = run_suite(_suite(), out, workers=1)
    assert (unchanged.done, unchanged.skipped, unchanged.recomputed) == (0, 6, {})

    _register(2.0)  # the edited cell
    edited = run_suite(_suite(), out, workers=1)
    assert edited.recomputed == {"debug.mine": 3} and edited.done == 3
    frame = load_results(out)
    mine = frame[frame["method"] == "mine"]
    ratios = mine["objective"] / frame[frame["method"] == "exact"]["objective"].to_numpy()
    assert sorted(ratios.round(6)) == [2.0, 2.0, 2.0]  # the new rows only, never mixed
    assert set(frame.loc[frame["method"] == "exact", "code_fingerprint"]) == exact_fingerprint


def _task(payload: bytes, method: str) -> SimpleNamespace:
    return SimpleNamespace(
        session_method=payload, method=method, instance=SimpleNamespace(family="debug")
    )


def test_a_worker_installs_a_session_method_but_never_over_a_builtin(session_method):
    assert session_payload("debug", "heur") is None  # built in: the worker imports it
    payload = session_payload("debug", "mine")
    assert payload is not None
    api.unregister_method("debug", "mine")
    install_session_method(_task(payload, "mine"))  # as the worker does
    assert get_method("debug", "mine").origin.group == "session"
    forged = cloudpickle.dumps(dataclasses.replace(get_method("debug", "mine"), name="heur"))
    with pytest.raises(DdlschedError, match="may not shadow"):
        install_session_method(_task(forged, "heur"))
    assert get_method("debug", "heur").origin is None  # the built-in is still there
