"""Section 7 of the SJF-BCO paper (Figs. 4-7) on the `paper` preset, with bounds.

Experiments (spec `rar.md`, "Paper setting"):

* Fig. 4: makespan and average JCT of SJF-BCO, FF, LS, RAND (T = 1200);
* Fig. 5: SJF-BCO makespan against kappa = 1..32;
* Fig. 6: makespan against the number of servers, 10..20 (T = 1500);
* Fig. 7: SJF-BCO makespan against lambda in {1, 2, 4, 8} with kappa = 1.

The exact optimum is out of reach at this size, so every Fig. 4 row is set
against certified bounds: the lower bound is the best of `load_lb` and the
time-aggregated `timeindexed` bound; the upper bound is the best evaluated
schedule (heuristics and the `timeindexed` schedule). Ratios are the
certified intervals [h / UB, h / LB].

`--variant contention` repeats Fig. 4 with `xi1 = 0.5` (contention active),
since the preset's `xi1 = xi2 = 1e-5` makes contention inert (see
`ddlsched.workloads.rar`).

    python benchmarks/rar_section7.py --seeds 5 --out benchmarks/figures
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from ddlsched.bench.ratios import best_reference, ratio_interval
from ddlsched.heuristics.sjf_bco import kappa_sweep
from ddlsched.registry import RunOptions, run_method
from ddlsched.workloads.rar import generate

POLICIES = ("sjf_bco", "ff", "ls", "rand")


def _mean(values):
    values = [v for v in values if v is not None]
    return statistics.fmean(values) if values else None


def fig4(seeds, bound_limit, width, params=None, label="paper"):
    rows = []
    for seed in seeds:
        inst = generate("paper", seed, **(params or {}))
        results = {m: run_method("rar", m, inst, RunOptions(seed=seed)) for m in POLICIES}
        t0 = time.perf_counter()
        results["load_lb"] = run_method("rar", "load_lb", inst, RunOptions(time_limit_s=bound_limit))
        results["timeindexed"] = run_method(
            "rar",
            "timeindexed",
            inst,
            RunOptions(time_limit_s=bound_limit, params={"slot_width": width, "max_patterns": 16}),
        )
        bound_s = time.perf_counter() - t0
        ref = best_reference(results.values(), "min")
        for m in POLICIES:
            r = results[m]
            rows.append(
                {
                    "variant": label,
                    "seed": seed,
                    "gpus": inst.num_gpus,
                    "method": m,
                    "makespan": r.objective,
                    "avg_jct": r.info.get("average_completion"),
                    "ratio": ratio_interval(r.objective, ref, "min"),
                    "lb": ref.dual,
                    "ub": ref.primal,
                    "ti_ub": results["timeindexed"].objective,
                    "load_lb": results["load_lb"].bound,
                    "ti_lb": results["timeindexed"].bound,
                    "bound_s": bound_s,
                    "theorem5": r.info.get("theorem5_bound"),
                }
            )
    return rows


def fig5(seeds):
    curves = {}
    for seed in seeds:
        inst = generate("paper", seed)
        for point in kappa_sweep(inst):
            curves.setdefault(point.kappa, []).append(point.makespan)
    return {k: statistics.fmean(v) for k, v in sorted(curves.items()) if all(x is not None for x in v)}


def fig6(seeds, servers=range(10, 21)):
    out = {m: {} for m in POLICIES}
    for n in servers:
        for m in POLICIES:
            values = []
            for seed in seeds:
                inst = generate("paper", seed, num_servers=n, horizon=1500)
                values.append(run_method("rar", m, inst, RunOptions(seed=seed)).objective)
            out[m][n] = _mean(values)
    return out


def fig7(seeds, lambdas=(1, 2, 4, 8)):
    out = {}
    for lam in lambdas:
        values = []
        for seed in seeds:
            inst = generate("paper", seed)
            opts = RunOptions(seed=seed, params={"kappa": 1, "lambda_": float(lam)})
            values.append(run_method("rar", "sjf_bco", inst, opts).objective)
        out[lam] = _mean(values)
    return out


def _ratio_txt(r):
    if r is None:
        return "-"
    lo, hi = r
    return f"{lo:.3f}" if lo == hi else f"[{lo:.3f}, {hi:.3f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--bound-time-limit", type=float, default=60.0)
    parser.add_argument("--slot-width", type=int, default=40)
    parser.add_argument("--out", default="benchmarks/figures")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    seeds = list(range(args.seeds))
    t0 = time.perf_counter()

    rows = fig4(seeds, args.bound_time_limit, args.slot_width)
    rows += fig4(seeds, args.bound_time_limit, args.slot_width, {"xi1": 0.5}, "contention (xi1=0.5)")
    kappa = fig5(seeds)
    servers = fig6(seeds)
    lam = fig7(seeds)

    print(f"# rar Section 7 (Figs. 4-7), `paper` preset, seeds 0..{seeds[-1]}\n")
    print("## Fig. 4: policies (per seed)\n")
    print("| variant | seed | GPUs | method | makespan | avg JCT | LB | best UB | ratio [h/UB, h/LB] | Thm 5 bound |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['variant']} | {r['seed']} | {r['gpus']} | {r['method']} | {r['makespan']} | "
            f"{r['avg_jct']:.1f} | {r['lb']} | {r['ub']} | {_ratio_txt(r['ratio'])} | {r['theorem5']:.0f} |"
        )
    print("\nBounds per seed: LB = max(load_lb, timeindexed bound); UB includes the timeindexed schedule.\n")
    print("| variant | seed | load_lb | timeindexed LB | timeindexed schedule | bound time s |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        if r["method"] == "sjf_bco":
            print(f"| {r['variant']} | {r['seed']} | {r['load_lb']} | {r['ti_lb']} | {r['ti_ub']} | {r['bound_s']:.1f} |")
    print("\n### Fig. 4 means\n")
    print("| variant | method | mean makespan | mean avg JCT | mean ratio interval |")
    print("|---|---|---|---|---|")
    for variant in dict.fromkeys(r["variant"] for r in rows):
        for m in POLICIES:
            sel = [r for r in rows if r["variant"] == variant and r["method"] == m]
            lo = _mean(r["ratio"][0] for r in sel if r["ratio"])
            hi = _mean(r["ratio"][1] for r in sel if r["ratio"])
            print(f"| {variant} | {m} | {_mean(r['makespan'] for r in sel):.1f} | "
                  f"{_mean(r['avg_jct'] for r in sel):.1f} | [{lo:.3f}, {hi:.3f}] |")
    print("\n## Fig. 5: SJF-BCO makespan vs kappa (mean over seeds)\n")
    print("| kappa | " + " | ".join(map(str, kappa)) + " |")
    print("|---|" + "---|" * len(kappa))
    print("| makespan | " + " | ".join(f"{v:.0f}" for v in kappa.values()) + " |")
    print("\n## Fig. 6: makespan vs servers (T = 1500, mean over seeds)\n")
    ns = list(next(iter(servers.values())))
    print("| method | " + " | ".join(map(str, ns)) + " |")
    print("|---|" + "---|" * len(ns))
    for m, curve in servers.items():
        print(f"| {m} | " + " | ".join("-" if curve[n] is None else f"{curve[n]:.0f}" for n in ns) + " |")
    print("\n## Fig. 7: SJF-BCO (kappa = 1) makespan vs lambda (mean over seeds)\n")
    print("| lambda | " + " | ".join(map(str, lam)) + " |")
    print("|---|" + "---|" * len(lam))
    print("| makespan | " + " | ".join(f"{v:.0f}" for v in lam.values()) + " |")
    print(f"\nTotal wall time {time.perf_counter() - t0:.0f} s.")

    # plots
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.5))
    for ax, key, title in ((axes[0], "makespan", "makespan (slots)"), (axes[1], "avg_jct", "average JCT (slots)")):
        for i, variant in enumerate(dict.fromkeys(r["variant"] for r in rows)):
            vals = [_mean(r[key] for r in rows if r["variant"] == variant and r["method"] == m) for m in POLICIES]
            ax.bar([x + 0.4 * i for x in range(len(POLICIES))], vals, width=0.4, label=variant)
        ax.set_xticks([x + 0.2 for x in range(len(POLICIES))], POLICIES)
        ax.set_title(f"Fig. 4: {title}")
    lb = _mean(r["lb"] for r in rows if r["variant"] == "paper" and r["method"] == "sjf_bco")
    axes[0].axhline(lb, color="k", ls="--", lw=1, label="lower bound (paper)")
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "rar_fig4.png", dpi=120)
    for name, data, xlabel in (("rar_fig5.png", kappa, "kappa"), ("rar_fig7.png", lam, "lambda (kappa = 1)")):
        fig, ax = plt.subplots(figsize=(5, 3.2))
        ax.plot(list(data), list(data.values()), marker="o")
        ax.set_xlabel(xlabel)
        ax.set_ylabel("SJF-BCO makespan (slots)")
        fig.tight_layout()
        fig.savefig(out / name, dpi=120)
    fig, ax = plt.subplots(figsize=(5, 3.2))
    for m, curve in servers.items():
        ax.plot(list(curve), list(curve.values()), marker="o", label=m)
    ax.set_xlabel("servers (T = 1500)")
    ax.set_ylabel("makespan (slots)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "rar_fig6.png", dpi=120)


if __name__ == "__main__":
    main()
