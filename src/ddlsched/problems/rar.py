"""Family ``rar``: RAR-DDLS, offline makespan scheduling of ring-all-reduce jobs.

Paper: Yu, Ji, Rajan, Liu, "On Scheduling Ring-All-Reduce Learning Jobs in
Multi-Tenant GPU Clusters with Communication Contention", MobiHoc 2022
(``shared/papers/000_*.txt``); spec ``shared/specs/rar.md``.

This module holds the instance (servers ``O_s``, network, jobs), the timing
model of Section 4.1 (Eqs. 6-9), the schedule type, and the evaluator: the
one place that computes a ``rar`` schedule's makespan. It imports no solver.

Timing model, for one slot and the set of active jobs with placements
``y_js`` (GPUs of job ``j`` on server ``s``):

* ``n_j = #{s : y_js > 0}``; ``j`` is *split* on ``s`` when ``0 < y_js < G_j``
  (so a job is split exactly when ``n_j >= 2``).
* Eq. (6): ``p_j`` = max over the servers where ``j`` is split of the number
  of active jobs split on that server (``j`` included); ``p_j = 0`` when
  ``n_j = 1``.
* Eq. (7): ``k_j = xi1 * p_j``.
* ``B_j = b_i`` when ``n_j = 1``, else ``b_e / f(alpha, max(k_j, 1))`` with
  ``f(alpha, k) = k + alpha (k - 1)`` (the paper's linear example, Sec. 4.1).
* Eq. (8): ``tau_j = 2 m_j (G_j - 1) / (G_j B_j) + m_j (G_j - 1) / (G_j C)
  + xi2 n_j + df_j M_j + db_j`` (the first two terms vanish when ``G_j = 1``).
* Eq. (9): a job does ``floor(1 / tau_j)`` iterations per slot (rule
  ``floor``; ``fractional`` uses ``1 / tau_j``) and finishes in the first
  slot at whose end its cumulative iterations reach ``F_j``; ``T_j`` is that
  slot's index + 1.

Choices the spec leaves open (a careful reading, written down):

* ``floor(1 / tau)`` is taken with a relative tolerance of 1e-9, so that
  ``tau = 0.02`` gives 50 iterations per slot despite ``1/0.02`` rounding to
  ``49.999...`` in binary floating point; the ``fractional`` rule likewise
  treats cumulative progress within ``1e-9 F_j`` of ``F_j`` as complete.
* The dispatch evaluator orders the jobs of a GPU by (planned start, job
  position in the instance); the order is the same on every GPU, so dispatch
  cannot deadlock.
* GPU utilisation is ``sum_j G_j (T_j - a_j) / (N * makespan)``.

Numeric ranges (ours, issue 23): the bandwidths ``b_e``, ``b_i`` and the
reduction speed ``C`` lie in ``[1e-9, 1e9]`` (data per slot), ``alpha`` in
``[0, 1e6]``, a job's ``grad_size``, ``batch``, ``fwd_per_sample`` and
``bwd`` in ``[0, 1e9]``; so Eq. (8)'s ``tau_j`` is finite and positive at any
contention (``b_e = 5e-324`` divided by ``f(alpha, k)`` underflowed to 0: a
ZeroDivisionError in every heuristic). A job that cannot do one iteration
per slot under the ``floor`` rule is refused by each method, with one line.

An empty job list is refused with one line ("jobs: at least one job is
needed"; ours, issue 23): an offline makespan problem without a job has
nothing for a method to decide, and refusing it keeps every method and bound
free of the empty case.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ddlsched.errors import InfeasibleScheduleError, InvalidInstanceError
from ddlsched.jsonio import (
    JsonInstance,
    check_fields,
    check_header,
    require_int,
    require_number,
)

__all__ = [
    "MAX_GPUS",
    "PROGRESS_RULES",
    "Network",
    "RarAssignment",
    "RarEvaluation",
    "RarInstance",
    "RarJob",
    "RarSchedule",
    "bandwidth_degradation",
    "contention_levels",
    "evaluate",
    "execution_slots",
    "iteration_time",
    "iterations_per_slot",
    "max_contention",
    "max_servers",
    "min_servers",
    "schedule_from_json",
    "schedule_to_json",
]

PROGRESS_RULES = ("floor", "fractional")
#: The most GPUs an instance may have: schedules name concrete GPUs and every method keeps
#: per-GPU state (arrays, GPU lists), so a cluster of 10^9 GPUs is refused at load time.
MAX_GPUS = 1_000_000
_FLOOR_TOL = 1e-9
SCHEMA_VERSION = 1


# --------------------------------------------------------------------------- instance


#: Numeric ranges (ours, issue 23; module docstring, "Numeric ranges").
RATE_RANGE = (1e-9, 1e9)
MAX_ALPHA = 1e6
MAX_JOB_NUMBER = 1e9


def _in_range(value: float, where: str, bounds: tuple[float, float]) -> None:
    low, high = bounds
    if not low <= value <= high:
        raise InvalidInstanceError(
            f"{where}: {value!r} is outside [{low:g}, {high:g}], the range the timing model "
            "holds (ddlsched.problems.rar, 'Numeric ranges')"
        )


@dataclass(frozen=True)
class Network:
    """Cluster network and GPU parameters, all in slot units.

    ``b_e``/``b_i``: inter-/intra-server bandwidth (data per slot); ``C``: GPU
    reduction speed (data per slot); ``alpha >= 0``: contention degradation;
    ``xi1 in (0, 1]``: contention scale (Eq. 7); ``xi2 in (0, 1]``: overhead
    per server (Sec. 4.1, 2-3).
    """

    b_e: float
    b_i: float
    C: float
    alpha: float
    xi1: float
    xi2: float

    def __post_init__(self) -> None:
        for name in ("b_e", "b_i", "C"):
            require_number(getattr(self, name), f"network.{name}", minimum=0, strict=True)
            _in_range(getattr(self, name), f"network.{name}", RATE_RANGE)
        require_number(self.alpha, "network.alpha", minimum=0)
        _in_range(self.alpha, "network.alpha", (0.0, MAX_ALPHA))
        if self.b_i < self.b_e:
            # The model (and every bound) assumes that keeping a ring inside one
            # server is never slower than crossing servers (spec: b_i >> b_e).
            raise InvalidInstanceError(
                f"network.b_i: intra-server bandwidth {self.b_i!r} must be >= b_e {self.b_e!r}"
            )
        for name in ("xi1", "xi2"):
            value = require_number(getattr(self, name), f"network.{name}", minimum=0, strict=True)
            if value > 1:
                raise InvalidInstanceError(f"network.{name}: must be in (0, 1], got {value!r}")


@dataclass(frozen=True)
class RarJob:
    """One RAR training job (gang of ``gpus`` workers, ``iterations`` iterations).

    ``grad_size`` is ``m_j`` (data), ``batch`` is ``M_j`` (samples),
    ``fwd_per_sample`` is ``df_j`` and ``bwd`` is ``db_j`` (slots).
    """

    id: str
    gpus: int
    iterations: int
    grad_size: float
    batch: float
    fwd_per_sample: float
    bwd: float

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id:
            raise InvalidInstanceError(f"job id: expected a non-empty string, got {self.id!r}")
        where = f"job {self.id!r}"
        require_int(self.gpus, f"{where}.gpus", minimum=1)
        require_int(self.iterations, f"{where}.iterations", minimum=1)
        require_number(self.grad_size, f"{where}.grad_size", minimum=0)
        require_number(self.batch, f"{where}.batch", minimum=0, strict=True)
        require_number(self.fwd_per_sample, f"{where}.fwd_per_sample", minimum=0)
        require_number(self.bwd, f"{where}.bwd", minimum=0)
        for name in ("grad_size", "batch", "fwd_per_sample", "bwd"):
            _in_range(getattr(self, name), f"{where}.{name}", (0.0, MAX_JOB_NUMBER))


@dataclass(frozen=True)
class RarInstance(JsonInstance):
    """A RAR-DDLS instance: servers, network, jobs, horizon ``T`` and progress rule."""

    servers: tuple[int, ...]
    network: Network
    jobs: tuple[RarJob, ...]
    horizon: int
    progress: str = "floor"

    family: ClassVar[str] = "rar"

    def __post_init__(self) -> None:
        object.__setattr__(self, "servers", tuple(self.servers))
        object.__setattr__(self, "jobs", tuple(self.jobs))
        if not self.servers:
            raise InvalidInstanceError("servers: at least one server is needed")
        for s, cap in enumerate(self.servers):
            require_int(cap, f"servers[{s}]", minimum=1, maximum=MAX_GPUS)
        if sum(self.servers) > MAX_GPUS:
            raise InvalidInstanceError(
                f"servers: {sum(self.servers):,} GPUs in all, more than the {MAX_GPUS:,} "
                "ddlsched models (every method keeps per-GPU state)"
            )
        if not isinstance(self.network, Network):
            raise InvalidInstanceError("network: expected a Network")
        if not self.jobs:
            raise InvalidInstanceError("jobs: at least one job is needed")
        seen: set[str] = set()
        total = sum(self.servers)
        for job in self.jobs:
            if not isinstance(job, RarJob):
                raise InvalidInstanceError("jobs: expected RarJob entries")
            if job.id in seen:
                raise InvalidInstanceError(f"jobs: duplicate job id {job.id!r}")
            seen.add(job.id)
            if job.gpus > total:
                raise InvalidInstanceError(
                    f"job {job.id!r}.gpus: requests {job.gpus} GPUs but the cluster has {total}"
                )
        require_int(self.horizon, "horizon", minimum=1)
        if self.progress not in PROGRESS_RULES:
            raise InvalidInstanceError(
                f"progress: must be one of {', '.join(PROGRESS_RULES)}, got {self.progress!r}"
            )

    # -- derived quantities -------------------------------------------------

    @property
    def num_servers(self) -> int:
        return len(self.servers)

    @property
    def num_gpus(self) -> int:
        return sum(self.servers)

    @property
    def gpu_ids(self) -> list[tuple[int, int]]:
        """All GPU ids ``(server, gpu)`` in server order."""
        return [(s, g) for s, cap in enumerate(self.servers) for g in range(cap)]

    def job_index(self) -> dict[str, int]:
        return {job.id: i for i, job in enumerate(self.jobs)}

    # -- JSON -------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        net = self.network
        return {
            "family": "rar",
            "schema_version": SCHEMA_VERSION,
            "servers": list(self.servers),
            "network": {
                "b_e": net.b_e,
                "b_i": net.b_i,
                "C": net.C,
                "alpha": net.alpha,
                "xi1": net.xi1,
                "xi2": net.xi2,
            },
            "jobs": [
                {
                    "id": j.id,
                    "gpus": j.gpus,
                    "iterations": j.iterations,
                    "grad_size": j.grad_size,
                    "batch": j.batch,
                    "fwd_per_sample": j.fwd_per_sample,
                    "bwd": j.bwd,
                }
                for j in self.jobs
            ],
            "horizon": self.horizon,
            "progress": self.progress,
        }

    @classmethod
    def from_dict(cls, data: Any) -> RarInstance:
        """Build an instance from the spec's JSON format; unknown fields are an error."""
        data = check_fields(
            data,
            "rar instance",
            required=("family", "schema_version", "servers", "network", "jobs", "horizon"),
            optional=("progress",),
        )
        check_header(data, "rar", SCHEMA_VERSION)
        if not isinstance(data["servers"], list):
            raise InvalidInstanceError("servers: expected a list of GPU counts")
        net = check_fields(
            data["network"], "network", required=("b_e", "b_i", "C", "alpha", "xi1", "xi2")
        )
        network = Network(**{k: require_number(net[k], f"network.{k}") for k in net})
        if not isinstance(data["jobs"], list):
            raise InvalidInstanceError("jobs: expected a list of job objects")
        jobs = []
        for i, raw in enumerate(data["jobs"]):
            fields = check_fields(
                raw,
                f"jobs[{i}]",
                required=(
                    "id",
                    "gpus",
                    "iterations",
                    "grad_size",
                    "batch",
                    "fwd_per_sample",
                    "bwd",
                ),
            )
            jobs.append(RarJob(**fields))
        return cls(
            servers=tuple(data["servers"]),
            network=network,
            jobs=tuple(jobs),
            horizon=data["horizon"],
            progress=data.get("progress", "floor"),
        )


# --------------------------------------------------------------------------- timing model


def bandwidth_degradation(alpha: float, k: float) -> float:
    """``f(alpha, k) = k + alpha (k - 1)``: bandwidth-sharing degradation (Sec. 4.1)."""
    return k + alpha * (k - 1)


def iteration_time(job: RarJob, network: Network, num_servers: int, contention: int) -> float:
    """Per-iteration time ``tau_j`` in slots (Eq. 8).

    ``num_servers`` is ``n_j``; ``contention`` is ``p_j`` of Eq. (6) (ignored
    when ``n_j = 1``, where the ring stays inside one server at ``b_i``).
    """
    if num_servers < 1:
        raise ValueError("num_servers must be >= 1")
    gpus = job.gpus
    compute = network.xi2 * num_servers + job.fwd_per_sample * job.batch + job.bwd
    if gpus == 1:
        return compute
    if num_servers == 1:
        bandwidth = network.b_i
    else:
        k = network.xi1 * contention  # Eq. (7)
        bandwidth = network.b_e / bandwidth_degradation(network.alpha, max(k, 1.0))
    share = job.grad_size * (gpus - 1) / gpus
    return 2.0 * share / bandwidth + share / network.C + compute


def iterations_per_slot(tau: float, rule: str) -> float:
    """Iterations done in one slot: ``floor(1/tau)`` (Eq. 9) or ``1/tau``."""
    if tau <= 0:
        raise ValueError("tau must be > 0")
    rate = 1.0 / tau
    if rule == "floor":
        return float(math.floor(rate * (1.0 + _FLOOR_TOL)))
    return rate


def execution_slots(job: RarJob, network: Network, num_servers: int, contention: int, rule: str):
    """Slots a job needs under constant conditions (``math.inf`` if it never progresses)."""
    rate = iterations_per_slot(iteration_time(job, network, num_servers, contention), rule)
    if rate <= 0:
        return math.inf
    return _slots_needed(job.iterations, rate)


def _slots_needed(remaining: float, rate: float, total: float | None = None) -> int:
    """Slots until ``remaining`` iterations are done at ``rate`` per slot.

    Done means within ``1e-9 * total`` iterations of the end (``total``: the
    job's ``F_j``, default ``remaining``), the evaluator's completion rule.
    """
    slack = _FLOOR_TOL * (remaining if total is None else total)
    return max(1, math.ceil((remaining - slack) / rate))


def min_servers(job: RarJob, servers: Sequence[int]) -> int:
    """Fewest servers that can hold the job's gang (largest servers first)."""
    total = 0
    for count, cap in enumerate(sorted(servers, reverse=True), start=1):
        total += cap
        if total >= job.gpus:
            return count
    raise InvalidInstanceError(f"job {job.id!r} does not fit in the cluster")


def max_servers(job: RarJob, servers: Sequence[int]) -> int:
    """Most servers a job can span (one GPU per server at least)."""
    return min(job.gpus, len(servers))


def max_contention(instance: RarInstance) -> int:
    """Largest possible ``p_j``: jobs split on one server, at most ``O_s`` and the multi-GPU jobs."""
    multi = sum(1 for job in instance.jobs if job.gpus >= 2)
    return max(1, min(max(instance.servers), multi))


def contention_levels(placements: Mapping[str, Mapping[int, int]]) -> dict[str, int]:
    """``p_j`` of Eq. (6) for a set of simultaneously active jobs.

    ``placements`` maps each active job to ``{server: GPUs on that server}``
    (servers with 0 GPUs omitted).
    """
    split_count: dict[int, int] = {}
    for per_server in placements.values():
        if len(per_server) >= 2:
            for s in per_server:
                split_count[s] = split_count.get(s, 0) + 1
    levels = {}
    for job, per_server in placements.items():
        if len(per_server) >= 2:
            levels[job] = max(split_count[s] for s in per_server)
        else:
            levels[job] = 0
    return levels


# --------------------------------------------------------------------------- schedule


@dataclass(frozen=True)
class RarAssignment:
    """GPUs ``(server, gpu)`` of one job and its planned start slot."""

    gpus: tuple[tuple[int, int], ...]
    start: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "gpus", tuple((int(s), int(g)) for s, g in self.gpus))

    def per_server(self) -> dict[int, int]:
        counts: dict[int, int] = {}
        for s, _ in self.gpus:
            counts[s] = counts.get(s, 0) + 1
        return counts


@dataclass(frozen=True)
class RarSchedule:
    """A ``rar`` schedule: for every job id, its GPUs and planned start."""

    assignments: Mapping[str, RarAssignment]

    def __getitem__(self, job_id: str) -> RarAssignment:
        return self.assignments[job_id]


@dataclass(frozen=True)
class RarEvaluation:
    """What the evaluator computed: per-job start/finish, makespan and averages."""

    start: dict[str, int]
    finish: dict[str, int]
    makespan: int
    average_completion: float
    utilisation: float
    per_slot_rates: dict[str, list[tuple[int, int, float]]] = field(
        default_factory=dict, repr=False
    )


def schedule_to_json(schedule: RarSchedule, evaluation: RarEvaluation | None = None) -> dict:
    """Render a schedule as the CLI contract's JSON (per job: gpus, start, finish)."""
    out = {}
    for job_id, assignment in schedule.assignments.items():
        entry: dict[str, Any] = {
            "gpus": [list(g) for g in assignment.gpus],
            "planned_start": assignment.start,
        }
        if evaluation is not None:
            entry["start"] = evaluation.start[job_id]
            entry["finish"] = evaluation.finish[job_id]
        else:
            entry["start"] = assignment.start
        out[job_id] = entry
    return out


def schedule_from_json(data: Any) -> RarSchedule:
    """Read a schedule back from :func:`schedule_to_json`'s output."""
    if not isinstance(data, Mapping):
        raise InvalidInstanceError("schedule: expected an object keyed by job id")
    assignments = {}
    for job_id, entry in data.items():
        check_fields(
            entry, f"schedule[{job_id!r}]", ("gpus",), ("start", "planned_start", "finish")
        )
        start = entry.get("planned_start", entry.get("start"))
        assignments[job_id] = RarAssignment(
            gpus=tuple(tuple(g) for g in entry["gpus"]),
            start=require_int(start, "start", minimum=0),
        )
    return RarSchedule(assignments)


# --------------------------------------------------------------------------- evaluator


def _validate_schedule(instance: RarInstance, schedule: RarSchedule) -> None:
    ids = instance.job_index()
    unknown = sorted(set(schedule.assignments) - set(ids))
    if unknown:
        raise InfeasibleScheduleError(f"schedule names unknown job(s) {unknown}")
    missing = [job.id for job in instance.jobs if job.id not in schedule.assignments]
    if missing:
        raise InfeasibleScheduleError(f"schedule leaves job(s) unscheduled: {missing}")
    for job in instance.jobs:
        assignment = schedule.assignments[job.id]
        if len(assignment.gpus) != job.gpus:
            raise InfeasibleScheduleError(
                f"job {job.id!r} needs {job.gpus} GPUs (gang) but gets {len(assignment.gpus)}"
            )
        if len(set(assignment.gpus)) != len(assignment.gpus):
            raise InfeasibleScheduleError(f"job {job.id!r} lists a GPU twice")
        for s, g in assignment.gpus:
            if not (0 <= s < instance.num_servers and 0 <= g < instance.servers[s]):
                raise InfeasibleScheduleError(f"job {job.id!r}: GPU ({s}, {g}) does not exist")
        if isinstance(assignment.start, bool) or not isinstance(assignment.start, int):
            raise InfeasibleScheduleError(f"job {job.id!r}: start must be an integer slot")
        if assignment.start < 0:
            raise InfeasibleScheduleError(f"job {job.id!r}: negative start {assignment.start}")


def evaluate(
    instance: RarInstance, schedule: RarSchedule, *, record_rates: bool = False
) -> RarEvaluation:
    """Execute ``schedule`` with dispatch semantics and return its makespan.

    Each GPU runs its jobs in order of planned start; a job starts at the
    first slot ``>=`` its planned start at which all its GPUs have finished
    their earlier jobs. Contention is recomputed whenever the set of active
    jobs changes (it is constant in between, so the simulation jumps from
    event to event; this is exactly the slot-by-slot rule of Eq. 9).

    Raises :class:`InfeasibleScheduleError` for a wrong GPU count, a GPU that
    does not exist, a job that never progresses (``tau > 1`` slot under the
    ``floor`` rule), or a finish after the horizon (then with the details
    ``failure="horizon_overrun"`` and ``makespan_beyond_horizon``, the
    makespan the schedule has without the horizon).
    """
    _validate_schedule(instance, schedule)
    jobs = instance.jobs
    net, rule = instance.network, instance.progress
    position = instance.job_index()
    order = sorted(jobs, key=lambda j: (schedule[j.id].start, position[j.id]))
    queues: dict[tuple[int, int], list[str]] = {}
    for job in order:
        for gpu in schedule[job.id].gpus:
            queues.setdefault(gpu, []).append(job.id)
    head = dict.fromkeys(queues, 0)  # index of the next job in each GPU queue
    placement = {job.id: schedule[job.id].per_server() for job in jobs}
    by_id = {job.id: job for job in jobs}

    pending = [job.id for job in order]
    active: dict[str, float] = {}  # job -> remaining iterations
    start: dict[str, int] = {}
    finish: dict[str, int] = {}
    rates_log: dict[str, list[tuple[int, int, float]]] = {}
    now = 0

    def ready(job_id: str) -> bool:
        return all(queues[g][head[g]] == job_id for g in schedule[job_id].gpus)

    while pending or active:
        # Start every job whose GPUs are free and whose planned start has come.
        still = []
        for job_id in pending:
            if schedule[job_id].start <= now and ready(job_id) and job_id not in active:
                active[job_id] = float(by_id[job_id].iterations)
                start[job_id] = now
            else:
                still.append(job_id)
        pending = still
        # Jobs at the head of all their queues but not yet due: next start event.
        next_start = min((schedule[j].start for j in pending if ready(j)), default=math.inf)
        if not active:
            if next_start is math.inf:  # pragma: no cover - excluded by the global order
                raise InfeasibleScheduleError("dispatch deadlock")
            now = int(next_start)
            continue
        levels = contention_levels({j: placement[j] for j in active})
        rates = {}
        for job_id in active:
            job = by_id[job_id]
            tau = iteration_time(job, net, len(placement[job_id]), levels[job_id])
            rate = iterations_per_slot(tau, rule)
            if rate <= 0:
                raise InfeasibleScheduleError(
                    f"job {job_id!r} never progresses: tau = {tau:.6g} slots > 1 under the "
                    "'floor' progress rule"
                )
            rates[job_id] = rate
        step = min(_slots_needed(active[j], rates[j], by_id[j].iterations) for j in active)
        if next_start is not math.inf:
            step = min(step, int(next_start) - now)
        if record_rates:
            for job_id, rate in rates.items():
                rates_log.setdefault(job_id, []).append((now, now + step, rate))
        now += step
        done = []
        for job_id in active:
            active[job_id] -= step * rates[job_id]
            if active[job_id] <= by_id[job_id].iterations * _FLOOR_TOL:
                done.append(job_id)
        for job_id in done:
            del active[job_id]
            finish[job_id] = now
            for g in schedule[job_id].gpus:
                head[g] += 1

    makespan = max(finish.values())
    if makespan > instance.horizon:
        late = max(finish, key=lambda j: (finish[j], -position[j]))
        raise InfeasibleScheduleError(
            f"schedule overruns the horizon: job {late!r} finishes at slot {finish[late]} "
            f"> horizon {instance.horizon}",
            failure="horizon_overrun",
            makespan_beyond_horizon=makespan,
        )
    busy = sum(by_id[j].gpus * (finish[j] - start[j]) for j in finish)
    return RarEvaluation(
        start={job.id: start[job.id] for job in jobs},
        finish={job.id: finish[job.id] for job in jobs},
        makespan=makespan,
        average_completion=sum(finish.values()) / len(finish),
        utilisation=busy / (instance.num_gpus * makespan),
        per_slot_rates=rates_log,
    )


def instance_from_parts(
    servers: Iterable[int],
    network: Mapping[str, float],
    jobs: Iterable[Mapping[str, Any]],
    horizon: int,
    progress: str = "floor",
) -> RarInstance:
    """Convenience constructor from plain dicts (tests, notebooks)."""
    return RarInstance(
        servers=tuple(servers),
        network=Network(**network),
        jobs=tuple(RarJob(**job) for job in jobs),
        horizon=horizon,
        progress=progress,
    )
