"""Lower bounds of family ``asrpt``: ``alpha_lb``, ``lb_sum`` and ``lb_srpt``.

A-SRPT paper: Problem (8) under Eqs. (1)-(3), the per-iteration time of
Eqs. (4)-(7), Lemma 1 (Appendix A); spec ``docs/families/asrpt.md``, "Bounds"
(the spec wins over the paper). The offline
optimum ``exact`` is :mod:`ddlsched.models.asrpt_exact`.

``alpha_lb`` (:func:`alpha_lb`, :func:`alpha_lbs`)
    A valid lower bound on the true minimum of ``alpha`` over every
    placement of a configuration on an empty cluster, any number of servers:
    the ``placement`` family's aggregated ILP
    (:class:`~ddlsched.models.placement.PlacementFormulation`, through
    :func:`~ddlsched.solvers.formulation.solve_formulation`) on ``available =
    (g,) * min(M, g_i)`` (a job never uses more than ``min(M, g_i)``
    servers). A proven optimum is the value (source ``ilp``); an ILP
    stopped by its limit gives its dual bound (``ilp_bound``); without a
    bound, the closed form below (``closed_form``). The larger of the dual
    bound and the closed form is taken (both are valid). Before any ILP,
    when the closed form already equals Heavy-Edge's ``alpha~_min`` (an
    achievable value), that is the proven minimum (source
    ``closed_form=heavy_edge``; every 1-GPU configuration ends here). Cached
    per (cluster, configuration): proven values for good, unproven ones for
    calls with no larger time budget. ``alpha_lb <= alpha~_min`` is checked
    (1e-9 relative): a violation raises :class:`~ddlsched.errors.SolverError`.

Closed form (:func:`alpha_closed_form`; the spec's "all-intra value", made
valid for every bandwidth)
    Every stage ``s`` sits on some server ``m`` with ``1 <= x[s,m] <= min(k_s,
    c)``, ``c`` the largest availability, so ``alpha >= max_s (comp_s +
    min comm_s + min_v AllReduce_s(v))``: comm (Eq. 5) is linear in the
    neighbour counts, so its minimum over the box ``[0, min(k_{s-1}, c-1)]
    x [0, min(k_{s+1}, c-1)]`` is at a corner; the AllReduce (Eq. 6) is
    minimised over ``v = 1..min(k_s, c)``. When ``B_intra >= B_inter`` this
    is at least the spec's all-intra value (every Eq. 7 term at
    ``B_intra``); when ``B_inter / g <= B_intra < B_inter`` (allowed by the
    instance validation) the all-intra value is *not* a valid bound (a split
    AllReduce can then be faster than an intra-server one), but this one is.

``lb_sum``, ``lb_srpt`` (:func:`lb_sum`, :func:`lb_srpt`)
    ``sum_i (r_i + n_i alpha_lb_i)`` and the total completion time of
    preemptive SRPT on one machine with releases ``r_i`` and sizes ``(g_i /
    G) n_i alpha_lb_i`` (Lemma 1's relaxation with exact per-iteration
    times: ``OPT_A1* <= OPT_A``). Linear (resp. ``O(I log I)``) once
    ``alpha_lb`` is cached: the whole Philly trace takes well under a second.

"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass

from ddlsched.deadline import Deadline
from ddlsched.errors import DdlschedError, SolverError
from ddlsched.heuristics.asrpt_config import config_constants
from ddlsched.heuristics.srpt import srpt_total_completion
from ddlsched.models.placement import PlacementFormulation
from ddlsched.problems.asrpt import AsrptInstance, Cluster, JobConfig, job_placement_instance
from ddlsched.problems.placement import PlacementInstance, allreduce_time, comm_time
from ddlsched.problems.placement import evaluate as evaluate_placement
from ddlsched.solvers.formulation import solve_formulation
from ddlsched.solvers.limits import SolveLimits
from ddlsched.solvers.result import Status

__all__ = [
    "ALPHA_LB_TIME_LIMIT_S",
    "AlphaLb",
    "alpha_closed_form",
    "alpha_lb",
    "alpha_lbs",
    "lb_srpt",
    "lb_sum",
    "leq",
]

log = logging.getLogger(__name__)

#: Default time a single ``alpha_lb`` ILP may take (s).
ALPHA_LB_TIME_LIMIT_S = 10.0
#: Relative tolerance of the consistency checks between bounds and achievable values.
CHECK_RTOL = 1e-9
#: The placement ILP's limits, as the placement family's exact methods.
PLACEMENT_LIMITS = {"abs_gap": 1e-7}


# --------------------------------------------------------------------------- closed form


def alpha_closed_form(instance: PlacementInstance) -> float:
    """A lower bound on ``alpha`` of every placement of ``instance`` (module docstring)."""
    stages = instance.stages
    cap = max(instance.available)
    worst = 0.0
    for s, stage in enumerate(stages):
        room = cap - 1  # the server also holds >= 1 replica of stage s
        k_prev = stages[s - 1].replicas if s > 0 else 0
        k_next = stages[s + 1].replicas if s + 1 < len(stages) else 0
        comm = min(
            comm_time(instance, s, p, q)
            for p in {0, min(k_prev, room)}
            for q in {0, min(k_next, room)}
        )
        reduce = min(allreduce_time(instance, s, v) for v in range(1, min(stage.replicas, cap) + 1))
        worst = max(worst, stage.compute_s + comm + reduce)
    return worst


def leq(a: float, b: float) -> bool:
    """``a <= b`` up to the checks' tolerance (``CHECK_RTOL`` relative, 1e-12 absolute)."""
    return a <= b * (1 + CHECK_RTOL) + 1e-12


# --------------------------------------------------------------------------- alpha_lb


@dataclass(frozen=True)
class AlphaLb:
    """A valid lower bound on ``min alpha`` of a configuration (seconds).

    ``proven``: it is the minimum itself. ``source``: ``closed_form=heavy_edge``,
    ``ilp``, ``ilp_bound`` or ``closed_form`` (module docstring).
    ``alpha_min_s`` is Heavy-Edge's ``alpha~_min`` (an achievable value).
    ``cut``: a time limit left it unproven (no time for the ILP, or the ILP
    stopped at its limit): a weaker value than more time would give.
    """

    value_s: float
    proven: bool
    source: str
    alpha_min_s: float | None = None
    cut: bool = False


_ALPHA_LB: dict[tuple[Cluster, JobConfig], AlphaLb] = {}
_ALPHA_LB_UNPROVEN: dict[tuple[Cluster, JobConfig], tuple[AlphaLb, float]] = {}


def alpha_lb(
    cluster: Cluster,
    config: JobConfig,
    *,
    time_limit_s: float = ALPHA_LB_TIME_LIMIT_S,
    backend: str = "highs",
    deadline: Deadline | None = None,
    cross_check: bool = True,
    seed: int = 0,
    use_ilp: bool = True,
) -> AlphaLb:
    """``alpha_lb`` of ``config`` on ``cluster`` (module docstring); cached.

    The ILP gets ``time_limit_s`` or what remains of ``deadline``, whichever is
    less; ``cross_check`` re-proves a HiGHS optimum with SCIP (the placement
    family's default: HiGHS 1.14 returned wrong placement optima).
    ``use_ilp=False``: the closed form (proven when Heavy-Edge meets it), no
    ILP: a value that does not depend on the machine's speed.
    """
    key = (cluster, config)
    if key in _ALPHA_LB and (use_ilp or _ALPHA_LB[key].source == "closed_form=heavy_edge"):
        return _ALPHA_LB[key]
    deadline = deadline or Deadline.unlimited()
    budget = min(time_limit_s, deadline.remaining_s())
    if use_ilp and key in _ALPHA_LB_UNPROVEN and _ALPHA_LB_UNPROVEN[key][1] >= budget:
        return _ALPHA_LB_UNPROVEN[key][0]
    g = cluster.gpus_per_server
    instance = job_placement_instance(cluster, config, (g,) * min(cluster.servers, config.num_gpus))
    closed = alpha_closed_form(instance)
    upper = config_constants(cluster, config).alpha_min_s
    if not leq(closed, upper):
        raise SolverError(
            f"alpha_lb: the closed form {closed!r} s exceeds Heavy-Edge's alpha~_min {upper!r} s "
            f"({config.description or 'configuration'}): a bug in the bound or the timing model"
        )
    if leq(upper, closed):
        result = AlphaLb(min(closed, upper), True, "closed_form=heavy_edge", upper)
    elif not use_ilp:
        return AlphaLb(closed, False, "closed_form", upper)
    else:
        result = _alpha_lb_ilp(instance, closed, upper, budget, backend, cross_check, seed)
    if not leq(result.value_s, upper):
        raise SolverError(
            f"alpha_lb: {result.source} gives {result.value_s!r} s, above Heavy-Edge's alpha~_min "
            f"{upper!r} s on the same servers ({config.description or 'configuration'}): "
            "a solver failure"
        )
    if result.proven:
        _ALPHA_LB[key] = result
    else:
        _ALPHA_LB_UNPROVEN[key] = (result, budget)
    return result


def _alpha_lb_ilp(
    instance: PlacementInstance,
    closed: float,
    upper: float,
    budget: float,
    backend: str,
    cross_check: bool,
    seed: int,
) -> AlphaLb:
    if not budget > 1e-3:
        return AlphaLb(closed, False, "closed_form", upper, cut=True)
    try:
        out = solve_formulation(
            PlacementFormulation("aggregated"),
            instance,
            backend,
            SolveLimits(seed=seed, **PLACEMENT_LIMITS),
            cross_check,
            deadline=Deadline(budget),
        )
    except DdlschedError as exc:  # too large, or a backend failure: the closed form stays valid
        log.warning("alpha_lb: placement ILP failed (%s); using the closed form", exc)
        return AlphaLb(closed, False, "closed_form", upper)
    agree = (out.info.get("cross_check") or {}).get("agree")
    if out.status is Status.OPTIMAL and out.schedule is not None and agree is not False:
        value = evaluate_placement(instance, out.schedule).iteration_time_s
        if not leq(closed, value):
            raise SolverError(
                f"alpha_lb: the closed form {closed!r} s exceeds the ILP optimum {value!r} s"
            )
        return AlphaLb(value, True, "ilp", upper)
    if agree is False:
        log.warning("alpha_lb: the placement backends disagree; using the closed form")
        return AlphaLb(closed, False, "closed_form", upper)
    dual = out.bound if out.bound is not None and math.isfinite(out.bound) else None
    cut = out.time_limit_hit or out.status is Status.TIME_LIMIT_NO_SOLUTION
    if dual is not None and dual > closed:
        return AlphaLb(dual, False, "ilp_bound", upper, cut=cut)
    return AlphaLb(closed, False, "closed_form", upper, cut=cut)


def alpha_lbs(
    instance: AsrptInstance,
    *,
    deadline: Deadline | None = None,
    backend: str = "highs",
    time_limit_s: float = ALPHA_LB_TIME_LIMIT_S,
    cross_check: bool = True,
    use_ilp: bool = True,
) -> dict[str, AlphaLb]:
    """``{configuration name: AlphaLb}`` for the configurations the jobs use.

    Each ILP gets ``time_limit_s`` or what remains of ``deadline``; once the
    deadline has passed the closed form is used (never an exception; those
    values are marked ``cut``). ``use_ilp=False``: closed forms only.
    """
    names = list(dict.fromkeys(job.config for job in instance.jobs))
    return {
        name: alpha_lb(
            instance.cluster,
            instance.configs[name],
            time_limit_s=time_limit_s,
            backend=backend,
            deadline=deadline,
            cross_check=cross_check,
            use_ilp=use_ilp,
        )
        for name in names
    }


def _lbs(
    instance: AsrptInstance, lbs: Mapping[str, AlphaLb] | None, deadline: Deadline | None
) -> Mapping[str, AlphaLb]:
    return alpha_lbs(instance, deadline=deadline) if lbs is None else lbs


def lb_sum(
    instance: AsrptInstance,
    deadline: Deadline | None = None,
    *,
    alpha_lbs: Mapping[str, AlphaLb] | None = None,
) -> float:
    """``sum_i (r_i + n_i alpha_lb_i)`` (s): every job alone at its best placement."""
    lbs = _lbs(instance, alpha_lbs, deadline)
    return math.fsum(
        job.arrival_s + job.iterations * lbs[job.config].value_s for job in instance.jobs
    )


def lb_srpt(
    instance: AsrptInstance,
    deadline: Deadline | None = None,
    *,
    alpha_lbs: Mapping[str, AlphaLb] | None = None,
) -> float:
    """Preemptive SRPT on one machine, releases ``r_i``, sizes ``(g_i / G) n_i alpha_lb_i``
    (s; Lemma 1's relaxation with exact per-iteration times, ``OPT_A1* <= OPT_A``)."""
    lbs = _lbs(instance, alpha_lbs, deadline)
    total_gpus = instance.cluster.num_gpus
    share = {name: config.num_gpus / total_gpus for name, config in instance.configs.items()}
    releases = [job.arrival_s for job in instance.jobs]
    sizes = [share[job.config] * job.iterations * lbs[job.config].value_s for job in instance.jobs]
    return srpt_total_completion(releases, sizes)
