"""The ddlsched command line: contracts, one-line errors, exit status 2."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from ddlsched.cli import main


@pytest.fixture
def small_file(tmp_path):
    path = tmp_path / "small.json"
    assert (
        main(["instance", "generate", "rar", "--preset", "small", "--seed", "3", "-o", str(path)])
        == 0
    )
    return path


def test_generate_is_reproducible(tmp_path, capsys):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    for path in (a, b):
        assert (
            main(
                ["instance", "generate", "rar", "--preset", "small", "--seed", "7", "-o", str(path)]
            )
            == 0
        )
    assert a.read_bytes() == b.read_bytes()


@pytest.mark.parametrize("method", ["exact", "timeindexed", "load_lb"])
def test_solve_json_contract(small_file, cli, method, backend):
    code, out, _ = cli(
        "solve",
        "rar",
        small_file,
        "--method",
        method,
        "--time-limit",
        "30",
        "--backend",
        backend,
        "--json",
    )
    assert code == 0
    data = json.loads(out)
    for key in ("family", "method", "status", "objective", "bound", "gap", "runtime_s", "schedule"):
        assert key in data
    assert data["family"] == "rar" and data["method"] == method
    # (exact's branch-and-bound may prove the optimum without a MILP: no backend then)
    assert data["backend"] == backend or (method == "exact" and data["backend"] is None)
    assert data["versions"]["highspy"].startswith("1.16")
    if method == "exact":
        assert data["status"] == "optimal" and data["objective"] == data["bound"]
        entry = next(iter(data["schedule"].values()))
        assert {"gpus", "start", "finish"} <= set(entry)
        assert all(len(pair) == 2 for pair in entry["gpus"])
    if method == "load_lb":
        assert data["objective"] is None and data["schedule"] is None


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["solve", "rar", "{file}", "--method", "nope"], "unknown method 'nope'"),
        (["solve", "rar", "/no/such/file.json", "--method", "exact"], "no such file"),
        (["solve", "rar", "{bad}", "--method", "exact"], "not valid JSON"),
        (["solve", "rar", "{neg}", "--method", "exact"], "gpus"),
        (["solve", "rar", "{file}", "--method", "exact", "--time-limit", "-1"], "time limit"),
        (["solve", "rar", "{file}", "--method", "exact", "--seed", "-3"], "seed"),
        (["solve", "rar", "{file}", "--method", "exact", "--backend", "cplex"], "unknown backend"),
        (
            ["solve", "rar", "{file}", "--method", "timeindexed", "--param", "colour=1"],
            "no parameter",
        ),
        (["solve", "nofamily", "{file}", "--method", "exact"], "unknown family"),
        (["instance", "generate", "rar", "--preset", "huge", "-o", "{out}"], "unknown rar preset"),
        (
            ["instance", "generate", "rar", "--preset", "small", "--set", "jobs=3", "-o", "{out}"],
            "preset",
        ),
        (["compare", "rar", "--seeds", "0"], "--seeds"),
        (["solve", "rar"], "required"),
    ],
)
def test_bad_input_gives_one_line_and_exit_2(tmp_path, small_file, cli, argv, message):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    neg = tmp_path / "neg.json"
    data = json.loads(small_file.read_text())
    data["jobs"][0]["gpus"] = -1
    neg.write_text(json.dumps(data))
    argv = [a.format(file=small_file, bad=bad, neg=neg, out=tmp_path / "o.json") for a in argv]
    code, _out, err = cli(*argv)
    assert code == 2
    assert message in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_compare_prints_ratio_table(cli):
    code, out, _ = cli("compare", "rar", "--preset", "small", "--seeds", "2", "--time-limit", "30")
    assert code == 0
    assert "exact" in out and "load_lb" in out and "ratio" in out


def test_console_script_entry_point(small_file):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "ddlsched.cli",
            "solve",
            "rar",
            str(small_file),
            "--method",
            "load_lb",
            "--json",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["status"] == "bound_only"


@pytest.mark.parametrize("param", ["max_patterns=abc", "slot_width=0", "contention=sometimes"])
def test_bad_method_parameter_values_are_one_line_errors(small_file, cli, param):
    code, _out, err = cli("solve", "rar", small_file, "--method", "timeindexed", "--param", param)
    assert code == 2 and err.count("\n") == 1 and err.startswith("ddlsched: error:")


def test_bad_heuristic_parameter_is_a_one_line_error(small_file, cli):
    code, _out, err = cli("solve", "rar", small_file, "--method", "sjf_bco", "--param", "kappa=-3")
    assert code == 2 and "kappa" in err


# --------------------------------------------------------------------------- simulate (generic)
