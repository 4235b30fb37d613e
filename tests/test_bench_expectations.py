"""Ratio tables of seeded methods: ratio of expectations per instance, zero runs, no_solution.

Hand-built result stores (a maximisation family whose seeded method earns
nothing on some runs and on average on one instance; a minimisation family
with a seeded method that once finds no schedule), with every number of
the table computed by hand below.
"""

from __future__ import annotations

import io
import math
from pathlib import Path

import pandas as pd
import pytest

from ddlsched.bench.store import ResultStore
from ddlsched.bench.tables import (
    COLUMN_HELP,
    HEADERS,
    SUMMARY_COLUMNS,
    load_results,
    summarize,
)
from ddlsched.cli import main


def _row(family, sense, group, instance, label, kind, seed, status, objective, bound=None):
    return {
        "key": f"{family}/{group}/{instance}/{label}/{seed}",
        "suite": "hand",
        "family": family,
        "group": group,
        "instance_id": f"{group}/{instance}",
        "instance_key": f"{family}/{instance}",
        "instance_size": 3,
        "method": label,
        "label": label,
        "kind": kind,
        "seed": seed,
        "sense": sense,
        "status": status,
        "objective": objective,
        "bound": bound,
        "runtime_s": 0.5,
        "params": "{}",
        "metrics": "{}",
        "info": "{}",
        "ddlsched_version": "hand",
        "finished_at": "2026-01-01T00:00:00",
    }


def _max_rows() -> list[dict]:
    """Utility (max). Proven optima A 10, B 8, C 6, F 0; instance D bracketed in [6, 12]."""
    rows = []

    def add(group, inst, label, kind, seed, status, objective, bound=None):
        rows.append(_row("maxfam", "max", group, inst, label, kind, seed, status, objective, bound))

    for inst, opt in (("A", 10.0), ("B", 8.0), ("C", 6.0), ("F", 0.0)):
        add("proven", inst, "exact", "exact", 0, "optimal", opt, opt)
    seeded = {"A": (5.0, 10.0, 0.0), "B": (8.0, 8.0, 2.0), "C": (0.0, 0.0, 0.0), "F": (0.0, 0.0)}
    for inst, utilities in seeded.items():
        for seed, utility in enumerate(utilities):
            add("proven", inst, "pd", "heuristic", seed, "feasible", utility)
    add("proven", "A", "pd", "heuristic", 3, "error", None)  # not in E[u]
    add("proven", "A", "greedy", "heuristic", 0, "feasible", 10.0)
    add("proven", "B", "greedy", "heuristic", 0, "no_solution", None)
    add("proven", "C", "greedy", "heuristic", 0, "feasible", 3.0)
    add("proven", "F", "greedy", "heuristic", 0, "feasible", 0.0)
    add("bounded", "D", "ub", "bound", 0, "bound_only", None, 12.0)
    add("bounded", "D", "pd", "heuristic", 0, "feasible", 6.0)
    add("bounded", "D", "pd", "heuristic", 1, "feasible", 3.0)
    add("bounded", "D", "greedy", "heuristic", 0, "feasible", 6.0)
    return rows


def _min_rows() -> list[dict]:
    """Cost (min). Proven optima E1 10, E2 20; rnd's seed 2 finds nothing on E2."""
    rows = []
    for inst, opt, costs in (("E1", 10.0, (10.0, 12.0, 14.0)), ("E2", 20.0, (20.0, 30.0, None))):
        rows.append(_row("minfam", "min", "min", inst, "exact", "exact", 0, "optimal", opt, opt))
        for seed, cost in enumerate(costs):
            status = "feasible" if cost is not None else "no_solution"
            rows.append(_row("minfam", "min", "min", inst, "rnd", "heuristic", seed, status, cost))
    return rows


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("expectations") / "out"
    results = ResultStore(out)
    results.extend(_max_rows() + _min_rows())
    results.flush()
    return out


#: By hand, cells from "rows" to "cert. opt." (SUMMARY_COLUMNS[4:17]).
EXPECTED = {
    # pd: E[u] = 5 (A, the error row left out), 6 (B), 0 (C: infinite, counted), 0 (F: OPT 0,
    # ratio 1); ratios 2, 1.3333, 1 over A, B, F. Zero runs: A seed 2, C x 3, F x 2.
    # Mean utility (5 + 10 + 0 + 8 + 8 + 2 + 0 x 5) / 11 = 3. Certified: A s1, B s0, s1, F x 2.
    ("maxfam", "proven", "pd"): [
        "12", "11", "0", "1", "0", "6", "3", "1.4444", "1.3333", "2.0000", "1", "100%", "42%",
    ],
    ("maxfam", "proven", "greedy"): [
        "4", "3", "1", "0", "0", "1", "4.33333", "1.3333", "1.0000", "2.0000", "0", "100%", "50%",
    ],
    ("maxfam", "proven", "exact"): [
        "4", "4", "0", "0", "0", "1", "6", "1.0000", "1.0000", "1.0000", "0", "100%", "100%",
    ],
    # D: OPT in [6, 12]; pd E[u] = 4.5: [6 / 4.5, 12 / 4.5]
    ("maxfam", "bounded", "pd"): [
        "2", "2", "0", "0", "0", "0", "4.5", "[1.3333, 2.6667]", "[1.3333, 2.6667]",
        "[1.3333, 2.6667]", "0", "0%", "0%",
    ],
    ("maxfam", "bounded", "greedy"): [
        "1", "1", "0", "0", "0", "0", "6", "[1.0000, 2.0000]", "[1.0000, 2.0000]",
        "[1.0000, 2.0000]", "0", "0%", "0%",
    ],
    # rnd: E[cost] 12 on E1 (1.2), 25 on E2 (1.25; the per-run worst would be 30 / 20 = 1.5)
    ("minfam", "min", "rnd"): [
        "6", "5", "1", "0", "0", "0", "17.2", "1.2250", "1.2250", "1.2500", "0", "100%", "33%",
    ],
}  # fmt: skip


def _markdown_lines(text: str) -> dict[tuple[str, str, str], list[str]]:
    lines = {}
    for line in text.splitlines()[2:]:
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            lines[tuple(cells[:3])] = cells
    return lines


def test_hand_computed_table(store, capsys):
    assert main(["bench", "table", str(store)]) == 0
    text = capsys.readouterr().out
    header = [c.strip() for c in text.splitlines()[0].strip("|").split("|")]
    assert header[4:17] == [
        "rows", "solved", "no solution", "errors", "time limits", "zero runs", "mean obj.",
        "mean ratio", "median ratio", "worst ratio", "inf. ratio", "ratio exact", "cert. opt.",
    ]  # fmt: skip
    lines = _markdown_lines(text)
    for key, cells in EXPECTED.items():
        assert lines[key][4:17] == cells, key
    assert "infinite" not in text and "inf |" not in text


def test_csv_has_no_infinite_mean(store, capsys):
    assert main(["bench", "table", str(store), "--format", "csv"]) == 0
    csv = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert list(csv.columns[:17]) == [c for c in SUMMARY_COLUMNS if not c.startswith("ratio_")][:17]
    for column in ("ratio_mean_lo", "ratio_mean_hi", "ratio_median_lo", "ratio_worst_lo"):
        assert all(math.isfinite(v) for v in csv[column].dropna()), column
    pd_line = csv[
        (csv["family"] == "maxfam") & (csv["group"] == "proven") & (csv["method"] == "pd")
    ]
    assert pd_line.iloc[0][["zero_runs", "infinite_ratio", "errors"]].tolist() == [6, 1, 1]
    assert pd_line.iloc[0]["ratio_mean_lo"] == pytest.approx((2 + 8 / 6 + 1) / 3)


def test_pooled_groups_and_latex(store, capsys):
    pooled = summarize(load_results(store), by_group=False).set_index(["family", "method"])
    # pd over A, B, F and D: mean of the lower ends 2, 1.3333, 1, 1.3333
    assert pooled.loc[("maxfam", "pd"), "ratio_mean_lo"] == pytest.approx(
        (2 + 4 / 3 + 1 + 4 / 3) / 4
    )
    assert pooled.loc[("maxfam", "pd"), "infinite_ratio"] == 1
    assert main(["bench", "table", str(store), "--format", "latex"]) == 0
    latex = capsys.readouterr().out
    assert "no solution & errors & time limits & zero runs" in latex and "inf. ratio" in latex


def test_legend_says_what_each_column_is(store, capsys):
    assert main(["bench", "table", str(store)]) == 0
    note = capsys.readouterr().out.strip().splitlines()[-1]
    assert "ratio of expectations" in note and "'inf. ratio'" in note
    assert "'no solution'" in note and "optimum / heuristic when maximising" in note
    assert main(["bench", "table", "--help"]) == 0
    help_text = capsys.readouterr().out
    named = {part for key in COLUMN_HELP for part in key.split(", ")}
    assert set(HEADERS.values()) <= named  # every printed header is explained
    assert "zero runs" in help_text and "inf. ratio" in help_text and "no solution" in help_text


def test_compare_prints_the_bench_table(capsys):
    argv = ["compare", "debug", "--preset", "default", "--seeds", "2", "--methods", "exact,heur"]
    assert main([*argv, "--detail"]) == 0
    text = capsys.readouterr().out
    headers = [line for line in text.splitlines() if line.startswith("| family |")]
    assert headers == ["| " + " | ".join(HEADERS[c] for c in SUMMARY_COLUMNS) + " |"]
    assert "| default/s1 | heur | feasible | 1 |" in text  # --detail: every row
    assert main([*argv[:-1], "exact,none", "--format", "csv"]) == 0
    csv = pd.read_csv(io.StringIO(capsys.readouterr().out)).set_index("method")
    assert csv.loc["none", "no_solution"] == 2 and csv.loc["none", "errors"] == 0
