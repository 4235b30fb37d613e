"""What does running a HiGHS MILP in the worker process cost? (``solvers/highs_worker.py``)

First, tiny MILPs (a 20-item knapsack, ``--tiny`` solves each way): the mean
and largest wall time of ``solve_model`` in-process and in the long-lived
HiGHS worker (the first solve, which forks the worker, is counted apart):
the cost of sending every MILP under a finite limit to the worker.

Then, for each size, the ``dmlrs_slot`` ILP of a ``synthetic`` instance with
that many machines (2 integer columns and 2 rows a machine) is built and
solved twice under the same finite limit: in-process (threshold above the
model) and in the worker (threshold 1). The table gives each solve's wall
time (``solve_model``, the hand-over to HiGHS included), the parent's peak
resident memory, and whether two proven optima came with the same objective
and variable values.

    python benchmarks/highs_worker_cost.py --tiny 200 --machines 2000,10000,30000 --limit 120
"""

from __future__ import annotations

import argparse
import random
import resource
import statistics
import time

import pyomo.environ as pyo

from ddlsched.deadline import Deadline
from ddlsched.models.dmlrs_slot import SlotFormulation
from ddlsched.registry import get_family
from ddlsched.solvers import highs_server, highs_worker
from ddlsched.solvers.backends import SolveLimits, solve_model


def _knapsack(seed: int) -> pyo.ConcreteModel:
    rng = random.Random(seed)
    weight = [rng.randint(10, 99) for _ in range(20)]
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(20), domain=pyo.Binary)
    m.cap = pyo.Constraint(expr=sum(w * m.x[i] for i, w in enumerate(weight)) <= sum(weight) // 2)
    m.obj = pyo.Objective(expr=sum((w + i % 7) * m.x[i] for i, w in enumerate(weight)), sense=-1)
    return m


def measure_tiny(count: int, limit: float) -> str:
    """One table row per mode: ``count`` tiny knapsack MILPs, ms per ``solve_model``."""
    rows = []
    for mode, threshold in (("in-process", 10**12), ("worker", 1)):
        highs_worker.WORKER_MIN_COLUMNS = threshold
        highs_server.shutdown()
        times, answers = [], []
        for seed in range(count + 1):
            model = _knapsack(seed)
            started = time.perf_counter()
            solve = solve_model(model, "highs", SolveLimits(), Deadline(limit))
            times.append(1e3 * (time.perf_counter() - started))
            answers.append(solve.incumbent)
        rows.append((mode, times[0], times[1:], answers))
    same = "yes" if rows[0][3] == rows[1][3] else "NO"
    return "\n".join(
        f"| {mode} | {count} | {first:.1f} | {statistics.mean(rest):.1f} | "
        f"{statistics.median(rest):.1f} | {max(rest):.1f} | {same} |"
        for mode, first, rest, _ in rows
    )


def measure(machines: int, limit: float, seed: int) -> str:
    instance = get_family("dmlrs_slot").generate("synthetic", seed, machines=machines, jobs=1000)
    answers = {}
    for mode, threshold in (("in-process", 10**12), ("worker", 1)):
        highs_worker.WORKER_MIN_COLUMNS = threshold
        model = SlotFormulation().build(instance, Deadline.unlimited())
        started = time.perf_counter()
        solve = solve_model(model, "highs", SolveLimits(abs_gap=1e-9), Deadline(limit))
        wall = time.perf_counter() - started
        values = [v.value for v in model.component_data_objects(pyo.Var)]
        answers[mode] = (solve.status, solve.incumbent, values, wall, solve.num_variables)
        del model
    inside, worker = answers["in-process"], answers["worker"]
    if inside[0] == worker[0] == "optimal":
        same = "yes" if inside[:3] == worker[:3] else "NO"
    else:  # a solve stopped by its limit depends on when it stopped
        same = "- (time limit)"
    rss_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return (
        f"| {machines:,} | {inside[4]:,} | {inside[0]} | {inside[3]:.2f} | {worker[3]:.2f} | "
        f"{worker[3] - inside[3]:+.2f} | {rss_mib:,.0f} | {same} |"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--machines", default="2000,10000,30000", help="comma-separated sizes (none: no ILP)"
    )
    ap.add_argument("--limit", type=float, default=120.0, help="time limit of each solve, s")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--tiny", type=int, default=200, help="tiny MILPs solved each way (0: none)")
    args = ap.parse_args()
    if args.tiny:
        print("| tiny MILPs | solves | first ms | mean ms | median ms | max ms | same answers |")
        print("|---|---:|---:|---:|---:|---:|---|")
        print(measure_tiny(args.tiny, args.limit), flush=True)
        print()
    if args.machines == "none":
        return
    print(
        "| machines | columns | status | in-process s | worker s | worker - in-process s | "
        "max RSS MiB | same answer |"
    )
    print("|---:|---:|---|---:|---:|---:|---:|---|")
    for machines in (int(x) for x in args.machines.split(",")):
        print(measure(machines, args.limit, args.seed), flush=True)


if __name__ == "__main__":
    main()
