"""``blocks_round`` with and without its top-up of the jobs the packing leaves short, side by side.

    python benchmarks/dmlrs_blocks_topup.py --points fig6-20:0,fig8-100:2

Runs method ``blocks_round`` (:mod:`ddlsched.models.dmlrs_blocks_round`) through
:func:`ddlsched.registry.run_method` (the schedule re-evaluated by the family evaluator),
seed 0, twice per instance: ``top_up=false`` (a job the slot packing leaves short of its
samples is dropped, the method before the top-up) and ``top_up=true`` (the default: such a
job first takes what it lacks from free capacity, by its planned completion, else by
``T``; the least valuable is dropped while some cannot). The window search gets the suite's
budget: ``max_windows`` 2,000 at ``T = 20``, 800 at ``T = 80`` (``--windows`` overrides).
The relaxation and the packings end at their node budgets, so both runs round the same
point and the lines differ only by the top-up (unless a line says ``cut``: the time limit,
a safety net here, stopped something, and that line depends on the machine).

One line per instance and setting: jobs short after the packing, topped up, dropped; the
rounded schedule's utility (``relaxation_schedule_utility``: before the window search); the
answer's utility; the method's bound (the relaxation's dual bound) and the width
``bound / utility - 1``; seconds (wall time under the machine's load: say it when you
record them). Instances as :data:`dmlrs_eject.POINTS` (``fig6-M``, ``fig8-J``, ``fig9-M``,
``fig10``; the suite's groups).
"""

from __future__ import annotations

import argparse

from dmlrs_eject import POINTS

from ddlsched.registry import RunOptions, run_method
from ddlsched.workloads.dmlrs import generate

DEFAULT_POINTS = "fig6-20:0,fig6-20:1,fig6-20:12,fig8-80:10,fig8-100:2,fig8-100:11"


def line(name: str, seed: int, top_up: bool, windows: int | None, limit_s: float) -> str:
    """One table line: ``blocks_round`` on the instance with ``top_up`` as given."""
    instance = generate("paper", seed, **POINTS[name])
    budget = windows or (2000 if instance.slots <= 20 else 800)
    params = {"top_up": top_up, "max_windows": budget}
    result = run_method(
        "dmlrs", "blocks_round", instance, RunOptions(time_limit_s=limit_s, seed=0, params=params)
    )
    packing = result.info.get("packing", {})
    counts = [len(packing.get(key, [])) for key in ("short_jobs", "topped_up", "dropped")]
    start = result.info.get("relaxation_schedule_utility")
    utility, bound = result.objective, result.bound
    width = f"{bound / utility - 1:.2%}" if utility and bound is not None else "-"
    cut = " cut" if result.time_limit_hit else ""
    cells = [f"{name} s{seed}", str(top_up).lower(), *map(str, counts)]
    cells += [f"{start:.2f}" if start is not None else "-", f"{utility or 0:.2f}"]
    cells += [f"{bound:.2f}" if bound is not None else "-", width, f"{result.runtime_s:.0f}{cut}"]
    return "| " + " | ".join(cells) + " |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--points", default=DEFAULT_POINTS, help="NAME:SEED pairs, commas")
    parser.add_argument("--windows", type=int, default=None, help="max_windows (suite's: none)")
    parser.add_argument("--time-limit", type=float, default=900.0, help="safety net, s")
    args = parser.parse_args()
    print(
        "| instance | top_up | short | topped up | dropped | rounded | utility | bound | width | s |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for spec in args.points.split(","):
        name, seed = spec.rsplit(":", 1)
        if name not in POINTS:
            parser.error(f"unknown point {name!r}; one of {', '.join(POINTS)}")
        for top_up in (False, True):
            print(line(name, int(seed), top_up, args.windows, args.time_limit), flush=True)


if __name__ == "__main__":
    main()
