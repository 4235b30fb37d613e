"""The baselines of the SJF-BCO paper: FF, LS and RAND (Section 7).

Paper: Yu, Ji, Rajan, Liu, MobiHoc 2022, Section 7 ("we compare with First
Fit, List Scheduling and Random"); spec ``docs/families/rar.md``. They plan
exactly like SJF-BCO (:mod:`ddlsched.heuristics.rar_planning`: SJF order,
estimates ``rho_hat``, simulated clock with waits, the server-count fixed
point, the limit ``U + rho_hat / u <= theta``) and differ only in the GPU
rule and the absence of the ``kappa`` loop (decision 7):

* ``ff``: the first ``G_j`` available GPUs in ``(server, gpu)`` order;
  bisection on ``theta`` as in Alg. 1 lines 5-7 and 22-30, one pass per
  ``theta``.
* ``ls``: the ``G_j`` available GPUs with least ``U`` cluster-wide (ties:
  lower id); same bisection.
* ``rand``: ``theta = T``, a single pass; each job gets a uniformly random
  ``G_j``-subset of the available GPUs, drawn with the generator of
  :func:`ddlsched.rng.make_rng` (same seed, same schedule, bit for bit).
  The paper's "random servers and GPUs" is read as a uniform subset of the
  available GPUs (a random server choice weighted by the GPUs it offers).

Choices beyond the spec's: the baselines take jobs in the same SJF order as
SJF-BCO (the paper does not give their order; this isolates the effect of
the placement rule). A RAND pass that cannot place a job under ``theta = T``
returns no schedule. ``u`` scales the estimate as in SJF-BCO.

Complexity: FF and LS make ``ceil(log2 T)`` passes of
``O(J N log N (1 + W))``; RAND makes one.
"""

from __future__ import annotations

import logging

import numpy as np

from ddlsched.heuristics.rar_planning import (
    FirstFit,
    GpuRule,
    LeastBusy,
    PlanningData,
    RandomSubset,
    RarPlan,
    bisect_theta,
    plan_from_pass,
    run_pass,
)
from ddlsched.heuristics.sjf_bco import check_u
from ddlsched.problems.rar import RarInstance
from ddlsched.rng import make_rng

__all__ = ["ff", "ls", "rand"]

logger = logging.getLogger(__name__)


def _bisected(
    instance: RarInstance,
    name: str,
    rule: GpuRule,
    u: float,
    p_est: int,
    bisection: str,
    data: PlanningData | None,
) -> RarPlan:
    u = check_u(u)
    data = PlanningData.build(instance, p_est) if data is None else data
    horizon = float(instance.horizon)

    def best_pass(theta: int):
        result = run_pass(data, theta, lambda _j: rule, u)
        return result if result.feasible and result.makespan < horizon else None

    outcome = bisect_theta(best_pass, instance.horizon, bisection)
    logger.info(
        "%s: theta=%s estimated makespan=%s after %d probes",
        name,
        outcome.theta,
        None if outcome.best is None else outcome.best.makespan,
        len(outcome.probes),
    )
    params = {"u": u, "p_est": p_est, "bisection": bisection}
    return plan_from_pass(
        data, name, outcome.best, theta=outcome.theta, probes=outcome.probes, params=params
    )


def ff(
    instance: RarInstance,
    *,
    u: float = 1.0,
    p_est: int = 1,
    bisection: str = "paper",
    data: PlanningData | None = None,
) -> RarPlan:
    """First Fit: first ``G_j`` available GPUs in server order, bisection on ``theta``."""
    return _bisected(instance, "ff", FirstFit(), u, p_est, bisection, data)


def ls(
    instance: RarInstance,
    *,
    u: float = 1.0,
    p_est: int = 1,
    bisection: str = "paper",
    data: PlanningData | None = None,
) -> RarPlan:
    """List Scheduling: least-``U`` available GPUs cluster-wide, bisection on ``theta``."""
    return _bisected(instance, "ls", LeastBusy(), u, p_est, bisection, data)


def rand(
    instance: RarInstance,
    seed: int | np.random.Generator | None = 0,
    *,
    p_est: int = 1,
    data: PlanningData | None = None,
) -> RarPlan:
    """Random: ``theta = T``, one pass, a uniformly random subset of the available GPUs."""
    data = PlanningData.build(instance, p_est) if data is None else data
    rule = RandomSubset(make_rng(seed))
    theta = instance.horizon
    result = run_pass(data, theta, lambda _j: rule, 1.0)
    logger.info("rand: feasible=%s estimated makespan=%s", result.feasible, result.makespan)
    return plan_from_pass(
        data,
        "rand",
        result if result.feasible else None,
        theta=theta,
        params={"seed": seed if not isinstance(seed, np.random.Generator) else None},
    )
