"""rar's paper-scale intervals with every lower bound side by side, ``lb_binpacking`` included.

Part 1 (``--paper``): for each instance, generates it with ``ddlsched instance generate
rar --preset paper`` and runs ``ddlsched solve rar FILE --method M --time-limit L --json``
under ``/usr/bin/time -f "%e s %M KB"`` for the bounds ``load_lb``, ``contention_lb``,
``lb_timeindexed``, ``lb_binpacking`` and the schedules ``improve`` and ``exact``. Prints each
method's value and wall time and, per instance, the interval ``[best bound, best schedule]``
with its width before ``lb_binpacking`` (best of the other bounds) and with it.

Part 2 (``--small N``): ``small`` seeds ``0..N-1`` with the optimum proven by the exact
search; how often each bound (closed forms, ``load_lb``, ``lb_binpacking``) and ``improve``
equal the optimum, and the mean bound / optimum.

    PYTHONPATH=src python benchmarks/rar_lb_binpacking.py --small 100 \\
        --paper 4:2 4:8 16:0 4:10 4:11 --time-limit 120

An instance ``S:SEED`` is ``--set num_servers=S --set horizon=1500`` (Fig. 6's sweep)
unless ``S`` is 4, which stands for Fig. 4 (20 servers, ``T = 1200``).
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
import time
from pathlib import Path

from cli_timed import CLI, run_timed

BOUNDS = ("load_lb", "contention_lb", "lb_timeindexed", "lb_binpacking")
SCHEDULES = ("improve", "exact")


def _run(args: list[str]) -> tuple[dict, str]:
    return run_timed(args)


def _instance_args(spec: str) -> tuple[str, list[str]]:
    servers, seed = spec.split(":")
    args = ["--seed", seed]
    label = f"Fig. 4 seed {seed}"
    if servers != "4":
        args += ["--set", f"num_servers={servers}", "--set", "horizon=1500"]
        label = f"Fig. 6, {servers} servers, seed {seed}"
    return label, args


def paper(specs: list[str], time_limit: float, methods: list[str]) -> None:
    """Part 1: the paper-scale instances, one CLI call per (instance, method)."""
    print("| instance | method | status | value | wall, peak RSS | notes |")
    print("|---|---|---|---|---|---|")
    summary = []
    with tempfile.TemporaryDirectory() as tmp:
        for spec in specs:
            label, gen_args = _instance_args(spec)
            path = str(Path(tmp) / "paper.json")
            generate = ["instance", "generate", "rar", "--preset", "paper", *gen_args, "-o", path]
            subprocess.run([*CLI, *generate], check=True, capture_output=True)
            bounds: dict[str, float] = {}
            schedules: dict[str, float] = {}
            for method in methods:
                cli = ["solve", "rar", path, "--method", method, "--json"]
                cli += ["--time-limit", f"{time_limit:g}"]
                out, timing = _run(cli)
                info = out.get("info", {})
                obj, bound = out.get("objective"), out.get("bound")
                if obj is not None:
                    schedules[method] = obj
                if bound is not None:
                    bounds[method] = bound
                notes = []
                if out.get("time_limit_hit"):
                    notes.append(f"stopped: {info.get('stopped', '?')}")
                if "components" in info:
                    notes.append(f"components {info['components']}")
                if "search_stopped" in info:
                    notes.append(f"search ended: {info['search_stopped']}")
                if "slot_width" in info:
                    notes.append(f"w {info['slot_width']}")
                value = f"{obj:g}" if obj is not None else "-"
                value += f" / bound {bound:g}" if bound is not None else ""
                print(
                    f"| {label} | {method} | {out.get('status')} | {value} | {timing} "
                    f"| {'; '.join(notes)} |",
                    flush=True,
                )
            summary.append((label, bounds, schedules))
    print(
        "\n| instance | best schedule | best bound without lb_binpacking | width | "
        "lb_binpacking | width with it |"
    )
    print("|---|---|---|---|---|---|")
    for label, bounds, schedules in summary:
        if not schedules or not bounds:
            continue
        upper = min(schedules.values())
        before = max(v for k, v in bounds.items() if k != "lb_binpacking")
        after = max(bounds.values())
        print(
            f"| {label} | {upper:g} | {before:g} | {100 * (upper / before - 1):.1f} % "
            f"| {bounds.get('lb_binpacking', float('nan')):g} "
            f"| {100 * (upper / after - 1):.1f} % |"
        )


def small(count: int) -> None:
    """Part 2: ``small`` seeds with the optimum proven by the exact search."""
    from ddlsched.models.rar_bounds import closed_form_bounds, load_lb
    from ddlsched.models.rar_lb_binpacking import lb_binpacking
    from ddlsched.models.rar_search import search_exact
    from ddlsched.registry import RunOptions, run_method
    from ddlsched.workloads.rar import generate

    hits = {"closed forms": 0, "load_lb": 0, "lb_binpacking": 0, "improve": 0}
    wrong = 0  # a bound above the optimum or a schedule below it (a bug)
    ratio = {k: 0.0 for k in hits}
    seconds = 0.0
    proven = 0
    for seed in range(count):
        inst = generate("small", seed)
        opt = search_exact(inst)
        if not opt.proven:
            continue
        proven += 1
        started = time.perf_counter()
        binpacking = lb_binpacking(inst).bound
        seconds += time.perf_counter() - started
        improved = run_method("rar", "improve", inst, RunOptions(time_limit_s=60))
        values = {
            "closed forms": max(closed_form_bounds(inst).values()),
            "load_lb": load_lb(inst).bound,
            "lb_binpacking": binpacking,
            "improve": improved.objective,
        }
        for name, value in values.items():
            hits[name] += value == opt.makespan
            wrong += (value < opt.makespan) if name == "improve" else (value > opt.makespan)
            ratio[name] += value / opt.makespan
    print(f"\n`small` seeds 0-{count - 1}: {proven} optima proven by the exact search\n")
    print("| method | equal to the optimum | mean value / optimum |")
    print("|---|---|---|")
    for name in hits:
        print(f"| {name} | {hits[name]}/{proven} | {ratio[name] / max(proven, 1):.4f} |")
    print(f"\n`lb_binpacking`: {seconds:.1f} s in all on the {proven} instances")
    print(f"bounds above the optimum or schedules below it: {wrong}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--paper", nargs="*", default=[], metavar="SERVERS:SEED")
    parser.add_argument("--small", type=int, default=0, metavar="N")
    parser.add_argument("--time-limit", type=float, default=120.0)
    parser.add_argument("--methods", nargs="*", default=[*BOUNDS, *SCHEDULES])
    args = parser.parse_args()
    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    started = subprocess.run(["date", "-u"], capture_output=True, text=True).stdout.strip()
    print(f"started {started}; time limit {args.time_limit:g} s; load: {load}\n")
    if args.paper:
        paper(args.paper, args.time_limit, args.methods)
    if args.small:
        small(args.small)
    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    ended = subprocess.run(["date", "-u"], capture_output=True, text=True).stdout.strip()
    print(f"\nended {ended}; load: {load}")


if __name__ == "__main__":
    main()
