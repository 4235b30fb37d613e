"""rar: ``improve`` against ``cpsat`` with ``placements=whole`` on the paper instances.

Side by side in one process, per instance: the suite's ``improve`` (default parameters, seed
0, as ``benchmarks/suites/rar.toml`` runs it, but without its 120 s limit: ``--improve-limit``,
so that a loaded machine does not cut it), and from its schedule the ``placements=whole``
search of ``cpsat`` (:func:`~ddlsched.models.rar_cpsat_whole.whole_search`, a descent on the
target over whole rings) at each ``--target-work`` budget, hinted with that schedule as the
method does (the method runs the same ``improve`` for its hint and returns the better of the
two, the ``cpsat whole`` column). ``improve`` goes through the pipeline
(:func:`ddlsched.registry.run_method`); every schedule of the search is executed by the family
evaluator. Printed per run: the evaluated makespan, the targets tried
(``target:status:makespan``), the wall time and the CPU time of the process (CP-SAT's threads
included; on a loaded machine the CPU time is the cost, the wall time depends on the load).

    PYTHONPATH=src python benchmarks/rar_cpsat_whole.py 4:0 4:1 16:0 --target-work 10 20

``S:SEED``: Fig. 4 when ``S`` is 4 (the ``paper`` preset: 20 servers, ``T = 1200``), else
Fig. 6 with ``S`` servers (``T = 1500``), generated as ``benchmarks/suites/rar.toml`` does.
"""

from __future__ import annotations

import argparse
import time

from rar_points import paper_point, stamp

from ddlsched.models.rar_cpsat_whole import WholeSettings, whole_search
from ddlsched.registry import RunOptions, run_method


def _cpu_wall() -> tuple[float, float]:
    return time.process_time(), time.perf_counter()


def main() -> None:
    """Run the comparison of the module docstring and print a Markdown table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("specs", nargs="+", metavar="SERVERS:SEED")
    parser.add_argument("--target-work", type=float, nargs="+", default=[20.0])
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--improve-limit", type=float, default=3600.0, help="improve's limit")
    args = parser.parse_args()
    print(f"started {stamp()}; workers {args.workers}, target_work {args.target_work}")
    print(
        "\n| instance | improve | wall s | CPU s | target_work | cpsat whole | targets "
        "(target:status:makespan) | stopped | wall s | CPU s |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for spec in args.specs:
        label, instance = paper_point(spec)
        cpu, wall = _cpu_wall()
        options = RunOptions(time_limit_s=args.improve_limit)
        improved = run_method("rar", "improve", instance, options)
        cut = " (time limit)" if improved.time_limit_hit else ""
        head = (
            f"| {label} | {improved.objective:.0f}{cut} | {time.perf_counter() - wall:.0f} "
            f"| {time.process_time() - cpu:.0f} |"
        )
        for work in args.target_work:
            cpu, wall = _cpu_wall()
            settings = WholeSettings(work=work, workers=args.workers, seed=0)
            found = whole_search(instance, settings, improved.schedule)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            best = min(improved.objective, found.makespan or improved.objective)
            targets = " ".join(
                f"{t}:{s[:3]}:{m if m is not None else '-'}"
                for t, s, m, _ in found.info["whole_targets"]
            )
            print(
                f"{head} {work:g} | {best:.0f} | {targets} | {found.info['whole_stopped']} "
                f"| {wall:.0f} | {cpu:.0f} |",
                flush=True,
            )
            head = "| | | | |"
    print(f"\nended {stamp()}")


if __name__ == "__main__":
    main()
