"""Theorem 1 and Lemmas 2-3 of A-SRPT, evaluated on one instance.

A-SRPT paper, Section IV-C-2: Lemma 1 (``OPT_A1 <= rho OPT_A``), Lemma 2
(``Gamma_A <= X + rho OPT_A``), Lemma 3 (``OPT_A~1 <= OPT_A1 + I (g_max
alpha^max / G) epsilon``), Theorem 1 (the competitive ratio) and Appendices
A-C; Eq. (9) (``epsilon``, ``epsilon_bar``); spec ``docs/families/asrpt.md``
(the spec wins).

Quantities (:func:`theory`), with ``alpha_lb_i`` of
:mod:`ddlsched.models.asrpt` standing in for the true ``alpha_min_i`` (a
lower bound only enlarges ``rho``, so every bound stays valid):

* ``rho_i = alpha_max_i / alpha_lb_i``, ``rho = max_i rho_i``; ``alpha^max =
  max_i alpha_max_i``; ``alpha^min = min_i alpha_lb_i``; ``rho_bar =
  alpha^max / alpha^min``; ``g_max = max_i g_i``; ``G = M g``; ``tau`` the
  delay factor; ``epsilon = sum_i |n_i - n~_i|`` and ``epsilon_bar =
  epsilon / I`` (iterations, Eq. 9).
* ``OPT_A~1``: preemptive SRPT (:mod:`ddlsched.heuristics.srpt`) on one
  machine, releases ``r_i``, predicted sizes ``(g_i / G) n~_i alpha~_min_i``
  (A-SRPT's own virtual machine); ``OPT_A1``: the same with the true
  ``n_i``. ``alpha~_min`` is Heavy-Edge's
  (:func:`~ddlsched.heuristics.asrpt_config.config_constants`), as in
  Algorithm 1 and Appendix C.
* Theorem 1: ``(2 + tau + rho G / (G - g_max)) rho + 2 rho g_max rho_bar
  (1 + tau + (1 + rho) G / (G - g_max)) epsilon_bar``.
* Lemma 2: ``X = (1 + tau + rho G / (G - g_max)) OPT_A~1 + I g_max
  alpha^max epsilon / (G - g_max)``; with a best bound ``LB <= OPT_A`` the
  instance bound on the ratio is ``X / LB + rho``; with the best schedule's
  objective ``UB >= OPT_A``, the falsifiable check ``Gamma_A <= X + rho UB``
  (implied by the lemma because ``OPT_A <= UB``).
* Lemma 3 check: ``OPT_A~1 <= OPT_A1 + I (g_max alpha^max / G) epsilon``,
  both sides computed exactly.

Choices (written down here):

* Theorem 1, ``X`` and everything built on them need ``G > g_max``; when
  ``G <= g_max`` they are ``None`` and ``undefined_reason`` says why (never
  an exception). Likewise when some ``alpha_lb_i`` is 0 (``rho``
  unbounded).
* Checks compare with a slack of ``1e-9`` relative plus ``1e-9`` s; every
  check also reports both sides, so a violation is visible, never hidden.
* Per-configuration values (``rho_by_config``) rather than per job: a trace
  has tens of configurations and tens of thousands of jobs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ddlsched.deadline import Deadline
from ddlsched.heuristics.asrpt_config import config_constants
from ddlsched.heuristics.srpt import srpt_total_completion
from ddlsched.models.asrpt import AlphaLb
from ddlsched.models.asrpt import alpha_lbs as compute_alpha_lbs
from ddlsched.problems.asrpt import AsrptInstance
from ddlsched.problems.asrpt_schedule import AsrptSchedule, evaluate

__all__ = ["CHECK_RTOL", "theory"]

#: Relative slack of the checks (plus the same absolute slack in seconds).
CHECK_RTOL = 1e-9


def _holds(lhs: float, rhs: float) -> bool:
    return lhs <= rhs + CHECK_RTOL * max(abs(lhs), abs(rhs)) + CHECK_RTOL


def _finite(x: float | None) -> float | None:
    return x if x is not None and math.isfinite(x) else None


def theory(
    instance: AsrptInstance,
    total_completion_s: float | None = None,
    *,
    delay_factor: float,
    best_bound: float | None = None,
    best_schedule: float | AsrptSchedule | None = None,
    alpha_lbs: Mapping[str, AlphaLb] | None = None,
    deadline: Deadline | None = None,
    backend: str = "highs",
) -> dict[str, Any]:
    """Theorem 1 and Lemmas 2-3 on ``instance`` (module docstring); a JSON-ready dict.

    ``total_completion_s``: ``Gamma_A``, A-SRPT's ``sum C_i`` (needed by the
    Lemma 2 check); ``best_bound``: a valid lower bound on ``OPT_A`` (s);
    ``best_schedule``: the objective of the best known schedule (s), or the
    schedule itself (evaluated here); ``alpha_lbs``: per configuration,
    computed (within ``deadline``) when not given.
    """
    if not delay_factor >= 0:
        raise ValueError(f"delay_factor must be >= 0, got {delay_factor!r}")
    lbs = alpha_lbs or compute_alpha_lbs(instance, deadline=deadline, backend=backend)
    out, rho, rho_bar = _instance_terms(instance, lbs, float(delay_factor))
    if isinstance(best_schedule, AsrptSchedule):
        best_schedule = evaluate(instance, best_schedule).total_completion_s
    out.update(
        {
            "gamma_s": total_completion_s,
            "best_bound_s": best_bound,
            "best_schedule_s": best_schedule,
            "theorem1_bound": None,
            "lemma2_x_s": None,
            "instance_bound": None,
            "lemma2_rhs_s": None,
            "lemma2_holds": None,
            "undefined_reason": None,
        }
    )
    _theorem1_lemma2(out, rho, rho_bar, total_completion_s, best_bound, best_schedule)
    return out


def _instance_terms(
    instance: AsrptInstance, lbs: Mapping[str, AlphaLb], tau: float
) -> tuple[dict[str, Any], float, float]:
    """The instance's terms (``rho``, ``rho_bar``, ``epsilon``, ``OPT_A~1``, ...) and
    Lemma 3's check; also ``rho`` and ``rho_bar`` as numbers (``inf`` when unbounded)."""
    cluster = instance.cluster
    jobs = instance.jobs
    num_jobs = len(jobs)
    total_gpus = cluster.num_gpus
    used = list(dict.fromkeys(job.config for job in jobs))
    consts = {name: config_constants(cluster, instance.configs[name]) for name in used}
    rho_by_config = {
        name: (consts[name].alpha_max_s / lbs[name].value_s if lbs[name].value_s > 0 else math.inf)
        for name in used
    }
    rho = max(rho_by_config.values())
    alpha_max_all = max(consts[name].alpha_max_s for name in used)
    alpha_min_all = min(lbs[name].value_s for name in used)
    rho_bar = alpha_max_all / alpha_min_all if alpha_min_all > 0 else math.inf
    g_max = instance.max_gpus
    epsilon = math.fsum(abs(job.iterations - job.predicted_iterations) for job in jobs)
    epsilon_bar = epsilon / num_jobs

    share = {name: instance.configs[name].num_gpus / total_gpus for name in used}
    releases = [job.arrival_s for job in jobs]
    opt_pred = srpt_total_completion(
        releases,
        [share[j.config] * j.predicted_iterations * consts[j.config].alpha_min_s for j in jobs],
    )
    opt_true = srpt_total_completion(
        releases, [share[j.config] * j.iterations * consts[j.config].alpha_min_s for j in jobs]
    )
    lemma3_rhs = opt_true + num_jobs * (g_max * alpha_max_all / total_gpus) * epsilon

    out: dict[str, Any] = {
        "rho": _finite(rho),
        "rho_bar": _finite(rho_bar),
        "rho_by_config": {name: _finite(v) for name, v in rho_by_config.items()},
        "alpha_max_s": alpha_max_all,
        "alpha_min_s": alpha_min_all,
        "alpha_lb_proven_share": sum(1 for n in used if lbs[n].proven) / len(used),
        "g_max": g_max,
        "G": total_gpus,
        "tau": tau,
        "I": num_jobs,
        "epsilon": epsilon,
        "epsilon_bar": epsilon_bar,
        "opt_a_tilde_1_s": opt_pred,
        "opt_a_1_s": opt_true,
        "lemma3_lhs_s": opt_pred,
        "lemma3_rhs_s": lemma3_rhs,
        "lemma3_holds": _holds(opt_pred, lemma3_rhs),
    }
    return out, rho, rho_bar


def _theorem1_lemma2(
    out: dict[str, Any],
    rho: float,
    rho_bar: float,
    total_completion_s: float | None,
    best_bound: float | None,
    best_schedule: float | None,
) -> None:
    """Theorem 1's bound, Lemma 2's ``X``, the instance bound ``X / LB + rho`` and
    Lemma 2's check into ``out`` (or why they are undefined)."""
    total_gpus, g_max, tau = out["G"], out["g_max"], out["tau"]
    epsilon, epsilon_bar, num_jobs = out["epsilon"], out["epsilon_bar"], out["I"]
    opt_pred, alpha_max_all = out["opt_a_tilde_1_s"], out["alpha_max_s"]
    if total_gpus <= g_max:
        out["undefined_reason"] = (
            f"G = {total_gpus} <= g_max = {g_max}: Theorem 1 and Lemma 2 need G > g_max"
        )
        return
    if not math.isfinite(rho):
        out["undefined_reason"] = "some alpha_lb is 0: rho is unbounded"
        return
    spare = total_gpus - g_max
    out["theorem1_bound"] = (
        2 + tau + rho * total_gpus / spare
    ) * rho + 2 * rho * g_max * rho_bar * (1 + tau + (1 + rho) * total_gpus / spare) * epsilon_bar
    x = (1 + tau + rho * total_gpus / spare) * opt_pred + num_jobs * g_max * alpha_max_all * (
        epsilon / spare
    )
    out["lemma2_x_s"] = x
    if best_bound is not None and best_bound > 0:
        out["instance_bound"] = x / best_bound + rho
    if best_schedule is not None:
        rhs = x + rho * float(best_schedule)
        out["lemma2_rhs_s"] = rhs
        if total_completion_s is not None:
            out["lemma2_holds"] = _holds(total_completion_s, rhs)
