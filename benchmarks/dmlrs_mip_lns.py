"""``improve`` (dmlrs) with and without its MIP repair, beside ``ub_capacity``.

    python benchmarks/dmlrs_mip_lns.py
    python benchmarks/dmlrs_mip_lns.py --points fig6-20:2,fig6-20:3 --mip-windows 8

On ``paper`` instances (``--points``: ``NAME:SEED`` pairs, ``NAME`` a point of
:data:`POINTS`, the same as ``ddlsched instance generate dmlrs --preset paper
--seed SEED --set jobs=.. --set machines=.. --set slots=..``), one line per
instance, side by side in one run:

``ub_capacity``   the bound (an LP, run once per instance) and its seconds
``improve``       today's defaults (greedy re-insertion only): utility, width, seconds
``improve+MIP``   ``--param mip_windows=W mip_window=J mip_nodes=N`` (the MIP repair,
                  :mod:`ddlsched.models.dmlrs_mip_repair`): utility, width, seconds,
                  windows accepted of tried and how the window solves ended

``--full-milp SECONDS`` adds, per instance, ``exact``'s strengthened compact MILP
over every job (beyond ``exact``'s size cap: built here directly), the ``improve+MIP``
schedule as its MIP start, solved within ``--full-nodes`` HiGHS nodes and SECONDS:
its incumbent and dual bound (a valid upper bound, like ``ub_capacity``'s), so that
the line says on which side of the interval the MILP moves.

The width is ``bound / utility - 1`` (utility is maximised). Both ``improve``
runs use the run's seed 0 and go through :func:`ddlsched.registry.run_method`
(every schedule re-evaluated by the family's evaluator) with a time limit
(``--time-limit``) that is a safety net only: a row says ``cut`` when it hit it.
"""

from __future__ import annotations

import argparse
import time

from ddlsched.models.dmlrs_capacity import capacity_bound
from ddlsched.registry import RunOptions, run_method
from ddlsched.workloads.dmlrs import generate

#: The interval report's dmlrs points: name -> the preset's (jobs, machines, slots).
POINTS = {
    "fig6-20": {"jobs": 50, "machines": 20, "slots": 20},
    "fig8-100": {"jobs": 100, "machines": 50, "slots": 20},
    "fig10": {"jobs": 100, "machines": 30, "slots": 80},
}
#: The four widest instances of the interval report's dmlrs tables.
DEFAULT_POINTS = "fig6-20:1,fig8-100:0,fig8-100:1,fig10:0"


def full_milp(instance, start, seconds: float, nodes: int) -> str:
    """The whole compact MILP's incumbent and dual bound (module docstring)."""
    from ddlsched.deadline import Deadline
    from ddlsched.models.dmlrs_milp import build_model
    from ddlsched.models.dmlrs_start import start_values
    from ddlsched.models.dmlrs_strong import Strengthening, strengthen
    from ddlsched.solvers.backends import solve_model
    from ddlsched.solvers.limits import SolveLimits

    started = time.perf_counter()
    deadline = Deadline(seconds)
    try:
        model = build_model(instance, deadline=deadline)
        strengthen(model, instance, Strengthening(start=False))
        model.ddlsched_start = start_values(model, instance, start)
        built = time.perf_counter() - started
        limits = SolveLimits(abs_gap=1e-9, highs_options=(("mip_max_nodes", nodes),))
        solve = solve_model(model, "highs", limits, deadline)
    except Exception as exc:  # a benchmark line, not a crash: say what stopped it
        return f"{type(exc).__name__}: {exc}"
    total = time.perf_counter() - started
    incumbent = "-" if solve.incumbent is None else f"{solve.incumbent:.2f}"
    bound = "-" if solve.bound is None else f"{solve.bound:.2f}"
    return (
        f"{incumbent} / {bound} ({solve.status}, {solve.message}; build {built:.0f} s, "
        f"{total:.0f} s)"
    )


def measure(point: str, seed: int, mip: dict, limit_s: float, full: tuple[float, int]) -> str:
    """One line of the table (module docstring)."""
    instance = generate("paper", seed, **POINTS[point])
    started = time.perf_counter()
    bound, _ = capacity_bound(instance)
    bound_s = time.perf_counter() - started
    cells = [f"{point} s{seed}", f"{bound:.2f} ({bound_s:.0f} s)"]
    for params in ({}, mip):
        options = RunOptions(time_limit_s=limit_s, seed=0, params=params)
        result = run_method("dmlrs", "improve", instance, options)
        if result.objective is None:
            cells += [f"{result.status}", "-", "-"]
            continue
        utility = float(result.objective)
        width = bound / utility - 1.0 if utility > 0 else float("inf")
        cut = " cut" if result.time_limit_hit else ""
        cells += [f"{utility:.2f}", f"{100 * width:.2f} %", f"{result.runtime_s:.0f}{cut}"]
        if params:
            info = result.info
            solves = ", ".join(f"{k} {v}" for k, v in info.get("mip_solves", {}).items())
            cells.append(
                f"{info.get('mip_windows_accepted')}/{info.get('mip_windows_tried')} ({solves})"
            )
            if full[0] > 0:
                cells.append(full_milp(instance, result.schedule, *full))
    return "| " + " | ".join(cells) + " |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--points", default=DEFAULT_POINTS, help="NAME:SEED pairs, commas")
    parser.add_argument("--mip-windows", type=int, default=8)
    parser.add_argument("--mip-window", type=int, default=12)
    parser.add_argument("--mip-nodes", type=int, default=200)
    parser.add_argument("--time-limit", type=float, default=3600.0, help="safety net, s")
    parser.add_argument("--full-milp", type=float, default=0.0, help="s (0: not run)")
    parser.add_argument("--full-nodes", type=int, default=100)
    args = parser.parse_args()
    mip = {
        "mip_windows": args.mip_windows,
        "mip_window": args.mip_window,
        "mip_nodes": args.mip_nodes,
    }
    print(
        "| instance | ub_capacity (s) | improve | width | s | improve+MIP | width | s | "
        "MIP windows accepted/tried (solves) |"
        + (" full MILP incumbent / bound |" if args.full_milp else "")
    )
    print("|---|---|---|---|---|---|---|---|---|" + ("---|" if args.full_milp else ""))
    for item in args.points.split(","):
        name, seed = item.split(":")
        full = (args.full_milp, args.full_nodes)
        print(measure(name, int(seed), mip, args.time_limit, full), flush=True)


if __name__ == "__main__":
    main()
