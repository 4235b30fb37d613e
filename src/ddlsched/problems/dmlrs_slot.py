"""Family ``dmlrs_slot``: one per-slot Problem (23) of PD-ORS, its allocations and evaluator.

Paper: Yu, Liu, Wu, Ji, Bentley, "Toward Efficient Online Scheduling for
Distributed Machine Learning Systems", IEEE TNSE 2022 (reading notes of
the paper); spec ``docs/families/dmlrs_slot.md`` (Algorithm 4's external case as a
family of its own). Equation numbers are the paper's.

An instance is the problem Algorithm 4 hands to its external case for one
job ``i`` and slot ``t``: machines ``h = 0..H-1`` with a worker price
``pw[h] = sum_r p[h, r, t] alpha[r]``, a PS price ``ps[h] = sum_r p[h, r,
t] beta[r]`` and residual capacities ``C^[h, r] = C[h, r] - rho[h, r, t]``;
the job's per-worker and per-PS demands ``alpha[r]``, ``beta[r]``, its
worker:PS ratio ``gamma``, global batch ``F`` and the covering demand ``D``
(workers needed at ``b_ext``). Problem (23) with the spec's PS row::

    minimise    sum_h pw[h] w_h + ps[h] s_h                         (23)
    subject to  alpha[r] w_h + beta[r] s_h <= C^[h, r]   all h, r    (24)
                sum_h w_h <= F                                      (25)
                sum_h w_h >= D                                      (26)
                gamma sum_h s_h >= sum_h w_h                        (PS row; not in the notes' (23))
                w_h, s_h >= 0 integer

Optional ``demand_internal`` (ours; Algorithm 4's internal case, Fact 1):
the workers needed at ``b_int``. When it is set, an allocation whose
workers and PSs all sit on one machine needs only ``min(D,
demand_internal)`` workers in (26) (the slot then runs at ``b_int``), so
the instance is the whole per-slot problem ``theta(t, v)`` of Algorithm 4
rather than Problem (23) alone. Without it (the rounding study's
instances), the instance is Problem (23).

Instances come from the family's synthetic preset or from PD-ORS runs
(``dump_slot_problems``); ``meta`` (optional object of scalars, not part of
the problem) records where one came from (job, slot, quanta ``k``, ...).

Numeric ranges (ours, as in :mod:`ddlsched.problems.dmlrs`, "Numeric
ranges"; checked on every instance): ``gamma <= 10,000``; ``F``, ``D`` and
``demand_internal`` at most 1,000,000 workers; demands ``alpha[r]``,
``beta[r]`` 0 or in ``[1e-6, 1e6]``; residual capacities in ``[0, 1e9]``;
prices 0 or in ``[1e-150, 1e100]``, the largest positive price at most
``1e40`` times the smallest (the solvers centre the positive costs on 1
by ``1 / sqrt(min max)``, which must neither overflow nor underflow, and
HiGHS failed on the ILP with a spread of 1e47; PD-ORS's prices span
``L .. U^r``, about 1e31 at most on the presets);
HiGHS reads a row bound of 1e20 as infinite and a PS row with ``gamma``
above ~1e6 as satisfied by 0 PSs). Outside them: one line naming the
field and the range.

An empty machine list is refused with one line (ours): the
instance is one job's slot problem, so it has no job list to be empty, and
with no machine there is nothing to allocate.

Ours: an instance with ``D > F`` is accepted (it is infeasible, and every
method must say so); an instance whose job uses no resource at all is
refused, as in ``dmlrs``. Capacities (24) are checked with the same slack
as ``dmlrs`` (:data:`CAPACITY_RTOL` relative plus ``1e-9`` absolute), for
floating point only. The evaluator (:func:`evaluate`) is the one place that
computes an allocation's cost; an infeasible allocation raises
:class:`~ddlsched.errors.InfeasibleScheduleError` naming the row, machine
and resource.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from itertools import chain
from typing import Any, ClassVar

import numpy as np

from ddlsched.errors import InfeasibleScheduleError, InvalidInstanceError
from ddlsched.fieldspec import AnyOf, Arr, Const, Field, Int, Null, Num, Obj, Scalars, Str
from ddlsched.jsonio import (
    JsonInstance,
    check_fields,
    check_header,
    read_meta,
    read_names,
    require_int,
    require_number,
)
from ddlsched.problems.dmlrs import DEMAND_RANGE, MAX_CAPACITY, MAX_GAMMA, MAX_WORKERS

__all__ = [
    "CAPACITY_ATOL",
    "CAPACITY_RTOL",
    "MAX_MACHINES",
    "MAX_PRICE_SPREAD",
    "PRICE_RANGE",
    "SlotAllocation",
    "SlotEvaluation",
    "SlotInstance",
    "capacity_slack",
    "evaluate",
    "schedule_from_json",
    "schedule_to_json",
]

SCHEMA_VERSION = 1
#: Relative slack on the residual capacities (24): floating point only (as in ``dmlrs``).
CAPACITY_RTOL = 1e-9
#: Absolute slack on the residual capacities (24).
CAPACITY_ATOL = 1e-9
#: Size cap on the machines of one instance.
MAX_MACHINES = 100_000
#: Positive prices must lie in this range (module docstring, "Numeric ranges").
PRICE_RANGE = (1e-150, 1e100)
#: The largest positive price over the smallest, at most.
MAX_PRICE_SPREAD = 1e40


_PRICE = Num(0.0, PRICE_RANGE[1])
MACHINE_SPEC = Obj(
    {
        "worker_price": Field(
            _PRICE, "pw[h]", "price of one worker on the machine (0 or >= 1e-150)"
        ),
        "ps_price": Field(_PRICE, "ps[h]", "price of one parameter server (0 or >= 1e-150)"),
        "residual": Field(
            Arr(Num(0.0, MAX_CAPACITY)), "C^[h]", "residual capacity, one per resource"
        ),
    }
)
_WORKERS = Int(1, MAX_WORKERS)
_DEMANDS = Arr(Num(0.0, DEMAND_RANGE[1]))  # 0, or in DEMAND_RANGE
#: The JSON format of a ``dmlrs_slot`` instance (``ddlsched instance schema dmlrs_slot``).
FIELD_SPEC = Obj(
    {
        "family": Field(Const("dmlrs_slot"), "family", "the problem family of the file"),
        "schema_version": Field(Const(SCHEMA_VERSION), "schema version", "format version"),
        "resources": Field(
            Arr(Str(non_empty=True), min_items=1, unique=True), "resources", "resource names"
        ),
        "worker": Field(_DEMANDS, "alpha", "demand of one worker, one per resource"),
        "ps": Field(_DEMANDS, "beta", "demand of one parameter server, one per resource"),
        "gamma": Field(Int(1, MAX_GAMMA), "gamma", "workers per parameter server"),
        "global_batch": Field(_WORKERS, "F", "most workers (Eq. 25)"),
        "demand": Field(_WORKERS, "D", "workers to place (Eq. 26)"),
        "demand_internal": Field(
            AnyOf((_WORKERS, Null())), "internal demand", "D of the PS row", required=False
        ),
        "machines": Field(
            Arr(MACHINE_SPEC, min_items=1, max_items=MAX_MACHINES, independent=True),
            "machines",
            "prices and residual capacities",
        ),
        "meta": Field(Scalars(), "meta", "generator facts (no formula)", required=False),
    }
)


@dataclass(frozen=True)
class SlotInstance(JsonInstance):
    """One Problem (23) with its PS row (module docstring); validated on construction.

    ``worker_price[h]`` and ``ps_price[h]`` are ``pw[h]`` and ``ps[h]``;
    ``worker[r]``, ``ps[r]`` the demands ``alpha[r]``, ``beta[r]`` of one
    worker and one PS; ``residual[h][r]`` is ``C^[h, r]``; ``global_batch``
    is ``F`` (Eq. 25) and ``demand`` is ``D`` (Eq. 26).
    """

    resources: tuple[str, ...]
    worker_price: tuple[float, ...]
    ps_price: tuple[float, ...]
    worker: tuple[float, ...]
    ps: tuple[float, ...]
    residual: tuple[tuple[float, ...], ...]
    gamma: int
    global_batch: int
    demand: int
    demand_internal: int | None = None
    meta: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)

    family: ClassVar[str] = "dmlrs_slot"
    FIELD_SPEC: ClassVar[Obj] = FIELD_SPEC

    def __post_init__(self) -> None:
        _validate(self)

    # ---- sizes and arrays

    @property
    def num_machines(self) -> int:
        """``H``."""
        return len(self.residual)

    @property
    def size(self) -> int:
        """The instance size reported by the benchmark platform: the number of machines."""
        return len(self.residual)

    @cached_property
    def pw(self) -> np.ndarray:
        """``pw[h]``, ``(H,)``."""
        return np.asarray(self.worker_price, dtype=float)

    @cached_property
    def pps(self) -> np.ndarray:
        """``ps[h]`` (the PS price), ``(H,)``."""
        return np.asarray(self.ps_price, dtype=float)

    @cached_property
    def alpha(self) -> np.ndarray:
        """Per-worker demand ``alpha[r]``, ``(R,)``."""
        return np.asarray(self.worker, dtype=float)

    @cached_property
    def beta(self) -> np.ndarray:
        """Per-PS demand ``beta[r]``, ``(R,)``."""
        return np.asarray(self.ps, dtype=float)

    @cached_property
    def cap(self) -> np.ndarray:
        """Residual capacities ``C^[h, r]``, ``(H, R)``."""
        return np.asarray(self.residual, dtype=float).reshape(len(self.residual), -1)

    # ---- JSON

    def to_dict(self) -> dict[str, Any]:
        """The instance as the JSON object of its file."""
        out: dict[str, Any] = {
            "family": "dmlrs_slot",
            "schema_version": SCHEMA_VERSION,
            "resources": list(self.resources),
            "worker": list(self.worker),
            "ps": list(self.ps),
            "gamma": self.gamma,
            "global_batch": self.global_batch,
            "demand": self.demand,
            **({} if self.demand_internal is None else {"demand_internal": self.demand_internal}),
            "machines": [
                {"worker_price": pw, "ps_price": ps, "residual": list(res)}
                for pw, ps, res in zip(self.worker_price, self.ps_price, self.residual, strict=True)
            ],
        }
        if self.meta:
            out["meta"] = dict(self.meta)
        return out

    @classmethod
    def from_dict(cls, data: Any) -> SlotInstance:
        """Read the JSON object of a file (strict: unknown fields are refused)."""
        data = check_fields(data, "dmlrs_slot", *FIELD_SPEC.field_names)
        meta = read_meta(data)
        check_header(data, "dmlrs_slot", SCHEMA_VERSION)
        resources = read_names(data["resources"], "resources")
        n_res = len(resources)
        machines = data["machines"]
        if not isinstance(machines, list) or not machines:
            raise InvalidInstanceError(f"machines: expected a non-empty list, got {machines!r}")
        if len(machines) > MAX_MACHINES:
            raise InvalidInstanceError(
                f"machines: {len(machines)} machines, at most {MAX_MACHINES}"
            )
        job = {
            "worker": _numbers(data["worker"], "worker", n_res),
            "ps": _numbers(data["ps"], "ps", n_res),
            "gamma": require_int(data["gamma"], "gamma", minimum=1),
            "global_batch": require_int(data["global_batch"], "global_batch", minimum=1),
            "demand": require_int(data["demand"], "demand", minimum=1),
            "demand_internal": (
                None
                if data.get("demand_internal") is None
                else require_int(data["demand_internal"], "demand_internal", minimum=1)
            ),
        }
        fast = _read_machines_fast(machines, n_res)
        if fast is not None:
            try:
                return cls(resources=resources, **fast, **job, meta=meta)
            except InvalidInstanceError:
                pass  # read machine by machine below: a bad field gets the reader's message
        worker_price, ps_price, residual = [], [], []
        for h, machine in enumerate(machines):
            where = f"machines[{h}]"
            machine = check_fields(machine, where, *MACHINE_SPEC.field_names)
            worker_price.append(
                require_number(machine["worker_price"], f"{where}.worker_price", minimum=0.0)
            )
            ps_price.append(require_number(machine["ps_price"], f"{where}.ps_price", minimum=0.0))
            residual.append(_numbers(machine["residual"], f"{where}.residual", n_res))
        return cls(
            resources=resources,
            worker_price=tuple(worker_price),
            ps_price=tuple(ps_price),
            residual=tuple(residual),
            **job,
            meta=meta,
        )


_MACHINE_FIELDS = frozenset(MACHINE_SPEC.fields)
_NUMBER_TYPES = frozenset((int, float))


def _read_machines_fast(machines: list[Any], n_res: int) -> dict[str, tuple] | None:
    """Prices and residuals of every machine in a few C-level passes of type checks, or
    ``None`` when anything is off (the machine-by-machine reading then names it). Values
    are checked by :func:`_validate` (100,000 machines: 0.2 s instead of 1.5 s)."""
    try:
        if not all(m.keys() == _MACHINE_FIELDS for m in machines):
            return None
    except AttributeError:
        return None
    worker_price = [m["worker_price"] for m in machines]
    ps_price = [m["ps_price"] for m in machines]
    residual = [m["residual"] for m in machines]
    if not set(map(type, chain(worker_price, ps_price))) <= _NUMBER_TYPES:
        return None
    if set(map(type, residual)) - {list} or any(len(r) != n_res for r in residual):
        return None
    if not set(map(type, chain.from_iterable(residual))) <= _NUMBER_TYPES:
        return None
    return {
        "worker_price": tuple(map(float, worker_price)),
        "ps_price": tuple(map(float, ps_price)),
        "residual": tuple(tuple(map(float, r)) for r in residual),
    }


def _numbers(value: Any, where: str, n_res: int) -> tuple[float, ...]:
    if not isinstance(value, list) or len(value) != n_res:
        raise InvalidInstanceError(f"{where}: expected a list of {n_res} numbers, got {value!r}")
    return tuple(require_number(v, f"{where}[{k}]", minimum=0.0) for k, v in enumerate(value))


def _validate(inst: SlotInstance) -> None:
    n_res = len(inst.resources)
    if n_res == 0:
        raise InvalidInstanceError("resources: at least one resource")
    if not all(isinstance(r, str) and r for r in inst.resources) or len(set(inst.resources)) != len(
        inst.resources
    ):
        raise InvalidInstanceError(
            f"resources: expected distinct non-empty names, got {inst.resources!r}"
        )
    H = len(inst.residual)
    if H == 0:
        raise InvalidInstanceError("machines: at least one machine")
    if H > MAX_MACHINES:
        raise InvalidInstanceError(f"machines: {H} machines, at most {MAX_MACHINES}")
    for name in ("worker_price", "ps_price"):
        if len(getattr(inst, name)) != H:
            raise InvalidInstanceError(
                f"{name}: {len(getattr(inst, name))} values for {H} machines"
            )
    if not _machines_look_valid(inst):
        _validate_machines(inst)
    for kind in ("worker", "ps"):
        demand = getattr(inst, kind)
        if len(demand) != n_res:
            raise InvalidInstanceError(f"{kind}: expected {n_res} values")
        for r, v in enumerate(demand):
            require_number(v, f"{kind}[{r}] ({inst.resources[r]})", minimum=0.0)
    if all(a + b == 0 for a, b in zip(inst.worker, inst.ps, strict=True)):
        raise InvalidInstanceError("worker, ps: the job uses no resource at all (all 0)")
    require_int(inst.gamma, "gamma", minimum=1)
    require_int(inst.global_batch, "global_batch", minimum=1)
    require_int(inst.demand, "demand", minimum=1)
    if inst.demand_internal is not None:
        require_int(inst.demand_internal, "demand_internal", minimum=1)
    _check_ranges(inst)


def _machines_look_valid(inst: SlotInstance) -> bool:
    """A bulk check that implies :func:`_validate_machines` passes (``False``: run it)."""
    n_res = len(inst.resources)
    if any(len(res) != n_res for res in inst.residual):
        return False
    values = chain(inst.worker_price, inst.ps_price, chain.from_iterable(inst.residual))
    if not set(map(type, values)) <= _NUMBER_TYPES:
        return False
    prices = np.asarray([inst.worker_price, inst.ps_price], dtype=float)
    residual = np.asarray(inst.residual, dtype=float)
    return bool(
        np.isfinite(prices).all()
        and (prices >= 0).all()
        and np.isfinite(residual).all()
        and (residual >= 0).all()
    )


def _validate_machines(inst: SlotInstance) -> None:
    n_res = len(inst.resources)
    for name in ("worker_price", "ps_price"):
        for h, v in enumerate(getattr(inst, name)):
            require_number(v, f"machines[{h}].{name}", minimum=0.0)
    for h, res in enumerate(inst.residual):
        if len(res) != n_res:
            raise InvalidInstanceError(f"machines[{h}].residual: expected {n_res} values")
        for r, v in enumerate(res):
            require_number(v, f"machines[{h}].residual[{r}] ({inst.resources[r]})", minimum=0.0)


def _out_of_range(where: str, value: float, low: float, high: float) -> InvalidInstanceError:
    return InvalidInstanceError(
        f"{where}: {value:.6g} is outside [{low:g}, {high:g}], the range the evaluator and the "
        "solvers hold (ddlsched.problems.dmlrs_slot, 'Numeric ranges')"
    )


def _check_ranges(inst: SlotInstance) -> None:
    """The numeric ranges of the module docstring; one line naming the field."""
    for name, most in (
        ("gamma", MAX_GAMMA),
        ("global_batch", MAX_WORKERS),
        ("demand", MAX_WORKERS),
        ("demand_internal", MAX_WORKERS),
    ):
        value = getattr(inst, name)
        if value is not None and value > most:
            raise _out_of_range(name, value, 1, most)
    low, high = DEMAND_RANGE
    for kind in ("worker", "ps"):
        for r, v in enumerate(getattr(inst, kind)):
            if v != 0 and not low <= v <= high:
                raise _out_of_range(f"{kind}[{r}] (0 or)", v, low, high)
    residual = inst.cap
    bad = np.argwhere(residual > MAX_CAPACITY)
    if bad.size:
        h, r = (int(x) for x in bad[0])
        raise _out_of_range(f"machines[{h}].residual[{r}]", residual[h, r], 0, MAX_CAPACITY)
    low, high = PRICE_RANGE
    for name, prices in (("worker_price", inst.pw), ("ps_price", inst.pps)):
        bad = np.flatnonzero((prices != 0) & ~((prices >= low) & (prices <= high)))
        if bad.size:
            h = int(bad[0])
            raise _out_of_range(f"machines[{h}].{name} (0 or)", prices[h], low, high)
    positive = np.concatenate([inst.pw, inst.pps])
    positive = positive[positive > 0]
    if positive.size and positive.max() > MAX_PRICE_SPREAD * positive.min():
        raise InvalidInstanceError(
            f"prices: the largest positive price {positive.max():.6g} is more than "
            f"{MAX_PRICE_SPREAD:g} times the smallest {positive.min():.6g}, beyond what the "
            "solvers hold (ddlsched.problems.dmlrs_slot, 'Numeric ranges')"
        )


def capacity_slack(residual: np.ndarray) -> np.ndarray:
    """The slack on (24) the evaluator allows: ``CAPACITY_RTOL C^ + CAPACITY_ATOL``."""
    return np.asarray(residual, dtype=float) * CAPACITY_RTOL + CAPACITY_ATOL


# --------------------------------------------------------------------------- allocation


@dataclass(frozen=True)
class SlotAllocation:
    """Integer workers ``w[h]`` and PSs ``s[h]`` on every machine ``h`` (length ``H`` each)."""

    w: tuple[int, ...]
    s: tuple[int, ...]


@dataclass(frozen=True)
class SlotEvaluation:
    """What the evaluator computed for a feasible allocation (objective: ``cost``, minimised).

    ``single_machine`` is true when all workers and PSs sit on one machine
    (Fact 1: the slot would then run at ``b_int``).
    """

    cost: float
    workers: int
    ps: int
    machines_used: int
    single_machine: bool

    def summary(self) -> dict[str, Any]:
        """The headline metrics copied into every result's ``info``."""
        return {
            "cost": self.cost,
            "workers": self.workers,
            "ps": self.ps,
            "machines_used": self.machines_used,
            "single_machine": self.single_machine,
        }


def _fail(message: str, **details: Any) -> InfeasibleScheduleError:
    return InfeasibleScheduleError(f"dmlrs_slot: {message}", **details)


def _counts(values: Any, name: str, H: int) -> list[int]:
    if not isinstance(values, (tuple, list)) or len(values) != H:
        raise _fail(
            f"{name}: expected {H} counts (one per machine), got {values!r}", failure="shape"
        )
    out = []
    for h, v in enumerate(values):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
            raise _fail(
                f"{name}[{h}]: must be a non-negative integer, got {v!r}",
                failure="count",
                machine=h,
            )
        out.append(int(v))
    return out


def evaluate(instance: SlotInstance, allocation: SlotAllocation) -> SlotEvaluation:
    """Check (24), (25), (26) and the PS row; return the cost ``sum_h pw w_h + ps s_h``.

    Raises :class:`~ddlsched.errors.InfeasibleScheduleError` naming the row
    (and the machine and resource of a capacity row) of the first violation.
    """
    H = instance.num_machines
    w = _counts(allocation.w, "w", H)
    s = _counts(allocation.s, "s", H)
    alpha, beta, cap = instance.alpha, instance.beta, instance.cap
    w_arr = np.asarray(w, dtype=float)
    s_arr = np.asarray(s, dtype=float)
    load = w_arr[:, None] * alpha + s_arr[:, None] * beta
    over = load - cap - capacity_slack(cap)
    if (over > 0).any():
        h, r = (int(x) for x in np.argwhere(over > 0)[0])
        raise _fail(
            f"row (24): machine {h}, resource {instance.resources[r]!r}: use {load[h, r]:g} "
            f"exceeds residual capacity {cap[h, r]:g}",
            failure="capacity",
            row="24",
            machine=h,
            resource=instance.resources[r],
        )
    total_w, total_s = sum(w), sum(s)
    used = [h for h in range(H) if w[h] > 0 or s[h] > 0]
    covering = instance.demand
    if instance.demand_internal is not None and len(used) == 1:
        covering = min(covering, instance.demand_internal)  # Fact 1: b_int on one machine
    if total_w > instance.global_batch:
        raise _fail(
            f"row (25): {total_w} workers, more than F = {instance.global_batch}",
            failure="worker_cap",
            row="25",
        )
    if total_w < covering:
        raise _fail(
            f"row (26): {total_w} workers, fewer than D = {covering}",
            failure="covering",
            row="26",
        )
    if instance.gamma * total_s < total_w:
        raise _fail(
            f"PS row: {total_s} PSs for {total_w} workers, gamma = {instance.gamma} needs "
            f"{-(-total_w // instance.gamma)}",
            failure="ps_row",
            row="ps",
        )
    cost = math.fsum(
        [float(instance.pw[h]) * w[h] for h in used] + [float(instance.pps[h]) * s[h] for h in used]
    )
    return SlotEvaluation(
        cost=cost,
        workers=total_w,
        ps=total_s,
        machines_used=len(used),
        single_machine=len(used) == 1,
    )


# --------------------------------------------------------------------------- allocation JSON


def schedule_to_json(allocation: SlotAllocation, evaluation: SlotEvaluation | None = None) -> Any:
    """``{"workers": [...], "ps": [...]}`` (plus the cost when evaluated)."""
    out: dict[str, Any] = {"workers": list(allocation.w), "ps": list(allocation.s)}
    if evaluation is not None:
        out["cost"] = evaluation.cost
    return out


def schedule_from_json(data: Any) -> SlotAllocation:
    """Read ``{"workers": [...], "ps": [...]}`` (an evaluation's ``cost`` is ignored)."""
    data = check_fields(data, "schedule", ("workers", "ps"), ("cost",))
    out = []
    for name in ("workers", "ps"):
        values = data[name]
        if not isinstance(values, list):
            raise InvalidInstanceError(f"schedule.{name}: expected a list, got {values!r}")
        out.append(
            tuple(require_int(v, f"schedule.{name}[{h}]", minimum=0) for h, v in enumerate(values))
        )
    return SlotAllocation(w=out[0], s=out[1])
