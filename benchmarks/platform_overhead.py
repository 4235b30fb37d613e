"""Per-task overhead of the benchmark platform, measured with no-op tasks.

Runs a suite of ``--tasks`` ``debug.noop`` tasks (the method returns at
once) through the whole platform: expansion, content hashes, the sandbox
pipe round trip, row building, the Parquet store (flushed every second),
the progress callback. Reports the steady-state cost per task (first to
last row, so the one-off start of the worker processes is excluded) and the
end-to-end cost per task (including worker start-up)::

    python benchmarks/platform_overhead.py --tasks 500 --workers 1
    python benchmarks/platform_overhead.py --tasks 500 --workers 2 --dask local

The issue's target: under 50 ms per task.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from ddlsched.bench.executors import make_executor
from ddlsched.bench.runner import run_suite
from ddlsched.bench.suite import parse_suite

__all__ = ["main"]


def measure(tasks: int, workers: int, dask: str | None) -> dict[str, float]:
    suite = parse_suite(
        {
            "suite": {"name": "overhead"},
            "instances": [
                {"family": "debug", "preset": "default", "seeds": {"first": 0, "count": tasks}}
            ],
            "methods": [{"name": "noop"}],
        }
    )
    stamps: list[float] = []

    def tick(progress) -> None:
        if progress.done > len(stamps):
            stamps.extend([time.perf_counter()] * (progress.done - len(stamps)))

    executor = make_executor(workers, dask)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            started = time.perf_counter()
            summary = run_suite(suite, Path(tmp) / "out", executor=executor, on_progress=tick)
            total = time.perf_counter() - started
    finally:
        executor.close()
    assert summary.done == tasks and summary.failed == 0, summary
    steady = (stamps[-1] - stamps[0]) / (len(stamps) - 1)
    return {
        "tasks": tasks,
        "workers": executor.workers,
        "total_s": total,
        "end_to_end_ms_per_task": 1000 * total / tasks,
        "steady_ms_per_task": 1000 * steady,
        "steady_ms_per_task_per_worker": 1000 * steady * executor.workers,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=500)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--dask", default=None, help="'local' or a scheduler address")
    args = parser.parse_args()
    # The machine must be otherwise idle for timings to mean anything.
    load_before = " ".join(f"{x:.2f}" for x in os.getloadavg())
    result = measure(args.tasks, args.workers, args.dask)
    executor = f"dask {args.dask}" if args.dask else "local pool"
    print(
        f"machine: {os.cpu_count()} cpus, load average before {load_before}; executor: {executor} x{result['workers']}"
    )
    print(f"{result['tasks']} no-op tasks in {result['total_s']:.2f} s")
    print(f"end-to-end (incl. worker start): {result['end_to_end_ms_per_task']:.2f} ms/task")
    print(
        f"steady state: {result['steady_ms_per_task']:.2f} ms/task "
        f"({result['steady_ms_per_task_per_worker']:.2f} ms of a worker's time per task)"
    )
    verdict = "OK" if result["steady_ms_per_task_per_worker"] < 50 else "ABOVE TARGET"
    print(f"target < 50 ms per task: {verdict}")


if __name__ == "__main__":
    main()
