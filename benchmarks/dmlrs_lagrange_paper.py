"""``ub_lagrange`` beside ``ub_capacity`` on the dmlrs suite's widest intervals.

    python benchmarks/dmlrs_lagrange_paper.py
    python benchmarks/dmlrs_lagrange_paper.py --points fig6-20:1,fig8-100:0 --iterations 20

Instances generated exactly as ``benchmarks/suites/dmlrs.toml`` does (preset ``paper``,
``T = 20``): ``fig6-20:1`` is Fig. 6 at 20 machines (50 jobs), seed 1 (the widest Fig. 6
interval, 15.2 %); ``fig8-100:0`` is Fig. 8 at 100 jobs (50 machines), seed 0 (12.9 %).
One line per instance: ``ub_capacity`` (the suite's best bound) and its seconds, the
Lagrangian at ``ub_capacity``'s duals (``L(p_0)``), ``ub_lagrange`` after ``--iterations``
subgradient steps (the method as registered; ``--step``, ``--aim``, ``--patience`` set its
other parameters, default: the method's defaults), its
seconds and the iterate that gave it; with ``--improve``, ``improve`` at the suite's
120 s limit and the certified interval against each bound. All through
:func:`ddlsched.registry.run_method`.
"""

from __future__ import annotations

import argparse
import time

import ddlsched.families.dmlrs  # noqa: F401  (registers the family's methods)
from ddlsched.registry import RunOptions, run_method
from ddlsched.workloads.dmlrs import generate

#: Suite points: name -> the preset's parameters.
POINTS = {
    "fig6-20": {"jobs": 50, "machines": 20, "slots": 20},
    "fig8-100": {"jobs": 100, "machines": 50, "slots": 20},
}


def _run(method: str, instance, limit_s: float, params: dict | None = None):
    started = time.perf_counter()
    options = RunOptions(time_limit_s=limit_s, seed=0, params=params or {})
    return run_method("dmlrs", method, instance, options), time.perf_counter() - started


def measure(point: str, seed: int, params: dict, improve: bool) -> str:
    """One line of the table (module docstring); ``params`` are ``ub_lagrange``'s."""
    instance = generate("paper", seed, **POINTS[point])
    capacity, capacity_s = _run("ub_capacity", instance, 600)
    lagrange, lagrange_s = _run("ub_lagrange", instance, 3600, params)
    info = lagrange.info
    cells = [
        f"{point} seed {seed}",
        f"{capacity.bound:.2f} ({capacity_s:.1f} s)",
        f"{info.get('start_bound', float('nan')):.2f}",
        f"{lagrange.bound:.2f} ({lagrange_s:.0f} s)",
        f"{100.0 * (1.0 - lagrange.bound / capacity.bound):.2f} %",
        f"{info.get('best_iteration')} of {info.get('iterations_done')}",
        str(info.get("search_stopped")),
    ]
    if improve:
        best, _ = _run("improve", instance, 120)
        width = [100.0 * (b / best.objective - 1.0) for b in (capacity.bound, lagrange.bound)]
        cells += [f"{best.objective:.2f}", f"{width[0]:.2f} % -> {width[1]:.2f} %"]
    return "| " + " | ".join(cells) + " |"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", default="fig6-20:1,fig8-100:0")
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--step", type=float, default=None, help="ub_lagrange's step")
    parser.add_argument("--aim", type=float, default=None, help="ub_lagrange's aim")
    parser.add_argument("--patience", type=int, default=None, help="ub_lagrange's patience")
    parser.add_argument("--improve", action="store_true")
    args = parser.parse_args(argv)
    params = {"iterations": args.iterations}
    for name in ("step", "aim", "patience"):
        if getattr(args, name) is not None:
            params[name] = getattr(args, name)
    print(f"ub_lagrange parameters: {params}\n")
    head = "| instance | `ub_capacity` | `L(p_0)` | `ub_lagrange` | gain | best iterate | stop |"
    if args.improve:
        head += " `improve` | interval |"
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for item in args.points.split(","):
        point, _, seed = item.partition(":")
        print(measure(point, int(seed or 0), params, args.improve), flush=True)


if __name__ == "__main__":
    main()
