"""Registry adapters for the ``rar`` heuristics: ``sjf_bco``, ``ff``, ``ls``, ``rand``.

Each adapter runs the heuristic, executes its schedule with the family
evaluator (:func:`ddlsched.problems.rar.evaluate`) and reports the
*evaluated* makespan as the objective; the heuristic's own estimate goes to
``info['estimated_makespan']``. ``info`` also records the decisions:
``theta`` (the recorded bisection limit; ``T`` for ``rand``), ``kappa``
(``sjf_bco``), ``max_accumulated`` (``W_max`` of Lemma 2, ``<= theta``),
``theorem5_bound`` (the per-instance factor of Theorem 5, with its parts in
``theorem5``; the theorem is proven for SJF-BCO, ``theorem5_applies`` says
whether it covers the method), ``average_completion``, ``utilisation``
and ``probes`` (every bisection probe ``(theta, m_theta)``).

A heuristic can fail on a tight horizon: no ``theta`` gives a complete
pass with estimated makespan below ``T`` (``failure = 'no_schedule'``), or
the evaluator finds that the executed schedule overruns ``T``
(``failure = 'horizon_overrun'``; the schedule is attached and
``info['makespan_beyond_horizon']`` is its makespan evaluated without the
horizon). Both are returned as status ``error`` with ``objective = None``
and the reason in ``info['error']``, never as a truncated makespan.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ddlsched.errors import InfeasibleScheduleError
from ddlsched.heuristics.rar_baselines import ff, ls, rand
from ddlsched.heuristics.rar_planning import RarPlan
from ddlsched.heuristics.sjf_bco import sjf_bco, theorem5_bound
from ddlsched.problems.rar import RarInstance, evaluate
from ddlsched.registry import RunOptions, register_method
from ddlsched.solvers.result import SolveResult, Status

__all__ = ["plan_result"]


def plan_result(
    instance: RarInstance,
    plan: RarPlan,
    options: RunOptions,
    *,
    u: float = 1.0,
    p_est: int = 1,
) -> SolveResult:
    """Evaluate ``plan`` and wrap it in a :class:`SolveResult` (objective = evaluated makespan)."""
    bound5 = theorem5_bound(instance, u=u, p_est=p_est)
    info: dict[str, Any] = {
        "theta": plan.theta,
        "estimated_makespan": plan.estimated_makespan,
        "max_accumulated": plan.max_accumulated,
        "theorem5_bound": bound5.bound,
        "theorem5": bound5.to_dict(),
        "theorem5_applies": plan.method == "sjf_bco",
        "probes": [list(p) for p in plan.probes],
        "params": dict(plan.params),
    }
    if plan.method == "sjf_bco":
        info["kappa"] = plan.kappa

    def failed(kind: str, message: str, schedule=None) -> SolveResult:
        info.update(error=message, failure=kind)
        return SolveResult(
            family="rar",
            method=plan.method,
            status=Status.ERROR,
            sense="min",
            seed=options.seed,
            schedule=schedule,
            info=info,
        )

    if plan.schedule is None:
        return failed(
            "no_schedule",
            f"{plan.method} found no complete schedule with estimated makespan below the "
            f"horizon T = {instance.horizon}",
        )
    try:
        evaluation = evaluate(instance, plan.schedule)
    except InfeasibleScheduleError as exc:
        relaxed = dataclasses.replace(instance, horizon=max(instance.horizon, 1) * 1000)
        try:
            info["makespan_beyond_horizon"] = evaluate(relaxed, plan.schedule).makespan
        except InfeasibleScheduleError:
            info["makespan_beyond_horizon"] = None
        return failed("horizon_overrun", f"{plan.method}: {exc}", plan.schedule)
    info["average_completion"] = evaluation.average_completion
    info["utilisation"] = evaluation.utilisation
    return SolveResult(
        family="rar",
        method=plan.method,
        status=Status.FEASIBLE,
        sense="min",
        objective=evaluation.makespan,
        bound=None,
        seed=options.seed,
        schedule=plan.schedule,
        evaluation=evaluation,
        info=info,
    )


SJF_BCO_PARAMS = {"kappa": None, "lambda_": 1.0, "u": 1.0, "p_est": 1, "bisection": "paper"}
BASELINE_PARAMS = {"u": 1.0, "p_est": 1, "bisection": "paper"}


def _params(defaults: dict[str, Any], options: RunOptions) -> dict[str, Any]:
    return {**defaults, **options.params}


@register_method(
    "rar",
    "sjf_bco",
    "heuristic",
    "SJF-BCO (Alg. 1-3): bisection on theta, FA-FFP for G_j <= kappa, LBSGF otherwise",
    params=SJF_BCO_PARAMS,
)
def run_sjf_bco(instance: RarInstance, options: RunOptions) -> SolveResult:
    params = _params(SJF_BCO_PARAMS, options)
    plan = sjf_bco(instance, **params)
    return plan_result(instance, plan, options, u=params["u"], p_est=params["p_est"])


@register_method(
    "rar",
    "ff",
    "heuristic",
    "First Fit baseline: first G_j available GPUs in server order, bisection on theta",
    params=BASELINE_PARAMS,
)
def run_ff(instance: RarInstance, options: RunOptions) -> SolveResult:
    params = _params(BASELINE_PARAMS, options)
    return plan_result(
        instance, ff(instance, **params), options, u=params["u"], p_est=params["p_est"]
    )


@register_method(
    "rar",
    "ls",
    "heuristic",
    "List Scheduling baseline: least-loaded available GPUs cluster-wide, bisection on theta",
    params=BASELINE_PARAMS,
)
def run_ls(instance: RarInstance, options: RunOptions) -> SolveResult:
    params = _params(BASELINE_PARAMS, options)
    return plan_result(
        instance, ls(instance, **params), options, u=params["u"], p_est=params["p_est"]
    )


@register_method(
    "rar",
    "rand",
    "heuristic",
    "Random baseline: theta = T, a uniformly random subset of the available GPUs (seeded)",
    params={},
)
def run_rand(instance: RarInstance, options: RunOptions) -> SolveResult:
    return plan_result(instance, rand(instance, options.seed), options)
