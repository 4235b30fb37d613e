"""What an unchanged re-run costs: ``ddlsched bench run`` on a finished directory.

Side by side, in one run, for several source trees (e.g. before and after a
change to the result store): each tree's ``ddlsched bench run SUITE --out
DIR`` on a results directory that tree already completed (so nothing runs),
alternately, ``--repeat`` times; the wall time of the whole command
(interpreter start-up, suite check, instance cache, code fingerprints)
is what a user waits.

    python benchmarks/resume_cost.py --suite benchmarks/suites/quick.toml \\
        --tree OLD_SRC:OLD_RESULTS --tree NEW_SRC:NEW_RESULTS [--repeat 5]

``SRC`` is a tree's ``src`` folder (put first on ``PYTHONPATH``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time


def _once(src: str, suite: str, out: str) -> tuple[float, str]:
    env = {**os.environ, "PYTHONPATH": src}
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "ddlsched.cli", "bench", "run", suite, "--out", out],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    return time.perf_counter() - started, done.stdout.splitlines()[0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", required=True)
    parser.add_argument("--tree", action="append", required=True, help="SRC:RESULTS")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    trees = [tuple(t.split(":", 1)) for t in args.tree]
    times: dict[str, list[float]] = {src: [] for src, _ in trees}
    for _ in range(args.repeat):
        for src, out in trees:
            wall, line = _once(src, args.suite, out)
            if not line.split(": ", 1)[1].startswith("0 task(s) run"):
                raise SystemExit(f"{src}: not a finished directory: {line}")
            times[src].append(wall)
    for src, values in times.items():
        print(
            f"{src}: median {statistics.median(values):.2f} s, "
            f"min {min(values):.2f} s, max {max(values):.2f} s over {len(values)} runs"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
