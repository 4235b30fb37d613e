"""Family ``dmlrs``: the DMLRS instance, its rate model (Eq. 3, Fact 1), schedules and evaluator.

Paper: Yu, Liu, Wu, Ji, Bentley, "Toward Efficient Online Scheduling for
Distributed Machine Learning Systems", IEEE TNSE 2022 (reading notes, seed
002); spec ``shared/specs/dmlrs.md``, which fixes what the notes lack.
Equation numbers are the paper's.

Instance. Machines ``h = 0..H-1`` with capacity ``C[h, r]`` of each named
resource ``r`` (the same in every slot); slots ``t = 1..T`` of ``slot_s``
seconds; bandwidths ``b_int >= b_ext > 0`` (bytes/s). Job ``i`` arrives in
slot ``a_i``, needs ``V_i = E_i K_i`` samples, has gradient size ``g_i``,
time per sample ``tau_i``, worker:PS ratio ``gamma_i``, global batch
``F_i`` (also the worker cap, Eq. 4), per-worker and per-PS demands
``alpha[i, r]``, ``beta[i, r]`` and the sigmoid utility ``u_i(d) = theta1 /
(1 + exp(theta2 (d - theta3)))`` of its delay ``d`` in slots.

Rate model (Eq. 3 and Fact 1, spec "Rate model"):

* a worker of job ``i`` at bottleneck bandwidth ``b`` spends
  ``pi_i(b) = tau_i + 2 g_i gamma_i / (F_i b)`` seconds per sample
  (:func:`per_sample_time`);
* in slot ``t`` the job processes ``slot_s sum_h w[i, h, t] / pi_i(b_i[t])``
  samples, ``b_i[t] = b_int`` exactly when all of its workers and PSs of the
  slot sit on one machine, else ``b_ext`` (:func:`samples_in_slot`);
* ``D_i(v, b) = ceil(v pi_i(b) / slot_s)`` workers process ``v`` samples in
  one slot (:func:`workers_needed`);
* PS rule (ours: the notes define ``gamma_i`` by an equality integral counts
  rarely allow): ``sum_h s >= ceil(sum_h w / gamma_i)`` whenever the job has
  workers in the slot (:func:`ps_needed`); the rate uses ``gamma_i``.

Evaluator (Eqs. 3-7, :func:`evaluate`, the one place that computes total
utility): a schedule is the accepted set, the unfinished set (online
baselines without admission control) and sparse ``(job, slot, machine,
workers, ps)`` entries. Every constraint is checked: no allocation before
``a_i`` (Eq. 7), at most ``F_i`` workers (Eq. 4), the PS rule, capacities
per machine, resource and slot (Eq. 5), an accepted job processes at least
``V_i`` samples (Eq. 3; relative tolerance :data:`SAMPLE_RTOL`) and
completes in the last slot in which it has workers (Eq. 6), a job in
neither set has no allocation. The objective (maximised) is ``sum_{i
accepted} u_i(t~_i - a_i)``: a job finishing in its arrival slot has delay
0. Unfinished jobs earn 0; a job marked unfinished that does process its
``V_i`` samples is a mislabelled schedule and refused. The median training
time (Fig. 10) is ``(t~_i - a_i + 1) slot_s`` over completed jobs.

An empty job list is a valid instance (ours: an online system may see no
arrival in a window): its only schedule is empty, with total utility 0,
and every method returns it (the heuristics and ``exact`` that schedule,
the bounds 0).

Numeric ranges (ours; :func:`check_ranges`, run on every instance before
any method): what the evaluator's floating point, the MILPs (HiGHS drops
coefficients below 1e-9 and treats 1e20 as infinite) and PD-ORS's integer
loops hold. An instance outside them is refused with one line naming the
job, the quantity and the range:

=====================================  ==================================
``W_i(b) = V_i pi_i(b) / slot_s``       worker-slots job ``i`` needs, in
(``b = b_int`` and ``b_ext``)           ``[1e-4, 1e9]`` (:data:`WORKER_SLOTS`;
                                        the MILP's rate row has ``1 / W``: a
                                        rate of 1e8 let 1e-8 worker, inside
                                        HiGHS's integrality tolerance, finish
                                        a job; the presets have 0.05-42,000)
``V_i = E_i K_i``                        ``<= 1e15`` samples (exact in a float)
``gamma_i``                              ``<= 10,000`` (:data:`MAX_GAMMA`: the
                                        PS row's ``1 / gamma`` stays above
                                        the MILP's integrality tolerance)
``F_i``                                  ``<= 1,000,000`` workers
                                        (:data:`MAX_WORKERS`)
capacities ``C[h, r]``                   ``[1e-6, 1e9]`` (:data:`MIN_CAPACITY`,
                                        :data:`MAX_CAPACITY`)
demands ``alpha[i, r]``, ``beta[i, r]``  0 or ``[1e-6, 1e6]`` (:data:`DEMAND_RANGE`)
``theta1``                               ``(0, 1e9]`` (sums of 100,000 stay exact
                                        to 1e-6)
``theta2``, ``|theta3|``                 ``<= 1e9``
=====================================  ==================================

``pi_i(b)`` itself must be finite (a gradient of 1e308 bytes overflows it).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import chain
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from ddlsched.errors import InfeasibleScheduleError, InvalidInstanceError
from ddlsched.jsonio import (
    check_fields,
    check_header,
    load_instance,
    read_meta,
    read_names,
    require_int,
    require_number,
    write_json,
)

__all__ = [
    "DEFAULT_RESOURCES",
    "DEMAND_RANGE",
    "MAX_CAPACITY",
    "MAX_GAMMA",
    "MAX_JOBS",
    "MAX_MACHINES",
    "MAX_SLOTS",
    "MAX_WORKERS",
    "MAX_WORKLOAD",
    "MIN_CAPACITY",
    "SAMPLE_RTOL",
    "WORKER_SLOTS",
    "Allocation",
    "DmlrsEvaluation",
    "DmlrsInstance",
    "DmlrsJob",
    "DmlrsSchedule",
    "Utility",
    "check_ranges",
    "evaluate",
    "fastest_slots",
    "per_sample_time",
    "ps_needed",
    "samples_in_slot",
    "schedule_from_counts",
    "schedule_from_json",
    "schedule_to_json",
    "workers_needed",
]

SCHEMA_VERSION = 1
DEFAULT_RESOURCES = ("gpu", "cpu", "mem_gb", "storage_gb")
#: Relative slack on the samples an accepted job must process (Eq. 3): floating point only.
SAMPLE_RTOL = 1e-9
#: Relative slack on capacities (Eq. 5): floating point only.
CAPACITY_RTOL = 1e-9
#: Size caps: beyond them no method of the family can hold the instance in memory.
MAX_JOBS = 100_000
MAX_MACHINES = 100_000
MAX_SLOTS = 100_000
#: Numeric ranges (module docstring, "Numeric ranges").
WORKER_SLOTS = (1e-4, 1e9)
MAX_WORKLOAD = 10**15
MAX_GAMMA = 10_000
MAX_WORKERS = 1_000_000
MAX_CAPACITY = 1e9
MIN_CAPACITY = 1e-6
DEMAND_RANGE = (1e-6, 1e6)
MAX_THETA = 1e9


# --------------------------------------------------------------------------- instance


@dataclass(frozen=True)
class Utility:
    """The sigmoid utility ``u(d) = theta1 / (1 + exp(theta2 (d - theta3)))`` of a delay ``d``."""

    theta1: float
    theta2: float
    theta3: float

    def __call__(self, delay: float) -> float:
        z = self.theta2 * (delay - self.theta3)
        if z > 700.0:  # exp overflows; the utility is 0 to double precision
            return 0.0
        return self.theta1 / (1.0 + math.exp(z))


@dataclass(frozen=True)
class DmlrsJob:
    """One training job (spec "Instance"); demands are per resource, in instance order."""

    arrival_slot: int
    epochs: int
    samples: int
    grad_bytes: float
    tau_s: float
    gamma: int
    global_batch: int
    worker: tuple[float, ...]
    ps: tuple[float, ...]
    utility: Utility

    @property
    def workload(self) -> int:
        """``V_i = E_i K_i`` samples."""
        return self.epochs * self.samples


@dataclass(frozen=True)
class DmlrsInstance:
    """A DMLRS instance (spec "Instance" and "File format"); validated on construction.

    ``capacity[h]`` is machine ``h``'s capacity per resource of ``resources``.
    ``meta`` (optional ``"meta"`` object of the file, not part of the problem)
    holds what a generator recorded: preset, seed, the share of jobs that
    cannot finish by ``T`` even alone.
    """

    slots: int
    slot_s: float
    b_int: float
    b_ext: float
    resources: tuple[str, ...]
    capacity: tuple[tuple[float, ...], ...]
    jobs: tuple[DmlrsJob, ...]
    meta: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)

    family: ClassVar[str] = "dmlrs"

    def __post_init__(self) -> None:
        _validate(self)

    # ---- sizes and arrays

    @property
    def num_machines(self) -> int:
        return len(self.capacity)

    @property
    def size(self) -> int:
        """The instance size reported by the benchmark platform: the number of jobs."""
        return len(self.jobs)

    @cached_property
    def cap(self) -> np.ndarray:
        """``C[h, r]`` as an ``(H, R)`` array."""
        return np.asarray(self.capacity, dtype=float).reshape(len(self.capacity), -1)

    @cached_property
    def alpha(self) -> np.ndarray:
        """Per-worker demands ``alpha[i, r]``, ``(n, R)``."""
        shape = (len(self.jobs), len(self.resources))
        return np.asarray([j.worker for j in self.jobs], dtype=float).reshape(shape)

    @cached_property
    def beta(self) -> np.ndarray:
        """Per-PS demands ``beta[i, r]``, ``(n, R)``."""
        shape = (len(self.jobs), len(self.resources))
        return np.asarray([j.ps for j in self.jobs], dtype=float).reshape(shape)

    @cached_property
    def identical_machines(self) -> bool:
        return len(set(self.capacity)) <= 1

    # ---- JSON

    def to_dict(self) -> dict[str, Any]:
        if self.identical_machines:
            machines: Any = {"count": self.num_machines, "capacity": list(self.capacity[0])}
        else:
            machines = [{"capacity": list(c)} for c in self.capacity]
        out = {
            "family": "dmlrs",
            "schema_version": SCHEMA_VERSION,
            "slots": self.slots,
            "slot_s": self.slot_s,
            "b_int": self.b_int,
            "b_ext": self.b_ext,
            "resources": list(self.resources),
            "machines": machines,
            "jobs": [
                {
                    "arrival_slot": j.arrival_slot,
                    "epochs": j.epochs,
                    "samples": j.samples,
                    "grad_bytes": j.grad_bytes,
                    "tau_s": j.tau_s,
                    "gamma": j.gamma,
                    "global_batch": j.global_batch,
                    "worker": list(j.worker),
                    "ps": list(j.ps),
                    "utility": {
                        "theta1": j.utility.theta1,
                        "theta2": j.utility.theta2,
                        "theta3": j.utility.theta3,
                    },
                }
                for j in self.jobs
            ],
        }
        if self.meta:
            out["meta"] = dict(self.meta)
        return out

    @classmethod
    def from_dict(cls, data: Any) -> DmlrsInstance:
        fields = ("slots", "slot_s", "b_int", "b_ext", "resources", "machines", "jobs")
        data = check_fields(data, "dmlrs", ("family", "schema_version", *fields), ("meta",))
        meta = read_meta(data)
        check_header(data, "dmlrs", SCHEMA_VERSION)
        resources = read_names(data["resources"], "resources")
        n_res = len(resources)
        capacity = _read_machines(data["machines"], n_res)
        jobs_data = data["jobs"]
        if not isinstance(jobs_data, list):
            raise InvalidInstanceError(f"jobs: expected a list, got {type(jobs_data).__name__}")
        if len(jobs_data) > MAX_JOBS:
            raise InvalidInstanceError(f"jobs: {len(jobs_data)} jobs, at most {MAX_JOBS}")
        scalars = {
            "slots": require_int(data["slots"], "slots", minimum=1),
            "slot_s": require_number(data["slot_s"], "slot_s", minimum=0.0, strict=True),
            "b_int": require_number(data["b_int"], "b_int", minimum=0.0, strict=True),
            "b_ext": require_number(data["b_ext"], "b_ext", minimum=0.0, strict=True),
        }
        jobs = _read_jobs_fast(jobs_data, n_res)
        if jobs is not None:
            try:
                return cls(**scalars, resources=resources, capacity=capacity, jobs=jobs, meta=meta)
            except InvalidInstanceError:
                pass  # read job by job below: a bad field gets the file reader's message
        jobs = tuple(_read_job(j, f"jobs[{i}]", n_res) for i, j in enumerate(jobs_data))
        return cls(**scalars, resources=resources, capacity=capacity, jobs=jobs, meta=meta)

    @classmethod
    def load(cls, path: str | Path) -> DmlrsInstance:
        return load_instance(cls.from_dict, path)

    def save(self, path: str | Path) -> None:
        write_json(path, self.to_dict())


def _demands(value: Any, where: str, n_res: int) -> tuple[float, ...]:
    if not isinstance(value, list) or len(value) != n_res:
        raise InvalidInstanceError(f"{where}: expected a list of {n_res} numbers, got {value!r}")
    return tuple(require_number(v, f"{where}[{k}]", minimum=0.0) for k, v in enumerate(value))


def _read_machines(data: Any, n_res: int) -> tuple[tuple[float, ...], ...]:
    if isinstance(data, Mapping):
        data = check_fields(data, "machines", ("count", "capacity"))
        count = require_int(data["count"], "machines.count", minimum=1)
        if count > MAX_MACHINES:
            raise InvalidInstanceError(f"machines.count: {count}, at most {MAX_MACHINES}")
        cap = _demands(data["capacity"], "machines.capacity", n_res)
        return (cap,) * count
    if not isinstance(data, list) or not data:
        raise InvalidInstanceError(
            f"machines: expected a non-empty list or {{'count', 'capacity'}}, got {data!r}"
        )
    if len(data) > MAX_MACHINES:
        raise InvalidInstanceError(f"machines: {len(data)} machines, at most {MAX_MACHINES}")
    out = []
    for h, machine in enumerate(data):
        machine = check_fields(machine, f"machines[{h}]", ("capacity",))
        out.append(_demands(machine["capacity"], f"machines[{h}].capacity", n_res))
    return tuple(out)


_JOB_FIELDS = frozenset(
    (
        "arrival_slot", "epochs", "samples", "grad_bytes", "tau_s", "gamma", "global_batch",
        "worker", "ps", "utility",
    )
)  # fmt: skip
_UTILITY_FIELDS = frozenset(("theta1", "theta2", "theta3"))
_INT_FIELDS = ("arrival_slot", "epochs", "samples", "gamma", "global_batch")


_NUMBER_TYPES = frozenset((int, float))


def _is_number(value: Any) -> bool:
    return type(value) in _NUMBER_TYPES


def _types(values: Iterable[Any]) -> set[type]:
    """The set of the exact types of ``values`` (one C-level pass)."""
    return set(map(type, values))


class _TypedJobs(tuple):
    """The jobs :func:`_read_jobs_fast` built: every count an ``int``, every number a
    ``float`` (so :func:`_jobs_look_valid` checks only their values). Equal to the plain
    tuple of the same jobs; :func:`dataclasses.replace` with a plain tuple gets every check."""

    __slots__ = ()


def _frozen(cls: type, fields: dict[str, Any]) -> Any:
    """An instance of the frozen dataclass ``cls`` without its ``__init__`` (one
    ``object.__setattr__`` per field: 5x slower on 100,000 jobs); the values are checked
    by :func:`_validate` as for any instance."""
    made = object.__new__(cls)
    made.__dict__.update(fields)
    return made


def _float_tuple(values: list[Any]) -> tuple[float, ...]:
    return tuple(map(float, values))


def _read_jobs_fast(data: list[Any], n_res: int) -> tuple[DmlrsJob, ...] | None:
    """The jobs of a file in one pass of type checks (no per-field calls), or ``None``
    when anything is off; :func:`_read_job` then finds and names it. The values are
    range-checked by :func:`_validate`, as for an instance built in code (100,000 jobs:
    0.4 s instead of 2.5 s)."""
    try:
        if not all(
            j.keys() == _JOB_FIELDS and j["utility"].keys() == _UTILITY_FIELDS for j in data
        ):
            return None
    except AttributeError:  # a job or a utility that is not an object
        return None
    if not _types(j[f] for j in data for f in _INT_FIELDS) <= {int}:
        return None
    if not _types(j[f] for j in data for f in ("grad_bytes", "tau_s")) <= _NUMBER_TYPES:
        return None
    if not _types(chain.from_iterable(j["utility"].values() for j in data)) <= _NUMBER_TYPES:
        return None
    demands = [j["worker"] for j in data] + [j["ps"] for j in data]
    if _types(demands) - {list} or any(len(d) != n_res for d in demands):
        return None
    demand_types = _types(chain.from_iterable(demands))
    if not demand_types <= _NUMBER_TYPES:
        return None
    # demands written as floats (the usual case) need no conversion: 40 % of the time
    demand_tuple = tuple if demand_types <= {float} else _float_tuple
    return _TypedJobs(
        _frozen(
            DmlrsJob,
            {
                "arrival_slot": j["arrival_slot"],
                "epochs": j["epochs"],
                "samples": j["samples"],
                "grad_bytes": float(j["grad_bytes"]),
                "tau_s": float(j["tau_s"]),
                "gamma": j["gamma"],
                "global_batch": j["global_batch"],
                "worker": demand_tuple(j["worker"]),
                "ps": demand_tuple(j["ps"]),
                "utility": _frozen(
                    Utility,
                    {
                        "theta1": float(j["utility"]["theta1"]),
                        "theta2": float(j["utility"]["theta2"]),
                        "theta3": float(j["utility"]["theta3"]),
                    },
                ),
            },
        )
        for j in data
    )


def _read_job(data: Any, where: str, n_res: int) -> DmlrsJob:
    fields = (
        "arrival_slot",
        "epochs",
        "samples",
        "grad_bytes",
        "tau_s",
        "gamma",
        "global_batch",
        "worker",
        "ps",
        "utility",
    )
    data = check_fields(data, where, fields)
    util = check_fields(data["utility"], f"{where}.utility", ("theta1", "theta2", "theta3"))
    return DmlrsJob(
        arrival_slot=require_int(data["arrival_slot"], f"{where}.arrival_slot", minimum=1),
        epochs=require_int(data["epochs"], f"{where}.epochs", minimum=1),
        samples=require_int(data["samples"], f"{where}.samples", minimum=1),
        grad_bytes=require_number(
            data["grad_bytes"], f"{where}.grad_bytes", minimum=0.0, strict=True
        ),
        tau_s=require_number(data["tau_s"], f"{where}.tau_s", minimum=0.0, strict=True),
        gamma=require_int(data["gamma"], f"{where}.gamma", minimum=1),
        global_batch=require_int(data["global_batch"], f"{where}.global_batch", minimum=1),
        worker=_demands(data["worker"], f"{where}.worker", n_res),
        ps=_demands(data["ps"], f"{where}.ps", n_res),
        utility=Utility(
            theta1=require_number(
                util["theta1"], f"{where}.utility.theta1", minimum=0, strict=True
            ),
            theta2=require_number(
                util["theta2"], f"{where}.utility.theta2", minimum=0, strict=True
            ),
            theta3=require_number(util["theta3"], f"{where}.utility.theta3"),
        ),
    )


def _positive(value: Any, where: str, integer: bool = False) -> None:
    ok = not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)
    if integer:
        ok = ok and isinstance(value, int)
    if not ok or value <= 0:
        kind = "a positive integer" if integer else "a positive finite number"
        raise InvalidInstanceError(f"{where}: must be {kind}, got {value!r}")


def _validate(inst: DmlrsInstance) -> None:
    _positive(inst.slots, "slots", integer=True)
    if inst.slots > MAX_SLOTS:
        raise InvalidInstanceError(f"slots: {inst.slots}, at most {MAX_SLOTS}")
    for name in ("slot_s", "b_int", "b_ext"):
        _positive(getattr(inst, name), name)
    if inst.b_int < inst.b_ext:
        raise InvalidInstanceError(
            f"b_int ({inst.b_int!r}) must be >= b_ext ({inst.b_ext!r}): "
            "the bus is never slower than the link"
        )
    n_res = len(inst.resources)
    if n_res == 0:
        raise InvalidInstanceError("resources: at least one resource")
    if not inst.capacity:
        raise InvalidInstanceError("machines: at least one machine")
    if len(inst.capacity) > MAX_MACHINES:
        raise InvalidInstanceError(f"machines: {len(inst.capacity)}, at most {MAX_MACHINES}")
    if len(inst.jobs) > MAX_JOBS:
        raise InvalidInstanceError(f"jobs: {len(inst.jobs)} jobs, at most {MAX_JOBS}")
    if not _capacities_look_valid(inst):
        _validate_capacities(inst)
    rows = _job_rows(inst.jobs)
    if not _jobs_look_valid(inst, rows):
        _validate_jobs(inst)
    check_ranges(inst, rows)


def _capacities_look_valid(inst: DmlrsInstance) -> bool:
    """A bulk check that implies :func:`_validate_capacities` passes (``False``: run it)."""
    n_res = len(inst.resources)
    distinct = set(inst.capacity)  # identical machines (the common case) are checked once
    if not all(len(cap) == n_res and all(_is_number(c) for c in cap) for cap in distinct):
        return False
    values = np.asarray(list(distinct), dtype=float)
    return bool(np.isfinite(values).all() and (values > 0).all())


def _validate_capacities(inst: DmlrsInstance) -> None:
    n_res = len(inst.resources)
    for h, cap in enumerate(inst.capacity):
        if len(cap) != n_res:
            raise InvalidInstanceError(f"machines[{h}].capacity: expected {n_res} values")
        for r, c in enumerate(cap):
            _positive(c, f"machines[{h}].capacity[{r}] ({inst.resources[r]})")


#: Columns of :func:`_job_table`: the counts, then the numbers of every job.
_TABLE = ("arrival_slot", "epochs", "samples", "gamma", "global_batch", "tau_s", "grad_bytes",
          "theta1", "theta2", "theta3")  # fmt: skip


def _job_rows(jobs: Sequence[DmlrsJob]) -> list[tuple[Any, ...]]:
    """The :data:`_TABLE` values of every job, as Python objects (one pass)."""
    return [
        (j.arrival_slot, j.epochs, j.samples, j.gamma, j.global_batch, j.tau_s, j.grad_bytes,
         *astuple_utility(j.utility))
        for j in jobs
    ]  # fmt: skip


def _jobs_look_valid(inst: DmlrsInstance, rows: list[tuple[Any, ...]]) -> bool:
    """A bulk check that implies :func:`_validate_jobs` passes (``False``: run it, it names
    the first problem). Strict types (``int``, ``float``): anything else takes the slow path.
    ``rows`` is :func:`_job_rows`."""
    jobs, n_res = inst.jobs, len(inst.resources)
    if not jobs:
        return True
    if not isinstance(jobs, _TypedJobs):  # the file reader checked these types already
        if not _types(chain.from_iterable(r[:5] for r in rows)) <= {int}:
            return False
        if not _types(chain.from_iterable(r[5:] for r in rows)) <= _NUMBER_TYPES:
            return False
        if any(len(j.worker) != n_res or len(j.ps) != n_res for j in jobs):
            return False
        if not _types(chain.from_iterable((*j.worker, *j.ps) for j in jobs)) <= _NUMBER_TYPES:
            return False
    if min(min(r[:5]) for r in rows) < 1 or max(r[0] for r in rows) > inst.slots:
        return False
    values = np.asarray([r[5:] for r in rows], dtype=float)
    demand = np.concatenate([inst.alpha, inst.beta], axis=1)
    return bool(
        np.isfinite(values).all()
        and (values[:, :4] > 0).all()  # tau, grad, theta1, theta2
        and np.isfinite(demand).all()
        and (demand >= 0).all()
        and ((inst.alpha + inst.beta) > 0).any(axis=1).all()
    )


def astuple_utility(utility: Utility) -> tuple[float, float, float]:
    """``(theta1, theta2, theta3)``."""
    return utility.theta1, utility.theta2, utility.theta3


def _validate_jobs(inst: DmlrsInstance) -> None:
    n_res = len(inst.resources)
    for i, job in enumerate(inst.jobs):
        where = f"jobs[{i}]"
        if not (
            isinstance(job.arrival_slot, int)
            and not isinstance(job.arrival_slot, bool)
            and 1 <= job.arrival_slot <= inst.slots
        ):
            raise InvalidInstanceError(
                f"{where}.arrival_slot: must be in 1..{inst.slots} (slots), got {job.arrival_slot!r}"
            )
        for name in ("epochs", "samples", "gamma", "global_batch"):
            _positive(getattr(job, name), f"{where}.{name}", integer=True)
        _positive(job.tau_s, f"{where}.tau_s")
        _positive(job.grad_bytes, f"{where}.grad_bytes")
        for kind in ("worker", "ps"):
            demand = getattr(job, kind)
            if len(demand) != n_res:
                raise InvalidInstanceError(f"{where}.{kind}: expected {n_res} values")
            for r, v in enumerate(demand):
                if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                    raise InvalidInstanceError(f"{where}.{kind}[{r}]: not a finite number: {v!r}")
                if v < 0:
                    raise InvalidInstanceError(f"{where}.{kind}[{r}]: must be >= 0, got {v!r}")
        if all(a + b == 0 for a, b in zip(job.worker, job.ps, strict=True)):
            raise InvalidInstanceError(f"{where}: uses no resource at all (worker and ps all 0)")
        _positive(job.utility.theta1, f"{where}.utility.theta1")
        _positive(job.utility.theta2, f"{where}.utility.theta2")
        t3 = job.utility.theta3
        if isinstance(t3, bool) or not isinstance(t3, (int, float)) or not math.isfinite(t3):
            raise InvalidInstanceError(f"{where}.utility.theta3: not a finite number: {t3!r}")


def _outside(values: np.ndarray, low: float, high: float) -> int | None:
    """The first index of ``values`` outside ``[low, high]`` (NaN included), else ``None``."""
    bad = ~((values >= low) & (values <= high))
    return int(np.argmax(bad)) if bad.any() else None


def _range_error(where: str, what: str, value: float, low: float, high: float) -> Exception:
    return InvalidInstanceError(
        f"{where}: {what} = {value:.6g} is outside [{low:g}, {high:g}], the range the "
        "evaluator and the solvers hold (ddlsched.problems.dmlrs, 'Numeric ranges')"
    )


def check_ranges(inst: DmlrsInstance, rows: list[tuple[Any, ...]] | None = None) -> None:
    """Refuse an instance outside the numeric ranges of the module docstring (one line
    naming the job or machine, the quantity and its range). Vectorised: 100,000 jobs in
    about 0.1 s. ``rows``: :func:`_job_rows` of the instance, if already made."""
    cap = inst.cap
    bad_cells = ~((cap >= MIN_CAPACITY) & (cap <= MAX_CAPACITY))
    if bad_cells.any():
        h, r = (int(x) for x in np.argwhere(bad_cells)[0])
        raise _range_error(
            f"machines[{h}].capacity[{r}]", "capacity", cap[h, r], MIN_CAPACITY, MAX_CAPACITY
        )
    if not inst.jobs:
        return
    low, high = DEMAND_RANGE
    for kind, demand in (("worker", inst.alpha), ("ps", inst.beta)):
        shown = np.where(demand == 0, low, demand)  # 0 is allowed
        bad_cells = ~((shown >= low) & (shown <= high))
        if bad_cells.any():
            i, r = (int(x) for x in np.argwhere(bad_cells)[0])
            raise _range_error(f"jobs[{i}].{kind}[{r}]", "demand (0 or)", demand[i, r], low, high)
    table = np.asarray(_job_rows(inst.jobs) if rows is None else rows, dtype=float)
    column = {name: table[:, k] for k, name in enumerate(_TABLE)}
    for name, most in (("gamma", MAX_GAMMA), ("global_batch", MAX_WORKERS)):
        bad = _outside(column[name], 1, most)
        if bad is not None:
            raise _range_error(f"jobs[{bad}]", name, column[name][bad], 1, most)
    V = column["epochs"] * column["samples"]
    bad = _outside(V, 1, MAX_WORKLOAD)
    if bad is not None:
        raise _range_error(f"jobs[{bad}]", "V_i = E_i K_i", V[bad], 1, MAX_WORKLOAD)
    for name in ("theta1", "theta2", "theta3"):
        values = np.abs(column[name])
        bad = _outside(values, 0.0, MAX_THETA)
        if bad is not None:
            shown = name if name != "theta3" else "|theta3|"
            raise _range_error(f"jobs[{bad}].utility", shown, values[bad], 0.0, MAX_THETA)
    with np.errstate(over="ignore", invalid="ignore"):
        comm = 2.0 * column["grad_bytes"] * column["gamma"] / column["global_batch"]
    tau = column["tau_s"]
    low, high = WORKER_SLOTS
    for name, bandwidth in (("b_int", inst.b_int), ("b_ext", inst.b_ext)):
        with np.errstate(over="ignore", invalid="ignore"):
            worker_slots = V * (tau + comm / bandwidth) / inst.slot_s
        bad = _outside(worker_slots, low, high)
        if bad is not None:
            raise _range_error(
                f"jobs[{bad}]",
                f"worker-slots V_i pi_i({name}) / slot_s",
                worker_slots[bad],
                low,
                high,
            )


# --------------------------------------------------------------------------- rate model


def per_sample_time(job: DmlrsJob, bandwidth: float) -> float:
    """``pi_i(b) = tau_i + 2 g_i gamma_i / (F_i b)``: seconds per sample of one worker (Eq. 3)."""
    return job.tau_s + 2.0 * job.grad_bytes * job.gamma / (job.global_batch * bandwidth)


def samples_in_slot(job: DmlrsJob, workers: int, bandwidth: float, slot_s: float) -> float:
    """Samples ``workers`` workers process in one slot at bandwidth ``bandwidth`` (Eq. 3)."""
    return slot_s * workers / per_sample_time(job, bandwidth)


def workers_needed(job: DmlrsJob, samples: float, bandwidth: float, slot_s: float) -> int:
    """``D_i(v, b) = ceil(v pi_i(b) / slot_s)`` (floating-point noise below 1e-9 ignored)."""
    if samples <= 0:
        return 0
    x = samples * per_sample_time(job, bandwidth) / slot_s
    return max(1, math.ceil(x * (1.0 - SAMPLE_RTOL)))


def ps_needed(job: DmlrsJob, workers: int) -> int:
    """The PS rule: ``ceil(workers / gamma_i)`` parameter servers (0 without workers)."""
    return -(-workers // job.gamma) if workers > 0 else 0


def fastest_slots(instance: DmlrsInstance, i: int) -> int:
    """``d_min_i = ceil(V_i pi_i(b_int) / (F_i slot_s))``: the fewest slots job ``i`` can take.

    All ``F_i`` workers at internal bandwidth, whatever the capacities (spec,
    ``U^r``); a lower bound on the slots of every schedule of the job.
    """
    job = instance.jobs[i]
    per_slot = samples_in_slot(job, job.global_batch, instance.b_int, instance.slot_s)
    return max(1, math.ceil(job.workload / per_slot * (1.0 - SAMPLE_RTOL)))


# --------------------------------------------------------------------------- schedule


@dataclass(frozen=True, order=True)
class Allocation:
    """``workers`` workers and ``ps`` parameter servers of ``job`` on ``machine`` in ``slot``."""

    job: int
    slot: int
    machine: int
    workers: int
    ps: int


@dataclass(frozen=True)
class DmlrsSchedule:
    """Accepted jobs, jobs left unfinished at ``T`` (earning 0) and sparse allocations.

    A job in neither set is rejected and has no allocation.
    """

    accepted: tuple[int, ...]
    unfinished: tuple[int, ...] = ()
    alloc: tuple[Allocation, ...] = ()
    info: Mapping[str, Any] = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class DmlrsEvaluation:
    """What the evaluator computed for a schedule (objective: ``total_utility``)."""

    total_utility: float
    accepted: int
    completed: int
    unfinished: int
    rejected: int
    completion_slot: dict[int, int]
    job_utility: dict[int, float]
    samples: dict[int, float]
    utilisation: dict[str, float]
    median_training_time_s: float | None
    internal_share: float | None  # share of job-slots with workers run at b_int

    def summary(self) -> dict[str, Any]:
        """The headline metrics copied into every result's ``info``."""
        out: dict[str, Any] = {
            "total_utility": self.total_utility,
            "accepted": self.accepted,
            "completed": self.completed,
            "unfinished": self.unfinished,
            "rejected": self.rejected,
            "median_training_time_s": self.median_training_time_s,
            "internal_share": self.internal_share,
        }
        for r, value in self.utilisation.items():
            out[f"utilisation_{r}"] = value
        return out


def _fail(message: str, **details: Any) -> InfeasibleScheduleError:
    exc = InfeasibleScheduleError(f"dmlrs: {message}")
    exc.details = details  # type: ignore[attr-defined]
    return exc


def _check_index(value: Any, where: str, low: int, high: int) -> int:
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, np.integer))
        or not low <= value <= high
    ):
        raise _fail(f"{where} must be an integer in {low}..{high}, got {value!r}", failure="index")
    return int(value)


def evaluate(instance: DmlrsInstance, schedule: DmlrsSchedule) -> DmlrsEvaluation:
    """Check every constraint of DMLRS (Eqs. 3-7) and compute the objective (module docstring).

    Raises :class:`~ddlsched.errors.InfeasibleScheduleError` naming the job,
    machine, slot and resource of the first violation.
    """
    n, H, T = len(instance.jobs), instance.num_machines, instance.slots
    accepted = [_check_index(i, "accepted job", 0, n - 1) for i in schedule.accepted]
    unfinished = [_check_index(i, "unfinished job", 0, n - 1) for i in schedule.unfinished]
    if len(set(accepted)) != len(accepted) or len(set(unfinished)) != len(unfinished):
        raise _fail("a job is listed twice in accepted or unfinished", failure="duplicate")
    both = set(accepted) & set(unfinished)
    if both:
        raise _fail(f"job {min(both)} is both accepted and unfinished", failure="duplicate")
    active = set(accepted) | set(unfinished)

    per_slot: dict[tuple[int, int], list[Allocation]] = defaultdict(list)
    seen: set[tuple[int, int, int]] = set()
    for a in schedule.alloc:
        i = _check_index(a.job, "allocation job", 0, n - 1)
        t = _check_index(a.slot, f"job {i}: allocation slot", 1, T)
        h = _check_index(a.machine, f"job {i}, slot {t}: machine", 0, H - 1)
        for name, v in (("workers", a.workers), ("ps", a.ps)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
                raise _fail(
                    f"job {i}, machine {h}, slot {t}: {name} must be a non-negative integer, "
                    f"got {v!r}",
                    failure="count",
                    job=i,
                    machine=h,
                    slot=t,
                )
        if (i, t, h) in seen:
            raise _fail(
                f"job {i}, machine {h}, slot {t}: two allocation entries", failure="duplicate"
            )
        seen.add((i, t, h))
        if a.workers == 0 and a.ps == 0:
            continue
        if i not in active:
            raise _fail(
                f"job {i} is rejected (neither accepted nor unfinished) but has an allocation "
                f"on machine {h} in slot {t}",
                failure="rejected_allocation",
                job=i,
                machine=h,
                slot=t,
            )
        if t < instance.jobs[i].arrival_slot:
            raise _fail(
                f"job {i}, machine {h}, slot {t}: allocation before its arrival slot "
                f"{instance.jobs[i].arrival_slot} (Eq. 7)",
                failure="before_arrival",
                job=i,
                machine=h,
                slot=t,
            )
        per_slot[(i, t)].append(a)

    # capacities (Eq. 5), accumulated per (h, t)
    R = len(instance.resources)
    used: dict[tuple[int, int], np.ndarray] = defaultdict(lambda: np.zeros(R))
    alpha, beta, cap = instance.alpha, instance.beta, instance.cap
    samples = dict.fromkeys(active, 0.0)
    last_worker_slot: dict[int, int] = {}
    job_slots = internal_slots = 0
    for (i, t), entries in sorted(per_slot.items()):
        job = instance.jobs[i]
        workers = sum(int(a.workers) for a in entries)
        servers = sum(int(a.ps) for a in entries)
        if workers > job.global_batch:
            raise _fail(
                f"job {i}, slot {t}: {workers} workers, more than F_i = {job.global_batch} (Eq. 4)",
                failure="worker_cap",
                job=i,
                slot=t,
            )
        if servers < ps_needed(job, workers):
            raise _fail(
                f"job {i}, slot {t}: {servers} PSs for {workers} workers, the PS rule needs "
                f"ceil({workers} / gamma = {job.gamma}) = {ps_needed(job, workers)}",
                failure="ps_rule",
                job=i,
                slot=t,
            )
        for a in entries:
            used[(a.machine, t)] += alpha[i] * a.workers + beta[i] * a.ps
        if workers > 0:
            internal = len(entries) == 1  # Fact 1: workers and PSs all on one machine
            bandwidth = instance.b_int if internal else instance.b_ext
            samples[i] += samples_in_slot(job, workers, bandwidth, instance.slot_s)
            last_worker_slot[i] = t
            job_slots += 1
            internal_slots += internal
    total_used = np.zeros(R)
    for (h, t), load in sorted(used.items()):
        over = load - cap[h] * (1.0 + CAPACITY_RTOL) - 1e-9
        if (over > 0).any():
            r = int(np.argmax(over > 0))
            users = sorted(
                {i for (i, tt), es in per_slot.items() if tt == t for a in es if a.machine == h}
            )
            raise _fail(
                f"machine {h}, slot {t}, resource {instance.resources[r]!r}: use {load[r]:g} "
                f"exceeds capacity {cap[h, r]:g} (Eq. 5; jobs {users})",
                failure="capacity",
                machine=h,
                slot=t,
                resource=instance.resources[r],
                job=users[0] if users else None,
            )
        total_used += load

    completion: dict[int, int] = {}
    utilities: dict[int, float] = {}
    train_times = []
    for i in accepted:
        job = instance.jobs[i]
        if samples[i] < job.workload * (1.0 - SAMPLE_RTOL):
            raise _fail(
                f"job {i} is accepted but processes {samples[i]:.6g} of its V_i = "
                f"{job.workload} samples by slot {T} (Eq. 3)",
                failure="short_of_samples",
                job=i,
            )
        t_done = last_worker_slot[i]
        completion[i] = t_done
        utilities[i] = job.utility(t_done - job.arrival_slot)
        train_times.append((t_done - job.arrival_slot + 1) * instance.slot_s)
    for i in unfinished:
        if samples[i] >= instance.jobs[i].workload * (1.0 - SAMPLE_RTOL):
            raise _fail(
                f"job {i} is marked unfinished but processes all of its "
                f"{instance.jobs[i].workload} samples (list it as accepted)",
                failure="mislabelled",
                job=i,
            )
    total_cap = cap.sum(axis=0) * T
    utilisation = {r: float(total_used[k] / total_cap[k]) for k, r in enumerate(instance.resources)}
    return DmlrsEvaluation(
        total_utility=float(math.fsum(utilities[i] for i in sorted(utilities))),
        accepted=len(accepted),
        completed=len(accepted),
        unfinished=len(unfinished),
        rejected=n - len(active),
        completion_slot=completion,
        job_utility=utilities,
        samples={i: samples[i] for i in sorted(samples)},
        utilisation=utilisation,
        median_training_time_s=float(np.median(train_times)) if train_times else None,
        internal_share=internal_slots / job_slots if job_slots else None,
    )


# --------------------------------------------------------------------------- schedule JSON


def schedule_to_json(schedule: DmlrsSchedule, evaluation: DmlrsEvaluation | None = None) -> Any:
    """The spec's schedule JSON (plus completion slots and utilities when evaluated)."""
    out: dict[str, Any] = {
        "accepted": sorted(schedule.accepted),
        "unfinished": sorted(schedule.unfinished),
        "alloc": [
            {"job": a.job, "slot": a.slot, "machine": a.machine, "workers": a.workers, "ps": a.ps}
            for a in sorted(schedule.alloc)
        ],
    }
    if evaluation is not None:
        out["completion_slot"] = {str(i): t for i, t in sorted(evaluation.completion_slot.items())}
        out["job_utility"] = {str(i): u for i, u in sorted(evaluation.job_utility.items())}
    return out


def _int_list(value: Any, where: str) -> tuple[int, ...]:
    if not isinstance(value, list):
        raise InvalidInstanceError(f"{where}: expected a list of job indices, got {value!r}")
    return tuple(require_int(v, f"{where}[{k}]", minimum=0) for k, v in enumerate(value))


def schedule_from_json(data: Any) -> DmlrsSchedule:
    """Read the spec's schedule JSON (evaluation fields are ignored)."""
    data = check_fields(
        data, "schedule", ("accepted", "alloc"), ("unfinished", "completion_slot", "job_utility")
    )
    alloc_data = data["alloc"]
    if not isinstance(alloc_data, list):
        raise InvalidInstanceError(f"schedule.alloc: expected a list, got {alloc_data!r}")
    alloc = []
    for k, entry in enumerate(alloc_data):
        where = f"schedule.alloc[{k}]"
        entry = check_fields(entry, where, ("job", "slot", "machine", "workers", "ps"))
        alloc.append(
            Allocation(
                job=require_int(entry["job"], f"{where}.job", minimum=0),
                slot=require_int(entry["slot"], f"{where}.slot", minimum=1),
                machine=require_int(entry["machine"], f"{where}.machine", minimum=0),
                workers=require_int(entry["workers"], f"{where}.workers", minimum=0),
                ps=require_int(entry["ps"], f"{where}.ps", minimum=0),
            )
        )
    return DmlrsSchedule(
        accepted=_int_list(data["accepted"], "schedule.accepted"),
        unfinished=_int_list(data.get("unfinished", []), "schedule.unfinished"),
        alloc=tuple(alloc),
    )


def schedule_from_counts(
    accepted: Sequence[int],
    entries: Sequence[tuple[int, int, int, int, int]],
    unfinished: Sequence[int] = (),
) -> DmlrsSchedule:
    """A schedule from ``(job, slot, machine, workers, ps)`` tuples (zero entries dropped)."""
    alloc = tuple(
        sorted(
            Allocation(int(i), int(t), int(h), int(w), int(s))
            for i, t, h, w, s in entries
            if w > 0 or s > 0
        )
    )
    return DmlrsSchedule(tuple(sorted(accepted)), tuple(sorted(unfinished)), alloc)
