"""rar's schedule side on the widest paper intervals: CP-SAT over whole placements at a target.

The bounds that see rigidity and simultaneity without servers stop at the GPU-time level
(``benchmarks/rar_rigid_bounds.py``); this script asks the other side: is there a schedule
below the best one known? Model (CP-SAT, a restriction of the problem, so every schedule it
finds is a schedule): every ring *whole* on one server with ``O_s >= G_j`` (no split, so
``n_j = 1``, ``p_j = 0``, and its length is exactly Eq. (9)'s ``rho_j(1, 0)``: no contention
term, on every preset), one optional interval per eligible server, a cumulative of ``O_s``
per server, all within the target makespan ``C``. Redundant, to prune: the cluster cumulative
(``N``) and, per gang size ``g``, the rings of ``G_j >= g`` within the GPUs of the servers of
``O_s >= g``. A solution is turned into GPU ids by
:func:`~ddlsched.models.rar_cpsat_plan.plan_to_schedule` and executed by the family evaluator
(:func:`~ddlsched.problems.rar_schedule.evaluate`), whose makespan is printed. The search is
deterministic (``workers`` interleaved workers, ``--work`` units of CP-SAT's deterministic
time, seed 0); the wall clock, reported, depends on the load.

    PYTHONPATH=src python benchmarks/rar_whole_placements.py 4:8:300 16:0:325 --work 200

``S:SEED:C``: Fig. 4 when ``S`` is 4 (20 servers, ``T = 1200``), else Fig. 6 with ``S``
servers (``T = 1500``), as ``benchmarks/suites/rar.toml`` generates them; ``--preset
paper-contention`` for that preset. ``--save DIR`` writes each schedule found as JSON;
``--verify S:SEED FILE`` executes a saved one with the evaluator (the schedules of
``benchmarks/results/rar-whole-schedules/``):

    PYTHONPATH=src python benchmarks/rar_whole_placements.py \\
        --verify 4:8 benchmarks/results/rar-whole-schedules/paper-4-8-300.json
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from rar_points import paper_point, stamp

from ddlsched.models.rar_cpsat_plan import Plan, PlannedJob, plan_to_schedule
from ddlsched.problems.rar import RarInstance
from ddlsched.problems.rar_schedule import (
    RarSchedule,
    evaluate,
    schedule_from_json,
    schedule_to_json,
)
from ddlsched.problems.rar_timing import execution_slots


def whole_schedule(
    instance: RarInstance, target: int, work: float, workers: int = 8
) -> tuple[str, RarSchedule | None]:
    """CP-SAT's status and, when it found one, a schedule of whole rings within ``target``."""
    from ortools.sat.python import cp_model

    lengths = [
        execution_slots(job, instance.network, 1, 0, instance.progress) for job in instance.jobs
    ]
    model = cp_model.CpModel()
    starts, intervals, choice = [], [], {}
    on_server: dict[int, tuple[list, list[int]]] = {
        s: ([], []) for s in range(instance.num_servers)
    }
    for k, (job, length) in enumerate(zip(instance.jobs, lengths, strict=True)):
        start = model.new_int_var(0, max(target - length, -1), f"start{k}")
        starts.append(start)
        intervals.append(model.new_fixed_size_interval_var(start, length, f"job{k}"))
        for server in range(instance.num_servers):
            if instance.servers[server] >= job.gpus:
                choice[k, server] = model.new_bool_var(f"on{k}_{server}")
                on_server[server][0].append(
                    model.new_optional_fixed_size_interval_var(
                        start, length, choice[k, server], f"job{k}_on{server}"
                    )
                )
                on_server[server][1].append(job.gpus)
        model.add_exactly_one(v for (j, _), v in choice.items() if j == k)
    for server, (held, gpus) in on_server.items():
        model.add_cumulative(held, gpus, instance.servers[server])
    for size in sorted({job.gpus for job in instance.jobs}):
        big = [k for k, job in enumerate(instance.jobs) if job.gpus >= size]
        room = sum(o for o in instance.servers if o >= size)
        model.add_cumulative(
            [intervals[k] for k in big], [instance.jobs[k].gpus for k in big], room
        )
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = workers
    solver.parameters.interleave_search = workers > 1
    solver.parameters.max_deterministic_time = work
    solver.parameters.random_seed = 0
    status = solver.solve(model)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return solver.status_name(status), None
    plan = Plan(
        tuple(
            PlannedJob(
                solver.value(starts[k]),
                lengths[k],
                {
                    s: job.gpus
                    for s in range(instance.num_servers)
                    if solver.value(choice.get((k, s), 0))
                },
            )
            for k, job in enumerate(instance.jobs)
        )
    )
    return solver.status_name(status), plan_to_schedule(instance, plan)


def _instance(spec: str, preset: str) -> tuple[str, RarInstance, int]:
    point, target = spec.rsplit(":", 1)
    label, instance = paper_point(point, preset)
    return label, instance, int(target)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("specs", nargs="*", metavar="SERVERS:SEED:TARGET")
    parser.add_argument(
        "--verify",
        nargs=2,
        action="append",
        default=[],
        metavar=("SERVERS:SEED", "FILE"),
        help="evaluate a saved schedule of that instance instead",
    )
    parser.add_argument("--work", type=float, default=200.0, help="CP-SAT deterministic time")
    parser.add_argument("--workers", type=int, default=8, help="interleaved (deterministic)")
    parser.add_argument("--preset", default="paper", choices=("paper", "paper-contention"))
    parser.add_argument("--save", default=None, help="a directory for the schedules' JSON")
    args = parser.parse_args()
    for spec, path in args.verify:
        label, instance, _ = _instance(f"{spec}:0", args.preset)
        schedule = schedule_from_json(json.loads(Path(path).read_text()))
        print(f"{label}, {path}: evaluated makespan {evaluate(instance, schedule).makespan}")
    if not args.specs:
        return
    print(f"started {stamp()}; work {args.work}, workers {args.workers}, preset {args.preset}")
    print("\n| instance | target `C` | CP-SAT status | evaluated makespan | wall s |")
    print("|---|---|---|---|---|")
    for spec in args.specs:
        label, instance, target = _instance(spec, args.preset)
        started = time.perf_counter()
        status, schedule = whole_schedule(instance, target, args.work, args.workers)
        wall = time.perf_counter() - started
        makespan = evaluate(instance, schedule).makespan if schedule else "-"
        print(f"| {label} | {target} | {status} | {makespan} | {wall:.0f} |", flush=True)
        if schedule and args.save:
            path = Path(args.save) / f"{args.preset}-{spec.replace(':', '-')}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(schedule_to_json(schedule, evaluate(instance, schedule))))
    print(f"\nended {stamp()}")


if __name__ == "__main__":
    main()
