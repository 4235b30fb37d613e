"""Claims across methods and instances: ``holds`` as an inequality, curves of a ratio
(``against`` in ``monotone`` / ``shaped``), paired differences between two instances of one
window (``against_params``). Hand-made rows; every expected number is recomputed from the
rows with pandas (pivot tables), not through the verdict code.
"""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest
from scipy import stats
from test_bench_verdict import _row

from ddlsched.bench.claims import ClaimsError, load_claims
from ddlsched.bench.verdict import MISSING, NOT_REPRODUCED, REPRODUCED, evaluate_claim

HEAD = '[paper]\nname = "hand"\n\n[[claims]]\nid = "c"\ntext = "t"\npaper_value = "v"\n'
HEAD += 'suite = "hand"\nseeds = [0, 1, 2, 3]\n'


def _claim(tmp_path, body: str):
    path = tmp_path / "claims.toml"
    path.write_text(HEAD + body)
    return load_claims(path).claims[0]


LEMMA = """kind = "holds"
group = "g"
method = "h"
lhs = "objective"
offset = "info.x"
factor = "info.rho"
reference = "{reference}"
"""


def _lemma_rows(h2: float) -> pd.DataFrame:
    """h (two method seeds) on seeds 0-3, other methods o and lb; x undefined on seed 3."""
    rows = []
    for seed, (h, o, x) in enumerate([(10, 8, 1), (10, 12, 0), (h2, 9, 1), (50, 5, None)]):
        info = {"x": x, "rho": 2.0} if x is not None else {"rho": 2.0}
        rows.append(_row("g", seed, "h", float(h), info=info))
        rows.append(_row("g", seed, "h", float(h) - 1, info=info, method_seed=1))
        rows.append(_row("g", seed, "o", float(o)))
        rows.append(_row("g", seed, "lb", None, bound=6.0))
    return pd.DataFrame(rows)


def _lemma_by_pandas(frame: pd.DataFrame, reference: str) -> pd.Series:
    """Per row of h: lhs <= x + rho * (least objective / greatest bound of the seed)."""
    column = "objective" if reference == "best_schedule" else "bound"
    per_seed = frame.groupby("instance_seed")[column]
    best = per_seed.min() if reference == "best_schedule" else per_seed.max()
    h = frame[frame["label"] == "h"]
    info = h["info"].map(json.loads)
    x = info.map(lambda d: d.get("x")).astype(float)
    rhs = x + info.map(lambda d: d["rho"]) * h["instance_seed"].map(best)
    return (h["objective"] <= rhs).where(x.notna())


def _closest_by_pandas(frame: pd.DataFrame, reference: str) -> float:
    """The largest lhs / rhs over h's rows where x is defined (the closest approach)."""
    column = "objective" if reference == "best_schedule" else "bound"
    per_seed = frame.groupby("instance_seed")[column]
    best = per_seed.min() if reference == "best_schedule" else per_seed.max()
    h = frame[frame["label"] == "h"]
    info = h["info"].map(json.loads)
    x = info.map(lambda d: d.get("x")).astype(float)
    rhs = x + info.map(lambda d: d["rho"]) * h["instance_seed"].map(best)
    return float((h["objective"] / rhs)[x.notna()].max())


@pytest.mark.parametrize("reference", ["best_schedule", "best_bound"])
def test_holds_inequality(tmp_path, reference):
    """Seed 2's h = 30 exceeds 1 + 2 * 9 (best schedule), and 1 + 2 * 6 (best bound); with
    h = 13 it is within both (13 <= 13 by the bound: equality holds); seed 3 is undefined."""
    claim = _claim(tmp_path, LEMMA.format(reference=reference))
    for h2, expected in ((30.0, NOT_REPRODUCED), (13.0, REPRODUCED)):
        frame = _lemma_rows(h2)
        flags = _lemma_by_pandas(frame, reference)
        verdict = evaluate_claim(frame, claim)
        assert verdict.verdict == expected
        failed = int((flags == False).sum())  # noqa: E712 (NaN is neither)
        counts = {k: verdict.numbers[k] for k in ("rows", "failed", "undefined")}
        assert counts == {"rows": int(flags.notna().sum()), "failed": failed,
                          "undefined": int(flags.isna().sum())}  # fmt: skip
        assert verdict.numbers["closest"] == pytest.approx(_closest_by_pandas(frame, reference))
        assert (verdict.numbers["rows"], verdict.numbers["undefined"]) == (6, 2)
        assert verdict.incomplete  # seed 3 has no defined row
    # the best schedule is any method's: without o, seed 0's best is h's own 9
    without_o = _lemma_rows(13.0).query("label != 'o'")
    assert evaluate_claim(without_o, claim).verdict == REPRODUCED
    undefined = _lemma_rows(13.0).assign(info=json.dumps({"rho": 2.0}))
    missing = evaluate_claim(undefined, claim)
    assert missing.verdict == MISSING and "every operand defined" in missing.note


def test_holds_inequality_numbers_as_operands(tmp_path):
    """Numbers and metrics.KEY as operands: jct = objective / 2 <= 0 + 1 * 5.5 on seeds 0-1
    (objectives 10 and 9) fails on seed 2 (objective 30)."""
    body = 'kind = "holds"\ngroup = "g"\nmethod = "h"\nlhs = "metrics.jct"\nreference = 5.5\n'
    verdict = evaluate_claim(_lemma_rows(30.0), _claim(tmp_path, body))
    assert verdict.verdict == NOT_REPRODUCED
    counts = {k: verdict.numbers[k] for k in ("rows", "failed", "undefined")}
    assert counts == {"rows": 8, "failed": 4, "undefined": 0}  # seeds 2, 3 both rows
    assert verdict.numbers["closest"] == pytest.approx(50 / 2 / 5.5)  # seed 3's h = 50


#: Ratios m / w per share (0, 0.5, 1) and seed: rising on seeds 0-2, falling on seed 3.
RATIOS = {0: (0.5, 0.7, 0.9), 1: (0.6, 0.65, 0.95), 2: (0.4, 0.8, 0.85), 3: (0.9, 0.8, 0.7)}


def _curve_rows() -> pd.DataFrame:
    rows = []
    for seed, ratios in RATIOS.items():
        for share, ratio in zip((0.0, 0.5, 1.0), ratios, strict=True):
            inst = {"share": share, "n": 8}
            w = 10.0 + seed + 4 * share
            rows.append(_row("c", seed, "w", w, inst=inst))
            rows.append(_row("c", seed, "m", w * ratio, inst=inst))
            rows.append(_row("c", seed, "m[v=1]", 1000.0 - share, params={"v": 1}, inst=inst))
            for k in (1, 2):  # a method parameter swept: k[k=1], k[k=2] = w * ratio * k
                rows.append(_row("c", seed, f"k[k={k}]", w * ratio * k, params={"k": k}, inst=inst))
    return pd.DataFrame(rows)


def _ratio_table(frame: pd.DataFrame, label: str, index: list[str]) -> pd.DataFrame:
    frame = frame.assign(share=frame["instance_params"].map(lambda t: json.loads(t)["share"]))
    table = frame.pivot_table(index=index, columns="label", values="objective")
    return table[label].div(table["w"], axis=0).unstack("share")


def test_monotone_curve_of_a_ratio(tmp_path):
    """The mean of the per-seed ratios rises with the share by more than the tolerance; 3 of 4
    seeds rise (>= 0.75): reproduced. The variant m[v=1] is another method: not pooled."""
    body = 'kind = "monotone"\ngroup = "c"\nmethod = "m"\nagainst = "w"\nover = "share"\n'
    body += 'direction = "increasing"\nmean_strict = true\n'
    verdict = evaluate_claim(_curve_rows(), _claim(tmp_path, body))
    table = _ratio_table(_curve_rows(), "m", ["instance_seed", "share"])
    assert verdict.curve.means == pytest.approx(tuple(table.mean()))
    assert verdict.curve.xs == (0.0, 0.5, 1.0)
    rising = int((table.diff(axis=1).iloc[:, 1:] >= 0).all(axis=1).sum())
    assert verdict.numbers["seeds_with_shape"] == rising == 3
    assert verdict.verdict == REPRODUCED
    assert verdict.ours.startswith("m / w: mean ")
    # without against the curve is m's own sum (w grows with the share too)
    plain = evaluate_claim(_curve_rows(), _claim(tmp_path, body.replace('against = "w"\n', "")))
    own = _curve_rows().query("label == 'm'")
    own = own.assign(share=own["instance_params"].map(lambda t: json.loads(t)["share"]))
    assert plain.curve.means == pytest.approx(tuple(own.groupby("share")["objective"].mean()))
    assert evaluate_claim(_curve_rows().query("label != 'w'"), _claim(tmp_path, body)).verdict == (
        MISSING
    )


def test_shaped_curve_of_a_ratio_over_a_method_parameter(tmp_path):
    """Over k (a method parameter) the ratio k[k] / w on the instance doubles: one rise."""
    body = 'kind = "shaped"\ngroup = "c"\nmethod = "k"\nagainst = "w"\nover = "k"\n'
    body += 'moves = ["rise"]\nparams = { share = 0.5 }\n'
    verdict = evaluate_claim(_curve_rows(), _claim(tmp_path, body))
    mid = _ratio_table(_curve_rows(), "k[k=1]", ["instance_seed", "share"])[0.5]
    assert verdict.curve.means == pytest.approx((mid.mean(), 2 * mid.mean()))
    assert verdict.verdict == REPRODUCED


def _predictor_rows() -> pd.DataFrame:
    """a at pred = rf: 10 + s; at mean: + (1, 2, -0.5, 1.5); at median: 100 (never read);
    b at rf: 10 + s - 1."""
    rows = []
    for seed, gap in enumerate((1.0, 2.0, -0.5, 1.5)):
        for pred, a in (("rf", 10.0 + seed), ("mean", 10.0 + seed + gap), ("median", 100.0)):
            rows.append(_row("p", seed, "a", a, inst={"pred": pred, "n": 5}))
        rows.append(_row("p", seed, "b", 9.0 + seed, inst={"pred": "rf", "n": 5}))
    return pd.DataFrame(rows)


PAIRED = """kind = "paired_difference"
group = "p"
method = "a"
params = { pred = "mean" }
against_params = { pred = "rf" }
expect = "above"
"""


def test_paired_difference_against_other_params(tmp_path):
    """a at pred = mean minus a (or b) at pred = rf on the same seed: the t-interval of the
    differences; 3 of 4 above 0."""
    frame = _predictor_rows()
    frame = frame.assign(pred=frame["instance_params"].map(lambda t: json.loads(t)["pred"]))
    table = frame.pivot_table(index="instance_seed", columns=["label", "pred"], values="objective")
    for against, body in ((("a", "rf"), PAIRED), (("b", "rf"), PAIRED + 'against = "b"\n')):
        verdict = evaluate_claim(_predictor_rows(), _claim(tmp_path, body))
        diffs = table[("a", "mean")] - table[against]
        half = stats.t.ppf(0.975, len(diffs) - 1) * diffs.std(ddof=1) / len(diffs) ** 0.5
        assert verdict.numbers["mean"] == pytest.approx(diffs.mean())
        assert verdict.numbers["half_width"] == pytest.approx(half)
        better = int((diffs > 0).sum())
        assert (verdict.numbers["better"], verdict.numbers["pairs"]) == (better, 4)
        decided = REPRODUCED if diffs.mean() - half > 0 else "depends on seeds"
        assert verdict.verdict == decided
    assert evaluate_claim(_predictor_rows(), _claim(tmp_path, PAIRED)).verdict == "depends on seeds"
    no_rf = _predictor_rows()[~_predictor_rows()["instance_params"].str.contains('"rf"')]
    missing = evaluate_claim(no_rf, _claim(tmp_path, PAIRED))
    assert missing.verdict == MISSING and "a at pred=rf" in missing.note


BAD = {
    "both": ('flag = "info.ok"\nlhs = "objective"\nreference = 1\n', "(c).flag: give either flag or lhs"),
    "neither": ("", "(c).flag: give either flag or lhs"),
    "reference": ('lhs = "objective"\n', "(c).reference: missing"),
    "operand": ('lhs = "objectives"\nreference = 1\n', "(c).lhs: expected a number, objective"),
    "info": ('lhs = "info."\nreference = 1\n', "(c).lhs: expected a number"),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(BAD))
def test_malformed_inequalities(tmp_path, case):
    body, message = BAD[case]
    with pytest.raises(ClaimsError, match=re.escape(message)):
        _claim(tmp_path, f'kind = "holds"\ngroup = "g"\nmethod = "h"\n{body}')


#: case: (text of PAIRED replaced, its replacement, the error).
BAD_PAIRED = {
    "unfixed": ('params = { pred = "mean" }\n', "", "against_params.pred: must change a parameter"),
    "same": ('pred = "mean"', 'pred = "rf"', "against_params.pred: must change a parameter"),
    "against": ('against_params = { pred = "rf" }\n', "", "(c).against: missing"),
    "table": ('{ pred = "rf" }', '"rf"', "(c).against_params: expected a table"),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(BAD_PAIRED))
def test_malformed_against_params(tmp_path, case):
    old, replacement, message = BAD_PAIRED[case]
    assert old in PAIRED
    with pytest.raises(ClaimsError, match=re.escape(message)):
        _claim(tmp_path, PAIRED.replace(old, replacement))


def _server_rows() -> pd.DataFrame:
    """f and s on seeds 0-3 at n = 10 and 20 (and 15, never read): f falls by 40 + seed,
    s by 30 + 4 * seed (f's drop the larger on every seed; relative to its start, f's is
    the smaller on seeds 2-3)."""
    rows = []
    for seed in range(4):
        for n, f, s in ((10, 100.0, 90.0), (15, 500.0, 500.0), (20, 60.0 - seed, 60.0 - 4 * seed)):
            rows.append(_row("p", seed, "f", f, inst={"n": n}))
            rows.append(_row("p", seed, "s", s, inst={"n": n}))
    return pd.DataFrame(rows)


CHANGE = """kind = "paired_difference"
group = "p"
method = "f"
against = "s"
params = { n = 20 }
against_params = { n = 10 }
change = true
"""


def test_paired_difference_of_changes(tmp_path):
    """f's change from n = 10 to n = 20 minus s's, per seed (relative: of the ratios - 1),
    recomputed from a pivot table; a plain paired difference with against_params reads s
    at n = 10 instead; no row at n = 10: missing."""
    frame = _server_rows()
    frame = frame.assign(n=frame["instance_params"].map(lambda t: json.loads(t)["n"]))
    table = frame.pivot_table(index="instance_seed", columns=["label", "n"], values="objective")
    for relative in (False, True):
        body = CHANGE + ("relative = true\n" if relative else "")
        verdict = evaluate_claim(_server_rows(), _claim(tmp_path, body))
        if relative:
            diffs = table[("f", 20)] / table[("f", 10)] - table[("s", 20)] / table[("s", 10)]
        else:
            diffs = (table[("f", 20)] - table[("f", 10)]) - (table[("s", 20)] - table[("s", 10)])
        assert verdict.numbers["mean"] == pytest.approx(diffs.mean())
        lower = int((diffs < -1e-9).sum())
        assert (verdict.numbers["better"], verdict.numbers["pairs"]) == (lower, 4)
    plain = evaluate_claim(_server_rows(), _claim(tmp_path, CHANGE.replace("change = true\n", "")))
    assert plain.numbers["mean"] == pytest.approx((table[("f", 20)] - table[("s", 10)]).mean())
    no_start = _server_rows()[~_server_rows()["instance_params"].str.contains('"n": 10')]
    assert evaluate_claim(no_start, _claim(tmp_path, CHANGE)).verdict == MISSING


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("against_params = { n = 10 }\n", "", "(c).change: needs against_params"),
        ('against = "s"\n', "", "(c).against: missing"),
        ("change = true", "change = 1", "(c).change: expected true or false"),
    ],
)
def test_malformed_change(tmp_path, old, new, message):
    assert old in CHANGE
    with pytest.raises(ClaimsError, match=re.escape(message)):
        _claim(tmp_path, CHANGE.replace(old, new))
