"""Kill -9 a suite at random moments, resume, and check that the store lost or duplicated nothing.

The requirement: "kill -9 at random moments of a suite,
20 times, then resume: no row lost or duplicated, final table identical to
an uninterrupted run except rows stopped by a time limit". The protocol:

1. run the suite uninterrupted into directory A (``ddlsched bench run`` as a
   subprocess), timing it;
2. into directory B: start the same command in its own process group, wait
   a random delay (seeded), ``SIGKILL`` the whole group; repeat ``--kills``
   times, each start resuming the last; then run it to completion;
3. compare. Violations: a task without a row in B, a key with more than one
   row in B's history (no ``--retry`` is used, so every key must have exactly
   one), a row of B whose status or objective (the bound, for bounding
   methods) differs from A's, the final run not finishing, a stale temporary
   file left after it (in the store or its instance cache), an instance cache
   file that does not check out, or a killed run that ``bench status`` would not show
   as killed. Rows stopped by a time limit in A or B (``time_limit_hit``,
   statuses ``time_limit`` and ``time_limit_no_solution``) may differ and are
   only counted.

The default suite (written to a temporary directory) is ``rar`` ``small``
(the preset of ``benchmarks/suites/quick.toml``) with 4 jobs per instance,
300 seeds, SJF-BCO, FF, LS, RAND (2 seeds), the exact MILP and the load
bound: 2,100 short tasks (exact solves of about 0.2 s, so that a kill window
finishes tasks), about 30-50 s uninterrupted on 2 shared cores. A resumed
run spends a few seconds starting and loses up to a flush interval (1 s) of
finished rows when killed; a shorter suite would leave the kills little to
interrupt.

Every fourth kill (``--startup-every``) lands at a uniform moment of the
start-up (before the run is recorded in the manifest; its length is A's).
The others land at a uniform moment of the first half (``--reach``) of the
remaining run, projected from run A when the run is recorded: A's time from
then to its first row (the sandboxes start) plus the remaining work (A's
task times of the tasks B still lacks plus A's platform time per task, over
the workers). So kills land in the sandboxes' start, in solves, flushes and
manifest writes, in the phases of the suite they reach (exact solves first,
about three quarters of the time, then bounds, then heuristics), and before
the projected end: a run that ends before its kill is reported (fewer kills
than asked is a violation).

Exit status 1 on any violation::

    python benchmarks/kill_resume.py                     # 20 kills, seed 0, 2 workers
    python benchmarks/kill_resume.py --kills 20 --seed 1 --suite benchmarks/suites/quick.toml
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from ddlsched.bench.files import TEMP_PATTERN
from ddlsched.bench.runstate import describe_runs
from ddlsched.bench.store import read_manifest, read_rows
from ddlsched.bench.suite import load_suite
from ddlsched.bench.tasks import expand
from ddlsched.errors import DdlschedError

__all__ = ["main"]

SUITE = """
[suite]
name = "kill-resume"
description = "rar small: a short suite for the kill -9 / resume measurement"
reference = "exact"

[limits]
time_limit_s = 10
kill_after_s = 40
memory_mb = 4096

[[instances]]
family = "rar"
preset = "small"
params = { num_jobs = 4 }    # exact solves of ~0.2 s: a kill window finishes tasks
seeds = { first = 0, count = 300 }

[[methods]]
name = "sjf_bco"

[[methods]]
name = "ff"

[[methods]]
name = "ls"

[[methods]]
name = "rand"
seeds = [0, 1]

[[methods]]
name = "exact"

[[methods]]
name = "load_lb"
"""

_TIME_LIMITED = {"time_limit", "time_limit_no_solution"}


def _command(suite: Path, out: Path, workers: int) -> list[str]:
    """``ddlsched bench run SUITE --out OUT -q --workers N`` with this interpreter."""
    run = ["bench", "run", str(suite), "--out", str(out), "-q", "--workers", str(workers)]
    return [sys.executable, "-m", "ddlsched.cli", *run]


def _uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "uptime unavailable"


def _runs(out: Path) -> int:
    """Runs recorded in the manifest of ``out`` (0 if none yet)."""
    try:
        return len(read_manifest(out).get("runs", [])) if out.is_dir() else 0
    except DdlschedError:  # pragma: no cover - replaced atomically, never partial
        return 0


def _wait_begun(proc: subprocess.Popen, out: Path, runs: int, timeout: float) -> float | None:
    """Seconds until the run's manifest entry appears (``None``: it exited or timed out)."""
    started = time.monotonic()
    while time.monotonic() - started < timeout and proc.poll() is None:
        if _runs(out) > runs:
            return time.monotonic() - started
        time.sleep(0.02)
    return None


def run_to_end(suite: Path, out: Path, workers: int) -> dict[str, float]:
    """Run the suite into ``out`` to completion; its duration and when it began the run."""
    runs = _runs(out)
    started_wall, started = time.time(), time.monotonic()
    proc = subprocess.Popen(
        _command(suite, out, workers), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    begun = _wait_begun(proc, out, runs, timeout=600)
    _, stderr = proc.communicate()
    if proc.returncode != 0:
        raise SystemExit(f"kill_resume: run into {out} failed ({proc.returncode}): {stderr}")
    return {"total_s": time.monotonic() - started, "wall": started_wall, "begun_s": begun or 0.0}


def run_and_kill(
    suite: Path,
    out: Path,
    workers: int,
    in_startup: bool,
    fraction: float,
    timing: dict,
    window_s: float,
) -> dict[str, Any]:
    """Start a run into ``out`` and SIGKILL its process group at a random moment.

    ``in_startup``: at ``fraction`` of the start-up (``timing["begun_s"]``,
    before the run is recorded in the manifest); else ``fraction`` of
    ``window_s`` after it is.
    """
    before = read_rows(out, dedupe=False).num_rows if (out / "rows").is_dir() else 0
    runs = _runs(out)
    started = time.monotonic()
    proc = subprocess.Popen(
        _command(suite, out, workers),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own process group: the sandboxes die with it
    )
    if in_startup:
        delay = fraction * timing["begun_s"]
    else:
        begun = _wait_begun(proc, out, runs, timeout=600)
        delay = (begun or 0.0) + fraction * window_s
    try:
        proc.wait(timeout=max(0.0, started + delay - time.monotonic()))
        finished = True
    except subprocess.TimeoutExpired:
        finished = False
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    stderr = proc.stderr.read().decode() if proc.stderr else ""
    if proc.stderr:
        proc.stderr.close()
    time.sleep(0.2)  # let the killed sandboxes go (they die with their parent)
    stale = [
        p.name
        for d in (out, out / "rows", out / "instances")
        if d.is_dir()
        for p in d.iterdir()
        if TEMP_PATTERN.match(p.name)
    ]
    after = read_rows(out, dedupe=False).num_rows if (out / "rows").is_dir() else 0
    return {
        "phase": "start-up" if in_startup else "run",
        "delay_s": round(delay, 3),
        "window_s": None if in_startup else round(window_s, 2),
        "killed": not finished,
        "returncode": proc.returncode,
        "rows_before": before,
        "rows_after": after,
        "stale_temps": len(stale),
        "stderr": stderr.strip()[-300:] if finished and proc.returncode else "",
    }


def _time_limited(row: dict[str, Any]) -> bool:
    return bool(row.get("time_limit_hit")) or row.get("status") in _TIME_LIMITED


def _same(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is b
    return a == b or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def compare(a_dir: Path, b_dir: Path, keys: set[str]) -> dict[str, Any]:
    """Rows lost, duplicated and different between an uninterrupted run (A) and B."""
    a = {r["key"]: r for r in read_rows(a_dir).to_pylist()}
    history = read_rows(b_dir, dedupe=False).column("key").to_pylist()
    b = {r["key"]: r for r in read_rows(b_dir).to_pylist()}
    counts: dict[str, int] = {}
    for key in history:
        counts[key] = counts.get(key, 0) + 1
    duplicated = sorted(k for k, n in counts.items() if n > 1)
    lost = sorted(keys - set(b))
    foreign = sorted(set(b) - keys)
    a_lost = sorted(keys - set(a))
    differ, limited = [], []
    for key in sorted(keys & set(a) & set(b)):
        ra, rb = a[key], b[key]
        if _time_limited(ra) or _time_limited(rb):
            limited.append(key)
            continue
        value = "bound" if ra["kind"] == "bound" else "objective"
        if ra["status"] != rb["status"] or not _same(ra[value], rb[value]):
            differ.append(
                f"{ra['label']} on {ra['instance_id']}: A {ra['status']} {ra[value]!r}, "
                f"B {rb['status']} {rb[value]!r}"
            )
    return {
        "tasks": len(keys),
        "rows_a": len(a),
        "rows_b": len(b),
        "history_b": len(history),
        "lost": lost,
        "duplicated": duplicated,
        "foreign": foreign,
        "lost_in_a": a_lost,
        "differ": differ,
        "time_limited": len(limited),
        "compared": len(keys & set(a) & set(b)) - len(limited),
    }


def _first_row_s(directory: Path, started_wall: float) -> float:
    stamps = [r["finished_at"] for r in read_rows(directory).to_pylist() if r["finished_at"]]
    first = min(datetime.fromisoformat(s).timestamp() for s in stamps)
    return max(0.0, first - started_wall)


def measure(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    """The whole protocol in ``work``; returns the figures."""
    if args.suite:
        suite = Path(args.suite).resolve()
    else:
        suite = work / "kill-resume.toml"
        suite.write_text(SUITE.lstrip())
    keys = {t.key for t in expand(load_suite(suite))}
    a_dir, b_dir = work / "A", work / "B"
    load_before = _uptime()
    timing = run_to_end(suite, a_dir, args.workers)
    first_row = _first_row_s(a_dir, timing["wall"])
    # After the run is recorded the sandboxes start and the first task runs (A's time
    # from then to its first row); then the remaining tasks.
    lag_s = max(first_row - timing["begun_s"], 0.0)
    wall = {r["key"]: r["wall_s"] or 0.0 for r in read_rows(a_dir).to_pylist()}
    # The platform's own time per task (pipe round trip, row, store), from A.
    busy_s = max(timing["total_s"] - first_row, 0.0) * args.workers
    overhead_s = max(busy_s - sum(wall.values()), 0.0) / max(len(wall), 1)
    rng = random.Random(args.seed)
    attempts = []
    b_started = time.monotonic()
    while len([a for a in attempts if a["killed"]]) < args.kills:
        fraction = rng.random()
        in_startup = args.startup_every > 0 and len(attempts) % args.startup_every == (
            args.startup_every - 1
        )
        done = set(read_rows(b_dir).column("key").to_pylist()) if b_dir.is_dir() else set()
        missing = [w for k, w in wall.items() if k not in done]
        remaining_s = (sum(missing) + overhead_s * len(missing)) / args.workers
        window_s = args.reach * (lag_s + remaining_s)
        attempt = run_and_kill(suite, b_dir, args.workers, in_startup, fraction, timing, window_s)
        attempts.append(attempt)
        print(
            f"  kill {len(attempts):2d}: {attempt['phase']:8s} after {attempt['delay_s']:5.2f} s "
            f"{'killed' if attempt['killed'] else 'finished first'}, rows "
            f"{attempt['rows_before']} -> {attempt['rows_after']}, "
            f"stale temporary files {attempt['stale_temps']}",
            flush=True,
        )
        if not attempt["killed"]:
            break  # the suite completed before the kill: nothing left to interrupt
    done = set(read_rows(b_dir).column("key").to_pylist()) if b_dir.is_dir() else set()
    total_work = sum(wall.values()) + overhead_s * len(wall)
    covered = sum(w + overhead_s for k, w in wall.items() if k in done) / max(total_work, 1e-9)
    runs_before_final = read_manifest(b_dir).get("runs", [])
    views = describe_runs(b_dir, runs_before_final)
    shown_running = [v.run.get("run_id") for v in views if v.state.startswith("running")]
    final = run_to_end(suite, b_dir, args.workers)
    b_s = time.monotonic() - b_started
    stale_after = [
        p.name
        for d in (b_dir, b_dir / "rows", b_dir / "instances")
        if d.is_dir()
        for p in d.iterdir()
        if TEMP_PATTERN.match(p.name)
    ]
    states: dict[str, int] = {}
    for run in read_manifest(b_dir).get("runs", []):
        states[run.get("state")] = states.get(run.get("state"), 0) + 1
    result = compare(a_dir, b_dir, keys)
    killed = [a for a in attempts if a["killed"]]
    result.update(
        {
            "suite": str(suite),
            "seed": args.seed,
            "workers": args.workers,
            "kills": len(killed),
            "kills_in_startup": sum(1 for a in killed if a["phase"] == "start-up"),
            "attempts": len(attempts),
            "kills_without_progress": sum(1 for a in killed if a["rows_after"] == a["rows_before"]),
            "rows_before_final": attempts[-1]["rows_after"] if attempts else 0,
            "max_stale_temps_after_a_kill": max((a["stale_temps"] for a in attempts), default=0),
            "stale_temps_after_final": len(stale_after),
            "unsound_cache_files": unsound_cache_files(suite, b_dir),
            "killed_runs_shown_running": shown_running,
            "run_states_b": states,
            "startup_s": round(timing["begun_s"], 2),
            "reach": args.reach,
            "platform_s_per_task": round(overhead_s, 4),
            "work_covered_before_final": round(covered, 3),
            "uninterrupted_s": round(timing["total_s"], 1),
            "first_row_s": round(first_row, 1),
            "interrupted_total_s": round(b_s, 1),
            "final_resume_s": round(final["total_s"], 1),
            "load_before": load_before,
            "load_after": _uptime(),
            "attempt_log": attempts,
        }
    )
    return result


def unsound_cache_files(suite: Path, out: Path) -> list[str]:
    """The instance cache files of ``out`` that do not check out (a kill mid-write must
    leave the old file or none, :mod:`ddlsched.bench.instance_cache`)."""
    from ddlsched import __version__
    from ddlsched.bench import instance_cache

    cache = instance_cache.cache_dir_of(out)
    specs = {t.instance.key(__version__): t.instance for t in expand(load_suite(suite))}
    return [
        path.name
        for path in sorted(cache.glob("*.json"))
        if path.stem not in specs
        or not instance_cache.verify(cache, path.stem, specs[path.stem].recipe(), __version__)
    ]


def violations(result: dict[str, Any], kills: int) -> list[str]:
    """What breaks the requirement in ``result``."""
    out = []
    for name in ("lost", "duplicated", "foreign", "differ"):
        if result[name]:
            out.append(f"{len(result[name])} {name}: {', '.join(result[name][:5])}")
    if result["lost_in_a"]:
        out.append(f"the uninterrupted run lacks {len(result['lost_in_a'])} row(s)")
    if result["unsound_cache_files"]:
        out.append(f"{len(result['unsound_cache_files'])} unsound instance cache file(s)")
    if result["stale_temps_after_final"]:
        out.append(f"{result['stale_temps_after_final']} stale temporary file(s) after the end")
    if result["killed_runs_shown_running"]:
        out.append(f"killed runs shown as running: {result['killed_runs_shown_running']}")
    if result["kills"] < kills:
        out.append(f"only {result['kills']} of {kills} kills landed (the suite finished first)")
    return out


def main(argv: list[str] | None = None) -> int:
    """Run the measurement; print a summary; exit status 1 on a violation."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suite", help="suite file (default: the built-in 2,100-task rar suite)")
    parser.add_argument("--kills", type=int, default=20, help="kills before the final run")
    parser.add_argument("--seed", type=int, default=0, help="seed of the kill delays")
    parser.add_argument("--workers", type=int, default=2, help="worker processes per run")
    parser.add_argument(
        "--startup-every",
        type=int,
        default=4,
        help="every N-th kill lands in start-up, before the run is recorded (default 4; 0: none)",
    )
    parser.add_argument(
        "--reach",
        type=float,
        default=0.5,
        help="run-phase kills land uniformly in this share of the remaining run, projected "
        "from A's start-up and task times (default 0.5)",
    )
    parser.add_argument("--keep", help="keep the results directories here (default: removed)")
    parser.add_argument("--json", help="also write the figures to this JSON file")
    args = parser.parse_args(argv)
    if args.keep:
        work = Path(args.keep)
        if (work / "A").exists() or (work / "B").exists():
            parser.error(f"--keep {work}: A or B exists already (they must start empty)")
        work.mkdir(parents=True, exist_ok=True)
        result = measure(args, work)
    else:
        with tempfile.TemporaryDirectory(prefix="ddlsched-kill-resume-") as tmp:
            result = measure(args, Path(tmp))
    bad = violations(result, args.kills)
    print(
        f"kill_resume: {result['kills']} kills (seed {result['seed']}; "
        f"{result['kills_in_startup']} in start-up, the others in the first "
        f"{result['reach']:.0%} of the remaining run; {result['kills_without_progress']} "
        f"before any new row) "
        f"then a final resume; {result['workers']} workers"
    )
    print(
        f"  rows: {result['tasks']} tasks; uninterrupted A {result['rows_a']}; killed+resumed B "
        f"{result['rows_b']} ({result['history_b']} in its history; "
        f"{result['rows_before_final']} stored before the final run, "
        f"{result['work_covered_before_final']:.0%} of A's task time)"
    )
    print(
        f"  lost {len(result['lost'])}, duplicated {len(result['duplicated'])}, "
        f"different {len(result['differ'])} of {result['compared']} compared; "
        f"{result['time_limited']} time-limited row(s) not compared"
    )
    print(
        f"  runs of B: {result['run_states_b']}; stale temporary files: at most "
        f"{result['max_stale_temps_after_a_kill']} after a kill, "
        f"{result['stale_temps_after_final']} after the end; unsound instance cache files "
        f"{len(result['unsound_cache_files'])}"
    )
    print(
        f"  time: uninterrupted {result['uninterrupted_s']} s (run recorded after "
        f"{result['startup_s']} s, first row after {result['first_row_s']} s); "
        f"killed+resumed {result['interrupted_total_s']} s in all, "
        f"final resume {result['final_resume_s']} s"
    )
    print(f"  load before: {result['load_before']}")
    print(f"  load after:  {result['load_after']}")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    if bad:
        print("VIOLATIONS:\n  " + "\n  ".join(bad))
        return 1
    print("no violation")
    return 0


if __name__ == "__main__":
    sys.exit(main())
