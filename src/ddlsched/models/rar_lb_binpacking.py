"""Gang bin-packing lower bound of RAR-DDLS (``lb_binpacking``; a bound of ours).

The bounds of :mod:`ddlsched.models.rar_bounds` average loads: ``gpu_time``
(``sum_j G_j rho_j / N``) and Problem (14) with loads aggregated per server
class assume the GPU time can be spread like a fluid. On the ``paper`` preset
that fluid is nearly full (seed 2: 42 idle GPU-slots allowed at the bound
294 on 292 GPUs), so what a schedule must waste because its jobs are rigid
decides the interval. This bound counts that waste, per GPU and per server
class, with an arc-flow LP.

**Relaxation.** Let ``C`` be the makespan of a schedule. Each GPU runs its
jobs one after the other inside ``[0, C)`` (a schedule gives each job one
set of ``G_j`` GPUs for its whole execution, spec ``rar.md``), so the
durations of the jobs on one GPU sum to at most ``C``: each GPU is a *bin*
of capacity ``C`` and each job is ``G_j`` *items*, one per GPU of its gang.
An item's size is a lower bound on the job's duration on that GPU:

* ``rho_j(n, p)`` is the number of slots job ``j`` needs on ``n`` servers at
  constant contention ``p`` (Eqs. 6-9 of the paper, ``execution_slots``);
  ``tau_j`` (Eq. 8) is non-decreasing in ``p`` and a split job has
  ``p_j >= 1`` (Eq. 6 counts ``j`` itself), so its duration on ``n``
  servers is at least ``rho_j(n, 1)``, and on one server ``rho_j(1, 0)``;
* a GPU of a server with ``O_s < G_j`` GPUs can hold ``j`` only when ``j``
  spans ``n >= 2`` servers: the item costs
  ``split_j = min_{n >= 2} rho_j(n, 1)`` there (no item when ``j`` cannot
  span two servers);
* on a server with ``O_s >= G_j`` the item costs
  ``rho_min_j = min_n rho_j(n, 1 if n > 1 else 0)``
  (:func:`~ddlsched.models.rar_bounds.rho_min`).

Servers of equal size form a *class* ``c`` with ``N_c`` GPUs. Every
schedule of makespan ``C`` therefore packs, for every job, ``G_j`` items
into the ``N_c`` bins of the classes, each item with the size of its class,
every bin within ``C``. Dropped, so the packing is a relaxation: that the
items of a gang run at the same time, on distinct GPUs, on the servers'
own GPUs (a bin is a GPU of a class, not of a server), and contention above
``p = 1``. This is what makes the bound see packing (integral durations on
discrete GPUs, the class a ring may use unsplit) and the communication
a split ring pays (Eq. 8's inter-server term and ``xi_2 n_j``), but not
contention between rings: on ``paper`` contention is inert (``k_j < 1``,
``docs/families/rar.md``), so a bound that charges it gains nothing there.

**Arc-flow LP** (Valério de Carvalho's formulation of bin packing). Per
class, nodes ``0..C`` (the load of a bin so far), an arc ``u -> u + v`` per
item size ``v`` of the class and reachable node ``u`` (items in
non-increasing order of size, so ``u`` is reachable with sizes ``>= v``; a
superset of the needed arcs, which only weakens the LP), a loss arc
``u -> C``; a bin is a path from 0 to ``C``. ``z_c`` (flow out of 0)
``<= N_c``; ``w[g, c]`` items of job group ``g`` (jobs with equal sizes in
every class) in class ``c``, ``sum_c w[g, c] >= `` the group's GPUs, and the
arcs of size ``v`` in ``c`` carry at least the ``w`` of the groups whose
size there is ``v``. If this LP is infeasible, no packing within ``C``
exists, so the makespan exceeds ``C``. A second, pooled LP (one class of
all ``N`` GPUs, every item at ``rho_min_j``) rounds: the number of bins is
integral, so ``ceil(z) > N`` also proves it (the Gilmore-Gomory bound, which
the round-up property of bin packing makes nearly exact). Both LPs are
monotone in ``C`` (a bin's pattern within ``C`` is within ``C + 1``), so
the smallest ``C`` that neither refutes is found by galloping up from the
closed forms and bisecting; every ``C`` below it is proven infeasible.

The bound reported is ``max(longest_job, gpu_time, that C)``: valid for any
contention, and ``<= `` the optimum (tests: brute force on tiny instances
and the exact search's proven optima). When the time limit stops the search,
the last refuted ``C`` plus one stands (``info['stopped']``).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ddlsched.deadline import Deadline
from ddlsched.errors import DdlschedError
from ddlsched.models.rar_bounds import closed_form_bounds, rho_min
from ddlsched.problems.rar import RarInstance, RarJob
from ddlsched.problems.rar_timing import execution_slots, max_servers, min_servers
from ddlsched.solvers.result import Outcome, Status, mark_stopped

__all__ = ["GangItems", "gang_items", "lb_binpacking", "packing_refutes"]

#: HiGHS model statuses that mean "no packing" (the objective is bounded below by 0).
_INFEASIBLE = ("Infeasible", "Primal infeasible or unbounded")

#: Feasibility tolerance on the LP's number of bins before rounding up.
_ROUND_TOL = 1e-6


@dataclass(frozen=True)
class GangItems:
    """The items of the relaxation: server classes and job groups.

    ``class_gpus[c]`` GPUs in class ``c`` (servers of ``class_size[c]``
    GPUs); group ``g`` has ``group_gpus[g]`` items of size
    ``group_sizes[g][c]`` in class ``c`` (``None``: not allowed there) and
    ``pooled_sizes[g]`` (``rho_min``) in the pooled LP.
    """

    class_size: tuple[int, ...]
    class_gpus: tuple[int, ...]
    group_sizes: tuple[tuple[int | None, ...], ...]
    group_gpus: tuple[int, ...]
    pooled_sizes: tuple[int, ...]

    @property
    def num_gpus(self) -> int:
        """GPUs of the cluster."""
        return sum(self.class_gpus)


def split_slots(job: RarJob, instance: RarInstance) -> int | None:
    """``min_{n >= 2} rho_j(n, 1)``: the fewest slots of ``job`` on two or more servers.

    ``None`` when the job cannot span two servers or never progresses there."""
    low = max(2, min_servers(job, instance.servers))
    best = math.inf
    for n in range(low, max_servers(job, instance.servers) + 1):
        best = min(best, execution_slots(job, instance.network, n, 1, instance.progress))
    return None if math.isinf(best) else int(best)


def gang_items(instance: RarInstance) -> GangItems:
    """The classes (equal server sizes) and job groups of the relaxation (module docstring)."""
    sizes = sorted(set(instance.servers))
    gpus = [size * instance.servers.count(size) for size in sizes]
    groups: dict[tuple[tuple[int | None, ...], int], int] = defaultdict(int)
    for job in instance.jobs:
        best = rho_min(job, instance)
        split = split_slots(job, instance)
        per_class = tuple(best if job.gpus <= size else split for size in sizes)
        groups[per_class, best] += job.gpus
    keys = sorted(groups, key=lambda k: (k[1], tuple(-1 if v is None else v for v in k[0])))
    return GangItems(
        tuple(sizes),
        tuple(gpus),
        tuple(k[0] for k in keys),
        tuple(groups[k] for k in keys),
        tuple(k[1] for k in keys),
    )


def _arcs(item_sizes: Sequence[int], capacity: int) -> list[tuple[int, int]]:
    """``(tail, size)`` of the item arcs of one class's arc-flow graph (module docstring)."""
    reach = np.zeros(capacity + 1, dtype=bool)
    reach[0] = True
    arcs: list[tuple[int, int]] = []
    for size in sorted(set(item_sizes), reverse=True):
        if size > capacity or size <= 0:
            continue
        for node in range(capacity - size + 1):  # unbounded copies of ``size``
            if reach[node]:
                reach[node + size] = True
        arcs.extend((int(u), size) for u in np.nonzero(reach[: capacity - size + 1])[0])
    return arcs


def _flow_entries(
    tail: int, head: int, capacity: int, node_row: int, z_row: int
) -> list[tuple[int, float]]:
    """``(row, value)`` of an arc ``tail -> head``: conservation at inner nodes, ``z_c`` at 0."""
    out: list[tuple[int, float]] = []
    if 0 < tail < capacity:
        out.append((node_row + tail, -1.0))
    if 0 < head < capacity:
        out.append((node_row + head, 1.0))
    if tail == 0:
        out.append((z_row, 1.0))
    return out


def _arcflow_lp(
    class_gpus: Sequence[int | None],
    group_sizes: Sequence[Sequence[int | None]],
    group_gpus: Sequence[int],
    capacity: int,
):
    """``(cost, matrix, row_lower, row_upper)`` of the arc-flow LP (module docstring).

    ``class_gpus[c] = None`` leaves ``z_c`` unbounded (the pooled LP).
    Columns: per class its item arcs then its loss arcs, then ``w[g, c]``.
    Rows: per class conservation at nodes ``1..C-1``, ``z_c``, one row per
    (class, size); then one row per group."""
    rows: list[int] = []
    cols: list[int] = []
    vals: list[float] = []
    row_lower: list[float] = []
    row_upper: list[float] = []
    cost: list[float] = []
    inf = math.inf

    def add_column(entries: list[tuple[int, float]], price: float) -> int:
        col = len(cost)
        cost.append(price)
        for row, value in entries:
            rows.append(row)
            cols.append(col)
            vals.append(value)
        return col

    size_rows: list[dict[int, int]] = []
    for c, gpus in enumerate(class_gpus):
        in_class = [sizes[c] for sizes in group_sizes if sizes[c] is not None]
        arcs = _arcs(in_class, capacity)
        node_row = len(row_lower) - 1  # row of node u is node_row + u, u = 1..C-1
        row_lower.extend([0.0] * (capacity - 1))
        row_upper.extend([0.0] * (capacity - 1))
        z_row = len(row_lower)
        row_lower.append(-inf)
        row_upper.append(inf if gpus is None else float(gpus))
        by_size = {}
        for size in sorted({v for _, v in arcs}):
            by_size[size] = len(row_lower)
            row_lower.append(0.0)
            row_upper.append(inf)
        size_rows.append(by_size)

        for tail, size in arcs:
            entries = _flow_entries(tail, tail + size, capacity, node_row, z_row)
            add_column([*entries, (by_size[size], 1.0)], 1.0 if tail == 0 else 0.0)
        reachable = sorted({t + v for t, v in arcs} - {capacity})
        for node in reachable:  # loss arcs: a bin may stay partly empty
            add_column(_flow_entries(node, capacity, capacity, node_row, z_row), 0.0)
    for g, sizes in enumerate(group_sizes):
        group_row = len(row_lower)
        row_lower.append(float(group_gpus[g]))
        row_upper.append(inf)
        for c, size in enumerate(sizes):
            if size is not None and size in size_rows[c]:
                add_column([(group_row, 1.0), (size_rows[c][size], -1.0)], 0.0)
    matrix = sp.csc_matrix((vals, (rows, cols)), shape=(len(row_lower), len(cost)))
    return np.array(cost), matrix, np.array(row_lower), np.array(row_upper)


def _solve_lp(lp, remaining_s: float) -> tuple[str, float | None]:
    """``('optimal', bins)``, ``('infeasible', None)`` or ``('stopped', None)``."""
    from ddlsched.solvers.highs_lp import HighsLp

    cost, matrix, row_lower, row_upper = lp
    if matrix.shape[1] == 0:
        return "infeasible", None
    # presolve on: the class LP solves 8x faster with it (11.8 s -> 1.5 s, paper seed 2)
    highs = HighsLp({"presolve": "on", "time_limit": max(remaining_s, 1e-3)})
    try:
        highs.solve(cost, matrix, row_upper, row_lower, what="arc-flow LP")
    except DdlschedError:
        status = highs.model_status or ""
        if status in _INFEASIBLE:
            return "infeasible", None
        return "stopped", None
    return "optimal", highs.objective_value


def packing_refutes(
    items: GangItems, capacity: int, deadline: Deadline | None = None
) -> tuple[bool | None, str]:
    """Whether the relaxation proves that no schedule has makespan ``<= capacity``.

    ``(True, which LP)`` when refuted, ``(False, '')`` when both LPs admit a
    packing, ``(None, '')`` when the deadline cut an LP before it answered."""
    deadline = deadline or Deadline.unlimited()
    if any(
        all(v is None or v > capacity for v in sizes) for sizes in items.group_sizes
    ) or capacity < max(items.pooled_sizes):
        return True, "item"
    if deadline.expired():
        return None, ""
    remaining = deadline.remaining_s()
    pooled = _arcflow_lp([None], [(v,) for v in items.pooled_sizes], items.group_gpus, capacity)
    state, bins = _solve_lp(pooled, remaining)
    if state == "stopped":
        return None, ""
    if state == "infeasible" or math.ceil(bins - _ROUND_TOL) > items.num_gpus:
        return True, "pooled"
    if len(items.class_gpus) > 1:
        if deadline.expired():
            return None, ""
        by_class = _arcflow_lp(items.class_gpus, items.group_sizes, items.group_gpus, capacity)
        state, _ = _solve_lp(by_class, deadline.remaining_s())
        if state == "stopped":
            return None, ""
        if state == "infeasible":
            return True, "classes"
    return False, ""


def lb_binpacking(instance: RarInstance, *, deadline: Deadline | None = None) -> Outcome:
    """The gang bin-packing bound (module docstring): the least makespan no LP refutes.

    ``info``: ``components`` (the closed forms and ``binpacking``), the probes
    (``C`` and which LP refuted it, or ``None``), and ``stopped`` when the
    limit cut the search (the bound is then the last refuted ``C`` plus one).
    """
    deadline = deadline or Deadline.unlimited()
    closed = closed_form_bounds(instance)
    items = gang_items(instance)
    low = int(max(closed.values()))  # proven: makespan >= low
    probes: list[list] = []
    stopped = ""

    def refuted(capacity: int) -> bool | None:
        answer, which = packing_refutes(items, capacity, deadline)
        probes.append([capacity, which if answer else None if answer is None else ""])
        return answer

    # gallop up from the closed forms (probes low, low + 1, low + 3, low + 7, ...), then
    # bisect; every C < low is refuted (monotone in C) or below the closed forms
    # one bin holding every item at its largest size admits a packing: never refuted
    ceiling = sum(
        gpus * max(v for v in sizes if v is not None)
        for gpus, sizes in zip(items.group_gpus, items.group_sizes, strict=True)
    )
    step, high = 0, None
    while high is None and not stopped:
        probe = min(low + step, max(ceiling, low))
        answer = refuted(probe)
        if answer is None:
            stopped = f"the arc-flow LP at C = {probe}"
        elif answer:
            low, step = probe + 1, 2 * step + 1
            high = low if probe >= ceiling else None  # (never: a guard against looping)
        else:
            high = probe
    while not stopped and low < high:
        middle = (low + high) // 2
        answer = refuted(middle)
        if answer is None:
            stopped = f"the arc-flow LP at C = {middle}"
        elif answer:
            low = middle + 1
        else:
            high = middle
    components = {**closed, "binpacking": float(low)}
    outcome = Outcome(
        None,
        Status.BOUND_ONLY,
        bound=float(max(components.values())),
        info={
            "components": components,
            "probes": probes,
            "classes": list(items.class_size),
            "groups": len(items.group_gpus),
        },
    )
    return mark_stopped(outcome, stopped)
