"""Raw readers of the public job traces: one reader per format, shared by every family.

Each reader returns a :class:`RawTrace`: plain columns in file order (job
ids, submission seconds, duration seconds, GPUs) and the extra columns its
format has. Nothing here assigns models, profiles, iterations or
predictions: that is each family's business (:mod:`ddlsched.workloads.muri_traces`
for ``muri``, :mod:`ddlsched.workloads.asrpt_traces` for ``asrpt``). The
files are read from the data directory (:func:`ddlsched.datadir.data_file`,
``docs/data.md``), never copied into the repository; the Alibaba
PAI 2020 reader lives in :mod:`ddlsched.workloads.pai`.

Formats (columns by header name; extra columns are ignored):

* **Philly** (``traces/philly/philly.csv``, petuum/adaptdl's extract of the
  Microsoft Philly trace): ``timestamp,duration,num_gpus,gpu_time,cluster``.
  ``timestamp`` is an ISO date-time without a zone, read as UTC (the
  result does not depend on the machine's time zone); job ids are the row
  numbers in the file (``"0"``, ``"1"``, ...: the file has none); extra
  column ``cluster`` (the virtual cluster).
* **ITP** (``traces/itp/raw-traces/clusterNN.csv``, ElasticFlow's traces of
  Microsoft's ITP clusters): ``job_id,submission_time,duration,num_gpu``
  (seconds from the common start of collection, so files can be merged);
  extra column ``cluster`` (the file's stem). ``read_itp()`` without a
  cluster concatenates the ten files in name order.
* **Muri** (``traces/muri/*.csv``): ``job_id,num_gpu,submit_time,
  iterations,model_name,batch_size,duration,interval,iteration_time,
  resource_time_0..2,priority``, times in ms. Parsed exactly as the Muri
  simulator does (``simulator/jobs.py::add_job``): ``submit_time`` and
  ``job_id`` as integers, ``duration`` as ``int(float(.))``. Extra
  columns: ``job_number`` (int), ``model``, ``batch_size`` (0 when the
  file has no such column or the field is empty), ``iterations``, ``submit_ms``,
  ``duration_ms``, ``iteration_time_ms``, ``resource_time_ms`` (``n x
  3``), ``priority`` (0 when absent or empty). ``submit_s`` and
  ``duration_s`` are the ms values over 1000.
* **Tiresias** (``traces/tiresias/60_job.csv``): ``job_id,num_gpu,
  submit_time,iterations,model_name,duration,interval`` (seconds); extra
  columns ``model`` and ``iterations``.

Every file goes through the input gate (:mod:`ddlsched.textin`): a regular
file of at most :data:`MAX_TRACE_BYTES`, strict UTF-8 (a byte-order mark is
tolerated). Errors are one line: a missing data file names the file and
``DDLSCHED_DATA`` (:func:`~ddlsched.datadir.data_file`); a file missing a
column (or naming one twice) names the file and the columns; an empty file, or one without a
data row, names the file; a malformed row (wrong field count, a value that
is not a number, not finite, or above :data:`MAX_TRACE_NUMBER` in
magnitude, e.g. ``2**70``, ``inf``, ``nan``) names the file, the line, the
column and the value; a job id seen twice in one file (ITP, Muri,
Tiresias) names the id and both lines. Blank lines are skipped.
"""

from __future__ import annotations

import csv
import datetime as _dt
import io
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ddlsched.datadir import data_file
from ddlsched.errors import InvalidInstanceError, UnknownMethodError
from ddlsched.textin import read_text

__all__ = [
    "ITP_CLUSTERS",
    "MAX_TRACE_BYTES",
    "MAX_TRACE_NUMBER",
    "RawTrace",
    "bounded",
    "convert",
    "read_csv_columns",
    "read_itp",
    "read_muri",
    "read_philly",
    "read_tiresias",
    "trace_float",
    "trace_int",
]

#: The largest trace file read (bytes): checked before reading, so a stray multi-GB file
#: or ``/dev/zero`` is refused, never read into memory.
MAX_TRACE_BYTES = 1024 * 1024 * 1024
#: The largest magnitude of a number in a trace: 2**53 (integers exact as floats, far
#: inside int64, so no later conversion overflows).
MAX_TRACE_NUMBER = 2**53

#: The ten ITP cluster files of ElasticFlow's raw traces.
ITP_CLUSTERS = tuple(f"cluster{i:02d}" for i in range(1, 11))


@dataclass(frozen=True, eq=False)
class RawTrace:
    """One trace's plain columns, one row per job, in file order.

    ``extra`` holds the format's other columns (arrays or tuples of the
    same length), named in the module docstring; ``meta`` holds facts
    about the file that are not columns (e.g. how many rows a reader
    dropped).
    """

    name: str
    source: str
    job_id: tuple[str, ...]
    submit_s: np.ndarray
    duration_s: np.ndarray
    num_gpus: np.ndarray
    extra: Mapping[str, Any] = field(default_factory=dict)
    meta: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        n = len(self.job_id)
        for name, column in (
            ("submit_s", self.submit_s),
            ("duration_s", self.duration_s),
            ("num_gpus", self.num_gpus),
            *self.extra.items(),
        ):
            if len(column) != n:
                raise InvalidInstanceError(
                    f"trace {self.name}: column {name} has {len(column)} rows, job_id has {n}"
                )

    def __len__(self) -> int:
        return len(self.job_id)

    def take(self, index: Sequence[int] | np.ndarray) -> RawTrace:
        """The rows ``index`` (in that order), every column included."""
        index = np.asarray(index, dtype=np.int64)

        def pick(column: Any) -> Any:
            if isinstance(column, np.ndarray):
                return column[index]
            return tuple(column[i] for i in index)

        return RawTrace(
            name=self.name,
            source=self.source,
            job_id=pick(self.job_id),
            submit_s=self.submit_s[index],
            duration_s=self.duration_s[index],
            num_gpus=self.num_gpus[index],
            extra={name: pick(column) for name, column in self.extra.items()},
            meta=self.meta,
        )


# --------------------------------------------------------------------------- CSV


def read_csv_columns(
    path: Path,
    required: Sequence[str],
    optional: Sequence[str] = (),
    *,
    kind: str,
    header: Sequence[str] | None = None,
    unique: str | None = None,
    allow_empty: bool = False,
) -> tuple[dict[str, list[str]], list[int]]:
    """Read the named columns of a CSV file as strings, with the line of each row.

    The file goes through the input gate (:mod:`ddlsched.textin`): a regular
    file of at most :data:`MAX_TRACE_BYTES`, strict UTF-8 (a byte-order mark
    is tolerated). ``header`` given: the file has no header row and these
    are its columns (headerless formats such as PAI). A column of
    ``required`` absent from the header is a one-line error naming the file
    and ``kind`` (the format); a row whose field count differs from the
    header's is an error naming the file and the line; so is a value of the
    column ``unique`` (job ids) seen on an earlier line, and a file without
    a data row (unless ``allow_empty``). Columns of ``optional`` absent from
    the header are absent from the result.
    """
    text = read_text(path, max_bytes=MAX_TRACE_BYTES, what=f"a {kind} file")
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        if header is None:
            try:
                names = next(reader)
            except StopIteration:
                raise InvalidInstanceError(f"{path}: empty file (no header row)") from None
        else:
            names = list(header)
        names = [name.strip() for name in names]
        twice = sorted({name for name in names if names.count(name) > 1})
        if twice:
            raise InvalidInstanceError(
                f"{path}: column(s) {', '.join(map(repr, twice))} named twice in the header"
            )
        missing = [name for name in required if name not in names]
        if missing:
            raise InvalidInstanceError(
                f"{path}: missing column(s) {', '.join(missing)} "
                f"(a {kind} file needs {', '.join(required)})"
            )
        wanted = [name for name in (*required, *optional) if name in names]
        where = [names.index(name) for name in wanted]
        width = len(names)
        columns: dict[str, list[str]] = {name: [] for name in wanted}
        lists = [columns[name] for name in wanted]
        lines: list[int] = []
        key = names.index(unique) if unique is not None else None
        seen: dict[str, int] = {}
        for row in reader:
            if not row:
                continue
            if len(row) < width and header is not None and not lines:
                raise InvalidInstanceError(
                    f"{path}: {len(row)} columns, the {kind} schema has {width} "
                    f"({', '.join(names)}): a column is missing"
                )
            if len(row) != width:
                raise InvalidInstanceError(
                    f"{path}, line {reader.line_num}: malformed row "
                    f"({len(row)} fields, the {kind} format has {width})"
                )
            if key is not None:
                first = seen.setdefault(row[key], reader.line_num)
                if first != reader.line_num:
                    raise InvalidInstanceError(
                        f"{path}, line {reader.line_num}: duplicate {unique} {row[key]!r} "
                        f"(also on line {first})"
                    )
            for values, k in zip(lists, where, strict=True):
                values.append(row[k])
            lines.append(reader.line_num)
    except csv.Error as exc:
        raise InvalidInstanceError(
            f"{path}, line {reader.line_num}: not a CSV file ({exc})"
        ) from None
    if not lines and not allow_empty:
        raise InvalidInstanceError(f"{path}: no data rows (a {kind} file needs at least one job)")
    return columns, lines


def convert(
    path: Path, lines: Sequence[int], column: str, values: Sequence[str], fn: Callable[[str], Any]
) -> list[Any]:
    """``[fn(v) for v in values]``; a failure names the file, the line, the column and the value.

    ``fn`` raises ``ValueError`` (its text, if any, ends the message),
    ``TypeError`` or ``OverflowError`` for a value it refuses.
    """
    try:
        return [fn(v) for v in values]
    except (ValueError, TypeError, OverflowError):
        for line, value in zip(lines, values, strict=True):
            try:
                fn(value)
            except (ValueError, TypeError, OverflowError) as exc:
                reason = f": {exc}" if isinstance(exc, _Refused) else ""
                raise InvalidInstanceError(
                    f"{path}, line {line}: malformed row (column {column}: {value!r}){reason}"
                ) from None
        raise  # pragma: no cover - the scan finds the failing value


class _Refused(ValueError):
    """A value that parses but is refused (not finite, out of range); the text says why."""


def bounded(number: float | int) -> float | int:
    """``number`` if finite and within :data:`MAX_TRACE_NUMBER` in magnitude, else refused."""
    if isinstance(number, float) and not math.isfinite(number):
        raise _Refused("not a finite number")
    if abs(number) > MAX_TRACE_NUMBER:
        raise _Refused("out of range (magnitude above 2**53)")
    return number


def trace_float(text: str) -> float:
    """A finite float of a trace field, at most :data:`MAX_TRACE_NUMBER` in magnitude."""
    return float(bounded(float(text)))


def trace_int(text: str) -> int:
    """An integer of a trace field, at most :data:`MAX_TRACE_NUMBER` in magnitude."""
    text = text.strip()
    if len(text.lstrip("+-")) > 30:
        raise _Refused("out of range (magnitude above 2**53)")
    return int(bounded(int(text)))


def _checked(path, lines, column, values, fn, minimum):
    def parse(text: str) -> Any:
        value = fn(text)
        if minimum is not None and value < minimum:
            raise _Refused(f"must be >= {minimum}")
        return value

    return convert(path, lines, column, values, parse)


def _floats(
    path: Path,
    lines: Sequence[int],
    column: str,
    values: Sequence[str],
    minimum: float | None = None,
) -> np.ndarray:
    """Finite floats (at least ``minimum``); a bad value names the file, line and column."""
    return np.array(_checked(path, lines, column, values, trace_float, minimum), dtype=float)


def _ints(
    path: Path,
    lines: Sequence[int],
    column: str,
    values: Sequence[str],
    minimum: int | None = None,
) -> np.ndarray:
    """Integers (at least ``minimum``); a bad value names the file, line and column."""
    return np.array(_checked(path, lines, column, values, trace_int, minimum), dtype=np.int64)


# --------------------------------------------------------------------------- formats


def _utc_seconds(stamp: str) -> float:
    moment = _dt.datetime.fromisoformat(stamp)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=_dt.UTC)
    return moment.timestamp()


def read_philly(path: Path | None = None) -> RawTrace:
    """The Philly trace (``traces/philly/philly.csv`` unless ``path``); see the module docstring."""
    path = data_file("traces", "philly", "philly.csv") if path is None else Path(path)
    cols, lines = read_csv_columns(
        path, ("timestamp", "duration", "num_gpus", "cluster"), kind="Philly"
    )
    return RawTrace(
        name="philly",
        source=str(path),
        job_id=tuple(str(i) for i in range(len(lines))),
        submit_s=np.array(
            convert(path, lines, "timestamp", cols["timestamp"], _utc_seconds), dtype=float
        ),
        duration_s=_floats(path, lines, "duration", cols["duration"], minimum=0.0),
        num_gpus=_ints(path, lines, "num_gpus", cols["num_gpus"], minimum=1),
        extra={"cluster": tuple(cols["cluster"])},
    )


def _read_itp_file(path: Path, cluster: str) -> RawTrace:
    cols, lines = read_csv_columns(
        path, ("job_id", "submission_time", "duration", "num_gpu"), kind="ITP", unique="job_id"
    )
    return RawTrace(
        name=f"itp:{cluster}",
        source=str(path),
        job_id=tuple(cols["job_id"]),
        submit_s=_floats(path, lines, "submission_time", cols["submission_time"]),
        duration_s=_floats(path, lines, "duration", cols["duration"], minimum=0.0),
        num_gpus=_ints(path, lines, "num_gpu", cols["num_gpu"], minimum=1),
        extra={"cluster": (cluster,) * len(lines)},
    )


def read_itp(cluster: str | None = None) -> RawTrace:
    """One ITP cluster file (``clusterNN``), or all ten concatenated in name order."""
    if cluster is not None:
        if cluster not in ITP_CLUSTERS:
            raise UnknownMethodError(
                f"unknown ITP cluster {cluster!r} (choose from {', '.join(ITP_CLUSTERS)})"
            )
        return _read_itp_file(data_file("traces", "itp", "raw-traces", f"{cluster}.csv"), cluster)
    parts = [
        _read_itp_file(data_file("traces", "itp", "raw-traces", f"{c}.csv"), c)
        for c in ITP_CLUSTERS
    ]
    return RawTrace(
        name="itp",
        source=str(Path(parts[0].source).parent),
        job_id=tuple(j for p in parts for j in p.job_id),
        submit_s=np.concatenate([p.submit_s for p in parts]),
        duration_s=np.concatenate([p.duration_s for p in parts]),
        num_gpus=np.concatenate([p.num_gpus for p in parts]),
        extra={"cluster": tuple(c for p in parts for c in p.extra["cluster"])},
    )


_MURI_REQUIRED = (
    "job_id",
    "num_gpu",
    "submit_time",
    "iterations",
    "model_name",
    "duration",
    "iteration_time",
    "resource_time_0",
    "resource_time_1",
    "resource_time_2",
)


def _int_or_zero(text: str) -> int:
    return trace_int(text) if text else 0


def read_muri(path: Path, name: str | None = None) -> RawTrace:
    """A Muri-format trace (ms); see the module docstring for the parsing rules."""
    path = Path(path)
    cols, lines = read_csv_columns(
        path, _MURI_REQUIRED, ("batch_size", "priority"), kind="Muri trace", unique="job_id"
    )
    n = len(lines)
    submit_ms = np.array(
        convert(path, lines, "submit_time", cols["submit_time"], lambda v: float(trace_int(v))),
        dtype=float,
    )
    duration_ms = np.array(
        convert(path, lines, "duration", cols["duration"], lambda v: float(int(trace_float(v)))),
        dtype=float,
    )
    resource = np.array(
        [
            convert(path, lines, f"resource_time_{j}", cols[f"resource_time_{j}"], trace_float)
            for j in range(3)
        ],
        dtype=float,
    )
    resource = np.ascontiguousarray(resource.T.reshape(n, 3))
    job_number = _ints(path, lines, "job_id", cols["job_id"])
    batch = (
        np.array(
            convert(path, lines, "batch_size", cols["batch_size"], _int_or_zero),
            dtype=np.int64,
        )
        if "batch_size" in cols
        else np.zeros(n, dtype=np.int64)
    )
    priority = (
        np.array(
            convert(path, lines, "priority", cols["priority"], _int_or_zero),
            dtype=np.int64,
        )
        if "priority" in cols
        else np.zeros(n, dtype=np.int64)
    )
    return RawTrace(
        name=name or path.stem,
        source=str(path),
        job_id=tuple(cols["job_id"]),
        submit_s=submit_ms / 1000.0,
        duration_s=duration_ms / 1000.0,
        num_gpus=_ints(path, lines, "num_gpu", cols["num_gpu"]),
        extra={
            "job_number": job_number,
            "model": tuple(cols["model_name"]),
            "batch_size": batch,
            "iterations": _ints(path, lines, "iterations", cols["iterations"]),
            "submit_ms": submit_ms,
            "duration_ms": duration_ms,
            "iteration_time_ms": _floats(path, lines, "iteration_time", cols["iteration_time"]),
            "resource_time_ms": resource,
            "priority": priority,
        },
    )


def read_tiresias(path: Path | None = None) -> RawTrace:
    """Tiresias' 60-job trace (seconds); extra columns ``model`` and ``iterations``."""
    path = data_file("traces", "tiresias", "60_job.csv") if path is None else Path(path)
    cols, lines = read_csv_columns(
        path,
        ("job_id", "num_gpu", "submit_time", "iterations", "model_name", "duration"),
        kind="Tiresias trace",
        unique="job_id",
    )
    return RawTrace(
        name="tiresias",
        source=str(path),
        job_id=tuple(cols["job_id"]),
        submit_s=_floats(path, lines, "submit_time", cols["submit_time"]),
        duration_s=_floats(path, lines, "duration", cols["duration"]),
        num_gpus=_ints(path, lines, "num_gpu", cols["num_gpu"]),
        extra={
            "model": tuple(cols["model_name"]),
            "iterations": _ints(path, lines, "iterations", cols["iterations"]),
        },
    )
