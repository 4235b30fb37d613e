"""Grouping-instance generators for family ``muri`` (the grouping ratio study).

Presets (``generate(preset, seed, **params)``):

``small``
    8 one-GPU jobs, ``k = 2`` resources (the two-resource case of Sec. 4.1,
    where Blossom is exact).
``k3`` / ``k4``
    12 one-GPU jobs over ``k = 3`` / ``k = 4`` resources, groups of at most
    ``k`` (the headline ratio table of multi-round Blossom vs the exact
    grouping).
``bucket40``
    40 jobs, ``k = 4``, one bucket: the size of the exact-ILP benchmark
    (102,050 candidate groups).
``trace``
    16 jobs whose GPU count and resource times (ms; ``k = 3``: data/CPU,
    GPU, network) are those of rows drawn uniformly from the vendored Muri
    trace ``traces/muri/trace1.csv`` (needs the data directory).

Synthetic resource times (choice written down, the paper gives none beyond
"jobs are bottlenecked on different resources", Table 1): each job draws a
bottleneck resource uniformly; its time there is uniform in [60, 100] ms
and uniform in [0, 40] ms on every other resource. Parameters:
``num_jobs``, ``num_resources``, ``max_group_size``, ``gpu_choices`` (a list
of GPU counts drawn uniformly; default ``[1]``, one bucket).

Preset parameters (``--set``) are typed and ranged by :data:`PRESET_PARAMS`,
derived from the generators' signatures with each preset's defaults
(:func:`ddlsched.params.signature_params`). 100,000 jobs take about 1.5 s.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ddlsched.errors import InvalidInstanceError
from ddlsched.params import PresetTable, declare, signature_params
from ddlsched.problems.muri import MuriGroupingInstance, MuriJob
from ddlsched.rng import make_rng

__all__ = ["MAX_JOBS", "PRESETS", "PRESET_PARAMS", "generate", "synthetic", "trace_sample"]

#: Most jobs a preset generates.
MAX_JOBS = 100_000


def synthetic(
    seed: int | np.random.Generator,
    num_jobs: int,
    num_resources: int,
    max_group_size: int | None = None,
    gpu_choices: tuple[int, ...] = (1,),
    name: str = "",
) -> MuriGroupingInstance:
    """Jobs with one bottleneck resource each (see the module docstring)."""
    if not isinstance(num_jobs, int) or num_jobs < 1:
        raise InvalidInstanceError(f"num_jobs: expected a positive integer, got {num_jobs!r}")
    if not isinstance(num_resources, int) or num_resources < 1:
        raise InvalidInstanceError(
            f"num_resources: expected a positive integer, got {num_resources!r}"
        )
    if not gpu_choices:
        raise InvalidInstanceError("gpu_choices: at least one GPU count is needed")
    rng = make_rng(seed)
    jobs = []
    for i in range(num_jobs):
        bottleneck = int(rng.integers(num_resources))
        times = rng.uniform(0.0, 40.0, size=num_resources)
        times[bottleneck] = rng.uniform(60.0, 100.0)
        gpus = int(gpu_choices[int(rng.integers(len(gpu_choices)))])
        jobs.append(MuriJob(f"j{i}", gpus, tuple(round(float(t), 3) for t in times)))
    return MuriGroupingInstance(tuple(jobs), num_resources, max_group_size, name)


def trace_sample(
    seed: int | np.random.Generator,
    num_jobs: int = 16,
    trace: str = "trace1",
    name: str = "",
) -> MuriGroupingInstance:
    """Jobs drawn from the rows of a vendored Muri trace (GPU count and resource times)."""
    from ddlsched.datadir import data_file
    from ddlsched.workloads.traces import read_muri

    raw = read_muri(data_file("traces", "muri", f"{trace}.csv"), trace)  # the input gate
    rng = make_rng(seed)
    picks = rng.integers(len(raw), size=num_jobs)
    jobs = []
    for i, r in enumerate(picks):
        row = int(r)
        times = tuple(float(t) for t in raw.extra["resource_time_ms"][row])
        label = f"{raw.extra['model'][row]}-{raw.job_id[row]}-{i}"
        jobs.append(MuriJob(label, int(raw.num_gpus[row]), times))
    return MuriGroupingInstance(tuple(jobs), 3, None, name or f"{trace} sample")


def _preset(defaults: dict[str, Any], fn=synthetic):
    def make(seed: int, **params: Any) -> MuriGroupingInstance:
        merged = {**defaults, **params}
        return fn(seed, **merged)

    return make


_DEFAULTS: dict[str, dict[str, Any]] = {
    "small": {"num_jobs": 8, "num_resources": 2, "name": "small"},
    "k3": {"num_jobs": 12, "num_resources": 3, "name": "k3"},
    "k4": {"num_jobs": 12, "num_resources": 4, "name": "k4"},
    "bucket40": {"num_jobs": 40, "num_resources": 4, "name": "bucket40"},
}
PRESETS = {
    **{name: _preset(defaults) for name, defaults in _DEFAULTS.items()},
    "trace": _preset({"num_jobs": 16}, trace_sample),
}

_NUM_JOBS = declare("number of jobs", minimum=1, maximum=MAX_JOBS)
_NAME = declare("instance name (a label)")
_SYNTHETIC = {
    "num_jobs": _NUM_JOBS,
    "num_resources": declare(
        "resources k (the interleaving slots of a group)", minimum=1, maximum=64
    ),
    "max_group_size": declare("jobs per group at most (default: k)", minimum=1, maximum=64),
    "gpu_choices": declare(
        "GPU counts drawn uniformly (one bucket per count)", minimum=1, maximum=1024
    ),
    "name": _NAME,
}
#: The typed parameters of every preset (``ddlsched presets muri``).
PRESET_PARAMS = {
    **{
        name: signature_params(
            synthetic, f"Muri{name.title()}Params", _SYNTHETIC, defaults=defaults
        )
        for name, defaults in _DEFAULTS.items()
    },
    "trace": signature_params(
        trace_sample,
        "MuriTraceParams",
        {
            "num_jobs": _NUM_JOBS,
            "trace": declare("Muri trace of the data directory: trace1..trace4"),
            "name": _NAME,
        },
        defaults={"num_jobs": 16},
    ),
}


#: Preset name -> builder and parameter class (:class:`ddlsched.params.PresetTable`).
PRESET_TABLE = PresetTable("muri", PRESETS, PRESET_PARAMS)


def generate(preset: str, seed: int = 0, **params: Any) -> MuriGroupingInstance:
    """Generate a grouping instance from a named preset."""
    return PRESET_TABLE.generate(preset, seed, **params)
