"""The cost of running every dmlrs pricing MILP in the HiGHS worker process (killed at its limit).

``colgen`` with a round budget (``--param max_rounds=N``: the same rounds, hence the
same MILPs, whatever the machine's speed), once with the pricing MILPs in-process
(``dmlrs_pricing.IN_WORKER = False``) and once in workers, alternately, ``--repeats``
times each; the table gives the number of pricing MILPs, the wall time of each mode
(the median) and the cost per MILP. Both modes must give the same bound.

    python benchmarks/pricing_worker_cost.py --seed 0 --rounds 5 --repeats 3
"""

from __future__ import annotations

import argparse
import statistics
import time

import ddlsched.families  # noqa: F401 - registers the families
from ddlsched.registry import RunOptions, run_method
from ddlsched.solvers import dmlrs_pricing
from ddlsched.workloads.dmlrs import generate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--set", action="append", default=[], help="preset parameter NAME=VALUE")
    args = parser.parse_args()
    params = {k: int(v) for k, v in (item.split("=", 1) for item in args.set)}
    instance = generate("paper", args.seed, **params)
    calls = {"n": 0}
    real = dmlrs_pricing.solve_mip

    def counted(*a, **k):
        calls["n"] += 1
        return real(*a, **k)

    dmlrs_pricing.solve_mip = counted
    options = RunOptions(time_limit_s=3600.0, params={"max_rounds": args.rounds})
    walls: dict[bool, list[float]] = {True: [], False: []}
    bounds: dict[bool, set[float]] = {True: set(), False: set()}
    milps = 0
    for _ in range(args.repeats):
        for in_worker in (False, True):
            dmlrs_pricing.IN_WORKER = in_worker
            calls["n"] = 0
            started = time.perf_counter()
            result = run_method("dmlrs", "colgen", instance, options)
            walls[in_worker].append(time.perf_counter() - started)
            bounds[in_worker].add(round(result.bound, 6))
            milps = calls["n"]
    quiet, worker = statistics.median(walls[False]), statistics.median(walls[True])
    print("| instance | pricing MILPs | in-process s | in workers s | cost per MILP ms | bounds |")
    print("|---|---:|---:|---:|---:|---|")
    print(
        f"| dmlrs paper seed {args.seed} {' '.join(args.set)}, {args.rounds} rounds | {milps} | "
        f"{quiet:.1f} | {worker:.1f} | {(worker - quiet) / max(1, milps) * 1e3:.1f} | "
        f"{'same' if bounds[True] == bounds[False] else f'DIFFER {bounds}'} |"
    )


if __name__ == "__main__":
    main()
