"""``lb_busy`` against ``lb_sum`` / ``lb_srpt`` and the best schedule on trace windows.

    python benchmarks/asrpt_comm_bound.py --seeds 0 1 --nic 1 10 [--jobs 8224]
    python benchmarks/asrpt_comm_bound.py --tiny 60
    python benchmarks/asrpt_comm_bound.py --testbed --seeds 0 1 2

``--tiny N``: on ``tiny`` and ``tiny-comm`` seeds ``0..N-1`` (every optimum
proven by ``exact``), the relative gap ``OPT / bound - 1`` of ``max(lb_sum,
lb_srpt)`` and of ``lb_busy``, and how often ``lb_busy`` is strictly better.

Per window (preset ``paper``: 250 x 8 GPUs, Philly, 0 % single-GPU as the
NIC sweep of ``benchmarks/suites/asrpt.toml``): the three bounds in flow
time (``sum r_i`` subtracted), the best schedule over the policies run
(``--policies``; flow time, evaluated; ``packed_list`` and
``packed_best_fit`` are the packed list schedules of
:mod:`ddlsched.heuristics.asrpt_packed`, ``improve:LIMIT`` the method
``improve`` with a time limit of ``LIMIT`` s, both ours), the flow-time interval width
``best schedule / best bound`` before (``max(lb_sum, lb_srpt)``) and after
(``lb_busy``), and where the bound loses: per job of the best schedule, its
achieved ``alpha_i`` over ``alpha_lb_i`` (median, p90, and the GPU-time
weighted mean), the share of the best schedule's flow time that is running
time (``sum n_i alpha_i``; the rest is waiting) and the share that is running
time above ``alpha_lb`` (``sum n_i (alpha_i - alpha_lb_i)``). A policy
``name:selection`` is a baseline with ``server_selection=selection`` (the
packing variants, ``least_free``, are not the paper's defaults).
``alone_heavy_edge``: ``sum n_i alpha~_min_i``, the flow time if every job
ran alone at Heavy-Edge's placement on the fewest servers (what the
policies' placements give on an empty cluster; not a bound).
"""

from __future__ import annotations

import argparse
import math
import statistics
import time

from ddlsched.families.asrpt import generate
from ddlsched.heuristics.asrpt_config import config_constants
from ddlsched.heuristics.asrpt_packed import packed_list_schedule
from ddlsched.models.asrpt import alpha_lbs, lb_srpt, lb_sum
from ddlsched.models.asrpt_comm_bound import lb_busy
from ddlsched.models.asrpt_exact import solve_exact
from ddlsched.problems.asrpt_schedule import evaluate
from ddlsched.registry import RunOptions, run_method
from ddlsched.sim.asrpt import simulate
from ddlsched.solvers.result import Status
from ddlsched.workloads.asrpt import tiny, tiny_comm

DEFAULT_POLICIES = (
    "wcs_subtime",
    "wcs_duration",
    "asrpt",
    "asrpt_perfect",
    "spwf",
    "wcs_subtime:least_free",
    "wcs_duration:least_free",
    "wcs_subtime:asrpt",
    "packed_list",
    "packed_best_fit",
)


#: The testbed's policies: delay_factor 0 as the paper's testbed (Sec. V-A).
TESTBED_POLICIES = (
    "asrpt:tau=0",
    "asrpt_perfect:tau=0",
    "spjf",
    "spwf",
    "wcs_duration",
    "wcs_workload",
    "wcs_subtime",
    "packed_list",
    "packed_best_fit",
)


def _paper_window(seed: int, nic: float, jobs: int):
    return generate("paper", seed, trace="philly", jobs=jobs, single_gpu_share=0.0, nic_gbps=nic)


def _run(instance, policy: str, seed: int):
    """``policy``, ``policy:selection`` (a baseline's ``server_selection``) or
    ``policy:tau=X`` (A-SRPT's ``delay_factor``), evaluated;
    ``packed_list`` / ``packed_best_fit``: the packed list schedules of
    :mod:`ddlsched.heuristics.asrpt_packed` (Heavy-Edge seed 0);
    ``improve:LIMIT``: the family's method ``improve`` (ours) through
    the method pipeline with a time limit of ``LIMIT`` s and the window's seed."""
    if policy in ("packed_list", "packed_best_fit"):
        return evaluate(instance, packed_list_schedule(instance, best_fit=policy != "packed_list"))
    if policy.startswith("improve"):
        limit = float(policy.partition(":")[2] or 60)
        options = RunOptions(time_limit_s=limit, seed=seed)
        result = run_method("asrpt", "improve", instance, options, raise_errors=True)
        return result.evaluation
    name, _, selection = policy.partition(":")
    if selection.startswith("tau="):
        knobs: dict = {"delay_factor": float(selection[4:])}
    else:
        knobs = {"server_selection": selection} if selection else {}
    return evaluate(instance, simulate(instance, name, seed=seed, **knobs))


def _window(instance, seed: int, nic: float, policies: tuple[str, ...]) -> dict[str, float]:
    started = time.perf_counter()
    releases = math.fsum(job.arrival_s for job in instance.jobs)
    lbs = alpha_lbs(instance)
    bounds = {
        "lb_sum": lb_sum(instance, alpha_lbs=lbs) - releases,
        "lb_srpt": lb_srpt(instance, alpha_lbs=lbs) - releases,
        "lb_busy": lb_busy(instance, alpha_lbs_of=lbs).value_s - releases,
    }
    flows = {}
    best = None
    for policy in policies:
        evaluation = _run(instance, policy, seed)
        flows[policy] = evaluation.total_flow_s
        if best is None or evaluation.total_flow_s < best[1].total_flow_s:
            best = (policy, evaluation)
    policy, evaluation = best
    alone_heavy_edge = math.fsum(
        job.iterations
        * config_constants(instance.cluster, instance.configs[job.config]).alpha_min_s
        for job in instance.jobs
    )
    by_id = {job.id: job for job in instance.jobs}
    ratios, weights, running, excess = [], [], 0.0, 0.0
    for job_id, alpha in zip(evaluation.job_ids, evaluation.alpha_s, strict=True):
        job = by_id[job_id]
        lb = lbs[job.config].value_s
        ratios.append(alpha / lb)
        weights.append(instance.configs[job.config].num_gpus * job.iterations * lb)
        running += job.iterations * alpha
        excess += job.iterations * (alpha - lb)
    ratios_sorted = sorted(ratios)
    old = max(bounds["lb_sum"], bounds["lb_srpt"])
    return {
        "seed": seed,
        "nic": nic,
        **bounds,
        "best_policy": policy,
        "best_flow": evaluation.total_flow_s,
        "width_old": evaluation.total_flow_s / old,
        "width_new": evaluation.total_flow_s / bounds["lb_busy"],
        "alpha_ratio_median": statistics.median(ratios),
        "alpha_ratio_p90": ratios_sorted[int(0.9 * (len(ratios) - 1))],
        "alpha_ratio_weighted": math.fsum(r * w for r, w in zip(ratios, weights, strict=True))
        / math.fsum(weights),
        "running_share": running / evaluation.total_flow_s,
        "excess_running_share": excess / evaluation.total_flow_s,
        "alone_heavy_edge": alone_heavy_edge,
        "proven_alpha_lb": sum(lb.proven for lb in lbs.values()) / len(lbs),
        "seconds": time.perf_counter() - started,
        **{f"flow[{p}]": f for p, f in flows.items()},
    }


def _tiny_gaps(count: int) -> None:
    for name, make in (("tiny", tiny), ("tiny-comm", tiny_comm)):
        old, new = [], []
        for seed in range(count):
            instance = make(seed)
            out = solve_exact(instance, time_limit_s=60)
            if out.status is not Status.OPTIMAL:
                raise SystemExit(f"{name} seed {seed}: exact did not prove an optimum")
            optimum = evaluate(instance, out.schedule).total_completion_s
            lbs = alpha_lbs(instance)
            before = max(lb_sum(instance, alpha_lbs=lbs), lb_srpt(instance, alpha_lbs=lbs))
            after = lb_busy(instance, alpha_lbs_of=lbs).value_s
            if after > optimum * (1 + 1e-9):
                raise SystemExit(f"{name} seed {seed}: lb_busy {after} above OPT {optimum}")
            old.append(optimum / before - 1)
            new.append(optimum / after - 1)
        better = sum(b < a - 1e-6 for a, b in zip(old, new, strict=True))
        print(
            f"{name}: {count} instances, lb_busy strictly better on {better}; gap OPT/bound-1 "
            f"mean {statistics.mean(old):.3f} -> {statistics.mean(new):.3f}, "
            f"max {max(old):.3f} -> {max(new):.3f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--nic", type=float, nargs="+", default=[1.0, 10.0])
    parser.add_argument("--jobs", type=int, default=8224)
    parser.add_argument("--policies", default=",".join(DEFAULT_POLICIES))
    parser.add_argument("--tiny", type=int, default=0, help="gaps on tiny presets instead")
    parser.add_argument("--testbed", action="store_true", help="preset testbed (seeds) instead")
    args = parser.parse_args()
    if args.tiny:
        _tiny_gaps(args.tiny)
        return
    policies = tuple(p for p in args.policies.split(",") if p)
    windows = [
        (seed, nic, lambda s=seed, n=nic: _paper_window(s, n, args.jobs))
        for nic in args.nic
        for seed in args.seeds
    ]
    if args.testbed:
        windows = [(seed, math.nan, lambda s=seed: generate("testbed", s)) for seed in args.seeds]
        if args.policies == ",".join(DEFAULT_POLICIES):
            policies = TESTBED_POLICIES
    for seed, nic, build in windows:
        row = _window(build(), seed, nic, policies)
        print(
            " ".join(
                f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()
            ),
            flush=True,
        )


if __name__ == "__main__":
    main()
