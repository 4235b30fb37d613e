"""Event-driven trace simulator for Muri and the schedulers it was compared with.

Paper: Zhao et al., SIGCOMM 2022, Sec. 4.2 ("Optimizing for average JCT"),
5.1 and 6.1/6.3; spec ``shared/specs/muri.md`` ("Scheduler and simulator").
Policies: ``srtf``, ``srsf`` (known durations), ``tiresias`` (discretised
2D-LAS), ``themis`` (finish-time fairness), ``antman`` (GPU sharing,
guaranteed / opportunistic jobs), ``muri-s`` (SRSF order + interleaving) and
``muri-l`` (2D-LAS order + interleaving).

The default :class:`SimConfig` is the spec's ``reference`` configuration: a
model of the authors' simulator (github Rivendile/Muri, ``simulator/``,
commit 4e69a78), which produced the published numbers. Its behaviour was
established by reading ``run_sim.py`` (the per-policy event loops
``shortest_first_sim_jobs``, ``dlas_sim_jobs``, ``antman_sim_jobs``,
``themis_sim_jobs``, ``multi_resource_blossom_same_sim_jobs``), ``jobs.py``
(trace parsing: ms -> s, the 1.015 solo slowdown and the 1.33/1.5/1.37
interference factors), ``matching.py`` (``_Packing.calc_iteration_time``: the
staged period recurrence; ``_Blossom_Same``: repeated matching),
``switch.py`` / ``node.py`` / ``cluster.py`` (MS-YARN placement, AntMan's
GPU-level state) and ``log.py`` (JCT = end - submit). No code is copied; the
model is re-implemented with numpy arrays so that trace 2 (5,755 jobs) runs
in seconds per policy (Muri-S/L: 34-39 s with the original's Blossom, the
``reference`` default, compiled with numba; 13-23 s with
``matching="types"``; see ``benchmarks/results/muri.md``). Every knob of the model is a field of
:class:`SimConfig`; ``SimConfig.preset("paper")`` switches to the paper's
prose (Eq. 3 period at the best offsets of ``k = 3`` resources with groups of
at most 3 jobs and no interference factor, Eq. 4 edge weights, Themis'
isolated time in seconds, jobs admitted at 360 s round boundaries; the
original's start overhead is kept, since the paper's testbed pays restarts
too).

Reference model, per policy (times in seconds):

* A job's solo iteration time is ``iteration_time_ms x 1.015 / 1000``; alone
  it needs ``iterations x`` that. At every event each running job loses
  ``min(overhead, time since the last event)`` of progress (overhead per
  model and GPU count, :data:`START_OVERHEAD_S`; a Muri group loses the sum
  of its members'); the last segment up to a completion is not charged.
* Events: arrivals (jobs whose submit times are within ``rel 1e-9`` of an
  earlier event's time join it, as the original's ``search_dict_list``
  does) and predicted completions (grouped the same way, except Tiresias,
  which takes the exact minimum, and AntMan, which also merges completions
  within 1e-4 s of the first). Muri merges an arrival and a completion
  within 1e-4 s; the other loops merge them only when equal.
* Placement (SRTF, SRSF, Themis, Muri): MS-YARN on the 8 x 8 cluster: a job
  of at most 8 GPUs on the lowest-numbered node with enough free GPUs; a
  larger one on ``g // 8`` entirely free nodes. Jobs that do not fit are
  skipped (backfilling). CPUs and memory of the original never bind on
  these traces and are not modelled. Tiresias counts free GPUs only.
* Ties in every sort are broken by the job list's previous order (Python's
  stable sort on a list the original keeps across events); this is
  reproduced, and so is the original's floating-point order where it
  matters: attained time is updated as ``(executed + t) - last_check``
  (the other order leaves a Tiresias job of trace 3' at
  1624.9999999999995 s of a 1625 s threshold, and its queue-jump event
  repeats forever). With this the deterministic baselines give the
  published raw numbers to ~1e-10.

Choices and differences, written down:

* Muri's matching (``matching``): the original runs its own weighted
  Blossom (``matching.py``) on the complete graph of the candidate nodes of
  each GPU bucket, in list order, with directed float weights (node ``u``'s
  jobs then ``v``'s). Which of several maximum-weight matchings it returns
  is decided by that algorithm's scan orders and float comparisons (and it
  stops early when a label comes within relative 1e-5 of the dual step), and
  the published numbers depend on it. ``reference`` (default of the
  ``reference`` preset) re-implements that Blossom step for step
  (:mod:`ddlsched.sim.muri_matching`), memoised by the sequence of node
  types: with it Muri-S on trace 3 and Muri-L on trace 1 give the published
  numbers to ~1e-10 and Muri-L on trace 3 to 0.4 % (average JCT; p99 exact).
  Its O(n^3) cost is paid in compiled code (numba) from 8 nodes on: ~8 s
  per Muri policy on trace 1, 34-39 s on trace 2, 84-105 s on trace 4.
  ``types`` (``paper`` preset) solves the maximum-weight
  matching on the *types* (distinct profiles) as a b-matching: a linear
  program over Edmonds' b-matching polytope (odd-set rows added as cutting
  planes, HiGHS; an integral vertex is optimal; integer program as
  fallback), memoised by the type counts, equal-type nodes paired in list
  order (earliest with earliest), a pair weighing the larger of its two
  member orders; same maximum weight, other ties (Muri-L trace 3: +3.4 %
  average JCT, +4.4 % p99). The group's period uses the actual order
  (higher-priority job first), as the original does when it merges. The
  original also runs the matching when the candidates already fit, then
  splits every pair again; here that round is skipped
  (same outcome). Without Blossom (``blossom=False``) the original also
  changes the 4-job interference factor to 1.3/1.015; set ``interference``
  to reproduce that.
* Themis: the original solves its allocation LP with cvxpy/ECOS; its
  optimum is not unique, and the published Themis numbers depend on the
  solver's choice. Here the min-max finish-time-fairness problem is solved
  exactly by bisection on the fairness level, every job getting the
  smallest share that meets it. In ``reference`` the isolated time mixes
  units as the original does (iterations divided by a GPU share);
  ``themis_isolated_units="seconds"`` (``paper``) fixes it.
* AntMan's end-event merge loop in the original deletes from a list while
  indexing it (it raises when two merges happen); here all completions
  within 1e-4 s of the first are merged.
* Metrics: average JCT, makespan (last end time from t = 0), p99 JCT (the
  JCTs sorted ascending at index ``int(0.99 n)``, as the original's
  scripts do), time-averaged queue length (arrived, unfinished, not
  running) and GPU utilisation (allocated GPUs / all GPUs, time-averaged
  over the makespan; an AntMan GPU shared by two jobs counts once).
"""

from __future__ import annotations

import itertools
import logging
import math
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np

from ddlsched.errors import DdlschedError, UnknownMethodError
from ddlsched.problems.muri import best_periods
from ddlsched.sim.muri_matching import blossom_match
from ddlsched.workloads.muri_traces import MuriTrace

__all__ = [
    "POLICIES",
    "START_OVERHEAD_S",
    "SimConfig",
    "SimMetrics",
    "simulate",
    "staged_period",
]

log = logging.getLogger(__name__)

_MAX_ROUND_S = 1e9  # a round longer than ~30 years is a unit error (and overflows event times)

POLICIES = ("srtf", "srsf", "tiresias", "themis", "antman", "muri-s", "muri-l")

# Start overhead in seconds by GPU count and model (run_sim.py ``overhead_dict``); 10 s otherwise.
START_OVERHEAD_S: dict[int, dict[str, float]] = {
    1: {
        "vgg16": 7,
        "vgg19": 7,
        "resnet18": 4,
        "shufflenet_v2_x1_0": 4,
        "bert": 10,
        "gpt2": 10,
        "a2c": 38,
        "dqn": 5,
    },
    2: {
        "vgg16": 7,
        "vgg19": 7,
        "resnet18": 5,
        "shufflenet_v2_x1_0": 4,
        "bert": 10,
        "gpt2": 10,
        "a2c": 39,
        "dqn": 5,
    },
    4: {
        "vgg16": 8,
        "vgg19": 8,
        "resnet18": 5,
        "shufflenet_v2_x1_0": 5,
        "bert": 10,
        "gpt2": 10,
        "a2c": 39,
        "dqn": 6,
    },
    8: {
        "vgg16": 9,
        "vgg19": 9,
        "resnet18": 7,
        "shufflenet_v2_x1_0": 5,
        "bert": 10,
        "gpt2": 10,
        "a2c": 46,
        "dqn": 6,
    },
    16: {
        "vgg16": 9,
        "vgg19": 10,
        "resnet18": 7,
        "shufflenet_v2_x1_0": 7,
        "bert": 10,
        "gpt2": 10,
        "a2c": 46,
        "dqn": 8,
    },
    32: {
        "vgg16": 10,
        "vgg19": 10,
        "resnet18": 7,
        "shufflenet_v2_x1_0": 8,
        "bert": 10,
        "gpt2": 10,
        "a2c": 46,
        "dqn": 8,
    },
}
_DEFAULT_OVERHEAD_S = 10.0
_MAXSIZE = float(2**63 - 1)  # sys.maxsize, the original's "no event" time


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

    ``solo_slowdown``: factor on the trace's iteration time (1.015).
    ``start_overhead``: charge :data:`START_OVERHEAD_S` at every event.
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
    candidate nodes, its tie-breaking included: :mod:`ddlsched.sim.muri_matching`)
    or ``types`` (a maximum-weight b-matching over profile types, memoised by
    type counts; equal-type nodes paired in list order; much faster).
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
            _finite_number(self.round_s) and 0 < self.round_s <= _MAX_ROUND_S
        ):
            raise DdlschedError(
                f"round_s must be a number of seconds in (0, {_MAX_ROUND_S:.0e}] or null, "
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
        known = {f for f in cls.__dataclass_fields__}
        unknown = sorted(set(overrides) - known)
        if unknown:
            raise DdlschedError(
                f"unknown simulator knob(s) {', '.join(unknown)} (known: {', '.join(sorted(known))})"
            )
        if overrides:
            base = replace(
                base, **overrides, mode=base.mode if "mode" not in overrides else overrides["mode"]
            )
        return base

    @property
    def num_gpus(self) -> int:
        return self.num_nodes * self.gpus_per_node


@dataclass
class SimMetrics:
    """What a simulation produced; ``jct``/``end`` are per job in trace file order."""

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


# --------------------------------------------------------------------------- grouped period


def staged_period(res: Sequence[Sequence[float]], slots: int = 4) -> float:
    """Period of one ordering of a group in the original's staged model (matching.py).

    Four slots; in each stage one job uses the network (resource 2), the next
    the GPU (resource 1), and the data phase (resource 0) of the one after
    spans two stages. ``f[s]`` is the end of stage ``s``; the period is read
    once it repeats (relative 1e-3), else after two rounds.
    """
    p = len(res)
    rounds = 2
    f = [0.0] * (slots * rounds + 1)
    period = 0.0
    for i in range(slots * rounds):
        a, b, c = (i + 1) % slots, (i + 2) % slots, (i + 3) % slots
        if a < p:
            f[i + 1] = max(f[i + 1], f[i] + res[a][2])
        if b < p:
            f[i + 1] = max(f[i + 1], f[i] + res[b][1])
        if i > 0 and c < p:
            f[i + 1] = max(f[i + 1], f[i - 1] + res[c][0])
        if i >= slots and math.isclose(f[i + 1] - f[i - 3], f[i] - f[i - 4], rel_tol=1e-3):
            period = f[i + 1] - f[i - 3]
            break
    if not period > 0:
        period = f[slots * rounds] - f[slots * rounds - slots]
    return period


class _Periods:
    """Memoised grouped periods and edge weights of profile-type tuples."""

    def __init__(self, config: SimConfig, type_res: np.ndarray, type_it: np.ndarray):
        self.config = config
        self.type_res = type_res
        self.type_it = type_it
        self._raw: dict[tuple[int, ...], float] = {}
        self._weight: dict[tuple[int, ...], float] = {}
        self._period: dict[tuple[int, ...], float] = {}

    def raw(self, types: tuple[int, ...]) -> float:
        """Best period before interference, members in the given order."""
        got = self._raw.get(types)
        if got is not None:
            return got
        if len(types) == 1:
            value = float(self.type_it[types[0]])
        elif self.config.period_model == "eq3":
            arr = self.type_res[list(types)][None]
            value = float(best_periods(arr)[0][0])
        else:
            res = [tuple(self.type_res[t]) for t in types]
            value = math.inf
            for perm in itertools.permutations(res):
                value = min(value, staged_period(perm))
            if len(types) == 2:
                a, b = res
                alt = max(a[0], b[1] + b[2]) + max(b[0], a[1] + a[2])
                value = min(value, alt)
        self._raw[types] = value
        return value

    def period(self, types: tuple[int, ...]) -> float:
        got = self._period.get(types)
        if got is None:
            got = self.raw(types)
            if len(types) >= 2:
                got *= self.config.interference[len(types) - 2]
            self._period[types] = got
        return got

    def weight(self, types: tuple[int, ...]) -> float:
        got = self._weight.get(types)
        if got is not None:
            return got
        if self.config.weight_model == "eq4":
            arr = self.type_res[list(types)]
            period = self.raw(types)
            k = arr.shape[1]
            got = float(1.0 - np.sum((period - arr.sum(axis=0)) / period) / k)
        else:
            used = float(self.type_res[list(types)].sum())
            got = used / (self.period(types) * 4)
        self._weight[types] = got
        return got


# --------------------------------------------------------------------------- state


class _State:
    """Job arrays in submit order (the original's sorted job list) and the cluster."""

    def __init__(self, trace: MuriTrace, config: SimConfig):
        self.config = config
        submit = trace.submit_ms / 1000.0
        order = np.argsort(submit, kind="stable")
        self.file_pos = order
        self.n = n = len(order)
        self.g = trace.num_gpu[order].astype(np.int64)
        if np.any(self.g > config.num_gpus):
            raise DdlschedError(
                f"trace {trace.name}: a job needs {int(self.g.max())} GPUs but the cluster has {config.num_gpus}"
            )
        self.submit = submit[order]
        self.duration = (trace.duration_ms[order]) / 1000.0
        self.it = trace.iteration_time_ms[order] * config.solo_slowdown / 1000.0
        self.it_cur = self.it.copy()
        self.iterations = trace.iterations[order].astype(float)
        self.rem = self.iterations.copy()
        self.res = trace.resource_time_ms[order] / 1000.0
        self.prio = trace.priority[order].astype(np.int64)
        models = [trace.model[i] for i in order]
        self.models = models
        self.oh_solo = np.array(
            [
                START_OVERHEAD_S.get(int(g), {}).get(m, _DEFAULT_OVERHEAD_S)
                if config.start_overhead
                else 0.0
                for g, m in zip(self.g, models, strict=True)
            ],
            dtype=float,
        )
        self.overhead = self.oh_solo.copy()
        self.last_check = np.zeros(n)
        self.total_exec = np.zeros(n)
        self.exec_time = np.zeros(n)
        self.start = np.full(n, _MAXSIZE)
        self.end = np.zeros(n)
        self.running = np.zeros(n, dtype=bool)
        self.done = np.zeros(n, dtype=bool)
        self.arrived = np.zeros(n, dtype=bool)
        # profile types (distinct resource vectors + iteration times)
        keys = {}
        type_of = np.empty(n, dtype=np.int64)
        for i in range(n):
            key = (*self.res[i].tolist(), float(self.it[i]))
            type_of[i] = keys.setdefault(key, len(keys))
        self.type_of = type_of
        inv = sorted(keys, key=keys.get)
        self.type_res = np.array([k[:3] for k in inv], dtype=float)
        self.type_it = np.array([k[3] for k in inv], dtype=float)
        admit = self.submit
        if config.round_s is not None:
            admit = np.ceil(self.submit / config.round_s) * config.round_s
        self.start_events = _group_times(admit)
        # cluster
        self.gpn = config.gpus_per_node
        self.nodes = config.num_nodes
        # metrics
        self._metric_t = 0.0
        self._queue_area = 0.0
        self._busy_area = 0.0
        self._queue_now = 0
        self._busy_now = 0
        self.max_busy = 0
        self.events = 0

    def record(self, t: float, busy_gpus: int) -> None:
        """Advance the time-averaged metrics to ``t`` and set the new levels."""
        if t > self._metric_t:
            dt = t - self._metric_t
            self._queue_area += dt * self._queue_now
            self._busy_area += dt * self._busy_now
            self._metric_t = t
        active = self.arrived & ~self.done
        self._queue_now = int(np.count_nonzero(active & ~self.running))
        self._busy_now = busy_gpus
        self.max_busy = max(self.max_busy, busy_gpus)
        self.events += 1

    def progress(self, t: float, idx: np.ndarray, overhead: np.ndarray | None = None) -> None:
        """``rem -= max(t - last - overhead, 0) / it_cur`` for running jobs ``idx`` (vectorised)."""
        if idx.size == 0:
            return
        oh = self.overhead[idx] if overhead is None else overhead
        dt = t - self.last_check[idx]
        tmp = np.maximum(dt - oh, 0.0)
        self.rem[idx] -= tmp / self.it_cur[idx]
        # the original writes ``total = total + event_time - last_check``: (total + t) - last
        self.total_exec[idx] = (self.total_exec[idx] + t) - self.last_check[idx]
        self.last_check[idx] = t

    def complete(self, t: float, jobs: Sequence[int]) -> None:
        """Finish ``jobs`` at ``t``; the last segment's progress (uncharged) is booked for checks."""
        for j in jobs:
            if self.running[j]:
                self.rem[j] -= (t - self.last_check[j]) / self.it_cur[j]
            self.total_exec[j] += t - self.last_check[j]
            self.end[j] = t
            self.done[j] = True
            self.running[j] = False

    def arrive(self, jobs: np.ndarray) -> None:
        self.arrived[jobs] = True
        self.last_check[jobs] = self.submit[jobs]

    # -- MS-YARN placement on per-node free GPU counts --------------------------------

    def yarn(self, free: list[int], g: int) -> bool:
        gpn = self.gpn
        if g <= gpn:
            for n in range(len(free)):
                if free[n] >= g:
                    free[n] -= g
                    return True
            return False
        need = g // gpn
        full = [n for n in range(len(free)) if free[n] == gpn][:need]
        if len(full) < need:
            return False
        rest = g % gpn
        if rest:
            last = next((n for n in range(len(free)) if n not in full and free[n] >= rest), None)
            if last is None:
                return False
            free[last] -= rest
        for n in full:
            free[n] = 0
        return True

    def place_in_order(self, order: np.ndarray, free: list[int]) -> np.ndarray:
        """Try MS-YARN for every job of ``order`` in turn (backfilling); returns the placed mask."""
        placed = np.zeros(order.size, dtype=bool)
        if order.size == 0:
            return placed
        gs = self.g[order]
        gpn = self.gpn
        pos = 0
        while pos < order.size:
            max_free = max(free)
            n_full = free.count(gpn)
            if max_free == 0:
                break
            sub = gs[pos:]
            fits = (sub <= max_free) | ((sub > gpn) & (sub // gpn <= n_full))
            hit = np.flatnonzero(fits)
            if hit.size == 0:
                break
            j = pos + int(hit[0])
            ok = self.yarn(free, int(gs[j]))
            assert ok
            placed[j] = True
            pos = j + 1
        return placed

    def metrics(self, trace: MuriTrace, policy: str, runtime: float) -> SimMetrics:
        if not self.done.all():
            raise DdlschedError(
                f"simulation ended with {int((~self.done).sum())} unfinished job(s)"
            )
        jct = self.end - self.submit
        n = self.n
        makespan = float(self.end.max())
        self.record(makespan, 0)
        horizon = makespan if makespan > 0 else 1.0
        # back to trace file order
        inv = np.empty(n, dtype=np.int64)
        inv[self.file_pos] = np.arange(n)
        done_iters = self.iterations - self.rem
        return SimMetrics(
            trace=trace.name,
            policy=policy,
            mode=self.config.mode,
            num_jobs=n,
            average_jct_s=float(np.sum(jct) / n),
            makespan_s=makespan,
            p99_jct_s=float(np.sort(jct)[int(0.99 * n)]),
            average_queue_length=self._queue_area / horizon,
            gpu_utilisation=self._busy_area / (horizon * self.config.num_gpus),
            events=self.events,
            runtime_s=runtime,
            submit_s=self.submit[inv],
            end_s=self.end[inv],
            iterations_done=done_iters[inv],
            max_gpus_in_use=self.max_busy,
            config=asdict(self.config),
        )


def _isclose_rel(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9)


def _group_times(times: np.ndarray) -> list[tuple[float, np.ndarray]]:
    """Group ascending times as the original's ``search_dict_list`` (first event within rel 1e-9)."""
    events: list[float] = []
    members: list[list[int]] = []
    for i, t in enumerate(times.tolist()):
        # events are ascending; only the recent ones can be within 1e-9 relative
        k = len(events) - 1
        found = -1
        while k >= 0 and events[k] >= t - 2e-9 * max(abs(t), 1.0):
            if _isclose_rel(events[k], t):
                found = k
            k -= 1
        if found >= 0:
            members[found].append(i)
        else:
            events.append(t)
            members.append([i])
    return [(events[k], np.array(members[k], dtype=np.int64)) for k in range(len(events))]


def _earliest_end_group(ids: np.ndarray, ends: np.ndarray) -> tuple[float, list[int]] | None:
    """The earliest completion group, ends grouped in list order within rel 1e-9 of a group's first."""
    if ids.size == 0:
        return None
    vmin = float(ends.min())
    near = np.flatnonzero(ends <= vmin + 1e-8 * abs(vmin) + 1e-300)
    group_t: list[float] = []
    group_j: list[list[int]] = []
    for p in near.tolist():
        v = float(ends[p])
        for k, gt in enumerate(group_t):
            if _isclose_rel(gt, v):
                group_j[k].append(int(ids[p]))
                break
        else:
            group_t.append(v)
            group_j.append([int(ids[p])])
    k = min(range(len(group_t)), key=lambda i: group_t[i])
    return group_t[k], group_j[k]


def _stable_sort(order: np.ndarray, key: np.ndarray) -> np.ndarray:
    return order[np.argsort(key[order], kind="stable")]


# --------------------------------------------------------------------------- SRTF / SRSF


def _next_event(events, ev: int, end_event):
    """The next event of a policy loop: ``(time, arriving jobs, finishing jobs, next ev)``.

    ``events[ev]`` is the next arrival group, ``end_event`` the earliest
    completion group; on a tie both happen at once (the original's order).
    Either job list is ``None`` when that kind of event does not happen.
    """
    start_t = events[ev][0] if ev < len(events) else _MAXSIZE
    end_t = end_event[0] if end_event else _MAXSIZE
    if end_t < start_t:
        return end_t, None, end_event[1], ev
    if end_t > start_t:
        return start_t, events[ev][1], None, ev + 1
    return start_t, events[ev][1], end_event[1], ev + 1


def _run_shortest(st: _State, gputime: bool) -> None:
    """``shortest_first_sim_jobs``: preemptive SRTF / SRSF with MS-YARN backfilling."""
    order = np.zeros(0, dtype=np.int64)  # runnable jobs in list order
    rem_time = np.zeros(st.n)
    rem_gputime = np.zeros(st.n)
    events = st.start_events
    ev = 0
    end_event: tuple[float, list[int]] | None = None
    while ev < len(events) or order.size:
        if ev == len(events) and end_event is None:
            raise DdlschedError("the cluster is not large enough to run the remaining jobs")
        t, starts, ends, ev = _next_event(events, ev, end_event)
        if ends:
            st.complete(t, ends)
            order = order[~st.done[order]]
        if starts is not None:
            st.arrive(starts)
            order = np.concatenate([order, starts])
            rem_time[starts] = st.rem[starts] * st.it[starts]
            rem_gputime[starts] = rem_time[starts] * st.g[starts]
        run = order[st.running[order]]
        st.progress(t, run)
        rem_time[run] = st.rem[run] * st.it[run]
        if gputime:
            rem_gputime[run] = rem_time[run] * st.g[run]
        pend = order[~st.running[order]]
        st.last_check[pend] = t
        order = _stable_sort(order, rem_gputime if gputime else rem_time)
        free = [st.gpn] * st.nodes
        placed = st.place_in_order(order, free)
        newly = order[placed & ~st.running[order]]
        st.start[newly[st.start[newly] == _MAXSIZE]] = t
        st.running[order] = placed
        run = order[placed]
        st.record(t, int(st.g[run].sum()))
        end_event = _earliest_end_group(run, t + st.rem[run] * st.it[run])


# --------------------------------------------------------------------------- Tiresias


def _fit_by_count(gs: np.ndarray, free: int) -> tuple[np.ndarray, int]:
    """Walk ``gs`` in order, taking every job with ``g <= free`` (free GPUs counted only).

    Runs of jobs that all fit are taken at once (their cumulative GPUs stay
    within ``free``); the first job of a run that does not fit is skipped.
    """
    ok = np.zeros(gs.size, dtype=bool)
    pos = 0
    while pos < gs.size and free > 0:
        sub = gs[pos:]
        cum = np.cumsum(sub)
        k = int(np.searchsorted(cum, free, side="right"))
        if k > 0:
            ok[pos : pos + k] = True
            free -= int(cum[k - 1])
            pos += k
            continue
        hit = np.flatnonzero(sub <= free)
        if hit.size == 0:
            break
        pos += int(hit[0])
    return ok, free


def _run_tiresias(st: _State) -> None:
    """``dlas_sim_jobs(gputime=True)``: discretised 2D-LAS, three queues, free-GPU counting."""
    limits = st.config.tiresias_thresholds
    num_queue = len(limits) + 1
    queues: list[list[int]] = [[] for _ in range(num_queue)]
    qid = np.zeros(st.n, dtype=np.int64)
    total = st.config.num_gpus
    events = st.start_events
    ev = 0
    end_event: tuple[float, list[int]] | None = None
    next_jump = _MAXSIZE
    active = np.zeros(st.n, dtype=bool)
    while ev < len(events) or active.any():
        if ev == len(events) and end_event is None and next_jump == _MAXSIZE:
            raise DdlschedError("the cluster is not large enough to run the remaining jobs")
        start_t = events[ev][0] if ev < len(events) else _MAXSIZE
        end_t = end_event[0] if end_event else _MAXSIZE
        starts = ends = None
        if end_t < start_t:
            t, ends = end_t, end_event[1]
        elif end_t > start_t:
            t, starts = start_t, ev
        else:
            t, starts, ends = start_t, ev, end_event[1]
        if t > next_jump:
            t, starts, ends = next_jump, None, None
        if ends:
            st.complete(t, ends)
            for j in ends:
                active[j] = False
                queues[qid[j]].remove(j)
        if starts is not None:
            new = events[starts][1]
            ev += 1
            st.arrive(new)
            active[new] = True
            qid[new] = 0
            queues[0].extend(new.tolist())
        runnable = np.flatnonzero(active)  # list order = arrival order
        run = runnable[st.running[runnable]]
        if run.size:
            last = st.last_check[run].copy()
            st.progress(t, run)
            st.exec_time[run] = (st.exec_time[run] + t) - last  # same order as the original
            attained = st.exec_time[run] * st.g[run]
            q = qid[run]
            lim = np.array([*limits, math.inf])[q]
            demote = run[(q < num_queue - 1) & (attained >= lim)]
            for j in demote.tolist():
                queues[qid[j]].remove(j)
                qid[j] += 1
                queues[qid[j]].append(j)
        pend = runnable[~st.running[runnable]]
        st.last_check[pend] = t
        free = total
        busy = 0
        for queue in queues:
            if not queue:
                continue
            arr = np.array(queue, dtype=np.int64)
            gs = st.g[arr]
            ok, free = _fit_by_count(gs, free)
            was = st.running[arr]
            newly = arr[ok & ~was]
            st.start[newly[st.start[newly] == _MAXSIZE]] = t
            st.running[arr] = ok
            busy += int(gs[ok].sum())
            queue[:] = arr[ok].tolist() + arr[~ok].tolist()
        run = runnable[st.running[runnable]]
        st.record(t, busy)
        if run.size:
            ends_at = t + st.rem[run] * st.it[run]
            m = float(ends_at.min())
            end_event = (m, run[ends_at == m].tolist())
            q = qid[run]
            cand = q < num_queue - 1
            if cand.any():
                lim = np.array(limits)[q[cand]]
                jump = np.ceil(lim / st.g[run][cand]) - st.exec_time[run][cand] + t
                next_jump = float(jump.min())
            else:
                next_jump = _MAXSIZE
        else:
            end_event = None
            next_jump = _MAXSIZE


# --------------------------------------------------------------------------- AntMan


def _run_antman(st: _State) -> None:
    """``antman_sim_jobs``: non-preemptive FIFO by (priority, submit); GPU sharing.

    GPU-level state as in node.py: per GPU the guaranteed (priority 0) and
    opportunistic (1) jobs and a utilisation number (guaranteed jobs add
    0.1, opportunistic 0.9, with the original's float operations in the
    original's order, so that ties in "least utilised" break identically).
    Only jobs that can change the state are visited (the others would fail
    without side effects).
    """
    nodes, gpn = st.nodes, st.gpn
    util = np.zeros((nodes, gpn))
    p0_occ = np.zeros((nodes, gpn), dtype=np.int64)
    p1_occ = np.zeros((nodes, gpn), dtype=np.int64)
    gpu_jobs: list[list[tuple[list[int], list[int]]]] = [
        [([], []) for _ in range(gpn)] for _ in range(nodes)
    ]
    gpu_util = np.where(st.prio == 0, 0.1, 0.9)
    remaining_gpu = st.g.copy()
    last_node = np.zeros(st.n, dtype=np.int64)
    placement: dict[int, list[tuple[int, int]]] = {}  # job -> [(node, gpu)] in allocation order
    cap = st.config.antman_util_cap
    key_order = np.lexsort((np.arange(st.n), st.submit, st.prio))
    rank = np.empty(st.n, dtype=np.int64)
    rank[key_order] = np.arange(st.n)
    events = st.start_events
    ev = 0
    end_event: tuple[float, list[int]] | None = None
    active = np.zeros(st.n, dtype=bool)

    def alloc_p0(n: int, gpus: list[int], j: int) -> None:
        value = gpu_util[j] - 0.01
        for i in gpus:
            gpu_jobs[n][i][0].append(j)
            p0_occ[n, i] += 1
            util[n, i] += value
        placement.setdefault(j, []).extend((n, i) for i in gpus)
        remaining_gpu[j] -= len(gpus)

    def add_util_all(j: int) -> None:
        for n, i in placement[j]:
            util[n, i] += 0.01

    def free_p0(n: int) -> list[int]:
        return np.flatnonzero(p0_occ[n] == 0).tolist()

    def place(j: int) -> bool:
        g = int(st.g[j])
        if st.prio[j] == 1:
            flat = util.reshape(-1)
            cands = np.flatnonzero(flat < cap)
            if cands.size < g:
                return False
            chosen = cands[np.argsort(flat[cands], kind="stable")][:g]
            for c in chosen.tolist():
                n, i = divmod(c, gpn)
                util[n, i] += gpu_util[j]
                gpu_jobs[n][i][1].append(j)
                p1_occ[n, i] += 1
            placement[j] = [divmod(c, gpn) for c in chosen.tolist()]
            remaining_gpu[j] = 0
            return True
        if g > gpn:  # whole free nodes, reserved as they are found
            need = int(remaining_gpu[j]) // gpn
            full = [n for n in range(nodes) if not p0_occ[n].any()][:need]
            for n in full:
                alloc_p0(n, list(range(gpn)), j)
            if len(full) == need:
                add_util_all(j)
                return True
            return False
        need = int(remaining_gpu[j])
        if need == g:
            best_n, best_list = -1, []
            for n in range(nodes):
                avail = free_p0(n)
                if len(avail) >= need:
                    alloc_p0(n, avail[:need], j)
                    last_node[j] = n
                    add_util_all(j)
                    return True
                if len(avail) > len(best_list):
                    best_n, best_list = n, avail
            if best_list:
                alloc_p0(best_n, best_list, j)
                last_node[j] = best_n
            return False
        n = int(last_node[j])
        avail = free_p0(n)
        if len(avail) >= need:
            alloc_p0(n, avail[:need], j)
            add_util_all(j)
            return True
        if avail:
            alloc_p0(n, avail, j)
        return False

    def release(j: int) -> None:
        p = int(st.prio[j])
        occ = p0_occ if p == 0 else p1_occ
        for n, i in placement.pop(j, []):
            lst = gpu_jobs[n][i][p]
            if j in lst:
                lst.remove(j)
                occ[n, i] -= 1
                util[n, i] -= gpu_util[j]

    def opportunistic_iter_time(j: int) -> float:
        mine = st.it[j]
        co: set[int] = set()
        for n, i in placement[j]:
            co.update(gpu_jobs[n][i][0])
            co.update(x for x in gpu_jobs[n][i][1] if x != j)
        iter_time = mine
        for c in co:
            if st.prio[c] == 0:
                if remaining_gpu[c] > 0:
                    continue
                iter_time = max(iter_time, _antman_share_iters(st.res[j], st.res[c]) * st.it[c])
            else:
                iter_time = max(iter_time, mine * 2.0)
        return iter_time

    while ev < len(events) or active.any():
        if ev == len(events) and end_event is None:
            raise DdlschedError("the cluster is not large enough to run the remaining jobs")
        t, starts, ends, ev = _next_event(events, ev, end_event)
        if ends:
            for j in ends:
                release(j)
            st.complete(t, ends)
            active[ends] = False
        if starts is not None:
            st.arrive(starts)
            active[starts] = True
        runnable = np.flatnonzero(active)
        run = runnable[st.running[runnable]]
        st.progress(t, run)
        pend = runnable[~st.running[runnable]]
        st.last_check[pend] = t
        pend = pend[np.argsort(rank[pend], kind="stable")]
        pg, pp = st.g[pend], st.prio[pend]
        pos = 0
        while pos < pend.size:
            free_cnt = (p0_occ == 0).sum(axis=1)
            below = int(np.count_nonzero(util < cap))
            n_full = int(np.count_nonzero(free_cnt == gpn))
            g, p = pg[pos:], pp[pos:]
            remg = remaining_gpu[pend[pos:]]
            can = (p == 1) & (g <= below)
            can |= (p == 0) & (g > gpn) & (n_full >= 1)
            small0 = (p == 0) & (g <= gpn)
            can |= small0 & (remg == g) & (free_cnt.max() >= 1)
            can |= small0 & (remg < g) & (free_cnt[last_node[pend[pos:]]] >= 1)
            hit = np.flatnonzero(can)
            if hit.size == 0:
                break
            j = int(pend[pos + int(hit[0])])
            pos += int(hit[0]) + 1
            if place(j):
                if st.start[j] == _MAXSIZE:
                    st.start[j] = t
                st.running[j] = True
        run = runnable[st.running[runnable]]
        run = run[np.argsort(rank[run], kind="stable")]
        st.record(t, int(np.count_nonzero((p0_occ > 0) | (p1_occ > 0))))
        if run.size == 0:
            end_event = None
            continue
        for j in run[st.prio[run] == 1].tolist():
            st.it_cur[j] = opportunistic_iter_time(j)
        ends_at = t + st.rem[run] * st.it_cur[run]
        grp = _earliest_end_group(run, ends_at)
        assert grp is not None
        first_t, members = grp
        close = np.flatnonzero(np.abs(ends_at - first_t) <= 1e-4)
        extra = [int(run[q]) for q in close.tolist() if int(run[q]) not in members]
        end_event = (first_t, members + extra)


def _antman_share_iters(mine: np.ndarray, other: np.ndarray) -> int:
    """Iterations of a guaranteed job during one of an opportunistic job's (run_sim.py)."""
    t0, t1, t2 = float(mine[0]), float(mine[1]), float(mine[2])
    c0, c1, c2 = float(other[0]), float(other[1]), float(other[2])
    iters = math.floor(t0 / (c1 + c2))
    extra = t0 % (c1 + c2)
    if extra > 0:
        iters += 1
        t1 -= min(t1, c2, c1 + c2 - extra)
    iters += math.floor(t1 / (c0 + c2))
    extra = t1 % (c0 + c2)
    if extra > 0:
        iters += 1
        if extra < c0:
            t2 -= min(t2, c0 + c1 - extra)
    iters += math.floor(t2 / (c0 + c1))
    extra = t2 % (c0 + c1)
    if extra > c0:
        iters += 1
    return iters


# --------------------------------------------------------------------------- Themis


def _themis_shares(ratio_num, coef, denom, g, total, tput) -> np.ndarray:
    """min over x of max_i (E_i + r_i / (tput_i x_i)) / D_i s.t. sum g_i x_i <= G, 0 <= x <= 1.

    ``ratio_num`` = E_i (elapsed), ``coef`` = r_i, ``denom`` = D_i (isolated time).
    Bisection on the level ``L``: job ``i`` needs ``x_i >= r_i / (tput_i (L D_i - E_i))``.
    """
    n = ratio_num.size

    def need(level: float) -> np.ndarray | None:
        slack = level * denom - ratio_num
        if np.any(slack <= 0):
            return None
        x = coef / (tput * slack)
        if np.any(x > 1.0) or float(np.dot(g, x)) > total:
            return None
        return x

    lo = float(np.max((ratio_num + coef / tput) / denom))  # every job at x = 1
    lo = max(lo * (1 - 1e-12), 0.0)
    hi = max(lo, 1.0) * 2.0
    for _ in range(200):
        if need(hi) is not None:
            break
        hi *= 2.0
    else:  # pragma: no cover - infeasible only if the cluster is too small
        return np.full(n, min(1.0, total / max(1, int(g.sum()))))
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        if need(mid) is None:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-12 * hi:
            break
    x = need(hi)
    assert x is not None
    return x


def _run_themis(st: _State) -> None:
    """``themis_sim_jobs``: finish-time-fairness allocation at every event, greedy placement."""
    total = st.config.num_gpus
    fixed_units = st.config.themis_isolated_units == "seconds"
    tput = 1.0 / st.it
    cum_iso = np.zeros(st.n)
    prev_rem = np.full(st.n, np.nan)
    prev_iso = np.full(st.n, np.nan)
    should = np.zeros(st.n)
    order = np.zeros(0, dtype=np.int64)
    events = st.start_events
    ev = 0
    end_event = None
    last_event_t = 0.0
    while ev < len(events) or order.size:
        if ev == len(events) and end_event is None:
            raise DdlschedError("the cluster is not large enough to run the remaining jobs")
        t, starts, ends, ev = _next_event(events, ev, end_event)
        if ends:
            st.complete(t, ends)
            order = order[~st.done[order]]
        if starts is not None:
            st.arrive(starts)
            order = np.concatenate([order, starts])
            should[starts] = 0.0
        run = order[st.running[order]]
        st.progress(t, run)
        pend = order[~st.running[order]]
        st.last_check[pend] = t
        if order.size:
            m = order.size
            alloc = np.minimum(math.ceil(total / m) / st.g[order], 1.0)
            iso = alloc * tput[order] if fixed_units else alloc
            seen = ~np.isnan(prev_rem[order])
            upd = order[seen]
            cum_iso[upd] += (prev_rem[upd] - st.rem[upd]) / prev_iso[upd]
            denom = cum_iso[order] + st.rem[order] / iso
            x = _themis_shares(
                t - st.submit[order],
                st.rem[order],
                denom,
                st.g[order].astype(float),
                total,
                tput[order],
            )
            prev_rem[order] = st.rem[order]
            prev_iso[order] = iso
            executed = st.total_exec[order]
            sort_val = np.where(executed == 0, x * 1e9, x / np.where(executed == 0, 1.0, executed))
            deficit = should[order] - executed
            should[order] += x * (t - last_event_t)
            keys = np.lexsort((-x, -deficit, -sort_val))  # descending, stable
            # Python's sort(reverse=True) keeps equal keys in their original order
            chosen_order = order[keys]
            free = [st.gpn] * st.nodes
            chosen = chosen_order[st.place_in_order(chosen_order, free)]
            is_chosen = np.zeros(st.n, dtype=bool)
            is_chosen[chosen] = True
            by_gpu = order[np.argsort(-st.g[order], kind="stable")]
            order = by_gpu
            free = [st.gpn] * st.nodes
            cand = order[is_chosen[order]]
            placed_c = st.place_in_order(cand, free)
            placed = np.zeros(st.n, dtype=bool)
            placed[cand[placed_c]] = True
            newly = order[placed[order] & ~st.running[order]]
            st.start[newly[st.start[newly] == _MAXSIZE]] = t
            st.running[order] = placed[order]
        run = order[st.running[order]]
        st.record(t, int(st.g[run].sum()))
        end_event = _earliest_end_group(run, t + st.rem[run] * st.it[run])
        last_event_t = t


# --------------------------------------------------------------------------- Muri


def _violated_odd_set(support, ends, x, cnt) -> tuple[int, ...] | None:
    """A set ``S`` of ``support`` with ``c(S)`` odd and ``x(E[S]) > floor(c(S)/2)`` (smallest first)."""
    k = len(support)
    bit = {v: 1 << i for i, v in enumerate(support)}
    subsets = np.arange(1, 1 << k, dtype=np.int64)
    total = np.zeros(subsets.size, dtype=np.int64)
    for v, b in bit.items():
        total += np.where(subsets & b, cnt[v], 0)
    lhs = np.zeros(subsets.size)
    for p, (u, v) in enumerate(ends):
        if x[p] > 1e-9 and u in bit and v in bit:
            mask = bit[u] | bit[v]
            lhs += np.where((subsets & mask) == mask, x[p], 0.0)
    bad = np.flatnonzero((total % 2 == 1) & (lhs > total // 2 + 1e-7))
    if bad.size == 0:
        return None
    sizes = np.array([bin(int(s)).count("1") for s in subsets[bad]])
    chosen = int(subsets[bad[int(np.argmin(sizes))]])
    return tuple(v for v, b in bit.items() if chosen & b)


class _TypedMatcher:
    """Maximum-weight matching of typed nodes as a b-matching over type counts (memoised).

    ``max sum_{a <= b} w_ab n_ab`` s.t. ``sum_b n_ab + 2 n_aa <= c_a`` (type
    ``a`` has ``c_a`` nodes), ``n`` integer: the weight of a maximum-weight
    matching of the concrete nodes, since weights depend only on the types.
    Solved exactly as a linear program over Edmonds' b-matching polytope
    (degree rows plus the odd-set rows ``sum_{a,b in S} n_ab <= floor(c(S)/2)``
    for ``c(S)`` odd, added as cutting planes when the LP vertex is
    fractional); an integral LP vertex is an optimal matching. If no
    violated odd set is found among the fractional support, the integer
    program is solved instead. HiGHS through highspy, one reused instance.
    """

    def __init__(self):
        self._cache: dict[tuple, list[tuple[int, int, int]]] = {}
        self._highs = None

    def _exact(self, types, pairs, counts) -> np.ndarray:
        pos = {t: i for i, t in enumerate(types)}
        ends = [(pos[a], pos[b]) for a, b, _ in pairs]
        cnt = [counts[t] for t in types]
        sets: list[tuple[int, ...]] = []
        for _ in range(50):
            x = self._solve(types, pairs, counts, sets, integer=False)
            frac = np.flatnonzero(np.abs(x - np.round(x)) > 1e-7).tolist()
            if not frac:
                return x
            # vertices joined to the fractional edges by positive edges
            support = {v for p in frac for v in ends[p]}
            positive = [ends[p] for p in np.flatnonzero(x > 1e-7).tolist()]
            grown = True
            while grown:
                grown = False
                for u, v in positive:
                    if (u in support) != (v in support):
                        support.update((u, v))
                        grown = True
            support = sorted(support)
            violated = _violated_odd_set(support, ends, x, cnt) if len(support) <= 14 else None
            if violated is None:
                break
            sets.append(violated)
        return self._solve(types, pairs, counts, sets, integer=True)

    def _solve(self, types, pairs, counts, odd_sets, integer: bool) -> np.ndarray:
        import highspy

        if self._highs is None:
            self._highs = highspy.Highs()
            self._highs.setOptionValue("output_flag", False)
            self._highs.setOptionValue("threads", 1)
            self._highs.setOptionValue("presolve", "off")
            self._highs.setOptionValue("mip_rel_gap", 0.0)
        h = self._highs
        h.clearModel()
        pos = {t: i for i, t in enumerate(types)}
        n = len(pairs)
        num_types = len(types)
        rows = num_types + len(odd_sets)
        us = np.fromiter((pos[a] for a, _, _ in pairs), dtype=np.int64, count=n)
        vs = np.fromiter((pos[b] for _, b, _ in pairs), dtype=np.int64, count=n)
        cnt = np.array([counts[t] for t in types], dtype=np.int64)
        dense = np.zeros((n, rows))
        cols = np.arange(n)
        dense[cols, us] += 1.0
        dense[cols, vs] += 1.0
        if odd_sets:
            member = np.zeros((len(odd_sets), num_types), dtype=bool)
            for k, subset in enumerate(odd_sets):
                member[k, list(subset)] = True
            dense[:, num_types:] = (member[:, us] & member[:, vs]).T
        col_idx, row_idx = np.nonzero(dense)
        lp = highspy.HighsLp()
        lp.num_col_ = n
        lp.num_row_ = rows
        lp.col_cost_ = -np.fromiter((w for _, _, w in pairs), dtype=float, count=n)
        lp.col_lower_ = np.zeros(n)
        lp.col_upper_ = np.where(us == vs, cnt[us] // 2, np.minimum(cnt[us], cnt[vs])).astype(float)
        lp.row_lower_ = np.full(rows, -highspy.kHighsInf)
        odd_ub = [int(cnt[list(subset)].sum()) // 2 for subset in odd_sets]
        lp.row_upper_ = np.concatenate([cnt.astype(float), np.array(odd_ub, dtype=float)])
        lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
        lp.a_matrix_.start_ = np.searchsorted(col_idx, np.arange(n + 1)).astype(np.int32)
        lp.a_matrix_.index_ = row_idx.astype(np.int32)
        lp.a_matrix_.value_ = dense[col_idx, row_idx]
        if integer:
            lp.integrality_ = [highspy.HighsVarType.kInteger] * n
        h.passModel(lp)
        h.run()
        if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:  # pragma: no cover
            raise DdlschedError(
                f"Muri matching: HiGHS returned {h.modelStatusToString(h.getModelStatus())}"
            )
        return np.array(h.getSolution().col_value)

    def solve(self, counts: dict[tuple[int, ...], int], weight, size_of, max_size: int):
        key = tuple(sorted(counts.items()))
        got = self._cache.get(key)
        if got is not None:
            return got
        types = sorted(counts)
        pairs = []
        for a_i, a in enumerate(types):
            for b in types[a_i:]:
                if size_of(a) + size_of(b) > max_size:
                    continue
                if a == b and counts[a] < 2:
                    continue
                w = weight(a, b)
                if w > 0 and not math.isclose(w, 0.0, abs_tol=0.0, rel_tol=1e-5):
                    pairs.append((a, b, w))
        result: list[tuple[int, int, int]] = []
        if pairs:
            x = self._exact(types, pairs, counts)
            for p, (a, b, _) in enumerate(pairs):
                k = int(np.rint(x[p]))
                if k > 0:
                    result.append((a, b, k))
            result.sort(key=lambda r: -weight(r[0], r[1]))
        self._cache[key] = result
        return result


def _run_muri(st: _State, know_duration: bool) -> None:
    """``multi_resource_blossom_same_sim_jobs``: Muri-S (SRSF order) / Muri-L (2D-LAS order)."""
    cfg = st.config
    total = cfg.num_gpus
    periods = _Periods(cfg, st.type_res, st.type_it)
    matcher = _TypedMatcher()
    packing_num = cfg.packing_num
    rem_gputime = np.zeros(st.n)
    exec_gputime = np.zeros(st.n)
    order = np.zeros(0, dtype=np.int64)
    events = st.start_events
    ev = 0
    end_event: tuple[float, list[int]] | None = None

    type_list = st.type_of.tolist()
    overhead_memo: dict[tuple[int, ...], float] = {}

    def group_overhead(nd: tuple[int, ...], g: int) -> float:
        got = overhead_memo.get(nd)
        if got is None:
            table = START_OVERHEAD_S.get(g, {})
            got = overhead_memo[nd] = float(
                sum(table.get(st.models[m], _DEFAULT_OVERHEAD_S) for m in nd)
            )
        return got

    node_key: dict[tuple[int, ...], tuple[int, ...]] = {}
    pair_w: dict[tuple[tuple[int, ...], tuple[int, ...]], float] = {}

    def node_types(node: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(type_list[j] for j in node)

    def key_of(node: tuple[int, ...]) -> tuple[int, ...]:
        got = node_key.get(node)
        if got is None:
            got = node_key[node] = tuple(sorted(type_list[j] for j in node))
        return got

    def pair_weight(a: tuple[int, ...], b: tuple[int, ...]) -> float:
        got = pair_w.get((a, b))
        if got is None:
            got = pair_w[(a, b)] = max(periods.weight(a + b), periods.weight(b + a))
        return got

    # ``matching="reference"``: the original's directed weights, float sums in its order
    job_sum_memo: dict[int, float] = {}

    def job_sum(t: int) -> float:
        got = job_sum_memo.get(t)
        if got is None:
            r0, r1, r2 = (float(x) for x in st.type_res[t])
            got = job_sum_memo[t] = (r0 + r1) + r2
        return got

    ref_w: dict[tuple[tuple[int, ...], tuple[int, ...]], float] = {}

    def ordered_weight(a: tuple[int, ...], b: tuple[int, ...]) -> float:
        """Weight of node ``a``'s jobs followed by ``b``'s (0: the group would be too large)."""
        got = ref_w.get((a, b))
        if got is None:
            types = a + b
            if len(types) > packing_num:
                got = 0.0
            elif cfg.weight_model == "used_ratio":
                used = 0.0
                for t in types:
                    used += job_sum(t)
                got = used / (periods.period(types) * 4)
            else:
                got = periods.weight(types)
            ref_w[(a, b)] = got
        return got

    ref_memo: dict[tuple[tuple[int, ...], ...], dict[int, int]] = {}

    def reference_partners(nodes: list[tuple[int, ...]]) -> dict[int, int]:
        """Positions paired by the original's Blossom (memoised by the node type sequence)."""
        seq = tuple(node_types(nd) for nd in nodes)
        got = ref_memo.get(seq)
        if got is None:
            w = [
                [ordered_weight(a, b) if i != k else 0.0 for k, b in enumerate(seq)]
                for i, a in enumerate(seq)
            ]
            mate = blossom_match(w)
            got = ref_memo[seq] = {p: q for p, q in enumerate(mate) if q >= 0}
        return got

    def group(
        bucket_nodes: dict[int, list[tuple[int, ...]]], required: int
    ) -> dict[int, list[tuple[int, ...]]]:
        """Repeated matching of candidate nodes while they need more GPUs than the cluster has."""
        if required <= total:  # every candidate runs alone (the original matches, then splits)
            return bucket_nodes
        for _ in range(packing_num):
            ready: list[tuple[int, tuple[int, ...], tuple[int, ...] | None]] = []
            for g, nodes in bucket_nodes.items():
                keys = [key_of(nd) for nd in nodes]
                counts: dict[tuple[int, ...], int] = {}
                for k in keys:
                    counts[k] = counts.get(k, 0) + 1
                plan = (
                    matcher.solve(counts, pair_weight, len, packing_num)
                    if len(nodes) > 1 and cfg.matching == "types"
                    else []
                )
                partner: dict[int, int] = {}
                if cfg.matching == "reference" and len(nodes) > 1:
                    partner = reference_partners(nodes)
                if plan:
                    by_type: dict[tuple[int, ...], list[int]] = {}
                    for p, k in enumerate(keys):
                        by_type.setdefault(k, []).append(p)
                    for a, b, cnt in plan:
                        la, lb = by_type[a], by_type[b]
                        for _ in range(cnt):
                            if a == b:
                                u, v = la.pop(0), la.pop(0)
                            else:
                                u, v = la.pop(0), lb.pop(0)
                            partner[u], partner[v] = v, u
                for p in range(len(nodes)):
                    q = partner.get(p)
                    if q is None:
                        ready.append((g, nodes[p], None))
                    elif q < p:
                        ready.append((g, nodes[q], nodes[p]))
            new: dict[int, list[tuple[int, ...]]] = {g: [] for g in bucket_nodes}
            for g, first, second in ready:
                if second is None:
                    new[g].append(first)
                elif required <= total:
                    new[g].extend([first, second])
                else:
                    new[g].append(first + second)
                    required -= g
            bucket_nodes = new
            if required <= total:
                break
        return bucket_nodes

    def no_blossom(bucket_nodes, leaders, required):
        out: dict[int, list[tuple[int, ...]]] = {}
        for g, nodes in bucket_nodes.items():
            out[g] = []
            for i in range(leaders[g]):
                head = list(nodes[i * packing_num])
                for jn in range(1, packing_num):
                    p = jn + i * packing_num
                    if p >= len(nodes):
                        break
                    if required > total:
                        head.extend(nodes[p])
                        required -= g
                    else:
                        out[g].append(nodes[p])
                out[g].append(tuple(head))
        return out

    while ev < len(events) or order.size:
        if ev == len(events) and end_event is None:
            raise DdlschedError("the cluster is not large enough to run the remaining jobs")
        start_t = events[ev][0] if ev < len(events) else math.inf
        end_t = end_event[0] if end_event else math.inf
        starts = ends = None
        if (
            end_event is not None
            and ev < len(events)
            and math.isclose(end_t, start_t, abs_tol=1e-4)
        ):
            t, starts, ends = start_t, events[ev][1], end_event[1]
            ev += 1
        elif end_t < start_t:
            t, ends = end_t, end_event[1]
        else:
            t, starts = start_t, events[ev][1]
            ev += 1
        if ends:
            st.complete(t, ends)
            order = order[~st.done[order]]
        if starts is not None:
            st.arrive(starts)
            order = np.concatenate([order, starts])
            rem_gputime[starts] = st.duration[starts] * st.g[starts]
            exec_gputime[starts] = 0.0
        run = order[st.running[order]]
        st.progress(t, run)
        rem_gputime[run] = (st.rem[run] * st.it[run]) * st.g[run]
        if not know_duration:
            exec_gputime[run] = st.total_exec[run] * st.g[run]
        pend = order[~st.running[order]]
        st.last_check[pend] = t
        order = _stable_sort(order, rem_gputime if know_duration else exec_gputime)
        # candidates: every job that fits admits itself and the next packing_num-1 of its bucket
        gs = st.g[order]
        buckets = list(dict.fromkeys(gs.tolist()))
        bucket_members = {g: order[gs == g] for g in buckets}
        leader_pos = np.zeros(order.size, dtype=bool)
        pos_in_bucket = np.zeros(order.size, dtype=np.int64)
        for g in buckets:
            where = np.flatnonzero(gs == g)
            pos_in_bucket[where] = np.arange(where.size)
            leader_pos[where[::packing_num]] = True
        lead_idx = np.flatnonzero(leader_pos)
        free = [st.gpn] * st.nodes
        leaders = dict.fromkeys(buckets, 0)
        failed: set[int] = set()
        for p in lead_idx.tolist():
            g = int(gs[p])
            if g in failed:
                continue
            if st.yarn(free, g):
                leaders[g] += 1
            else:
                failed.add(g)
                if len(failed) == len(buckets):
                    break
        bucket_nodes = {
            g: [
                (int(j),)
                for j in bucket_members[g][: min(leaders[g] * packing_num, bucket_members[g].size)]
            ]
            for g in buckets
        }
        required = sum(g * len(v) for g, v in bucket_nodes.items())
        if cfg.blossom:
            packings = group(bucket_nodes, required)
        else:
            packings = no_blossom(bucket_nodes, leaders, required)
        if cfg.autopack:
            packings = _autopack(st, packings, periods, order)
        # placement by GPU count, descending; group members share their GPUs
        order = order[np.argsort(-st.g[order], kind="stable")]
        member_of: dict[int, tuple[int, ...]] = {}
        for nodes in packings.values():
            for nd in nodes:
                for j in nd:
                    member_of[j] = nd
        is_member = np.zeros(st.n, dtype=bool)
        if member_of:
            is_member[np.fromiter(member_of, dtype=np.int64)] = True
        free = [st.gpn] * st.nodes
        placed_groups: set[tuple[int, ...]] = set()
        new_running = np.zeros(st.n, dtype=bool)
        busy = 0
        for j in order[is_member[order]].tolist():
            nd = member_of[j]
            g = int(st.g[j])
            st.it_cur[j] = periods.period(node_types(nd))
            st.overhead[j] = group_overhead(nd, g) if cfg.start_overhead else 0.0
            if nd in placed_groups:
                new_running[j] = True
            elif st.yarn(free, g):
                placed_groups.add(nd)
                new_running[j] = True
                busy += g
        newly = np.flatnonzero(new_running & ~st.running)
        st.start[newly[st.start[newly] == _MAXSIZE]] = t
        st.running[order] = new_running[order]
        run = order[st.running[order]]
        st.record(t, busy)
        end_event = _earliest_end_group(run, t + st.rem[run] * st.it_cur[run])


def _autopack(st: _State, packings, periods: _Periods, order: np.ndarray):
    """Split every group whose period exceeds its members' summed solo times; keep the fitting ones."""
    rank = np.empty(st.n, dtype=np.int64)
    rank[order] = np.arange(order.size)
    items = []
    for g, nodes in packings.items():
        for nd in nodes:
            types = tuple(int(st.type_of[j]) for j in nd)
            if len(nd) > 1 and periods.period(types) / float(sum(st.it[list(nd)])) > 1:
                items.extend((g, (j,), rank[j]) for j in nd)
            else:
                items.append((g, nd, min(rank[j] for j in nd)))
    items.sort(key=lambda e: e[2])
    free = [st.gpn] * st.nodes
    out: dict[int, list[tuple[int, ...]]] = {}
    for g, nd, _ in items:
        if st.yarn(free, g):
            out.setdefault(g, []).append(nd)
    return out


# --------------------------------------------------------------------------- entry point


def simulate(trace: MuriTrace, policy: str, config: SimConfig | None = None) -> SimMetrics:
    """Run ``policy`` on ``trace`` and return its metrics (see the module docstring)."""
    if policy not in POLICIES:
        raise UnknownMethodError(f"unknown policy {policy!r} (choose from {', '.join(POLICIES)})")
    config = config or SimConfig()
    started = time.perf_counter()
    st = _State(trace, config)
    if policy in ("srtf", "srsf"):
        _run_shortest(st, gputime=policy == "srsf")
    elif policy == "tiresias":
        _run_tiresias(st)
    elif policy == "antman":
        _run_antman(st)
    elif policy == "themis":
        _run_themis(st)
    else:
        _run_muri(st, know_duration=policy == "muri-s")
    runtime = time.perf_counter() - started
    metrics = st.metrics(trace, policy, runtime)
    log.info(
        "%s on %s: avg JCT %.6g s, makespan %.6g s, p99 %.6g s (%d events, %.2f s)",
        policy,
        trace.name,
        metrics.average_jct_s,
        metrics.makespan_s,
        metrics.p99_jct_s,
        metrics.events,
        runtime,
    )
    return metrics
