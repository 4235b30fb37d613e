"""Verdicts on a paper's claims from stored rows.

:func:`evaluate_claims` reads each :class:`~ddlsched.bench.claims.Claim`'s
rows out of a results frame (:func:`ddlsched.bench.tables.load_results`),
computes its comparison and applies its rule (the kinds and rules:
:mod:`ddlsched.bench.claims`). Intervals are Student t-intervals of the mean
over the pairing units (instances: one per instance seed, or per seed and
instance parameters when the claim's rows vary one), at the claim's
``confidence`` (0.95 by default); with fewer than two units the half-width
is infinite, so no such claim is decided by its interval. The shape tests
mirror ``benchmarks/rar_section7.py`` (the rules of benchmarks/results/rar.md
Section 7): moves of a seed's curve are exact, moves of the mean curve
within ``flat_tol`` times its first value are flat. Shared pieces (the verdict
words, :class:`Verdict`, t-intervals, reading a claim's rows):
:mod:`ddlsched.bench.verdict_base`; kind ``lowest`` and the count of distinct
instances: :mod:`ddlsched.bench.verdict_lowest`; kind ``scaling`` (a running time's
log-log slope): :mod:`ddlsched.bench.verdict_scaling`; kind ``gain_compare``:
:mod:`ddlsched.bench.verdict_gain`. Rendering:
:mod:`ddlsched.bench.verdict_report`.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import pandas as pd

from ddlsched.bench.aggregate import instance_ratios, solved_rows
from ddlsched.bench.claims import Claim
from ddlsched.bench.tables import rows_with_ratios
from ddlsched.bench.verdict_base import (
    _UNIT,
    DEPENDS,
    MISSING,
    NOT_REPRODUCED,
    REPRODUCED,
    VACUOUS,
    VERDICTS,
    Curve,
    Verdict,
    _claim_rows,
    _decide,
    _drop_params,
    _json_field,
    _label_rows,
    _missing,
    _seeds,
    _spearman,
    _values,
    _with_params,
    move_signs,
    t_interval,
)
from ddlsched.bench.verdict_gain import gain_compare
from ddlsched.bench.verdict_lowest import distinct_instances, lowest
from ddlsched.bench.verdict_scaling import scaling

__all__ = [
    "DEPENDS",
    "MISSING",
    "NOT_REPRODUCED",
    "REPRODUCED",
    "VACUOUS",
    "VERDICTS",
    "Curve",
    "Verdict",
    "evaluate_claim",
    "evaluate_claims",
    "move_signs",
    "t_interval",
]


def _change(claim: Claim, rows: pd.DataFrame, label: str) -> pd.Series:
    """Per unit (the instance without the ``against_params``) the label's change of the
    metric: its value at the claim's ``params`` minus its value at ``against_params``
    (``relative``: their ratio - 1)."""
    swap = claim.option("against_params")
    at = _values(
        _drop_params(_label_rows(_with_params(rows, claim.params), label), swap),
        claim.metric,
        _UNIT,
    )
    start = _values(
        _drop_params(_label_rows(_with_params(rows, {**claim.params, **swap}), label), swap),
        claim.metric,
        _UNIT,
    )
    both = pd.concat([at.rename("at"), start.rename("start")], axis=1, join="inner")
    if claim.option("relative"):
        return both["at"] / both["start"] - 1
    return both["at"] - both["start"]


def _pairs(claim: Claim, rows: pd.DataFrame) -> pd.DataFrame | Verdict:
    """Per unit the metric of the method (``mine``) and of ``against`` (``theirs``), on the
    units both have; the missing verdict when there is none. With ``against_params``,
    ``theirs`` is read on the instance at those generator parameters (``against`` defaults
    to the method) and the unit leaves them out; with ``change`` as well, each side is the
    label's change from those parameters to the claim's (:func:`_change`)."""
    swap = claim.option("against_params") or {}
    against = claim.option("against") or claim.method
    if claim.option("change"):
        mine, theirs = _change(claim, rows, claim.method), _change(claim, rows, against)
        since = ", ".join(f"{k}={v}" for k, v in swap.items())
        label, against = f"{claim.method}'s change from {since}", f"{against}'s change"
    else:
        mine_rows = _label_rows(_with_params(rows, claim.params), claim.method)
        theirs_rows = _label_rows(_with_params(rows, {**claim.params, **swap}), against)
        if swap:
            mine_rows = _drop_params(mine_rows, swap)
            theirs_rows = _drop_params(theirs_rows, swap)
            against = f"{against} at {', '.join(f'{k}={v}' for k, v in swap.items())}"
        mine = _values(mine_rows, claim.metric, _UNIT)
        theirs = _values(theirs_rows, claim.metric, _UNIT)
        label = claim.method
    for name, values in ((label, mine), (against, theirs)):
        if values.empty:
            return _missing(claim, f"{name} with {claim.metric}")
    both = pd.concat([mine.rename("mine"), theirs.rename("theirs")], axis=1, join="inner")
    if both.empty:
        return _missing(claim, f"{label} and {against} on one instance")
    return both


def _paired(claim: Claim, rows: pd.DataFrame) -> Verdict:
    both = _pairs(claim, rows)
    if isinstance(both, Verdict):
        return both
    diffs = (both["mine"] - both["theirs"]).to_numpy()
    if claim.option("relative") and not claim.option("change"):
        # per unit method / against - 1: units of any size weigh alike
        diffs = (both["mine"] / both["theirs"] - 1).to_numpy()
    mean, half = t_interval(diffs, claim.option("confidence"))
    tie = claim.option("tie_tol")
    lower, higher = int((diffs < -tie).sum()), int((diffs > tie).sum())
    ties = diffs.size - lower - higher
    below = claim.option("expect") == "below"
    wins = lower if below else higher
    good, bad = (mean + half < 0, mean - half > 0) if below else (mean - half > 0, mean + half < 0)
    if good:
        verdict = REPRODUCED
    elif bad or wins <= claim.option("share_not") * diffs.size:
        verdict = NOT_REPRODUCED
    else:
        verdict = DEPENDS
    better, worse = (lower, higher) if below else (higher, lower)
    ours = f"{mean:+.3g} ± {half:.2g} (better / tie / worse {better} / {ties} / {worse})"
    numbers = {"mean": mean, "half_width": half, "better": better, "ties": ties, "worse": worse,
               "pairs": int(diffs.size)}  # fmt: skip
    return _decide(claim, _seeds(both.index), verdict, ours, numbers=numbers)


def _pointwise(claim: Claim, rows: pd.DataFrame) -> Verdict:
    both = _pairs(claim, rows)
    if isinstance(both, Verdict):
        return both
    diffs = both["mine"] - both["theirs"]
    if claim.option("expect") == "below":
        diffs = -diffs  # positive: on the expected side
    tie = claim.option("tie_tol")
    sides = [
        "favourable" if (d > tie).all() else "unfavourable" if (d < -tie).all() else "mixed"
        for _, d in diffs.groupby(level=["group", "preset", "instance_params"], sort=False)
    ]
    points, good, bad = len(sides), sides.count("favourable"), sides.count("unfavourable")
    if good >= points - claim.option("misses_allowed") and bad == 0:
        verdict = REPRODUCED
    elif bad >= math.ceil(claim.option("share_not") * points):
        verdict = NOT_REPRODUCED
    else:
        verdict = DEPENDS
    ours = f"{claim.option('expect')} 0 on every seed at {good} of {points} point(s), "
    ours += f"mixed at {points - good - bad}, the other side at {bad}"
    named = points  # with against_params the rows hold the other instances too
    if not claim.option("against_params"):
        keys = _with_params(rows, claim.params)[["group", "preset", "instance_params"]]
        named = max(points, len(keys.drop_duplicates()))
    if named > points:
        ours += f" ({named - points} of the {named} points of its groups lack one side)"
    numbers = {"points": points, "favourable": good, "unfavourable": bad}
    return _decide(claim, _seeds(diffs.index), verdict, ours, numbers=numbers,
                   points=(points, named))  # fmt: skip


def _at_x(rows: pd.DataFrame, over: str, source: str) -> pd.DataFrame:
    """The rows with ``x``, their value of ``over`` read from ``source`` (``params`` or
    ``instance_params``; from the latter the unit is the instance without its x)."""
    rows = rows.assign(x=rows[source].map(lambda t: _json_field(t, over)))
    rows = rows[rows["x"].notna()]
    return _drop_params(rows, [over]) if source == "instance_params" else rows


def _curve_table(claim: Claim, rows: pd.DataFrame) -> pd.DataFrame | str:
    """The metric per unit (rows) and x (columns), or with ``against`` its ratio to the
    ``against`` label's on the same instance (and x, when x is a generator parameter)."""
    over, against = claim.option("over"), claim.option("against")
    labelled = _label_rows(rows, claim.method, swept=True)
    from_params = labelled["params"].map(lambda t: _json_field(t, over))
    source = "params" if from_params.notna().any() else "instance_params"
    if source == "instance_params":  # the label itself, not its variants (asrpt[eligibility=..])
        labelled = _label_rows(rows, claim.method)
    labelled = _at_x(labelled, over, source)
    if labelled.empty:
        return f"{claim.method} over {over}"
    values = _values(labelled, claim.metric, [*_UNIT, "x"])
    if values.empty:
        return f"{claim.method} with {claim.metric}"
    table = values.unstack("x")
    if against:
        base = _label_rows(rows, against)
        by_x = source == "instance_params"
        theirs = _values(_at_x(base, over, source) if by_x else base, claim.metric,
                         [*_UNIT, "x"] if by_x else _UNIT)  # fmt: skip
        if theirs.empty:
            return f"{against} with {claim.metric}"
        if by_x:
            table = table / theirs.unstack("x").reindex_like(table)
        else:
            table = table.div(theirs, axis=0)
        table = table.replace([math.inf, -math.inf], math.nan)
    return table


def _curve(claim: Claim, rows: pd.DataFrame) -> tuple[Curve, tuple[int, ...]] | str:
    """The claim's curve over ``over`` per unit (only units with every x) and its seeds, or
    what is missing."""
    over = claim.option("over")
    table = _curve_table(claim, rows)
    if isinstance(table, str):
        return table
    table = table[sorted(table.columns, key=float)].dropna()
    if len(table.columns) < 2:  # one point is no curve
        return f"{claim.method} at two values of {over} at least"
    if table.empty:
        against = f" and {claim.option('against')}" if claim.option("against") else ""
        return f"{claim.method}{against} on every point of {over} for one seed"
    xs = tuple(float(x) for x in table.columns)
    curves = {
        f"{preset} s{seed}" if claim.preset is None else f"s{seed}": tuple(map(float, line))
        for (_, preset, _, seed), line in zip(table.index, table.to_numpy(), strict=True)
    }
    stats = [t_interval(table[x], claim.option("confidence")) for x in table.columns]
    return Curve(over, xs, curves, tuple(m for m, _ in stats), tuple(h for _, h in stats)), _seeds(
        table.index
    )


def _shape_tests(claim: Claim, curve: Curve) -> tuple[bool, list[bool], str]:
    """(the mean curve has the shape, per unit whether it has it, the shape in words)."""
    tol = claim.option("flat_tol") * abs(curve.means[0])
    if claim.kind == "shaped":
        wanted = [-1 if move == "drop" else 1 for move in claim.option("moves")]
        mean_ok = move_signs(curve.means, tol) == wanted
        per_unit = [move_signs(c) == wanted for c in curve.curves.values()]
        return mean_ok, per_unit, ", ".join(claim.option("moves"))
    sign = 1 if claim.option("direction") == "decreasing" else -1  # compare -curve when rising
    means = [sign * m for m in curve.means]
    if claim.option("mean_strict"):
        mean_ok = all(b < a - tol for a, b in itertools.pairwise(means))
    else:
        mean_ok = all(b <= a + tol for a, b in itertools.pairwise(means))
    if claim.option("seed_test") == "rank":
        limit = claim.option("rank_at_least")
        per_unit = [sign * _spearman(curve.xs, c) <= -limit for c in curve.curves.values()]
        words = f"Spearman rho {'<= -' if sign > 0 else '>= '}{limit:g} per seed"
    else:
        per_unit = [
            all(sign * b <= sign * a for a, b in itertools.pairwise(c))
            for c in curve.curves.values()
        ]
        words = "monotone per seed"
    return mean_ok, per_unit, f"{claim.option('direction')} ({words})"


def _shaped(claim: Claim, rows: pd.DataFrame) -> Verdict:
    found = _curve(claim, rows)
    if isinstance(found, str):
        return _missing(claim, found)
    curve, seeds = found
    mean_ok, per_unit, words = _shape_tests(claim, curve)
    count, units = sum(per_unit), len(per_unit)
    if mean_ok and count >= claim.option("share_reproduced") * units:
        verdict = REPRODUCED
    elif not mean_ok and count <= claim.option("share_not") * units:
        verdict = NOT_REPRODUCED
    else:
        verdict = DEPENDS
    means = ", ".join(f"{m:.4g}" for m in curve.means)
    xs = ", ".join(f"{x:g}" for x in curve.xs)
    has = "has" if mean_ok else "lacks"
    ours = f"mean {means} ({curve.over} {xs}) {has} the shape; {count}/{units} seeds have it"
    if claim.option("against"):
        ours = f"{claim.method} / {claim.option('against')}: {ours}"
    numbers = {"mean_has_shape": mean_ok, "seeds_with_shape": count, "units": units,
               "shape": words, "means": list(curve.means)}  # fmt: skip
    return _decide(claim, seeds, verdict, ours, numbers=numbers, curve=curve)


def _ratio_units(claim: Claim, rows: pd.DataFrame) -> pd.DataFrame | str:
    """Per unit the ratio interval ``lo, hi`` (and ``top``, the range's high end)."""
    against = claim.option("against")
    low, high = claim.option("range")
    if against == "optimum":
        rated = instance_ratios(rows_with_ratios(rows))
        rated = rated[rated["label"] == claim.method].dropna(subset=["ratio_lo"])
        if rated.empty:
            return f"{claim.method} with a ratio"
        keys = rows.drop_duplicates("instance_key").set_index("instance_key")[_UNIT[1:]]
        out = rated.join(keys, on="instance_key").set_index(_UNIT)
        out = out.rename(columns={"ratio_lo": "lo", "ratio_hi": "hi"})[["lo", "hi"]]
    else:
        mine = _values(_label_rows(rows, claim.method), claim.metric, _UNIT)
        labels = against if isinstance(against, list) else [against]
        found = [_values(_label_rows(rows, label), claim.metric, _UNIT) for label in labels]
        theirs = pd.concat(found, axis=1, join="inner").max(axis=1)  # against_worst: the largest
        if mine.empty or any(part.empty for part in found):
            return f"{claim.method} and {against} with {claim.metric}"
        ratio = (mine / theirs).dropna()
        out = pd.DataFrame({"lo": ratio, "hi": ratio})
    if isinstance(high, str):
        key = high.removeprefix("info.")
        info = pd.to_numeric(
            _label_rows(rows, claim.method)["info"].map(lambda t: _json_field(t, key)), "coerce"
        )
        tops = rows.loc[info.index].assign(top=info).groupby(_UNIT)["top"].min()
        out = out.join(tops, how="inner")
    else:
        out["top"] = float(high)
    out["bottom"] = float(low)
    out = out.dropna()
    return out if not out.empty else f"{claim.method} with a ratio and its range"


def _ratio(claim: Claim, rows: pd.DataFrame) -> Verdict:
    units = _ratio_units(claim, rows)
    if isinstance(units, str):
        return _missing(claim, units)
    low, high = claim.option("range")
    if claim.option("statistic") == "every" or isinstance(high, str):
        inside = (units["lo"] >= units["bottom"]) & (units["hi"] <= units["top"])
        outside = (units["hi"] < units["bottom"]) | (units["lo"] > units["top"])
        verdict = REPRODUCED if inside.all() else NOT_REPRODUCED if outside.any() else DEPENDS
        ours = (
            f"ratio {units['lo'].min():.4g}-{units['hi'].max():.4g}; within on "
            f"{int(inside.sum())}/{len(units)} seeds, outside on {int(outside.sum())}"
        )
        numbers = {"inside": int(inside.sum()), "outside": int(outside.sum()), "units": len(units)}
        if isinstance(high, str):
            ours += f" (high end {units['top'].min():.3g}-{units['top'].max():.3g})"
            closest = float((units["hi"] / units["top"]).max())
            numbers["closest"] = closest
            verdict = _tightness(claim, verdict, closest)
    else:
        lo_mean, lo_half = t_interval(units["lo"], claim.option("confidence"))
        hi_mean, hi_half = t_interval(units["hi"], claim.option("confidence"))
        ci = (lo_mean - lo_half, hi_mean + hi_half)
        if low <= ci[0] and ci[1] <= high:
            verdict = REPRODUCED
        elif ci[1] < low or ci[0] > high:
            verdict = NOT_REPRODUCED
        else:
            verdict = DEPENDS
        mean = f"{lo_mean:.3g}" if lo_mean == hi_mean else f"[{lo_mean:.3g}, {hi_mean:.3g}]"
        ours = f"mean {mean}, {claim.option('confidence'):.0%} CI [{ci[0]:.3g}, {ci[1]:.3g}]"
        numbers = {"mean_lo": lo_mean, "mean_hi": hi_mean, "ci": list(ci), "units": len(units)}
    return _decide(claim, _seeds(units.index), verdict, ours, numbers=numbers)


def _tightness(claim: Claim, verdict: str, closest: float) -> str:
    """A bound that held on every row: *vacuous* when its closest approach (the largest
    ``lhs / rhs``) is below the claim's ``vacuous_below`` (default 0.5: the bound was more
    than twice every observed value), else the verdict as it was."""
    if verdict == REPRODUCED and closest < claim.option("vacuous_below"):
        return VACUOUS
    return verdict


def _best_per_unit(rows: pd.DataFrame) -> pd.DataFrame:
    """Per unit the best schedule (objective of a solved row) and the best bound, over every
    label of the instance (by the rows' sense: ``min`` takes the least objective and the
    greatest bound)."""
    minimise = (rows["sense"] != "max").all()
    solved = solved_rows(rows).assign(value=lambda r: r["objective"].astype(float))
    bounds = rows.assign(value=pd.to_numeric(rows["bound"], "coerce")).dropna(subset=["value"])
    better, tighter = ("min", "max") if minimise else ("max", "min")
    best = solved.groupby(_UNIT)["value"].agg(better)
    bound = bounds.groupby(_UNIT)["value"].agg(tighter)
    return pd.DataFrame({"best_schedule": best, "best_bound": bound})


def _operand(rows: pd.DataFrame, mine: pd.DataFrame, spec: Any) -> pd.Series:
    """An operand of a ``holds`` inequality per row of ``mine`` (NaN where undefined)."""
    if isinstance(spec, int | float):
        return pd.Series(float(spec), index=mine.index)
    if spec == "objective":
        return solved_rows(mine)["objective"].astype(float).reindex(mine.index)
    if spec == "bound":
        return pd.to_numeric(mine["bound"], "coerce")
    if spec in ("best_schedule", "best_bound"):
        best = _best_per_unit(rows)[spec]
        return pd.Series(best.reindex(pd.MultiIndex.from_frame(mine[_UNIT])).to_numpy(), mine.index)
    column, key = spec.split(".", 1)
    return pd.to_numeric(mine[column].map(lambda t: _json_field(t, key)), "coerce")


def _inequality(
    claim: Claim, rows: pd.DataFrame, mine: pd.DataFrame
) -> tuple[pd.Series, float | None]:
    """Per row of ``mine`` whether ``lhs <= ((offset + factor * reference) / divisor) (1 +
    rel_tol)`` (NaN where an operand is undefined), and the largest ``lhs / rhs`` (the
    closest approach; None when no row is defined)."""
    lhs, offset, factor, reference, divisor = (
        _operand(rows, mine, claim.option(name))
        for name in ("lhs", "offset", "factor", "reference", "divisor")
    )
    rhs = (offset + factor * reference) / divisor
    flags = (
        (lhs <= rhs * (1 + claim.option("rel_tol"))).astype(float).where(lhs.notna() & rhs.notna())
    )
    ratio = (lhs / rhs).where(flags.notna())
    return flags, float(ratio.max()) if ratio.notna().any() else None


def _holds(claim: Claim, rows: pd.DataFrame) -> Verdict:
    """Kind ``holds``: the flag ``info.KEY``, or the inequality ``lhs <= offset + factor *
    reference``, on every row of the method (module docstring of :mod:`ddlsched.bench.claims`)."""
    mine = _label_rows(rows, claim.method)
    closest = None
    if claim.option("flag"):
        key = claim.option("flag")[len("info.") :]
        flags, what = mine["info"].map(lambda t: _json_field(t, key)), claim.option("flag")
    else:
        (flags, closest), what = _inequality(claim, rows, mine), "every operand"
    defined = mine[flags.notna()]
    if defined.empty:
        return _missing(claim, f"{claim.method} with {what} defined")
    held = flags[flags.notna()].astype(bool)
    failed, undefined = int((~held).sum()), int(flags.isna().sum())
    verdict = REPRODUCED if failed == 0 else NOT_REPRODUCED
    ours = f"holds on {int(held.sum())} of {len(held)} row(s), fails on {failed}"
    ours += f"; undefined on {undefined}" if undefined else ""
    numbers = {"rows": len(held), "failed": failed, "undefined": undefined}
    if closest is not None:
        ours += f"; lhs / rhs at most {closest:.4g}"
        numbers["closest"] = closest
        verdict = _tightness(claim, verdict, closest)
    else:
        ours += "; a flag: its slack is not recorded"
    seeds = tuple(sorted({int(s) for s in defined["instance_seed"]}))
    return _decide(claim, seeds, verdict, ours, numbers=numbers)


_EVALUATORS = {
    "paired_difference": _paired,
    "pointwise": _pointwise,
    "monotone": _shaped,
    "shaped": _shaped,
    "ratio_within": _ratio,
    "holds": _holds,
    "scaling": scaling,
}


def evaluate_claim(frame: pd.DataFrame, claim: Claim) -> Verdict:
    """The verdict on one claim from a results frame (:func:`ddlsched.bench.tables.load_results`)."""
    if claim.kind == "gain_compare":  # reads its other groups' rows too
        return gain_compare(frame, claim)
    rows = _claim_rows(frame, claim) if not frame.empty else frame
    if rows.empty:
        return _missing(claim, "its group")
    verdict = (
        lowest(claim, rows) if claim.kind == "lowest" else _EVALUATORS[claim.kind](claim, rows)
    )
    return distinct_instances(rows, verdict)


def evaluate_claims(frame: pd.DataFrame, claims: Any) -> list[Verdict]:
    """The verdicts on every claim, in the file's order."""
    return [evaluate_claim(frame, claim) for claim in claims]
