"""What does the HiGHS worker process cost PD-ORS's slot ILP (``--param slot_solver=ilp``)?

Under a finite limit :meth:`ddlsched.solvers.dmlrs_slot_lp.HighsSlotSolvers.ilp`
sends each slot ILP to the long-lived worker of
:mod:`ddlsched.solvers.highs_server` (killed at the limit); without a limit it
solves in-process. Side by side, one run each way:

1. ``--ilps N``: the ILPs of ``N`` ``dmlrs_slot`` ``synthetic`` instances of the
   paper's size (100 machines: 200 integer columns), each solved in-process
   (no limit) and in the worker (``--limit``); ms per ILP (the first worker
   call, which forks the worker, apart) and whether every answer is the same.
2. ``--pd-ors SEED``: ``dmlrs pd_ors --param slot_solver=ilp`` on the ``paper``
   instance of that seed (50 jobs, 100 machines, 20 slots), with no limit
   (in-process) and with ``--limit`` (the worker): wall time, the time in slot
   ILPs, their count, and whether the schedules are the same.

    nice -n 10 python benchmarks/dmlrs_slot_ilp_worker.py --ilps 200 --pd-ors 0 --limit 3600
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import time

import numpy as np

from ddlsched.registry import RunOptions, get_family, run_method
from ddlsched.solvers import highs_server
from ddlsched.solvers.dmlrs_slot_lp import HighsSlotSolvers


def _args(instance) -> tuple:
    return (
        instance.pw, instance.pps, instance.alpha, instance.beta, instance.cap,
        instance.gamma, instance.global_batch, instance.demand,
    )  # fmt: skip


def measure_ilps(count: int, limit: float, load: float) -> str:
    """One row per way: ``count`` paper-size slot ILPs, ms per ILP."""
    family = get_family("dmlrs_slot")
    instances = [family.generate("synthetic", seed, load=load) for seed in range(count)]
    solvers = HighsSlotSolvers()
    highs_server.shutdown()
    rows, answers = [], {}
    for way, seconds in (("in-process", math.inf), ("worker", limit)):
        times, found = [], []
        for instance in instances:
            started = time.perf_counter()
            solution = solvers.ilp(*_args(instance), seconds)
            times.append(1e3 * (time.perf_counter() - started))
            found.append(
                None
                if solution is None
                else (solution.w.tolist(), solution.s.tolist(), solution.objective)
            )
        answers[way] = found
        first = times[0] if way == "worker" else None
        rest = times[1:] if way == "worker" else times
        rows.append((way, first, rest, sum(f is not None for f in found)))
    same = "yes" if answers["in-process"] == answers["worker"] else "NO"
    return "\n".join(
        f"| {way} | {len(rest) + (first is not None)} | {feasible} | "
        f"{'-' if first is None else f'{first:.1f}'} | {statistics.mean(rest):.2f} | "
        f"{statistics.median(rest):.2f} | {max(rest):.2f} | {same} |"
        for way, first, rest, feasible in rows
    )


def measure_pd_ors(seed: int, limit: float) -> str:
    """One row per way: PD-ORS with the slot ILP on the paper instance of ``seed``."""
    family = get_family("dmlrs")
    instance = family.generate("paper", seed)
    highs_server.shutdown()
    rows, schedules = [], {}
    for way, seconds in (("in-process", math.inf), ("worker", limit)):
        options = RunOptions(time_limit_s=seconds, seed=seed, params={"slot_solver": "ilp"})
        started = time.perf_counter()
        result = run_method("dmlrs", "pd_ors", instance, options)
        wall = time.perf_counter() - started
        schedules[way] = (
            json.dumps(family.schedule_to_json(result.schedule), sort_keys=True),
            result.objective,
        )
        info = result.info
        per_ilp = 1e3 * info["ilp_time_s"] / max(1, info["ilps_solved"])
        rows.append(
            (way, str(result.status), wall, info["ilp_time_s"], info["ilps_solved"], per_ilp)
        )
    same = "yes" if schedules["in-process"] == schedules["worker"] else "NO"
    objective = schedules["worker"][1]
    return "\n".join(
        f"| {way} | {status} | {wall:.1f} | {ilp_s:.1f} | {count:,} | {per_ilp:.2f} | "
        f"{objective:.4f} | {same} |"
        for way, status, wall, ilp_s, count, per_ilp in rows
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ilps", type=int, default=200, help="synthetic slot ILPs each way (0: none)")
    ap.add_argument("--load", type=float, default=0.3, help="the synthetic preset's machine load")
    ap.add_argument("--pd-ors", type=int, default=None, help="seed of the paper PD-ORS run")
    ap.add_argument("--limit", type=float, default=3600.0, help="the worker runs' limit, s")
    args = ap.parse_args()
    np.seterr(all="ignore")
    if args.ilps:
        print(
            "| slot ILPs (100 machines) | ILPs | feasible | first ms (fork) | mean ms | "
            "median ms | max ms | same answers |"
        )
        print("|---|---:|---:|---:|---:|---:|---:|---|")
        print(measure_ilps(args.ilps, args.limit, args.load), flush=True)
        print()
    if args.pd_ors is not None:
        print(
            "| pd_ors slot_solver=ilp (paper) | status | wall s | slot ILPs s | slot ILPs | "
            "ms per ILP | utility | same schedule |"
        )
        print("|---|---|---:|---:|---:|---:|---:|---|")
        print(measure_pd_ors(args.pd_ors, args.limit), flush=True)


if __name__ == "__main__":
    main()
