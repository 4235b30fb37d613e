"""The dmlrs tables (competitive ratios over rounding seeds, bound gaps, loss decomposition).

    python benchmarks/dmlrs_tables.py results/dmlrs-tiny
    python benchmarks/dmlrs_tables.py results/dmlrs
    python benchmarks/dmlrs_tables.py results/dmlrs-loss --loss

Utility is maximised, so a method's ratio on an instance is ``OPT / utility``
(>= 1). ``OPT`` is bracketed by the best schedule of the instance (any
method's row, ``exact`` included) from below and the best (smallest) valid
upper bound (``exact``'s proof, ``colgen``, ``ub_prices``, ``ub_trivial``)
from above; when ``exact`` proved the optimum the two coincide.

Tables:

1. **Ratios over seeds.** Per group (and sweep point) and method label:
   the ratio of expectations ``OPT / mean_seeds utility`` per instance (for
   PD-ORS, the randomized algorithm's guarantee is about this quantity),
   beside the distribution of the per-seed ratio ``OPT / utility``: mean,
   median and worst over every (instance, seed) pair. Each number is an
   interval ``[best schedule / x, best bound / x]`` (a single value when the
   optimum is proven); means are over instances.
2. **Bound gaps.** Per bound method: mean ``bound / best schedule`` (how far
   above the best known utility it sits) and, with a proven optimum, ``bound
   / OPT``; for ``ub_prices`` also the certified ratio ``UB(p_final) / PD-ORS
   utility`` of the run it certifies, and ``UB(p_final) / colgen bound``
   (how good PD-ORS's prices are as duals).
3. ``--loss``: the loss decomposition (spec, "Beyond the paper") on a suite
   with the labels ``pd_ors`` (as published), ``pd_ors_ilp`` (Problem (23)
   solved exactly), ``pd_ors_q4`` and ``pd_ors_q16`` (4x and 16x finer
   quanta), ``pd_ors_ilp_q16`` (both), ``colgen`` (the offline
   restricted-master schedule) and ``exact``: mean utility per step (over
   seeds, then instances), the utility each step adds (rounding: ``ilp -
   lp``; quantisation: ``ilp_q16 - ilp``; being online: ``OPT -
   ilp_q16``, an interval from the bracket of OPT), as a share of OPT's
   bracket.
"""

from __future__ import annotations

import argparse
import json
import math

import numpy as np
import pandas as pd

from ddlsched.bench.tables import load_results

BOUNDS = ("exact", "colgen", "ub_prices", "ub_trivial")
LOSS_STEPS = ("pd_ors", "pd_ors_ilp", "pd_ors_q4", "pd_ors_q16", "pd_ors_ilp_q16")


def _varying(frame: pd.DataFrame) -> dict[str, list[str]]:
    out = {}
    for group, rows in frame.groupby("group", sort=False):
        params = [json.loads(p or "{}") for p in rows["instance_params"].drop_duplicates()]
        keys = sorted({k for p in params for k in p})
        out[group] = [k for k in keys if len({json.dumps(p.get(k)) for p in params}) > 1]
    return out


def _point(params: str, keys: list[str]) -> str:
    values = json.loads(params or "{}")
    return ",".join(f"{k}={values.get(k)}" for k in keys) or "-"


def brackets(frame: pd.DataFrame) -> pd.DataFrame:
    """Per instance: best schedule (``primal``), best upper bound (``dual``), ``proven``."""
    out = []
    for key, rows in frame.groupby("instance_key", sort=False):
        ok = rows[rows["status"].isin(["optimal", "feasible"]) & rows["objective"].notna()]
        primal = float(ok["objective"].max()) if not ok.empty else 0.0
        optimal = rows[rows["status"] == "optimal"]
        bounds = rows[rows["bound"].notna() & (rows["status"] != "error")]["bound"]
        dual = float(bounds.min()) if not bounds.empty else math.inf
        proven = not optimal.empty
        if proven:
            primal = dual = float(optimal["objective"].max())
        out.append({"instance_key": key, "primal": primal, "dual": dual, "proven": proven})
    return pd.DataFrame(out)


def _ratio(opt: float, value: float) -> float:
    if value <= 0:
        return math.inf if opt > 0 else 1.0
    return max(1.0, opt / value)


def ratio_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Table 1 (module docstring)."""
    frame = frame.merge(brackets(frame), on="instance_key")
    varying = _varying(frame)
    heur = frame[(frame["kind"] == "heuristic") & frame["objective"].notna()]
    heur = heur[heur["status"].isin(["feasible", "optimal"])]
    lines = []
    for (group, label), rows in heur.groupby(["group", "label"], sort=False):
        rows = rows.assign(point=[_point(p, varying[group]) for p in rows["instance_params"]])
        for point, prow in rows.groupby("point", sort=False):
            per_instance = prow.groupby("instance_key").agg(
                mean_u=("objective", "mean"), primal=("primal", "first"), dual=("dual", "first")
            )
            exp_lo = [
                _ratio(p, u) for p, u in zip(per_instance.primal, per_instance.mean_u, strict=True)
            ]
            exp_hi = [
                _ratio(d, u) for d, u in zip(per_instance.dual, per_instance.mean_u, strict=True)
            ]
            lo = np.array([_ratio(p, u) for p, u in zip(prow.primal, prow.objective, strict=True)])
            hi = np.array([_ratio(d, u) for d, u in zip(prow.dual, prow.objective, strict=True)])
            lines.append(
                {
                    "group": group,
                    "point": point,
                    "method": label,
                    "instances": len(per_instance),
                    "runs": len(prow),
                    "mean utility": prow["objective"].mean(),
                    "OPT/E[u]": _interval(np.mean(exp_lo), np.mean(exp_hi)),
                    "mean OPT/u": _interval(lo.mean(), hi.mean()),
                    "median OPT/u": _interval(np.median(lo), np.median(hi)),
                    "worst OPT/u": _interval(lo.max(), hi.max()),
                    "proven": f"{prow['proven'].mean():.0%}",
                }
            )
    return pd.DataFrame(lines)


def _interval(lo: float, hi: float) -> str:
    if not math.isfinite(lo):
        return "inf"
    if not math.isfinite(hi):
        return f"[{lo:.4f}, inf]"
    if hi - lo <= 5e-5:
        return f"{lo:.4f}"
    return f"[{lo:.4f}, {hi:.4f}]"


def bound_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Table 2 (module docstring)."""
    frame = frame.merge(brackets(frame), on="instance_key")
    lines = []
    colgen = frame[(frame["method"] == "colgen") & frame["bound"].notna()]
    colgen_bound = dict(zip(colgen["instance_key"], colgen["bound"], strict=False))
    for (group, method), rows in frame[frame["bound"].notna()].groupby(
        ["group", "method"], sort=False
    ):
        if method not in BOUNDS:
            continue
        rows = rows[rows["status"] != "error"]
        if rows.empty:
            continue
        gap = (rows["bound"] / rows["primal"].where(rows["primal"] > 0)).dropna()
        proven = rows[rows["proven"]]
        line = {
            "group": group,
            "bound": method,
            "rows": len(rows),
            "mean bound/best schedule": f"{gap.mean():.4f}" if len(gap) else "-",
            "mean bound/OPT (proven)": (
                f"{(proven['bound'] / proven['primal']).mean():.4f}" if len(proven) else "-"
            ),
            "mean runtime (s)": f"{rows['runtime_s'].mean():.2f}",
        }
        if method == "ub_prices":
            infos = rows["info"].map(lambda i: json.loads(i or "{}"))
            cert = [i.get("certified_ratio") for i in infos]
            cert = [c for c in cert if c is not None and math.isfinite(c)]
            line["mean certified ratio UB(p)/u"] = f"{np.mean(cert):.4f}" if cert else "-"
            vs = [
                b / colgen_bound[k]
                for k, b in zip(rows["instance_key"], rows["bound"], strict=True)
                if k in colgen_bound and colgen_bound[k] > 0
            ]
            line["mean UB(p)/colgen"] = f"{np.mean(vs):.4f}" if vs else "-"
        lines.append(line)
    return pd.DataFrame(lines)


def loss_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Table 3 (module docstring): the loss decomposition per group."""
    frame = frame.merge(brackets(frame), on="instance_key")
    lines = []
    for group, rows in frame.groupby("group", sort=False):
        ok = rows[rows["status"].isin(["feasible", "optimal"]) & rows["objective"].notna()]
        means = ok.groupby(["instance_key", "label"])["objective"].mean().unstack()
        needed = [s for s in LOSS_STEPS if s in means]
        if "pd_ors" not in needed:
            continue
        means = means.dropna(subset=needed)
        br = rows.groupby("instance_key")[["primal", "dual"]].first().loc[means.index]
        line = {"group": group, "instances": len(means)}
        for step in needed + [s for s in ("colgen", "exact") if s in means]:
            line[f"U({step})"] = f"{means[step].mean():.3f}"
        line["OPT"] = _interval(br["primal"].mean(), br["dual"].mean()).replace("inf", "-")
        if "pd_ors_ilp" in means:
            line["rounding loss"] = f"{(means['pd_ors_ilp'] - means['pd_ors']).mean():+.3f}"
        if {"pd_ors_ilp_q16", "pd_ors_ilp"} <= set(means):
            line["quantisation loss"] = (
                f"{(means['pd_ors_ilp_q16'] - means['pd_ors_ilp']).mean():+.3f}"
            )
            best_online = means["pd_ors_ilp_q16"]
            lo = (br["primal"] - best_online).mean()
            hi = (br["dual"] - best_online).mean()
            line["online loss"] = _interval(lo, hi) if math.isfinite(hi) else f"[{lo:.3f}, inf]"
        lines.append(line)
    return pd.DataFrame(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("results", help="results directory of a dmlrs suite")
    parser.add_argument("--loss", action="store_true", help="add the loss decomposition")
    args = parser.parse_args()
    frame = load_results(args.results)
    frame = frame[frame["family"] == "dmlrs"]
    if frame.empty:
        raise SystemExit(f"{args.results}: no dmlrs rows")
    print("## Competitive ratios (OPT / utility; intervals from the best schedule and bound)\n")
    print(ratio_table(frame).to_markdown(index=False))
    print("\n## Bounds\n")
    print(bound_table(frame).to_markdown(index=False))
    if args.loss:
        print("\n## Loss decomposition (mean utility; rounding, quantisation, being online)\n")
        print(loss_table(frame).to_markdown(index=False))


if __name__ == "__main__":
    main()
