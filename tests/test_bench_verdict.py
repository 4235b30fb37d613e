"""``ddlsched bench verdict``: claims files, verdicts on hand-made rows, provenance, errors.

The rows are written through the bench store (no committed results); every
expected verdict is worked out by hand in the comments from the numbers below.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest

from ddlsched.bench.claims import ClaimsError, load_claims
from ddlsched.bench.store import ResultStore
from ddlsched.bench.tables import load_results
from ddlsched.bench.verdict import (
    MISSING,
    NOT_REPRODUCED,
    REPRODUCED,
    evaluate_claims,
    move_signs,
    t_interval,
)
from ddlsched.cli import main

SEEDS = range(6)


def _row(group, seed, label, objective, *, params=None, inst=None, method_seed=0, **extra):
    inst = inst or {}
    status = "bound_only" if objective is None else "feasible"
    return {
        "key": f"{group}/{seed}/{json.dumps(inst)}/{label}/{method_seed}",
        "suite": "hand",
        "family": "hand",
        "group": group,
        "preset": "p",
        "instance_seed": seed,
        "instance_params": json.dumps(inst),
        "instance_id": f"{group}/s{seed}/{json.dumps(inst)}",
        "instance_key": f"{group}/{seed}/{json.dumps(inst)}",
        "instance_size": 3,
        "method": label.split("[")[0],
        "label": label,
        "kind": "bound" if objective is None else "heuristic",
        "params": json.dumps(params or {}),
        "seed": method_seed,
        "sense": "min",
        "status": status,
        "objective": objective,
        "bound": extra.get("bound"),
        "runtime_s": 0.1,
        "metrics": json.dumps({"jct": objective / 2} if objective is not None else {}),
        "info": json.dumps(extra.get("info", {})),
        "versions": json.dumps({"ddlsched": extra.get("version", "hand"), "highspy": "1.0"}),
        "ddlsched_version": extra.get("version", "hand"),
        "finished_at": "2026-01-01T00:00:00",
    }


def _rows(version: str = "hand") -> list[dict]:
    """Group g4: a = 10 + 0.1 s; b (two method seeds, mean a + 1 + 0.1 (s % 2)); c = a but
    seed 0 (a + 1); d = a + (2, -1, 2, -1, 2, -1); a bound lb = 6; a sweep s[k] over k.
    Group g6: a over n = 2, 3, 4: (9, 6, 3) on seeds 0-2, (6, 9, 3) on seeds 3-5; e = a + 1
    but at n = 4 on seed 0 (a - 1)."""
    rows = []
    for s in SEEDS:
        a = 10 + 0.1 * s
        rows.append(_row("g4", s, "a", a, info={"cap": 2.0}, version=version))
        rows.append(_row("g4", s, "b", a + 1, version=version))
        rows.append(_row("g4", s, "b", a + 1 + 0.2 * (s % 2), method_seed=1, version=version))
        rows.append(_row("g4", s, "c", a + (1 if s == 0 else 0), version=version))
        rows.append(_row("g4", s, "d", a + (2 if s % 2 == 0 else -1), version=version))
        rows.append(_row("g4", s, "lb", None, bound=6.0, version=version))
        curve = (10, 9, 8, 7) if s == 5 else (10, 8, 9, 7)
        for k, value in zip((1, 2, 4, 8), curve, strict=True):
            rows.append(_row("g4", s, f"s[k={k}]", value, params={"k": k}, version=version))
        curve = (9, 6, 3) if s < 3 else (6, 9, 3)
        for n, value in zip((2, 3, 4), curve, strict=True):
            rows.append(_row("g6", s, "a", value, inst={"n": n}, version=version))
            other = value + (-1 if n == 4 and s == 0 else 1)
            rows.append(_row("g6", s, "e", other, inst={"n": n}, version=version))
    return rows


CLAIMS = """
[paper]
name = "hand"
title = "A hand-made paper"

[defaults]
suite = "hand"
group = "g4"
seeds = { first = 0, count = 6 }

[[claims]]
id = "better-b"      # diffs -(1 + 0.1 (s % 2)): CI below 0
text = "a below b"
paper_value = "a better"
kind = "paired_difference"
method = "a"
against = "b"

[[claims]]
id = "better-c"      # diffs (-1, 0, 0, 0, 0, 0): CI holds 0, a better on 1 <= 25 % of 6
text = "a below c"
paper_value = "a better"
kind = "paired_difference"
method = "a"
against = "c"

[[claims]]
id = "better-d"      # diffs (-2, 1, ...): mean -0.5 +- 1.72, a better on 3 of 6
text = "a below d"
paper_value = "a better"
kind = "paired_difference"
method = "a"
against = "d"
metric = "jct"

[[claims]]
id = "fig9"
text = "a group no suite ran"
paper_value = "a better"
kind = "paired_difference"
group = "g9"
method = "a"
against = "b"

[[claims]]
id = "disjoint"      # b has rows in g4 only, e in g6 only: no instance to pair
text = "b below e"
paper_value = "b better"
kind = "pointwise"
group = ["g4", "g6"]
method = "b"
against = "e"

[[claims]]
id = "more-seeds"
text = "a below b on 8 seeds"
paper_value = "a better"
kind = "paired_difference"
method = "a"
against = "b"
seeds = { first = 0, count = 8 }

[[claims]]
id = "shape"         # 5 of 6 seeds drop-rise-drop; mean 10, 8.17, 8.83, 7 too
text = "s over k drops, rises, drops"
paper_value = "drop, rise, drop"
kind = "shaped"
method = "s"
over = "k"
moves = ["drop", "rise", "drop"]

[[claims]]
id = "down"          # mean 7.5, 7.5, 3 non-increasing; rho <= -0.8 on 3 of 6 seeds
text = "a decreases in n"
paper_value = "decreasing"
kind = "monotone"
group = "g6"
method = "a"
over = "n"
seed_test = "rank"

[[claims]]
id = "up"            # the mean does not rise; no seed has rho >= 0.8
text = "a increases in n"
paper_value = "increasing"
kind = "monotone"
group = "g6"
method = "a"
over = "n"
direction = "increasing"
seed_test = "rank"

[[claims]]
id = "points"        # a below e on every seed at n = 2, 3; mixed at n = 4: one miss allowed
text = "a below e at every n"
paper_value = "a better"
kind = "pointwise"
group = ["g6"]
method = "a"
against = "e"

[[claims]]
id = "points-strict" # no miss allowed, none the other side: depends on seeds
text = "a below e at every n"
paper_value = "a better"
kind = "pointwise"
group = "g6"
method = "a"
against = "e"
misses_allowed = 0

[[claims]]
id = "points-above"  # the other side at 2 of 3 points >= ceil(0.75)
text = "a above e at every n"
paper_value = "a worse"
kind = "pointwise"
group = "g6"
method = "a"
against = "e"
expect = "above"

[[claims]]
id = "bound"         # best schedule 7 (s), lb = 6: ratio [a / 7, a / 6] in [1.4, 1.75] <= cap 2
text = "a within cap of the optimum"
paper_value = "ratio <= cap"
kind = "ratio_within"
method = "a"
against = "optimum"
range = [1.0, "info.cap"]

[[claims]]
id = "ratio-b"       # a / b about 0.91: the interval lies below 1
text = "a / b in [1, 1.1]"
paper_value = "1 to 1.1"
kind = "ratio_within"
method = "a"
against = "b"
range = [1.0, 1.1]
"""

EXPECTED = {
    "better-b": "reproduced",
    "better-c": "not reproduced",
    "better-d": "depends on seeds",
    "fig9": "missing",
    "disjoint": "missing",
    "more-seeds": "reproduced",
    "shape": "reproduced",
    "down": "depends on seeds",
    "up": "not reproduced",
    "points": "reproduced",
    "points-strict": "depends on seeds",
    "points-above": "not reproduced",
    "bound": "reproduced",
    "ratio-b": "not reproduced",
}


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("verdict") / "results"
    store = ResultStore(out)
    store.extend(_rows())
    store.flush()
    manifest = {"suite": "hand", "suite_file": "hand.toml", "suite_sha256": "ab" * 32,
                "versions": {"ddlsched": "hand"}, "git": {"commit": "c0ffee" * 6, "dirty": False},
                "machine": {"hostname": "box", "platform": "Linux", "cpu_count": 2},
                "runs": [{"started_at": "2026-01-01T00:00:00", "finished_at": "2026-01-01T01:00:00",
                          "load_at_start": 0.5, "load_at_end": 2.04, "rows_written": 5},
                         {"started_at": "2026-01-01T02:00:00", "finished_at": "2026-01-01T03:00:00",
                          "rows_written": 3},
                         {"started_at": "2026-01-01T04:00:00", "finished_at": "2026-01-01T04:00:01",
                          "load_at_start": 9.0, "load_at_end": 9.0, "rows_written": 0}]}  # fmt: skip
    store.write_manifest(manifest)
    return out


@pytest.fixture(scope="module")
def claims_path(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("claims") / "hand.toml"
    path.write_text(CLAIMS)
    return path


def test_verdicts_by_hand(results, claims_path):
    claims = load_claims(claims_path)
    verdicts = {v.claim.id: v for v in evaluate_claims(load_results(results), claims.claims)}
    assert {name: v.verdict for name, v in verdicts.items()} == EXPECTED
    assert verdicts["more-seeds"].incomplete and verdicts["more-seeds"].seeds == tuple(SEEDS)
    assert "(incomplete: 6/8 seeds)" in verdicts["more-seeds"].shown
    assert not verdicts["better-b"].incomplete
    better = verdicts["better-c"].numbers
    assert (better["better"], better["ties"], better["worse"]) == (1, 5, 0)
    assert verdicts["better-d"].numbers["mean"] == pytest.approx(-0.25)  # jct = objective / 2
    assert verdicts["shape"].numbers["seeds_with_shape"] == 5
    assert verdicts["shape"].curve.means == pytest.approx((10, 49 / 6, 53 / 6, 7))
    assert verdicts["down"].numbers["seeds_with_shape"] == 3
    assert "benchmarks/suites/hand.toml" in verdicts["fig9"].note
    points = verdicts["points"].numbers
    assert (points["points"], points["favourable"], points["unfavourable"]) == (3, 2, 0)


def test_t_interval_and_moves():
    mean, half = t_interval([1.0, 2.0, 3.0])
    assert mean == 2.0 and half == pytest.approx(4.302653 * 1.0 / 3**0.5, rel=1e-6)
    assert t_interval([5.0])[1] == float("inf")
    assert move_signs([10, 8, 8.01, 9, 7], tol=0.05) == [-1, 1, -1]
    assert move_signs([3, 3, 3]) == []


def test_cli_writes_tables_figures_and_provenance(results, claims_path, tmp_path, capsys):
    out = tmp_path / "verdict"
    args = ["bench", "verdict", str(results), "--claims", str(claims_path), "--out", str(out)]
    assert main([*args, "--format", "markdown"]) == 0
    printed = capsys.readouterr().out
    for name, verdict in EXPECTED.items():
        line = next(t for t in printed.splitlines() if t.startswith(f"| {name}:"))
        assert f"| {verdict} |" in line or f"| {verdict} (" in line, line
    assert "commit c0ffeec0ffee" in printed and "sha256 abababababab" in printed
    assert "highspy 1.0" in printed and "box (Linux, 2 CPUs)" in printed
    # the load at the starts and ends of the runs that wrote rows (the one that wrote none,
    # at load 9, is not one of them), and how many of those recorded none
    assert "to 2026-01-01T04:00:01, load 0.5-2.0 (1-minute average" in printed
    assert "not recorded for 1 of those 2 runs)" in printed
    assert body_load(out) == {"range": [0.5, 2.04], "runs": 2, "unrecorded": 1}
    assert (out / "verdict.md").read_text() == printed
    latex = (out / "verdict.tex").read_text()
    assert r"\toprule" in latex and r"\bottomrule" in latex and "better-b" in latex
    body = json.loads((out / "verdict.json").read_text())
    assert {v["claim"]: v["verdict"] for v in body["verdicts"]} == EXPECTED
    assert body["provenance"]["results"][0]["git"]["commit"] == "c0ffee" * 6
    figures = sorted(p.name for p in out.glob("*.png"))
    assert figures == ["verdict-down.png", "verdict-shape.png", "verdict-up.png"]
    assert main([*args, "--format", "latex"]) == 0
    assert capsys.readouterr().out == (out / "verdict.tex").read_text()  # the date may move


def body_load(out: Path) -> list[float]:
    return json.loads((out / "verdict.json").read_text())["provenance"]["results"][0]["load"]


def test_runs_record_the_load_and_old_results_say_it_was_not(tmp_path):
    from ddlsched.bench.verdict_report import _load_range, _load_text

    store = ResultStore(tmp_path / "r")
    store.begin_run(SimpleNamespace(name="s", source=None, sha256="0" * 64), "local", 1, 0, 0)
    store.end_run("complete")
    (run,) = store.read_manifest()["runs"]
    assert isinstance(run["load_at_start"], float) and isinstance(run["load_at_end"], float)
    assert (
        _load_text(_load_range([{"started_at": "x", "rows_written": 4}])) == ", load not recorded"
    )
    assert _load_text(_load_range([])) == ", load not recorded"
    one = _load_range([{"load_at_start": 1.02, "load_at_end": 1.04, "rows_written": 1}])
    assert _load_text(one) == (
        ", load 1.0 (1-minute average at the starts and ends of the runs that wrote rows)"
    )


def test_cli_seeds_override_every_claim(results, claims_path, tmp_path, capsys):
    """--seeds replaces each claim's seeds: "more-seeds" (its own 8 seeds, 6 present) is
    complete on 0-5; on seeds the rows lack every claim is missing."""
    args = ["bench", "verdict", str(results), "--claims", str(claims_path), "--format", "markdown"]
    assert main([*args, "--out", str(tmp_path / "a"), "--seeds", "0-5"]) == 0
    capsys.readouterr()
    body = json.loads((tmp_path / "a" / "verdict.json").read_text())
    more = next(v for v in body["verdicts"] if v["claim"] == "more-seeds")
    assert more["seeds"] == list(SEEDS) and not more["incomplete"]
    assert main([*args, "--out", str(tmp_path / "b"), "--seeds", "50,51"]) == 0
    capsys.readouterr()
    body = json.loads((tmp_path / "b" / "verdict.json").read_text())
    assert {v["verdict"] for v in body["verdicts"]} == {"missing"}


@pytest.mark.parametrize("text", ["", "5-2", "a-b", "1,1", "-3", "2,1"])
def test_cli_bad_seeds_one_line(results, claims_path, text, tmp_path, capsys):
    args = ["bench", "verdict", str(results), "--claims", str(claims_path)]
    assert main([*args, "--out", str(tmp_path), f"--seeds={text}"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("ddlsched: error: --seeds") and "\n" not in err


GOOD = """
[paper]
name = "hand"
[[claims]]
id = "x"
text = "t"
paper_value = "v"
kind = "paired_difference"
suite = "hand"
group = "g4"
method = "a"
against = "b"
seeds = [0, 1]
"""

#: case: (text replaced in GOOD, its replacement, the error after "FILE: ").
BAD = {
    "kind": ('kind = "paired_difference"', 'kind = "paired"', "claims[0] (x).kind: expected one of paired_difference"),
    "field": ("seeds = [0, 1]", "seeds = [0, 1]\ncolour = 1", "claims[0] (x).colour: unknown field of a paired_difference claim"),
    "missing": ('against = "b"', "", "claims[0] (x).against: missing"),
    "seeds": ("seeds = [0, 1]", "seeds = [-1]", "claims[0] (x).seeds: expected a list of seeds"),
    "expect": ("seeds = [0, 1]", 'seeds = [0, 1]\nexpect = "under"', "claims[0] (x).expect: expected one of below, above"),
    "share": ("seeds = [0, 1]", "seeds = [0, 1]\nshare_not = 2", "claims[0] (x).share_not: expected a number in [0, 1]"),
    "id": ('id = "x"', 'id = "x y"', "claims[0] (x y).id: expected a name"),
    "paper": ('name = "hand"', "", "paper.name: missing"),
    "preset": ('group = "g4"', 'group = "g4"\npreset = 3', "claims[0] (x).preset: expected a non-empty"),
    "confidence": ('group = "g4"', 'group = "g4"\nconfidence = 1', "claims[0] (x).confidence: expected a number in (0, 1)"),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(BAD))
def test_malformed_claims_exit_2_one_line(case, results, tmp_path, capsys):
    old, replacement, message = BAD[case]
    assert old in GOOD
    path = tmp_path / "bad.toml"
    path.write_text(GOOD.replace(old, replacement))
    with pytest.raises(ClaimsError):
        load_claims(path)
    assert main(["bench", "verdict", str(results), "--claims", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"ddlsched: error: {path}: {message}")


def test_good_claims_text_loads(tmp_path):
    path = tmp_path / "good.toml"
    path.write_text(GOOD)
    assert load_claims(path).claims[0].option("against") == "b"


def test_claims_file_level_errors(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text("[paper]\nname = 'p'\n")
    with pytest.raises(ClaimsError, match=r"c\.toml: claims: missing"):
        load_claims(path)
    path.write_text("[paper\n")
    with pytest.raises(ClaimsError, match=r"c\.toml: not valid TOML"):
        load_claims(path)
    path.write_text("[papers]\n")
    with pytest.raises(ClaimsError, match="papers: unknown table"):
        load_claims(path)


def test_rows_of_several_versions_are_chosen_per_method_by_latest_code(
    tmp_path, claims_path, capsys
):
    out = tmp_path / "mixed"
    store = ResultStore(out)
    late = _row("g4", 0, "a", 10.0, version="2.0")
    late["finished_at"] = "2099-01-01T00:00:00.000+00:00"
    store.extend([*_rows("1.0"), late])
    store.flush()
    frame = load_results(out)
    # method "a": only its latest code (the 2.0 row); the other methods keep their 1.0 rows
    assert set(frame.loc[frame["method"] == "a", "ddlsched_version"]) == {"2.0"}
    assert set(frame.loc[frame["method"] != "a", "ddlsched_version"]) == {"1.0"}
    replaced = sum(r["method"] == "a" for r in _rows("1.0")) - 1  # one shares the late row's key
    assert frame.attrs["hidden_rows"] == {"hand.a": replaced}
    assert len(load_results(out, mixed="mix")) == len(_rows("1.0"))
    for command in (["table"], ["verdict", "--claims", str(claims_path), "--out", str(tmp_path)]):
        assert main(["bench", command[0], str(out), *command[1:]]) == 0
        assert main(["bench", command[0], str(out), *command[1:], "--version", "1.0"]) == 0
        assert main(["bench", command[0], str(out), *command[1:], "--mix-versions"]) == 0
        capsys.readouterr()


def test_rar_claims_file_is_valid():
    claims = load_claims(Path(__file__).resolve().parents[1] / "benchmarks/claims/rar.toml")
    # Section 7 (36), Lemmas 2 and 4 on the tightest theta (4), Fig. 6 nested (6), the
    # advantage when GPUs are scarce (12: FF, LS, RAND x 2 readings x 2 presets), Theorem 6
    # (2), FF's largest reduction (8: LS, SJF-BCO x 2 readings x 2 presets)
    assert claims.paper == "rar" and len(claims.claims) == 68
    assert {c.kind for c in claims.claims} == {"paired_difference", "shaped", "monotone",
                                                "ratio_within", "holds", "scaling"}  # fmt: skip
    groups = {("fig4",), ("fig6",), ("fig6-nested",), ("scale-jobs",), ("scale-cluster",)}
    # Lemmas 2-4 of SJF-BCO (the tightest theta's but) read every group it runs on
    groups.add(("fig4", "fig6", "fig6-nested"))
    assert {c.groups for c in claims.claims} == groups
    lemmas = [c for c in claims.claims if c.id.startswith("lemma") and "tightest" not in c.id]
    assert len(lemmas) == 12 and all(c.groups == ("fig4", "fig6", "fig6-nested") for c in lemmas)
    largest = [c for c in claims.claims if c.id.startswith("fig6-ff-largest-drop")]
    assert len(largest) == 8 and all(c.option("change") for c in largest)
    scaling = [c for c in claims.claims if c.kind == "scaling"]
    assert all(c.seeds == (0, 1, 2) for c in scaling) and len(scaling) == 2
    assert all(c.seeds == tuple(range(20)) for c in claims.claims if c not in scaling)


def _holds_claim(tmp_path, flag="info.theory.lemma_holds"):
    path = tmp_path / "holds.toml"
    path.write_text(
        '[paper]\nname = "hand"\n\n[[claims]]\nid = "lemma"\ntext = "a lemma holds"\n'
        'paper_value = "holds"\nkind = "holds"\nsuite = "hand"\ngroup = "g"\nmethod = "h"\n'
        f'seeds = [0, 1, 2]\nflag = "{flag}"\n'
    )
    return load_claims(path).claims[0]


def test_holds_kind(tmp_path):
    """Kind ``holds``: true on every defined row reproduces, one false refutes, null rows are
    counted and left out, no defined row is missing."""
    from ddlsched.bench.verdict import evaluate_claim

    claim = _holds_claim(tmp_path)

    def frame(values):
        return pd.DataFrame([
            _row("g", seed, "h", 10.0, info={"theory": {"lemma_holds": v}})
            for seed, v in enumerate(values)
        ])  # fmt: skip

    held = evaluate_claim(frame([True, None, True]), claim)
    assert (held.verdict, held.numbers) == (REPRODUCED, {"rows": 2, "failed": 0, "undefined": 1})
    assert held.incomplete  # seed 1 has no defined flag
    assert evaluate_claim(frame([True, False, True]), claim).verdict == NOT_REPRODUCED
    assert evaluate_claim(frame([None, None, None]), claim).verdict == MISSING
    with pytest.raises(ClaimsError, match=r"expected 'info\.KEY'"):
        _holds_claim(tmp_path, flag="theory.lemma_holds")


def test_a_pointwise_claim_read_at_fewer_points_than_its_groups_says_so(tmp_path, claims_path):
    """Without e's rows at n = 4 the claim reads 2 of g6's 3 points: favourable at both, so
    the rule says reproduced, but the verdict is incomplete and says on how many points."""
    out = tmp_path / "results"
    store = ResultStore(out)
    rows = _rows()
    store.extend(r for r in rows if not (r["label"] == "e" and '"n": 4' in r["instance_params"]))
    store.flush()
    claims = load_claims(claims_path)
    verdicts = {v.claim.id: v for v in evaluate_claims(load_results(out), claims.claims)}
    points = verdicts["points-strict"]
    assert points.verdict == REPRODUCED and points.numbers["points"] == 2
    assert points.incomplete and points.points == (2, 3)
    assert points.shown == "reproduced (incomplete: 2/3 points)"
    assert "1 of the 3 points of its groups lack one side" in points.ours
    from ddlsched.bench.verdict_report import count_line

    assert count_line("hand", [points, verdicts["better-b"]]).endswith("(2 claims, 1 incomplete)")
    assert not verdicts["better-b"].incomplete and verdicts["better-b"].points is None
