"""Muri grouping ratio study: multi-round Blossom (Algorithm 1) against the exact grouping.

For k = 3 and k = 4 resources, many sampled job sets (synthetic presets
``k3``/``k4`` of :mod:`ddlsched.workloads.muri`, 8/12/16 one-GPU jobs, and
job sets drawn from the vendored Muri trace 1 for k = 3, bucketed by GPU
count), the ratio optimum / heuristic of the family objective (sum of
interleaving efficiency gamma over groups; >= 1) and, for the second
objective of the spec, heuristic / optimum of the summed period T (>= 1).
Every objective is recomputed by ``ddlsched.problems.muri.evaluate``.

    python benchmarks/muri_grouping_ratio.py --seeds 100 --workers 2
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from ddlsched.heuristics.muri import blossom_grouping, multiround_grouping
from ddlsched.problems.muri import evaluate
from ddlsched.registry import RunOptions, run_method
from ddlsched.workloads.muri import generate


def exact_grouping(inst, objective="efficiency", time_limit_s=120.0):
    """The ``exact`` method (set-packing ILP) through the pipeline."""
    options = RunOptions(time_limit_s=time_limit_s, params={"objective": objective})
    return run_method("muri", "exact", inst, options)


def one(task):
    preset, n, seed = task
    inst = generate(preset, seed, num_jobs=n)
    heur = evaluate(inst, multiround_grouping(inst))
    pairs = evaluate(inst, blossom_grouping(inst))
    t0 = time.perf_counter()
    opt = exact_grouping(inst, time_limit_s=120)
    t_eff = time.perf_counter() - t0
    per = exact_grouping(inst, objective="period", time_limit_s=120)
    assert opt.status == "optimal" and per.info["period_status"] == "optimal"
    return {
        "preset": preset,
        "k": inst.num_resources,
        "n": n,
        "seed": seed,
        "multiround": heur.total_efficiency,
        "blossom_pairs": pairs.total_efficiency,
        "exact": opt.objective,
        "ratio_eff": opt.objective / heur.total_efficiency,
        "ratio_eff_pairs": opt.objective / pairs.total_efficiency,
        "multiround_period": heur.total_period,
        "exact_period": per.info["total_period"],
        "ratio_period": heur.total_period / per.info["total_period"],
        "max_group": max(len(g) for g in multiround_grouping(inst).groups),
        "exact_runtime_s": t_eff,
    }


def summarise(rows, key):
    vals = sorted(r[key] for r in rows)
    return {
        "mean": statistics.fmean(vals),
        "median": statistics.median(vals),
        "p95": vals[int(0.95 * (len(vals) - 1))],
        "max": vals[-1],
        "exact_share": sum(1 for v in vals if v <= 1 + 1e-9) / len(vals),
    }


def plot(rows, path):
    """Box plots of both ratios per (instance set, k, jobs)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    keys = sorted({(r["preset"], r["k"], r["n"]) for r in rows})
    fig, axes = plt.subplots(1, 2, figsize=(12, 4))
    for ax, field, title in (
        (axes[0], "ratio_eff", "sum of gamma: optimum / multi-round"),
        (axes[1], "ratio_period", "summed period: multi-round / optimum"),
    ):
        data = [[r[field] for r in rows if (r["preset"], r["k"], r["n"]) == k] for k in keys]
        ax.boxplot(data)
        ax.set_xticks(
            range(1, len(keys) + 1), [f"{p}\nk={k} n={n}" for p, k, n in keys], fontsize=7
        )
        ax.axhline(1.0, color="k", lw=0.5)
        ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=100)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", default="benchmarks/results/muri-grouping.json")
    ap.add_argument("--figure", default="benchmarks/figures/muri_grouping_ratio.png")
    ap.add_argument("--plot-only", action="store_true", help="re-plot --out without solving")
    args = ap.parse_args()
    if args.plot_only:
        plot(json.loads(Path(args.out).read_text())["rows"], args.figure)
        return
    tasks = [(p, n, s) for p in ("k3", "k4") for n in (8, 12, 16) for s in range(args.seeds)]
    tasks += [("trace", 16, s) for s in range(args.seeds)]
    started = time.perf_counter()
    with ProcessPoolExecutor(args.workers) as pool:
        rows = list(pool.map(one, tasks, chunksize=8))
    wall = time.perf_counter() - started
    assert all(r["ratio_eff"] >= 1 - 1e-9 and r["ratio_period"] >= 1 - 1e-9 for r in rows)
    print(f"{len(rows)} instances in {wall:.1f} s on {args.workers} workers\n")
    print(
        "| instances | k | jobs | count | gamma ratio mean | median | p95 | max | exact share | "
        "pairs-only ratio mean | period ratio mean | period max |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    groups = {}
    for r in rows:
        groups.setdefault((r["preset"], r["k"], r["n"]), []).append(r)
    for (preset, k, n), rs in sorted(groups.items()):
        e = summarise(rs, "ratio_eff")
        pe = summarise(rs, "ratio_period")
        pp = summarise(rs, "ratio_eff_pairs")
        print(
            f"| {preset} | {k} | {n} | {len(rs)} | {e['mean']:.4f} | {e['median']:.4f} | {e['p95']:.4f} | "
            f"{e['max']:.4f} | {e['exact_share']:.0%} | {pp['mean']:.4f} | {pe['mean']:.4f} | {pe['max']:.4f} |"
        )
    Path(args.out).write_text(json.dumps({"wall_s": wall, "rows": rows}, indent=1))
    plot(rows, args.figure)


if __name__ == "__main__":
    main()
