"""Benchmark: `rar.exact` proves optimality on every `small` instance within 60 s.

For seeds 0..N-1 of the `small` preset, runs the `exact` method with the
CLI's defaults (solver seed 0; incumbent from the heuristics and
`timeindexed`, a valid lower bound, then the contention-aware search on
instances within its limits, else the MILP ruling out shorter schedules)
with a 60 s limit, and records status, how optimality was proven, which
exact method ran last, runtime and model size; unproven instances are
listed as such. With
`--bare` it also runs the bare MILP (`presolve_bounds=false`, `search=never`, whole horizon)
for comparison. Prints a Markdown report.

    python benchmarks/rar_exact_small.py --seeds 50 [--bare 10]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time

from ddlsched.registry import RunOptions, run_method
from ddlsched.solvers.result import versions
from ddlsched.workloads.rar import generate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=50)
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument(
        "--bare", type=int, default=0, help="also run the bare MILP on the first N seeds"
    )
    args = parser.parse_args()

    rows = []
    for seed in range(args.seeds):
        inst = generate("small", seed)
        start = time.perf_counter()
        res = run_method("rar", "exact", inst, RunOptions(time_limit_s=args.time_limit, seed=0))
        wall = time.perf_counter() - start
        bare = None
        if seed < args.bare:
            b0 = time.perf_counter()
            b = run_method(
                "rar",
                "exact",
                inst,
                RunOptions(
                    time_limit_s=args.time_limit,
                    seed=0,
                    params={"presolve_bounds": False, "search": "never"},
                ),
            )
            bare = (str(b.status), b.objective, b.bound, time.perf_counter() - b0)
        rows.append((seed, inst, res, wall, bare))

    print(f"# rar `exact` on the `small` preset, seeds 0..{args.seeds - 1}\n")
    load = os.getloadavg()
    print(
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, load average {load[0]:.1f}/{load[1]:.1f}/"
        f"{load[2]:.1f} at the end; Python {platform.python_version()}; versions {versions()}; "
        f"solver seed 0 (the CLI's default)\n"
    )
    print(
        "| seed | jobs | servers | T | status | makespan | bound | proof | method | wall s | MILP vars | bare MILP (status, obj, bound, s) |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for seed, inst, res, wall, bare in rows:
        bare_txt = "-" if bare is None else f"{bare[0]}, {bare[1]}, {bare[2]}, {bare[3]:.1f}"
        print(
            f"| {seed} | {len(inst.jobs)} | {list(inst.servers)} | {inst.horizon} | {res.status} | "
            f"{res.objective} | {res.bound} | {res.info.get('proof')} | "
            f"{res.info.get('exact_method')} | {wall:.2f} | "
            f"{res.num_variables or '-'} | {bare_txt} |"
        )
    walls = [w for *_, w, _ in rows]
    optimal = sum(
        1 for _, _, r, w, _ in rows if str(r.status) == "optimal" and w <= args.time_limit
    )
    proofs = {}
    for _, _, r, _, _ in rows:
        proofs[r.info.get("proof")] = proofs.get(r.info.get("proof"), 0) + 1
    unproven = [
        seed
        for seed, _, r, w, _ in rows
        if not (str(r.status) == "optimal" and w <= args.time_limit)
    ]
    print(
        f"\n**{optimal}/{len(rows)} proven optimal within {args.time_limit:.0f} s**; wall time median "
        f"{statistics.median(walls):.2f} s, max {max(walls):.2f} s; proofs: {proofs}; "
        f"unproven: {unproven or 'none'}."
    )
    if args.bare:
        bare_rows = [b for *_, b in rows if b is not None]
        closed = sum(1 for b in bare_rows if b[0] == "optimal")
        print(
            f"Bare MILP (no incumbent, no bound, horizon T): {closed}/{len(bare_rows)} proven optimal "
            f"within {args.time_limit:.0f} s; median {statistics.median(b[3] for b in bare_rows):.1f} s."
        )


if __name__ == "__main__":
    main()
