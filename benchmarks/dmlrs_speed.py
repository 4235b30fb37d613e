"""Speed of the dmlrs family (its speed targets), on one core.

    taskset -c 0 python benchmarks/dmlrs_speed.py
    taskset -c 0 python benchmarks/dmlrs_speed.py --skip-large --tiny-seeds 20

Measured, side by side in one run:

1. PD-ORS (``quanta = 32``, ``S = 10``) on ``paper`` with 50 jobs, 100
   machines, ``T = 20`` through the method pipeline (target under 60 s),
   with the LPs solved, the mean time per LP and the draws per LP; seeds
   0-2; OASiS, FIFO, DRF and Dorm on the same instance;
2. the per-slot LPs through highspy (one reused HiGHS model, right-hand
   side changed and warm-started) against one Pyomo model per LP: PD-ORS
   run with each solver set on a smaller ``paper`` instance (Pyomo is slow),
   time per LP and total;
3. Fig. 9's largest point (100 jobs, 100 machines, ``T = 80``): PD-ORS and
   OASiS (target under 10 minutes);
4. ``dmlrs_slot``: 10,000 rounding draws of a 100-machine Problem (23)
   (target under 10 s; the first rule's draws of the full LP, and the revised
   rule's shrunk LP, draws and repair) and its ILP (target under 1 s),
   ``synthetic`` seeds 0-9;
5. ``exact`` on ``tiny`` seeds 0-99 (target: each proven optimal within 60 s);
6. what a user runs: ``ddlsched solve dmlrs FILE --method pd_ors`` (CLI
   start-up included).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from ddlsched.deadline import Deadline
from ddlsched.heuristics.dmlrs_rounding import draw_roundings, g_delta, repair, unit_caps
from ddlsched.heuristics.dmlrs_slot import SlotData
from ddlsched.heuristics.pd_ors import PdOrsSettings, run_pd_ors
from ddlsched.problems.dmlrs import evaluate
from ddlsched.registry import RunOptions, get_family, run_method
from ddlsched.rng import make_rng
from ddlsched.solvers.dmlrs_slot_lp import HighsSlotSolvers
from ddlsched.workloads.dmlrs import generate


class _PyomoLp:
    """One Pyomo model per LP (the alternative the spec rules out), same protocol."""

    def __init__(self, args, counter):
        self.args = args
        self.counter = counter

    def solve_shrunk(self, demand, factor, worker_cap, ps_cap, time_limit_s=float("inf")):
        """The shrunk LP as a full LP of other data (rows (24) at C / G, the one-resource
        resources set so that their bound is the floored cap over G)."""
        pw, ps, alpha, beta, res, gamma, F = self.args
        alpha, beta = np.asarray(alpha, float), np.asarray(beta, float)
        res = np.maximum(np.asarray(res, float), 0.0) / factor
        for r in np.flatnonzero((alpha > 0) & (beta == 0)):
            res[:, r] = alpha[r] * np.asarray(worker_cap) / factor
        for r in np.flatnonzero((alpha == 0) & (beta > 0)):
            res[:, r] = beta[r] * np.asarray(ps_cap) / factor
        return _PyomoLp((pw, ps, alpha, beta, res, gamma, F), self.counter).solve(demand)

    def solve(self, demand, time_limit_s=float("inf")):
        import pyomo.environ as pyo

        from ddlsched.models.dmlrs_slot import build_slot_model
        from ddlsched.problems.dmlrs_slot import SlotInstance
        from ddlsched.solvers.backends import solve_model

        pw, ps, alpha, beta, res, gamma, F = self.args
        if demand > F:
            return None
        started = time.perf_counter()
        inst = SlotInstance(
            resources=tuple(f"r{k}" for k in range(len(alpha))),
            worker_price=tuple(map(float, pw)),
            ps_price=tuple(map(float, ps)),
            worker=tuple(map(float, alpha)),
            ps=tuple(map(float, beta)),
            residual=tuple(tuple(map(float, np.maximum(row, 0.0))) for row in res),
            gamma=int(gamma),
            global_batch=int(F),
            demand=int(demand),
        )
        model = build_slot_model(inst, relax=True)
        solved = solve_model(model, "highs")
        self.counter.append(time.perf_counter() - started)
        if solved.incumbent is None:
            return None

        class Sol:
            w = np.array([pyo.value(model.w[h]) for h in model.H])
            s = np.array([pyo.value(model.s[h]) for h in model.H])
            objective = float(solved.incumbent)

        return Sol()


class PyomoSlotSolvers(HighsSlotSolvers):
    """LPs through one Pyomo model each (ILPs unchanged)."""

    def __init__(self):
        super().__init__()
        self.times: list[float] = []

    def lp(self, worker_price, ps_price, alpha, beta, residual, gamma, max_workers):
        return _PyomoLp(
            (worker_price, ps_price, alpha, beta, residual, gamma, max_workers), self.times
        )


def _line(label: str, result) -> None:
    info = result.info
    extra = ""
    if "lps_solved" in info:
        extra = (
            f", LPs {info['lps_solved']}, {1000 * (info.get('lp_mean_time_s') or 0):.3f} ms/LP, "
            f"draws/LP {info.get('draws_per_lp') or 0:.1f}, roundings without a feasible draw "
            f"{info.get('roundings_infeasible', 0)}/{info.get('roundings', 0)}"
        )
    print(
        f"  {label:<22} {result.runtime_s:8.2f} s  status {result.status}  "
        f"utility {result.objective}{extra}"
    )


def pd_ors_paper(seeds) -> None:
    print("1. paper preset, 50 jobs, 100 machines, T = 20 (target: PD-ORS < 60 s)")
    for seed in seeds:
        inst = generate("paper", seed, jobs=50, machines=100, slots=20)
        for method in ("pd_ors", "oasis", "fifo", "drf", "dorm"):
            opts = RunOptions(time_limit_s=3600, seed=seed)
            _line(f"seed {seed} {method}", run_method("dmlrs", method, inst, opts))


def highspy_vs_pyomo() -> None:
    print("2. per-slot LPs: highspy (reused, warm-started) vs one Pyomo model per LP")
    inst = generate("paper", 0, jobs=10, machines=20, slots=10)
    settings = PdOrsSettings()
    for name, solvers in (("highspy", HighsSlotSolvers()), ("pyomo", PyomoSlotSolvers())):
        started = time.perf_counter()
        run = run_pd_ors(inst, settings, 0, Deadline(3600), solvers)
        total = time.perf_counter() - started
        utility = evaluate(inst, run.schedule).total_utility
        lps = run.info["lps_solved"]
        per_lp = (
            np.mean(solvers.times) if isinstance(solvers, PyomoSlotSolvers) and solvers.times
            else run.info["lp_mean_time_s"]
        )  # fmt: skip
        print(
            f"  {name:<8} total {total:7.2f} s, LPs {lps}, {1000 * per_lp:.3f} ms/LP, "
            f"utility {utility:.4f}"
        )


def fig9_largest() -> None:
    print("3. Fig. 9's largest point: 100 jobs, 100 machines, T = 80 (target < 10 min)")
    inst = generate("paper", 0, jobs=100, machines=100, slots=80)
    for method in ("pd_ors", "oasis"):
        _line(method, run_method("dmlrs", method, inst, RunOptions(time_limit_s=3600)))


def slot_study(seeds) -> None:
    print("4. dmlrs_slot, synthetic 100 machines: 10,000 draws (< 10 s), ILP (< 1 s)")
    fam = get_family("dmlrs_slot")
    solvers = HighsSlotSolvers()
    for seed in seeds:
        inst = fam.generate("synthetic", seed)
        lp = solvers.lp(inst.pw, inst.pps, inst.alpha, inst.beta, inst.cap, inst.gamma,
                        inst.global_batch)  # fmt: skip
        sol = lp.solve(inst.demand)
        if sol is None:
            print(f"  seed {seed}: LP infeasible (D = {inst.demand} > room)")
            continue
        data = SlotData.from_instance(inst)
        G = g_delta(inst.demand, 0.1)
        started = time.perf_counter()
        draws = draw_roundings(data, sol.w, sol.s, inst.demand, G, make_rng(seed), 10_000)
        draw_s = time.perf_counter() - started
        # the revised rule: the shrunk LP, 10,000 draws of its point, each repaired
        started = time.perf_counter()
        point = lp.solve_shrunk(inst.demand, G, *unit_caps(data)) or sol
        shrunk = draw_roundings(data, point.w, point.s, inst.demand, G, make_rng(seed), 10_000)
        fixed = repair(data, shrunk, point.w, point.s, G, inst.demand)
        repaired_s = time.perf_counter() - started
        ilp = run_method("dmlrs_slot", "ilp", inst, RunOptions(time_limit_s=60))
        print(
            f"  seed {seed}: 10,000 draws of the full LP {draw_s:6.3f} s (feasible "
            f"{draws.feasible.mean():.4f}); shrunk LP + 10,000 draws + repair {repaired_s:6.3f} s "
            f"(feasible {fixed.feasible.mean():.4f}); ILP {ilp.runtime_s:.3f} s ({ilp.status}, "
            f"solver {ilp.solver_time_s:.3f} s)"
        )


def exact_tiny(count: int) -> None:
    print(f"5. exact on tiny seeds 0-{count - 1} (target: each optimal within 60 s)")
    times, statuses = [], {}
    for seed in range(count):
        inst = generate("tiny", seed)
        result = run_method("dmlrs", "exact", inst, RunOptions(time_limit_s=60))
        times.append(result.runtime_s)
        statuses[str(result.status)] = statuses.get(str(result.status), 0) + 1
    print(
        f"  statuses {statuses}; mean {np.mean(times):.2f} s, median {np.median(times):.2f} s, "
        f"max {np.max(times):.2f} s (seed {int(np.argmax(times))})"
    )


def cli() -> None:
    print("6. CLI end to end: ddlsched solve dmlrs paper(50 jobs, 100 machines, T=20) pd_ors")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "p.json"
        generate("paper", 0).save(path)
        exe = [str(Path(sys.executable).with_name("ddlsched"))]
        started = time.perf_counter()
        subprocess.run([*exe, "solve", "dmlrs", str(path), "--method", "pd_ors", "--json"],
                       check=True, capture_output=True)  # fmt: skip
        print(f"  {time.perf_counter() - started:.2f} s")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tiny-seeds", type=int, default=100)
    ap.add_argument("--skip-large", action="store_true", help="leave out Fig. 9's point")
    args = ap.parse_args()
    print(f"cores usable: {len(os.sched_getaffinity(0))}, load {os.getloadavg()[0]:.2f}")
    pd_ors_paper([0, 1, 2])
    highspy_vs_pyomo()
    if not args.skip_large:
        fig9_largest()
    slot_study(range(10))
    exact_tiny(args.tiny_seeds)
    cli()


if __name__ == "__main__":
    main()
