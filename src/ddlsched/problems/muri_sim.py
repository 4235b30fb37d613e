"""Family ``muri_sim``: a trace run of a Muri-family scheduler, its schedule and evaluator.

Paper: Zhao et al., SIGCOMM 2022, Sec. 6 (trace-driven simulation); spec
``docs/families/muri_sim.md`` ("Scheduler and simulator"). The simulator itself
is :mod:`ddlsched.sim.muri`; this module holds the data it works on and
produces (no simulation logic, no solver):

Instance: :class:`TraceRun`
    A trace name (``trace1`` .. ``trace4``, ``trace1_pr`` .., ``philly``,
    ``itp:NAME``, ``tiresias`` or a CSV path, as for ``ddlsched simulate
    muri --trace``), the simulator mode (``reference``: the authors'
    simulator; ``paper``: the paper's prose), the seed of the profile
    assignment (Philly/ITP traces), an optional job limit (the first N
    jobs) and simulator knob overrides. The trace itself is read from the
    data directory when a method runs (:func:`ddlsched.datadir.data_file`,
    ``docs/data.md``), never copied. File format::

        {"family": "muri_sim", "schema_version": 1, "trace": "trace2",
         "mode": "reference", "seed": 0, "limit": null, "knobs": {}}

Configuration: :class:`SimConfig`
    Every knob of the simulator; ``SimConfig.preset("reference")`` is the
    model of the authors' simulator, ``SimConfig.preset("paper")`` the prose.

Schedule: :class:`TraceSchedule`
    What a simulation did, per job in trace file order: submit time, first
    start, end, iterations to run and iterations run, the solo iteration
    time (the trace's, with the simulator's slowdown); plus what only the run
    itself can measure (time-averaged queue length and GPU utilisation, the
    largest number of GPUs in use, the event count).

Evaluator: :func:`evaluate` (the one place that computes the objective)
    Checks the schedule (every job ran all its iterations, up to the
    simulators' event-merge windows, ``submit <= start <= end``, finite
    times) and computes the metrics
    (:class:`SimMetrics`): average JCT (the family objective, minimised),
    makespan (last end from ``t = 0``), p99 JCT (the JCTs sorted ascending at
    index ``int(0.99 n)``, as the original's scripts do). JCTs are summed in
    submit order (stable), the simulator's job order, so the numbers are the
    simulator's to the last bit. The queue length and utilisation are the
    simulator's measurements (they need the whole run history), checked for
    range and passed through.

A trace without jobs is refused with one line ("no data rows", by the trace
reader, at ``instance check`` as at ``solve``; ours): the average
JCT of no job is undefined.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field, replace
from typing import Any, ClassVar

import numpy as np

from ddlsched.cli_types import MAX_SEED
from ddlsched.errors import (
    DdlschedError,
    InfeasibleScheduleError,
    InvalidInstanceError,
    UnknownMethodError,
)
from ddlsched.fieldspec import AnyOf, Const, Field, Int, Null, Obj, Str, dataclass_spec
from ddlsched.jsonio import JsonInstance, check_fields, check_header

__all__ = [
    "MODES",
    "SCHEMA_VERSION",
    "SimConfig",
    "SimMetrics",
    "TraceRun",
    "TraceSchedule",
    "evaluate",
    "schedule_from_json",
    "schedule_to_json",
]

SCHEMA_VERSION = 1
MODES = ("reference", "paper")
MAX_ROUND_S = 1e9  # a round longer than ~30 years is a unit error (and overflows event times)
#: Largest simulated cluster: the simulators keep state per node (100,000 nodes: ~2 s on a
#: 20-job trace; 10^8 ran for minutes) and per GPU of a node.
MAX_NODES = 100_000
MAX_GPUS_PER_NODE = 1024
#: Event-merge windows of the simulators: completion groups join ends within 1e-9
#: relative of the event time, and arrivals/completions (Muri) or completions (AntMan)
#: within 1e-4 s. A job may end that much early; the evaluator accepts a left-over of
#: twice that, in solo seconds (a lower bound on the time the job would still need).
MERGE_RTOL = 1e-9
MERGE_ABS_S = 1e-4


# --------------------------------------------------------------------------- configuration


def _finite_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _finite_tuple(name: str, value: object, length: int) -> tuple[float, ...]:
    """A knob that is ``length`` finite numbers, or a one-line error naming it."""
    if not isinstance(value, (list, tuple)) or len(value) != length:
        raise DdlschedError(f"{name} must be a list of {length} numbers, got {value!r}")
    if not all(_finite_number(v) for v in value):
        raise DdlschedError(f"{name} must hold finite numbers, got {value!r}")
    return tuple(float(v) for v in value)


@dataclass(frozen=True)
class SimConfig:
    """Every knob of the simulator; the defaults are the spec's ``reference`` model.

    ``num_nodes``: nodes of the simulated cluster (at most 100,000).
    ``gpus_per_node``: GPUs per node, a power of two (at most 1,024).
    ``solo_slowdown``: factor on the trace's iteration time (1.015).
    ``start_overhead``: charge the start overhead at every event.
    ``interference``: period factors of groups of 2, 3, 4 jobs.
    ``period_model``: ``staged`` (the original's recurrence over 4 slots) or
    ``eq3`` (Eq. 3 at the best offsets of the 3 resources).
    ``weight_model``: ``used_ratio`` (summed resource times / (4 x grouped
    period)) or ``eq4`` (gamma of Eq. 4).
    ``packing_num``: candidates admitted per fitting job and largest group.
    ``autopack``: split a group slower than its members run alone.
    ``blossom``: group by matching (``False``: consecutive candidates, the
    paper's "Muri-L without Blossom").
    ``matching``: ``reference`` (the original's own weighted Blossom on the
    candidate nodes, its tie-breaking included) or ``types`` (a
    maximum-weight b-matching over profile types, memoised by type counts;
    equal-type nodes paired in list order; much faster).
    ``tiresias_thresholds``: queue limits in GPU-seconds.
    ``themis_isolated_units``: ``reference`` (the original's mixed units) or ``seconds``.
    ``antman_util_cap``: GPUs below this utilisation take opportunistic jobs.
    ``round_s``: ``None`` (event-driven) or the round length: jobs are then
    admitted only at round boundaries (multiples of ``round_s``; their JCT
    still counts from their submit time); completions still trigger
    re-planning, so freed GPUs are reused at once.
    """

    mode: str = "reference"
    num_nodes: int = 8
    gpus_per_node: int = 8
    solo_slowdown: float = 1.015
    start_overhead: bool = True
    interference: tuple[float, float, float] = (1.33 / 1.015, 1.5 / 1.015, 1.37 / 1.015)
    period_model: str = "staged"
    weight_model: str = "used_ratio"
    packing_num: int = 4
    autopack: bool = False
    blossom: bool = True
    matching: str = "reference"
    tiresias_thresholds: tuple[float, float] = (3250.0, 7200.0)
    themis_isolated_units: str = "reference"
    antman_util_cap: float = 0.8
    round_s: float | None = None

    def __post_init__(self) -> None:
        if self.mode not in ("reference", "paper", "custom"):
            raise DdlschedError(f"mode must be reference or paper, got {self.mode!r}")
        for name in ("num_nodes", "gpus_per_node", "packing_num"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise DdlschedError(f"{name} must be a positive integer, got {v!r}")
        for name, most in (("num_nodes", MAX_NODES), ("gpus_per_node", MAX_GPUS_PER_NODE)):
            if getattr(self, name) > most:
                raise DdlschedError(f"{name} must be at most {most}, got {getattr(self, name)}")
        if self.gpus_per_node & (self.gpus_per_node - 1):
            raise DdlschedError("gpus_per_node must be a power of two")
        if self.period_model not in ("staged", "eq3"):
            raise DdlschedError(f"period_model must be staged or eq3, got {self.period_model!r}")
        if self.weight_model not in ("used_ratio", "eq4"):
            raise DdlschedError(
                f"weight_model must be used_ratio or eq4, got {self.weight_model!r}"
            )
        if self.period_model == "eq3" and self.packing_num > 3:
            raise DdlschedError(
                "period_model eq3 interleaves at most 3 jobs (3 resources): packing_num <= 3"
            )
        if self.matching not in ("reference", "types"):
            raise DdlschedError(f"matching must be reference or types, got {self.matching!r}")
        if self.themis_isolated_units not in ("reference", "seconds"):
            raise DdlschedError("themis_isolated_units must be reference or seconds")
        if self.period_model == "staged" and self.packing_num > 4:
            raise DdlschedError(
                "period_model staged has interference factors for groups of 2-4 jobs: "
                "packing_num <= 4"
            )
        object.__setattr__(
            self, "interference", _finite_tuple("interference", self.interference, 3)
        )
        if min(self.interference) <= 0:
            raise DdlschedError("interference must be three positive factors (2, 3, 4 jobs)")
        object.__setattr__(
            self,
            "tiresias_thresholds",
            _finite_tuple("tiresias_thresholds", self.tiresias_thresholds, 2),
        )
        if not _finite_number(self.solo_slowdown) or not self.solo_slowdown > 0:
            raise DdlschedError(
                f"solo_slowdown must be a finite number > 0, got {self.solo_slowdown!r}"
            )
        if not _finite_number(self.antman_util_cap) or not 0 < self.antman_util_cap <= 1:
            raise DdlschedError(f"antman_util_cap must be in (0, 1], got {self.antman_util_cap!r}")
        if self.round_s is not None and not (
            _finite_number(self.round_s) and 0 < self.round_s <= MAX_ROUND_S
        ):
            raise DdlschedError(
                f"round_s must be a number of seconds in (0, {MAX_ROUND_S:.0e}] or null, "
                f"got {self.round_s!r}"
            )
        for name in ("start_overhead", "autopack", "blossom"):
            if not isinstance(getattr(self, name), bool):
                raise DdlschedError(f"{name} must be true or false, got {getattr(self, name)!r}")

    @classmethod
    def preset(cls, mode: str = "reference", **overrides: Any) -> SimConfig:
        """``reference`` (the authors' simulator) or ``paper`` (the prose), plus overrides."""
        if mode == "reference":
            base = cls()
        elif mode == "paper":
            base = cls(
                mode="paper",
                interference=(1.0, 1.0, 1.0),
                period_model="eq3",
                weight_model="eq4",
                packing_num=3,
                matching="types",
                themis_isolated_units="seconds",
                round_s=360.0,
            )
        else:
            raise UnknownMethodError(f"unknown simulator mode {mode!r} (choose reference or paper)")
        known = set(cls.__dataclass_fields__)
        unknown = sorted(set(overrides) - known)
        if unknown:
            raise DdlschedError(
                f"unknown simulator knob(s) {', '.join(map(repr, unknown))} "
                f"(known: {', '.join(sorted(known))})"
            )
        if overrides:
            base = replace(
                base, **overrides, mode=base.mode if "mode" not in overrides else overrides["mode"]
            )
        return base

    @property
    def num_gpus(self) -> int:
        return self.num_nodes * self.gpus_per_node


# --------------------------------------------------------------------------- instance


#: The JSON format of a ``muri_sim`` instance (``ddlsched instance schema muri_sim``); the
#: knobs are :class:`SimConfig`'s fields (but ``mode``), derived from the dataclass.
FIELD_SPEC = Obj(
    {
        "family": Field(Const("muri_sim"), "family", "the problem family of the file"),
        "schema_version": Field(Const(SCHEMA_VERSION), "schema version", "format version"),
        "trace": Field(
            Str(non_empty=True),
            "trace",
            "trace1..trace4, trace1_pr.., philly, itp:NAME, tiresias, or a CSV path "
            "(columns: docs/instances.md)",
        ),
        "mode": Field(Str(choices=MODES), "mode", "simulator model", False, "reference"),
        "seed": Field(Int(0, MAX_SEED), "seed", "profile assignment seed", False, 0),
        "limit": Field(AnyOf((Int(1), Null())), "limit", "first N jobs only", required=False),
        "knobs": Field(
            AnyOf((dataclass_spec(SimConfig, exclude=("mode",)), Null())),
            "knobs",
            "simulator knob overrides",
            required=False,
        ),
    }
)


@dataclass(frozen=True)
class TraceRun(JsonInstance):
    """One trace under one simulator configuration (see the module docstring)."""

    trace: str
    mode: str = "reference"
    seed: int = 0
    limit: int | None = None
    knobs_json: str = "{}"  # canonical JSON of the knob overrides (hashable)

    family: ClassVar[str] = "muri_sim"
    FIELD_SPEC: ClassVar[Obj] = FIELD_SPEC
    _config: Any = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.trace, str) or not self.trace:
            raise InvalidInstanceError(
                f"muri_sim: trace must be a non-empty string, got {self.trace!r}"
            )
        if self.mode not in MODES:
            raise InvalidInstanceError(
                f"muri_sim: unknown simulator mode {self.mode!r} (choose reference or paper)"
            )
        if (
            isinstance(self.seed, bool)
            or not isinstance(self.seed, int)
            or not 0 <= self.seed <= MAX_SEED
        ):
            raise InvalidInstanceError(
                f"muri_sim: seed must be an integer in 0..{MAX_SEED}, got {self.seed!r}"
            )
        if self.limit is not None and (
            isinstance(self.limit, bool) or not isinstance(self.limit, int) or self.limit < 1
        ):
            raise InvalidInstanceError(
                f"muri_sim: limit must be a positive integer or null, got {self.limit!r}"
            )
        knobs = json.loads(self.knobs_json)
        if not isinstance(knobs, dict):
            raise InvalidInstanceError(f"muri_sim: knobs must be an object, got {knobs!r}")
        if "mode" in knobs:
            raise InvalidInstanceError("muri_sim: give the mode as 'mode', not as a knob")
        try:  # validate the knobs now: a bad one is an instance error, not a task error
            config = SimConfig.preset(self.mode, **knobs)
        except (DdlschedError, TypeError, ValueError) as exc:
            raise InvalidInstanceError(f"muri_sim: {exc}") from None
        object.__setattr__(self, "_config", config)

    @property
    def knobs(self) -> dict[str, Any]:
        return json.loads(self.knobs_json)

    @property
    def config(self) -> SimConfig:
        """The simulator configuration of this run."""
        return self._config

    @classmethod
    def create(
        cls,
        trace: str,
        mode: str = "reference",
        seed: int = 0,
        limit: int | None = None,
        knobs: dict[str, Any] | None = None,
    ) -> TraceRun:
        if knobs is not None and not isinstance(knobs, dict):
            raise InvalidInstanceError(f"muri_sim: knobs must be an object, got {knobs!r}")
        return cls(trace, mode, seed, limit, json.dumps(knobs or {}, sort_keys=True))

    def to_dict(self) -> dict[str, Any]:
        return {
            "family": "muri_sim",
            "schema_version": SCHEMA_VERSION,
            "trace": self.trace,
            "mode": self.mode,
            "seed": self.seed,
            "limit": self.limit,
            "knobs": self.knobs,
        }

    @classmethod
    def from_dict(cls, data: Any) -> TraceRun:
        check_fields(data, "muri_sim", *FIELD_SPEC.field_names)
        check_header(data, "muri_sim", SCHEMA_VERSION)
        return cls.create(
            trace=data["trace"],
            mode=data.get("mode", "reference"),
            seed=data.get("seed", 0),
            limit=data.get("limit"),
            knobs={} if data.get("knobs") is None else data["knobs"],
        )


# --------------------------------------------------------------------------- schedule


@dataclass(frozen=True, eq=False)
class TraceSchedule:
    """What a simulation did (see the module docstring); arrays in trace file order."""

    trace: str
    policy: str
    mode: str
    submit_s: np.ndarray
    start_s: np.ndarray
    end_s: np.ndarray
    iterations: np.ndarray
    iterations_done: np.ndarray
    solo_iteration_s: np.ndarray
    average_queue_length: float
    gpu_utilisation: float
    max_gpus_in_use: int
    events: int
    runtime_s: float
    config: dict[str, Any] = field(default_factory=dict)


_JOB_COLUMNS = (
    "submit_s",
    "start_s",
    "end_s",
    "iterations",
    "iterations_done",
    "solo_iteration_s",
)
_MEASURED = ("average_queue_length", "gpu_utilisation", "max_gpus_in_use", "events", "runtime_s")


def schedule_to_json(schedule: TraceSchedule, evaluation: SimMetrics | None = None) -> Any:
    """Per-job columns, the simulator's measurements and (when evaluated) the metrics."""
    out: dict[str, Any] = {
        "trace": schedule.trace,
        "policy": schedule.policy,
        "mode": schedule.mode,
    }
    out.update({name: getattr(schedule, name).tolist() for name in _JOB_COLUMNS})
    out["measured"] = {name: getattr(schedule, name) for name in _MEASURED}
    out["config"] = schedule.config
    if evaluation is not None:
        out["metrics"] = evaluation.summary()
    return out


def schedule_from_json(data: Any) -> TraceSchedule:
    """Read back :func:`schedule_to_json`'s output."""
    data = check_fields(
        data,
        "schedule",
        ("trace", "policy", "mode", *_JOB_COLUMNS, "measured"),
        ("config", "metrics"),
    )
    measured = check_fields(data["measured"], "schedule.measured", _MEASURED)
    try:
        columns = {name: np.asarray(data[name], dtype=float) for name in _JOB_COLUMNS}
    except (TypeError, ValueError):
        raise InvalidInstanceError("schedule: job columns must be lists of numbers") from None
    return TraceSchedule(
        trace=str(data["trace"]),
        policy=str(data["policy"]),
        mode=str(data["mode"]),
        **columns,
        average_queue_length=float(measured["average_queue_length"]),
        gpu_utilisation=float(measured["gpu_utilisation"]),
        max_gpus_in_use=int(measured["max_gpus_in_use"]),
        events=int(measured["events"]),
        runtime_s=float(measured["runtime_s"]),
        config=dict(data.get("config") or {}),
    )


@dataclass
class SimMetrics:
    """What a simulation produced; ``submit_s``/``end_s`` are per job in trace file order."""

    trace: str
    policy: str
    mode: str
    num_jobs: int
    average_jct_s: float
    makespan_s: float
    p99_jct_s: float
    average_queue_length: float
    gpu_utilisation: float
    events: int
    runtime_s: float
    submit_s: np.ndarray = field(repr=False)
    end_s: np.ndarray = field(repr=False)
    iterations_done: np.ndarray = field(repr=False)
    max_gpus_in_use: int = 0
    config: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def jct_s(self) -> np.ndarray:
        return self.end_s - self.submit_s

    def summary(self) -> dict[str, Any]:
        return {
            "jobs": self.num_jobs,
            "average_jct_s": self.average_jct_s,
            "makespan_s": self.makespan_s,
            "p99_jct_s": self.p99_jct_s,
            "average_queue_length": self.average_queue_length,
            "gpu_utilisation": self.gpu_utilisation,
            "events": self.events,
            "runtime_s": self.runtime_s,
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "trace": self.trace,
            "policy": self.policy,
            "mode": self.mode,
            **self.summary(),
            "config": self.config,
        }


def _check(schedule: TraceSchedule) -> int:
    n = len(schedule.submit_s)
    if n == 0:
        raise InfeasibleScheduleError("the simulation scheduled no job")
    for name in _JOB_COLUMNS:
        column = getattr(schedule, name)
        if column.shape != (n,):
            raise InfeasibleScheduleError(
                f"schedule column {name} has shape {column.shape}, not ({n},)"
            )
        if not np.all(np.isfinite(column)):
            raise InfeasibleScheduleError(f"schedule column {name} holds a non-finite value")
    left_s = (schedule.iterations - schedule.iterations_done) * schedule.solo_iteration_s
    slack_s = 2 * (MERGE_RTOL * np.abs(schedule.end_s) + MERGE_ABS_S)
    short = left_s > slack_s
    if short.any():
        j = int(np.flatnonzero(short)[0])
        raise InfeasibleScheduleError(
            f"job {j} (file order) ran {schedule.iterations_done[j]!r} of its "
            f"{schedule.iterations[j]!r} iterations ({left_s[j]:.3g} s of solo work left at its "
            f"end, beyond the event-merge slack {slack_s[j]:.3g} s): {int(short.sum())} job(s) "
            "unfinished"
        )
    for earlier, later in (("submit_s", "start_s"), ("start_s", "end_s")):
        bad = getattr(schedule, earlier) > getattr(schedule, later)
        if bad.any():
            j = int(np.flatnonzero(bad)[0])
            raise InfeasibleScheduleError(
                f"job {j} (file order): {earlier} {getattr(schedule, earlier)[j]!r} > "
                f"{later} {getattr(schedule, later)[j]!r}"
            )
    if not 0 <= schedule.gpu_utilisation <= 1 + 1e-9 or schedule.average_queue_length < 0:
        raise InfeasibleScheduleError(
            f"measured utilisation {schedule.gpu_utilisation!r} or queue length "
            f"{schedule.average_queue_length!r} out of range"
        )
    return n


def evaluate(run: TraceRun | None, schedule: TraceSchedule) -> SimMetrics:
    """Check a simulated schedule and compute its metrics (the one place that does).

    ``run`` is the family instance (unused beyond the signature: the schedule
    carries the trace's submit times and iterations).
    """
    n = _check(schedule)
    order = np.argsort(schedule.submit_s, kind="stable")  # the simulator's job order
    jct = (schedule.end_s - schedule.submit_s)[order]
    return SimMetrics(
        trace=schedule.trace,
        policy=schedule.policy,
        mode=schedule.mode,
        num_jobs=n,
        average_jct_s=float(np.sum(jct) / n),
        makespan_s=float(schedule.end_s.max()),
        p99_jct_s=float(np.sort(jct)[int(0.99 * n)]),
        average_queue_length=float(schedule.average_queue_length),
        gpu_utilisation=float(schedule.gpu_utilisation),
        events=int(schedule.events),
        runtime_s=float(schedule.runtime_s),
        submit_s=schedule.submit_s,
        end_s=schedule.end_s,
        iterations_done=schedule.iterations_done,
        max_gpus_in_use=int(schedule.max_gpus_in_use),
        config=dict(schedule.config),
    )


def config_dict(config: SimConfig) -> dict[str, Any]:
    """The configuration as recorded in a schedule."""
    return asdict(config)
