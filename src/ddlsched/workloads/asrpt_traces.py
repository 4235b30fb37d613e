"""Trace-driven instances of family ``asrpt``: presets ``trace``, ``testbed`` and ``paper``.

Spec ``docs/families/asrpt.md`` ("Presets, generators and data"); A-SRPT paper,
Sec. V-A (testbed) and V-B (simulations). Every preset is a window of a
trace built by :func:`ddlsched.workloads.asrpt_window.build_window` (the
pipeline: trace, split, groups and features, configurations, iterations,
window, single-GPU share sweep, predictions, NIC sweep; the traces are
:mod:`ddlsched.workloads.asrpt_trace_table`).

Presets (parameters are keyword arguments; every one is validated with a
one-line :class:`~ddlsched.errors.InvalidInstanceError`):

* ``trace``: ``trace="philly"``, ``jobs=None``, ``start=None``,
  ``predictor="rf"``, ``sigma=0.5`` (``noisy`` only), ``single_gpu_share=None``
  (as in the trace), ``nic_gbps=10``, ``servers=250``,
  ``gpus_per_server=8``, ``window_from="test"``, ``max_job_gpus=None`` (keep
  every job; a job needing more GPUs than the cluster has is refused,
  naming it) and ``alpha_min_of``. The spec's ``delay`` is a method
  parameter (A-SRPT's ``delay_factor``), not an instance one: passing it
  here is an error that says so.
* ``paper`` (Sec. V-B): ``trace`` with the paper's cluster (250 x 8,
  10 Gbps, 300 GB/s, the ``trace`` defaults) and a default window of 5 %
  of the trace.
* ``testbed`` (Sec. V-A): 14 servers x 1 GPU, ``B_inter = B_intra = 128
  GB/s`` (PCIe between MIG vGPUs: every placement is equivalent), a
  window of ``jobs=75`` consecutive jobs with ``g_i <= 14`` from Philly's
  test split (the paper used three random sets from its own trace; seeds
  0-2 are our three job sets, the seed drawing the start), arrivals and
  iterations scaled by ``scale=0.1`` (``n' = max(1, round(0.1 n))``, the
  learned predictions scaled by the same factor, ``perfect`` and ``noisy``
  computed on ``n'``). A-SRPT's ``delay_factor = 0`` of the testbed is a
  method parameter and is the caller's to set. Parameters: ``trace``,
  ``jobs``, ``start``, ``predictor``, ``sigma``, ``scale`` and
  ``alpha_min_of``.
"""

from __future__ import annotations

from typing import Any

from ddlsched.errors import InvalidInstanceError
from ddlsched.jsonio import require_int, require_number
from ddlsched.params import declare, signature_params
from ddlsched.problems.asrpt import AsrptInstance, Cluster
from ddlsched.workloads.asrpt_predict import PREDICTORS
from ddlsched.workloads.asrpt_window import WINDOW_FROM, AlphaMinOf, build_window

__all__ = [
    "DEFAULT_JOBS",
    "REFERENCE_B_INTER",
    "REFERENCE_B_INTRA",
    "TESTBED_PARAMS",
    "WINDOW_PARAMS",
    "paper_preset",
    "testbed_preset",
    "trace_preset",
]

DEFAULT_JOBS = 1000
PAPER_WINDOW_SHARE = 0.05
REFERENCE_B_INTER = 10e9 / 8  # 10 Gbps NIC
REFERENCE_B_INTRA = 300e9  # 300 GB/s NVLink (V100)
TESTBED_SERVERS = 14
TESTBED_BANDWIDTH = 128e9  # 128 GB/s PCIe between MIG vGPUs
TESTBED_JOBS = 75
TESTBED_SCALE = 0.1


# --------------------------------------------------------------------------- presets


def _cluster(servers: Any, gpus_per_server: Any, nic_gbps: Any) -> tuple[Cluster, Cluster]:
    servers = require_int(servers, "servers", minimum=1)
    gpus_per_server = require_int(gpus_per_server, "gpus_per_server", minimum=1)
    nic_gbps = require_number(nic_gbps, "nic_gbps", minimum=0, strict=True)
    cluster = Cluster(servers, gpus_per_server, nic_gbps * 1e9 / 8, REFERENCE_B_INTRA)
    reference = Cluster(servers, gpus_per_server, REFERENCE_B_INTER, REFERENCE_B_INTRA)
    return cluster, reference


def _no_delay(delay: Any) -> None:
    if delay is not None:
        raise InvalidInstanceError(
            "delay: a method parameter (asrpt's delay_factor), not a preset parameter"
        )


def _window_preset(
    seed: int,
    preset: str,
    default_jobs: Any,
    *,
    trace: str = "philly",
    jobs: int | str | None = None,
    start: int | None = None,
    predictor: str = "rf",
    sigma: float = 0.5,
    single_gpu_share: float | None = None,
    nic_gbps: float = 10.0,
    servers: int = 250,
    gpus_per_server: int = 8,
    window_from: str = "test",
    max_job_gpus: int | None = None,
    alpha_min_of: AlphaMinOf | None = None,
    delay: Any = None,
) -> AsrptInstance:
    """The presets ``trace`` and ``paper``: a window of a trace on a cluster of
    ``servers`` x ``gpus_per_server`` GPUs with a ``nic_gbps`` NIC."""
    _no_delay(delay)
    cluster, reference = _cluster(servers, gpus_per_server, nic_gbps)
    return build_window(
        seed,
        preset=preset,
        trace=trace,
        jobs=jobs,
        start=start,
        predictor=predictor,
        sigma=sigma,
        single_gpu_share=single_gpu_share,
        cluster=cluster,
        reference=reference,
        window_from=window_from,
        max_job_gpus=max_job_gpus,
        scale=1.0,
        default_jobs=default_jobs,
        alpha_min_of=alpha_min_of,
    )


def trace_preset(seed: int = 0, **params: Any) -> AsrptInstance:
    """Preset ``trace``: a window of a trace (module docstring; ``jobs=None``: 1000).

    Parameters (keywords): ``trace`` (default ``philly``), ``jobs``, ``start``,
    ``predictor`` (``rf``), ``sigma`` (0.5), ``single_gpu_share``, ``nic_gbps``
    (10), ``servers`` (250), ``gpus_per_server`` (8), ``window_from``
    (``test``), ``max_job_gpus``, ``alpha_min_of`` (injected by the family).
    """
    return _window_preset(seed, "trace", lambda size: DEFAULT_JOBS, **params)


def paper_preset(seed: int = 0, **params: Any) -> AsrptInstance:
    """Preset ``paper`` (Sec. V-B): 250 x 8 GPUs, 10 Gbps, 300 GB/s; ``jobs=None``: 5 % of
    the trace (capped by the test split). Parameters as :func:`trace_preset`."""
    return _window_preset(
        seed, "paper", lambda size: max(1, round(PAPER_WINDOW_SHARE * size)), **params
    )


def testbed_preset(
    seed: int = 0,
    *,
    trace: str = "philly",
    jobs: int = TESTBED_JOBS,
    start: int | None = None,
    predictor: str = "rf",
    sigma: float = 0.5,
    scale: float = TESTBED_SCALE,
    alpha_min_of: AlphaMinOf | None = None,
    delay: Any = None,
) -> AsrptInstance:
    """Preset ``testbed`` (Sec. V-A): 14 x 1 GPU at 128 GB/s, 75 consecutive jobs with
    ``g_i <= 14``, arrivals and iterations scaled to 10 %; seeds 0-2 the three job sets."""
    _no_delay(delay)
    scale = require_number(scale, "scale", minimum=0, strict=True)
    cluster = Cluster(TESTBED_SERVERS, 1, TESTBED_BANDWIDTH, TESTBED_BANDWIDTH)
    return build_window(
        seed,
        preset="testbed",
        trace=trace,
        jobs=jobs,
        start=start,
        predictor=predictor,
        sigma=sigma,
        single_gpu_share=None,
        cluster=cluster,
        reference=cluster,
        window_from="test",
        max_job_gpus=TESTBED_SERVERS,
        scale=scale,
        default_jobs=lambda size: TESTBED_JOBS,
        alpha_min_of=alpha_min_of,
        extra_provenance={
            "scale": scale,
            "testbed": (
                "14 MIG vGPUs (one per server) at 128 GB/s PCIe; the paper's three job sets "
                "came from its own trace, ours are seeds 0-2 on the test split; A-SRPT's "
                "delay_factor = 0 is a method parameter"
            ),
        },
    )


# --------------------------------------------------------------------------- preset parameters

_INJECTED = ("alpha_min_of", "delay")  # alpha_min_of: by the family; delay: refused with a hint
_COMMON = {
    "trace": declare(
        "trace: philly[:vc], itp[:clusterNN], trace1..trace4, tiresias, a Muri-format .csv path, "
        "pai:PATH"
    ),
    "start": declare(
        "window start, an index into the test split (default: seeded random)",
        minimum=0,
        maximum=10_000_000,
    ),
    "predictor": declare("iteration predictor trained on the training split", choices=PREDICTORS),
    "sigma": declare("log-normal error of the noisy predictor", minimum=0, maximum=10),
}
#: Parameters of the presets ``trace`` and ``paper`` (``ddlsched presets asrpt``).
WINDOW_PARAMS = signature_params(
    _window_preset,
    "AsrptWindowParams",
    {
        **_COMMON,
        "jobs": declare(
            "window length, or 'all' (default: 1000 for trace, 5 % of the trace for paper)",
            minimum=1,
            maximum=10_000_000,
            choices=("all",),
        ),
        "single_gpu_share": declare(
            "share p of single-GPU jobs (Fig. 7 sweep; default: the trace's)", minimum=0, maximum=1
        ),
        "nic_gbps": declare(
            "inter-server NIC, Gbps", minimum=0, maximum=100_000, exclusive_minimum=True
        ),
        "servers": declare("servers", minimum=1, maximum=100_000),
        "gpus_per_server": declare("GPUs per server", minimum=1, maximum=1024),
        "window_from": declare(
            "test: windows from the test split (the paper); all: the whole trace",
            choices=WINDOW_FROM,
        ),
        "max_job_gpus": declare(
            "keep jobs of at most this many GPUs", minimum=1, maximum=1_000_000
        ),
    },
    exclude=("preset", "default_jobs", *_INJECTED),
)
#: Parameters of the preset ``testbed``.
TESTBED_PARAMS = signature_params(
    testbed_preset,
    "AsrptTestbedParams",
    {
        **_COMMON,
        "jobs": declare("window length", minimum=1, maximum=10_000_000),
        "scale": declare(
            "factor on arrivals and iterations", minimum=0, maximum=1000, exclusive_minimum=True
        ),
    },
    exclude=_INJECTED,
)
