"""Table II of the A-SRPT paper: Heavy-Edge vs the exact placement ILPs.

For each configuration (``--config LABEL:KEY=VALUE,...``: preset parameters
of ``table2`` such as ``setting=paper``, ``planner=comm_aware``,
``num_stages=3``; default one configuration ``default`` with none) and
each model, ``--cases`` availability patterns (seeds ``0..cases-1`` of
``ddlsched instance generate placement --preset table2``): Heavy-Edge, the
aggregated ILP (method ``exact``) and the GPU-level ILP (method
``exact_gpu_level``, unless ``--skip-gpu-level``), run one after the other
in this process on the same instance, single-threaded, same backend.

``--growth-diagnostic`` also runs a *diagnostic variant* of Heavy-Edge
that is not the paper's algorithm and not a registered method: the same
seeding, but each step adds the unassigned vertex of largest *total* edge
weight to the server's ``node_set`` instead of the one with the single
heaviest edge to it (:func:`heavy_edge_sum_growth`). Its gap (column
``gap % sum-growth``) measures how much of Heavy-Edge's gap the literal
heaviest-single-edge growth rule causes. Column ``cut weight HE / OPT``:
the bytes of the job graph's edges between servers (Heavy-Edge's own
objective, Sec. IV-B; :func:`cut_weight`) in Heavy-Edge's placement over
the optimum's, mean over the cases, and in how many Heavy-Edge cuts fewer
bytes. ``--bottlenecks N`` lists, for the first ``N`` seeds of each row,
both placements and the terms of their bottleneck (:func:`explain`).
Combinations the preset refuses (``setting=paper`` for a BERT, more stages
than layers) are listed as not run.

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
    python benchmarks/placement_table2.py --models vgg16,gpt175b --skip-gpu-level \
        --config default --config paper:setting=paper \
        --config paper-comm:setting=paper,planner=comm_aware --growth-diagnostic
"""

from __future__ import annotations

import argparse
import csv
import itertools
import math
import os
import re
import statistics
import sys
import time
from dataclasses import dataclass, field

import numpy as np

from ddlsched.errors import InvalidInstanceError
from ddlsched.heuristics.heavy_edge import heavy_edge, job_graph
from ddlsched.models.placement import PlacementFormulation
from ddlsched.params import parse_assignments
from ddlsched.problems.placement import Placement, evaluate
from ddlsched.registry import RunOptions, run_method
from ddlsched.solvers import SolveLimits, solve_formulation
from ddlsched.workloads.placement import generate

PAPER = {  # Table II of the paper: PITT and PCT in ms (Gurobi, M1 Max)
    "vgg16": ("VGG19", 88.11, 1.94, 82.96, 55318.86),
    "gpt175b": ("GPT-175B", 10.14, 1.52, 10.14, 2288.12),
}


@dataclass
class Case:
    config: str
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
    description: str = ""
    agg_bound_s: float | None = None
    diag_alpha_s: float | None = None  # the sum-growth diagnostic variant, when run
    cut_ratio: float | None = None  # cut weight of Heavy-Edge's placement / the optimum's
    explained: str = ""  # the bottleneck rows of ``--bottlenecks``
    params: dict = field(default_factory=dict)

    @property
    def gap_pct(self) -> float | None:
        if self.agg_alpha_s is None or self.agg_status != "optimal":
            return None
        return 100.0 * (self.he_alpha_s / self.agg_alpha_s - 1.0)

    @property
    def diag_gap_pct(self) -> float | None:
        if self.diag_alpha_s is None or self.gap_pct is None:
            return None
        return 100.0 * (self.diag_alpha_s / self.agg_alpha_s - 1.0)

    @property
    def equal_optima(self) -> bool:
        return (
            self.agg_status == "optimal"
            and self.gpu_status == "optimal"
            and math.isclose(self.agg_alpha_s, self.gpu_alpha_s, rel_tol=1e-6)
        )


def time_heavy_edge(instance, repeats: int):
    """Heavy-Edge's ``alpha``, median time over ``repeats`` calls, and its placement."""
    heavy_edge(instance, 0)  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        placement = heavy_edge(instance, 0)
        times.append(time.perf_counter() - start)
    return evaluate(instance, placement).iteration_time_s, statistics.median(times), placement


def cut_weight(instance, placement: Placement) -> float | None:
    """Heavy-Edge's own objective at count level: the bytes of ``Omega``'s edges between
    servers (Sec. IV-B's "total cut weight"), every stage's replicas on a server taken
    contiguous on its ring (the least ring cut the counts allow). ``None`` for TAR."""
    if instance.allreduce != "rar":
        return None
    counts, stages, total = placement.counts, instance.stages, 0.0
    for s, st in enumerate(stages):
        k = st.replicas
        split = sum(1 for x in counts[s] if x > 0)
        if split > 1:  # ring edges cut: one per segment (a 2-ring is a single edge)
            total += (1 if k == 2 else split) * 2.0 * (k - 1) * st.param_bytes / k
        if s > 0:
            same = sum(a * b for a, b in zip(counts[s - 1], counts[s], strict=True))
            pair = 2.0 * stages[s - 1].out_bytes / k
            total += pair * (stages[s - 1].replicas * k - same)
    return total


def time_ilp(instance, formulation: str, backend: str, time_limit_s: float):
    limits = SolveLimits(time_limit_s=time_limit_s, abs_gap=1e-7, seed=0)
    start = time.perf_counter()
    solved = solve_formulation(PlacementFormulation(formulation), instance, backend, limits)
    wall = time.perf_counter() - start
    alpha = (
        None if solved.schedule is None else evaluate(instance, solved.schedule).iteration_time_s
    )
    return alpha, str(solved.status), wall, solved.solver_time_s, solved.bound, solved.schedule


def heavy_edge_sum_growth(instance) -> Placement:
    """DIAGNOSTIC, not the paper's Heavy-Edge: its rules 1-3 and seeding, but the
    growth step adds the unassigned vertex of largest *total* weight to ``node_set``.

    Deterministic (the random pick of an unconnected vertex takes the lowest
    number); used only to measure the growth rule's share of the gap.
    """
    weights, vertices = job_graph(instance)
    unassigned = np.ones(len(vertices), dtype=bool)
    server_of = np.full(len(vertices), -1, dtype=int)
    total_weight = weights.sum(axis=1)
    for m in sorted(range(instance.num_servers), key=lambda m: (-instance.available[m], m)):
        free = np.flatnonzero(unassigned)
        if free.size == 0:
            break
        capacity = instance.available[m]
        if free.size <= capacity:
            chosen = list(free)
        elif capacity == 1:
            chosen = [int(free[np.argmin(total_weight[free])])]
        else:
            sub = weights[np.ix_(free, free)]
            if sub.max() > 0:
                i, j = np.unravel_index(int(np.argmax(sub)), sub.shape)
                chosen = [int(free[i]), int(free[j])]
            else:
                done = np.flatnonzero(~unassigned)
                cross = weights[np.ix_(free, done)].max(axis=1) if done.size else free * 0.0
                chosen = [int(free[int(np.argmax(cross))])]
            while len(chosen) < capacity:
                link = weights[:, chosen].sum(axis=1)
                link[~unassigned] = -1.0
                link[chosen] = -1.0
                chosen.append(int(np.argmax(link)))
        for v in chosen:
            unassigned[v] = False
            server_of[v] = m
    servers: list[list[int]] = [[] for _ in instance.stages]
    for v, (st, _) in enumerate(vertices):
        servers[st].append(int(server_of[v]))
    return Placement.from_servers(instance, servers)


def time_method(instance, args) -> tuple[float | None, float]:
    """The registered ``exact`` method as a user runs it: aggregated ILP, then the
    optimum re-solved with the other backend (its default cross-check)."""
    options = RunOptions(time_limit_s=args.time_limit, backend=args.backend)
    start = time.perf_counter()
    result = run_method("placement", "exact", instance, options)
    return result.objective, time.perf_counter() - start


def make_instance(args, params: dict, model: str, seed: int):
    """The ``table2`` case of ``model``/``seed`` with the configuration's preset parameters."""
    extra = {"num_gpus": args.num_gpus} if args.num_gpus else {}
    return generate("table2", seed, model=model, **extra, **params)


def warm_up(args) -> None:
    """Pay the one-time costs (imports of Pyomo's HiGHS interface and OR-Tools, first
    model construction) before anything is timed."""
    inst = make_instance(args, {}, args.models[0], 0)
    for backend in ("highs", "scip"):
        limits = SolveLimits(time_limit_s=args.time_limit)
        solve_formulation(PlacementFormulation("aggregated"), inst, backend, limits)


def run(args) -> list[Case]:
    warm_up(args)
    cases = []
    for (label, params), model in itertools.product(args.configs, args.models):
        try:
            make_instance(args, params, model, args.first_seed)
        except InvalidInstanceError as exc:  # e.g. setting=paper for a BERT
            args.refused.append(f"[{label}] {model}: {exc}")
            continue
        gpu_level = not args.skip_gpu_level and (
            args.gpu_level_configs is None or label in args.gpu_level_configs
        )
        for seed in range(args.first_seed, args.first_seed + args.cases):
            inst = make_instance(args, params, model, seed)
            he_alpha, he_time, he_placement = time_heavy_edge(inst, args.he_repeats)
            *agg, agg_bound, agg_schedule = time_ilp(
                inst, "aggregated", args.backend, args.time_limit
            )
            gpu = (
                time_ilp(inst, "gpu_level", args.backend, args.time_limit)[:4]
                if gpu_level
                else (None, "skipped", math.nan, math.nan)
            )
            case = Case(
                label, model, seed, inst.available, inst.replicas, he_alpha, he_time, *agg, *gpu
            )
            case.description, case.agg_bound_s, case.params = inst.description, agg_bound, params
            if agg_schedule is not None and seed < args.first_seed + args.bottlenecks:
                case.explained = explain(label, model, seed, inst, he_placement, agg_schedule)
            if agg_schedule is not None:
                he_cut, opt_cut = cut_weight(inst, he_placement), cut_weight(inst, agg_schedule)
                if he_cut is not None and opt_cut:
                    case.cut_ratio = he_cut / opt_cut
            if args.growth_diagnostic:
                diag = heavy_edge_sum_growth(inst)
                case.diag_alpha_s = evaluate(inst, diag).iteration_time_s
            if gpu_level and not args.skip_method:
                case.method_alpha_s, case.method_time_s = time_method(inst, args)
            if (
                case.agg_status == "optimal"
                and case.gpu_status in ("optimal", "feasible")
                and not math.isclose(case.agg_alpha_s, case.gpu_alpha_s, rel_tol=1e-6)
                and (case.gpu_status == "optimal" or case.gpu_alpha_s < case.agg_alpha_s)
            ):
                # A contradiction between two "proofs": let SCIP referee (benchmarks/results/placement.md).
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
                f"[{label}] {model} seed {seed} avail {inst.available}: HE {he_alpha * 1e3:.2f} ms "
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


def _cuts(description: str) -> str:
    """The stage layer ranges named in an instance description."""
    found = re.search(r"layers (\[\[.*?\]\])", description)
    return found.group(1) if found else "-"


def _mean_max(values: list[float], digits: int = 2) -> str:
    return (
        f"{_fmt(statistics.fmean(values), digits)} / {_fmt(max(values), digits)}" if values else "-"
    )


def _median_max_ms(values: list[float]) -> str:
    values = [v for v in values if not math.isnan(v)]
    if not values:
        return "-"
    return f"{_fmt(statistics.median(values) * 1e3, 1)} / {_fmt(max(values) * 1e3, 1)}"


def explain(label, model, seed, instance, he_placement, opt_placement) -> str:
    """Markdown rows: each placement's counts and its bottleneck term (Eqs. 4-7)."""
    rows = []
    for name, placement in (("Heavy-Edge", he_placement), ("optimum", opt_placement)):
        ev = evaluate(instance, placement)
        s, m = ev.bottleneck
        comp, comm, ar = ev.stage_server_time_s[(s, m)]
        counts = " ".join(str(list(row)) for row in placement.counts)
        rows.append(
            f"| {label} | {model} | {seed} | {list(instance.available)} | {name} | {counts} | "
            f"{ev.iteration_time_s * 1e3:,.1f} | stage {s} on server {m} | "
            f"{comp * 1e3:,.1f} / {comm * 1e3:,.1f} / {ar * 1e3:,.1f} |"
        )
    return "\n".join(rows)


def _cut_cell(ratios: list[float]) -> str:
    if not ratios:
        return "-"
    less = sum(r < 1 - 1e-9 for r in ratios)
    return f"{statistics.fmean(ratios):.2f} ({less}/{len(ratios)})"


def summary_markdown(cases: list[Case], args) -> str:
    """One row per (configuration, model): PITT, gap, PCT, proofs (module docstring)."""
    gpu = not args.skip_gpu_level
    head = [
        "config",
        "model",
        "stages x replicas",
        "stage layers [first, last+1)",
        "PITT HE (ms)",
        "PITT exact (ms)",
        "gap % mean / max",
        "HE = OPT (0.1 %)",
        "cut weight HE / OPT mean (HE cuts less: n)",
    ]
    head += ["gap % sum-growth (diagnostic) mean / max"] if args.growth_diagnostic else []
    head += ["PCT HE (ms) mean / max", "PCT aggregated ILP (ms) median / max"]
    head += ["PCT GPU-level ILP (ms) median / max", "equal optima"] if gpu else []
    head += ["method `exact` incl. cross-check (ms) median / max"] if not args.skip_method else []
    head += ["proved optimal (agg" + (" / GPU)" if gpu else ")")]
    lines = [
        f"Machine: {os.cpu_count()} CPUs (`nproc`), backend {args.backend}, single-threaded, "
        f"time limit {args.time_limit:g} s per ILP, {args.cases} availability patterns per "
        f"model (seeds {args.first_seed}..{args.first_seed + args.cases - 1}), "
        f"GPUs per job: {args.num_gpus or 'model default'}. Configurations: "
        + "; ".join(
            f"`{label}` = `{', '.join(f'{k}={v}' for k, v in params.items()) or 'defaults'}`"
            for label, params in args.configs
        )
        + ".",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
    ]
    for (label, _), model in itertools.product(args.configs, args.models):
        rows = [c for c in cases if c.model == model and c.config == label]
        if not rows:
            continue
        opt = [c for c in rows if c.gap_pct is not None]
        shapes = sorted({str(list(c.replicas)) for c in rows})
        cells = [
            label,
            model,
            f"{len(rows[0].replicas)} x {', '.join(shapes)}",
            _cuts(rows[0].description),
            _fmt(statistics.fmean(c.he_alpha_s for c in rows) * 1e3),
            _fmt(statistics.fmean(c.agg_alpha_s for c in opt) * 1e3) if opt else "-",
            _mean_max([c.gap_pct for c in opt]),
            f"{sum(c.gap_pct <= 0.1 for c in opt)}/{len(opt)}",
            _cut_cell([c.cut_ratio for c in opt if c.cut_ratio is not None]),
        ]
        if args.growth_diagnostic:
            cells.append(_mean_max([c.diag_gap_pct for c in opt]))
        cells += [
            _mean_max([c.he_time_s * 1e3 for c in rows], 3),
            _median_max_ms([c.agg_time_s for c in rows]),
        ]
        timed = any(c.gpu_status != "skipped" for c in rows)
        if gpu:
            cells += [
                _median_max_ms([c.gpu_time_s for c in rows]),
                f"{sum(c.equal_optima for c in rows)}/{len(rows)}" if timed else "-",
            ]
        if not args.skip_method:
            cells.append(_median_max_ms([c.method_time_s for c in rows]))
        proved = f"{sum(c.agg_status == 'optimal' for c in rows)}/{len(rows)}"
        if gpu:
            proved += (
                f" / {sum(c.gpu_status == 'optimal' for c in rows)}/{len(rows)}"
                if timed
                else " / -"
            )
        cells.append(proved)
        lines.append("| " + " | ".join(cells) + " |")
    explained = [c.explained for c in cases if c.explained]
    if explained:
        lines += [
            "",
            "Bottlenecks (``--bottlenecks``): replicas per server for each stage (one "
            "list per stage, servers in instance order), alpha, the bottleneck "
            "(stage, server) and its terms of Eq. (7):",
            "",
            "| config | model | seed | free GPUs | placement | replicas per server, by stage "
            "| alpha (ms) | bottleneck | comp / comm / AllReduce (ms) |",
            "|---|---|---|---|---|---|---|---|---|",
            *explained,
        ]
    if args.refused:
        lines += ["", "Not run (the preset refuses the combination):", ""]
        lines += [f"* {text}" for text in args.refused]
    unproven = [c for c in cases if c.agg_status != "optimal"]
    if unproven:
        lines += ["", "Unproven aggregated-ILP cases (incumbent / bound, ms):", ""]
        lines += [
            f"* [{c.config}] {c.model} seed {c.seed}: {c.agg_status}, {_ms(c.agg_alpha_s)} / "
            f"{_ms(c.agg_bound_s)}; Heavy-Edge {_ms(c.he_alpha_s)}"
            for c in unproven
        ]
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
        "config",
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
        "agg_bound_s",
        "diag_alpha_s",
        "cut_ratio",
        "description",
    ]
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(fields)
        for c in cases:
            writer.writerow(
                [
                    c.config,
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
                    c.agg_bound_s,
                    c.diag_alpha_s,
                    c.cut_ratio,
                    c.description,
                ]
            )


def parse_config(text: str) -> tuple[str, dict]:
    """``LABEL[:KEY=VALUE,...]`` as ``(label, preset parameters)``."""
    label, _, rest = text.partition(":")
    pairs = [p.strip() for p in rest.split(",") if p.strip()]
    return label.strip(), parse_assignments(pairs, f"--config {text}")


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
    parser.add_argument(
        "--config",
        action="append",
        metavar="LABEL[:KEY=VALUE,...]",
        help="a configuration: table2 preset parameters (repeatable; default: `default`)",
    )
    parser.add_argument(
        "--gpu-level-configs",
        help="comma-separated config labels to run the GPU-level ILP (and `exact`) on "
        "(default: all, unless --skip-gpu-level)",
    )
    parser.add_argument(
        "--growth-diagnostic",
        action="store_true",
        help="also run the sum-growth diagnostic variant of Heavy-Edge (not a method)",
    )
    parser.add_argument(
        "--bottlenecks",
        type=int,
        default=0,
        metavar="N",
        help="list both placements and their bottleneck terms for the first N seeds",
    )
    parser.add_argument("--markdown", help="write the summary table here")
    parser.add_argument("--csv", help="write one row per case here")
    args = parser.parse_args(argv)
    args.models = [m.strip() for m in args.models.split(",") if m.strip()]
    args.configs = [parse_config(text) for text in args.config or ["default"]]
    args.gpu_level_configs = (
        None if args.gpu_level_configs is None else set(args.gpu_level_configs.split(","))
    )
    args.refused = []
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
