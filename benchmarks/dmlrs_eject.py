"""``improve`` (dmlrs) with and without its ejection move, on the widest intervals.

    python benchmarks/dmlrs_eject.py
    python benchmarks/dmlrs_eject.py --points fig6-20:1 --params eject_moves=6,eject_windows=500

On ``paper`` instances (``--points``: ``NAME:SEED`` pairs, ``NAME`` a point of
:data:`POINTS`, the same instance as ``ddlsched instance generate dmlrs --preset paper
--seed SEED --set jobs=.. --set machines=.. --set slots=..`` and as
``benchmarks/suites/dmlrs.toml``'s groups), one line per instance and configuration, side
by side in one run: ``improve`` with its defaults, then with each ``--params`` set
(``;`` between sets, ``,`` between ``name=value`` pairs of one set): utility, width
against the instance's best known bound, jobs that finish (and earn), seconds, and for the ejection
move the moves kept of tried, the repair windows run and the jobs the kept moves forced
in (``info``).

The bound is the best one ``benchmarks/results/dmlrs.md`` gives for the instance
(:data:`BEST_BOUNDS`: which method in the comment; a bound is a bound whatever schedule
it is compared to), so the width is ``bound / utility - 1`` (utility is maximised).
Every run goes through :func:`ddlsched.registry.run_method` (the schedule re-evaluated by
the family's evaluator) with the run's seed 0 and a time limit (``--time-limit``) that is
a safety net only: a line says ``cut`` when it hit it. Seconds are wall time under the
machine's load (say it when you record them).
"""

from __future__ import annotations

import argparse

from ddlsched.registry import RunOptions, run_method
from ddlsched.workloads.dmlrs import generate

#: The suite's dmlrs points: name -> the preset's (jobs, machines, slots).
POINTS = {
    "fig6-20": {"jobs": 50, "machines": 20, "slots": 20},
    "fig7-20": {"jobs": 20, "machines": 100, "slots": 20},
    "fig8-100": {"jobs": 100, "machines": 50, "slots": 20},
    "fig10": {"jobs": 100, "machines": 30, "slots": 80},
}
#: Best known upper bound per instance (benchmarks/results/dmlrs.md and the suite's rows).
BEST_BOUNDS = {
    ("fig6-20", 1): 1144.07,  # ub_capacity --param integral=true (= ub_branch's limit)
    ("fig6-20", 12): 1173.98,  # ub_capacity --param integral=true (= ub_branch's limit)
    ("fig7-20", 0): 893.90,  # ub_capacity --param integral=true
    ("fig8-100", 0): 3372.48,  # ub_lagrange
    ("fig8-100", 1): 3087.47,  # ub_capacity --param integral=true
    ("fig10", 0): 3485.55,  # ub_branch at 201 node LPs
}
DEFAULT_POINTS = "fig6-20:1,fig8-100:0,fig8-100:1,fig10:0,fig7-20:0,fig6-20:12"
DEFAULT_PARAMS = "eject_moves=6,eject_completions=2"


def parse_params(text: str) -> list[dict[str, object]]:
    """``a=1,b=x;c=2`` -> ``[{'a': 1, 'b': 'x'}, {'c': 2}]`` (integers where they parse)."""
    sets = []
    for chunk in text.split(";"):
        pairs = (item.split("=", 1) for item in chunk.split(",") if item)
        sets.append({k: int(v) if v.lstrip("-").isdigit() else v for k, v in pairs})
    return sets


def measure(point: str, seed: int, params: dict[str, object], limit_s: float) -> str:
    """One line of the table (module docstring)."""
    instance = generate("paper", seed, **POINTS[point])
    bound = BEST_BOUNDS.get((point, seed))
    options = RunOptions(time_limit_s=limit_s, seed=0, params=params)
    result = run_method("dmlrs", "improve", instance, options)
    label = ", ".join(f"{k}={v}" for k, v in params.items()) or "defaults"
    cells = [f"{point} s{seed}", label]
    if result.objective is None or result.schedule is None:
        return "| " + " | ".join([*cells, result.status, "-", "-", "-", "-"]) + " |"
    utility = float(result.objective)
    width = "-" if bound is None or utility <= 0 else f"{100 * (bound / utility - 1):.2f} %"
    info = result.info
    jobs = info.get("completed", "-")  # jobs that finish (and earn)
    cut = " cut" if result.time_limit_hit else ""
    move = "-"
    if "eject_moves_tried" in info:
        move = (
            f"{info['eject_moves_kept']}/{info['eject_moves_tried']}, "
            f"{info['eject_windows']} windows, in: {info['eject_taken_in']}"
        )
    cells += [f"{utility:.2f}", width, str(jobs), f"{result.runtime_s:.0f}{cut}", move]
    return "| " + " | ".join(cells) + " |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--points", default=DEFAULT_POINTS, help="NAME:SEED pairs, commas")
    parser.add_argument("--params", default=DEFAULT_PARAMS, help="sets of name=value, ';'")
    parser.add_argument("--no-defaults", action="store_true", help="skip improve's defaults")
    parser.add_argument("--time-limit", type=float, default=3600.0, help="safety net, s")
    args = parser.parse_args()
    configs = ([] if args.no_defaults else [{}]) + parse_params(args.params)
    print("| instance | params | utility | width | jobs | s | moves kept/tried, windows, in |")
    print("|---|---|---:|---:|---:|---:|---|")
    for item in args.points.split(","):
        name, seed = item.split(":")
        for params in configs:
            print(measure(name, int(seed), params, args.time_limit), flush=True)


if __name__ == "__main__":
    main()
