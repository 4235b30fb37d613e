"""Interval widths, their limiting side and suppliers, and benchmarks/intervals.py."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest
from bench_scripts import DEBUG_SUITE, load_script, run_suites

from ddlsched.bench.ratios import interval_width, worst_width
from ddlsched.bench.store import read_rows
from ddlsched.bench.tables import instance_intervals, summarize, to_markdown


def _row(instance, label, kind, objective=None, bound=None, status="feasible", sense="min"):
    return {
        "family": "fam",
        "group": "g",
        "instance_key": instance,
        "instance_id": instance,
        "instance_size": 1,
        "label": label,
        "method": label,
        "kind": kind,
        "sense": sense,
        "status": status,
        "objective": objective,
        "bound": bound,
        "seed": 0,
        "runtime_s": 0.1,
    }


def _by_instance(rows: list[dict], label: str) -> pd.DataFrame:
    lines = instance_intervals(pd.DataFrame(rows))
    return lines[lines["label"] == label].set_index("instance_id")


def test_width_of_intervals():
    assert interval_width(1.25, 1.25) == 0
    assert interval_width(1.2, 1.32) == pytest.approx(0.1)
    assert math.isinf(interval_width(1.2, math.inf))
    assert math.isnan(interval_width(math.nan, math.nan))
    assert math.isnan(interval_width(math.inf, math.inf))  # an infinite ratio has no width
    assert worst_width([0.1, math.nan, 0.3]) == 0.3
    assert math.isnan(worst_width([math.nan]))


MIN_ROWS = [
    # I1: best schedule 10 (b), bound 8 (lb, kind bound): a's ratio [12/10, 12/8]
    _row("I1", "a", "heuristic", 12),
    _row("I1", "b", "heuristic", 10),
    _row("I1", "lb", "bound", bound=8, status="bound_only"),
    # I2: proven by exact (10): a point, width 0, nothing limits
    _row("I2", "a", "heuristic", 11),
    _row("I2", "b", "heuristic", 13),
    _row("I2", "exact", "exact", 10, bound=10, status="optimal"),
    # I3: a time-limited exact method supplies both ends (its incumbent 9, its bound 6)
    _row("I3", "a", "heuristic", 9.5),
    _row("I3", "b", "heuristic", 12),
    _row("I3", "exact", "exact", 9, bound=6),
    # I4: no bound at all: the interval has no finite upper end
    _row("I4", "a", "heuristic", 7),
    _row("I4", "b", "heuristic", 5),
]


def test_minimisation_widths_sides_and_suppliers():
    a = _by_instance(MIN_ROWS, "a")
    assert a.loc["I1", ["ratio_lo", "ratio_hi"]].tolist() == pytest.approx([1.2, 1.5])
    assert a.loc["I1", "width"] == pytest.approx(10 / 8 - 1)
    assert a.loc["I1", ["ref_primal_by", "ref_dual_by", "limit"]].tolist() == ["b", "lb", "bound"]
    assert a.loc["I2", "width"] == 0
    assert a.loc["I2", ["ref_primal_by", "ref_dual_by", "limit"]].tolist() == [
        "exact",
        "exact",
        "none",
    ]
    assert a.loc["I3", "width"] == pytest.approx(9 / 6 - 1)
    assert a.loc["I3", ["ref_primal_by", "ref_dual_by", "limit"]].tolist() == [
        "exact",
        "exact",
        "both",
    ]
    assert math.isinf(a.loc["I4", "width"])
    assert a.loc["I4", "limit"] == "bound" and a.loc["I4", "ref_primal_by"] == "b"
    assert pd.isna(a.loc["I4", "ref_dual_by"])
    # The width is the bracket's, whatever the heuristic: b's intervals have the same widths.
    b = _by_instance(MIN_ROWS, "b")
    assert b["width"].tolist() == pytest.approx(a["width"].tolist())


def test_maximisation_widths_and_exact_bound():
    rows = [
        # J1: best schedule 6 (a), bound 9 (ub): a [1, 1.5], b [6/5, 9/5]
        _row("J1", "a", "heuristic", 6, sense="max"),
        _row("J1", "b", "heuristic", 5, sense="max"),
        _row("J1", "ub", "bound", bound=9, status="bound_only", sense="max"),
        # J2: the tightest bound is an exact method's (10); a heuristic beat its incumbent
        _row("J2", "a", "heuristic", 8, sense="max"),
        _row("J2", "exact", "exact", 7, bound=10, sense="max"),
        _row("J2", "ub", "bound", bound=12, status="bound_only", sense="max"),
    ]
    b = _by_instance(rows, "b")
    assert b.loc["J1", ["ratio_lo", "ratio_hi"]].tolist() == pytest.approx([1.2, 1.8])
    assert b.loc["J1", "width"] == pytest.approx(0.5)
    a = _by_instance(rows, "a")
    assert a.loc["J1", ["ref_primal_by", "ref_dual_by", "limit"]].tolist() == ["a", "ub", "bound"]
    assert a.loc["J2", "width"] == pytest.approx(10 / 8 - 1)
    assert a.loc["J2", ["ref_primal_by", "ref_dual_by", "limit"]].tolist() == [
        "a",
        "exact",
        "both",
    ]


def test_summary_width_is_the_widest_instance():
    finite = [r for r in MIN_ROWS if r["instance_key"] != "I4"]
    summary = summarize(pd.DataFrame(finite)).set_index("method")
    assert summary.loc["a", "width"] == pytest.approx(0.5)  # I3: 9 / 6 - 1
    assert math.isnan(summary.loc["lb", "width"])  # no schedule, no ratio
    text = to_markdown(summary.reset_index())
    header = [c.strip() for c in text.splitlines()[0].strip("|").split("|")]
    line = next(x for x in text.splitlines() if x.startswith("| fam | g | a |"))
    assert [c.strip() for c in line.strip("|").split("|")][header.index("width")] == "50.0%"
    everything = summarize(pd.DataFrame(MIN_ROWS)).set_index("method")
    assert math.isinf(everything.loc["a", "width"])  # I4 has no bound


@pytest.fixture(scope="module")
def two_results(tmp_path_factory) -> list[Path]:
    """Two results directories: heur at scale 1.1 (width 1.1 / 0.95 - 1 = 15.8 %) and at
    scale 1.0 (width 1 / 0.95 - 1 = 5.3 %), each against a bound 5 % below the optimum."""
    tmp = tmp_path_factory.mktemp("intervals")
    seeds = {"wide": 1, "narrow": 0}
    return run_suites(
        tmp, {n: DEBUG_SUITE.format(name=n, seeds="0, 1", seed=s) for n, s in seeds.items()}
    )


def _script():
    return load_script("intervals")


def _stored_width(directory: Path) -> float:
    """By hand from the stored rows: the largest best-schedule / best-bound - 1."""
    rows = read_rows(directory).to_pylist()
    widths = []
    for key in {r["instance_key"] for r in rows}:
        same = [r for r in rows if r["instance_key"] == key]
        best = min(r["objective"] for r in same if r["objective"] is not None)
        bound = max(r["bound"] for r in same if r["bound"] is not None)
        widths.append(best / bound - 1)
    return max(widths)


def test_report_on_results_directories(two_results, tmp_path):
    wide, narrow = two_results
    out = tmp_path / "intervals.md"
    args = [str(wide), str(narrow), "--out", str(out), "--explain", str(tmp_path / "none.toml")]
    (tmp_path / "none.toml").write_text("")
    assert _script().main(args) == 0
    text = out.read_text()
    wide_width, narrow_width = _stored_width(wide), _stored_width(narrow)
    assert wide_width > 0.10 > narrow_width
    assert f"| wide / debug / g | {100 * wide_width:.1f}% | **no** | **no** |" in text
    assert f"| narrow / debug / g | {100 * narrow_width:.1f}% | yes | - |" in text
    assert f"- **wide / debug / g** ({100 * wide_width:.1f}%): **not explained**" in text
    lines = [x for x in text.splitlines() if x.startswith("| heur |")]
    assert len(lines) == 2
    cells = [c.strip() for c in lines[0].strip("|").split("|")]
    assert cells[5] == f"**{100 * wide_width:.1f}% > 10 %**"
    assert cells[6:] == ["2/2", "bound 2", "heur 2", "bound 2"]
    assert "> 10 %" not in lines[1].split("|")[6]
    assert "rows of ddlsched" in text


def test_report_refuses_an_empty_directory(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert _script().main([str(tmp_path / "empty")]) == 2
    assert capsys.readouterr().err.startswith("intervals: error:")


def test_report_lists_explanations_of_wide_tables(two_results, tmp_path):
    wide, narrow = two_results
    explain = tmp_path / "explained.toml"
    explain.write_text('[tables."debug / g"]\nlimit = "the bound, 5 % low"\ntried = "nothing"\n')
    out = tmp_path / "intervals.md"
    assert (
        _script().main([str(wide), str(narrow), "--out", str(out), "--explain", str(explain)]) == 0
    )
    text = out.read_text()
    assert "| **no** | yes |" in text  # the wide table: not within 10 %, explained
    assert "*limit:* the bound, 5 % low *Tried:* nothing" in text
    assert text.count("*limit:*") == 1  # the narrow table needs no explanation


def test_an_explanation_naming_the_suite_wins(two_results, tmp_path):
    wide, _ = two_results
    explain = tmp_path / "explained.toml"
    explain.write_text(
        '[tables."debug / g"]\nlimit = "generic"\ntried = "-"\n'
        '[tables."wide / debug / g"]\nlimit = "this suite"\ntried = "-"\n'
        '[tables."other / debug / g"]\nlimit = "another suite"\ntried = "-"\n'
    )
    out = tmp_path / "intervals.md"
    assert _script().main([str(wide), "--out", str(out), "--explain", str(explain)]) == 0
    text = out.read_text()
    assert "*limit:* this suite" in text
    assert "generic" not in text and "another suite" not in text


def test_malformed_explanations_are_one_line_errors(two_results, tmp_path, capsys):
    explain = tmp_path / "bad.toml"
    explain.write_text('[tables."debug / g"]\nwhy = "x"\n')
    assert _script().main([str(two_results[0]), "--explain", str(explain)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("intervals: error:") and "expected keys 'limit' and 'tried'" in err


def test_explanations_must_be_text(two_results, tmp_path, capsys):
    explain = tmp_path / "bad.toml"
    explain.write_text('[tables."debug / g"]\nlimit = 1\n')
    assert _script().main([str(two_results[0]), "--explain", str(explain)]) == 2
    assert "must be text" in capsys.readouterr().err
