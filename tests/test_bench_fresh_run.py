"""``bench run SUITE --fresh-seeds FIRST`` and ``bench seeds REFERENCE FRESH``: a user's own
suite on instance seeds it never ran, and the widths on both sets (ddlsched.bench.cli_seeds)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from bench_scripts import DEBUG_SUITE

from ddlsched.bench.store import read_rows
from ddlsched.cli import main


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Path:
    """The suite on its seeds 0-2 and on fresh seeds from 10 (the default directories)."""
    tmp = tmp_path_factory.mktemp("fresh_run")
    (tmp / "mine.toml").write_text(
        DEBUG_SUITE.format(name="mine", seeds="0, 1, 2", seed=0)
        + '\n[[instances]]\nfamily = "debug"\nfiles = ["inst.json"]\ngroup = "files"\n'
    )
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(tmp)
        assert main(["instance", "generate", "debug", "--preset", "default", "--seed", "5",
                     "-o", "inst.json"]) == 0  # fmt: skip
        assert main(["bench", "run", "mine.toml", "--workers", "1", "-q"]) == 0
        args = ["bench", "run", "mine.toml", "--fresh-seeds", "10", "--workers", "1", "-q"]
        assert main(args) == 0
        assert main(args) == 0  # resumes: nothing runs again
    return tmp


def test_the_fresh_run_has_the_suite_on_other_seeds_only(runs):
    fresh = runs / "results" / "mine-fresh-10"
    suite = tomllib.loads((fresh / "suite-fresh-10.toml").read_text())
    (instances,) = suite["instances"]  # the set of files has no seeds: left out
    assert instances["seeds"] == [10, 11, 12] and instances["group"] == "g"
    assert [m["name"] for m in suite["methods"]] == ["heur", "bound"]
    rows = read_rows(fresh).to_pylist()
    assert sorted({r["instance_seed"] for r in rows}) == [10, 11, 12]
    assert len(rows) == 6  # the second run added none
    own = read_rows(runs / "results" / "mine").to_pylist()
    assert sorted({r["instance_seed"] for r in own if r["group"] == "g"}) == [0, 1, 2]


def test_bench_seeds_compares_the_widths(runs, capsys):
    capsys.readouterr()
    out = runs / "seeds.md"
    base = [
        "bench",
        "seeds",
        str(runs / "results" / "mine"),
        str(runs / "results" / "mine-fresh-10"),
    ]
    assert main(base) == 0
    text = capsys.readouterr().out
    # the debug bound is the heuristic's objective / 1.05 on every instance: 5.26 % each
    line = next(t for t in text.splitlines() if t.startswith("| mine / debug / g |"))
    assert line.startswith("| mine / debug / g | 0-2 -> 10-12 (3 / 3 instances) | 5.26 % (")
    assert line.endswith("| 5.26 % -> 5.26 % | +0.00, +0.00 | 1.00, 1.00 (all 20 splits) | yes |")
    assert "- mine / debug / files: no rows on the fresh seeds." in text
    assert main([*base, "--tolerance", "0.5", "--output", str(out)]) == 0
    assert "within 0.5 point" in out.read_text()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["bench", "run", "mine.toml", "--fresh-seeds", "2"],
         "fresh seeds 2-4 overlap the seeds 0-2 that mine.toml names for group g's preset: choose seeds from 3 on"),
        (["bench", "run", "mine.toml", "--fresh-seeds", "2147483647"],
         "beyond the largest seed 2147483647"),
        (["bench", "run", "nosuite.toml", "--fresh-seeds", "10"], "nosuite.toml"),
        (["bench", "seeds", "results/mine", "results/mine"],
         "the fresh rows share 4 instance(s) with the reference"),
        (["bench", "seeds", "results/mine", "nowhere"], "nowhere"),
        (["bench", "seeds", "results/mine", "results/mine-fresh-10", "--tolerance", "-1"],
         "--tolerance must be 0..100 points, got -1"),
    ],
)  # fmt: skip
def test_bad_input_is_one_line(runs, monkeypatch, capsys, args, message):
    monkeypatch.chdir(runs)
    capsys.readouterr()
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("ddlsched: error:") and err.count("\n") == 1 and message in err


def test_the_written_suite_resumes_into_its_own_directory(runs, monkeypatch):
    monkeypatch.chdir(runs)
    fresh = runs / "results" / "mine-fresh-10"
    suite = tomllib.loads((fresh / "suite-fresh-10.toml").read_text())
    assert Path(suite["suite"]["output"]) == fresh.resolve()
    # without --out: into the fresh directory (its output), nothing run again
    assert main(["bench", "run", str(fresh / "suite-fresh-10.toml"), "-q"]) == 0
    assert len(read_rows(fresh).to_pylist()) == 6
    assert (
        len(read_rows(runs / "results" / "mine").to_pylist()) == 8
    )  # 3 seeded + 1 file, 2 methods


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--out", "results/mine"], "is the suite's own results directory"),
        (["--out", "results/mine-fresh-10", "--fresh-seeds", "20"],
         "holds another choice of fresh seeds (suite-fresh-10.toml)"),
    ],
)  # fmt: skip
def test_fresh_rows_never_mix_with_other_rows(runs, monkeypatch, capsys, args, message):
    monkeypatch.chdir(runs)
    capsys.readouterr()
    base = ["bench", "run", "mine.toml", "-q"]
    assert (
        main([*base, *args] if "--fresh-seeds" in args else [*base, "--fresh-seeds", "10", *args])
        == 2
    )
    assert message in capsys.readouterr().err


def _suite(tmp: Path, name: str, text: str) -> Path:
    path = tmp / f"{name}.toml"
    path.write_text(text)
    return path


def test_a_seed_of_another_group_of_the_same_preset_is_refused(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    text = DEBUG_SUITE.format(name="two", seeds="0, 1, 2, 3", seed=0)
    text += '\n[[instances]]\nfamily = "debug"\npreset = "default"\nseeds = [7]\ngroup = "b"\n'
    _suite(tmp_path, "two", text)
    assert main(["bench", "run", "two.toml", "--fresh-seeds", "5", "-q"]) == 2
    assert (
        "overlap the seeds 0-7 that two.toml names for group g's preset: choose seeds from 8"
        in (capsys.readouterr().err)
    )
    assert not (tmp_path / "results" / "two-fresh-5").exists()


def test_what_toml_and_the_input_gate_accept_is_written_back(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    text = DEBUG_SUITE.format(name="odd", seeds="0", seed=0).replace(
        'name = "odd"', 'name = "odd"\ndescription = "ours \\u00e9 \U0001f600 \\u007f"'
    )
    (tmp_path / "odd.toml").write_bytes(b"\xef\xbb\xbf" + text.encode())  # a byte-order mark
    assert main(["bench", "run", "odd.toml", "--fresh-seeds", "3", "-q"]) == 0
    written = tomllib.loads((tmp_path / "results/odd-fresh-3/suite-fresh-3.toml").read_text())
    assert written["suite"]["description"] == "ours \u00e9 \U0001f600 \x7f"


def test_methods_of_a_family_left_without_instances_are_left_out(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    main(["instance", "generate", "rar", "--preset", "small", "--seed", "1", "-o", "r.json"])
    text = DEBUG_SUITE.format(name="mixed", seeds="0", seed=0).replace(
        "[[methods]]\n", '[[methods]]\nfamily = "debug"\n'
    )
    text += '\n[[instances]]\nfamily = "rar"\nfiles = ["r.json"]\ngroup = "r"\n'
    text += '\n[[methods]]\nfamily = "rar"\nname = "ff"\n'
    _suite(tmp_path, "mixed", text)
    assert main(["bench", "run", "mixed.toml", "--fresh-seeds", "3", "-q"]) == 0
    written = tomllib.loads((tmp_path / "results/mixed-fresh-3/suite-fresh-3.toml").read_text())
    assert [m["name"] for m in written["methods"]] == ["heur", "bound"]


def test_a_suite_the_check_refuses_leaves_no_directory(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    text = DEBUG_SUITE.format(name="bad", seeds="0", seed=0).replace("slack = 0.05", "slack = 5")
    _suite(tmp_path, "bad", text)
    assert main(["bench", "run", "bad.toml", "--fresh-seeds", "3", "-q"]) == 2
    assert "slack" in capsys.readouterr().err
    assert not (tmp_path / "results" / "bad-fresh-3").exists()


def test_bench_seeds_refuses_other_suites_and_other_parameters(runs, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    other = DEBUG_SUITE.format(name="other", seeds="20", seed=0)
    changed = DEBUG_SUITE.format(name="mine", seeds="30", seed=0).replace("0.05", "0.2")
    for name, text in (("other", other), ("changed", changed)):
        _suite(tmp_path, name, text)
        assert main(["bench", "run", f"{name}.toml", "--out", name, "-q", "--workers", "1"]) == 0
    mine = str(runs / "results" / "mine")
    capsys.readouterr()
    assert main(["bench", "seeds", mine, "other"]) == 2
    assert "the fresh rows are of suite other, the reference's of mine" in capsys.readouterr().err
    assert main(["bench", "seeds", mine, "changed"]) == 2
    err = capsys.readouterr().err
    assert "mine / debug / g: bound is bound" in err and "not the same method" in err
