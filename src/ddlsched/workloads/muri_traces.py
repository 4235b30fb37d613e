"""Trace loaders for the Muri simulator (vendored Muri, Philly, ITP and Tiresias traces).

Files are read from the data directory (:func:`ddlsched.datadir.data_file`),
never copied into the repository, by the shared raw readers of
:mod:`ddlsched.workloads.traces` (one reader per format); this module adds
the Muri-specific profile assignment.

* ``trace1`` .. ``trace4`` (and ``trace1_pr`` .. ``trace4_pr``, all submit
  times 0), ``cluster_trace``, ``job_type_1`` .. ``job_type_4``: the Muri
  simulator's traces (``traces/muri/*.csv``), columns
  ``job_id,num_gpu,submit_time,iterations,model_name,batch_size,duration,
  interval,iteration_time,resource_time_0..2,priority`` (times in ms).
  The loader keeps the raw numbers; the simulator converts them the way the
  original does (``simulator/jobs.py::add_job``): submit ``ms / 1000``,
  duration ``int(ms) / 1000``, solo iteration time ``ms x 1.015 / 1000``.
* ``philly[:CLUSTER]`` (``traces/philly/philly.csv``, optional virtual
  cluster id), ``itp:clusterNN`` (``traces/itp/raw-traces/clusterNN.csv``)
  and ``tiresias`` (``traces/tiresias/60_job.csv``): these lack the model
  and resource profile. A seeded rule assigns them (``seed`` argument, one
  generator from :func:`ddlsched.rng.make_rng`): each job draws a model
  uniformly from the eight profiled models and a priority (AntMan's
  guaranteed 0 / opportunistic 1) uniformly; its iteration time and resource
  times are that model's profile at the job's GPU count, taken from the
  vendored Muri traces (one profile per (model, GPU count), identical in
  all four traces); iterations are ``int(duration_ms / iteration_time_ms)``
  as in the Muri traces (Tiresias' trace gives its own iterations). GPU
  counts are rounded up to a power of two and capped at 32 (the largest
  profiled count); submit times are shifted so the first job arrives at 0.
* a path ending in ``.csv`` is read as a Muri-format trace.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from ddlsched.datadir import data_file
from ddlsched.errors import DdlschedError, InvalidInstanceError, UnknownMethodError
from ddlsched.rng import make_rng
from ddlsched.workloads.traces import read_itp, read_muri, read_philly, read_tiresias

__all__ = ["MURI_TRACES", "MuriTrace", "load_trace", "profiles", "trace_names"]

MURI_TRACES = (
    *(f"trace{i}" for i in range(1, 5)),
    *(f"trace{i}_pr" for i in range(1, 5)),
    "cluster_trace",
    *(f"job_type_{i}" for i in range(1, 5)),
)
_PROFILE_GPUS = (1, 2, 4, 8, 16, 32)


@dataclass(frozen=True)
class MuriTrace:
    """A job trace in the Muri simulator's raw units (ms), one row per job, file order."""

    name: str
    job_id: np.ndarray  # int
    num_gpu: np.ndarray  # int, powers of two
    submit_ms: np.ndarray  # float (integral in the Muri traces)
    iterations: np.ndarray  # int
    model: tuple[str, ...]
    duration_ms: np.ndarray  # float
    iteration_time_ms: np.ndarray  # float
    resource_time_ms: np.ndarray  # (n, 3) float
    priority: np.ndarray  # int, 0 guaranteed / 1 opportunistic (AntMan)

    def __post_init__(self) -> None:
        n = len(self.job_id)
        for field in (
            "num_gpu",
            "submit_ms",
            "iterations",
            "duration_ms",
            "iteration_time_ms",
            "priority",
        ):
            if len(getattr(self, field)) != n:
                raise InvalidInstanceError(
                    f"trace {self.name}: column {field} has the wrong length"
                )
        if len(self.model) != n or self.resource_time_ms.shape != (n, 3):
            raise InvalidInstanceError(
                f"trace {self.name}: model/resource columns have the wrong length"
            )
        if n == 0:
            raise InvalidInstanceError(f"trace {self.name}: no jobs")
        g = self.num_gpu
        if np.any(g < 1) or np.any(g & (g - 1)):
            raise InvalidInstanceError(f"trace {self.name}: num_gpu must be powers of two")
        if np.any(self.iterations < 1):
            raise InvalidInstanceError(f"trace {self.name}: iterations must be >= 1")
        if not np.all(np.isfinite(self.iteration_time_ms)) or np.any(self.iteration_time_ms <= 0):
            raise InvalidInstanceError(f"trace {self.name}: iteration_time must be finite and > 0")
        rt = self.resource_time_ms
        if not np.all(np.isfinite(rt)) or np.any(rt < 0):
            raise InvalidInstanceError(f"trace {self.name}: resource times must be finite and >= 0")
        if np.any(rt[:, 1] + rt[:, 2] <= 0):
            raise InvalidInstanceError(
                f"trace {self.name}: resource_time_1 + resource_time_2 must be > 0"
            )
        if not np.all(np.isfinite(self.submit_ms)) or not np.all(np.isfinite(self.duration_ms)):
            raise InvalidInstanceError(f"trace {self.name}: times must be finite")
        if np.any((self.priority != 0) & (self.priority != 1)):
            raise InvalidInstanceError(f"trace {self.name}: priority must be 0 or 1")
        if np.any(self.submit_ms < 0):
            raise InvalidInstanceError(f"trace {self.name}: submit_time must be >= 0")

    def __len__(self) -> int:
        return len(self.job_id)

    def head(self, limit: int) -> MuriTrace:
        """The first ``limit`` jobs (file order)."""
        s = slice(0, limit)
        return MuriTrace(
            f"{self.name}[:{limit}]",
            self.job_id[s],
            self.num_gpu[s],
            self.submit_ms[s],
            self.iterations[s],
            self.model[s],
            self.duration_ms[s],
            self.iteration_time_ms[s],
            self.resource_time_ms[s],
            self.priority[s],
        )


def trace_names() -> tuple[str, ...]:
    """The trace names :func:`load_trace` accepts (``CLUSTER``, ``NN``: placeholders), for
    its error message; a ``.csv`` path is accepted too."""
    return (*MURI_TRACES, "philly", "philly:CLUSTER", "itp:clusterNN", "tiresias")


def _read_muri_csv(path: Path, name: str) -> MuriTrace:
    raw = read_muri(path, name)
    extra = raw.extra
    return MuriTrace(
        name=name,
        job_id=extra["job_number"],
        num_gpu=raw.num_gpus,
        submit_ms=extra["submit_ms"],
        iterations=extra["iterations"],
        model=extra["model"],
        duration_ms=extra["duration_ms"],
        iteration_time_ms=extra["iteration_time_ms"],
        resource_time_ms=extra["resource_time_ms"],
        priority=extra["priority"],
    )


@lru_cache(maxsize=1)
def profiles() -> dict[tuple[str, int], tuple[float, tuple[float, float, float]]]:
    """(model, GPUs) -> (iteration time ms, resource times ms), from the vendored Muri traces."""
    table: dict[tuple[str, int], tuple[float, tuple[float, float, float]]] = {}
    for name in ("trace1", "trace2", "trace3", "trace4"):
        tr = _read_muri_csv(data_file("traces", "muri", f"{name}.csv"), name)
        for i in range(len(tr)):
            key = (tr.model[i], int(tr.num_gpu[i]))
            table.setdefault(
                key, (float(tr.iteration_time_ms[i]), tuple(map(float, tr.resource_time_ms[i])))
            )
    return table


def _with_profiles(name, submit_s, duration_s, gpus, seed, iterations=None) -> MuriTrace:
    table = profiles()
    models = sorted({m for m, _ in table})
    rng = make_rng(seed)
    n = len(submit_s)
    model_pick = rng.integers(len(models), size=n)
    priority = rng.integers(2, size=n)
    g = np.array(gpus, dtype=np.int64)
    g = np.minimum(32, 1 << np.ceil(np.log2(np.maximum(g, 1))).astype(np.int64))
    submit = np.asarray(submit_s, dtype=float)
    submit = submit - submit.min()
    it_ms, res, iters, model = [], [], [], []
    for i in range(n):
        m = models[int(model_pick[i])]
        prof = table.get((m, int(g[i])))
        if prof is None:  # pragma: no cover - every (model, count) is profiled
            prof = table[(m, max(c for c in _PROFILE_GPUS if (m, c) in table and c <= g[i]))]
        it_ms.append(prof[0])
        res.append(prof[1])
        model.append(m)
        dur_ms = float(duration_s[i]) * 1000.0
        if iterations is None:
            iters.append(max(1, int(dur_ms / prof[0])))
        else:
            iters.append(int(iterations[i]))
    return MuriTrace(
        name=name,
        job_id=np.arange(n, dtype=np.int64),
        num_gpu=g,
        submit_ms=np.round(submit * 1000.0),
        iterations=np.array(iters, dtype=np.int64),
        model=tuple(model),
        duration_ms=np.round(np.asarray(duration_s, dtype=float) * 1000.0),
        iteration_time_ms=np.array(it_ms),
        resource_time_ms=np.array(res),
        priority=priority.astype(np.int64),
    )


def _philly(cluster: str | None, seed: int) -> MuriTrace:
    raw = read_philly()
    if cluster is not None:
        raw = raw.take(np.flatnonzero(np.array(raw.extra["cluster"]) == cluster))
    if len(raw) == 0:
        raise UnknownMethodError(f"no Philly jobs in virtual cluster {cluster!r}")
    raw = raw.take(np.argsort(raw.submit_s, kind="stable"))
    return _with_profiles(
        f"philly{':' + cluster if cluster else ''}",
        raw.submit_s,
        np.maximum(1.0, raw.duration_s),
        raw.num_gpus,
        seed,
    )


def _itp(cluster: str, seed: int) -> MuriTrace:
    raw = read_itp(cluster)
    raw = raw.take(np.argsort(raw.submit_s, kind="stable"))
    return _with_profiles(
        f"itp:{cluster}",
        raw.submit_s,
        np.maximum(1.0, raw.duration_s),
        raw.num_gpus,
        seed,
    )


def _tiresias(seed: int) -> MuriTrace:
    raw = read_tiresias()
    return _with_profiles(
        "tiresias",
        raw.submit_s,
        raw.duration_s,
        raw.num_gpus,
        seed,
        iterations=raw.extra["iterations"],
    )


def load_trace(name: str, seed: int = 0, limit: int | None = None) -> MuriTrace:
    """Load a trace by name (see the module docstring); ``limit`` keeps the first jobs."""
    if not isinstance(name, str) or not name:
        raise UnknownMethodError("trace name must be a non-empty string")
    if name in MURI_TRACES:
        trace = _read_muri_csv(data_file("traces", "muri", f"{name}.csv"), name)
    elif name == "philly" or name.startswith("philly:"):
        trace = _philly(name.partition(":")[2] or None, seed)
    elif name.startswith("itp:"):
        trace = _itp(name.partition(":")[2], seed)
    elif name == "tiresias":
        trace = _tiresias(seed)
    elif name.endswith(".csv"):
        path = Path(name)
        if not path.exists():  # anything else (a directory, a device) is the gate's to refuse
            raise DdlschedError(f"trace file not found: {name}")
        trace = _read_muri_csv(path, path.stem)
    else:
        raise UnknownMethodError(
            f"unknown trace {name!r} (choose from {', '.join(trace_names())}, or a .csv path)"
        )
    if limit is not None:
        if limit < 1:
            raise DdlschedError(f"--limit must be >= 1, got {limit}")
        trace = trace.head(limit)
    return trace
