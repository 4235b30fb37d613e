"""How long ``ddlsched instance check`` takes on a large file, valid and with violations.

For every family with a unit list (``load_speed.scaled``: the smoke instance's jobs,
``dmlrs_slot``'s machines, ``placement``'s servers, repeated to ``--size`` units), three
files: valid; three bad units (an unknown field in the first, middle and last unit:
every violation is reported, each with its path); and one semantic violation
(``--semantic``, ``dmlrs`` only: a job arriving after the horizon, found by the loader,
then the loader runs again without that job). Each is checked ``--repeats`` times as a
whole ``ddlsched instance check FILE`` process (start-up and imports included); the
median wall time is printed.

    python benchmarks/instance_check_speed.py --size 100000 --repeats 3
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from load_speed import UNIT_LIST, scaled

from ddlsched.registry import families


def _timed(path: Path, repeats: int) -> tuple[float, int, int]:
    """Median seconds of ``instance check FILE``, its exit code and its violation count."""
    times, code, count = [], 0, 0
    for _ in range(repeats):
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "ddlsched.cli", "instance", "check", str(path)],
            capture_output=True,
            text=True,
            check=False,
        )
        times.append(time.perf_counter() - started)
        code, count = done.returncode, max(0, len(done.stdout.splitlines()) - 1)
    return statistics.median(times), code, count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(f"{'family':<11} {'file':<16} {'seconds':>8} {'exit':>4} {'violations':>10}")
    with tempfile.TemporaryDirectory() as tmp:
        for family in families():
            if family.name in ("debug", "muri_sim"):  # muri_sim's file names a trace
                continue
            data = scaled(family, args.size)
            cases = {"valid": data}
            bad = json.loads(json.dumps(data))
            bad_units = bad
            for key in UNIT_LIST.get(family.name, ("jobs",)):
                bad_units = bad_units[key]
            for k in (0, len(bad_units) // 2, len(bad_units) - 1):
                if isinstance(bad_units[k], dict):
                    bad_units[k]["bogus"] = 1
                else:  # placement's servers are numbers
                    bad_units[k] = "bogus"
            cases["3 bad units"] = bad
            if family.name == "dmlrs":
                late = json.loads(json.dumps(data))
                late["jobs"][10]["arrival_slot"] = late["slots"] + 1
                cases["1 semantic"] = late
            for case, content in cases.items():
                path = Path(tmp) / f"{family.name}.json"
                path.write_text(json.dumps(content))
                seconds, code, count = _timed(path, args.repeats)
                print(f"{family.name:<11} {case:<16} {seconds:8.2f} {code:4d} {count:10d}")


if __name__ == "__main__":
    main()
