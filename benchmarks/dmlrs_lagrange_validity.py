"""``ub_lagrange`` (dmlrs) against proven optima: is it a bound, and how much does it add?

    python benchmarks/dmlrs_lagrange_validity.py
    python benchmarks/dmlrs_lagrange_validity.py --tiny 60 --congested 40 --micro 10 --iterations 10

Sets (seeds from 0): ``tiny`` as generated; ``tiny`` congested (every job arriving in slot
1, capacities halved: the capacity rows bind); ``micro`` as generated and congested, whose
optimum is also brute-forced (``tests/dmlrs_brute_force.py``, independent of the MILP) and
must equal ``exact``'s. Per instance: ``exact``'s proven optimum (the compact MILP, every
strengthening off: the plain model of record), ``ub_capacity`` and ``ub_lagrange`` at
``--iterations`` (both through :func:`ddlsched.registry.run_method`). Printed per set: the
instances, how many were proven, bound violations (``bound < OPT - 1e-6``: must be 0),
instances where ``ub_lagrange`` is below ``ub_capacity`` (by more than 1e-6), and the mean
and largest gap of each bound to ``OPT`` in % of ``OPT`` (instances with ``OPT > 0``).

``--versus-colgen SEEDS`` (e.g. ``0,4,5,9,10``) instead prints, per congested ``tiny``
seed, ``ub_capacity``, ``ub_lagrange`` at 10 and 40 iterations and ``colgen``'s converged
bound (the LP relaxation of R-DMLRS, the Lagrangian dual's optimum): how close the
subgradient steps get to the limit of the method.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
from pathlib import Path

import ddlsched.families.dmlrs  # noqa: F401  (registers the family's methods)
from ddlsched.models.dmlrs import ExactFormulation
from ddlsched.problems.dmlrs import DmlrsInstance
from ddlsched.registry import RunOptions, run_method
from ddlsched.solvers import Status
from ddlsched.solvers.formulation import solve_formulation
from ddlsched.workloads.dmlrs import generate

TOL = 1e-6


def congested(instance: DmlrsInstance) -> DmlrsInstance:
    """Every job arriving in slot 1, capacities halved."""
    return dataclasses.replace(
        instance,
        jobs=tuple(dataclasses.replace(j, arrival_slot=1) for j in instance.jobs),
        capacity=tuple(tuple(c * 0.5 for c in cap) for cap in instance.capacity),
    )


def validity_sets(
    tiny: int, congested_tiny: int, micro: int
) -> dict[str, tuple[list[DmlrsInstance], bool]]:
    """The instance sets of the validity tables: name -> (instances, brute-forced too):
    ``tiny`` seeds as generated and ``congested_tiny`` seeds congested, ``micro`` seeds
    both ways (brute-forced)."""
    return {
        "tiny": ([generate("tiny", s) for s in range(tiny)], False),
        "tiny congested": ([congested(generate("tiny", s)) for s in range(congested_tiny)], False),
        "micro (brute force)": ([generate("micro", s) for s in range(micro)], True),
        "micro congested (brute force)": (
            [congested(generate("micro", s)) for s in range(micro)],
            True,
        ),
    }


def proven_optimum(instance: DmlrsInstance, brute: bool) -> dict:
    """``exact``'s optimum (``opt``), whether it is proven (``proven``: and, with
    ``brute``, equal to the brute force's ``brute``)."""
    exact = solve_formulation(ExactFormulation(), instance, "highs")
    row = {"proven": exact.status is Status.OPTIMAL, "opt": exact.claim.value}
    if brute:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
        from dmlrs_brute_force import brute_force_optimum

        row["brute"] = brute_force_optimum(instance)
        row["proven"] = row["proven"] and abs(row["brute"] - row["opt"]) <= TOL
    return row


def check(instance: DmlrsInstance, iterations: int, brute: bool) -> dict:
    """One instance: the optimum and both bounds (module docstring)."""
    row = proven_optimum(instance, brute)
    options = RunOptions(time_limit_s=600, params={})
    row["ub_capacity"] = run_method("dmlrs", "ub_capacity", instance, options).bound
    options = RunOptions(time_limit_s=600, params={"iterations": iterations})
    lagrange = run_method("dmlrs", "ub_lagrange", instance, options)
    row["ub_lagrange"] = lagrange.bound
    row["cut"] = lagrange.time_limit_hit
    return row


def report(name: str, rows: list[dict]) -> str:
    """One line of the summary table."""
    proven = [r for r in rows if r["proven"]]
    wrong = sum(
        r[key] < r["opt"] - TOL * max(1.0, r["opt"])
        for r in proven
        for key in ("ub_capacity", "ub_lagrange")
    )
    below = sum(r["ub_lagrange"] < r["ub_capacity"] - TOL for r in rows)
    cells = [name, str(len(rows)), str(len(proven)), str(wrong), str(below)]
    for key in ("ub_capacity", "ub_lagrange"):
        gaps = [100.0 * (r[key] / r["opt"] - 1.0) for r in proven if r["opt"] > 0]
        cells.append(f"{statistics.fmean(gaps):.2f} / {max(gaps):.2f}" if gaps else "-")
    cells.append(str(sum(r["cut"] for r in rows)))
    return "| " + " | ".join(cells) + " |"


def versus_colgen(seeds: list[int]) -> None:
    """``ub_capacity``, ``ub_lagrange`` at 10 and 40 steps and ``colgen`` (module docstring)."""
    from ddlsched.models.dmlrs_colgen import colgen
    from ddlsched.models.dmlrs_lagrange import lagrange_bound

    print("| congested tiny seed | `ub_capacity` | 10 steps | 40 steps | R-DMLRS LP (`colgen`) |")
    print("|---|---|---|---|---|")
    for seed in seeds:
        instance = congested(generate("tiny", seed))
        short, info = lagrange_bound(instance, iterations=10)
        long, _ = lagrange_bound(instance, iterations=40)
        result = colgen(instance, pricing="milp")
        lp = f"{result.bound:.2f}" + (
            "" if result.stopped == "converged" else f" ({result.stopped})"
        )
        cells = [str(seed), f"{info['ub_capacity']:.2f}", f"{short:.2f}", f"{long:.2f}", lp]
        print("| " + " | ".join(cells) + " |", flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", type=int, default=60)
    parser.add_argument("--congested", type=int, default=40)
    parser.add_argument("--micro", type=int, default=10)
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--versus-colgen", default="", help="congested tiny seeds, e.g. 0,4,5")
    args = parser.parse_args(argv)
    if args.versus_colgen:
        versus_colgen([int(s) for s in args.versus_colgen.split(",")])
        return
    print_validity(
        validity_sets(args.tiny, args.congested, args.micro),
        "| set | instances | proven | violations | `ub_lagrange` < `ub_capacity` | "
        "`ub_capacity` gap mean / max % | `ub_lagrange` gap mean / max % | cut by limit |",
        lambda instance, brute: check(instance, args.iterations, brute),
        report,
    )


def print_validity(sets: dict, header: str, check_one, report_rows) -> None:
    """Print a validity table: ``header``, one line per set of ``sets`` (``report_rows``
    of ``check_one(instance, brute)`` over its instances) and one for all of them."""
    print(header)
    print("|---" * header.count(" | ") + "|---|")
    every: list[dict] = []
    for name, (instances, brute) in sets.items():
        rows = [check_one(instance, brute) for instance in instances]
        every += rows
        print(report_rows(name, rows), flush=True)
    print(report_rows("all", every))


if __name__ == "__main__":
    main()
