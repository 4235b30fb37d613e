"""Family dmlrs from the command line and as a whole: the solve contract, bad input (one
line, exit 2), the chain ``online <= exact <= colgen <= ub_trivial`` and ``exact <=
ub_prices`` on random tiny instances, reproducibility, and the rounding-study family."""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ddlsched.cli import main
from ddlsched.datadir import data_dir
from ddlsched.registry import RunOptions, get_family, run_method
from ddlsched.workloads.dmlrs import generate

ONLINE = ("pd_ors", "oasis", "fifo", "drf", "dorm")
TOL = 1e-6


def _one_line_error(capsys, code) -> str:
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("ddlsched: error:"), err
    return err


@pytest.fixture
def tiny_file(tmp_path):
    path = tmp_path / "tiny.json"
    generate("tiny", 3).save(path)
    return path


def test_solve_json_contract(tiny_file, capsys):
    assert main(["solve", "dmlrs", str(tiny_file), "--method", "pd_ors", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "feasible"
    for key in ("U_r", "L", "ln_U_over_L", "lps_solved", "draws", "infeasible_draw_share"):
        assert key in out["info"], key
    for key in ("total_utility", "accepted", "median_training_time_s", "utilisation_gpu"):
        assert key in out["info"], key
    assert set(out["schedule"]) >= {"accepted", "unfinished", "alloc"}
    assert out["objective"] == pytest.approx(sum(out["schedule"]["job_utility"].values()))


def test_same_seed_same_output(tiny_file, capsys):
    runs = []
    for _ in range(2):
        assert main(["solve", "dmlrs", str(tiny_file), "--method", "pd_ors", "--seed", "4",
                     "--json"]) == 0  # fmt: skip
        out = json.loads(capsys.readouterr().out)
        runs.append((out["objective"], out["schedule"]))
    assert runs[0] == runs[1]


@pytest.mark.parametrize(
    ("param", "message"),
    [
        ("delta=0", "parameter delta"),
        ("delta=1.5", "parameter delta"),
        ("S=0", "parameter S"),
        ("quanta=0", "parameter quanta"),
        ("mu=0", "parameter mu"),
        ("mu=-1", "parameter mu"),
        ("scale=cubic", "parameter scale"),
        ("bounds=guess", "parameter bounds"),
        ("slot_solver=magic", "parameter slot_solver"),
        ("bounds=given", "given"),
        ("colour=3", "no parameter"),
    ],
)
def test_bad_parameters_one_line(tiny_file, capsys, param, message):
    code = main(["solve", "dmlrs", str(tiny_file), "--method", "pd_ors", "--param", param])
    assert message in _one_line_error(capsys, code)


def test_given_bounds_with_u_below_l_refused(tiny_file, capsys):
    code = main(["solve", "dmlrs", str(tiny_file), "--method", "pd_ors", "--param",
                 "bounds=given", "--param", "U=1", "--param", "L=2"])  # fmt: skip
    assert "U" in _one_line_error(capsys, code)


def test_pricing_choice_checked(tiny_file, capsys):
    code = main(["solve", "dmlrs", str(tiny_file), "--method", "colgen", "--param", "pricing=x"])
    assert "pricing" in _one_line_error(capsys, code)


def test_unknown_method_one_line(tiny_file, capsys):
    code = main(["solve", "dmlrs", str(tiny_file), "--method", "magic"])
    assert "unknown method" in _one_line_error(capsys, code)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d.pop("slots"), "missing field"),
        (lambda d: d.update(colour=1), "unknown field"),
        (lambda d: d.update(b_int=1.0), "b_int"),
        (lambda d: d["jobs"][0].update(arrival_slot=99), "arrival_slot"),
        (lambda d: d["jobs"][0]["utility"].update(theta2=0), "theta2"),
        (lambda d: d["jobs"][0].update(worker=[0, 0, 0, 0], ps=[0, 0, 0, 0]), "no resource"),
        (lambda d: d["jobs"][0].update(samples=-5), "samples"),
        (lambda d: d.update(slot_s=0), "slot_s"),
    ],
)
def test_bad_instance_files_one_line(tmp_path, capsys, edit, message):
    data = copy.deepcopy(generate("tiny", 3).to_dict())
    edit(data)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    code = main(["solve", "dmlrs", str(path), "--method", "fifo"])
    assert message in _one_line_error(capsys, code)


def test_exact_above_its_cap_refused_fast(tmp_path, capsys):
    path = tmp_path / "big.json"
    generate("paper", 0, jobs=50, machines=100, slots=20).save(path)
    code = main(["solve", "dmlrs", str(path), "--method", "exact"])
    err = _one_line_error(capsys, code)
    assert "50 jobs x 100 machines x 20 slots" in err


def test_trace_preset_names_the_data_directory(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("DDLSCHED_DATA", str(tmp_path / "nowhere"))
    code = main(["instance", "generate", "dmlrs", "--preset", "trace", "-o",
                 str(tmp_path / "t.json")])  # fmt: skip
    err = _one_line_error(capsys, code)
    assert "DDLSCHED_DATA" in err


@pytest.mark.skipif(data_dir() is None, reason="shared data directory absent")
def test_trace_preset_maps_arrivals_onto_slots():
    inst = generate("trace", 1, jobs=30, machines=5, slots=12, trace="itp")
    arrivals = [j.arrival_slot for j in inst.jobs]
    assert min(arrivals) == 1 and max(arrivals) <= 12
    assert arrivals == sorted(arrivals)
    assert generate("trace", 1, jobs=30, machines=5, slots=12, trace="itp") == inst


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(min_value=0, max_value=10_000))
def test_chain_on_random_tiny_instances(seed):
    """online <= exact <= colgen <= ub_trivial, and exact <= ub_prices (spec)."""
    inst = generate("tiny", seed)
    opts = RunOptions(time_limit_s=60)
    exact = run_method("dmlrs", "exact", inst, opts)
    assert exact.status == "optimal", exact.info
    opt = exact.objective
    for method in ONLINE:
        r = run_method("dmlrs", method, inst, opts)
        assert r.status == "feasible", (method, r.info)
        assert r.objective <= opt * (1 + TOL) + TOL, method
    colgen = run_method("dmlrs", "colgen", inst, opts)
    trivial = run_method("dmlrs", "ub_trivial", inst, opts)
    prices = run_method("dmlrs", "ub_prices", inst, opts)
    assert opt <= colgen.bound * (1 + TOL) + TOL
    assert colgen.bound <= trivial.bound * (1 + TOL) + TOL
    assert opt <= prices.bound * (1 + TOL) + TOL
    if colgen.objective is not None:
        assert colgen.objective <= opt * (1 + TOL) + TOL


def test_slot_family_cli_and_bracket(tmp_path, capsys, backend):
    fam = get_family("dmlrs_slot")
    inst = fam.generate("synthetic", 1, jobs=20, machines=8, slots=5, load=0.0,
                        demand_share=0.1)  # fmt: skip
    path = tmp_path / "slot.json"
    inst.save(path)
    results = {}
    for method in ("lp", "ilp", "rounding"):
        argv = ["solve", "dmlrs_slot", str(path), "--method", method, "--backend", backend]
        assert main([*argv, "--json"]) == 0
        results[method] = json.loads(capsys.readouterr().out)
    lp, ilp, rounding = results["lp"]["bound"], results["ilp"]["objective"], results["rounding"]
    assert lp <= ilp * (1 + TOL)
    assert rounding["status"] == "feasible" and ilp <= rounding["objective"] * (1 + TOL)
    for key in ("G_delta", "draws", "covering_success_share", "capacity_break_share",
                "worker_cap_break_share", "ps_break_share"):  # fmt: skip
        assert key in rounding["info"], key
    code = main(["solve", "dmlrs_slot", str(path), "--method", "internal"])
    assert "demand_internal" in _one_line_error(capsys, code)


def test_dumped_slot_problems_are_instances(tmp_path):
    inst = generate("paper", 0, jobs=4, machines=3, slots=4)
    out = tmp_path / "dump"
    opts = RunOptions(params={"dump_slot_problems": str(out)})
    assert run_method("dmlrs", "pd_ors", inst, opts).status == "feasible"
    files = sorted(out.glob("*.json"))
    assert files
    fam = get_family("dmlrs_slot")
    for path in files[:5]:
        assert run_method("dmlrs_slot", "lp", fam.load(path)).status in ("bound_only", "infeasible")


def test_worst_case_search_on_tiny_with_exact(tmp_path):
    """The worst-case search of bench/worstcase.py runs on dmlrs (a maximisation: ratio
    OPT / utility, infinite when a policy earns nothing) and its report is valid JSON."""
    from ddlsched.bench.worstcase import save_report, search

    report = search("dmlrs", budgets=[0.2], candidates=6, seed=1)
    assert report.evaluated >= 1
    for w in report.witnesses:
        assert w.ratio >= 1 - 1e-9
        assert w.objective <= w.optimum * (1 + 1e-9)
    save_report(report, tmp_path)
    data = json.loads((tmp_path / "worstcase.json").read_text())  # no Infinity/NaN tokens
    assert {w["policy"] for w in data["witnesses"]} <= set(ONLINE)
