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


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


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
def test_solve_json_contract(small_file, capsys, method):
    code, out, _ = run(
        capsys, "solve", "rar", str(small_file), "--method", method, "--time-limit", "30", "--json"
    )
    assert code == 0
    data = json.loads(out)
    for key in ("family", "method", "status", "objective", "bound", "gap", "runtime_s", "schedule"):
        assert key in data
    assert data["family"] == "rar" and data["method"] == method
    assert data["versions"]["highspy"].startswith("1.16")
    if method == "exact":
        assert data["status"] == "optimal" and data["objective"] == data["bound"]
        entry = next(iter(data["schedule"].values()))
        assert {"gpus", "start", "finish"} <= set(entry)
        assert all(len(pair) == 2 for pair in entry["gpus"])
    if method == "load_lb":
        assert data["objective"] is None and data["schedule"] is None


def test_solve_with_scip_backend(small_file, capsys):
    code, out, _ = run(
        capsys, "solve", "rar", str(small_file), "--method", "exact", "--backend", "scip", "--json"
    )
    assert code == 0 and json.loads(out)["status"] == "optimal"


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
def test_bad_input_gives_one_line_and_exit_2(tmp_path, small_file, capsys, argv, message):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    neg = tmp_path / "neg.json"
    data = json.loads(small_file.read_text())
    data["jobs"][0]["gpus"] = -1
    neg.write_text(json.dumps(data))
    argv = [a.format(file=small_file, bad=bad, neg=neg, out=tmp_path / "o.json") for a in argv]
    code, _out, err = run(capsys, *argv)
    assert code == 2
    assert message in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_compare_prints_ratio_table(capsys):
    code, out, _ = run(
        capsys, "compare", "rar", "--preset", "small", "--seeds", "2", "--time-limit", "30"
    )
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
def test_bad_method_parameter_values_are_one_line_errors(small_file, capsys, param):
    code, _out, err = run(
        capsys, "solve", "rar", str(small_file), "--method", "timeindexed", "--param", param
    )
    assert code == 2 and err.count("\n") == 1 and err.startswith("ddlsched: error:")


def test_bad_heuristic_parameter_is_a_one_line_error(small_file, capsys):
    code, _out, err = run(
        capsys, "solve", "rar", str(small_file), "--method", "sjf_bco", "--param", "kappa=-3"
    )
    assert code == 2 and "kappa" in err


# --------------------------------------------------------------------------- simulate (generic)


@pytest.fixture
def toy_simulation():
    """A family opting into ``ddlsched simulate`` with nothing but a Simulation hook."""
    from ddlsched.params import NoParams
    from ddlsched.problems import debug
    from ddlsched.registry import (
        Family,
        Simulation,
        register_family,
        register_method,
        unregister_family,
    )
    from ddlsched.solvers.result import Outcome
    from ddlsched.workloads.debug import generate

    def options(parser):
        parser.add_argument("--size", type=int, default=2, help="instance size")

    register_family(
        Family(
            name="toysim",
            sense="min",
            objective_name="value",
            load=debug.DebugInstance.load,
            from_dict=debug.DebugInstance.from_dict,
            generate=generate,
            presets=("default",),
            evaluate=debug.evaluate,
            objective=lambda evaluation: evaluation.value,
            schedule_to_json=debug.schedule_to_json,
            schedule_from_json=debug.schedule_from_json,
            smoke=("default", {}),
            size=lambda instance: instance.size,
            simulation=Simulation(
                command="toy",
                help="toy simulation",
                description="Replay the toy trace.",
                trace_help="any name",
                policies=lambda: ("double",),
                seed_help="toy seed",
                set_help="instance value",
                add_options=options,
                build=lambda args, knobs: debug.DebugInstance(
                    size=args.size, value=float(knobs.get("value", len(args.trace)))
                ),
                report=lambda instance, result: {"value": result.objective, "size": instance.size},
                title=lambda args, instance: f"toy: {args.trace}",
            ),
        )
    )

    @register_method("toysim", "double", "heuristic", "scale 2")
    def _double(instance, params: NoParams, ctx) -> Outcome:
        return Outcome(debug.DebugSchedule(2.0))

    yield
    unregister_family("toysim")


def test_a_family_opts_into_simulate_with_its_hook(toy_simulation, capsys):
    code, out, _ = run(capsys, "simulate", "toy", "--trace", "abc", "--policy", "double", "--json")
    assert code == 0
    assert json.loads(out) == {"value": 6.0, "size": 2}  # 2 x len("abc")
    argv = ["simulate", "toy", "--trace", "t", "--policy", "double", "--size", "5"]
    code, out, _ = run(capsys, *argv, "--set", "value=1.5")
    assert code == 0 and "toy: t" in out and "3" in out and "5" in out
    code, _, err = run(capsys, "simulate", "toy", "--trace", "t", "--policy", "halve")
    assert code == 2 and err == "ddlsched: error: unknown policy 'halve' (choose from double)\n"
    code, _, err = run(capsys, *argv, "--param", "x=1")  # no param_help: no --param
    assert code == 2 and "unrecognized arguments: --param" in err
    code, out, _ = run(capsys, "simulate", "toy", "--help")
    assert code == 0
    for flag in ("--trace", "--policy", "--size", "--seed", "--set", "--time-limit", "--json"):
        assert flag in out


@pytest.mark.parametrize(
    ("command", "flags"),
    [
        ("asrpt", ("--jobs", "--start", "--predictor", "--seed", "--set", "--param")),
        ("muri", ("--mode", "--limit", "--seed", "--set")),
    ],
)
def test_simulate_commands_keep_their_flags(capsys, command, flags):
    code, out, _ = run(capsys, "simulate", command, "--help")
    assert code == 0
    for flag in ("--trace", "--policy", "--time-limit", "--json", *flags):
        assert flag in out
    assert ("--param" in out) == (command == "asrpt")


def test_console_script_ends_solve_without_teardown_and_loses_no_output(small_file, tmp_path):
    """``run`` (the console script) ends ``solve`` with ``os._exit`` after flushing: the
    whole JSON arrives through a pipe and a file, the exit status is the command's, and
    an error is still one line with status 2."""
    script = "from ddlsched.cli import run; run()"
    base = [sys.executable, "-c", script, "solve", "rar", str(small_file)]
    proc = subprocess.run(
        [*base, "--method", "sjf_bco", "--json"], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["status"] == "feasible"
    out = tmp_path / "out.json"
    with out.open("w") as handle:
        code = subprocess.run(
            [*base, "--method", "sjf_bco", "--json"], stdout=handle, check=False
        ).returncode
    assert code == 0 and json.loads(out.read_text())["status"] == "feasible"
    proc = subprocess.run([*base, "--method", "nope"], capture_output=True, text=True, check=False)
    assert proc.returncode == 2
    assert proc.stderr.startswith("ddlsched: error:") and proc.stderr.count("\n") == 1
