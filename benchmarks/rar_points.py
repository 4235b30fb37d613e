"""The paper-scale rar instances the rar benchmark scripts name, and their run stamp.

A point is ``SERVERS:SEED``: ``4:SEED`` is Fig. 4's instance of that seed (the preset's
own servers), ``16:SEED`` Fig. 6's at 16 servers (horizon 1,500), as
``benchmarks/suites/rar.toml`` generates them. Imported by the scripts beside it (run
from this folder's parent: ``python benchmarks/SCRIPT.py``).
"""

from __future__ import annotations

import subprocess

from ddlsched.problems.rar import RarInstance
from ddlsched.workloads.rar import generate

#: Fig. 6's instances: the server count is the swept parameter.
FIG6_PARAMS = {"horizon": 1500}


def paper_point(spec: str, preset: str = "paper") -> tuple[str, RarInstance]:
    """``SERVERS:SEED`` -> (a label, the instance as the rar suite generates it)."""
    servers, seed = (int(v) for v in spec.split(":"))
    if servers == 4:
        return f"Fig. 4 seed {seed}", generate(preset, seed)
    instance = generate(preset, seed, num_servers=servers, **FIG6_PARAMS)
    return f"Fig. 6, {servers} servers, seed {seed}", instance


def stamp() -> str:
    """``date -u`` and ``uptime``: when a figure was measured and at what load."""
    now = subprocess.run(["date", "-u"], capture_output=True, text=True).stdout.strip()
    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    return f"{now}; load: {load}"
