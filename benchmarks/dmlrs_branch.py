"""``ub_branch`` (dmlrs): a bound on proven optima, and what it closes on the widest intervals.

    python benchmarks/dmlrs_branch.py --validity
    python benchmarks/dmlrs_branch.py --paper --nodes 1,100,1000,10000

``--validity``: the sets of ``benchmarks/dmlrs_lagrange_validity.py`` (``tiny`` seeds 0-59,
``tiny`` congested seeds 0-39, ``micro`` seeds 0-9 as generated and congested, those
brute-forced too; ``--tiny``, ``--congested``, ``--micro`` change the counts). Per instance:
``exact``'s proven optimum (the plain compact MILP), ``ub_capacity`` and ``ub_branch`` at
``--validity-nodes`` node LPs (both through :func:`ddlsched.registry.run_method`). Printed
per set: instances, proven, violations (a bound below a proven optimum by more than 1e-6
relative: must be 0), instances where ``ub_branch`` is below ``ub_capacity``, the mean and
largest gap of each bound to the optimum in % of it, and why the searches stopped: at the
capacity MILP's optimum (``integral``), every node closed by the ``fifo``/``drf`` incumbent
(``closed``: the bound is that schedule's utility, the optimum), or at the node budget.

``--paper``: the instances of ``benchmarks/dmlrs_lagrange_paper.py``'s points, generated
exactly as ``benchmarks/suites/dmlrs.toml`` does (``--points``, default Fig. 6 at 20
machines seeds 1 and 12, Fig. 8 at 100 jobs seed 0). Per instance: ``ub_capacity``, its
MILP with binary completion choices (``integral=true``, at most ``--milp-limit`` s: the
limit of any branching on these columns), the root's profile (jobs the LP accepts wholly,
in part, with a spread completion), then per budget in ``--nodes`` ``ub_branch``'s bound,
seconds, why it stopped, open nodes and the spread of their bounds, and acceptance-only
branching (``completion=false``) at the largest budget. The interval columns divide by
the schedule utility of ``improve`` in the suite's rows (:data:`IMPROVE`), or by a fresh
``improve`` run at the suite's 120 s limit with ``--improve``.

``--leaves POINT:SEED:JOBS`` (e.g. ``fig6-20:1:44,46,12``): the node LP (``ub_capacity``'s)
with the acceptance of the listed jobs fixed to each of the ``2^k`` combinations, one line
each: its bound, or ``infeasible``; the acceptance-only tree on those jobs, written out.

``--lagrange-leaves POINT:SEED:JOBS``: at each of those leaves, besides the node LP, the
Lagrangian of the per-machine capacity rows (``ub_lagrange``'s ``L(p)``) restricted to the
leaf, at the leaf's LP duals (the summed capacity rows of ``ub_capacity``'s LP without
packing rows, the same price on every machine; no subgradient steps): a rejected job
contributes nothing, a free one ``lambda_i(p) = max(0, best priced schedule)``, an accepted
one its best *non-empty* priced schedule, which may be negative. That forced maximum is the
pricer's answer with every completion utility raised by ``M = sum_{h, r, t} p C + 1``, less
``M``: any single-job schedule's priced usage is at most ``p C`` (it fits the capacities),
so with the raise the empty schedule never wins, and the pricer's dual bound less ``M`` is
at least the forced maximum. Each schedule in the leaf earns at most ``L_leaf(p)`` (the
Lagrangian argument of :mod:`ddlsched.models.dmlrs_lagrange` with the leaf's jobs fixed),
so ``max over leaves of min(node LP, L_leaf)`` bounds every schedule: a diagnostic of how
far a Lagrangian node bound would take the branching (``ub_branch`` does not use it).

``--sweep GROUPS`` (e.g. ``fig6,fig7,fig8``, seeds ``--seeds``): every instance of those
groups of ``benchmarks/suites/dmlrs.toml`` (:data:`SWEEPS`, its ``T = 20`` figures), one
line each: ``ub_capacity``, its MILP (``integral=true`` at ``--milp-limit`` s) and
``ub_branch`` at ``--validity-nodes`` node LPs, each with its seconds and how far below
``ub_capacity`` it is: what running either in the suite would cost and give.
"""

from __future__ import annotations

import argparse
import statistics
import time

from dmlrs_lagrange_paper import POINTS
from dmlrs_lagrange_validity import print_validity, proven_optimum, validity_sets

import ddlsched.families.dmlrs  # noqa: F401  (registers the family's methods)
from ddlsched.registry import RunOptions, run_method
from ddlsched.workloads.dmlrs import generate

TOL = 1e-6

#: ``improve``'s utility in the suite's rows (the reproduce runs of 2026-11-29: Fig. 6 seed 1
#: and Fig. 8 seed 0 from the claims' seeds run, Fig. 6 seed 12 from the fresh-seed run).
IMPROVE = {("fig6-20", 1): 996.619953, ("fig6-20", 12): 1018.590504, ("fig8-100", 0): 3017.660456}


#: The suite's ``T = 20`` groups: name -> (fixed parameters, swept parameter, its values).
SWEEPS = {
    "fig6": ({"jobs": 50, "slots": 20}, "machines", (10, 20, 40, 60, 80, 100)),
    "fig7": ({"machines": 100, "slots": 20}, "jobs", (10, 20, 30, 40, 50)),
    "fig8": ({"machines": 50, "slots": 20}, "jobs", (20, 40, 60, 80, 100)),
}


def sweep(args: argparse.Namespace) -> None:
    """The ``--sweep`` table (module docstring)."""
    print(
        "| instance | `ub_capacity` (s) | capacity MILP (s, status) | below | `ub_branch` "
        "(s, stop, nodes) | below |"
    )
    print("|---|---|---|---|---|---|")
    for group in args.sweep.split(","):
        fixed, key, values = SWEEPS[group]
        for value in values:
            for seed in (int(s) for s in args.seeds.split(",")):
                instance = generate("paper", seed, **fixed, **{key: value})
                capacity, capacity_s = _run("ub_capacity", instance, 600)
                milp, milp_s = _run("ub_capacity", instance, args.milp_limit, {"integral": True})
                branch, branch_s = _run("ub_branch", instance, 3600, {"nodes": args.validity_nodes})
                top = capacity.bound
                cells = [
                    f"{group} {key}={value} seed {seed}",
                    f"{top:.2f} ({capacity_s:.1f})",
                    f"{milp.bound:.2f} ({milp_s:.0f}, {milp.info.get('milp_status')})",
                    f"{100.0 * (1.0 - milp.bound / top):.2f} %" if top > 0 else "-",
                    f"{branch.bound:.2f} ({branch_s:.0f}, {branch.info['search_stopped']}, "
                    f"{branch.info['nodes_solved']})",
                    f"{100.0 * (1.0 - branch.bound / top):.2f} %" if top > 0 else "-",
                ]
                print("| " + " | ".join(cells) + " |", flush=True)


def _run(method: str, instance, limit_s: float, params: dict | None = None):
    started = time.perf_counter()
    options = RunOptions(time_limit_s=limit_s, seed=0, params=params or {})
    return run_method("dmlrs", method, instance, options), time.perf_counter() - started


def _check(instance, nodes: int, brute: bool) -> dict:
    """One instance of ``--validity`` (module docstring)."""
    row = proven_optimum(instance, brute)
    row["ub_capacity"] = _run("ub_capacity", instance, 600)[0].bound
    branch = _run("ub_branch", instance, 600, {"nodes": nodes})[0]
    row["ub_branch"], row["stop"] = branch.bound, branch.info.get("search_stopped")
    return row


def _report(name: str, rows: list[dict]) -> str:
    proven = [r for r in rows if r["proven"]]
    keys = ("ub_capacity", "ub_branch")
    wrong = sum(r[k] < r["opt"] - TOL * max(1.0, r["opt"]) for r in proven for k in keys)
    below = sum(r["ub_branch"] < r["ub_capacity"] - TOL for r in rows)
    cells = [name, str(len(rows)), str(len(proven)), str(wrong), str(below)]
    for key in keys:
        gaps = [100.0 * (r[key] / r["opt"] - 1.0) for r in proven if r["opt"] > 0]
        cells.append(f"{statistics.fmean(gaps):.2f} / {max(gaps):.2f}" if gaps else "-")
    stops = ("integral", "closed", "nodes")
    cells.append(" / ".join(str(sum(r["stop"] == stop for r in rows)) for stop in stops))
    return "| " + " | ".join(cells) + " |"


def validity(args: argparse.Namespace) -> None:
    """The ``--validity`` table (module docstring)."""
    print_validity(
        validity_sets(args.tiny, args.congested, args.micro),
        "| set | instances | proven | violations | `ub_branch` < `ub_capacity` | "
        "`ub_capacity` gap mean / max % | `ub_branch` gap mean / max % | stopped: integral / "
        "closed / nodes |",
        lambda instance, brute: _check(instance, args.validity_nodes, brute),
        _report,
    )


def paper(args: argparse.Namespace) -> None:
    """The ``--paper`` tables (module docstring)."""
    budgets = [int(n) for n in args.nodes.split(",")]
    print(
        "| instance | `improve` | `ub_capacity` | capacity MILP (s) | root: accepted / "
        "in part / spread | nodes | `ub_branch` | s | stop | open | open spread | interval |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for spec in args.points.split(","):
        point, seed_text = spec.split(":")
        seed = int(seed_text)
        instance = generate("paper", seed, **POINTS[point])
        if args.improve:
            utility = _run("improve", instance, 120)[0].objective
        else:
            utility = IMPROVE[(point, seed)]
        capacity = _run("ub_capacity", instance, 600)[0].bound
        milp, milp_s = _run("ub_capacity", instance, args.milp_limit, {"integral": True})
        milp_cell = f"{milp.bound:.2f} ({milp_s:.0f} s, {milp.info.get('milp_status')})"
        runs = [(n, True) for n in budgets] + [(max(budgets), False)]
        for nodes, completion in runs:
            params = {"nodes": nodes, "completion": completion}
            result, seconds = _run("ub_branch", instance, args.limit, params)
            info = result.info
            width = 100.0 * (result.bound / utility - 1.0)
            cells = [
                f"{point} seed {seed}",
                f"{utility:.2f}",
                f"{capacity:.2f} ({100.0 * (capacity / utility - 1.0):.2f} %)",
                milp_cell,
                f"{info['accepted']} / {info['fractional_acceptance']} / "
                f"{info['spread_completion']}",
                f"{info['nodes_solved']}" + ("" if completion else " (acceptance only)"),
                f"{result.bound:.2f}",
                f"{seconds:.1f}",
                str(info["search_stopped"]),
                str(info["nodes_open"]),
                f"{info['open_bound_spread']:.2f}",
                f"{width:.2f} %",
            ]
            print("| " + " | ".join(cells) + " |", flush=True)


def leaves(spec: str) -> None:
    """The ``--leaves`` table (module docstring)."""
    import itertools

    from ddlsched.models.dmlrs_branch import NodeLp
    from ddlsched.models.dmlrs_capacity import build_capacity_model

    point, seed_text, jobs_text = spec.split(":")
    instance = generate("paper", int(seed_text), **POINTS[point])
    jobs = [int(j) for j in jobs_text.split(",")]
    model = build_capacity_model(instance)
    lp = NodeLp(model)
    T = instance.slots
    root = lp.solve({}, None, float("inf"))
    accepted = [float(root[2][model.slot_columns[(j, T)][0]]) for j in jobs]
    print(f"root LP {root[1]:.2f}; acceptance of jobs {jobs}: {[round(a, 4) for a in accepted]}")
    print("| " + " | ".join(f"job {j}" for j in jobs) + " | node LP |")
    print("|" + "---|" * (len(jobs) + 1))
    for combo in itertools.product((0.0, 1.0), repeat=len(jobs)):
        fixings = {model.slot_columns[(j, T)][0]: (v, v) for j, v in zip(jobs, combo, strict=True)}
        status, value, _ = lp.solve(fixings, None, float("inf"))
        cells = [("accepted" if v else "rejected") for v in combo]
        cells.append(f"{value:.2f}" if value is not None else status)
        print("| " + " | ".join(cells) + " |", flush=True)


def _leaf_prices(instance, fixings: dict[int, float]):
    """The capacity rows' duals of the LP without packing rows under acceptance
    ``fixings`` (job -> 0 or 1), as prices ``(H, R, T)``; ``None`` if infeasible."""
    import numpy as np

    from ddlsched.models.dmlrs_branch import NodeLp
    from ddlsched.models.dmlrs_capacity import build_capacity_model

    model = build_capacity_model(instance, dff=0)
    lp = NodeLp(model)
    T = instance.slots
    if any(v and (j, T) not in model.slot_columns for j, v in fixings.items()):
        return None, None  # accepted, but it cannot finish by T
    cols = {
        model.slot_columns[(j, T)][0]: (v, v)
        for j, v in fixings.items()
        if (j, T) in model.slot_columns
    }
    status, value, _ = lp.solve(cols, None, float("inf"))
    if status != "optimal":
        return None, None
    duals = np.asarray(lp.highs.getSolution().row_dual)
    prices = np.zeros((instance.num_machines, len(instance.resources), T))
    for (t, r), row in model.capacity_rows.items():
        prices[:, r, t - 1] = max(0.0, float(duals[row]))
    return value, prices


def _leaf_lagrangian(instance, fixings: dict[int, float], prices) -> float:
    """``L_leaf(p)`` of the module docstring (``--lagrange-leaves``)."""
    import dataclasses
    import math

    import numpy as np

    from ddlsched.models.dmlrs_dual import PricingSession
    from ddlsched.models.dmlrs_milp import job_costs, job_data
    from ddlsched.solvers.dmlrs_pricing import SingleJobPricer

    session = PricingSession(instance, "milp", "highs")
    price_term = float(np.sum(prices * instance.cap[:, :, None]))
    total = [price_term]
    for i in range(len(instance.jobs)):
        if fixings.get(i) == 0.0:
            continue
        if fixings.get(i) != 1.0:
            total.append(session.price(i, prices).dual_bound)
            continue
        data = job_data(instance, i)
        raise_by = price_term + 1.0
        pricer = SingleJobPricer(dataclasses.replace(data, utility=data.utility + raise_by))
        worker_cost, ps_cost = job_costs(instance, i, prices)[:2]
        solution = pricer.solve(worker_cost, ps_cost, math.inf)
        if solution.dual_bound is None:
            raise RuntimeError(f"job {i}: forced pricing ended {solution.status}")
        total.append(solution.dual_bound - raise_by)
    return math.fsum(total)


def lagrange_leaves(spec: str) -> None:
    """The ``--lagrange-leaves`` table (module docstring)."""
    import itertools

    point, seed_text, jobs_text = spec.split(":")
    instance = generate("paper", int(seed_text), **POINTS[point])
    jobs = [int(j) for j in jobs_text.split(",")]
    print("| " + " | ".join(f"job {j}" for j in jobs) + " | LP, no packing rows | L_leaf(p) | s |")
    print("|" + "---|" * (len(jobs) + 3))
    best = 0.0
    for combo in itertools.product((0.0, 1.0), repeat=len(jobs)):
        started = time.perf_counter()
        fixings = dict(zip(jobs, combo, strict=True))
        value, prices = _leaf_prices(instance, fixings)
        cells = [("accepted" if v else "rejected") for v in combo]
        if value is None:
            cells += ["infeasible", "-", "-"]
        else:
            lagrangian = _leaf_lagrangian(instance, fixings, prices)
            best = max(best, min(value, lagrangian))
            cells += [f"{value:.2f}", f"{lagrangian:.2f}", f"{time.perf_counter() - started:.0f}"]
        print("| " + " | ".join(cells) + " |", flush=True)
    print(f"max over leaves of min(LP, L_leaf): {best:.2f}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--validity", action="store_true")
    parser.add_argument("--tiny", type=int, default=60)
    parser.add_argument("--congested", type=int, default=40)
    parser.add_argument("--micro", type=int, default=10)
    parser.add_argument("--validity-nodes", type=int, default=2000)
    parser.add_argument("--paper", action="store_true")
    parser.add_argument("--points", default="fig6-20:1,fig6-20:12,fig8-100:0")
    parser.add_argument("--nodes", default="1,100,1000,10000")
    parser.add_argument("--limit", type=float, default=3600.0, help="ub_branch's time limit")
    parser.add_argument("--milp-limit", type=float, default=600.0)
    parser.add_argument("--improve", action="store_true", help="run improve (120 s)")
    parser.add_argument("--leaves", default="", help="POINT:SEED:JOBS, e.g. fig6-20:1:44,46")
    parser.add_argument("--lagrange-leaves", default="", help="POINT:SEED:JOBS")
    parser.add_argument("--sweep", default="", help="suite groups, e.g. fig6,fig7,fig8")
    parser.add_argument("--seeds", default="0,1,2", help="instance seeds of --sweep")
    args = parser.parse_args(argv)
    if not (args.validity or args.paper or args.leaves or args.sweep or args.lagrange_leaves):
        parser.error("give --validity, --paper, --leaves, --lagrange-leaves or --sweep")
    if args.lagrange_leaves:
        lagrange_leaves(args.lagrange_leaves)
    if args.sweep:
        sweep(args)
    if args.leaves:
        leaves(args.leaves)
    if args.validity:
        validity(args)
    if args.paper:
        paper(args)


if __name__ == "__main__":
    main()
