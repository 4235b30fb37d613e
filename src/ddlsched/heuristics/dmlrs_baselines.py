"""The baselines of family ``dmlrs`` without admission control: FIFO, DRF and the slot loop.

Paper: Yu, Liu, Wu, Ji, Bentley, "Toward Efficient Online Scheduling for
Distributed Machine Learning Systems", IEEE TNSE 2022 (reading notes of
the paper), which compares PD-ORS with FIFO, DRF and Dorm (Figs. 6-7); spec
``docs/families/dmlrs.md``, section "Baselines without admission control". The notes do not give the
baselines' rules; the spec follows the public DL2 simulator of the same
group (github pengyanghua/DL2, ``fifo_env.py``, ``drf_env.py``), read for
its rules, never copied. Dorm's per-slot MILP lives in
:mod:`ddlsched.models.dmlrs_dorm` and uses the same slot loop.

The slot loop (:func:`simulate_slots`), shared by every baseline:

* a job is active from its arrival slot ``a_i`` (Eq. 7) until it has
  processed its ``V_i`` samples (Eq. 3) or ``T`` has passed; there is no
  admission control;
* each slot's allocation is recomputed from scratch (as in DL2) by an
  "allocate one slot" function, which sees the active jobs in arrival order
  (ties: index) and their caps ``cap_i = min(F_i, D_i(remaining_i, b_ext))``
  (Eq. 4 and the spec: never more workers than the job needs to finish
  even at external bandwidth);
* the job's bandwidth in the slot follows Fact 1 from the actual placement:
  ``b_int`` when all of its entries of the slot (workers and PSs) are on
  one machine, else ``b_ext``; its samples are counted with
  :func:`~ddlsched.problems.dmlrs.samples_in_slot`, summed slot by slot in
  the same order as the evaluator, and the job is complete once the sum
  reaches ``V_i (1 - SAMPLE_RTOL)``, the evaluator's own test: a job the
  loop calls complete is accepted by :func:`~ddlsched.problems.dmlrs.evaluate`
  and a job it leaves unfinished is never refused as mislabelled;
* a complete job's completion slot is the last slot with workers (Eq. 6);
  the schedule's ``accepted`` set is the completed jobs, ``unfinished`` the
  jobs that received something but did not complete by ``T`` (they earn 0),
  and a job that never received anything is in neither set.

Greedy allocation (FIFO and DRF, spec "Baselines"): a job grows one bundle
at a time; a bundle is one worker plus one PS when the job's PSs of the
slot would otherwise fall below ``ceil(W / gamma_i)`` (``W`` its workers
including the new one), else one worker; a bundle goes, whole, on the
least-loaded machine where it fits (load ``max_r used[h, r] / C[h, r]``;
ties: lower index). So ``s >= ceil(w / gamma_i)`` holds after every bundle
(the PS rule) and the PS of a bundle sits with its worker.

* ``fifo`` (:func:`run_fifo`): jobs in arrival order (ties: index), each
  takes bundles up to its cap; the first bundle that fits nowhere ends the
  slot (DL2's rule: no later job gets anything in that slot; the job keeps
  the bundles it got).
* ``drf`` (:func:`run_drf`): one bundle at a time to the active job, not
  yet at its cap, with the smallest dominant share ``max_r allocated[i, r]
  / sum_h C[h, r]`` of the slot (ties: arrival slot, then index); the first
  bundle that fits nowhere ends the slot (DL2's rule).

Choices of ours: the capacity test of a bundle allows a relative slack of
``1e-12`` (floating point only; the evaluator allows ``1e-9``). A job
whose bundle fits no machine even when the cluster is empty blocks every
later job under FIFO, and under DRF every job once its share (0) is the
smallest, in every slot until ``T``, as DL2's rule says.

Complexity: ``O(T (n log n + B H R))`` for ``B`` bundles placed per slot.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ddlsched.deadline import Deadline
from ddlsched.problems.dmlrs import (
    CAPACITY_RTOL,
    SAMPLE_RTOL,
    DmlrsInstance,
    DmlrsSchedule,
    ps_needed,
    samples_in_slot,
    schedule_from_counts,
    workers_needed,
)

__all__ = [
    "FIT_RTOL",
    "AllocateSlot",
    "SlotDemand",
    "SlotEntry",
    "check_slot_allocation",
    "drf_slot",
    "fifo_slot",
    "job_cap",
    "run_drf",
    "run_fifo",
    "simulate_slots",
    "slot_demand",
]

#: Relative slack of the greedy capacity test (floating point only).
FIT_RTOL = 1e-12
#: Bundles a slot places between two deadline checks (each is one ``O(H R)`` test).
GROWS_PER_CHECK = 256

#: ``(job, machine, workers, ps)``: one entry of a slot's allocation.
SlotEntry = tuple[int, int, int, int]


@dataclass(frozen=True)
class SlotDemand:
    """What an "allocate one slot" function sees: the active jobs of a slot and their caps.

    ``jobs`` are the active jobs in arrival order (ties: index), ``caps[k]``
    is ``cap_i = min(F_i, D_i(remaining_i, b_ext))`` of ``jobs[k]`` (at
    least 1) and ``remaining[k]`` its remaining samples. ``deadline`` is the
    method's: a slot of many small bundles (up to ``sum_i cap_i``, one at a
    time) checks it every :data:`GROWS_PER_CHECK` bundles.
    """

    slot: int
    jobs: tuple[int, ...]
    caps: tuple[int, ...]
    remaining: tuple[float, ...]
    deadline: Deadline = field(default_factory=Deadline.unlimited, compare=False)


#: An "allocate one slot" function: the slot's entries ``(job, machine, workers, ps)``.
AllocateSlot = Callable[[DmlrsInstance, SlotDemand], Sequence[SlotEntry]]


def job_cap(instance: DmlrsInstance, i: int, remaining: float) -> int:
    """``cap_i = min(F_i, D_i(remaining, b_ext))``: the most workers job ``i`` asks for in a slot."""
    job = instance.jobs[i]
    return min(job.global_batch, workers_needed(job, remaining, instance.b_ext, instance.slot_s))


def slot_demand(
    instance: DmlrsInstance,
    slot: int,
    processed: Sequence[float],
    deadline: Deadline | None = None,
) -> SlotDemand:
    """The active jobs of ``slot`` (arrived, not complete) with their caps and remaining samples.

    ``processed[i]`` is what job ``i`` has processed before ``slot``; a job
    is complete once ``processed[i] >= V_i (1 - SAMPLE_RTOL)`` (the
    evaluator's test).
    """
    jobs, caps, remaining = [], [], []
    order = sorted(range(len(instance.jobs)), key=lambda i: (instance.jobs[i].arrival_slot, i))
    for i in order:
        job = instance.jobs[i]
        if job.arrival_slot > slot or _complete(job.workload, processed[i]):
            continue
        left = job.workload - processed[i]
        jobs.append(i)
        caps.append(job_cap(instance, i, left))
        remaining.append(left)
    return SlotDemand(
        slot, tuple(jobs), tuple(caps), tuple(remaining), deadline or Deadline.unlimited()
    )


def _complete(workload: int, processed: float) -> bool:
    return processed >= workload * (1.0 - SAMPLE_RTOL)


def check_slot_allocation(
    instance: DmlrsInstance, demand: SlotDemand, entries: Sequence[SlotEntry]
) -> None:
    """Raise ``ValueError`` unless ``entries`` is a valid allocation of ``demand``'s slot.

    Checks: only active jobs, non-negative integer counts, one entry per
    (job, machine), at most ``cap_i`` workers, the PS rule, and the
    capacities (Eq. 5, with the evaluator's slack).
    """
    caps = dict(zip(demand.jobs, demand.caps, strict=True))
    used = np.zeros_like(instance.cap)
    workers: dict[int, int] = {}
    servers: dict[int, int] = {}
    seen: set[tuple[int, int]] = set()
    for i, h, w, s in entries:
        if i not in caps:
            raise ValueError(f"slot {demand.slot}: job {i} is not active")
        if not (0 <= h < instance.num_machines):
            raise ValueError(f"slot {demand.slot}, job {i}: no machine {h}")
        if (i, h) in seen:
            raise ValueError(f"slot {demand.slot}, job {i}, machine {h}: two entries")
        seen.add((i, h))
        if not (isinstance(w, int) and isinstance(s, int) and w >= 0 and s >= 0):
            raise ValueError(f"slot {demand.slot}, job {i}, machine {h}: bad counts {w!r}, {s!r}")
        workers[i] = workers.get(i, 0) + w
        servers[i] = servers.get(i, 0) + s
        used[h] += instance.alpha[i] * w + instance.beta[i] * s
    for i, w in workers.items():
        if w > caps[i]:
            raise ValueError(f"slot {demand.slot}, job {i}: {w} workers, above its cap {caps[i]}")
        if servers[i] < ps_needed(instance.jobs[i], w):
            raise ValueError(f"slot {demand.slot}, job {i}: {servers[i]} PSs for {w} workers")
    over = used - instance.cap * (1.0 + CAPACITY_RTOL) - 1e-9
    if (over > 0).any():
        h, r = np.argwhere(over > 0)[0]
        raise ValueError(
            f"slot {demand.slot}, machine {h}, resource {instance.resources[r]!r}: use "
            f"{used[h, r]:g} above capacity {instance.cap[h, r]:g}"
        )


def simulate_slots(
    instance: DmlrsInstance, allocate_slot: AllocateSlot, deadline: Deadline | None = None
) -> DmlrsSchedule:
    """Run the slot loop of the module docstring with ``allocate_slot`` deciding each slot.

    ``allocate_slot(instance, demand)`` returns the slot's entries
    ``(job, machine, workers, ps)``; they are checked
    (:func:`check_slot_allocation`, ``ValueError`` on a bug), applied, and
    the samples are counted at the Fact 1 bandwidth of the placement.
    Returns accepted = completed jobs, unfinished = jobs with an allocation
    not complete by ``T``.
    """
    deadline = deadline or Deadline.unlimited()
    n = len(instance.jobs)
    processed = [0.0] * n
    touched = [False] * n
    records: list[tuple[int, int, int, int, int]] = []
    for t in range(1, instance.slots + 1):
        deadline.check(f"slot {t} of the dmlrs baseline")
        demand = slot_demand(instance, t, processed, deadline)
        if not demand.jobs:
            continue
        entries = [e for e in allocate_slot(instance, demand) if e[2] > 0 or e[3] > 0]
        check_slot_allocation(instance, demand, entries)
        machines: dict[int, set[int]] = {}
        workers: dict[int, int] = {}
        for i, h, w, s in entries:
            machines.setdefault(i, set()).add(h)
            workers[i] = workers.get(i, 0) + w
            touched[i] = True
            records.append((i, t, h, w, s))
        for i in sorted(workers):
            if workers[i] == 0:
                continue
            # Fact 1: b_int exactly when every entry of the job in this slot is on one machine
            bandwidth = instance.b_int if len(machines[i]) == 1 else instance.b_ext
            processed[i] += samples_in_slot(
                instance.jobs[i], workers[i], bandwidth, instance.slot_s
            )
    completed = [i for i in range(n) if _complete(instance.jobs[i].workload, processed[i])]
    done = set(completed)
    # no admission control (spec): every job that arrived and did not finish by T is
    # unfinished, whether or not it ever got a bundle
    unfinished = [i for i in range(n) if i not in done]
    return schedule_from_counts(completed, records, unfinished)


# --------------------------------------------------------------------------- greedy placement


class _Cluster:
    """Machine use of one slot and the least-loaded-fit rule (module docstring)."""

    def __init__(self, instance: DmlrsInstance) -> None:
        self.cap = instance.cap
        self.limit = instance.cap * (1.0 + FIT_RTOL)
        self.used = np.zeros_like(instance.cap)
        self.load = np.zeros(instance.num_machines)

    def place(self, demand: np.ndarray) -> int:
        """Put ``demand`` on the least-loaded machine where it fits; -1 if none."""
        fits = (self.used + demand <= self.limit).all(axis=1)
        if not fits.any():
            return -1
        h = int(np.argmin(np.where(fits, self.load, np.inf)))
        self.used[h] += demand
        self.load[h] = float((self.used[h] / self.cap[h]).max())
        return h


class _Growth:
    """Bundles given to the jobs of one slot: counts per (job, machine) and per job."""

    def __init__(self, instance: DmlrsInstance, demand: SlotDemand) -> None:
        self.instance = instance
        self.cluster = _Cluster(instance)
        self.workers = dict.fromkeys(demand.jobs, 0)
        self.servers = dict.fromkeys(demand.jobs, 0)
        self.counts: dict[tuple[int, int], list[int]] = {}
        self.deadline = demand.deadline
        self.grown = 0

    def bundle(self, i: int) -> tuple[np.ndarray, int]:
        """The next bundle of job ``i``: its demand and its PS count (0 or 1)."""
        job = self.instance.jobs[i]
        with_ps = int(self.servers[i] < ps_needed(job, self.workers[i] + 1))
        return self.instance.alpha[i] + with_ps * self.instance.beta[i], with_ps

    def grow(self, i: int) -> np.ndarray | None:
        """Give job ``i`` one bundle; its demand, or None if it fits nowhere."""
        self.grown += 1
        if self.grown % GROWS_PER_CHECK == 0:
            self.deadline.check("a slot of the dmlrs baseline")
        demand, with_ps = self.bundle(i)
        h = self.cluster.place(demand)
        if h < 0:
            return None
        self.workers[i] += 1
        self.servers[i] += with_ps
        entry = self.counts.setdefault((i, h), [0, 0])
        entry[0] += 1
        entry[1] += with_ps
        return demand

    def entries(self) -> list[SlotEntry]:
        return [(i, h, w, s) for (i, h), (w, s) in sorted(self.counts.items())]


def fifo_slot(instance: DmlrsInstance, demand: SlotDemand) -> list[SlotEntry]:
    """FIFO's allocation of one slot (module docstring): arrival order, stop at the first misfit."""
    growth = _Growth(instance, demand)
    for i, cap in zip(demand.jobs, demand.caps, strict=True):
        while growth.workers[i] < cap:
            if growth.grow(i) is None:
                return growth.entries()
    return growth.entries()


def drf_slot(instance: DmlrsInstance, demand: SlotDemand) -> list[SlotEntry]:
    """DRF's allocation of one slot (module docstring): smallest dominant share first."""
    growth = _Growth(instance, demand)
    total = instance.cap.sum(axis=0)
    allocated = {i: np.zeros(len(instance.resources)) for i in demand.jobs}
    caps = dict(zip(demand.jobs, demand.caps, strict=True))
    heap = [(0.0, instance.jobs[i].arrival_slot, i) for i in demand.jobs if caps[i] > 0]
    heapq.heapify(heap)
    while heap:
        _, arrival, i = heapq.heappop(heap)
        used = growth.grow(i)
        if used is None:
            break
        allocated[i] += used
        if growth.workers[i] < caps[i]:
            share = float((allocated[i] / total).max())
            heapq.heappush(heap, (share, arrival, i))
    return growth.entries()


def run_fifo(instance: DmlrsInstance, deadline: Deadline | None = None) -> DmlrsSchedule:
    """The ``fifo`` baseline: :func:`simulate_slots` with :func:`fifo_slot`."""
    return simulate_slots(instance, fifo_slot, deadline)


def run_drf(instance: DmlrsInstance, deadline: Deadline | None = None) -> DmlrsSchedule:
    """The ``drf`` baseline: :func:`simulate_slots` with :func:`drf_slot`."""
    return simulate_slots(instance, drf_slot, deadline)
