"""Tasks: instance sizes across families, rows of a directly executed task."""

from __future__ import annotations

import json

import pytest

from ddlsched.bench.store import SCHEMA
from ddlsched.bench.suite import parse_suite
from ddlsched.bench.tasks import ROW_FIELDS, execute, expand, instance_size
from ddlsched.registry import families, get_family


def test_row_fields_and_schema_agree():
    assert list(ROW_FIELDS) == SCHEMA.names


@pytest.mark.parametrize("family", sorted(f.name for f in families()))
def test_instance_size_is_jobs_or_replicas(family):
    """Every family's smoke instance: a row's ``instance_size`` (the family's declared
    ``size`` hook) is its number of jobs, else its number of stage replicas, else
    its declared size; a lazy trace run (muri_sim) has none until the trace is read."""
    fam = get_family(family)
    preset, params = fam.smoke
    instance = fam.generate(preset, 0, **dict(params))
    size = instance_size(instance, family)
    if hasattr(instance, "jobs"):
        assert size == len(instance.jobs)
    elif hasattr(instance, "stages"):
        assert size == sum(s.replicas for s in instance.stages)
    elif isinstance(getattr(instance, "size", None), int):
        assert size == instance.size
    else:
        assert size is None


def test_execute_returns_a_full_row_with_evaluation_metrics():
    suite = parse_suite(
        {
            "suite": {"name": "one"},
            "instances": [{"family": "rar", "preset": "small", "seeds": [1]}],
            "methods": [{"name": "sjf_bco"}],
        }
    )
    (task,) = expand(suite)
    sizes = []
    row = execute(task, on_started=sizes.append)
    assert set(row) == set(ROW_FIELDS)
    assert row["status"] == "feasible" and row["objective"] > 0
    assert sizes == [row["instance_size"]] and row["instance_size"] >= 4
    metrics = json.loads(row["metrics"])
    assert metrics["makespan"] == row["objective"]
    assert "average_completion" in metrics
    assert row["key"] == task.key and row["ddlsched_version"] == task.version


def test_unknown_method_parameter_is_an_error_row():
    suite = parse_suite(
        {
            "suite": {"name": "one"},
            "instances": [{"family": "debug", "preset": "default", "seeds": [0]}],
            "methods": [{"name": "noop", "params": {"nope": 1}}],
        }
    )
    (task,) = expand(suite)  # parse_suite does not check the registry; execute does
    row = execute(task)
    assert row["status"] == "error" and "has no parameter(s) nope" in row["error"]


def test_a_prepared_worker_reads_no_git_state_in_its_first_task(monkeypatch):
    """``prepare_code_row`` (run by a worker before it says ready) reads the git state the
    first row needs: the task, whose kill clock starts at ready, does not pay for it."""
    from ddlsched.bench import provenance

    calls = []
    monkeypatch.setattr("ddlsched.bench.store.git_commit", lambda path: calls.append(path) or {})
    provenance.git_state.cache_clear()
    try:
        provenance.prepare_code_row()
        assert len(calls) == 1
        suite = parse_suite(
            {
                "suite": {"name": "one"},
                "instances": [{"family": "debug", "preset": "default", "seeds": [0]}],
                "methods": [{"name": "noop"}],
            }
        )
        (task,) = expand(suite)
        assert execute(task)["status"] == "feasible"
        assert len(calls) == 1  # the first task found it read
    finally:
        provenance.git_state.cache_clear()
