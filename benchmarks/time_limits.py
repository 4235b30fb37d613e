"""Is ``--time-limit`` honoured? Methods that cannot finish, run as a user runs them.

For each case, an instance on which the method cannot finish within the
limit is generated, then ``ddlsched solve FAMILY FILE --method M
--time-limit L --json`` runs ``--repeats`` times as a separate process. The
table gives, per case and limit, the largest wall time of the whole command
(interpreter start-up, imports and output included) and the largest time the
limit covers (``info.load_s + runtime_s``: loading the instance, then model
building, solving, cross-checks, re-evaluation; the limit
covers loading too), each as an overrun beyond the limit, and the statuses seen
with ``time_limit_hit`` (``*``: the limit cut the answer short; a method
stopped by its limit reports its incumbent and bound, ``feasible*``, a
weaker bound, ``bound_only*``, or ``time_limit_no_solution*``).

    python benchmarks/time_limits.py --limits 5 --repeats 3
    python benchmarks/time_limits.py --limits 1,10,60 --repeats 1 --cases 10-16,18-25

On a loaded machine (``--loaded N``: N busy processes, ``python -c "while True:
pass"``, run beside every run and are killed at the end), with ``--colgen``
(``dmlrs colgen`` at the largest Fig. 7 and Fig. 8 points of seeds 0-2 and 70:
the case that ran 7 min 43 s at a 300 s limit) and ``--every-method`` (every
exact and bound method of every family, from the registry, on the family's
paper-size instance, :data:`PAPER_SIZE`). The ``within`` column says whether
the time the limit covers stayed within ``limit + max(1 s, 5 %)`` (a refusal,
exit 2, comes before the method runs: it covers nothing, its CLI wall is shown):

    python benchmarks/time_limits.py --loaded 2 --limits 10,60 --repeats 1 --colgen --cases none
    python benchmarks/time_limits.py --loaded 2 --limits 10,60 --repeats 1 --every-method --cases none
    python benchmarks/time_limits.py --loaded 2 --limits 10,60 --repeats 1 --every-method --cases none --only seed
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# (label, family, preset, seed, preset parameters, method, method parameters)
CASES = [
    ("rar exact, 12 jobs", "rar", "small", 5, ["num_jobs=12", "max_horizon=120"], "exact", []),
    (
        "rar exact (bare MILP), 12 jobs",
        "rar",
        "small",
        5,
        ["num_jobs=12", "max_horizon=120"],
        "exact",
        ["presolve_bounds=false"],
    ),
    ("rar exact, paper (160 jobs)", "rar", "paper", 0, [], "exact", []),
    ("rar timeindexed, paper (160 jobs)", "rar", "paper", 0, [], "timeindexed", []),
    (
        "rar lp_rounding, 1,000 contention jobs",
        "rar",
        "contention",
        0,
        ["num_jobs=1000"],
        "lp_rounding",
        [],
    ),
    (
        "placement exact_gpu_level, VGG-16 on 64 GPUs",
        "placement",
        "table2",
        0,
        ["model=vgg16", "num_gpus=64"],
        "exact_gpu_level",
        [],
    ),
    ("muri exact, 70 jobs k = 4", "muri", "bucket40", 0, ["num_jobs=70"], "exact", []),
    (
        "placement exact (aggregated), 10,000 GPUs",
        "placement",
        "table2",
        0,
        ["num_gpus=10000"],
        "exact",
        [],
    ),
    ("muri blossom, 3,000 jobs", "muri", "small", 0, ["num_jobs=3000"], "blossom", []),
    ("muri exact, 16 jobs k = 8 (5,040 offsets a group)", "muri", "@k8", 1, [], "exact", []),
    (
        "asrpt exact (CP-SAT), tiny 8 jobs",
        "asrpt",
        "tiny",
        1,
        ["num_jobs=8", "servers=2"],
        "exact",
        [],
    ),
    (
        "asrpt exact (time-indexed MILP), tiny 8 jobs",
        "asrpt",
        "tiny",
        1,
        ["num_jobs=8", "servers=2"],
        "exact",
        ["solver=milp"],
    ),
    ("dmlrs colgen, paper", "dmlrs", "paper", 0, [], "colgen", []),
    (
        "dmlrs pd_ors, paper 100 x 100 x T=80",
        "dmlrs",
        "paper",
        0,
        ["jobs=100", "machines=100", "slots=80"],
        "pd_ors",
        [],
    ),
    (
        "dmlrs_slot ilp, synthetic 100,000 machines",
        "dmlrs_slot",
        "synthetic",
        0,
        ["machines=100000", "jobs=1000"],
        "ilp",
        [],
    ),
    (
        "placement exact_gpu_level_paper, VGG-16 on 64 GPUs",
        "placement",
        "table2",
        0,
        ["model=vgg16", "num_gpus=64"],
        "exact_gpu_level_paper",
        [],
    ),
    (
        "muri_sim muri-l, trace 2 (5,755 jobs)",
        "muri_sim",
        "trace",
        0,
        ["trace=trace2"],
        "muri-l",
        [],
    ),
    (
        "placement exact (pattern proof, CP-SAT threshold search), bert24 on 256 GPUs",
        "placement",
        "table2",
        1,
        ["model=bert24", "num_gpus=256"],
        "exact",
        [],
    ),
    # the online families
    (
        "dmlrs exact, paper 10 jobs x 20 machines x T=20",
        "dmlrs",
        "paper",
        0,
        ["jobs=10", "machines=20", "slots=20"],
        "exact",
        [],
    ),
    (
        "dmlrs dorm, paper 100 x 100 x T=80",
        "dmlrs",
        "paper",
        0,
        ["jobs=100", "machines=100", "slots=80"],
        "dorm",
        [],
    ),
    ("dmlrs pd_ors, quanta = 4096, paper", "dmlrs", "paper", 0, [], "pd_ors", ["quanta=4096"]),
    (
        "dmlrs fifo, paper 100,000 jobs (loading included)",
        "dmlrs",
        "paper",
        0,
        ["jobs=100000"],
        "fifo",
        [],
    ),
    ("dmlrs ub_prices, paper", "dmlrs", "paper", 0, [], "ub_prices", []),
    ("asrpt lb_srpt (alpha_lb ILPs), paper", "asrpt", "paper", 0, [], "lb_srpt", []),
    ("asrpt lb_sum (alpha_lb ILPs), paper", "asrpt", "paper", 0, [], "lb_sum", []),
    (
        "asrpt asrpt with theory (alpha_lb per configuration), paper",
        "asrpt",
        "paper",
        0,
        [],
        "asrpt",
        ["theory=true"],
    ),
]

DDLSCHED = [sys.executable, "-m", "ddlsched.cli"]

#: ``dmlrs colgen`` at the largest points of Fig. 7 (50 jobs, 100 machines) and Fig. 8 (100
#: jobs, 50 machines), T = 20, seeds 0-2 and 70 (``benchmarks/suites/dmlrs.toml``).
COLGEN_CASES = [
    (
        f"dmlrs colgen, Fig. {fig} point ({jobs} jobs x {machines} machines), seed {seed}",
        "dmlrs",
        "paper",
        seed,
        [f"jobs={jobs}", f"machines={machines}", "slots=20"],
        "colgen",
        [],
    )
    for fig, jobs, machines in ((7, 50, 100), (8, 100, 50))
    for seed in (0, 1, 2, 70)
]

#: Each family's paper-size instance for ``--every-method``: (preset, seed, parameters).
PAPER_SIZE = {
    "asrpt": ("paper", 0, []),
    "dmlrs": ("paper", 0, []),
    "dmlrs_slot": ("synthetic", 0, []),
    "muri": ("bucket40", 0, []),
    "placement": ("table2", 1, ["model=bert24", "num_gpus=4096"]),
    "rar": ("paper", 0, []),
}


#: Second instances for ``--every-method`` where the paper-size one is refused or answered
#: before the limit matters: (family, preset, seed, parameters, methods). The GPU-level
#: placement ILPs (and the paper ILP's SCIP cross-check) on a VGG-16 Table II job (seed 36:
#: 38 s to its proof at load 18), the slot LP / ILP on 20,000 machines at load 0.5 (the
#: synthetic default is infeasible within seconds).
EXTRA_SIZE = [
    ("placement", "table2", 36, ["model=vgg16"], ["exact_gpu_level", "exact_gpu_level_paper"]),
    ("dmlrs_slot", "synthetic", 0, ["load=0.5", "machines=20000"], ["ilp", "lp"]),
]


def every_method_cases() -> list[tuple]:
    """Every exact and bound method of every family with a :data:`PAPER_SIZE` instance, and
    the :data:`EXTRA_SIZE` instances."""
    import ddlsched.families  # noqa: F401 - registers the families
    from ddlsched.registry import families, methods

    cases = []
    for family in families():
        if family.name not in PAPER_SIZE:
            continue
        preset, seed, params = PAPER_SIZE[family.name]
        for method in methods(family.name):
            if method.kind in ("exact", "bound"):
                label = f"{family.name} {method.name}, {preset} {' '.join(params)}".rstrip()
                cases.append((label, family.name, preset, seed, params, method.name, []))
    for family, preset, seed, params, names in EXTRA_SIZE:
        for name in names:
            label = f"{family} {name}, {preset} seed {seed} {' '.join(params)}"
            cases.append((label, family, preset, seed, params, name, []))
    return cases


@contextlib.contextmanager
def busy_processes(count: int):
    """``count`` processes spinning on a core each, killed (by their id) on exit."""
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        yield
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()


def within(covered_s: float, limit: float) -> bool:
    """The criterion: the time the limit covers is at most ``limit + max(1 s, 5 %)``."""
    return covered_s <= limit + max(1.0, 0.05 * limit)


def _muri_k8(path: Path, seed: int) -> Path:
    """16 one-GPU jobs over 8 resources, groups of up to 8 (no preset reaches k = 8)."""
    rng = random.Random(seed)
    jobs = [
        {"id": f"j{i}", "gpus": 1, "times": [round(rng.uniform(1, 10), 3) for _ in range(8)]}
        for i in range(16)
    ]
    data = {"family": "muri", "schema_version": 1, "name": "k8", "num_resources": 8,
            "max_group_size": 8, "jobs": jobs}  # fmt: skip
    path.write_text(json.dumps(data))
    return path


def generate(directory: Path, family: str, preset: str, seed: int, params: list[str]) -> Path:
    path = directory / f"{family}-{preset}-{seed}-{'-'.join(params)}.json".replace("=", "_")
    if preset == "@k8":
        return _muri_k8(path, seed)
    args = [
        "instance",
        "generate",
        family,
        "--preset",
        preset,
        "--seed",
        str(seed),
        "-o",
        str(path),
    ]
    for p in params:
        args += ["--set", p]
    subprocess.run(DDLSCHED + args, check=True, capture_output=True)
    return path


def solve(path: Path, family: str, method: str, params: list[str], limit: float) -> dict:
    args = ["solve", family, str(path), "--method", method, "--time-limit", str(limit), "--json"]
    for p in params:
        args += ["--param", p]
    started = time.perf_counter()
    out = subprocess.run(DDLSCHED + args, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if out.returncode not in (0, 1):  # a refusal (exit 2) is an answer too: record it
        lines = out.stderr.strip().splitlines() or ["(nothing on stderr)"]
        # refused before the method ran: nothing the limit covers (the CLI wall is shown)
        return {"wall_s": wall, "covered_s": 0.0, "status": f"exit {out.returncode}: {lines[-1]}"}
    data = json.loads(out.stdout)
    covered = data["info"].get("load_s", 0.0) + data["runtime_s"]
    status = data["status"] + ("*" if data["time_limit_hit"] else "")
    return {"wall_s": wall, "covered_s": covered, "status": status}


def _numbers(text: str) -> list[int]:
    """``1,3-5`` as ``[1, 3, 4, 5]`` (``none``: no case)."""
    out: list[int] = []
    if text == "none":
        return out
    for part in text.split(","):
        first, _, last = part.partition("-")
        out.extend(range(int(first), int(last or first) + 1))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limits", default="5", help="comma-separated time limits, s")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument(
        "--cases", default=None, help="case numbers, e.g. 1,3-5 (default all; see CASES)"
    )
    ap.add_argument("--loaded", type=int, default=0, help="busy processes beside the runs")
    ap.add_argument("--colgen", action="store_true", help="add the dmlrs colgen cases")
    ap.add_argument("--every-method", action="store_true", help="add every exact and bound method")
    ap.add_argument("--only", default=None, help="keep the cases whose label contains TEXT")
    args = ap.parse_args()
    limits = [float(x) for x in args.limits.split(",")]
    chosen = [CASES[i] for i in _numbers(args.cases)] if args.cases else list(CASES)
    if args.colgen:
        chosen += COLGEN_CASES
    if args.every_method:
        chosen += every_method_cases()
    if args.only:
        chosen = [case for case in chosen if args.only in case[0]]
    print(
        "| case | limit s | runs | statuses (*: time_limit_hit) | max load_s + runtime_s | "
        "overrun s | within | max CLI wall s | CLI overrun s |"
    )
    print("|---|---:|---:|---|---:|---:|---|---:|---:|")
    with (
        busy_processes(args.loaded),
        tempfile.TemporaryDirectory(prefix="ddlsched-limits-") as tmp,
    ):
        for label, family, preset, seed, preset_params, method, params in chosen:
            path = generate(Path(tmp), family, preset, seed, preset_params)
            for limit in limits:
                runs = [solve(path, family, method, params, limit) for _ in range(args.repeats)]
                runtime = max(r["covered_s"] for r in runs)
                wall = max(r["wall_s"] for r in runs)
                statuses = ", ".join(sorted({r["status"] for r in runs}))
                ok = "yes" if within(runtime, limit) else "**no**"
                print(
                    f"| {label} | {limit:g} | {len(runs)} | {statuses} | {runtime:.2f} | "
                    f"{runtime - limit:+.2f} | {ok} | {wall:.2f} | {wall - limit:+.2f} |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
