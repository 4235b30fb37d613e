"""Family ``dmlrs``: the DMLRS instance, its rate model (Eq. 3, Fact 1), schedules and evaluator.

Paper: Yu, Liu, Wu, Ji, Bentley, "Toward Efficient Online Scheduling for
Distributed Machine Learning Systems", IEEE TNSE 2022 (reading notes of
the paper); spec ``docs/families/dmlrs.md``, which fixes what the notes lack.
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
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from itertools import chain
from typing import Any, ClassVar

import numpy as np

from ddlsched.errors import InvalidInstanceError
from ddlsched.fieldspec import AnyOf, Arr, Const, Field, Int, Num, Obj, Scalars, Str
from ddlsched.jsonio import (
    JsonInstance,
    check_fields,
    check_header,
    read_meta,
    read_names,
    require_int,
    require_number,
)
from ddlsched.problems.dmlrs_ranges import (  # the checks and their ranges (re-exported)
    DEMAND_RANGE,
    MAX_CAPACITY,
    MAX_GAMMA,
    MAX_JOBS,
    MAX_MACHINES,
    MAX_SLOTS,
    MAX_THETA,
    MAX_WORKERS,
    MAX_WORKLOAD,
    MIN_CAPACITY,
    NUMBER_TYPES,
    WORKER_SLOTS,
    TypedJobs,
    check_ranges,
    exact_types,
    validate,
)
from ddlsched.problems.dmlrs_schedule import (  # rate model, schedule, evaluator (re-exported)
    CAPACITY_RTOL,
    SAMPLE_RTOL,
    Allocation,
    DmlrsEvaluation,
    DmlrsSchedule,
    evaluate,
    fastest_slots,
    per_sample_time,
    ps_needed,
    samples_in_slot,
    schedule_from_counts,
    schedule_from_json,
    schedule_to_json,
    workers_needed,
)

__all__ = [
    "CAPACITY_RTOL",
    "DEFAULT_RESOURCES",
    "DEMAND_RANGE",
    "MAX_CAPACITY",
    "MAX_GAMMA",
    "MAX_JOBS",
    "MAX_MACHINES",
    "MAX_SLOTS",
    "MAX_THETA",
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


# --------------------------------------------------------------------------- instance


def _demand_list(title: str, description: str) -> Field:
    cells = Arr(Num(0.0, DEMAND_RANGE[1]))
    return Field(cells, title, description + f", one per resource (0 or >= {DEMAND_RANGE[0]:g})")


def _capacity(description: str) -> Field:
    cells = Arr(Num(MIN_CAPACITY, MAX_CAPACITY), min_items=1)
    return Field(cells, "capacity", description + ", one per resource")


POSITIVE = Num(0.0, exclusive=True)
THETA = Num(0.0, MAX_THETA, exclusive=True)
UTILITY_SPEC = Obj(
    {
        "theta1": Field(THETA, "theta1", "utility of an immediate completion"),
        "theta2": Field(THETA, "theta2", "steepness of the sigmoid"),
        "theta3": Field(Num(-MAX_THETA, MAX_THETA), "theta3", "delay (slots) at half utility"),
    }
)
JOB_SPEC = Obj(
    {
        "arrival_slot": Field(Int(1, MAX_SLOTS), "a_i", "arrival slot, 1..slots"),
        "epochs": Field(Int(1, MAX_WORKLOAD), "E_i", "training epochs; E_i K_i <= 1e15"),
        "samples": Field(Int(1, MAX_WORKLOAD), "K_i", "samples per epoch"),
        "grad_bytes": Field(POSITIVE, "gradient bytes", "model/gradient size (bytes)"),
        "tau_s": Field(POSITIVE, "tau_i", "time per sample on one worker (s)"),
        "gamma": Field(Int(1, MAX_GAMMA), "gamma_i", "workers per parameter server"),
        "global_batch": Field(Int(1, MAX_WORKERS), "F_i", "most concurrent workers"),
        "worker": _demand_list("alpha_i", "demand of one worker"),
        "ps": _demand_list("beta_i", "demand of one parameter server"),
        "utility": Field(UTILITY_SPEC, "utility", "sigmoid utility of the completion delay"),
    }
)
IDENTICAL_MACHINES_SPEC = Obj(
    {
        "count": Field(Int(1, MAX_MACHINES), "count", "identical machines"),
        "capacity": _capacity("each machine's capacity"),
    }
)
MACHINE_SPEC = Obj({"capacity": _capacity("the machine's capacity")})
#: The JSON format of a ``dmlrs`` instance (``ddlsched instance schema dmlrs``).
FIELD_SPEC = Obj(
    {
        "family": Field(Const("dmlrs"), "family", "the problem family of the file"),
        "schema_version": Field(Const(SCHEMA_VERSION), "schema version", "format version"),
        "slots": Field(Int(1, MAX_SLOTS), "T", "time slots of the horizon"),
        "slot_s": Field(POSITIVE, "slot length", "seconds per slot"),
        "b_int": Field(POSITIVE, "b_int", "intra-machine bandwidth (bytes/s), >= b_ext"),
        "b_ext": Field(POSITIVE, "b_ext", "inter-machine bandwidth (bytes/s)"),
        "resources": Field(
            Arr(Str(non_empty=True), min_items=1, unique=True), "resources", "resource names"
        ),
        "machines": Field(
            AnyOf(
                (IDENTICAL_MACHINES_SPEC, Arr(MACHINE_SPEC, min_items=1, max_items=MAX_MACHINES))
            ),
            "machines",
            "a list of machines, or a count of identical ones and their capacity",
        ),
        "jobs": Field(
            Arr(JOB_SPEC, max_items=MAX_JOBS, independent=True), "jobs", "in arrival order"
        ),
        "meta": Field(Scalars(), "meta", "generator facts (no formula)", required=False),
    }
)


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
class DmlrsInstance(JsonInstance):
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
    FIELD_SPEC: ClassVar[Obj] = FIELD_SPEC

    def __post_init__(self) -> None:
        validate(self)

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
        data = check_fields(data, "dmlrs", *FIELD_SPEC.field_names)
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


def _demands(value: Any, where: str, n_res: int) -> tuple[float, ...]:
    if not isinstance(value, list) or len(value) != n_res:
        raise InvalidInstanceError(f"{where}: expected a list of {n_res} numbers, got {value!r}")
    return tuple(require_number(v, f"{where}[{k}]", minimum=0.0) for k, v in enumerate(value))


def _read_machines(data: Any, n_res: int) -> tuple[tuple[float, ...], ...]:
    if isinstance(data, Mapping):
        data = check_fields(data, "machines", *IDENTICAL_MACHINES_SPEC.field_names)
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
        machine = check_fields(machine, f"machines[{h}]", *MACHINE_SPEC.field_names)
        out.append(_demands(machine["capacity"], f"machines[{h}].capacity", n_res))
    return tuple(out)


_JOB_FIELDS = frozenset(JOB_SPEC.fields)
_UTILITY_FIELDS = frozenset(UTILITY_SPEC.fields)
_INT_FIELDS = ("arrival_slot", "epochs", "samples", "gamma", "global_batch")


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
    if not exact_types(j[f] for j in data for f in _INT_FIELDS) <= {int}:
        return None
    if not exact_types(j[f] for j in data for f in ("grad_bytes", "tau_s")) <= NUMBER_TYPES:
        return None
    if not exact_types(chain.from_iterable(j["utility"].values() for j in data)) <= NUMBER_TYPES:
        return None
    demands = [j["worker"] for j in data] + [j["ps"] for j in data]
    if exact_types(demands) - {list} or any(len(d) != n_res for d in demands):
        return None
    demand_types = exact_types(chain.from_iterable(demands))
    if not demand_types <= NUMBER_TYPES:
        return None
    # demands written as floats (the usual case) need no conversion: 40 % of the time
    demand_tuple = tuple if demand_types <= {float} else _float_tuple
    return TypedJobs(
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
    data = check_fields(data, where, *JOB_SPEC.field_names)
    util = check_fields(data["utility"], f"{where}.utility", *UTILITY_SPEC.field_names)
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
