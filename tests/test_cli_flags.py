"""Every flag of the CLI is validated; help lists families, methods and presets.

Each hostile value gives exit status 2 and one stderr line ``ddlsched: error: ...``
naming the flag or the parameter, never a traceback. In-process and fast: no
method here runs longer than a heuristic on a ``small`` instance.
"""

from __future__ import annotations

import argparse
import math

import pytest

from ddlsched import cli_types, progress
from ddlsched.bench.aggregate import ratio_text
from ddlsched.cli import main
from ddlsched.datadir import data_dir
from ddlsched.errors import InvalidInstanceError
from ddlsched.params import build_params, param_specs
from ddlsched.registry import families

needs_data = pytest.mark.skipif(data_dir() is None, reason="shared data directory absent")

QUICK = "benchmarks/suites/quick.toml"


@pytest.fixture(scope="module")
def small_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("flags") / "small.json"
    assert main(["instance", "generate", "rar", "--preset", "small", "-o", str(path)]) == 0
    return path


def assert_one_line_error(code: int, err: str, *needles: str) -> None:
    assert code == 2, err
    assert err.startswith("ddlsched: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    for needle in needles:
        assert needle in err, err


GEN = ["instance", "generate"]


@pytest.mark.parametrize(
    ("argv", "needles"),
    [
        # seeds >= 0 (and within what the solvers accept)
        ([*GEN, "rar", "--preset", "small", "--seed", "-1", "-o", "{out}"], ["--seed"]),
        ([*GEN, "rar", "--preset", "small", "--seed", "2147483648", "-o", "{out}"], ["--seed"]),
        ([*GEN, "rar", "--preset", "small", "--seed", "1.5", "-o", "{out}"], ["--seed"]),
        (["compare", "rar", "--first-seed", "-5"], ["--first-seed"]),
        (["compare", "rar", "--first-seed", "2147483647", "--seeds", "2"], ["--first-seed"]),
        (["solve", "rar", "{file}", "--method", "ff", "--seed", "-3"], ["--seed"]),
        # counts >= 1
        (["compare", "rar", "--seeds", "0"], ["--seeds"]),
        (["compare", "rar", "--seeds", "1000000000"], ["--seeds"]),
        (["compare", "rar", "--methods", "ff,,ls"], ["--methods"]),
        (["bench", "run", QUICK, "--workers", "0"], ["--workers"]),
        (["bench", "run", QUICK, "--limit", "-1"], ["--limit"]),
        (["bench", "run", QUICK, "--limit", "0"], ["--limit"]),
        (["bench", "status", "{dir}", "--errors", "-1"], ["--errors"]),
        (["bench", "worstcase", "asrpt", "--candidates", "0"], ["--candidates"]),
        (["bench", "worstcase", "asrpt", "--seed", "-1"], ["--seed"]),
        (["bench", "worstcase", "asrpt", "--budgets", "1,nan"], ["--budgets"]),
        (["bench", "worstcase", "asrpt", "--budgets", "1,,2"], ["--budgets"]),
        # limits > 0 and finite
        (["solve", "rar", "{file}", "--method", "ff", "--time-limit", "0"], ["--time-limit"]),
        (["solve", "rar", "{file}", "--method", "ff", "--time-limit", "nan"], ["--time-limit"]),
        (["solve", "rar", "{file}", "--method", "ff", "--time-limit", "inf"], ["--time-limit"]),
        (["solve", "rar", "{file}", "--method", "ff", "--time-limit", "1e999"], ["--time-limit"]),
        (["compare", "rar", "--time-limit", "-1"], ["--time-limit"]),
        (["bench", "worstcase", "asrpt", "--time-limit", "0"], ["--time-limit"]),
        # choices
        (["solve", "rar", "{file}", "--method", "ff", "--backend", "cplex"], ["unknown backend"]),
        (["solve", "rar", "{file}", "--method", "nope"], ["unknown method", "sjf_bco"]),
        (["bench", "run", QUICK, "--dask", "bogus"], ["--dask", "SCHEME://HOST:PORT"]),
        (["bench", "run", QUICK, "--dask", "tcp://host:99999"], ["--dask"]),
        (["bench", "run", QUICK, "--dask", "http://host:8786"], ["--dask"]),
        # method parameters: strict booleans, finite numbers
        (
            ["solve", "rar", "{file}", "--method", "exact", "--param", "presolve_bounds=maybe"],
            ["presolve_bounds", "bool"],
        ),
        (
            ["solve", "rar", "{file}", "--method", "exact", "--param", "cross_check=1"],
            ["cross_check"],
        ),
        (["solve", "rar", "{file}", "--method", "sjf_bco", "--param", "u=NaN"], ["parameter u"]),
        # preset parameters, against each preset's typed schema
        (
            [*GEN, "rar", "--preset", "small", "--set", "max_horizon=NaN", "-o", "{out}"],
            ["max_horizon"],
        ),
        ([*GEN, "rar", "--preset", "paper", "--set", "job_mix=[[1]]", "-o", "{out}"], ["job_mix"]),
        (
            [*GEN, "rar", "--preset", "small", "--set", "num_servers=0", "-o", "{out}"],
            ["num_servers"],
        ),
        ([*GEN, "rar", "--preset", "small", "--set", "colour=3", "-o", "{out}"], ["colour"]),
        (
            [*GEN, "rar", "--preset", "small", "--set", "num_jobs=10000000", "-o", "{out}"],
            ["num_jobs", "<= 10000"],
        ),
        (
            [
                *GEN,
                "rar",
                "--preset",
                "paper",
                "--set",
                "job_mix=[[1, 6000], [2, 6000]]",
                "-o",
                "{out}",
            ],
            ["job_mix", "at most 10000 jobs"],
        ),
        (
            [*GEN, "placement", "--preset", "small", "--set", "num_stages=0", "-o", "{out}"],
            ["num_stages"],
        ),
        (
            [*GEN, "placement", "--preset", "table2", "--set", 'model="gpt5"', "-o", "{out}"],
            ["model"],
        ),
        ([*GEN, "muri", "--preset", "k3", "--set", "num_jobs=1e9", "-o", "{out}"], ["num_jobs"]),
        (
            [*GEN, "muri", "--preset", "k3", "--set", "gpu_choices=[0]", "-o", "{out}"],
            ["gpu_choices"],
        ),
        ([*GEN, "asrpt", "--preset", "tiny", "--set", "num_jobs=100", "-o", "{out}"], ["num_jobs"]),
        ([*GEN, "asrpt", "--preset", "paper", "--set", "servers=0", "-o", "{out}"], ["servers"]),
        ([*GEN, "dmlrs", "--preset", "tiny", "--set", "jobs=true", "-o", "{out}"], ["jobs"]),
        ([*GEN, "dmlrs", "--preset", "micro", "--set", "jobs=3", "-o", "{out}"], ["jobs"]),
        ([*GEN, "dmlrs_slot", "--preset", "synthetic", "--set", "load=2", "-o", "{out}"], ["load"]),
        ([*GEN, "muri_sim", "--preset", "trace", "-o", "{out}"], ["trace is required"]),
        (["compare", "rar", "--set", "num_jobs=0", "--seeds", "1"], ["num_jobs"]),
        # simulate commands (registered by the families)
        (["simulate", "muri", "--trace", "t", "--policy", "srtf", "--limit", "0"], ["--limit"]),
        (["simulate", "muri", "--trace", "t", "--policy", "srtf", "--seed", "-1"], ["--seed"]),
        (
            ["simulate", "muri", "--trace", "t", "--policy", "srtf", "--time-limit", "nan"],
            ["--time-limit"],
        ),
        (["simulate", "muri", "--trace", "t", "--policy", "srtf", "--mode", "x"], ["mode"]),
        (["simulate", "asrpt", "--trace", "t", "--policy", "asrpt", "--jobs", "0"], ["--jobs"]),
        (["simulate", "asrpt", "--trace", "t", "--policy", "asrpt", "--start", "-2"], ["--start"]),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, list) and v and v[0] != "--" else None,
)
def test_hostile_flags_are_one_line_errors(tmp_path, small_file, cli, argv, needles):
    argv = [a.format(file=small_file, out=tmp_path / "o.json", dir=tmp_path) for a in argv]
    code, _out, err = cli(*argv)
    assert_one_line_error(code, err, *needles)
    assert not (tmp_path / "o.json").exists()


@needs_data
def test_simulator_knobs_have_maxima(cli):
    code, _out, err = cli(
        *["simulate", "muri", "--trace", "tiresias", "--policy", "srtf", "--limit", "20"],
        *["--set", "num_nodes=100000000"],
    )
    assert_one_line_error(code, err, "num_nodes")


def test_every_preset_has_a_typed_schema():
    """Every preset of every family lists its parameters; every size has a maximum."""
    for fam in families(include_internal=True):
        assert set(fam.presets) == set(fam.preset_params), fam.name
        for preset in fam.presets:
            for spec in param_specs(fam.preset_params[preset]):
                assert spec.help, (fam.name, preset, spec.name)
                if spec.type_text.startswith("int"):
                    assert "<=" in spec.constraint, (fam.name, preset, spec.name)


def test_preset_errors_are_instance_errors():
    fam = next(f for f in families() if f.name == "rar")
    with pytest.raises(InvalidInstanceError, match="parameter max_horizon"):
        fam.generate("small", 0, max_horizon=math.nan)
    instance = fam.generate("paper", 0, job_mix=[[1, 4], [2, 2]])  # JSON lists are accepted
    assert len(instance.jobs) == 6


def test_booleans_from_strings_are_strict():
    from ddlsched.registry import get_method

    cls = get_method("rar", "exact").params_type
    for value in ("maybe", "true", "True", "yes", 1, 0, None):
        with pytest.raises(Exception, match="presolve_bounds"):
            build_params(cls, {"presolve_bounds": value}, "rar.exact")
    assert build_params(cls, {"presolve_bounds": False}, "rar.exact").presolve_bounds is False


def test_argparse_types():
    assert cli_types.seed("0") == 0 and cli_types.seed(str(cli_types.MAX_SEED)) > 0
    assert cli_types.count()("3") == 3 and cli_types.non_negative()("0") == 0
    assert cli_types.seconds("0.5") == 0.5
    assert cli_types.names(" a, b ") == ["a", "b"]
    assert cli_types.numbers("0,1.5") == [0.0, 1.5]
    for good in (
        "local",
        "tcp://10.0.0.5:8786",
        "tls://sched.example.org:8786",
        "tcp://[::1]:8786",
    ):
        assert cli_types.dask_address(good) == good
    for bad in ("bogus", "tcp://host", "tcp://:8786", "tcp://host:0", "ftp://host:21", ""):
        with pytest.raises(argparse.ArgumentTypeError):
            cli_types.dask_address(bad)
    with pytest.raises(argparse.ArgumentTypeError):
        cli_types.seed("9" * 5000)  # too many digits for int(): still a clean message


# --------------------------------------------------------------------------- help


def test_help_lists_families_methods_and_presets(cli):
    code, out, _ = cli("solve", "--help")
    assert code == 0
    for fam in families():
        assert fam.name in out
    assert "sjf_bco" in out and "heavy_edge" in out and "pd_ors" in out  # methods by family
    assert "FILE" in out and "instance file" in out
    code, out, _ = cli("instance", "generate", "--help")
    assert code == 0 and "bucket40" in out and "table2" in out and "synthetic" in out
    code, out, _ = cli("compare", "--help")
    assert code == 0 and "sjf_bco" in out and "small" in out


def test_presets_command_lists_parameters(cli):
    code, out, _ = cli("presets", "rar")
    assert code == 0
    assert "max_horizon" in out and "job_mix" in out and "<= 100000" in out
    assert "cap on the horizon" in out  # help texts for one family
    code, out, _ = cli("presets")
    assert code == 0 and "dmlrs_slot" in out and "demand_share" in out
    code, out, _ = cli("methods", "rar")
    assert code == 0 and "ddlsched presets rar" in out


def test_bench_help_is_plain_text_and_table_help_explains_columns(cli):
    code, out, _ = cli("bench", "--help")
    assert code == 0 and "``" not in out and ":class:" not in out
    code, out, _ = cli("bench", "table", "--help")
    assert code == 0
    for column in ("ratio exact", "cert. opt.", "worst ratio", "time limits", "no bound"):
        assert column in out


# --------------------------------------------------------------------------- ratios, progress


def test_ratio_text():
    assert ratio_text(1.25, 1.25) == "1.2500"
    assert ratio_text(1.0, 1.5) == "[1.0000, 1.5000]"
    assert ratio_text(1.0, math.inf) == "[1.0000, no bound]"
    assert ratio_text(math.inf, math.inf) == "infinite"
    assert ratio_text(math.nan, math.nan) == "-"


def test_compare_of_heuristics_prints_no_bound(cli):
    code, out, err = cli(
        "compare", "rar", "--preset", "small", "--seeds", "2", "--methods", "sjf_bco,ff"
    )
    assert code == 0 and err == ""  # no progress bar off a terminal
    assert "no bound" in out and "inf]" not in out


def test_progress_reports_reach_a_listener_only_when_installed():
    progress.phase("nobody listens")  # a no-op
    state = progress.State("start")
    with progress.listening(state):
        progress.phase("solving x with highs")
        progress.incumbent(23.0, 21.0, "x")
    progress.phase("after")  # no longer reported
    snap = state.snapshot()
    assert snap.phase == "solving x with highs" and (snap.objective, snap.bound) == (23.0, 21.0)
    assert "incumbent 23, bound 21" in snap.text()


def test_solve_reports_progress_and_quiet_json_is_clean(tmp_path, capsys, cli):
    path = tmp_path / "placement.json"
    assert main(["instance", "generate", "placement", "--preset", "small", "-o", str(path)]) == 0
    capsys.readouterr()
    seen: list[str] = []

    class Recorder:
        def phase(self, text):
            seen.append(text)

        def incumbent(self, objective, bound, source):
            seen.append(f"{source}: incumbent {objective} bound {bound}")

    with progress.listening(Recorder()):
        code, out, err = cli("solve", "placement", str(path), "--method", "exact", "--json", "-q")
    assert code == 0 and err == "" and out.lstrip().startswith("{")
    assert seen[0] == "running placement.exact" and seen[-1] == "placement.exact: optimal"
    assert any(s.startswith("building the ") for s in seen)
    assert any(s.startswith("solving ") and s.endswith("with highs") for s in seen)
    assert any(s.startswith("cross-check of ") and s.endswith("with scip") for s in seen)
    assert any(": incumbent " in s for s in seen)
