"""The window builder of family ``asrpt``'s trace-driven presets (:func:`build_window`).

Spec ``docs/families/asrpt.md`` ("What an instance holds", "Presets,
generators and data"); A-SRPT paper, Sec. IV-C-3 (prediction),
V-A (testbed, workload, Table I) and V-B (simulations). The spec wins
over the paper; every choice either leaves open is written down here. The
presets that call it are :mod:`ddlsched.workloads.asrpt_traces`; the trace
table (steps 1 and 3) is :mod:`ddlsched.workloads.asrpt_trace_table`.

Pipeline (:func:`build_window`, shared by the three presets):

1. **Trace** (:func:`~ddlsched.workloads.asrpt_trace_table.load_table`).
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

Steps in code: :func:`_validated` (the arguments), :func:`_select_rows`
(step 6), :func:`_window_gpus` (step 7's counts), :func:`_window_configs`
(steps 4 and 7's configurations), :func:`_window_iterations` (step 5),
:func:`_predictions` (step 8), :func:`_window_jobs` and :func:`_provenance`.

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
from typing import Any

import numpy as np
import pandas as pd

from ddlsched.errors import InvalidInstanceError
from ddlsched.jsonio import require_int, require_number
from ddlsched.problems.asrpt import AsrptInstance, Cluster, Job, JobConfig, prediction_error
from ddlsched.rng import make_rng
from ddlsched.workloads.asrpt_pool import draw_configuration, map_trace_model
from ddlsched.workloads.asrpt_predict import LEARNED, PREDICTORS, fit, oracle_predictions
from ddlsched.workloads.asrpt_trace_table import TraceTable, load_table

__all__ = ["TRAIN_SHARE", "WINDOW_FROM", "AlphaMinOf", "build_window"]

AlphaMinOf = Callable[[Cluster, JobConfig], float]

TRAIN_SHARE = 0.8
WINDOW_FROM = ("test", "all")
WEAK_FEATURES_NOTE = (
    "predictor features weaker than the paper's: the trace has no user or group id, "
    "so the features are the (virtual) cluster and the GPU count"
)
_STREAMS = ("configs", "window", "sweep", "sweep_configs", "noise")


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


@dataclass(frozen=True)
class _Spec:
    """The validated arguments of :func:`build_window`."""

    seed: int
    preset: str
    trace: str
    jobs: int | str | None
    start: int | None
    predictor: str
    sigma: float
    single_gpu_share: float | None
    cluster: Cluster
    reference: Cluster
    window_from: str
    max_job_gpus: int | None
    scale: float
    default_jobs: Callable[[int], int]
    alpha_min_of: AlphaMinOf
    extra_provenance: Mapping[str, Any] | None


def _validated(seed: int, preset: str, **args: Any) -> _Spec:
    """The arguments of :func:`build_window`, each checked (one-line errors)."""
    seed = require_int(seed, "seed", minimum=0)
    args["predictor"] = _choice(args["predictor"], "predictor", PREDICTORS)
    args["sigma"] = require_number(args["sigma"], "sigma", minimum=0)
    share = args["single_gpu_share"]
    if share is not None:
        share = require_number(share, "single_gpu_share", minimum=0)
        if share > 1:
            raise InvalidInstanceError(f"single_gpu_share: must be in [0, 1], got {share!r}")
        args["single_gpu_share"] = share
    args["window_from"] = _choice(args["window_from"], "window_from", WINDOW_FROM)
    args["max_job_gpus"] = _optional_int(args["max_job_gpus"], "max_job_gpus", 1)
    args["start"] = _optional_int(args["start"], "start", 0)
    jobs = args["jobs"]
    if not (jobs is None or jobs == "all"):
        args["jobs"] = require_int(jobs, "jobs", minimum=1)
    alpha_min_of = args["alpha_min_of"]
    if alpha_min_of is None or not callable(alpha_min_of):
        raise InvalidInstanceError(
            f"preset {preset}: alpha_min_of (cluster, config) -> alpha~_min is required; the "
            "family wiring ddlsched.families.asrpt.generate injects Heavy-Edge's"
        )
    return _Spec(seed=seed, preset=preset, **args)


def _select_rows(
    spec: _Spec, table: TraceTable, rng: np.random.Generator
) -> tuple[np.ndarray, int]:
    """Step 6: the window's trace rows and its start (an index into the candidates)."""
    size, num_train = len(table), table.num_train
    max_job_gpus, start, jobs = spec.max_job_gpus, spec.start, spec.jobs
    first_row = 0 if spec.window_from == "all" else num_train
    candidates = np.arange(first_row, size)
    if max_job_gpus is not None:
        candidates = candidates[table.num_gpus[candidates] <= max_job_gpus]
    split = "test split" if spec.window_from == "test" else "trace"
    filt = f" with at most {max_job_gpus} GPUs" if max_job_gpus is not None else ""
    available = len(candidates)
    if available == 0:
        raise InvalidInstanceError(f"trace {table.name}: the {split} has no jobs{filt}")
    if start is not None and start >= available:
        raise InvalidInstanceError(
            f"start: {start} is beyond the {split} of {table.name} ({available} jobs{filt})"
        )
    if jobs is None:
        jobs = min(spec.default_jobs(size), available - (start or 0))
    elif jobs == "all":
        jobs = available - (start or 0)
    assert isinstance(jobs, int)
    if jobs > available:
        raise InvalidInstanceError(
            f"jobs: a window of {jobs} jobs is larger than the {split} of {table.name} "
            f"({available} jobs{filt})"
        )
    if start is None:
        start = int(rng.integers(0, available - jobs + 1))
    if start + jobs > available:
        raise InvalidInstanceError(
            f"start: a window of {jobs} jobs from {start} goes beyond the {split} of "
            f"{table.name} ({available} jobs{filt})"
        )
    return candidates[start : start + jobs], start


def _window_gpus(
    spec: _Spec, table: TraceTable, rows: np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    """Step 7's GPU counts (the trace's without the sweep); a job larger than the
    cluster is refused, naming it."""
    cluster = spec.cluster
    gpus = table.num_gpus[rows].copy()
    share = spec.single_gpu_share
    if share is not None:
        cap = (
            cluster.num_gpus
            if spec.max_job_gpus is None
            else min(spec.max_job_gpus, cluster.num_gpus)
        )
        multi = table.num_gpus[(table.num_gpus > 1) & (table.num_gpus <= cap)]
        u = rng.random(len(rows))
        if len(multi):
            drawn = rng.choice(multi, size=len(rows))
        elif np.any(u >= share):
            raise InvalidInstanceError(
                f"single_gpu_share: trace {table.name} has no multi-GPU job with at most "
                f"{cap} GPUs to draw from"
            )
        else:
            drawn = np.ones(len(rows), dtype=np.int64)
        gpus = np.where(u < share, 1, drawn).astype(np.int64)
    too_big = np.flatnonzero(gpus > cluster.num_gpus)
    if len(too_big):
        k = int(too_big[0])
        raise InvalidInstanceError(
            f"job j{int(rows[k])} of trace {table.name} needs {int(gpus[k])} GPUs, the cluster "
            f"has {cluster.num_gpus} (a larger cluster, or max_job_gpus to drop such jobs)"
        )
    return gpus


def _window_configs(
    table: TraceTable,
    assignment: _Assignment,
    rows: np.ndarray,
    keys: np.ndarray,
    gpus: np.ndarray,
    rng: np.random.Generator,
) -> tuple[list[tuple[str, str, JobConfig]], dict[str, JobConfig]]:
    """Steps 4 and 7: each window job's ``(model, configuration name, configuration)``
    (the trace's for its (group, count), else a fresh draw from ``rng``) and the
    configurations the trace's assignment does not hold."""
    known = {name for _, name, _ in assignment.by_group.values()}
    entries = []
    new_configs: dict[str, JobConfig] = {}
    extra_groups: dict[tuple[str, int], tuple[str, str, JobConfig]] = {}
    for k, (key, g) in enumerate(zip(keys, gpus.tolist(), strict=True)):
        entry = assignment.by_group.get((key, g)) or extra_groups.get((key, g))
        if entry is None:
            entry = draw_configuration(rng, g, _fixed_model(table, int(rows[k])))
            extra_groups[(key, g)] = entry
            if entry[1] not in known:
                new_configs[entry[1]] = entry[2]
        entries.append(entry)
    return entries, new_configs


def _window_iterations(
    table: TraceTable,
    rows: np.ndarray,
    n_all: np.ndarray,
    config_names: list[str],
    alpha: Mapping[str, float],
    swept: bool,
) -> np.ndarray:
    """Step 5 for the window: the trace row's ``n``, recomputed from the duration when
    the sweep changed the configuration (Philly, ITP, PAI)."""
    if table.iterations is not None or not swept:
        return n_all[rows]
    return _iterations(
        table.duration_s[rows], np.array([alpha[c] for c in config_names], dtype=float)
    )


def _predictions(
    spec: _Spec,
    table: TraceTable,
    assignment: _Assignment,
    window: tuple[np.ndarray, np.ndarray, np.ndarray],
    n_all: np.ndarray,
    n_window: np.ndarray,
    noise: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray]:
    """Step 8 (learned predictors see the training split only) and the testbed's scale:
    ``(predicted, n_window)`` with ``n' = max(1, round(scale n))``; ``window`` holds
    the rows, their GPU counts and their group keys."""
    rows, gpus, keys = window
    predictor, scale, num_train = spec.predictor, spec.scale, table.num_train
    if predictor in LEARNED:
        train = np.arange(num_train)
        fitted = fit(
            predictor,
            table.features(train, table.num_gpus[train]),
            table.feature_names,
            table.categorical,
            assignment.keys[train].tolist(),
            n_all[:num_train],
            spec.seed,
        )
        predicted = scale * fitted.predict(table.features(rows, gpus), keys.tolist())
    if scale != 1.0:  # testbed: n' = max(1, round(scale n))
        n_window = np.maximum(1, np.rint(scale * n_window)).astype(np.int64)
    if predictor not in LEARNED:
        predicted = oracle_predictions(predictor, n_window, sigma=spec.sigma, rng=noise)
    return predicted, n_window


def _window_jobs(
    table: TraceTable,
    window: tuple[np.ndarray, np.ndarray, np.ndarray],
    entries: list[tuple[str, str, JobConfig]],
    n_window: np.ndarray,
    predicted: np.ndarray,
    scale: float,
) -> list[Job]:
    """The window's jobs: arrivals shifted to start at 0 (and scaled), features per job."""
    rows, gpus, keys = window
    arrivals = (table.submit_s[rows] - table.submit_s[rows[0]]) * scale
    feature_cols = table.features(rows, gpus)
    feature_rows = [
        {
            name: (int(v) if name in ("gpus", "batch_size") else str(v))
            for name, v in zip(feature_cols, vals, strict=True)
        }
        for vals in zip(*feature_cols.values(), strict=True)
    ]
    return [
        Job(
            id=f"j{int(row)}",
            arrival_s=float(arrival),
            config=entry[1],
            iterations=int(n),
            predicted_iterations=float(pred),
            group=str(key),
            features=feats,
            model=entry[0],
        )
        for row, arrival, n, pred, key, feats, entry in zip(
            rows.tolist(),
            arrivals.tolist(),
            n_window.tolist(),
            predicted.tolist(),
            keys.tolist(),
            feature_rows,
            entries,
            strict=True,
        )
    ]


def _provenance(
    spec: _Spec, table: TraceTable, assignment: _Assignment, rows: np.ndarray, start: int, keys
) -> dict[str, Any]:
    """The instance's ``provenance`` (module docstring), without ``prediction_error``."""
    size, num_train = len(table), table.num_train
    seen_groups = set(assignment.keys[:num_train].tolist())
    provenance: dict[str, Any] = {
        "preset": spec.preset,
        "trace": table.name,
        "source": table.source,
        "trace_jobs": size,
        "split": {"train": [0, num_train], "test": [num_train, size]},
        "window": [int(rows[0]), int(rows[-1]) + 1],
        "window_start": start,
        "window_from": spec.window_from,
        "predictor": spec.predictor,
        "seed": spec.seed,
        "single_gpu_share": spec.single_gpu_share,
        "nic_gbps": spec.cluster.b_inter * 8 / 1e9,
        "reference_cluster": spec.reference.to_dict(),
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
    if spec.predictor == "noisy":
        provenance["sigma"] = spec.sigma
    if spec.max_job_gpus is not None:
        provenance["max_job_gpus"] = spec.max_job_gpus
        provenance["window_jobs_dropped"] = int(rows[-1]) + 1 - int(rows[0]) - len(rows)
    if spec.window_from == "all":
        provenance["in_sample_share"] = float(np.mean(rows < num_train))
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
    if spec.extra_provenance:
        provenance.update(spec.extra_provenance)
    return provenance


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
    spec = _validated(
        seed,
        preset,
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
        scale=scale,
        default_jobs=default_jobs,
        alpha_min_of=alpha_min_of,
        extra_provenance=extra_provenance,
    )
    table = load_table(trace)
    size, num_train = len(table), table.num_train
    if num_train < 1 or num_train >= size:
        raise InvalidInstanceError(
            f"trace {table.name}: {size} jobs cannot be split 80/20 into non-empty parts"
        )
    streams = _streams(spec.seed)
    assignment = _assign(table, spec.seed)
    trace_configs = {name: cfg for _, name, cfg in assignment.by_group.values()}
    alpha = _alpha_table(trace_configs, spec.reference, spec.alpha_min_of)
    # true iterations of every trace row (the training split's are the targets)
    if table.iterations is not None:
        n_all = table.iterations
    else:
        row_alpha = np.array([alpha[c] for c in assignment.row_config], dtype=float)
        n_all = _iterations(table.duration_s, row_alpha)

    rows, start = _select_rows(spec, table, streams["window"])
    gpus = _window_gpus(spec, table, rows, streams["sweep"])
    swept = spec.single_gpu_share is not None
    keys = table.group_keys(rows, gpus) if swept else assignment.keys[rows]
    entries, new_configs = _window_configs(
        table, assignment, rows, keys, gpus, streams["sweep_configs"]
    )
    alpha.update(_alpha_table(new_configs, spec.reference, spec.alpha_min_of))
    config_names = [e[1] for e in entries]
    n_window = _window_iterations(table, rows, n_all, config_names, alpha, swept)
    window = (rows, gpus, keys)
    predicted, n_window = _predictions(
        spec, table, assignment, window, n_all, n_window, streams["noise"]
    )
    job_list = _window_jobs(table, window, entries, n_window, predicted, spec.scale)
    known = {**trace_configs, **new_configs}
    configs = {name: known[name] for name in dict.fromkeys(config_names)}
    provenance = _provenance(spec, table, assignment, rows, start, keys)
    instance = AsrptInstance(
        cluster=cluster, configs=configs, jobs=tuple(job_list), provenance=provenance
    )
    provenance = {**provenance, "prediction_error": prediction_error(instance)}
    return replace(instance, provenance=provenance)
