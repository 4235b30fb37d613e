"""Configuration-LP lower bound of RAR-DDLS (``lb_configuration``; a bound of ours).

The other rar bounds see a job's ``G_j`` GPUs one at a time: ``gpu_time``
and Problem (14) spread GPU time like a fluid, ``lb_binpacking``
(:mod:`ddlsched.models.rar_lb_binpacking`) packs ``G_j`` independent items
into GPU bins of a class. None sees that a gang's GPUs are busy *at the same
moment on the same servers*: that two 3-GPU rings never share a 4-GPU
server, whatever the time. This bound is a preemptive relaxation over
*configurations*, the sets of rings that can run side by side.

**Configurations.** A configuration ``c`` is a set of jobs, each either
*whole* on one server (a server of ``O_s >= G_j`` GPUs) or *split*, such that
the whole jobs of every server use at most its ``O_s`` GPUs and all jobs of
``c`` together at most the cluster's ``N`` GPUs. In every slot ``t`` of a
schedule, the jobs running form a configuration: each runs on its own
``G_j`` GPUs (spec ``rar.md``: one set of GPUs for its whole execution, no
GPU shared), a ring inside one server is whole there, and every other ring is
split. (A split job's GPUs lie on servers too; the relaxation only counts
them against ``N``, so it admits more configurations than schedules use.)

**Rates.** A job keeps its GPUs for its whole run (spec ``rar.md``), so it
runs whole for all of it or split for all of it. Whole on one server its
``tau_j`` (Eq. 8 with ``n_j = 1``: bandwidth ``b_i``, no contention term) is
the same in every slot, so it runs exactly ``rho_j^whole = rho_j(1, 0)``
slots (Eq. 9, ``execution_slots``). Split, ``tau_j`` is non-decreasing in
``n_j`` (``xi_2 n_j``) and in ``p_j`` (Eqs. 6-8), the ring spans
``n_j >= max(2, n_min_j)`` servers (``n_min_j``: the fewest that hold
``G_j`` GPUs) and ``p_j >= 1`` (Eq. 6 counts ``j`` itself), so every slot
does at most the iterations of ``tau_j(max(2, n_min_j), 1)`` and the run
lasts at least ``rho_j^split = rho_j(max(2, n_min_j), 1)`` slots (an
integer: whole slots at that rate, the evaluator's completion rule).
Either way a run of ``D_j`` slots in mode ``m`` has ``D_j >= rho_j^m``.
Give job ``j`` the rate ``r_j(c) = 1 / rho_j^m`` in a configuration ``c``
where it runs in mode ``m``; with ``x_c`` the number of slots of a schedule
whose running set is ``c``:

    sum_c x_c r_j(c) = D_j / rho_j^m >= 1   for every job j,
    sum_c x_c <= makespan.

Contention above ``p = 1`` and the extra servers of a wide split only
lengthen a run, which the inequality allows. (Counting each slot at
``1 / rho`` is what a run in *one* mode guarantees; the LP below lets a job
mix modes and slots, a relaxation.)

**The LP.** ``T_LP = min sum_c x_c`` subject to ``sum_c r_j(c) x_c >= 1``,
``x >= 0`` (a slot with no job is the empty configuration, which costs and
gives nothing) is therefore at most the makespan of every schedule, and
``ceil(T_LP - 1e-6)`` is a lower bound of the optimal makespan (slots are
integral). It sees per slot what ``gpu_time`` sees only on average (``N``
GPUs) and what ``lb_binpacking`` cannot see (the servers' GPUs shared by
whole rings at one moment; a DFF bound on the GPU dimension,
``sum_j rho_j f(G_j / N)``, is one dual solution of this LP, so it is not
computed apart). It drops what makes a schedule rigid in time:
non-preemption and fixed placements (a job may change configuration at every
slot) and the packing of whole runs on one GPU, which ``lb_binpacking``
keeps; the two bounds are incomparable (measured on the ``small`` and
``contention`` presets: ``benchmarks/rar_lb_configuration.py``).

**Column generation.** The restricted master holds some configurations; its
dual ``max sum_j pi_j`` s.t. ``sum_j r_j(c) pi_j <= 1`` over them gives prices
``pi >= 0``. The pricing problem ``v*(pi) = max_c sum_j pi_j r_j(c)`` is a
MILP (:func:`price`): binaries for whole job ``j`` on server ``s``
(``G_j >= 2``; 1-GPU jobs and split jobs only count against ``N``, because
1-GPU rings fill any GPU left on a server), a capacity row per server and
for ``N``, at most one place per job, and loads non-increasing along the
servers of one size (every configuration has a copy in that order).

*Farley's bound.* For any prices ``pi >= 0``, ``pi / max(1, v*(pi))`` is
feasible for the dual of the full LP, so ``sum_j pi_j / max(1, v_up)`` is a
valid bound whenever ``v_up >= v*(pi)``: HiGHS's optimum plus its absolute
gap (``1e-6``), or its dual bound when the node budget (``pricing_nodes``,
HiGHS's ``mip_max_nodes``) or the limit stopped the MILP. The prices need
not be the master's exact optimum. The first bound comes free:
:func:`area_prices` (``pi_j = G_j rho_j / N``, every configuration worth at
most 1) give ``gpu_time``; likewise a DFF bound on the GPU dimension,
``sum_j rho_j f(G_j / N)``, is Farley's bound at ``pi_j = rho_j f(G_j / N)``,
so this LP is never below it and it is not computed apart.

*Rounds.* Each round prices at Wentges-smoothed prices (0.7 of the best
prices so far, 0.3 of the master's; the master's own after a round that found
no column improving the master), adds the configuration found if it improves
the master, and keeps the best Farley bound. The method ends when the
master's value, rounded up, is the bound's (``converged``: the LP has no
more whole slot to give), when the pricing at the master's prices proves
``v* <= 1`` (the master is optimal) or finds no improving configuration
within its node budget, after ``rounds`` pricing MILPs (the
budget: the same rounds and nodes give the same bound on any machine) or at
the time limit (``stopped``); the best bound so far stands in every case.

The master starts from one column per job (alone, at its fastest rate) and a
greedy preemptive solution of the relaxation (longest remaining time first,
first fit on the servers, each configuration until one of its jobs is done),
so its value starts near the LP's. On the ``paper`` preset that greedy
solution already costs ``ceil(gpu_time)`` on every instance of Figs. 4 and 6
(0 rounds; the bound equals ``gpu_time`` or ``longest_job``): power-of-two
rings on power-of-two servers fill every GPU at every moment once runs may
be cut.

The bound reported is the maximum of that bound and the closed forms
(``longest_job``, ``gpu_time``): valid for any contention and ``<=`` the
optimum (tests: brute force on tiny instances, the exact search's proven
optima on ``small`` and ``contention`` instances).
"""

from __future__ import annotations

import itertools
import logging
import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ddlsched.deadline import Deadline
from ddlsched.errors import DdlschedError, InvalidInstanceError
from ddlsched.models.rar_bounds import closed_form_bounds
from ddlsched.problems.rar import RarInstance
from ddlsched.problems.rar_timing import execution_slots, max_servers, min_servers
from ddlsched.solvers.result import Outcome, Status, mark_stopped

__all__ = [
    "ConfigurationRates",
    "PricingAnswer",
    "area_prices",
    "configuration_bound",
    "configuration_rates",
    "lb_configuration",
    "price",
]

log = logging.getLogger(__name__)

#: Pricing value at or below ``1 + _OPTIMAL_TOL``: the restricted master is optimal.
_OPTIMAL_TOL = 1e-9

#: HiGHS's default ``mip_abs_gap``: an "optimal" pricing value may lie this far below v*.
_MIP_ABS_GAP = 1e-6

#: Slack before rounding the LP bound up to whole slots.
_ROUND_TOL = 1e-6

#: Default budget of column-generation rounds (pricing MILPs).
DEFAULT_ROUNDS = 50

#: Default branch-and-bound node budget of one pricing MILP (HiGHS ``mip_max_nodes``).
DEFAULT_PRICING_NODES = 1000

#: Wentges smoothing: the pricing prices are this share of the best prices so far.
_SMOOTHING = 0.7


@dataclass(frozen=True)
class ConfigurationRates:
    """Per job, its GPUs and its rates ``1 / rho_j`` (module docstring, "Rates").

    ``whole[j]``: on one server (``None``: no server holds ``G_j`` GPUs);
    ``split[j]``: on two servers or more (``None``: the job cannot span two
    servers or never progresses there). ``servers``: ``O_s`` per server.
    """

    gpus: tuple[int, ...]
    whole: tuple[float | None, ...]
    split: tuple[float | None, ...]
    servers: tuple[int, ...]

    @property
    def num_gpus(self) -> int:
        """``N``: GPUs of the cluster."""
        return sum(self.servers)


def _rate(job, instance: RarInstance, num_servers: int, contention: int) -> float | None:
    """``1 / rho_j(n_j, p_j)``: the share of job ``j`` counted per slot (``None``: no progress)."""
    slots = execution_slots(job, instance.network, num_servers, contention, instance.progress)
    return None if math.isinf(slots) else 1.0 / slots


def configuration_rates(instance: RarInstance) -> ConfigurationRates:
    """The rates of the relaxation (module docstring, "Rates")."""
    whole: list[float | None] = []
    split: list[float | None] = []
    biggest = max(instance.servers)
    for job in instance.jobs:
        whole.append(_rate(job, instance, 1, 0) if job.gpus <= biggest else None)
        spread = max(2, min_servers(job, instance.servers))
        fits = job.gpus >= 2 and spread <= max_servers(job, instance.servers)
        split.append(_rate(job, instance, spread, 1) if fits else None)
        if whole[-1] is None and split[-1] is None:
            raise InvalidInstanceError(f"job {job.id!r} never progresses on any placement")
    return ConfigurationRates(
        tuple(job.gpus for job in instance.jobs), tuple(whole), tuple(split), instance.servers
    )


@dataclass(frozen=True)
class PricingAnswer:
    """What one pricing solve found.

    ``column``: job index -> its rate in the best configuration found
    (``None`` if none); ``value``: that configuration's priced value;
    ``upper``: a proven upper bound of ``v*`` (``inf`` if none);
    ``optimal``: HiGHS proved ``value = v*``.
    """

    column: dict[int, float] | None
    value: float
    upper: float
    optimal: bool


def _pricing_arrays(rates: ConfigurationRates, prices: np.ndarray):
    """Columns ``(job, rate, server or -1)`` and the MILP's arrays (:func:`price`)."""
    servers = rates.servers
    columns: list[tuple[int, float, int]] = []
    for j, gpus in enumerate(rates.gpus):
        if prices[j] <= 0:
            continue
        whole, split = rates.whole[j], rates.split[j]
        if whole is not None and gpus == 1:
            columns.append((j, whole, -1))  # a 1-GPU ring fills any free GPU
        elif whole is not None:
            columns.extend((j, whole, s) for s, cap in enumerate(servers) if cap >= gpus)
        if split is not None:  # not dominated: it needs room on no single server
            columns.append((j, split, -1))
    jobs = sorted({j for j, _, _ in columns})
    job_row = {j: r for r, j in enumerate(jobs)}
    server_row = {s: len(jobs) + s for s in range(len(servers))}
    total_row = len(jobs) + len(servers)
    order = sorted(range(len(servers)), key=lambda s: (servers[s], s))
    symmetry = [(a, b) for a, b in itertools.pairwise(order) if servers[a] == servers[b]]
    sym_row = {pair: total_row + 1 + k for k, pair in enumerate(symmetry)}
    rows, cols, vals = [], [], []
    cost = []
    for col, (j, rate, s) in enumerate(columns):
        cost.append(prices[j] * rate)
        gpus = rates.gpus[j]
        entries = [(job_row[j], 1.0), (total_row, float(gpus))]
        if s >= 0:
            entries.append((server_row[s], float(gpus)))
            for (a, b), row in sym_row.items():
                if s == a:
                    entries.append((row, float(gpus)))
                elif s == b:
                    entries.append((row, -float(gpus)))
        for row, value in entries:
            rows.append(row)
            cols.append(col)
            vals.append(value)
    num_rows = total_row + 1 + len(symmetry)
    row_lower = np.full(num_rows, -np.inf)
    row_upper = np.concatenate(
        [
            np.ones(len(jobs)),
            np.array(servers, dtype=float),
            [float(rates.num_gpus)],
            np.full(len(symmetry), np.inf),
        ]
    )
    row_lower[total_row + 1 :] = 0.0
    matrix = sp.csc_matrix((vals, (rows, cols)), shape=(num_rows, len(columns)))
    return columns, np.array(cost, dtype=float), matrix, row_lower, row_upper


def price(
    rates: ConfigurationRates,
    prices: np.ndarray,
    max_nodes: int = DEFAULT_PRICING_NODES,
    time_limit_s: float = math.inf,
) -> PricingAnswer:
    """``max_c sum_j prices_j r_j(c)`` over configurations (module docstring, pricing MILP).

    Solved by HiGHS (in its worker process under a finite limit); a limit
    that stops it leaves HiGHS's dual bound as ``upper``."""
    import highspy

    from ddlsched.solvers.highs_lp import DEFAULT_OPTIONS
    from ddlsched.solvers.highs_server import MipArrays, solve_mip

    columns, cost, matrix, row_lower, row_upper = _pricing_arrays(rates, prices)
    if not columns:
        return PricingAnswer({}, 0.0, 0.0, True)
    matrix = matrix.tocsc()
    matrix.sort_indices()
    mip = MipArrays(
        cost=cost,
        col_lower=np.zeros(len(columns)),
        col_upper=np.ones(len(columns)),
        row_lower=row_lower,
        row_upper=row_upper,
        start=matrix.indptr.astype(np.int32),
        index=matrix.indices.astype(np.int32),
        value=matrix.data.astype(float),
        integer=np.ones(len(columns), dtype=bool),
        maximize=True,
        options=tuple({**DEFAULT_OPTIONS, "presolve": "on", "mip_max_nodes": max_nodes}.items()),
    )
    run = solve_mip(mip, time_limit_s)
    optimal = not run.killed and run.model_status == highspy.HighsModelStatus.kOptimal
    column = None
    value = 0.0
    if run.primal_valid and run.col_value is not None:
        chosen = [k for k, x in enumerate(run.col_value) if x > 0.5]
        column = {columns[k][0]: columns[k][1] for k in chosen}
        value = float(sum(cost[k] for k in chosen))
    if optimal:  # HiGHS's absolute gap (1e-6) on top: v* is proven below ``upper``
        upper = max(value, float(run.objective), float(run.mip_dual_bound)) + _MIP_ABS_GAP
    elif run.killed or not math.isfinite(run.mip_dual_bound):
        upper = math.inf
    else:
        upper = float(run.mip_dual_bound) + _MIP_ABS_GAP
    return PricingAnswer(column, value, upper, optimal)


def _greedy_configuration(
    rates: ConfigurationRates, order: list[int], left: np.ndarray
) -> dict[int, float]:
    """Jobs of ``order`` (those with work ``left``) into one configuration, first fit.

    Whole on the fullest server with room when it has a whole rate (the
    faster mode first), else split on GPUs free anywhere; 1-GPU jobs last."""
    free = list(rates.servers)
    total = rates.num_gpus
    column: dict[int, float] = {}
    for j in order:
        gpus, whole, split = rates.gpus[j], rates.whole[j], rates.split[j]
        if left[j] <= 0 or gpus > total:
            continue
        modes = sorted(
            (r, kind) for r, kind in ((whole, "whole"), (split, "split")) if r is not None
        )[::-1]
        for rate, kind in modes:
            if kind == "whole":
                fits = [s for s in range(len(free)) if free[s] >= gpus]
                if not fits:
                    continue
                server = min(fits, key=lambda s: (free[s], s))
                free[server] -= gpus
            else:  # split: take the GPUs from the emptiest servers
                need = gpus
                for server in sorted(range(len(free)), key=lambda s: (-free[s], s)):
                    take = min(need, free[server])
                    free[server] -= take
                    need -= take
                    if not need:
                        break
            total -= gpus
            column[j] = rate
            break
    return column


def _initial_columns(rates: ConfigurationRates) -> list[dict[int, float]]:
    """The master's first columns: each job alone (the master is feasible), then a
    greedy preemptive schedule (longest remaining time first, first fit; each
    configuration runs until one of its jobs is done), so the master starts
    near the optimum of the LP instead of at the sum of all durations."""
    num_jobs = len(rates.gpus)
    out = []
    for j in range(num_jobs):
        best = max(r for r in (rates.whole[j], rates.split[j]) if r is not None)
        out.append({j: best})
    left = np.ones(num_jobs)  # share of each job's work not yet scheduled
    fastest = np.array([out[j][j] for j in range(num_jobs)])
    for _ in range(num_jobs):
        if not (left > _OPTIMAL_TOL).any():
            break
        order = sorted(range(num_jobs), key=lambda j: (-left[j] / fastest[j], -rates.gpus[j], j))
        column = _greedy_configuration(rates, order, left)
        if not column:
            break
        length = min(left[j] / rate for j, rate in column.items())
        for j, rate in column.items():
            left[j] = 0.0 if left[j] <= length * rate + _OPTIMAL_TOL else left[j] - length * rate
        out.append(column)
    return out


def _master_dual(columns: list[dict[int, float]], num_jobs: int) -> tuple[np.ndarray, float]:
    """Prices ``pi`` of the restricted master: ``max sum pi`` s.t. ``sum_j r_jc pi_j <= 1``."""
    from ddlsched.solvers.highs_lp import HighsLp

    rows, cols, vals = [], [], []
    for c, column in enumerate(columns):
        for j, rate in column.items():
            rows.append(c)
            cols.append(j)
            vals.append(rate)
    matrix = sp.csc_matrix((vals, (rows, cols)), shape=(len(columns), num_jobs))
    lp = HighsLp({"presolve": "on"})
    prices = lp.solve(
        np.ones(num_jobs), matrix, np.ones(len(columns)), maximize=True, what="configuration LP"
    )
    return np.clip(prices, 0.0, None), float(lp.objective_value)


def area_prices(rates: ConfigurationRates) -> np.ndarray:
    """``pi_j = G_j / (N r_max_j)``: prices whose every configuration is worth ``<= 1``.

    A configuration's jobs use at most ``N`` GPUs and run at most at their
    fastest rate ``r_max_j``, so ``sum_j pi_j r_j(c) <= sum_{j in c} G_j / N <= 1``:
    Farley's bound at these prices is ``sum_j pi_j``, the fractional ``gpu_time``."""
    fastest = [
        max(r for r in pair if r is not None) for pair in zip(rates.whole, rates.split, strict=True)
    ]
    return np.array(rates.gpus, dtype=float) / (rates.num_gpus * np.array(fastest))


def _gain(column: dict[int, float], prices: np.ndarray) -> float:
    return sum(prices[j] * rate for j, rate in column.items())


def configuration_bound(
    rates: ConfigurationRates,
    *,
    rounds: int = DEFAULT_ROUNDS,
    pricing_nodes: int = DEFAULT_PRICING_NODES,
    deadline: Deadline | None = None,
) -> dict:
    """Stabilised column generation on the configuration LP (module docstring).

    Returns ``lp_bound`` (the best Farley bound, in slots, not rounded),
    ``master`` (the last restricted master's value, an upper end of the LP;
    ``None`` if the limit came before the first),
    ``rounds`` done (pricing MILPs), ``converged`` (the master's value rounded
    up is the bound's: the LP has nothing more to give), ``columns`` and
    ``stopped`` (what the limit cut, or ``''``).
    """
    deadline = deadline or Deadline.unlimited()
    columns = _initial_columns(rates)
    seen = {tuple(sorted(c.items())) for c in columns}
    center = area_prices(rates)
    best = float(center.sum())
    smoothing = _SMOOTHING
    master = math.inf
    done = 0
    converged = False
    stopped = ""
    while True:
        if deadline.expired():
            stopped = f"column generation after {done} rounds"
            break
        prices, master = _master_dual(columns, len(rates.gpus))
        if math.ceil(best - _ROUND_TOL) >= math.ceil(master - _ROUND_TOL):
            converged = True
            break
        if done >= rounds:
            break
        trial = smoothing * center + (1.0 - smoothing) * prices
        answer = price(rates, trial, pricing_nodes, deadline.remaining_s())
        done += 1
        if math.isfinite(answer.upper) and trial.sum() / max(1.0, answer.upper) > best:
            best = float(trial.sum()) / max(1.0, answer.upper)
            center = trial / max(1.0, answer.upper)
        log.debug(
            "configuration LP round %d: master %.4f, smoothing %.2f, pricing %.6f "
            "(up to %.6f), bound %.4f",
            done,
            master,
            smoothing,
            answer.value,
            answer.upper,
            best,
        )
        key = None if answer.column is None else tuple(sorted(answer.column.items()))
        if answer.column and key not in seen and _gain(answer.column, prices) > 1 + _OPTIMAL_TOL:
            seen.add(key)
            columns.append(answer.column)
            smoothing = _SMOOTHING
        elif smoothing > 0:
            smoothing = 0.0  # mis-priced: the next round prices at the master's own prices
        elif answer.upper <= 1.0 + _MIP_ABS_GAP + _OPTIMAL_TOL:  # nothing better at these
            best = max(best, float(prices.sum()) / max(1.0, answer.upper))
            converged = True
            break
        else:
            if not answer.optimal:
                stopped = f"the pricing MILP of round {done}" if deadline.expired() else ""
            break  # no improving configuration found within the pricing budget
    if math.isfinite(master):
        converged = converged or math.ceil(best - _ROUND_TOL) >= math.ceil(master - _ROUND_TOL)
    return {
        "lp_bound": best,
        "master": master if math.isfinite(master) else None,
        "rounds": done,
        "converged": converged,
        "stopped": stopped,
        "columns": len(columns),
    }


def lb_configuration(
    instance: RarInstance,
    *,
    rounds: int = DEFAULT_ROUNDS,
    pricing_nodes: int = DEFAULT_PRICING_NODES,
    deadline: Deadline | None = None,
) -> Outcome:
    """The configuration-LP bound (module docstring), at most ``rounds`` pricing MILPs
    of at most ``pricing_nodes`` branch-and-bound nodes each.

    ``info``: ``components`` (the closed forms and ``configuration``, the
    rounded LP bound), ``lp_bound`` (unrounded), ``master`` (the restricted
    master's last value), ``rounds``, ``converged`` (the LP was solved to
    optimality), ``columns``, and ``stopped`` when the limit cut it (the
    best bound of the rounds done stands).
    """
    deadline = deadline or Deadline.unlimited()
    closed = closed_form_bounds(instance)
    rates = configuration_rates(instance)
    try:
        result = configuration_bound(
            rates, rounds=rounds, pricing_nodes=pricing_nodes, deadline=deadline
        )
    except DdlschedError as exc:  # the master LP failed: the closed forms stand
        result = {"lp_bound": 0.0, "stopped": "", "error": str(exc)}
    lp_bound = result["lp_bound"]
    components = {**closed, "configuration": float(max(0, math.ceil(lp_bound - _ROUND_TOL)))}
    info = {"components": components, **{k: v for k, v in result.items() if k != "stopped"}}
    outcome = Outcome(None, Status.BOUND_ONLY, bound=float(max(components.values())), info=info)
    return mark_stopped(outcome, result["stopped"])
