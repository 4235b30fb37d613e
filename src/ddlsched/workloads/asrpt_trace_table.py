"""The traces of family ``asrpt``'s trace-driven presets, as one sorted table.

Spec ``docs/families/asrpt.md`` ("Presets, generators and data": the groups
and features table); A-SRPT paper, Sec. IV-C-3 and V-A. Step 1 of the
pipeline of :mod:`ddlsched.workloads.asrpt_window` (which also uses the
groups and features of step 3):

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
3. **Groups and features** (spec table): Philly ``(vc, gpus)``, ITP
   ``(cluster, gpus)``, Muri ``(model, batch_size, gpus)``, Tiresias
   ``(model, gpus)``, PAI ``group`` (else ``user:<user>/<gpus>``), with
   the RF features ``vc, gpus`` / ``cluster, gpus`` / ``model,
   batch_size, gpus`` / ``model, gpus`` / ``user, group, gpus``
   (categorical: vc, cluster, model, user, group). Group keys are the
   values joined by ``/``. Philly and ITP carry no user or group id, so
   their predictors are weaker than the paper's: ``provenance['note']``
   says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from ddlsched.datadir import data_dir, data_file
from ddlsched.errors import DdlschedError, InvalidInstanceError
from ddlsched.problems.asrpt import MAX_CLUSTER_GPUS
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

__all__ = ["TraceTable", "load_table"]


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
