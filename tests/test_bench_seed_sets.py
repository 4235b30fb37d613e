"""Widths on a second set of instance seeds (ddlsched.bench.seed_sets) and
benchmarks/intervals.py --fresh."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest
from bench_scripts import DEBUG_SUITE, load_script, run_suites

from ddlsched.bench.seed_sets import markdown, seed_set_table
from ddlsched.bench.store import read_rows
from ddlsched.errors import DdlschedError


def _row(seed, label, kind, objective=None, bound=None, group="g"):
    instance = f"{group}/s{seed}"
    return {
        "family": "fam",
        "group": group,
        "instance_key": instance,
        "instance_id": instance,
        "instance_seed": seed,
        "instance_size": 1,
        "label": label,
        "method": label,
        "kind": kind,
        "sense": "min",
        "status": "feasible" if objective is not None else "bound_only",
        "objective": objective,
        "bound": bound,
        "seed": 0,
        "runtime_s": 0.1,
    }


REFERENCE = pd.DataFrame(
    [
        # s0: best 10 (b) against 8 (lb): 25 %; s1: 11 against 10: 10 %
        _row(0, "a", "heuristic", 12),
        _row(0, "b", "heuristic", 10),
        _row(0, "lb", "bound", bound=8),
        _row(1, "a", "heuristic", 11),
        _row(1, "b", "heuristic", 12),
        _row(1, "lb", "bound", bound=10),
        # a label only the reference ran: its better schedule must not count
        _row(0, "only_ref", "heuristic", 8.5),
    ]
)
FRESH = pd.DataFrame(
    [
        # s5: 9 against 8: 12.5 %; s6: 10 against 10: 0 %
        _row(5, "a", "heuristic", 9),
        _row(5, "b", "heuristic", 9.5),
        _row(5, "lb", "bound", bound=8),
        _row(6, "a", "heuristic", 10),
        _row(6, "lb", "bound", bound=10),
        _row(6, "only_fresh", "heuristic", 10),
    ]
)


def test_the_same_methods_widths_on_both_seed_sets():
    (line,) = seed_set_table(REFERENCE, FRESH)
    assert (line.family, line.group) == ("fam", "g")
    assert line.compared == ("a", "b", "lb")
    assert line.left_out == (("only_ref",), ("only_fresh",))
    assert line.seeds == ((0, 1), (5, 6))
    assert line.instances == (2, 2)
    assert line.widest == pytest.approx((0.25, 0.125))
    assert line.widest_at == ("g/s0", "g/s5")
    assert line.mean == pytest.approx((0.175, 0.0625))
    assert line.gap_widest == pytest.approx(-0.125)
    assert line.gap_mean == pytest.approx(-0.1125)
    # b has rows on 2 of 2 reference instances and 1 of 2 fresh ones: not the same methods
    assert line.partial == ("b 2/2 -> 1/2",)
    assert line.within == "partial"


def test_within_one_point_when_both_gaps_are():
    fresh = REFERENCE.assign(
        instance_seed=REFERENCE["instance_seed"] + 10,
        instance_key=REFERENCE["instance_key"] + "x",
        instance_id=REFERENCE["instance_id"] + "x",
    )
    (line,) = seed_set_table(REFERENCE, fresh[fresh["label"] != "only_ref"])
    assert line.gap_widest == 0 and line.gap_mean == 0 and not line.partial
    assert line.within == "yes"
    wider = fresh.copy()
    wider.loc[wider["label"] == "lb", "bound"] *= 0.99  # every width about 1 point wider
    (line,) = seed_set_table(REFERENCE, wider)
    assert line.gap_widest > 0.01 and line.within == "no"
    (line,) = seed_set_table(REFERENCE, wider, tolerance=0.02)
    assert line.within == "yes"


def test_a_table_on_one_side_only_is_listed_with_a_note():
    reference_only, fresh_only = seed_set_table(REFERENCE, FRESH.assign(group="h"))
    assert (reference_only.group, reference_only.note) == ("g", "no rows on the fresh seeds")
    assert (fresh_only.group, fresh_only.note) == ("h", "no rows on the reference seeds")
    assert reference_only.within == fresh_only.within == "-"
    (none,) = seed_set_table(REFERENCE, FRESH.assign(label="x"))
    assert none.note == "no method with rows on both sides" and none.within == "-"
    text = "\n".join(markdown([reference_only, none]))
    assert "| fam / g | - | - | - | - | - |" in text
    assert "- fam / g: no rows on the fresh seeds." in text


def _without_bound(rows: pd.DataFrame, seeds: set[int]) -> pd.DataFrame:
    """``lb`` ran on those seeds' instances and found no bound (its row kept, no value)."""
    out = rows.copy()
    out.loc[(out["label"] == "lb") & out["instance_seed"].isin(seeds), "bound"] = None
    return out


def test_a_bound_lost_on_one_side_reads_no_and_on_both_a_dash():
    ref, fresh = REFERENCE[REFERENCE["label"] != "only_ref"], FRESH[FRESH["label"] != "b"]
    (line,) = seed_set_table(ref[ref["label"] != "b"], _without_bound(fresh, {6}))
    assert line.unbounded == (0, 1) and math.isinf(line.widest[1])
    assert math.isnan(line.gap_widest) and line.within == "no"
    assert "without a finite bound: 0 of 2 reference and 1 of 2 fresh instances" in "\n".join(
        markdown([line])
    )
    (line,) = seed_set_table(ref[ref["label"] != "lb"], fresh[fresh["label"] != "lb"])
    assert all(math.isinf(w) for w in line.widest) and line.within == "-"


def test_partial_wins_over_an_unknown_width():
    (line,) = seed_set_table(REFERENCE, _without_bound(FRESH, {5, 6}))
    assert line.partial and line.within == "partial"


def test_a_prefix_names_the_tables():
    (line,) = seed_set_table(REFERENCE, FRESH, prefix="claims")
    assert line.name == "claims / fam / g"


def test_fresh_rows_sharing_an_instance_are_refused():
    with pytest.raises(DdlschedError, match=r"share 1 instance.*g/s0.*not fresh"):
        seed_set_table(REFERENCE, pd.concat([FRESH, REFERENCE.iloc[:1]]))


def test_markdown_names_the_methods_and_the_gaps():
    text = "\n".join(markdown(seed_set_table(REFERENCE, FRESH)))
    assert (
        "| fam / g | 0, 1 -> 5, 6 (2 / 2 instances) | 25.00 % (g/s0) -> 12.50 % (g/s5) "
        "| 17.50 % -> 6.25 % | -12.50, -11.25 | - | **partial** |"
    ) in text
    assert "on the reference seeds only (left out): only_ref" in text
    assert "on the fresh seeds only (left out): only_fresh" in text
    assert "**partial**, instances with rows (reference -> fresh): b 2/2 -> 1/2" in text


@pytest.fixture(scope="module")
def claims_and_fresh(tmp_path_factory) -> list[Path]:
    tmp = tmp_path_factory.mktemp("seed_sets")
    seeds = {"claims": "0, 1", "fresh": "7, 8", "same": "1, 2"}
    return run_suites(
        tmp, {n: DEBUG_SUITE.format(name=n, seeds=s, seed=0) for n, s in seeds.items()}
    )


def _script():
    return load_script("intervals")


def _widths(directory: Path) -> list[float]:
    """By hand from the stored rows: per instance, best schedule / best bound - 1."""
    rows = read_rows(directory).to_pylist()
    out = []
    for key in sorted({r["instance_key"] for r in rows}):
        same = [r for r in rows if r["instance_key"] == key]
        best = min(r["objective"] for r in same if r["objective"] is not None)
        out.append(best / max(r["bound"] for r in same if r["bound"] is not None) - 1)
    return out


def test_the_report_appends_the_computed_comparison(claims_and_fresh, tmp_path):
    claims, fresh, _ = claims_and_fresh
    sections = tmp_path / "sections.md"
    sections.write_text("## Hand-written\n\nSomething measured.\n")
    note = tmp_path / "note.md"
    note.write_text("The rows' story.\n")
    out = tmp_path / "intervals.md"
    args = [str(claims), "--out", str(out), "--fresh", f"{claims}={fresh}"]
    args += ["--sections", str(sections), "--note-file", str(note)]
    assert _script().main(args) == 0
    text = out.read_text()
    assert "The rows' story." in text
    order = ["## Hand-written", "## Fresh instance seeds", "### debug / g"]
    assert [text.index(x) for x in order] == sorted(text.index(x) for x in order)
    a, b = _widths(claims), _widths(fresh)
    line = next(x for x in text.splitlines() if x.startswith("| claims / debug / g | 0, 1 ->"))
    assert f"{100 * max(a):.2f} %" in line and f"{100 * max(b):.2f} %" in line
    assert f"{100 * (max(b) - max(a)):+.2f}, {100 * (sum(b) / 2 - sum(a) / 2):+.2f}" in line
    assert "0, 1 -> 7, 8 (2 / 2 instances)" in line
    assert "--fresh" in text.splitlines()[2] and "--sections" in text.splitlines()[2]


@pytest.mark.parametrize(
    "fresh, message",
    [
        ("{other}={fresh}", "is not one of the results directories"),
        ("{claims}", "expected REF=FRESH"),
        ("{claims}={same}", "not fresh"),
        ("{claims}={missing}", "no rows in"),
    ],
)
def test_bad_fresh_arguments_are_one_line_errors(
    claims_and_fresh, tmp_path, capsys, fresh, message
):
    claims, fresh_dir, same = claims_and_fresh
    (tmp_path / "missing").mkdir()
    text = fresh.format(
        claims=claims, fresh=fresh_dir, same=same, other=tmp_path, missing=tmp_path / "missing"
    )
    assert _script().main([str(claims), "--fresh", text]) == 2
    err = capsys.readouterr().err
    assert err.startswith("intervals: error:") and message in err and err.count("\n") == 1


def test_a_missing_sections_file_is_a_one_line_error(claims_and_fresh, tmp_path, capsys):
    claims = claims_and_fresh[0]
    assert _script().main([str(claims), "--sections", str(tmp_path / "none.md")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("intervals: error:") and "none.md" in err
    (tmp_path / "bad.md").write_bytes(b"\xdd\xfe\x00 not text")
    assert _script().main([str(claims), "--note-file", str(tmp_path / "bad.md")]) == 2
    err = capsys.readouterr().err
    assert err == f"intervals: error: {tmp_path / 'bad.md'}: not a UTF-8 text file\n"


def test_instances_without_seeds_read_as_files():
    (line,) = seed_set_table(REFERENCE, FRESH.assign(instance_seed=None))
    assert line.seeds == ((0, 1), ())
    text = "\n".join(markdown([line]))
    assert "| fam / g | 0, 1 -> files (2 / 2 instances) |" in text
    assert all(map(math.isnan, line.p_value))
    assert "| -12.50, -11.25 | - | **partial** |" in text


# FRESH with b on s6 too (10.5: s6's width stays 0 %): the same methods on every instance
FRESH_FULL = pd.concat([FRESH, pd.DataFrame([_row(6, "b", "heuristic", 10.5)])])


def test_seed_splits_by_hand():
    # widths: reference s0 25 %, s1 10 %; fresh s5 12.5 %, s6 0 %. The 6 splits of the 4
    # seeds into two pairs: the widest gap is at least 12.5 points in every one (s0 sets
    # one side's widest, and the other's is 10 or 12.5); the mean gap (fresh - reference,
    # -11.25 observed) is, with the fresh pair first, {s0,s1} +11.25, {s0,s5} +13.75,
    # {s0,s6} +1.25, {s1,s5} -1.25, {s1,s6} -13.75, {s5,s6} -11.25: 4 of 6 as large.
    (line,) = seed_set_table(REFERENCE, FRESH_FULL)
    assert line.within == "no" and line.splits == (6, 6)
    assert line.p_value == pytest.approx((1.0, 4 / 6))
    assert "| 1.00, 0.67 (all 6 splits) | **no** |" in "\n".join(markdown([line]))
    # a partial table gets no split test
    (line,) = seed_set_table(REFERENCE, FRESH)
    assert line.within == "partial" and line.splits == (0, 0)


def test_seed_splits_drawn_beyond_the_limit(monkeypatch):
    import ddlsched.bench.seed_sets as seed_sets

    monkeypatch.setattr(seed_sets, "MAX_SPLITS", 3)
    (line,) = seed_set_table(REFERENCE, FRESH_FULL)
    (again,) = seed_set_table(REFERENCE, FRESH_FULL)
    assert line.splits == (3, 6) and line.p_value == again.p_value  # drawn with seed 0
    # (k + 1) / (3 + 1): every draw's widest gap is as large; 2 of the 3 drawn mean gaps
    assert line.p_value == (1.0, 3 / 4)
    assert "(3 of 6.0e+0 splits, drawn)" in "\n".join(markdown([line]))


def test_seed_splits_move_a_seed_with_all_its_instances():
    # two instances a seed (a sweep of two points): the mean is over instances, and a seed's
    # instances move together. Reference s0 (20 %, 0 %), s1 (0 %, 0 %); fresh s5 (10 %,
    # 10 %), s6 (10 %, 10 %), s7 (30 %, and one without a width: no schedule). Instance
    # means: reference 5 %, fresh 14 % (70 points over 5 finite widths): +9 points (over
    # seeds' means it would be 16.67 - 5).
    def seed_rows(seed, objectives):
        rows = []
        for point, objective in enumerate(objectives):
            pair = [_row(seed, "a", "heuristic", objective), _row(seed, "lb", "bound", bound=10)]
            for row in pair:
                row["instance_key"] = row["instance_id"] = f"g/s{seed},x={point}"
            rows += pair
        return rows

    ref = pd.DataFrame(seed_rows(0, [12, 10]) + seed_rows(1, [10, 10]))
    new = pd.DataFrame(seed_rows(5, [11, 11]) + seed_rows(6, [11, 11]) + seed_rows(7, [13, 10]))
    failed = (new["instance_id"] == "g/s7,x=1") & (new["label"] == "a")
    new.loc[failed, ["objective", "status"]] = [None, "error"]  # no schedule: no width
    (line,) = seed_set_table(ref, new)
    assert line.gap_mean == pytest.approx(0.09)
    assert line.splits == (10, 10)  # C(5, 2): s7 is pooled though one instance has no width
    # by hand, each split's reference pair and its mean gap (fresh - reference): {0,1} +9
    # (observed); {0,5} 50/5 - 40/4 = 0; {0,6} 0; {0,7} 40/6 - 50/3 = -10; {1,5} 70/5 - 20/4
    # = +9; {1,6} +9; {1,7} 60/6 - 30/3 = 0; {5,6} 50/5 - 40/4 = 0; {5,7} 40/6 - 50/3 = -10;
    # {6,7} -10: 6 of 10 at least 9 points in size
    assert line.p_value[1] == pytest.approx(6 / 10)
    # the widest: 30 % (s7) against 20 % (s0), on opposite sides: every split at least 10
    assert line.p_value[0] == 1.0


def test_seed_splits_find_seed_sets_that_differ():
    # five reference seeds at 0 % against five fresh ones at 5 %: only the observed split
    # and its mirror image give a 5-point gap, 2 of the C(10, 5) = 252 splits
    ref = pd.DataFrame(
        [
            r
            for s in range(5)
            for r in (_row(s, "a", "heuristic", 10), _row(s, "lb", "bound", bound=10))
        ]
    )
    new = pd.DataFrame(
        [
            r
            for s in range(5, 10)
            for r in (_row(s, "a", "heuristic", 10.5), _row(s, "lb", "bound", bound=10))
        ]
    )
    (line,) = seed_set_table(ref, new)
    assert line.gap_mean == pytest.approx(0.05) and line.within == "no"
    assert line.splits == (252, 252)
    assert line.p_value == pytest.approx((2 / 252, 2 / 252))


def test_seed_splits_skip_an_infinite_widest_and_a_shared_seed():
    unbounded = FRESH_FULL.copy()
    unbounded.loc[(unbounded["instance_seed"] == 6) & (unbounded["label"] == "lb"), "bound"] = 0.0
    (line,) = seed_set_table(REFERENCE, unbounded)
    assert math.isinf(line.widest[1]) and math.isnan(line.p_value[0])
    # the mean of the finite widths: fresh 12.5 % (s5 alone) against 17.5 %, -5 points;
    # with the fresh pair first: {s0,s1} +5, {s0,s5} 18.75 - 10 = +8.75, {s0,s6} 25 - 11.25,
    # {s1,s5} -13.75, {s1,s6} 10 - 18.75, {s5,s6} -5: all 6 at least 5 points in size
    assert line.splits == (6, 6) and line.p_value[1] == 1.0
    # a split leaving a side without a finite width has no mean gap and is not counted:
    # reference s0 10 %, fresh s5 30 % and s6 without a bound: of the 3 splits, {s5,s6}
    # +20 (observed) and {s0,s6} 10 - 30 = -20 have one, {s0,s5} (against s6 alone) none
    ref = REFERENCE[REFERENCE["instance_seed"] == 0].copy()
    ref = pd.concat([ref[ref["label"] == "lb"], pd.DataFrame([_row(0, "a", "heuristic", 8.8)])])
    new = unbounded[unbounded["label"].isin(["a", "lb"])].copy()
    new.loc[(new["instance_seed"] == 5) & (new["label"] == "a"), "objective"] = 10.4
    (line,) = seed_set_table(ref, new)
    assert line.mean == pytest.approx((0.1, 0.3)) and line.splits == (3, 3)
    assert line.p_value[1] == 1.0
    # the same seed on both sides (other parameters): no split can move it whole
    shared = FRESH_FULL.assign(instance_seed=FRESH_FULL["instance_seed"] - 5)
    (line,) = seed_set_table(REFERENCE, shared)
    assert all(map(math.isnan, line.p_value)) and line.splits == (0, 0)
