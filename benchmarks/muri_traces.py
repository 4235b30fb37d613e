"""Muri and its six baselines on the vendored Muri traces 1-4 (Figs. 9-10 of the paper).

Runs every policy of :mod:`ddlsched.sim.muri` on traces 1-4 in the
``reference`` configuration (the model of the authors' simulator) or in
``paper`` mode, prints average JCT, makespan, p99 JCT, queue length and GPU
utilisation, the raw numbers published in the original simulator's
``simulator/draw_fig9-10.py`` next to ours, and Muri's improvement over the
best baseline (Muri-S against SRTF/SRSF, Muri-L against Tiresias, AntMan,
Themis) next to the paper's claims; writes a JSON file and a figure.

The simulations run as a benchmark suite through the platform (family
``muri_sim``, the same path as ``ddlsched simulate muri`` and
``benchmarks/suites/muri-traces.toml``): results go to a resumable results
directory (``--results``, default ``results/muri-traces-<mode>[-<traces>]``),
so an interrupted run continues where it stopped, and a finished one is
only tabulated again.

    python benchmarks/muri_traces.py --workers 2 [--mode paper] [--traces 1,2,3,4]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from ddlsched.bench.runner import run_suite
from ddlsched.bench.suite import parse_suite
from ddlsched.bench.tables import load_results
from ddlsched.sim.muri import POLICIES

# draw_fig9-10.py raw values, columns [trace1, trace1_pr, trace2, trace2_pr, trace3, trace3_pr,
# trace4, trace4_pr] ("_pr": every submit time 0, the paper's traces 1'-4'): avg JCT, makespan, p99 JCT.
_COLUMNS = ["1", "1_pr", "2", "2_pr", "3", "3_pr", "4", "4_pr"]
_RAW = {
    "srtf": (
        [
            1370603.198,
            2303543.816,
            2665607.375,
            4079154.454,
            193081.796,
            844394.78,
            581982.9002,
            1430856.446,
        ],
        [
            26045465.532945,
            24513543.937825,
            48847005.197635,
            48697594.999386,
            8174135.28,
            7261795.828,
            14787990.59235,
            14272665.007687,
        ],
        [
            16647148.09074,
            19871388.29092,
            33128484.196403,
            36640840.003736,
            4538890.607,
            6363099.549,
            7768533.005,
            9443500.203,
        ],
    ),
    "srsf": (
        [
            980140.5699,
            1801859.995,
            2213949.687,
            3384600.437,
            185021.8802,
            798057.6829,
            487167.1688,
            1218501.968,
        ],
        [
            26065759.044845,
            24272529.59311,
            49026465.31107,
            47972347.554251,
            8174135.28,
            6907790.403,
            14887908.86639,
            14426755.371188,
        ],
        [
            15529913.227905,
            18267307.81118,
            31241250.835485,
            34656644.081924,
            4189699.177,
            6228160.594,
            7372568.184,
            9227908.326,
        ],
    ),
    "muri-s": (
        [
            867705.7941,
            1467191.905,
            1342400.019,
            2325962.044,
            85502.55387,
            537776.6163,
            365467.8911,
            954225.2866,
        ],
        [
            18446535.222645,
            16596420.784624,
            34163947.020445,
            32250093.334499,
            8174135.28,
            4400674.99,
            11029124.28025,
            9990192.513,
        ],
        [
            10618148.302723,
            13395942.722876,
            19994293.572932,
            23106016.887981,
            992405.062,
            4105513.658,
            3734840.823,
            6575927.929,
        ],
    ),
    "tiresias": (
        [
            3330371.307,
            6921682.793,
            7396368.514,
            10555502.040026,
            347213.2481,
            2213110.128,
            1319382.936,
            2674022.636,
        ],
        [
            23556410.217355,
            21990477.824095,
            48117093.307735,
            47686997.556889,
            8174226.28,
            6761641.42,
            13073838.61827,
            12584603.56365,
        ],
        [
            14739851.5052,
            21765400.784095,
            37913098.47143,
            44369455.221804,
            4983397.254,
            6739568.999,
            8663311.856,
            11219877.952119,
        ],
    ),
    "antman": (
        [
            5476391.317,
            9808250.677,
            15647814.621178,
            18163389.280198,
            305453.9407,
            2674393.018,
            2212462.719,
            4676092.801,
        ],
        [
            21788668.549359,
            20285085.619635,
            48176959.246035,
            48327650.120433,
            8174140.28,
            5799634.744,
            12292270.736001,
            11793469.427804,
        ],
        [
            13690482.492206,
            20130532.648104,
            38571847.994149,
            45081678.610968,
            3904420.793,
            5772254.906,
            6438230.798,
            9940651.791,
        ],
    ),
    "themis": (
        [
            1823179.078,
            3314303.178,
            4628171.542,
            12529490.82,
            397058.802,
            1502768.219,
            994970.736,
            2271053.053,
        ],
        [
            24658268.63,
            23369493.47,
            47292466.46,
            49310174.59,
            8172104.51,
            6760041.974,
            13793094.42,
            13471484.42,
        ],
        [
            17159064.05,
            20555281.24,
            37238062.11,
            44858584.44,
            2967333.366,
            6496197.725,
            7968471.987,
            10157394.49,
        ],
    ),
    "muri-l": (
        [
            1072009.71,
            2141936.535,
            2544642.351,
            4152485.536,
            88686.97313,
            921094.7449,
            429174.8679,
            1488033.596,
        ],
        [
            18593245.706217,
            16639500.393368,
            32826803.046468,
            31782578.758801,
            8174135.28,
            4403652.203,
            10918239.071764,
            10104721.762665,
        ],
        [
            11322989.635491,
            13214336.412037,
            22192059.12894,
            24767218.772922,
            927167.0483,
            4167478.347,
            4719318.299,
            6383955.683,
        ],
    ),
}


def published(policy: str, metric_index: int, trace: str) -> float:
    return _RAW[policy][metric_index][_COLUMNS.index(trace)]


METRICS = ("average_jct_s", "makespan_s", "p99_jct_s")
BASELINES = {"muri-s": ("srtf", "srsf"), "muri-l": ("tiresias", "antman", "themis")}


# The order tasks start in: the longest simulations first (trace 2, then the Muri policies).
ORDER = ["muri-l", "muri-s", "themis", "tiresias", "srsf", "srtf", "antman"]


def trace_suite(traces: list[str], mode: str):
    """The trace study as a suite of the ``muri_sim`` family."""
    return parse_suite(
        {
            "suite": {"name": f"muri-traces-{mode}"},
            "limits": {"time_limit_s": 3600, "kill_after_s": 5400, "memory_mb": 8192},
            "instances": [
                {
                    "family": "muri_sim",
                    "preset": "trace",
                    "seeds": [0],
                    "params": {"trace": f"trace{t}", "mode": mode},
                    "group": f"trace{t}",
                }
                for t in sorted(traces, key=lambda t: not t.startswith("2"))
            ],
            "methods": [{"name": p} for p in ORDER],
        }
    )


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--mode", default="reference")
    ap.add_argument("--traces", default="1,2,3,4")
    ap.add_argument("--results", default=None, help="results directory (resumable)")
    ap.add_argument("--out", default=None)
    ap.add_argument("--figure", default=None)
    args = ap.parse_args()
    traces = args.traces.split(",")
    tag = args.mode + ("" if args.traces == "1,2,3,4" else "-" + args.traces.replace(",", "-"))
    results_dir = Path(args.results or f"results/muri-traces-{tag}")
    started = time.perf_counter()
    summary = run_suite(trace_suite(traces, args.mode), results_dir, workers=args.workers)
    wall = time.perf_counter() - started
    frame = load_results(results_dir)
    failed = frame[frame["status"] != "feasible"]
    if len(failed):
        raise SystemExit(f"{len(failed)} simulation(s) failed: {failed[['group', 'label', 'error']]}")
    ours = {
        (row.group.removeprefix("trace"), row.label): json.loads(row.metrics)
        for row in frame.itertuples()
    }
    tasks = list(ours)
    results = [(t, p, m) for (t, p), m in ours.items()]
    print(
        f"mode {args.mode}: {len(tasks)} simulations ({summary.done} run now, {summary.skipped} "
        f"already in {results_dir}) in {wall:.1f} s wall on {args.workers} workers\n"
    )
    print(
        "| trace | policy | avg JCT (s) | published | diff | makespan (s) | published | diff | p99 JCT (s) | published | diff | queue | util | run s |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for t in traces:
        for p in POLICIES:
            s = ours[(t, p)]
            cells = []
            for i, key in enumerate(METRICS):
                pub = published(p, i, t)
                cells += [f"{s[key]:.10g}", f"{pub:.10g}", f"{s[key] / pub - 1:+.2e}"]
            print(
                f"| {t} | {p} | "
                + " | ".join(cells)
                + f" | {s['average_queue_length']:.1f} | {s['gpu_utilisation']:.3f} | {s['runtime_s']:.1f} |"
            )
    print(
        "\nImprovement of Muri over the best baseline (baseline metric / Muri metric), ours vs published:\n"
    )
    print("| trace | Muri | metric | ours | published |")
    print("|---|---|---|---|---|")
    ranges = {}
    for t in traces:
        for muri, bases in BASELINES.items():
            for i, key in enumerate(METRICS):
                best_ours = min(ours[(t, b)][key] for b in bases)
                best_pub = min(published(b, i, t) for b in bases)
                r_ours = best_ours / ours[(t, muri)][key]
                r_pub = best_pub / published(muri, i, t)
                ranges.setdefault(key, []).append((r_ours, r_pub))
                print(f"| {t} | {muri} | {key} | {r_ours:.2f}x | {r_pub:.2f}x |")
    print("\nRanges over these traces of the best-baseline ratio:\n")
    for key, vals in ranges.items():
        o = [v[0] for v in vals]
        p = [v[1] for v in vals]
        print(f"- {key}: ours {min(o):.2f}-{max(o):.2f}x, published raw {min(p):.2f}-{max(p):.2f}x")
    # The paper's claimed ranges (avg JCT 1.13-6.15x, makespan 1.00-1.65x, tail 1.21-5.37x) are
    # min..max of baseline / Muri over every baseline of the same class and every trace
    # (1-4 and 1'-4'); e.g. 6.15 = AntMan / Muri-L on trace 2, 5.37 = Tiresias / Muri-L p99 on trace 3.
    print(
        "\nRanges of baseline / Muri over every baseline of the class (the paper's claims' definition):\n"
    )
    for i, key in enumerate(METRICS):
        o, p = [], []
        for t in traces:
            for muri, bases in BASELINES.items():
                for b in bases:
                    o.append(ours[(t, b)][key] / ours[(t, muri)][key])
                    p.append(published(b, i, t) / published(muri, i, t))
        print(f"- {key}: ours {min(o):.2f}-{max(o):.2f}x, published raw {min(p):.2f}-{max(p):.2f}x")
    out = args.out or f"benchmarks/results/muri-traces-{tag}.json"
    Path(out).write_text(
        json.dumps(
            {
                "mode": args.mode,
                "wall_s": wall,
                "workers": args.workers,
                "results": [{**s, "trace": t, "policy": p} for t, p, s in results],
            },
            indent=1,
        )
    )
    fig = args.figure or f"benchmarks/figures/muri_traces_{tag}.png"
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import numpy as np

        fig_, axes = plt.subplots(1, 3, figsize=(15, 4))
        width = 0.11
        for ax, (i, key) in zip(axes, enumerate(METRICS), strict=True):
            x = np.arange(len(traces))
            for k, p in enumerate(POLICIES):
                norm = "muri-s" if p in ("srtf", "srsf", "muri-s") else "muri-l"
                vals = [ours[(t, p)][key] / ours[(t, norm)][key] for t in traces]
                ax.bar(x + (k - 3) * width, vals, width, label=p)
                pub = [published(p, i, t) / published(norm, i, t) for t in traces]
                ax.scatter(x + (k - 3) * width, pub, marker="_", color="k", s=60, zorder=3)
            ax.set_xticks(x, [f"trace {t}" for t in traces])
            ax.set_title(f"{key} normalised to Muri (bars: ours, ticks: published)")
        axes[0].legend(fontsize=7)
        fig_.tight_layout()
        fig_.savefig(fig, dpi=110)
        print(f"\nfigure: {fig}")
    except ImportError:  # pragma: no cover
        pass


if __name__ == "__main__":
    main()
