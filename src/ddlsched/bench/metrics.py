"""Metric tables: evaluation metrics per group and method, and their ratio to one method.

Ratio tables (:mod:`ddlsched.bench.tables`) compare a method with an
optimum. Simulation studies have no optimum; what researchers compare are
the metrics a simulator reports (average JCT, makespan, tail JCT) and each
policy's factor against a named policy (the papers' "Muri improves average
JCT by 1.13-6.15x"). :func:`metric_table` makes that table from the stored
rows: for each (family, group, method label), ``rows`` (all its rows),
``solved`` (rows without an error, a time limit or ``no_solution``, the
ones averaged), the
mean over them of every requested metric (a numeric key of the rows'
``metrics``), and with ``relative_to`` the mean over instances of ``value /
value of relative_to on the same instance`` (so a baseline's factor above 1
means the reference method is better on a minimised metric) and
``compared``, the number of instances where both have a value: when it is
below ``solved``, the factor and the means cover different instances.

``ddlsched bench table DIR --metrics average_jct_s,makespan_s,p99_jct_s
--relative-to muri-l`` prints it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence

import pandas as pd

from ddlsched.bench.tables import line_order
from ddlsched.bench.tasks import STATUS_TIME_LIMIT
from ddlsched.errors import DdlschedError

__all__ = ["metric_csv", "metric_markdown", "metric_table"]


_FIXED = ("family", "group", "method", "rows", "solved", "compared")


def _values(frame: pd.DataFrame, metrics: Sequence[str]) -> pd.DataFrame:
    ok = frame[~frame["status"].isin(["error", STATUS_TIME_LIMIT, "no_solution"])].copy()
    parsed = ok["metrics"].map(lambda m: json.loads(m or "{}"))
    numeric = {k for m in parsed for k in m if _is_number_metric(parsed, k)}
    missing = [m for m in metrics if m not in numeric]
    if missing:
        known = ", ".join(sorted(numeric)) or "none"
        raise DdlschedError(
            f"no numeric metric(s) {', '.join(missing)} in these rows (known: {known})"
        )
    for name in metrics:
        ok[name] = parsed.map(lambda m, n=name: _float(m.get(n)))
    return ok


def _is_number_metric(parsed: pd.Series, key: str) -> bool:
    return any(
        isinstance(m.get(key), (int, float)) and not isinstance(m.get(key), bool) for m in parsed
    )


def _float(value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return math.nan
    return float(value)


def metric_table(
    frame: pd.DataFrame, metrics: Sequence[str], relative_to: str | None = None
) -> pd.DataFrame:
    """One line per (family, group, method label): ``rows`` and the mean of each metric,
    plus ``<metric>_vs_<relative_to>`` columns when ``relative_to`` is given.

    Lines come in the order of :func:`ddlsched.bench.tables.line_order` (the summary's)."""
    metrics = list(dict.fromkeys(metrics))  # a name given twice counts once
    if not metrics:
        raise DdlschedError("--metrics: name at least one metric")
    reserved = [m for m in metrics if m in _FIXED]
    if reserved:
        raise DdlschedError(f"--metrics: {', '.join(reserved)} is a column name, not a metric")
    if relative_to is not None and relative_to not in set(frame["label"]):
        labels = ", ".join(sorted(set(frame["label"])))
        raise DdlschedError(f"--relative-to: no method {relative_to!r} (choose from {labels})")
    rows = _values(frame, metrics)
    if relative_to is not None:
        ref = rows[rows["label"] == relative_to].set_index("instance_key")
        if ref.empty:
            raise DdlschedError(f"--relative-to: method {relative_to!r} has no successful rows")
        for name in metrics:
            base = rows["instance_key"].map(ref[name].groupby(level=0).mean())
            rows[f"{name}_vs_{relative_to}"] = rows[name] / base
    columns = list(metrics)
    if relative_to is not None:
        columns += [f"{name}_vs_{relative_to}" for name in metrics]
    lines = []
    for family, group, label in line_order(frame):
        every = frame[
            (frame["family"] == family) & (frame["group"] == group) & (frame["label"] == label)
        ]
        part = rows[
            (rows["family"] == family) & (rows["group"] == group) & (rows["label"] == label)
        ]
        line = {"family": family, "group": group, "method": label, "rows": len(every)}
        line["solved"] = len(part)
        if relative_to is not None:
            line["compared"] = int(part[f"{metrics[0]}_vs_{relative_to}"].notna().sum())
        for col in columns:
            line[col] = part[col].mean() if len(part) else math.nan
        lines.append(line)
    fixed = ["family", "group", "method", "rows", "solved"]
    if relative_to is not None:
        fixed.append("compared")
    return pd.DataFrame(lines, columns=[*fixed, *columns])


def _cell(value) -> str:
    if isinstance(value, str):
        return value
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, int):
        return str(value)
    return f"{value:.6g}"


def metric_markdown(table: pd.DataFrame) -> str:
    """A GitHub-flavoured Markdown rendering of :func:`metric_table`."""
    cols = list(table.columns)
    lines = ["| " + " | ".join(cols) + " |"]
    lines.append("|" + "|".join(":---" if i < 3 else "---:" for i in range(len(cols))) + "|")
    for _, line in table.iterrows():
        lines.append("| " + " | ".join(_cell(line[c]) for c in cols) + " |")
    return "\n".join(lines) + "\n"


def metric_csv(table: pd.DataFrame) -> str:
    """Plain numbers."""
    return table.to_csv(index=False, float_format="%.10g")
