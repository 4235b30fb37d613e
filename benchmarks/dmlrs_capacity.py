"""How far ``ub_capacity`` (dmlrs, ours) gets, and what its strengthenings add.

    python benchmarks/dmlrs_capacity.py
    python benchmarks/dmlrs_capacity.py --points fig8-100,fig10 --seeds 0,1,2 --milp-limit 60

On instances of ``benchmarks/suites/dmlrs.toml`` (preset ``paper``; ``--points``
names them below), one line per instance and seed, bounds on the total utility
(smaller is better) and seconds:

``ub_trivial``   each job alone at ``F_i`` workers at ``b_int`` (the suite's bound at Figs. 8-10)
``UB(0)``        each job alone, exact single-job MILP (colgen's round 0)
``LP dff=0``     ``ub_capacity`` without the packing rows
``LP``           ``ub_capacity`` as registered (``dff = 3``), and its seconds
``MILP``         ``--param integral=true``: the proven dual bound at ``--milp-limit`` s
``UB(p_LP)``     ``UB(p)`` with exact pricing at the LP's capacity duals (its seconds)

The interval widths against the best schedule need the suite's rows: ``ddlsched bench
run`` a sub-suite with ``ub_capacity`` next to the suite's results, then
``benchmarks/intervals.py`` (benchmarks/results/dmlrs.md, "dmlrs capacity bound").
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from ddlsched.models.dmlrs import ub_trivial
from ddlsched.models.dmlrs_capacity import capacity_bound, capacity_prices
from ddlsched.models.dmlrs_dual import bound_at_prices
from ddlsched.workloads.dmlrs import generate

#: Points of the suite: name -> the preset's parameters (jobs, machines, slots).
POINTS = {
    "fig6-20": {"jobs": 50, "machines": 20, "slots": 20},
    "fig6-40": {"jobs": 50, "machines": 40, "slots": 20},
    "fig7-20": {"jobs": 20, "machines": 100, "slots": 20},
    "fig8-20": {"jobs": 20, "machines": 50, "slots": 20},
    "fig8-100": {"jobs": 100, "machines": 50, "slots": 20},
    "fig9-20": {"jobs": 100, "machines": 20, "slots": 80},
    "fig9-40": {"jobs": 100, "machines": 40, "slots": 80},
    "fig10": {"jobs": 100, "machines": 30, "slots": 80},
}


def _timed(call):
    started = time.perf_counter()
    value = call()
    return value, time.perf_counter() - started


def measure(point: str, seed: int, milp_limit: float, expensive: bool) -> list[str]:
    """One line of the table (module docstring)."""
    from ddlsched.deadline import Deadline

    instance = generate("paper", seed, **POINTS[point])
    cells = [point, str(seed), f"{ub_trivial(instance):.1f}"]
    if expensive:
        zero = np.zeros((instance.num_machines, len(instance.resources), instance.slots))
        (ub0, _), seconds = _timed(lambda: bound_at_prices(instance, zero, mode="milp"))
        cells.append(f"{ub0:.1f} ({seconds:.0f} s)")
    else:
        cells.append("-")
    (plain, _), _ = _timed(lambda: capacity_bound(instance, dff=0))
    (packed, _), seconds = _timed(lambda: capacity_bound(instance))
    cells += [f"{plain:.1f}", f"{packed:.1f} ({seconds:.1f} s)"]
    if milp_limit > 0:
        (milp, info), seconds = _timed(
            lambda: capacity_bound(instance, integral=True, deadline=Deadline(milp_limit))
        )
        cells.append(f"{milp:.1f} ({info.get('milp_status')}, {seconds:.0f} s)")
    else:
        cells.append("-")
    if expensive:
        (_, prices), _ = _timed(lambda: capacity_prices(instance))
        (lag, _), seconds = _timed(lambda: bound_at_prices(instance, prices, mode="milp"))
        cells.append(f"{lag:.1f} ({seconds:.0f} s)")
    else:
        cells.append("-")
    return cells


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", default="fig6-20,fig8-100,fig9-20,fig9-40,fig10")
    parser.add_argument("--seeds", default="0")
    parser.add_argument("--milp-limit", type=float, default=60.0, help="0: no MILP")
    parser.add_argument("--cheap", action="store_true", help="skip UB(0) and UB(p_LP)")
    args = parser.parse_args(argv)
    header = ["point", "seed", "ub_trivial", "UB(0)", "LP dff=0", "LP", "MILP", "UB(p_LP)"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for point in args.points.split(","):
        for seed in (int(s) for s in args.seeds.split(",")):
            print("| " + " | ".join(measure(point, seed, args.milp_limit, not args.cheap)) + " |")


if __name__ == "__main__":
    main()
