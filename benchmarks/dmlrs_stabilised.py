"""Stabilised column generation at paper size: bound against ``UB(0)`` and schedules.

Runs ``ddlsched solve dmlrs FILE --method colgen --param stabilisation=S
--param alpha=A --param max_rounds=K --time-limit 300 --json`` (the CLI, one
process per run, one after the other) on ``paper`` instances and prints one
row per run: the best bound, ``UB(0)``, the master LP's last value (a lower
bound on the R-DMLRS LP optimum, so ``UB(0) - master`` caps what any dual
point can gain), the best seed schedule (PD-ORS / restricted master),
OASiS's utility, rounds, mis-pricings and seconds, with the UTC time and
the load of each run.

    python benchmarks/dmlrs_stabilised.py [--rounds 30] [--points paper0,m10] [--out DIR]

Points: ``paper0`` (``paper`` seed 0: 50 jobs, 100 machines, T = 20) and
``mN`` (the same with N machines, Fig. 6's x-axis).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

SETTINGS = (("none", 0.0), ("smoothing", 0.5), ("smoothing", 0.9))


def _instance(point: str, out: Path) -> Path:
    path = out / f"{point}.json"
    if not path.exists():
        extra = [] if point == "paper0" else ["--set", f"machines={int(point[1:])}"]
        exe = str(Path(sys.executable).with_name("ddlsched"))
        cmd = [exe, "instance", "generate", "dmlrs", "--preset", "paper", "--seed", "0"]
        subprocess.run([*cmd, "-o", str(path), *extra], check=True, capture_output=True)
    return path


def _cli(args: list[str]) -> dict:
    exe = str(Path(sys.executable).with_name("ddlsched"))
    out = subprocess.run([exe, *args, "--json"], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--points", default="paper0,m10")
    parser.add_argument("--out", default="results/dmlrs-stabilised")
    parser.add_argument("--settings", default=",".join(f"{s}:{a}" for s, a in SETTINGS))
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    print("| point | stabilisation | alpha | UTC | load | bound | UB(0) | master LP | bound / UB(0) "
          "| schedule (colgen) | OASiS | rounds | mis-pricings | stopped | s |")  # fmt: skip
    print("|---|---|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|")
    for point in args.points.split(","):
        path = _instance(point, out)
        oasis = _cli(["solve", "dmlrs", str(path), "--method", "oasis", "--seed", "0"])
        for setting in args.settings.split(","):
            stab, alpha = setting.split(":")
            stamp = time.strftime("%H:%M", time.gmtime())
            load = f"{os.getloadavg()[0]:.1f}"
            started = time.perf_counter()
            d = _cli(["solve", "dmlrs", str(path), "--method", "colgen", "--seed", "0",
                      "--param", f"stabilisation={stab}", "--param", f"alpha={alpha}",
                      "--param", f"max_rounds={args.rounds}", "--time-limit", "300"])  # fmt: skip
            wall = time.perf_counter() - started
            (out / f"{point}-{stab}-{alpha}.json").write_text(json.dumps(d))
            i = d["info"]
            print(
                f"| {point} | {stab} | {alpha} | {stamp} | {load} | {d['bound']:.2f} | "
                f"{i['ub_zero']:.2f} | {i['master_value']:.2f} | {d['bound'] / i['ub_zero']:.4f} | "
                f"{d['objective']:.2f} | {oasis['objective']:.2f} | {i['iterations']} | "
                f"{i['mispricings']} | {i.get('stopped') or i['rounds_stopped']} | {wall:.0f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
