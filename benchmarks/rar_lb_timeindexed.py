"""``lb_timeindexed`` on the rar ``paper`` preset against the existing bounds.

For each seed, generates ``paper.json`` and runs ``ddlsched solve rar paper.json --method M
--json`` under ``/usr/bin/time -f "%e s %M KB"`` for ``load_lb`` (the best existing bound on
``paper``: the closed forms and Problem (14)), ``sjf_bco`` (a schedule) and
``lb_timeindexed`` (``--time-limit L``, extra ``--param`` settings from ``--params``).
Prints per seed the bounds, the LP's probes (horizon, slot width, nonzeros, status, LP value,
solve time), wall time and peak RSS, and the interval width against ``--best`` (the best
known makespans, e.g. ``timeindexed``'s from ``benchmarks/results/rar.md``) or ``sjf_bco``.

    PYTHONPATH=src python benchmarks/rar_lb_timeindexed.py --seeds 0 5 --time-limit 240
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
from pathlib import Path

from cli_timed import CLI, run_timed


def _run(args: list[str]) -> tuple[dict, str]:
    return run_timed(args, 160)


def _probes(info: dict) -> str:
    out = []
    for p in info.get("probes", []):
        size = p.get("direct_size", {})
        value = p.get("lp_value")
        out.append(
            f"H={p['horizon']} w={p['slot_width']} nz={size.get('nonzeros', 0) / 1e6:.2f}M "
            f"{p['status']} v={'-' if value is None else f'{value:.2f}'} "
            f"{p.get('solve_s', 0.0):.0f}s"
        )
    return "; ".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", nargs=2, type=int, default=(0, 5), metavar=("FIRST", "END"))
    parser.add_argument("--time-limit", type=float, default=240.0)
    parser.add_argument("--params", nargs="*", default=[], help="--param K=V for lb_timeindexed")
    parser.add_argument("--best", nargs="*", type=float, default=[], help="best makespan per seed")
    args = parser.parse_args()
    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    print(f"time limit {args.time_limit:g} s; params {args.params}; load at start: {load}\n")
    print(
        "| seed | load_lb | sjf_bco | lb_timeindexed (LP part) | probes | wall, peak RSS | width |"
    )
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for n, seed in enumerate(range(*args.seeds)):
            path = str(Path(tmp) / f"paper{seed}.json")
            generate = ["instance", "generate", "rar", "--preset", "paper", "--seed", str(seed)]
            subprocess.run([*CLI, *generate, "-o", path], check=True, capture_output=True)
            base = ["solve", "rar", path, "--json", "--method"]
            load_lb, _ = _run([*base, "load_lb"])
            sjf, _ = _run([*base, "sjf_bco"])
            extra = [x for kv in args.params for x in ("--param", kv)]
            lb, timing = _run(
                [*base, "lb_timeindexed", "--time-limit", f"{args.time_limit:g}", *extra]
            )
            info = lb.get("info", {})
            best = args.best[n] if n < len(args.best) else sjf.get("objective")
            old, new = load_lb.get("bound"), lb.get("bound")
            width = (
                f"{best / old - 1:.1%} -> {best / max(old, new) - 1:.1%}"
                if best and old and new
                else "?"
            )
            print(
                f"| {seed} | {old} | {sjf.get('objective')} | {new} ({info.get('lp_bound')}) "
                f"| {_probes(info)} | {timing} | {width} |",
                flush=True,
            )
    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    print(f"\nload at end: {load}")


if __name__ == "__main__":
    main()
