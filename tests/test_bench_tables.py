"""Ratio tables: the numbers in Markdown, LaTeX and CSV match the stored rows."""

from __future__ import annotations

import io
import statistics
import textwrap
from pathlib import Path

import pandas as pd
import pytest

from ddlsched.bench.executors import LocalExecutor
from ddlsched.bench.runner import run_suite
from ddlsched.bench.store import ResultStore, read_rows
from ddlsched.bench.suite import load_suite
from ddlsched.bench.tables import (
    interval_stats,
    load_results,
    rows_with_ratios,
    summarize,
    to_csv,
    to_latex,
    to_markdown,
)
from ddlsched.cli import main
from ddlsched.errors import DdlschedError

SUITE = """
[suite]
name = "{name}"
{reference}
[[instances]]
family = "debug"
preset = "default"
seeds = {seeds}
group = "{name}"
{methods}
"""

EXACT = '[[methods]]\nname = "exact"\n[[methods]]\nname = "heur"\nseeds = [0, 1, 2]\n'
BOUNDED = '[[methods]]\nname = "bound"\n[[methods]]\nname = "heur"\nseeds = [0, 1, 2]\n'


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("tables")
    out = tmp / "out"
    executor = LocalExecutor(2)
    try:
        for name, reference, methods, seeds in (
            ("proven", 'reference = "exact"', EXACT, "[0, 1, 2, 3]"),
            ("bounded", 'reference = "bound"', BOUNDED, "[10, 11, 12, 13]"),
        ):
            path = tmp / f"{name}.toml"
            path.write_text(
                textwrap.dedent(
                    SUITE.format(name=name, reference=reference, methods=methods, seeds=seeds)
                )
            )
            run_suite(load_suite(path), out, executor=executor)
    finally:
        executor.close()
    return out


def expected_heur_ratios(rows: list[dict], group: str) -> list[tuple[float, float]]:
    """Per-row ratios computed by hand from the rows: heur / exact, or [heur/best, heur/bound]."""
    out = []
    for row in rows:
        if row["group"] != group or row["label"] != "heur":
            continue
        out.append(_by_hand(rows, row["instance_key"], row["objective"]))
    return out


def _by_hand(rows: list[dict], instance_key: str, value: float) -> tuple[float, float]:
    same = [r for r in rows if r["instance_key"] == instance_key]
    exact = [r["objective"] for r in same if r["status"] == "optimal"]
    if exact:
        return (value / exact[0],) * 2
    best = min(r["objective"] for r in same if r["objective"] is not None)
    bound = max(r["bound"] for r in same if r["bound"] is not None)
    return (value / best, value / bound)


def expected_instance_ratios(rows: list[dict], group: str) -> list[tuple[float, float]]:
    """Per instance, the ratio of heur's mean objective over its seeds (by hand)."""
    heur: dict[str, list[float]] = {}
    for row in rows:
        if row["group"] == group and row["label"] == "heur":
            heur.setdefault(row["instance_key"], []).append(row["objective"])
    return [_by_hand(rows, key, statistics.fmean(values)) for key, values in heur.items()]


def fmt(lo: float, hi: float) -> str:
    return f"{lo:.4f}" if abs(hi - lo) < 1e-9 else f"[{lo:.4f}, {hi:.4f}]"


def test_tables_match_stored_rows(results):
    rows = read_rows(results).to_pylist()
    assert len(rows) == 2 * 4 * 4
    summary = summarize(load_results(results))
    markdown = to_markdown(summary)
    latex = to_latex(summary)
    csv = pd.read_csv(io.StringIO(to_csv(summary)))
    md_lines = {
        tuple(c.strip() for c in line.strip("|").split("|")[1:3]): line
        for line in markdown.splitlines()[2:]
        if line.startswith("|")
    }
    tex_lines = {
        tuple(c.strip().replace(r"\_", "_") for c in line.split("&")[1:3]): line
        for line in latex.splitlines()
        if line.count("&") > 5 and "family" not in line
    }
    for group, worst_row in (("proven", (1.2, 1.2)), ("bounded", (1.2, 1.2 / 0.9))):
        # heur's seeds 0, 1, 2 give value x 1.0, 1.1, 1.2: E = 1.1 value on every instance
        ratios = expected_instance_ratios(rows, group)
        assert len(ratios) == 4
        mean = (statistics.fmean(r[0] for r in ratios), statistics.fmean(r[1] for r in ratios))
        median = (statistics.median(r[0] for r in ratios), statistics.median(r[1] for r in ratios))
        worst = (max(r[0] for r in ratios), max(r[1] for r in ratios))
        assert worst == pytest.approx((1.1, 1.1 / (1.0 if group == "proven" else 0.9)))
        # the worst single run is worse than the worst ratio of expectations
        per_row = expected_heur_ratios(rows, group)
        assert (max(r[0] for r in per_row), max(r[1] for r in per_row)) == pytest.approx(worst_row)
        certified = sum(1 for r in per_row if r[1] <= 1 + 1e-9) / len(per_row)
        heur = [r for r in rows if r["group"] == group and r["label"] == "heur"]
        mean_obj = statistics.fmean(r["objective"] for r in heur)
        expected_cells = [
            "heuristic", "12", "12", "0", "0", "0", "0", f"{mean_obj:.6g}",
            fmt(*mean), fmt(*median), fmt(*worst), "0", "100%" if group == "proven" else "0%",
        ]  # fmt: skip
        md_cells = [c.strip() for c in md_lines[(group, "heur")].strip("|").split("|")]
        assert md_cells[3:16] == expected_cells
        assert md_cells[16] == f"{certified:.0%}"
        tex_cells = [c.strip() for c in tex_lines[(group, "heur")].rstrip("\\ ").split("&")]
        assert tex_cells[3:15] == expected_cells[:12]
        assert tex_cells[16] == f"{certified:.0%}".replace("%", r"\%")
        line = csv[(csv["group"] == group) & (csv["method"] == "heur")].iloc[0]
        assert line["ratio_mean_lo"] == pytest.approx(mean[0])
        assert line["ratio_mean_hi"] == pytest.approx(mean[1])
        assert line["ratio_worst_hi"] == pytest.approx(worst[1])
        assert line["rows"] == 12
    # the proven group has exact ratios, the bounded one intervals
    assert md_lines[("proven", "heur")].count("[") == 0
    assert md_lines[("bounded", "heur")].count("[") == 3
    assert r"\toprule" in latex and r"\bottomrule" in latex and r"\midrule" in latex


def test_interval_stats_bracket():
    stats = interval_stats([(1.0, 1.0), (1.2, 1.5), (1.1, float("inf"))])
    assert stats.mean[0] == pytest.approx(1.1) and stats.mean[1] == float("inf")
    assert stats.median == (1.1, 1.5)
    assert stats.worst == (1.2, float("inf"))
    assert interval_stats([]) is None


def test_a_row_beating_the_optimum_is_refused(results, tmp_path):
    frame = load_results(results)
    bad = frame.copy()
    index = bad.index[(bad["label"] == "heur") & (bad["group"] == "proven")][0]
    bad.loc[index, "objective"] = 1.0  # below the proven optimum
    with pytest.raises(DdlschedError, match="beats the reference"):
        rows_with_ratios(bad)


def test_cli_table_formats(results, tmp_path, capsys):
    for fmt_name in ("md", "latex", "csv"):
        out = tmp_path / f"t.{fmt_name}"
        assert main(["bench", "table", str(results), "--format", fmt_name, "-o", str(out)]) == 0
        assert "heur" in out.read_text()
    assert main(["bench", "table", str(results), "--rows"]) == 0
    assert "ratio_lo" in capsys.readouterr().out
    assert main(["bench", "status", str(results)]) == 0
    assert "rows       32" in capsys.readouterr().out
    assert main(["bench", "table", str(tmp_path / "nope")]) == 2


def test_manifest_records_versions_machine_and_suite_hash(results):
    manifest = ResultStore(results).read_manifest()
    assert manifest["versions"]["ddlsched"]
    assert manifest["versions"]["python"]
    assert manifest["machine"]["cpu_count"]
    assert len(manifest["suite_sha256"]) == 64
    assert "commit" in manifest["git"]
    assert [run["state"] for run in manifest["runs"]] == ["complete", "complete"]


def test_plots_are_written(tmp_path):
    from ddlsched.bench.plots import plot_results

    text = """
    [suite]
    name = "plots"
    reference = "exact"
    [[instances]]
    family = "debug"
    preset = "default"
    seeds = [0, 1]
    group = "plain"
    [[instances]]
    family = "debug"
    preset = "default"
    seeds = [0, 1]
    sweep = { size = [2, 4, 8] }
    group = "sizes"
    [[methods]]
    name = "exact"
    [[methods]]
    name = "heur"
    [[methods]]
    name = "sleep"
    sweep = { seconds = [0.001, 0.002] }
    """
    path = tmp_path / "plots.toml"
    path.write_text(textwrap.dedent(text))
    run_suite(load_suite(path), tmp_path / "out", workers=2)
    names = {p.name for p in plot_results(tmp_path / "out", tmp_path / "plots")}
    assert {
        "ratios-debug.png",
        "runtime-debug.png",
        "objective-debug-plain.png",
        "sweep-debug-sleep-seconds.png",
        "instances-debug-sizes.png",
    } <= names
    assert all((tmp_path / "plots" / n).stat().st_size > 1000 for n in names)
    assert main(["bench", "plot", str(tmp_path / "out"), "--out", str(tmp_path / "p2")]) == 0
    assert (tmp_path / "p2" / "ratios-debug.png").exists()


def test_cli_run_prints_summary(tmp_path, capsys):
    path = tmp_path / "cli.toml"
    path.write_text(
        textwrap.dedent(SUITE.format(name="cli", reference="", methods=EXACT, seeds="[0]"))
    )
    out = tmp_path / "out"
    assert main(["bench", "run", str(path), "--workers", "1", "--out", str(out), "-q"]) == 0
    text = capsys.readouterr().out
    assert "cli: 4 task(s) run, 0 already stored, 0 failed" in text
    assert f"table: ddlsched bench table {out}" in text
    assert main(["bench", "run", str(path), "--workers", "0", "--out", str(out)]) == 2


def test_compare_and_bench_table_print_one_table(tmp_path, capsys):
    """``ddlsched compare`` and ``bench table`` render through the same code: on the same
    instances and methods, the same columns in the same order and the same numbers (the
    runtimes aside)."""
    from ddlsched.bench.tasks import execute, expand

    suite_path = tmp_path / "same.toml"
    suite_path.write_text(
        textwrap.dedent(
            """
            [suite]
            name = "same"
            reference = "exact"
            [[instances]]
            family = "debug"
            preset = "default"
            seeds = [0, 1, 2]
            [[methods]]
            name = "exact"
            [[methods]]
            name = "bound"
            """
        )
    )
    store = ResultStore(tmp_path / "out")
    store.extend(execute(task) for task in expand(load_suite(suite_path)))
    store.flush()
    assert main(["bench", "table", str(tmp_path / "out"), "--format", "csv"]) == 0
    table = pd.read_csv(io.StringIO(capsys.readouterr().out))
    argv = ["compare", "debug", "--preset", "default", "--seeds", "3", "--methods", "exact,bound"]
    assert main([*argv, "--format", "csv"]) == 0
    compared = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert list(compared.columns) == list(table.columns)
    times = [c for c in table.columns if c.startswith("runtime_")]
    pd.testing.assert_frame_equal(compared.drop(columns=times), table.drop(columns=times))
    assert main(["bench", "table", str(tmp_path / "out")]) == 0
    bench_md = capsys.readouterr().out.splitlines()
    assert main(argv) == 0
    compare_md = capsys.readouterr().out.splitlines()
    assert bench_md[0] in compare_md  # the same Markdown header line
