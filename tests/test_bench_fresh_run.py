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
         "fresh seeds 2-4 overlap the seeds 0-2 of group g in mine.toml: choose seeds from 3 on"),
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
