"""How long loading a 100,000-job instance takes, per family (target: under 2 s).

For every registered family, the smoke instance is scaled up to ``--size``
units by repeating its largest list (jobs; machines for ``dmlrs_slot``;
servers for ``placement``, whose instance is one job) with fresh ids, saved,
and loaded ``--repeats`` times: in-process (``Family.load``: reading, JSON
gate, validation, range checks) and as a whole ``ddlsched instance check``
process (interpreter start-up, imports and ``check_instance`` included).
``muri_sim``'s instance names a trace that is read when a method runs
(under its time limit): its row is a Muri-format trace of ``--size`` jobs,
read by ``load_trace``.

    python benchmarks/load_speed.py --size 100000 --repeats 3
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ddlsched.registry import families

#: The list of an instance file that holds its units, when it is not ``jobs``.
UNIT_LIST = {"placement": ("available",), "dmlrs_slot": ("machines",)}


def scaled(family, size: int) -> dict:
    """The family's smoke instance with its unit list repeated to ``size`` entries."""
    preset, params = family.smoke
    data = family.generate(preset, 0, **dict(params)).to_dict()
    path = UNIT_LIST.get(family.name, ("jobs",))
    parent = data
    for key in path[:-1]:
        parent = parent[key]
    items = parent[path[-1]]
    out = []
    for k in range(size):
        item = copy.deepcopy(items[k % len(items)])
        if isinstance(item, dict) and "id" in item:
            item["id"] = f"x{k}"
        out.append(item)
    parent[path[-1]] = out
    return data


def muri_trace(size: int, directory: Path) -> Path:
    """A Muri-format trace of ``size`` jobs (the rows of trace1 repeated, fresh ids)."""
    from ddlsched.datadir import data_file

    lines = data_file("traces", "muri", "trace1.csv").read_text().splitlines()
    header, rows = lines[0], lines[1:]
    out = [header]
    for k in range(size):
        cells = rows[k % len(rows)].split(",")
        cells[0] = str(k)
        out.append(",".join(cells))
    path = directory / "trace.csv"
    path.write_text("\n".join(out) + "\n")
    return path


def _timed(fn, repeats: int) -> tuple[list[float], list[float]]:
    """Wall and CPU (this process) seconds of ``repeats`` calls: the CPU time is what
    the load of other processes on the machine does not inflate."""
    wall, cpu = [], []
    for _ in range(repeats):
        started, started_cpu = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - started)
        cpu.append(time.process_time() - started_cpu)
    return wall, cpu


def _cli(args: list[str]) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "ddlsched.cli", *args], capture_output=True, text=True, check=False
    )
    if run.returncode != 0:
        raise SystemExit(f"ddlsched {' '.join(args)}: {run.stderr.strip()}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=100_000, help="units (jobs) per instance")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--families", help="comma-separated (default: every registered family)")
    options = ap.parse_args()
    chosen = options.families.split(",") if options.families else None
    print(f"loading an instance of {options.size:,} units ({options.repeats} repeats, s)")
    print(
        "| family | unit list | file MB | load wall median | load wall max | load CPU median "
        "| `instance check` wall max |"
    )
    print("|---|---|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory(prefix="ddlsched-load-") as tmp:
        directory = Path(tmp)
        for fam in families():
            if chosen and fam.name not in chosen:
                continue
            if fam.name == "muri_sim":
                from ddlsched.workloads.muri_traces import load_trace

                trace = muri_trace(options.size, directory)
                wall, cpu = _timed(lambda t=trace: load_trace(str(t)), options.repeats)
                size_mb = trace.stat().st_size / 2**20
                print(
                    f"| muri_sim | trace rows (load_trace) | {size_mb:.1f} | "
                    f"{statistics.median(wall):.2f} | {max(wall):.2f} | "
                    f"{statistics.median(cpu):.2f} | - |"
                )
                continue
            data = scaled(fam, options.size)
            path = directory / f"{fam.name}.json"
            path.write_text(json.dumps(data))
            wall, cpu = _timed(lambda p=path, f=fam: f.load(p), options.repeats)
            cli, _ = _timed(
                lambda p=path, f=fam: _cli(["instance", "check", f.name, str(p)]), options.repeats
            )
            unit = ".".join(UNIT_LIST.get(fam.name, ("jobs",)))
            print(
                f"| {fam.name} | {unit} | {path.stat().st_size / 2**20:.1f} | "
                f"{statistics.median(wall):.2f} | {max(wall):.2f} | "
                f"{statistics.median(cpu):.2f} | {max(cli):.2f} |"
            )


if __name__ == "__main__":
    main()
