"""SJF-BCO: Smallest Job First with Balanced Contention and Overhead.

Paper: Yu, Ji, Rajan, Liu, "On Scheduling Ring-All-Reduce Learning Jobs in
Multi-Tenant GPU Clusters with Communication Contention", MobiHoc 2022,
Section 5 (Algorithm 1 SJF-BCO, Algorithm 2 FA-FFP, Algorithm 3 LBSGF) and
Section 6 (Theorem 5); spec ``docs/families/rar.md`` (the spec wins).

Algorithm 1 bisects the per-GPU execution-time limit ``theta`` over
``[1, T]``; for each ``theta`` it tries every threshold ``kappa = 1..n_g``
(``n_g = max_j G_j``): jobs, in SJF order, with ``G_j <= kappa`` are placed
by FA-FFP (pack onto busy servers), larger ones by LBSGF (open the least
busy servers); it keeps the ``(theta, kappa)`` pair of smallest estimated
makespan. The estimated-time list scheduling (simulated clock, waits, the
server-count fixed point, the bisection) lives in
:mod:`ddlsched.heuristics.rar_planning`; this module only adds the two GPU
rules and the ``kappa`` loop.

Guarantee (Theorem 5): makespan ``<= n_g * phi * (u / l) * OPT`` with
``phi = max_j rho_j(worst placement) / rho_j(best placement)`` and
``rho_hat in [l rho, u rho]``; :func:`theorem5_bound` computes the factor
per instance. Complexity: ``O(log T * K * J * N log N * (1 + W))`` with
``K <= n_g`` distinct ``kappa`` classes (below), ``J`` jobs, ``N`` GPUs and
``W`` waits per job.

Interpretation decisions (the project's), with the paper's line numbers:

4. FA-FFP (Alg. 2 lines 2-4): among the available GPUs take the ``G_j``
   with least ``U``; ties: GPUs on servers that host a job still running at
   the clock first (the "fragment-aware" packing of the paper's intuition),
   then lower ``(server, gpu)`` id.
5. LBSGF (Alg. 3 line 2): sort the servers by mean ``U`` per GPU
   (``sum_g U_s^g / O_s``) ascending, ties lower server id; select the
   fewest leading servers with ``sum O_s >= lambda_j G_j`` (all servers if
   the cluster is smaller); among their available GPUs take the ``G_j``
   least-``U`` ones, ties lower id (lines 3-8). A wait goes back to line 3,
   so the selected server set stays fixed while the job waits.
6. Algorithm 1: a ``(theta, kappa)`` pass that fails to place some job is
   *discarded* (lines 17-18 "quit the current loop and update kappa"; its
   partial makespan is never compared); among complete passes with
   estimated makespan below ``T`` (line 7 sets ``m_theta = T``) the smallest
   estimated makespan wins, ties the smaller ``kappa`` (line 22 compares
   strictly); lines 25-30 move the bisection (see
   :func:`ddlsched.heuristics.rar_planning.bisect_theta` for the rule and the
   ``tightest`` variant).

   De-duplication (an optimisation, exact): in SJF order the FA-FFP jobs of
   threshold ``kappa`` are exactly the first ``#{j : G_j <= kappa}`` jobs,
   so all ``kappa`` between two consecutive distinct job sizes give the
   same pass. One pass is computed per distinct prefix length and credited
   to the smallest ``kappa`` of its class (the one the naive loop keeps on
   ties). Moreover passes of different classes share their FA-FFP prefix:
   the prefix is planned once, incrementally, and each class branches off
   a copy of the state to plan its LBSGF suffix. The result is identical to
   the naive loop (tested).

8. Theorem 5 per instance: :func:`theorem5_bound` (``n_g``, ``phi``,
   ``l``, ``u`` and the factor ``n_g phi u / l``; its docstring gives the
   definitions).

Fig. 5 (makespan versus ``kappa``): ``sjf_bco(instance, kappa=k)`` runs
Algorithm 1 with ``kappa`` fixed; :func:`kappa_sweep` returns the estimated
and the evaluated makespan for each ``kappa``.

Choices beyond those: ``lambda_`` may be one number for all jobs or a
mapping job id -> ``lambda_j``; ``lambda_j >= 1`` and ``u > 0`` are
required (the paper assumes ``lambda_j >= 1``, ``u >= 1``). ``bisection``
selects the paper's rule (default) or the textbook ``tightest`` one.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass

import numpy as np

from ddlsched.errors import DdlschedError, InfeasibleScheduleError
from ddlsched.heuristics.rar_planning import (
    PassResult,
    PlanningData,
    PlanState,
    RarPlan,
    bisect_theta,
    estimated_time,
    place_job,
    plan_from_pass,
    run_pass,
)
from ddlsched.problems.rar import RarInstance
from ddlsched.problems.rar_schedule import evaluate
from ddlsched.problems.rar_timing import execution_slots, max_contention, max_servers, min_servers

__all__ = [
    "FaFfp",
    "KappaPoint",
    "Lbsgf",
    "Theorem5Bound",
    "check_u",
    "fa_ffp",
    "kappa_classes",
    "kappa_sweep",
    "lbsgf",
    "sjf_bco",
    "sjf_bco_theta",
    "theorem5_bound",
]

logger = logging.getLogger(__name__)


# --------------------------------------------------------------------------- GPU rules


class FaFfp:
    """Algorithm 2 (FA-FFP): least ``U``; ties busy servers first, then lower id."""

    name = "fa_ffp"

    def candidates(self, data: PlanningData, state: PlanState, job: int) -> None:
        return None

    def choose(
        self, data: PlanningData, state: PlanState, available: np.ndarray, count: int
    ) -> np.ndarray:
        running = state.running_servers(data)
        on_idle_server = ~running[data.server_of_gpu[available]]
        # np.lexsort: the last key is the primary one.
        order = np.lexsort((available, on_idle_server, state.accumulated[available]))
        return available[order[:count]]


class Lbsgf:
    """Algorithm 3 (LBSGF): fewest least-busy servers holding ``lambda_j G_j`` GPUs."""

    name = "lbsgf"

    def __init__(self, lambdas: tuple[float, ...]) -> None:
        self.lambdas = lambdas

    def selected_servers(self, data: PlanningData, state: PlanState, job: int) -> np.ndarray:
        """Line 2: servers sorted by mean ``U`` per GPU, the fewest leading ones."""
        mean_load = np.add.reduceat(state.accumulated, data.server_start) / data.capacity
        order = np.argsort(mean_load, kind="stable")
        cumulative = np.cumsum(data.capacity[order])
        wanted = self.lambdas[job] * data.gpus[job]
        count = min(int(np.searchsorted(cumulative, wanted, side="left")) + 1, data.num_servers)
        return order[:count]

    def candidates(self, data: PlanningData, state: PlanState, job: int) -> np.ndarray:
        selected = np.zeros(data.num_servers, dtype=bool)
        selected[self.selected_servers(data, state, job)] = True
        return selected[data.server_of_gpu]

    def choose(
        self, data: PlanningData, state: PlanState, available: np.ndarray, count: int
    ) -> np.ndarray:
        order = np.argsort(state.accumulated[available], kind="stable")
        return available[order[:count]]


def fa_ffp(data: PlanningData, state: PlanState, job: int, theta: float, u: float = 1.0):
    """Algorithm 2 for one job: the placement, or ``None`` (the paper's ``(empty, T)``)."""
    return place_job(data, state, job, FaFfp(), theta, u)


def lbsgf(
    data: PlanningData,
    state: PlanState,
    job: int,
    theta: float,
    u: float = 1.0,
    lambda_: float = 1.0,
):
    """Algorithm 3 for one job: the placement, or ``None`` (the paper's ``(empty, T)``)."""
    lambdas = tuple(float(lambda_) for _ in data.gpus)
    return place_job(data, state, job, Lbsgf(lambdas), theta, u)


# --------------------------------------------------------------------------- Algorithm 1


def _lambdas(instance: RarInstance, lambda_: float | Mapping[str, float]) -> tuple[float, ...]:
    if isinstance(lambda_, Mapping):
        unknown = sorted(set(lambda_) - {job.id for job in instance.jobs})
        if unknown:
            raise DdlschedError(f"lambda_ names unknown job(s) {unknown}")
        values = tuple(float(lambda_.get(job.id, 1.0)) for job in instance.jobs)
    else:
        values = tuple(float(lambda_) for _ in instance.jobs)
    for value in values:
        if not value >= 1:
            raise DdlschedError(f"lambda_ must be >= 1 (Alg. 3), got {value!r}")
    return values


def check_u(u: float) -> float:
    """The scale ``u`` of the estimate (``U += rho_hat / u``) must be a positive number."""
    if isinstance(u, bool) or not isinstance(u, (int, float)) or not u > 0 or math.isinf(u):
        raise DdlschedError(f"u must be a positive number, got {u!r}")
    return float(u)


def kappa_classes(data: PlanningData, kappas: Iterable[int] | None = None) -> list[tuple[int, int]]:
    """``(kappa, prefix)`` per distinct FA-FFP prefix length, smallest ``kappa`` of each class.

    ``prefix = #{j : G_j <= kappa}``: in SJF order, the jobs planned by FA-FFP.
    ``kappas`` defaults to ``1..max_j G_j`` (Alg. 1 line 8).
    """
    sizes = sorted(data.gpus)
    if kappas is None:
        kappas = range(1, max(sizes) + 1)
    classes: dict[int, int] = {}
    for kappa in kappas:
        if isinstance(kappa, bool) or not isinstance(kappa, (int, np.integer)) or kappa < 1:
            raise DdlschedError(f"kappa must be a positive integer, got {kappa!r}")
        prefix = sum(1 for g in sizes if g <= kappa)
        classes.setdefault(prefix, int(kappa))
        classes[prefix] = min(classes[prefix], int(kappa))
    return sorted(((kappa, prefix) for prefix, kappa in classes.items()), key=lambda kp: kp[1])


def sjf_bco_theta(
    data: PlanningData,
    theta: float,
    classes: list[tuple[int, int]],
    lbsgf_rule: Lbsgf,
    u: float = 1.0,
) -> PassResult | None:
    """Alg. 1 lines 7-24 for one ``theta``: the best complete pass over the ``kappa`` classes.

    Returns ``None`` when no class gives a complete pass with estimated
    makespan below ``T``. Classes share their FA-FFP prefix (module docstring).
    """
    fa_rule = FaFfp()
    num_jobs = len(data.order)
    state = PlanState.empty(data)
    planned = 0  # FA-FFP prefix planned so far in `state`
    best: PassResult | None = None
    best_makespan = float(data.instance.horizon)  # m_theta <- T (line 7)
    for kappa, prefix in classes:
        if prefix > planned:
            head = run_pass(
                data, theta, lambda _j: fa_rule, u, state=state, positions=range(planned, prefix)
            )
            planned = prefix
            if not head.feasible:
                break  # every class with a longer prefix contains the failed job
        branch = state.copy() if prefix < num_jobs else state
        result = run_pass(
            data,
            theta,
            lambda _j: lbsgf_rule,
            u,
            state=branch,
            positions=range(prefix, num_jobs),
            kappa=kappa,
        )
        if result.feasible and result.makespan < best_makespan:  # line 22, strict
            best, best_makespan = result, result.makespan
    return best


def sjf_bco(
    instance: RarInstance,
    *,
    kappa: int | None = None,
    lambda_: float | Mapping[str, float] = 1.0,
    u: float = 1.0,
    p_est: int = 1,
    bisection: str = "paper",
    data: PlanningData | None = None,
) -> RarPlan:
    """Algorithm 1 (SJF-BCO). ``kappa=None`` loops ``kappa = 1..max_j G_j``; an int fixes it.

    Returns a :class:`~ddlsched.heuristics.rar_planning.RarPlan` (schedule
    ``None`` if no ``theta`` gave a complete pass); execute it with
    :func:`ddlsched.problems.rar_schedule.evaluate`.
    """
    u = check_u(u)
    data = PlanningData.build(instance, p_est) if data is None else data
    classes = kappa_classes(data, None if kappa is None else [kappa])
    rule = Lbsgf(_lambdas(instance, lambda_))
    outcome = bisect_theta(
        lambda theta: sjf_bco_theta(data, theta, classes, rule, u), instance.horizon, bisection
    )
    logger.info(
        "sjf_bco: theta=%s kappa=%s estimated makespan=%s after %d probes",
        outcome.theta,
        None if outcome.best is None else outcome.best.kappa,
        None if outcome.best is None else outcome.best.makespan,
        len(outcome.probes),
    )
    params = {"kappa": kappa, "lambda_": lambda_, "u": u, "p_est": p_est, "bisection": bisection}
    return plan_from_pass(
        data, "sjf_bco", outcome.best, theta=outcome.theta, probes=outcome.probes, params=params
    )


@dataclass(frozen=True)
class KappaPoint:
    """One point of Fig. 5: SJF-BCO with ``kappa`` fixed.

    ``makespan`` is the evaluator's (``None`` with ``error`` set when there
    is no schedule or the evaluator rejects it, e.g. a horizon overrun).
    """

    kappa: int
    theta: float | None
    estimated_makespan: float | None
    makespan: int | None
    error: str | None = None


def kappa_sweep(
    instance: RarInstance,
    kappas: Iterable[int] | None = None,
    *,
    lambda_: float | Mapping[str, float] = 1.0,
    u: float = 1.0,
    p_est: int = 1,
    bisection: str = "paper",
) -> list[KappaPoint]:
    """Estimated and evaluated makespan of SJF-BCO for each fixed ``kappa`` (Fig. 5).

    ``kappas`` defaults to ``1..max_j G_j``. Values of one class (same
    FA-FFP prefix) are computed once and share their result.
    """
    data = PlanningData.build(instance, p_est)
    kappas = list(range(1, max(data.gpus) + 1)) if kappas is None else list(kappas)
    by_prefix: dict[int, KappaPoint] = {}
    points = []
    for kappa in kappas:
        ((_, prefix),) = kappa_classes(data, [kappa])
        if prefix not in by_prefix:
            plan = sjf_bco(
                instance,
                kappa=kappa,
                lambda_=lambda_,
                u=u,
                p_est=p_est,
                bisection=bisection,
                data=data,
            )
            makespan, error = None, None
            if plan.schedule is None:
                error = "no theta gave a complete pass with estimated makespan below T"
            else:
                try:
                    makespan = evaluate(instance, plan.schedule).makespan
                except InfeasibleScheduleError as exc:
                    error = str(exc)
            by_prefix[prefix] = KappaPoint(
                kappa, plan.theta, plan.estimated_makespan, makespan, error
            )
        shared = by_prefix[prefix]
        points.append(
            KappaPoint(
                kappa, shared.theta, shared.estimated_makespan, shared.makespan, shared.error
            )
        )
    return points


# --------------------------------------------------------------------------- Theorem 5


@dataclass(frozen=True)
class Theorem5Bound:
    """The a-priori factor of Theorem 5: makespan ``<= bound * OPT``.

    ``bound = n_g * phi * u / l``; ``math.inf`` when some job never
    progresses at its worst placement. ``u_min`` is the smallest ``u`` with
    ``rho_hat <= u rho`` for every job, server count and contention level
    (``rho`` is smallest at ``p = 1``): the bound assumes ``u >= u_min``,
    which holds for ``u = 1`` with the default ``p_est = 1``.
    """

    n_g: int
    phi: float
    l: float
    u: float
    bound: float
    u_min: float

    def to_dict(self) -> dict[str, float]:
        return asdict(self)


def theorem5_bound(instance: RarInstance, u: float = 1.0, p_est: int = 1) -> Theorem5Bound:
    """Theorem 5's bound ``n_g * phi * u / l`` for ``instance`` (decision 8).

    * ``n_g = max_j G_j``.
    * ``rho_j(n, p)``: slots under constant conditions, as the evaluator
      counts them (``execution_slots`` with the instance's progress rule).
    * ``phi = max_j rho_j(worst) / rho_j(best)``: best = ``min_servers`` with
      ``p = 1`` (``p = 0`` on one server), worst = ``max_servers`` with
      ``p = max_contention(instance)``. To stay valid on a network where
      ``rho`` is not monotone in ``n`` (``b_i < b_e``), the max and min are
      taken over every feasible server count; on the usual networks this is
      exactly the best/worst placement above.
    * ``l = min_{j, n} rho_hat_j(n, p_est) / rho_j(n, p_worst)``, so that
      ``rho_hat in [l rho, u rho]`` for every contention ``p`` (``rho`` is
      largest at ``p_worst``).
    """
    u = check_u(u)
    net, rule = instance.network, instance.progress
    p_worst = max_contention(instance)
    phi, low_ratio, high_ratio = 0.0, math.inf, 0.0
    for index, job in enumerate(instance.jobs):
        lo, hi = min_servers(job, instance.servers), max_servers(job, instance.servers)
        best, worst = math.inf, 0.0
        for n in range(lo, hi + 1):
            slots_best = execution_slots(job, net, n, 1 if n > 1 else 0, rule)
            slots_worst = execution_slots(job, net, n, p_worst if n > 1 else 0, rule)
            best, worst = min(best, slots_best), max(worst, slots_worst)
            estimate = estimated_time(instance, index, n, p_est)
            low_ratio = min(low_ratio, estimate / slots_worst)
            high_ratio = max(high_ratio, estimate / slots_best)
        phi = math.inf if math.isinf(worst) else max(phi, worst / best)
    n_g = max(job.gpus for job in instance.jobs)
    bound = math.inf if low_ratio <= 0 or math.isinf(phi) else n_g * phi * u / low_ratio
    return Theorem5Bound(
        n_g=n_g,
        phi=float(phi),
        l=float(low_ratio),
        u=u,
        bound=float(bound),
        u_min=float(high_ratio),
    )
