"""Problem (23) of PD-ORS as a Pyomo model: the statement of record of ``dmlrs_slot.ilp``.

Paper: Yu et al., IEEE TNSE 2022 (reading notes of the paper), Algorithm 4's
external case, Problem (23) with the spec's PS row (``docs/families/dmlrs_slot.md``,
"The formulation"); the rows are those of :mod:`ddlsched.problems.dmlrs_slot`::

    min  sum_h pw[h] w_h + ps[h] s_h
    s.t. alpha[r] w_h + beta[r] s_h <= C^[h, r]        (24)
         sum_h w_h <= F                                (25)
         sum_h w_h >= D                                (26)
         gamma sum_h s_h >= sum_h w_h                  (PS row)
         w_h, s_h integer >= 0

With ``demand_internal`` set (the whole per-slot problem, Fact 1), binaries
``u_h`` (machine ``h`` used: ``w_h + s_h <= 2 F u_h``) and ``y`` (one
machine only: ``sum_h u_h <= 1 + (H - 1)(1 - y)``) relax (26) to ``sum_h
w_h >= D - (D - D_int) y``.

The objective is scaled by :func:`cost_scale` (positive coefficients centred on 1;
unlike the direct highspy path, no cost is zeroed, so the model's optimum is the
exact cost's).

``relax = True`` gives the LP relaxation (the ``lp`` method's bound is
computed by :mod:`ddlsched.solvers.dmlrs_slot_lp`, which a test checks against
this model). Capacities are rows, never fractional variable bounds (HiGHS
1.14 with presolve off mishandles fractional upper bounds of integer
variables: found while testing :mod:`ddlsched.solvers.dmlrs_slot_lp`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pyomo.environ as pyo

from ddlsched.deadline import Deadline
from ddlsched.problems.dmlrs_slot import SlotAllocation, SlotInstance, evaluate
from ddlsched.solvers.dmlrs_slot_lp import cost_scale as _cost_scale
from ddlsched.solvers.formulation import solve_formulation
from ddlsched.solvers.limits import SolveLimits
from ddlsched.solvers.result import Outcome

__all__ = ["SlotFormulation", "build_slot_model", "solve_ilp"]


def build_slot_model(instance: SlotInstance, relax: bool = False) -> pyo.ConcreteModel:
    """The Pyomo model of Problem (23) with the PS row (module docstring)."""
    H = instance.num_machines
    alpha, beta, cap = instance.alpha, instance.beta, instance.cap
    pw, ps = instance.pw, instance.pps
    domain = pyo.NonNegativeReals if relax else pyo.NonNegativeIntegers
    m = pyo.ConcreteModel("dmlrs_slot")
    m.H = pyo.RangeSet(0, H - 1)
    m.w = pyo.Var(m.H, domain=domain, bounds=(0, instance.global_batch))
    m.s = pyo.Var(m.H, domain=domain, bounds=(0, instance.global_batch))
    rows = [(h, r) for h in range(H) for r in range(len(alpha)) if alpha[r] + beta[r] > 0]
    m.capacity = pyo.Constraint(
        rows, rule=lambda m, h, r: alpha[r] * m.w[h] + beta[r] * m.s[h] <= float(cap[h, r])
    )
    total_w = sum(m.w[h] for h in m.H)
    m.worker_cap = pyo.Constraint(expr=total_w <= instance.global_batch)
    d_int = instance.demand_internal
    if d_int is not None and d_int < instance.demand and not relax:
        big = 2 * instance.global_batch
        m.u = pyo.Var(m.H, domain=pyo.Binary)
        m.y = pyo.Var(domain=pyo.Binary)
        m.used = pyo.Constraint(m.H, rule=lambda m, h: m.w[h] + m.s[h] <= big * m.u[h])
        m.single = pyo.Constraint(expr=sum(m.u[h] for h in m.H) <= 1 + (H - 1) * (1 - m.y))
        m.cover = pyo.Constraint(expr=total_w >= instance.demand - (instance.demand - d_int) * m.y)
    else:
        m.cover = pyo.Constraint(expr=total_w >= instance.demand)
    m.ps_row = pyo.Constraint(expr=instance.gamma * sum(m.s[h] for h in m.H) >= total_w)
    costs = np.concatenate([pw, ps]) * cost_scale(instance)
    m.cost = pyo.Objective(
        expr=sum(float(costs[h]) * m.w[h] + float(costs[H + h]) * m.s[h] for h in m.H),
        sense=pyo.minimize,
    )
    return m


def cost_scale(instance: SlotInstance) -> float:
    """Model units per cost unit: prices go down to ``L ~ 1e-8``, below the solvers'
    tolerances; the positive cost coefficients are centred on 1
    (:func:`ddlsched.solvers.dmlrs_slot_lp.cost_scale`)."""
    return _cost_scale(np.concatenate([instance.pw, instance.pps]))


@dataclass(frozen=True)
class SlotFormulation:
    """The ILP of Problem (23) behind the :class:`~ddlsched.solvers.formulation.Formulation`
    interface (exact, minimisation of the allocation's cost)."""

    name: ClassVar[str] = "slot_ilp"
    sense: ClassVar[str] = "min"
    metric: ClassVar[str | None] = None
    always_feasible: ClassVar[bool] = False  # D > F, or no room: infeasible
    highs_options: ClassVar[tuple[tuple[str, object], ...]] = ()

    def build(self, instance: SlotInstance, deadline: Deadline) -> pyo.ConcreteModel:
        """The model (small: ``2 H`` integers)."""
        deadline.check("building the slot ILP")
        return build_slot_model(instance)

    def objective_scale(self, instance: SlotInstance) -> float:
        """Model units per cost unit (:func:`cost_scale`)."""
        return cost_scale(instance)

    def decode(self, model: pyo.ConcreteModel, instance: SlotInstance) -> SlotAllocation:
        """The integer counts of a solved model."""
        w = tuple(round(pyo.value(model.w[h])) for h in model.H)
        s = tuple(round(pyo.value(model.s[h])) for h in model.H)
        return SlotAllocation(w, s)

    def measure(self, instance: SlotInstance, schedule: SlotAllocation) -> float:
        """The evaluator's cost of the allocation."""
        return evaluate(instance, schedule).cost


def solve_ilp(
    instance: SlotInstance, backend: str, seed: int | None, cross_check: bool, deadline: Deadline
) -> Outcome:
    """``ilp``'s strategy: :class:`SlotFormulation` through
    :func:`~ddlsched.solvers.formulation.solve_formulation` (absolute gap ``1e-9``;
    ``cross_check`` re-proves an optimum with the other backend)."""
    limits = SolveLimits(abs_gap=1e-9, seed=seed)
    return solve_formulation(
        SlotFormulation(), instance, backend, limits, cross_check, deadline=deadline
    )
