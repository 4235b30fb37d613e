"""rar bounds that see jobs rigid in time and simultaneous: validity, strength, and ceiling.

The tests are :mod:`ddlsched.models.rar_lb_rigid` (block bin packing, a two-dimensional
dual-feasible-function bound; energetic reasoning; proofs in its docstring).

Part 1 (``--proven N M``): ``small`` seeds ``0..N-1`` and ``contention`` seeds ``0..M-1``
with the optimum proven by the exact search; the least makespan the tests do not refute
(scanned up from the closed forms) against the optimum and ``lb_binpacking``: how often equal
to the optimum, above / below ``lb_binpacking``, the mean bound / optimum, and the count of
bounds above a proven optimum (a bug: must be 0).

Part 2 (``--paper SPEC ...``, ``--fig4``): paper-scale instances as
``benchmarks/suites/rar.toml`` generates them (``S:SEED``: ``num_servers=S, horizon=1500``,
Fig. 6's sweep, unless ``S`` is 4, which stands for Fig. 4: 20 servers, ``T = 1200``;
``--preset paper-contention`` for that preset). Per instance: the closed forms,
``lb_binpacking`` (in-process, ``--time-limit``), ``lb_configuration`` (``--rounds``), whether
each test refutes ``C = `` the best of them (so whether it raises the bound), with times; and
on the instances of ``--ceiling``, the *ceiling*: CP-SAT minimising the makespan of the cumulative relaxation (durations
``rho_min``, demands ``G_j``, capacity ``N``; one worker, ``--ceiling-work`` units of its
deterministic time, so the same answer on every machine). Its schedule's makespan is at least
every bound that sees only rigidity and simultaneity (the module docstring); its own bound is
a valid lower bound of the problem too.

    PYTHONPATH=src python benchmarks/rar_rigid_bounds.py --proven 100 40 --fig4 --paper 16:0 \\
        --ceiling 4:8 16:0
"""

from __future__ import annotations

import argparse
import time
from functools import partial

from rar_points import paper_point, stamp

from ddlsched.deadline import Deadline
from ddlsched.models.rar_bounds import closed_form_bounds
from ddlsched.models.rar_lb_binpacking import lb_binpacking
from ddlsched.models.rar_lb_configuration import lb_configuration
from ddlsched.models.rar_lb_rigid import (
    RigidJobs,
    blocks_refute,
    energetic_refutes,
    least_unrefuted,
    rigid_jobs,
)
from ddlsched.models.rar_search import search_exact
from ddlsched.workloads.rar import generate


def proven(preset: str, count: int) -> None:
    """Part 1: one preset's seeds with a proven optimum."""
    equal = {"closed forms": 0, "lb_binpacking": 0, "rigid tests": 0}
    ratio = dict.fromkeys(equal, 0.0)
    above = below = wrong = done = 0
    seconds = 0.0
    for seed in range(count):
        inst = generate(preset, seed)
        opt = search_exact(inst)
        if not opt.proven:
            continue
        done += 1
        started = time.perf_counter()
        rigid, _ = least_unrefuted(inst)
        seconds += time.perf_counter() - started
        values = {
            "closed forms": max(closed_form_bounds(inst).values()),
            "lb_binpacking": lb_binpacking(inst).bound,
            "rigid tests": rigid,
        }
        for name, value in values.items():
            equal[name] += value == opt.makespan
            ratio[name] += value / opt.makespan
            wrong += value > opt.makespan
        above += values["rigid tests"] > values["lb_binpacking"]
        below += values["rigid tests"] < values["lb_binpacking"]
    print(f"\n`{preset}` seeds 0-{count - 1}: {done} optima proven by the exact search\n")
    print("| bound | equal to the optimum | mean bound / optimum |")
    print("|---|---|---|")
    for name in equal:
        print(f"| {name} | {equal[name]}/{done} | {ratio[name] / max(done, 1):.4f} |")
    print(
        f"\nrigid tests above `lb_binpacking` on {above}, below on {below}; "
        f"{seconds:.1f} s in all; bounds above a proven optimum: {wrong}"
    )


def cumulative_ceiling(jobs: RigidJobs, horizon: int, work: float) -> tuple[int | None, int]:
    """CP-SAT on the cumulative relaxation: ``(best makespan found or None, its bound)``."""
    from ortools.sat.python import cp_model

    model = cp_model.CpModel()
    makespan = model.new_int_var(0, horizon, "makespan")
    intervals = []
    for k, duration in enumerate(jobs.durations):
        start = model.new_int_var(0, horizon - duration, f"start{k}")
        model.add(start + duration <= makespan)
        intervals.append(model.new_fixed_size_interval_var(start, duration, f"job{k}"))
    model.add_cumulative(intervals, list(jobs.gpus), jobs.num_gpus)
    model.minimize(makespan)
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.max_deterministic_time = work
    solver.parameters.random_seed = 0
    status = solver.solve(model)
    found = status in (cp_model.OPTIMAL, cp_model.FEASIBLE)
    best = int(solver.objective_value) if found else None
    return best, int(solver.best_objective_bound)


def _timed(function, *args):
    started = time.perf_counter()
    value = function(*args)
    return value, time.perf_counter() - started


def _refuting(test, jobs: RigidJobs, capacity: int) -> list[int]:
    """The block sizes at which ``test`` refutes ``capacity``."""
    return [block for block in jobs.block_sizes() if test(jobs, capacity, block)]


def paper(
    specs: list[str], preset: str, time_limit: float, rounds: int, ceiling: list[str], work: float
) -> None:
    """Part 2: the paper-scale instances (the ceiling on those of ``ceiling`` only)."""
    print(
        "| instance | closed forms | lb_binpacking (s) | lb_configuration (s) | best bound `B` "
        "| energetic refutes `B` (s) | blocks refute `B` (s) | ceiling: cumulative schedule "
        "/ CP-SAT bound (s) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for spec in specs:
        label, inst = paper_point(spec, preset)
        jobs = rigid_jobs(inst)
        closed = max(closed_form_bounds(inst).values())
        packing, packing_s = _timed(partial(lb_binpacking, deadline=Deadline(time_limit)), inst)
        config, config_s = _timed(partial(lb_configuration, rounds=rounds), inst)
        best = int(max(closed, packing.bound, config.bound))
        energetic, energetic_s = _timed(_refuting, energetic_refutes, jobs, best)
        blocks, blocks_s = _timed(_refuting, blocks_refute, jobs, best)
        top = "-"
        if spec in ceiling:
            (found, found_bound), found_s = _timed(cumulative_ceiling, jobs, 2 * inst.horizon, work)
            top = f"{found} / {found_bound} ({found_s:.0f})"
        print(
            f"| {label} | {closed:g} | {packing.bound:g} ({packing_s:.0f}) "
            f"| {config.bound:g} ({config_s:.0f}) | {best} "
            f"| {'blocks ' + str(energetic) if energetic else 'no'} ({energetic_s:.1f}) "
            f"| {'blocks ' + str(blocks) if blocks else 'no'} ({blocks_s:.1f}) "
            f"| {top} |",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--proven", nargs=2, type=int, default=(0, 0), metavar=("SMALL", "CONT"))
    parser.add_argument("--paper", nargs="*", default=[], metavar="SERVERS:SEED")
    parser.add_argument("--fig4", action="store_true", help="Fig. 4 seeds 0-9")
    parser.add_argument("--time-limit", type=float, default=120.0, help="of lb_binpacking")
    parser.add_argument("--rounds", type=int, default=50, help="of lb_configuration")
    parser.add_argument("--ceiling", nargs="*", default=[], metavar="SERVERS:SEED")
    parser.add_argument(
        "--ceiling-work", type=float, default=60.0, help="CP-SAT deterministic time units"
    )
    parser.add_argument(
        "--preset", default="paper", choices=("paper", "paper-contention"), help="of Part 2"
    )
    args = parser.parse_args()
    specs = [*(f"4:{s}" for s in range(10) if args.fig4), *args.paper]
    print(f"started {stamp()}")
    if args.proven[0]:
        proven("small", args.proven[0])
    if args.proven[1]:
        proven("contention", args.proven[1])
    if specs:
        print()
        paper(specs, args.preset, args.time_limit, args.rounds, args.ceiling, args.ceiling_work)
    print(f"\nended {stamp()}")


if __name__ == "__main__":
    main()
