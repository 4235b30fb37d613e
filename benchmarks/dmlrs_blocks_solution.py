"""What ``ub_blocks``' relaxation does that no schedule can: its solution, slot by slot, on machines.

    python benchmarks/dmlrs_blocks_solution.py --point fig6-20:1 --limit 300

Solves ``ub_blocks``' model (:func:`ddlsched.models.dmlrs_blocks.build_block_model`,
``--variant modes``: binary completions and blocks, or ``integral``: binary completions)
in this process with HiGHS's own time limit (a diagnostic: its incumbent is what is
read, and the limit is HiGHS's clock), reads its point and rounds it with the functions of
method ``blocks_round`` (:mod:`ddlsched.models.dmlrs_blocks_round`: ``read_point``, then
``round_point``: slot by slot a packing MILP puts every internal block whole on one machine
and as many of each job's ``ceil(xE)`` external workers as fit, with the PS rule; the jobs
whose placed allocation falls short of their samples are dropped; ``--pack-nodes`` the
packing's node budget, none by default). Printed: the relaxation's objective and dual bound;
the job-slots that mix the two modes or hold a fractional block; the packing's counts (blocks
and external workers asked and placed, the short jobs); and the schedule of the jobs that are
not short, re-evaluated by the family
evaluator: a schedule, so its utility is a lower bound on the optimum. ``--improve``: that
schedule as the only start of ``improve``'s window search
(:func:`ddlsched.heuristics.dmlrs_improve.improve` with its default settings, seed 0; the
start is passed under the name ``fifo``, the API's slot for a start), the result
re-evaluated; ``--save FILE``: the schedule (after ``--improve``, that one) as JSON (the CLI
contract's schedule). ``--verify POINT:SEED FILE``: only re-evaluate a saved schedule on its
instance (the family evaluator, in this process) and print its utility.
"""

from __future__ import annotations

import argparse

import highspy
import numpy as np
from dmlrs_eject import POINTS

from ddlsched.deadline import Deadline
from ddlsched.models.dmlrs_blocks import build_block_model
from ddlsched.models.dmlrs_blocks_round import read_point, round_point
from ddlsched.models.dmlrs_capacity import to_highs
from ddlsched.problems.dmlrs import evaluate
from ddlsched.solvers.highs_lp import new_highs
from ddlsched.workloads.dmlrs import generate


def solve_relaxation(instance, variant: str, limit_s: float):
    """The model, its point (column values), objective and dual bound."""
    model = build_block_model(instance, integral=True, modes=variant == "modes")
    highs = new_highs([("output_flag", False), ("threads", 1), ("mip_rel_gap", 1e-6)])
    highs.passModel(to_highs(model.capacity, highspy))
    highs.setOptionValue("time_limit", float(limit_s))
    highs.run()
    info = highs.getInfo()
    values = np.asarray(highs.getSolution().col_value)
    return model, values, info.objective_function_value, info.mip_dual_bound


def mixed_slots(model, values) -> tuple[int, int]:
    """Job-slots whose point mixes (a block share strictly between 0 and 1, or a block and
    external workers together), and job-slots with any work."""
    mixed = active = 0
    for key, (_, _, _, x_ext) in model.capacity.slot_columns.items():
        share = sum(values[c] for c in model.blocks.get(key, []))
        external = values[x_ext] if x_ext >= 0 else 0.0
        if share > 1e-6 or external > 1e-6:
            active += 1
            fractional = any(1e-6 < values[c] < 1 - 1e-6 for c in model.blocks.get(key, []))
            mixed += fractional or (share > 1e-6 and external > 1e-6)
    return mixed, active


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--point", default="fig6-20:1")
    parser.add_argument("--variant", choices=("modes", "integral"), default="modes")
    parser.add_argument("--limit", type=float, default=300.0)
    parser.add_argument("--pack-nodes", type=int, default=10**9)
    parser.add_argument("--improve", action="store_true")
    parser.add_argument("--save", default="")
    parser.add_argument("--verify", nargs=2, metavar=("POINT:SEED", "FILE"))
    args = parser.parse_args(argv)
    if args.verify:
        verify(*args.verify)
        return
    point, seed = args.point.split(":")
    instance = generate("paper", int(seed), **POINTS[point])
    model, values, objective, dual = solve_relaxation(instance, args.variant, args.limit)
    print(f"relaxation ({args.variant}): incumbent {objective:.2f}, dual bound {dual:.2f}")
    plan = read_point(model, values)
    mixed = mixed_slots(model, values)
    print(f"job-slots with a fractional block or both modes: {mixed[0]} of {mixed[1]} active")
    print(f"jobs the relaxation completes: {len(plan.jobs)} {sorted(plan.jobs)}")
    schedule, packing = round_point(instance, plan, args.pack_nodes, Deadline(3600.0))
    print(f"packing: {packing}")
    lost = sum(
        instance.jobs[i].utility(plan.completion[i] - instance.jobs[i].arrival_slot)
        for i in packing["short_jobs"]
    )
    evaluation = evaluate(instance, schedule)
    print(
        f"schedule of the jobs not short: utility {evaluation.total_utility:.2f} (evaluator), "
        f"{len(schedule.accepted)} jobs; the short jobs' utility in the relaxation {lost:.2f}"
    )
    if args.improve:
        schedule = improve_from(instance, schedule)
    if args.save:
        import json

        from ddlsched.problems.dmlrs import schedule_to_json

        with open(args.save, "w") as handle:
            json.dump(schedule_to_json(schedule), handle)


def verify(spec: str, path: str) -> None:
    """``--verify`` (module docstring)."""
    import json

    from ddlsched.problems.dmlrs import schedule_from_json

    point, seed = spec.split(":")
    instance = generate("paper", int(seed), **POINTS[point])
    with open(path) as handle:
        schedule = schedule_from_json(json.load(handle))
    evaluation = evaluate(instance, schedule)
    print(f"{spec}, {path}: utility {evaluation.total_utility:.6f} (evaluator)")


def improve_from(instance, schedule):
    """``improve``'s window search from ``schedule`` (module docstring, ``--improve``)."""
    from ddlsched.deadline import Deadline
    from ddlsched.heuristics.dmlrs_improve import ImproveSettings, improve

    settings = ImproveSettings(starts=("fifo",))
    better, info, cut = improve(instance, settings, lambda name, d: schedule, Deadline(3600.0))
    utility = evaluate(instance, better).total_utility
    print(
        f"improve from it: utility {utility:.6f} (evaluator), {len(better.accepted)} jobs, "
        f"windows {info.get('windows_tried')}, stopped {info.get('search_stopped')}, cut {cut}"
    )
    return better


if __name__ == "__main__":
    main()
