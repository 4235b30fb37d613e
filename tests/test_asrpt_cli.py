"""Family asrpt from the command line: the solve contract, bad input (one line, exit 2),
``simulate asrpt``, and the worst-case search (determinism, witnesses that re-measure)."""

from __future__ import annotations

import json
import math

import pytest

from ddlsched.bench.worstcase import save_report, search
from ddlsched.cli import main
from ddlsched.datadir import data_dir
from ddlsched.problems.asrpt import AsrptInstance
from ddlsched.registry import RunOptions, run_method
from ddlsched.workloads.asrpt import tiny

NEEDS_DATA = pytest.mark.skipif(data_dir() is None, reason="shared data directory absent")


def _one_line_error(capsys, code) -> str:
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("ddlsched: error:"), err
    return err


@pytest.fixture
def tiny_file(tmp_path):
    path = tmp_path / "tiny.json"
    tiny(7).save(path)
    return path


def test_solve_json_contract(tiny_file, capsys):
    assert main(["solve", "asrpt", str(tiny_file), "--method", "asrpt", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "feasible"
    for key in ("total_flow_s", "makespan_s", "p99_jct_s", "utilisation", "epsilon_bar"):
        assert key in out["info"]
    for key in ("theorem1_bound", "lemma2_x_s", "instance_bound", "lemma3_holds", "rho"):
        assert key in out["info"]["theory"]
    assert out["info"]["theory"]["lemma3_holds"] is True
    job = out["schedule"]["jobs"][0]
    assert {"id", "start_s", "finish_s", "alpha_s", "servers", "replicas"} <= set(job)
    assert math.isclose(
        out["objective"], sum(j["finish_s"] for j in out["schedule"]["jobs"]), rel_tol=1e-12
    )


def test_exact_and_bounds_bracket_every_policy(tiny_file, capsys):
    inst = AsrptInstance.load(tiny_file)
    exact = run_method("asrpt", "exact", inst, RunOptions(time_limit_s=60))
    assert exact.status == "optimal"
    for bound in ("lb_sum", "lb_srpt"):
        r = run_method("asrpt", bound, inst)
        assert r.status == "bound_only" and r.bound <= exact.objective * (1 + 1e-9)
    for policy in ("asrpt", "asrpt_perfect", "spjf", "spwf", "wcs_duration", "wcs_subtime"):
        r = run_method("asrpt", policy, inst, RunOptions(params={}))
        assert r.objective >= exact.objective * (1 - 1e-9)


def _mutated(tmp_path, mutate):
    data = tiny(7).to_dict()
    mutate(data)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize(
    "mutate",
    [
        lambda d: d.pop("cluster"),
        lambda d: d.update(colour="red"),
        lambda d: d["jobs"][1].update(id=d["jobs"][0]["id"]),
        lambda d: d["jobs"][0].update(arrival_s=-1.0),
        lambda d: d["jobs"][0].update(iterations=0),
        lambda d: d["jobs"][0].update(iterations=2.5),
        lambda d: d["jobs"][0].update(predicted_iterations=-3),
        lambda d: d["jobs"][0].update(config="nope"),
        lambda d: d["cluster"].update(servers=1, gpus_per_server=1),
        lambda d: d["cluster"].update(b_intra=d["cluster"]["b_inter"] / 100),
    ],
)
def test_bad_instance_files(tmp_path, capsys, mutate):
    path = _mutated(tmp_path, mutate)
    _one_line_error(capsys, main(["solve", "asrpt", str(path), "--method", "asrpt"]))


def test_non_finite_arrival_file(tmp_path, capsys):
    path = tmp_path / "nan.json"
    path.write_text(
        json.dumps(tiny(7).to_dict()).replace('"arrival_s": 0.0', '"arrival_s": NaN', 1)
    )
    _one_line_error(capsys, main(["solve", "asrpt", str(path), "--method", "spjf"]))


@pytest.mark.parametrize(
    ("method", "param"),
    [
        ("asrpt", "delay_factor=-1"),
        ("asrpt", "comm_heavy=0.5"),
        ("asrpt", "delay_blocks=maybe"),
        ("spjf", "server_selection=random"),
        ("exact", "max_job_modes=0"),
        ("exact", "solver=gurobi"),
    ],
)
def test_bad_method_parameters(tiny_file, capsys, method, param):
    code = main(["solve", "asrpt", str(tiny_file), "--method", method, "--param", param])
    _one_line_error(capsys, code)


def test_exact_above_its_cap_refuses_fast(tiny_file, capsys):
    code = main(
        ["solve", "asrpt", str(tiny_file), "--method", "exact", "--param", "max_job_modes=2"]
    )
    err = _one_line_error(capsys, code)
    assert "mode" in err


@NEEDS_DATA
@pytest.mark.parametrize(
    "setting",
    [
        "sigma=-1",
        "single_gpu_share=2",
        "nic_gbps=0",
        "servers=0",
        "start=100000000",
        "delay=1",
    ],
)
def test_bad_preset_parameters(tmp_path, capsys, setting):
    code = main(
        ["instance", "generate", "asrpt", "--preset", "trace", "--set", "trace=tiresias",
         "--set", "predictor=noisy", "--set", setting, "-o", str(tmp_path / "x.json")]
    )  # fmt: skip
    _one_line_error(capsys, code)


@NEEDS_DATA
def test_simulate_asrpt(capsys):
    code = main(
        ["simulate", "asrpt", "--trace", "tiresias", "--jobs", "10", "--policy", "wcs_duration",
         "--predictor", "mean", "--json"]
    )  # fmt: skip
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["jobs"] == 10 and out["policy"] == "wcs_duration"
    assert out["total_completion_s"] > out["total_flow_s"] >= 0 or out["total_flow_s"] > 0


@NEEDS_DATA
@pytest.mark.parametrize(
    "extra",
    [
        ["--policy", "fifo"],
        ["--policy", "asrpt", "--predictor", "oracle"],
        ["--policy", "asrpt", "--jobs", "0"],
        ["--policy", "asrpt", "--param", "delay_factor=-2"],
    ],
)
def test_simulate_asrpt_errors(capsys, extra):
    code = main(["simulate", "asrpt", "--trace", "tiresias", "--jobs", "10", *extra])
    _one_line_error(capsys, code)


def test_worst_case_search_is_deterministic():
    # 8 candidates on one budget: the 7 fresh draws (one per policy) and 1 mutation of a witness
    kwargs = {"budgets": [2.0], "candidates": 8, "seed": 7, "time_limit_s": 30.0}
    first = search("asrpt", **kwargs)
    second = search("asrpt", **kwargs)
    assert [w.to_dict() for w in first.witnesses] == [w.to_dict() for w in second.witnesses]
    assert [w.instance.to_dict() for w in first.witnesses] == [
        w.instance.to_dict() for w in second.witnesses
    ]


def test_worst_case_witnesses_are_certified(tmp_path):
    # every candidate is measured under every policy: 2 fresh draws a budget give each a witness
    first = search("asrpt", budgets=[0.0, 2.0], candidates=4, seed=3, time_limit_s=30.0)
    assert {w.policy for w in first.witnesses} == set(first.policies)
    assert {w.budget for w in first.witnesses} == {0.0, 2.0}
    for w in first.witnesses:
        assert w.ratio >= 1 - 1e-9
        assert w.measured_budget <= w.budget + 1e-9
    paths = save_report(first, tmp_path)
    assert (tmp_path / "worstcase.toml").exists() and (tmp_path / "worstcase.json").exists()
    # a saved witness re-measures to its ratio: the file is the certificate
    w = first.witnesses[0]
    inst = AsrptInstance.load(tmp_path / "instances" / f"worst-{w.policy}-b{w.budget:g}.json")
    opt = run_method("asrpt", "exact", inst, RunOptions(time_limit_s=30))
    pol = run_method("asrpt", w.policy, inst, RunOptions(seed=3))
    assert opt.status == "optimal"
    assert math.isclose(pol.objective / opt.objective, w.ratio, rel_tol=1e-9)
    assert any(p.suffix == ".png" for p in paths)


def test_worst_case_errors(capsys):
    assert main(["bench", "worstcase", "asrpt", "--budgets", "x"]) == 2
    capsys.readouterr()
    _one_line_error(capsys, main(["bench", "worstcase", "rar", "--candidates", "2"]))
    _one_line_error(capsys, main(["bench", "worstcase", "asrpt", "--candidates", "0"]))
