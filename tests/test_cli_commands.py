"""Cross-family commands of the CLI: the generic ``simulate`` command a family opts
into, and the console script's exit after ``solve``."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from ddlsched.cli import main


@pytest.fixture
def small_file(tmp_path):
    path = tmp_path / "small.json"
    argv = ["instance", "generate", "rar", "--preset", "small", "--seed", "3", "-o", str(path)]
    assert main(argv) == 0
    return path


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


def test_a_family_opts_into_simulate_with_its_hook(toy_simulation, cli):
    code, out, _ = cli("simulate", "toy", "--trace", "abc", "--policy", "double", "--json")
    assert code == 0
    assert json.loads(out) == {"value": 6.0, "size": 2}  # 2 x len("abc")
    argv = ["simulate", "toy", "--trace", "t", "--policy", "double", "--size", "5"]
    code, out, _ = cli(*argv, "--set", "value=1.5")
    assert code == 0 and "toy: t" in out and "3" in out and "5" in out
    code, _, err = cli("simulate", "toy", "--trace", "t", "--policy", "halve")
    assert code == 2 and err == "ddlsched: error: unknown policy 'halve' (choose from double)\n"
    code, _, err = cli(*argv, "--param", "x=1")  # no param_help: no --param
    assert code == 2 and "unrecognized arguments: --param" in err
    code, out, _ = cli("simulate", "toy", "--help")
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
def test_simulate_commands_keep_their_flags(cli, command, flags):
    code, out, _ = cli("simulate", command, "--help")
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


def _into_closed_pipe(argv: list[str]) -> subprocess.CompletedProcess:
    """Run the console script with stdout a pipe whose reader is already gone."""
    import os

    read_end, write_end = os.pipe()
    os.close(read_end)  # every write to stdout fails with EPIPE, whatever the timing
    try:
        return subprocess.run(
            [sys.executable, "-c", "from ddlsched.cli import run; run()", *argv],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
        )
    finally:
        os.close(write_end)


@pytest.mark.parametrize("quiet", [["-q"], ["-q", "--json"]])
def test_a_reader_that_went_away_ends_solve_with_141_and_no_message(small_file, quiet):
    """``ddlsched solve ... -q | head -1``: the status a shell gives SIGPIPE, no traceback
    and no ``Exception ignored`` on stderr (Rich's own handling exits with 1)."""
    proc = _into_closed_pipe(["solve", "rar", str(small_file), "--method", "sjf_bco", *quiet])
    assert proc.returncode == 141, proc.stderr
    assert proc.stderr == ""


def test_a_reader_that_went_away_ends_a_rich_table_with_141():
    """The same for a listing printed as a Rich table (``ddlsched methods | head``)."""
    proc = _into_closed_pipe(["methods", "rar"])
    assert proc.returncode == 141, proc.stderr
    assert proc.stderr == ""
