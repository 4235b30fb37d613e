"""Placement at cluster scale: the aggregated ILP vs two GPU-level ILPs, 16-256 GPUs.

Cases: ``ddlsched instance generate placement --preset table2 --seed SEED
--set model=MODEL --set num_gpus=N`` for every size ``N`` of ``--sizes``,
model of ``--models`` and seed of ``--seeds``. Per case, in this process,
one after the other, single-threaded, HiGHS, no cross-check:

* ``heavy_edge``: Heavy-Edge (seed 0), its alpha and mapping time;
* ``exact`` (aggregated ILP, patterns on), ``exact_plain`` (the same
  without the pattern bound and start: the model before issue 14),
  ``exact_gpu_level`` (our
  stand-in: replica x GPU binaries plus the one-hot count encoding) and
  ``exact_gpu_level_paper`` (the paper's baseline as we read [47]: replica
  x GPU binaries only): wall time of building + solving + decoding
  (:func:`~ddlsched.solvers.formulation.solve_formulation`), status, alpha,
  bound. GPU-level runs get ``--gpu-limit`` seconds and are skipped above
  ``--gpu-max-size`` GPUs (they stop finishing well before; the table says
  "not run");
* ``cli``: ``ddlsched solve placement FILE --method exact --json`` in a
  subprocess, as a user runs it: start-up, model building, HiGHS and the
  default SCIP cross-check included (wall time of the process, the method's
  ``runtime_s`` and the cross-check's verdict).

Every result is appended to ``--csv`` as soon as it exists (a run that is
stopped keeps what it finished; a re-run skips the rows already there), and
``--markdown`` summarises the CSV: per size, the share each ILP proves,
median and worst time, the median speed-up of the aggregated ILP over each
GPU-level ILP (over the cases both prove; ">=" with the GPU-level limit
when it proves none), and Heavy-Edge's mean and worst gap to the optimum.

Usage (repository root, venv active, ``DDLSCHED_DATA`` set)::

    python benchmarks/placement_scaling.py --csv scaling.csv --markdown scaling.md
    python benchmarks/placement_scaling.py --csv scaling.csv --markdown scaling.md --summary-only
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ddlsched.heuristics.heavy_edge import heavy_edge
from ddlsched.models.placement import PlacementFormulation
from ddlsched.problems.placement import evaluate
from ddlsched.solvers import SolveLimits, solve_formulation
from ddlsched.workloads.placement import table2

FIELDS = ("size", "model", "seed", "method", "status", "alpha_s", "bound_s", "time_s", "note")
ILPS = {  # method -> formulation
    "exact": PlacementFormulation("aggregated"),
    "exact_plain": PlacementFormulation("aggregated", patterns=False),  # before issue 14
    "exact_gpu_level": PlacementFormulation("gpu_level"),
    "exact_gpu_level_paper": PlacementFormulation("gpu_level_paper"),
}


def _done(path: Path) -> set[tuple[str, str, str, str]]:
    if not path.exists():
        return set()
    with path.open() as fh:
        return {(r["size"], r["model"], r["seed"], r["method"]) for r in csv.DictReader(fh)}


def _append(path: Path, row: dict) -> None:
    new = not path.exists()
    with path.open("a", newline="") as fh:
        writer = csv.DictWriter(fh, FIELDS)
        if new:
            writer.writeheader()
        writer.writerow(row)
    print(" ".join(f"{k}={row[k]}" for k in FIELDS), flush=True)


def run_ilp(instance, formulation: PlacementFormulation, limit_s: float) -> dict:
    limits = SolveLimits(time_limit_s=limit_s, abs_gap=1e-7, seed=0)
    start = time.perf_counter()
    out = solve_formulation(formulation, instance, "highs", limits)
    wall = time.perf_counter() - start
    alpha = None if out.schedule is None else evaluate(instance, out.schedule).iteration_time_s
    return {"status": str(out.status), "alpha_s": alpha, "bound_s": out.bound, "time_s": wall}


def run_cli(size: int, model: str, seed: int, limit_s: float) -> dict:
    exe = [sys.executable, "-c", "from ddlsched.cli import main; raise SystemExit(main())"]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "case.json"
        subprocess.run(
            [
                *exe,
                "instance",
                "generate",
                "placement",
                "--preset",
                "table2",
                "--seed",
                str(seed),
                "--set",
                f"model={model}",
                "--set",
                f"num_gpus={size}",
                "-o",
                str(path),
            ],
            check=True,
            capture_output=True,
        )
        start = time.perf_counter()
        proc = subprocess.run(
            [
                *exe,
                "solve",
                "placement",
                str(path),
                "--method",
                "exact",
                "--json",
                "--time-limit",
                str(limit_s),
            ],
            capture_output=True,
            text=True,
        )
        wall = time.perf_counter() - start
    if proc.returncode != 0:
        return {"status": "error", "time_s": wall, "note": proc.stderr.strip()[-200:]}
    result = json.loads(proc.stdout)
    check = result.get("info", {}).get("cross_check", {})
    return {
        "status": result["status"],
        "alpha_s": result["objective"],
        "bound_s": result["bound"],
        "time_s": wall,
        "note": (
            f"runtime_s={result['runtime_s']:.3f} solver_time_s={result['solver_time_s']:.3f}"
            f" build_s={result['info'].get('build_s', 0.0):.3f}"
            f" cross_check_agree={check.get('agree')}"
        ),
    }


def run(args) -> None:
    path = Path(args.csv)
    done = _done(path)
    table2(0, model="gpt175b", num_gpus=16)  # warm-up: imports, profile cache
    run_ilp(table2(0, model="vgg16", num_gpus=16), ILPS["exact"], 60)
    phases = [
        ("heavy_edge", "exact", "exact_plain", "cli"),
        ("exact_gpu_level", "exact_gpu_level_paper"),
    ]
    for phase in phases:  # the fast methods on every size first, then the GPU-level ILPs
        for size in args.sizes:
            for model in args.models:
                for seed in args.seeds:
                    for method in phase:
                        key = (str(size), model, str(seed), method)
                        if key in done:
                            continue
                        if method.startswith("exact_gpu") and size > args.gpu_max_size:
                            continue
                        if method == "exact_plain" and size > args.plain_max_size:
                            continue
                        instance = table2(seed, model=model, num_gpus=size)
                        row = {"size": size, "model": model, "seed": seed, "method": method}
                        row.update(note="", bound_s="", alpha_s="")
                        if method == "heavy_edge":
                            start = time.perf_counter()
                            placement = heavy_edge(instance, 0)
                            row.update(status="heuristic", time_s=time.perf_counter() - start)
                            row["alpha_s"] = evaluate(instance, placement).iteration_time_s
                        elif method == "cli":
                            row.update(run_cli(size, model, seed, args.limit))
                        else:
                            gpu = method.startswith("exact_gpu")
                            limit = args.gpu_limit if gpu else args.limit
                            row.update(run_ilp(instance, ILPS[method], limit))
                        _append(path, row)


# --------------------------------------------------------------------------- summary


def _load(path: Path) -> list[dict]:
    with path.open() as fh:
        return list(csv.DictReader(fh))


def _f(x: str) -> float | None:
    return float(x) if x not in ("", "None") else None


def _sec(x: float) -> str:
    return f"{x:.3g}" if x < 10 else f"{x:.0f}"


def summary_markdown(rows: list[dict], args) -> str:
    by = {(r["size"], r["model"], r["seed"], r["method"]): r for r in rows}
    sizes = sorted({int(r["size"]) for r in rows})
    lines = [
        "| GPUs | cases | aggregated: proven, median / worst s"
        " | aggregated without patterns: proven, median / worst s | CLI `exact`: median / worst s"
        " | stand-in GPU-level: proven, median / worst s | speed-up vs stand-in"
        " | paper GPU-level: proven, median / worst s | speed-up vs paper"
        " | Heavy-Edge gap % mean / worst |",
        "|---:|---:|---|---|---|---|---|---|---|---|",
    ]
    for size in sizes:
        cases = sorted({(r["model"], r["seed"]) for r in rows if int(r["size"]) == size})

        def get(method, case, size=size):
            return by.get((str(size), case[0], case[1], method))

        agg = [get("exact", c) for c in cases]
        agg_ok = [r for r in agg if r and r["status"] == "optimal"]
        agg_t = [float(r["time_s"]) for r in agg if r]
        cells = [str(size), str(len(cases))]
        cells.append(
            f"{len(agg_ok)}/{len(cases)}, {_sec(statistics.median(agg_t))} / {_sec(max(agg_t))}"
            if agg_t
            else "-"
        )
        plain = [get("exact_plain", c) for c in cases if get("exact_plain", c)]
        plain_t = [float(r["time_s"]) for r in plain]
        cells.append(
            f"{sum(r['status'] == 'optimal' for r in plain)}/{len(plain)}, "
            f"{_sec(statistics.median(plain_t))} / {_sec(max(plain_t))}"
            if plain
            else "not run"
        )
        cli_t = [float(get("cli", c)["time_s"]) for c in cases if get("cli", c)]
        cells.append(
            f"{_sec(statistics.median(cli_t))} / {_sec(max(cli_t))}" if cli_t else "not run"
        )
        for method in ("exact_gpu_level", "exact_gpu_level_paper"):
            runs = [(c, get(method, c)) for c in cases if get(method, c)]
            if not runs:
                cells += ["not run", "-"]
                continue
            proven = [(c, r) for c, r in runs if r["status"] == "optimal"]
            times = [float(r["time_s"]) for _, r in runs]
            cells.append(
                f"{len(proven)}/{len(runs)}, {_sec(statistics.median(times))} / {_sec(max(times))}"
            )
            ratios = [
                float(r["time_s"]) / float(get("exact", c)["time_s"])
                for c, r in runs
                if get("exact", c)
            ]
            if ratios:
                mark = "" if len(proven) == len(runs) else ">= "
                cells.append(f"{mark}{statistics.median(ratios):.0f}x")
            else:
                cells.append("-")
        gaps = []
        for c in cases:
            he, ex = get("heavy_edge", c), get("exact", c)
            if he and ex and ex["status"] == "optimal":
                gaps.append(100.0 * (float(he["alpha_s"]) / float(ex["alpha_s"]) - 1.0))
        cells.append(f"{statistics.mean(gaps):.1f} / {max(gaps):.1f}" if gaps else "-")
        lines.append("| " + " | ".join(cells) + " |")
    wrong = []
    for (size, model, seed, method), r in by.items():
        ex = by.get((size, model, seed, "exact"))
        if method.startswith("exact_") and ex and r["status"] == "optimal" == ex["status"]:
            a, b = float(r["alpha_s"]), float(ex["alpha_s"])
            if abs(a - b) > 1e-6 * max(a, b):
                wrong.append(f"{method} {model} seed {seed} {size} GPUs: {a} vs {b}")
    lines.append("")
    lines.append(
        "Equal optima: every case that two ILPs both proved has the same alpha"
        if not wrong
        else "Disagreeing proven optima: " + "; ".join(wrong)
    )
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes", type=lambda s: [int(x) for x in s.split(",")], default=[16, 32, 64, 128, 256]
    )
    parser.add_argument(
        "--models", type=lambda s: s.split(","), default=["vgg16", "bert24", "gpt175b"]
    )
    parser.add_argument("--seeds", type=lambda s: [int(x) for x in s.split(",")], default=[0, 1])
    parser.add_argument("--limit", type=float, default=300.0, help="aggregated ILP / CLI limit (s)")
    parser.add_argument("--gpu-limit", type=float, default=120.0, help="GPU-level ILPs' limit (s)")
    parser.add_argument("--gpu-max-size", type=int, default=64, help="largest size for GPU-level")
    parser.add_argument(
        "--plain-max-size", type=int, default=128, help="largest size for exact_plain"
    )
    parser.add_argument("--csv", required=True)
    parser.add_argument("--markdown")
    parser.add_argument("--summary-only", action="store_true")
    args = parser.parse_args(argv)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    if not args.summary_only:
        run(args)
    text = summary_markdown(_load(Path(args.csv)), args)
    if args.markdown:
        Path(args.markdown).write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
