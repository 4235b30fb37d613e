"""The exact formulation of RAR-DDLS (spec ``rar.md``, "Exact and bounding").

``exact`` — a compact time-indexed MILP of RAR-DDLS itself, contention
included (the spec's suggested shape). Slots ``t = 0..H-1``:

* ``x[j,t]`` start binaries, ``f[j,t]`` finish binaries (``T_j = t``);
  ``a[j,t] = sum_{t'<=t} x - sum_{t'<=t} f`` is the activity of slot ``t``,
  contiguous from ``a_j`` to ``T_j - 1`` because ``sum_{t'<=t} f <=
  sum_{t'<t} x`` (non-preemption, Eq. 3).
* ``y[j,s]`` integer GPUs on server ``s`` (Eq. 1 ``sum_s y = G_j``);
  ``used[j,s] = [y > 0]``, ``whole[j,s] <= [y = G_j]``,
  ``split = used - whole`` (Sec. 4.1: split when ``0 < y_js < G_j``).
* capacity (Eq. 2): ``w[j,s,t] >= y[j,s] - min(G_j, O_s) (1 - a[j,t])``,
  ``sum_j w[j,s,t] <= O_s`` (``y[j,s] <= min(G_j, O_s)``, so the smaller big-M is valid).
* contention (Eq. 6): ``z[j,s,t] >= split[j,s] + a[j,t] - 1``,
  ``cnt[s,t] = sum_j z[j,s,t]``; a one-hot ``q[j,t,(c,n)]`` (``sum q =
  a[j,t]``) picks the contention level ``c`` and server count ``n`` of the
  slot with ``sum c q >= cnt[s,t] - M_s (1 - z[j,s,t])`` and ``sum n q >=
  sum_s used[j,s] - S (1 - a[j,t])``.
* progress (Eq. 9): ``sum_t sum_(c,n) Phi_j(c,n) q[j,t,(c,n)] >= F_j`` with
  ``Phi_j(c,n)`` the iterations per slot of Eq. (8) at ``p_j = c`` on ``n``
  servers. ``Phi`` decreases in ``c`` and ``n``, so lower bounds on both are
  exact: an optimal solution never over-states them.
* makespan ``C >= sum_t t f[j,t]``; objective ``min C``.

The horizon ``H`` of the model is ``T`` without an incumbent; with one of
makespan ``U`` (:func:`solve_exact`) it is ``U - 1``, the model asking for a
strictly shorter schedule: an optimal schedule never ends later than a
feasible one, so the restriction keeps the optimum (or proves the incumbent
optimal when it is infeasible) and shrinks the model. Decoding assigns GPU ids inside
each server by interval colouring of the model's activity intervals; the
family evaluator then executes the schedule, and for a proven optimum its
makespan must equal the MILP objective (checked, loudly).

The bounds that prove most optima on small instances are ``timeindexed``
(:mod:`ddlsched.models.rar_timeindexed`), ``load_lb`` and the closed forms
(:mod:`ddlsched.models.rar_bounds`); :func:`solve_exact` takes an incumbent and a lower bound from them.

Where contention decides the optimum, this MILP's dual bound stays at the
contention-free value (its LP relaxation spreads the one-hot contention
indicators ``q``); the ``exact`` method therefore runs the combinatorial
branch-and-bound of :mod:`ddlsched.models.rar_search` first on instances
within its limits and this MILP only elsewhere or after it.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Any, ClassVar

import pyomo.environ as pyo

from ddlsched.deadline import Deadline
from ddlsched.errors import ModelTooLargeError, SolverError
from ddlsched.models.rar_bounds import ceil_bound, closed_form_bounds, integral_limits, rho_min
from ddlsched.problems.rar import RarInstance, RarJob
from ddlsched.problems.rar_schedule import RarAssignment, RarEvaluation, RarSchedule, evaluate
from ddlsched.problems.rar_timing import (
    iteration_time,
    iterations_per_slot,
    max_contention,
    max_servers,
    min_servers,
)
from ddlsched.solvers.formulation import solve_formulation
from ddlsched.solvers.limits import SolveLimits, check_model_size
from ddlsched.solvers.result import Outcome, Status

__all__ = [
    "ExactModel",
    "RarExactFormulation",
    "build_exact",
    "check_exact_size",
    "decode_exact",
    "solve_exact",
]

log = logging.getLogger(__name__)


def _checked(rule, deadline: Deadline, what: str):
    """A Pyomo rule that checks ``deadline`` every 4,096 calls (a block of the exact MILP
    holds millions of rows at scale)."""
    calls = 0

    def checked_rule(m, *index):
        nonlocal calls
        calls += 1
        if calls % 4096 == 0:
            deadline.check(what)
        return rule(m, *index)

    return checked_rule


# --------------------------------------------------------------------------- exact MILP


@dataclass
class ExactModel:
    """The exact MILP and what decoding needs."""

    model: pyo.ConcreteModel
    horizon: int
    configs: dict[int, list[tuple[int, int]]]  # job index -> [(c, n)]


def _configs(instance: RarInstance, job: RarJob) -> list[tuple[int, int]]:
    """Admissible (contention level c, server count n) pairs of a job.

    A pair in which the job makes no progress (``Phi = 0``, possible under
    the ``floor`` rule) is left out: the evaluator rejects a schedule that
    ever runs a job at zero speed, so the model must not plan one.
    """
    out = []
    if job.gpus <= max(instance.servers):
        out.append((0, 1))
    if job.gpus >= 2:
        top = max_contention(instance)
        for n in range(
            max(2, min_servers(job, instance.servers)), max_servers(job, instance.servers) + 1
        ):
            out.extend((c, n) for c in range(1, top + 1))
    return [(c, n) for c, n in out if _progress(instance, job, c, n) > 0]


def _progress(instance: RarInstance, job: RarJob, c: int, n: int) -> float:
    tau = iteration_time(job, instance.network, n, c)
    return iterations_per_slot(tau, instance.progress)


def check_exact_size(instance: RarInstance, horizon: int) -> None:
    """Raise :class:`~ddlsched.errors.ModelTooLargeError` if the MILP over ``horizon`` is too big.

    Counts the variables :func:`build_exact` would create (starts ``x`` and
    finishes ``f``; per job and slot ``a``, ``w`` per server and ``q`` per
    configuration; ``y``, ``used``, ``whole``; ``z`` per multi-GPU job,
    server and slot) without building anything.
    """
    S = instance.num_servers
    variables = 0
    for job in instance.jobs:
        d = rho_min(job, instance)
        variables += 2 * max(0, horizon - d + 1)
        variables += horizon * (1 + S + len(_configs(instance, job))) + 3 * S
        if job.gpus >= 2:
            variables += S * horizon
    check_model_size(
        "rar exact MILP",
        variables,
        "give it a better incumbent (a shorter horizon), or bound the optimum with "
        "timeindexed / load_lb",
    )


_BUILDING = "building the rar exact MILP"


@dataclass(frozen=True)
class _Index:
    """The index sets and data shared by the constraint groups of :func:`build_exact`."""

    instance: RarInstance
    H: int
    J: range
    servers: range
    multi: list[int]  # jobs with >= 2 GPUs
    configs: dict[int, list[tuple[int, int]]]
    d_min: dict[int, int]
    cap: dict[tuple[int, int], int]  # most GPUs of job j on server s
    deadline: Deadline

    def checked(self, rule):
        return _checked(rule, self.deadline, _BUILDING)


def build_exact(
    instance: RarInstance,
    horizon: int | None = None,
    lower_bound: float | None = None,
    deadline: Deadline | None = None,
) -> ExactModel:
    """Build the exact time-indexed MILP over ``horizon`` slots (default ``T``).

    ``lower_bound`` (a valid lower bound on the optimum) bounds the makespan
    variable from below; the closed-form bounds are always applied. Every job
    must fit in the horizon (``rho_min_j <= horizon``). ``deadline`` is
    checked between constraint blocks (the groups of the module docstring).
    """
    deadline = deadline or Deadline.unlimited()
    H = instance.horizon if horizon is None else int(horizon)
    jobs = instance.jobs
    J = range(len(jobs))
    servers = range(instance.num_servers)
    configs = {j: _configs(instance, jobs[j]) for j in J}
    d_min = {j: rho_min(jobs[j], instance) for j in J}
    if max(d_min.values()) > H:
        raise ValueError(f"a job needs {max(d_min.values())} slots, more than the horizon {H}")
    check_exact_size(instance, H)
    ix = _Index(
        instance,
        H,
        J,
        servers,
        multi=[j for j in J if jobs[j].gpus >= 2],
        configs=configs,
        d_min=d_min,
        cap={(j, s): min(jobs[j].gpus, instance.servers[s]) for j in J for s in servers},
        deadline=deadline,
    )
    m = pyo.ConcreteModel(name="rar_exact")
    m.J, m.S = pyo.Set(initialize=list(J)), pyo.Set(initialize=list(servers))
    _add_activity(m, ix)
    deadline.check(_BUILDING)
    _add_placement(m, ix)
    deadline.check(_BUILDING)
    _add_capacity(m, ix)
    deadline.check(_BUILDING)
    _add_configurations(m, ix)
    deadline.check(_BUILDING)
    _add_makespan(m, ix, lower_bound)
    m.horizon_slots = H
    return ExactModel(model=m, horizon=H, configs=configs)


def _add_activity(m: pyo.ConcreteModel, ix: _Index) -> None:
    """Starts ``x``, finishes ``f``, activity ``a`` and non-preemption (Eq. 3)."""
    H, J, d_min = ix.H, ix.J, ix.d_min
    # start x[j,t] for t <= H - d_min, finish f[j,t] for t >= d_min
    start_idx = [(j, t) for j in J for t in range(max(0, H - d_min[j] + 1))]
    finish_idx = [(j, t) for j in J for t in range(d_min[j], H + 1)]
    m.x = pyo.Var(start_idx, domain=pyo.Binary)
    m.f = pyo.Var(finish_idx, domain=pyo.Binary)
    m.start_once = pyo.Constraint(
        m.J, rule=lambda m, j: sum(m.x[j, t] for t in range(H - d_min[j] + 1)) == 1
    )
    m.finish_once = pyo.Constraint(
        m.J, rule=lambda m, j: sum(m.f[j, t] for t in range(d_min[j], H + 1)) == 1
    )

    def started_by(j: int, t: int):
        return sum(m.x[j, u] for u in range(min(t, H - d_min[j]) + 1))

    def finished_by(j: int, t: int):
        return sum(m.f[j, u] for u in range(d_min[j], t + 1))

    # non-preemption: T_j >= a_j + 1 (finished by t implies started by t - 1)
    m.finish_after_start = pyo.Constraint(
        [(j, t) for j in J for t in range(d_min[j], H + 1)],
        rule=ix.checked(lambda m, j, t: finished_by(j, t) <= started_by(j, t - 1)),
    )
    active_idx = [(j, t) for j in J for t in range(H)]
    m.a = pyo.Var(active_idx, bounds=(0, 1))
    m.a_def = pyo.Constraint(
        active_idx,
        rule=ix.checked(lambda m, j, t: m.a[j, t] == started_by(j, t) - finished_by(j, t)),
    )
    m.min_active = pyo.Constraint(
        m.J, rule=lambda m, j: sum(m.a[j, t] for t in range(H)) >= d_min[j]
    )


def _add_placement(m: pyo.ConcreteModel, ix: _Index) -> None:
    """Placement ``y``, ``used``, ``whole`` (Eq. 1; split = used - whole, Sec. 4.1)."""
    jobs, servers, cap = ix.instance.jobs, ix.servers, ix.cap
    m.y = pyo.Var(list(cap), domain=pyo.NonNegativeIntegers, bounds=lambda m, j, s: (0, cap[j, s]))
    m.used = pyo.Var(list(cap), domain=pyo.Binary)
    m.gang = pyo.Constraint(m.J, rule=lambda m, j: sum(m.y[j, s] for s in servers) == jobs[j].gpus)
    m.used_lo = pyo.Constraint(list(cap), rule=lambda m, j, s: m.used[j, s] <= m.y[j, s])
    m.used_hi = pyo.Constraint(
        list(cap), rule=lambda m, j, s: m.y[j, s] <= cap[j, s] * m.used[j, s]
    )
    whole_idx = [
        (j, s) for j in ix.multi for s in servers if ix.instance.servers[s] >= jobs[j].gpus
    ]
    m.whole = pyo.Var(whole_idx, domain=pyo.Binary)
    m.whole_fits = pyo.Constraint(
        whole_idx, rule=lambda m, j, s: jobs[j].gpus * m.whole[j, s] <= m.y[j, s]
    )


def _add_capacity(m: pyo.ConcreteModel, ix: _Index) -> None:
    """Capacity per server and slot (Eq. 2): ``w >= y - min(G, O_s) (1 - a)``, ``sum_j w <= O_s``."""
    H, J, servers, cap = ix.H, ix.J, ix.servers, ix.cap
    m.w = pyo.Var(
        [(j, s, t) for j in J for s in servers for t in range(H)], domain=pyo.NonNegativeReals
    )
    m.w_lo = pyo.Constraint(
        [(j, s, t) for j in J for s in servers for t in range(H)],
        rule=ix.checked(lambda m, j, s, t: m.w[j, s, t] >= m.y[j, s] - cap[j, s] * (1 - m.a[j, t])),
    )
    m.capacity = pyo.Constraint(
        [(s, t) for s in servers for t in range(H)],
        rule=ix.checked(lambda m, s, t: sum(m.w[j, s, t] for j in J) <= ix.instance.servers[s]),
    )


def _add_configurations(m: pyo.ConcreteModel, ix: _Index) -> None:
    """Configurations ``q`` and progress (Eqs. 6-9): contention level and server count."""
    instance, H, J, servers, configs, multi = (
        ix.instance,
        ix.H,
        ix.J,
        ix.servers,
        ix.configs,
        ix.multi,
    )
    jobs = instance.jobs
    q_idx = [(j, t, k) for j in J for t in range(H) for k in range(len(configs[j]))]
    m.q = pyo.Var(q_idx, domain=pyo.Binary)
    m.one_config = pyo.Constraint(
        [(j, t) for j in J for t in range(H)],
        rule=ix.checked(
            lambda m, j, t: sum(m.q[j, t, k] for k in range(len(configs[j]))) == m.a[j, t]
        ),
    )
    phi = {
        (j, k): _progress(instance, jobs[j], *configs[j][k])
        for j in J
        for k in range(len(configs[j]))
    }
    m.progress = pyo.Constraint(
        m.J,
        rule=lambda m, j: (
            sum(phi[j, k] * m.q[j, t, k] for t in range(H) for k in range(len(configs[j])))
            >= jobs[j].iterations
        ),
    )

    def level(j: int, t: int):
        return sum(configs[j][k][0] * m.q[j, t, k] for k in range(len(configs[j])))

    def span(j: int, t: int):
        return sum(configs[j][k][1] * m.q[j, t, k] for k in range(len(configs[j])))

    S = instance.num_servers
    m.span_lo = pyo.Constraint(
        [(j, t) for j in multi for t in range(H)],
        rule=ix.checked(
            lambda m, j, t: span(j, t) >= sum(m.used[j, s] for s in servers) - S * (1 - m.a[j, t])
        ),
    )
    if not multi:
        return
    z_idx = [(j, s, t) for j in multi for s in servers for t in range(H)]
    m.z = pyo.Var(z_idx, bounds=(0, 1))
    m.z_lo = pyo.Constraint(
        z_idx, rule=ix.checked(lambda m, j, s, t: m.z[j, s, t] >= _split(m, j, s) + m.a[j, t] - 1)
    )
    big_m = {s: min(instance.servers[s], len(multi)) for s in servers}
    m.contention = pyo.Constraint(
        z_idx,
        rule=ix.checked(
            lambda m, j, s, t: (
                level(j, t) >= sum(m.z[i, s, t] for i in multi) - big_m[s] * (1 - m.z[j, s, t])
            )
        ),
    )


def _split(m: pyo.ConcreteModel, j: int, s: int):
    """``split[j,s] = used - whole``: job ``j`` on server ``s`` but not all of it there."""
    return m.used[j, s] - (m.whole[j, s] if (j, s) in m.whole else 0)


def _add_makespan(m: pyo.ConcreteModel, ix: _Index, lower_bound: float | None) -> None:
    """Makespan ``C >= sum_t t f[j,t]`` (bounded below by the closed forms) and ``min C``."""
    H, d_min = ix.H, ix.d_min
    lower = max(closed_form_bounds(ix.instance).values())
    if lower_bound is not None:
        lower = max(lower, lower_bound)
    m.C = pyo.Var(domain=pyo.Integers, bounds=(math.ceil(lower - 1e-6), H))
    m.makespan = pyo.Constraint(
        m.J, rule=lambda m, j: sum(t * m.f[j, t] for t in range(d_min[j], H + 1)) <= m.C
    )
    m.obj = pyo.Objective(expr=m.C, sense=pyo.minimize)


def _colour_gpus(
    instance: RarInstance,
    intervals: dict[int, tuple[int, int]],
    per_server: dict[int, dict[int, int]],
) -> dict[int, list[tuple[int, int]]]:
    """Assign GPU ids inside each server by interval colouring.

    ``intervals[j] = (start, end)`` (end exclusive); jobs are coloured in
    order of start, a GPU being free again at the end of its interval.
    Raises :class:`~ddlsched.errors.SolverError` if a server runs out (the
    model let its capacity be violated).
    """
    gpus: dict[int, list[tuple[int, int]]] = {j: [] for j in intervals}
    for s, cap in enumerate(instance.servers):
        free_at = [0] * cap
        for j in sorted(intervals, key=lambda j: (intervals[j][0], j)):
            need = per_server[j].get(s, 0)
            if not need:
                continue
            begin, end = intervals[j]
            free = [g for g in range(cap) if free_at[g] <= begin]
            if len(free) < need:
                raise SolverError(
                    f"decoded MILP schedule: server {s} over capacity at slot {begin}"
                )
            for g in free[:need]:
                free_at[g] = end
                gpus[j].append((s, g))
    return gpus


def decode_exact(
    instance: RarInstance, model: pyo.ConcreteModel | ExactModel
) -> tuple[RarSchedule, float]:
    """Read the schedule out of a solved exact model; also return the model's makespan."""
    m = model.model if isinstance(model, ExactModel) else model
    H = m.horizon_slots
    intervals, per_server = {}, {}
    for j, job in enumerate(instance.jobs):
        start = next(t for t in range(H + 1) if (j, t) in m.x and pyo.value(m.x[j, t]) > 0.5)
        finish = next(t for t in range(H + 1) if (j, t) in m.f and pyo.value(m.f[j, t]) > 0.5)
        intervals[j] = (start, finish)
        per_server[j] = {
            s: round(pyo.value(m.y[j, s]))
            for s in range(instance.num_servers)
            if pyo.value(m.y[j, s]) > 0.5
        }
        if sum(per_server[j].values()) != job.gpus:
            raise SolverError(f"decoded MILP schedule: job {job.id!r} has the wrong GPU count")
    gpus = _colour_gpus(instance, intervals, per_server)
    schedule = RarSchedule(
        {
            job.id: RarAssignment(tuple(gpus[j]), intervals[j][0])
            for j, job in enumerate(instance.jobs)
        }
    )
    return schedule, float(pyo.value(m.C))


@dataclass(frozen=True)
class RarExactFormulation:
    """The exact MILP over ``horizon`` slots as a Formulation (minimises the makespan).

    Not always feasible: no schedule may finish within a shrunk horizon
    (that is how :func:`solve_exact` proves an incumbent optimal).
    """

    horizon: int
    lower_bound: float | None = None

    name: ClassVar[str] = "rar.exact"
    sense: ClassVar[str] = "min"
    metric: ClassVar[str | None] = None
    always_feasible: ClassVar[bool] = False
    highs_options: ClassVar[tuple[tuple[str, object], ...]] = ()

    def build(self, instance: RarInstance, deadline: Deadline) -> pyo.ConcreteModel:
        return build_exact(instance, self.horizon, self.lower_bound, deadline).model

    def objective_scale(self, instance: RarInstance) -> float:
        return 1.0

    def decode(self, model: pyo.ConcreteModel, instance: RarInstance) -> RarSchedule:
        return decode_exact(instance, model)[0]

    def measure(self, instance: RarInstance, schedule: RarSchedule) -> float:
        return float(evaluate(instance, schedule).makespan)


def _solver_fields(outcome: Outcome) -> dict[str, Any]:
    return {
        "backend": outcome.backend,
        "backend_version": outcome.backend_version,
        "model_size": outcome.model_size,
        "solver_time_s": outcome.solver_time_s,
        "time_limit_hit": outcome.time_limit_hit,
    }


def solve_exact(
    instance: RarInstance,
    *,
    backend: str = "highs",
    limits: SolveLimits | None = None,
    incumbent: RarSchedule | None = None,
    lower_bound: float | None = None,
    cross_check: bool = False,
    deadline: Deadline | None = None,
) -> Outcome:
    """Solve RAR-DDLS exactly; the outcome of the ``exact`` method.

    Without ``incumbent`` the MILP covers the instance horizon ``T`` and its
    optimum is the answer. With an ``incumbent`` (any feasible schedule,
    evaluated here) of makespan ``U``, the MILP is asked for a schedule of
    makespan at most ``U - 1``: if there is none, the incumbent is optimal.
    ``lower_bound`` (a valid bound, e.g. from :func:`timeindexed`) tightens
    the makespan variable and may prove the incumbent optimal outright.

    ``info['proof']`` says how optimality was established: ``milp`` (the
    MILP closed its gap), ``no_shorter_schedule`` (the MILP proved that no
    schedule beats the incumbent), ``bounds`` (a valid lower bound equals the
    incumbent's evaluated makespan), or ``None``.
    """
    limits = integral_limits(limits)
    deadline = deadline or limits.deadline()
    info: dict[str, Any] = {"proof": None}
    lower = max(closed_form_bounds(instance).values())
    if lower_bound is not None:
        lower = max(lower, ceil_bound(lower_bound))
    best_eval = evaluate(instance, incumbent) if incumbent is not None else None
    if best_eval is not None:
        info["incumbent_makespan"] = best_eval.makespan
        if lower >= best_eval.makespan:
            info["proof"] = "bounds"
            return Outcome(incumbent, Status.OPTIMAL, bound=float(best_eval.makespan), info=info)
        horizon = best_eval.makespan - 1
    else:
        horizon = instance.horizon
    info["model_horizon"] = horizon
    if lower > horizon:
        # No schedule fits in the model horizon (without an incumbent: the instance is infeasible).
        return _no_shorter_schedule(instance, incumbent, best_eval, info)
    try:
        milp = solve_formulation(
            RarExactFormulation(horizon, lower),
            instance,
            backend,
            limits,
            cross_check,
            deadline=deadline,
        )
    except ModelTooLargeError as exc:
        if best_eval is None:
            raise
        # Too large to prove anything: the incumbent, with the best bound known.
        info["milp_skipped"] = str(exc)
        bound = min(lower, float(best_eval.makespan))
        status = Status.OPTIMAL if bound >= best_eval.makespan else Status.FEASIBLE
        return Outcome(incumbent, status, bound=bound, info=info)
    info.update(milp.info)
    solver = _solver_fields(milp)
    if milp.status is Status.INFEASIBLE:
        return _no_shorter_schedule(instance, incumbent, best_eval, info, **solver)
    if milp.schedule is None:
        # Time limit without a schedule of the MILP: keep the incumbent and the best valid bound.
        bound = lower if milp.bound is None else max(lower, ceil_bound(milp.bound))
        if best_eval is None:
            return Outcome(None, milp.status, bound=bound, info=info, **solver)
        value = float(best_eval.makespan)
        bound = min(bound, value)
        if bound >= value:
            info["proof"] = "no_shorter_schedule"
            return Outcome(incumbent, Status.OPTIMAL, bound=value, info=info, **solver)
        return Outcome(incumbent, Status.FEASIBLE, bound=bound, info=info, **solver)
    info["model_makespan"] = milp.claim.value if milp.claim is not None else None
    if milp.status is Status.OPTIMAL:
        info["proof"] = "milp"
        return Outcome(milp.schedule, Status.OPTIMAL, claim=milp.claim, info=info, **solver)
    # Time limit with an incumbent of the MILP: it beats the given incumbent by construction.
    bound = ceil_bound(milp.bound)
    bound = lower if bound is None else max(lower, bound)
    return Outcome(milp.schedule, milp.status, bound=bound, claim=milp.claim, info=info, **solver)


def _no_shorter_schedule(
    instance: RarInstance,
    incumbent: RarSchedule | None,
    best_eval: RarEvaluation | None,
    info: dict[str, Any],
    **solver: Any,
) -> Outcome:
    """No schedule of makespan <= the model horizon exists: the incumbent (if any) is optimal."""
    if best_eval is None:
        info["reason"] = f"no schedule finishes within the horizon T = {instance.horizon}"
        return Outcome(None, Status.INFEASIBLE, info=info, **solver)
    info["proof"] = "no_shorter_schedule"
    value = float(best_eval.makespan)
    return Outcome(incumbent, Status.OPTIMAL, bound=value, info=info, **solver)
