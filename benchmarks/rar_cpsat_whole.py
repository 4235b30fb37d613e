"""rar: ``improve`` against ``cpsat placements=whole``'s target searches on the paper instances.

Side by side in one process, per instance: the suite's ``improve`` (default parameters, seed
0, as ``benchmarks/suites/rar.toml`` runs it, but without its 120 s limit: ``--improve-limit``,
so that a loaded machine does not cut it), then from its schedule each ``--config`` of the
whole-ring search of ``cpsat`` (:func:`~ddlsched.models.rar_cpsat_whole.whole_search`), hinted
with that schedule as the method does (the method runs the same ``improve`` for its hint and
returns the better of the two: the ``cpsat whole`` column). A config is
``SEARCH:FIRST_WORK:TARGET_WORK:MAX_TARGETS[:WORKERS]`` (``descent:4:4:3`` is the option's
first search at its first defaults; ``WORKERS`` defaults to ``--workers``). ``improve`` goes
through the pipeline (:func:`ddlsched.registry.run_method`); every schedule of the search is
executed by the family evaluator. Printed per run: the evaluated makespan, the targets tried
(``target:status:makespan``), why the search stopped, the wall time and the CPU time of the
process (CP-SAT's threads included; on a loaded machine the CPU time is the cost, the wall
time depends on the load), and the instance's floor of whole rings.

    PYTHONPATH=src python benchmarks/rar_cpsat_whole.py 4:8 16:0 \\
        --config descent:4:4:3 gallop:4:2:6

``S:SEED``: Fig. 4 when ``S`` is 4 (the ``paper`` preset: 20 servers, ``T = 1200``), else
Fig. 6 with ``S`` servers (``T = 1500``), generated as ``benchmarks/suites/rar.toml`` does.
"""

from __future__ import annotations

import argparse
import logging
import time

from rar_points import paper_point, stamp

from ddlsched.models.rar_cpsat_whole import SEARCHES, WholeSettings, whole_search
from ddlsched.registry import RunOptions, run_method


def _cpu_wall() -> tuple[float, float]:
    return time.process_time(), time.perf_counter()


def _settings(config: str, workers: int) -> WholeSettings:
    """``SEARCH:FIRST_WORK:TARGET_WORK:MAX_TARGETS[:WORKERS]`` -> the search's settings."""
    fields = config.split(":")
    if len(fields) not in (4, 5) or fields[0] not in SEARCHES:
        raise SystemExit(f"bad --config {config!r}: SEARCH:FIRST_WORK:TARGET_WORK:MAX_TARGETS")
    search, first, work, targets = fields[0], float(fields[1]), float(fields[2]), int(fields[3])
    chosen = int(fields[4]) if len(fields) == 5 else workers
    return WholeSettings(work, chosen, 0, targets, first, search)


def main() -> None:
    """Run the comparison of the module docstring and print a Markdown table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("specs", nargs="+", metavar="SERVERS:SEED")
    parser.add_argument("--config", nargs="+", default=["descent:4:4:3", "gallop:4:2:6"])
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--improve-limit", type=float, default=3600.0, help="improve's limit")
    parser.add_argument("--log", action="store_true", help="log each target to stderr")
    args = parser.parse_args()
    if args.log:
        logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(message)s")
        logging.getLogger("ddlsched.models.rar_cpsat_whole").setLevel(logging.INFO)
    configs = [(config, _settings(config, args.workers)) for config in args.config]
    print(f"started {stamp()}; workers {args.workers}")
    print(
        "\n| instance | improve | wall s | CPU s | config | cpsat whole | targets "
        "(target:status:makespan) | stopped | floor | wall s | CPU s |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
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
        for config, settings in configs:
            cpu, wall = _cpu_wall()
            found = whole_search(instance, settings, improved.schedule)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            best = min(improved.objective, found.makespan or improved.objective)
            targets = " ".join(
                f"{t}:{s[:3]}:{m if m is not None else '-'}"
                for t, s, m, _ in found.info["whole_targets"]
            )
            print(
                f"{head} {config} | {best:.0f} | {targets or '(none)'} "
                f"| {found.info['whole_stopped']} | {found.info.get('whole_floor', '-')} "
                f"| {wall:.0f} | {cpu:.0f} |",
                flush=True,
            )
            head = "| | | | |"
    print(f"\nended {stamp()}")


if __name__ == "__main__":
    main()
