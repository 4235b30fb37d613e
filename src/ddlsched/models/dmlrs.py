"""Exact and bounding formulations of family ``dmlrs``: ``exact``, ``ub_trivial``, pricing, ``UB(p)``.

Paper: Yu et al., IEEE TNSE 2022 (reading notes, seed 002): DMLRS (Eqs.
3-7), R-DMLRS (Eq. 8) and its dual (Eqs. 10-11). Spec
``shared/specs/dmlrs.md``, "R-DMLRS and its dual", "Exact and bounding
formulations" and "Beyond the paper" (``ub_prices``). Column generation is
:mod:`ddlsched.models.dmlrs_colgen`.

The compact offline MILP (:func:`build_model`, :class:`ExactFormulation`;
the spec's, exactly, with the additions marked *ours*). For every job
``i`` that can complete by ``T`` (``a_i + d_min_i - 1 <= T``; the others
get no variable and are rejected) and slot ``t in a_i..T`` (Eq. 7):

* binaries ``c[i,t]`` (completes in ``t``), only for ``t >= a_i + d_min_i -
  1`` (*ours*: no schedule completes earlier, ``d_min_i`` being the fewest
  slots at ``F_i`` workers and internal bandwidth); ``sum_t c[i,t] <= 1``
  (``x_i``);
* binaries ``m[i,h,t]`` (internal on ``h``) and ``e[i,t]`` (external);
  ``sum_h m + e <= sum_{t' >= t} c[i,t']`` (the spec's ``<= 1``,
  strengthened (*ours*): modes only up to completion and only if accepted;
  a schedule can drop the modes of slots without allocation, and the
  evaluator refuses PSs of a rejected job anyway);
* integers ``wI, sI`` (internal) and ``wE, sE`` (external) per ``(i, h,
  t)``, bounded by their indicator times the most that fits on ``h``
  (:func:`ddlsched.solvers.dmlrs_pricing.machine_bounds`);
* PS rows ``gamma_i sum_h sI >= sum_h wI`` and the same for E, plus the
  dominance rows ``gamma_i sum_h sI <= sum_h wI + gamma_i - 1`` (*ours*:
  exactly ``ceil(W / gamma_i)`` PSs; removing surplus PSs keeps every
  constraint, frees capacity and never slows a slot);
* worker cap ``sum_h (wI + wE) <= F_i (sum_h m + e)``, which with the mode
  row gives the spec's ``<= F_i sum_{t' >= t} c[i,t']`` (Eq. 4, nothing
  after completion, nothing if rejected);
* capacities ``sum_i alpha[i,r] (wI + wE) + beta[i,r] (sI + sE) <= C[h,r]``
  (Eq. 5);
* cumulative samples ``slot_s sum_{t' <= t} sum_h (wI / pi_i(b_int) + wE /
  pi_i(b_ext)) >= V_i c[i,t]`` (Eq. 3), divided by ``V_i``; exact, without
  the evaluator's ``1e-9`` slack;
* maximise ``sum_{i,t} u_i(t - a_i) c[i,t]``.

Symmetry (*ours*). Machines of equal capacity are interchangeable *within
each slot separately*: the slots are coupled only through per-job sums
over machines (worker cap, samples, modes) and the per-slot capacity rows,
so applying a permutation of identical machines to one slot maps a
schedule to a schedule of equal value. For each pair ``(h, h + 1)`` of
consecutive machines of identical capacity and each slot, their loads
``L[h,t] = sum_i sum_r (alpha[i,r] (wI + wE) + beta[i,r] (sI + sE)) /
C[h,r]`` are ordered, ``L[h,t] >= L[h+1,t]``. Valid: sorting the machines
of each slot by load (within each maximal run of identical consecutive
machines) gives a schedule of the same value obeying every row, so an
optimum survives. With prices (pricing below) a row is kept only where the
two machines' prices are equal for every job of the model in that slot
(then they are still interchangeable), and dropped elsewhere.

Evaluator agreement (spec): the evaluator runs a slot at ``b_int`` exactly
when all of a job's entries of the slot sit on one machine. A slot the
model runs internally has its entries on one machine; an external slot
that happens to use one machine runs faster in the evaluator than in the
model, which is harmless (the model could have called it internal), so the
model's optimum is the true one. The evaluator's completion is the last
slot with workers; at an optimum it is the model's ``c`` (utilities are
strictly decreasing). The decoded schedule (:meth:`ExactFormulation.decode`)
accepts the jobs with ``sum_t c = 1`` and lists ``(wI + wE, sI + sE)`` per
machine in the slots where the job has workers (PSs in a slot without
workers only use capacity and are dropped).

Size cap (*ours*): :data:`EXACT_MAX_CELLS` job-machine-slot cells; above
it ``exact`` refuses with one line giving the counts
(:class:`~ddlsched.errors.ModelTooLargeError`), before building, and
:func:`ddlsched.solvers.limits.check_model_size` applies as everywhere.

``ub_trivial`` (:func:`ub_trivial`): ``sum_i u_i(d_min_i - 1)`` over jobs
with ``a_i + d_min_i - 1 <= T`` (each job alone at its fastest).

Pricing (spec, R-DMLRS dual): for prices ``p[h, r, t-1] >= 0`` (an array
of shape ``(H, R, T)``), job ``i``'s inner maximum ``max_pi u_i(pi) -
sum_{h,r,t} p (alpha w + beta s)`` over its single-job schedules within
the full capacities is :func:`build_model` restricted to ``[i]`` with the
priced usage subtracted from the objective (``mode="milp"``), or its LP
relaxation with every worker at ``b_int`` (``mode="lp"``, an upper bound on
the inner maximum: every integral schedule maps to a feasible point of
equal objective). The empty schedule (value 0) is always feasible, so the
optimum is ``>= 0``. :class:`PricingSession` solves it many times: with
``backend="highs"`` directly in highspy
(:class:`ddlsched.solvers.dmlrs_pricing.SingleJobPricer`, one object per
job: the LP is one persistent model whose objective changes between
rounds; the MILP is an exact reformulation that aggregates machines of
equal price, rebuilt per call because it is small; measured on
``paper`` seed 0 at zero prices: 1.3 s for all 50 jobs; the per-machine
model of record, through Pyomo and HiGHS, took 108 s for the first 8 jobs
with 3 of them stopped at a 20 s limit), with ``backend="scip"``
through the Pyomo model (:func:`price_job_pyomo`, the statement of record,
also used by the tests to check the direct path). ``PricingSession`` with
``backend="highs"`` breaks ties between equally priced machines by the
caller's load (least first), then by a rotation per job, so that the
columns of different jobs spread over identical machines (it changes which
optimal schedule is returned, never the optimum). A MILP stopped by its limit contributes its dual
bound; a job that could not be priced in time contributes the trivial
bound ``u_i(d_min_i - 1)`` (valid: prices are non-negative), so
:func:`bound_at_prices` always returns a valid bound:

    UB(p) = sum_i lambda_i(p) + sum_{h,r,t} p[h,r,t] C[h,r],
    lambda_i(p) = max(0, inner maximum of job i, or an upper bound on it).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from ddlsched.deadline import Deadline
from ddlsched.errors import (
    InvalidInstanceError,
    ModelTooLargeError,
    TimeLimitReached,
    UnknownMethodError,
)
from ddlsched.problems.dmlrs import (
    SAMPLE_RTOL,
    DmlrsInstance,
    DmlrsSchedule,
    evaluate,
    fastest_slots,
    samples_in_slot,
    schedule_from_counts,
)
from ddlsched.solvers.dmlrs_pricing import (
    SingleJobData,
    SingleJobPricer,
    identical_pairs,
    load_weights,
    machine_bounds,
)
from ddlsched.solvers.limits import SolveLimits, check_model_size

if TYPE_CHECKING:  # imported where a Pyomo model is built: colgen and ub_prices never need it
    import pyomo.environ as pyo

__all__ = [
    "EXACT_MAX_CELLS",
    "PRICING_MODES",
    "ExactFormulation",
    "PricingResult",
    "PricingSession",
    "bound_at_prices",
    "build_model",
    "check_prices",
    "job_data",
    "job_upper_bound",
    "price_job",
    "price_job_pyomo",
    "ub_trivial",
]

#: The largest ``jobs * machines * slots`` the exact MILP is built for (ours). Measured
#: (2 cores, HiGHS 1.14): at 20 jobs x 50 machines x 20 slots HiGHS overran a 60 s limit
#: by 16 s (a phase without time checks) with the empty schedule as incumbent; at 5,000
#: cells the limits held within 0.2 s, and HiGHS still found nothing better than the empty
#: schedule in 60 s on ``paper``-like instances: ``exact`` is for tiny instances.
EXACT_MAX_CELLS = 5_000
PRICING_MODES = ("milp", "lp")
_WHAT = "building the dmlrs MILP"


# --------------------------------------------------------------------------- data


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


def job_data(instance: DmlrsInstance, i: int) -> SingleJobData | None:
    """Job ``i`` as plain arrays over its slots ``a_i..T`` (``None``: cannot complete by ``T``)."""
    job = instance.jobs[i]
    a, T = job.arrival_slot, instance.slots
    d_min = fastest_slots(instance, i)
    if a + d_min - 1 > T:
        return None
    num_k = T - a + 1
    utility = np.full(num_k, np.nan)
    for k in range(d_min - 1, num_k):
        utility[k] = job.utility(k)
    V = float(job.workload)
    return SingleJobData(
        capacity=instance.cap,
        alpha=instance.alpha[i],
        beta=instance.beta[i],
        worker_cap=job.global_batch,
        gamma=job.gamma,
        rate_int=samples_in_slot(job, 1, instance.b_int, instance.slot_s) / V,
        rate_ext=samples_in_slot(job, 1, instance.b_ext, instance.slot_s) / V,
        utility=utility,
    )


def check_prices(instance: DmlrsInstance, prices: Any) -> np.ndarray:
    """``prices`` as a float array of shape ``(H, R, T)``, finite and non-negative."""
    shape = (instance.num_machines, len(instance.resources), instance.slots)
    p = np.asarray(prices, dtype=float)
    if p.shape != shape:
        raise InvalidInstanceError(f"prices: expected shape {shape} (H, R, T), got {p.shape}")
    if not np.all(np.isfinite(p)) or np.any(p < 0):
        raise InvalidInstanceError("prices: must be finite and non-negative")
    return p


def _job_costs(instance: DmlrsInstance, i: int, prices: np.ndarray | None):
    """Per ``(h, k)`` worker and PS prices of job ``i`` over its slots ``a_i..T``."""
    a = instance.jobs[i].arrival_slot
    num = (instance.num_machines, instance.slots - a + 1)
    if prices is None:
        return np.zeros(num), np.zeros(num)
    window = prices[:, :, a - 1 :]
    return (
        np.einsum("hrk,r->hk", window, instance.alpha[i]),
        np.einsum("hrk,r->hk", window, instance.beta[i]),
    )


# --------------------------------------------------------------------------- Pyomo model


def _checked(rule, deadline: Deadline):
    def wrapped(*args):
        deadline.check(_WHAT)
        return rule(*args)

    return wrapped


def build_model(
    instance: DmlrsInstance,
    jobs: Sequence[int] | None = None,
    prices: np.ndarray | None = None,
    relax: bool = False,
    deadline: Deadline | None = None,
) -> pyo.ConcreteModel:
    """The compact MILP of the module docstring over ``jobs`` (default: all).

    ``prices`` (shape ``(H, R, T)``) subtracts the priced usage from the
    objective (pricing); ``relax`` builds the LP relaxation with every
    worker at ``b_int`` (pricing ``"lp"``). The model records
    ``model.dmlrs_jobs`` (the jobs that have variables) and their data.
    """
    import pyomo.environ as pyo

    deadline = deadline or Deadline.unlimited()
    T, H = instance.slots, instance.num_machines
    R = len(instance.resources)
    cap = instance.cap
    jobs = list(range(len(instance.jobs))) if jobs is None else list(jobs)
    data = {i: job_data(instance, i) for i in jobs}
    live = [i for i in jobs if data[i] is not None]
    arrival = {i: instance.jobs[i].arrival_slot for i in live}
    slots = {i: range(arrival[i], T + 1) for i in live}
    comp = {i: [arrival[i] + int(k) for k in data[i].completion_slots] for i in live}
    bounds = {
        i: machine_bounds(cap, data[i].alpha, data[i].beta, data[i].worker_cap, data[i].gamma)
        for i in live
    }
    costs = {i: _job_costs(instance, i, prices) for i in live}

    m = pyo.ConcreteModel(name="dmlrs_relaxed" if relax else "dmlrs_exact")
    m.dmlrs_jobs = live
    it = [(i, t) for i in live for t in slots[i]]
    iht = [(i, h, t) for i in live for h in range(H) for t in slots[i]]
    ic = [(i, t) for i in live for t in comp[i]]
    m.c = pyo.Var(ic, domain=pyo.UnitInterval if relax else pyo.Binary)
    deadline.check(_WHAT)

    def ub(kind: int):
        return lambda _m, i, h, t: (0, int(bounds[i][kind][h]))

    if relax:
        m.w = pyo.Var(
            iht,
            domain=pyo.NonNegativeReals,
            bounds=lambda _m, i, h, t: (0, int(max(bounds[i][0][h], bounds[i][2][h]))),
        )
        m.s = pyo.Var(
            iht,
            domain=pyo.NonNegativeReals,
            bounds=lambda _m, i, h, t: (0, int(max(bounds[i][1][h], bounds[i][3][h]))),
        )
        work = {key: m.w[key] for key in iht}
        serve = {key: m.s[key] for key in iht}
        done = {key: data[key[0]].rate_int * m.w[key] for key in iht}
    else:
        m.e = pyo.Var(it, domain=pyo.Binary)
        m.m = pyo.Var(
            iht, domain=pyo.Binary, bounds=lambda _m, i, h, t: (0, min(1, int(bounds[i][0][h])))
        )
        m.wI = pyo.Var(iht, domain=pyo.NonNegativeIntegers, bounds=ub(0))
        m.sI = pyo.Var(iht, domain=pyo.NonNegativeIntegers, bounds=ub(1))
        m.wE = pyo.Var(iht, domain=pyo.NonNegativeIntegers, bounds=ub(2))
        m.sE = pyo.Var(iht, domain=pyo.NonNegativeIntegers, bounds=ub(3))
        work = {key: m.wI[key] + m.wE[key] for key in iht}
        serve = {key: m.sI[key] + m.sE[key] for key in iht}
        done = {
            key: data[key[0]].rate_int * m.wI[key] + data[key[0]].rate_ext * m.wE[key]
            for key in iht
        }
    deadline.check(_WHAT)
    machines = range(H)

    def later(i, t):
        return sum(m.c[i, tt] for tt in comp[i] if tt >= t)

    m.accept_once = pyo.Constraint(live, rule=lambda _m, i: sum(m.c[i, t] for t in comp[i]) <= 1)
    if relax:
        # worker cap (Eq. 4): nothing after completion, nothing if rejected
        m.worker_cap = pyo.Constraint(
            it,
            rule=_checked(
                lambda _m, i, t: (
                    sum(m.w[i, h, t] for h in machines) <= data[i].worker_cap * later(i, t)
                ),
                deadline,
            ),
        )
        m.ps_rule = pyo.Constraint(
            it,
            rule=_checked(
                lambda _m, i, t: (
                    data[i].gamma * sum(m.s[i, h, t] for h in machines)
                    >= sum(m.w[i, h, t] for h in machines)
                ),
                deadline,
            ),
        )
    else:
        m.one_mode = pyo.Constraint(
            it,
            rule=_checked(
                lambda _m, i, t: sum(m.m[i, h, t] for h in machines) + m.e[i, t] <= later(i, t),
                deadline,
            ),
        )
        m.wI_on = pyo.Constraint(
            iht, rule=lambda _m, i, h, t: m.wI[i, h, t] <= int(bounds[i][0][h]) * m.m[i, h, t]
        )
        m.sI_on = pyo.Constraint(
            iht, rule=lambda _m, i, h, t: m.sI[i, h, t] <= int(bounds[i][1][h]) * m.m[i, h, t]
        )
        m.wE_on = pyo.Constraint(
            iht, rule=lambda _m, i, h, t: m.wE[i, h, t] <= int(bounds[i][2][h]) * m.e[i, t]
        )
        m.sE_on = pyo.Constraint(
            iht, rule=lambda _m, i, h, t: m.sE[i, h, t] <= int(bounds[i][3][h]) * m.e[i, t]
        )
        deadline.check(_WHAT)
        rows = []
        for mode in ("I", "E"):
            w_, s_ = getattr(m, "w" + mode), getattr(m, "s" + mode)

            def ps_low(_m, i, t, w_=w_, s_=s_):
                return data[i].gamma * sum(s_[i, h, t] for h in machines) >= sum(
                    w_[i, h, t] for h in machines
                )

            def ps_high(_m, i, t, w_=w_, s_=s_):  # dominance: exactly ceil(W / gamma) PSs
                g = data[i].gamma
                return (
                    g * sum(s_[i, h, t] for h in machines)
                    <= sum(w_[i, h, t] for h in machines) + g - 1
                )

            rows.append((f"ps_rule_{mode}", ps_low))
            rows.append((f"ps_exact_{mode}", ps_high))
        for name, rule in rows:
            setattr(m, name, pyo.Constraint(it, rule=_checked(rule, deadline)))
        m.worker_cap = pyo.Constraint(
            it,
            rule=_checked(
                lambda _m, i, t: (
                    sum(work[i, h, t] for h in machines)
                    <= data[i].worker_cap * (sum(m.m[i, h, t] for h in machines) + m.e[i, t])
                ),
                deadline,
            ),
        )
    deadline.check(_WHAT)

    # capacities (Eq. 5)
    present = {t: [i for i in live if arrival[i] <= t] for t in range(1, T + 1)}
    cap_idx = [
        (h, r, t)
        for t in range(1, T + 1)
        for h in machines
        for r in range(R)
        if any(instance.alpha[i, r] or instance.beta[i, r] for i in present[t])
    ]
    m.capacity = pyo.Constraint(
        cap_idx,
        rule=_checked(
            lambda _m, h, r, t: (
                sum(
                    float(instance.alpha[i, r]) * work[i, h, t]
                    + float(instance.beta[i, r]) * serve[i, h, t]
                    for i in present[t]
                    if instance.alpha[i, r] or instance.beta[i, r]
                )
                <= float(cap[h, r])
            ),
            deadline,
        ),
    )
    deadline.check(_WHAT)

    # cumulative samples (Eq. 3), scaled by V_i
    m.samples = pyo.Constraint(
        ic,
        rule=_checked(
            lambda _m, i, t: (
                sum(done[i, h, tt] for h in machines for tt in range(arrival[i], t + 1))
                >= sum(m.c[i, tt] for tt in comp[i] if tt <= t)
            ),
            deadline,
        ),
    )
    deadline.check(_WHAT)

    if not relax:
        sym = []
        for h in identical_pairs(cap):
            for t in range(1, T + 1):
                users = present[t]
                if not users:
                    continue
                if prices is not None and not all(
                    costs[i][0][h, t - arrival[i]] == costs[i][0][h + 1, t - arrival[i]]
                    and costs[i][1][h, t - arrival[i]] == costs[i][1][h + 1, t - arrival[i]]
                    for i in users
                ):
                    continue
                sym.append((h, t))

        def load(h, t):  # machines h and h + 1 have the same capacity
            total = 0
            for i in present[t]:
                lw, ls = load_weights(cap[h], data[i].alpha, data[i].beta)
                total = total + lw * work[i, h, t] + ls * serve[i, h, t]
            return total

        m.symmetry = pyo.Constraint(
            sym, rule=_checked(lambda _m, h, t: load(h, t) >= load(h + 1, t), deadline)
        )

    objective = sum(instance.jobs[i].utility(t - arrival[i]) * m.c[i, t] for i, t in ic)
    if prices is not None:
        objective = objective - sum(
            float(costs[i][0][h, t - arrival[i]]) * work[i, h, t]
            + float(costs[i][1][h, t - arrival[i]]) * serve[i, h, t]
            for i, h, t in iht
            if costs[i][0][h, t - arrival[i]] or costs[i][1][h, t - arrival[i]]
        )
    m.objective = pyo.Objective(expr=objective, sense=pyo.maximize)
    deadline.check(_WHAT)
    return m


def _model_arrays(model: pyo.ConcreteModel, instance: DmlrsInstance, i: int):
    """Job ``i``'s ``(workers, ps, completion)`` arrays over its slots from a solved model."""
    a, H = instance.jobs[i].arrival_slot, instance.num_machines
    num_k = instance.slots - a + 1
    workers = np.zeros((H, num_k))
    ps = np.zeros((H, num_k))
    completion = np.zeros(num_k)
    relax = hasattr(model, "w")

    def val(var) -> float:
        v = var.value
        return 0.0 if v is None else float(v)

    for h in range(H):
        for k in range(num_k):
            t = a + k
            if relax:
                workers[h, k] = val(model.w[i, h, t])
                ps[h, k] = val(model.s[i, h, t])
            else:
                workers[h, k] = val(model.wI[i, h, t]) + val(model.wE[i, h, t])
                ps[h, k] = val(model.sI[i, h, t]) + val(model.sE[i, h, t])
    for (j, t), var in model.c.items():
        if j == i:
            completion[t - a] = val(var)
    if not relax:
        workers, ps = np.rint(workers), np.rint(ps)
    return workers, ps, completion


# --------------------------------------------------------------------------- exact


@dataclass(frozen=True)
class ExactFormulation:
    """The compact offline MILP of DMLRS (module docstring) as a Formulation (maximises)."""

    name: ClassVar[str] = "dmlrs.exact"
    sense: ClassVar[str] = "max"
    metric: ClassVar[str | None] = None
    always_feasible: ClassVar[bool] = True  # rejecting every job is a schedule
    highs_options: ClassVar[tuple[tuple[str, object], ...]] = ()

    def build(self, instance: DmlrsInstance, deadline: Deadline) -> pyo.ConcreteModel:
        n, H, T = len(instance.jobs), instance.num_machines, instance.slots
        cells = n * H * T
        if cells > EXACT_MAX_CELLS:
            raise ModelTooLargeError(
                f"dmlrs exact: {n} jobs x {H} machines x {T} slots = {cells:,} cells, more than "
                f"the {EXACT_MAX_CELLS:,} the exact MILP is built for; use colgen or ub_trivial"
            )
        variables = sum((T - instance.jobs[i].arrival_slot + 1) * (5 * H + 2) for i in range(n))
        check_model_size("dmlrs exact MILP", variables, "use fewer jobs, machines or slots")
        return build_model(instance, deadline=deadline)

    def objective_scale(self, instance: DmlrsInstance) -> float:
        return 1.0

    def decode(self, model: pyo.ConcreteModel, instance: DmlrsInstance) -> DmlrsSchedule:
        accepted, entries = [], []
        for i in model.dmlrs_jobs:
            workers, ps, completion = _model_arrays(model, instance, i)
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


# --------------------------------------------------------------------------- pricing


@dataclass(frozen=True)
class PricingResult:
    """Job ``i``'s pricing at prices ``p`` (module docstring).

    ``value``: the priced value ``u_i(pi) - usage . p`` of ``column`` (0 and
    ``column = None`` for the empty schedule). ``dual_bound``: an upper
    bound on the inner maximum, ``>= max(0, value)`` (``lambda_i``).
    ``column``: ``(slot, machine, workers, ps)`` entries (integers with
    ``mode="milp"``, fractional with ``"lp"``). ``utility``: the column's
    utility (the evaluator's with ``"milp"``; ``sum_t u c[t]`` with
    ``"lp"``). ``status``: ``optimal``, ``time_limit`` (solver stopped at
    its limit: its dual bound is used), ``trivial`` (not solved; the bound
    is :func:`job_upper_bound`), ``infeasible_column`` (the solver's
    schedule fell short of ``V_i`` in the evaluator by floating-point
    noise and was dropped) or ``error``. ``model_value``: the solver's
    objective (``None`` without a solution).
    """

    value: float
    dual_bound: float
    column: tuple[tuple[int, int, float, float], ...] | None
    completion_slot: int | None
    utility: float = 0.0
    status: str = "optimal"
    seconds: float = 0.0
    model_value: float | None = None


def _column_from_arrays(
    instance: DmlrsInstance,
    i: int,
    costs: tuple[np.ndarray, np.ndarray],
    workers: np.ndarray,
    ps: np.ndarray,
    completion: np.ndarray,
    relax: bool,
) -> tuple[tuple[tuple[int, int, float, float], ...] | None, float, float, int | None, bool]:
    """``(column, value, utility, completion_slot, ok)`` from a solution's arrays."""
    job = instance.jobs[i]
    a = job.arrival_slot
    pw, pps = costs
    if relax:
        keep = (workers > 1e-9) | (ps > 1e-9)
        entries = tuple(
            (a + int(k), int(h), float(workers[h, k]), float(ps[h, k]))
            for k in range(workers.shape[1])
            for h in np.flatnonzero(keep[:, k])
        )
        utility = float(sum(job.utility(k) * completion[k] for k in np.flatnonzero(completion > 0)))
        cost = float(np.sum(pw * workers) + np.sum(pps * ps))
        value = utility - cost
        if not entries or value <= 0:
            return None, 0.0, 0.0, None, True
        return entries, value, utility, None, True
    busy = np.flatnonzero(workers.sum(axis=0) > 0)
    if not len(busy):
        return None, 0.0, 0.0, None, True
    entries_l = []
    samples = 0.0
    cost = 0.0
    for k in busy:
        hosts = np.flatnonzero((workers[:, k] > 0) | (ps[:, k] > 0))
        total = int(workers[:, k].sum())
        bandwidth = instance.b_int if len(hosts) == 1 else instance.b_ext
        samples += samples_in_slot(job, total, bandwidth, instance.slot_s)
        for h in hosts:
            w, s = int(workers[h, k]), int(ps[h, k])
            entries_l.append((a + int(k), int(h), w, s))
            cost += pw[h, k] * w + pps[h, k] * s
    if samples < job.workload * (1.0 - SAMPLE_RTOL):
        return None, 0.0, 0.0, None, False
    done = a + int(busy[-1])
    utility = float(job.utility(done - a))
    value = utility - float(cost)
    if value <= 0:
        return None, 0.0, 0.0, None, True
    return tuple(entries_l), value, utility, done, True


def _result(
    instance: DmlrsInstance,
    i: int,
    costs,
    relax: bool,
    status: str,
    objective: float | None,
    bound: float | None,
    arrays,
    seconds: float,
) -> PricingResult:
    trivial = job_upper_bound(instance, i)
    column, value, utility, done, ok = None, 0.0, 0.0, None, True
    if arrays is not None:
        column, value, utility, done, ok = _column_from_arrays(instance, i, costs, *arrays, relax)
    dual = trivial if bound is None else min(trivial, max(0.0, bound))
    dual = max(dual, value)
    if not ok:
        status = "infeasible_column"
    return PricingResult(value, dual, column, done, utility, status, seconds, objective)


def _empty(instance: DmlrsInstance, i: int, status: str) -> PricingResult:
    return PricingResult(0.0, job_upper_bound(instance, i), None, None, 0.0, status)


def price_job_pyomo(
    instance: DmlrsInstance,
    i: int,
    prices: Any,
    mode: str = "milp",
    backend: str = "highs",
    deadline: Deadline | None = None,
    limits: SolveLimits | None = None,
) -> PricingResult:
    """Job ``i``'s pricing through the Pyomo model (the statement of record)."""
    from ddlsched.solvers.backends import solve_model
    from ddlsched.solvers.result import Status

    if mode not in PRICING_MODES:
        raise UnknownMethodError(f"unknown pricing mode {mode!r} (choose from milp, lp)")
    p = check_prices(instance, prices)
    deadline = deadline or Deadline.unlimited()
    if job_data(instance, i) is None:
        return PricingResult(0.0, 0.0, None, None)
    relax = mode == "lp"
    started = time.perf_counter()
    model = build_model(instance, [i], p, relax=relax, deadline=deadline)
    solve = solve_model(model, backend, limits or SolveLimits(abs_gap=1e-6, rel_gap=1e-6), deadline)
    status = {
        Status.OPTIMAL: "optimal",
        Status.FEASIBLE: "time_limit",
        Status.TIME_LIMIT_NO_SOLUTION: "time_limit",
    }.get(solve.status, "error")
    arrays = _model_arrays(model, instance, i) if solve.has_solution else None
    bound = solve.bound
    if relax and solve.status is not Status.OPTIMAL:
        bound = None
    if solve.status is Status.OPTIMAL:
        bound = solve.incumbent if bound is None else max(bound, solve.incumbent)
    return _result(
        instance,
        i,
        _job_costs(instance, i, p),
        relax,
        status,
        solve.incumbent,
        bound,
        arrays,
        time.perf_counter() - started,
    )


@dataclass
class PricingSession:
    """Prices jobs of one instance again and again (module docstring).

    ``mode``: ``"milp"`` or ``"lp"``; ``backend``: ``"highs"`` (one
    :class:`~ddlsched.solvers.dmlrs_pricing.SingleJobPricer` per job, built
    on first use) or ``"scip"`` (the Pyomo model).
    """

    instance: DmlrsInstance
    mode: str = "milp"
    backend: str = "highs"
    mip_gap: float = 1e-6
    _pricers: dict[int, SingleJobPricer] = field(default_factory=dict, repr=False)
    _data: dict[int, SingleJobData | None] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if self.mode not in PRICING_MODES:
            raise UnknownMethodError(f"unknown pricing mode {self.mode!r} (choose from milp, lp)")
        if self.backend not in ("highs", "scip"):
            raise UnknownMethodError(f"unknown backend {self.backend!r} (choose from highs, scip)")

    def data(self, i: int) -> SingleJobData | None:
        """Job ``i``'s arrays (cached)."""
        if i not in self._data:
            self._data[i] = job_data(self.instance, i)
        return self._data[i]

    def _rank(self, i: int, load: np.ndarray | None) -> np.ndarray:
        """Machine preference of job ``i`` among equal prices, per slot ``a_i..T``.

        Least ``load[h, t]`` first (the master's use of the machine, when
        given), then a rotation by job (job ``i`` starts at machine ``i H /
        n``), so that jobs spread over identical machines instead of all
        choosing machine 0; it never changes a pricing optimum.
        """
        inst = self.instance
        H, a = inst.num_machines, inst.jobs[i].arrival_slot
        rotation = (np.arange(H) - (i * H) // max(1, len(inst.jobs))) % H
        num_k = inst.slots - a + 1
        rank = np.empty((H, num_k), dtype=np.int64)
        for k in range(num_k):
            primary = np.zeros(H) if load is None else load[:, a - 1 + k]
            rank[np.lexsort((rotation, primary)), k] = np.arange(H)
        return rank

    def price(
        self,
        i: int,
        prices: np.ndarray,
        deadline: Deadline | None = None,
        load: np.ndarray | None = None,
    ) -> PricingResult:
        """Job ``i``'s pricing at ``prices`` (already checked) within ``deadline``.

        ``load`` (shape ``(H, T)``, optional) steers the choice among equally
        priced machines (:meth:`_rank`).
        """
        deadline = deadline or Deadline.unlimited()
        data = self.data(i)
        if data is None:
            return PricingResult(0.0, 0.0, None, None)
        if deadline.remaining_s() <= 1e-3:
            return _empty(self.instance, i, "trivial")
        if self.backend == "scip":
            try:
                return price_job_pyomo(self.instance, i, prices, self.mode, "scip", deadline)
            except TimeLimitReached:  # the limit came while building the model
                return _empty(self.instance, i, "trivial")
        started = time.perf_counter()
        pricer = self._pricers.get(i)
        relax = self.mode == "lp"
        if pricer is None:
            pricer = SingleJobPricer(
                data, relax=relax, mip_rel_gap=self.mip_gap, mip_abs_gap=self.mip_gap
            )
            self._pricers[i] = pricer
        costs = _job_costs(self.instance, i, prices)
        rank = None if relax else self._rank(i, load)
        sol = pricer.solve(costs[0], costs[1], deadline.remaining_s(), rank)
        arrays = None
        if sol.workers is not None:
            arrays = (sol.workers, sol.ps, sol.completion)
        return _result(
            self.instance,
            i,
            costs,
            relax,
            sol.status,
            sol.objective,
            sol.dual_bound,
            arrays,
            time.perf_counter() - started,
        )

    def price_all(
        self,
        prices: np.ndarray,
        deadline: Deadline | None = None,
        load: np.ndarray | None = None,
    ) -> list[PricingResult]:
        """Every job's pricing; each solve gets an equal share of what remains.

        A job reached after the deadline gets the trivial bound (status ``trivial``).
        """
        deadline = deadline or Deadline.unlimited()
        n = len(self.instance.jobs)
        todo = [i for i in range(n) if self.data(i) is not None]
        out: list[PricingResult] = [PricingResult(0.0, 0.0, None, None)] * n
        for pos, i in enumerate(todo):
            share = 1.0 / (len(todo) - pos)
            out[i] = self.price(i, prices, deadline.sub(share), load)
        return out


def price_job(
    instance: DmlrsInstance,
    i: int,
    prices: Any,
    mode: str = "milp",
    backend: str = "highs",
    deadline: Deadline | None = None,
) -> PricingResult:
    """Job ``i``'s inner maximum at ``prices`` (shape ``(H, R, T)``), one-off (module docstring)."""
    p = check_prices(instance, prices)
    return PricingSession(instance, mode, backend).price(i, p, deadline)


def bound_at_prices(
    instance: DmlrsInstance,
    prices: Any,
    mode: str = "milp",
    backend: str = "highs",
    deadline: Deadline | None = None,
    session: PricingSession | None = None,
) -> tuple[float, dict[str, Any]]:
    """``UB(p) = sum_i lambda_i(p) + sum p C`` (spec), always valid (module docstring).

    Returns ``(UB, info)``; ``info`` holds ``lambda`` (per job), ``price_term``
    (``sum p C``), counts of jobs per pricing status and the seconds spent.
    """
    p = check_prices(instance, prices)
    started = time.perf_counter()
    session = session or PricingSession(instance, mode, backend)
    results = session.price_all(p, deadline)
    lambdas = [r.dual_bound for r in results]
    price_term = float(np.sum(p * instance.cap[:, :, None]))
    bound = float(math.fsum(lambdas)) + price_term
    statuses: dict[str, int] = {}
    for r in results:
        statuses[r.status] = statuses.get(r.status, 0) + 1
    info = {
        "mode": session.mode,
        "backend": session.backend,
        "lambda": lambdas,
        "price_term": price_term,
        "pricing_status": statuses,
        "seconds": time.perf_counter() - started,
    }
    return bound, info
