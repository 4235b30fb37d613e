"""Family ``asrpt``'s schedule, its evaluator and its JSON form.

A-SRPT paper, Section III (model: Eqs. 1-3 and 8); spec
``docs/families/asrpt.md`` (the spec wins over the paper). The instance is
:mod:`ddlsched.problems.asrpt`; this module is the ONE place that computes
``sum_i C_i`` (Eq. 8) and the other metrics. It imports no solver and no
algorithm. A job's per-iteration time ``alpha_i`` is
:func:`~ddlsched.problems.asrpt.job_alpha` (the ``placement`` family's,
Eqs. 4-7, on the job's own per-server GPU counts).

Evaluator (:func:`evaluate`): a schedule gives each job a start ``t_i`` and
a placement (the servers it uses and, per stage, the replicas on each of
them). Checked: every job scheduled exactly once, ``t_i >= r_i`` (Eq. 1),
every stage fully placed (Eq. 2), valid and distinct server ids, and at
most ``g`` GPUs in use per server at every instant over half-open run
intervals ``[t_i, C_i)`` (Eq. 3; a sweep over start and finish events,
finishes first at equal times). ``C_i = t_i + n_i alpha_i``.

Choices the spec leaves open (written down here):

* ``makespan_s`` is ``max_i C_i - min_i r_i`` (the generators put the first
  arrival at 0, so it is then ``max_i C_i``); utilisation is busy
  GPU-seconds ``sum_i g_i n_i alpha_i`` over ``G x makespan``.
* ``p50``/``p99`` JCT are :func:`numpy.percentile` with linear
  interpolation over ``C_i - r_i``.
* ``t_i >= r_i`` and capacity are checked exactly on the floats (producers
  of schedules on an integer time grid start a job at ``max(S unit, r_i)``).
* ``epsilon_bar`` (Eq. 9, iterations) is the instance's
  (:func:`~ddlsched.problems.asrpt.prediction_error`), copied into every
  evaluation.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ddlsched.errors import InfeasibleScheduleError, InvalidInstanceError
from ddlsched.jsonio import check_fields, require_int, require_number
from ddlsched.problems.asrpt import AsrptInstance, Job, job_alpha, prediction_error

__all__ = [
    "AsrptEvaluation",
    "AsrptSchedule",
    "JobRun",
    "evaluate",
    "schedule_from_json",
    "schedule_to_json",
]


@dataclass(frozen=True)
class JobRun:
    """Where and when one job runs: start ``t_i`` (s), its servers (cluster indices,
    distinct) and ``counts[s][k]``, the replicas of stage ``s`` on ``servers[k]``."""

    start_s: float
    servers: tuple[int, ...]
    counts: tuple[tuple[int, ...], ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "servers", tuple(int(m) for m in self.servers))
        object.__setattr__(self, "counts", tuple(tuple(int(v) for v in row) for row in self.counts))

    def gpus_on(self) -> dict[int, int]:
        """``{server: GPUs the job holds there}``."""
        return {m: sum(row[k] for row in self.counts) for k, m in enumerate(self.servers)}


@dataclass(frozen=True)
class AsrptSchedule:
    """``runs[job id]``: each job's :class:`JobRun`; ``info`` is the policy's own
    record (decision counts), not read by the evaluator."""

    runs: Mapping[str, JobRun]
    info: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class AsrptEvaluation:
    """What the evaluator computed (seconds); per-job arrays follow the instance's job order."""

    total_completion_s: float
    total_flow_s: float
    makespan_s: float
    mean_jct_s: float
    p50_jct_s: float
    p99_jct_s: float
    utilisation: float
    epsilon_bar: float
    job_ids: tuple[str, ...]
    start_s: tuple[float, ...]
    finish_s: tuple[float, ...]
    alpha_s: tuple[float, ...]

    def summary(self) -> dict[str, float]:
        """The headline metrics (what every result row carries)."""
        return {
            "total_completion_s": self.total_completion_s,
            "total_flow_s": self.total_flow_s,
            "makespan_s": self.makespan_s,
            "mean_jct_s": self.mean_jct_s,
            "p50_jct_s": self.p50_jct_s,
            "p99_jct_s": self.p99_jct_s,
            "utilisation": self.utilisation,
            "epsilon_bar": self.epsilon_bar,
        }


def _check_run(instance: AsrptInstance, job: Job, run: JobRun) -> None:
    config = instance.configs[job.config]
    M = instance.cluster.servers
    g = instance.cluster.gpus_per_server
    where = f"job {job.id}"
    if not isinstance(run, JobRun):
        raise InfeasibleScheduleError(f"{where}: expected a JobRun, got {type(run).__name__}")
    if not (isinstance(run.start_s, (int, float)) and math.isfinite(run.start_s)):
        raise InfeasibleScheduleError(f"{where}: start {run.start_s!r} is not a finite number")
    if run.start_s < job.arrival_s:
        raise InfeasibleScheduleError(
            f"{where}: starts at {run.start_s!r} s before its arrival {job.arrival_s!r} s (Eq. 1)",
            job=job.id,
        )
    if not run.servers:
        raise InfeasibleScheduleError(f"{where}: no server given")
    if len(set(run.servers)) != len(run.servers):
        raise InfeasibleScheduleError(f"{where}: a server is listed twice: {list(run.servers)}")
    for m in run.servers:
        if not 0 <= m < M:
            raise InfeasibleScheduleError(f"{where}: server {m} does not exist (0..{M - 1})")
    if len(run.counts) != len(config.stages):
        raise InfeasibleScheduleError(
            f"{where}: {len(run.counts)} stage rows, the configuration has {len(config.stages)}"
        )
    for s, (row, stage) in enumerate(zip(run.counts, config.stages, strict=True)):
        if len(row) != len(run.servers):
            raise InfeasibleScheduleError(
                f"{where}: stage {s} row has {len(row)} entries for {len(run.servers)} servers"
            )
        if any(v < 0 for v in row):
            raise InfeasibleScheduleError(f"{where}: stage {s} has a negative replica count")
        if sum(row) != stage.replicas:
            raise InfeasibleScheduleError(
                f"{where}: stage {s} has {sum(row)} replicas placed, k_s = {stage.replicas} (Eq. 2)"
            )
    for m, used in run.gpus_on().items():
        if used > g:
            raise InfeasibleScheduleError(
                f"{where}: {used} GPUs on server {m} of {g} (Eq. 3)", job=job.id, server=m
            )


def evaluate(instance: AsrptInstance, schedule: AsrptSchedule) -> AsrptEvaluation:
    """Check ``schedule`` (Eqs. 1-3) and compute ``sum_i C_i`` (Eq. 8) and the metrics."""
    if not isinstance(schedule, AsrptSchedule):
        raise InfeasibleScheduleError(f"expected an AsrptSchedule, got {type(schedule).__name__}")
    runs = schedule.runs
    ids = {job.id for job in instance.jobs}
    extra = sorted(set(runs) - ids)
    if extra:
        raise InfeasibleScheduleError(f"schedule names unknown job(s) {', '.join(extra[:5])}")
    cluster = instance.cluster
    starts, finishes, alphas = [], [], []
    events: list[
        tuple[float, int, int, int, str]
    ] = []  # (time, 0 finish / 1 start, server, gpus, id)
    busy = 0.0
    for job in instance.jobs:
        run = runs.get(job.id)
        if run is None:
            raise InfeasibleScheduleError(f"job {job.id} is not scheduled", job=job.id)
        _check_run(instance, job, run)
        config = instance.configs[job.config]
        try:
            alpha = job_alpha(cluster, config, run.counts)
        except InfeasibleScheduleError as exc:
            raise InfeasibleScheduleError(f"job {job.id}: {exc}", job=job.id) from None
        start = float(run.start_s)
        finish = start + job.iterations * alpha
        starts.append(start)
        finishes.append(finish)
        alphas.append(alpha)
        busy += config.num_gpus * job.iterations * alpha
        for m, used in run.gpus_on().items():
            events.append((start, 1, m, used, job.id))
            events.append((finish, 0, m, used, job.id))
    events.sort(key=lambda e: (e[0], e[1]))
    in_use = [0] * cluster.servers
    g = cluster.gpus_per_server
    for time, kind, m, used, job_id in events:
        if kind == 0:
            in_use[m] -= used
            continue
        in_use[m] += used
        if in_use[m] > g:
            raise InfeasibleScheduleError(
                f"server {m} over-committed at t = {time!r} s when job {job_id} starts: "
                f"{in_use[m]} GPUs of {g} in use (Eq. 3)",
                job=job_id,
                server=m,
                time=time,
            )
    arrivals = np.array([job.arrival_s for job in instance.jobs], dtype=float)
    fin = np.array(finishes)
    jct = fin - arrivals
    makespan = float(fin.max() - arrivals.min())
    total_gpus = cluster.num_gpus
    return AsrptEvaluation(
        total_completion_s=float(math.fsum(finishes)),
        total_flow_s=float(math.fsum(jct)),
        makespan_s=makespan,
        mean_jct_s=float(jct.mean()),
        p50_jct_s=float(np.percentile(jct, 50)),
        p99_jct_s=float(np.percentile(jct, 99)),
        utilisation=float(busy / (total_gpus * makespan)) if makespan > 0 else 0.0,
        epsilon_bar=prediction_error(instance)["epsilon_bar"],
        job_ids=tuple(job.id for job in instance.jobs),
        start_s=tuple(starts),
        finish_s=tuple(finishes),
        alpha_s=tuple(alphas),
    )


# --------------------------------------------------------------------------- schedule JSON


def schedule_to_json(schedule: AsrptSchedule, evaluation: AsrptEvaluation | None = None) -> dict:
    """The CLI contract's schedule: per job start, servers, replicas per stage and
    server and, with an evaluation, finish and alpha (seconds)."""
    timing = {}
    if evaluation is not None:
        timing = {
            job_id: (finish, alpha)
            for job_id, finish, alpha in zip(
                evaluation.job_ids, evaluation.finish_s, evaluation.alpha_s, strict=True
            )
        }
    jobs = []
    for job_id, run in schedule.runs.items():
        row: dict[str, Any] = {"id": job_id, "start_s": run.start_s}
        if job_id in timing:
            row["finish_s"], row["alpha_s"] = timing[job_id]
        row["servers"] = list(run.servers)
        row["replicas"] = [list(r) for r in run.counts]
        jobs.append(row)
    out: dict[str, Any] = {"jobs": jobs}
    if schedule.info:
        out["info"] = dict(schedule.info)
    return out


def schedule_from_json(data: Any) -> AsrptSchedule:
    """Read a schedule back from :func:`schedule_to_json`'s output."""
    data = check_fields(data, "schedule", required=("jobs",), optional=("info",))
    if not isinstance(data["jobs"], list):
        raise InvalidInstanceError("schedule.jobs: expected a list")
    runs: dict[str, JobRun] = {}
    for i, raw in enumerate(data["jobs"]):
        row = check_fields(
            raw,
            f"schedule.jobs[{i}]",
            required=("id", "start_s", "servers", "replicas"),
            optional=("finish_s", "alpha_s"),
        )
        if not isinstance(row["id"], str) or row["id"] in runs:
            raise InvalidInstanceError(f"schedule.jobs[{i}].id: missing or duplicate id")
        servers = row["servers"]
        counts = row["replicas"]
        if not isinstance(servers, list) or not isinstance(counts, list):
            raise InvalidInstanceError(f"schedule.jobs[{i}]: servers and replicas must be lists")
        if not all(isinstance(r, list) for r in counts):
            raise InvalidInstanceError(f"schedule.jobs[{i}].replicas: expected a list of lists")
        runs[row["id"]] = JobRun(
            start_s=require_number(row["start_s"], f"schedule.jobs[{i}].start_s"),
            servers=tuple(
                require_int(m, f"schedule.jobs[{i}].servers", minimum=0) for m in servers
            ),
            counts=tuple(
                tuple(require_int(v, f"schedule.jobs[{i}].replicas", minimum=0) for v in r)
                for r in counts
            ),
        )
    info = data.get("info", {})
    return AsrptSchedule(runs, info if isinstance(info, Mapping) else {})
