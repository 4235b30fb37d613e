"""Speed of the asrpt family (its speed targets), on one core.

    taskset -c 0 python benchmarks/asrpt_speed.py            # everything
    taskset -c 0 python benchmarks/asrpt_speed.py --skip-cli --tiny-seeds 20
    taskset -c 0 python benchmarks/asrpt_speed.py --replay-only --repeat 5 --policies asrpt

Measured, side by side in one run:

1. the random forest on Philly's 80 % training split (65,797 jobs; target
   under 30 s; the paper: 80 s for 700,000 jobs), timed inside the
   whole-trace instance build (``fit`` wrapped with a timer);
2. the whole Philly trace (82,247 jobs, 250 x 8 GPUs, RF predictions,
   ``window_from="all"``) replayed under every policy through the method
   pipeline (re-evaluation included; ``theory=false`` so that the
   simulation alone is timed; targets: A-SRPT under 2 min, every baseline
   under 1 min), with the mean scheduling time per started job;
3. ``alpha_lb`` of every configuration of that instance (target: each within
   10 s, under 1 s up to 16 GPUs; the share proven), then ``lb_sum`` and
   ``lb_srpt`` with ``alpha_lb`` cached (target under 5 s);
4. ``exact`` on ``tiny`` seeds 0-99 (target: each proven optimal under 10 s);
5. what a user runs: ``ddlsched simulate asrpt`` on the whole trace, CLI
   start-up and instance build included (``--skip-cli`` to leave it out).

``--replay-only`` runs [1] and [2] only; ``--repeat N`` replays each policy N
times and prints the minimum and median of both the wall time and the CPU
time of the process (``time.process_time``: on a loaded machine the CPU time
is the comparable figure); ``--policies`` restricts [2] to a comma-separated
list.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import time

import ddlsched.workloads.asrpt_window as traces  # the module whose build_window calls fit
from ddlsched.families.asrpt import POLICIES, generate
from ddlsched.models.asrpt import alpha_lb, lb_srpt, lb_sum
from ddlsched.registry import RunOptions, run_method
from ddlsched.workloads.asrpt import tiny


def _timed_fit():
    spent = []
    original = traces.fit

    def fit(*args, **kwargs):
        started = time.perf_counter()
        out = original(*args, **kwargs)
        spent.append(time.perf_counter() - started)
        return out

    traces.fit = fit
    return spent, original


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tiny-seeds", type=int, default=100)
    ap.add_argument("--skip-cli", action="store_true")
    ap.add_argument("--replay-only", action="store_true")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--policies", default=",".join(POLICIES))
    args = ap.parse_args()
    print(f"cores usable: {len(os.sched_getaffinity(0))}, load {os.getloadavg()[0]:.2f}")

    spent, original = _timed_fit()
    started = time.perf_counter()
    inst = generate("paper", 0, trace="philly", jobs="all", window_from="all", predictor="rf")
    build = time.perf_counter() - started
    traces.fit = original
    print(f"[1] whole-Philly instance: {inst.num_jobs} jobs, {len(inst.configs)} configurations,")
    print(f"    built in {build:.1f} s, of which RF training {sum(spent):.1f} s")

    print("[2] whole-trace replay, 250 x 8 GPUs (pipeline, re-evaluation included)")
    for policy in args.policies.split(","):
        params = {"theory": False} if policy.startswith("asrpt") else {}
        opts = RunOptions(time_limit_s=600, params=params)
        walls, cpus = [], []
        for _ in range(args.repeat):
            cpu = time.process_time()
            r = run_method("asrpt", policy, inst, opts)
            cpus.append(time.process_time() - cpu)
            walls.append(r.runtime_s)
        info = r.info
        print(
            f"    {policy:<14} {r.runtime_s:7.1f} s  (simulation {info['simulation_s']:.1f} s, "
            f"mean scheduling {1e6 * info['mean_scheduling_time_s']:.1f} us/job)  "
            f"sum C = {r.objective:.6g} s, flow = {info['total_flow_s']:.6g} s, "
            f"status {r.status}"
        )
        if args.repeat > 1:
            walls.sort()
            cpus.sort()
            print(
                f"    {'':<14} {args.repeat} runs: wall min {walls[0]:.2f} s, median "
                f"{walls[len(walls) // 2]:.2f} s; CPU min {cpus[0]:.2f} s, median "
                f"{cpus[len(cpus) // 2]:.2f} s"
            )
    if args.replay_only:
        return

    print("[3] alpha_lb per configuration (placement ILP, 10 s each), then the bounds")
    worst_small = worst_all = 0.0
    proven = 0
    started = time.perf_counter()
    for config in inst.configs.values():
        t0 = time.perf_counter()
        lb = alpha_lb(inst.cluster, config, time_limit_s=10.0)
        dt = time.perf_counter() - t0
        proven += lb.proven
        worst_all = max(worst_all, dt)
        if config.num_gpus <= 16:
            worst_small = max(worst_small, dt)
    total = time.perf_counter() - started
    print(
        f"    {len(inst.configs)} configurations in {total:.1f} s; slowest {worst_all:.2f} s "
        f"(up to 16 GPUs: {worst_small:.2f} s); proven {proven}/{len(inst.configs)}"
    )
    for name, fn in (("lb_sum", lb_sum), ("lb_srpt", lb_srpt)):
        t0 = time.perf_counter()
        value = fn(inst)
        print(f"    {name:<8} {time.perf_counter() - t0:6.2f} s  bound {value:.6g} s")

    print(f"[4] exact on tiny seeds 0-{args.tiny_seeds - 1}")
    times, not_optimal = [], []
    for seed in range(args.tiny_seeds):
        r = run_method("asrpt", "exact", tiny(seed), RunOptions(time_limit_s=60))
        times.append(r.runtime_s)
        if r.status != "optimal":
            not_optimal.append(seed)
    print(
        f"    mean {sum(times) / len(times):.2f} s, max {max(times):.2f} s "
        f"(seed {times.index(max(times))}); not proven: {not_optimal or 'none'}"
    )

    if not args.skip_cli:
        print("[5] CLI: ddlsched simulate asrpt --trace philly --jobs all --set window_from=all")
        exe = shutil.which("ddlsched") or "ddlsched"
        for policy in ("asrpt", "wcs_duration"):
            cmd = [
                exe, "simulate", "asrpt", "--trace", "philly", "--jobs", "all",
                "--set", "window_from=all", "--policy", policy, "--json",
            ]  # fmt: skip
            if policy == "asrpt":
                cmd += ["--param", "theory=false"]
            t0 = time.perf_counter()
            subprocess.run(cmd, check=True, capture_output=True)
            print(f"    {policy:<14} {time.perf_counter() - t0:6.1f} s end to end")


if __name__ == "__main__":
    main()
