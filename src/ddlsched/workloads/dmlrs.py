"""Instance generators of family ``dmlrs``: presets ``paper``, ``tiny``, ``micro``, ``trace``.

Spec ``docs/families/dmlrs.md`` ("Presets, generators and data").

* ``paper``: the notes' ranges (``E`` in [50, 200], ``K`` in [20000,
  500000], ``g`` in [30, 575] MB, ``tau`` in [1e-5, 1e-4] s, ``gamma`` in
  1..10, ``F`` in 1..200; worker GPU 0-4, CPU 1-10, memory 2-32 GB, storage
  5-10 GB; PS no GPU, CPU 1-10, memory 2-32 GB, storage 5-10 GB;
  ``theta1`` in [1, 100], ``theta2`` in [0.01, 1], ``theta3`` in [1, 15])
  plus the spec's choices (ours): machines of GPU 8, CPU 64, memory 256 GB,
  storage 2048 GB; ``b_ext = 1.25e9`` B/s (10 Gbps), ``b_int = 1.6e10``
  B/s (PCIe 3.0 x16); ``slot_s = 3600``; arrivals uniform in ``1..T``.
  Integer draws are uniform on the closed range, real draws uniform on the
  interval; demands are integers (GB, cores, GPUs). Parameters ``jobs``
  (50), ``machines`` (100), ``slots`` (20).
* ``tiny``: 2-4 jobs, 1-3 machines of GPU 2, CPU 4, memory 16, storage 32,
  ``T`` in 3..6, ``F`` in 1..4, ``gamma`` in 1..2, worker GPU 0-1, CPU 1-2,
  memory 1-8, storage 1-8 (PS: no GPU, CPU 1-2, memory 1-8, storage 1-8);
  the workload is drawn so that the job needs 1-3 slots at ``F`` workers at
  external bandwidth; ``theta3`` in [1, T] (ours), ``theta1``, ``theta2`` as
  ``paper``.
* ``micro``: 2 jobs, 2 machines, ``T`` in 2..3, ``F`` in 1..2, otherwise
  ``tiny``: small enough for a brute force over every allocation.
* ``trace`` (ours): the arrival process of a window of ``jobs``
  consecutive jobs of the Philly or ITP trace (``trace = philly | itp |
  itp:clusterNN``), or of one's own trace (a path ending in ``.csv``, read
  as a Muri-format trace: :func:`ddlsched.workloads.traces.read_muri`; only
  its ``submit_time`` column, ms, is used); the window starts at a seeded
  row, submit times mapped linearly onto slots ``1..T``; every other
  parameter as ``paper``.

Every generated instance records in ``meta`` its preset, seed and the
share of jobs that cannot finish by ``T`` even alone at their fastest
(``a_i + d_min_i - 1 > T``; kept, they earn 0 for everyone:
``unfinishable_share``).

Preset parameters (``--set``) are typed and ranged by :data:`PRESET_PARAMS`,
derived from the generators' signatures (:func:`ddlsched.params.signature_params`);
the maxima are the instance's own (:data:`~ddlsched.problems.dmlrs.MAX_JOBS`
and its siblings: 100,000 jobs take about 1.5 s).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from ddlsched.errors import InvalidInstanceError
from ddlsched.params import PresetTable, declare, signature_params
from ddlsched.problems.dmlrs import (
    DEFAULT_RESOURCES,
    MAX_JOBS,
    MAX_MACHINES,
    MAX_SLOTS,
    DmlrsInstance,
    DmlrsJob,
    Utility,
    fastest_slots,
    per_sample_time,
)
from ddlsched.rng import make_rng

__all__ = [
    "PAPER_CAPACITY",
    "PRESETS",
    "PRESET_PARAMS",
    "TINY_CAPACITY",
    "generate",
    "unfinishable_share",
]

PRESETS = ("paper", "tiny", "micro", "trace")
#: Machine capacity of ``paper`` (ours): GPU, CPU, memory GB, storage GB.
PAPER_CAPACITY = (8.0, 64.0, 256.0, 2048.0)
#: Machine capacity of ``tiny`` and ``micro``.
TINY_CAPACITY = (2.0, 4.0, 16.0, 32.0)
B_EXT = 1.25e9
B_INT = 1.6e10
SLOT_S = 3600.0
_MB = 1e6


def unfinishable_share(instance: DmlrsInstance) -> float:
    """Share of jobs with ``a_i + d_min_i - 1 > T``: they cannot finish even alone."""
    if not instance.jobs:
        return 0.0
    late = sum(
        job.arrival_slot + fastest_slots(instance, i) - 1 > instance.slots
        for i, job in enumerate(instance.jobs)
    )
    return late / len(instance.jobs)


def _int_param(name: str, value: Any, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise InvalidInstanceError(f"{name}: expected an integer, got {value!r}")
    if not low <= value <= high:
        raise InvalidInstanceError(f"{name}: must be in {low}..{high}, got {value!r}")
    return int(value)


def _paper_jobs(rng: np.random.Generator, arrivals: np.ndarray) -> tuple[DmlrsJob, ...]:
    """Jobs with the notes' ranges; ``arrivals`` gives their slots (one draw order)."""
    n = len(arrivals)
    epochs = rng.integers(50, 201, n)
    samples = rng.integers(20_000, 500_001, n)
    grad = rng.uniform(30, 575, n) * _MB
    tau = rng.uniform(1e-5, 1e-4, n)
    gamma = rng.integers(1, 11, n)
    batch = rng.integers(1, 201, n)
    w_gpu = rng.integers(0, 5, n)
    w_cpu = rng.integers(1, 11, n)
    w_mem = rng.integers(2, 33, n)
    w_sto = rng.integers(5, 11, n)
    p_cpu = rng.integers(1, 11, n)
    p_mem = rng.integers(2, 33, n)
    p_sto = rng.integers(5, 11, n)
    theta1 = rng.uniform(1, 100, n)
    theta2 = rng.uniform(0.01, 1, n)
    theta3 = rng.uniform(1, 15, n)
    return tuple(
        DmlrsJob(
            arrival_slot=int(arrivals[i]),
            epochs=int(epochs[i]),
            samples=int(samples[i]),
            grad_bytes=float(grad[i]),
            tau_s=float(tau[i]),
            gamma=int(gamma[i]),
            global_batch=int(batch[i]),
            worker=(float(w_gpu[i]), float(w_cpu[i]), float(w_mem[i]), float(w_sto[i])),
            ps=(0.0, float(p_cpu[i]), float(p_mem[i]), float(p_sto[i])),
            utility=Utility(float(theta1[i]), float(theta2[i]), float(theta3[i])),
        )
        for i in range(n)
    )


def _instance(
    slots: int, capacity: tuple[float, ...], machines: int, jobs: tuple[DmlrsJob, ...]
) -> DmlrsInstance:
    """An instance with the presets' slot length, bandwidths and resources."""
    return DmlrsInstance(
        slots=slots,
        slot_s=SLOT_S,
        b_int=B_INT,
        b_ext=B_EXT,
        resources=DEFAULT_RESOURCES,
        capacity=(capacity,) * machines,
        jobs=jobs,
    )


def _finish(instance: DmlrsInstance, preset: str, seed: int, **extra: Any) -> DmlrsInstance:
    meta = {"preset": preset, "seed": seed, **extra}
    meta["unfinishable_share"] = unfinishable_share(instance)
    object.__setattr__(instance, "meta", meta)
    return instance


def _sizes(jobs: Any, machines: Any, slots: Any) -> tuple[int, int, int]:
    return (
        _int_param("jobs", jobs, 1, MAX_JOBS),
        _int_param("machines", machines, 1, MAX_MACHINES),
        _int_param("slots", slots, 1, MAX_SLOTS),
    )


def paper(seed: int = 0, *, jobs: int = 50, machines: int = 100, slots: int = 20) -> DmlrsInstance:
    """The ``paper`` preset (module docstring)."""
    n, machines, slots = _sizes(jobs, machines, slots)
    rng = make_rng(seed)
    arrivals = rng.integers(1, slots + 1, n)
    instance = _instance(slots, PAPER_CAPACITY, machines, _paper_jobs(rng, arrivals))
    return _finish(instance, "paper", seed)


def _small(
    rng: np.random.Generator, n: int, machines: int, slots: int, max_f: int, seed: int, preset: str
) -> DmlrsInstance:
    jobs = []
    for _ in range(n):
        batch = int(rng.integers(1, max_f + 1))
        gamma = int(rng.integers(1, 3))
        grad = float(rng.uniform(30, 575)) * _MB
        tau = float(rng.uniform(1e-5, 1e-4))
        probe = DmlrsJob(1, 1, 1, grad, tau, gamma, batch, (1.0,), (1.0,), Utility(1, 1, 1))
        per_slot = SLOT_S * batch / per_sample_time(probe, B_EXT)
        need = float(rng.uniform(0.5, 3.0)) * per_slot  # 1-3 slots at F workers, b_ext
        epochs = int(rng.integers(1, 4))
        samples = max(1, math.ceil(need / epochs))
        worker = (
            float(rng.integers(0, 2)),
            float(rng.integers(1, 3)),
            float(rng.integers(1, 9)),
            float(rng.integers(1, 9)),
        )
        ps = (0.0, float(rng.integers(1, 3)), float(rng.integers(1, 9)), float(rng.integers(1, 9)))
        jobs.append(
            DmlrsJob(
                arrival_slot=int(rng.integers(1, slots + 1)),
                epochs=epochs,
                samples=samples,
                grad_bytes=grad,
                tau_s=tau,
                gamma=gamma,
                global_batch=batch,
                worker=worker,
                ps=ps,
                utility=Utility(
                    float(rng.uniform(1, 100)),
                    float(rng.uniform(0.01, 1)),
                    float(rng.uniform(1, slots)),
                ),
            )
        )
    instance = _instance(slots, TINY_CAPACITY, machines, tuple(jobs))
    return _finish(instance, preset, seed)


def tiny(
    seed: int = 0,
    *,
    jobs: int | None = None,
    machines: int | None = None,
    slots: int | None = None,
) -> DmlrsInstance:
    """The ``tiny`` preset (module docstring); ``jobs``, ``machines``, ``slots`` may be fixed."""
    rng = make_rng(seed)
    drawn = (int(rng.integers(2, 5)), int(rng.integers(1, 4)), int(rng.integers(3, 7)))
    given = (jobs, machines, slots)
    n, machines, slots = _sizes(*(d if g is None else g for d, g in zip(drawn, given, strict=True)))
    return _small(rng, n, machines, slots, 4, seed, "tiny")


def micro(seed: int = 0) -> DmlrsInstance:
    """The ``micro`` preset: 2 jobs, 2 machines, ``T <= 3``, ``F <= 2`` (brute-force size)."""
    rng = make_rng(seed)
    slots = int(rng.integers(2, 4))
    return _small(rng, 2, 2, slots, 2, seed, "micro")


def trace(
    seed: int = 0,
    *,
    jobs: int = 50,
    machines: int = 100,
    slots: int = 20,
    trace: str = "philly",
) -> DmlrsInstance:
    """The ``trace`` preset: a Philly or ITP window's arrivals, ``paper`` everything else."""
    from ddlsched.workloads.traces import ITP_CLUSTERS, read_itp, read_muri, read_philly

    n, machines, slots = _sizes(jobs, machines, slots)
    name = trace
    if name == "philly":
        raw = read_philly()
    elif name == "itp":
        raw = read_itp()
    elif isinstance(name, str) and name.startswith("itp:"):
        raw = read_itp(name.partition(":")[2])
    elif isinstance(name, str) and name.endswith(".csv"):  # one's own, in the Muri format
        raw = read_muri(Path(name))
    else:
        raise InvalidInstanceError(
            f"trace: expected philly, itp, itp:clusterNN ({', '.join(ITP_CLUSTERS)}) or a "
            f"Muri-format .csv path, got {name!r}"
        )
    submit = np.sort(np.asarray(raw.submit_s, dtype=float))
    if len(submit) < n:
        raise InvalidInstanceError(f"trace {name}: {len(submit)} jobs, fewer than jobs = {n}")
    rng = make_rng(seed)
    start = int(rng.integers(0, len(submit) - n + 1))
    window = submit[start : start + n]
    span = window[-1] - window[0]
    if span > 0:
        arrivals = 1 + np.floor((window - window[0]) / span * slots).astype(np.int64)
    else:
        arrivals = np.ones(n, dtype=np.int64)
    arrivals = np.minimum(arrivals, slots)
    instance = _instance(slots, PAPER_CAPACITY, machines, _paper_jobs(rng, arrivals))
    return _finish(
        instance, "trace", seed, trace=str(name), window_start=start, window_span_s=float(span)
    )


_PRESETS = {"paper": paper, "tiny": tiny, "micro": micro, "trace": trace}

_SIZES = {
    "jobs": declare("jobs", minimum=1, maximum=MAX_JOBS),
    "machines": declare("machines", minimum=1, maximum=MAX_MACHINES),
    "slots": declare("slots T", minimum=1, maximum=MAX_SLOTS),
}
_DRAWN = {
    "jobs": declare("jobs (default: 2-4, drawn)", minimum=1, maximum=MAX_JOBS),
    "machines": declare("machines (default: 1-3, drawn)", minimum=1, maximum=MAX_MACHINES),
    "slots": declare("slots T (default: 3-6, drawn)", minimum=1, maximum=MAX_SLOTS),
}
#: The typed parameters of every preset (``ddlsched presets dmlrs``).
PRESET_PARAMS = {
    "paper": signature_params(paper, "DmlrsPaperParams", _SIZES),
    "tiny": signature_params(tiny, "DmlrsTinyParams", _DRAWN),
    "micro": signature_params(micro, "DmlrsMicroParams", {}),
    "trace": signature_params(
        trace,
        "DmlrsTraceParams",
        {
            **_SIZES,
            "trace": declare("arrivals of philly, itp, itp:clusterNN or a Muri-format .csv"),
        },
    ),
}


#: Preset name -> builder and parameter class (:class:`ddlsched.params.PresetTable`).
PRESET_TABLE = PresetTable("dmlrs", _PRESETS, PRESET_PARAMS)


def generate(preset: str, seed: int = 0, **params: Any) -> DmlrsInstance:
    """A ``dmlrs`` instance of ``preset`` (module docstring) from ``seed``."""
    return PRESET_TABLE.generate(preset, seed, **params)
