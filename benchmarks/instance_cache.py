"""The instance cache: each generated instance built once per results directory.

Two measurements, each through the CLI in subprocesses (``ddlsched bench ...``,
Python start-up and imports included, as a user sees them):

1. ``validate``: ``ddlsched bench validate SUITE --out DIR`` three times on a
   fresh results directory: the first call builds the instances (within the
   check's budget, ``--budget``) and caches them, the next ones read the
   cache (the issue's target: under 3 s on the second call of
   ``benchmarks/suites/asrpt.toml``, 90 asrpt instances of up to 16,449 jobs).
2. ``resume``: a small asrpt suite (Philly windows; cheap heuristics, so that
   building the instances is most of the work) run with ``--limit`` and then
   resumed, with the cache and with ``--no-cache``. Reports the wall time of
   each run and, with the cache, whether the resumed run rewrote any cache file
   the first run wrote (a rebuilt instance is written again, so an unchanged
   inode and mtime means not rebuilt).

Usage::

    python benchmarks/instance_cache.py validate benchmarks/suites/asrpt.toml
    python benchmarks/instance_cache.py validate benchmarks/suites/asrpt.toml --first-budget 900
    python benchmarks/instance_cache.py resume --workers 1

Needs the shared data (``DDLSCHED_DATA``) for the asrpt traces.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

__all__ = ["main"]

RESUME_SUITE = """
[suite]
name = "cache-resume"
description = "asrpt Philly windows, cheap heuristics: instance building dominates"
[limits]
time_limit_s = 120
[[instances]]
family = "asrpt"
preset = "paper"
seeds = [0, 1, 2]
params = { trace = "philly" }
sweep = { jobs = [500, 2000] }
[[methods]]
name = "spjf"
[[methods]]
name = "spwf"
[[methods]]
name = "wcs_duration"
"""


def ddlsched(*args: str, env: dict[str, str] | None = None) -> tuple[float, str]:
    """Run ``ddlsched ARGS`` (the console script beside this interpreter); its wall time
    and output."""
    script = Path(sys.executable).with_name("ddlsched")
    started = time.perf_counter()
    done = subprocess.run(
        [str(script) if script.exists() else "ddlsched", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        check=False,
    )
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"ddlsched {' '.join(args)} failed:\n{done.stdout}{done.stderr}")
    return wall, done.stdout


def cache_state(out: Path) -> dict[str, tuple[int, int]]:
    """Each cache file's (inode, mtime_ns)."""
    folder = out / "instances"
    if not folder.is_dir():
        return {}
    return {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in folder.glob("*.json")}


def measure_validate(suite: str, calls: int, budget: float | None, out: str | None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        out_dir = Path(out) if out else Path(tmp) / "results"
        print(f"results directory {out_dir}: {len(cache_state(out_dir))} cache files at the start")
        for call in range(1, calls + 1):
            first = call == 1 and budget is not None
            env = {"DDLSCHED_CHECK_BUDGET_S": str(budget)} if first else None
            wall, text = ddlsched("bench", "validate", suite, "--out", str(out_dir), env=env)
            cached = re.search(r"instance cache .*: ([\d,]+) of ([\d,]+) checked", text)
            read = f"{cached.group(1)} of {cached.group(2)} read from the cache" if cached else ""
            files = len(cache_state(out_dir))
            print(f"validate call {call}: {wall:6.2f} s  {read}  ({files} files)")
            for line in text.splitlines():
                if line.startswith("note:"):
                    print(f"    {line}")


def measure_resume(workers: int, limit: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        suite = Path(tmp) / "resume.toml"
        suite.write_text(textwrap.dedent(RESUME_SUITE))
        for flags in ([], ["--no-cache"]):
            name = "no-cache" if flags else "cache"
            out = Path(tmp) / name
            run = ["bench", "run", str(suite), "--out", str(out), "--workers", str(workers), "-q"]
            first, _ = ddlsched(*run, "--limit", str(limit), *flags)
            before = cache_state(out)
            second, text = ddlsched(*run, *flags)
            after = cache_state(out)
            rewritten = sorted(k for k in before if after.get(k) != before[k])
            print(f"{name:>8}: first run ({limit} tasks) {first:6.2f} s, resume {second:6.2f} s")
            print(f"          {text.splitlines()[0]}")
            if not flags:
                print(
                    f"          cache files after the first run {len(before)}, after the "
                    f"resume {len(after)}; rewritten by the resume: {len(rewritten)}"
                )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    p = sub.add_parser("validate", help="first, second, ... bench validate of a suite")
    p.add_argument("suite", nargs="?", default="benchmarks/suites/asrpt.toml")
    p.add_argument("--calls", type=int, default=3)
    p.add_argument("--out", help="results directory to use and keep (default: a fresh one)")
    p.add_argument(
        "--first-budget",
        type=float,
        help="$DDLSCHED_CHECK_BUDGET_S of the first call (default: the default budget, 30 s)",
    )
    p = sub.add_parser("resume", help="a run cut by --limit, then resumed")
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--limit", type=int, default=6)
    args = parser.parse_args(argv)
    if args.what == "validate":
        measure_validate(args.suite, args.calls, args.first_budget, args.out)
    else:
        measure_resume(args.workers, args.limit)
    return 0


if __name__ == "__main__":
    sys.exit(main())
