"""Benchmark: dmlrs `exact` near and above its cell cap, strengthened and plain.

For each ``JOBSxMACHINESxSLOTS`` size and seed of the ``paper`` preset, runs
``exact`` with a 60 s limit twice, with every strengthening of
:mod:`ddlsched.models.dmlrs_strong` (the default) and with none, the cell cap
(:data:`ddlsched.models.dmlrs.EXACT_MAX_CELLS`) lifted for the run, and prints
one Markdown row per run: status, utility, bound, wall time (the overrun of
the limit), model build time and the process's peak memory so far. It is how
the cap was chosen: the limit must hold and the model must give a schedule.

    python benchmarks/dmlrs_exact_cells.py --sizes 5x50x20,10x50x20,25x20x20 --seeds 0,1
"""

from __future__ import annotations

import argparse
import resource
import time

import ddlsched.models.dmlrs as exact_model
from ddlsched.registry import RunOptions, run_method
from ddlsched.workloads.dmlrs import generate

PLAIN = {
    "earliest": False,
    "completion_work": False,
    "patterns": False,
    "capacity_cuts": False,
    "start": False,
    "no_surplus": False,
    "packing": False,
    "improve_start": False,
    "solver_symmetry": False,
}


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="5x50x20,10x50x20,25x20x20")
    parser.add_argument("--seeds", default="0,1")
    parser.add_argument("--time-limit", type=float, default=60.0)
    args = parser.parse_args()
    exact_model.EXACT_MAX_CELLS = 10**9  # measured here: the cap is what this chooses
    print("| jobs x machines x slots | seed | model | status | utility | bound | wall s | build s "
          "| peak RSS MB |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|")
    for size in args.sizes.split(","):
        jobs, machines, slots = (int(x) for x in size.split("x"))
        for seed in (int(s) for s in args.seeds.split(",")):
            instance = generate("paper", seed, jobs=jobs, machines=machines, slots=slots)
            for label, params in (("strengthened", {}), ("plain", PLAIN)):
                started = time.perf_counter()
                options = RunOptions(time_limit_s=args.time_limit, params=params)
                result = run_method("dmlrs", "exact", instance, options)
                wall = time.perf_counter() - started
                peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
                print(
                    f"| {size} | {seed} | {label} | {result.status} | {_fmt(result.objective)} "
                    f"| {_fmt(result.bound)} | {wall:.1f} | {_fmt(result.info.get('build_s'))} "
                    f"| {peak} |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
