"""Family ``dmlrs``: the checks of an instance, its numeric ranges included.

Spec ``docs/families/dmlrs.md`` ("What an instance holds": what validation refuses); the
ranges and why they hold are in :mod:`ddlsched.problems.dmlrs` (section
"Numeric ranges"), which calls :func:`validate` on every instance it builds
and re-exports the constants here.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from itertools import chain
from typing import TYPE_CHECKING, Any

import numpy as np

from ddlsched.errors import InvalidInstanceError
from ddlsched.jsonio import require_int, require_number

if TYPE_CHECKING:
    from ddlsched.problems.dmlrs import DmlrsInstance, DmlrsJob, Utility

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


NUMBER_TYPES = frozenset((int, float))


def is_number(value: Any) -> bool:
    """Whether ``value``'s type is exactly ``int`` or ``float`` (not a ``bool``, a NumPy
    scalar or another subclass)."""
    return type(value) in NUMBER_TYPES


def exact_types(values: Iterable[Any]) -> set[type]:
    """The set of the exact types of ``values`` (one C-level pass)."""
    return set(map(type, values))


class TypedJobs(tuple):
    """The jobs :func:`_read_jobs_fast` built: every count an ``int``, every number a
    ``float`` (so :func:`_jobs_look_valid` checks only their values). Equal to the plain
    tuple of the same jobs; :func:`dataclasses.replace` with a plain tuple gets every check."""

    __slots__ = ()


def _positive(value: Any, where: str, integer: bool = False) -> None:
    """``value`` > 0: an integer >= 1, or a finite number > 0 (jsonio's checks)."""
    if integer:
        require_int(value, where, minimum=1)
    else:
        require_number(value, where, minimum=0, strict=True)


def validate(inst: DmlrsInstance) -> None:
    """Refuse an instance the spec refuses, in one line (:class:`InvalidInstanceError`): slots,
    bandwidths, sizes, capacities, jobs, then the numeric ranges (:func:`check_ranges`)."""
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
    if not all(len(cap) == n_res and all(is_number(c) for c in cap) for cap in distinct):
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
    if not isinstance(jobs, TypedJobs):  # the file reader checked these types already
        if not exact_types(chain.from_iterable(r[:5] for r in rows)) <= {int}:
            return False
        if not exact_types(chain.from_iterable(r[5:] for r in rows)) <= NUMBER_TYPES:
            return False
        if any(len(j.worker) != n_res or len(j.ps) != n_res for j in jobs):
            return False
        if not exact_types(chain.from_iterable((*j.worker, *j.ps) for j in jobs)) <= NUMBER_TYPES:
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
