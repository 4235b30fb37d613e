"""Table II of the A-SRPT paper: Heavy-Edge vs the exact placement ILPs.

For each model, ``--cases`` availability patterns (seeds ``0..cases-1`` of
``ddlsched instance generate placement --preset table2``): Heavy-Edge, the
aggregated ILP (method ``exact``) and the GPU-level ILP (method
``exact_gpu_level``), run one after the other in this process on the same
instance, single-threaded, same backend.

Columns:

* PITT (per-iteration training time, ms): ``alpha`` of Eq. (7) as recomputed
  by the evaluator, mean over the cases; gap % = mean over cases of
  ``100 (alpha_HE / alpha_OPT - 1)`` (and its max).
* PCT (placement computation time, ms): Heavy-Edge's time is the median of
  ``--he-repeats`` calls (the graph built each time); an ILP's time is the
  wall time of building the Pyomo model, solving it and decoding it.
  Means and medians over the cases; the speed-up is the median over cases
  of ``PCT_GPU-level / PCT_aggregated``, the solver-only speed-up the same
  ratio of the times spent inside the solver call (Pyomo's hand-over of
  the model to HiGHS included, model building excluded).
* One-time costs (imports, first model) are paid by a warm-up solve before
  anything is timed.
* Method ``exact``: wall time of the registered method as a user runs it
  (``ddlsched solve placement F --method exact``): the aggregated ILP, then
  the proven optimum re-solved with the other backend (its default
  cross-check). ``--skip-method`` leaves it out.
* The exact PITT is the aggregated ILP's; the GPU-level ILP must reach the
  same optimum (``equal optima`` counts the cases where both proved
  optimality and agree within 1e-6 relative). When two "proofs" contradict
  each other (or the GPU-level incumbent beats a proven aggregated
  optimum), the aggregated ILP is re-solved with SCIP as a referee
  (column ``referee_alpha_s`` of the CSV, and a line on stderr).

Usage (from the repository root, venv active)::

    python benchmarks/placement_table2.py --cases 20 --markdown out.md --csv out.csv
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import statistics
import sys
import time
from dataclasses import dataclass

from ddlsched.heuristics.heavy_edge import heavy_edge
from ddlsched.models.placement import PlacementFormulation
from ddlsched.problems.placement import evaluate
from ddlsched.registry import RunOptions, run_method
from ddlsched.solvers import SolveLimits, solve_formulation
from ddlsched.workloads.placement import TABLE2_MODELS, table2

PAPER = {  # Table II of the paper: PITT and PCT in ms (Gurobi, M1 Max)
    "vgg16": ("VGG19", 88.11, 1.94, 82.96, 55318.86),
    "gpt175b": ("GPT-175B", 10.14, 1.52, 10.14, 2288.12),
}


@dataclass
class Case:
    model: str
    seed: int
    available: tuple[int, ...]
    replicas: tuple[int, ...]
    he_alpha_s: float
    he_time_s: float
    agg_alpha_s: float | None
    agg_status: str
    agg_time_s: float
    agg_solver_s: float
    gpu_alpha_s: float | None
    gpu_status: str
    gpu_time_s: float
    gpu_solver_s: float
    referee_alpha_s: float | None = None  # SCIP on the aggregated ILP, when the two disagree
    method_time_s: float = math.nan  # registered ``exact`` (cross-checked with SCIP), wall
    method_alpha_s: float | None = None

    @property
    def gap_pct(self) -> float | None:
        if self.agg_alpha_s is None or self.agg_status != "optimal":
            return None
        return 100.0 * (self.he_alpha_s / self.agg_alpha_s - 1.0)

    @property
    def equal_optima(self) -> bool:
        return (
            self.agg_status == "optimal"
            and self.gpu_status == "optimal"
            and math.isclose(self.agg_alpha_s, self.gpu_alpha_s, rel_tol=1e-6)
        )


def time_heavy_edge(instance, repeats: int) -> tuple[float, float]:
    heavy_edge(instance, 0)  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        placement = heavy_edge(instance, 0)
        times.append(time.perf_counter() - start)
    return evaluate(instance, placement).iteration_time_s, statistics.median(times)


def time_ilp(instance, formulation: str, backend: str, time_limit_s: float):
    limits = SolveLimits(time_limit_s=time_limit_s, abs_gap=1e-7, seed=0)
    start = time.perf_counter()
    solved = solve_formulation(PlacementFormulation(formulation), instance, backend, limits)
    wall = time.perf_counter() - start
    alpha = (
        None if solved.schedule is None else evaluate(instance, solved.schedule).iteration_time_s
    )
    return alpha, str(solved.status), wall, solved.solver_time_s


def time_method(instance, args) -> tuple[float | None, float]:
    """The registered ``exact`` method as a user runs it: aggregated ILP, then the
    optimum re-solved with the other backend (its default cross-check)."""
    options = RunOptions(time_limit_s=args.time_limit, backend=args.backend)
    start = time.perf_counter()
    result = run_method("placement", "exact", instance, options)
    return result.objective, time.perf_counter() - start


def warm_up(args) -> None:
    """Pay the one-time costs (imports of Pyomo's HiGHS interface and OR-Tools, first
    model construction) before anything is timed."""
    inst = table2(0, model=args.models[0], num_gpus=args.num_gpus)
    for backend in ("highs", "scip"):
        limits = SolveLimits(time_limit_s=args.time_limit)
        solve_formulation(PlacementFormulation("aggregated"), inst, backend, limits)


def run(args) -> list[Case]:
    warm_up(args)
    cases = []
    for model in args.models:
        for seed in range(args.first_seed, args.first_seed + args.cases):
            inst = table2(seed, model=model, num_gpus=args.num_gpus)
            he_alpha, he_time = time_heavy_edge(inst, args.he_repeats)
            agg = time_ilp(inst, "aggregated", args.backend, args.time_limit)
            gpu = (
                time_ilp(inst, "gpu_level", args.backend, args.time_limit)
                if not args.skip_gpu_level
                else (None, "skipped", math.nan, math.nan)
            )
            case = Case(model, seed, inst.available, inst.replicas, he_alpha, he_time, *agg, *gpu)
            if not args.skip_method:
                case.method_alpha_s, case.method_time_s = time_method(inst, args)
            if (
                case.agg_status == "optimal"
                and case.gpu_status in ("optimal", "feasible")
                and not math.isclose(case.agg_alpha_s, case.gpu_alpha_s, rel_tol=1e-6)
                and (case.gpu_status == "optimal" or case.gpu_alpha_s < case.agg_alpha_s)
            ):
                # A contradiction between two "proofs": let SCIP referee (see RESULTS).
                case.referee_alpha_s = time_ilp(inst, "aggregated", "scip", args.time_limit)[0]
            if case.agg_alpha_s is not None and case.agg_status == "optimal":
                assert he_alpha >= case.agg_alpha_s * (1 - 1e-9), "Heavy-Edge beat the optimum"
            cases.append(case)
            if case.referee_alpha_s is not None:
                print(
                    f"CONTRADICTION {model} seed {seed}: aggregated {case.agg_alpha_s!r} "
                    f"vs GPU-level {case.gpu_alpha_s!r}; SCIP referee {case.referee_alpha_s!r}",
                    file=sys.stderr,
                )
            print(
                f"{model} seed {seed} avail {inst.available}: HE {he_alpha * 1e3:.2f} ms "
                f"({he_time * 1e3:.3f} ms) | agg {_ms(case.agg_alpha_s)} {case.agg_status} "
                f"({case.agg_time_s:.3f} s) | gpu {_ms(case.gpu_alpha_s)} {case.gpu_status} "
                f"({case.gpu_time_s:.2f} s)",
                file=sys.stderr,
                flush=True,
            )
    return cases


def _ms(x: float | None) -> str:
    return "-" if x is None else f"{x * 1e3:.2f}"


def _fmt(x: float, digits: int = 2) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:,.{digits}f}"


def summary_markdown(cases: list[Case], args) -> str:
    lines = [
        f"Machine: {os.cpu_count()} CPUs (`nproc`), backend {args.backend}, single-threaded, "
        f"time limit {args.time_limit:g} s per ILP, {args.cases} availability patterns per model "
        f"(seeds {args.first_seed}..{args.first_seed + args.cases - 1}), "
        f"GPUs per job: {args.num_gpus or 'model default'}.",
        "",
        "| model | stands for | stages x replicas | PITT HE (ms) | PITT exact (ms) | gap % mean | "
        "gap % max | PCT HE (ms) mean / max | PCT aggregated ILP (ms) median / max | "
        "PCT GPU-level ILP (ms) median / max | speed-up agg vs GPU-level (median) | "
        "solver-only speed-up (median) | method `exact` incl. cross-check (ms) median / max | "
        "equal optima | proved optimal (agg / GPU) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for model in args.models:
        rows = [c for c in cases if c.model == model]
        opt = [c for c in rows if c.gap_pct is not None]
        gaps = [c.gap_pct for c in opt]
        ratios = [
            c.gpu_time_s / c.agg_time_s
            for c in rows
            if c.gpu_status in ("optimal", "feasible") and c.agg_time_s > 0
        ]
        solver_ratios = [
            c.gpu_solver_s / c.agg_solver_s
            for c in rows
            if c.gpu_status in ("optimal", "feasible") and c.agg_solver_s > 0
        ]
        method = [c.method_time_s for c in rows if not math.isnan(c.method_time_s)]
        lines.append(
            "| {model} | {stands} | {shape} | {he} | {ex} | {gmean} | {gmax} | {pcth} | "
            "{pcta} | {pctg} | {ratio} | {sratio} | {meth} | {eq}/{n} | {pa}/{n} / {pg}/{n} |".format(
                model=model,
                stands=TABLE2_MODELS[model].stands_for,
                shape=f"{len(rows[0].replicas)} x {list(rows[0].replicas)}",
                he=_fmt(statistics.fmean(c.he_alpha_s for c in rows) * 1e3),
                ex=_fmt(statistics.fmean(c.agg_alpha_s for c in opt) * 1e3) if opt else "-",
                gmean=_fmt(statistics.fmean(gaps)) if gaps else "-",
                gmax=_fmt(max(gaps)) if gaps else "-",
                pcth=f"{_fmt(statistics.fmean(c.he_time_s for c in rows) * 1e3, 3)} / "
                f"{_fmt(max(c.he_time_s for c in rows) * 1e3, 3)}",
                pcta=f"{_fmt(statistics.median(c.agg_time_s for c in rows) * 1e3, 1)} / "
                f"{_fmt(max(c.agg_time_s for c in rows) * 1e3, 1)}",
                pctg=(
                    f"{_fmt(statistics.median(c.gpu_time_s for c in rows) * 1e3, 1)} / "
                    f"{_fmt(max(c.gpu_time_s for c in rows) * 1e3, 1)}"
                    if not args.skip_gpu_level
                    else "-"
                ),
                ratio=_fmt(statistics.median(ratios), 1) + "x" if ratios else "-",
                sratio=_fmt(statistics.median(solver_ratios), 1) + "x" if solver_ratios else "-",
                meth=(
                    f"{_fmt(statistics.median(method) * 1e3, 1)} / {_fmt(max(method) * 1e3, 1)}"
                    if method
                    else "-"
                ),
                eq=sum(c.equal_optima for c in rows),
                n=len(rows),
                pa=sum(c.agg_status == "optimal" for c in rows),
                pg=sum(c.gpu_status == "optimal" for c in rows),
            )
        )
    lines += [
        "",
        "Paper (Table II, mean of 20 cases, Gurobi on an M1 Max):",
        "",
        "| model | PITT Heavy-Edge (ms) | PITT ILP (ms) | gap % | PCT Heavy-Edge (ms) | PCT ILP (ms) |",
        "|---|---|---|---|---|---|",
    ]
    for name, he, pct_he, ilp, pct_ilp in PAPER.values():
        lines.append(
            f"| {name} | {he} | {ilp} | {100 * (he / ilp - 1):.1f} | {pct_he} | {pct_ilp:,} |"
        )
    return "\n".join(lines) + "\n"


def write_csv(cases: list[Case], path: str) -> None:
    fields = [
        "model",
        "seed",
        "available",
        "replicas",
        "he_alpha_s",
        "he_time_s",
        "agg_alpha_s",
        "agg_status",
        "agg_time_s",
        "agg_solver_s",
        "gpu_alpha_s",
        "gpu_status",
        "gpu_time_s",
        "gpu_solver_s",
        "gap_pct",
        "equal_optima",
        "referee_alpha_s",
        "method_alpha_s",
        "method_time_s",
    ]
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(fields)
        for c in cases:
            writer.writerow(
                [
                    c.model,
                    c.seed,
                    " ".join(map(str, c.available)),
                    " ".join(map(str, c.replicas)),
                    c.he_alpha_s,
                    c.he_time_s,
                    c.agg_alpha_s,
                    c.agg_status,
                    c.agg_time_s,
                    c.agg_solver_s,
                    c.gpu_alpha_s,
                    c.gpu_status,
                    c.gpu_time_s,
                    c.gpu_solver_s,
                    c.gap_pct,
                    c.equal_optima,
                    c.referee_alpha_s,
                    c.method_alpha_s,
                    c.method_time_s,
                ]
            )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="vgg16,bert24,gpt175b")
    parser.add_argument("--cases", type=int, default=20)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--num-gpus", type=int, default=None, help="default: the model's")
    parser.add_argument("--time-limit", type=float, default=300.0, help="seconds per ILP")
    parser.add_argument("--backend", default="highs")
    parser.add_argument("--he-repeats", type=int, default=50)
    parser.add_argument("--skip-gpu-level", action="store_true")
    parser.add_argument(
        "--skip-method", action="store_true", help="do not time the registered `exact` method"
    )
    parser.add_argument("--markdown", help="write the summary table here")
    parser.add_argument("--csv", help="write one row per case here")
    args = parser.parse_args(argv)
    args.models = [m.strip() for m in args.models.split(",") if m.strip()]
    cases = run(args)
    text = summary_markdown(cases, args)
    print(text)
    if args.markdown:
        with open(args.markdown, "w", encoding="utf-8") as handle:
            handle.write(text)
    if args.csv:
        write_csv(cases, args.csv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
