"""A paper's claims as data: ``benchmarks/claims/<paper>.toml``.

Each claim names the rows it reads (suite, instance group, preset, instance
parameters, method labels, metric, instance seeds), the comparison, and the
rule that turns the comparison into *reproduced*, *not reproduced* or
*depends on seeds*, and when that rule was written (``rule_written``: before
its rows were read, or after, with its confirmation on fresh seeds). :func:`load_claims` reads and
checks a file; every fault is one :class:`ClaimsError` line naming the file,
the claim and the field (``ddlsched: error: ...``, exit status 2). The
format, field by field, is in ``benchmarks/claims/README.md``; the
evaluation is :mod:`ddlsched.bench.verdict`.

Kinds (``kind``):

* ``paired_difference``: per instance seed, ``method - against`` of the
  metric (a seeded method: its mean over its method seeds). *Reproduced*: the
  ``confidence`` t-interval of the mean difference lies on the ``expect``
  side of 0 (``below``: the method's metric is lower). *Not reproduced*: it
  lies on the other side, or the method is strictly on the expected side on
  at most ``share_not`` of the seeds. Otherwise *depends on seeds* (the rule
  of benchmarks/results/rar.md Section 7, Fig. 4). ``against_params`` (generator
  parameters the claim's ``params`` fix, at other values) reads the other
  side on the instance at those values, paired by the rest of the instance
  (asrpt, Fig. 9: A-SRPT with the mean predictor against A-SRPT with RF on
  the same window); ``against`` then defaults to the method. With ``change =
  true`` each side is a change instead: the label's metric at ``params`` minus
  its metric at ``against_params`` (``relative``: their ratio - 1), so the unit
  is ``method``'s change minus ``against``'s (rar, Fig. 6: FF's makespan
  reduction from 10 to 20 servers against LS's and SJF-BCO's).
* ``pointwise``: per point (instance group, preset and generator parameters
  but the seed), *favourable* when ``method - against`` is on the ``expect``
  side of 0 on every seed, *unfavourable* when on the other side on every
  seed, *mixed* otherwise. *Reproduced*: favourable at all points but at most
  ``misses_allowed`` and unfavourable at none; *not reproduced*:
  unfavourable at ``share_not`` of the points or more (rounded up);
  otherwise *depends on seeds* (the rule of benchmarks/results/dmlrs.md, C1-C3).
* ``monotone`` and ``shaped``: a curve of the metric over ``over`` (a swept
  method parameter, read from the rows' ``params``, or a generator
  parameter, from ``instance_params``), per instance seed and as the mean
  over seeds. *Reproduced*: the mean curve has the shape and at least
  ``share_reproduced`` of the seeds do; *not reproduced*: the mean curve
  lacks it and at most ``share_not`` of the seeds have it; otherwise
  *depends on seeds*. Moves of the mean curve within ``flat_tol`` times its
  first value count as flat (seeds' curves: exact). ``monotone``: the mean
  curve non-increasing (``direction = "decreasing"``; ``mean_strict``: every
  move a drop beyond the tolerance); a seed has the shape when its curve is
  non-increasing (``seed_test = "monotone"``) or its Spearman rho against
  ``over`` is at most ``-rank_at_least`` (``seed_test = "rank"``);
  increasing mirrors it. ``shaped``: the curve's moves, flat ones dropped
  and equal signs merged, are exactly ``moves`` (``drop`` / ``rise``). With
  ``against`` the curve is the per-instance ratio of the method's metric to
  ``against``'s (asrpt, Fig. 7: A-SRPT over WCS-Duration against the
  single-GPU share), the mean curve the mean of those ratios.
* ``ratio_within``: per instance seed, the ratio ``method / against`` of the
  metric, or with ``against = "optimum"`` the certified ratio interval of
  ``bench table`` (:func:`ddlsched.bench.tables.rows_with_ratios`). The range
  is ``range = [lo, hi]``, or ``[lo, "info.KEY"]`` for a per-row upper end
  the method records (rar: Theorem 5's ``theorem5_bound``; a dotted KEY reads
  a nested value, asrpt: ``info.theory.theorem1_bound``). ``statistic =
  "mean"``: *reproduced* when the t-interval of the mean ratio lies within
  the range, *not reproduced* when it lies outside; ``statistic = "every"``:
  *reproduced* when every seed's ratio (interval) lies within, *not
  reproduced* when some seed's lies wholly outside; otherwise *depends on
  seeds*.
* ``holds``: a statement that must hold on each row of the method: a flag
  the method records, ``flag = "info.KEY"`` (true, false, or null where it
  is undefined; asrpt: Lemma 3, ``info.theory.lemma3_holds``), or the
  inequality ``lhs <= offset + factor * reference`` within a relative
  ``rel_tol`` (default 1e-9), each operand a number, the row's ``objective``
  or ``bound``, ``info.KEY``, ``metrics.KEY``, or the instance's
  ``best_schedule`` / ``best_bound`` over every label (asrpt: Lemma 2,
  ``Gamma_A <= X + rho UB``, the spec's falsifiable form, with UB the best
  schedule). A proven lemma admits no exception: *reproduced* when it holds
  on every row where it is defined (every instance and method seed), *not
  reproduced* when it fails on one; *missing* when it is defined on none
  (the undefined rows are counted).

* ``lowest``: the method below every baseline of ``against`` (a list) on every
  instance (``expect = "above"``: above every one): *reproduced* when it is so on
  every instance but ``misses_allowed`` (default 0), *not reproduced* when some
  baseline's t-interval of the mean difference lies wholly on the wrong side of 0 or
  the method is best on at most ``share_not`` of the instances
  (:mod:`ddlsched.bench.verdict_lowest`).
* ``scaling``: the log-log slope of the method's running time (``metric``:
  ``runtime_s``, ``wall_s`` or a metrics key) over the size ``over``
  (``instance_size`` or a generator parameter) against the paper's
  ``exponent``: *reproduced* when the t-interval of the per-seed slopes lies at
  or below it, *not reproduced* when wholly above
  (:mod:`ddlsched.bench.verdict_scaling`).

* ``gain_compare``: per instance, the method's gain (the mean over ``against`` of
  baseline / method) against another gain (``other_method`` over ``other_against``,
  on ``other_groups`` paired in order): *reproduced* when larger (``expect =
  "above"``) on every instance but ``misses_allowed``, *not reproduced* when smaller
  on ``share_not`` of them or more (:mod:`ddlsched.bench.verdict_gain`).

``against`` as a list in ``paired_difference``, ``pointwise`` and ``ratio_within``
expands the claim into one claim per baseline (id ``ID.BASELINE``; ``{against}`` in the
text names it); ``ratio_within`` with ``against_worst = true`` reads the ratio to the
worst baseline per instance instead. A bound (``holds`` inequality, ``ratio_within``
with an ``info.KEY`` high end) records its closest approach, the largest ``lhs / rhs``,
and is *vacuous* when that stays below ``vacuous_below`` (default 0.5).
``rule_written`` (``before`` / ``after`` the claim's rows were read) and, after,
``confirmation`` (fresh seeds: command, seeds, date), ``no_fresh_seeds`` (why none
exist) or ``unconfirmed`` (the confirming run, not yet made) say where the rule comes from.

A claim whose needed seeds are not all in the rows is evaluated on the seeds
that are there and marked *incomplete*, as is a ``pointwise`` claim read at
fewer points than its groups' rows have (a method missing at some); one
without rows is *missing* and
names the command that runs its suite. Our choices: the pairing unit is the
instance (same group, preset, instance parameters and seed), a seeded
method's value on an instance is its mean over its method seeds (as the
ratio of expectations in ``bench table``), and rows without a schedule
(failed, ``no_solution``) leave their seed out; a curve over a generator
parameter reads the method's label alone (its variants ``label[...]`` are
other methods).
"""

from __future__ import annotations

import hashlib
import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ddlsched.bench.suite import _read_toml
from ddlsched.bench.suite_values import SuiteError, check_name, check_seeds, is_number

__all__ = [
    "KINDS", "OPERANDS", "RULE_WRITTEN", "Claim", "ClaimsError", "ClaimsFile", "load_claims",
]  # fmt: skip

KINDS = (
    "paired_difference", "pointwise", "monotone", "shaped", "ratio_within", "holds", "lowest",
    "scaling", "gain_compare",
)  # fmt: skip

#: When a claim's rule was written: before its rows were read, or after (then a confirmation
#: on fresh instance seeds, or the reason no fresh seeds exist, is required).
RULE_WRITTEN = ("before", "after")

_COMMON = {
    "id", "text", "paper_value", "figure", "kind", "suite", "family", "group", "preset",
    "params", "metric", "seeds", "method", "confidence", "rule_written", "confirmation",
    "no_fresh_seeds", "unconfirmed",
}  # fmt: skip
#: Kinds whose ``against`` may be a list: the claim is expanded into one claim per baseline.
_EXPANDED = ("paired_difference", "pointwise", "ratio_within")
#: Kinds whose ``against`` may be a list: expanded, or one rule over all (lowest, gain_compare).
_LISTED = (*_EXPANDED, "lowest", "gain_compare")
# fmt: off
_BY_KIND = {
    "paired_difference": {"against", "against_params", "expect", "share_not", "tie_tol",
                          "relative", "change"},
    "pointwise": {"against", "expect", "misses_allowed", "share_not", "tie_tol"},
    "monotone": {
        "over", "against", "direction", "mean_strict", "seed_test", "rank_at_least", "flat_tol",
        "share_reproduced", "share_not",
    },
    "shaped": {"over", "against", "moves", "flat_tol", "share_reproduced", "share_not"},
    "ratio_within": {"against", "range", "statistic", "vacuous_below", "against_worst"},
    "holds": {"flag", "lhs", "offset", "factor", "reference", "divisor", "rel_tol",
              "vacuous_below"},
    "lowest": {"against", "expect", "misses_allowed", "share_not", "tie_tol"},
    "scaling": {"over", "exponent"},
    "gain_compare": {"against", "other_method", "other_against", "other_groups", "expect",
                     "misses_allowed", "share_not", "tie_tol"},
}
#: Operands of a ``holds`` inequality that are not a number, ``info.KEY`` or ``metrics.KEY``:
#: the row's own objective and bound, the instance's best schedule and best bound (any label).
OPERANDS = ("objective", "bound", "best_schedule", "best_bound")
# fmt: on
_DEFAULTS: dict[str, Any] = {
    "confidence": 0.95,
    "metric": "objective",
    "expect": "below",
    "share_not": 0.25,
    "share_reproduced": 0.75,
    "tie_tol": 1e-9,
    "flat_tol": 0.005,
    "direction": "decreasing",
    "mean_strict": False,
    "relative": False,
    "change": False,
    "seed_test": "monotone",
    "rank_at_least": 0.8,
    "statistic": "mean",
    "misses_allowed": 1,
    "offset": 0.0,
    "factor": 1.0,
    "divisor": 1.0,
    "rel_tol": 1e-9,
    "vacuous_below": 0.5,
}
_CHOICES = {
    "expect": ("below", "above"),
    "direction": ("decreasing", "increasing"),
    "seed_test": ("monotone", "rank"),
    "statistic": ("mean", "every"),
}


class ClaimsError(SuiteError):
    """A claims file is malformed; the message names the file, the claim and the field."""


@dataclass(frozen=True)
class Claim:
    """One claim: what it reads, how it compares, the rule (fields: module docstring)."""

    id: str
    text: str
    paper_value: str
    kind: str
    suites: tuple[str, ...]
    groups: tuple[str, ...]
    method: str
    seeds: tuple[int, ...]
    metric: str = "objective"
    figure: str = ""
    family: str | None = None
    preset: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    options: Mapping[str, Any] = field(default_factory=dict)
    rule_written: str = ""
    confirmation: str = ""

    def option(self, name: str) -> Any:
        """A kind-specific field (the rule), with its default."""
        return self.options.get(name, _DEFAULTS.get(name))

    @property
    def run_command(self) -> str:
        """The command that runs the claim's suite (its first suite)."""
        return f"ddlsched bench run benchmarks/suites/{self.suites[0]}.toml"


@dataclass(frozen=True)
class ClaimsFile:
    """A parsed claims file: the paper it states, its claims, its path and hash."""

    path: Path
    paper: str
    title: str
    claims: tuple[Claim, ...]
    sha256: str


def _text(where: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ClaimsError(where, f"expected a non-empty string, got {value!r}")
    return value


def _share(where: str, value: Any) -> float:
    if not is_number(value) or not 0 <= value <= 1:
        raise ClaimsError(where, f"expected a number in [0, 1], got {value!r}")
    return float(value)


def _name(where: str, value: Any) -> str:
    try:
        return check_name(where, value)
    except SuiteError as exc:
        raise ClaimsError(where, exc.message) from None


def _groups(where: str, value: Any) -> tuple[str, ...]:
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list) or not names:
        raise ClaimsError(where, f"expected an instance group or a list of them, got {value!r}")
    return tuple(_text(where, name) for name in names)


def _suites(where: str, value: Any) -> tuple[str, ...]:
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list) or not names:
        raise ClaimsError(where, f"expected a suite name or a list of them, got {value!r}")
    return tuple(_name(where, name) for name in names)


def _check_option(where: str, name: str, value: Any) -> Any:
    """One kind-specific field, checked (``where`` names the claim)."""
    at = f"{where}.{name}"
    if name in _CHOICES:
        if value not in _CHOICES[name]:
            raise ClaimsError(at, f"expected one of {', '.join(_CHOICES[name])}, got {value!r}")
    elif name in ("share_not", "share_reproduced", "rank_at_least", "vacuous_below"):
        _share(at, value)
    elif name in ("flat_tol", "tie_tol", "rel_tol"):
        if not is_number(value) or not 0 <= value < math.inf:
            raise ClaimsError(at, f"expected a finite number >= 0, got {value!r}")
    elif name == "misses_allowed":
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise ClaimsError(at, f"expected an integer >= 0, got {value!r}")
    elif name == "flag":
        if not isinstance(value, str) or not value.startswith("info.") or len(value) <= 5:
            raise ClaimsError(at, f"expected 'info.KEY', got {value!r}")
    elif name in ("mean_strict", "against_worst", "relative", "change"):
        if not isinstance(value, bool):
            raise ClaimsError(at, f"expected true or false, got {value!r}")
    elif name == "moves":
        if (
            not isinstance(value, list)
            or not value
            or any(m not in ("drop", "rise") for m in value)
        ):
            raise ClaimsError(at, f"expected a list of 'drop' and 'rise', got {value!r}")
        if any(a == b for a, b in itertools.pairwise(value)):
            raise ClaimsError(at, "equal neighbouring moves merge: write each run once")
    elif name == "range":
        _check_range(at, value)
    elif name in ("lhs", "offset", "factor", "reference", "divisor"):
        _check_operand(at, value)
    elif name == "against_params":
        if not isinstance(value, Mapping) or not value:
            raise ClaimsError(at, f"expected a table of instance parameters, got {value!r}")
    elif name in ("other_against", "other_groups") and isinstance(value, list):
        if not value or len(set(value)) != len(value):
            raise ClaimsError(at, f"expected distinct names, got {value!r}")
        for label in value:
            _text(at, label)
    elif name in ("other_method", "other_against", "other_groups"):
        _text(at, value)
    elif name == "against" and isinstance(value, list):
        if not value or len(set(value)) != len(value):
            raise ClaimsError(at, f"expected distinct method labels, got {value!r}")
        for label in value:
            _text(at, label)
    elif name in ("against", "over"):
        _text(at, value)
    elif name == "exponent" and (not is_number(value) or not 0 < value < math.inf):
        raise ClaimsError(at, f"expected a finite number > 0, got {value!r}")
    return value


def _check_operand(at: str, value: Any) -> None:
    """An operand of a ``holds`` inequality: a number, one of :data:`OPERANDS`,
    ``info.KEY`` or ``metrics.KEY``."""
    if is_number(value) or value in OPERANDS:
        return
    if isinstance(value, str) and any(
        value.startswith(prefix) and len(value) > len(prefix) for prefix in ("info.", "metrics.")
    ):
        return
    raise ClaimsError(
        at, f"expected a number, {', '.join(OPERANDS)}, 'info.KEY' or 'metrics.KEY', got {value!r}"
    )


def _check_alternatives(where: str, kind: str, merged: Mapping[str, Any]) -> None:
    """The fields a kind needs one of: ``holds`` a flag or an inequality (``lhs`` and
    ``reference``); ``against_params`` only over parameters the claim's ``params`` fix."""
    if kind == "holds":
        if ("flag" in merged) == ("lhs" in merged):
            raise ClaimsError(f"{where}.flag", "give either flag or lhs (an inequality)")
        if "lhs" in merged and "reference" not in merged:
            raise ClaimsError(f"{where}.reference", "missing (lhs <= offset + factor * reference)")
    if merged.get("against_worst") and not isinstance(merged.get("against"), list):
        raise ClaimsError(f"{where}.against_worst", "needs a list of methods in against")
    if isinstance(merged.get("against"), list) and kind not in _LISTED:
        raise ClaimsError(f"{where}.against", f"a {kind} claim compares with one method label")
    other = merged.get("other_groups")
    if other is not None and _count(other) != _count(merged.get("group")):
        raise ClaimsError(f"{where}.other_groups", "expected one group per group of the claim")
    swap = merged.get("against_params")
    if merged.get("change") and swap is None:
        raise ClaimsError(f"{where}.change", "needs against_params (where each change starts)")
    if isinstance(swap, Mapping):
        params = merged.get("params", {})
        for name, value in swap.items():
            if not isinstance(params, Mapping) or name not in params or params[name] == value:
                raise ClaimsError(
                    f"{where}.against_params.{name}",
                    f"must change a parameter the claim's params fix (params.{name})",
                )


def _count(names: Any) -> int:
    """How many names a field gives: one text, or a list of them (-1: neither)."""
    return 1 if isinstance(names, str) else len(names) if isinstance(names, list) else -1


def _check_range(at: str, value: Any) -> None:
    if not isinstance(value, list) or len(value) != 2:
        raise ClaimsError(at, f"expected [low, high], got {value!r}")
    low, high = value
    if not is_number(low):
        raise ClaimsError(at, f"expected a number as the low end, got {low!r}")
    if isinstance(high, str):
        if not high.startswith("info.") or len(high) <= 5:
            raise ClaimsError(at, f"expected a number or 'info.KEY' as the high end, got {high!r}")
    elif not is_number(high) or high < low:
        raise ClaimsError(at, f"expected a high end >= {low}, got {high!r}")


def _claim(table: Any, where: str, defaults: Mapping[str, Any]) -> Claim:
    if not isinstance(table, Mapping):
        raise ClaimsError(where, f"expected a table, got {table!r}")
    where = f"{where} ({table['id']})" if isinstance(table.get("id"), str) else where
    merged = {**defaults, **table}
    kind = merged.get("kind")
    if kind not in KINDS:
        raise ClaimsError(f"{where}.kind", f"expected one of {', '.join(KINDS)}, got {kind!r}")
    allowed = _COMMON | _BY_KIND[kind]
    for name in table:
        if name not in allowed:
            raise ClaimsError(f"{where}.{name}", f"unknown field of a {kind} claim")
    required = ["id", "text", "paper_value", "suite", "group", "method", "seeds"]
    alone = "against_params" in merged and not merged.get("change")
    required += {"paired_difference": [] if alone else ["against"],
                 "pointwise": ["against"], "monotone": ["over"], "shaped": ["over", "moves"],
                 "ratio_within": ["against", "range"], "holds": [],
                 "lowest": ["against"], "scaling": ["over", "exponent"],
                 "gain_compare": ["against"]}[kind]  # fmt: skip
    for name in required:
        if name not in merged:
            raise ClaimsError(f"{where}.{name}", "missing")
    _check_alternatives(where, kind, merged)
    rule_written, confirmation = _rule_history(where, merged, table)
    params = merged.get("params", {})
    if not isinstance(params, Mapping):
        raise ClaimsError(
            f"{where}.params", f"expected a table of instance parameters, got {params!r}"
        )
    try:
        seeds = check_seeds("seeds", merged["seeds"])
    except SuiteError as exc:
        raise ClaimsError(f"{where}.{exc.field_path}", exc.message) from None
    options = {
        name: _check_option(where, name, merged[name]) for name in _BY_KIND[kind] if name in merged
    }
    confidence = merged.get("confidence", 0.95)
    if not is_number(confidence) or not 0 < confidence < 1:
        raise ClaimsError(f"{where}.confidence", f"expected a number in (0, 1), got {confidence!r}")
    optional = {
        name: _text(f"{where}.{name}", merged[name])
        for name in ("family", "preset", "figure")
        if name in merged
    }
    return Claim(
        id=_name(f"{where}.id", merged["id"]),
        text=_text(f"{where}.text", merged["text"]),
        paper_value=_text(f"{where}.paper_value", merged["paper_value"]),
        kind=kind,
        suites=_suites(f"{where}.suite", merged["suite"]),
        groups=_groups(f"{where}.group", merged["group"]),
        method=_text(f"{where}.method", merged["method"]),
        seeds=seeds,
        metric=_text(f"{where}.metric", merged.get("metric", "objective")),
        figure=optional.get("figure", ""),
        family=optional.get("family"),
        preset=optional.get("preset"),
        params=dict(params),
        options={**options, "confidence": float(confidence)},
        rule_written=rule_written,
        confirmation=confirmation,
    )


def _rule_history(where: str, merged: Mapping[str, Any], own: Mapping[str, Any]) -> tuple[str, str]:
    """``rule_written`` (``before`` / ``after`` its rows were read; empty: not stated) and, for
    a rule written after, one of: its ``confirmation`` on fresh seeds, ``no_fresh_seeds`` (why
    none exist), or ``unconfirmed`` (the run that would confirm it, not yet made). A claim's
    own field replaces the others' defaults."""
    names = ("confirmation", "no_fresh_seeds", "unconfirmed")
    written = merged.get("rule_written", "")
    if written and written not in RULE_WRITTEN:
        raise ClaimsError(
            f"{where}.rule_written", f"expected one of {', '.join(RULE_WRITTEN)}, got {written!r}"
        )
    if any(name in own for name in names):
        merged = {**merged, **{name: own.get(name) for name in names}}
    elif written == "before":  # the file's default confirmation is about its later rules
        return written, ""
    given = {name: merged.get(name) for name in names if merged.get(name) is not None}
    for name, value in given.items():
        _text(f"{where}.{name}", value)
    if len(given) > 1:
        raise ClaimsError(f"{where}.confirmation", f"give one of {', '.join(names)}")
    if written == "after" and not given:
        raise ClaimsError(
            f"{where}.confirmation",
            "a rule written after its rows needs its confirmation on fresh instance seeds "
            "(command, seeds, date), no_fresh_seeds (why none exist) or unconfirmed (the run "
            "that would confirm it)",
        )
    prefix = {"confirmation": "on fresh seeds", "no_fresh_seeds": "no fresh seeds",
              "unconfirmed": "NOT confirmed yet"}  # fmt: skip
    return written, "".join(f"{prefix[name]}: {value}" for name, value in given.items())


def _expand(claim: Claim) -> tuple[Claim, ...]:
    """A claim whose ``against`` is a list (kinds :data:`_EXPANDED`): one claim per baseline,
    id ``ID.BASELINE``, ``{against}`` in its text replaced by the baseline."""
    against = claim.options.get("against")
    if (
        claim.kind not in _EXPANDED
        or not isinstance(against, list)
        or claim.options.get("against_worst")
    ):
        return (claim,)
    out = []
    for label in against:
        text = claim.text.replace("{against}", label)
        if text == claim.text:
            text = f"{claim.text} (against {label})"
        options = {**claim.options, "against": label}
        out.append(replace(claim, id=f"{claim.id}.{label}", text=text, options=options))
    return tuple(out)


def load_claims(path: str | Path) -> ClaimsFile:
    """Read and check a claims file (format: ``benchmarks/claims/README.md``)."""
    path = Path(path)
    try:
        data, raw = _read_toml(path)
    except SuiteError as exc:
        raise ClaimsError(
            exc.field_path, exc.message.replace("suite", "claims"), str(path)
        ) from None
    try:
        unknown = sorted(set(data) - {"paper", "defaults", "claims"})
        if unknown:
            raise ClaimsError(unknown[0], "unknown table (expected paper, defaults, claims)")
        paper = data.get("paper")
        if not isinstance(paper, Mapping) or "name" not in paper:
            raise ClaimsError("paper.name", "missing: the [paper] table names the paper")
        name = _text("paper.name", paper["name"])
        defaults = data.get("defaults", {})
        if not isinstance(defaults, Mapping):
            raise ClaimsError("defaults", f"expected a table, got {defaults!r}")
        tables = data.get("claims")
        if not isinstance(tables, list) or not tables:
            raise ClaimsError("claims", "missing: give at least one [[claims]] table")
        claims = tuple(
            expanded
            for i, t in enumerate(tables)
            for expanded in _expand(_claim(t, f"claims[{i}]", defaults))
        )
        seen: set[str] = set()
        for claim in claims:
            if claim.id in seen:
                raise ClaimsError(f"claims ({claim.id})", f"{claim.id!r} is used twice")
            seen.add(claim.id)
    except ClaimsError as exc:
        raise ClaimsError(exc.field_path, exc.message, str(path)) from None
    return ClaimsFile(
        path=path,
        paper=name,
        title=str(paper.get("title", paper["name"])),
        claims=claims,
        sha256=hashlib.sha256(raw).hexdigest(),
    )
