"""Speed benchmark of the ``rar`` heuristics on the ``paper`` preset (Section 7 setting).

Times SJF-BCO (full ``kappa`` loop), FF, LS and RAND through the registry
(``run_method``: heuristic + evaluator + Theorem 5 bound, the wall time a
user sees) on ``paper(seed)`` for several seeds, plus the Fig. 5 sweep
(``kappa_sweep``, ``kappa = 1..32``). Target: SJF-BCO under 10 s per
instance. Each figure is the best of ``--repeat`` runs (the machine is
shared); the table also gives the evaluated and estimated makespans and the
decisions (theta, kappa).

Usage::

    python benchmarks/rar_sjf_bco_speed.py --seeds 0 1 2 3 4 --repeat 3
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time

from ddlsched.heuristics.sjf_bco import kappa_sweep
from ddlsched.registry import RunOptions, run_method
from ddlsched.workloads.rar import paper

METHODS = ("sjf_bco", "ff", "ls", "rand")


def best_time(call, repeat: int):
    best, value = float("inf"), None
    for _ in range(repeat):
        started = time.perf_counter()
        value = call()
        best = min(best, time.perf_counter() - started)
    return best, value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-sweep", action="store_true", help="skip the kappa sweep")
    args = parser.parse_args()

    print(f"python {platform.python_version()}, {os.cpu_count()} CPUs, {platform.processor()}")
    print()
    print(
        "| seed | GPUs | method | time (s) | makespan | estimated | theta | kappa | "
        "avg JCT | probes |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    times: dict[str, list[float]] = {m: [] for m in METHODS}
    sweep_times = []
    for seed in args.seeds:
        instance = paper(seed)
        for method in METHODS:
            elapsed, result = best_time(
                lambda m=method, inst=instance, s=seed: run_method(
                    "rar", m, inst, RunOptions(seed=s)
                ),
                args.repeat,
            )
            times[method].append(elapsed)
            info = result.info
            estimated = info.get("estimated_makespan")
            print(
                f"| {seed} | {instance.num_gpus} | {method} | {elapsed:.3f} | "
                f"{result.objective} | {estimated:.1f} | {info.get('theta')} | "
                f"{info.get('kappa', '-')} | {info.get('average_completion', float('nan')):.1f} | "
                f"{len(info.get('probes', []))} |"
            )
        if not args.no_sweep:
            elapsed, points = best_time(lambda inst=instance: kappa_sweep(inst), args.repeat)
            sweep_times.append(elapsed)
            curve = ", ".join(
                f"{p.kappa}:{p.makespan}" for p in points if p.kappa in (1, 2, 4, 8, 16, 32)
            )
            print(
                f"| {seed} | {instance.num_gpus} | kappa_sweep 1..32 | {elapsed:.3f} | {curve} | | | | | |"
            )
    print()
    print("| method | median (s) | max (s) |")
    print("|---|---|---|")
    for method in METHODS:
        print(f"| {method} | {statistics.median(times[method]):.3f} | {max(times[method]):.3f} |")
    if sweep_times:
        print(f"| kappa_sweep | {statistics.median(sweep_times):.3f} | {max(sweep_times):.3f} |")


if __name__ == "__main__":
    main()
