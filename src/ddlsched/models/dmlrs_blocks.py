"""``ub_blocks`` (ours): ``ub_capacity`` with each internal-mode slot as one block on one machine.

Paper: Yu et al., IEEE TNSE 2022 (reading notes of the paper): DMLRS (Eqs. 3-7), the rate
model of Eq. 3 with Fact 1. Spec ``docs/families/dmlrs.md``, "Rate model (Eq. 3, Fact 1)"
and "Bounds". The bound is ours. It adds to the relaxation of
:mod:`ddlsched.models.dmlrs_capacity` (every column and row of ``ub_capacity``, kept) what
that relaxation pools away: in a schedule, a job in internal mode in slot ``t`` (Fact 1:
every worker and PS of the slot on one machine) is *one block* of ``w`` workers and at
least ``ceil(w / gamma_i)`` PSs on *one* machine, and the slot runs in one mode only.

Added columns and rows (per job ``i`` with an internal mode, ``WI_i >= 1``, and slot ``t``
of ``ub_capacity``'s model, whose columns ``Y, W, xI, xE`` it reuses):

* ``z[i, t, w] in [0, 1]`` for ``w = 1..WI_i``: the job runs one internal block of ``w``
  workers in slot ``t``;
* *block size*: ``xI[i, t] = sum_w w z[i, t, w]``;
* *one mode a slot*: ``sum_w z[i, t, w] + xE[i, t] / WE_i <= Y[i, T] - Y[i, t - 1]``
  (``ub_capacity``'s row counts an internal slot of ``w`` workers as the share ``w / WI_i``;
  here it takes the whole slot whatever its size);
* *blocks in the capacity* (Eq. 5 summed over machines, the block's PSs at their least
  ``ceil(w / gamma_i)``, external PSs at ``w / gamma_i`` as in ``ub_capacity``): per slot and
  resource ``sum_{i, w} (alpha[i, r] w + beta[i, r] ceil(w / gamma_i)) z[i, t, w] + sum_i
  (alpha[i, r] + beta[i, r] / gamma_i) xE[i, t] <= sum_h C[h, r]``;
* *blocks in the packing rows* (Eq. 5 per machine, through the dual feasible functions
  ``f_k`` of Fekete and Schepers, Math. Program. 91:11-31, 2001, as in ``ub_capacity``, but
  with the block as ONE item): for ``k = 1..K`` (parameter ``dff``) and every slot and
  resource, ``sum_{i, w} F_k[i, w, r] z[i, t, w] + sum_i (phi_k(alpha[i, r]) +
  phi_k(beta[i, r]) / gamma_i) xE[i, t] <= H_r``, with ``F_k[i, w, r] = min_h f_k((alpha[i,
  r] w + beta[i, r] ceil(w / gamma_i)) / C[h, r])`` over the machines ``h`` the block fits
  on, ``phi_k`` ``ub_capacity``'s least per-item weight, ``H_r`` the machines with ``C[h, r]
  > 0``. Two blocks above half a machine in one resource weigh 1 each under ``f_1``: at
  most ``H_r`` of them a slot. A block of five 1-GPU workers on 8-GPU machines weighs 1
  under ``f_1``; ``ub_capacity`` counts its workers one by one, ``5 f_k(1/8) <= 5/8``.

Options. ``integral``: the completion choices ``y`` binary (``ub_capacity``'s MILP);
``modes``: the ``z`` binary too (and ``y``), so each slot of each job is either one internal
block of one size or external, never the mix of the two modes within a slot that every LP
here allows. A MILP's proven dual bound (HiGHS's ``mip_dual_bound``, never the incumbent)
is the bound; stopped at its limit, the smaller of that dual bound and the LP's.

Validity (every schedule the evaluator accepts maps to a feasible point of equal utility).
Map the schedule to ``ub_capacity``'s point as in :mod:`ddlsched.models.dmlrs_capacity`
(``y``, ``Y``, ``W``, ``xI``, ``xE``: feasible there, with the schedule's utility), and set
``z[i, t, w] = 1`` exactly when job ``i`` in slot ``t`` runs ``w`` workers with every worker
and PS on one machine ``h`` (then ``xI[i, t] = w``, else ``z = 0``). Then ``w <= WI_i``: the
``w`` workers and at least ``ceil(w / gamma_i)`` PSs fit on ``h`` and ``w <= F_i`` (Eq. 4),
and ``WI_i`` is the most that fit so on any machine; so the column exists and the block
fits on ``h``. The block-size row holds by construction. The mode row: the slot is
internal (``sum z = 1``, ``xE = 0``) or external (``z = 0``, ``xE = w <= WE_i``) or idle, and
only in slots ``a_i..t~_i`` of an accepted job, where the right-hand side is 1. The
capacity row is Eq. 5 summed over machines: a block uses ``alpha w + beta s >= alpha w +
beta ceil(w / gamma)`` on its machine (``s`` its PSs), an external slot at least ``alpha w +
beta w / gamma``. The packing rows hold machine by machine: on machine ``h`` in slot ``t``
the items (each internal block whole, each external worker and PS alone) have sizes
summing to at most 1 in resource ``r``, so their ``f_k`` sum to at most 1 (the dual
feasible function's property; ``f_k`` is non-decreasing, so a block with more PSs than
``ceil(w / gamma)`` weighs at least ``F_k``); the least weight over machines only lowers the
left-hand side, and a machine without resource ``r`` holds no item using it. Summed over
the ``H_r`` machines: the row. Integrality (``integral``, ``modes``) holds at the mapped
point. Hence the optimum of every variant ``>=`` every schedule's utility, in particular
``>= OPT``; and ``<= ub_capacity``'s LP (its rows are all kept), ``<= ub_trivial``.

Choices (ours): the packing of internal blocks is relaxed to these aggregated rows (no
configuration of a machine is enumerated); HiGHS directly through highspy, as
``ub_capacity`` (its :func:`~ddlsched.models.dmlrs_capacity.solve_highs`).

Measured (``benchmarks/dmlrs_blocks.py``; page ``benchmarks/results/dmlrs.md``): the block
rows alone (the LP) move ``ub_capacity`` by at most 0.1 % on the paper's instances, and
with binary completions they stay within 0.1 % of the capacity MILP, except where that MILP
is far from its LP (Fig. 8, 100 jobs, seed 0: 0.5 % lower). One mode a slot
(``modes=true``) is what bites: it proves ``tiny`` optima the capacity MILP misses by 15-20
%, and it proves Fig. 7's seed 0 at 20 jobs optimal (853.18, reached by ``improve`` with
ejection moves) in seconds; on the 20-machine Fig. 6 instances and 100-job Fig. 8
instances it does not finish in minutes, and its dual bound at the limit is 0.05-0.74 %
below the capacity MILP's.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ddlsched.deadline import Deadline
from ddlsched.errors import SolverError
from ddlsched.models.dmlrs_capacity import (
    CapacityModel,
    _packing_weights,
    build_capacity_model,
    job_speed,
    solve_highs,
)
from ddlsched.problems.dmlrs import DmlrsInstance
from ddlsched.solvers.dmlrs_machine import dual_feasible

__all__ = ["BlockModel", "block_weights", "blocks_bound", "build_block_model"]

#: Relative and absolute slack of "fits on a machine" (as :mod:`ddlsched.solvers.dmlrs_machine`).
_EPS = 1e-9


@dataclass
class BlockModel:
    """``ub_capacity``'s arrays (``capacity``) with the block columns and rows added;
    ``blocks[(i, t)]`` are the columns ``z[i, t, 1..WI_i]`` (module docstring)."""

    capacity: CapacityModel
    blocks: dict[tuple[int, int], list[int]] = field(default_factory=dict)


def block_weights(instance: DmlrsInstance, i: int, most: int, dff: int) -> np.ndarray:
    """Weights of job ``i``'s internal blocks of ``w = 1..most`` workers, shape ``(dff + 1,
    most, R)``: ``[0]`` the block's demand ``alpha w + beta ceil(w / gamma)``, ``[k]`` for
    ``k >= 1`` the least ``f_k`` of its share of a machine over the machines it fits on
    (module docstring, ``F_k``)."""
    job = instance.jobs[i]
    cap = instance.cap  # (H, R)
    counts = np.arange(1, most + 1, dtype=float)
    servers = np.ceil(counts / job.gamma - 1e-12)
    demand = counts[:, None] * instance.alpha[i][None, :] + servers[:, None] * instance.beta[i]
    weights = np.zeros((dff + 1, most, demand.shape[1]))
    weights[0] = demand
    if dff == 0:
        return weights
    with np.errstate(divide="ignore", invalid="ignore"):
        share = demand[:, None, :] / cap[None, :, :]  # (most, H, R)
    share = np.where(demand[:, None, :] > 0, share, 0.0)  # nothing used: 0 (also where C = 0)
    fits = np.all(share <= 1.0 + _EPS, axis=2)  # (most, H)
    share = np.minimum(share, 1.0)
    for k in range(1, dff + 1):
        value = np.where(fits[:, :, None], dual_feasible(share, k), np.inf).min(axis=1)
        weights[k] = np.where(demand > 0, np.where(np.isfinite(value), value, 0.0), 0.0)
    return weights


def build_block_model(
    instance: DmlrsInstance,
    integral: bool = False,
    modes: bool = False,
    deadline: Deadline | None = None,
    dff: int = 3,
) -> BlockModel:
    """The relaxation of the module docstring: ``ub_capacity``'s model (packing rows
    ``f_1..f_dff``) plus the block columns and rows; ``integral``: binary ``y``; ``modes``:
    binary ``y`` and ``z``."""
    deadline = deadline or Deadline.unlimited()
    base = build_capacity_model(instance, False, deadline, dff)
    model = BlockModel(base)
    T, R = instance.slots, len(instance.resources)
    gamma = np.asarray([job.gamma for job in instance.jobs], dtype=float)
    external = [instance.alpha + instance.beta / gamma[:, None]]
    external += [_packing_weights(instance, k) for k in range(1, dff + 1)]
    # load[(t, k, r)]: the entries of the slot's block row of f_k (k = 0: the plain demand)
    load: dict[tuple[int, int, int], list[tuple[int, float]]] = {}
    for i, job in enumerate(instance.jobs):
        deadline.check("ub_blocks' model")
        speed = job_speed(instance, i)
        last = (i, T)
        if last not in base.slot_columns:
            continue  # cannot finish by T: no column in ub_capacity either
        weights = block_weights(instance, i, speed.internal_workers, dff)
        finished = base.slot_columns[last][0]  # Y[i, T]
        for t in range(job.arrival_slot, T + 1):
            _, _, x_int, x_ext = base.slot_columns[(i, t)]
            z = base.columns(speed.internal_workers, 1.0, integer=modes)
            if speed.internal_workers:
                model.blocks[(i, t)] = [int(c) for c in z]
                sizes = [(int(c), -float(w)) for w, c in enumerate(z, start=1)]
                base.row([(x_int, 1.0), *sizes], 0.0, 0.0)  # xI = sum_w w z
            entries = [(int(c), 1.0) for c in z] + [(finished, -1.0)]
            if t > job.arrival_slot:
                entries.append((base.slot_columns[(i, t - 1)][0], 1.0))
            if x_ext >= 0:
                entries.append((x_ext, 1.0 / speed.external_workers))
            if len(z) or x_ext >= 0:
                base.row(entries, -math.inf, 0.0)  # one mode a slot
            for k in range(dff + 1):
                for r in range(R):
                    cells = load.setdefault((t, k, r), [])
                    cells += [(int(c), float(weights[k, w, r])) for w, c in enumerate(z)]
                    if x_ext >= 0:
                        cells.append((x_ext, float(external[k][i, r])))
    machines = (instance.cap > 0).sum(axis=0)
    pooled = instance.cap.sum(axis=0)
    for (_, k, r), cells in sorted(load.items()):
        cells = [(c, v) for c, v in cells if v > 0]
        if cells:
            right = float(pooled[r]) if k == 0 else float(machines[r])
            base.row(cells, -math.inf, right)
    if integral or modes:
        for col in base.completion.values():
            base.integer[col] = True
    return model


def blocks_bound(
    instance: DmlrsInstance,
    integral: bool = False,
    modes: bool = False,
    deadline: Deadline | None = None,
    dff: int = 3,
) -> tuple[float, dict[str, Any]]:
    """``(bound, info)``: ``min(LP, MILP dual bound if integral or modes, ub_trivial)``
    (module docstring); ``info`` holds each bound, the model's size, the statuses and the
    seconds.

    The LP must be solved (else :class:`~ddlsched.errors.SolverError`, or
    :class:`~ddlsched.errors.TimeLimitReached` at the deadline); the MILP gets the time left
    and, stopped at its limit, still gives its dual bound.
    """
    from ddlsched.models.dmlrs import ub_trivial

    deadline = deadline or Deadline.unlimited()
    started = time.perf_counter()
    trivial = ub_trivial(instance)
    info: dict[str, Any] = {"ub_trivial": trivial}
    model = build_block_model(instance, integral, modes, deadline, dff)
    arrays = model.capacity
    info.update(columns=arrays.num_cols, rows=arrays.num_rows, nonzeros=len(arrays.vals))
    info["block_columns"] = sum(len(cols) for cols in model.blocks.values())
    info["build_s"] = time.perf_counter() - started
    if not arrays.completion:  # no job can finish by T
        info["seconds"] = time.perf_counter() - started
        return 0.0, info
    kinds = list(arrays.integer)
    arrays.integer = [False] * arrays.num_cols
    status, lp = solve_highs(arrays, deadline.remaining_s())
    info["lp_status"], info["lp_bound"] = status, lp
    if lp is None:
        deadline.check("ub_blocks' LP")
        raise SolverError(f"ub_blocks: HiGHS stopped the LP with status {status}")
    bound = min(lp, trivial)
    if any(kinds):
        arrays.integer = kinds
        status, milp = solve_highs(arrays, deadline.remaining_s())
        info["milp_status"], info["milp_bound"] = status, milp
        if milp is not None:
            bound = min(bound, milp)
    info["seconds"] = time.perf_counter() - started
    return max(0.0, bound), info
