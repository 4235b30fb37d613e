"""Offline optimum and lower bounds of family ``asrpt``: ``alpha_lb``, ``lb_sum``,
``lb_srpt`` and ``exact``.

Paper seed 004: Problem (8) under Eqs. (1)-(3), the per-iteration time of
Eqs. (4)-(7), Lemma 1 (Appendix A); spec ``shared/specs/asrpt.md``, "Offline
optimum and lower bounds" (the spec wins over the paper).

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

``exact`` (:func:`solve_exact`)
    Modes per job: every GPU-count vector ``u`` over the ``M`` servers
    (``sum u = g_i``, ``u_m <= g``), duration ``n_i alpha*(u)``;
    ``alpha*(u)`` is the ``placement`` optimum on ``available = u`` (the
    nonzero entries, sorted: a placement instance's servers are
    interchangeable, so ``alpha*`` depends on ``u`` as a multiset and is
    solved once per (configuration, sorted ``u``) and cached; the mode keeps
    its per-server vector, and the placement's ``k``-th server maps to the
    mode's ``k``-th server by usage, descending, then index). ``alpha*(u)``
    is proven by Heavy-Edge meeting the closed form, else by the placement
    ILP; a solve stopped by the deadline keeps its incumbent (Heavy-Edge's
    at worst) for the rounded-up data and its dual bound for the rounded-down
    data. The scheduling model is CP-SAT (default) or the time-indexed MILP
    (``solver="milp"``), both in :mod:`ddlsched.models.asrpt_exact`, on
    integer data in ``time_unit_s``. Data are *whole* when every arrival
    and every duration is within 1e-9 (relative) of an integer and every
    ``alpha*`` is proven: one model. Otherwise the model is solved with
    arrivals and durations rounded up (its schedule is feasible and is
    evaluated in continuous time) and rounded down (a valid bound: flooring
    every start of a continuous schedule keeps it feasible for the floored
    data, since ``floor(a) + floor(b) <= floor(a + b)`` keeps disjoint runs
    disjoint and intervals that pairwise overlap share a point, and its
    objective does not grow); the result is ``optimal`` only when the two
    coincide (1e-9 relative).

    The returned schedule is the best of the solvers' and the greedy
    incumbent's (:func:`~ddlsched.models.asrpt_exact.serial_schedule`), so a
    schedule always exists; ``bound`` is the largest of the model's dual
    bound (on the whole or rounded-down data) and the per-mode ``lb_sum`` /
    ``lb_srpt`` (with ``min_u alpha*(u)`` bounds). Deadline: one for the
    whole method; the ``alpha*`` solves take what they need of it, then each
    remaining model solve gets an equal share of what is left.
    ``cross_check=True`` also solves every integer model with the other
    scheduling model (MILP for CP-SAT and vice versa) and records in
    ``info['cross_check']`` whether their optima agree (``True``), disagree
    (``False``: the result is then ``feasible``, with only the closed-form
    bounds, and a warning is logged) or could not be compared (``None``).

    Size caps, checked before anything is built (a one-line
    :class:`~ddlsched.errors.ModelTooLargeError` naming the counts): the
    number of (job, mode) pairs (counted before symmetry breaking) against
    ``max_job_modes``, a cheap lower estimate of the horizon (closed-form
    ``alpha``) and then the serial horizon ``max r + sum_i max_u d_iu``
    (time units) against ``max_horizon_units``.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from ddlsched.deadline import DEFAULT_TIME_LIMIT_S, Deadline
from ddlsched.errors import DdlschedError, ModelTooLargeError, SolverError, UnknownMethodError
from ddlsched.heuristics.asrpt_config import config_constants, map_job
from ddlsched.heuristics.srpt import srpt_total_completion
from ddlsched.models.asrpt_exact import (
    IntegerData,
    IntegerSolution,
    Mode,
    TimeIndexedFormulation,
    make_data,
    solve_cpsat,
    to_schedule,
)
from ddlsched.models.placement import PlacementFormulation
from ddlsched.problems.asrpt import (
    AsrptInstance,
    Cluster,
    JobConfig,
    evaluate,
    job_placement_instance,
)
from ddlsched.problems.placement import PlacementInstance, allreduce_time, comm_time
from ddlsched.problems.placement import evaluate as evaluate_placement
from ddlsched.solvers.formulation import solve_formulation
from ddlsched.solvers.limits import SolveLimits
from ddlsched.solvers.result import Claim, Outcome, Status

__all__ = [
    "DEFAULT_MAX_HORIZON_UNITS",
    "DEFAULT_MAX_JOB_MODES",
    "AlphaLb",
    "AlphaStar",
    "alpha_closed_form",
    "alpha_lb",
    "alpha_lbs",
    "alpha_star",
    "count_usage_vectors",
    "lb_srpt",
    "lb_sum",
    "solve_exact",
    "usage_vectors",
]

log = logging.getLogger(__name__)

#: Default caps of :func:`solve_exact` (refused beyond, before anything is built).
DEFAULT_MAX_JOB_MODES = 2_000
DEFAULT_MAX_HORIZON_UNITS = 5_000
#: Default time a single ``alpha_lb`` ILP may take (s).
ALPHA_LB_TIME_LIMIT_S = 10.0
_WHOLE_RTOL = 1e-9
_CHECK_RTOL = 1e-9
_PLACEMENT_LIMITS = {"abs_gap": 1e-7}  # as the placement family's exact methods


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


def _leq(a: float, b: float) -> bool:
    return a <= b * (1 + _CHECK_RTOL) + 1e-12


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
    if not _leq(closed, upper):
        raise SolverError(
            f"alpha_lb: the closed form {closed!r} s exceeds Heavy-Edge's alpha~_min {upper!r} s "
            f"({config.description or 'configuration'}): a bug in the bound or the timing model"
        )
    if _leq(upper, closed):
        result = AlphaLb(min(closed, upper), True, "closed_form=heavy_edge", upper)
    elif not use_ilp:
        return AlphaLb(closed, False, "closed_form", upper)
    else:
        result = _alpha_lb_ilp(instance, closed, upper, budget, backend, cross_check, seed)
    if not _leq(result.value_s, upper):
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
            SolveLimits(seed=seed, **_PLACEMENT_LIMITS),
            cross_check,
            deadline=Deadline(budget),
        )
    except DdlschedError as exc:  # too large, or a backend failure: the closed form stays valid
        log.warning("alpha_lb: placement ILP failed (%s); using the closed form", exc)
        return AlphaLb(closed, False, "closed_form", upper)
    agree = (out.info.get("cross_check") or {}).get("agree")
    if out.status is Status.OPTIMAL and out.schedule is not None and agree is not False:
        value = evaluate_placement(instance, out.schedule).iteration_time_s
        if not _leq(closed, value):
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


# --------------------------------------------------------------------------- modes and alpha*


@cache
def count_usage_vectors(servers: int, gpus_per_server: int, gpus: int) -> int:
    """How many vectors ``u`` in ``{0..g}^M`` sum to ``gpus`` (no enumeration)."""
    ways = [1] + [0] * gpus
    for _ in range(servers):
        nxt = [0] * (gpus + 1)
        for total, count in enumerate(ways):
            if count:
                for v in range(min(gpus_per_server, gpus - total) + 1):
                    nxt[total + v] += count
        ways = nxt
    return ways[gpus]


def usage_vectors(
    servers: int, gpus_per_server: int, gpus: int, *, non_increasing: bool = False
) -> list[tuple[int, ...]]:
    """Every ``u`` in ``{0..g}^M`` with ``sum u = gpus``, lexicographically descending
    (``non_increasing``: only ``u_0 >= u_1 >= ...``)."""
    out: list[tuple[int, ...]] = []

    def extend(prefix: tuple[int, ...], left: int) -> None:
        m = len(prefix)
        if m == servers:
            if left == 0:
                out.append(prefix)
            return
        top = min(gpus_per_server, left, prefix[-1] if non_increasing and prefix else left)
        for v in range(top, -1, -1):
            if left - v > (servers - m - 1) * gpus_per_server:
                break
            extend((*prefix, v), left - v)

    extend((), gpus)
    return out


@dataclass(frozen=True)
class AlphaStar:
    """``alpha*(u)`` of a configuration on ``available = usage`` (sorted, nonzero).

    ``value_s``: the best placement found (``counts[s][k]`` replicas of stage
    ``s`` on the ``k``-th server of ``usage``); ``bound_s``: a valid lower
    bound (equal to ``value_s`` when ``proven``).
    """

    usage: tuple[int, ...]
    value_s: float
    bound_s: float
    counts: tuple[tuple[int, ...], ...]
    proven: bool
    source: str


_ALPHA_STAR: dict[tuple[Cluster, JobConfig, tuple[int, ...]], AlphaStar] = {}


def alpha_star(
    cluster: Cluster,
    config: JobConfig,
    usage: tuple[int, ...],
    *,
    backend: str = "highs",
    deadline: Deadline | None = None,
    cross_check: bool = True,
    seed: int = 0,
) -> AlphaStar:
    """``alpha*(u)`` (module docstring): Heavy-Edge meeting the closed form, else the
    placement ILP within ``deadline``; proven values are cached."""
    usage = tuple(sorted((int(u) for u in usage if u), reverse=True))
    key = (cluster, config, usage)
    if key in _ALPHA_STAR:
        return _ALPHA_STAR[key]
    deadline = deadline or Deadline.unlimited()
    instance = job_placement_instance(cluster, config, usage)
    closed = alpha_closed_form(instance)
    mapping = map_job(cluster, config, usage, 0)
    if not _leq(closed, mapping.alpha_s):
        raise SolverError(
            f"alpha*: the closed form {closed!r} s exceeds Heavy-Edge's {mapping.alpha_s!r} s"
        )
    if _leq(mapping.alpha_s, closed):
        result = AlphaStar(
            usage, mapping.alpha_s, mapping.alpha_s, mapping.counts, True, "heavy_edge=bound"
        )
    else:
        result = _alpha_star_ilp(
            instance, usage, closed, mapping, backend, deadline, cross_check, seed
        )
    if result.proven:
        _ALPHA_STAR[key] = result
    return result


def _alpha_star_ilp(
    instance, usage, closed, mapping, backend, deadline, cross_check, seed
) -> AlphaStar:
    fallback = AlphaStar(usage, mapping.alpha_s, closed, mapping.counts, False, "heavy_edge")
    if not deadline.remaining_s() > 1e-3:
        return fallback
    out = solve_formulation(
        PlacementFormulation("aggregated"),
        instance,
        backend,
        SolveLimits(seed=seed, **_PLACEMENT_LIMITS),
        cross_check,
        deadline=deadline,
    )
    agree = (out.info.get("cross_check") or {}).get("agree")
    value, counts = mapping.alpha_s, mapping.counts
    if out.schedule is not None:
        ilp_value = evaluate_placement(instance, out.schedule).iteration_time_s
        if ilp_value < value:
            value, counts = ilp_value, out.schedule.counts
    if out.status is Status.OPTIMAL and out.schedule is not None and agree is not False:
        if not _leq(closed, value):
            raise SolverError(f"alpha*: the closed form {closed!r} s exceeds the optimum {value!r}")
        return AlphaStar(usage, value, value, counts, True, "ilp")
    bound = closed
    if agree is not False and out.bound is not None and math.isfinite(out.bound):
        bound = max(bound, min(out.bound, value))
    return AlphaStar(usage, value, bound, counts, False, "ilp_stopped")


# --------------------------------------------------------------------------- exact


def _count(value: float) -> str:
    """``12,345`` for a count, ``1.23e+20`` beyond a billion (a message stays one short line)."""
    return f"{value:,.0f}" if value < 1e9 else f"{value:.3g}"


def _units(x: float, up: bool) -> int:
    """``x`` (time units) as an integer: the nearest one when within 1e-9 relative,
    else rounded up (``up``) or down. A positive ``x`` is never whole at 0 (a duration of
    2e-12 units, ``time_unit_s`` far coarser than the jobs, made every job take no time
    and the model claim a total completion time of 0)."""
    nearest = round(x)
    if abs(x - nearest) <= _WHOLE_RTOL * max(1.0, abs(x)) and (nearest != 0 or x == 0):
        return int(nearest)
    return math.ceil(x) if up else math.floor(x)


def _method_deadline(time_limit_s: float | None, deadline: Deadline | None) -> Deadline:
    if deadline is None:
        return Deadline(DEFAULT_TIME_LIMIT_S if time_limit_s is None else time_limit_s)
    return deadline if time_limit_s is None else deadline.sub(at_most=time_limit_s)


@dataclass
class _IntegerSolve:
    """One solve of one integer model by one scheduling model (objective, bound in units)."""

    solver: str
    status: Status
    solution: IntegerSolution | None
    objective: int | None
    bound: int | None
    runtime_s: float
    model_size: tuple[int, int, int] | None
    backend: str
    backend_version: str
    message: str
    time_limit_hit: bool

    def report(self) -> dict[str, Any]:
        return {
            "solver": self.solver,
            "backend": self.backend,
            "status": str(self.status),
            "objective_units": self.objective,
            "bound_units": self.bound,
            "runtime_s": self.runtime_s,
            "model_size": self.model_size,
            "message": self.message,
        }


def _solve_integer(
    data: IntegerData, solver: str, backend: str, deadline: Deadline, seed: int, threads: int
) -> _IntegerSolve:
    if solver == "cpsat":
        res = solve_cpsat(data, deadline, seed=seed, threads=threads)
        return _IntegerSolve(
            "cpsat",
            res.status,
            res.solution,
            res.objective,
            res.bound,
            res.runtime_s,
            res.model_size,
            "cpsat",
            res.version,
            res.message,
            res.time_limit_hit,
        )
    unit = data.instance.time_unit_s
    out = solve_formulation(
        TimeIndexedFormulation(),
        data,
        backend,
        SolveLimits(abs_gap=0.5, seed=seed, threads=threads),
        False,
        deadline=deadline,
    )
    solution = out.schedule
    objective = solution.objective(data) if solution is not None else None
    bound = None
    if out.bound is not None and math.isfinite(out.bound):
        bound = math.ceil(out.bound / unit - 1e-6)
    if out.status is Status.OPTIMAL and objective is not None:
        bound = objective
    return _IntegerSolve(
        "milp",
        out.status,
        solution,
        objective,
        bound,
        out.solver_time_s or 0.0,
        out.model_size,
        out.backend or backend,
        out.backend_version or "",
        str(out.info.get("solver_message", out.info.get("stopped", ""))),
        out.time_limit_hit,
    )


def _agreement(first: _IntegerSolve, second: _IntegerSolve) -> bool | None:
    """Whether two solves of one integer model agree on its optimum (``None``: undecided)."""
    if first.status is Status.OPTIMAL and second.status is Status.OPTIMAL:
        return first.objective == second.objective
    for a, b in ((first, second), (second, first)):
        if a.status is Status.OPTIMAL and b.objective is not None and b.objective < a.objective:
            return False  # b found better than a's "optimum"
    if Status.ERROR in (first.status, second.status):
        return False if Status.OPTIMAL in (first.status, second.status) else None
    return None


def _job_modes(
    instance: AsrptInstance,
    backend: str,
    deadline: Deadline,
    cross_check: bool,
    seed: int,
) -> tuple[list[list[tuple[tuple[int, ...], AlphaStar]]], dict[str, Any]]:
    """Per job, its modes ``(u, alpha*(u))`` (the first job: non-increasing ``u`` only)."""
    cluster = instance.cluster
    stars: dict[tuple[str, tuple[int, ...]], AlphaStar] = {}
    out = []
    for i, job in enumerate(instance.jobs):
        config = instance.configs[job.config]
        vectors = usage_vectors(
            cluster.servers, cluster.gpus_per_server, config.num_gpus, non_increasing=i == 0
        )
        modes = []
        for u in vectors:
            key = (job.config, tuple(sorted((v for v in u if v), reverse=True)))
            if key not in stars:
                stars[key] = alpha_star(
                    cluster,
                    config,
                    key[1],
                    backend=backend,
                    deadline=deadline,
                    cross_check=cross_check,
                    seed=seed,
                )
            modes.append((u, stars[key]))
        out.append(modes)
    sources: dict[str, int] = {}
    for star in stars.values():
        sources[star.source] = sources.get(star.source, 0) + 1
    info = {
        "distinct": len(stars),
        "proven": sum(1 for s in stars.values() if s.proven),
        "sources": sources,
    }
    return out, info


def _mode(u: tuple[int, ...], star: AlphaStar, duration: int) -> Mode:
    order = sorted((m for m in range(len(u)) if u[m]), key=lambda m: (-u[m], m))
    return Mode(usage=u, duration=duration, servers=tuple(order), counts=star.counts)


def solve_exact(
    instance: AsrptInstance,
    *,
    backend: str = "highs",
    time_limit_s: float | None = None,
    deadline: Deadline | None = None,
    max_job_modes: int = DEFAULT_MAX_JOB_MODES,
    max_horizon_units: int = DEFAULT_MAX_HORIZON_UNITS,
    cross_check: bool = False,
    seed: int = 0,
    solver: str = "cpsat",
    threads: int = 1,
    placement_cross_check: bool = True,
) -> Outcome:
    """The offline optimum ``OPT_A`` of ``instance`` (module docstring).

    ``backend`` is the MILP backend (placement ILPs, and the time-indexed
    MILP when ``solver="milp"`` or cross-checking); ``placement_cross_check``
    re-proves every placement-ILP optimum ``alpha*(u)`` with the other backend.
    Raises :class:`~ddlsched.errors.ModelTooLargeError` beyond the caps.
    """
    if solver not in ("cpsat", "milp"):
        raise UnknownMethodError(f"unknown asrpt exact solver {solver!r} (choose cpsat or milp)")
    deadline = _method_deadline(time_limit_s, deadline)
    started = time.perf_counter()
    cluster = instance.cluster
    unit = instance.time_unit_s
    M, g = cluster.servers, cluster.gpus_per_server
    job_modes = sum(count_usage_vectors(M, g, instance.gpus(job)) for job in instance.jobs)
    where = f"{instance.num_jobs} jobs on {M} servers x {g} GPUs"
    if job_modes > max_job_modes:
        raise ModelTooLargeError(
            f"asrpt exact: {job_modes:,} (job, mode) pairs exceed max_job_modes = "
            f"{max_job_modes:,} ({where}); raise the cap or use lb_sum / lb_srpt"
        )
    closed = {
        name: alpha_closed_form(
            job_placement_instance(cluster, config, (g,) * min(M, config.num_gpus))
        )
        for name, config in instance.configs.items()
    }
    estimate = max(job.arrival_s for job in instance.jobs) / unit
    estimate += sum(job.iterations * closed[job.config] for job in instance.jobs) / unit
    if estimate > max_horizon_units * (1 + _WHOLE_RTOL):
        raise ModelTooLargeError(
            f"asrpt exact: the horizon is at least {_count(estimate)} time units of "
            f"{unit:g} s, above max_horizon_units = {max_horizon_units:,} ({where}); "
            "raise the cap or time_unit_s"
        )

    modes, star_info = _job_modes(instance, backend, deadline, placement_cross_check, seed)
    modes_up, modes_down = [], []
    for job, job_modes_i in zip(instance.jobs, modes, strict=True):
        n = job.iterations
        modes_up.append([_mode(u, s, _units(n * s.value_s / unit, True)) for u, s in job_modes_i])
        modes_down.append(
            [_mode(u, s, _units(n * s.bound_s / unit, False)) for u, s in job_modes_i]
        )
    r_up = [_units(job.arrival_s / unit, True) for job in instance.jobs]
    r_down = [_units(job.arrival_s / unit, False) for job in instance.jobs]
    whole = r_up == r_down and all(
        a.duration == b.duration
        for ups, downs in zip(modes_up, modes_down, strict=True)
        for a, b in zip(ups, downs, strict=True)
    )
    serial = max(r_up) + sum(max(m.duration for m in ms) for ms in modes_up)
    if serial > max_horizon_units:
        raise ModelTooLargeError(
            f"asrpt exact: the serial horizon is {_count(serial)} time units of {unit:g} s, above "
            f"max_horizon_units = {max_horizon_units:,} ({where}); raise the cap or time_unit_s"
        )
    upper = make_data(instance, "exact" if whole else "up", r_up, modes_up)
    lower = None if whole else make_data(instance, "down", r_down, modes_down)

    other = "milp" if solver == "cpsat" else "cpsat"
    plan: list[tuple[str, IntegerData, str]] = [("upper", upper, solver)]
    if cross_check:
        plan.append(("upper", upper, other))
    if lower is not None:
        plan.append(("lower", lower, solver))
        if cross_check:
            plan.append(("lower", lower, other))
    solves: dict[tuple[str, str], _IntegerSolve] = {}
    cross: dict[str, Any] = {}
    for index, (label, data, name) in enumerate(plan):
        share = 1.0 / (len(plan) - index)
        try:
            solves[label, name] = _solve_integer(
                data, name, backend, deadline.sub(share), seed, threads
            )
        except ModelTooLargeError as exc:
            if name == solver:
                raise
            cross[label] = {"agree": None, "status": f"not run: {exc}"}
    if cross_check:
        for label in ("upper", "lower"):
            if (label, solver) in solves and (label, other) in solves:
                first, second = solves[label, solver], solves[label, other]
                cross[label] = {
                    "agree": _agreement(first, second),
                    solver: first.report(),
                    other: second.report(),
                }
                if cross[label]["agree"] is False:
                    log.warning(
                        "asrpt exact: %s and %s disagree on the %s model: %s vs %s (%s, %s)",
                        solver,
                        other,
                        label,
                        first.objective,
                        second.objective,
                        first.status,
                        second.status,
                    )
    disagree = any(c.get("agree") is False for c in cross.values())

    # The schedule: the best upper solution (a solver's or the greedy incumbent).
    candidates = [(upper.incumbent.objective(upper), 1, "serial", upper.incumbent)]
    for (label, name), res in solves.items():
        if label == "upper" and res.solution is not None:
            candidates.append((res.objective, 0 if name == solver else 0.5, name, res.solution))
    best_units, _, best_from, best = min(candidates, key=lambda c: (c[0], c[1]))
    schedule = to_schedule(upper, best)
    objective = evaluate(instance, schedule).total_completion_s

    # The bound: the model's (whole or rounded-down data) and the per-mode closed bounds.
    mins = [min(s.bound_s for _, s in job_modes_i) for job_modes_i in modes]
    per_mode_sum = math.fsum(
        job.arrival_s + job.iterations * a for job, a in zip(instance.jobs, mins, strict=True)
    )
    total_gpus = cluster.num_gpus
    per_mode_srpt = srpt_total_completion(
        [job.arrival_s for job in instance.jobs],
        [
            instance.gpus(job) / total_gpus * job.iterations * a
            for job, a in zip(instance.jobs, mins, strict=True)
        ],
    )
    bounds = {"lb_sum_modes": per_mode_sum, "lb_srpt_modes": per_mode_srpt}
    bound_label = "upper" if whole else "lower"
    if not disagree:
        model_bounds = [
            res.bound
            for (label, _), res in solves.items()
            if label == bound_label and res.bound is not None
        ]
        if model_bounds:
            bounds["model"] = max(model_bounds) * unit
    bound = max(bounds.values())
    optimal = bound >= objective * (1 - _CHECK_RTOL) - 1e-12
    status = Status.OPTIMAL if optimal else Status.FEASIBLE
    proof = None
    if optimal:
        proof = (
            "model" if bounds.get("model", -math.inf) >= objective * (1 - _CHECK_RTOL) else "bounds"
        )

    claim = Claim(best_units * unit, proven=optimal and whole)
    primary = solves.get(("upper", solver))
    time_limit_hit = any(res.time_limit_hit for res in solves.values()) or (
        star_info["proven"] < star_info["distinct"]
    )
    info: dict[str, Any] = {
        "solver": solver,
        "time_unit_s": unit,
        "rounding": "exact" if whole else "up/down",
        "job_modes": upper.num_job_modes,
        "job_modes_uncapped": job_modes,
        "serial_horizon_units": upper.serial_horizon,
        "model_horizon_units": upper.horizon,
        "alpha_star": star_info,
        "schedule_from": best_from,
        "objective_units": best_units,
        "bounds": bounds,
        "proof": proof,
        "solves": {f"{label}/{name}": res.report() for (label, name), res in solves.items()},
        "method_s": time.perf_counter() - started,
    }
    if cross_check:
        info["cross_check"] = cross
    if disagree:
        info["error_note"] = "the scheduling models disagree: no optimality claimed"
    return Outcome(
        schedule=schedule,
        status=status,
        bound=bound,
        claim=claim,
        backend=primary.backend if primary else None,
        backend_version=primary.backend_version if primary else None,
        model_size=primary.model_size if primary else None,
        solver_time_s=sum(res.runtime_s for res in solves.values()),
        time_limit_hit=time_limit_hit and not optimal,
        info=info,
    )
