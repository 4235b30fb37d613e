"""Algorithm 4 of PD-ORS for one job: ``theta(t, k)`` of every (slot, quanta), and its statistics.

Paper: Yu et al., IEEE TNSE 2022 (reading notes of the paper), Algorithm 4;
spec ``docs/families/dmlrs.md`` (PD-ORS, Algorithm 4 with the revised
internal case and rounding: the first reading idled workers and broke
capacity in almost every draw). :class:`SlotPlanner` answers, for one job at the current
prices and use, the cost ``theta(t, k)`` of ``k`` quanta in slot ``t``: the
cheaper of the internal case (:class:`~ddlsched.heuristics.dmlrs_slot.InternalCase`)
and the external case (the full LP for the bound and pruning, then the
rounding of :func:`~ddlsched.heuristics.dmlrs_rounding.round_external`, or
the exact ILP), or OASiS's subroutine; the two exact shortcuts, the dumps
and every choice of ours are described in :mod:`ddlsched.heuristics.pd_ors`,
which runs Algorithms 1-3 around it. :class:`PlannerStats` counts what
Algorithm 4 did over a run (``info``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ddlsched.deadline import Deadline
from ddlsched.errors import DdlschedError, InvalidInstanceError
from ddlsched.heuristics.dmlrs_rounding import REPAIR_STEPS, RoundingStats, round_external
from ddlsched.heuristics.dmlrs_slot import (
    InternalCase,
    OasisCase,
    SlotChoice,
    SlotData,
    SlotSolvers,
    lp_lower_bound,
)
from ddlsched.problems.dmlrs import DmlrsInstance, workers_needed
from ddlsched.problems.dmlrs_slot import SlotInstance

if TYPE_CHECKING:
    from ddlsched.heuristics.pd_ors import PdOrsSettings, PdOrsState

__all__ = ["CAPACITY_SLACK", "PRUNE_RTOL", "PlannerStats", "SlotPlanner"]

#: Relative slack of the exact shortcuts (module docstring of pd_ors): prune only when clearly
#: dominated.
PRUNE_RTOL = 1e-9
#: Slack on ``C - rho`` per candidate: ``CAPACITY_SLACK (C + 1)``.
CAPACITY_SLACK = 1e-12


def _fill_by_demand(
    demands: list[int],
    solve: Callable[[int], SlotChoice | None],
    theta: np.ndarray,
    choice: list[SlotChoice | None],
) -> None:
    """``theta[k]``, ``choice[k]`` for ``k = 1..q`` from ``solve(D_k)``, once per distinct
    ``D`` (quanta with the same worker count share one answer)."""
    cache: dict[int, SlotChoice | None] = {}
    for k, D in enumerate(demands, start=1):
        if D not in cache:
            cache[D] = solve(D)
        if cache[D] is not None:
            theta[k], choice[k] = cache[D].cost, cache[D]


@dataclass
class PlannerStats:
    """What Algorithm 4 did over a run: LPs, ILPs, roundings and their draws (``info``)."""

    lps_solved: int = 0
    lp_time_s: float = 0.0
    ilps_solved: int = 0
    ilp_time_s: float = 0.0
    ilp_rejected: int = 0
    lps_pruned: int = 0
    roundings: int = 0
    rounding_time_s: float = 0.0
    roundings_skipped: int = 0
    roundings_infeasible: int = 0
    roundings_shrunk: int = 0
    roundings_full: int = 0
    draws: int = 0
    covering: float = 0.0
    capacity_break: float = 0.0
    worker_cap_break: float = 0.0
    ps_break: float = 0.0
    infeasible_draws: int = 0
    infeasible_draws_unrepaired: int = 0
    repairs: dict[str, int] = field(default_factory=lambda: dict.fromkeys(REPAIR_STEPS, 0))
    g_min: float = math.inf
    g_max: float = -math.inf
    dumped: int = 0

    def add(self, rs: RoundingStats) -> None:
        self.roundings += 1
        self.roundings_infeasible += not rs.feasible
        self.roundings_shrunk += rs.lp == "shrunk"
        self.roundings_full += rs.lp == "full"
        self.infeasible_draws_unrepaired += rs.draws - rs.feasible_draws_unrepaired
        for step, count in rs.repairs.items():
            self.repairs[step] += count
        self.draws += rs.draws
        self.covering += rs.covering_share * rs.draws
        self.capacity_break += rs.capacity_break_share * rs.draws
        self.worker_cap_break += rs.worker_cap_break_share * rs.draws
        self.ps_break += rs.ps_break_share * rs.draws
        self.infeasible_draws += rs.draws - rs.feasible_draws
        self.g_min = min(self.g_min, rs.g_delta)
        self.g_max = max(self.g_max, rs.g_delta)

    def info(self) -> dict[str, Any]:
        """The run's ``info`` entries of these statistics (shares over every draw)."""
        draws = self.draws
        share = (lambda x: x / draws) if draws else (lambda x: None)
        return {
            "lps_solved": self.lps_solved,
            "lp_time_s": self.lp_time_s,
            "lp_mean_time_s": self.lp_time_s / self.lps_solved if self.lps_solved else None,
            "lps_pruned": self.lps_pruned,
            "ilps_solved": self.ilps_solved,
            "ilp_time_s": self.ilp_time_s,
            "ilp_rejected": self.ilp_rejected,
            "roundings": self.roundings,
            "roundings_skipped": self.roundings_skipped,
            "roundings_infeasible": self.roundings_infeasible,
            "roundings_of_shrunk_lp": self.roundings_shrunk,
            "roundings_of_full_lp": self.roundings_full,
            "rounding_time_s": self.rounding_time_s,
            "draws": draws,
            "draws_per_lp": draws / self.roundings if self.roundings else None,
            "infeasible_draw_share": share(self.infeasible_draws),
            "infeasible_draw_share_unrepaired": share(self.infeasible_draws_unrepaired),
            "repairs": dict(self.repairs),
            "covering_share": share(self.covering),
            "capacity_break_share": share(self.capacity_break),
            "worker_cap_break_share": share(self.worker_cap_break),
            "ps_break_share": share(self.ps_break),
            "G_delta_min": self.g_min if self.roundings else None,
            "G_delta_max": self.g_max if self.roundings else None,
            "slot_problems_dumped": self.dumped,
        }


class SlotPlanner:
    """Algorithm 4 for every (slot, quanta) of one job (one call of
    :func:`ddlsched.heuristics.pd_ors.plan_job`): :meth:`slot` gives ``theta(t, k)``."""

    def __init__(
        self,
        instance: DmlrsInstance,
        i: int,
        state: PdOrsState,
        settings: PdOrsSettings,
        rng: np.random.Generator,
        solvers: SlotSolvers | None,
        deadline: Deadline,
        stats: PlannerStats,
        seed: int,
    ):
        self.instance, self.i, self.state, self.settings = instance, i, state, settings
        self.rng, self.solvers, self.deadline, self.stats, self.seed = (
            rng,
            solvers,
            deadline,
            stats,
            seed,
        )
        job = instance.jobs[i]
        self.job = job
        q = settings.quanta
        V = job.workload
        samples = [k * V / q for k in range(1, q + 1)]  # k quanta of V_i / q (real) samples
        self.d_ext = [workers_needed(job, v, instance.b_ext, instance.slot_s) for v in samples]
        self.d_int = [workers_needed(job, v, instance.b_int, instance.slot_s) for v in samples]
        self.alpha = instance.alpha[i]
        self.beta = instance.beta[i]
        self.slack = CAPACITY_SLACK * (instance.cap + 1.0)
        self.t = job.arrival_slot
        self._session: Any = None

    def slot_data(self, t: int) -> SlotData:
        """Problem (23)'s data of slot ``t`` at the current prices and use."""
        p = self.state.prices[:, :, t - 1]
        residual = np.maximum(self.instance.cap - self.state.rho[:, :, t - 1], 0.0)
        return SlotData(
            worker_price=p @ self.alpha,
            ps_price=p @ self.beta,
            alpha=self.alpha,
            beta=self.beta,
            residual=residual,
            gamma=self.job.gamma,
            max_workers=self.job.global_batch,
            slack=self.slack,
        )

    def slot(self, t: int) -> tuple[np.ndarray, list[SlotChoice | None]]:
        """``theta(t, k)`` for ``k = 0..q`` and the chosen allocations."""
        self.t = t
        q = self.settings.quanta
        data = self.slot_data(t)
        theta = np.full(q + 1, np.inf)
        theta[0] = 0.0
        choice: list[SlotChoice | None] = [None] * (q + 1)
        if self.settings.variant == "oasis":
            _fill_by_demand(self.d_ext, OasisCase(data).solve, theta, choice)
            return theta, choice
        _fill_by_demand(self.d_int, InternalCase(data, self.settings.internal).solve, theta, choice)
        groups: dict[int, list[int]] = {}
        for k in range(1, q + 1):
            groups.setdefault(self.d_ext[k - 1], []).append(k)
        self._session = None  # the (job, slot) LP, loaded on first use
        for D in sorted(groups):
            if self.job.global_batch < D:  # (25) contradicts (26)
                continue
            ks = groups[D]
            beat = max(theta[k] for k in ks)  # the external case must cost less than this
            if lp_lower_bound(data, D) >= beat * (1.0 + PRUNE_RTOL):
                self.stats.lps_pruned += 1
                continue
            ext = self._external(data, D, min(ks), beat)
            if ext is None:
                continue
            for k in ks:
                if ext.cost < theta[k]:  # ties: the internal case
                    theta[k], choice[k] = ext.cost, ext
        return theta, choice

    def _external(self, data: SlotData, D: int, k: int, beat: float) -> SlotChoice | None:
        """The external case for ``D`` (first quantum count ``k``), if it can beat ``beat``."""
        settings, stats = self.settings, self.stats
        assert self.solvers is not None
        args = (
            data.worker_price,
            data.ps_price,
            data.alpha,
            data.beta,
            data.residual,
            data.gamma,
            data.max_workers,
        )
        if settings.slot_solver == "ilp":
            self.deadline.check("PD-ORS slot ILPs")
            start = time.perf_counter()
            sol = self.solvers.ilp(*args, D, self.deadline.remaining_s())
            stats.ilp_time_s += time.perf_counter() - start
            stats.ilps_solved += 1
            if sol is None:
                return None
            w = np.rint(np.asarray(sol.w)).astype(np.int64)
            s = np.rint(np.asarray(sol.s)).astype(np.int64)
            ok = (
                data.fits(w, s)
                and D <= w.sum() <= data.max_workers
                and data.gamma * s.sum() >= w.sum()
            )
            if not ok:  # HiGHS's tolerances admitted a point our exact check refuses
                stats.ilp_rejected += 1
                return None
            machines = np.flatnonzero((w > 0) | (s > 0))
            cost = float(
                data.worker_price[machines] @ w[machines] + data.ps_price[machines] @ s[machines]
            )
            return SlotChoice(machines, w[machines], s[machines], cost, "ilp")
        if self._session is None:
            self._session = self.solvers.lp(*args)
        self.deadline.check("PD-ORS slot LPs")
        start = time.perf_counter()
        sol = self._session.solve(D, self.deadline.remaining_s())
        stats.lp_time_s += time.perf_counter() - start
        stats.lps_solved += 1
        if settings.dump_slot_problems is not None:
            self._dump(data, D, k, None if sol is None else sol.objective)
        if sol is None:
            return None
        if sol.objective >= beat * (1.0 + PRUNE_RTOL):
            stats.roundings_skipped += 1
            return None
        start = time.perf_counter()
        choice, rs = round_external(
            data,
            self._session,
            sol,
            D,
            self.rng,
            delta=settings.delta,
            draws=settings.S,
            scale=settings.scale,
            rounding=settings.rounding,
            time_limit_s=self.deadline.remaining_s(),
        )
        stats.rounding_time_s += time.perf_counter() - start
        stats.add(rs)
        return choice

    def _dump(self, data: SlotData, D: int, k: int, objective: float | None) -> None:
        """Write the LP of (job, slot, D) as a ``dmlrs_slot`` instance (``meta``: its origin)."""
        directory = Path(str(self.settings.dump_slot_problems))
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise DdlschedError(
                f"dump_slot_problems: cannot create {directory}: {exc.strerror}"
            ) from None
        t_meta = self.t
        meta: dict[str, Any] = {
            "source": "pd_ors",
            "seed": self.seed,
            "job": self.i,
            "slot": t_meta,
            "k": k,
            "quanta": self.settings.quanta,
            "demand_internal": self.d_int[k - 1],
            "lp_objective": objective,
        }
        try:
            inst = self._slot_instance(data, D, meta)
        except InvalidInstanceError as exc:
            raise DdlschedError(
                f"dump_slot_problems: the slot problem of job {self.i}, slot {t_meta}, "
                f"D = {D} is no dmlrs_slot instance: {exc}"
            ) from None
        name = f"pd_ors_seed{self.seed}_job{self.i:05d}_slot{t_meta:05d}_k{k:04d}.json"
        try:
            inst.save(directory / name)
        except OSError as exc:
            raise DdlschedError(
                f"dump_slot_problems: cannot write {directory / name}: {exc.strerror}"
            ) from None
        self.stats.dumped += 1

    def _slot_instance(self, data: SlotData, D: int, meta: dict[str, Any]) -> SlotInstance:
        """The slot problem of ``data`` and ``D`` as a ``dmlrs_slot`` instance."""
        return SlotInstance(
            resources=self.instance.resources,
            worker_price=tuple(float(x) for x in data.worker_price),
            ps_price=tuple(float(x) for x in data.ps_price),
            worker=tuple(float(x) for x in data.alpha),
            ps=tuple(float(x) for x in data.beta),
            residual=tuple(tuple(float(x) for x in row) for row in data.residual),
            gamma=int(data.gamma),
            global_batch=int(data.max_workers),
            demand=int(D),
            meta=meta,
        )
