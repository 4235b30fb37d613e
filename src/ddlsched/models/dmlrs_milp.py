"""Family ``dmlrs``: the compact MILP of DMLRS (Eqs. 3-7) in Pyomo, ``exact``'s model.

Paper: Yu et al., IEEE TNSE 2022 (reading notes of the paper): DMLRS (Eqs.
3-7). Spec ``docs/families/dmlrs.md``, ``exact``.
:func:`build_model` adds the rows group by group, each in its own builder
(:func:`_add_variables`: the domain, Eq. 7; :func:`_add_relaxed_rows`:
Eq. 4 and the PS rule of the LP; :func:`_add_mode_rows`: the modes and
their bounds; :func:`_add_ps_and_worker_rows`: the PS rule, its dominance
row and Eq. 4; :func:`_add_capacity_rows`: Eq. 5;
:func:`_add_sample_rows`: Eq. 3; :func:`_add_symmetry_rows`: ours;
:func:`_set_objective`: Eq. 6's utilities less the priced usage), in the
order the model always had (the solvers see the same rows in the same
order). The pricing (:mod:`ddlsched.models.dmlrs_dual`) restricts it to one
job with prices; the MIP repair of ``improve``
(:mod:`ddlsched.models.dmlrs_mip_repair`) restricts it to a window of jobs on
the capacity the other jobs leave (``reserved``).

The compact offline MILP (:func:`build_model`; ``exact`` solves it through
:class:`ddlsched.models.dmlrs.ExactFormulation`): the spec's, exactly, with
the additions marked *ours*. For every job ``i`` that can complete by
``T`` (``a_i + d_min_i - 1 <= T``; the others get no variable and are
rejected) and slot ``t in a_i..T`` (Eq. 7):

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
  (:func:`ddlsched.solvers.dmlrs_machine.machine_bounds`);
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
  pi_i(b_ext)) >= V_i sum_{t' <= t} c[i,t']`` (Eq. 3), divided by ``V_i`` (the
  cumulative right side has the same integer points as ``V_i c[i,t]`` and an LP
  relaxation at least as tight); exact, without
  the evaluator's ``1e-9`` slack;
* maximise ``sum_{i,t} u_i(t - a_i) c[i,t]``.

Residual capacity (*ours*, ``reserved``, the MIP repair): the capacity other
jobs already use per slot, machine and resource, shape ``(T + 1, H, R)``
(row 0 unused), is subtracted from ``C[h,r]`` in Eq. 5 (clamped at 0); the
bounds on the counts stay those of the whole machine (valid, looser). A
symmetry row (below) is kept only where the two machines' reserved usage is
equal in that slot (only then are they interchangeable).

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
strictly decreasing). The decoded schedule
(:meth:`ddlsched.models.dmlrs.ExactFormulation.decode`, from
:func:`model_arrays`) accepts the jobs with ``sum_t c = 1`` and lists ``(wI + wE, sI + sE)`` per
machine in the slots where the job has workers (PSs in a slot without
workers only use capacity and are dropped).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ddlsched.deadline import Deadline
from ddlsched.problems.dmlrs import DmlrsInstance, fastest_slots, samples_in_slot
from ddlsched.solvers.dmlrs_machine import identical_pairs, load_weights, machine_bounds
from ddlsched.solvers.dmlrs_pricing import SingleJobData

if TYPE_CHECKING:  # imported where a Pyomo model is built: colgen and ub_prices never need it
    import pyomo.environ as pyo

__all__ = ["build_model", "job_costs", "job_data", "model_arrays"]

_WHAT = "building the dmlrs MILP"


# --------------------------------------------------------------------------- data


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


def job_costs(
    instance: DmlrsInstance, i: int, prices: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
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


@dataclass
class _Sets:
    """The jobs with variables, their data and the model's index sets."""

    instance: DmlrsInstance
    live: list[int]  # the jobs that can complete by T
    data: dict[int, Any]  # SingleJobData per live job
    arrival: dict[int, int]
    comp: dict[int, list[int]]  # slots in which job i may complete
    bounds: dict[int, Any]  # machine_bounds per live job
    costs: dict[int, tuple[np.ndarray, np.ndarray]]  # job_costs per live job
    reserved: np.ndarray | None  # capacity other jobs use per (slot, machine, resource)
    it: list[tuple[int, int]]
    iht: list[tuple[int, int, int]]
    ic: list[tuple[int, int]]

    @property
    def machines(self) -> range:
        return range(self.instance.num_machines)

    def present(self, t: int) -> list[int]:
        """The live jobs arrived by slot ``t``."""
        return [i for i in self.live if self.arrival[i] <= t]


def _sets(
    instance: DmlrsInstance,
    jobs: Sequence[int] | None,
    prices: np.ndarray | None,
    reserved: np.ndarray | None = None,
) -> _Sets:
    T, H, cap = instance.slots, instance.num_machines, instance.cap
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
    return _Sets(
        instance=instance,
        live=live,
        data={i: data[i] for i in live},
        arrival=arrival,
        comp=comp,
        bounds=bounds,
        costs={i: job_costs(instance, i, prices) for i in live},
        reserved=reserved,
        it=[(i, t) for i in live for t in slots[i]],
        iht=[(i, h, t) for i in live for h in range(H) for t in slots[i]],
        ic=[(i, t) for i in live for t in comp[i]],
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
    reserved: np.ndarray | None = None,
) -> pyo.ConcreteModel:
    """The compact MILP of the module docstring over ``jobs`` (default: all).

    ``prices`` (shape ``(H, R, T)``) subtracts the priced usage from the
    objective (pricing); ``relax`` builds the LP relaxation with every
    worker at ``b_int`` (pricing ``"lp"``); ``reserved`` (shape ``(T + 1, H,
    R)``) is the capacity other jobs already use (residual capacity, module
    docstring). The model records ``model.dmlrs_jobs`` (the jobs that have
    variables) and their data.
    """
    import pyomo.environ as pyo

    deadline = deadline or Deadline.unlimited()
    expected = (instance.slots + 1, instance.num_machines, len(instance.resources))
    if reserved is not None and reserved.shape != expected:
        raise ValueError(f"reserved must have shape {expected}, got {reserved.shape}")
    sets = _sets(instance, jobs, prices, reserved)
    m = pyo.ConcreteModel(name="dmlrs_relaxed" if relax else "dmlrs_exact")
    m.dmlrs_jobs = sets.live
    work, serve, done = _add_variables(m, sets, relax, deadline)
    m.accept_once = pyo.Constraint(
        sets.live, rule=lambda _m, i: sum(m.c[i, t] for t in sets.comp[i]) <= 1
    )
    if relax:
        _add_relaxed_rows(m, sets, deadline)
    else:
        _add_mode_rows(m, sets, deadline)
        _add_ps_and_worker_rows(m, sets, work, deadline)
    deadline.check(_WHAT)
    _add_capacity_rows(m, sets, work, serve, deadline)
    deadline.check(_WHAT)
    _add_sample_rows(m, sets, done, deadline)
    deadline.check(_WHAT)
    if not relax:
        _add_symmetry_rows(m, sets, work, serve, prices is not None, deadline)
    _set_objective(m, sets, work, serve, prices is not None)
    deadline.check(_WHAT)
    return m


def _add_variables(m: pyo.ConcreteModel, sets: _Sets, relax: bool, deadline: Deadline):
    """Completion ``c[i,t]`` for ``t >= a_i + d_min_i - 1`` and the counts per ``(i, h, t)``
    in ``a_i..T`` (Eq. 7): ``w, s`` (LP) or the modes ``m, e`` and ``wI, sI, wE, sE``
    bounded by what fits on ``h``. Returns the workers, PSs and workload share per
    ``(i, h, t)`` as expressions."""
    import pyomo.environ as pyo

    bounds, data, iht = sets.bounds, sets.data, sets.iht
    m.c = pyo.Var(sets.ic, domain=pyo.UnitInterval if relax else pyo.Binary)
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
        m.e = pyo.Var(sets.it, domain=pyo.Binary)
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
    return work, serve, done


def _later(m: pyo.ConcreteModel, sets: _Sets, i: int, t: int):
    """``sum_{t' >= t} c[i,t']``: job ``i`` is accepted and not complete before ``t``."""
    return sum(m.c[i, tt] for tt in sets.comp[i] if tt >= t)


def _add_relaxed_rows(m: pyo.ConcreteModel, sets: _Sets, deadline: Deadline) -> None:
    """The LP's worker cap ``sum_h w <= F_i sum_{t' >= t} c`` (Eq. 4: nothing after
    completion, nothing if rejected) and PS rule ``gamma_i sum_h s >= sum_h w``."""
    import pyomo.environ as pyo

    data, machines = sets.data, sets.machines
    m.worker_cap = pyo.Constraint(
        sets.it,
        rule=_checked(
            lambda _m, i, t: (
                sum(m.w[i, h, t] for h in machines) <= data[i].worker_cap * _later(m, sets, i, t)
            ),
            deadline,
        ),
    )
    m.ps_rule = pyo.Constraint(
        sets.it,
        rule=_checked(
            lambda _m, i, t: (
                data[i].gamma * sum(m.s[i, h, t] for h in machines)
                >= sum(m.w[i, h, t] for h in machines)
            ),
            deadline,
        ),
    )


def _add_mode_rows(m: pyo.ConcreteModel, sets: _Sets, deadline: Deadline) -> None:
    """One mode per slot, only up to completion and only if accepted (``sum_h m + e <=
    sum_{t' >= t} c``, ours: strengthened), and each count at most its bound times its
    mode's indicator."""
    import pyomo.environ as pyo

    bounds, iht, machines = sets.bounds, sets.iht, sets.machines
    m.one_mode = pyo.Constraint(
        sets.it,
        rule=_checked(
            lambda _m, i, t: (
                sum(m.m[i, h, t] for h in machines) + m.e[i, t] <= _later(m, sets, i, t)
            ),
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


def _add_ps_and_worker_rows(
    m: pyo.ConcreteModel, sets: _Sets, work: dict, deadline: Deadline
) -> None:
    """Per mode the PS rule ``gamma_i sum_h s >= sum_h w`` and the dominance row ``gamma_i
    sum_h s <= sum_h w + gamma_i - 1`` (ours: exactly ``ceil(W / gamma_i)`` PSs); the worker
    cap ``sum_h (wI + wE) <= F_i (sum_h m + e)`` (Eq. 4 with the mode row)."""
    import pyomo.environ as pyo

    data, machines = sets.data, sets.machines
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
                g * sum(s_[i, h, t] for h in machines) <= sum(w_[i, h, t] for h in machines) + g - 1
            )

        rows.append((f"ps_rule_{mode}", ps_low))
        rows.append((f"ps_exact_{mode}", ps_high))
    for name, rule in rows:
        setattr(m, name, pyo.Constraint(sets.it, rule=_checked(rule, deadline)))
    m.worker_cap = pyo.Constraint(
        sets.it,
        rule=_checked(
            lambda _m, i, t: (
                sum(work[i, h, t] for h in machines)
                <= data[i].worker_cap * (sum(m.m[i, h, t] for h in machines) + m.e[i, t])
            ),
            deadline,
        ),
    )


def _add_capacity_rows(
    m: pyo.ConcreteModel, sets: _Sets, work: dict, serve: dict, deadline: Deadline
) -> None:
    """Capacities ``sum_i alpha[i,r] (wI + wE) + beta[i,r] (sI + sE) <= C[h,r]`` (Eq. 5),
    less the reserved usage if any, for the resources some present job uses."""
    import pyomo.environ as pyo

    instance = sets.instance
    alpha, beta = instance.alpha, instance.beta
    cap = np.broadcast_to(instance.cap, (instance.slots + 1, *instance.cap.shape))
    if sets.reserved is not None:
        cap = np.maximum(cap - sets.reserved, 0.0)
    T, R = instance.slots, len(instance.resources)
    present = {t: sets.present(t) for t in range(1, T + 1)}
    cap_idx = [
        (h, r, t)
        for t in range(1, T + 1)
        for h in sets.machines
        for r in range(R)
        if any(alpha[i, r] or beta[i, r] for i in present[t])
    ]
    m.capacity = pyo.Constraint(
        cap_idx,
        rule=_checked(
            lambda _m, h, r, t: (
                sum(
                    float(alpha[i, r]) * work[i, h, t] + float(beta[i, r]) * serve[i, h, t]
                    for i in present[t]
                    if alpha[i, r] or beta[i, r]
                )
                <= float(cap[t, h, r])
            ),
            deadline,
        ),
    )


def _add_sample_rows(m: pyo.ConcreteModel, sets: _Sets, done: dict, deadline: Deadline) -> None:
    """Cumulative samples (Eq. 3) divided by ``V_i``: ``sum_{t' <= t} sum_h (wI / pi_i(b_int)
    + wE / pi_i(b_ext)) slot_s / V_i >= sum_{t' <= t} c[i,t']``."""
    import pyomo.environ as pyo

    arrival, comp, machines = sets.arrival, sets.comp, sets.machines
    m.samples = pyo.Constraint(
        sets.ic,
        rule=_checked(
            lambda _m, i, t: (
                sum(done[i, h, tt] for h in machines for tt in range(arrival[i], t + 1))
                >= sum(m.c[i, tt] for tt in comp[i] if tt <= t)
            ),
            deadline,
        ),
    )


def _add_symmetry_rows(
    m: pyo.ConcreteModel,
    sets: _Sets,
    work: dict,
    serve: dict,
    priced: bool,
    deadline: Deadline,
) -> None:
    """Symmetry (ours, module docstring): ``L[h,t] >= L[h+1,t]`` for consecutive machines of
    identical capacity in every slot where they are also equally priced for every job (and
    equally reserved, with ``reserved``)."""
    import pyomo.environ as pyo

    instance, arrival, costs, reserved = sets.instance, sets.arrival, sets.costs, sets.reserved
    cap = instance.cap
    present = {t: sets.present(t) for t in range(1, instance.slots + 1)}
    sym = []
    for h in identical_pairs(cap):
        for t in range(1, instance.slots + 1):
            users = present[t]
            if not users:
                continue
            if reserved is not None and not np.array_equal(reserved[t, h], reserved[t, h + 1]):
                continue
            if priced and not all(
                costs[i][0][h, t - arrival[i]] == costs[i][0][h + 1, t - arrival[i]]
                and costs[i][1][h, t - arrival[i]] == costs[i][1][h + 1, t - arrival[i]]
                for i in users
            ):
                continue
            sym.append((h, t))

    def load(h, t):  # machines h and h + 1 have the same capacity
        total = 0
        for i in present[t]:
            lw, ls = load_weights(cap[h], sets.data[i].alpha, sets.data[i].beta)
            total = total + lw * work[i, h, t] + ls * serve[i, h, t]
        return total

    m.symmetry = pyo.Constraint(
        sym, rule=_checked(lambda _m, h, t: load(h, t) >= load(h + 1, t), deadline)
    )


def _set_objective(
    m: pyo.ConcreteModel, sets: _Sets, work: dict, serve: dict, priced: bool
) -> None:
    """Maximise ``sum_{i,t} u_i(t - a_i) c[i,t]`` (the utility at completion, Eq. 6), less
    the priced usage ``sum p (alpha w + beta s)`` when priced (the pricing)."""
    import pyomo.environ as pyo

    instance, arrival, costs = sets.instance, sets.arrival, sets.costs
    objective = sum(instance.jobs[i].utility(t - arrival[i]) * m.c[i, t] for i, t in sets.ic)
    if priced:
        objective = objective - sum(
            float(costs[i][0][h, t - arrival[i]]) * work[i, h, t]
            + float(costs[i][1][h, t - arrival[i]]) * serve[i, h, t]
            for i, h, t in sets.iht
            if costs[i][0][h, t - arrival[i]] or costs[i][1][h, t - arrival[i]]
        )
    m.objective = pyo.Objective(expr=objective, sense=pyo.maximize)


def model_arrays(model: pyo.ConcreteModel, instance: DmlrsInstance, i: int):
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
