"""What does running a HiGHS MILP in a worker process cost? (``solvers/highs_worker.py``)

For each size, the ``dmlrs_slot`` ILP of a ``synthetic`` instance with that
many machines (2 integer columns and 2 rows a machine) is built and solved
twice under the same finite limit: in-process (threshold above the model)
and in a forked worker (threshold 1). The table gives each solve's wall time
(``solve_model``, the hand-over to HiGHS included), the time ``fork`` itself
took, the parent's peak resident memory, and whether two proven optima came
with the same objective and variable values.

    python benchmarks/highs_worker_cost.py --machines 2000,10000,30000 --limit 120
"""

from __future__ import annotations

import argparse
import os
import resource
import time

import pyomo.environ as pyo

from ddlsched.deadline import Deadline
from ddlsched.models.dmlrs_slot import SlotFormulation
from ddlsched.registry import get_family
from ddlsched.solvers import highs_worker
from ddlsched.solvers.backends import SolveLimits, solve_model


def _timed_fork(times: list[float]):
    real = os.fork

    def fork() -> int:
        started = time.perf_counter()
        pid = real()
        if pid:
            times.append(time.perf_counter() - started)
        return pid

    return real, fork


def measure(machines: int, limit: float, seed: int) -> str:
    instance = get_family("dmlrs_slot").generate("synthetic", seed, machines=machines, jobs=1000)
    answers = {}
    fork_s: list[float] = []
    for mode, threshold in (("in-process", 10**12), ("worker", 1)):
        highs_worker.WORKER_MIN_COLUMNS = threshold
        model = SlotFormulation().build(instance, Deadline.unlimited())
        real, timed = _timed_fork(fork_s)
        os.fork = timed
        try:
            started = time.perf_counter()
            solve = solve_model(model, "highs", SolveLimits(abs_gap=1e-9), Deadline(limit))
            wall = time.perf_counter() - started
        finally:
            os.fork = real
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
        f"{worker[3] - inside[3]:+.2f} | {max(fork_s, default=float('nan')):.3f} | "
        f"{rss_mib:,.0f} | {same} |"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--machines", default="2000,10000,30000", help="comma-separated sizes")
    ap.add_argument("--limit", type=float, default=120.0, help="time limit of each solve, s")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    print(
        "| machines | columns | status | in-process s | worker s | worker - in-process s | "
        "fork s | max RSS MiB | same answer |"
    )
    print("|---:|---:|---|---:|---:|---:|---:|---:|---|")
    for machines in (int(x) for x in args.machines.split(",")):
        print(measure(machines, args.limit, args.seed), flush=True)


if __name__ == "__main__":
    main()
