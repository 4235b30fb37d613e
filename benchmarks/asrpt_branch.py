"""``lb_branch`` (ours) against ``lb_lagrange`` and the best schedule on the testbed's job sets.

    python benchmarks/asrpt_branch.py --seeds 0 1 2 20 21 --nodes 60 200
    python benchmarks/asrpt_branch.py --seeds 1 --nodes 60 --schedule-json 1=improve_s1.json
    python benchmarks/asrpt_branch.py --seeds 2 --prefixes 9 10 11 13

Per job set (preset ``testbed``, exactly ``benchmarks/suites/asrpt-testbed.toml``'s
``testbed`` group; needs ``DDLSCHED_DATA``): ``lb_lagrange`` with the suite's
ascent (2,000 iterations, patience 50), ``lb_branch`` at each ``--nodes``
budget (its other parameters at their defaults), and the schedule of ``improve``
with the suite's window moves (``cpsat_windows = 200``; or the objective of a
``ddlsched solve ... --json`` file given by ``--schedule-json SEED=FILE``, to
reuse a run). Every value goes through the method pipeline
(:func:`ddlsched.registry.run_method`), so every schedule is evaluated
by the family's evaluator. Columns: bound (s, ``sum C_i``), the method's wall
time (s, ``runtime_s``: under the machine's load of the moment), the node
ascents run, and the width ``schedule / bound - 1``.

``--prefixes K ...``: instead, the first ``K`` jobs of each set by arrival (ties:
index) as instances of their own (where CP-SAT proves some optima: the asrpt
results page, "The testbed's certified interval"), with ``lb_lagrange``,
``lb_branch`` (defaults) and ``improve`` (defaults).
"""

from __future__ import annotations

import argparse
import dataclasses
import json

from ddlsched.families.asrpt import generate
from ddlsched.registry import RunOptions, run_method

LAGRANGE = {"iterations": 2000, "patience": 50}


def solve_method(method: str, instance, time_limit_s: float, **params):
    """``method`` on ``instance`` through the pipeline, seed 0 (as ``ddlsched solve``)."""
    options = RunOptions(time_limit_s=time_limit_s, seed=0, params=params)
    return run_method("asrpt", method, instance, options)


def _schedule(instance, seed: int, files: dict[int, str]) -> tuple[float, float]:
    if seed in files:
        with open(files[seed], encoding="utf-8") as handle:
            out = json.load(handle)
        return out["objective"], out["runtime_s"]
    out = solve_method("improve", instance, time_limit_s=600, cpsat_windows=200)
    return out.objective, out.runtime_s


def prefixes(seeds: list[int], sizes: list[int]) -> None:
    """Print the ``--prefixes`` table (module docstring)."""
    print("| set | jobs | lb_lagrange | lb_branch | improve |")
    print("|:--|--:|--:|--:|--:|")
    for seed in seeds:
        instance = generate("testbed", seed)
        jobs = sorted(instance.jobs, key=lambda j: j.arrival_s)  # stable: ties by index
        for size in sizes:
            kept = tuple(jobs[:size])
            used = {j.config for j in kept}
            configs = {n: c for n, c in instance.configs.items() if n in used}
            prefix = dataclasses.replace(instance, jobs=kept, configs=configs)
            lagrange = solve_method("lb_lagrange", prefix, 300, **LAGRANGE).bound
            branched = solve_method("lb_branch", prefix, 300).bound
            schedule = solve_method("improve", prefix, 300).objective
            print(f"| s{seed} | {size} | {lagrange:,.2f} | {branched:,.2f} | {schedule:,.2f} |",
                  flush=True)  # fmt: skip


def main() -> None:
    """Print the markdown table of the module docstring."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--nodes", type=int, nargs="+", default=[60])
    parser.add_argument("--schedule-json", nargs="*", default=[], metavar="SEED=FILE")
    parser.add_argument("--prefixes", type=int, nargs="*", default=[], metavar="K")
    args = parser.parse_args()
    if args.prefixes:
        prefixes(args.seeds, args.prefixes)
        return
    files = {int(k): v for k, v in (item.split("=", 1) for item in args.schedule_json)}
    print("| set | schedule | s | lb_lagrange | s | width | nodes | lb_branch | s | width |")
    print("|:--|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    for seed in args.seeds:
        instance = generate("testbed", seed)
        lagrange = solve_method("lb_lagrange", instance, time_limit_s=300, **LAGRANGE)
        schedule, schedule_s = _schedule(instance, seed, files)
        for nodes in args.nodes:
            branched = solve_method("lb_branch", instance, time_limit_s=900, nodes=nodes)
            print(
                f"| s{seed} | {schedule:,.1f} | {schedule_s:.1f} | {lagrange.bound:,.1f} | "
                f"{lagrange.runtime_s:.1f} | {100 * (schedule / lagrange.bound - 1):.2f} % | "
                f"{branched.info['nodes']} | {branched.bound:,.1f} | {branched.runtime_s:.1f} | "
                f"{100 * (schedule / branched.bound - 1):.2f} % |",
                flush=True,
            )


if __name__ == "__main__":
    main()
