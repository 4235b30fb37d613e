"""rar: ``improve`` against ``cpsat`` with ``placements=whole`` on the paper instances.

Side by side in one process, per instance: the suite's ``improve`` (default parameters, seed
0, ``benchmarks/suites/rar.toml``'s 120 s limit) and the ``cpsat`` method with
``placements=whole`` (its hint is the same ``improve`` run; then a descent on the target over
whole rings, :mod:`ddlsched.models.rar_cpsat_whole`) at each ``--target-work`` budget. Both go
through the pipeline (:func:`ddlsched.registry.run_method`), so every schedule is re-evaluated
by the family evaluator. Printed per run: the evaluated makespan, the targets tried
(``target:status:makespan``), the wall time and the CPU time of the process (CP-SAT's threads
included; on a loaded machine the CPU time is the cost, the wall time depends on the load).

    PYTHONPATH=src python benchmarks/rar_cpsat_whole.py 4:0 4:1 16:0 --target-work 10 20

``S:SEED``: Fig. 4 when ``S`` is 4 (the ``paper`` preset: 20 servers, ``T = 1200``), else
Fig. 6 with ``S`` servers (``T = 1500``), generated as ``benchmarks/suites/rar.toml`` does.
"""

from __future__ import annotations

import argparse
import subprocess
import time

from ddlsched.problems.rar import RarInstance
from ddlsched.registry import RunOptions, run_method
from ddlsched.workloads.rar import generate


def _instance(spec: str) -> tuple[str, RarInstance]:
    servers, seed = (int(v) for v in spec.split(":"))
    if servers == 4:
        return f"Fig. 4 seed {seed}", generate("paper", seed)
    params = {"num_servers": servers, "horizon": 1500}
    return f"Fig. 6 {servers} servers seed {seed}", generate("paper", seed, **params)


def _timed(instance: RarInstance, method: str, limit: float, params: dict):
    """The pipeline's result, its wall time and the process's CPU time over the run."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = run_method("rar", method, instance, RunOptions(time_limit_s=limit, params=params))
    return result, time.perf_counter() - wall, time.process_time() - cpu


def _stamp() -> str:
    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    now = subprocess.run(["date", "-u"], capture_output=True, text=True).stdout.strip()
    return f"{now}; {load}"


def main() -> None:
    """Run the comparison of the module docstring and print a Markdown table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("specs", nargs="+", metavar="SERVERS:SEED")
    parser.add_argument("--target-work", type=float, nargs="+", default=[20.0])
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--time-limit", type=float, default=3600.0, help="cpsat's wall limit")
    args = parser.parse_args()
    print(f"started {_stamp()}; workers {args.workers}, target_work {args.target_work}")
    print(
        "\n| instance | improve | wall s | CPU s | target_work | cpsat whole | targets "
        "(target:status:makespan) | stopped | wall s | CPU s |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for spec in args.specs:
        label, instance = _instance(spec)
        improved, wall, cpu = _timed(instance, "improve", 120.0, {})
        head = f"| {label} | {improved.objective:.0f} | {wall:.0f} | {cpu:.0f} |"
        for work in args.target_work:
            params = {"placements": "whole", "target_work": work, "workers": args.workers}
            found, wall, cpu = _timed(instance, "cpsat", args.time_limit, params)
            info = found.info
            targets = " ".join(
                f"{t}:{s[:3]}:{m if m is not None else '-'}"
                for t, s, m, _ in info.get("whole_targets", [])
            )
            cut = " (time limit)" if found.time_limit_hit else ""
            print(
                f"{head} {work:g} | {found.objective:.0f}{cut} | {targets} | "
                f"{info.get('whole_stopped')} | {wall:.0f} | {cpu:.0f} |",
                flush=True,
            )
            head = "| | | | |"
    print(f"\nended {_stamp()}")


if __name__ == "__main__":
    main()
