"""Family ``muri_sim``: trace simulations as benchmark tasks, and metric tables."""

from __future__ import annotations

import json
import textwrap

import pytest

from ddlsched.bench.executors import LocalExecutor
from ddlsched.bench.metrics import metric_table
from ddlsched.bench.runner import run_suite
from ddlsched.bench.suite import load_suite
from ddlsched.bench.tables import load_results
from ddlsched.cli import main
from ddlsched.datadir import data_dir
from ddlsched.errors import DdlschedError, InvalidInstanceError
from ddlsched.families.muri_sim import TraceRun, generate
from ddlsched.registry import RunOptions, run_method

needs_data = pytest.mark.skipif(data_dir() is None, reason="shared data directory absent")


def test_instance_round_trip_and_validation(tmp_path):
    run = generate("trace", 3, trace="trace3", limit=40, knobs={"packing_num": 2})
    path = tmp_path / "t.json"
    run.save(path)
    assert TraceRun.load(path) == run
    assert run.config.packing_num == 2 and run.seed == 3
    for params, message in [
        ({"trace": "trace3", "mode": "prose"}, r"parameter mode must be str in \{reference"),
        ({"trace": "trace3", "limit": 0}, "parameter limit must be int >= 1"),
        ({"trace": "trace3", "knobs": {"colour": 1}}, "unknown simulator knob"),
        ({"trace": "trace3", "knobs": {"mode": "paper"}}, "not as a knob"),
        ({"trace": "trace3", "speed": 2}, "has no parameter"),
        ({}, "parameter trace is required"),
    ]:
        with pytest.raises(InvalidInstanceError, match=message):
            generate("trace", 0, **params)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({**run.to_dict(), "colour": 1}))
    with pytest.raises(InvalidInstanceError, match="unknown field"):
        TraceRun.load(bad)


@needs_data
def test_method_equals_the_simulator():
    from ddlsched.sim.muri import simulate
    from ddlsched.workloads.muri_traces import load_trace

    run = generate("trace", 0, trace="trace3", limit=60)
    result = run_method("muri_sim", "srtf", run, RunOptions())
    direct = simulate(load_trace("trace3", limit=60), "srtf")
    assert result.status == "feasible" and result.sense == "min"
    assert result.objective == direct.average_jct_s
    assert result.info["makespan_s"] == direct.makespan_s
    unknown = run_method("muri_sim", "srtf", generate("trace", 0, trace="nope"), RunOptions())
    assert unknown.status == "error" and "unknown trace" in unknown.info["error"]


@needs_data
def test_muri_l_without_blossom_is_the_knob():
    """Method muri-l-no-blossom (Fig. 11's ablation) is Muri-L with knob blossom = false
    over the instance's other knobs, job by job; it differs from Muri-L's Blossom grouping."""
    from ddlsched.sim.muri import SimConfig, simulate
    from ddlsched.workloads.muri_traces import load_trace

    trace = load_trace("trace3", limit=120)
    run = generate("trace", 0, trace="trace3", limit=120, knobs={"packing_num": 3})
    ablation = run_method("muri_sim", "muri-l-no-blossom", run, RunOptions())
    direct = simulate(trace, "muri-l", SimConfig(packing_num=3, blossom=False))
    assert ablation.status == "feasible"
    assert ablation.objective == direct.average_jct_s
    assert ablation.info["makespan_s"] == direct.makespan_s
    blossom = run_method("muri_sim", "muri-l", run, RunOptions())
    assert blossom.objective == simulate(trace, "muri-l", SimConfig(packing_num=3)).average_jct_s
    assert blossom.objective != ablation.objective


SUITE = """
[suite]
name = "tiny-traces"
[limits]
time_limit_s = 60
kill_after_s = 120
[[instances]]
family = "muri_sim"
preset = "trace"
seeds = [0]
params = { trace = "trace3", limit = 60 }
group = "trace3"
[[methods]]
name = "srtf"
[[methods]]
name = "muri-l"
"""


@needs_data
def test_suite_rows_and_metric_table(tmp_path, capsys):
    path = tmp_path / "suite.toml"
    path.write_text(textwrap.dedent(SUITE))
    executor = LocalExecutor(2)
    try:
        run_suite(load_suite(path), tmp_path / "out", executor=executor)
    finally:
        executor.close()
    frame = load_results(tmp_path / "out")
    assert sorted(frame["label"]) == ["muri-l", "srtf"]
    table = metric_table(frame, ["average_jct_s", "makespan_s"], relative_to="muri-l")
    by = table.set_index("method")
    jct = dict(zip(frame["label"], frame["objective"], strict=True))
    assert by.loc["srtf", "average_jct_s"] == pytest.approx(jct["srtf"])
    assert by.loc["srtf", "average_jct_s_vs_muri-l"] == pytest.approx(jct["srtf"] / jct["muri-l"])
    assert by.loc["muri-l", "makespan_s_vs_muri-l"] == pytest.approx(1.0)
    assert by.loc["srtf", "solved"] == 1 and by.loc["srtf", "compared"] == 1
    for bad, message in [
        (["colour"], "no numeric metric"),
        (["trace"], "no numeric metric"),  # a string field of the evaluation
        (["rows"], "column name"),
    ]:
        with pytest.raises(DdlschedError, match=message):
            metric_table(frame, bad)
    twice = metric_table(frame, ["makespan_s", "makespan_s"])  # once, no crash
    assert list(twice.columns).count("makespan_s") == 1
    out = str(tmp_path / "out")
    assert (
        main(["bench", "table", out, "--metrics", "average_jct_s", "--relative-to", "muri-l"]) == 0
    )
    text = capsys.readouterr().out
    assert "average_jct_s_vs_muri-l" in text and "| srtf |" in text
    assert main(["bench", "table", out, "--metrics", "colour"]) == 2
    assert main(["bench", "table", out, "--relative-to", "muri-l"]) == 2
    assert main(["bench", "table", out]) == 0  # the ratio table still works (best policy)
