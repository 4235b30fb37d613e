"""Which side limits dmlrs's certified intervals: the bound or the schedule?

    python benchmarks/dmlrs_sides.py
    python benchmarks/dmlrs_sides.py --points fig6 --seeds 0,1,2 --exact-limit 300
    python benchmarks/dmlrs_sides.py --points fig6 --sizes 30x12,40x16,50x20 --exact-limit 0

At the paper's sizes (``benchmarks/suites/dmlrs.toml``) no method proves an optimum, so an
interval ``[improve, ub_capacity]`` of 10-15 % cannot say where the optimum lies. Here the
``paper`` preset is scaled down (``jobs`` and ``machines`` together, ``T = 20`` and every
per-job and per-machine draw unchanged) to sizes ``exact`` proves, keeping each suite
point's ratio of jobs to machines:

``fig6``  Fig. 6 at 20 machines (50 jobs: 2.5 jobs a machine), sizes 5x2 .. 25x10
``fig8``  Fig. 8 at 100 jobs (50 machines: 2 jobs a machine), sizes 6x3 .. 22x11

(``jobs x machines``; 25 x 10 x 20 slots is the 5,000 cells ``exact`` is built for). Per
instance, gaps to the proven optimum ``OPT`` in % of ``OPT`` (proven by ``exact``, or by
``improve`` reaching ``ub_capacity`` within a relative 1e-6 when ``exact`` stops first): ``ub_trivial`` and
``ub_capacity`` above it (bound side), the best start of ``improve`` (the best of
PD-ORS, OASiS, FIFO and DRF) and ``improve`` itself below it (schedule side). An
instance ``exact`` does not prove within ``--exact-limit`` is shown with its interval and
left out of the means. ``--exact-limit 0`` skips ``exact`` (sizes above the cap: the
interval ``improve`` .. ``ub_capacity`` only). With ``--lagrange N`` a column adds
``ub_lagrange`` at ``N`` subgradient iterations (:mod:`ddlsched.models.dmlrs_lagrange`).
``--exact-cells N`` (measurement only) raises ``exact``'s size cap for this process, so
that its incumbent and proven dual bound at ``--exact-limit`` can be set beside the other
methods above the cap (``exact`` then often ends at its limit: an interval, not ``OPT``).

Every method runs through :func:`ddlsched.registry.run_method` (schedules re-evaluated by
the family evaluator); ``improve`` at the suite's 120 s limit, seed 0. Output: a markdown
table per point and a summary by size (mean and largest gap of each side).
"""

from __future__ import annotations

import argparse
import statistics
import time

import ddlsched.families.dmlrs  # noqa: F401  (registers the family's methods)
from ddlsched.registry import RunOptions, run_method
from ddlsched.workloads.dmlrs import generate

#: Scaled-down points: name -> (jobs, machines) sizes at the suite point's jobs per machine.
POINTS = {
    "fig6": [(5, 2), (10, 4), (15, 6), (20, 8), (25, 10)],
    "fig8": [(6, 3), (10, 5), (16, 8), (20, 10), (22, 11)],
}
SLOTS = 20
IMPROVE_LIMIT_S = 120.0
#: An interval ``[improve, ub_capacity]`` this narrow (relative) counts as proving ``OPT``.
CLOSED_RTOL = 1e-6


def _run(method: str, instance, limit_s: float, params: dict | None = None):
    started = time.perf_counter()
    options = RunOptions(time_limit_s=limit_s, seed=0, params=params or {})
    result = run_method("dmlrs", method, instance, options)
    return result, time.perf_counter() - started


def measure(jobs: int, machines: int, seed: int, exact_limit: float, lagrange: int) -> dict:
    """One instance's row: bounds, schedules and the optimum (module docstring)."""
    instance = generate("paper", seed, jobs=jobs, machines=machines, slots=SLOTS)
    row: dict = {"jobs": jobs, "machines": machines, "seed": seed}
    row["ub_trivial"] = _run("ub_trivial", instance, 60)[0].bound
    capacity, row["ub_capacity_s"] = _run("ub_capacity", instance, 600)
    row["ub_capacity"] = capacity.bound
    if lagrange:
        params = {"iterations": lagrange}
        result, row["ub_lagrange_s"] = _run("ub_lagrange", instance, 3600, params)
        row["ub_lagrange"] = result.bound
    improve, row["improve_s"] = _run("improve", instance, IMPROVE_LIMIT_S)
    row["improve"] = improve.objective
    row["best_start"] = max(improve.info.get("start_utility", {}).values(), default=None)
    row["opt"] = row["opt_bound"] = None
    if exact_limit > 0:
        exact, row["exact_s"] = _run("exact", instance, exact_limit)
        row["exact_status"] = exact.status.value
        row["opt_bound"] = exact.bound
        if exact.status.value == "optimal":
            row["opt"] = exact.objective
        else:  # the interval exact leaves
            row["exact_incumbent"] = exact.objective
    improve_value, capacity_value = row["improve"] or 0.0, row["ub_capacity"]
    closed = capacity_value is not None and capacity_value <= improve_value * (1 + CLOSED_RTOL)
    if row["opt"] is None and improve_value > 0 and closed:  # closed by the bound
        row["opt"], row["closed"] = improve_value, True
    return row


def _gap(value, opt) -> float | None:
    if value is None or opt is None or opt <= 0:
        return None
    return 100.0 * (value - opt) / opt


def _fmt(value, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _side(row: dict, key: str) -> str:
    """A value and its gap to the row's proven optimum."""
    gap = _gap(row.get(key), row["opt"])
    return _fmt(row.get(key)) + ("" if gap is None else f" ({gap:+.2f} %)")


def table(rows: list[dict], lagrange: bool) -> list[str]:
    """The markdown lines of one point's rows."""
    head = "| jobs x machines | seed | OPT (exact s) | `ub_trivial` | `ub_capacity` |"
    head += " `ub_lagrange` |" if lagrange else ""
    head += " best start | `improve` | interval `improve`..`ub_capacity` |"
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for row in rows:
        opt = row["opt"]
        if row.get("closed"):
            opt_cell = f"{opt:.2f} (`improve` = `ub_capacity`)"
        elif opt is not None:
            opt_cell = f"{opt:.2f} ({row['exact_s']:.0f} s)"
        elif row.get("exact_status"):
            opt_cell = (
                f"[{_fmt(row.get('exact_incumbent'))}, {_fmt(row['opt_bound'])}] "
                f"({row['exact_status']})"
            )
        else:
            opt_cell = "-"

        cells = [f"{row['jobs']} x {row['machines']}", str(row["seed"]), opt_cell]
        cells += [_side(row, "ub_trivial"), _side(row, "ub_capacity")]
        if lagrange:
            cells.append(_side(row, "ub_lagrange") + f" {row.get('ub_lagrange_s', 0):.0f} s")
        cells += [_side(row, "best_start"), _side(row, "improve")]
        width = None
        if row["improve"] and row["ub_capacity"] is not None:
            width = 100.0 * (row["ub_capacity"] / row["improve"] - 1.0)
        cells.append(_fmt(width) + " %")
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def summary(rows: list[dict], keys: list[str]) -> list[str]:
    """Per size: instances proven, then mean and largest gap to OPT of each column (%)."""
    head = "| jobs x machines | proven | " + " | ".join(f"`{k}` mean / max" for k in keys) + " |"
    lines = [head, "|" + "---|" * (len(keys) + 2)]
    sizes = sorted({(r["jobs"], r["machines"]) for r in rows})
    for jobs, machines in sizes:
        mine = [r for r in rows if (r["jobs"], r["machines"]) == (jobs, machines)]
        proven = [r for r in mine if r["opt"] is not None]
        cells = [f"{jobs} x {machines}", f"{len(proven)} of {len(mine)}"]
        for key in keys:
            gaps = [abs(g) for r in proven if (g := _gap(r.get(key), r["opt"])) is not None]
            cells.append(f"{statistics.fmean(gaps):.2f} / {max(gaps):.2f}" if gaps else "-")
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", default="fig6,fig8")
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--sizes", default="", help="jobs x machines list, e.g. 30x12,40x16")
    parser.add_argument("--exact-limit", type=float, default=300.0)
    parser.add_argument("--lagrange", type=int, default=0, help="ub_lagrange iterations")
    parser.add_argument(
        "--exact-cells",
        type=int,
        default=0,
        help="measurement only: raise exact's size cap (EXACT_MAX_CELLS) to this many cells",
    )
    args = parser.parse_args(argv)
    if args.exact_cells:  # exact's dual bound and incumbent beyond its cap (module docstring)
        import ddlsched.models.dmlrs as exact_model

        exact_model.EXACT_MAX_CELLS = max(exact_model.EXACT_MAX_CELLS, args.exact_cells)
    seeds = [int(s) for s in args.seeds.split(",")]
    every: list[dict] = []
    for point in args.points.split(","):
        sizes = POINTS[point]
        if args.sizes:
            sizes = [tuple(int(v) for v in s.split("x")) for s in args.sizes.split(",")]
        print(f"\n### {point} (T = {SLOTS})\n")
        rows: list[dict] = []
        for jobs, machines in sizes:
            for seed in seeds:
                rows.append(measure(jobs, machines, seed, args.exact_limit, args.lagrange))
                lines = table(rows, bool(args.lagrange))
                shown = lines if len(rows) == 1 else lines[-1:]  # header once, then each row
                print("\n".join(shown), flush=True)
        every += rows
    keys = ["ub_trivial", "ub_capacity"] + (["ub_lagrange"] if args.lagrange else [])
    keys += ["best_start", "improve"]
    print("\n### Gap to OPT by size, % of OPT (proven instances only)\n")
    print("\n".join(summary(every, keys)))


if __name__ == "__main__":
    main()
