"""Instances of family ``dmlrs_slot`` (one Problem (23)): preset ``synthetic``.

Spec ``docs/families/dmlrs_slot.md``, "Presets, files and data". ``synthetic`` (ours where
the spec is silent):

* a ``paper`` instance of ``jobs`` (50) jobs on ``machines`` (100) machines,
  ``slots`` (20), from the same seed, gives the price function (``U^r`` and
  ``L`` of Eqs. 13-14, computed by the family's ``prices_of``) and the job:
  one of its jobs, drawn uniformly;
* every machine gets a seeded load ``rho[h, r] ~ U[0, load C[h, r])``
  (``load`` = 1 by default, the spec's ``U[0, C)``), residual ``C - rho`` and
  prices ``p = Q(rho)`` (Eq. 12), so ``pw[h] = sum_r p alpha`` and ``ps[h] =
  sum_r p beta``;
* the covering demand ``D`` is uniform in ``1..F`` (or, with ``demand_share``
  set, ``max(1, round(demand_share F))``; ours: lets a study hold ``D / F``
  fixed, since ``G_delta D > F`` breaks row (25) in every draw);
  ``meta.demand_internal``
  is ``D_i(v, b_int)`` for the samples ``v`` that ``D`` workers process at
  ``b_ext`` in one slot (what the ``internal`` method needs).

The other instances of the family are the files PD-ORS writes with
``--param dump_slot_problems=DIR`` (read with ``ddlsched solve dmlrs_slot FILE``).

Preset parameters (``--set``) are typed and ranged by :data:`PRESET_PARAMS`,
derived from :func:`synthetic`'s signature (:func:`ddlsched.params.signature_params`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ddlsched.errors import InvalidInstanceError
from ddlsched.params import PresetTable, declare, signature_params
from ddlsched.problems.dmlrs import (
    MAX_JOBS,
    MAX_MACHINES,
    MAX_SLOTS,
    DmlrsInstance,
    samples_in_slot,
    workers_needed,
)
from ddlsched.problems.dmlrs_slot import SlotInstance
from ddlsched.rng import make_rng
from ddlsched.workloads.dmlrs import paper

__all__ = ["PRESETS", "PRESET_PARAMS", "generate"]

PRESETS = ("synthetic",)

#: ``prices_of(instance)`` -> ``price(rho, capacity)`` (Eq. 12), injected by the family.
PricesOf = Callable[[DmlrsInstance], Callable[[np.ndarray, np.ndarray], np.ndarray]]


def synthetic(
    seed: int = 0,
    *,
    prices_of: PricesOf,
    jobs: int = 50,
    machines: int = 100,
    slots: int = 20,
    load: float = 1.0,
    demand_share: float | None = None,
    internal: bool = False,
) -> SlotInstance:
    """The ``synthetic`` preset (module docstring)."""
    share = demand_share
    if not isinstance(internal, bool):
        raise InvalidInstanceError(f"internal: expected true or false, got {internal!r}")
    for name, value, ok in (
        ("load", load, isinstance(load, (int, float)) and 0 <= load <= 1),
        (
            "demand_share",
            share,
            share is None or (isinstance(share, (int, float)) and 0 < share <= 1),
        ),
    ):
        if isinstance(value, bool) or not ok:
            raise InvalidInstanceError(f"{name}: expected a number in (0, 1], got {value!r}")
    base = paper(seed, jobs=jobs, machines=machines, slots=slots)
    price = prices_of(base)
    rng = make_rng(seed).spawn(1)[0]  # a stream of its own: the paper instance used seed
    i = int(rng.integers(len(base.jobs)))
    job = base.jobs[i]
    cap = base.cap
    rho = rng.uniform(0.0, 1.0, cap.shape) * cap * float(load)
    p = price(rho, cap)
    demand = int(rng.integers(1, job.global_batch + 1))
    if share is not None:
        demand = max(1, round(float(share) * job.global_batch))
    samples = samples_in_slot(job, demand, base.b_ext, base.slot_s)
    demand_internal = workers_needed(job, samples, base.b_int, base.slot_s)
    return SlotInstance(
        resources=base.resources,
        worker_price=tuple(float(x) for x in p @ base.alpha[i]),
        ps_price=tuple(float(x) for x in p @ base.beta[i]),
        worker=job.worker,
        ps=job.ps,
        residual=tuple(tuple(float(x) for x in row) for row in cap - rho),
        gamma=job.gamma,
        global_batch=job.global_batch,
        demand=demand,
        demand_internal=demand_internal if internal else None,
        meta={
            "preset": "synthetic",
            "seed": seed,
            "job": i,
            "demand_internal": demand_internal,
        },
    )


#: The typed parameters of the preset (``ddlsched presets dmlrs_slot``).
PRESET_PARAMS = {
    "synthetic": signature_params(
        synthetic,
        "DmlrsSlotSyntheticParams",
        {
            "jobs": declare(
                "jobs of the paper instance behind the prices", minimum=1, maximum=MAX_JOBS
            ),
            "machines": declare("machines (and their loads)", minimum=1, maximum=MAX_MACHINES),
            "slots": declare("slots T of the paper instance", minimum=1, maximum=MAX_SLOTS),
            "load": declare("machine loads rho ~ U[0, load C)", minimum=0, maximum=1),
            "demand_share": declare(
                "demand D = max(1, round(share F)) (default: D uniform in 1..F)",
                minimum=0,
                maximum=1,
                exclusive_minimum=True,
            ),
            "internal": declare("give the instance demand_internal (the internal method's)"),
        },
        exclude=("prices_of",),
    )
}


#: Preset name -> builder and parameter class (:class:`ddlsched.params.PresetTable`).
PRESET_TABLE = PresetTable(
    "dmlrs_slot",
    {"synthetic": synthetic},
    PRESET_PARAMS,
    hint="; or a file dumped by pd_ors --param dump_slot_problems=DIR",
)


def generate(preset: str, seed: int = 0, *, prices_of: PricesOf, **params: Any) -> SlotInstance:
    """A ``dmlrs_slot`` instance of ``preset`` from ``seed`` (``prices_of``: the family's)."""
    return PRESET_TABLE.build(preset, seed, params, prices_of=prices_of)
