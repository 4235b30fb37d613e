"""Figures from stored rows (matplotlib, Agg): ratios, runtimes and paper-style plots.

Every results directory gets

* ``ratios-<family>``: the distribution of each method's ratio per instance
  group (box of the certified lower end; the upper end as dots where only
  an interval is known);
* ``runtime-<family>``: runtime against instance size per method (log);

and the paper-style figures its family lists in :data:`PAPER_FIGURES`:

* ``objective-<family>-<group>`` (rar Fig. 4): mean objective per method
  (and the evaluator's average completion time when it is recorded);
* ``sweep-<family>-<method>`` (rar Figs. 5 and 7): mean objective against a
  swept method parameter (labels ``name[param=value]``);
* ``instances-<family>-<group>`` (rar Fig. 6, dmlrs Figs. 6-9): mean objective
  against a generator parameter that varies within an instance group, with
  95 % t-intervals over the instances of each point (a seeded method's
  objective on an instance is its mean over its seeds);
* ``ratio-groups-<family>`` (muri headline): mean ratio per group and method;
* ``runtime-bars-<family>`` (placement, Table II): mean runtime per method (log),
  beside the per-model objective (``instances-placement-table2``);
* ``ratio-vs-error-<family>`` (asrpt): A-SRPT's measured ratio against the
  prediction error ``epsilon_bar``, beside Theorem 1's bound;
* ``median-training-<family>-<group>`` (dmlrs Fig. 10): mean median training time
  per method;
* ``rounding-ratios-<family>`` and ``covering-<family>`` (dmlrs_slot): histograms
  of the rounded cost over the ILP optimum, and the share of draws meeting the
  covering row against ``1 - delta``.
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ddlsched.bench.tables import load_results, rows_with_ratios

__all__ = [
    "PAPER_FIGURES",
    "covering_vs_delta",
    "instance_sweep_figures",
    "median_training_bars",
    "method_sweep_figures",
    "objective_bars",
    "plot_results",
    "ratio_by_group",
    "ratio_distribution",
    "ratio_vs_error",
    "rounding_histograms",
    "runtime_bars",
    "runtime_vs_size",
]

log = logging.getLogger(__name__)

_SWEEP_LABEL = re.compile(r"^(?P<base>[^\[]+)\[(?P<key>[^=,\]]+)=(?P<value>[^,\]]+)\]$")


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


def _save(fig: Any, out: Path, name: str, fmt: str) -> Path:
    path = out / f"{name}.{fmt}"
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    _pyplot().close(fig)
    return path


def _value(text: str) -> Any:
    try:
        return json.loads(text)
    except (TypeError, ValueError):
        return text


def _objective_name(family: str) -> str:
    from ddlsched.registry import get_family

    try:
        return get_family(family).objective_name
    except Exception:
        return "objective"


def ratio_distribution(frame: pd.DataFrame, family: str, out: Path, fmt: str) -> list[Path]:
    """Box plots of each method's ratio, one panel per instance group."""
    plt = _pyplot()
    part = frame[(frame["family"] == family) & frame["ratio_lo"].notna()]
    if part.empty:
        return []
    groups = list(dict.fromkeys(part["group"]))
    fig, axes = plt.subplots(
        1, len(groups), figsize=(max(5, 2 + 0.7 * part["label"].nunique()) * len(groups), 4),
        squeeze=False,
    )  # fmt: skip
    for ax, group in zip(axes[0], groups, strict=True):
        rows = part[part["group"] == group]
        labels = sorted(dict.fromkeys(rows["label"]))
        data = [rows[rows["label"] == lb]["ratio_lo"].to_numpy() for lb in labels]
        ax.boxplot(data, tick_labels=labels, showmeans=True)
        for i, lb in enumerate(labels, start=1):
            sel = rows[(rows["label"] == lb) & (rows["ratio_hi"] > rows["ratio_lo"] + 1e-9)]
            hi = sel["ratio_hi"][sel["ratio_hi"].map(math.isfinite)]
            if len(hi):
                ax.plot([i + 0.25] * len(hi), hi, ".", color="tab:red", alpha=0.5)
        ax.axhline(1.0, color="grey", lw=0.8, ls="--")
        ax.set_title(f"{family} / {group}")
        ax.set_ylabel("ratio (box: certified lower end; red: upper end)")
        ax.tick_params(axis="x", rotation=45)
    return [_save(fig, out, f"ratios-{family}", fmt)]


def runtime_vs_size(frame: pd.DataFrame, family: str, out: Path, fmt: str) -> list[Path]:
    """Runtime against instance size, one series per method, log scale."""
    plt = _pyplot()
    part = frame[(frame["family"] == family) & frame["instance_size"].notna()]
    part = part[part["runtime_s"] > 0]
    if part.empty:
        return []
    fig, ax = plt.subplots(figsize=(6, 4))
    for label in sorted(dict.fromkeys(part["label"])):
        rows = part[part["label"] == label]
        means = rows.groupby("instance_size")["runtime_s"].mean()
        ax.plot(means.index, means.to_numpy(), "o-", label=label, ms=3)
    ax.set_yscale("log")
    ax.set_xlabel("instance size (jobs)")
    ax.set_ylabel("mean runtime (s)")
    ax.set_title(f"{family}: runtime against instance size")
    ax.legend(fontsize=7, ncol=2)
    return [_save(fig, out, f"runtime-{family}", fmt)]


def _is_sweep(label: str) -> bool:
    return _SWEEP_LABEL.match(label) is not None


def objective_bars(frame: pd.DataFrame, family: str, out: Path, fmt: str) -> list[Path]:
    """Mean objective per method per instance group (rar Fig. 4 style).

    Swept method variants are left to :func:`method_sweep_figures`; groups
    whose instances vary a generator parameter to :func:`instance_sweep_figures`.
    """
    plt = _pyplot()
    paths = []
    part = frame[(frame["family"] == family) & frame["objective"].notna()]
    part = part[~part["status"].isin(["error", "time_limit"])]
    for group in dict.fromkeys(part["group"]):
        rows = part[(part["group"] == group) & ~part["label"].map(_is_sweep)]
        if rows.empty or _swept_instance_params(frame[frame["group"] == group]):
            continue
        labels = sorted(dict.fromkeys(rows["label"]))
        metric = _shared_metric(rows, "average_completion")
        panels = [("objective", _objective_name(family))]
        if metric:
            panels.append((metric, "average completion (JCT)"))
        fig, axes = plt.subplots(
            1,
            len(panels),
            figsize=(4 + 0.6 * len(labels), 3.6) if len(panels) == 1 else (8, 3.6),
            squeeze=False,
        )
        for ax, (column, title) in zip(axes[0], panels, strict=True):
            if column == "objective":
                values = [rows[rows["label"] == lb]["objective"].mean() for lb in labels]
            else:
                values = [
                    pd.Series(
                        [json.loads(m).get(column) for m in rows[rows["label"] == lb]["metrics"]]
                    ).mean()
                    for lb in labels
                ]
            ax.bar(labels, values, color="tab:blue")
            ax.set_title(f"{family} / {group}: {title}")
            ax.tick_params(axis="x", rotation=45)
        paths.append(_save(fig, out, f"objective-{family}-{group}", fmt))
    return paths


def _shared_metric(rows: pd.DataFrame, name: str) -> str | None:
    heuristics = rows[rows["kind"] == "heuristic"]
    if heuristics.empty:
        return None
    present = heuristics["metrics"].map(lambda m: name in json.loads(m or "{}"))
    return name if present.all() else None


def method_sweep_figures(frame: pd.DataFrame, family: str, out: Path, fmt: str) -> list[Path]:
    """Mean objective against a swept method parameter (rar Figs. 5 and 7 style)."""
    plt = _pyplot()
    part = frame[(frame["family"] == family) & frame["objective"].notna()].copy()
    matches = part["label"].map(_SWEEP_LABEL.match)
    part = part[matches.notna()]
    if part.empty:
        return []
    part["base"] = [m.group("base") for m in matches[matches.notna()]]
    part["sweep_key"] = [m.group("key") for m in matches[matches.notna()]]
    part["sweep_value"] = [_value(m.group("value")) for m in matches[matches.notna()]]
    paths = []
    for (base, key), rows in part.groupby(["base", "sweep_key"], sort=False):
        fig, ax = plt.subplots(figsize=(5, 3.6))
        for group in dict.fromkeys(rows["group"]):
            sel = rows[rows["group"] == group]
            means = sel.groupby("sweep_value")["objective"].mean().sort_index()
            ax.plot(means.index, means.to_numpy(), "o-", label=group)
        if all(isinstance(v, (int, float)) and v > 0 for v in rows["sweep_value"]):
            values = sorted(set(rows["sweep_value"]))
            if values[-1] / values[0] >= 8:
                ax.set_xscale("log", base=2)
        ax.set_xlabel(key)
        ax.set_ylabel(f"mean {_objective_name(family)}")
        ax.set_title(f"{family}: {base} against {key}")
        ax.legend(fontsize=8)
        paths.append(_save(fig, out, f"sweep-{family}-{base}-{key}", fmt))
    return paths


def _t_half_width(std: np.ndarray, count: np.ndarray) -> np.ndarray:
    """Half-widths of 95 % t-intervals of means (0 where fewer than two values)."""
    from scipy.stats import t as student

    half = np.zeros(len(count))
    several = count >= 2
    half[several] = student.ppf(0.975, count[several] - 1) * std[several] / np.sqrt(count[several])
    return half


def _swept_instance_params(rows: pd.DataFrame) -> list[str]:
    if rows.empty:
        return []
    params = [json.loads(p or "{}") for p in rows["instance_params"].drop_duplicates()]
    keys = sorted({k for p in params for k in p})
    return [k for k in keys if len({json.dumps(p.get(k), sort_keys=True) for p in params}) > 1]


def instance_sweep_figures(frame: pd.DataFrame, family: str, out: Path, fmt: str) -> list[Path]:
    """Mean objective against a generator parameter varied in a group (rar Fig. 6 style)."""
    plt = _pyplot()
    paths = []
    part = frame[(frame["family"] == family) & frame["objective"].notna()]
    part = part[~part["status"].isin(["error", "time_limit"]) & ~part["label"].map(_is_sweep)]
    for group in dict.fromkeys(part["group"]):
        rows = part[part["group"] == group]
        swept = _swept_instance_params(rows)
        if len(swept) != 1:
            continue
        key = swept[0]
        rows = rows.assign(x=[json.loads(p)[key] for p in rows["instance_params"]])
        fig, ax = plt.subplots(figsize=(5, 3.6))
        for label in sorted(dict.fromkeys(rows["label"])):
            mine = rows[rows["label"] == label]
            # per instance first (a seeded method's mean over its seeds), then over instances
            per_instance = mine.groupby(["x", "instance_key"])["objective"].mean()
            stats = per_instance.groupby(level="x").agg(["mean", "std", "count"]).sort_index()
            half = _t_half_width(stats["std"].to_numpy(), stats["count"].to_numpy())
            ax.errorbar(stats.index, stats["mean"].to_numpy(), yerr=half, fmt="o-", capsize=3,
                        label=label)  # fmt: skip
        ax.set_xlabel(key)
        ax.set_ylabel(f"mean {_objective_name(family)}")
        ax.set_title(
            f"{family} / {group}: against {key}\n(bars: 95 % CI over instances)", fontsize=9
        )
        ax.legend(fontsize=8)
        paths.append(_save(fig, out, f"instances-{family}-{group}", fmt))
    return paths


def ratio_by_group(frame: pd.DataFrame, family: str, out: Path, fmt: str) -> list[Path]:
    """Mean ratio (lower end) per instance group and method: grouped bars (muri headline)."""
    plt = _pyplot()
    part = frame[(frame["family"] == family) & frame["ratio_lo"].notna()]
    if part.empty:
        return []
    table = part.pivot_table(index="group", columns="label", values="ratio_lo", aggfunc="mean")
    table = table.reindex(list(dict.fromkeys(part["group"])))
    fig, ax = plt.subplots(figsize=(2 + 1.2 * len(table.index), 3.6))
    width = 0.8 / max(1, len(table.columns))
    for i, label in enumerate(table.columns):
        xs = [g + i * width for g in range(len(table.index))]
        ax.bar(xs, table[label].to_numpy(), width=width, label=label)
    ax.set_xticks([g + 0.4 - width / 2 for g in range(len(table.index))], list(table.index))
    ax.axhline(1.0, color="grey", lw=0.8, ls="--")
    low = min(1.0, float(table.min().min()))
    ax.set_ylim(low - 0.02, max(1.05, float(table.max().max()) * 1.02))
    ax.set_ylabel("mean ratio to the optimum")
    ax.set_title(f"{family}: ratio per instance group")
    ax.legend(fontsize=8)
    return [_save(fig, out, f"ratio-groups-{family}", fmt)]


def runtime_bars(frame: pd.DataFrame, family: str, out: Path, fmt: str) -> list[Path]:
    """Mean runtime per method, log scale (placement time, Table II style)."""
    plt = _pyplot()
    part = frame[(frame["family"] == family) & (frame["runtime_s"] > 0)]
    if part.empty:
        return []
    means = part.groupby("label")["runtime_s"].mean().sort_values()
    fig, ax = plt.subplots(figsize=(3 + 0.6 * len(means), 3.6))
    ax.bar(list(means.index), means.to_numpy() * 1000.0, color="tab:orange")
    ax.set_yscale("log")
    ax.set_ylabel("mean runtime (ms)")
    ax.set_title(f"{family}: runtime per method")
    ax.tick_params(axis="x", rotation=45)
    return [_save(fig, out, f"runtime-bars-{family}", fmt)]


def ratio_vs_error(frame: pd.DataFrame, family: str, out: Path, fmt: str) -> list[Path]:
    """A-SRPT's measured ratio against the prediction error ``epsilon_bar``, beside
    Theorem 1's bound for the same instances (asrpt; rows with ``info.theory``)."""
    plt = _pyplot()
    part = frame[(frame["family"] == family) & frame["ratio_lo"].notna()]
    part = part[part["method"].isin(["asrpt", "asrpt_perfect"])]
    if part.empty:
        return []
    metrics = part["metrics"].map(lambda m: json.loads(m or "{}"))
    theory = part["info"].map(lambda i: json.loads(i or "{}").get("theory") or {})
    data = part.assign(
        eps=[
            t.get("epsilon_bar", m.get("epsilon_bar")) for m, t in zip(metrics, theory, strict=True)
        ],
        bound=[t.get("theorem1_bound") for t in theory],
    )
    fig, ax = plt.subplots(figsize=(5.6, 4))
    for label in sorted(dict.fromkeys(data["label"])):
        rows = data[data["label"] == label]
        ax.scatter(rows["eps"], rows["ratio_lo"], s=12, label=f"{label} (measured)")
    bounds = data[data["bound"].notna()]
    if not bounds.empty:
        ax.scatter(
            bounds["eps"], bounds["bound"], s=12, marker="x", color="black",
            label="Theorem 1 bound",
        )  # fmt: skip
        ax.set_yscale("log")
    ax.axhline(1.0, color="grey", lw=0.8, ls="--")
    ax.set_xlabel("epsilon_bar (iterations, Eq. 9)")
    ax.set_ylabel("competitive ratio (lower end)")
    ax.set_title(f"{family}: measured ratio vs prediction error")
    ax.legend(fontsize=7)
    return [_save(fig, out, f"ratio-vs-error-{family}", fmt)]


def _metric_of(metrics: str, name: str) -> Any:
    return json.loads(metrics or "{}").get(name)


def median_training_bars(frame: pd.DataFrame, family: str, out: Path, fmt: str) -> list[Path]:
    """Mean of the median training time per method, one panel per group whose instances
    do not vary (dmlrs Fig. 10: PD-ORS against OASiS)."""
    plt = _pyplot()
    paths = []
    part = frame[(frame["family"] == family) & frame["objective"].notna()]
    part = part[part["status"].isin(["optimal", "feasible"]) & ~part["label"].map(_is_sweep)]
    for group in dict.fromkeys(part["group"]):
        rows = part[part["group"] == group]
        if _swept_instance_params(frame[frame["group"] == group]):
            continue
        values = rows.assign(
            m=[_metric_of(m, "median_training_time_s") for m in rows["metrics"]]
        ).dropna(subset=["m"])
        if values.empty:
            continue
        means = values.groupby("label")["m"].mean() / 3600.0
        fig, ax = plt.subplots(figsize=(3 + 0.6 * len(means), 3.6))
        ax.bar(list(means.index), means.to_numpy(), color="tab:green")
        ax.set_ylabel("median training time (h)")
        ax.set_title(f"{family} / {group}: median training time")
        ax.tick_params(axis="x", rotation=45)
        paths.append(_save(fig, out, f"median-training-{family}-{group}", fmt))
    return paths


def rounding_histograms(frame: pd.DataFrame, family: str, out: Path, fmt: str) -> list[Path]:
    """Histograms of the rounding's ratio to the ILP optimum (dmlrs_slot), one per variant."""
    plt = _pyplot()
    part = frame[(frame["family"] == family) & (frame["method"] == "rounding")]
    part = part[part["ratio_lo"].notna() & part["ratio_lo"].map(math.isfinite)]
    if part.empty:
        return []
    labels = sorted(dict.fromkeys(part["label"]), key=str)
    cols = min(4, len(labels))
    rows_n = -(-len(labels) // cols)
    fig, axes = plt.subplots(rows_n, cols, figsize=(3.2 * cols, 2.6 * rows_n), squeeze=False)
    for ax, label in zip(axes.flat, labels, strict=False):
        data = part[part["label"] == label]["ratio_lo"].to_numpy()
        ax.hist(data, bins=30, color="tab:purple")
        ax.set_title(label, fontsize=7)
        ax.set_xlabel("rounded cost / ILP optimum", fontsize=7)
    for ax in list(axes.flat)[len(labels) :]:
        ax.axis("off")
    return [_save(fig, out, f"rounding-ratios-{family}", fmt)]


def covering_vs_delta(frame: pd.DataFrame, family: str, out: Path, fmt: str) -> list[Path]:
    """Share of rounding draws meeting the covering row (before any repair) against ``1 -
    delta`` (dmlrs_slot), one curve per rounding rule, scale and group."""
    plt = _pyplot()
    part = frame[(frame["family"] == family) & (frame["method"] == "rounding")].copy()
    if part.empty:
        return []
    info = part["info"].map(lambda i: json.loads(i or "{}"))
    part["delta"] = [i.get("delta") for i in info]
    part["scale"] = [i.get("scale") for i in info]
    # the rule (dmlrs_slot's rounding parameter): files written before it existed are literal
    part["rule"] = [i.get("rounding", "literal") for i in info]
    part["covering"] = [i.get("covering_success_share") for i in info]
    part = part.dropna(subset=["delta", "covering"])
    if part.empty:
        return []
    fig, ax = plt.subplots(figsize=(5, 4))
    for (rule, scale, group), rows in part.groupby(["rule", "scale", "group"], sort=False):
        means = rows.groupby("delta")["covering"].mean().sort_index()
        ax.plot(1 - means.index.to_numpy(), means.to_numpy(), "o-",
                label=f"{group}, {rule}, {scale}")  # fmt: skip
    ax.plot([0, 1], [0, 1], color="grey", lw=0.8, ls="--", label="1 - delta (guarantee)")
    ax.set_xlabel("1 - delta")
    ax.set_ylabel("share of draws meeting the covering row (26)")
    ax.set_title(f"{family}: covering success against 1 - delta")
    ax.legend(fontsize=7)
    return [_save(fig, out, f"covering-{family}", fmt)]


Figure = Callable[[pd.DataFrame, str, Path, str], list[Path]]

#: Paper-style figures per family (the family specs' experiments).
PAPER_FIGURES: dict[str, tuple[Figure, ...]] = {
    "rar": (objective_bars, method_sweep_figures, instance_sweep_figures),
    "muri": (ratio_by_group, objective_bars),
    "placement": (runtime_bars, objective_bars, instance_sweep_figures, ratio_by_group),
    # testbed bars (Fig. 5), job count / share / NIC / predictor sweeps (Figs. 6-9),
    # the delay-factor sweep, the ratio against the prediction error
    "asrpt": (
        objective_bars,
        instance_sweep_figures,
        method_sweep_figures,
        ratio_by_group,
        ratio_vs_error,
    ),
    # utility against machines and jobs (Figs. 6-9), mu / quanta sweeps, median training
    # time (Fig. 10), the ratio distributions over seeds (ratio_distribution, always drawn)
    "dmlrs": (instance_sweep_figures, method_sweep_figures, median_training_bars),
    "dmlrs_slot": (rounding_histograms, covering_vs_delta, method_sweep_figures),
}
_DEFAULT_FIGURES: tuple[Figure, ...] = (
    objective_bars,
    method_sweep_figures,
    instance_sweep_figures,
)


def plot_results(
    results: str | Path | pd.DataFrame, out: str | Path, fmt: str = "png"
) -> list[Path]:
    """Write every figure of a results directory (or rows) to ``out``; return the paths."""
    frame = results if isinstance(results, pd.DataFrame) else load_results(results, mixed="newest")
    if frame.empty:
        return []
    if "ratio_lo" not in frame:
        frame = rows_with_ratios(frame)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths: list[Path] = []
    for family in dict.fromkeys(frame["family"]):
        paths += ratio_distribution(frame, family, out, fmt)
        paths += runtime_vs_size(frame, family, out, fmt)
        for figure in PAPER_FIGURES.get(family, _DEFAULT_FIGURES):
            paths += figure(frame, family, out, fmt)
    log.info("wrote %d figure(s) to %s", len(paths), out)
    return paths
