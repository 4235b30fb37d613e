"""Reader of the Alibaba PAI 2020 GPU trace schema (cluster-trace-gpu-v2020).

Spec ``docs/families/asrpt.md`` ("Presets, generators and data": the PAI loader); A-SRPT paper,
Sec. V-A-1-b (the A-SRPT paper's 758,223 jobs are this trace after
cleaning). The trace itself is large and not among the registered data files
(``docs/data.md``): this reader is tested on small synthetic
files in the same schema.

A PAI directory holds headerless CSV files named after their tables, in
the schema's column order, each optionally with a ``<table>.header`` file
(one line, the column names, comma-separated) as in the Alibaba release;
when a ``.header`` file is present its names are used, so a file whose
columns are reordered still reads:

* ``pai_job_table.csv``: ``job_name, inst_id, user, status, start_time,
  end_time`` (``start_time`` is the submission);
* ``pai_task_table.csv``: ``job_name, task_name, inst_num, status,
  start_time, end_time, plan_cpu, plan_mem, plan_gpu, gpu_type``
  (``plan_gpu`` in percent of one GPU);
* ``pai_group_tag_table.csv`` (optional): ``inst_id, user, gpu_type_spec,
  group, workload``.

Rules (spec): keep the jobs whose status is ``Terminated`` and whose GPU
count ``ceil(sum_tasks inst_num x plan_gpu / 100)`` is at least 1; the
duration is the last task end minus the first task start. Choices:

* an empty numeric field counts as missing (PAI leaves ``plan_gpu`` empty
  for CPU-only tasks and times empty for tasks that never ran): a missing
  ``plan_gpu`` or ``inst_num`` adds no GPU, a task with a missing start or
  end takes no part in the duration; a kept job with no timed task, or
  with an empty submission time, is dropped (counted in
  ``meta['dropped']``); a non-empty field that is not a number is a
  malformed row (file and line named);
* the GPU sum is rounded up after subtracting ``1e-9`` (three tasks of
  ``33.333...`` % are one GPU, not two);
* a job's group is the ``group`` of its ``inst_id`` in the group tag table
  (the first row of an ``inst_id`` wins); an absent table or an empty
  ``group`` leaves it empty and the family falls back on (user, GPUs);
* every file goes through the input gate (:mod:`ddlsched.textin`: regular
  files, size cap, strict UTF-8 with a byte-order mark tolerated);
* a file missing a column (its ``.header`` lacks a name, or a headerless
  file's rows have fewer fields than the schema) is a one-line error
  naming the file; so is a missing or empty job or task table, a
  ``job_name`` twice in the job table (both lines named), and a numeric
  field that is not a finite number within 2**53 (``inf``, ``nan``);
* job ids are ``job_name``; jobs come in job-table order;
* a job asking for more than :data:`MAX_JOB_GPUS` GPUs is refused, naming
  it (ours, a guard against hostile input: ``plan_gpu = 1e12`` made a job of 1e10 GPUs that the
  configuration planner looped over GPU by GPU).

The result is a :class:`~ddlsched.workloads.traces.RawTrace` with extra
columns ``user``, ``group`` and ``inst_id`` (strings).
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np

from ddlsched.errors import DdlschedError, InvalidInstanceError
from ddlsched.problems.asrpt import MAX_CLUSTER_GPUS
from ddlsched.textin import read_text
from ddlsched.workloads.traces import RawTrace, convert, read_csv_columns, trace_float

__all__ = ["MAX_JOB_GPUS", "PAI_SCHEMA", "read_pai"]

#: Column order of each table (cluster-trace-gpu-v2020 schema).
PAI_SCHEMA: dict[str, tuple[str, ...]] = {
    "pai_job_table": ("job_name", "inst_id", "user", "status", "start_time", "end_time"),
    "pai_task_table": (
        "job_name",
        "task_name",
        "inst_num",
        "status",
        "start_time",
        "end_time",
        "plan_cpu",
        "plan_mem",
        "plan_gpu",
        "gpu_type",
    ),
    "pai_group_tag_table": ("inst_id", "user", "gpu_type_spec", "group", "workload"),
}
_NEEDED = {
    "pai_job_table": ("job_name", "inst_id", "user", "status", "start_time"),
    "pai_task_table": ("job_name", "inst_num", "start_time", "end_time", "plan_gpu"),
    "pai_group_tag_table": ("inst_id", "group"),
}
_GPU_TOL = 1e-9
#: The most GPUs a job may ask for: the largest cluster of family ``asrpt``.
MAX_JOB_GPUS = MAX_CLUSTER_GPUS
_MAX_HEADER_BYTES = 1024 * 1024


def _number(value: str) -> float:
    """A finite float, or NaN for an empty field (``inf``, ``nan`` and 2**70 are malformed)."""
    value = value.strip()
    if not value:
        return math.nan
    return trace_float(value)


def _header(directory: Path, table: str) -> list[str]:
    """The columns of ``table``: its ``.header`` file's names, else the schema's order."""
    header_path = directory / f"{table}.header"
    if header_path.exists():
        text = read_text(header_path, max_bytes=_MAX_HEADER_BYTES, what="a PAI .header file")
        lines = text.splitlines()
        names = [name.strip() for name in next(csv.reader(lines[:1]), [])]
        missing = [name for name in _NEEDED[table] if name not in names]
        if missing:
            raise InvalidInstanceError(
                f"{header_path}: missing column(s) {', '.join(missing)} "
                f"(the {table} schema: {', '.join(PAI_SCHEMA[table])})"
            )
        return names
    return list(PAI_SCHEMA[table])


def _table(directory: Path, table: str, *, required: bool) -> tuple[dict, list[int], Path] | None:
    path = directory / f"{table}.csv"
    if not path.exists():
        if required:
            raise DdlschedError(f"PAI trace: file not found: {path}")
        return None
    names = _header(directory, table)
    cols, lines = read_csv_columns(
        path,
        _NEEDED[table],
        kind=f"PAI {table}",
        header=names,
        unique="job_name" if table == "pai_job_table" else None,
        allow_empty=not required,
    )
    return cols, lines, path


def read_pai(directory: str | Path) -> RawTrace:
    """Read a PAI 2020 directory (see the module docstring) into plain job columns."""
    directory = Path(directory)
    if not directory.is_dir():
        raise DdlschedError(f"PAI trace: directory not found: {directory}")
    job = _table(directory, "pai_job_table", required=True)
    task = _table(directory, "pai_task_table", required=True)
    tag = _table(directory, "pai_group_tag_table", required=False)
    assert job is not None and task is not None

    tcols, tlines, tpath = task
    inst_num = convert(tpath, tlines, "inst_num", tcols["inst_num"], _number)
    plan_gpu = convert(tpath, tlines, "plan_gpu", tcols["plan_gpu"], _number)
    t_start = convert(tpath, tlines, "start_time", tcols["start_time"], _number)
    t_end = convert(tpath, tlines, "end_time", tcols["end_time"], _number)
    gpu_sum: dict[str, float] = {}
    first_start: dict[str, float] = {}
    last_end: dict[str, float] = {}
    for name, k, pct, start, end in zip(
        tcols["job_name"], inst_num, plan_gpu, t_start, t_end, strict=True
    ):
        if not (math.isnan(k) or math.isnan(pct)):
            gpu_sum[name] = gpu_sum.get(name, 0.0) + k * pct / 100.0
        if not (math.isnan(start) or math.isnan(end)):
            if start < first_start.get(name, math.inf):
                first_start[name] = start
            if end > last_end.get(name, -math.inf):
                last_end[name] = end

    group_of: dict[str, str] = {}
    if tag is not None:
        gcols, _, _ = tag
        for inst, group in zip(gcols["inst_id"], gcols["group"], strict=True):
            group_of.setdefault(inst, group.strip())

    jcols, jlines, jpath = job
    submit = convert(jpath, jlines, "start_time", jcols["start_time"], _number)
    ids, users, groups, insts = [], [], [], []
    submit_s, duration_s, gpus = [], [], []
    dropped = 0
    for name, inst, user, status, sub in zip(
        jcols["job_name"], jcols["inst_id"], jcols["user"], jcols["status"], submit, strict=True
    ):
        if status.strip() != "Terminated":
            continue
        num_gpus = math.ceil(gpu_sum.get(name, 0.0) - _GPU_TOL)
        if num_gpus < 1:
            continue
        if num_gpus > MAX_JOB_GPUS:  # before any array or per-GPU work
            raise InvalidInstanceError(
                f"{directory}: job {name!r} asks for {num_gpus:.6g} GPUs in pai_task_table "
                f"(inst_num x plan_gpu / 100), more than any cluster holds ({MAX_JOB_GPUS:,})"
            )
        if name not in first_start or math.isnan(sub):
            dropped += 1
            continue
        if last_end[name] < first_start[name]:
            raise InvalidInstanceError(
                f"{directory}: job {name!r} ends ({last_end[name]!r}) before it starts "
                f"({first_start[name]!r}) in pai_task_table"
            )
        ids.append(name)
        insts.append(inst)
        users.append(user)
        groups.append(group_of.get(inst, ""))
        submit_s.append(sub)
        duration_s.append(last_end[name] - first_start[name])
        gpus.append(num_gpus)
    return RawTrace(
        name=f"pai:{directory}",
        source=str(directory),
        job_id=tuple(ids),
        submit_s=np.array(submit_s, dtype=float),
        duration_s=np.array(duration_s, dtype=float),
        num_gpus=np.array(gpus, dtype=np.int64),
        extra={
            "user": tuple(users),
            "group": tuple(groups),
            "inst_id": tuple(insts),
        },
        meta={"dropped": dropped},
    )
