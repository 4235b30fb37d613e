"""``ddlsched reproduce``: plans, cuts of suites, the index page, errors and resuming.

The end-to-end tests run a smoke plan (rar ``small``, two seeds, seconds) written into a
temporary ``benchmarks/`` folder; the shipped plans are checked without running them.
"""

from __future__ import annotations

import json
import textwrap
import tomllib
from pathlib import Path

import pytest

from ddlsched.bench.reproduce_plan import (
    cut_suite_text,
    find_benchmarks,
    load_plan,
    plan_names,
    runs_fresh,
)
from ddlsched.bench.suite import load_suite, parse_suite
from ddlsched.cli import main
from ddlsched.errors import DdlschedError

SUITE = """
[suite]
name = "smoke"
description = "rar small: SJF-BCO and FF against the exact optimum"
reference = ["exact", "load_lb"]

[limits]
time_limit_s = 10

[[instances]]
family = "rar"
preset = "small"
seeds = { first = 0, count = 6 }
group = "small"

[[instances]]
family = "rar"
preset = "contention"
seeds = [0, 1, 2, 3]
group = "contention"

[[methods]]
name = "sjf_bco"

[[methods]]
name = "ff"

[[methods]]
name = "rand"
seeds = [0, 1, 2]
groups = ["contention"]

[[methods]]
name = "exact"

[[methods]]
name = "load_lb"
"""

CLAIMS = """
[paper]
name = "smoke"
title = "A smoke paper"

[defaults]
suite = "smoke"
group = "small"
seeds = { first = 0, count = 2 }
kind = "paired_difference"
metric = "objective"
method = "sjf_bco"
against = "ff"
expect = "below"
paper_value = "SJF-BCO better"

[[claims]]
id = "sjf-below-ff"
text = "SJF-BCO's makespan is at most FF's"

[[claims]]
id = "elsewhere"
text = "a claim on a suite the plan does not run"
suite = "not-run"
"""

PLAN = """
[plan]
paper = "smoke"
title = "A smoke paper"
budget = "seconds"

[[cuts]]
suite = "smoke"
groups = ["small"]
seeds = 2
drop_methods = ["load_lb"]
larger_budget = "the contention group and seeds 2-5."
"""


@pytest.fixture
def benchmarks(tmp_path: Path) -> Path:
    """A ``benchmarks/`` folder holding the smoke suite, claims and plan."""
    root = tmp_path / "benchmarks"
    for folder, text in (("suites", SUITE), ("claims", CLAIMS), ("reproduce", PLAN)):
        (root / folder).mkdir(parents=True)
        (root / folder / "smoke.toml").write_text(textwrap.dedent(text))
    return root


def test_cut_keeps_the_groups_seeds_and_methods_named(benchmarks):
    plan = load_plan("smoke", benchmarks)
    text = cut_suite_text(plan.cuts[0], benchmarks / "suites")
    data = tomllib.loads(text)
    assert data["suite"]["name"] == "smoke"  # the claims read the rows by the suite's name
    assert [i["group"] for i in data["instances"]] == ["small"]
    assert data["instances"][0]["seeds"] == {"first": 0, "count": 2}
    # rand runs only on the dropped group; load_lb is dropped: both gone, and from the references
    assert [m["name"] for m in data["methods"]] == ["sjf_bco", "ff", "exact"]
    assert data["suite"]["reference"] == ["exact"]
    suite = parse_suite(data)
    assert len(suite.instances) == 1 and len(suite.methods) == 3


def test_cut_applies_a_method_budget(benchmarks):
    plan_text = PLAN + textwrap.dedent(
        """
        [cuts.methods.rand]
        params = { }
        seeds = 2
        time_limit_s = 5
        """
    )
    (benchmarks / "reproduce" / "smoke.toml").write_text(
        plan_text.replace('groups = ["small"]\n', "")
    )
    cut = load_plan("smoke", benchmarks).cuts[0]
    data = tomllib.loads(cut_suite_text(cut, benchmarks / "suites"))
    rand = next(m for m in data["methods"] if m["name"] == "rand")
    assert rand["seeds"] == [0, 1] and rand["time_limit_s"] == 5.0
    assert data["instances"][1]["seeds"] == [0, 1]  # a list of seeds cut as well
    assert "rand: 2 method seed(s), 5 s" in cut.summary()


def test_cut_keeps_a_method_on_the_groups_its_budget_names(benchmarks):
    plan_text = PLAN.replace('groups = ["small"]\n', "") + textwrap.dedent(
        """
        [cuts.methods.ff]
        groups = ["contention"]
        """
    )
    path = benchmarks / "reproduce" / "smoke.toml"
    path.write_text(plan_text)
    cut = load_plan("smoke", benchmarks).cuts[0]
    data = tomllib.loads(cut_suite_text(cut, benchmarks / "suites"))
    ff = next(m for m in data["methods"] if m["name"] == "ff")
    assert ff["groups"] == ["contention"]  # ff runs everywhere in the suite, here on one group
    assert "ff: only on contention" in cut.summary()
    path.write_text(plan_text.replace('groups = ["contention"]', 'groups = ["nowhere"]'))
    with pytest.raises(DdlschedError, match=r"methods\.ff\.groups: no group 'nowhere' in the cut"):
        cut_suite_text(load_plan("smoke", benchmarks).cuts[0], benchmarks / "suites")


def test_drop_methods_names_labels_not_method_names(benchmarks):
    suite = benchmarks / "suites" / "smoke.toml"
    suite.write_text(
        suite.read_text() + '\n[[methods]]\nname = "load_lb"\nlabel = "load_lb_again"\n'
    )
    cut = load_plan("smoke", benchmarks).cuts[0]
    data = tomllib.loads(cut_suite_text(cut, benchmarks / "suites"))
    # dropping the label load_lb keeps the same method under another label
    assert [m.get("label", m["name"]) for m in data["methods"]] == [
        "sjf_bco",
        "ff",
        "exact",
        "load_lb_again",
    ]
    plan = benchmarks / "reproduce" / "smoke.toml"
    plan.write_text(plan.read_text().replace('["load_lb"]', '["load_lbb"]'))
    with pytest.raises(DdlschedError, match="drop_methods: no method labelled 'load_lbb'"):
        cut_suite_text(load_plan("smoke", benchmarks).cuts[0], benchmarks / "suites")


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda t: t.replace("seeds = 2", "seeds = 0"), "cuts[0].seeds: expected an integer"),
        (lambda t: t.replace('suite = "smoke"', 'suite = "nope"'), "cuts[0].suite: no suite"),
        (lambda t: t.replace("larger_budget", "bigger"), "cuts[0].bigger: unknown field"),
        (lambda t: t.replace('paper = "smoke"', 'paper = "other"'), "plan.paper"),
    ],
)
def test_a_bad_plan_is_one_line_naming_the_field(benchmarks, edit, message):
    path = benchmarks / "reproduce" / "smoke.toml"
    path.write_text(edit(path.read_text()))
    with pytest.raises(DdlschedError) as info:
        load_plan("smoke", benchmarks)
    assert str(path) in str(info.value) and message in str(info.value)
    assert "\n" not in str(info.value)


def test_reproduce_writes_the_index_page_and_resumes(benchmarks, tmp_path, capsys):
    out = tmp_path / "out"
    args = ["reproduce", "smoke", "--benchmarks", str(benchmarks), "--out", str(out)]
    assert main([*args, "--workers", "1", "-q"]) == 0
    page = out / "smoke"
    index = (page / "index.md").read_text()
    assert "**smoke: reproduced " in index and "missing 1 (2 claims)**" in index
    assert "| elsewhere: a claim on a suite the plan does not run |" in index
    assert "| smoke / rar / small |" in index  # the widest interval of the one table
    figures = [line for line in index.splitlines() if line.startswith("![")]
    assert figures and all((page / line.split("(")[1].rstrip(")")).is_file() for line in figures)
    assert "A larger budget would buy (smoke): the contention group" in index
    assert "<table>" in (page / "index.html").read_text()
    for part in ("verdict/verdict.md", "verdict/verdict.json", "intervals.md", "suites/smoke.toml"):
        assert (page / part).is_file()
    timing = json.loads((page / "timing.json").read_text())
    assert set(timing) == {"run smoke", "verdict", "intervals", "figures", "total"}
    # 2 seeds x (sjf_bco, ff, exact): 6 tasks run, none stored yet
    assert "| 6 | 6 | 0 |" in index
    capsys.readouterr()
    assert main([*args, "--workers", "1", "-q"]) == 0  # the second run finds every row
    assert "| 6 | 0 | 6 |" in (page / "index.md").read_text()
    assert "smoke: reproduced" in capsys.readouterr().out


def test_dry_run_lists_the_tasks_and_writes_nothing(benchmarks, tmp_path, capsys):
    out = tmp_path / "out"
    args = ["reproduce", "smoke", "--benchmarks", str(benchmarks), "--out", str(out)]
    assert main([*args, "--dry-run"]) == 0
    printed = capsys.readouterr().out
    assert "smoke: 6 task(s), 0 already stored by the current code" in printed
    assert "a larger budget would buy: the contention group" in printed
    assert not out.exists()


def test_dry_run_counts_rows_of_other_code_as_to_run(benchmarks, tmp_path, capsys, monkeypatch):
    import dataclasses

    import ddlsched.bench.fingerprint as fingerprint

    out = tmp_path / "out"
    args = ["reproduce", "smoke", "--benchmarks", str(benchmarks), "--out", str(out)]
    assert main([*args, "--workers", "1", "-q"]) == 0
    capsys.readouterr()
    assert main([*args, "--dry-run"]) == 0
    assert "6 task(s), 6 already stored by the current code" in capsys.readouterr().out
    real = fingerprint.method_fingerprint

    def edited(family, name):  # sjf_bco's code edited since its rows were made
        found = real(family, name)
        return dataclasses.replace(found, digest="0" * 16) if name == "sjf_bco" else found

    monkeypatch.setattr(fingerprint, "method_fingerprint", edited)
    assert main([*args, "--dry-run"]) == 0
    assert "6 task(s), 4 already stored by the current code" in capsys.readouterr().out


def test_unknown_paper_is_one_line(benchmarks, capsys):
    assert main(["reproduce", "nope", "--benchmarks", str(benchmarks)]) == 2
    err = capsys.readouterr().err
    assert err == "ddlsched: error: unknown paper 'nope' (choose from smoke, or all)\n"


def test_unwritable_out_is_one_line(benchmarks, tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    args = ["reproduce", "smoke", "--benchmarks", str(benchmarks), "--out", str(blocker / "x")]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert (
        err.startswith(f"ddlsched: error: {blocker / 'x'}: cannot write") and err.count("\n") == 1
    )


def test_missing_benchmarks_folder_is_one_line(tmp_path, capsys):
    assert main(["reproduce", "smoke", "--benchmarks", str(tmp_path)]) == 2
    assert "no suites/ folder" in capsys.readouterr().err


def test_missing_data_points_to_data_fetch(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("DDLSCHED_DATA", str(tmp_path / "no-data"))
    assert main(["reproduce", "muri", "--out", str(tmp_path / "out"), "-q"]) == 2
    err = capsys.readouterr().err
    assert "ddlsched data fetch muri" in err and err.count("\n") == 1


def test_every_shipped_plan_loads_and_cuts_into_valid_suites():
    benchmarks = find_benchmarks()
    names = plan_names(benchmarks)
    assert {"rar", "placement", "muri", "asrpt", "dmlrs"} <= set(names)
    for name in names:
        plan = load_plan(name, benchmarks)
        claims = tomllib.loads((benchmarks / "claims" / f"{plan.claims}.toml").read_text())
        for cut in plan.cuts:
            suite = parse_suite(tomllib.loads(cut_suite_text(cut, benchmarks / "suites")))
            suite.validate_against_registry()
            assert suite.name == cut.suite
            assert cut.larger_budget, f"{name}: {cut.suite} says what a larger budget buys"
        assert claims["paper"]["name"] == name


def test_the_suite_of_a_cut_loads_from_its_file(benchmarks, tmp_path):
    cut = load_plan("smoke", benchmarks).cuts[0]
    path = tmp_path / "cut.toml"
    path.write_text(cut_suite_text(cut, benchmarks / "suites", "a note"))
    assert path.read_text().splitlines()[1] == "# a note"
    assert load_suite(path, check_registry=False).name == "smoke"


def test_a_table_without_a_bound_says_so_on_the_index(benchmarks, tmp_path):
    plan = benchmarks / "reproduce" / "smoke.toml"
    plan.write_text(plan.read_text().replace('["load_lb"]', '["load_lb", "exact"]'))
    out = tmp_path / "out"
    args = ["reproduce", "smoke", "--benchmarks", str(benchmarks), "--out", str(out)]
    assert main([*args, "--workers", "1", "-q"]) == 0
    index = (out / "smoke" / "index.md").read_text()
    assert "| smoke / rar / small | no bound | **no** |" in index
    assert "inf" not in index.split("## Widest certified interval per table")[1].split("##")[0]


def test_a_fresh_seed_cut_moves_only_the_instance_seeds(benchmarks):
    cut = load_plan("smoke", benchmarks).cuts[0]
    suites = benchmarks / "suites"
    plain = tomllib.loads(cut_suite_text(cut, suites))
    fresh = tomllib.loads(cut_suite_text(cut, suites, fresh_from=10))
    assert [t["seeds"] for t in fresh["instances"]] == [[10, 11]]  # as many as the cut's 2
    assert fresh["methods"] == plain["methods"]  # method seeds and budgets untouched
    assert fresh["suite"] == plain["suite"]
    assert runs_fresh(cut, suites)
    # the cut runs seeds 0-1, its suite names 0-5 for the group: 2-3 are not fresh either
    with pytest.raises(DdlschedError, match=r"fresh seeds 2-3 overlap the seeds 0-5 .* from 6 on"):
        cut_suite_text(cut, suites, fresh_from=2)
    with pytest.raises(DdlschedError, match="beyond the largest seed"):
        cut_suite_text(cut, suites, fresh_from=2**31 - 1)


def test_reproduce_with_fresh_seeds_compares_the_widths(benchmarks, tmp_path, capsys):
    out = tmp_path / "out"
    args = ["reproduce", "smoke", "--benchmarks", str(benchmarks), "--out", str(out)]
    args += ["--fresh-seeds", "10", "--workers", "1", "-q"]
    assert main(args) == 0
    page = out / "smoke"
    assert (page / "fresh-10" / "smoke" / "manifest.json").is_file()
    fresh_suite = load_suite(page / "suites" / "smoke-fresh-10.toml")
    assert fresh_suite.instances[0].seeds == (10, 11)
    index = (page / "index.md").read_text()
    assert "[smoke on fresh seeds](suites/smoke-fresh-10.toml)" in index
    assert "## Fresh instance seeds" in index
    # every small instance is proven by the exact method: width 0 on both sets of seeds
    line = "| smoke / rar / small | 0, 1 -> 10, 11 (2 / 2 instances) | 0.00 % (small/s0) -> 0.00 % "
    assert line in index and "| +0.00, +0.00 | 1.00, 1.00 (all 6 splits) | yes |" in index
    intervals = (page / "intervals.md").read_text()
    assert "## Fresh instance seeds: the widths computed from the rows" in intervals
    assert "--fresh " in intervals.splitlines()[2]  # the command that makes the report
    timing = json.loads((page / "timing.json").read_text())
    assert "run smoke on fresh seeds" in timing
    capsys.readouterr()
    assert main(args) == 0  # resumable: the fresh rows are found too
    assert index.count("| 6 | 6 | 0 |") == 2
    assert (page / "index.md").read_text().count("| 6 | 0 | 6 |") == 2


def test_dry_run_with_fresh_seeds_lists_the_fresh_tasks(benchmarks, tmp_path, capsys):
    out = tmp_path / "out"
    args = ["reproduce", "smoke", "--benchmarks", str(benchmarks), "--out", str(out)]
    assert main([*args, "--dry-run", "--fresh-seeds", "100"]) == 0
    printed = capsys.readouterr().out
    assert "smoke on fresh seeds: 6 task(s), 0 already stored" in printed
    assert "the widths on both sets of seeds" in printed
    assert not out.exists()


def test_fresh_seeds_the_plan_runs_are_one_line_before_anything_runs(benchmarks, tmp_path, capsys):
    out = tmp_path / "out"
    args = ["reproduce", "smoke", "--benchmarks", str(benchmarks), "--out", str(out)]
    assert main([*args, "--fresh-seeds", "1", "--workers", "1", "-q"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ddlsched: error: fresh seeds 1-2 overlap") and err.count("\n") == 1
    assert main([*args, "--fresh-seeds", "1", "--dry-run"]) == 2  # the dry run says so too
    assert not (out / "smoke" / "results").exists()


def test_a_cut_may_opt_out_of_fresh_seeds(benchmarks, tmp_path, capsys):
    plan = benchmarks / "reproduce" / "smoke.toml"
    plan.write_text(plan.read_text() + "fresh = false\n")
    assert not load_plan("smoke", benchmarks).cuts[0].fresh
    out = tmp_path / "out"
    args = ["reproduce", "smoke", "--benchmarks", str(benchmarks), "--out", str(out)]
    assert main([*args, "--dry-run", "--fresh-seeds", "100"]) == 0
    printed = capsys.readouterr().out
    assert "smoke: no fresh-seed cut (the plan says fresh = false)" in printed
    assert "on fresh seeds" not in printed
    plan.write_text(plan.read_text().replace("fresh = false", 'fresh = "no"'))
    with pytest.raises(DdlschedError, match=r"cuts\[0\]\.fresh: expected true or false"):
        load_plan("smoke", benchmarks)


def test_every_paper_s_fresh_seeds_are_checked_before_any_runs(benchmarks, tmp_path, capsys):
    """``all``: a second plan whose suite names seeds 0-199 refuses 100 before smoke runs."""
    suite = (benchmarks / "suites" / "smoke.toml").read_text()
    wide = suite.replace('name = "smoke"', 'name = "wide"').replace(
        "{ first = 0, count = 6 }", "{ first = 0, count = 200 }"
    )
    (benchmarks / "suites" / "wide.toml").write_text(wide)
    plan = (benchmarks / "reproduce" / "smoke.toml").read_text()
    (benchmarks / "reproduce" / "wide.toml").write_text(
        plan.replace('paper = "smoke"', 'paper = "wide"\nclaims = "smoke"').replace(
            'suite = "smoke"', 'suite = "wide"'
        )
    )
    out = tmp_path / "out"
    args = ["reproduce", "all", "--benchmarks", str(benchmarks), "--out", str(out)]
    assert main([*args, "--fresh-seeds", "100", "--workers", "1", "-q"]) == 2
    err = capsys.readouterr().err
    assert (
        "fresh seeds 100-101 overlap the seeds 0-199 that wide.toml names for group small's preset"
        in err
    )
    assert not out.exists()
