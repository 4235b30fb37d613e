"""``bench verdict`` on the committed results samples of asrpt and Muri.

The samples in ``tests/data/verdict`` are real rows of the suites' runs, cut
with ``benchmarks/claims_sample.py`` (the commands: ``tests/data/verdict/README.md``).
Each test runs the paper's claims file (``benchmarks/claims/<paper>.toml``) on
them through the CLI, checks the verdicts against the ones benchmarks/results/ states
for those rows, and recomputes the numbers behind a verdict directly from the
rows' metrics (not through the verdict code).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from ddlsched.bench.store import read_rows
from ddlsched.cli import main

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "verdict"
CLAIMS = ROOT / "benchmarks" / "claims"


def _verdicts(tmp_path: Path, paper: str, samples: list[str], capsys) -> dict[str, dict]:
    """Run ``ddlsched bench verdict`` on the samples; the claims of verdict.json by id."""
    out = tmp_path / paper
    args = ["bench", "verdict", *(str(DATA / s) for s in samples)]
    assert main([*args, "--claims", str(CLAIMS / f"{paper}.toml"), "--out", str(out)]) == 0
    capsys.readouterr()
    report = json.loads((out / "verdict.json").read_text())
    assert {d["suite"] for d in report["provenance"]["results"]} >= {
        json.loads((DATA / s / "manifest.json").read_text())["suite"] for s in samples
    }
    return {v["claim"]: v for v in report["verdicts"]}


def _metric(sample: str, group: str, label: str, metric: str) -> pd.Series:
    """The metric of a label's rows per (instance params, seed), read straight off the rows."""
    rows = read_rows(DATA / sample).to_pandas()
    rows = rows[(rows["group"] == group) & (rows["label"] == label)]
    values = rows["metrics"].map(lambda t: json.loads(t)[metric])
    return pd.Series(
        values.to_numpy(),
        index=list(zip(rows["instance_params"], rows["instance_seed"], strict=True)),
    )


BASELINES = ["spjf", "spwf", "wcs_duration", "wcs_workload", "wcs_subtime"]
TRACES = ("philly", "itp", "muri2")


def _table(sample: str, group: str, metric: str = "total_completion_s") -> pd.DataFrame:
    """A metric per (instance params, seed) and label, read straight off the rows."""
    rows = read_rows(DATA / sample).to_pandas()
    rows = rows[(rows["group"] == group) & rows["status"].isin(["feasible", "optimal"])]
    rows = rows.assign(value=rows["metrics"].map(lambda t: json.loads(t)[metric]))
    return rows.pivot_table(
        index=["instance_params", "instance_seed"], columns="label", values="value"
    )


def _interval(values: pd.Series) -> tuple[float, float]:
    half = stats.t.ppf(0.975, len(values) - 1) * values.std(ddof=1) / np.sqrt(len(values))
    return values.mean() - half, values.mean() + half


def _paired_word(diffs: pd.Series) -> str:
    """The paired-difference rule (expect below, share_not 0.25), by hand."""
    low, high = _interval(diffs)
    if high < 0:
        return "reproduced"
    if low > 0 or (diffs < -1e-9).sum() <= 0.25 * len(diffs):
        return "not reproduced"
    return "depends on seeds"


def _range_word(ratios: pd.Series, low: float, high: float) -> str:
    """The ratio_within mean rule, by hand."""
    ci = _interval(ratios)
    if low <= ci[0] and ci[1] <= high:
        return "reproduced"
    return "not reproduced" if ci[1] < low or ci[0] > high else "depends on seeds"


def test_asrpt_sample_verdicts(tmp_path, capsys):
    claims = _verdicts(tmp_path, "asrpt", ["asrpt", "asrpt-testbed"], capsys)
    for trace in TRACES:
        table = _table("asrpt", f"jobs-{trace}")
        gains = table[BASELINES].sub(table["asrpt"], axis=0)  # > 0: A-SRPT lower
        lowest = claims[f"fig6-{trace}"]
        assert lowest["numbers"]["units"] == len(table) == 12
        assert lowest["numbers"]["wins"] == int((gains > 1e-9).all(axis=1).sum())
        if (gains < -1e-9).any(axis=None):  # some baseline below A-SRPT on some window
            assert lowest["verdict"] != "reproduced"
        for baseline in BASELINES:
            relative = table["asrpt"] / table[baseline] - 1
            paired = claims[f"fig6-{trace}-vs.{baseline}"]
            assert paired["numbers"]["mean"] == pytest.approx(relative.mean())
            assert paired["verdict"] == _paired_word(relative)
            size = claims[f"fig6-{trace}-size.{baseline}"]
            ratio = table["asrpt"] / table[baseline]
            assert size["numbers"]["ci"] == pytest.approx(list(_interval(ratio)))
            assert size["verdict"] == _range_word(ratio, 0.09, 0.69)
    # Philly: some baseline has a lower sum C than A-SRPT on some window, so "lowest
    # everywhere" is not reproduced, and neither is any per-baseline claim.
    philly = _table("asrpt", "jobs-philly")
    assert (philly[BASELINES].lt(philly["asrpt"], axis=0)).any(axis=None)
    assert claims["fig6-philly"]["verdict"] in ("depends on seeds", "not reproduced")
    assert all(
        claims[f"fig6-philly-{kind}.{b}"]["verdict"] != "reproduced"
        for kind in ("vs", "size")
        for b in BASELINES
    )
    _check_asrpt_bounds(claims)
    # Testbed: A-SRPT over A-SRPT-Perfect against the paper's 7 % (1.065-1.075).
    testbed = _table("asrpt-testbed", "testbed")
    ratio = testbed["asrpt"] / testbed["asrpt_perfect"]
    assert claims["testbed-vs-perfect"]["numbers"]["mean_lo"] == pytest.approx(ratio.mean())
    assert claims["testbed-vs-perfect"]["verdict"] == _range_word(ratio, 1.065, 1.075)
    worst = testbed["asrpt"] / testbed[BASELINES].max(axis=1)
    assert claims["testbed-up-to-44"]["numbers"]["mean_lo"] == pytest.approx(worst.mean())


def _check_asrpt_bounds(claims: dict) -> None:
    """Lemma 1 and Theorem 1 from the rows: the closest approach (largest lhs / rhs) printed
    beside the verdict, vacuous below 0.5."""
    rows = read_rows(DATA / "asrpt").to_pandas()
    solved = rows[rows["status"].isin(["optimal", "feasible"])]
    best = solved.groupby("instance_key")["objective"].min()
    bound = rows.groupby("instance_key")["bound"].max()
    asrpt = rows[rows["label"] == "asrpt"]
    theory = asrpt["info"].map(lambda t: json.loads(t)["theory"])
    lemma1 = theory.map(lambda t: t["opt_a_1_s"]) / (
        theory.map(lambda t: t["rho"]) * asrpt["instance_key"].map(best)
    )
    numbers = claims["lemma1-sweeps"]["numbers"]
    assert numbers["closest"] == pytest.approx(lemma1.max())
    assert numbers["failed"] == int((lemma1 > 1 + 1e-9).sum())
    word = "vacuous" if lemma1.max() < 0.5 else "reproduced"
    assert claims["lemma1-sweeps"]["verdict"] == (
        word if numbers["failed"] == 0 else "not reproduced"
    )
    theorem1 = asrpt["objective"] / asrpt["instance_key"].map(bound)
    theorem1 = theorem1 / theory.map(lambda t: t["theorem1_bound"])
    assert claims["theorem1-sweeps"]["numbers"]["closest"] == pytest.approx(theorem1.max())
    assert claims["theorem1-sweeps"]["verdict"] == "vacuous"
    assert claims["theorem1-sweeps"]["shown"].startswith("vacuous (holds; closest lhs/rhs ")


#: The paper's printed gains per class and metric (Sec. 6.2): durations known (Muri-S against
#: SRTF, SRSF) and unknown (Muri-L against Tiresias, AntMan, Themis).
MURI_RANGES = {
    "muri-s": {
        "average_jct_s": (1.13, 2.26),
        "makespan_s": (1.00, 1.65),
        "p99_jct_s": (1.36, 4.57),
    },
    "muri-l": {
        "average_jct_s": (1.53, 6.15),
        "makespan_s": (1.00, 1.55),
        "p99_jct_s": (1.21, 5.37),
    },
}
MURI_CLASSES = {"srtf": "muri-s", "srsf": "muri-s", "tiresias": "muri-l", "antman": "muri-l",
                "themis": "muri-l"}  # fmt: skip
MURI_TAGS = {"average_jct_s": "average-jct", "makespan_s": "makespan", "p99_jct_s": "p99-jct"}


def test_muri_sample_verdicts(tmp_path, capsys):
    claims = _verdicts(tmp_path, "muri", ["muri-grouping", "muri-traces"], capsys)
    gains = {k: c["verdict"] for k, c in claims.items() if k.startswith("gain-") and "-pr" not in k}
    assert len(gains) == 15
    # Every gain straight from the rows: baseline / Muri per trace, within the class's printed
    # range on every trace (no widening: SRSF's 1.1296 is below 1.13).
    rows = read_rows(DATA / "muri-traces").to_pandas()
    metrics = rows.set_index(["group", "label"])["metrics"].map(json.loads)
    expected = {}
    for baseline, muri in MURI_CLASSES.items():
        for metric, (low, high) in MURI_RANGES[muri].items():
            ratios = [
                metrics[(t, baseline)][metric] / metrics[(t, muri)][metric]
                for t in ("trace1", "trace2", "trace3", "trace4")
            ]
            inside = all(low <= r <= high for r in ratios)
            expected[f"gain-{MURI_TAGS[metric]}-{baseline}"] = (
                "reproduced" if inside else "not reproduced"
            )
    assert gains == expected
    failed = {k for k, v in gains.items() if v == "not reproduced"}
    assert failed == {"gain-average-jct-srsf", "gain-p99-jct-srtf", "gain-p99-jct-tiresias",
                      "gain-p99-jct-antman"}  # fmt: skip
    assert all("no fresh seeds" in claims[k]["confirmation"] for k in gains)
    # benchmarks/results/muri.md (grouping): k = 3 multi-round equals the optimum; k = 4 ratio 1.28-1.36
    # on average; trace-1 sets 1.04.
    assert claims["grouping-k3-optimal"]["verdict"] == "reproduced"
    assert claims["grouping-k4-near"]["verdict"] == "not reproduced"
    assert claims["grouping-trace1-near"]["verdict"] == "reproduced"

    # k = 4: the optimum over multi-round, from the objectives of the rows, above 1.1 on average.
    grouping = read_rows(DATA / "muri-grouping").to_pandas()
    k4 = grouping[grouping["group"] == "k4"].pivot_table(
        index=["instance_params", "instance_seed"], columns="label", values="objective"
    )
    assert (k4["exact"] / k4["multiround"]).mean() > 1.2


def _trend_word(ratios: pd.DataFrame) -> str:
    """The monotone rule of Fig. 7's trend (increasing, mean_strict, seed_test rank), by
    hand: ``ratios`` has one row per seed and one column per share, in increasing order."""
    mean = ratios.mean(axis=0).to_numpy()
    moves = np.diff(mean)
    mean_rises = bool((moves > 0.005 * mean[0]).all())
    shares = np.arange(ratios.shape[1])
    rising = sum(stats.spearmanr(shares, row).statistic >= 0.8 for row in ratios.to_numpy())
    if mean_rises and rising >= 0.75 * len(ratios):
        return "reproduced"
    if not mean_rises and rising <= 0.25 * len(ratios):
        return "not reproduced"
    return "depends on seeds"


def test_asrpt_fig7_trend_against_every_baseline(tmp_path, capsys):
    claims = _verdicts(tmp_path, "asrpt", ["asrpt", "asrpt-testbed"], capsys)
    table = _table("asrpt", "share-philly").reset_index()
    table["share"] = table["instance_params"].map(lambda t: json.loads(t)["single_gpu_share"])
    for baseline in BASELINES:
        ratio = table.assign(r=table["asrpt"] / table[baseline]).pivot_table(
            index="instance_seed", columns="share", values="r"
        )
        verdict = claims[f"fig7-share-trend.{baseline}"]
        assert verdict["verdict"] == _trend_word(ratio.sort_index(axis=1)), baseline


def test_asrpt_fig9_errors_as_printed():
    """The paper (Sec. V-B-2-d): "the average errors for the random forest, median-based, and
    mean-based models are 369, 563, and 593"."""
    from ddlsched.bench.claims import load_claims

    claims = {c.id: c for c in load_claims(CLAIMS / "asrpt.toml").claims}
    assert claims["fig9-error-mean-vs-rf"].paper_value == "593 vs 369 iterations"
    assert claims["fig9-error-mean-vs-rf"].params == {"predictor": "mean"}
    assert claims["fig9-error-median-vs-rf"].paper_value == "563 vs 369 iterations"
    assert claims["fig9-error-median-vs-rf"].params == {"predictor": "median"}
