"""What the loaders' hash check costs, on the largest registered file (philly.csv, 3.4 MB).

Three timings, each the median of ``--repeats`` runs in this process:

1. ``first check``: :func:`ddlsched.datadir.data_file` on a file not checked yet in this
   process (the per-process cache emptied before each run): one ``stat`` and a SHA-256 of the
   whole file;
2. ``later check``: the same call once the file was checked (one ``stat``, the answer kept by
   path, mtime and size);
3. ``parse``: :func:`ddlsched.workloads.traces.read_philly`, the loader itself (the check
   included, already cached), for scale.

Usage (repository root, venv active; the data found as the loaders find it)::

    python benchmarks/data_hash_cost.py [--repeats 20]
"""

from __future__ import annotations

import argparse
import statistics
import time

__all__ = ["main"]


def _median_s(call, repeats: int, before=None) -> float:
    times = []
    for _ in range(repeats):
        if before is not None:
            before()
        started = time.perf_counter()
        call()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    """Print the three medians (milliseconds)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args(argv)

    from ddlsched.data import verify
    from ddlsched.datadir import data_file
    from ddlsched.workloads.traces import read_philly

    parts = ("traces", "philly", "philly.csv")
    path = data_file(*parts)
    print(f"file: {path} ({path.stat().st_size:,} bytes)")
    first = _median_s(lambda: data_file(*parts), args.repeats, before=verify._CHECKED.clear)
    data_file(*parts)
    later = _median_s(lambda: data_file(*parts), args.repeats * 50)
    parse = _median_s(read_philly, max(3, args.repeats // 4))
    print(f"first check (stat + sha256): {first * 1e3:8.2f} ms")
    print(f"later check (stat, cached):  {later * 1e3:8.3f} ms")
    print(f"read_philly (parse):         {parse * 1e3:8.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
