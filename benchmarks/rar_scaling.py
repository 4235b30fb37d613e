"""SJF-BCO's running time against the instance size (Theorem 6), in process CPU time.

The sizes of ``benchmarks/suites/rar-scaling.toml``: the ``paper`` preset's job mix
scaled by m = 1, 2, 4, 8, 16 (160-2,560 jobs), either alone on the seed's 20 servers
with T = 1200 m (``jobs``) or with the servers (20 m, T = 1200: ``cluster``). Times
Algorithm 1 alone (``sjf_bco``: the bisection, the kappa loop, FA-FFP and LBSGF; not
the evaluator) as process CPU time, the median of ``--repeat`` runs (the machine is
shared: CPU time is what the load inflates least), and fits the log-log slope of the
median over the seeds against the job count, beside the paper's order at these sizes
(J log T: 1.12; J N log N: 2.14; ``benchmarks/claims/rar.toml``, theorem6-*). The
suite's claim reads the rows' wall time of the whole method; this is its CPU-time
counterpart for Algorithm 1 alone.

Usage::

    python benchmarks/rar_scaling.py --seeds 0 1 2 --repeat 3
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from ddlsched.heuristics.sjf_bco import sjf_bco
from ddlsched.workloads.rar import PAPER_JOB_MIX, generate

SCALES = (1, 2, 4, 8, 16)
PAPER_EXPONENT = {"jobs": 1.12, "cluster": 2.14}


def instance_at(sweep: str, scale: int, seed: int):
    """The ``paper`` instance of one sweep point (the suite's parameters)."""
    mix = tuple((gpus, count * scale) for gpus, count in PAPER_JOB_MIX)
    if sweep == "jobs":
        return generate("paper", seed, job_mix=mix, horizon=1200 * scale)
    return generate("paper", seed, job_mix=mix, num_servers=20 * scale)


def cpu_median(instance, repeat: int) -> float:
    """The median process CPU time of Algorithm 1 on ``instance`` over ``repeat`` runs."""
    times = []
    for _ in range(repeat):
        started = time.process_time()
        plan = sjf_bco(instance)
        times.append(time.process_time() - started)
        if plan.schedule is None:
            raise SystemExit(f"no schedule at {len(instance.jobs)} jobs: the sweep is wrong")
    return statistics.median(times)


def slope(sizes, times) -> float:
    """The least-squares slope of log time on log size."""
    return float(np.polyfit(np.log(sizes), np.log(times), 1)[0])


def main() -> None:
    """Time every point, print the table and the fitted exponents."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print("| sweep | m | jobs | GPUs (last seed) | CPU s per seed (median of repeats) |")
    print("|---|---|---|---|---|")
    for sweep in ("jobs", "cluster"):
        per_seed: dict[int, list[float]] = {seed: [] for seed in args.seeds}
        sizes = []
        for scale in SCALES:
            row = []
            for seed in args.seeds:
                instance = instance_at(sweep, scale, seed)
                per_seed[seed].append(cpu_median(instance, args.repeat))
                row.append(f"{per_seed[seed][-1]:.3f}")
            sizes.append(len(instance.jobs))
            print(f"| {sweep} | {scale} | {sizes[-1]} | {instance.num_gpus} | {', '.join(row)} |")
        slopes = [slope(sizes, times) for times in per_seed.values()]
        medians = np.median(np.array(list(per_seed.values())), axis=0)
        print(
            f"{sweep}: exponent {slope(sizes, medians):.3f} (median over seeds; per seed "
            f"{', '.join(f'{s:.3f}' for s in slopes)}) vs the paper's {PAPER_EXPONENT[sweep]}"
        )


if __name__ == "__main__":
    main()
