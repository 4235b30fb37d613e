"""The asrpt tables the paper's claims are checked against, from a results directory.

    python benchmarks/asrpt_tables.py results/asrpt            # Markdown
    python benchmarks/asrpt_tables.py results/asrpt-tiny --exact
    python benchmarks/asrpt_tables.py results/asrpt --spread --diagnostics

Per instance group, sweep point (the generator parameters that vary within
the group) and policy, means over the point's instances (seeds):

* the certified ratio interval of ``sum C_i`` (``[Gamma / best schedule,
  Gamma / best bound]``, best over every method's row of the instance), and
  the same interval for the total flow time ``sum (C_i - r_i)``: ``sum r_i``
  is subtracted from ``Gamma`` and from both ends (spec, "Ratios"), which
  removes the time origin's weight (on a whole trace ``sum r_i`` is 99.9 %
  of ``sum C_i``). ``sum r_i`` is read off ``lb_sum``'s row
  (``bound - info.flow_bound``);
* the reduction A-SRPT (label ``--relative-to``, default ``asrpt``) achieves
  against the policy, ``1 - A-SRPT / policy``,
  for total completion, total flow time and makespan (the paper's
  "x % below the baselines");
* for ``asrpt`` rows of Algorithm 1 (``eligibility = virtual``), Lemma 2's
  falsifiable check ``Gamma_A <= X + rho UB`` with ``UB`` the best schedule
  of the instance (``X`` and ``rho`` from ``info.theory``): the number of
  violations (a violation is reported, never hidden: it is a bug or a
  counterexample to the lemma). The ``eligibility = arrival`` variant
  (label ``asrpt[eligibility=arrival]``) is ours, not the paper's: the
  lemma is not claimed for it and it is not counted.

``--headline`` prints one line per sweep point instead: the flow-time
interval of ``--relative-to`` (lower / upper end), the lower ends of
A-SRPT-Perfect, of ``asrpt[eligibility=arrival]`` and of the best baseline,
and the reductions against SPJF and WCS-Duration, each ``mean [min, max]``
over the point's instances (seeds).

``--exact`` adds, for suites with a proven optimum, the share of instances
where each policy is optimal. ``--spread`` prints the ratio and reduction
columns as ``mean [min, max]`` over the point's instances (seeds).
``--diagnostics`` prints a second table, for every policy row, from each
run's ``info`` (:mod:`ddlsched.heuristics.asrpt_diagnostics`; a baseline is
eligible at arrival, so it holds nothing back): the shares of the total flow
time spent waiting for eligibility (``hold``), waiting for it while enough
GPUs were idle (``hold_idle``), queueing after it (``queue``) and, of that,
inside the job's own delay window (``window``), the running time over the
running time at ``alpha~_min`` (``slowdown``: placements split over
servers), the predicted / true virtual work (``work_ratio``), the median
``n~ / n`` (``pred_over_true``), the utilisation and the delay windows
opened; each ``mean [min, max]`` over the point's instances.
"""

from __future__ import annotations

import argparse
import json
import math

import pandas as pd

from ddlsched.bench.tables import load_results, rows_with_ratios

POLICY_BASES = (
    "asrpt", "asrpt_perfect", "spjf", "spwf", "wcs_duration", "wcs_workload", "wcs_subtime",
)  # fmt: skip


def _metric(row, name):
    return json.loads(row["metrics"] or "{}").get(name)


def _varying(frame: pd.DataFrame) -> dict[str, list[str]]:
    """Per group, the generator parameters that vary between its instances (the sweep)."""
    out = {}
    for group, rows in frame.groupby("group", sort=False):
        params = [json.loads(p or "{}") for p in rows["instance_params"].drop_duplicates()]
        keys = sorted({k for p in params for k in p})
        out[group] = [k for k in keys if len({json.dumps(p.get(k)) for p in params}) > 1]
    return out


def _point(row, varying) -> str:
    params = json.loads(row["instance_params"] or "{}")
    return ",".join(f"{k}={params.get(k)}" for k in varying.get(row["group"], [])) or "-"


def instance_table(frame: pd.DataFrame, relative_to: str = "asrpt") -> pd.DataFrame:
    """One line per (instance, policy label) with ratios, flow ratios and reductions."""
    out = []
    varying = _varying(frame)
    for key, rows in frame.groupby("instance_key", sort=False):
        ok = rows[rows["status"].isin(["optimal", "feasible"]) & rows["objective"].notna()]
        if ok.empty:
            continue
        best = ok["objective"].min()
        bounds = rows[rows["bound"].notna()]["bound"]
        bound = bounds.max() if not bounds.empty else math.nan
        lb_sum = rows[(rows["method"] == "lb_sum") & rows["bound"].notna()]
        releases = math.nan
        if not lb_sum.empty:
            info = json.loads(lb_sum.iloc[0]["info"] or "{}")
            releases = lb_sum.iloc[0]["bound"] - info.get("flow_bound", math.nan)
        asrpt = ok[ok["label"] == relative_to]
        base = {"objective": math.nan, "total_flow_s": math.nan, "makespan_s": math.nan}
        if not asrpt.empty:
            base = {m: _metric(asrpt.iloc[0], m) for m in ("total_flow_s", "makespan_s")}
            base["objective"] = asrpt.iloc[0]["objective"]
        for _, r in ok.iterrows():
            if r["method"] not in POLICY_BASES:
                continue
            line = {
                "group": r["group"],
                "point": _point(r, varying),
                "instance": key,
                "label": r["label"],
                "ratio_lo": r["objective"] / best,
                "ratio_hi": r["objective"] / bound if bound > 0 else math.inf,
                "flow_lo": (r["objective"] - releases) / (best - releases),
                "flow_hi": (r["objective"] - releases) / (bound - releases),
                "optimal": bool(r["ref_proven"]) and abs(r["objective"] - best) <= 1e-6 * best,
                "red_total": 1 - base["objective"] / r["objective"],
                "red_flow": 1 - base["total_flow_s"] / _metric(r, "total_flow_s"),
                "red_makespan": 1 - base["makespan_s"] / _metric(r, "makespan_s"),
                "epsilon_bar": _metric(r, "epsilon_bar"),
                "lemma2_violated": False,
            }
            info = json.loads(r["info"] or "{}")
            theory = info.get("theory") or {}
            algorithm_1 = info.get("eligibility", "virtual") == "virtual"
            if r["method"] == "asrpt" and algorithm_1 and theory.get("lemma2_x_s") is not None:
                rhs = theory["lemma2_x_s"] + theory["rho"] * best
                line["lemma2_violated"] = r["objective"] > rhs * (1 + 1e-9)
            out.append(line)
    return pd.DataFrame(out)


def _spread(values: pd.Series) -> str:
    """``mean [min, max]`` (the mean alone for one value)."""
    if len(values) == 1:
        return f"{values.iloc[0]:.4f}"
    return f"{values.mean():.4f} [{values.min():.4f}, {values.max():.4f}]"


def _sorted_by_label(table: pd.DataFrame) -> pd.DataFrame:
    order = {label: i for i, label in enumerate(sorted(dict.fromkeys(table["label"])))}
    table = table.assign(_order=table["label"].map(order))
    return table.sort_values(["_order"], kind="stable").drop(columns="_order")


def summary(table: pd.DataFrame, exact: bool, spread: bool = False) -> pd.DataFrame:
    ratio_fn = _spread if spread else "mean"
    agg = {
        "ratio_lo": ratio_fn, "ratio_hi": ratio_fn, "flow_lo": ratio_fn, "flow_hi": ratio_fn,
        "red_total": ratio_fn, "red_flow": ratio_fn, "red_makespan": ratio_fn,
        "lemma2_violated": "sum", "instance": "count",
    }  # fmt: skip
    if exact:
        agg["optimal"] = "mean"
    out = _sorted_by_label(table).groupby(["group", "point", "label"], sort=False).agg(agg)
    return out.rename(columns={"instance": "instances"})


def diagnostics_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Per (group, point, policy label): the run diagnostics (module docstring)."""
    varying = _varying(frame)
    lines = []
    rows = frame[frame["method"].isin(POLICY_BASES) & frame["objective"].notna()]
    for _, r in rows.iterrows():
        info = json.loads(r["info"] or "{}")
        if "hold_back_s" not in info:
            continue
        flow = _metric(r, "total_flow_s")
        lines.append(
            {
                "group": r["group"],
                "point": _point(r, varying),
                "label": r["label"],
                "hold": info["hold_back_s"] / flow,
                "hold_idle": info["hold_back_idle_s"] / flow,
                "queue": info["queue_wait_s"] / flow,
                "window": info.get("delay_wait_s", 0.0) / flow,
                "slowdown": info["placement_slowdown"] or math.nan,
                "work_ratio": info["virtual_work_ratio"] or math.nan,
                "pred_over_true": info["predicted_over_true_median"],
                "utilisation": info["utilisation"],
                "delays": info.get("delays_opened", 0),
                "instance": r["instance_key"],
            }
        )
    table = _sorted_by_label(pd.DataFrame(lines))
    names = ("hold", "hold_idle", "queue", "window", "slowdown", "work_ratio", "pred_over_true")
    agg = {k: _spread for k in names}
    agg.update(utilisation=_spread, delays=_spread, instance="count")
    out = table.groupby(["group", "point", "label"], sort=False).agg(agg)
    return out.rename(columns={"instance": "instances"})


BASELINES = ("spjf", "spwf", "wcs_duration", "wcs_workload", "wcs_subtime")


def headline(table: pd.DataFrame, relative_to: str) -> pd.DataFrame:
    """One line per (group, point): the flow-time interval's lower end of ``relative_to``,
    of A-SRPT-Perfect and of the arrival variant, the best baseline's, and the reduction
    ``1 - relative_to / policy`` against SPJF and WCS-Duration (sum C and flow time);
    each ``mean [min, max]`` over the point's instances."""
    lines = []
    for (group, point), rows in table.groupby(["group", "point"], sort=False):

        def col(label: str, name: str, rows: pd.DataFrame = rows) -> str:
            values = rows[rows["label"] == label][name]
            return _spread(values) if len(values) else "-"

        base = rows[rows["label"].isin(BASELINES)].groupby("label")["flow_lo"].mean()
        best = base.idxmin()
        lines.append(
            {
                "group": group,
                "point": point,
                f"{relative_to} flow": f"{col(relative_to, 'flow_lo')} / {col(relative_to, 'flow_hi')}",
                "asrpt_perfect flow": col("asrpt_perfect", "flow_lo"),
                "arrival flow": col("asrpt[eligibility=arrival]", "flow_lo"),
                "best baseline flow": f"{col(best, 'flow_lo')} ({best})",
                "vs spjf (sum C / flow)": f"{col('spjf', 'red_total')} / {col('spjf', 'red_flow')}",
                "vs wcs_duration (sum C / flow)": (
                    f"{col('wcs_duration', 'red_total')} / {col('wcs_duration', 'red_flow')}"
                ),
                "instances": rows["instance"].nunique(),
            }
        )
    return pd.DataFrame(lines).set_index(["group", "point"])


def _markdown(table: pd.DataFrame) -> None:
    table = table.reset_index()
    print("| " + " | ".join(table.columns) + " |")
    print("|" + "---|" * len(table.columns))
    for _, row in table.iterrows():
        cells = [f"{v:.4f}" if isinstance(v, float) else str(v) for v in row]
        print("| " + " | ".join(cells) + " |")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("results")
    ap.add_argument("--exact", action="store_true", help="add the share of optimal instances")
    ap.add_argument("--relative-to", default="asrpt", help="label the reductions are against")
    ap.add_argument("--spread", action="store_true", help="mean [min, max] over seeds")
    ap.add_argument("--diagnostics", action="store_true", help="also the A-SRPT diagnostics")
    ap.add_argument("--headline", action="store_true", help="one line per sweep point only")
    args = ap.parse_args()
    frame = rows_with_ratios(load_results(args.results))
    frame = frame[frame["family"] == "asrpt"]
    table = instance_table(frame, args.relative_to)
    if args.headline:
        _markdown(headline(table, args.relative_to))
    else:
        _markdown(summary(table, args.exact, args.spread))
    if args.diagnostics:
        print()
        _markdown(diagnostics_table(frame))


if __name__ == "__main__":
    main()
