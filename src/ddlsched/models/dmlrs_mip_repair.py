"""Family ``dmlrs``: the MIP repair of ``improve`` (ours): ``exact``'s MILP on a window of jobs.

Paper: Yu et al., IEEE TNSE 2022 (reading notes of the paper): DMLRS (Eqs.
3-7); spec ``docs/families/dmlrs.md``, ``improve`` and ``exact``. Nothing
here is the paper's: a MIP-based large-neighbourhood search, the repair that
:mod:`ddlsched.heuristics.dmlrs_improve` calls for its MIP windows
(``mip_windows``).

:class:`MipRepair` builds the compact offline MILP of
:mod:`ddlsched.models.dmlrs_milp` (``exact``'s model, not a copy) over the
window's jobs only, on the residual capacity (``reserved``: what every other
job of the incumbent uses per slot, machine and resource is subtracted from
Eq. 5), adds two of ``exact``'s strengthenings that stay valid on a residual
capacity (:mod:`ddlsched.models.dmlrs_strong`: ``earliest`` and
``completion_work``; the pattern rows and capacity cuts are left out: their
size grows with ``F_i``, and the ``paper`` preset's ``F_i`` reach 200), and
hands the freed jobs' current plans to HiGHS as a MIP start
(:func:`plan_start`; a plan that meets its workload only within the
evaluator's ``1e-9`` slack or runs surplus PSs is no exact MILP point, and
HiGHS then ignores the start). The solve is budgeted in branch-and-bound
nodes (HiGHS ``mip_max_nodes``: the same work on every machine) and runs
through :func:`ddlsched.solvers.backends.solve_model` like every MILP of
the family, so the method's deadline stops it (the HiGHS worker process is
killed at the limit). The solution is decoded as ``exact``'s
(:meth:`ddlsched.models.dmlrs.ExactFormulation.decode`) into one plan per
accepted job of the window; the caller evaluates the whole schedule and
keeps the window only when the total utility rises.

How a solve ended (the second value of :meth:`MipRepair.__call__`):
``optimal`` (the window's MILP proven, absolute gap ``1e-9``), ``node
limit`` (HiGHS stopped at its node budget with an incumbent), ``time
limit`` (the deadline stopped it with an incumbent), ``no solution`` (the
node budget ran out before an incumbent: no plans), ``no job`` (no job of
the window can finish by ``T``). A deadline that stops the build or the
solve without an incumbent raises :class:`~ddlsched.errors.TimeLimitReached`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from ddlsched.deadline import Deadline
from ddlsched.errors import SolverError, TimeLimitReached
from ddlsched.models.dmlrs import ExactFormulation
from ddlsched.models.dmlrs_milp import build_model
from ddlsched.models.dmlrs_strong import Strengthening, strengthen
from ddlsched.problems.dmlrs import DmlrsInstance
from ddlsched.solvers.backends import solve_model
from ddlsched.solvers.limits import SolveLimits, check_model_size
from ddlsched.solvers.result import Status

if TYPE_CHECKING:
    import pyomo.environ as pyo

__all__ = ["DEFAULT_MIP_NODES", "MipRepair", "plan_start"]

#: HiGHS branch-and-bound nodes per window (ours; ``improve``'s ``mip_nodes``).
DEFAULT_MIP_NODES = 200
#: ``exact``'s strengthenings that hold on a residual capacity (module docstring).
_ROWS = replace(Strengthening.none(), earliest=True, completion_work=True)
_WHAT = "the MIP repair of a dmlrs improve window"

#: ``(slot, machine, workers, ps)``: one entry of a job's plan (as in ``improve``).
PlanEntry = tuple[int, int, int, int]


def plan_start(
    model: pyo.ConcreteModel, plans: dict[int, list[PlanEntry]]
) -> list[tuple[Any, float]]:
    """``(var, value)`` pairs of every variable of ``model`` (0 unless set) for the jobs'
    ``plans``: completion in the plan's last slot, a slot on one machine internal, on
    several external (a plan the model cannot hold is handed over anyway: HiGHS checks a
    start and ignores an infeasible one)."""
    import pyomo.environ as pyo
    from pyomo.common.collections import ComponentMap

    values = ComponentMap((var, 0.0) for var in model.component_data_objects(pyo.Var))
    live = set(model.dmlrs_jobs)
    for i, plan in sorted(plans.items()):
        if i not in live or not plan:
            continue
        last = max(t for t, _, _, _ in plan)
        if (i, last) not in model.c:
            continue
        values[model.c[i, last]] = 1.0
        per_slot: dict[int, list[tuple[int, int, int]]] = {}
        for t, h, w, s in plan:
            per_slot.setdefault(t, []).append((h, w, s))
        for t, uses in per_slot.items():
            if len({h for h, _, _ in uses}) == 1:
                h = uses[0][0]
                values[model.m[i, h, t]] = 1.0
                values[model.wI[i, h, t]] = float(sum(w for _, w, _ in uses))
                values[model.sI[i, h, t]] = float(sum(s for _, _, s in uses))
                continue
            values[model.e[i, t]] = 1.0
            for h, w, s in uses:
                values[model.wE[i, h, t]] += float(w)
                values[model.sE[i, h, t]] += float(s)
    return list(values.items())


@dataclass(frozen=True)
class MipRepair:
    """The repair of ``improve``'s MIP windows (module docstring); a
    :data:`ddlsched.heuristics.dmlrs_improve.WindowRepair` bound to ``instance``."""

    instance: DmlrsInstance
    backend: str = "highs"
    max_nodes: int = DEFAULT_MIP_NODES
    seed: int = 0

    def __call__(
        self,
        jobs: Sequence[int],
        reserved: np.ndarray,
        current: dict[int, list[PlanEntry]],
        deadline: Deadline,
    ) -> tuple[dict[int, list[PlanEntry]] | None, str]:
        """Plans for the accepted jobs among ``jobs`` on the capacity ``reserved`` leaves,
        and how the solve ended (module docstring)."""
        instance = self.instance
        cells = sum(instance.slots - instance.jobs[i].arrival_slot + 1 for i in jobs)
        check_model_size(_WHAT, cells * (5 * instance.num_machines + 2), "use a smaller mip_window")
        model = build_model(instance, jobs, deadline=deadline, reserved=reserved)
        if not model.dmlrs_jobs:
            return None, "no job"
        strengthen(model, instance, _ROWS)
        model.ddlsched_start = plan_start(model, current)
        deadline.check(_WHAT)
        limits = SolveLimits(
            abs_gap=1e-9, seed=self.seed, highs_options=(("mip_max_nodes", self.max_nodes),)
        )
        solve = solve_model(model, self.backend, limits, deadline)
        if not solve.has_solution:
            if solve.time_limit_hit:
                raise TimeLimitReached(solve.what_stopped(_WHAT) or f"{_WHAT} at the time limit")
            if solve.status in (Status.ERROR, Status.INFEASIBLE):
                # rejecting every job of the window is a point of the model: never infeasible
                raise SolverError(f"{_WHAT}: {solve.backend} ended with {solve.status}")
            return None, "no solution"
        if solve.status is Status.OPTIMAL:
            how = "optimal"
        else:
            how = "time limit" if solve.time_limit_hit else "node limit"
        schedule = ExactFormulation().decode(model, instance)
        plans: dict[int, list[PlanEntry]] = {i: [] for i in schedule.accepted}
        for a in schedule.alloc:
            plans[a.job].append((a.slot, a.machine, a.workers, a.ps))
        return plans, how
