"""The exact method and the trivial bound of family ``dmlrs``: ``exact``, ``ub_trivial``.

Paper: Yu et al., IEEE TNSE 2022 (reading notes of the paper): DMLRS (Eqs.
3-7). Spec ``docs/families/dmlrs.md``,
``exact`` and "Bounds" (``ub_trivial``). Column generation is
:mod:`ddlsched.models.dmlrs_colgen`.

The exact method's model is the compact offline MILP of DMLRS, built in
:mod:`ddlsched.models.dmlrs_milp` (its rows, the symmetry rows and why its
optimum is the evaluator's), strengthened (ours; each switch a
parameter of ``exact``, all but one on by default) by
:mod:`ddlsched.models.dmlrs_strong` (its validity arguments) and started
from :mod:`ddlsched.models.dmlrs_start` (the MIP start);
:class:`ExactFormulation` sizes, builds and decodes it and
:func:`solve_exact` is ``exact``'s strategy (the empty schedule when
``ub_trivial`` is 0, else the best heuristic schedule as a MIP start and the
MILP through :func:`~ddlsched.solvers.formulation.solve_formulation`; the
start is the answer when the solver ends at the limit without a schedule). The pricing and
``UB(p)`` are :mod:`ddlsched.models.dmlrs_dual`.

Size cap (*ours*): :data:`EXACT_MAX_CELLS` job-machine-slot cells; above
it ``exact`` refuses with one line giving the counts
(:class:`~ddlsched.errors.ModelTooLargeError`), before building, and
:func:`ddlsched.solvers.limits.check_model_size` applies as everywhere.

``ub_trivial`` (:func:`ub_trivial`): ``sum_i u_i(d_min_i - 1)`` over jobs
with ``a_i + d_min_i - 1 <= T`` (each job alone at its fastest).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from ddlsched.deadline import Deadline
from ddlsched.errors import ModelTooLargeError
from ddlsched.models.dmlrs_milp import build_model, model_arrays
from ddlsched.models.dmlrs_start import IMPROVE_WINDOWS, best_heuristic_schedule, start_values
from ddlsched.models.dmlrs_strong import Strengthening, strengthen
from ddlsched.problems.dmlrs import (
    DmlrsInstance,
    DmlrsSchedule,
    evaluate,
    fastest_slots,
    schedule_from_counts,
)
from ddlsched.solvers.limits import SolveLimits, check_model_size
from ddlsched.solvers.result import Outcome, Status

if TYPE_CHECKING:  # imported where a Pyomo model is built: ub_trivial never needs it
    import pyomo.environ as pyo

__all__ = ["EXACT_MAX_CELLS", "ExactFormulation", "job_upper_bound", "solve_exact", "ub_trivial"]

#: The largest ``jobs * machines * slots`` the exact MILP is built for (ours). Measured
#: (2 cores, HiGHS 1.14): at 20 jobs x 50 machines x 20 slots HiGHS overran a 60 s limit
#: by 16 s (a phase without time checks) with the empty schedule as incumbent; at 5,000
#: cells the limits held within 0.2 s, and HiGHS still found nothing better than the empty
#: schedule in 60 s on ``paper``-like instances: ``exact`` is for tiny instances.
#: Re-measured with the strengthened model (load 12 on 2 cores): at 5,000 cells
#: (``paper``, 5 x 50 x 20) it proves in 7 s (plain model: 14 s); at 10,000 cells (10 x 50
#: x 20, 25 x 20 x 20) the limits held within 2.6 s, but on one of three instances the
#: build took 23 s and HiGHS ended without a schedule (the MIP start is then the answer);
#: at 20,000 cells likewise. The cap stays at 5,000.
EXACT_MAX_CELLS = 5_000


# --------------------------------------------------------------------------- ub_trivial


def job_upper_bound(instance: DmlrsInstance, i: int) -> float:
    """``u_i(d_min_i - 1)`` if job ``i`` can complete by ``T``, else 0: the most it can earn."""
    job = instance.jobs[i]
    d_min = fastest_slots(instance, i)
    if job.arrival_slot + d_min - 1 > instance.slots:
        return 0.0
    return float(job.utility(d_min - 1))


def ub_trivial(instance: DmlrsInstance) -> float:
    """``sum_i u_i(d_min_i - 1)`` over jobs with ``a_i + d_min_i - 1 <= T`` (spec, bound 2).

    Each job alone at its fastest: every schedule earns at most this.
    """
    return float(math.fsum(job_upper_bound(instance, i) for i in range(len(instance.jobs))))


# --------------------------------------------------------------------------- exact


def check_exact_size(instance: DmlrsInstance) -> None:
    """Refuse (:class:`~ddlsched.errors.ModelTooLargeError`, one line with the counts) an
    instance above :data:`EXACT_MAX_CELLS` cells or the memory guard's variable count."""
    n, H, T = len(instance.jobs), instance.num_machines, instance.slots
    cells = n * H * T
    if cells > EXACT_MAX_CELLS:
        raise ModelTooLargeError(
            f"dmlrs exact: {n} jobs x {H} machines x {T} slots = {cells:,} cells, more than "
            f"the {EXACT_MAX_CELLS:,} the exact MILP is built for; use colgen or ub_trivial"
        )
    variables = sum((T - instance.jobs[i].arrival_slot + 1) * (5 * H + 2) for i in range(n))
    check_model_size("dmlrs exact MILP", variables, "use fewer jobs, machines or slots")


_PLAIN = Strengthening.none()


@dataclass(frozen=True)
class ExactFormulation:
    """The compact offline MILP of DMLRS (module docstring) as a Formulation (maximises).

    ``strengthening`` selects the rows of :mod:`ddlsched.models.dmlrs_strong` (default:
    none, the plain model); ``start`` is a schedule handed to the solver as a MIP start.
    """

    strengthening: Strengthening = _PLAIN
    start: DmlrsSchedule | None = None
    name: ClassVar[str] = "dmlrs.exact"
    sense: ClassVar[str] = "max"
    metric: ClassVar[str | None] = None
    always_feasible: ClassVar[bool] = True  # rejecting every job is a schedule
    highs_options: ClassVar[tuple[tuple[str, object], ...]] = ()

    def build(self, instance: DmlrsInstance, deadline: Deadline) -> pyo.ConcreteModel:
        check_exact_size(instance)
        model = build_model(instance, deadline=deadline)
        strengthen(model, instance, self.strengthening)
        if self.start is not None:
            model.ddlsched_start = start_values(model, instance, self.start)
        deadline.check("building the dmlrs MILP")
        return model

    def objective_scale(self, instance: DmlrsInstance) -> float:
        return 1.0

    def decode(self, model: pyo.ConcreteModel, instance: DmlrsInstance) -> DmlrsSchedule:
        accepted, entries = [], []
        for i in model.dmlrs_jobs:
            workers, ps, completion = model_arrays(model, instance, i)
            if completion.sum() < 0.5:
                continue
            accepted.append(i)
            a = instance.jobs[i].arrival_slot
            for k in np.flatnonzero(workers.sum(axis=0) > 0):
                for h in np.flatnonzero((workers[:, k] > 0) | (ps[:, k] > 0)):
                    entries.append((i, a + int(k), int(h), int(workers[h, k]), int(ps[h, k])))
        return schedule_from_counts(accepted, entries)

    def measure(self, instance: DmlrsInstance, schedule: DmlrsSchedule) -> float:
        return float(evaluate(instance, schedule).total_utility)


def solve_exact(
    instance: DmlrsInstance,
    backend: str,
    seed: int | None,
    cross_check: bool,
    deadline: Deadline,
    before_pyomo: Callable[[], None] = lambda: None,
    strengthening: Strengthening | None = None,
) -> Outcome:
    """``exact``'s strategy: the empty schedule, proven optimal, when :func:`ub_trivial` is 0
    (no job can finish by ``T``; the MILP would have no variable, which HiGHS refuses),
    else :class:`ExactFormulation` through
    :func:`~ddlsched.solvers.formulation.solve_formulation` (absolute gap ``1e-9``).
    ``before_pyomo`` runs before Pyomo is needed (the family's check of the time left for
    its import). ``strengthening`` (default: :class:`Strengthening`'s defaults, from
    :mod:`ddlsched.models.dmlrs_strong`) selects the strengthened rows and the MIP start
    from :func:`~ddlsched.models.dmlrs_start.best_heuristic_schedule`; when the solver ends
    at the time limit without a schedule, that start is the answer (``feasible``,
    ``info['fallback']``)."""
    which = Strengthening() if strengthening is None else strengthening
    if ub_trivial(instance) == 0.0:
        info = {"proof": "ub_trivial is 0: no job can complete by T"}
        return Outcome(DmlrsSchedule(accepted=()), Status.OPTIMAL, bound=0.0, info=info)
    before_pyomo()
    from ddlsched.solvers.formulation import solve_formulation

    check_exact_size(instance)  # before the heuristics of the start
    windows = IMPROVE_WINDOWS if which.improve_start else 0
    start = best_heuristic_schedule(instance, seed, deadline, windows) if which.start else None
    limits = SolveLimits(abs_gap=1e-9, seed=seed)
    outcome = solve_formulation(
        ExactFormulation(which, start), instance, backend, limits, cross_check, deadline=deadline
    )
    if outcome.schedule is None and start is not None and outcome.time_limit_hit:
        info = {
            **outcome.info,
            "fallback": "the MIP start: the solver had no schedule at the limit",
        }
        return replace(outcome, schedule=start, status=Status.FEASIBLE, claim=None, info=info)
    return outcome
