"""The hostile cases found on the online families, each answered with one line
``ddlsched: error: ...`` and exit 2, or an answer (never a traceback, a hang or "failed
without saying why"); numeric ranges; empty job lists; paths in parameters."""

from __future__ import annotations

import copy
import json

import pytest

from ddlsched.cli import main
from ddlsched.errors import InvalidInstanceError
from ddlsched.problems import dmlrs as dmlrs_problem
from ddlsched.problems.dmlrs import DmlrsInstance
from ddlsched.problems.dmlrs_slot import SlotInstance
from ddlsched.registry import families, get_family, methods


def _one_line_error(capsys, argv: list[str], *needles: str) -> str:
    code = main([str(a) for a in argv])
    err = capsys.readouterr().err
    assert code == 2, (argv, code, err)
    assert err.count("\n") == 1 and err.startswith("ddlsched: error:"), err
    for needle in needles:
        assert needle in err, (needle, err)
    return err


def _instance(family: str) -> dict:
    fam = get_family(family)
    preset, params = fam.smoke
    return fam.generate(preset, 0, **dict(params)).to_dict()


def _write(tmp_path, data: dict, name: str = "bad.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


# --------------------------------------------------------------------------- dmlrs ranges

DMLRS_CASES = {
    "slot_s 5e-324": (("slot_s",), 5e-324, "worker-slots"),
    "slot_s 1e300": (("slot_s",), 1e300, "worker-slots"),
    "grad_bytes 1e308": (("jobs", 0, "grad_bytes"), 1e308, "worker-slots"),
    "theta1 1e308": (("jobs", 0, "utility", "theta1"), 1e308, "theta1"),
    "gamma 1e15": (("jobs", 0, "gamma"), 10**15, "gamma"),
    "global_batch 2^40": (("jobs", 0, "global_batch"), 2**40, "global_batch"),
    "epochs 2^70": (("jobs", 0, "epochs"), 2**70, "V_i"),
    "demand 1e-300": (("jobs", 0, "worker", 1), 1e-300, "demand"),
    "capacity 1e12": (("machines", "capacity", 0), 1e12, "capacity"),
    "theta3 -1e300": (("jobs", 0, "utility", "theta3"), -1e300, "theta3"),
}


def _set(data: dict, path: tuple, value) -> dict:
    data = copy.deepcopy(data)
    target = data
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return data


@pytest.mark.parametrize("case", sorted(DMLRS_CASES))
def test_dmlrs_numbers_out_of_range_are_refused_at_load(case, tmp_path, capsys):
    path, value, needle = DMLRS_CASES[case]
    bad = _write(tmp_path, _set(_instance("dmlrs"), path, value))
    _one_line_error(capsys, ["instance", "check", "dmlrs", bad], needle, "Numeric ranges")
    _one_line_error(capsys, ["solve", "dmlrs", bad, "--method", "fifo"], needle)


def test_dmlrs_ranges_hold_every_preset():
    fam = get_family("dmlrs")
    for preset in ("tiny", "micro", "paper"):
        for seed in range(5):
            dmlrs_problem.check_ranges(fam.generate(preset, seed))


def test_dmlrs_range_check_names_the_job():
    data = _instance("dmlrs")
    data["jobs"][2]["tau_s"] = 1e12
    with pytest.raises(InvalidInstanceError, match=r"jobs\[2\]: worker-slots"):
        DmlrsInstance.from_dict(data)


# --------------------------------------------------------------------------- dmlrs_slot ranges

SLOT_CASES = {
    "gamma 1e15": ("gamma", 10**15, "gamma"),
    "demand 2^70": ("demand", 2**70, "demand"),
    "global_batch 2^31": ("global_batch", 2**31, "global_batch"),
    "prices 1e308": ("prices", 1e308, "worker_price"),
    "price 1e-300": ("price0", 1e-300, "worker_price"),
    "price spread": ("price0", 1e-60, "times the smallest"),
    "worker demand 1e15": ("worker", 1e15, "worker[1]"),
    "residual 1e12": ("residual", 1e12, "residual"),
}


def _slot_variant(field: str, value) -> dict:
    data = _instance("dmlrs_slot")
    if field == "prices":
        for machine in data["machines"]:
            machine["worker_price"] = machine["ps_price"] = value
    elif field == "price0":
        data["machines"][0]["worker_price"] = value
    elif field == "worker":
        data["worker"][1] = value
    elif field == "residual":
        data["machines"][0]["residual"][1] = value
    else:
        data[field] = value
    return data


@pytest.mark.parametrize("case", sorted(SLOT_CASES))
def test_dmlrs_slot_numbers_out_of_range_are_refused(case, tmp_path, capsys):
    field, value, needle = SLOT_CASES[case]
    bad = _write(tmp_path, _slot_variant(field, value))
    _one_line_error(capsys, ["instance", "check", "dmlrs_slot", bad], needle)
    for method in ("lp", "ilp", "rounding"):
        _one_line_error(capsys, ["solve", "dmlrs_slot", bad, "--method", method], needle)


def test_slot_prices_at_the_range_edges_solve(tmp_path, capsys):
    data = _instance("dmlrs_slot")
    data["machines"][0]["worker_price"] = 1e-30  # 1e27 below the others: within the spread
    data["machines"][1]["ps_price"] = 1e9
    path = _write(tmp_path, data, "edge.json")
    for method in ("lp", "ilp", "rounding"):
        code = main(["solve", "dmlrs_slot", str(path), "--method", method, "--json"])
        out, err = capsys.readouterr()
        assert code == 0, err
        assert json.loads(out)["status"] in ("optimal", "bound_only", "feasible", "no_solution")


def test_slot_instance_fast_and_slow_reading_agree():
    data = _instance("dmlrs_slot")
    fast = SlotInstance.from_dict(data)
    data["machines"][0]["extra"] = 1  # the fast reader gives up; the slow one names it
    with pytest.raises(InvalidInstanceError, match=r"machines\[0\]: unknown field"):
        SlotInstance.from_dict(data)
    del data["machines"][0]["extra"]
    data["machines"][0]["worker_price"] = 1  # an int: read as 1.0 either way
    assert SlotInstance.from_dict(data).worker_price[0] == 1.0
    assert fast.residual == SlotInstance.from_dict(data).residual


# --------------------------------------------------------------------------- empty job lists


def test_dmlrs_empty_job_list_has_the_trivial_answer_for_every_method(tmp_path, capsys):
    data = _instance("dmlrs")
    data["jobs"] = []
    path = _write(tmp_path, data, "empty.json")
    assert main(["instance", "check", "dmlrs", str(path)]) == 0
    capsys.readouterr()
    for method in methods("dmlrs"):
        code = main(["solve", "dmlrs", str(path), "--method", method.name, "--json", "-q"])
        out, err = capsys.readouterr()
        assert code == 0, (method.name, err)
        result = json.loads(out)
        if method.kind == "bound" and result["objective"] is None:
            assert result["bound"] == 0.0, (method.name, result)
        else:
            assert result["objective"] == 0.0 and result["schedule"]["accepted"] == [], method
        if method.name == "exact":
            assert result["status"] == "optimal"


def test_dmlrs_exact_with_no_finishable_job_is_the_empty_optimum():
    from ddlsched.registry import RunOptions, run_method

    fam = get_family("dmlrs")
    instance = fam.generate("tiny", 0)
    data = instance.to_dict()
    for job in data["jobs"]:
        job["arrival_slot"] = data["slots"]
        job["epochs"] = 1_000
    result = run_method("dmlrs", "exact", DmlrsInstance.from_dict(data), RunOptions(10))
    assert result.status == "optimal" and result.objective == 0.0 and result.bound == 0.0


# --------------------------------------------------------------------------- parameters


@pytest.mark.parametrize("where", ["/proc/x", "/etc/passwd/x", "/dev/null", ""])
def test_unwritable_dump_directory_is_refused_by_solve_and_validate(where, tmp_path, capsys):
    path = _write(tmp_path, _instance("dmlrs"), "ok.json")
    argv = ["solve", "dmlrs", path, "--method", "pd_ors", "--param"]
    _one_line_error(capsys, [*argv, f"dump_slot_problems={json.dumps(where)}"], "writable")
    suite = tmp_path / "s.toml"
    suite.write_text(
        f'[suite]\nname = "dump"\noutput = "{tmp_path / "out"}"\n[limits]\ntime_limit_s = 5\n'
        '[[instances]]\nfamily = "dmlrs"\npreset = "tiny"\nseeds = { first = 0, count = 1 }\n'
        f'[[methods]]\nname = "pd_ors"\nparams = {{ dump_slot_problems = {json.dumps(where)} }}\n'
    )
    code = main(["bench", "validate", str(suite)])
    out, err = capsys.readouterr()
    assert code != 0 and "dump_slot_problems" in out + err and "Traceback" not in err


def test_a_writable_dump_directory_is_created_only_when_dumping(tmp_path):
    from ddlsched.params import writable_directory

    target = tmp_path / "a" / "b"
    assert writable_directory(str(target)) is None
    assert not (tmp_path / "a").exists()  # the probe left nothing behind


@pytest.mark.parametrize(
    "param", ["quanta=100000000", "S=100000000", "quanta=0", "S=1.5", "quanta=true"]
)
def test_loop_bound_parameters_have_maxima(param, tmp_path, capsys):
    path = _write(tmp_path, _instance("dmlrs"), "ok.json")
    _one_line_error(capsys, ["solve", "dmlrs", path, "--method", "pd_ors", "--param", param])


def test_pd_ors_refuses_arrays_beyond_the_memory_budget(tmp_path, capsys):
    data = _instance("dmlrs")
    data["machines"] = {"count": 100_000, "capacity": data["machines"]["capacity"]}
    data["slots"] = 100_000
    path = _write(tmp_path, data, "big.json")
    argv = ["solve", "dmlrs", path, "--method", "pd_ors", "--memory-budget", "500"]
    _one_line_error(capsys, argv, "memory budget")


def test_price_bounds_out_of_range_are_one_line(tmp_path, capsys):
    path = _write(tmp_path, _instance("dmlrs"), "ok.json")
    argv = ["solve", "dmlrs", path, "--method", "pd_ors", "--param", "bounds=given"]
    _one_line_error(capsys, [*argv, "--param", "U=1", "--param", "L=1e-300"], "L = ")
    _one_line_error(capsys, [*argv, "--param", "U=1e300", "--param", "L=1"], "U^r")


def test_a_solver_error_says_why(monkeypatch):
    from ddlsched.registry import RunOptions, run_method
    from ddlsched.solvers import formulation
    from ddlsched.solvers.backends import ModelSolve
    from ddlsched.solvers.result import Status

    def failing(model, backend, limits, deadline):
        return ModelSolve(Status.ERROR, None, None, 0.0, "highs", "x", 1, 1, 1, "Solve error")

    monkeypatch.setattr(formulation, "solve_model", failing)
    instance = get_family("dmlrs_slot").generate("synthetic", 0)
    result = run_method("dmlrs_slot", "ilp", instance, RunOptions(10))
    assert result.status == "error" and "Solve error" in result.info["error"], result.info


# --------------------------------------------------------------------------- planner


def _greedy_reference(stage_times: list[float], num_gpus: int) -> tuple[int, ...]:
    """The planner's rule as the docstring states it, one GPU at a time."""
    counts = [1] * len(stage_times)
    for _ in range(num_gpus - len(stage_times)):
        s = max(range(len(counts)), key=lambda i: (stage_times[i] / counts[i], -i))
        counts[s] += 1
    return tuple(counts)


def test_replica_counts_equal_the_greedy_and_refuse_absurd_gpu_counts():
    import random

    from ddlsched.workloads.profiles.planner import MAX_PLAN_GPUS, replica_counts

    rng = random.Random(23)
    for _ in range(500):
        times = [rng.choice([1.0, 2.0, 0.5, 3.0, rng.random()]) for _ in range(rng.randint(1, 6))]
        gpus = rng.randint(len(times), 200)
        assert replica_counts(times, gpus) == _greedy_reference(times, gpus), (times, gpus)
    assert sum(replica_counts([1.0, 2.0, 3.0], MAX_PLAN_GPUS)) == MAX_PLAN_GPUS
    with pytest.raises(InvalidInstanceError, match="num_gpus"):
        replica_counts([1.0, 2.0], 2**40)  # before: one loop step per GPU, for ever


# --------------------------------------------------------------------------- muri_sim, seeds


@pytest.mark.parametrize("kind", ["missing", "directory", "device", "fifo", "garbage"])
def test_instance_check_muri_sim_reads_its_trace_as_solve_does(kind, tmp_path, capsys):
    import os

    trace = {
        "missing": str(tmp_path / "missing.csv"),
        "directory": str(tmp_path),
        "device": "/dev/zero",
        "fifo": str(tmp_path / "fifo.csv"),
        "garbage": str(tmp_path / "garbage.csv"),
    }[kind]
    if kind == "fifo":
        os.mkfifo(trace)
    if kind == "garbage":
        (tmp_path / "garbage.csv").write_text("a,b\n1,2\n")
    data = {"family": "muri_sim", "schema_version": 1, "trace": trace}
    path = _write(tmp_path, data, "run.json")
    first = _one_line_error(capsys, ["instance", "check", "muri_sim", path])
    second = _one_line_error(capsys, ["solve", "muri_sim", path, "--method", "srtf"])
    assert first == second  # the same check, the same words


def test_seeds_are_range_checked_everywhere(tmp_path, capsys):
    from ddlsched.cli_types import MAX_SEED
    from ddlsched.errors import DdlschedError
    from ddlsched.registry import RunOptions

    data = {"family": "muri_sim", "schema_version": 1, "trace": "trace1", "seed": 2**70}
    _one_line_error(capsys, ["instance", "check", "muri_sim", _write(tmp_path, data)], "seed")
    with pytest.raises(DdlschedError, match="seed"):
        RunOptions(seed=MAX_SEED + 1)
    suite = tmp_path / "s.toml"
    suite.write_text(
        f'[suite]\nname = "seeds"\noutput = "{tmp_path / "out"}"\n'
        '[[instances]]\nfamily = "rar"\npreset = "small"\n'
        f"seeds = {{ first = {MAX_SEED}, count = 2 }}\n"
        '[[methods]]\nname = "sjf_bco"\n'
    )
    _one_line_error(capsys, ["bench", "validate", suite], "seeds")


# --------------------------------------------------------------------------- honest limits


def _row(method, kind, seed, status, objective, bound=None, hit=False):
    return {
        "family": "dmlrs", "group": "g", "instance_id": f"g/s{seed}",
        "instance_key": f"dmlrs/g/{seed}", "instance_size": 3, "method": method,
        "label": method, "kind": kind, "seed": seed, "sense": "max", "status": status,
        "objective": objective, "bound": bound, "runtime_s": 1.0, "time_limit_hit": hit,
    }  # fmt: skip


def test_the_time_limits_column_counts_every_row_the_limit_cut():
    import pandas as pd

    from ddlsched.bench.tables import summarize

    frame = pd.DataFrame(
        [
            _row("exact", "exact", 0, "optimal", 10.0, 10.0),
            _row("exact", "exact", 1, "feasible", 8.0, 12.0, hit=True),  # stopped at its limit
            _row("exact", "exact", 2, "time_limit", None),  # killed by the platform
            _row("exact", "exact", 3, "time_limit_no_solution", None, hit=True),
            _row("colgen", "bound", 0, "bound_only", None, 10.0, hit=True),  # a weaker bound
            _row("colgen", "bound", 1, "bound_only", None, 12.0),
        ]
    )
    counts = summarize(frame).set_index("method")["time_limits"]
    assert counts["exact"] == 3 and counts["colgen"] == 1


def test_colgen_reports_the_limit_and_has_a_round_budget():
    from ddlsched.registry import RunOptions, run_method

    paper = get_family("dmlrs").generate("paper", 0)
    cut = run_method("dmlrs", "colgen", paper, RunOptions(time_limit_s=0.5))
    assert cut.time_limit_hit, cut.info
    # a cut round, or seed schedules left out for want of time (colgen can still converge)
    assert cut.info["rounds_stopped"] in ("time_limit", "stalled") or cut.info["seed_columns_cut"]
    assert cut.info["stopped"]
    tiny = get_family("dmlrs").generate("tiny", 0)
    options = RunOptions(time_limit_s=60, params={"max_rounds": 1, "seed_columns": False})
    first, second = (run_method("dmlrs", "colgen", tiny, options) for _ in range(2))
    assert first.bound == second.bound and not first.time_limit_hit
    assert first.info["iterations"] <= 1


def test_ub_prices_and_dorm_say_when_the_limit_weakened_them(monkeypatch):
    from ddlsched.models import dmlrs_dorm
    from ddlsched.models import dmlrs_dual as dmlrs_models
    from ddlsched.problems.dmlrs import DmlrsSchedule
    from ddlsched.registry import RunOptions, run_method

    tiny = get_family("dmlrs").generate("tiny", 0)
    unpriced = {"optimal": 3, "trivial": 2}
    monkeypatch.setattr(
        dmlrs_models,
        "bound_at_prices",
        lambda *a, **k: (1e6, {"pricing_status": unpriced, "lambda": []}),
    )
    result = run_method("dmlrs", "ub_prices", tiny, RunOptions(30))
    assert result.time_limit_hit and "trivial" in result.info["stopped"]
    info = {"slots_at_limit": 3, "slots_at_time_limit": 2, "slots_at_node_limit": 1}
    monkeypatch.setattr(dmlrs_dorm, "run_dorm", lambda *a, **k: (DmlrsSchedule(()), info))
    result = run_method("dmlrs", "dorm", tiny, RunOptions(30))
    assert result.time_limit_hit and "2 slot" in result.info["stopped"]


# --------------------------------------------------------------------------- loading


def test_the_time_limit_covers_loading_the_instance(tmp_path, capsys):
    data = _instance("dmlrs")
    data["jobs"] = data["jobs"] * (30_000 // len(data["jobs"]))  # ~0.5 s to load
    path = _write(tmp_path, data, "big.json")
    code = main(["solve", "dmlrs", str(path), "--method", "fifo", "--time-limit", "0.05", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    result = json.loads(out)
    assert result["status"] == "time_limit_no_solution" and result["time_limit_hit"]
    assert "loading the instance" in result["info"]["stopped"]
    code = main(["solve", "dmlrs", str(path), "--method", "fifo", "--time-limit", "60", "--json"])
    result = json.loads(capsys.readouterr().out)
    assert result["status"] == "feasible" and result["info"]["load_s"] > 0


# --------------------------------------------------------------------------- every family


@pytest.mark.parametrize("family", sorted(f.name for f in families()))
def test_every_family_answers_an_empty_job_list_as_its_module_says(family, tmp_path, capsys):
    """Either one line at ``instance check`` and ``solve``, or (dmlrs) a valid instance on
    which every method gives the trivial answer (tested above)."""
    from ddlsched.datadir import data_dir

    data = _instance(family) if family != "muri_sim" or data_dir() else None
    if data is None:
        pytest.skip("shared data directory absent")
    if "jobs" in data:
        data["jobs"] = []
    elif "trace" in data:  # a trace run: a trace file without a job
        trace = tmp_path / "empty.csv"
        trace.write_text(MURI_TRACE_HEADER + "\n")
        data["trace"] = str(trace)
    else:  # an instance that is one job: its list of stages or machines
        key = next(k for k, v in data.items() if isinstance(v, list) and v and k != "resources")
        data[key] = []
    path = _write(tmp_path, data, "empty.json")
    code = main(["instance", "check", family, str(path)])
    err = capsys.readouterr().err
    if family == "dmlrs":
        assert code == 0, err
        return
    assert code == 2 and err.count("\n") == 1 and err.startswith("ddlsched: error:"), err
    first = next(m.name for m in methods(family) if not m.hazardous)
    _one_line_error(capsys, ["solve", family, path, "--method", first])


MURI_TRACE_HEADER = (
    "job_id,num_gpu,submit_time,iterations,model_name,batch_size,duration,interval,"
    "iteration_time,resource_time_0,resource_time_1,resource_time_2,priority"
)


@pytest.mark.parametrize(
    "path, value",
    [(("network", "b_e"), 5e-324), (("network", "C"), 1e300), (("jobs", 0, "grad_size"), 1e300)],
)
def test_rar_numbers_out_of_range_are_refused_at_load(path, value, tmp_path, capsys):
    bad = _write(tmp_path, _set(_instance("rar"), path, value))
    _one_line_error(capsys, ["instance", "check", "rar", bad], "Numeric ranges")
    _one_line_error(capsys, ["solve", "rar", bad, "--method", "ff"], "Numeric ranges")


def test_colgen_and_ub_prices_do_not_import_pyomo():
    """Their path is highspy throughout: a cold Pyomo import (0.8-2 s, which no interrupt
    can cut) made colgen overrun a 1 s limit by 1.9 s."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from ddlsched.registry import RunOptions, get_family, run_method\n"
        "i = get_family('dmlrs').generate('tiny', 0)\n"
        "opts = RunOptions(30, params={'seed_columns': False})\n"
        "run_method('dmlrs', 'colgen', i, opts)\n"
        "run_method('dmlrs', 'ub_prices', i, RunOptions(30))\n"
        "print('pyomo.environ' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False", out.stderr


def test_every_integer_method_parameter_has_a_maximum():
    """A parameter that becomes a loop bound (quanta, draws, rounds, trials, patterns) is
    refused above its stated maximum before anything runs."""
    missing = [
        f"{fam.name}.{method.name}.{spec.name}"
        for fam in families()
        for method in methods(fam.name)
        for spec in method.param_specs()
        if "int" in spec.type_text.split(" | ") and "<=" not in spec.constraint
    ]
    assert not missing, missing


# --------------------------------------------------------------------------- asrpt


def test_asrpt_time_unit_out_of_range_is_refused_and_a_coarse_one_claims_nothing(tmp_path, capsys):
    data = _instance("asrpt")
    data["time_unit_s"] = 1e12  # before: exact claimed 0.0, the evaluator gave 24.2
    _one_line_error(capsys, ["instance", "check", "asrpt", _write(tmp_path, data)], "time_unit_s")
    data["time_unit_s"] = 1e6  # every job shorter than one unit: rounded up and down
    path = _write(tmp_path, data, "coarse.json")
    code = main(["solve", "asrpt", str(path), "--method", "exact", "--json", "-q"])
    out, err = capsys.readouterr()
    assert code == 0, err
    result = json.loads(out)
    assert result["status"] == "feasible" and result["bound"] <= result["objective"]


def test_asrpt_units_are_never_whole_at_zero_for_a_positive_duration():
    from ddlsched.models.asrpt_exact import _units

    assert (_units(2e-12, True), _units(2e-12, False)) == (1, 0)
    assert (_units(0.0, True), _units(3.0 + 1e-12, False)) == (0, 3)


MURI_ROW = "{id},{gpus},0,1000,resnet50,64,100,1,0.1,0.05,0.03,0.02,1"


@pytest.mark.parametrize("gpus", [2**40, 10**30])  # 10^30: refused by the CSV gate
def test_a_trace_job_beyond_any_cluster_is_refused_before_planning(gpus, tmp_path, capsys):
    from ddlsched.datadir import data_dir

    if data_dir() is None:
        pytest.skip("shared data directory absent")
    rows = [MURI_ROW.format(id=k, gpus=1) for k in range(20)]
    rows[-1] = MURI_ROW.format(id=19, gpus=gpus)
    trace = tmp_path / "big.csv"
    trace.write_text(MURI_TRACE_HEADER + "\n" + "\n".join(rows) + "\n")
    argv = ["simulate", "asrpt", "--trace", trace, "--policy", "asrpt", "--jobs", "3"]
    _one_line_error(capsys, [*argv, "--time-limit", "5"], "GPU" if gpus < 2**53 else "num_gpu")


def test_a_pai_job_beyond_any_cluster_is_refused(tmp_path):
    from ddlsched.workloads.pai import read_pai

    jobs = [f"j{i},i{i},u1,Terminated,{100 + i},{400 + i}" for i in range(3)]
    tasks = [f"j{i},worker,1,Terminated,{105 + i},{350 + i},600,29.3,100,V100" for i in range(3)]
    tasks[1] = "j1,worker,1,Terminated,106,351,600,29.3,1e12,V100"  # 1e10 GPUs
    (tmp_path / "pai_job_table.csv").write_text("\n".join(jobs) + "\n")
    (tmp_path / "pai_task_table.csv").write_text("\n".join(tasks) + "\n")
    with pytest.raises(InvalidInstanceError, match=r"j1.*GPUs"):
        read_pai(tmp_path)


#: A configuration whose alpha_lb needs the placement ILP (BERT-large, 2 x 16 replicas).
BERT_32 = {
    "allreduce": "rar",
    "stages": [
        {"replicas": 16, "fwd_s": 0.0029673125, "bwd_s": 0.0039023125, "in_bytes": 0.0,
         "out_bytes": 262144.0, "param_bytes": 840855552.0},
        {"replicas": 16, "fwd_s": 0.0028080625, "bwd_s": 0.003935625, "in_bytes": 262144.0,
         "out_bytes": 0.0, "param_bytes": 983969040.0},
    ],
}  # fmt: skip


def test_asrpt_bounds_say_when_the_limit_weakened_them(monkeypatch):
    from ddlsched.models import asrpt as models
    from ddlsched.problems.asrpt import AsrptInstance
    from ddlsched.registry import RunOptions, run_method

    data = _instance("asrpt")
    data["cluster"].update({"servers": 8, "gpus_per_server": 8})
    data["configs"] = {"bert": BERT_32}
    for job in data["jobs"]:
        job["config"] = job["group"] = "bert"
    instance = AsrptInstance.from_dict(data)
    real = models.alpha_lb

    def cut_short(*args, **kwargs):
        kwargs["time_limit_s"] = 0.0  # as if the method's limit had run out
        return real(*args, **kwargs)

    monkeypatch.setattr(models, "alpha_lb", cut_short)
    for method in ("lb_sum", "lb_srpt"):
        result = run_method("asrpt", method, instance, RunOptions(30))
        assert result.time_limit_hit and "1 of 1 configurations" in result.info["stopped"]
        options = RunOptions(30, params={"alpha_lb": "closed_form"})
        closed, again = (run_method("asrpt", method, instance, options) for _ in range(2))
        assert closed.bound == again.bound == result.bound and not closed.time_limit_hit


def test_an_error_quoting_a_control_character_stays_one_line(tmp_path, capsys):
    data = {"family": "muri_sim", "schema_version": 1, "trace": "trace1", "knobs": {"\r": 0}}
    err = _one_line_error(capsys, ["instance", "check", "muri_sim", _write(tmp_path, data)])
    assert "\\r" in err  # the name is shown, escaped
    _one_line_error(capsys, ["solve", "rar", "x\ny.json", "--method", "ff"], "x\\ny.json")
