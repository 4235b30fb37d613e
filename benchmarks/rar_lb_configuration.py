"""rar's configuration-LP bound ``lb_configuration``: validity, strength, and the paper intervals.

Part 1 (``--proven N M``): ``small`` seeds ``0..N-1`` and ``contention`` seeds ``0..M-1``
with the optimum proven by the exact search; per preset, how often ``lb_configuration``,
``lb_binpacking`` and the closed forms equal the optimum, how often ``lb_configuration`` is
above / below ``lb_binpacking``, the mean bound / optimum, the rounds and the time, and the
count of bounds above a proven optimum (a bug: must be 0).

Part 2 (``--paper SPEC ...``, ``--fig4``, ``--fig6``): the paper-scale instances as
``benchmarks/suites/rar.toml`` generates them (``S:SEED``: ``num_servers=S, horizon=1500``,
Fig. 6's sweep, unless ``S`` is 4, which stands for Fig. 4: 20 servers, ``T = 1200``);
``--preset paper-contention`` for that preset's instances. ``lb_configuration`` runs
in-process (its value, the LP's value bracket ``[lp_bound, master]``, rounds, wall time),
beside the closed forms, ``load_lb`` and ``lb_binpacking``. Those two and the best schedule
are read from a ``ddlsched bench run`` results directory (``rar.toml``'s or
``rar-section7.toml``'s) when ``--results`` names one (``lb_binpacking`` is run here
otherwise, at ``--time-limit``); the interval ``[best bound, best schedule]`` before and
after, and the share of it closed.

    PYTHONPATH=src python benchmarks/rar_lb_configuration.py --proven 100 40 \\
        --fig4 --fig6 --results RESULTS/rar --rounds 50
"""

from __future__ import annotations

import argparse
import glob
import json
import math
import subprocess
import time
from pathlib import Path

from ddlsched.models.rar_bounds import closed_form_bounds
from ddlsched.models.rar_lb_binpacking import lb_binpacking
from ddlsched.models.rar_lb_configuration import lb_configuration
from ddlsched.models.rar_search import search_exact
from ddlsched.workloads.rar import generate


def proven(preset: str, count: int, rounds: int) -> None:
    """Part 1: one preset's seeds with a proven optimum."""
    names = ("closed forms", "lb_binpacking", "lb_configuration")
    equal = dict.fromkeys(names, 0)
    ratio = dict.fromkeys(names, 0.0)
    above = below = wrong = unproven = 0
    seconds = 0.0
    rounds_done: list[int] = []
    for seed in range(count):
        inst = generate(preset, seed)
        opt = search_exact(inst)
        if not opt.proven:
            unproven += 1
            continue
        started = time.perf_counter()
        config = lb_configuration(inst, rounds=rounds)
        seconds += time.perf_counter() - started
        rounds_done.append(config.info["rounds"])
        values = {
            "closed forms": max(closed_form_bounds(inst).values()),
            "lb_binpacking": lb_binpacking(inst).bound,
            "lb_configuration": config.bound,
        }
        for name, value in values.items():
            equal[name] += value == opt.makespan
            ratio[name] += value / opt.makespan
            wrong += value > opt.makespan
        above += values["lb_configuration"] > values["lb_binpacking"]
        below += values["lb_configuration"] < values["lb_binpacking"]
    done = count - unproven
    print(f"\n`{preset}` seeds 0-{count - 1}: {done} optima proven by the exact search\n")
    print("| bound | equal to the optimum | mean bound / optimum |")
    print("|---|---|---|")
    for name in names:
        print(f"| {name} | {equal[name]}/{done} | {ratio[name] / max(done, 1):.4f} |")
    print(
        f"\n`lb_configuration` above `lb_binpacking` on {above}, below on {below}; "
        f"{seconds:.1f} s in all, rounds: max {max(rounds_done, default=0)}, "
        f"mean {sum(rounds_done) / max(len(rounds_done), 1):.1f}; "
        f"bounds above a proven optimum: {wrong}"
    )


def _spec(spec: str) -> tuple[str, int, dict]:
    servers, seed = (int(v) for v in spec.split(":"))
    if servers == 4:
        return f"Fig. 4 seed {seed}", seed, {}
    return (
        f"Fig. 6, {servers} servers, seed {seed}",
        seed,
        {"num_servers": servers, "horizon": 1500},
    )


def _stored(results: str | None) -> dict[tuple[str, int, str], dict[str, float]]:
    """Best schedule and bounds per (preset, seed, params JSON) from a results directory."""
    if not results:
        return {}
    import pandas as pd

    rows = pd.concat(pd.read_parquet(f) for f in glob.glob(f"{results}/rows/*.parquet"))
    rows = rows[rows.group.isin(["fig4", "fig6"])]
    out: dict[tuple[str, int, str], dict[str, float]] = {}
    for (preset, seed, params), part in rows.groupby(
        ["preset", "instance_seed", "instance_params"]
    ):
        key = (str(preset), int(seed), json.dumps(json.loads(params), sort_keys=True))
        entry = out.setdefault(key, {})
        entry["schedule"] = float(part.objective.min())
        for method in ("load_lb", "lb_binpacking"):
            bound = part[part.method == method].bound.max()
            if not math.isnan(bound):
                entry[method] = float(bound)
    return out


def paper(
    specs: list[str], rounds: int, results: str | None, time_limit: float, preset: str
) -> None:
    """Part 2: the paper-scale instances (of ``preset``: ``paper`` or ``paper-contention``)."""
    stored = _stored(results)
    print(
        "| instance | gpu_time | load_lb | lb_binpacking | lb_configuration (LP in) | rounds "
        "| wall s | best schedule | width before | width after | closed |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for spec in specs:
        label, seed, params = _spec(spec)
        inst = generate(preset, seed, **params)
        known = dict(stored.get((preset, seed, json.dumps(params, sort_keys=True)), {}))
        if "lb_binpacking" not in known:
            from ddlsched.deadline import Deadline

            known["lb_binpacking"] = lb_binpacking(inst, deadline=Deadline(time_limit)).bound
        started = time.perf_counter()
        config = lb_configuration(inst, rounds=rounds)
        wall = time.perf_counter() - started
        info = config.info
        closed = closed_form_bounds(inst)
        before = max([*closed.values(), *(v for k, v in known.items() if k != "schedule")])
        after = max(before, config.bound)
        upper = known.get("schedule")
        if upper:
            width = f"{100 * (upper / before - 1):.1f} % | {100 * (upper / after - 1):.1f} %"
            share = f"{100 * (after - before) / (upper - before):.0f} %" if upper > before else "-"
        else:
            width, share = "- | -", "-"
        print(
            f"| {label} | {closed['gpu_time']:g} | {known.get('load_lb', '-')} "
            f"| {known['lb_binpacking']:g} | {config.bound:g} ([{info['lp_bound']:.2f}, "
            f"{info['master']:.2f}]) | {info['rounds']}{'' if info['converged'] else ' (open)'} "
            f"| {wall:.1f} | {upper if upper else '-'} | {width} | {share} |",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--proven", nargs=2, type=int, default=(0, 0), metavar=("SMALL", "CONT"))
    parser.add_argument("--paper", nargs="*", default=[], metavar="SERVERS:SEED")
    parser.add_argument("--fig4", action="store_true", help="Fig. 4 seeds 0-9")
    parser.add_argument("--fig6", action="store_true", help="Fig. 6: 10-20 servers, seeds 0-4")
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--results", default=None, help="a results directory of rar.toml")
    parser.add_argument("--time-limit", type=float, default=120.0)
    parser.add_argument(
        "--preset", default="paper", choices=("paper", "paper-contention"), help="of Part 2"
    )
    args = parser.parse_args()
    specs = list(args.paper)
    specs += [f"4:{s}" for s in range(10)] if args.fig4 else []
    specs += [f"{n}:{s}" for n in range(10, 21, 2) for s in range(5)] if args.fig6 else []
    if args.results and not Path(args.results).is_dir():
        parser.error(f"--results: no directory {args.results}")
    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    started = subprocess.run(["date", "-u"], capture_output=True, text=True).stdout.strip()
    print(f"started {started}; rounds {args.rounds}; load: {load}")
    if args.proven[0]:
        proven("small", args.proven[0], args.rounds)
    if args.proven[1]:
        proven("contention", args.proven[1], args.rounds)
    if specs:
        print()
        paper(specs, args.rounds, args.results, args.time_limit, args.preset)
    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    ended = subprocess.run(["date", "-u"], capture_output=True, text=True).stdout.strip()
    print(f"\nended {ended}; load: {load}")


if __name__ == "__main__":
    main()
