"""``lb_timeindexed``: the time-indexed LP relaxation of RAR-DDLS as a lower bound (ours).

Paper: the reformulation of RAR-DDLS as a choice among (job, placement,
start) columns (MobiHoc 2022, Eqs. 10-13; spec ``rar.md``, "Exact and
bounding formulations", item 2, with its time aggregation). The LP below,
the makespan rows, the choice of the grid and the proof are ours.

**Columns.** Patterns ``k`` of job ``j`` (GPUs per class of equal servers,
:mod:`ddlsched.models.rar_patterns`; a job with more than ``max_patterns``
keeps one pooled column on the cluster) with the contention-free duration
``d_jk`` on the fewest servers the pattern needs; on a grid of slot width
``w``, windows ``K = [K w, (K+1) w)``; a column ``(j, k, t)`` (coarse
start ``t``) *covers* windows ``t .. t + D - 1`` with
``D = floor((d + 1) / w) - 1`` (``D = d`` at ``w = 1``) and has the earliest
fine end ``f = d`` (``t = 0``) or ``(t - 1) w + 1 + d``. Only columns with
``f <= H`` exist, ``H`` the model horizon (``T``, or the makespan ``U`` of an
LS/FF schedule, :func:`~ddlsched.models.rar_timegrid.model_horizon`).

**LP.** ``x[j,k,t] in [0, 1]``, ``y[K] in [0, 1]`` for ``K < ceil(H / w)``::

    min  w sum_K y[K]
    s.t. sum_{k,t} x[j,k,t] = 1                                   (each job)
         sum_{columns covering K} G_j x <= N y[K]                 (cluster, each K)
         sum_{columns covering K} g_c(k) x <= O_c n_c y[K]        (class c, each K)
         y[K] >= y[K+1]
         y[K] >= sum_{k,t} min(1, (f - K w) / w)^+ x[j,k,t]       (tail, each j, K)

**Validity (a lower bound at any slot width).** Take an optimal schedule,
makespan ``T* <= H`` (``U`` is a schedule's makespan). Job ``j`` holds the
same ``G_j`` GPUs from its fine start ``a_j`` to its end ``e_j``; its
placement puts ``g_c`` GPUs on class ``c``, so it matches a pattern ``k``
(or the pooled column), and ``e_j - a_j >= d_jk``: the pattern's duration is
taken on the fewest servers of each class and at ``p = 1``, and ``tau_j``
(Eq. 8) only grows with the server count and the contention level, so the
per-slot progress of Eq. (9) is at most the contention-free one. Round the
start **up**: ``t_j = ceil(a_j / w)``. Then (i) the fine end is at least the
column's ``f``: ``t_j = 0`` means ``a_j = 0``, ``t_j >= 1`` means
``a_j >= (t_j - 1) w + 1``; (ii) the job covers windows ``t_j .. t_j + D - 1``
entirely: ``[a_j, e_j)`` covers every window ``K`` with
``ceil(a_j / w) <= K < floor(e_j / w)``, and
``floor(e_j / w) >= floor((a_j + d) / w) >= t_j + D`` since
``a_j > (t_j - 1) w`` — that is the duration rounded **down** to the windows
a job certainly fills, whatever its offset (rounding it up, ``ceil(d / w)``,
would charge capacity the job may not use and is not a relaxation). (iii) If
``t_j`` lies beyond a pair's last column (only when ``D = 0``: a column that
covers no window), move it to the last one: that lowers ``f`` and uses no
capacity. Set ``x = 1`` on these columns and ``y[K] = z_K / w`` with
``z_K = min(w, max(0, T* - K w))``, the part of window ``K`` before the
makespan. Then ``w sum_K y[K] = T*``; ``y`` is non-increasing; a job that
covers window ``K`` ends by ``T*``, so ``T* >= (K + 1) w`` and ``y[K] = 1``,
and the GPUs busy throughout ``K`` are at most those of the cluster and of
each class (the fine capacities; the class rows aggregate the servers of a
class, a relaxation); a job of end ``e_j >= f`` forces
``z_K >= min(w, max(0, f - K w))``, the tail row. So every optimal
schedule maps to a feasible point of value ``T*``, and the LP optimum
``v <= T*``. ``T*`` is an integer: ``T* >= ceil(v - eps)``, with
``eps = 1e-6 max(1, v)`` for the LP's tolerances; the method reports the
maximum of that and the closed forms of
:func:`~ddlsched.models.rar_bounds.closed_form_bounds` (``info['lp_bound']``
is the LP's part alone).

**Horizon probes (ours).** The argument holds for *any* ``H``: if
``T* <= H`` the LP is feasible and ``T* >= ceil(v)``; if ``T* > H`` then
``T* >= H + 1 > v`` (``v <= H``: the last ``y`` is capped at the share of
its window before ``H``). So an LP on ``H`` gives ``ceil(v)`` when feasible
and ``H + 1`` when infeasible, both valid. ``horizon='auto'`` first solves
on ``H`` = the best closed form (few columns: only those ending by ``H``);
feasible, the LP cannot beat the closed forms and the method stops;
infeasible, it gallops up (``H + 1``, ``H + 2``, ``H + 4``, ...) while the LP
stays infeasible, then bisects up to the smallest horizon known to be
feasible (at worst the LS/FF makespan ``U``: any schedule of makespan ``U``
maps into the LP), while time remains (``info['probes']``).

**What it dominates.** Summing the cluster rows: ``N v / w >= sum_j G_j
min_k D_jk``; at ``w = 1``, ``D = d >= rho_min``, so ``lp_bound >=`` the
closed form ``gpu_time``. Summing the tail rows of one job over ``K``:
``v >= sum x f >= min_k d_jk >= rho_min_j``, so ``lp_bound >=``
``longest_job`` at every ``w``. It also dominates the LP of ``lp_rounding``
(:mod:`ddlsched.models.rar_rounding`, rows ``C >= sum f x`` only, the same
columns): the tail rows of a job sum to its row there. The
``tests/test_rar_lb_timeindexed.py`` assert the first two.

**Grid (ours).** ``slot_width='auto'``: the finest width of
:func:`~ddlsched.models.rar_timegrid._widths` (1..10, then about 25 % apart)
whose direct build fits the memory budget (``memory_mb``, default the
process's budget, :func:`ddlsched.memory.budget_bytes`; bytes per nonzero
and per column measured, :data:`DIRECT_BYTES_PER_NONZERO`) and whose LP,
at :data:`LP_NONZEROS_PER_S`, fits :data:`SOLVE_SHARE` of the time planned
for the method (``Deadline.plan_s``: the time limit, not what a loaded
machine left of it, so that the same instance and limit give the same grid
everywhere); if none fits the time, the coarsest width that fits memory. ``build='auto'``:
the Pyomo model (the statement of record, solved on ``backend``) when its
nonzeros are at most :data:`PYOMO_MAX_NONZEROS`, else the direct highspy
build (:mod:`ddlsched.models.rar_lb_direct`, the same LP). An LP the time
limit stops gives no bound of its own: the closed forms remain
(``info['lp_status']``). The pure-Python preparation (the model horizon's
heuristic, the pattern catalogue, the columns of each width) runs under
:meth:`~ddlsched.deadline.Deadline.interrupting`: a limit that cuts it
leaves the closed forms (``time_limit_hit``, ``info['stopped']``).
"""

from __future__ import annotations

import math
import time
from typing import Any

import pyomo.environ as pyo

from ddlsched.deadline import Deadline
from ddlsched.errors import DdlschedError, ModelTooLargeError, TimeLimitReached
from ddlsched.memory import budget_bytes, format_bytes
from ddlsched.models.rar_bounds import closed_form_bounds
from ddlsched.models.rar_lb_columns import (
    LbColumns,
    build_pyomo_lb,
    direct_size,
    lb_columns,
    pyomo_size,
)
from ddlsched.models.rar_lb_direct import build_direct_lb
from ddlsched.models.rar_patterns import pattern_catalogue
from ddlsched.models.rar_timegrid import AUTO, _widths, model_horizon
from ddlsched.problems.rar import RarInstance
from ddlsched.solvers.backends import SolveLimits, solve_model
from ddlsched.solvers.result import Outcome, Status

__all__ = [
    "DIRECT_BYTES_PER_NONZERO",
    "LP_NONZEROS_PER_S",
    "PYOMO_MAX_NONZEROS",
    "choose_lb_grid",
    "lb_timeindexed",
    "lp_bound_from_value",
    "solve_direct",
    "solve_lb_lp",
    "solve_pyomo",
]

#: Peak bytes per nonzero of the direct build, HiGHS's copy and its solve included
#: (paper preset seed 2: 244 MB at 0.41 M nonzeros, 361 MB at 0.81 M, ~0.1 GB of it the
#: interpreter and Pyomo; rounded up).
DIRECT_BYTES_PER_NONZERO = 300
#: Peak bytes per column of the direct build (bounds, costs, HiGHS's factor and basis).
DIRECT_BYTES_PER_COLUMN = 300
#: Nonzeros of the direct LP HiGHS's interior point solves per second (paper preset: 0.41 M
#: in 33 s, 0.81 M in 95 s, 0.89-0.96 M in 165-199 s on a 2-core machine at load 10; rounded down).
LP_NONZEROS_PER_S = 4_000
#: HiGHS's LP algorithm for the direct build (dual simplex did not finish the 0.81 M-nonzero
#: LP in 300 s; the interior point with crossover did in 95 s).
DIRECT_SOLVER = "ipm"
#: Share of the planned time the LP's estimated solve time may take when the width is chosen.
SOLVE_SHARE = 0.6
#: Largest model built through Pyomo with ``build='auto'`` (above: the direct build).
PYOMO_MAX_NONZEROS = 200_000


def lp_bound_from_value(value: float) -> float:
    """``ceil(v - eps)``, ``eps = 1e-6 max(1, v)``: the integral makespan bound of an LP value."""
    return float(math.ceil(value - 1e-6 * max(1.0, abs(value))))


def choose_lb_grid(
    instance: RarInstance,
    catalogue,
    horizon: int,
    slot_width: int | str,
    memory_bytes: int,
    seconds: float,
) -> tuple[LbColumns, dict[str, Any]]:
    """The LP's columns on the chosen grid and what decided it (module docstring, "Grid").

    Raises :class:`~ddlsched.errors.ModelTooLargeError` when not even the
    coarsest width fits ``memory_bytes``.
    """
    widths = _widths(horizon) if slot_width == AUTO else [int(slot_width)]
    fallback = None
    for w in widths:
        cols = lb_columns(instance, catalogue, w, horizon)
        columns, rows, nonzeros = direct_size(cols)
        need = nonzeros * DIRECT_BYTES_PER_NONZERO + columns * DIRECT_BYTES_PER_COLUMN
        if need > memory_bytes:
            continue
        estimate_s = nonzeros / LP_NONZEROS_PER_S
        info = {
            "slot_width": w,
            "model_horizon": horizon,
            "direct_size": {"columns": columns, "rows": rows, "nonzeros": nonzeros},
            "estimated_bytes": need,
            "estimated_solve_s": estimate_s,
            "memory_budget_bytes": memory_bytes,
            "grid_within_time": estimate_s <= SOLVE_SHARE * seconds,
        }
        if info["grid_within_time"] or slot_width != AUTO:
            return cols, info
        fallback = (cols, info)  # the coarsest width that fits memory so far
    if fallback is not None:
        return fallback[0], {**fallback[1]}
    raise ModelTooLargeError(
        f"rar lb_timeindexed LP: no slot width of {widths[0]}..{widths[-1]} fits the memory "
        f"budget {format_bytes(memory_bytes)} (raise --memory-budget or --param slot_width)"
    )


def solve_direct(cols: LbColumns, deadline: Deadline) -> tuple[str, float | None, dict[str, Any]]:
    """The LP built directly and solved by highspy (interior point, crossover on):
    ``(status, optimum or None, info)``, status ``optimal``, ``infeasible`` or ``stopped``."""
    from ddlsched.solvers.highs_lp import HighsLp

    if not deadline.remaining_s() > 1e-3:
        return "stopped", None, {"build": "direct", "lp_status": "no time left for the build"}
    started = time.perf_counter()
    lp = build_direct_lb(cols)
    built = time.perf_counter()
    info: dict[str, Any] = {"build": "direct", "build_s": built - started}
    seconds = deadline.remaining_s()
    if not seconds > 1e-3:
        return "stopped", None, {**info, "lp_status": "no time left for the solve"}
    solver = HighsLp({"time_limit": seconds, "presolve": "on", "solver": DIRECT_SOLVER})
    value = None
    try:
        solver.solve(
            lp.cost, lp.matrix, lp.row_upper, lp.row_lower, col_upper=lp.col_upper, what="LP"
        )
        value = solver.objective_value
    except DdlschedError:
        pass
    info["lp_status"] = solver.model_status
    info["solve_s"] = time.perf_counter() - built
    return (
        _status(solver.model_status == "Optimal", solver.model_status == "Infeasible"),
        value,
        info,
    )


def _status(optimal: bool, infeasible: bool) -> str:
    return "optimal" if optimal else "infeasible" if infeasible else "stopped"


def solve_pyomo(
    cols: LbColumns, backend: str, limits: SolveLimits, deadline: Deadline
) -> tuple[str, float | None, dict[str, Any]]:
    """The Pyomo model solved on ``backend``: ``(status, optimum or None, info)``."""
    started = time.perf_counter()
    info: dict[str, Any] = {"build": "pyomo"}
    try:
        with deadline.interrupting("building the lb_timeindexed LP"):
            model = build_pyomo_lb(cols)
    except TimeLimitReached as exc:
        return "stopped", None, {**info, "lp_status": str(exc)}
    info["build_s"] = time.perf_counter() - started
    solve = solve_model(model, backend, limits, deadline)
    info["lp_status"] = str(solve.status)
    info["solve_s"] = solve.runtime_s
    info["backend"] = solve.backend
    optimal = solve.status is Status.OPTIMAL
    value = float(pyo.value(model.obj)) if optimal else None
    return _status(optimal, solve.status is Status.INFEASIBLE), value, info


def solve_lb_lp(
    cols: LbColumns, build: str, backend: str, limits: SolveLimits, deadline: Deadline
) -> tuple[str, float | None, dict[str, Any]]:
    """One LP on ``cols``, Pyomo or direct (``build``, module docstring); a job without a
    column makes it infeasible without a solve."""
    missing = cols.jobs_without_column()
    if missing:
        return "infeasible", None, {"lp_status": f"job {missing[0]} has no column ending by H"}
    if build == "direct" or (build == AUTO and pyomo_size(cols)[1] > PYOMO_MAX_NONZEROS):
        return solve_direct(cols, deadline)
    return solve_pyomo(cols, backend, limits, deadline)


def lb_timeindexed(
    instance: RarInstance,
    *,
    backend: str = "highs",
    limits: SolveLimits | None = None,
    slot_width: int | str = AUTO,
    max_patterns: int = 64,
    memory_mb: float | str = AUTO,
    build: str = AUTO,
    horizon: int | str = AUTO,
    deadline: Deadline | None = None,
) -> Outcome:
    """The LP bound of the module docstring (kind ``bound``: no schedule); ``horizon`` an
    integer: one LP on it; ``'auto'``: the probes of the module docstring."""
    if build not in (AUTO, "pyomo", "direct"):
        raise ValueError(f"build must be 'auto', 'pyomo' or 'direct', got {build!r}")
    limits = limits or SolveLimits()
    deadline = deadline or limits.deadline()
    memory = budget_bytes() if memory_mb == AUTO else int(float(memory_mb) * 2**20)
    closed = closed_form_bounds(instance)
    known = int(max(closed.values()))  # T* >= known
    try:
        with deadline.interrupting("preparing the lb_timeindexed LP"):
            upper, horizon_from = model_horizon(instance, None, "free", deadline)
            catalogue = pattern_catalogue(instance, max_patterns, "free", deadline)
    except TimeLimitReached as exc:
        return _closed_forms_only(closed, str(exc))
    H = min(known, upper) if horizon == AUTO else int(horizon)
    probes: list[dict[str, Any]] = []
    lp_bound = None
    feasible_seen, step = False, 1
    while True:
        try:
            with deadline.interrupting("choosing the lb_timeindexed grid"):
                cols, grid = choose_lb_grid(
                    instance, catalogue, H, slot_width, memory, deadline.plan_s
                )
        except TimeLimitReached as exc:
            if not probes:
                return _closed_forms_only(closed, str(exc))
            probes[-1]["status"] = "stopped"  # the next probe's grid: the probes end here
            probes[-1]["stopped"] = str(exc)
            break
        status, value, solved = solve_lb_lp(cols, build, backend, limits, deadline)
        probes.append({"horizon": H, "status": status, "lp_value": value, **grid, **solved})
        if status == "optimal":  # T* <= H: T* >= ceil(v); T* > H >= v: the same
            lp_bound = max(lp_bound or 0.0, lp_bound_from_value(value))
            upper = H
        elif status == "infeasible":  # no schedule ends by H
            lp_bound = max(lp_bound or 0.0, float(H + 1))
        lower = int(max(known, lp_bound or 0.0))  # T* >= lower
        if horizon != AUTO or status == "stopped" or lower >= upper:
            break
        feasible_seen = feasible_seen or status == "optimal"
        step *= 2
        # gallop up from the closed form (lower, lower + 1, + 3, ...) while infeasible, then
        # bisect: T* >= lower, the LP is feasible at upper
        gallop = lower - 1 + step // 2
        H = gallop if not feasible_seen and gallop < upper else (lower + upper) // 2
    info: dict[str, Any] = {
        "closed_form_bounds": closed,
        "lp_bound": lp_bound,
        "model_horizon": upper,
        "horizon_from": horizon_from,
        "pooled_jobs": list(catalogue.pooled),
        "probes": probes,
        **{k: probes[-1][k] for k in ("slot_width", "lp_value", "lp_status")},
    }
    if lp_bound is not None and lp_bound > instance.horizon:
        info["reason"] = f"no schedule finishes within the horizon T = {instance.horizon}"
        return Outcome(None, Status.INFEASIBLE, info=info)
    outcome = Outcome(
        None, Status.BOUND_ONLY, bound=float(max(lp_bound or 0.0, *closed.values())), info=info
    )
    outcome.backend = probes[-1].get("backend", "highs")
    outcome.solver_time_s = sum(p.get("solve_s", 0.0) for p in probes)
    size = probes[-1]["direct_size"]
    outcome.model_size = (size["columns"], 0, size["rows"])
    outcome.time_limit_hit = probes[-1]["status"] == "stopped"
    if outcome.time_limit_hit:
        info["stopped"] = probes[-1].get("stopped") or f"the LP: {probes[-1]['lp_status']}"
    return outcome


def _closed_forms_only(closed: dict[str, float], why: str) -> Outcome:
    """The closed-form bounds alone: the limit cut the preparation before any LP."""
    info: dict[str, Any] = {
        "closed_form_bounds": closed,
        "lp_bound": None,
        "probes": [],
        "lp_status": "not solved",
        "stopped": why,
    }
    outcome = Outcome(None, Status.BOUND_ONLY, bound=float(max(closed.values())), info=info)
    outcome.time_limit_hit = True
    return outcome
