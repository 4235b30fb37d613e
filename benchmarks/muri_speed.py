"""Speed of the Muri family: trace 2 under every policy, and the exact grouping ILP at 40 jobs.

    python benchmarks/muri_speed.py --workers 2

Budgets: every policy on trace 2 (5,755 jobs) in under 2 minutes in
total on 2 cores; the exact grouping ILP for a bucket of 40 jobs with k = 4
in under 60 s.

The trace-2 run is made twice, side by side: with Muri's matching as the
``reference`` preset does it (``matching="reference"``: the original's own
Blossom, its tie-breaking included) and with the type-level b-matching
(``matching="types"``: same maximum weight, other ties). Only Muri-S and
Muri-L use the matching (the other five run in both rounds, and take
seconds). ``--matchings reference`` or ``--matchings types`` runs one.
"""

from __future__ import annotations

import argparse
import os
import time
from concurrent.futures import ProcessPoolExecutor

from ddlsched.families.muri_sim import simulate_trace
from ddlsched.problems.muri_sim import TraceRun
from ddlsched.registry import RunOptions, run_method
from ddlsched.workloads.muri import generate


def run(job):
    """One policy on trace 2 through the muri_sim family (the path of ``ddlsched simulate muri``)."""
    policy, matching = job
    result = simulate_trace(TraceRun.create("trace2", knobs={"matching": matching}), policy)
    return policy, matching, result.evaluation.runtime_s


def exact_grouping(inst, prune=True):
    """The muri ``exact`` method (set-packing ILP) as a user runs it."""
    return run_method("muri", "exact", inst, RunOptions(time_limit_s=60, params={"prune": prune}))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--ilp-seeds", type=int, default=5)
    ap.add_argument("--matchings", default="reference,types")
    args = ap.parse_args()
    matchings = [m.strip() for m in args.matchings.split(",") if m.strip()]
    print(f"nproc {os.cpu_count()}")
    order = ["muri-l", "muri-s", "themis", "tiresias", "srsf", "srtf", "antman"]
    for matching in matchings:
        started = time.perf_counter()
        with ProcessPoolExecutor(args.workers) as pool:
            times = list(pool.map(run, [(p, matching) for p in order]))
        wall = time.perf_counter() - started
        for p, _, t in times:
            print(f"trace2 {p:9s} {t:7.1f} s  (matching={matching})")
        print(
            f"trace2 all policies, matching={matching}: {wall:.1f} s wall on {args.workers} "
            f"workers (sum {sum(t for *_, t in times):.1f} s)"
        )
    for seed in range(args.ilp_seeds):
        inst = generate("bucket40", seed)
        t0 = time.perf_counter()
        res = exact_grouping(inst)
        full = time.perf_counter() - t0
        print(
            f"bucket40 seed {seed}: {res.status}, {res.info['candidate_groups']} columns after pruning, "
            f"solver {res.solver_time_s:.2f} s, total {full:.2f} s"
        )
        t0 = time.perf_counter()
        res = exact_grouping(inst, prune=False)
        print(
            f"   without pruning: {res.status}, {res.info['candidate_groups']} columns, total {time.perf_counter() - t0:.2f} s"
        )


if __name__ == "__main__":
    main()
