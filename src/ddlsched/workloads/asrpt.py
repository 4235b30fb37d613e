"""Instance generators of family ``asrpt``: ``tiny``, ``tiny-comm`` and the trace presets.

Spec ``docs/families/asrpt.md`` ("Presets, generators and data").

``tiny`` (this module) is small enough for the exact model and the brute
force: 1-2 servers of 2-4 GPUs, 3-6 jobs, 1-3 synthetic configurations of
1-3 stages (1-3 replicas each, ring AllReduce). Every term of Eq. (7) is
a whole multiple of 50 ms for every placement (hence of the spec's 10 ms):
``B_intra = B_inter`` (10 Gbps; allowed, ``>= B_inter / g``), compute
``fwd + bwd`` a multiple of 50 ms, each stage boundary's transfer a
multiple of 50 ms per neighbour replica (inter-server ``g`` times that),
and each AllReduce ``L x 50 ms`` intra-server with ``L g / x`` whole for
every split ``x < k``. So every ``alpha`` is a multiple of 50 ms;
iterations are even (2-20), so every duration ``n alpha`` is a whole
number of ``time_unit_s = 0.1`` s, as are the arrivals (0-3 s, the first
at 0). Iterations are halved (kept even) until the horizon ``max r + sum_i
n_i alpha_max_i`` is at most 500 units. ``num_jobs`` may be set up to 32
(:data:`TINY_MAX_JOBS`, for the exact-frontier study; the horizon cap
holds at every size, so more jobs means shorter ones). Predictions carry a seeded error:
a job is unseen (``n~ = 0``) with probability 0.15, else ``n~ = n
exp(0.5 Z)``.

``tiny-comm`` (spec revision 2026-11-25, "a tiny preset where placement
matters") is ``tiny`` with ``B_intra = 4 B_inter`` (40 Gbps against 10), so
that an inter-server placement is slower than an intra-server one and
Algorithm 1's Lines 16-23 (communication-heavy jobs, the delay window,
starts on improvement or at the deadline) are exercised. To keep every term
on the 50 ms grid the intra-server unit stays 50 ms (the data volumes scale
with ``B_intra``), so an inter-server term is ``4 g`` times its intra-server
one, and AllReduce's ``4 L g / x`` is whole for every split. Choices of ours
that make delay windows open (with ``tiny``'s shape they open on 1 seed in
100, and on 2 with ``tiny``'s shape at ``B_intra = 4 B_inter``): 2 servers of 3 GPUs, every configuration on at most 2 GPUs (jobs
share servers, so a free GPU on each of two servers is a common state),
2-3 configurations, 4-6 jobs, arrivals in 0-1 s (10 units). Measured: a
window of positive length opens on 53 of seeds 0-99 (16 of 0-29, the test's
count); the exact model proves all 100 (mean 0.03 s). The horizon cap and
the predictions are ``tiny``'s.

The trace-driven presets live in :mod:`ddlsched.workloads.asrpt_traces`.

Preset parameters (``--set``) are typed and ranged by :data:`PRESET_PARAMS`,
derived from the generators' signatures (:func:`ddlsched.params.signature_params`;
the trace presets' on first use: their module imports pandas).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ddlsched.errors import InvalidInstanceError
from ddlsched.params import LazyParams, PresetTable, declare, signature_params
from ddlsched.problems.asrpt import AsrptInstance, Cluster, Job, JobConfig, job_placement_instance
from ddlsched.problems.placement import Stage, alpha_max
from ddlsched.rng import make_rng

__all__ = [
    "PRESETS",
    "PRESET_PARAMS",
    "SYNTHETIC",
    "TINY_HORIZON_UNITS",
    "TINY_MAX_JOBS",
    "generate",
    "tiny",
    "tiny_comm",
]

_STEP_S = 0.05
_B = 10e9 / 8
TINY_HORIZON_UNITS = 500
#: The largest ``num_jobs`` of the tiny presets (the exact-frontier study goes to 16).
TINY_MAX_JOBS = 32


def _tiny_config(rng, g: int, max_gpus: int, name: str, ratio: int) -> JobConfig:
    num_stages = min(int(rng.integers(1, 4)), max_gpus)
    replicas: list[int] = []
    for _ in range(num_stages):
        room = max_gpus - sum(replicas) - (num_stages - len(replicas) - 1)
        if room < 1:
            break
        replicas.append(int(rng.integers(1, min(3, room) + 1)))
    num_stages = len(replicas)
    # transfer unit u_s (s per neighbour replica, intra-server) of boundary s-1|s;
    # B_intra = ratio * B_inter, so an inter-server term is g * ratio times its intra one
    units = [0] + [int(rng.integers(0, 3)) for _ in range(num_stages - 1)]
    stages = []
    for s, k in enumerate(replicas):
        fwd_steps = int(rng.integers(1, 3))
        bwd_steps = int(rng.integers(1, 3))
        k_prev = replicas[s - 1] if s > 0 else 1
        k_next = replicas[s + 1] if s + 1 < num_stages else 1
        b_intra = ratio * _B
        in_bytes = units[s] * _STEP_S * k_prev * b_intra / 2 if s > 0 else 0.0
        out_bytes = units[s + 1] * _STEP_S * k_next * b_intra / 2 if s + 1 < num_stages else 0.0
        if k >= 2:
            steps = int(rng.integers(1, 3))
            if any((steps * g * ratio) % x for x in range(1, k)):
                steps = math.lcm(*range(1, k)) * steps
            param_bytes = steps * _STEP_S * b_intra * k / (2.0 * (k - 1))
        else:
            param_bytes = float(rng.integers(1, 5)) * 1e7  # no AllReduce: enters no term
        stages.append(
            Stage(
                replicas=k,
                fwd_s=fwd_steps * _STEP_S,
                bwd_s=bwd_steps * _STEP_S,
                in_bytes=in_bytes,
                out_bytes=out_bytes,
                param_bytes=param_bytes,
            )
        )
    desc = f"synthetic {num_stages}-stage {name}: replicas {replicas}, terms multiples of 50 ms"
    return JobConfig(allreduce="rar", stages=tuple(stages), description=desc)


@dataclass(frozen=True)
class _TinyShape:
    """What distinguishes the tiny presets: the servers drawn (inclusive range) and
    ``B_intra / B_inter`` (an integer, so every Eq. 7 term stays on the 50 ms grid)."""

    preset: str
    servers: tuple[int, int]
    ratio: int
    gpus_per_server: tuple[int, int] = (2, 4)
    jobs: tuple[int, int] = (3, 6)
    configs: tuple[int, int] = (1, 3)
    arrival_units: int = 30
    spare_gpu: bool = False


_TINY = _TinyShape("tiny", (1, 2), 1)
_TINY_COMM = _TinyShape(
    "tiny-comm",
    servers=(2, 2),
    ratio=4,
    gpus_per_server=(3, 3),
    jobs=(4, 6),
    configs=(2, 3),
    arrival_units=10,
    spare_gpu=True,
)


def tiny(
    seed: int = 0, *, num_jobs: int | None = None, servers: int | None = None
) -> AsrptInstance:
    """A tiny instance the exact model proves in seconds (see the module docstring)."""
    return _tiny(seed, num_jobs, servers, _TINY)


def tiny_comm(seed: int = 0, *, num_jobs: int | None = None) -> AsrptInstance:
    """``tiny`` where placement matters: ``B_intra = 4 B_inter`` (module docstring)."""
    return _tiny(seed, num_jobs, None, _TINY_COMM)


def _tiny(seed: int, num_jobs: int | None, servers: int | None, shape: _TinyShape) -> AsrptInstance:
    rng = make_rng(seed)
    lo_m, hi_m = shape.servers
    M = int(rng.integers(lo_m, hi_m + 1)) if servers is None else servers
    g = int(rng.integers(shape.gpus_per_server[0], shape.gpus_per_server[1] + 1))
    n_jobs = int(rng.integers(shape.jobs[0], shape.jobs[1] + 1)) if num_jobs is None else num_jobs
    for name, value, lo, hi in (("servers", M, lo_m, hi_m), ("num_jobs", n_jobs, 1, TINY_MAX_JOBS)):
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            raise InvalidInstanceError(
                f"preset {shape.preset}: {name} must be in {lo}..{hi}, got {value!r}"
            )
    cluster = Cluster(servers=M, gpus_per_server=g, b_inter=_B, b_intra=shape.ratio * _B)
    num_configs = int(rng.integers(shape.configs[0], shape.configs[1] + 1))
    max_gpus = g - 1 if shape.spare_gpu else min(cluster.num_gpus, 6)
    configs = {
        f"c{c}": _tiny_config(rng, g, max_gpus, f"c{c}", shape.ratio) for c in range(num_configs)
    }
    names = list(configs)
    arrivals = sorted(int(rng.integers(0, shape.arrival_units + 1)) for _ in range(n_jobs))
    arrivals = [a - arrivals[0] for a in arrivals]
    picks = [names[int(rng.integers(num_configs))] for _ in range(n_jobs)]
    iterations = [2 * int(rng.integers(1, 11)) for _ in range(n_jobs)]
    unit = 0.1
    amax = {}
    for name, config in configs.items():
        full, rest = divmod(config.num_gpus, g)
        packed = (g,) * full + ((rest,) if rest else ())
        amax[name] = alpha_max(job_placement_instance(cluster, config, packed))

    def horizon() -> float:
        return arrivals[-1] + sum(
            n * amax[c] / unit for n, c in zip(iterations, picks, strict=True)
        )

    while horizon() > TINY_HORIZON_UNITS:
        k = max(range(n_jobs), key=lambda i: iterations[i] * amax[picks[i]])
        if iterations[k] <= 2:
            break
        iterations[k] = max(2, 2 * (iterations[k] // 4))
    jobs = []
    for i in range(n_jobs):
        if rng.random() < 0.15:
            predicted = 0.0
        else:
            predicted = round(iterations[i] * math.exp(0.5 * float(rng.standard_normal())), 3)
        jobs.append(
            Job(
                id=f"j{i}",
                arrival_s=round(arrivals[i] * unit, 10),
                config=picks[i],
                iterations=iterations[i],
                predicted_iterations=predicted,
                group=picks[i],
            )
        )
    return AsrptInstance(
        cluster=cluster,
        configs=configs,
        jobs=tuple(jobs),
        time_unit_s=unit,
        provenance={"preset": shape.preset, "seed": seed},
    )


def _trace(seed: int = 0, **params: Any) -> AsrptInstance:
    from ddlsched.workloads.asrpt_traces import trace_preset

    return trace_preset(seed, **params)


def _testbed(seed: int = 0, **params: Any) -> AsrptInstance:
    from ddlsched.workloads.asrpt_traces import testbed_preset

    return testbed_preset(seed, **params)


def _paper(seed: int = 0, **params: Any) -> AsrptInstance:
    from ddlsched.workloads.asrpt_traces import paper_preset

    return paper_preset(seed, **params)


PRESETS = {
    "tiny": tiny,
    "tiny-comm": tiny_comm,
    "trace": _trace,
    "testbed": _testbed,
    "paper": _paper,
}
#: The synthetic presets (no trace, no injected ``alpha~_min``).
SYNTHETIC = ("tiny", "tiny-comm")

#: Passed through unchecked to the trace presets: ``alpha_min_of`` is injected by
#: the family; ``delay`` is refused there with a hint (a method parameter).
_PASSED = ("alpha_min_of", "delay")


def _tiny_params() -> type:
    return signature_params(
        tiny,
        "AsrptTinyParams",
        {
            "num_jobs": declare("jobs (default: 3-6, drawn)", minimum=1, maximum=TINY_MAX_JOBS),
            "servers": declare("servers (default: 1-2, drawn)", minimum=1, maximum=2),
        },
    )


def _tiny_comm_params() -> type:
    return signature_params(
        tiny_comm,
        "AsrptTinyCommParams",
        {"num_jobs": declare("jobs (default: 4-6, drawn)", minimum=1, maximum=TINY_MAX_JOBS)},
    )


def _window_params() -> type:
    from ddlsched.workloads.asrpt_traces import WINDOW_PARAMS

    return WINDOW_PARAMS


def _testbed_params() -> type:
    from ddlsched.workloads.asrpt_traces import TESTBED_PARAMS

    return TESTBED_PARAMS


#: The typed parameters of every preset (``ddlsched presets asrpt``).
PRESET_PARAMS = LazyParams(
    {
        "tiny": _tiny_params,
        "tiny-comm": _tiny_comm_params,
        "trace": _window_params,
        "testbed": _testbed_params,
        "paper": _window_params,
    }
)


#: Preset name -> builder and parameter class (:class:`ddlsched.params.PresetTable`).
PRESET_TABLE = PresetTable("asrpt", PRESETS, PRESET_PARAMS)


def generate(preset: str, seed: int = 0, **params: Any) -> AsrptInstance:
    """Generate an ``asrpt`` instance from a named preset."""
    passed = {} if preset in SYNTHETIC else {k: params.pop(k) for k in _PASSED if k in params}
    return PRESET_TABLE.build(preset, seed, params, **passed)
