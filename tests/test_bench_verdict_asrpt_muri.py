"""``bench verdict`` on the committed results samples of asrpt and Muri (issue 26, item 4).

The samples in ``tests/data/verdict`` are real rows of the suites' runs, cut
with ``benchmarks/claims_sample.py`` (the commands: ``tests/data/verdict/README.md``).
Each test runs the paper's claims file (``benchmarks/claims/<paper>.toml``) on
them through the CLI, checks the verdicts against the ones RESULTS.md states
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


def test_asrpt_sample_verdicts(tmp_path, capsys):
    claims = _verdicts(tmp_path, "asrpt", ["asrpt", "asrpt-testbed"], capsys)
    decided = {
        # RESULTS (asrpt, Trace sweeps): far below the baselines only on ITP (46-73 % in sum C,
        # as the paper's 31-91 %); 0.2-0.8 % above WCS-Duration on Muri trace 2.
        "fig6-itp": "reproduced",
        "fig6-itp-size": "reproduced",
        "fig6-muri2": "not reproduced",
        "fig6-muri2-size": "not reproduced",
        "theorem1-sweeps": "reproduced",
        # Lemma 3 is checked on every run (kind holds); Lemma 2 is the inequality Gamma_A <=
        # X + rho UB with UB the instance's best schedule of any label (kind holds, lhs).
        "lemma2-sweeps": "reproduced",
        "lemma3-sweeps": "reproduced",
        "lemma2-testbed": "reproduced",
        # RESULTS (asrpt, Trace sweeps): at each single-GPU share A-SRPT is 0-3 % below
        # WCS-Duration, not the paper's 16-57 %, and the gap does not grow as the share falls;
        # mean and median give A-SRPT a lower sum C than RF on every window.
        "fig7-share": "reproduced",
        "fig7-share-size": "not reproduced",
        "fig7-share-trend": "not reproduced",
        "fig9-mean-vs-rf": "not reproduced",
        "fig9-median-vs-rf": "not reproduced",
        # the predictors' average error (epsilon_bar): the median's is below RF's on every
        # window, the mean's above on two of three
        "fig9-error-mean-vs-rf": "depends on seeds",
        "fig9-error-median-vs-rf": "not reproduced",
        # RESULTS (asrpt, Testbed): A-SRPT 34-42 % above each baseline; against A-SRPT-Perfect
        # +2.9 %, +57.7 %, +226 % by set, so one set of three is within the paper's 7 % (x2).
        "testbed-vs-perfect": "depends on seeds",
        "testbed-vs-wcs-duration": "not reproduced",
        "testbed-wcs-makespan": "depends on seeds",
        "theorem1-testbed": "reproduced",
    }
    assert {k: claims[k]["verdict"] for k in decided} == decided
    missing = {k for k, c in claims.items() if c["verdict"] == "missing"}
    assert missing == set(claims) - set(decided)  # the sample holds no other group
    assert "ddlsched bench run benchmarks/suites/asrpt.toml" in claims["fig8-nic1"]["note"]
    assert claims["lemma3-sweeps"]["numbers"]["failed"] == 0
    _check_asrpt_lemma2(claims["lemma2-sweeps"]["numbers"])
    _check_asrpt_share_trend(claims["fig7-share-trend"]["numbers"])
    _check_asrpt_predictors(claims)

    # Muri trace 2: A-SRPT above WCS-Duration on 11 of the 12 windows.
    muri2 = _metric("asrpt", "jobs-muri2", "asrpt", "total_completion_s") - _metric(
        "asrpt", "jobs-muri2", "wcs_duration", "total_completion_s"
    )
    assert (len(muri2), int((muri2 > 0).sum())) == (12, 11)
    assert claims["fig6-muri2"]["numbers"]["worse"] == 11
    # ITP: the 95 % t-interval of the mean ratio lies within [0.09, 0.69].
    itp = _metric("asrpt", "jobs-itp", "asrpt", "total_completion_s") / _metric(
        "asrpt", "jobs-itp", "wcs_duration", "total_completion_s"
    )
    half = stats.t.ppf(0.975, len(itp) - 1) * itp.std(ddof=1) / np.sqrt(len(itp))
    assert itp.mean() - half > 0.09 and itp.mean() + half < 0.69
    assert claims["fig6-itp-size"]["numbers"]["ci"] == pytest.approx(
        [itp.mean() - half, itp.mean() + half]
    )
    # Testbed: per set A-SRPT / A-SRPT-Perfect, one within 1.14 and one far above it.
    ratio = _metric("asrpt-testbed", "testbed", "asrpt", "total_completion_s") / _metric(
        "asrpt-testbed", "testbed", "asrpt_perfect", "total_completion_s"
    )
    assert ratio.min() < 1.14 < 2 < ratio.max()


def _check_asrpt_lemma2(numbers: dict) -> None:
    """Lemma 2 from the rows: per instance the least sum C of any label, then Gamma_A <= X +
    rho * that on every A-SRPT row (51 instances: 24 job-count, 15 share, 12 predictor)."""
    rows = read_rows(DATA / "asrpt").to_pandas()
    best = rows[rows["status"].isin(["optimal", "feasible"])].groupby("instance_key")["objective"]
    asrpt = rows[rows["label"] == "asrpt"]
    theory = asrpt["info"].map(lambda t: json.loads(t)["theory"])
    rhs = theory.map(lambda t: t["lemma2_x_s"]) + theory.map(lambda t: t["rho"]) * asrpt[
        "instance_key"
    ].map(best.min())
    assert len(asrpt) == 51 and (asrpt["objective"] <= rhs).all()
    assert numbers == {"rows": 51, "failed": 0, "undefined": 0}


def _check_asrpt_share_trend(numbers: dict) -> None:
    """Fig. 7: the mean over seeds of A-SRPT / WCS-Duration per share, from the rows; it falls
    from share 0 to 0.4 (the gain shrinks as the share falls there)."""
    rows = read_rows(DATA / "asrpt").to_pandas()
    rows = rows[rows["group"] == "share-philly"]
    rows = rows.assign(
        share=rows["instance_params"].map(lambda t: json.loads(t)["single_gpu_share"])
    )
    table = rows.pivot_table(index=["share", "instance_seed"], columns="label", values="objective")
    means = (table["asrpt"] / table["wcs_duration"]).groupby("share").mean()
    assert list(means.index) == [0.0, 0.2, 0.4, 0.6, 0.8]
    assert numbers["means"] == pytest.approx(list(means))
    assert means[0.0] > means[0.2] > means[0.4]
    assert (numbers["mean_has_shape"], numbers["seeds_with_shape"]) == (False, 0)


def _check_asrpt_predictors(claims: dict) -> None:
    """Fig. 9: one window per seed whatever the predictor (WCS-Duration's sum C is equal
    across predictors); A-SRPT's sum C with mean and median minus with RF, per seed."""
    rows = read_rows(DATA / "asrpt").to_pandas()
    rows = rows[rows["group"] == "predictor-philly"]
    rows = rows.assign(predictor=rows["instance_params"].map(lambda t: json.loads(t)["predictor"]))
    table = rows.pivot_table(
        index="instance_seed", columns=["label", "predictor"], values="objective"
    )
    assert (table["wcs_duration"].nunique(axis=1) == 1).all()
    for predictor in ("mean", "median"):
        diffs = table[("asrpt", predictor)] - table[("asrpt", "rf")]
        numbers = claims[f"fig9-{predictor}-vs-rf"]["numbers"]
        assert numbers["mean"] == pytest.approx(diffs.mean())
        counted = (int((diffs > 0).sum()), int((diffs < 0).sum()))  # (above RF, below RF)
        assert (numbers["better"], numbers["worse"]) == counted == (0, 3)
    errors = rows[rows["label"] == "asrpt"].assign(
        error=lambda r: r["metrics"].map(lambda t: json.loads(t)["epsilon_bar"])
    )
    error = errors.pivot_table(index="instance_seed", columns="predictor", values="error")
    for predictor, expected in (("mean", (2, 1)), ("median", (0, 3))):
        diffs = error[predictor] - error["rf"]
        numbers = claims[f"fig9-error-{predictor}-vs-rf"]["numbers"]
        assert numbers["mean"] == pytest.approx(diffs.mean())
        counted = (int((diffs > 0).sum()), int((diffs < 0).sum()))
        assert (numbers["better"], numbers["worse"]) == counted == expected


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
    gains = {k: c["verdict"] for k, c in claims.items() if k.startswith("gain-")}
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
    # RESULTS (muri, grouping): k = 3 multi-round equals the optimum; k = 4 ratio 1.28-1.36
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
