"""Benchmark: the contention-aware `rar.contention_lb` against `load_lb` and the best schedule.

Part 1, `paper-contention` seeds 0..N-1 (160 jobs, 20 servers): `load_lb`,
`contention_lb` (and its parts), the best evaluated makespan of `sjf_bco,
ff, ls, rand` (seed 0), the interval width `best / bound - 1` with each
bound, and what limits the contention part: the must-split rings (`G_j`
above the largest server), the largest server, the inert contention level
`p* = floor(1 / xi1)` (Eq. 7: `k_j = xi1 p_j <= 1` leaves `B_j = b_e`), the
rings the cluster can keep split at once without contention
(`floor(sum_s min(O_s, p*) / 2)`), and the what-if `link` value if every
multi-GPU ring had to split (not a bound).

Part 2, `contention` seeds 0..K-1: both bounds over the proven optimum
(`exact`'s search), mean and share strictly above `load_lb`.

    python benchmarks/rar_contention_lb.py --seeds 5 --contention-seeds 40
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import time

from ddlsched.models.rar_contention_bound import contention_components
from ddlsched.models.rar_search import search_exact
from ddlsched.registry import RunOptions, run_method
from ddlsched.workloads.rar import generate

HEURISTICS = ("sjf_bco", "ff", "ls", "rand")


def _bound(method: str, inst) -> tuple[float, dict, float]:
    start = time.perf_counter()
    res = run_method("rar", method, inst, RunOptions(time_limit_s=60, seed=0))
    return res.bound, res.info.get("components", {}), time.perf_counter() - start


def paper_rows(seeds: int) -> list[str]:
    lines = [
        "| seed | load_lb | contention_lb (link, serial) | s | best schedule (method) | "
        "width before | width after | must-split | max O_s | split rings at p <= p* | "
        "what-if link (all multi-GPU split) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for seed in range(seeds):
        inst = generate("paper-contention", seed)
        base, _, _ = _bound("load_lb", inst)
        bound, parts, wall = _bound("contention_lb", inst)
        best, best_method = math.inf, ""
        for method in HEURISTICS:
            res = run_method("rar", method, inst, RunOptions(seed=0))
            if res.objective is not None and res.objective < best:
                best, best_method = res.objective, method
        inert = math.floor(1.0 / inst.network.xi1 + 1e-9)
        free_rings = sum(min(cap, inert) for cap in inst.servers) // 2
        multi = [job for job in inst.jobs if job.gpus >= 2]
        what_if = contention_components(inst, multi)["link"]
        must = sum(1 for job in inst.jobs if job.gpus > max(inst.servers))
        lines.append(
            f"| {seed} | {base:.0f} | {bound:.0f} ({parts['link']:.0f}, {parts['serial']}) | "
            f"{wall:.1f} | {best:.0f} ({best_method}) | {best / base - 1:.1%} | "
            f"{best / bound - 1:.1%} | {must} | {max(inst.servers)} | {free_rings} "
            f"(of {len(multi)} multi-GPU) | {what_if:.0f} |"
        )
    return lines


def contention_rows(seeds: int) -> list[str]:
    base_ratio, new_ratio, gains, tight = [], [], 0, 0
    for seed in range(seeds):
        inst = generate("contention", seed)
        opt = search_exact(inst)
        if not opt.proven:
            raise SystemExit(f"contention seed {seed}: not proven")
        base, _, _ = _bound("load_lb", inst)
        bound, _, _ = _bound("contention_lb", inst)
        if bound > opt.makespan:
            raise SystemExit(f"contention seed {seed}: bound {bound} > optimum {opt.makespan}")
        base_ratio.append(base / opt.makespan)
        new_ratio.append(bound / opt.makespan)
        gains += bound > base
        tight += bound == opt.makespan
    return [
        f"`contention` seeds 0-{seeds - 1}: bound / optimum, mean (min): "
        f"load_lb {statistics.fmean(base_ratio):.3f} ({min(base_ratio):.3f}), "
        f"contention_lb {statistics.fmean(new_ratio):.3f} ({min(new_ratio):.3f}); "
        f"strictly above load_lb on {gains}/{seeds}, equal to the optimum on {tight}/{seeds}."
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--contention-seeds", type=int, default=40)
    args = parser.parse_args()
    start = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    load = os.getloadavg()
    lines = [f"started {start}, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}", ""]
    lines += [*paper_rows(args.seeds), ""]
    lines += contention_rows(args.contention_seeds)
    load = os.getloadavg()
    end = time.strftime("%H:%M UTC", time.gmtime())
    lines += ["", f"ended {end}, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"]
    print("\n".join(lines))


if __name__ == "__main__":
    main()
