"""PD-ORS's revised rounding: the targets, the quanta and the seeds, side by side.

    python benchmarks/dmlrs_rounding.py targets      # paper seed 0 through the CLI, one core
    python benchmarks/dmlrs_rounding.py slot         # dmlrs_slot synthetic seeds 0-4
    python benchmarks/dmlrs_rounding.py quanta       # q in {32, 64, 128}, Fig. 7 points, seeds 0-2
    python benchmarks/dmlrs_rounding.py seeds        # how many PD-ORS seeds change the answer

``targets``: ``ddlsched solve dmlrs paper.json --method pd_ors --seed 0`` on
``paper`` seed 0 (50 jobs, 100 machines, ``T = 20``), pinned to one core
(``taskset -c 0`` when available), for the four combinations of
``rounding`` (shrunk / literal) and ``internal`` (demand / gamma_multiple):
the share of rounded slot problems without a feasible draw, accepted jobs,
external slots, utility, wall time (start-up included).

``slot``: on ``dmlrs_slot --preset synthetic`` seeds 0-4 (and ``--seeds``),
every instance whose LP is feasible: does ``rounding`` (rounding seeds 0-4)
find a feasible draw, and is its cost >= the ILP's optimum >= the LP bound?

``quanta``: PD-ORS with ``q`` in {32, 64, 128} on ``paper`` seeds 0-2 at the
Fig. 7 points (10-50 jobs, 100 machines, ``T = 20``): utility and wall time
per run, in one process, one after the other per instance.

``seeds``: PD-ORS with method seeds 0-19 on ``tiny`` seeds 0-99 and 0-9 on
the Fig. 6 and Fig. 7 points (``paper`` seed 0): per instance, the number of
distinct utilities and the spread.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from ddlsched.registry import RunOptions, get_family, run_method

COMBINATIONS = (
    ("shrunk", "demand"),
    ("shrunk", "gamma_multiple"),
    ("literal", "demand"),
    ("literal", "gamma_multiple"),
)


def _load() -> str:
    return f"load {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}"


def targets() -> None:
    exe = str(Path(sys.executable).with_name("ddlsched"))
    pin = ["taskset", "-c", "0"] if shutil.which("taskset") else []
    print(f"targets: paper seed 0 (50 jobs, 100 machines, T = 20), PD-ORS seed 0; {_load()}")
    print("rounding  internal        no-draw share  accepted  external  internal  utility   wall s")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "paper0.json"
        get_family("dmlrs").generate("paper", 0).save(path)
        for rounding, internal in COMBINATIONS:
            cmd = [*pin, exe, "solve", "dmlrs", str(path), "--method", "pd_ors", "--seed", "0",
                   "--param", f"rounding={rounding}", "--param", f"internal={internal}", "--json"]  # fmt: skip
            started = time.perf_counter()
            out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
            wall = time.perf_counter() - started
            d = json.loads(out)
            i = d["info"]
            share = i["roundings_infeasible"] / i["roundings"] if i["roundings"] else float("nan")
            print(
                f"{rounding:<9} {internal:<15} {share:8.3f} ({i['roundings_infeasible']}/"
                f"{i['roundings']})  {i['accepted']:>4}/50  {i['external_slots']:>6}  "
                f"{i['internal_slots']:>7}  {d['objective']:8.2f}  {wall:6.2f}"
            )
    print(f"done; {_load()}")


def slot(seeds: list[int]) -> None:
    fam = get_family("dmlrs_slot")
    print(f"slot: dmlrs_slot synthetic seeds {seeds}, rounding seeds 0-4; {_load()}")
    bad = 0
    for seed in seeds:
        inst = fam.generate("synthetic", seed)
        lp = run_method("dmlrs_slot", "lp", inst)
        if lp.status == "infeasible":
            print(f"  seed {seed}: LP infeasible (D = {inst.demand}), skipped")
            continue
        ilp = run_method("dmlrs_slot", "ilp", inst, RunOptions(time_limit_s=600))
        for rseed in range(5):
            r = run_method("dmlrs_slot", "rounding", inst, RunOptions(seed=rseed))
            ok = (
                r.objective is not None
                and ilp.status == "optimal"
                and r.objective >= ilp.objective * (1 - 1e-9)
                and ilp.objective >= lp.bound * (1 - 1e-9)
            )
            bad += not ok
            i = r.info
            print(
                f"  seed {seed} rseed {rseed}: {r.status:<9} cost/ILP "
                f"{(r.objective or float('nan')) / ilp.objective:7.4f}  ILP/LP "
                f"{ilp.objective / lp.bound:7.4f}  {i['rounded_lp']:<6} G {i['G_delta']:.3f} "
                f"draws {i['draws']:>3}  feasible before/after repair "
                f"{i['feasible_share_unrepaired']:.2f}/{i['feasible_share']:.2f}  "
                f"covering {i['covering_success_share']:.2f}  {'ok' if ok else 'FAILS'}"
            )
    print(f"slot: {bad} failing (instance, seed) pairs; {_load()}")


def quanta(seeds: list[int], jobs: list[int], values: list[int]) -> None:
    fam = get_family("dmlrs")
    print(f"quanta: paper seeds {seeds}, 100 machines, T = 20, jobs {jobs}; {_load()}")
    print("jobs seed " + "".join(f"  q={q:<4} utility    s" for q in values))
    totals = {q: [] for q in values}
    times = {q: [] for q in values}
    for n in jobs:
        for seed in seeds:
            inst = fam.generate("paper", seed, jobs=n, machines=100, slots=20)
            cells = []
            for q in values:
                r = run_method("dmlrs", "pd_ors", inst, RunOptions(seed=0, params={"quanta": q}))
                totals[q].append(r.objective)
                times[q].append(r.runtime_s)
                cells.append(f"  {r.objective:14.2f} {r.runtime_s:5.1f}")
            print(f"{n:>4} {seed:>4}" + "".join(cells))
    base = np.array(totals[values[0]])
    for q in values:
        u = np.array(totals[q])
        print(
            f"q = {q:>3}: mean utility {u.mean():9.2f} ({np.mean(u / base - 1) * 100:+.2f} % vs "
            f"q = {values[0]}, {int(np.sum(u > base + 1e-9))} up / "
            f"{int(np.sum(u < base - 1e-9))} down), mean {np.mean(times[q]):.2f} s, "
            f"max {np.max(times[q]):.2f} s"
        )
    print(f"done; {_load()}")


def _distinct(inst, method_seeds) -> tuple[int, float, float]:
    values = [
        run_method("dmlrs", "pd_ors", inst, RunOptions(seed=s)).objective for s in method_seeds
    ]
    return len({round(v, 9) for v in values}), min(values), max(values)


def seeds() -> None:
    fam = get_family("dmlrs")
    print(f"seeds: distinct PD-ORS utilities over method seeds; {_load()}")
    changed = 0
    for seed in range(100):
        n, lo, hi = _distinct(fam.generate("tiny", seed), range(20))
        changed += n > 1
        if n > 1:
            print(f"  tiny {seed}: {n} distinct utilities over 20 seeds, {lo:.3f}..{hi:.3f}")
    print(f"tiny: {changed} of 100 instances change with the seed (20 seeds)")
    points = [("fig6", {"jobs": 50, "machines": m, "slots": 20}) for m in (10, 20, 40, 60, 80, 100)]
    points += [("fig7", {"jobs": j, "machines": 100, "slots": 20}) for j in (10, 20, 30, 40)]
    for label, size in points:
        n, lo, hi = _distinct(fam.generate("paper", 0, **size), range(10))
        spread = (hi - lo) / hi if hi else 0.0
        print(f"  {label} {size}: {n} distinct over 10 seeds, {lo:.2f}..{hi:.2f} ({spread:.2%})")
    print(f"done; {_load()}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("what", choices=("targets", "slot", "quanta", "seeds"))
    ap.add_argument("--seeds", default="0,1,2,3,4", help="slot: instance seeds")
    ap.add_argument("--quanta", default="32,64,128")
    ap.add_argument("--jobs", default="10,20,30,40,50", help="quanta: Fig. 7 job counts")
    ap.add_argument("--paper-seeds", default="0,1,2", help="quanta: instance seeds")
    args = ap.parse_args()
    ints = lambda text: [int(x) for x in text.split(",")]  # noqa: E731
    if args.what == "targets":
        targets()
    elif args.what == "slot":
        slot(ints(args.seeds))
    elif args.what == "quanta":
        quanta(ints(args.paper_seeds), ints(args.jobs), ints(args.quanta))
    else:
        seeds()


if __name__ == "__main__":
    main()
