"""Trace-driven instances of family ``asrpt``: presets ``trace``, ``testbed`` and ``paper``.

Spec ``shared/specs/asrpt.md`` ("Prediction", "Workloads", "Presets",
"Instance", "File format"); paper seed 004, Sec. IV-C-3 (prediction),
V-A (testbed, workload, Table I) and V-B (simulations). The spec wins
over the paper; every choice either leaves open is written down here.

Pipeline (:func:`build_window`, shared by the three presets):

1. **Trace** (:func:`load_table`): one raw reader per format
   (:mod:`ddlsched.workloads.traces`, :mod:`ddlsched.workloads.pai`),
   rows sorted by submission time (stable: ties keep file order). Names:
   ``philly`` (all 15 virtual clusters, 82,247 jobs) or ``philly:<vc>``;
   ``itp`` (the ten ITP cluster files merged: their submission times
   count from one common start, and the cluster is a feature, so merging
   is what the spec's ``(cluster, GPUs)`` key asks for; 69,351 jobs) or
   ``itp:clusterNN``; a Muri trace (``trace1`` .. ``trace4``, and the
   other Muri-format files ``trace*_pr``, ``cluster_trace``,
   ``job_type_*``), or a path ending in ``.csv`` read as a Muri-format
   trace (as the ``muri`` loader does); ``tiresias``; a PAI 2020
   directory (a path to an existing directory, or ``pai:<path>``).
2. **Split**: the first ``floor(0.8 N)`` jobs train the predictor (the
   training split); windows come from the remaining jobs (the test split)
   only. ``window_from="all"`` (not the paper; for the benchmark that
   replays a whole trace) lets a window cover the whole trace: every
   prediction then comes from the model trained on the first 80 %, so
   the training jobs' predictions are in-sample; ``provenance`` says so
   and gives the in-sample share.
3. **Groups and features** (spec table): Philly ``(vc, gpus)``, ITP
   ``(cluster, gpus)``, Muri ``(model, batch_size, gpus)``, Tiresias
   ``(model, gpus)``, PAI ``group`` (else ``user:<user>/<gpus>``), with
   the RF features ``vc, gpus`` / ``cluster, gpus`` / ``model,
   batch_size, gpus`` / ``model, gpus`` / ``user, group, gpus``
   (categorical: vc, cluster, model, user, group). Group keys are the
   values joined by ``/``. Philly and ITP carry no user or group id, so
   their predictors are weaker than the paper's: ``provenance['note']``
   says so.
4. **Configurations** (the paper assigns per job group): one per
   (group key, GPU count) (the same as per group except for PAI, whose
   groups may change GPU count), drawn with
   :func:`~ddlsched.workloads.asrpt_pool.draw_configuration` in order of
   first appearance over the whole sorted trace, from one seeded stream:
   a single-GPU group gets a random Table I model's 1-GPU configuration,
   a multi-GPU group a random model and one of its configurations for
   that count. Muri and Tiresias keep their model (mapped onto the pool,
   :func:`~ddlsched.workloads.asrpt_pool.map_trace_model`, recorded in
   ``provenance['model_map']``) and draw only the configuration.
5. **Iterations**: Philly, ITP and PAI ``n = max(1, round(duration_s /
   alpha~_min))`` (round half to even) with ``alpha~_min`` of the group's
   configuration on the *reference cluster*: the preset's servers and
   GPUs per server at 10 Gbps NIC and 300 GB/s NVLink, held fixed when
   ``nic_gbps`` changes (spec); the testbed is its own reference (its
   iterations, like the paper's, come from per-iteration times on the
   testbed). Muri and Tiresias use the trace's ``iterations``.
6. **Window**: ``jobs`` consecutive jobs of the test split from ``start``
   (an index into the test split, after the ``max_job_gpus`` filter if
   any), or from a seeded uniformly random start when ``start`` is None
   (the paper "randomly sample[s] consecutive jobs"); arrivals shifted so
   the first window job arrives at 0. ``jobs=None`` is 1000 jobs
   (``paper``: 5 % of the trace, the paper's smallest window), capped by
   what the split holds from ``start``; ``jobs="all"`` the rest of the
   test split from ``start`` (0 unless given; the whole trace with
   ``window_from="all"``).
7. **Single-GPU share sweep** (Fig. 7, ``single_gpu_share = p``): each
   window job draws ``U`` uniform and a count ``D`` from the trace's
   multi-GPU distribution (the GPU counts ``> 1`` of all its jobs, limited
   to what the cluster and ``max_job_gpus`` allow); it becomes single-GPU
   when ``U < p``, else takes ``D``. Both draws are made for every job
   whatever ``p`` (common random numbers: as ``p`` falls the single-GPU
   jobs of a seed form shrinking nested sets and a multi-GPU job keeps
   its count). The group key follows the new count; its configuration is
   the trace's one for that (group, count) when the trace has it, else a
   fresh draw (a separate seeded stream, in window order). The duration
   is kept and ``n`` recomputed (Philly, ITP, PAI; the workload grows
   with the distributed share, as the paper says); Muri and Tiresias keep
   the trace's iterations. Predictions use the new features and keys.
8. **Predictions** (:mod:`ddlsched.workloads.asrpt_predict`): ``rf``,
   ``mean``, ``median`` trained on the training split (``n`` of the
   training jobs with their own configurations), unseen group keys get 0;
   ``perfect``; ``noisy`` with ``sigma``.
9. **NIC sweep** (Fig. 8): ``nic_gbps`` sets ``B_inter = nic_gbps x 1e9 /
   8`` B/s of the instance only; iterations stay at the reference.
   Combine with ``single_gpu_share=0`` for the paper's 0 % job set.

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

Layering: ``alpha~_min`` is Heavy-Edge on the fewest servers, a heuristic,
and workloads sit below heuristics (``tests/test_import_structure.py``,
lazy imports included). So the builder takes ``alpha_min_of(cluster,
config) -> float`` from its caller (dependency injection): the family
wiring (:func:`ddlsched.families.asrpt.generate`) passes
``config_constants(cluster, config).alpha_min_s`` of
:mod:`ddlsched.heuristics.asrpt_config`; tests may pass any positive
function. It is called once per distinct configuration of the trace
(never per job); the heuristic caches it per (cluster, configuration).
Moving Heavy-Edge below workloads would put an algorithm in the data
path; injecting keeps the one implementation where it is.

Seeds: one generator from :func:`ddlsched.rng.make_rng`, spawned into
independent streams (configurations, window start, sweep, sweep
configurations, noise); the forest's ``random_state`` is the seed itself
(spec). Same seed and parameters, same instance, bit for bit.

``provenance`` (enters no formula): preset, trace, its size and source,
the split, ``window`` ``[first, last)`` as indices of the sorted trace,
``window_from`` (and the in-sample share for ``all``), predictor, sigma,
seed, the sweep's share, NIC, the reference cluster, how iterations were
computed, the group counts (window, unseen), the model map (Muri,
Tiresias), the weak-feature note (Philly, ITP), rows the PAI reader
dropped, and ``prediction_error`` (:func:`ddlsched.problems.asrpt.prediction_error`:
``epsilon_bar``, ``epsilon``, unseen share, error distribution).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ddlsched.datadir import data_dir, data_file
from ddlsched.errors import DdlschedError, InvalidInstanceError
from ddlsched.jsonio import require_int, require_number
from ddlsched.params import declare, signature_params
from ddlsched.problems.asrpt import (
    MAX_CLUSTER_GPUS,
    AsrptInstance,
    Cluster,
    Job,
    JobConfig,
    prediction_error,
)
from ddlsched.rng import make_rng
from ddlsched.workloads.asrpt_pool import draw_configuration, map_trace_model
from ddlsched.workloads.asrpt_predict import LEARNED, PREDICTORS, fit, oracle_predictions
from ddlsched.workloads.muri_traces import MURI_TRACES
from ddlsched.workloads.pai import read_pai
from ddlsched.workloads.traces import (
    ITP_CLUSTERS,
    RawTrace,
    read_itp,
    read_muri,
    read_philly,
    read_tiresias,
)

__all__ = [
    "DEFAULT_JOBS",
    "REFERENCE_B_INTER",
    "REFERENCE_B_INTRA",
    "TESTBED_PARAMS",
    "TRAIN_SHARE",
    "WINDOW_PARAMS",
    "AlphaMinOf",
    "TraceTable",
    "build_window",
    "load_table",
    "paper_preset",
    "testbed_preset",
    "trace_preset",
]

AlphaMinOf = Callable[[Cluster, JobConfig], float]

TRAIN_SHARE = 0.8
DEFAULT_JOBS = 1000
PAPER_WINDOW_SHARE = 0.05
REFERENCE_B_INTER = 10e9 / 8  # 10 Gbps NIC
REFERENCE_B_INTRA = 300e9  # 300 GB/s NVLink (V100)
TESTBED_SERVERS = 14
TESTBED_BANDWIDTH = 128e9  # 128 GB/s PCIe between MIG vGPUs
TESTBED_JOBS = 75
TESTBED_SCALE = 0.1
WINDOW_FROM = ("test", "all")
WEAK_FEATURES_NOTE = (
    "predictor features weaker than the paper's: the trace has no user or group id, "
    "so the features are the (virtual) cluster and the GPU count"
)
_STREAMS = ("configs", "window", "sweep", "sweep_configs", "noise")


# --------------------------------------------------------------------------- traces


@dataclass(frozen=True, eq=False)
class TraceTable:
    """A trace sorted by submission time, with what the asrpt pipeline needs.

    ``columns`` holds the categorical feature columns (and PAI's fallback
    ``user``); ``feature_names`` lists the RF features in order (``gpus``
    last, numeric, as is ``batch_size``); ``iterations`` is the trace's own
    column (Muri, Tiresias) or None; ``trace_model`` the trace's model
    names (Muri, Tiresias) or None.
    """

    name: str
    kind: str
    source: str
    job_id: tuple[str, ...]
    submit_s: np.ndarray
    duration_s: np.ndarray
    num_gpus: np.ndarray
    columns: Mapping[str, np.ndarray]
    feature_names: tuple[str, ...]
    categorical: tuple[str, ...]
    iterations: np.ndarray | None = None
    trace_model: np.ndarray | None = None
    meta: Mapping[str, Any] | None = None

    def __len__(self) -> int:
        return len(self.submit_s)

    @property
    def num_train(self) -> int:
        """Size of the training split: the first ``floor(0.8 N)`` jobs."""
        return (4 * len(self)) // 5  # floor(0.8 N) in integers

    @property
    def weak_features(self) -> bool:
        return self.kind in ("philly", "itp")

    def features(self, rows: np.ndarray, gpus: np.ndarray) -> dict[str, np.ndarray]:
        """The RF feature columns of ``rows`` with GPU counts ``gpus``."""
        out: dict[str, np.ndarray] = {}
        for name in self.feature_names:
            out[name] = gpus if name == "gpus" else self.columns[name][rows]
        return out

    def group_keys(self, rows: np.ndarray, gpus: np.ndarray) -> np.ndarray:
        """The group key of each row of ``rows`` with GPU counts ``gpus`` (module docstring)."""
        if self.kind == "pai":
            groups = self.columns["group"][rows]
            users = self.columns["user"][rows]
            keys = [
                grp if grp else f"user:{usr}/{g}"
                for grp, usr, g in zip(groups, users, gpus.tolist(), strict=True)
            ]
        else:
            parts = [self.columns[n][rows] for n in self.feature_names if n != "gpus"]
            keys = [
                "/".join([*map(str, vals), str(g)])
                for *vals, g in zip(*parts, gpus.tolist(), strict=True)
            ]
        return np.array(keys, dtype=object)


def _sorted(raw: RawTrace) -> RawTrace:
    return raw.take(np.argsort(raw.submit_s, kind="stable"))


def _objects(values: Any) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = list(values)
    return out


def _resolve(trace: Any) -> tuple[str, str]:
    """``(kind, argument)`` of a trace name; unknown names are a one-line error."""
    if not isinstance(trace, (str, Path)) or not str(trace):
        raise InvalidInstanceError(
            f"trace: expected a trace name or a PAI directory, got {trace!r}"
        )
    name = str(trace)
    if name == "philly":
        return "philly", ""
    if name.startswith("philly:"):
        return "philly", name.partition(":")[2]
    if name == "itp":
        return "itp", ""
    if name.startswith("itp:"):
        cluster = name.partition(":")[2]
        if cluster not in ITP_CLUSTERS:
            raise InvalidInstanceError(
                f"trace: unknown ITP cluster {cluster!r} (choose from {', '.join(ITP_CLUSTERS)})"
            )
        return "itp", cluster
    if name in MURI_TRACES or name.endswith(".csv"):
        return "muri", name
    if name == "tiresias":
        return "tiresias", ""
    if name.startswith("pai:"):
        return "pai", name.partition(":")[2]
    if isinstance(trace, Path) or "/" in name or Path(name).is_dir():
        return "pai", name
    raise InvalidInstanceError(
        f"trace: unknown trace {name!r} (choose from philly, philly:<vc>, itp, itp:clusterNN, "
        f"{', '.join(MURI_TRACES)}, tiresias, a Muri-format .csv path or a PAI 2020 "
        "directory)"
    )


def load_table(trace: str) -> TraceTable:
    """The :class:`TraceTable` of ``trace``, cached per name and data directory (files
    given by path: per path, size and modification time)."""
    kind, arg = _resolve(trace)
    if kind == "pai":
        directory = Path(arg)
        if not directory.is_dir():
            raise DdlschedError(f"trace: PAI directory not found: {arg}")
        stamp: tuple[Any, ...] = tuple(
            (p.name, p.stat().st_size, p.stat().st_mtime_ns)
            for p in sorted(directory.iterdir())
            if p.is_file()
        )
    elif kind == "muri" and arg.endswith(".csv"):
        path = Path(arg)
        if not path.exists():  # anything else (a directory, a device) is the gate's to refuse
            raise DdlschedError(f"trace: file not found: {arg}")
        stamp = (path.stat().st_size, path.stat().st_mtime_ns)
    else:
        stamp = (str(data_dir()),)
    return _load_table(kind, arg, stamp)


@lru_cache(maxsize=8)
def _load_table(kind: str, arg: str, stamp: tuple[Any, ...]) -> TraceTable:
    try:
        return _build_table(kind, arg)
    except DdlschedError as exc:
        if arg and str(exc).startswith(arg):  # a file given by path: its error names it
            raise
        label = f"{kind}:{arg}" if arg else kind
        raise type(exc)(f"trace {label}: {exc}") from None


def _build_table(kind: str, arg: str) -> TraceTable:
    iterations = trace_model = None
    meta: dict[str, Any] = {}
    if kind == "philly":
        raw = read_philly()
        if arg:
            keep = np.flatnonzero(np.array(raw.extra["cluster"], dtype=object) == arg)
            if not len(keep):
                raise InvalidInstanceError(f"no Philly jobs in virtual cluster {arg!r}")
            raw = raw.take(keep)
        raw = _sorted(raw)
        name = f"philly:{arg}" if arg else "philly"
        columns = {"vc": _objects(raw.extra["cluster"])}
        names, categorical = ("vc", "gpus"), ("vc",)
    elif kind == "itp":
        raw = _sorted(read_itp(arg or None))
        name = f"itp:{arg}" if arg else "itp"
        columns = {"cluster": _objects(raw.extra["cluster"])}
        names, categorical = ("cluster", "gpus"), ("cluster",)
    elif kind == "muri":
        path = Path(arg) if arg.endswith(".csv") else data_file("traces", "muri", f"{arg}.csv")
        raw = _sorted(read_muri(path, arg))
        name = arg
        columns = {
            "model": _objects(raw.extra["model"]),
            "batch_size": raw.extra["batch_size"],
        }
        names, categorical = ("model", "batch_size", "gpus"), ("model",)
        iterations = raw.extra["iterations"]
        trace_model = columns["model"]
    elif kind == "tiresias":
        raw = _sorted(read_tiresias())
        name = "tiresias"
        columns = {"model": _objects(raw.extra["model"])}
        names, categorical = ("model", "gpus"), ("model",)
        iterations = raw.extra["iterations"]
        trace_model = columns["model"]
    else:
        raw = _sorted(read_pai(arg))
        name = f"pai:{arg}"
        columns = {"user": _objects(raw.extra["user"]), "group": _objects(raw.extra["group"])}
        names, categorical = ("user", "group", "gpus"), ("user", "group")
        meta = dict(raw.meta)
    if len(raw) == 0:
        raise InvalidInstanceError("the trace has no jobs")
    if np.any(raw.num_gpus < 1):
        row = int(np.flatnonzero(raw.num_gpus < 1)[0])
        raise InvalidInstanceError(f"job {raw.job_id[row]}: {raw.num_gpus[row]} GPUs (need >= 1)")
    if np.any(raw.num_gpus > MAX_CLUSTER_GPUS):  # before any configuration is planned per GPU
        row = int(np.flatnonzero(raw.num_gpus > MAX_CLUSTER_GPUS)[0])
        raise InvalidInstanceError(
            f"job {raw.job_id[row]}: {raw.num_gpus[row]:.6g} GPUs, more than "
            f"any cluster holds ({MAX_CLUSTER_GPUS:,})"
        )
    if iterations is not None and np.any(iterations < 1):
        raise InvalidInstanceError("the trace's iterations must be >= 1")
    if not np.all(np.isfinite(raw.submit_s)) or not np.all(np.isfinite(raw.duration_s)):
        raise InvalidInstanceError("submission times and durations must be finite")
    return TraceTable(
        name=name,
        kind=kind,
        source=raw.source,
        job_id=raw.job_id,
        submit_s=raw.submit_s,
        duration_s=raw.duration_s,
        num_gpus=raw.num_gpus,
        columns=columns,
        feature_names=names,
        categorical=categorical,
        iterations=iterations,
        trace_model=trace_model,
        meta=meta,
    )


# --------------------------------------------------------------------------- configurations


@dataclass(frozen=True)
class _Assignment:
    """(group key, GPUs) -> (pool model, configuration name, configuration)."""

    by_group: Mapping[tuple[str, int], tuple[str, str, JobConfig]]
    row_config: np.ndarray  # configuration name per trace row (object)
    keys: np.ndarray  # group key per trace row (object)


def _fixed_model(table: TraceTable, row: int) -> str | None:
    if table.trace_model is None:
        return None
    return map_trace_model(str(table.trace_model[row]))[0]


@lru_cache(maxsize=16)
def _assign(table: TraceTable, seed: int) -> _Assignment:
    rng = _streams(seed)["configs"]
    rows = np.arange(len(table))
    keys = table.group_keys(rows, table.num_gpus)
    pairs = [f"{key}\x1f{g}" for key, g in zip(keys, table.num_gpus.tolist(), strict=True)]
    codes, uniques = pd.factorize(np.array(pairs, dtype=object))  # first-appearance order
    first_row = np.unique(codes, return_index=True)[1]  # first row of each, in code order
    assert len(first_row) == len(uniques)
    by_group: dict[tuple[str, int], tuple[str, str, JobConfig]] = {}
    names = []
    for row in first_row.tolist():
        key, g = str(keys[row]), int(table.num_gpus[row])
        entry = draw_configuration(rng, g, _fixed_model(table, row))
        by_group[(key, g)] = entry
        names.append(entry[1])
    row_config = np.array(names, dtype=object)[codes]
    return _Assignment(by_group=by_group, row_config=row_config, keys=keys)


def _streams(seed: int) -> dict[str, np.random.Generator]:
    return dict(zip(_STREAMS, make_rng(seed).spawn(len(_STREAMS)), strict=True))


def _alpha_table(
    configs: Mapping[str, JobConfig], reference: Cluster, alpha_min_of: AlphaMinOf
) -> dict[str, float]:
    out = {}
    for name, config in configs.items():
        value = alpha_min_of(reference, config)
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float, np.floating))
            or not math.isfinite(value)
            or value <= 0
        ):
            raise InvalidInstanceError(
                f"alpha_min_of: configuration {name} gave {value!r} (need a finite number > 0)"
            )
        out[name] = float(value)
    return out


def _iterations(duration_s: np.ndarray, alpha_s: np.ndarray) -> np.ndarray:
    """``max(1, round(duration / alpha~_min))`` (round half to even)."""
    return np.maximum(1, np.rint(duration_s / alpha_s)).astype(np.int64)


# --------------------------------------------------------------------------- validation


def _choice(value: Any, name: str, options: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in options:
        raise InvalidInstanceError(f"{name}: must be one of {', '.join(options)}, got {value!r}")
    return value


def _optional_int(value: Any, name: str, minimum: int) -> int | None:
    return None if value is None else require_int(value, name, minimum=minimum)


# --------------------------------------------------------------------------- builder


def build_window(
    seed: int,
    *,
    preset: str,
    trace: str,
    jobs: int | str | None,
    start: int | None,
    predictor: str,
    sigma: float,
    single_gpu_share: float | None,
    cluster: Cluster,
    reference: Cluster,
    window_from: str,
    max_job_gpus: int | None,
    scale: float,
    default_jobs: Callable[[int], int],
    alpha_min_of: AlphaMinOf | None,
    extra_provenance: Mapping[str, Any] | None = None,
) -> AsrptInstance:
    """Build a window instance (the module docstring's pipeline); presets call this."""
    seed = require_int(seed, "seed", minimum=0)
    predictor = _choice(predictor, "predictor", PREDICTORS)
    sigma = require_number(sigma, "sigma", minimum=0)
    if single_gpu_share is not None:
        single_gpu_share = require_number(single_gpu_share, "single_gpu_share", minimum=0)
        if single_gpu_share > 1:
            raise InvalidInstanceError(
                f"single_gpu_share: must be in [0, 1], got {single_gpu_share!r}"
            )
    window_from = _choice(window_from, "window_from", WINDOW_FROM)
    max_job_gpus = _optional_int(max_job_gpus, "max_job_gpus", 1)
    start = _optional_int(start, "start", 0)
    if not (jobs is None or jobs == "all"):
        jobs = require_int(jobs, "jobs", minimum=1)
    if alpha_min_of is None or not callable(alpha_min_of):
        raise InvalidInstanceError(
            f"preset {preset}: alpha_min_of (cluster, config) -> alpha~_min is required; the "
            "family wiring ddlsched.families.asrpt.generate injects Heavy-Edge's"
        )

    table = load_table(trace)
    size = len(table)
    num_train = table.num_train
    if num_train < 1 or num_train >= size:
        raise InvalidInstanceError(
            f"trace {table.name}: {size} jobs cannot be split 80/20 into non-empty parts"
        )
    streams = _streams(seed)
    assignment = _assign(table, seed)
    trace_configs = {name: cfg for _, name, cfg in assignment.by_group.values()}
    alpha = _alpha_table(trace_configs, reference, alpha_min_of)

    # true iterations of every trace row (the training split's are the targets)
    if table.iterations is not None:
        n_all = table.iterations
    else:
        row_alpha = np.array([alpha[c] for c in assignment.row_config], dtype=float)
        n_all = _iterations(table.duration_s, row_alpha)

    # window
    first_row = 0 if window_from == "all" else num_train
    candidates = np.arange(first_row, size)
    cap = cluster.num_gpus if max_job_gpus is None else min(max_job_gpus, cluster.num_gpus)
    if max_job_gpus is not None:
        candidates = candidates[table.num_gpus[candidates] <= max_job_gpus]
    split = "test split" if window_from == "test" else "trace"
    filt = f" with at most {max_job_gpus} GPUs" if max_job_gpus is not None else ""
    available = len(candidates)
    if available == 0:
        raise InvalidInstanceError(f"trace {table.name}: the {split} has no jobs{filt}")
    if start is not None and start >= available:
        raise InvalidInstanceError(
            f"start: {start} is beyond the {split} of {table.name} ({available} jobs{filt})"
        )
    if jobs is None:
        jobs = min(default_jobs(size), available - (start or 0))
    elif jobs == "all":
        jobs = available - (start or 0)
    if jobs > available:
        raise InvalidInstanceError(
            f"jobs: a window of {jobs} jobs is larger than the {split} of {table.name} "
            f"({available} jobs{filt})"
        )
    if start is None:
        start = int(streams["window"].integers(0, available - jobs + 1))
    if start + jobs > available:
        raise InvalidInstanceError(
            f"start: a window of {jobs} jobs from {start} goes beyond the {split} of "
            f"{table.name} ({available} jobs{filt})"
        )
    rows = candidates[start : start + jobs]

    # GPU counts, groups, configurations (sweep: new counts)
    gpus = table.num_gpus[rows].copy()
    if single_gpu_share is not None:
        multi = table.num_gpus[(table.num_gpus > 1) & (table.num_gpus <= cap)]
        u = streams["sweep"].random(len(rows))
        if len(multi):
            drawn = streams["sweep"].choice(multi, size=len(rows))
        elif np.any(u >= single_gpu_share):
            raise InvalidInstanceError(
                f"single_gpu_share: trace {table.name} has no multi-GPU job with at most "
                f"{cap} GPUs to draw from"
            )
        else:
            drawn = np.ones(len(rows), dtype=np.int64)
        gpus = np.where(u < single_gpu_share, 1, drawn).astype(np.int64)
    too_big = np.flatnonzero(gpus > cluster.num_gpus)
    if len(too_big):
        k = int(too_big[0])
        raise InvalidInstanceError(
            f"job j{int(rows[k])} of trace {table.name} needs {int(gpus[k])} GPUs, the cluster "
            f"has {cluster.num_gpus} (a larger cluster, or max_job_gpus to drop such jobs)"
        )
    swept = single_gpu_share is not None
    keys = table.group_keys(rows, gpus) if swept else assignment.keys[rows]
    entries = []
    new_configs: dict[str, JobConfig] = {}
    sweep_rng = streams["sweep_configs"]
    extra_groups: dict[tuple[str, int], tuple[str, str, JobConfig]] = {}
    for k, (key, g) in enumerate(zip(keys, gpus.tolist(), strict=True)):
        entry = assignment.by_group.get((key, g)) or extra_groups.get((key, g))
        if entry is None:
            entry = draw_configuration(sweep_rng, g, _fixed_model(table, int(rows[k])))
            extra_groups[(key, g)] = entry
            if entry[1] not in alpha:
                new_configs[entry[1]] = entry[2]
        entries.append(entry)
    alpha.update(_alpha_table(new_configs, reference, alpha_min_of))
    config_names = [e[1] for e in entries]
    if table.iterations is not None or not swept:
        n_window = n_all[rows]
    else:
        n_window = _iterations(
            table.duration_s[rows], np.array([alpha[c] for c in config_names], dtype=float)
        )

    # predictions (learned ones see the training split only)
    if predictor in LEARNED:
        train = np.arange(num_train)
        fitted = fit(
            predictor,
            table.features(train, table.num_gpus[train]),
            table.feature_names,
            table.categorical,
            assignment.keys[train].tolist(),
            n_all[:num_train],
            seed,
        )
        predicted = scale * fitted.predict(table.features(rows, gpus), keys.tolist())
    if scale != 1.0:  # testbed: n' = max(1, round(scale n))
        n_window = np.maximum(1, np.rint(scale * n_window)).astype(np.int64)
    if predictor not in LEARNED:
        predicted = oracle_predictions(predictor, n_window, sigma=sigma, rng=streams["noise"])

    # instance
    arrivals = (table.submit_s[rows] - table.submit_s[rows[0]]) * scale
    seen_groups = set(assignment.keys[:num_train].tolist())
    feature_cols = table.features(rows, gpus)
    feature_rows = [
        {
            name: (int(v) if name in ("gpus", "batch_size") else str(v))
            for name, v in zip(feature_cols, vals, strict=True)
        }
        for vals in zip(*feature_cols.values(), strict=True)
    ]
    job_list = [
        Job(
            id=f"j{int(row)}",
            arrival_s=float(arrival),
            config=name,
            iterations=int(n),
            predicted_iterations=float(pred),
            group=str(key),
            features=feats,
            model=entry[0],
        )
        for row, arrival, name, n, pred, key, feats, entry in zip(
            rows.tolist(),
            arrivals.tolist(),
            config_names,
            n_window.tolist(),
            predicted.tolist(),
            keys.tolist(),
            feature_rows,
            entries,
            strict=True,
        )
    ]
    known = {**trace_configs, **new_configs}
    configs = {name: known[name] for name in dict.fromkeys(config_names)}
    provenance: dict[str, Any] = {
        "preset": preset,
        "trace": table.name,
        "source": table.source,
        "trace_jobs": size,
        "split": {"train": [0, num_train], "test": [num_train, size]},
        "window": [int(rows[0]), int(rows[-1]) + 1],
        "window_start": start,
        "window_from": window_from,
        "predictor": predictor,
        "seed": seed,
        "single_gpu_share": single_gpu_share,
        "nic_gbps": cluster.b_inter * 8 / 1e9,
        "reference_cluster": reference.to_dict(),
        "iterations": (
            "the trace's iterations"
            if table.iterations is not None
            else "max(1, round(duration_s / alpha~_min)) on the reference cluster"
        ),
        "configurations": "one per (group key, GPU count), seeded draw (asrpt_pool)",
        "groups": {
            "window": len(set(keys.tolist())),
            "unseen": len(set(keys.tolist()) - seen_groups),
        },
    }
    if predictor == "noisy":
        provenance["sigma"] = sigma
    if max_job_gpus is not None:
        provenance["max_job_gpus"] = max_job_gpus
        provenance["window_jobs_dropped"] = int(rows[-1]) + 1 - int(rows[0]) - len(rows)
    if window_from == "all":
        in_sample = float(np.mean(rows < num_train))
        provenance["in_sample_share"] = in_sample
        provenance["in_sample_note"] = (
            "predictions of the jobs in the first 80 % are in-sample (the model was trained "
            "on them); the paper's windows come from the test split only"
        )
    if table.weak_features:
        provenance["note"] = WEAK_FEATURES_NOTE
    if table.trace_model is not None:
        model_map = {}
        for model in dict.fromkeys(table.trace_model[rows].tolist()):
            mapped, stand_in = map_trace_model(str(model))
            model_map[str(model)] = f"{mapped} (stand-in)" if stand_in else mapped
        provenance["model_map"] = model_map
    if table.meta:
        provenance["reader"] = dict(table.meta)
    if extra_provenance:
        provenance.update(extra_provenance)
    instance = AsrptInstance(
        cluster=cluster, configs=configs, jobs=tuple(job_list), provenance=provenance
    )
    provenance = {**provenance, "prediction_error": prediction_error(instance)}
    return replace(instance, provenance=provenance)


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
