"""Claims over every baseline and bounds that say how tight they are.

Kind ``lowest`` (the method below every baseline on every instance), ``against`` as a list
(one claim per baseline) and ``against_worst`` (the ratio to the worst baseline), the
*vacuous* verdict of a bound never approached, ``rule_written`` / ``confirmation``, the
per-paper count line and the count of distinct instances. Hand-made rows; every expected
number is recomputed from the rows with pandas, not through the verdict code.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from test_bench_verdict import _row

from ddlsched.bench.claims import ClaimsError, load_claims
from ddlsched.bench.verdict import (
    DEPENDS,
    NOT_REPRODUCED,
    REPRODUCED,
    VACUOUS,
    evaluate_claim,
    evaluate_claims,
)
from ddlsched.bench.verdict_report import count_line

ROOT = Path(__file__).resolve().parents[1]
HEAD = '[paper]\nname = "hand"\n\n[[claims]]\nid = "c"\ntext = "t"\npaper_value = "v"\n'
HEAD += 'suite = "hand"\ngroup = "g"\nseeds = [0, 1, 2, 3]\n'


def _claims(tmp_path, body: str):
    path = tmp_path / "claims.toml"
    path.write_text(HEAD + body)
    return load_claims(path).claims


#: Per seed: the method a and baselines b, c. a is below b everywhere; c is below a on seeds 1
#: and 3 (by 5), above on seeds 0 and 2 (by 1): the Philly case, a baseline lower on average.
VALUES = {0: (10, 12, 11), 1: (10, 13, 5), 2: (10, 11, 11), 3: (10, 12, 5)}


def _frame(values=VALUES) -> pd.DataFrame:
    rows = []
    for seed, (a, b, c) in values.items():
        rows += [_row("g", seed, "a", a), _row("g", seed, "b", b), _row("g", seed, "c", c)]
    return pd.DataFrame(rows)


LOWEST = 'kind = "lowest"\nmethod = "a"\nagainst = ["b", "c"]\n'


def test_lowest_fails_where_a_baseline_is_lower(tmp_path):
    claim = _claims(tmp_path, LOWEST)[0]
    frame = _frame()
    verdict = evaluate_claim(frame, claim)
    table = frame.pivot_table(index="instance_seed", columns="label", values="objective")
    lowest = (table["a"] < table[["b", "c"]].min(axis=1)).sum()
    assert verdict.numbers["wins"] == lowest == 2 and verdict.numbers["units"] == 4
    # a - c has mean (-1 + 5 - 1 + 5) / 4 = 2 > 0, but its t-interval straddles 0: not certain
    assert verdict.numbers["baselines"]["c"]["mean"] == pytest.approx(
        (table["a"] - table["c"]).mean()
    )
    assert verdict.numbers["baselines"]["c"]["lower_on"] == int((table["c"] < table["a"]).sum())
    assert verdict.verdict == DEPENDS  # lowest on 2 of 4 (> 25 %), no certain loss
    assert "c lower on 2" in verdict.ours
    # c lower on every seed: its interval lies wholly above 0 -> not reproduced
    lower = {s: (10, 12, 5 + 0.1 * s) for s in range(4)}
    assert evaluate_claim(_frame(lower), claim).verdict == NOT_REPRODUCED
    # a lowest everywhere -> reproduced; one tie with a baseline is not "lowest"
    best = {s: (10, 12, 11 + s) for s in range(4)}
    assert evaluate_claim(_frame(best), claim).verdict == REPRODUCED
    tie = {**best, 2: (11, 12, 11)}
    assert evaluate_claim(_frame(tie), claim).verdict == DEPENDS
    # expect = above: c the highest? no; b the highest of (b, a) on every seed
    (above,) = _claims(
        tmp_path, 'kind = "lowest"\nmethod = "b"\nagainst = ["a"]\nexpect = "above"\n'
    )
    assert evaluate_claim(_frame(), above).verdict == REPRODUCED


def test_against_list_expands_into_one_claim_per_baseline(tmp_path):
    body = 'kind = "paired_difference"\ntext = "a below {against}"\nmethod = "a"\n'
    body += 'against = ["b", "c"]\n'
    path = tmp_path / "claims.toml"
    path.write_text(HEAD.replace('text = "t"\n', "") + body)
    claims = load_claims(path).claims
    assert [c.id for c in claims] == ["c.b", "c.c"]
    assert [c.text for c in claims] == ["a below b", "a below c"]
    verdicts = {v.claim.id: v.verdict for v in evaluate_claims(_frame(), claims)}
    assert verdicts == {"c.b": REPRODUCED, "c.c": DEPENDS}
    with pytest.raises(ClaimsError, match="compares with one method"):
        _claims(tmp_path, 'kind = "monotone"\nmethod = "a"\nover = "x"\nagainst = ["b", "c"]\n')


def test_against_worst_reads_the_largest_baseline(tmp_path):
    body = 'kind = "ratio_within"\nmethod = "a"\nagainst = ["b", "c"]\nagainst_worst = true\n'
    body += "range = [0.7, 0.95]\n"
    (claim,) = _claims(tmp_path, body)
    frame = _frame()
    table = frame.pivot_table(index="instance_seed", columns="label", values="objective")
    ratio = table["a"] / table[["b", "c"]].max(axis=1)
    verdict = evaluate_claim(frame, claim)
    assert verdict.numbers["mean_lo"] == pytest.approx(ratio.mean())
    assert verdict.verdict == REPRODUCED  # 10/12, 10/13, 10/11, 10/12: CI within [0.7, 0.95]


BOUND = 'kind = "holds"\nmethod = "a"\nlhs = "objective"\nreference = "info.cap"\n'


def test_a_bound_never_approached_is_vacuous(tmp_path):
    (claim,) = _claims(tmp_path, BOUND)
    rows = [_row("g", s, "a", 10.0, info={"cap": cap}) for s, cap in enumerate((40, 25, 30, 50))]
    verdict = evaluate_claim(pd.DataFrame(rows), claim)
    assert verdict.verdict == VACUOUS and verdict.numbers["closest"] == pytest.approx(10 / 25)
    assert verdict.shown.startswith("vacuous (holds; closest lhs/rhs 0.4)")
    close = [_row("g", s, "a", 10.0, info={"cap": cap}) for s, cap in enumerate((11, 25, 30, 50))]
    held = evaluate_claim(pd.DataFrame(close), claim)
    assert held.verdict == REPRODUCED and held.shown.startswith("reproduced (closest lhs/rhs 0.909")
    (strict,) = _claims(tmp_path, BOUND + "vacuous_below = 0.3\n")
    assert evaluate_claim(pd.DataFrame(rows), strict).verdict == REPRODUCED
    # divisor: objective <= cap / 5 fails on every seed
    (divided,) = _claims(tmp_path, BOUND + "divisor = 5\n")
    failed = evaluate_claim(pd.DataFrame(rows), divided)
    assert failed.verdict == NOT_REPRODUCED and failed.numbers["closest"] == pytest.approx(2.0)


def test_rule_written_needs_a_confirmation_after_the_rows(tmp_path):
    body = 'kind = "lowest"\nmethod = "a"\nagainst = ["b"]\nrule_written = "after"\n'
    with pytest.raises(ClaimsError, match="confirmation"):
        _claims(tmp_path, body)
    (claim,) = _claims(tmp_path, body + 'confirmation = "seeds 4-7, 2026-11-28"\n')
    assert (claim.rule_written, claim.confirmation) == (
        "after",
        "on fresh seeds: seeds 4-7, 2026-11-28",
    )
    (claim,) = _claims(tmp_path, body + 'no_fresh_seeds = "a fixed trace"\n')
    assert claim.confirmation == "no fresh seeds: a fixed trace"
    (claim,) = _claims(tmp_path, body + 'unconfirmed = "run seeds 4-7"\n')
    assert claim.confirmation == "NOT confirmed yet: run seeds 4-7"
    with pytest.raises(ClaimsError, match="give one of"):
        _claims(tmp_path, body + 'unconfirmed = "x"\nno_fresh_seeds = "y"\n')
    with pytest.raises(ClaimsError, match="before, after"):
        _claims(tmp_path, body.replace('"after"', '"later"'))


@pytest.mark.parametrize("paper", ["asrpt", "dmlrs", "muri", "placement", "rar"])
def test_every_committed_claim_says_when_its_rule_was_written(paper):
    claims = load_claims(ROOT / "benchmarks" / "claims" / f"{paper}.toml").claims
    assert all(c.rule_written in ("before", "after") for c in claims)
    assert all(c.confirmation for c in claims if c.rule_written == "after")


def test_count_line_and_distinct_instances(tmp_path):
    claims = _claims(tmp_path, LOWEST) + _claims(tmp_path, BOUND)
    rows = [_row("g", s, "a", 10.0, info={"cap": 100.0}) for s in range(4)]
    rows += [_row("g", s, "b", 12.0) for s in range(4)]  # seeds 0-3: one instance, four times
    verdicts = evaluate_claims(pd.DataFrame(rows), claims)
    assert count_line("hand", verdicts) == (
        "hand: reproduced 0 / not 0 / depends 0 / vacuous 1 / missing 1 (2 claims)"
    )
    assert verdicts[1].instances == (4, 1)
    assert "1 distinct instances among 4" in verdicts[1].note
    assert json.loads(json.dumps(list(verdicts[1].instances))) == [4, 1]
