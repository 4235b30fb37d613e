"""Kind ``gain_compare`` (one speed-up against another per instance) and the ``row.COLUMN``
metric. Hand-made rows; every expected gain is recomputed from the rows with pandas (pivot
tables), not through the verdict code.
"""

from __future__ import annotations

import pandas as pd
import pytest
from test_bench_verdict import _row

from ddlsched.bench.claims import ClaimsError, load_claims
from ddlsched.bench.verdict import (
    DEPENDS,
    MISSING,
    NOT_REPRODUCED,
    REPRODUCED,
    evaluate_claim,
)

HEAD = '[paper]\nname = "hand"\n\n[[claims]]\nid = "c"\ntext = "t"\npaper_value = "v"\n'
HEAD += 'suite = "hand"\nseeds = [0]\n'

#: Two classes per trace: m1 against b1, b2 (durations unknown), m2 against b3 (known).
UNKNOWN = """kind = "gain_compare"
group = ["t1", "t2", "t3", "t4"]
method = "m1"
against = ["b1", "b2"]
other_method = "m2"
other_against = "b3"
expect = "above"
misses_allowed = 0
share_not = 0.25
"""

#: The same method and baseline on traces t1'-t4' (groups p1-p4) against t1-t4.
LOAD = """kind = "gain_compare"
group = ["p1", "p2", "p3", "p4"]
other_groups = ["t1", "t2", "t3", "t4"]
method = "m1"
against = "b1"
expect = "above"
misses_allowed = {misses}
share_not = 0.5
"""


def _claim(tmp_path, body: str):
    path = tmp_path / "claims.toml"
    path.write_text(HEAD + body)
    return load_claims(path).claims[0]


def _frame(values: dict[str, dict[str, float]]) -> pd.DataFrame:
    """One instance (seed 0) per group, each label's objective; the group's parameter
    ``trace`` differs per group (t1 and p1 are other instances)."""
    return pd.DataFrame(
        [
            _row(group, 0, label, value, inst={"trace": group})
            for group, labels in values.items()
            for label, value in labels.items()
        ]
    )


def _traces(m1_on_t3: float = 10.0) -> dict[str, dict[str, float]]:
    """m1's gain (b1 / m1 + b2 / m1) / 2 and m2's b3 / m2 per trace."""
    return {
        "t1": {"m1": 10.0, "b1": 30.0, "b2": 20.0, "m2": 10.0, "b3": 15.0},
        "t2": {"m1": 10.0, "b1": 40.0, "b2": 20.0, "m2": 10.0, "b3": 12.0},
        "t3": {"m1": m1_on_t3, "b1": 20.0, "b2": 20.0, "m2": 10.0, "b3": 18.0},
        "t4": {"m1": 5.0, "b1": 10.0, "b2": 10.0, "m2": 5.0, "b3": 6.0},
    }


def _gain_by_pandas(frame: pd.DataFrame, method: str, baselines: list[str]) -> pd.Series:
    table = frame.pivot_table(index="group", columns="label", values="objective")
    return sum(table[b] / table[method] for b in baselines) / len(baselines)


def test_larger_gain_on_every_trace_reproduces(tmp_path):
    claim = _claim(tmp_path, UNKNOWN)
    frame = _frame(_traces())
    verdict = evaluate_claim(frame, claim)
    mine = _gain_by_pandas(frame, "m1", ["b1", "b2"])
    theirs = _gain_by_pandas(frame, "m2", ["b3"])
    assert (mine > theirs).all()
    assert verdict.verdict == REPRODUCED
    assert verdict.numbers["gain"] == pytest.approx(list(mine))
    assert verdict.numbers["other_gain"] == pytest.approx(list(theirs))
    assert verdict.numbers["favourable"] == 4 and verdict.numbers["unfavourable"] == 0
    assert verdict.seeds == (0,)


def test_a_smaller_gain_on_one_trace_fails(tmp_path):
    # m1 = 12.5 on t3: gain (20 / 12.5) = 1.6 below m2's 1.8 there (share_not: 1 of 4).
    claim = _claim(tmp_path, UNKNOWN)
    frame = _frame(_traces(m1_on_t3=12.5))
    mine = _gain_by_pandas(frame, "m1", ["b1", "b2"])
    theirs = _gain_by_pandas(frame, "m2", ["b3"])
    assert (mine < theirs).sum() == 1
    verdict = evaluate_claim(frame, claim)
    assert verdict.verdict == NOT_REPRODUCED
    assert verdict.numbers["unfavourable"] == 1
    # expect = "below" turns the sides round: below on one trace of four, above on three.
    below = _claim(tmp_path, UNKNOWN.replace('expect = "above"', 'expect = "below"'))
    assert evaluate_claim(frame, below).verdict == NOT_REPRODUCED
    assert evaluate_claim(frame, below).numbers["favourable"] == 1


@pytest.mark.parametrize(("misses", "word"), [(0, DEPENDS), (1, REPRODUCED)])
def test_other_groups_pair_in_order(tmp_path, misses, word):
    # b1 / m1 on p1-p4 against t1-t4: above on p1, p2, p4; equal on p3 (a tie: neither side).
    traces = _traces()
    load = {
        "p1": {"m1": 10.0, "b1": 40.0},
        "p2": {"m1": 10.0, "b1": 50.0},
        "p3": {"m1": 10.0, "b1": 20.0},
        "p4": {"m1": 5.0, "b1": 11.0},
    }
    frame = _frame({**traces, **load})
    claim = _claim(tmp_path, LOAD.format(misses=misses))
    verdict = evaluate_claim(frame, claim)
    table = frame.pivot_table(index="group", columns="label", values="objective")
    gains = table["b1"] / table["m1"]
    expected = [gains[f"p{i}"] - gains[f"t{i}"] for i in range(1, 5)]
    assert [
        g - o for g, o in zip(verdict.numbers["gain"], verdict.numbers["other_gain"], strict=True)
    ] == pytest.approx(expected)
    assert verdict.numbers["favourable"] == 3 and verdict.numbers["unfavourable"] == 0
    assert verdict.verdict == word and verdict.note == ""
    # Without trace t4' the claim is decided on three pairs and says which group lacks rows.
    partial = evaluate_claim(frame[frame["group"] != "p4"], claim)
    assert partial.numbers["units"] == 3 and partial.note == "no rows of group(s) p4"


def test_missing_baseline_and_bad_fields(tmp_path):
    frame = _frame(_traces())
    claim = _claim(tmp_path, UNKNOWN.replace('other_against = "b3"', 'other_against = "b9"'))
    verdict = evaluate_claim(frame, claim)
    assert verdict.verdict == MISSING and "b9" in verdict.note
    with pytest.raises(ClaimsError, match="other_groups"):
        _claim(tmp_path, LOAD.format(misses=0).replace('"p4"]', "]", 1))
    with pytest.raises(ClaimsError, match="unknown field"):
        _claim(tmp_path, UNKNOWN + "range = [1, 2]\n")


def test_row_column_metric(tmp_path):
    """``metric = "row.runtime_s"`` reads the row's own time: one method 1000x slower."""
    rows = []
    for seed in range(3):
        rows.append(_row("g", seed, "fast", 5.0) | {"runtime_s": 0.001 * (seed + 1)})
        rows.append(_row("g", seed, "slow", 5.0) | {"runtime_s": 1.0 * (seed + 1)})
    body = (
        'kind = "ratio_within"\ngroup = "g"\nmethod = "slow"\nagainst = "fast"\n'
        'metric = "row.runtime_s"\nrange = [500.0, 2000.0]\n'
    )
    path = tmp_path / "claims.toml"
    path.write_text(HEAD.replace("seeds = [0]", "seeds = [0, 1, 2]") + body)
    verdict = evaluate_claim(pd.DataFrame(rows), load_claims(path).claims[0])
    assert verdict.verdict == REPRODUCED  # every ratio 1000: a t-interval of width 0
    assert verdict.numbers["ci"] == pytest.approx([1000.0, 1000.0])
