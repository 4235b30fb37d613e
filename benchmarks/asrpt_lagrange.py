"""``lb_lagrange`` (ours) against ``lb_sum`` / ``lb_busy`` and the best schedule on trace windows.

    python benchmarks/asrpt_lagrange.py --seeds 0 1 2 --nic 1 10 [--jobs 8224]
    python benchmarks/asrpt_lagrange.py --testbed --seeds 0 1 2
    python benchmarks/asrpt_lagrange.py --tiny 60

Per window (preset ``paper``, Philly, 0 % single-GPU, as the NIC sweep of
``benchmarks/suites/asrpt.toml``; ``--testbed``: preset ``testbed``), in flow
time (``sum r_i`` subtracted): ``lb_sum``, ``lb_busy``, the Lagrangian
(:mod:`ddlsched.models.asrpt_lagrange`, default slots and iterations unless
``--slots`` / ``--iterations``) with its run time, and the room the capacity
relaxation (R) leaves: its list schedule (``relaxation_ub``, what the method
records) and the better of three serial schedules of (R) with insertion
(jobs in release order, release then duration, and release + duration
order; this script only). No bound derived from (R) exceeds either. The best
schedule: the best of ``--policies`` (the suite's policies and the packed
witness of ``benchmarks/asrpt_comm_bound.py``), evaluated; the widths are
best schedule / bound.

``--tiny N``: on ``tiny`` and ``tiny-comm`` seeds ``0..N-1`` (optima proven by
``exact``), the gap ``OPT / bound - 1`` of ``lb_busy`` and of ``lb_lagrange``
(the larger of the Lagrangian and ``lb_busy``, as the method reports), and
how often the Lagrangian is strictly better.
"""

from __future__ import annotations

import argparse
import math
import statistics
import time

import numpy as np
from asrpt_comm_bound import _run

from ddlsched.families.asrpt import generate
from ddlsched.models.asrpt import alpha_lbs, lb_sum
from ddlsched.models.asrpt_comm_bound import lb_busy
from ddlsched.models.asrpt_exact import solve_exact
from ddlsched.models.asrpt_lagrange import DEFAULT_ITERATIONS, DEFAULT_SLOTS, lb_lagrange
from ddlsched.problems.asrpt_schedule import evaluate
from ddlsched.solvers.result import Status
from ddlsched.workloads.asrpt import tiny, tiny_comm

DEFAULT_POLICIES = ("wcs_subtime", "wcs_duration", "asrpt", "asrpt_perfect", "spwf", "packed_list")
TESTBED_POLICIES = ("wcs_subtime", "wcs_duration", "asrpt:tau=0", "asrpt_perfect:tau=0", "spwf")


def inserted_starts(releases, durations, gpus, total_gpus: float, order) -> np.ndarray:
    """Serial schedule of the relaxation (R): jobs in ``order``, each at the earliest
    ``s >= r_i`` at which ``g_i`` of the ``G`` GPUs stay free for ``p_i`` (insertion into
    the usage profile allowed). Feasible for (R), so its ``sum C_i`` bounds ``OPT(R)`` above."""
    times, usage = np.array([0.0]), np.array([0.0])  # usage on [times[k], times[k + 1])
    starts = np.zeros(len(releases))
    for i in order:
        r, p, g = float(releases[i]), float(durations[i]), float(gpus[i])
        blocked = usage > total_gpus - g
        seg_end = np.append(times[1:], np.inf)
        first = ~blocked & np.concatenate(([True], blocked[:-1]))
        last = ~blocked & np.concatenate((blocked[1:], [True]))
        run_from, run_to = np.maximum(times[first], r), seg_end[last]
        s = float(run_from[run_to - run_from >= p].min())
        starts[i] = s
        for t in (s, s + p):
            k = np.searchsorted(times, t, side="right") - 1
            if times[k] != t:
                times, usage = np.insert(times, k + 1, t), np.insert(usage, k + 1, usage[k])
        usage[np.searchsorted(times, s) : np.searchsorted(times, s + p)] += g
    return starts


def _relaxation_room(instance, lbs) -> float:
    """``sum C_i`` of the best of the three serial schedules of (R) (module docstring)."""
    r = np.array([job.arrival_s for job in instance.jobs])
    p = np.array([job.iterations * lbs[job.config].value_s for job in instance.jobs])
    g = np.array([instance.configs[job.config].num_gpus for job in instance.jobs], dtype=float)
    index = np.arange(len(r))
    orders = (np.lexsort((index, r)), np.lexsort((index, p, r)), np.lexsort((index, r + p)))
    G = instance.cluster.num_gpus
    return min(math.fsum(inserted_starts(r, p, g, G, order) + p) for order in orders)


def _window(instance, seed: int, label: str, policies, slots: int, iterations: int) -> dict:
    releases = math.fsum(job.arrival_s for job in instance.jobs)
    lbs = alpha_lbs(instance)
    row: dict = {"seed": seed, "point": label, "jobs": instance.num_jobs}
    row["lb_sum"] = lb_sum(instance, alpha_lbs=lbs) - releases
    row["lb_busy"] = lb_busy(instance, alpha_lbs_of=lbs).value_s - releases
    started = time.perf_counter()
    out = lb_lagrange(instance, alpha_lbs_of=lbs, slots=slots, iterations=iterations)
    row["lagrange_s"] = time.perf_counter() - started
    row["lagrangian"] = out.value_s - releases
    row["lb_lagrange"] = max(out.value_s - releases, row["lb_busy"])
    row["gain"] = row["lb_lagrange"] / row["lb_busy"] - 1
    row["iterations"], row["stopped"] = out.iterations, out.stopped
    row["relax_list"] = out.relaxation_ub_s - releases
    row["relax_inserted"] = _relaxation_room(instance, lbs) - releases
    row["room"] = min(row["relax_list"], row["relax_inserted"]) / row["lb_lagrange"] - 1
    best = min(((p, _run(instance, p, seed).total_flow_s) for p in policies), key=lambda x: x[1])
    row["best"], row["best_flow"] = best
    row["width_busy"] = best[1] / row["lb_busy"] - 1
    row["width_lagrange"] = best[1] / row["lb_lagrange"] - 1
    return row


def _tiny_gaps(count: int, slots: int, iterations: int) -> None:
    for name, make in (("tiny", tiny), ("tiny-comm", tiny_comm)):
        old, new, seconds = [], [], []
        for seed in range(count):
            instance = make(seed)
            out = solve_exact(instance, time_limit_s=60)
            if out.status is not Status.OPTIMAL:
                raise SystemExit(f"{name} seed {seed}: exact did not prove an optimum")
            optimum = evaluate(instance, out.schedule).total_completion_s
            lbs = alpha_lbs(instance)
            busy = lb_busy(instance, alpha_lbs_of=lbs).value_s
            started = time.perf_counter()
            lagrange = lb_lagrange(instance, alpha_lbs_of=lbs, slots=slots, iterations=iterations)
            seconds.append(time.perf_counter() - started)
            after = max(busy, lagrange.value_s)
            if after > optimum * (1 + 1e-9):
                raise SystemExit(f"{name} seed {seed}: lb_lagrange {after} above OPT {optimum}")
            old.append(optimum / busy - 1)
            new.append(optimum / after - 1)
        better = sum(b < a - 1e-6 for a, b in zip(old, new, strict=True))
        print(
            f"{name}: {count} instances, lb_lagrange strictly above lb_busy on {better}; gap "
            f"OPT/bound-1 mean {statistics.mean(old):.3f} -> {statistics.mean(new):.3f}, max "
            f"{max(old):.3f} -> {max(new):.3f}; Lagrangian {statistics.median(seconds):.3f} s "
            f"median, {max(seconds):.3f} s max"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--nic", type=float, nargs="+", default=[1.0, 10.0])
    parser.add_argument("--jobs", type=int, default=8224)
    parser.add_argument("--policies", default=None, help="comma-separated (default: see source)")
    parser.add_argument("--slots", type=int, default=DEFAULT_SLOTS)
    parser.add_argument("--iterations", type=int, default=DEFAULT_ITERATIONS)
    parser.add_argument("--tiny", type=int, default=0, help="gaps on tiny presets instead")
    parser.add_argument("--testbed", action="store_true", help="preset testbed (seeds) instead")
    args = parser.parse_args()
    if args.tiny:
        _tiny_gaps(args.tiny, args.slots, args.iterations)
        return
    default = TESTBED_POLICIES if args.testbed else DEFAULT_POLICIES
    policies = tuple(args.policies.split(",")) if args.policies else default
    if args.testbed:
        windows = [(s, "testbed", lambda s=s: generate("testbed", s)) for s in args.seeds]
    else:
        windows = [
            (seed, f"nic={nic:g}", lambda s=seed, n=nic: generate(
                "paper", s, trace="philly", jobs=args.jobs, single_gpu_share=0.0, nic_gbps=n
            ))
            for nic in args.nic
            for seed in args.seeds
        ]  # fmt: skip
    for seed, label, build in windows:
        row = _window(build(), seed, label, policies, args.slots, args.iterations)
        print(
            " ".join(
                f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()
            ),
            flush=True,
        )


if __name__ == "__main__":
    main()
