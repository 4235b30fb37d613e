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
   PD-ORS, the randomized algorithm's guarantee is about this quantity;
   the numbers of ``ddlsched bench table``, from the same library code,
   :func:`ddlsched.bench.aggregate.instance_ratios`), its mean and worst
   over instances, beside the distribution of the per-seed ratio ``OPT /
   utility``: mean, median and worst over every (instance, seed) pair. Each
   number is an interval ``[best schedule / x, best bound / x]`` (a single
   value when the optimum is proven). A run with utility 0 on an instance
   with ``OPT > 0`` has ratio infinity: such runs are counted (``runs
   u=0``) and left out of the per-seed mean (they are in its median and
   worst); instances with ``E[u] = 0`` are counted (``inst. E[u]=0``) and
   left out of the ratio of expectations' mean and worst.
   ``--per-instance`` adds the same numbers per instance (one line per
   instance and randomized method).
2. **Bound gaps.** Per bound method: mean ``bound / best schedule`` (how far
   above the best known utility it sits) and, with a proven optimum, ``bound
   / OPT``; for ``ub_prices`` also the certified ratio ``UB(p_final) / PD-ORS
   utility`` of the run it certifies, and ``UB(p_final) / colgen bound``
   (how good PD-ORS's prices are as duals).
3. **The chain of the spec**, per instance: every online utility <= ``exact``
   <= ``colgen``'s bound <= ``ub_trivial``, and ``exact`` <= ``ub_prices``
   (instances checked and violations per relation).
4. ``--loss``: the loss decomposition (spec, "Beyond the paper") on a suite
   with the labels ``pd_ors`` (as published), ``pd_ors_ilp`` (Problem (23)
   solved exactly), ``pd_ors_q4`` and ``pd_ors_q16`` (4x and 16x finer
   quanta), ``pd_ors_ilp_q16`` (both), ``colgen`` (the offline
   restricted-master schedule) and ``exact``: mean utility per step (over
   seeds, then instances), the utility each step adds (rounding: ``ilp -
   lp``; quantisation: ``ilp_q16 - ilp``; being online: ``OPT -
   ilp_q16``, an interval from the bracket of OPT), as a share of OPT's
   bracket; beside them the first spec's Algorithm 4 (``pd_ors_first_spec``)
   and its rounding alone (``pd_ors_literal_rounding``) where the suite has them.
5. ``--claims`` (on ``dmlrs.toml``'s results): the verdicts on the paper's
   claims C1-C3 by the rules written in benchmarks/results/dmlrs.md before the run, and per
   point the paired difference PD-ORS - baseline over instance seeds with
   its 95 % t-interval.
6. On a ``dmlrs_slot`` results directory, the rounding study instead:
   per variant ``G_delta``, the share of draws meeting the covering row
   beside ``1 - delta``, the shares breaking each packing row (before repair),
   the shares of draws feasible before and after repair, the share of calls
   that rounded the shrunk LP, the share of calls with a feasible draw and the rounded cost over the ILP optimum; per
   group the integrality gap ``ILP / LP``.
"""

from __future__ import annotations

import argparse
import json
import math

import numpy as np
import pandas as pd

from ddlsched.bench.aggregate import finite_stats, instance_ratios, interval_stats, ratio_text
from ddlsched.bench.tables import load_results, rows_with_ratios

BOUNDS = ("exact", "colgen", "ub_prices", "ub_trivial")
LOSS_STEPS = ("pd_ors", "pd_ors_ilp", "pd_ors_q4", "pd_ors_q16", "pd_ors_ilp_q16")
#: Beside the loss steps: the first spec's Algorithm 4, and its rounding alone (ablations).
FIRST_SPEC = ("pd_ors_first_spec", "pd_ors_literal_rounding")


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


def _stats_cells(intervals: list[tuple[float, float]], prefix: str) -> dict[str, str]:
    """Mean over the finite ratios, median and worst over all (per-seed columns)."""
    finite, _ = finite_stats(intervals)
    every = interval_stats(intervals)
    return {
        f"mean {prefix} (u>0)": ratio_text(*finite.mean) if finite else "-",
        f"median {prefix}": ratio_text(*every.median) if every else "-",
        f"worst {prefix}": ratio_text(*every.worst) if every else "-",
    }


def _intervals(rows: pd.DataFrame) -> list[tuple[float, float]]:
    rows = rows[rows["ratio_lo"].notna()]
    return list(zip(rows["ratio_lo"], rows["ratio_hi"], strict=True))


def ratio_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Table 1 (module docstring)."""
    rated = rows_with_ratios(frame)
    varying = _varying(frame)
    points = zip(rated["instance_params"], rated["group"], strict=True)
    rated = rated.assign(point=[_point(params, varying[group]) for params, group in points])
    per_instance = instance_ratios(rated).merge(
        rated[["instance_key", "point"]].drop_duplicates(), on="instance_key"
    )
    heur = rated[(rated["kind"] == "heuristic") & rated["ratio_lo"].notna()]
    lines = []
    for (group, label, point), rows in heur.groupby(["group", "label", "point"], sort=False):
        instances = per_instance[
            (per_instance["group"] == group)
            & (per_instance["label"] == label)
            & (per_instance["point"] == point)
            & per_instance["ratio_lo"].notna()
        ]
        expected, zero_mean = finite_stats(_intervals(instances))
        lines.append(
            {
                "group": group,
                "point": point,
                "method": label,
                "instances": len(instances),
                "runs": len(rows),
                "mean utility": rows["objective"].mean(),
                "runs u=0": int(instances["zero_runs"].sum()),
                "inst. E[u]=0": zero_mean,
                "mean OPT/E[u]": ratio_text(*expected.mean) if expected else "-",
                "worst OPT/E[u]": ratio_text(*expected.worst) if expected else "-",
                **_stats_cells(_intervals(rows), "OPT/u"),
                "proven": f"{rows['ref_proven'].mean():.0%}",
            }
        )
    return pd.DataFrame(lines)


def per_instance_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Per instance and randomized method (more than one seed): ``OPT / mean utility`` over
    the seeds (the ratio of expectations) beside the per-seed ``OPT / u`` distribution."""
    rated = rows_with_ratios(frame)
    heur = rated[(rated["kind"] == "heuristic") & rated["ratio_lo"].notna()]
    expected = instance_ratios(heur).set_index(["instance_key", "label"])
    lines = []
    for (key, label), rows in heur.groupby(["instance_key", "label"], sort=False):
        if len(rows) < 2:
            continue
        mean = expected.loc[(key, label)]
        every = interval_stats(_intervals(rows))
        lines.append(
            {
                "instance": rows["instance_id"].iloc[0],
                "method": label,
                "seeds": len(rows),
                "mean utility": mean["mean_objective"],
                "OPT/E[u]": ratio_text(mean["ratio_lo"], mean["ratio_hi"]),
                "mean OPT/u": ratio_text(*every.mean),
                "median OPT/u": ratio_text(*every.median),
                "worst OPT/u": ratio_text(*every.worst),
            }
        )
    return pd.DataFrame(lines)


def _bracket(lo: float, hi: float) -> str:
    """A bracket of utility values (not a ratio): ``lo`` alone when the ends agree."""
    if not math.isfinite(lo):
        return "-"
    if not math.isfinite(hi):
        return f"[{lo:.4f}, -]"
    if hi - lo <= 5e-5:
        return f"{lo:.4f}"
    return f"[{lo:.4f}, {hi:.4f}]"


def _with_bracket(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows with their instance's bracket of OPT: ``primal`` (best schedule), ``dual`` (best
    upper bound), ``proven`` (the reference of :func:`rows_with_ratios`)."""
    rated = rows_with_ratios(frame)
    return rated.rename(
        columns={"ref_primal": "primal", "ref_dual": "dual", "ref_proven": "proven"}
    )


def bound_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Table 2 (module docstring)."""
    frame = _with_bracket(frame)
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
    frame = _with_bracket(frame)
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
        extra = [s for s in (*FIRST_SPEC, "colgen", "exact") if s in means]
        for step in needed + extra:
            line[f"U({step})"] = f"{means[step].mean():.3f}"
        line["OPT"] = _bracket(br["primal"].mean(), br["dual"].mean())
        if "pd_ors_ilp" in means:
            line["rounding loss"] = f"{(means['pd_ors_ilp'] - means['pd_ors']).mean():+.3f}"
        if {"pd_ors_ilp_q16", "pd_ors_ilp"} <= set(means):
            line["quantisation loss"] = (
                f"{(means['pd_ors_ilp_q16'] - means['pd_ors_ilp']).mean():+.3f}"
            )
            best_online = means["pd_ors_ilp_q16"]
            lo = (br["primal"] - best_online).mean()
            hi = (br["dual"] - best_online).mean()
            line["online loss"] = _bracket(lo, hi)
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
                    "feasible draws before repair": _mean_of(info, "feasible_share_unrepaired"),
                    "feasible draws after repair": _mean_of(info, "feasible_share"),
                    "shrunk LP rounded": _share_of(info, "rounded_lp", "shrunk"),
                    "calls with a feasible draw": f"{len(ok) / len(info):.2%}",
                    "mean cost / ILP": f"{np.mean(ratios):.4f}" if ratios else "-",
                }
            )
    return pd.DataFrame(lines).fillna("")


def _mean_of(info: pd.Series, key: str) -> str:
    values = [i[key] for i in info if i.get(key) is not None]
    return f"{np.mean(values):.4f}" if values else "-"


def _share_of(info: pd.Series, key: str, value: str) -> str:
    values = [i.get(key) for i in info if key in i]
    return f"{np.mean([v == value for v in values]):.2%}" if values else "-"


CHAIN = (
    ("best online utility", "exact"),
    ("exact", "colgen bound"),
    ("colgen bound", "ub_trivial"),
    ("exact", "ub_prices"),
)


def chain_table(frame: pd.DataFrame) -> pd.DataFrame:
    """The spec's chain per instance: every online utility <= exact <= colgen bound <=
    ub_trivial, and exact <= ub_prices; per relation the instances checked and the
    violations (beyond 1e-6 relative)."""
    online = frame[
        frame["method"].isin(["pd_ors", "oasis", "fifo", "drf", "dorm"])
        & frame["objective"].notna()
    ]
    values = {
        "best online utility": online.groupby("instance_key")["objective"].max(),
        "exact": frame[frame["method"] == "exact"].groupby("instance_key")["objective"].max(),
    }
    for method, name in (("colgen", "colgen bound"), ("ub_trivial", "ub_trivial"),
                         ("ub_prices", "ub_prices")):  # fmt: skip
        rows = frame[(frame["method"] == method) & frame["bound"].notna()]
        values[name] = rows.groupby("instance_key")["bound"].min()
    lines = []
    for low, high in CHAIN:
        both = pd.concat([values[low], values[high]], axis=1, join="inner").dropna()
        lo, hi = both.iloc[:, 0], both.iloc[:, 1]
        broken = lo > hi + 1e-6 * hi.abs().clip(lower=1.0)
        lines.append({"relation": f"{low} <= {high}", "instances": len(both),
                      "violations": int(broken.sum())})  # fmt: skip
    return pd.DataFrame(lines)


#: The paper's claims (benchmarks/results/dmlrs.md, "the rules for a verdict"): groups, baselines.
CLAIMS = (
    ("C1", ("fig6-machines", "fig7-jobs"), ("fifo", "drf", "dorm")),
    ("C2", ("fig8-oasis-jobs", "fig9-oasis-machines"), ("oasis",)),
)


def _per_seed(frame: pd.DataFrame, label: str, value: str = "objective") -> pd.Series:
    """Per (group, point, instance seed): the label's mean ``value`` over its method seeds."""
    rows = frame[(frame["label"] == label) & frame["status"].isin(["feasible", "optimal"])]
    if value != "objective":
        metric = rows["metrics"].map(lambda m: json.loads(m or "{}").get(value))
        rows = rows.assign(**{value: pd.to_numeric(metric, errors="coerce")})
    keys = ["group", "instance_params", "instance_seed"]
    return rows.groupby(keys)[value].mean()


def _point_order(item: tuple) -> tuple:
    """Sort key of a ((group, instance params JSON), rows) pair: group, then numeric params."""
    (group, params), _ = item
    return (group, tuple(json.loads(params).values()))


def _t_interval(diffs: np.ndarray) -> str:
    from scipy.stats import t as student

    if diffs.size < 2:
        return "-"
    half = student.ppf(0.975, diffs.size - 1) * diffs.std(ddof=1) / math.sqrt(diffs.size)
    return f"{diffs.mean():+.1f} [{diffs.mean() - half:+.1f}, {diffs.mean() + half:+.1f}]"


def claims_table(frame: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The verdicts of C1-C3 by the rules written before the run (benchmarks/results/dmlrs.md), and
    per point the paired difference PD-ORS - baseline over instance seeds."""
    pd_ors = _per_seed(frame, "pd_ors")
    points, verdicts = [], []
    for claim, groups, baselines in CLAIMS:
        for baseline in baselines:
            other = _per_seed(frame, baseline)
            both = pd.concat([pd_ors.rename("pd_ors"), other.rename("b")], axis=1, join="inner")
            both = both[both.index.get_level_values("group").isin(groups)]
            sides = []

            in_order = sorted(both.groupby(level=[0, 1], sort=False), key=_point_order)
            for (group, params), rows in in_order:
                diffs = (rows["pd_ors"] - rows["b"]).to_numpy()
                side = "above" if (diffs > 0).all() else "below" if (diffs < 0).all() else "mixed"
                sides.append(side)
                points.append({"claim": claim, "baseline": baseline, "group": group,
                               "point": params, "seeds": diffs.size, "side": side,
                               "PD-ORS - baseline (95 % CI)": _t_interval(diffs)})  # fmt: skip
            n = len(sides)
            above, below = sides.count("above"), sides.count("below")
            if n == 0:
                verdict = "no rows"
            elif above >= n - 1 and below == 0:
                verdict = "reproduced"
            elif below >= math.ceil(n / 4):
                verdict = "not reproduced"
            else:
                verdict = "depends on seeds"
            verdicts.append({"claim": claim, "against": baseline, "points": n, "above": above,
                             "mixed": sides.count("mixed"), "below": below,
                             "verdict": verdict})  # fmt: skip
    median = "median_training_time_s"
    fig10 = frame[frame["group"] == "fig10-median"]
    mine, theirs = _per_seed(fig10, "pd_ors", median), _per_seed(fig10, "oasis", median)
    both = pd.concat([mine.rename("p"), theirs.rename("o")], axis=1, join="inner").dropna()
    lower = int((both["p"] < both["o"]).sum())
    verdict = (
        "no rows" if both.empty
        else "reproduced" if lower == len(both)
        else "not reproduced" if lower == 0
        else "depends on seeds"
    )  # fmt: skip
    verdicts.append({"claim": "C3", "against": "oasis (median training time)",
                     "points": len(both), "above": lower, "mixed": 0,
                     "below": len(both) - lower, "verdict": verdict})  # fmt: skip
    return pd.DataFrame(verdicts), pd.DataFrame(points)


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
        "--claims", action="store_true", help="add the verdicts on the paper's claims (dmlrs.toml)"
    )
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
    print("\n## The chain of the spec, per instance\n")
    print(markdown(chain_table(frame)))
    if args.claims:
        verdicts, points = claims_table(frame)
        print("\n## The paper's claims (rules: benchmarks/results/dmlrs.md)\n")
        print(markdown(verdicts))
        print("\n### Per point (C1, C2; 'above' for C3 = lower median training time)\n")
        print(markdown(points))
    if args.loss:
        print("\n## Loss decomposition (mean utility; rounding, quantisation, being online)\n")
        print(markdown(loss_table(frame)))


if __name__ == "__main__":
    main()
