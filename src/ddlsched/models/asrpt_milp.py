"""The time-indexed MILP of family ``asrpt``'s offline optimum (the cross-check of CP-SAT).

A-SRPT paper, Problem (8) under Eqs. (1)-(3); spec ``docs/families/asrpt.md``,
``exact``. The data (modes, windows
``L_i``, the clique cuts) are :mod:`ddlsched.models.asrpt_integer`'s; the
strategy that solves it (``solver="milp"`` or ``cross_check``) is
:func:`ddlsched.models.asrpt_exact.solve_exact`.

Model (:func:`build_time_indexed`, as a Formulation
:class:`TimeIndexedFormulation`; decoded by :func:`decode_time_indexed`):

    A start binary ``x[i,u,t]`` per job, mode and start time ``t in [r_i,
    L_i - d_iu]``; ``sum_{u,t} x[i,u,t] = 1``; a continuous ``z[i,u,t] =
    sum_{t' <= t} x[i,u,t']`` (started by ``t``, defined by the recurrence
    ``z[t] = z[t-1] + x[t]``), so that job ``i`` runs mode ``u`` at ``tau``
    iff ``z[i,u,tau] - z[i,u,tau - d_iu] = 1``; capacity per server and
    time unit ``sum_{i,u} u_m (z[i,u,tau] - z[i,u,tau - d_iu]) <= g``
    (rows only where the jobs that may run could exceed ``g``); minimise
    ``sum (t + d_iu) x[i,u,t]``. The recurrence keeps each capacity row at
    two entries per (job, mode) instead of ``d_iu``; its LP relaxation is
    the classical one's (a unimodular change of variables).

Clique cuts (:func:`~ddlsched.models.asrpt_integer.cliques`): ``sum_{members}
(z[tau] - z[tau - d]) <= 1`` per time unit.

Choice (the spec leaves it open):

* The MILP's objective is integral (time units), so it is solved with an
  absolute gap of 0.5 and its dual bound is rounded up.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import pyomo.environ as pyo

from ddlsched.deadline import Deadline
from ddlsched.errors import SolverError
from ddlsched.models.asrpt_integer import IntegerData, IntegerSolution, cliques
from ddlsched.solvers.limits import check_model_size

__all__ = ["TimeIndexedFormulation", "build_time_indexed", "decode_time_indexed"]


def _windows(data: IntegerData) -> list[tuple[int, int, int, int]]:
    """``(i, k, first start, last start)`` of every (job, mode) that fits its window."""
    out = []
    for i in range(data.num_jobs):
        for k in data.feasible_modes(i):
            d = data.modes[i][k].duration
            out.append((i, k, data.release[i], data.latest_end[i] - d))
    return out


def build_time_indexed(data: IntegerData, deadline: Deadline | None = None) -> pyo.ConcreteModel:
    """The time-indexed MILP (module docstring), objective in time units."""
    deadline = deadline or Deadline.unlimited()
    cluster = data.instance.cluster
    g = cluster.gpus_per_server
    windows = _windows(data)
    num_starts = sum(last - first + 1 for _, _, first, last in windows)
    check_model_size(
        "asrpt time-indexed MILP", 2 * num_starts, "lower max_horizon_units or use CP-SAT"
    )
    window_of = {(i, k): (first, last) for i, k, first, last in windows}
    index = [(i, k, t) for i, k, first, last in windows for t in range(first, last + 1)]
    model = pyo.ConcreteModel(name="asrpt_time_indexed")
    model.IKT = pyo.Set(initialize=index, dimen=3, ordered=True)
    model.x = pyo.Var(model.IKT, domain=pyo.Binary)  # job i starts in mode k at t
    model.z = pyo.Var(model.IKT, bounds=(0, 1))  # job i started in mode k by t
    deadline.check("building the asrpt time-indexed MILP")

    @model.Constraint(range(data.num_jobs))
    def one_start(m_, i):  # every job starts once, in one mode
        return sum(m_.x[i, k, t] for (j, k, t) in index if j == i) == 1

    @model.Constraint(model.IKT)
    def started_by(m_, i, k, t):  # z[t] = z[t-1] + x[t]
        first = window_of[i, k][0]
        if t == first:
            return m_.z[i, k, t] == m_.x[i, k, t]
        return m_.z[i, k, t] == m_.z[i, k, t - 1] + m_.x[i, k, t]

    deadline.check("building the asrpt time-indexed MILP")

    def z_at(i: int, k: int, t: int):
        first, last = window_of[i, k]
        if t < first:
            return 0
        return model.z[i, k, min(t, last)]

    rows = []
    for m in range(cluster.servers):
        users = [
            (i, k, data.modes[i][k].usage[m]) for i, k, _, _ in windows if data.modes[i][k].usage[m]
        ]
        for tau in range(data.horizon):
            running = []
            potential: dict[int, int] = {}
            for i, k, u in users:
                first, last = window_of[i, k]
                d = data.modes[i][k].duration
                if d and first <= tau < last + d:
                    running.append((i, k, u, d))
                    potential[i] = max(potential.get(i, 0), u)
            if sum(potential.values()) > g:
                rows.append((m, tau, running))
    model.ROWS = pyo.Set(initialize=range(len(rows)))
    deadline.check("building the asrpt time-indexed MILP")

    @model.Constraint(model.ROWS)
    def capacity(m_, row):  # Eq. (3): sum_{i,u} u_m [job i runs mode u at tau] <= g
        _, tau, running = rows[row]
        return sum(u * (z_at(i, k, tau) - z_at(i, k, tau - d)) for i, k, u, d in running) <= g

    # Clique cuts: members of a clique pairwise exceed the capacity, so at most one runs.
    cut_rows = []
    for clique_members in cliques(data):
        members = [(i, k, data.modes[i][k].duration) for i, k in clique_members]
        for tau in range(data.horizon):
            active = [
                (i, k, d)
                for i, k, d in members
                if d and window_of[i, k][0] <= tau < window_of[i, k][1] + d
            ]
            if len({i for i, _, _ in active}) >= 2:
                cut_rows.append((tau, active))
    model.CUTS = pyo.Set(initialize=range(len(cut_rows)))

    @model.Constraint(model.CUTS)
    def clique(m_, row):  # at most one member of a clique runs at tau
        tau = cut_rows[row][0]
        return sum(z_at(i, k, tau) - z_at(i, k, tau - d) for i, k, d in cut_rows[row][1]) <= 1

    model.objective = pyo.Objective(  # Eq. (8): sum_i C_i in time units
        expr=sum((t + data.modes[i][k].duration) * model.x[i, k, t] for (i, k, t) in index),
        sense=pyo.minimize,
    )
    return model


def decode_time_indexed(model: pyo.ConcreteModel, data: IntegerData) -> IntegerSolution:
    """Each job's start and mode in a solved :func:`build_time_indexed` model (its ``x``
    above 0.5); a :class:`~ddlsched.errors.SolverError` if a job starts twice or never."""
    start = [None] * data.num_jobs
    mode = [None] * data.num_jobs
    for i, k, t in model.IKT:
        if (pyo.value(model.x[i, k, t], exception=False) or 0.0) > 0.5:
            if start[i] is not None:
                raise SolverError(f"the MILP starts job {i} twice")
            start[i], mode[i] = t, k
    if any(s is None for s in start):
        raise SolverError("the MILP solution leaves a job unstarted")
    return IntegerSolution(tuple(start), tuple(mode))  # type: ignore[arg-type]


@dataclass(frozen=True)
class TimeIndexedFormulation:
    """The time-indexed MILP as a :class:`~ddlsched.solvers.formulation.Formulation`.

    Its instance is the :class:`IntegerData`, its schedule an
    :class:`IntegerSolution`; ``measure`` is the solution's ``sum_i C_i`` on the
    integer data in seconds (equal to the evaluator's total when the data are
    exact; the caller evaluates the decoded schedule).
    """

    name: ClassVar[str] = "asrpt.time_indexed"
    sense: ClassVar[str] = "min"
    metric: ClassVar[str | None] = None
    always_feasible: ClassVar[bool] = True  # the windows hold the greedy incumbent
    highs_options: ClassVar[tuple[tuple[str, object], ...]] = ()

    def build(self, instance: IntegerData, deadline: Deadline) -> pyo.ConcreteModel:
        return build_time_indexed(instance, deadline)

    def objective_scale(self, instance: IntegerData) -> float:
        return 1.0 / instance.instance.time_unit_s

    def decode(self, model: pyo.ConcreteModel, instance: IntegerData) -> IntegerSolution:
        return decode_time_indexed(model, instance)

    def measure(self, instance: IntegerData, schedule: IntegerSolution) -> float:
        return schedule.objective(instance) * instance.instance.time_unit_s
