"""Kind ``gain_compare``: one speed-up against another, per instance.

A paper that prints gains (a method's speed-up over its baselines, baseline / method of
a minimised metric) often also says where the gains are larger: Muri's average-JCT gains
are larger when job durations are unknown (Muri-L over Tiresias, AntMan and Themis) than
when they are known (Muri-S over SRTF and SRSF), and its makespan gains larger when every
job is submitted at time 0 (traces 1'-4') than on the original traces 1-4. Per unit:

* the gain ``A``: the mean over the ``against`` labels of ``against / method`` (the
  metric of each baseline over the method's, on the unit's instance);
* the gain ``B``: the same with ``other_method`` (default: the method) and
  ``other_against`` (default: ``against``), read on ``other_groups`` (default: the
  claim's own groups; given, the i-th of them pairs with the claim's i-th group and
  each group must hold one instance per seed, so that the unit is the pair of groups
  and the instance seed).

``expect = "above"``: ``A`` is larger than ``B`` (``below``: smaller). A unit is
*favourable* when ``A - B`` lies on the expected side by more than ``tie_tol``,
*unfavourable* when on the other side by more than it. **Reproduced**: favourable on
every unit but at most ``misses_allowed``, unfavourable on none; **not reproduced**:
unfavourable on ``share_not`` of the units or more (rounded up); **depends on seeds**
otherwise. The rule of ``pointwise`` with one seed per point.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import pandas as pd

from ddlsched.bench.claims import Claim
from ddlsched.bench.verdict_base import (
    _UNIT,
    DEPENDS,
    NOT_REPRODUCED,
    REPRODUCED,
    Verdict,
    _claim_rows,
    _decide,
    _label_rows,
    _missing,
    _seeds,
    _values,
)

__all__ = ["gain_compare"]


def _labels(value: Any) -> list[str]:
    return list(value) if isinstance(value, list) else [value]


def _gains(rows: pd.DataFrame, method: str, against: list[str], metric: str) -> pd.Series | str:
    """Per unit the mean over ``against`` of ``baseline / method``; what is missing, as
    text, when a label has no value."""
    mine = _values(_label_rows(rows, method), metric, _UNIT)
    if mine.empty:
        return f"{method} with {metric}"
    ratios = []
    for label in against:
        theirs = _values(_label_rows(rows, label), metric, _UNIT)
        if theirs.empty:
            return f"{label} with {metric}"
        ratios.append((theirs / mine).rename(label))
    both = pd.concat(ratios, axis=1, join="inner").dropna()
    if both.empty:
        return f"{method} and {', '.join(against)} on one instance"
    return both.mean(axis=1)


def _by_pair(gains: pd.Series, groups: tuple[str, ...]) -> pd.Series | str:
    """The gains indexed by (the group's position in ``groups``, instance seed)."""
    frame = gains.rename("gain").reset_index()
    frame["pair"] = frame["group"].map({g: i for i, g in enumerate(groups)})
    if frame.duplicated(["pair", "instance_seed"]).any():
        return "one instance per seed in each group (groups paired across)"
    return frame.set_index(["pair", "instance_seed"])["gain"]


def gain_compare(frame: pd.DataFrame, claim: Claim) -> Verdict:
    """The verdict on a ``gain_compare`` claim (module docstring) from the whole results
    frame (its other side may read other groups than the claim's)."""
    against = _labels(claim.option("against"))
    other_method = claim.option("other_method") or claim.method
    other_against = _labels(claim.option("other_against") or against)
    other = claim.option("other_groups")
    other_groups = tuple(_labels(other)) if other else claim.groups
    rows = _claim_rows(frame, claim) if not frame.empty else frame
    other_rows = (
        _claim_rows(frame, replace(claim, groups=other_groups)) if not frame.empty else frame
    )
    if rows.empty or other_rows.empty:
        return _missing(claim, "its group" if rows.empty else "its other groups")
    mine = _gains(rows, claim.method, against, claim.metric)
    theirs = _gains(other_rows, other_method, other_against, claim.metric)
    for side in (mine, theirs):
        if isinstance(side, str):
            return _missing(claim, side)
    if claim.option("other_groups"):
        mine, theirs = _by_pair(mine, claim.groups), _by_pair(theirs, other_groups)
        for side in (mine, theirs):
            if isinstance(side, str):
                return _missing(claim, side)
    both = pd.concat([mine.rename("a"), theirs.rename("b")], axis=1, join="inner")
    if both.empty:
        return _missing(claim, "both gains on one instance")
    diffs = both["a"] - both["b"]
    if claim.option("expect") == "below":
        diffs = -diffs
    tie = claim.option("tie_tol")
    good, bad = int((diffs > tie).sum()), int((diffs < -tie).sum())
    units = int(diffs.size)
    if good >= units - claim.option("misses_allowed") and bad == 0:
        verdict = REPRODUCED
    elif bad >= math.ceil(claim.option("share_not") * units):
        verdict = NOT_REPRODUCED
    else:
        verdict = DEPENDS
    ours = (
        f"gain {both['a'].min():.3g}-{both['a'].max():.3g}x vs {both['b'].min():.3g}-"
        f"{both['b'].max():.3g}x; {claim.option('expect')} on {good} of {units} unit(s), "
        f"{'below' if claim.option('expect') == 'above' else 'above'} on {bad}"
    )
    numbers = {
        "gain": [float(v) for v in both["a"]],
        "other_gain": [float(v) for v in both["b"]],
        "favourable": good,
        "unfavourable": bad,
        "units": units,
    }
    seeds = _seeds(both.index)
    if claim.option("other_groups"):
        found = {claim.groups[i] for i in both.index.get_level_values("pair")}
    else:
        found = set(both.index.get_level_values("group"))
    absent = [g for g in claim.groups if g not in found]
    note = f"no rows of group(s) {', '.join(absent)}" if absent else ""
    return replace(_decide(claim, seeds, verdict, ours, numbers=numbers), note=note)
