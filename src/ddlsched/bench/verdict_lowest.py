"""Kind ``lowest`` (the method below every baseline), and the count of distinct instances.

A paper's "A-SRPT is lowest everywhere" is one statement over every baseline
(``against``, a list of method labels) and every instance of the claim's
groups; a rule against one baseline says less than the paper does. Per unit
(an instance: group, preset, generator parameters and seed) the method is
*lowest* when its metric is below every baseline's by more than ``tie_tol``
(``expect = "above"``: *highest*, above every baseline). Per baseline, the
paired difference ``method - baseline`` over the units and its Student
t-interval (as kind ``paired_difference``).

* **reproduced**: the method is lowest on every unit but at most
  ``misses_allowed`` (default 0 for this kind);
* **not reproduced**: some baseline's t-interval of the mean difference lies
  wholly on the wrong side of 0 (that baseline is lower on average), or the
  method is lowest on at most ``share_not`` of the units;
* **depends on seeds** otherwise.

A unit enters only when the method and every baseline have a value on it.
*Ours* counts the units where the method is lowest and, per baseline, the
units where the baseline is strictly better than the method, with the mean
difference and its half-width.

:func:`distinct_instances` counts, for any verdict, the distinct instances among its
units (units whose every label has the same objective count once).
"""

from __future__ import annotations

from dataclasses import replace

import pandas as pd

from ddlsched.bench.aggregate import solved_rows
from ddlsched.bench.claims import Claim
from ddlsched.bench.verdict_base import (
    _UNIT,
    DEPENDS,
    MISSING,
    NOT_REPRODUCED,
    REPRODUCED,
    Verdict,
    _decide,
    _label_rows,
    _missing,
    _seeds,
    _values,
    t_interval,
)

__all__ = ["distinct_instances", "lowest"]


def lowest(claim: Claim, rows: pd.DataFrame) -> Verdict:
    """The verdict of a ``lowest`` claim (module docstring) on the claim's rows."""
    against = claim.option("against")
    baselines = [against] if isinstance(against, str) else list(against)
    columns = {}
    for label in [claim.method, *baselines]:
        values = _values(_label_rows(rows, label), claim.metric, _UNIT)
        if values.empty:
            return _missing(claim, f"{label} with {claim.metric}")
        columns[label] = values
    table = pd.concat(columns, axis=1, join="inner").dropna()
    if table.empty:
        return _missing(claim, f"{claim.method} and every baseline on one instance")
    sign = 1.0 if claim.option("expect") == "below" else -1.0
    tie = claim.option("tie_tol")
    # gain > tie: the method is better than the baseline on the unit
    gains = {b: sign * (table[b] - table[claim.method]) for b in baselines}
    best = pd.concat([g > tie for g in gains.values()], axis=1).all(axis=1)
    units, wins = len(table), int(best.sum())
    per_baseline = {}
    certain_loss = []
    for label, gain in gains.items():
        mean, half = t_interval(-sign * gain, claim.option("confidence"))  # method - baseline
        better_than_method = int((gain < -tie).sum())
        per_baseline[label] = {"mean": mean, "half_width": half, "lower_on": better_than_method}
        wrong_side = mean - half > 0 if sign > 0 else mean + half < 0
        if wrong_side:
            certain_loss.append(label)
    misses = claim.options.get("misses_allowed", 0)
    if wins >= units - misses:
        verdict = REPRODUCED
    elif certain_loss or wins <= claim.option("share_not") * units:
        verdict = NOT_REPRODUCED
    else:
        verdict = DEPENDS
    side = "lowest" if sign > 0 else "highest"
    better = "lower" if sign > 0 else "higher"
    beaten = [
        f"{label} {better} on {part['lower_on']} ({part['mean']:+.3g} ± {part['half_width']:.2g})"
        for label, part in per_baseline.items()
    ]
    ours = f"{side} on {wins} of {units} instance(s); {', '.join(beaten)}"
    numbers = {"units": units, "wins": wins, "baselines": per_baseline,
               "certainly_better": certain_loss}  # fmt: skip
    return _decide(claim, _seeds(table.index), verdict, ours, numbers=numbers)


def distinct_instances(rows: pd.DataFrame, verdict: Verdict) -> Verdict:
    """The verdict with the count of distinct instances among its units: units whose every
    label has the same objective (to 10 significant digits) count as one instance (a
    generator that repeats an instance under several seeds; placement's availability
    patterns). Said in the note when some units repeat."""
    if verdict.verdict == MISSING or not verdict.seeds:
        return verdict
    solved = solved_rows(rows)
    if solved.empty:
        return verdict
    values = solved.assign(value=solved["objective"].astype(float).map(lambda v: f"{v:.10g}"))
    table = values.pivot_table(index=_UNIT, columns="label", values="value", aggfunc="first")
    table = table[table.index.get_level_values("instance_seed").isin(verdict.seeds)]
    by_point = table.groupby(level=["group", "preset", "instance_params"], sort=False)
    units = len(table)
    distinct = int(sum(len(part.drop_duplicates()) for _, part in by_point))
    note = verdict.note
    if distinct < units:
        repeat = f"{distinct} distinct instances among {units} (equal objectives count once)"
        note = f"{note}; {repeat}" if note else repeat
    return replace(verdict, note=note, instances=(units, distinct))
