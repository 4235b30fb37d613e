"""``ub_blocks`` (dmlrs): a bound on proven optima, and what it closes on the widest intervals.

    python benchmarks/dmlrs_blocks.py --validity
    python benchmarks/dmlrs_blocks.py --paper --modes-limit 120

``--validity``: the sets of ``benchmarks/dmlrs_lagrange_validity.py`` (``tiny`` seeds 0-59,
``tiny`` congested seeds 0-39, ``micro`` seeds 0-9 as generated and congested, those
brute-forced too; ``--tiny``, ``--congested``, ``--micro`` change the counts). Per instance:
``exact``'s proven optimum, ``ub_capacity`` and ``ub_blocks`` as an LP, with binary completion
choices (``integral=true``) and with binary blocks (``modes=true``), each through
:func:`ddlsched.registry.run_method`. Printed per set: instances, proven, violations (a
bound below a proven optimum by more than 1e-6 relative: must be 0), instances where the
``modes`` bound is below ``ub_capacity``, and the mean and largest gap of each bound to the
optimum in % of it.

``--paper``: side by side in one run, on the instances of ``--points`` (``NAME:SEED``,
generated exactly as ``benchmarks/suites/dmlrs.toml`` does, :data:`POINTS`): ``ub_capacity``,
its MILP (``integral=true``), ``ub_blocks`` as an LP, with ``integral=true`` and with
``modes=true`` (at most ``--modes-limit`` s, then its dual bound), each with its seconds and
its width against the best schedule known (:data:`BEST_SCHEDULES`: the utility and where it
comes from). Seconds are wall time under the machine's load (say it when you record them).

``--sweep GROUPS`` (e.g. ``fig7``, seeds ``--seeds``): every instance of those ``T = 20``
groups of ``benchmarks/suites/dmlrs.toml`` (``benchmarks/dmlrs_branch.py``'s ``SWEEPS``), one
line each: the capacity MILP and ``ub_blocks`` with ``modes=true`` (at most ``--modes-limit``
s), bound, seconds and status: what a suite entry would cost and give.
"""

from __future__ import annotations

import argparse
import statistics
import time

from dmlrs_eject import POINTS
from dmlrs_lagrange_validity import print_validity, proven_optimum, validity_sets

import ddlsched.families.dmlrs  # noqa: F401  (registers the family's methods)
from ddlsched.registry import RunOptions, run_method
from ddlsched.workloads.dmlrs import generate

TOL = 1e-6

#: Best schedule known per instance: ``improve``'s utility in the suite's rows (the reproduce
#: run of 2026-11-29) or, where larger, ``improve`` with ejection moves
#: (``benchmarks/results/dmlrs.md``, "`improve` with ejection moves on the widest intervals").
BEST_SCHEDULES = {
    ("fig6-20", 0): (1295.928201, "improve"),
    ("fig6-20", 1): (1020.89, "improve + ejection (lean)"),
    ("fig6-20", 2): (1485.086619, "improve"),
    ("fig7-20", 0): (853.18, "improve + ejection (reserve)"),
    ("fig8-100", 0): (3087.03, "improve + ejection (lean)"),
    ("fig8-100", 1): (2847.92, "improve + ejection (lean)"),
}
DEFAULT_POINTS = "fig6-20:0,fig6-20:1,fig6-20:2,fig7-20:0,fig8-100:0,fig8-100:1"

#: The ``--validity`` bounds: column name -> (method, parameters).
BOUNDS = {
    "ub_capacity": ("ub_capacity", {}),
    "blocks": ("ub_blocks", {}),
    "blocks integral": ("ub_blocks", {"integral": True}),
    "blocks modes": ("ub_blocks", {"modes": True}),
}


def _run(method: str, instance, limit_s: float, params: dict | None = None):
    started = time.perf_counter()
    options = RunOptions(time_limit_s=limit_s, seed=0, params=params or {})
    return run_method("dmlrs", method, instance, options), time.perf_counter() - started


def _check(instance, brute: bool) -> dict:
    """One instance of ``--validity`` (module docstring)."""
    row = proven_optimum(instance, brute)
    for name, (method, params) in BOUNDS.items():
        result = _run(method, instance, 600, params)[0]
        row[name] = result.bound
        row[name + " cut"] = result.time_limit_hit
    return row


def _report(name: str, rows: list[dict]) -> str:
    proven = [r for r in rows if r["proven"]]
    wrong = sum(r[k] < r["opt"] - TOL * max(1.0, r["opt"]) for r in proven for k in BOUNDS)
    below = sum(r["blocks modes"] < r["ub_capacity"] - TOL for r in rows)
    cells = [name, str(len(rows)), str(len(proven)), str(wrong), str(below)]
    for key in BOUNDS:
        gaps = [100.0 * (r[key] / r["opt"] - 1.0) for r in proven if r["opt"] > 0]
        cells.append(f"{statistics.fmean(gaps):.2f} / {max(gaps):.2f}" if gaps else "-")
    cells.append(str(sum(r[k + " cut"] for r in rows for k in BOUNDS)))
    return "| " + " | ".join(cells) + " |"


def validity(args: argparse.Namespace) -> None:
    """The ``--validity`` table (module docstring)."""
    gaps = " | ".join(f"`{k}` gap mean / max %" for k in BOUNDS)
    print_validity(
        validity_sets(args.tiny, args.congested, args.micro),
        "| set | instances | proven | violations | `modes` < `ub_capacity` | "
        + gaps
        + " | cut by limit |",
        _check,
        _report,
    )


def paper(args: argparse.Namespace) -> None:
    """The ``--paper`` table (module docstring)."""
    runs = [
        ("ub_capacity", "ub_capacity", {}, 600.0),
        ("capacity MILP", "ub_capacity", {"integral": True}, 600.0),
        ("ub_blocks", "ub_blocks", {}, 600.0),
        ("ub_blocks integral", "ub_blocks", {"integral": True}, 600.0),
        ("ub_blocks modes", "ub_blocks", {"modes": True}, args.modes_limit),
    ]
    print(
        "| instance | best schedule | "
        + " | ".join(f"{name}: bound (s, status), width" for name, *_ in runs)
        + " |"
    )
    print("|---" * (len(runs) + 2) + "|")
    for spec in args.points.split(","):
        point, seed_text = spec.split(":")
        seed = int(seed_text)
        instance = generate("paper", seed, **POINTS[point])
        utility, source = BEST_SCHEDULES[(point, seed)]
        cells = [f"{point} seed {seed}", f"{utility:.2f} ({source})"]
        for _, method, params, limit in runs:
            result, seconds = _run(method, instance, limit, params)
            status = result.info.get("milp_status", result.info.get("lp_status"))
            width = 100.0 * (result.bound / utility - 1.0)
            cells.append(f"{result.bound:.2f} ({seconds:.1f} s, {status}), {width:.2f} %")
        print("| " + " | ".join(cells) + " |", flush=True)


def sweep(args: argparse.Namespace) -> None:
    """The ``--sweep`` table (module docstring)."""
    from dmlrs_branch import SWEEPS

    print("| instance | capacity MILP (s, status) | `ub_blocks` modes (s, status) | below |")
    print("|---|---|---|---|")
    for group in args.sweep.split(","):
        fixed, key, values = SWEEPS[group]
        for value in values:
            for seed in (int(s) for s in args.seeds.split(",")):
                instance = generate("paper", seed, **fixed, **{key: value})
                milp, milp_s = _run("ub_capacity", instance, 600, {"integral": True})
                modes, modes_s = _run("ub_blocks", instance, args.modes_limit, {"modes": True})
                below = 100.0 * (1.0 - modes.bound / milp.bound) if milp.bound > 0 else 0.0
                cells = [
                    f"{group} {key}={value} seed {seed}",
                    f"{milp.bound:.2f} ({milp_s:.1f}, {milp.info.get('milp_status')})",
                    f"{modes.bound:.2f} ({modes_s:.1f}, {modes.info.get('milp_status')})",
                    f"{below:.2f} %",
                ]
                print("| " + " | ".join(cells) + " |", flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--validity", action="store_true")
    parser.add_argument("--tiny", type=int, default=60)
    parser.add_argument("--congested", type=int, default=40)
    parser.add_argument("--micro", type=int, default=10)
    parser.add_argument("--paper", action="store_true")
    parser.add_argument("--points", default=DEFAULT_POINTS)
    parser.add_argument("--modes-limit", type=float, default=120.0)
    parser.add_argument("--sweep", default="")
    parser.add_argument("--seeds", default="0,1,2")
    args = parser.parse_args(argv)
    if args.validity:
        validity(args)
    if args.paper:
        paper(args)
    if args.sweep:
        sweep(args)


if __name__ == "__main__":
    main()
