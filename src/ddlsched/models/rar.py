"""Exact and bounding formulations of RAR-DDLS (spec ``rar.md``, "Exact and bounding").

Three Pyomo formulations bracket the optimum makespan ``T*``:

``exact`` — a compact time-indexed MILP of RAR-DDLS itself, contention
included (the spec's suggested shape). Slots ``t = 0..H-1``:

* ``x[j,t]`` start binaries, ``f[j,t]`` finish binaries (``T_j = t``);
  ``a[j,t] = sum_{t'<=t} x - sum_{t'<=t} f`` is the activity of slot ``t``,
  contiguous from ``a_j`` to ``T_j - 1`` because ``sum_{t'<=t} f <=
  sum_{t'<t} x`` (non-preemption, Eq. 3).
* ``y[j,s]`` integer GPUs on server ``s`` (Eq. 1 ``sum_s y = G_j``);
  ``used[j,s] = [y > 0]``, ``whole[j,s] <= [y = G_j]``,
  ``split = used - whole`` (Sec. 4.1: split when ``0 < y_js < G_j``).
* capacity (Eq. 2): ``w[j,s,t] >= y[j,s] - G_j (1 - a[j,t])``,
  ``sum_j w[j,s,t] <= O_s``.
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

The horizon ``H`` of the model is ``min(T, best heuristic makespan)``: an
optimal schedule never ends later than a feasible one, so the restriction
keeps the optimum and shrinks the model. Decoding assigns GPU ids inside
each server by interval colouring of the model's activity intervals; the
family evaluator then executes the schedule, and for a proven optimum its
makespan must equal the MILP objective (checked, loudly).

``timeindexed`` — the paper's reformulation (Eqs. 10-13) in tractable form:
a column per (job, placement pattern, start slot). Patterns are taken up to
symmetry of equal servers: servers of equal capacity form a class, and a
pattern says how many GPUs the job takes on each class; it uses the fewest
servers of the class that can hold them (more servers only lengthen the
job), and capacity is enforced per class and slot (``sum g_tau <= n_tau
O_tau``). Durations are contention-free (``p = 1``). This relaxes both
contention and the packing inside a class, so its optimum (or dual bound)
is a valid LOWER bound. Its schedule, mapped to concrete GPUs and executed
by the evaluator, is an UPPER bound. With ``contention="worst"`` the
durations use ``p = max_contention`` instead; the model's value is then no
longer a bound (recorded), and the evaluated schedule stays an upper bound;
the *planned* makespan is not one (the class aggregation lets the decoder
spread a job over more servers than its pattern), so it is only reported in
``info['planned_makespan']``.
Time aggregation ``slot_width = w > 1``: the bound model counts a job only
in the coarse slots it covers entirely, ``D = floor((d + 1) / w) - 1`` of
them whatever its fine start (shown in the docstring of
:func:`_coarse_duration_lb`), and ``T* >= w C_coarse``; the schedule model
rounds durations up (``ceil(d / w)``) and is solved separately. When a job
has more patterns than ``max_patterns``, it keeps a single pooled column
(``G_j`` GPUs of the whole cluster, shortest duration): still a relaxation,
so the bound stays valid; such jobs are listed in ``info``.

``load_lb`` — Problem (14): assign each job to ``G_j`` GPUs so as to
minimise the largest GPU load, with each job's shortest contention-free
duration ``rho_min_j`` (fewest servers). Any schedule's makespan is at least
its largest GPU load, so the optimum of (14) is a lower bound; we solve it
with loads aggregated per server (``sum_j y[j,s] rho_min_j <= O_s L``, a
relaxation, so still valid), and report the maximum of it and the closed
forms ``max_j rho_min_j`` and ``ceil(sum_j G_j rho_min_j / N)``.

All makespans are integral, so every lower bound ``b`` is reported as
``ceil(b - 1e-6)``, and solves stop once ``incumbent - bound < 1``.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import pyomo.environ as pyo

from ddlsched.deadline import Deadline
from ddlsched.errors import (
    InfeasibleScheduleError,
    InvalidInstanceError,
    ModelTooLargeError,
    SolverError,
)
from ddlsched.problems.rar import (
    RarAssignment,
    RarEvaluation,
    RarInstance,
    RarJob,
    RarSchedule,
    evaluate,
    execution_slots,
    iteration_time,
    iterations_per_slot,
    max_contention,
    max_servers,
    min_servers,
)
from ddlsched.solvers.backends import ModelSolve, SolveLimits, solve_model
from ddlsched.solvers.formulation import solve_formulation
from ddlsched.solvers.limits import check_model_size
from ddlsched.solvers.result import Outcome, Status

__all__ = [
    "ExactModel",
    "PatternCatalogue",
    "RarExactFormulation",
    "build_exact",
    "closed_form_bounds",
    "decode_exact",
    "integral_limits",
    "load_lb",
    "pattern_catalogue",
    "rho_min",
    "solve_exact",
    "timeindexed",
]

log = logging.getLogger(__name__)

# Makespans are integers and the makespan variables are integer: stop once
# incumbent - bound <= 0.5 (a gap just below 1 is within solver tolerances).
_INTEGRAL_GAP = 0.5


def _ceil_bound(value: float | None) -> float | None:
    return None if value is None else float(math.ceil(value - 1e-6))


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


def rho_min(job: RarJob, instance: RarInstance) -> int:
    """Shortest execution time of a job in slots, over every server count, without contention."""
    best = math.inf
    for n in range(min_servers(job, instance.servers), max_servers(job, instance.servers) + 1):
        best = min(
            best, execution_slots(job, instance.network, n, 1 if n > 1 else 0, instance.progress)
        )
    if math.isinf(best):
        raise InvalidInstanceError(
            f"job {job.id!r} never progresses on any placement (tau > 1 slot under 'floor')"
        )
    return int(best)


def closed_form_bounds(instance: RarInstance) -> dict[str, float]:
    """The closed-form lower bounds ``max_j rho_min_j`` and ``ceil(sum_j G_j rho_min_j / N)``."""
    durations = [rho_min(job, instance) for job in instance.jobs]
    energy = sum(job.gpus * d for job, d in zip(instance.jobs, durations, strict=True))
    return {
        "longest_job": float(max(durations)),
        "gpu_time": float(math.ceil(energy / instance.num_gpus - 1e-9)),
    }


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
    checked between constraint blocks.
    """
    deadline = deadline or Deadline.unlimited()
    H = instance.horizon if horizon is None else int(horizon)
    jobs = instance.jobs
    S = instance.num_servers
    J = range(len(jobs))
    servers = range(S)
    multi = [j for j in J if jobs[j].gpus >= 2]
    configs = {j: _configs(instance, jobs[j]) for j in J}
    d_min = {j: rho_min(jobs[j], instance) for j in J}
    if max(d_min.values()) > H:
        raise ValueError(f"a job needs {max(d_min.values())} slots, more than the horizon {H}")
    # x, f; then per job and slot a, w (per server) and q (per configuration); y, used, whole; z
    variables = sum(2 * (H - d + 1) for d in d_min.values())
    variables += sum(H * (1 + S + len(configs[j])) + 3 * S for j in J)
    variables += len(multi) * S * H
    check_model_size(
        "rar exact MILP",
        variables,
        "give it a better incumbent (a shorter horizon), or bound the optimum with "
        "timeindexed / load_lb",
    )
    m = pyo.ConcreteModel(name="rar_exact")
    m.J, m.S = pyo.Set(initialize=list(J)), pyo.Set(initialize=list(servers))

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
        rule=_checked(
            lambda m, j, t: finished_by(j, t) <= started_by(j, t - 1),
            deadline,
            "building the rar exact MILP",
        ),
    )
    active_idx = [(j, t) for j in J for t in range(H)]
    m.a = pyo.Var(active_idx, bounds=(0, 1))
    m.a_def = pyo.Constraint(
        active_idx,
        rule=_checked(
            lambda m, j, t: m.a[j, t] == started_by(j, t) - finished_by(j, t),
            deadline,
            "building the rar exact MILP",
        ),
    )
    m.min_active = pyo.Constraint(
        m.J, rule=lambda m, j: sum(m.a[j, t] for t in range(H)) >= d_min[j]
    )

    deadline.check("building the rar exact MILP")
    # placement: y, used, whole (Eq. 1)
    cap = {(j, s): min(jobs[j].gpus, instance.servers[s]) for j in J for s in servers}
    m.y = pyo.Var(list(cap), domain=pyo.NonNegativeIntegers, bounds=lambda m, j, s: (0, cap[j, s]))
    m.used = pyo.Var(list(cap), domain=pyo.Binary)
    m.gang = pyo.Constraint(m.J, rule=lambda m, j: sum(m.y[j, s] for s in servers) == jobs[j].gpus)
    m.used_lo = pyo.Constraint(list(cap), rule=lambda m, j, s: m.used[j, s] <= m.y[j, s])
    m.used_hi = pyo.Constraint(
        list(cap), rule=lambda m, j, s: m.y[j, s] <= cap[j, s] * m.used[j, s]
    )
    whole_idx = [(j, s) for j in multi for s in servers if instance.servers[s] >= jobs[j].gpus]
    m.whole = pyo.Var(whole_idx, domain=pyo.Binary)
    m.whole_fits = pyo.Constraint(
        whole_idx, rule=lambda m, j, s: jobs[j].gpus * m.whole[j, s] <= m.y[j, s]
    )

    def split(j: int, s: int):
        return m.used[j, s] - (m.whole[j, s] if (j, s) in m.whole else 0)

    deadline.check("building the rar exact MILP")
    # capacity per server and slot (Eq. 2)
    m.w = pyo.Var(
        [(j, s, t) for j in J for s in servers for t in range(H)], domain=pyo.NonNegativeReals
    )
    m.w_lo = pyo.Constraint(
        [(j, s, t) for j in J for s in servers for t in range(H)],
        rule=_checked(
            lambda m, j, s, t: m.w[j, s, t] >= m.y[j, s] - cap[j, s] * (1 - m.a[j, t]),
            deadline,
            "building the rar exact MILP",
        ),
    )
    m.capacity = pyo.Constraint(
        [(s, t) for s in servers for t in range(H)],
        rule=_checked(
            lambda m, s, t: sum(m.w[j, s, t] for j in J) <= instance.servers[s],
            deadline,
            "building the rar exact MILP",
        ),
    )

    deadline.check("building the rar exact MILP")
    # configurations and progress (Eqs. 6-9)
    q_idx = [(j, t, k) for j in J for t in range(H) for k in range(len(configs[j]))]
    m.q = pyo.Var(q_idx, domain=pyo.Binary)
    m.one_config = pyo.Constraint(
        active_idx,
        rule=_checked(
            lambda m, j, t: sum(m.q[j, t, k] for k in range(len(configs[j]))) == m.a[j, t],
            deadline,
            "building the rar exact MILP",
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

    m.span_lo = pyo.Constraint(
        [(j, t) for j in multi for t in range(H)],
        rule=_checked(
            lambda m, j, t: span(j, t) >= sum(m.used[j, s] for s in servers) - S * (1 - m.a[j, t]),
            deadline,
            "building the rar exact MILP",
        ),
    )
    if multi:
        z_idx = [(j, s, t) for j in multi for s in servers for t in range(H)]
        m.z = pyo.Var(z_idx, bounds=(0, 1))
        m.z_lo = pyo.Constraint(
            z_idx,
            rule=_checked(
                lambda m, j, s, t: m.z[j, s, t] >= split(j, s) + m.a[j, t] - 1,
                deadline,
                "building the rar exact MILP",
            ),
        )
        big_m = {s: min(instance.servers[s], len(multi)) for s in servers}
        m.contention = pyo.Constraint(
            z_idx,
            rule=_checked(
                lambda m, j, s, t: (
                    level(j, t) >= sum(m.z[i, s, t] for i in multi) - big_m[s] * (1 - m.z[j, s, t])
                ),
                deadline,
                "building the rar exact MILP",
            ),
        )

    deadline.check("building the rar exact MILP")
    # makespan
    lower = max(closed_form_bounds(instance).values())
    if lower_bound is not None:
        lower = max(lower, lower_bound)
    m.C = pyo.Var(domain=pyo.Integers, bounds=(math.ceil(lower - 1e-6), H))
    m.makespan = pyo.Constraint(
        m.J, rule=lambda m, j: sum(t * m.f[j, t] for t in range(d_min[j], H + 1)) <= m.C
    )
    m.obj = pyo.Objective(expr=m.C, sense=pyo.minimize)
    m.horizon_slots = H
    return ExactModel(model=m, horizon=H, configs=configs)


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


def integral_limits(limits: SolveLimits | None) -> SolveLimits:
    """``limits`` with the absolute gap raised so that a solve stops at integrality.

    Makespans are integral: a gap below 1 proves optimality (module
    docstring). Every other setting, ``highs_options`` included, is kept.
    """
    limits = limits or SolveLimits()
    return replace(limits, abs_gap=max(limits.abs_gap, _INTEGRAL_GAP))


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
        lower = max(lower, _ceil_bound(lower_bound))
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
        bound = lower if milp.bound is None else max(lower, _ceil_bound(milp.bound))
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
    bound = _ceil_bound(milp.bound)
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


# --------------------------------------------------------------------------- time-indexed ILP


def _server_classes(instance: RarInstance) -> list[tuple[int, int]]:
    """(capacity, number of servers) per class of equal servers, largest first."""
    counts: dict[int, int] = {}
    for cap in instance.servers:
        counts[cap] = counts.get(cap, 0) + 1
    return sorted(counts.items(), reverse=True)


def _class_patterns(
    gpus: int, classes: Sequence[tuple[int, int]], limit: int
) -> list[tuple[int, ...]] | None:
    """GPU counts per server class summing to ``gpus`` that fit; ``None`` beyond ``limit``."""
    out: list[tuple[int, ...]] = []

    def rec(i: int, left: int, acc: tuple[int, ...]) -> bool:
        if i == len(classes):
            if left == 0:
                out.append(acc)
                if len(out) > limit:
                    return False
            return True
        cap, count = classes[i]
        for g in range(min(left, cap * count), -1, -1):
            if not rec(i + 1, left - g, (*acc, g)):
                return False
        return True

    return out if rec(0, gpus, ()) else None


def _pattern_servers(pattern: Sequence[int], classes: Sequence[tuple[int, int]]) -> int:
    return sum(math.ceil(g / cap) for g, (cap, _) in zip(pattern, classes, strict=True))


def _coarse_duration_lb(d: int, w: int) -> int:
    """Coarse slots of width ``w`` fully covered by any fine interval of length ``d``.

    An interval ``[a, a + d)`` covers the windows ``[Kw, (K+1)w)`` with
    ``ceil(a/w) <= K < floor((a+d)/w)``; their number is smallest for
    ``a = 1 (mod w)``-like offsets and equals ``floor((d + 1) / w) - 1``
    (and ``d`` itself when ``w = 1``). Counting a job only in windows it
    covers entirely keeps every coarse capacity constraint implied by a fine
    one, and the job ends after its last covered window, so
    ``T* >= w * C_coarse``.
    """
    if w == 1:
        return d
    return max(0, (d + 1) // w - 1)


def _build_timeindexed(
    instance: RarInstance,
    durations: dict[tuple[int, int], int],
    patterns: dict[int, list[tuple[int, ...] | None]],
    classes: Sequence[tuple[int, int]],
    horizon: int,
    deadline: Deadline,
) -> pyo.ConcreteModel | None:
    """Columns (job, pattern index, start); ``None`` pattern = pooled column.

    Returns ``None`` when some job fits in no column within ``horizon``;
    ``deadline`` is checked while the occupancy lists and rows are built.
    """
    deadline.check("building the timeindexed ILP")
    jobs = instance.jobs
    check_model_size(
        "rar timeindexed ILP",
        sum(max(0, horizon - d + 1) for d in durations.values()),
        "aggregate time (--param slot_width=K) or pool placement patterns (--param max_patterns=K)",
    )
    cols = [
        (j, k, t)
        for j in range(len(jobs))
        for k in range(len(patterns[j]))
        for t in range(horizon - durations[j, k] + 1)
    ]
    if {j for j, _, _ in cols} != set(range(len(jobs))):
        return None  # some job fits in no column within the horizon
    m = pyo.ConcreteModel(name="rar_timeindexed")
    m.x = pyo.Var(cols, domain=pyo.Binary)
    by_job: dict[int, list] = {}
    for col in cols:
        by_job.setdefault(col[0], []).append(col)
    m.choose = pyo.Constraint(
        range(len(jobs)), rule=lambda m, j: sum(m.x[c] for c in by_job.get(j, [])) == 1
    )
    # occupancy: column (j,k,t) is active in slots t..t+d-1
    active_in: dict[int, list] = {u: [] for u in range(horizon)}
    for n, (j, k, t) in enumerate(cols):
        if n % 4096 == 0:
            deadline.check("building the timeindexed ILP")
        for u in range(t, t + durations[j, k]):
            active_in[u].append((j, k, t))
    m.class_capacity = pyo.ConstraintList()
    m.cluster_capacity = pyo.ConstraintList()
    for u in range(horizon):
        deadline.check("building the timeindexed ILP")
        if not active_in[u]:
            continue
        for c, (cap, count) in enumerate(classes):
            terms = [
                patterns[j][k][c] * m.x[j, k, t]
                for j, k, t in active_in[u]
                if patterns[j][k] is not None and patterns[j][k][c]
            ]
            if terms:
                m.class_capacity.add(sum(terms) <= cap * count)
        m.cluster_capacity.add(
            sum(jobs[j].gpus * m.x[j, k, t] for j, k, t in active_in[u]) <= instance.num_gpus
        )
    m.C = pyo.Var(domain=pyo.Integers, bounds=(0, horizon))
    m.makespan = pyo.Constraint(
        range(len(jobs)),
        rule=lambda m, j: (
            sum((t + durations[j, k]) * m.x[j, k, t] for (_, k, t) in by_job.get(j, [])) <= m.C
        ),
    )
    m.obj = pyo.Objective(expr=m.C, sense=pyo.minimize)
    return m


def _decode_patterns(
    instance: RarInstance,
    m: pyo.ConcreteModel,
    patterns: dict[int, list[tuple[int, ...] | None]],
    classes: Sequence[tuple[int, int]],
    scale: int,
    fine_durations: dict[int, int],
) -> RarSchedule:
    """Map chosen (pattern, start) columns to concrete GPUs, greedily, and keep the starts.

    Jobs are placed in order of start; each class's GPUs go to the servers of
    that class with the most GPUs free at the start (by planned intervals).
    When a pattern cannot be met on concrete servers (the class aggregation
    allowed it) or is pooled, the job takes the earliest-free GPUs; the
    dispatch evaluator then delays it as needed, so the result is always a
    feasible schedule.
    """
    chosen = {}
    for (j, k, t), var in m.x.items():
        if pyo.value(var) > 0.5:
            chosen[j] = (k, t * scale)
    free_at = {gpu: 0 for gpu in instance.gpu_ids}
    servers_of_class = {
        cap: [s for s, c in enumerate(instance.servers) if c == cap] for cap, _ in classes
    }
    assignments = {}
    for j in sorted(chosen, key=lambda j: (chosen[j][1], j)):
        job = instance.jobs[j]
        k, start = chosen[j]
        pattern = patterns[j][k]
        picked: list[tuple[int, int]] = []
        if pattern is not None:
            for c, (cap, _) in enumerate(classes):
                need = pattern[c]
                candidates = sorted(
                    servers_of_class[cap],
                    key=lambda s: (-sum(1 for g in range(cap) if free_at[s, g] <= start), s),
                )
                for s in candidates:
                    if need == 0:
                        break
                    free = [(s, g) for g in range(cap) if free_at[s, g] <= start]
                    take = free[: min(need, len(free))]
                    picked.extend(take)
                    need -= len(take)
                if need:
                    picked = []
                    break
        if len(picked) != job.gpus:
            picked = sorted(instance.gpu_ids, key=lambda gpu: (free_at[gpu], gpu))[: job.gpus]
        end = max(start, max(free_at[g] for g in picked)) + fine_durations[j]
        for gpu in picked:
            free_at[gpu] = end
        assignments[job.id] = RarAssignment(tuple(picked), start)
    return RarSchedule(assignments)


@dataclass(frozen=True)
class PatternCatalogue:
    """Placement patterns up to symmetry of equal servers, with their durations.

    ``patterns[j]`` lists GPU counts per server class (``None``: the pooled
    column of a job with more than ``max_patterns`` patterns);
    ``durations[j, k]`` is the execution time in slots of pattern ``k`` on
    the fewest servers it needs, at contention ``p`` (1, or the worst).
    """

    classes: tuple[tuple[int, int], ...]
    patterns: dict[int, list[tuple[int, ...] | None]]
    durations: dict[tuple[int, int], int]
    pooled: tuple[str, ...]


def pattern_catalogue(
    instance: RarInstance,
    max_patterns: int = 64,
    contention: str = "free",
    deadline: Deadline | None = None,
) -> PatternCatalogue:
    """Enumerate every job's patterns and durations (shared by ``timeindexed`` and ``load_lb``)."""
    deadline = deadline or Deadline.unlimited()
    classes = _server_classes(instance)
    p_plan = 1 if contention == "free" else max_contention(instance)
    net, rule = instance.network, instance.progress
    patterns: dict[int, list[tuple[int, ...] | None]] = {}
    durations: dict[tuple[int, int], int] = {}
    pooled = []
    for j, job in enumerate(instance.jobs):
        deadline.check("enumerating placement patterns")
        found = _class_patterns(job.gpus, classes, max_patterns)
        if found is None:
            pooled.append(job.id)
            patterns[j] = [None]
            spans = range(
                min_servers(job, instance.servers), max_servers(job, instance.servers) + 1
            )
            finite = [
                d
                for n in spans
                if not math.isinf(d := execution_slots(job, net, n, p_plan if n > 1 else 0, rule))
            ]
            if not finite:
                raise InvalidInstanceError(f"job {job.id!r} never progresses on any placement")
            durations[j, 0] = int(min(finite) if contention == "free" else max(finite))
            continue
        patterns[j] = []
        for pattern in found:
            n = _pattern_servers(pattern, classes)
            d = execution_slots(job, net, n, p_plan if n > 1 else 0, rule)
            if math.isinf(d):  # the job never progresses on this pattern
                continue
            durations[j, len(patterns[j])] = int(d)
            patterns[j].append(pattern)
        if not patterns[j]:
            raise InvalidInstanceError(f"job {job.id!r} never progresses on any placement")
    return PatternCatalogue(tuple(classes), patterns, durations, tuple(pooled))


def _solves_outcome(solves: Sequence[ModelSolve]) -> dict[str, Any]:
    """Backend, summed model size and solver time of several solves (Outcome fields)."""
    if not solves:
        return {}
    return {
        "backend": solves[0].backend,
        "backend_version": solves[0].backend_version,
        "model_size": tuple(
            sum(size) for size in zip(*(s.model_size for s in solves), strict=True)
        ),
        "solver_time_s": sum(s.runtime_s for s in solves),
        "time_limit_hit": any(s.time_limit_hit for s in solves),
    }


def timeindexed(
    instance: RarInstance,
    *,
    backend: str = "highs",
    limits: SolveLimits | None = None,
    slot_width: int = 1,
    contention: str = "free",
    max_patterns: int = 64,
    horizon: int | None = None,
    deadline: Deadline | None = None,
) -> Outcome:
    """The pattern/start-slot ILP: a lower bound and an evaluated upper-bound schedule.

    With ``slot_width > 1`` the bound model gets half of what remains of
    ``deadline`` and the schedule model the rest.
    """
    if contention not in ("free", "worst"):
        raise ValueError(f"contention must be 'free' or 'worst', got {contention!r}")
    if slot_width < 1:
        raise ValueError("slot_width must be >= 1")
    limits = integral_limits(limits)
    deadline = deadline or limits.deadline()
    H = instance.horizon if horizon is None else min(instance.horizon, int(horizon))
    catalogue = pattern_catalogue(instance, max_patterns, contention, deadline)
    classes, patterns, fine = catalogue.classes, catalogue.patterns, catalogue.durations
    pooled = list(catalogue.pooled)
    w = slot_width
    two_models = w > 1
    solves = []
    info: dict[str, Any] = {
        "slot_width": w,
        "contention": contention,
        "pooled_jobs": pooled,
        "num_columns_per_job_max": max(len(p) for p in patterns.values()),
    }
    # Bound model: durations rounded down to fully covered coarse slots.
    coarse_h = H // w if w > 1 else H
    lb_durations = {key: _coarse_duration_lb(d, w) for key, d in fine.items()}
    bound_model = _build_timeindexed(instance, lb_durations, patterns, classes, coarse_h, deadline)
    relaxation_infeasible = bound_model is None
    bound_solve = None
    if bound_model is not None:
        phase = deadline.sub(0.5) if two_models else deadline
        bound_solve = solve_model(bound_model, backend, limits, phase)
        solves.append(bound_solve)
        relaxation_infeasible = bound_solve.status is Status.INFEASIBLE
    closed = closed_form_bounds(instance)
    bound = None
    if contention == "free":
        model_bound = None
        if relaxation_infeasible:
            # Not even the relaxation fits the horizon: T* > H (no schedule within T).
            model_bound = coarse_h + 1
        elif bound_solve.status is not Status.ERROR and bound_solve.bound is not None:
            model_bound = bound_solve.bound
        if model_bound is not None:
            bound = _ceil_bound(max(w * model_bound, *closed.values()))
        info["bound_from_model"] = None if model_bound is None else w * model_bound
    info["bound_valid"] = contention == "free"
    # Schedule model: the bound model itself when w = 1, else durations rounded up.
    schedule_model, schedule_solve = bound_model, bound_solve
    if two_models:
        ub_durations = {key: math.ceil(d / w) for key, d in fine.items()}
        schedule_model = _build_timeindexed(
            instance, ub_durations, patterns, classes, H // w, deadline
        )
        schedule_solve = None
        if schedule_model is not None:
            schedule_solve = solve_model(schedule_model, backend, limits, deadline)
            solves.append(schedule_solve)
    schedule = objective = None
    if schedule_solve is not None and schedule_solve.has_solution:
        chosen_fine = {}
        for (j, k, _t), var in schedule_model.x.items():
            if pyo.value(var) > 0.5:
                chosen_fine[j] = fine[j, k]
        schedule = _decode_patterns(instance, schedule_model, patterns, classes, w, chosen_fine)
        info["planned_makespan"] = float(pyo.value(schedule_model.C)) * w
        try:
            objective = float(evaluate(instance, schedule).makespan)
        except InfeasibleScheduleError as exc:
            # Executed with contention the plan may overrun T: keep the bound, drop the schedule.
            info["schedule_rejected"] = str(exc)
            schedule = None
    if objective is not None:
        # A schedule meeting the valid bound is optimal (the method pipeline checks that
        # the evaluated schedule never beats the bound).
        status = (
            Status.OPTIMAL if bound is not None and objective <= bound + 1e-6 else Status.FEASIBLE
        )
    elif contention == "free" and relaxation_infeasible:
        status = Status.INFEASIBLE
        info["reason"] = f"no schedule finishes within the horizon T = {H}"
    elif bound is not None:
        status = Status.BOUND_ONLY
    elif contention == "worst":
        # An infeasible worst-contention model proves nothing about the instance.
        status = Status.ERROR
        info["error"] = "no schedule found with worst-contention durations"
    else:
        status = Status.TIME_LIMIT_NO_SOLUTION if solves else Status.ERROR
    info["solver_status"] = [str(solve.status) for solve in solves]
    return Outcome(schedule, status, bound=bound, info=info, **_solves_outcome(solves))


# --------------------------------------------------------------------------- load bound


def load_lb(
    instance: RarInstance,
    *,
    backend: str = "highs",
    limits: SolveLimits | None = None,
    max_patterns: int = 64,
    deadline: Deadline | None = None,
) -> Outcome:
    """Problem (14) bound: choose a pattern per job to minimise the largest GPU load.

    Loads are averaged over the GPUs of each server class (and of the whole
    cluster), a relaxation of the per-GPU maximum, with the contention-free
    pattern durations of :func:`pattern_catalogue` (the same ones as
    ``timeindexed``, so any ``timeindexed`` schedule of makespan ``C`` gives a
    load solution with ``L <= C``: ``load_lb <= timeindexed`` by construction
    when ``slot_width = 1`` and both are solved to optimality; with time
    aggregation either may be larger).
    Reported together with the closed-form bounds (``info['components']``);
    every part is valid.
    """
    limits = limits or SolveLimits()
    deadline = deadline or limits.deadline()
    jobs = instance.jobs
    cat = pattern_catalogue(instance, max_patterns, "free", deadline)
    cols = [(j, k) for j in range(len(jobs)) for k in range(len(cat.patterns[j]))]
    m = pyo.ConcreteModel(name="rar_load_lb")
    m.u = pyo.Var(cols, domain=pyo.Binary)
    m.L = pyo.Var(domain=pyo.NonNegativeReals)
    m.choose = pyo.Constraint(
        range(len(jobs)), rule=lambda m, j: sum(m.u[j, k] for k in range(len(cat.patterns[j]))) == 1
    )
    m.job_fits = pyo.Constraint(
        range(len(jobs)),
        rule=lambda m, j: (
            sum(cat.durations[j, k] * m.u[j, k] for k in range(len(cat.patterns[j]))) <= m.L
        ),
    )
    m.class_load = pyo.ConstraintList()
    for c, (cap, count) in enumerate(cat.classes):
        terms = [
            cat.patterns[j][k][c] * cat.durations[j, k] * m.u[j, k]
            for j, k in cols
            if cat.patterns[j][k] is not None and cat.patterns[j][k][c]
        ]
        if terms:
            m.class_load.add(sum(terms) <= cap * count * m.L)
    m.cluster_load = pyo.Constraint(
        expr=sum(jobs[j].gpus * cat.durations[j, k] * m.u[j, k] for j, k in cols)
        <= instance.num_gpus * m.L
    )
    m.obj = pyo.Objective(expr=m.L, sense=pyo.minimize)
    deadline.check("building the Problem (14) model")
    solve = solve_model(m, backend, limits, deadline)
    components: dict[str, float | None] = dict(closed_form_bounds(instance))
    components["problem14"] = _ceil_bound(solve.bound) if solve.bound is not None else None
    valid = [v for v in components.values() if v is not None]
    return Outcome(
        None,
        Status.BOUND_ONLY,
        bound=float(max(valid)),
        info={"components": components},
        **_solves_outcome([solve]),
    )
