"""Kind ``scaling``: the log-log slope of a running time against the paper's exponent.
Hand-made rows whose times are powers of the size; the expected slopes are recomputed with
numpy from the rows, not through the verdict code.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from test_bench_verdict import _row

from ddlsched.bench.claims import ClaimsError, load_claims
from ddlsched.bench.verdict import (
    DEPENDS,
    MISSING,
    NOT_REPRODUCED,
    REPRODUCED,
    evaluate_claim,
)
from ddlsched.bench.verdict_scaling import log_log_slope

HEAD = '[paper]\nname = "hand"\n\n[[claims]]\nid = "c"\ntext = "t"\npaper_value = "v"\n'
HEAD += 'suite = "hand"\nseeds = [0, 1, 2]\ngroup = "g"\nmethod = "h"\nkind = "scaling"\n'
SIZES = (100, 200, 400, 800)


def _claim(tmp_path, body: str):
    path = tmp_path / "claims.toml"
    path.write_text(HEAD + body)
    return load_claims(path).claims[0]


def _rows(powers: dict[int, float], *, over_param: bool = False) -> pd.DataFrame:
    """h on seeds 0-2 at four sizes: runtime_s = 0.001 size ** power of the seed; a second
    method seed with twice the time (the mean over method seeds is 1.5 times it)."""
    rows = []
    for seed, power in powers.items():
        for size in SIZES:
            inst = {"n": size} if over_param else {}
            for method_seed, scale in ((0, 1.0), (1, 2.0)):
                row = _row("g", seed, "h", 1.0, inst=inst, method_seed=method_seed)
                row.update(instance_size=size, runtime_s=scale * 1e-3 * size**power)
                row["key"] += f"/{size}"
                rows.append(row)
    return pd.DataFrame(rows)


def test_log_log_slope_is_the_least_squares_exponent():
    assert log_log_slope([1, 2, 4], [3, 12, 48]) == pytest.approx(2.0)
    assert np.isnan(log_log_slope([5, 5], [1, 2]))


@pytest.mark.parametrize(
    ("powers", "exponent", "expected"),
    [
        ({0: 1.0, 1: 1.02, 2: 0.98}, 1.12, REPRODUCED),
        ({0: 1.5, 1: 1.55, 2: 1.45}, 1.12, NOT_REPRODUCED),
        ({0: 0.6, 1: 1.0, 2: 1.6}, 1.12, DEPENDS),
    ],
)
def test_scaling_rule(tmp_path, powers, exponent, expected):
    claim = _claim(
        tmp_path, f'metric = "runtime_s"\nover = "instance_size"\nexponent = {exponent}\n'
    )
    frame = _rows(powers)
    verdict = evaluate_claim(frame, claim)
    assert verdict.verdict == expected
    # The per-seed slopes and their t-interval, from the rows (mean over method seeds).
    per_point = frame.groupby(["instance_seed", "instance_size"])["runtime_s"].mean()
    slopes = {
        seed: np.polyfit(np.log(SIZES), np.log(per_point.loc[seed].to_numpy()), 1)[0]
        for seed in powers
    }
    values = np.array(list(slopes.values()))
    half = stats.t.ppf(0.975, len(values) - 1) * values.std(ddof=1) / np.sqrt(len(values))
    assert verdict.numbers["seed_slopes"] == pytest.approx(slopes)
    assert verdict.numbers["mean"] == pytest.approx(values.mean())
    assert verdict.numbers["half_width"] == pytest.approx(half)
    median = per_point.groupby("instance_size").median()
    fitted = np.polyfit(np.log(SIZES), np.log(median.to_numpy()), 1)[0]
    assert verdict.numbers["exponent"] == pytest.approx(fitted)
    assert f"exponent {fitted:.3g}" in verdict.ours and "the paper's 1.12" in verdict.ours


def test_scaling_over_a_generator_parameter_and_a_metric(tmp_path):
    claim = _claim(tmp_path, 'metric = "jct"\nover = "n"\nexponent = 0.5\n')
    frame = _rows({0: 1.0, 1: 1.0, 2: 1.0}, over_param=True)
    # _row's metric jct is objective / 2 = 0.5 at every size: slope 0, at or below 0.5.
    verdict = evaluate_claim(frame, claim)
    assert verdict.verdict == REPRODUCED
    assert verdict.numbers["exponent"] == pytest.approx(0.0)


def test_scaling_without_two_sizes_is_missing(tmp_path):
    claim = _claim(tmp_path, 'metric = "runtime_s"\nover = "instance_size"\nexponent = 1.0\n')
    frame = _rows({0: 1.0})
    frame = frame[frame["instance_size"] == SIZES[0]]
    assert evaluate_claim(frame, claim).verdict == MISSING
    assert evaluate_claim(frame.iloc[0:0], claim).verdict == MISSING


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ('over = "instance_size"\n', "exponent"),
        ("exponent = 1.0\n", "over"),
        ('over = "instance_size"\nexponent = -1\n', "exponent"),
        ('over = "instance_size"\nexponent = "fast"\n', "exponent"),
        ('over = "instance_size"\nexponent = 1.0\nagainst = "x"\n', "against"),
    ],
)
def test_scaling_claims_are_checked(tmp_path, body, field):
    with pytest.raises(ClaimsError) as exc:
        _claim(tmp_path, body)
    assert f".{field}" in str(exc.value)


def test_rar_theorem6_claims_read_the_scaling_suite():
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    claims = {c.id: c for c in load_claims(root / "benchmarks/claims/rar.toml").claims}
    for cid, exponent in (("theorem6-jobs", 1.12), ("theorem6-cluster", 2.14)):
        claim = claims[cid]
        assert claim.kind == "scaling" and claim.suites == ("rar-scaling",)
        assert claim.option("exponent") == exponent and claim.metric == "runtime_s"
    # The paper's order at the swept sizes (m = 1-16, 160 m jobs): J log T with T = 1200 m,
    # and J N log N with N = 336 m, as least-squares log-log slopes.
    m = np.array([1, 2, 4, 8, 16.0])
    jobs = np.polyfit(np.log(160 * m), np.log(m * np.log(1200 * m)), 1)[0]
    cluster = np.polyfit(np.log(160 * m), np.log(m * 336 * m * np.log(336 * m)), 1)[0]
    assert (round(jobs, 2), round(cluster, 2)) == (1.12, 2.14)
    assert json.dumps(claims["theorem6-jobs"].seeds) == "[0, 1, 2]"
