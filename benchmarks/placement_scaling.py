"""Placement at cluster scale: the aggregated ILP vs two GPU-level ILPs, 16-256 GPUs.

Cases: ``ddlsched instance generate placement --preset table2 --seed SEED
--set model=MODEL --set num_gpus=N`` for every size ``N`` of ``--sizes``,
model of ``--models`` and seed of ``--seeds``. Per case, in this process,
one after the other, single-threaded, no cross-check, each method through
:func:`ddlsched.registry.run_method` as ``ddlsched solve`` runs it (wall time
of the whole method, the evaluator's re-check included; the pattern proof's
per-instance cache is cleared before every run):

* ``heavy_edge``: Heavy-Edge (seed 0), its alpha and mapping time;
* ``exact``: method ``exact`` with its defaults (pattern bounds, the CP-SAT
  threshold search, the aggregated ILP only where they leave a gap); the
  ``note`` says which proof closed the case;
* ``exact_milp``: the same with ``--param milp=true``: the aggregated ILP is
  solved even after a closed pattern proof (with its bound row and start);
* ``exact_plain``: ``--param patterns=false``: the aggregated ILP alone, as
  before the pattern bounds and the threshold search;
* ``exact_gpu_level`` (our stand-in: replica x GPU binaries plus the one-hot
  count encoding) and ``exact_gpu_level_paper`` (the paper's baseline as we
  read [47]: replica x GPU binaries only): ``--gpu-limit`` seconds, skipped
  above ``--gpu-max-size`` GPUs (they stop finishing well before; the table
  says "not run");
* ``cli``: ``ddlsched solve placement FILE --method exact --json`` in a
  subprocess, as a user runs it: start-up, the pattern proof, the
  aggregated ILP and the default SCIP cross-check included (wall time of the
  process, the method's ``runtime_s`` and the cross-check's verdict).

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
from ddlsched.models.placement_pattern_proof import _PROOF_CACHE
from ddlsched.problems.placement import evaluate
from ddlsched.registry import RunOptions, run_method
from ddlsched.workloads.placement import table2

FIELDS = ("size", "model", "seed", "method", "status", "alpha_s", "bound_s", "time_s", "note")
METHODS = {  # row name -> (method, params); no cross-check anywhere
    "exact": ("exact", {}),
    "exact_milp": ("exact", {"milp": True}),
    "exact_plain": ("exact", {"patterns": False}),  # the aggregated ILP alone (no pattern bound)
    "exact_gpu_level": ("exact_gpu_level", {}),
    "exact_gpu_level_paper": ("exact_gpu_level_paper", {}),
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


def run_exact(instance, row: str, limit_s: float) -> dict:
    method, params = METHODS[row]
    options = RunOptions(time_limit_s=limit_s, params={"cross_check": False, **params})
    _PROOF_CACHE.clear()
    start = time.perf_counter()
    result = run_method("placement", method, instance, options)
    wall = time.perf_counter() - start
    proof = result.info.get("proof")
    return {
        "status": str(result.status),
        "alpha_s": result.objective,
        "bound_s": result.bound,
        "time_s": wall,
        "note": f"proof={proof}" if proof else "",
    }


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
            f" pattern_proof={result['info'].get('pattern_proof', {}).get('proof')}"
            f" pattern_proof_agrees={result['info'].get('pattern_proof', {}).get('agrees')}"
        ),
    }


def run(args) -> None:
    path = Path(args.csv)
    done = _done(path)
    # warm-up: imports (Pyomo, highspy, OR-Tools' CP-SAT), profile cache
    for row in ("exact", "exact_milp", "exact_gpu_level"):
        run_exact(table2(0, model="vgg16", num_gpus=32 if row == "exact" else 16), row, 60)
    phases = [
        ("heavy_edge", "exact", "exact_milp", "exact_plain", "cli"),
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
                            row.update(run_exact(instance, method, limit))
                        _append(path, row)


# --------------------------------------------------------------------------- summary


def _load(path: Path) -> list[dict]:
    with path.open() as fh:
        return list(csv.DictReader(fh))


def _f(x: str) -> float | None:
    return float(x) if x not in ("", "None") else None


def _sec(x: float) -> str:
    return f"{x:.3g}" if x < 10 else f"{x:.0f}"


def _cell(runs: list[dict]) -> str:
    """``proven/total, median / worst s`` of some runs, or ``not run``."""
    if not runs:
        return "not run"
    times = [float(r["time_s"]) for r in runs]
    proven = sum(r["status"] == "optimal" for r in runs)
    return f"{proven}/{len(runs)}, {_sec(statistics.median(times))} / {_sec(max(times))}"


def _speedup(slow: list[tuple[dict, dict]]) -> str:
    """Median of slow / fast time over the cases both ran; ``>=`` when the slow
    method did not prove every case (its time is then its limit)."""
    if not slow:
        return "-"
    ratios = [float(s["time_s"]) / float(f["time_s"]) for s, f in slow]
    mark = "" if all(s["status"] == "optimal" for s, _ in slow) else ">= "
    return f"{mark}{statistics.median(ratios):.0f}x"


def summary_markdown(rows: list[dict], args) -> str:
    by = {(r["size"], r["model"], r["seed"], r["method"]): r for r in rows}
    sizes = sorted({int(r["size"]) for r in rows})
    main_table = [
        "| GPUs | cases | `exact`: proven, median / worst s | `exact` proofs:"
        " patterns / threshold / milp | `exact --param milp=true` | aggregated ILP alone"
        " (`patterns=false`) | CLI `exact` (cross-checked): median / worst s"
        " | stand-in GPU-level ILP | paper GPU-level ILP | Heavy-Edge gap % mean / worst |",
        "|---:|---:|---|---|---|---|---|---|---|---|",
    ]
    speed_table = [
        "| GPUs | `exact` vs stand-in | `exact` vs paper | `milp=true` vs stand-in"
        " | `milp=true` vs paper | ILP alone vs stand-in | ILP alone vs paper |",
        "|---:|---|---|---|---|---|---|",
    ]
    for size in sizes:
        cases = sorted({(r["model"], r["seed"]) for r in rows if int(r["size"]) == size})

        def runs(method, size=size, cases=cases):
            return [by[k] for c in cases if (k := (str(size), c[0], c[1], method)) in by]

        def pairs(slow, fast, size=size, cases=cases):
            out = []
            for c in cases:
                a, b = (by.get((str(size), c[0], c[1], m)) for m in (slow, fast))
                if a and b:
                    out.append((a, b))
            return out

        exact = runs("exact")
        proofs = [r["note"].removeprefix("proof=") for r in exact]
        cli_t = [float(r["time_s"]) for r in runs("cli")]
        gaps = [
            100.0 * (float(he["alpha_s"]) / float(ex["alpha_s"]) - 1.0)
            for he, ex in pairs("heavy_edge", "exact")
            if ex["status"] == "optimal"
        ]
        main_table.append(
            "| "
            + " | ".join(
                [
                    str(size),
                    str(len(cases)),
                    _cell(exact),
                    " / ".join(str(proofs.count(p)) for p in ("patterns", "threshold", "milp")),
                    _cell(runs("exact_milp")),
                    _cell(runs("exact_plain")),
                    f"{_sec(statistics.median(cli_t))} / {_sec(max(cli_t))}"
                    if cli_t
                    else "not run",
                    _cell(runs("exact_gpu_level")),
                    _cell(runs("exact_gpu_level_paper")),
                    f"{statistics.mean(gaps):.1f} / {max(gaps):.1f}" if gaps else "-",
                ]
            )
            + " |"
        )
        speed_table.append(
            "| "
            + " | ".join(
                [str(size)]
                + [
                    _speedup(pairs(gpu, fast))
                    for fast in ("exact", "exact_milp", "exact_plain")
                    for gpu in ("exact_gpu_level", "exact_gpu_level_paper")
                ]
            )
            + " |"
        )
    wrong = []
    for (size, model, seed, method), r in by.items():
        ex = by.get((size, model, seed, "exact"))
        other = method != "exact" and method.startswith(("exact", "cli"))
        if other and ex and r["status"] == "optimal" == ex["status"]:
            a, b = float(r["alpha_s"]), float(ex["alpha_s"])
            if abs(a - b) > 1e-6 * max(a, b):
                wrong.append(f"{method} {model} seed {seed} {size} GPUs: {a} vs {b}")
    return (
        "\n".join(
            [
                *main_table,
                "",
                "Speed-ups (median over the cases both ran of the GPU-level ILP's time over the"
                " other's; '>=' where the GPU-level ILP did not prove every case):",
                "",
                *speed_table,
                "",
                "Equal optima: every case that two methods both proved has the same alpha"
                if not wrong
                else "Disagreeing proven optima: " + "; ".join(wrong),
            ]
        )
        + "\n"
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes", type=lambda s: [int(x) for x in s.split(",")], default=[16, 32, 64, 128, 256]
    )
    parser.add_argument(
        "--models", type=lambda s: s.split(","), default=["vgg16", "bert24", "gpt175b"]
    )
    parser.add_argument("--seeds", type=lambda s: [int(x) for x in s.split(",")], default=[0, 1])
    parser.add_argument("--limit", type=float, default=300.0, help="`exact` / CLI limit (s)")
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
