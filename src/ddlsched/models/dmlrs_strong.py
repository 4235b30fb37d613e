"""Family ``dmlrs``: strengthenings of ``exact``'s compact MILP (ours), each switchable.

Paper: Yu et al., IEEE TNSE 2022 (reading notes of the paper): DMLRS (Eqs.
3-7); spec ``docs/families/dmlrs.md``, ``exact``.
None of this is the paper's or the spec's: every row and fixing here is
ours, added to the model of :mod:`ddlsched.models.dmlrs_milp` (whose rows
and symbols ``c, m, e, wI, sI, wE, sE`` this docstring uses) by
:func:`strengthen`, for ``exact`` only (the pricing of column generation
keeps the plain model). :class:`Strengthening` switches each one
(``exact``'s parameters of the same names), so that the old
model stays one parameter away and the frontier suite
(``benchmarks/suites/frontier-dmlrs.toml``) runs both side by side.

Every switch is on by default except ``solver_symmetry``.

Validity (each cuts off no optimum; together neither). Start from any
optimum of the plain model and *normalise* it: (a) a mode (``m[i,h,t]`` or
``e[i,t]``) of a slot in which the job has no worker is set to 0 (its PSs
are 0 already: ``gamma sum s <= sum w + gamma - 1``); (b) the completion
``c[i,t] = 1`` of a job moves to the last slot ``t* <= t`` with workers
(the samples up to ``t*`` equal those up to ``t``; ``u_i`` is
non-increasing, so the value does not drop and the normalised schedule is
an optimum too; modes after ``t*`` are empty by (a)); (c) the machines of
each slot are sorted by load within each run of identical machines (the
plain model's symmetry rows, :mod:`ddlsched.models.dmlrs_milp`), last. For
``no_surplus``, before (c): (d) in every slot the job's workers are cut to
``FI = min {W: W rho_I >= 1 + 1e-9}`` in an internal mode and ``FE`` (the
same with ``rho_E``) in an external one (workers taken away, then the
surplus PSs; the mode stays what it was): every capacity use falls
(``alpha, beta >= 0``), Eq. 4 and the PS rows hold, and a cut slot alone
still gives ``>= 1`` of the work;
then the completion moves to the first slot ``t°`` in which the job's
share ``sum_{t' <= t} (rho_I wI + rho_E wE)`` reaches 1 (no later than
before: every sample row still holds; ``u_i`` non-increasing) and every
slot after ``t°`` is emptied; if slot ``t°`` alone gives ``>= 1`` (its
mode with ``W rho >= 1 + 1e-9``), the slots before ``t°`` are emptied too
(the sample rows before ``t°`` have right side 0, from ``t°`` on the slot
alone covers 1). The value does not drop, so the result is an optimum. The
normalised optimum satisfies every row below:

* ``earliest`` (dominance): job ``i`` processes at most ``r_i = max(rho_I
  max_h UwI[h], rho_E min(F_i, sum_h UwE[h]))`` of its workload per slot
  (``rho`` the per-worker share of ``V_i`` per slot at ``b_int``/``b_ext``,
  ``UwI``, ``UwE`` the most workers that fit on one machine with their PSs
  or alone, :func:`ddlsched.solvers.dmlrs_machine.machine_bounds`; one mode
  per slot), so it cannot complete before ``a_i + k_i - 1`` with ``k_i =
  ceil((1 - 1e-9) / r_i)``: those ``c[i,t]`` are fixed to 0 (and every
  ``c`` of a job with ``a_i + k_i - 1 > T``). The ``1e-9`` only ever fixes
  fewer. The plain model's ``d_min_i`` assumes ``F_i`` workers on one
  machine at ``b_int`` whatever the capacities; on ``tiny`` machines a job
  often fits one or two workers internally, and ``k_i`` is larger.
* ``completion_work``: ``c[i,t] <= sum_h m[i,h,t] + e[i,t]``: a job runs
  in its completion slot (normalisation (b)).
* ``patterns`` (an extended formulation of each mode): binaries
  ``y[i,h,t,W]`` (internal on ``h`` with ``W = 1..UwI[h]`` workers) with
  ``m = sum_W y``, ``wI = sum_W W y``, ``sI = sum_W ceil(W / gamma_i) y``,
  and ``z[i,t,W]`` (external with ``W = 1..min(F_i, sum_h UwE[h])`` workers
  in all) with ``e = sum_W z``, ``sum_h wE = sum_W W z``, ``sum_h sE =
  sum_W ceil(W / gamma_i) z``. The integer points are the plain model's
  with a used mode having at least one worker (normalisation (a)) and
  ``ceil(W / gamma_i)`` PSs (its dominance rows); the LP relaxation is
  tighter (the PSs of a fractional mode are no longer ``W / gamma_i``, and
  internal resource use is a convex combination of real allocations).
  Only for jobs with ``F_i <=`` :data:`MAX_PATTERN_WORKERS` (the number of
  binaries grows with ``F_i``); the others keep the plain rows.
* ``capacity_cuts`` (aggregated capacity rows; they add the pattern
  binaries if ``patterns`` is off): Eq. 5 written over the pattern
  binaries, per machine and slot (``sum_{i,W} (alpha_ir W + beta_ir
  ceil(W / gamma_i)) y[i,h,t,W] + alpha_ir wE + beta_ir sE <= C[h,r]``), and
  summed over the machines with the external totals (``sum_i sum_{h,W}
  use_ir(W) y + sum_W use_ir(W) z <= sum_h C[h,r]``). Both hold at every
  point of the pattern formulation (the first is Eq. 5 with ``wI, sI``
  substituted; the second sums Eq. 5 over machines with ``sum_h wE, sum_h
  sE`` substituted): nothing is cut off, but the rows are knapsacks over
  binaries, from which the solver derives cover and clique cuts that it
  does not find in the mixed rows of Eq. 5.
* ``no_surplus`` (dominance, normalisation (d); it adds the pattern
  binaries): the patterns stop at ``FI`` and ``FE`` workers (``y[i,h,t,W]``
  for ``W <= min(UwI[h], FI)``, ``z[i,t,W]`` for ``W <= FE``); with
  ``fin(i,t)`` the sum of the patterns that complete the job alone
  (``y[i,h,t,FI]``, ``z[i,t,FE]`` where they exist), ``fin(i,t) <=
  c[i,t]`` (such a slot is ``t°``) and ``sum_h m[i,h,t'] + e[i,t'] +
  sum_{t > t'} fin(i,t) <= 1`` (nothing runs before a slot that completes
  the job alone). Jobs with ``F_i >`` :data:`MAX_PATTERN_WORKERS` get the
  caps as bounds of ``wI``, ``sI`` and ``wE`` only. On ``tiny`` instances
  one internal worker completes most jobs in one slot: their internal modes
  are single-worker patterns, in the completion slot only.
* ``packing`` (Eq. 5 through dual feasible functions; it adds the pattern
  binaries): per machine ``h``, slot, resource ``r`` with ``C[h,r] > 0`` and
  ``k = 1..`` :data:`PACKING_FUNCTIONS`, ``sum f_k(size) <= 1`` over the
  items on ``h``: each internal pattern one item of size ``use_ir(W) /
  C[h,r]`` (or, if larger, ``f_k`` of its workers and PSs as separate items
  summed: splitting an item keeps a packing a packing), each external
  worker and PS an item (``alpha_ir / C[h,r]``, ``beta_ir / C[h,r]``, times
  ``wE``, ``sE``). ``f_k`` is Fekete and Schepers' dual feasible function
  (:func:`ddlsched.solvers.dmlrs_machine.dual_feasible`): item sizes in
  ``[0, 1]`` summing to at most 1 still do after ``f_k``, and Eq. 5 says the
  items on a machine sum to at most 1 per resource, so the rows hold at
  every point of the pattern formulation. Kept where some weight exceeds
  its size (on ``tiny`` machines, CPU 4: workers and PSs of 3 cores weigh
  1, two of them no longer fit fractionally).
* ``solver_symmetry`` (a row group *removed*; the one switch off by
  default): the plain model's load-order rows of identical machines
  (:mod:`ddlsched.models.dmlrs_milp`) are deactivated and the symmetry is
  left to the solver's own detection (HiGHS: ``mip_detect_symmetry``, on by
  default, orbital fixing on the column permutations it finds; swapping two
  identical machines in one slot is one). Removing rows cuts off nothing;
  the solver's symmetry handling keeps an optimum of every orbit. None of
  the rows above depends on the machine order. Measured on the frontier
  suite's 64-job seed 1 (two machines, six slots), HiGHS work to the proof:
  without the MIP start of ``improve_start`` 11 nodes and 52k LP iterations
  against 1,021 and 94k with the rows; with it 219 and 125k against 39 and
  101k. No clear gain, so off.
* ``start`` and ``improve_start`` (a MIP start, no row):
  :mod:`ddlsched.models.dmlrs_start`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

import numpy as np

from ddlsched.models.dmlrs_milp import job_data
from ddlsched.problems.dmlrs import DmlrsInstance
from ddlsched.solvers.dmlrs_machine import dual_feasible, machine_bounds

if TYPE_CHECKING:
    import pyomo.environ as pyo

__all__ = [
    "MAX_PATTERN_WORKERS",
    "PACKING_FUNCTIONS",
    "JobFacts",
    "Strengthening",
    "earliest_completion",
    "finishes_alone",
    "finishing_workers",
    "job_facts",
    "strengthen",
]

#: Pattern binaries only for jobs with at most this many workers ``F_i`` (ours: ``tiny``
#: has ``F <= 4``; ``paper``'s ``F`` up to 200 would multiply the binaries by up to 200).
MAX_PATTERN_WORKERS = 16
_RTOL = 1e-9


@dataclass(frozen=True)
class Strengthening:
    """Which strengthenings of the module docstring ``exact`` applies (all but
    ``solver_symmetry`` by default)."""

    earliest: bool = True
    completion_work: bool = True
    patterns: bool = True
    capacity_cuts: bool = True
    start: bool = True
    no_surplus: bool = True
    packing: bool = True
    improve_start: bool = True
    solver_symmetry: bool = False  # off by default: measured, no clear gain (docstring)

    @classmethod
    def none(cls) -> Strengthening:
        """The plain model of :mod:`ddlsched.models.dmlrs_milp`."""
        return cls(**{f.name: False for f in fields(cls)})

    @property
    def changes_model(self) -> bool:
        return (
            self.earliest
            or self.completion_work
            or self.patterns
            or self.capacity_cuts
            or self.no_surplus
            or self.packing
            or self.solver_symmetry
        )


@dataclass(frozen=True)
class JobFacts:
    """What the strengthenings need of one job with variables (:func:`job_facts`)."""

    arrival: int
    gamma: int
    worker_cap: int
    rate_int: float  # share of V_i per worker and slot at b_int
    rate_ext: float
    uwi: np.ndarray  # per machine, machine_bounds
    uwe: np.ndarray
    alpha: np.ndarray
    beta: np.ndarray
    int_top: np.ndarray  # per machine, the most internal workers of a pattern
    ext_top: int  # the most external workers of a pattern


def finishing_workers(rate: float) -> int | None:
    """``min {W >= 1: W rate >= 1 + 1e-9}``: the fewest workers of a mode of per-worker
    share ``rate`` whose one slot alone completes the job (``no_surplus``); ``None`` if
    ``rate <= 0``. The margin ``1e-9`` only ever gives a larger count."""
    if not rate > 0:
        return None
    workers = max(1, math.ceil((1.0 + _RTOL) / rate))
    while workers > 1 and (workers - 1) * rate >= 1.0 + _RTOL:
        workers -= 1
    while workers * rate < 1.0 + _RTOL:
        workers += 1
    return workers


def job_facts(
    instance: DmlrsInstance, live: list[int], no_surplus: bool = False
) -> dict[int, JobFacts]:
    """:class:`JobFacts` of the jobs ``live``; ``no_surplus`` caps the pattern counts."""
    out = {}
    for i in live:
        data = job_data(instance, i)
        uwi, _, uwe, _ = machine_bounds(
            instance.cap, data.alpha, data.beta, data.worker_cap, data.gamma
        )
        int_top = uwi.copy()
        ext_top = int(min(data.worker_cap, int(uwe.sum())))
        if no_surplus:
            enough_int = finishing_workers(data.rate_int)
            enough_ext = finishing_workers(data.rate_ext)
            if enough_int is not None:
                int_top = np.minimum(int_top, enough_int)
            if enough_ext is not None:
                ext_top = min(ext_top, enough_ext)
        out[i] = JobFacts(
            arrival=instance.jobs[i].arrival_slot,
            gamma=data.gamma,
            worker_cap=data.worker_cap,
            rate_int=data.rate_int,
            rate_ext=data.rate_ext,
            uwi=uwi,
            uwe=uwe,
            alpha=data.alpha,
            beta=data.beta,
            int_top=int_top,
            ext_top=ext_top,
        )
    return out


def _external_most(job: JobFacts) -> int:
    return int(min(job.worker_cap, int(job.uwe.sum())))


def finishes_alone(job: JobFacts, workers: int, internal: bool) -> bool:
    """One slot of this mode with ``workers`` workers alone completes the job (margin 1e-9)."""
    return workers * (job.rate_int if internal else job.rate_ext) >= 1.0 + _RTOL


def earliest_completion(instance: DmlrsInstance, i: int) -> int | None:
    """The earliest slot job ``i`` can complete in given the capacities (``earliest``),
    ``None`` if it cannot complete by ``T`` (or has no variable in the model)."""
    if job_data(instance, i) is None:
        return None
    job = job_facts(instance, [i])[i]
    per_slot = max(job.rate_int * int(job.uwi.max()), job.rate_ext * _external_most(job))
    if per_slot <= 0:
        return None
    slots = max(1, math.ceil((1.0 - _RTOL) / per_slot))
    done = job.arrival + slots - 1
    return done if done <= instance.slots else None


# --------------------------------------------------------------------------- rows


def strengthen(model: pyo.ConcreteModel, instance: DmlrsInstance, which: Strengthening) -> None:
    """Add the rows and fixings ``which`` selects to ``exact``'s model (module docstring)."""
    import pyomo.environ as pyo

    live = list(model.dmlrs_jobs)
    jobs = job_facts(instance, live, which.no_surplus)
    model.dmlrs_no_surplus = which.no_surplus  # read by start_values
    if which.earliest:
        for i in live:
            first = earliest_completion(instance, i)
            for (j, t), var in model.c.items():
                if j == i and (first is None or t < first):
                    var.setub(0)
    if which.completion_work:
        machines = range(instance.num_machines)
        model.completion_work = pyo.Constraint(
            list(model.c.keys()),
            rule=lambda _m, i, t: (
                model.c[i, t] <= sum(model.m[i, h, t] for h in machines) + model.e[i, t]
            ),
        )
    if which.patterns or which.capacity_cuts or which.no_surplus or which.packing:
        _add_patterns(model, instance, jobs)
    if which.capacity_cuts:
        _add_capacity_cuts(model, instance, jobs)
    if which.no_surplus:
        _add_no_surplus(model, instance, jobs)
    if which.packing:
        _add_packing_cuts(model, instance, jobs)
    if which.solver_symmetry and hasattr(model, "symmetry"):
        model.symmetry.deactivate()


def _add_patterns(model: pyo.ConcreteModel, instance: DmlrsInstance, jobs: dict[int, JobFacts]):
    """The pattern binaries ``y`` and ``z`` and their linking rows (module docstring)."""
    import pyomo.environ as pyo

    machines = range(instance.num_machines)
    small = [i for i, job in jobs.items() if job.worker_cap <= MAX_PATTERN_WORKERS]
    slots = {i: range(jobs[i].arrival, instance.slots + 1) for i in small}
    it = [(i, t) for i in small for t in slots[i]]
    iht = [(i, h, t) for i, t in it for h in machines]
    y_idx = [(i, h, t, w) for i, h, t in iht for w in range(1, int(jobs[i].int_top[h]) + 1)]
    z_idx = [(i, t, w) for i, t in it for w in range(1, jobs[i].ext_top + 1)]
    model.pat_int = pyo.Var(y_idx, domain=pyo.Binary)
    model.pat_ext = pyo.Var(z_idx, domain=pyo.Binary)
    y_of = {key: [] for key in iht}
    for i, h, t, w in y_idx:
        y_of[i, h, t].append(w)
    z_of = {key: [] for key in it}
    for i, t, w in z_idx:
        z_of[i, t].append(w)

    def ps(i: int, w: int) -> int:
        return -(-w // jobs[i].gamma)

    def internal(kind: str):
        def rule(_m, i, h, t):
            y = [(w, model.pat_int[i, h, t, w]) for w in y_of[i, h, t]]
            if kind == "mode":
                return model.m[i, h, t] == sum(v for _, v in y)
            if kind == "workers":
                return model.wI[i, h, t] == sum(w * v for w, v in y)
            return model.sI[i, h, t] == sum(ps(i, w) * v for w, v in y)

        return rule

    def external(kind: str):
        def rule(_m, i, t):
            z = [(w, model.pat_ext[i, t, w]) for w in z_of[i, t]]
            if kind == "mode":
                return model.e[i, t] == sum(v for _, v in z)
            if kind == "workers":
                return sum(model.wE[i, h, t] for h in machines) == sum(w * v for w, v in z)
            return sum(model.sE[i, h, t] for h in machines) == sum(ps(i, w) * v for w, v in z)

        return rule

    for kind in ("mode", "workers", "servers"):
        setattr(model, f"pat_int_{kind}", pyo.Constraint(iht, rule=internal(kind)))
        setattr(model, f"pat_ext_{kind}", pyo.Constraint(it, rule=external(kind)))


def _add_no_surplus(model: pyo.ConcreteModel, instance: DmlrsInstance, jobs: dict[int, JobFacts]):
    """``no_surplus`` (module docstring): the worker counts of the jobs without pattern
    binaries capped; for the others, a pattern that completes the job alone is used at most
    in its completion slot (``fin <= c``), and no mode runs before it
    (``modes(t') + sum_{t > t'} fin(t) <= 1``)."""
    import pyomo.environ as pyo

    machines = range(instance.num_machines)
    y, z = model.pat_int, model.pat_ext
    finishing: dict[tuple[int, int], list] = {}
    for i, job in jobs.items():
        slots = range(job.arrival, instance.slots + 1)
        if job.worker_cap > MAX_PATTERN_WORKERS:  # plain counts: the caps as bounds
            for h in machines:
                for t in slots:
                    top = int(job.int_top[h])
                    model.wI[i, h, t].setub(min(model.wI[i, h, t].ub, top))
                    model.sI[i, h, t].setub(min(model.sI[i, h, t].ub, -(-top // job.gamma)))
                    model.wE[i, h, t].setub(min(model.wE[i, h, t].ub, job.ext_top))
            continue
        for t in slots:
            alone = [
                y[i, h, t, int(job.int_top[h])]
                for h in machines
                if job.int_top[h] >= 1 and finishes_alone(job, int(job.int_top[h]), internal=True)
            ]
            if job.ext_top >= 1 and finishes_alone(job, job.ext_top, internal=False):
                alone.append(z[i, t, job.ext_top])
            if alone:
                finishing[i, t] = alone
    for (i, t), alone in finishing.items():
        if (i, t) not in model.c:  # no completion in t: no pattern that completes the job
            for var in alone:
                var.setub(0)
    model.surplus_done = pyo.Constraint(
        [key for key in finishing if key in model.c],
        rule=lambda _m, i, t: sum(finishing[i, t]) <= model.c[i, t],
    )

    def later(i, t):
        return [v for tt in range(t + 1, instance.slots + 1) for v in finishing.get((i, tt), [])]

    model.surplus_before = pyo.Constraint(
        [(i, t) for i, t in model.e if i in jobs and later(i, t)],
        rule=lambda _m, i, t: (
            sum(model.m[i, h, t] for h in machines) + model.e[i, t] + sum(later(i, t)) <= 1
        ),
    )


def _pattern_use(job: JobFacts, r: int, w: int) -> float:
    return float(job.alpha[r]) * w + float(job.beta[r]) * -(-w // job.gamma)


def _add_capacity_cuts(
    model: pyo.ConcreteModel, instance: DmlrsInstance, jobs: dict[int, JobFacts]
):
    """Eq. 5 over the pattern binaries, per machine, and summed over the machines with the
    external totals ``z`` (module docstring)."""
    import pyomo.environ as pyo

    T, R, cap = instance.slots, len(instance.resources), instance.cap
    machines = range(instance.num_machines)
    present = {t: [i for i in jobs if jobs[i].arrival <= t] for t in range(1, T + 1)}
    used = {
        t: [r for r in range(R) if any(jobs[i].alpha[r] or jobs[i].beta[r] for i in present[t])]
        for t in present
    }
    y, z = model.pat_int, model.pat_ext

    def machine_use(i, h, t, r):
        job = jobs[i]
        if job.worker_cap <= MAX_PATTERN_WORKERS:
            internal = sum(
                _pattern_use(job, r, w) * y[i, h, t, w] for w in range(1, int(job.int_top[h]) + 1)
            )
        else:
            internal = (
                float(job.alpha[r]) * model.wI[i, h, t] + float(job.beta[r]) * model.sI[i, h, t]
            )
        return (
            internal
            + float(job.alpha[r]) * model.wE[i, h, t]
            + float(job.beta[r]) * model.sE[i, h, t]
        )

    per_machine = [(h, r, t) for t in present for h in machines for r in used[t]]
    model.cut_machine = pyo.Constraint(
        per_machine,
        rule=lambda _m, h, r, t: _at_most(
            sum(machine_use(i, h, t, r) for i in present[t]), float(cap[h, r])
        ),
    )

    def slot_use(i, t, r):
        job = jobs[i]
        if job.worker_cap > MAX_PATTERN_WORKERS:
            return sum(machine_use(i, h, t, r) for h in machines)
        internal = sum(
            _pattern_use(job, r, w) * y[i, h, t, w]
            for h in machines
            for w in range(1, int(job.int_top[h]) + 1)
        )
        external = sum(_pattern_use(job, r, w) * z[i, t, w] for w in range(1, job.ext_top + 1))
        return internal + external

    model.cut_slot = pyo.Constraint(
        [(r, t) for t in present for r in used[t]],
        rule=lambda _m, r, t: _at_most(
            sum(slot_use(i, t, r) for i in present[t]), float(cap[:, r].sum())
        ),
    )


def _at_most(use: Any, capacity: float) -> Any:
    """The row ``use <= capacity``, or none where ``use`` holds no variable (no job has a
    pattern on that machine or slot: the sum is the number 0, which Pyomo refuses as a
    trivial row)."""
    import pyomo.environ as pyo

    if isinstance(use, (int, float)):
        return pyo.Constraint.Skip if use <= capacity else pyo.Constraint.Infeasible
    return use <= capacity


#: The dual feasible functions ``f_1..f_k`` of the ``packing`` rows.
PACKING_FUNCTIONS = 3


def _add_packing_cuts(model: pyo.ConcreteModel, instance: DmlrsInstance, jobs: dict[int, JobFacts]):
    """``packing`` (module docstring): per machine, slot, resource and ``k``, ``sum f_k(size)
    <= 1`` over the items on the machine, kept where some item's weight exceeds its size."""
    import pyomo.environ as pyo

    T, R, cap = instance.slots, len(instance.resources), instance.cap
    present = {t: [i for i in jobs if jobs[i].arrival <= t] for t in range(1, T + 1)}
    rows: dict[tuple[int, int, int, int], list[tuple[float, Any]]] = {}
    for h in range(instance.num_machines):
        for r in range(R):
            if not cap[h, r] > 0:
                continue
            for k in range(1, PACKING_FUNCTIONS + 1):

                def f(amount: float, r=r, h=h, k=k) -> float:
                    return float(dual_feasible(np.array([amount / cap[h, r]]), k)[0])

                for t, users in present.items():
                    terms, tighter = _packing_terms(model, jobs, users, h, t, r, f, cap[h, r])
                    if tighter:
                        rows[h, t, r, k] = terms
    model.cut_packing = pyo.Constraint(
        list(rows), rule=lambda _m, *key: sum(a * v for a, v in rows[key]) <= 1.0
    )


def _packing_terms(model, jobs: dict[int, JobFacts], users: list[int], h, t, r, f, capacity):
    """The ``(weight, var)`` terms of one packing row and whether a weight exceeds a size.

    An internal pattern is one item, or its workers and PSs as separate items (the larger
    weight of the two views); an external worker or PS is one item; items that cannot fit
    (size above 1) have bound 0 and are left out."""
    terms, tighter = [], False

    def add(weight: float, size: float, var) -> None:
        nonlocal tighter
        if size <= 0 or size > 1.0 + 1e-9:
            return
        terms.append((weight, var))
        tighter = tighter or weight > size + 1e-12

    for i in users:
        job = jobs[i]
        a, b = float(job.alpha[r]), float(job.beta[r])
        if job.worker_cap <= MAX_PATTERN_WORKERS:
            for w in range(1, int(job.int_top[h]) + 1):
                ps = -(-w // job.gamma)
                whole = _pattern_use(job, r, w)
                weight = max(f(whole), f(a) * w + f(b) * ps)
                add(weight, whole / capacity, model.pat_int[i, h, t, w])
        else:
            add(f(a), a / capacity, model.wI[i, h, t])
            add(f(b), b / capacity, model.sI[i, h, t])
        add(f(a), a / capacity, model.wE[i, h, t])
        add(f(b), b / capacity, model.sE[i, h, t])
    return terms, tighter
