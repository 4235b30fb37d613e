"""``ub_lagrange`` (ours): a Lagrangian bound of family ``dmlrs`` over the per-machine capacity rows.

Paper: Yu et al., IEEE TNSE 2022 (reading notes of the paper): DMLRS (Eqs.
3-7) and the dual of R-DMLRS (Eqs. 10-11). Spec ``docs/families/dmlrs.md``, "Bounds".
The method is ours; it is the Lagrangian dual of DMLRS with respect to Eq. 5, searched
by projected subgradient steps from ``ub_capacity``'s duals.

What it relaxes. Dualise the capacity rows of Eq. 5, ``sum_i (alpha[i, r] w[i, h, t] +
beta[i, r] s[i, h, t]) <= C[h, r]`` for every machine ``h``, resource ``r`` and slot ``t``,
with multipliers ``p[h, r, t] >= 0``. What is left splits by job: each job chooses one
complete single-job schedule (integral counts, Eqs. 3, 4, 6, 7 with Fact 1's bandwidth, within
the full capacities) or none. Hence, for every ``p >= 0``,

    L(p) = sum_i lambda_i(p) + sum_{h, r, t} p[h, r, t] C[h, r],
    lambda_i(p) = max(0, max_pi u_i(pi) - sum p . usage_pi),

the spec's ``UB(p)`` (:func:`ddlsched.models.dmlrs_dual.bound_at_prices`), with each inner
maximum solved by the exact single-job pricer (:mod:`ddlsched.solvers.dmlrs_pricing`).

Validity (every iterate is a bound). Let ``S`` be a schedule the evaluator accepts and
``S_i`` job ``i``'s part of it (empty if rejected). ``S_i`` is a single-job schedule within
the full capacities, so ``u_i(S_i) - p . usage(S_i) <= lambda_i(p)``; and ``p >= 0`` with
Eq. 5 gives ``sum_i p . usage(S_i) <= p . C``. Summing: ``utility(S) <= sum_i lambda_i(p) +
p . C = L(p)``. A pricing MILP stopped at its limit contributes its proven dual bound and
a job not priced in time ``u_i(d_min_i - 1)``, both ``>= lambda_i(p)``, so the sum stays
``>= utility(S)``. The reported bound is ``min(ub_capacity, min_k L(p_k))``, a minimum of
valid bounds. By Lagrangian duality ``min_p L(p)`` is the LP relaxation of R-DMLRS's
column formulation (Eq. 8), the bound ``colgen`` converges to; this method gets there (or
near) without a master LP, by subgradient steps whose every iterate counts.

The search (``iterations`` steps after the start, deterministic):

* start ``p_0``: the duals of ``ub_capacity``'s summed capacity rows
  (:func:`ddlsched.models.dmlrs_capacity.capacity_prices`), the same on every machine;
* subgradient of ``L`` at ``p_k``: ``g[h, r, t] = C[h, r] - sum_i usage_i[h, r, t]`` of the
  priced columns (a job whose pricing found no column adds no use);
* machine symmetry: machines with the same capacities are interchangeable, so ``L`` is
  invariant under permuting them; being convex, it has a minimiser with equal prices on
  such machines (the average of a minimiser's permutations). ``g`` is projected onto that
  subspace (averaged over each class of identical machines), which keeps the prices
  equal within a class and makes the step independent of which of the identical machines
  the pricer chose;
* components with price 0 and slack (``g > 0``) are left out of ``g`` (the step would only
  push them below 0, where the projection ``max(0, .)`` puts them back);
* Polyak's step ``p_{k+1} = max(0, p_k - theta_k (L(p_k) - goal_k) g / ||g||^2)`` with
  ``goal_k = max(target, (1 - aim) best_k)``: ``target`` the best utility of the ``fifo``
  and ``drf`` schedules (re-evaluated: a lower bound on the optimum), ``best_k`` the best
  bound so far (``aim``, a parameter, keeps the steps short when those baselines earn
  little); ``theta_0 = step`` (parameter), halved after ``patience`` steps without a better
  bound (Held, Wolfe and Crowder, "Validation of subgradient optimization", Math. Program.
  6:62-88, 1974);
* stop after ``iterations`` steps, when the projected ``g`` vanishes (no direction left;
  ``search_stopped = "zero_subgradient"``), or at the deadline (every completed iterate
  still counts).

Cost: one exact pricing of every job per iterate (``PricingSession``: the per-job
pricers are reused). Choices (ours): the projection over identical machines, Polyak's
rule with halving and its goal. Measured (``benchmarks/dmlrs_lagrange_paper.py``,
``benchmarks/dmlrs_lagrange_validity.py``): on congested ``tiny`` instances the steps take
about a quarter off ``ub_capacity``'s gap to the optimum; on the paper's Fig. 6 (20
machines, seed 1) and Fig. 8 (100 jobs, seed 0) instances the bound is 0.2 % and 1.0 %
below ``ub_capacity``, nearly all of it ``L(p_0)``; on the former, column generation at 80
rounds puts the R-DMLRS LP optimum within 0.2 % of this bound: no Lagrangian of these rows
can do much better there.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from ddlsched.deadline import Deadline
from ddlsched.problems.dmlrs import DmlrsInstance, evaluate

__all__ = ["baseline_utility", "lagrange_bound", "machine_classes", "usage_of_columns"]


def machine_classes(instance: DmlrsInstance) -> list[np.ndarray]:
    """The machines grouped by equal capacity rows (each an index array, in machine order)."""
    groups: dict[tuple[float, ...], list[int]] = {}
    for h, row in enumerate(instance.cap):
        groups.setdefault(tuple(float(v) for v in row), []).append(h)
    return [np.asarray(members) for members in groups.values()]


def usage_of_columns(instance: DmlrsInstance, results: list[Any]) -> np.ndarray:
    """``sum_i usage_i[h, r, t - 1]`` of the priced columns (``PricingResult.column`` entries
    ``(slot, machine, workers, ps)``: ``alpha w + beta s``), shape ``(H, R, T)``."""
    usage = np.zeros((instance.num_machines, len(instance.resources), instance.slots))
    for i, result in enumerate(results):
        for slot, machine, workers, ps in result.column or ():
            usage[machine, :, slot - 1] += instance.alpha[i] * workers + instance.beta[i] * ps
    return usage


def _project(gradient: np.ndarray, classes: list[np.ndarray]) -> np.ndarray:
    """``gradient`` averaged over each class of identical machines (module docstring)."""
    out = np.empty_like(gradient)
    for members in classes:
        out[members] = gradient[members].mean(axis=0, keepdims=True)
    return out


def baseline_utility(instance: DmlrsInstance, deadline: Deadline) -> float:
    """The best utility of the ``fifo`` and ``drf`` schedules (re-evaluated), 0 if none ran."""
    from ddlsched.errors import TimeLimitReached
    from ddlsched.heuristics.dmlrs_baselines import run_drf, run_fifo

    best = 0.0
    for run in (run_fifo, run_drf):
        try:
            schedule = run(instance, deadline.sub(0.05))
        except TimeLimitReached:
            continue
        best = max(best, float(evaluate(instance, schedule).total_utility))
    return best


def lagrange_bound(
    instance: DmlrsInstance,
    iterations: int = 20,
    step: float = 0.1,
    patience: int = 3,
    aim: float = 0.02,
    deadline: Deadline | None = None,
) -> tuple[float, dict[str, Any]]:
    """``(bound, info)``: ``min(ub_capacity, min_k L(p_k))`` over the start and ``iterations``
    subgradient steps (module docstring). ``info``: ``ub_capacity``, ``start_bound``
    (``L(p_0)``), ``target``, the bound of every iterate (``history``), the iterate that
    gave the best (``best_iteration``, -1: ``ub_capacity`` itself), ``search_stopped``
    (``iterations``, ``zero_subgradient``, ``nothing_to_earn`` or ``time_limit``), the pricing statuses and seconds.

    Raises :class:`~ddlsched.errors.TimeLimitReached` only when the deadline passes before
    ``ub_capacity`` has its bound.
    """
    from ddlsched.models.dmlrs_capacity import capacity_bound, capacity_prices
    from ddlsched.models.dmlrs_dual import PricingSession

    deadline = deadline or Deadline.unlimited()
    started = time.perf_counter()
    capacity, _ = capacity_bound(instance, deadline=deadline)
    info: dict[str, Any] = {"ub_capacity": capacity, "history": [], "best_iteration": -1}
    if capacity <= 0.0 or not instance.jobs:  # nothing to earn: 0 is the optimum
        info.update(search_stopped="nothing_to_earn", seconds=time.perf_counter() - started)
        return max(0.0, capacity), info
    _, prices = capacity_prices(instance)
    info["target"] = target = baseline_utility(instance, deadline)
    classes = machine_classes(instance)
    cap = instance.cap[:, :, None]
    session = PricingSession(instance, "milp", "highs")
    best, theta, since_best = capacity, float(step), 0
    statuses: dict[str, int] = {}
    stopped = "iterations"
    for k in range(iterations + 1):
        if deadline.expired():
            stopped = "time_limit"
            break
        results = session.price_all(prices, deadline)
        value = math.fsum(r.dual_bound for r in results) + float(np.sum(prices * cap))
        for r in results:
            statuses[r.status] = statuses.get(r.status, 0) + 1
        info["history"].append(value)
        if k == 0:
            info["start_bound"] = value
        if value < best - 1e-9:
            best, info["best_iteration"], since_best = value, k, 0
        else:
            since_best += 1
            if since_best >= patience:
                theta, since_best = theta / 2.0, 0
        if any(r.status in ("time_limit", "trivial") for r in results) and deadline.expired():
            stopped = "time_limit"
            break
        gradient = _project(cap - usage_of_columns(instance, results), classes)
        gradient = np.where((prices <= 0.0) & (gradient > 0.0), 0.0, gradient)  # stays at 0
        norm = float(np.sum(gradient * gradient))
        if norm <= 1e-18:
            stopped = "zero_subgradient"
            break
        if k == iterations:
            break
        goal = max(target, (1.0 - aim) * best)  # module docstring: Polyak's target
        length = theta * max(value - goal, aim * 1e-3 * value) / norm
        prices = np.maximum(0.0, prices - length * gradient)
    info.update(
        search_stopped=stopped,
        iterations_done=max(0, len(info["history"]) - 1),
        pricing_status=statuses,
        final_step=theta,
        seconds=time.perf_counter() - started,
    )
    return max(0.0, min(best, capacity)), info
