"""Metric tables: evaluation metrics per group and method, and their ratio to one method.

Ratio tables (:mod:`ddlsched.bench.tables`) compare a method with an
optimum. Simulation studies have no optimum; what researchers compare are
the metrics a simulator reports (average JCT, makespan, tail JCT) and each
policy's factor against a named policy (the papers' "Muri improves average
JCT by 1.13-6.15x"). :func:`metric_table` makes that table from the stored
rows: for each (family, group, method label), the mean over the group's
instances of every requested metric (a key of the rows' ``metrics``), and
with ``relative_to`` the mean over instances of ``value / value of
relative_to on the same instance`` (so a baseline's factor above 1 means the
reference method is better on a minimised metric).

``ddlsched bench table DIR --metrics average_jct_s,makespan_s,p99_jct_s
--relative-to muri-l`` prints it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence

import pandas as pd

from ddlsched.bench.tasks import STATUS_TIME_LIMIT
from ddlsched.errors import DdlschedError

__all__ = ["metric_csv", "metric_markdown", "metric_table"]


def _values(frame: pd.DataFrame, metrics: Sequence[str]) -> pd.DataFrame:
    ok = frame[~frame["status"].isin(["error", STATUS_TIME_LIMIT])].copy()
    parsed = ok["metrics"].map(lambda m: json.loads(m or "{}"))
    present = set().union(*parsed) if len(parsed) else set()
    missing = [m for m in metrics if m not in present]
    if missing:
        known = ", ".join(sorted(k for k in present if _is_number_metric(parsed, k))) or "none"
        raise DdlschedError(f"no metric(s) {', '.join(missing)} in these rows (known: {known})")
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
    plus ``<metric>_vs_<relative_to>`` columns when ``relative_to`` is given."""
    if not metrics:
        raise DdlschedError("--metrics: name at least one metric")
    if relative_to is not None and relative_to not in set(frame["label"]):
        labels = ", ".join(sorted(set(frame["label"])))
        raise DdlschedError(f"--relative-to: no method {relative_to!r} (choose from {labels})")
    rows = _values(frame, metrics)
    if relative_to is not None:
        ref = rows[rows["label"] == relative_to].set_index("instance_key")
        for name in metrics:
            base = rows["instance_key"].map(ref[name].groupby(level=0).mean())
            rows[f"{name}_vs_{relative_to}"] = rows[name] / base
    columns = list(metrics)
    if relative_to is not None:
        columns += [f"{name}_vs_{relative_to}" for name in metrics]
    lines = []
    order = list(dict.fromkeys(zip(rows["family"], rows["group"], rows["label"], strict=True)))
    for family, group, label in order:
        part = rows[
            (rows["family"] == family) & (rows["group"] == group) & (rows["label"] == label)
        ]
        line = {"family": family, "group": group, "method": label, "rows": len(part)}
        for col in columns:
            line[col] = part[col].mean()
        lines.append(line)
    return pd.DataFrame(lines, columns=["family", "group", "method", "rows", *columns])


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
