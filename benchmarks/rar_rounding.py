"""The rounding study of ``rar.lp_rounding`` on ``small`` instances.

For each seed: the optimum from ``exact`` (CLI defaults: seed 0, 60 s), the
time-indexed ILP optimum at slot width 1 (``timeindexed --param
slot_width=1``, the ILP whose LP ``lp_rounding`` solves, same horizon), and
``lp_rounding`` (32 trials, seed 0). Prints a markdown report: the
integrality gap ``ILP / LP`` of the formulation, ``OPT / LP bound``, and the
distributions (min / median / mean / max) of rounded / LP bound and
rounded / OPT, over every trial and over the best trial per instance.

    PYTHONPATH=src python benchmarks/rar_rounding.py --seeds 0 20 > out.md
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess

from ddlsched.registry import RunOptions, run_method
from ddlsched.workloads.rar import generate


def _stats(values: list[float]) -> str:
    return (
        f"{min(values):.3f} / {statistics.median(values):.3f} / "
        f"{statistics.fmean(values):.3f} / {max(values):.3f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", nargs=2, type=int, default=(0, 20), metavar=("FIRST", "END"))
    parser.add_argument("--trials", type=int, default=32)
    parser.add_argument("--preset", default="small")
    args = parser.parse_args()
    rows = []
    all_lp, all_opt, best_lp, best_opt, gaps, opt_gaps = [], [], [], [], [], []
    for seed in range(*args.seeds):
        inst = generate(args.preset, seed)
        exact = run_method("rar", "exact", inst, RunOptions(time_limit_s=60))
        ilp = run_method(
            "rar", "timeindexed", inst, RunOptions(time_limit_s=60, params={"slot_width": 1})
        )
        lpr = run_method(
            "rar", "lp_rounding", inst, RunOptions(time_limit_s=60, params={"trials": args.trials})
        )
        info = lpr.info
        opt = exact.objective if exact.status.value == "optimal" else None
        ilp_value = (
            ilp.info.get("bound_from_model") if ilp.info["solver_status"] == ["optimal"] else None
        )
        lp_value, lp_bound = info["lp_value"], info["lp_bound"]
        trials = [m for m in info["rounded_makespans"] if m >= 0]
        if ilp_value is not None and lp_value > 0:
            gaps.append(ilp_value / lp_value)
        all_lp += [m / lp_bound for m in trials]
        if lpr.objective:
            best_lp.append(lpr.objective / lp_bound)
        if opt is not None:
            opt_gaps.append(opt / lp_bound)
            all_opt += [m / opt for m in trials]
            if lpr.objective:
                best_opt.append(lpr.objective / opt)
        rows.append(
            f"| {seed} | {len(inst.jobs)} | {opt} | {ilp_value} | {lp_value:.2f} | {lp_bound:g} "
            f"| {lpr.objective} | {statistics.fmean(trials):.2f} | {len(trials)}/{len(info['rounded_makespans'])} "
            f"| {lpr.runtime_s:.2f} |"
        )
    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    print(
        f"Preset `{args.preset}`, seeds {args.seeds[0]}..{args.seeds[1] - 1}, "
        f"{args.trials} trials, {os.cpu_count()} CPUs; load: {load}\n"
    )
    print(
        "| seed | jobs | OPT (exact) | ILP (timeindexed w=1) | LP | LP bound | best rounded "
        "| mean rounded | feasible trials | lp_rounding s |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    print("\n| statistic (min / median / mean / max) | value |")
    print("|---|---|")
    print(f"| integrality gap ILP / LP ({len(gaps)} instances) | {_stats(gaps)} |")
    print(f"| OPT / LP bound ({len(opt_gaps)} instances) | {_stats(opt_gaps)} |")
    print(f"| rounded / LP bound, every trial ({len(all_lp)}) | {_stats(all_lp)} |")
    print(f"| rounded / OPT, every trial ({len(all_opt)}) | {_stats(all_opt)} |")
    print(f"| best rounded / LP bound, per instance ({len(best_lp)}) | {_stats(best_lp)} |")
    print(f"| best rounded / OPT, per instance ({len(best_opt)}) | {_stats(best_opt)} |")


if __name__ == "__main__":
    main()
