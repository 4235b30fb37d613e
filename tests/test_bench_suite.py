"""Suite files: the schema, one-line errors naming the field, task expansion."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from ddlsched.bench.suite import load_suite
from ddlsched.bench.suite_values import SuiteError
from ddlsched.bench.tasks import expand
from ddlsched.cli import main

SUITES = Path(__file__).resolve().parents[1] / "benchmarks" / "suites"


@pytest.fixture(autouse=True)
def _results_in_tmp(tmp_path, monkeypatch):
    """``bench validate`` caches instances in the suite's results directory, relative to
    the working directory (``results/<name>/instances``): keep it out of the repository,
    and keep a cache left by an earlier run from changing what a test sees."""
    monkeypatch.chdir(tmp_path)


GOOD = """
[suite]
name = "t"
reference = "exact"
[limits]
time_limit_s = 5
[[instances]]
family = "debug"
preset = "default"
seeds = [0, 1, 2]
[[methods]]
name = "exact"
[[methods]]
name = "heur"
seeds = [0, 1]
[[methods]]
name = "sleep"
sweep = { seconds = [0.01, 0.02] }
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "suite.toml"
    path.write_text(textwrap.dedent(text))
    return path


def test_good_suite_expands_to_the_product(tmp_path):
    suite = load_suite(write(tmp_path, GOOD))
    tasks = expand(suite)
    # 3 instances x (exact + heur x 2 seeds + sleep x 2 variants)
    assert len(tasks) == 3 * 5
    assert len({t.key for t in tasks}) == len(tasks)
    labels = {t.label for t in tasks}
    assert labels == {"exact", "heur", "sleep[seconds=0.01]", "sleep[seconds=0.02]"}
    assert {t.kill_after_s for t in tasks} == {1.5 * 5 + 10}
    # keys are content hashes: stable across loads
    assert [t.key for t in expand(load_suite(write(tmp_path, GOOD)))] == [t.key for t in tasks]


def test_key_depends_on_params_not_on_version_or_code(tmp_path):
    from dataclasses import replace

    task = expand(load_suite(write(tmp_path, GOOD)))[0]
    assert task.code_fingerprint  # which code ran is the row's fingerprint, not its key
    assert replace(task, version="9.9.9").key == task.key
    assert replace(task, code_fingerprint="edited").key == task.key
    edited = replace(task, instance_code="edited")  # a new generator: a new instance
    assert edited.key == task.key and edited.instance_key != task.instance_key
    assert replace(task, params_json='{"x": 1}').key != task.key
    assert replace(task, seed=7).key != task.key
    assert replace(task, kill_after_s=99.0).key == task.key  # limits of the platform only


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        (("seeds = [0, 1, 2]", 'seeds = "x"'), "instances[0].seeds"),
        (("seeds = [0, 1, 2]", "seeds = [0, 0]"), "instances[0].seeds"),
        (("seeds = [0, 1, 2]", "seeds = { first = 0, count = 0 }"), "instances[0].seeds.count"),
        (('preset = "default"', 'preset = "nope"'), "instances[0].preset"),
        (('family = "debug"', 'family = "nope"'), "instances[0].family"),
        (('name = "heur"', 'name = "nope"'), "methods[1].name"),
        (("time_limit_s = 5", "time_limit_s = -1"), "limits.time_limit_s"),
        (("time_limit_s = 5", "timelimit = 5"), "limits.timelimit"),
        (('reference = "exact"', 'reference = "heur"'), "suite.reference"),
        (('reference = "exact"', 'reference = "missing"'), "suite.reference"),
        (('name = "t"', 'name = "has space"'), "suite.name"),
        (("seeds = [0, 1]", "seeds = [-1]"), "methods[1].seeds"),
        (
            ("sweep = { seconds = [0.01, 0.02] }", "sweep = { seconds = 3 }"),
            "methods[2].sweep.seconds",
        ),
        (("sweep = { seconds = [0.01, 0.02] }", "params = { secs = 1 }"), "methods[2].params.secs"),
        (
            ("sweep = { seconds = [0.01, 0.02] }", "sweep = { seconds = [0.01, -2] }"),
            "methods[2].params (sleep[seconds=-2])",
        ),
        (
            ("sweep = { seconds = [0.01, 0.02] }", 'params = { seconds = "long" }'),
            "methods[2].params (sleep)",
        ),
        (('[[methods]]\nname = "exact"', '[[methods]]\nlabel = "x"'), "methods[0].name"),
    ],
)
def test_bad_suites_give_one_line_errors_naming_the_field(tmp_path, edit, field):
    old, new = edit
    assert old in GOOD
    path = write(tmp_path, GOOD.replace(old, new, 1))
    with pytest.raises(SuiteError) as info:
        load_suite(path)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"{path}: {field}:"), message


def test_duplicate_labels_and_missing_sections(tmp_path):
    dup = GOOD + '\n[[methods]]\nname = "heur"\n'
    with pytest.raises(SuiteError, match=r"methods\[3\]\.label: label 'heur' already used"):
        load_suite(write(tmp_path, dup))
    with pytest.raises(SuiteError, match="instances: missing"):
        load_suite(write(tmp_path, '[suite]\nname = "x"\n[[methods]]\nname = "noop"\n'))
    with pytest.raises(SuiteError, match="not valid TOML"):
        load_suite(write(tmp_path, "[suite\n"))


def test_files_instances(tmp_path):
    from ddlsched.families.debug import DebugInstance

    (tmp_path / "inst").mkdir()
    for i in range(3):
        DebugInstance(size=i + 1, value=10.0 + i).save(tmp_path / "inst" / f"d{i}.json")
    text = """
    [suite]
    name = "files"
    [[instances]]
    family = "debug"
    files = ["inst/*.json"]
    group = "hand"
    [[methods]]
    name = "noop"
    """
    suite = load_suite(write(tmp_path, text))
    tasks = expand(suite)
    assert [t.instance.instance_id for t in tasks] == [
        "inst/d0.json",
        "inst/d1.json",
        "inst/d2.json",
    ]
    with pytest.raises(SuiteError, match=r"instances\[0\]\.files: no file matches"):
        load_suite(write(tmp_path, text.replace("inst/*.json", "none/*.json")))


def test_cli_reports_bad_suite_on_one_line(tmp_path, capsys):
    path = write(tmp_path, GOOD.replace("seeds = [0, 1, 2]", "seeds = 3"))
    assert main(["bench", "validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "instances[0].seeds" in err


@pytest.mark.parametrize("path", sorted(SUITES.glob("*.toml")), ids=lambda p: p.name)
def test_shipped_suites_are_valid(path):
    from ddlsched.registry import families

    needed = {
        line.split('"')[1]
        for line in path.read_text().splitlines()
        if line.strip().startswith("family =")
    }
    missing = needed - {f.name for f in families()}
    if missing:
        pytest.skip(f"family not registered yet: {', '.join(sorted(missing))}")
    # the schema, names, sizes and parameters; building every instance (30 s for the
    # asrpt suites) is tests/test_bench_input_gate.py's, within a budget
    suite = load_suite(path, instance_budget_s=0)
    assert expand(suite)
