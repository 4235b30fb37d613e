"""Crowded asrpt instances shared by the tests of ``improve`` and its starts: ``tiny``'s
cluster and configurations with many jobs arriving close together, so that jobs wait."""

from __future__ import annotations

import numpy as np

from ddlsched.problems.asrpt import AsrptInstance
from ddlsched.rng import make_rng
from ddlsched.workloads.asrpt import tiny


def crowded(seed: int, jobs: int, rng_seed: int, iterations: tuple[int, int]) -> AsrptInstance:
    """``tiny(seed)`` with ``jobs`` jobs (its jobs' configurations in turn), arrivals drawn
    uniformly in [0, 3) s and iteration counts in ``[iterations[0], iterations[1])``, both by
    ``make_rng(rng_seed)``."""
    data = tiny(seed).to_dict()
    rng = make_rng(rng_seed)
    arrivals = np.sort(rng.uniform(0, 3.0, jobs)).round(1)
    base = data["jobs"]
    data["jobs"] = [
        dict(base[k % len(base)], id=f"j{k}", arrival_s=float(arrivals[k]),
             iterations=int(rng.integers(*iterations)))
        for k in range(jobs)
    ]  # fmt: skip
    return AsrptInstance.from_dict(data)
