"""The dmlrs tables (competitive ratios over rounding seeds, bound gaps, loss decomposition).

    python benchmarks/dmlrs_tables.py results/dmlrs-tiny [--per-instance]
    python benchmarks/dmlrs_tables.py results/dmlrs
    python benchmarks/dmlrs_tables.py results/dmlrs-loss --loss
    python benchmarks/dmlrs_tables.py results/dmlrs-slot       # the rounding study

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
   optimum is proven); means are over instances. A run with utility 0 on an
   instance with ``OPT > 0`` has ratio infinity: such runs are counted
   (``runs u=0``) and left out of the means (they are in the median and the
   worst). ``--per-instance`` adds the same numbers per instance (one line
   per instance and randomized method).
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
4. On a ``dmlrs_slot`` results directory, the rounding study instead:
   per variant ``G_delta``, the share of draws meeting the covering row
   beside ``1 - delta``, the shares breaking each packing row, the share of
   calls with a feasible draw and the rounded cost over the ILP optimum; per
   group the integrality gap ``ILP / LP``.
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
            finite = np.isfinite(lo)
            exp_finite = np.isfinite(exp_lo)
            lines.append(
                {
                    "group": group,
                    "point": point,
                    "method": label,
                    "instances": len(per_instance),
                    "runs": len(prow),
                    "mean utility": prow["objective"].mean(),
                    "runs u=0": int((~finite).sum()),
                    "OPT/E[u] (E[u]>0)": _interval(
                        np.mean(np.asarray(exp_lo)[exp_finite]),
                        np.mean(np.asarray(exp_hi)[exp_finite]),
                    ),
                    "mean OPT/u (u>0)": _interval(lo[finite].mean(), hi[finite].mean()),
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


def per_instance_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Per instance and randomized method (more than one seed): ``OPT / mean utility`` over
    the seeds (the ratio of expectations) beside the per-seed ``OPT / u`` distribution."""
    frame = frame.merge(brackets(frame), on="instance_key")
    heur = frame[(frame["kind"] == "heuristic") & frame["objective"].notna()]
    lines = []
    for (_key, label), rows in heur.groupby(["instance_key", "label"], sort=False):
        if len(rows) < 2:
            continue
        primal, dual = rows["primal"].iloc[0], rows["dual"].iloc[0]
        lo = np.array([_ratio(primal, u) for u in rows["objective"]])
        hi = np.array([_ratio(dual, u) for u in rows["objective"]])
        lines.append(
            {
                "instance": rows["instance_id"].iloc[0],
                "method": label,
                "seeds": len(rows),
                "mean utility": rows["objective"].mean(),
                "OPT/E[u]": _interval(
                    _ratio(primal, rows["objective"].mean()), _ratio(dual, rows["objective"].mean())
                ),
                "mean OPT/u": _interval(lo.mean(), hi.mean()),
                "median OPT/u": _interval(np.median(lo), np.median(hi)),
                "worst OPT/u": _interval(lo.max(), hi.max()),
            }
        )
    return pd.DataFrame(lines)


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


def slot_table(frame: pd.DataFrame) -> pd.DataFrame:
    """The rounding study (``dmlrs_slot``): per group and rounding variant, ``G_delta``,
    the share of draws meeting the covering row against ``1 - delta``, the shares breaking
    each packing row, the share of calls with a feasible draw, and the rounded cost over
    the ILP optimum; per group the integrality gap ILP / LP."""
    lines = []
    ilp = frame[(frame["method"] == "ilp") & (frame["status"] == "optimal")]
    ilp_value = dict(zip(ilp["instance_key"], ilp["objective"], strict=True))
    lp = frame[(frame["method"] == "lp") & frame["bound"].notna()]
    lp_value = dict(zip(lp["instance_key"], lp["bound"], strict=True))
    for group, rows in frame.groupby("group", sort=False):
        gaps = [
            ilp_value[k] / lp_value[k]
            for k in rows["instance_key"].unique()
            if k in ilp_value and lp_value.get(k, 0) > 0
        ]
        lines.append(
            {
                "group": group,
                "variant": "ILP / LP (integrality gap)",
                "calls": len(gaps),
                "mean cost / ILP": f"{np.mean(gaps):.4f}" if gaps else "-",
            }
        )
        rounding = rows[rows["method"] == "rounding"]
        for label, part in rounding.groupby("label", sort=False):
            info = part["info"].map(lambda i: json.loads(i or "{}"))
            info = info[info.map(lambda i: "G_delta" in i)]
            if info.empty:
                continue
            ok = part[part["status"] == "feasible"]
            ratios = [
                o / ilp_value[k]
                for k, o in zip(ok["instance_key"], ok["objective"], strict=True)
                if ilp_value.get(k, 0) > 0
            ]
            first = info.iloc[0]
            lines.append(
                {
                    "group": group,
                    "variant": label,
                    "calls": len(info),
                    "1 - delta": f"{1 - first['delta']:.2f}",
                    "mean G_delta": f"{np.mean([i['G_delta'] for i in info]):.3f}",
                    "covering share": f"{np.mean([i['covering_success_share'] for i in info]):.4f}",
                    "breaks (24)": f"{np.mean([i['capacity_break_share'] for i in info]):.4f}",
                    "breaks (25)": f"{np.mean([i['worker_cap_break_share'] for i in info]):.4f}",
                    "breaks PS row": f"{np.mean([i['ps_break_share'] for i in info]):.4f}",
                    "calls with a feasible draw": f"{len(ok) / len(info):.2%}",
                    "mean cost / ILP": f"{np.mean(ratios):.4f}" if ratios else "-",
                }
            )
    return pd.DataFrame(lines).fillna("")


def markdown(table: pd.DataFrame) -> str:
    """A Markdown table (numbers with 4 significant digits)."""
    if table.empty:
        return "(no rows)"

    def cell(value) -> str:
        if isinstance(value, float):
            return f"{value:.4g}"
        return str(value).replace("|", "\\|")

    lines = ["| " + " | ".join(map(str, table.columns)) + " |", "|" + "---|" * len(table.columns)]
    for row in table.itertuples(index=False):
        lines.append("| " + " | ".join(cell(v) for v in row) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("results", help="results directory of a dmlrs suite")
    parser.add_argument("--loss", action="store_true", help="add the loss decomposition")
    parser.add_argument(
        "--per-instance", action="store_true", help="add the per-instance ratio over seeds"
    )
    args = parser.parse_args()
    frame = load_results(args.results)
    if (frame["family"] == "dmlrs_slot").any():
        print("## Rounding study (dmlrs_slot)\n")
        print(markdown(slot_table(frame[frame["family"] == "dmlrs_slot"])))
        return
    frame = frame[frame["family"] == "dmlrs"]
    if frame.empty:
        raise SystemExit(f"{args.results}: no dmlrs rows")
    print("## Competitive ratios (OPT / utility; intervals from the best schedule and bound)\n")
    print(markdown(ratio_table(frame)))
    if args.per_instance:
        print("\n## Per instance: ratio of expectations over seeds beside the distribution\n")
        print(markdown(per_instance_table(frame)))
    print("\n## Bounds\n")
    print(markdown(bound_table(frame)))
    if args.loss:
        print("\n## Loss decomposition (mean utility; rounding, quantisation, being online)\n")
        print(markdown(loss_table(frame)))


if __name__ == "__main__":
    main()
