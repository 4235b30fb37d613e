"""``bench verdict`` on the committed results sample of rar Section 7.

``tests/data/verdict/rar-section7`` holds the ``fig4`` rows (both presets) of
instance seeds 0-3 of a real run of ``benchmarks/suites/rar-section7.toml``
(cut with ``benchmarks/claims_sample.py``; the command:
``tests/data/verdict/README.md``). The test runs ``benchmarks/claims/rar.toml``
on it through the CLI and checks each claim's verdict: every claim of ``fig4``
is decided on 4 of its 20 seeds (so *incomplete*), the Fig. 6 (regen) claims,
whose group the sample lacks, are *missing*. The numbers behind the verdicts
are recomputed from the rows' metrics with pandas and scipy, not through the
verdict code.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from rar_lemma_verdicts import LEMMA_VERDICTS
from scipy import stats

from ddlsched.bench.store import read_rows

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "tests" / "data" / "verdict" / "rar-section7"
CLAIMS = ROOT / "benchmarks" / "claims" / "rar.toml"

# Seeds 0-3 of the paper preset: SJF-BCO ties FF and LS in makespan on all four and in JCT
# ties LS, ties FF once and is worse three times (better on 0 <= 25 %: not reproduced). It
# beats RAND on all four, but in makespan the 95 % interval still straddles 0 (-5.55 +- 6.0;
# on all 20 seeds it is reproduced). Fig. 5's mean drops, rises, drops and 3/4 seeds do;
# Fig. 7's mean strictly decreases and 4/4 seeds are non-increasing.
# paper-contention: FF split 2 / 1 / 1 and 2 / 0 / 2 (depends); LS tied on all four (not
# reproduced); Fig. 5's mean lacks the shape and 1/4 seeds has it (<= 25 %); Fig. 7's mean
# rises at lambda 8 while 3/4 seeds are non-increasing (depends).
DECIDED = {
    "fig4-ff-makespan-paper": "not reproduced",
    "fig4-ff-jct-paper": "not reproduced",
    "fig4-ls-makespan-paper": "not reproduced",
    "fig4-ls-jct-paper": "not reproduced",
    "fig4-rand-makespan-paper": "depends on seeds",
    "fig4-rand-jct-paper": "reproduced",
    "fig5-paper": "reproduced",
    "fig7-paper": "reproduced",
    # Theorem 5's bound n_g phi u / l is 38-39 (paper) and 500-551 (contention) where the
    # ratio is at most 1.6 and 2.1: it holds with room to spare, vacuous at these sizes.
    "theorem5-paper": "vacuous",
    "fig4-ff-makespan-contention": "depends on seeds",
    "fig4-ff-jct-contention": "depends on seeds",
    "fig4-ls-makespan-contention": "not reproduced",
    "fig4-ls-jct-contention": "not reproduced",
    "fig4-rand-makespan-contention": "reproduced",
    "fig4-rand-jct-contention": "reproduced",
    "fig5-contention": "not reproduced",
    "fig7-contention": "depends on seeds",
    "theorem5-contention": "vacuous",
    # Lemmas 2-4 per run (kind holds): W_max <= theta~ holds (0.74-0.79 of it) but theta~ is
    # not tight (theta~ = 600 on every seed: the kept pair's limit), so Lemma 2's equality
    # and Lemma 4 read with theta~ fail on `paper`; Lemma 3 and Lemma 4 with W_max hold with
    # room (n_g = 32 makes n_g W_max 25-30 times the makespan).
    **LEMMA_VERDICTS,
}


@pytest.fixture(scope="module")
def rows() -> pd.DataFrame:
    return read_rows(SAMPLE).to_pandas()


@pytest.fixture
def claims(cli, tmp_path) -> dict[str, dict]:
    """``ddlsched bench verdict`` on the sample; the claims of verdict.json by id."""
    code, out, err = cli("bench", "verdict", SAMPLE, "--claims", CLAIMS, "--out", tmp_path)
    assert code == 0 and err.startswith("written: ")
    assert "| fig7-paper: " in out and "(incomplete: 4/20 seeds)" in out
    report = json.loads((tmp_path / "verdict.json").read_text())
    assert [d["suite"] for d in report["provenance"]["results"]] == ["rar-section7"]
    return {v["claim"]: v for v in report["verdicts"]}


def _per_seed(rows: pd.DataFrame, preset: str, label: str, metric: str) -> pd.Series:
    """A label's metric per instance seed on ``fig4`` of a preset, averaged over the method
    seeds (RAND runs on five)."""
    picked = rows[(rows["preset"] == preset) & (rows["label"] == label)]
    values = picked["metrics"].map(lambda text: json.loads(text)[metric])
    return values.groupby(picked["instance_seed"]).mean()


def test_rar_sample_holds_four_seeds_of_fig4(rows):
    assert set(rows["group"]) == {"fig4"}
    assert set(rows["preset"]) == {"paper", "paper-contention"}
    assert sorted(set(rows["instance_seed"])) == [0, 1, 2, 3]
    assert len(rows) == 152  # 2 presets x 4 seeds x (14 labels + RAND on 5 method seeds)
    assert sum(p.stat().st_size for p in SAMPLE.rglob("*") if p.is_file()) < 42_000


def test_rar_sample_verdicts(claims):
    assert {k: claims[k]["verdict"] for k in DECIDED} == DECIDED
    assert all(claims[k]["incomplete"] and claims[k]["seeds"] == [0, 1, 2, 3] for k in DECIDED)
    missing = {k for k, c in claims.items() if c["verdict"] == "missing"}
    assert missing == set(claims) - set(DECIDED)
    presets = ("paper", "contention")
    fig6 = {
        f"fig6-{reading}-{m}-{p}"
        for reading in ("regen", "nested")
        for m in ("sjf-bco", "ff", "ls")
        for p in presets
    }
    scarce = {
        f"scarce-{reading}-{b}-{p}"
        for reading in ("regen", "nested")
        for b in ("ff", "ls", "rand")
        for p in presets
    }
    largest = {
        f"fig6-ff-largest-drop-{reading}-{p}.{b}"
        for reading in ("regen", "nested")
        for p in presets
        for b in ("ls", "sjf_bco")
    }
    # the sample has neither sjf_bco_tightest's rows nor the scaling suite's
    tightest = {f"lemma{n}-tightest-{p}" for n in (2, 4) for p in presets}
    theorem6 = {"theorem6-jobs", "theorem6-cluster"}
    assert missing == fig6 | scarce | largest | tightest | theorem6
    note = claims["fig6-regen-ff-paper"]["note"]
    assert "group fig6" in note and "benchmarks/suites/rar-section7.toml" in note


def test_rar_sample_numbers_from_the_rows(claims, rows):
    # Fig. 4 (paper): SJF-BCO minus RAND's mean average JCT per seed, and its 95 % t-interval.
    diff = _per_seed(rows, "paper", "sjf_bco", "average_completion") - _per_seed(
        rows, "paper", "rand", "average_completion"
    )
    half = stats.t.ppf(0.975, len(diff) - 1) * diff.std(ddof=1) / np.sqrt(len(diff))
    numbers = claims["fig4-rand-jct-paper"]["numbers"]
    assert (numbers["pairs"], numbers["better"]) == (4, int((diff < 0).sum())) == (4, 4)
    assert numbers["mean"] == pytest.approx(diff.mean())
    assert numbers["half_width"] == pytest.approx(half)
    assert diff.mean() + half < 0
    # Fig. 4 (paper-contention): FF better / tie / worse in makespan.
    ff = _per_seed(rows, "paper-contention", "sjf_bco", "makespan") - _per_seed(
        rows, "paper-contention", "ff", "makespan"
    )
    counts = claims["fig4-ff-makespan-contention"]["numbers"]
    assert [counts[k] for k in ("better", "ties", "worse")] == [
        int((ff < 0).sum()),
        int((ff == 0).sum()),
        int((ff > 0).sum()),
    ]
    # Fig. 7 (paper-contention): the mean curve over lambda rises at its end.
    lam = [
        _per_seed(rows, "paper-contention", f"sjf_bco_lambda[lambda_={v}]", "makespan").mean()
        for v in (1.0, 2.0, 4.0, 8.0)
    ]
    assert claims["fig7-contention"]["numbers"]["means"] == pytest.approx(lam)
    assert lam[3] > lam[2]
    _check_rar_lemmas(claims, rows)
    # Theorem 5: SJF-BCO's makespan over the load bound stays within n_g phi u / l.
    for preset in ("paper", "paper-contention"):
        picked = rows[rows["preset"] == preset].set_index(["instance_seed", "label"])
        for seed in range(4):
            sjf = picked.loc[(seed, "sjf_bco")]
            bound = json.loads(sjf["info"])["theorem5"]["bound"]
            assert 1 <= sjf["objective"] / picked.loc[(seed, "load_lb"), "bound"] <= bound


def _check_rar_lemmas(claims: dict, rows: pd.DataFrame) -> None:
    """Lemmas 3-4 and Theorem 5's closest approach straight from the rows (pandas)."""
    sjf = rows[rows["label"] == "sjf_bco"].set_index(["preset", "instance_seed"])
    info = sjf["info"].map(json.loads)
    n_g = info.map(lambda i: i["theorem5"]["n_g"])
    w_max = info.map(lambda i: i["max_accumulated"])
    theta = info.map(lambda i: i["theta"])
    best = rows[rows["status"].isin(["optimal", "feasible"])]
    best = best.groupby(["preset", "instance_seed"])["objective"].min()
    factor = info.map(lambda i: i["theorem5"]["bound"]) / n_g
    for preset, tag in (("paper", "paper"), ("paper-contention", "contention")):
        lemma3 = (sjf["objective"] / (n_g * w_max)).loc[preset]
        assert claims[f"lemma3-{tag}"]["numbers"]["closest"] == pytest.approx(lemma3.max())
        lemma4 = (theta / (factor * best.reindex(sjf.index))).loc[preset]
        numbers = claims[f"lemma4-{tag}"]["numbers"]
        assert numbers["closest"] == pytest.approx(lemma4.max())
        assert numbers["failed"] == int((lemma4 > 1 + 1e-9).sum())
        lo = rows[(rows["preset"] == preset) & (rows["label"] == "load_lb")]
        ratio = sjf.loc[preset, "objective"] / lo.set_index("instance_seed")["bound"]
        bound = info.loc[preset].map(lambda i: i["theorem5"]["bound"])
        closest = claims[f"theorem5-{tag}"]["numbers"]["closest"]
        assert closest == pytest.approx((ratio / bound).max()) and closest < 0.5
