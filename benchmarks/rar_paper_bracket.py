"""The certified bracket of the rar ``paper`` preset from the CLI, with each method's cost.

For each seed, generates ``paper.json`` and runs ``ddlsched solve rar paper.json --method M
--time-limit L --json`` under ``/usr/bin/time -f "%e s %M KB"`` for ``timeindexed``,
``exact``, ``lp_rounding``, ``improve`` (limit ``L``, default 60 s), ``load_lb`` and
``sjf_bco`` (``--methods`` picks others). Prints a markdown table (objective, bound, status,
the chosen grid or, for ``improve``, its stop reason, candidates and winner, wall time and
peak RSS) and the bracket ``[best bound, best schedule]`` and its width per seed.
``--set NAME=VALUE`` passes preset parameters to the generator (Fig. 6: ``num_servers``,
``horizon``); ``--preset paper-contention`` the contention preset.

    PYTHONPATH=src python benchmarks/rar_paper_bracket.py --seeds 0 3 > out.md
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
from pathlib import Path

from cli_timed import CLI, run_timed

METHODS = ("timeindexed", "exact", "lp_rounding", "load_lb", "sjf_bco")


def _run(args: list[str]) -> tuple[dict, str]:
    return run_timed(args)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", nargs=2, type=int, default=(0, 3), metavar=("FIRST", "END"))
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--methods", nargs="*", default=list(METHODS))
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--preset", default="paper", choices=("paper", "paper-contention"))
    args = parser.parse_args()
    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    print(f"time limit {args.time_limit:g} s; load at start: {load}\n")
    print(
        "| seed | method | status | objective | bound | grid (w, horizon, cap) | wall, peak RSS |"
    )
    print("|---|---|---|---|---|---|---|")
    brackets = []
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(*args.seeds):
            path = str(Path(tmp) / f"paper{seed}.json")
            generate = ["instance", "generate", "rar", "--preset", args.preset, "--seed", str(seed)]
            generate += [arg for pair in args.set for arg in ("--set", pair)]
            subprocess.run([*CLI, *generate, "-o", path], check=True, capture_output=True)
            best_ub, best_lb = None, None
            for method in args.methods:
                cli = ["solve", "rar", path, "--method", method, "--json"]
                if method in ("timeindexed", "exact", "lp_rounding", "improve"):
                    cli += ["--time-limit", f"{args.time_limit:g}"]
                out, timing = _run(cli)
                info = out.get("info", {})
                grid = (
                    f"{info['slot_width']}, {info['model_horizon']}, {info['max_patterns']}"
                    if "slot_width" in info
                    else ""
                )
                if "search_stopped" in info and "candidates" in info:  # improve
                    ended = info["search_stopped"]
                    grid = f"{ended}, {info['candidates']} candidates, {info['winner']}"
                obj, bound = out.get("objective"), out.get("bound")
                if obj is not None:
                    best_ub = obj if best_ub is None else min(best_ub, obj)
                if bound is not None:
                    best_lb = bound if best_lb is None else max(best_lb, bound)
                print(
                    f"| {seed} | {method} | {out.get('status')} | {obj} | {bound} | {grid} "
                    f"| {timing} |",
                    flush=True,
                )
            brackets.append((seed, best_lb, best_ub))
    print("\n| seed | certified bracket [bound, best schedule] | width |")
    print("|---|---|---|")
    for seed, lb, ub in brackets:
        width = f"{ub / lb - 1:.1%}" if lb and ub is not None else "-"
        print(f"| {seed} | [{lb}, {ub}] | {width} |")
    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    print(f"\nload at end: {load}")


if __name__ == "__main__":
    main()
