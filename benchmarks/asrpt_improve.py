"""asrpt ``improve`` (ours) against proven optima on ``tiny`` / ``tiny-comm``.

    python benchmarks/asrpt_improve.py --seeds 100

Per preset, seeds ``0..N-1``: ``exact`` (60 s; instances it does not prove
are counted and skipped), ``improve`` through the method pipeline (default
parameters, seed 0, 60 s), and the best of its starts (``info``). Prints how
often ``improve`` equals the optimum (1e-9 relative), how often the best
start already did, the mean and max gap ``improve / OPT - 1``, how often the
LNS list won, and the seconds per instance of ``improve``.
"""

from __future__ import annotations

import argparse
import statistics
import time

from ddlsched.models.asrpt_exact import solve_exact
from ddlsched.problems.asrpt_schedule import evaluate
from ddlsched.registry import RunOptions, run_method
from ddlsched.solvers.result import Status
from ddlsched.workloads.asrpt import tiny, tiny_comm

RTOL = 1e-9


def _study(name: str, make, seeds: int) -> None:
    proven = equal = start_equal = lns_won = 0
    gaps, seconds = [], []
    for seed in range(seeds):
        instance = make(seed)
        out = solve_exact(instance, time_limit_s=60)
        if out.status is not Status.OPTIMAL:
            continue
        proven += 1
        optimum = evaluate(instance, out.schedule).total_completion_s
        started = time.perf_counter()
        result = run_method(
            "asrpt", "improve", instance, RunOptions(time_limit_s=60, seed=0), raise_errors=True
        )
        seconds.append(time.perf_counter() - started)
        info = result.info
        releases = sum(job.arrival_s for job in instance.jobs)
        best_start = info["start_flow_s"][info["best_start"]] + releases
        if result.objective < optimum * (1 - RTOL):
            raise SystemExit(f"{name} seed {seed}: improve {result.objective} below OPT {optimum}")
        equal += result.objective <= optimum * (1 + RTOL)
        start_equal += best_start <= optimum * (1 + RTOL)
        lns_won += info["winner"] == "lns"
        gaps.append(result.objective / optimum - 1)
    print(
        f"{name}: {proven} of {seeds} proven; improve = OPT on {equal}, best start = OPT on "
        f"{start_equal}; gap improve/OPT-1 mean {statistics.mean(gaps):.4f} max {max(gaps):.4f}; "
        f"LNS list won {lns_won}; improve {statistics.mean(seconds):.3f} s mean, "
        f"{max(seconds):.3f} s max",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=100)
    args = parser.parse_args()
    for name, make in (("tiny", tiny), ("tiny-comm", tiny_comm)):
        _study(name, make, args.seeds)


if __name__ == "__main__":
    main()
