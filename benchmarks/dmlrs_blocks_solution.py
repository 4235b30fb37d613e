"""What ``ub_blocks``' relaxation does that no schedule can: its solution, slot by slot, on machines.

    python benchmarks/dmlrs_blocks_solution.py --point fig6-20:1 --limit 300

Solves ``ub_blocks``' model (:func:`ddlsched.models.dmlrs_blocks.build_block_model`,
``--variant modes``: binary completions and blocks, or ``integral``: binary completions)
in this process with HiGHS's own time limit (a diagnostic: its incumbent is what is
read, and the limit is HiGHS's clock) and reads its point: per job the completion slot,
per slot its internal block (``z``) and its external workers (``xE``). Then, slot by slot,
a packing MILP (HiGHS) puts that point on the machines: every internal block whole on one
machine (must fit), and as many of each job's external workers as fit, up to
``ceil(xE)`` (``--round down``: ``floor(xE)``), with ``ceil(w / gamma)`` PSs per machine's
workers. Printed: the relaxation's objective and dual bound; the job-slots that mix the
two modes or hold a fractional block; per slot the blocks and the
external workers asked for and placed; the jobs whose samples (by the evaluator's rate:
Fact 1 on the placed allocation) fall short; and the schedule made of the jobs that are
not short (their placed allocations, the short ones removed), re-evaluated by the family
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
import math

import highspy
import numpy as np
from dmlrs_eject import POINTS

from ddlsched.models.dmlrs_blocks import build_block_model
from ddlsched.models.dmlrs_capacity import to_highs
from ddlsched.problems.dmlrs import DmlrsSchedule, evaluate
from ddlsched.problems.dmlrs_schedule import SAMPLE_RTOL, Allocation, per_sample_time
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


def read_point(instance, model, values):
    """Per job: ``completion`` (slot or None), per slot ``(block workers, external workers)``."""
    base = model.capacity
    plan = {}
    for (i, t), col in base.completion.items():
        if values[col] > 0.5:
            plan[i] = {"completion": t, "slots": {}}
    for (i, t), (_, _, _, x_ext) in base.slot_columns.items():
        if i not in plan:
            continue
        block = 0
        for w, col in enumerate(model.blocks.get((i, t), []), start=1):
            if values[col] > 0.5:
                block = w
        external = float(values[x_ext]) if x_ext >= 0 else 0.0
        if block or external > 1e-6:
            plan[i]["slots"][t] = (block, external)
    return plan


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


def pack_slot(instance, asks: dict[int, tuple[int, int]]):
    """One slot's packing MILP: ``asks[i] = (block workers, external workers)``; returns
    ``(status, {i: [(machine, workers, ps)]})`` (every block whole on one machine, external
    workers as many as fit)."""
    H, R = instance.cap.shape
    cols, lower, upper, cost, integer = [], [], [], [], []
    rows: list[tuple[list[tuple[int, float]], float, float]] = []

    def column(up, gain):
        cols.append(len(cols))
        lower.append(0.0)
        upper.append(up)
        cost.append(gain)
        integer.append(True)
        return cols[-1]

    use = [[[] for _ in range(R)] for _ in range(H)]  # (col, amount) per machine, resource
    where = {}
    for i, (block, external) in asks.items():
        job = instance.jobs[i]
        alpha, beta = instance.alpha[i], instance.beta[i]
        if block:
            servers = math.ceil(block / job.gamma)
            picks = [column(1.0, 0.0) for _ in range(H)]
            rows.append(([(c, 1.0) for c in picks], 1.0, 1.0))
            for h, c in enumerate(picks):
                for r in range(R):
                    use[h][r].append((c, alpha[r] * block + beta[r] * servers))
            where[i] = ("block", picks, block, servers)
        elif external:
            workers = [column(float(external), 1.0) for _ in range(H)]
            servers = [column(float(external), -1e-3) for _ in range(H)]  # no idle PSs
            total = [(c, 1.0) for c in workers]
            rows.append((total, 0.0, float(external)))
            rows.append(
                (
                    [(c, float(job.gamma)) for c in servers] + [(c, -1.0) for c in workers],
                    0.0,
                    math.inf,
                )
            )
            for h in range(H):
                for r in range(R):
                    use[h][r].append((workers[h], alpha[r]))
                    use[h][r].append((servers[h], beta[r]))
            where[i] = ("external", workers, servers)
    for h in range(H):
        for r in range(R):
            entries = [(c, a) for c, a in use[h][r] if a > 0]
            if entries:
                rows.append((entries, -math.inf, float(instance.cap[h, r])))
    if not cols:
        return "optimal", {}
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = len(cols), len(rows)
    lp.col_cost_, lp.col_lower_, lp.col_upper_ = np.array(cost), np.array(lower), np.array(upper)
    lp.row_lower_ = np.array([lo for _, lo, _ in rows])
    lp.row_upper_ = np.minimum(np.array([up for _, _, up in rows]), highspy.kHighsInf)
    matrix = highspy.HighsSparseMatrix()
    matrix.format_ = highspy.MatrixFormat.kRowwise
    start, index, value = [0], [], []
    for entries, _, _ in rows:
        index += [c for c, _ in entries]
        value += [a for _, a in entries]
        start.append(len(index))
    matrix.start_, matrix.index_, matrix.value_ = start, index, value
    matrix.num_col_, matrix.num_row_ = len(cols), len(rows)
    lp.a_matrix_ = matrix
    lp.sense_ = highspy.ObjSense.kMaximize
    lp.integrality_ = [highspy.HighsVarType.kInteger] * len(cols)
    highs = new_highs([("output_flag", False), ("threads", 1), ("time_limit", 60.0)])
    highs.passModel(lp)
    highs.run()
    status = highs.getModelStatus()
    if status not in (highspy.HighsModelStatus.kOptimal, highspy.HighsModelStatus.kTimeLimit):
        return str(status).split(".")[-1], None
    x = np.round(np.asarray(highs.getSolution().col_value)).astype(int)
    placed = {}
    for i, spec in where.items():
        if spec[0] == "block":
            h = int(np.argmax([x[c] for c in spec[1]]))
            placed[i] = [(h, spec[2], spec[3])]
        else:
            workers = [int(x[c]) for c in spec[1]]
            servers = [int(x[c]) for c in spec[2]]
            placed[i] = [
                (h, w, s) for h, (w, s) in enumerate(zip(workers, servers, strict=True)) if w or s
            ]
    return "optimal" if status == highspy.HighsModelStatus.kOptimal else "time_limit", placed


def samples_of(instance, i, entries) -> float:
    """Samples job ``i`` processes in one slot on ``entries`` (Fact 1 on the machines used)."""
    job = instance.jobs[i]
    workers = sum(w for _, w, _ in entries)
    machines = {h for h, w, s in entries if w or s}
    bandwidth = instance.b_int if len(machines) == 1 else instance.b_ext
    return instance.slot_s * workers / per_sample_time(job, bandwidth)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--point", default="fig6-20:1")
    parser.add_argument("--variant", choices=("modes", "integral"), default="modes")
    parser.add_argument("--limit", type=float, default=300.0)
    parser.add_argument("--round", choices=("up", "down"), default="up")
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
    plan = read_point(instance, model, values)
    mixed = mixed_slots(model, values)
    print(f"job-slots with a fractional block or both modes: {mixed[0]} of {mixed[1]} active")
    print(f"jobs the relaxation completes: {len(plan)} {sorted(plan)}")
    T = instance.slots
    alloc, got = [], {i: 0.0 for i in plan}
    print(
        "| slot | blocks asked / placed | external workers asked (relaxation) / placed | status |"
    )
    print("|---|---|---|---|")
    for t in range(1, T + 1):
        asks = {}
        wanted = 0.0
        for i, job_plan in plan.items():
            if t in job_plan["slots"]:
                block, external = job_plan["slots"][t]
                count = (
                    math.ceil(external - 1e-6)
                    if args.round == "up"
                    else math.floor(external + 1e-6)
                )
                asks[i] = (block, 0 if block else count)
                wanted += 0 if block else external
        status, placed = pack_slot(instance, asks)
        if placed is None:
            blocks = [i for i, (b, _) in asks.items() if b]
            print(f"| {t} | {len(blocks)} / none | {wanted:.1f} / - | {status} |")
            continue
        n_blocks = sum(1 for b, _ in asks.values() if b)
        ext = sum(w for i, e in placed.items() if not asks[i][0] for _, w, _ in e)
        print(f"| {t} | {n_blocks} / {n_blocks} | {wanted:.1f} / {ext} | {status} |")
        for i, entries in placed.items():
            got[i] += samples_of(instance, i, entries)
            alloc += [Allocation(i, t, h, w, s) for h, w, s in entries]
    short = {
        i: got[i] / (instance.jobs[i].workload * (1 - SAMPLE_RTOL))
        for i in plan
        if got[i] < instance.jobs[i].workload * (1 - SAMPLE_RTOL)
    }
    print(
        "jobs short of samples (share done): "
        + ", ".join(f"{i} ({v:.3f})" for i, v in sorted(short.items()))
    )
    keep = [i for i in plan if i not in short]
    schedule = DmlrsSchedule(
        accepted=tuple(sorted(keep)), alloc=tuple(a for a in alloc if a.job in keep)
    )
    evaluation = evaluate(instance, schedule)
    lost = sum(
        instance.jobs[i].utility(plan[i]["completion"] - instance.jobs[i].arrival_slot)
        for i in short
    )
    print(
        f"schedule of the jobs not short: utility {evaluation.total_utility:.2f} (evaluator), "
        f"{len(keep)} jobs; the short jobs' utility in the relaxation {lost:.2f}"
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
