"""PD-ORS (Algorithms 1-3, with Algorithm 4 per slot) and its OASiS variant.

Paper: Yu, Liu, Wu, Ji, Bentley, "Toward Efficient Online Scheduling for
Distributed Machine Learning Systems", IEEE TNSE 2022 (reading notes of
the paper), Algorithms 1-4, Eqs. 10-14 and 19-28; spec ``docs/families/dmlrs.md``
(``pd_ors`` and ``oasis``; the spec wins).

Algorithm 1 (online primal-dual, :func:`run_pd_ors`). Prices start at
``p[h, r, t] = Q(0) = L``. Jobs are taken in arrival order (ties: instance
order). For each arrival, Algorithm 2 finds the schedule of largest payoff
``lambda_i``; if ``lambda_i > 0`` the job is accepted, its allocation (the
integers actually chosen) recorded, ``rho[h, r, t]`` increased and
``p[h, r, t] = Q_h^r(rho[h, r, t])`` recomputed on the touched cells
(machines the job uses in a slot, every resource); otherwise it is
rejected. Accepted schedules are never revised. The price function is
:mod:`ddlsched.heuristics.dmlrs_prices` (Eqs. 12-14).

Algorithm 3 (DP, :func:`theta_dp`), with the spec's quantisation: the
workload ``V_i`` is split into ``q`` quanta of ``V_i / q`` samples (real
numbers; ``quanta``, default 32). ``theta(t, k)`` is the cost of ``k``
quanta in slot ``t`` (Algorithm 4; ``theta(t, 0) = 0``) with ``D = D_i(k
V_i / q, b)``; ``Theta(t, k) = min_{0 <= j <= k} theta(t, j) + Theta(t -
1, k - j)``, ``Theta(a_i - 1, 0) = 0``, ``Theta(a_i - 1, k > 0) = inf``.
Ties keep the smallest ``j`` (the notes' strict ``cost-min > ...`` scanning
``v`` upward). ``theta`` is computed once per arrival for every ``t in
a_i..T`` and ``k in 1..q`` and reused for every completion slot. The
slots' quanta sum to ``q``, and slot ``t`` with ``k_t`` quanta processes
at least ``k_t V_i / q`` samples, so the schedule covers ``V_i`` (Eq. 3).

Algorithm 2 (:func:`plan_job`): for ``t~ = a_i..T``, ``lambda' = u_i(t~ -
a_i) - Theta(t~, q)``; the schedule is kept when ``lambda' > lambda``
(strict), ``lambda`` starting at 0. Since ``Theta(t~, q) <= Theta(t~ - 1,
q)`` and ``u_i`` is strictly decreasing, the kept schedule has work in slot
``t~``, so its payoff is exactly ``u_i(t~ - a_i)`` minus its cost.

Algorithm 4 per (t, k) (:class:`ddlsched.heuristics.pd_ors_slots.SlotPlanner`,
with :mod:`ddlsched.heuristics.dmlrs_slot` and
:mod:`ddlsched.heuristics.dmlrs_rounding`): the cheaper feasible of the
internal case (one machine, ``b_int``; ``internal = "demand"``, the revised
spec: ``w = D``, ``s = ceil(D / gamma)``; ``"gamma_multiple"``: the first
spec's ``w = gamma ceil(D / gamma)``) and the external case (``b_ext``: the
full LP relaxation of Problem (23) with the PS row gives the cost bound;
``rounding = "shrunk"``, the revised spec: the shrunk LP's optimum scaled by
``G_delta``, rounded and each draw repaired; ``"literal"``: the full LP's
optimum scaled and rounded, no repair; or, with ``slot_solver = "ilp"``,
the exact ILP); ties go to the internal case (ours). Quanta with the same
``D`` share one Problem (23), which is solved (and rounded) once (ours: the
same problem). The LP of a (job, slot) is loaded once and re-solved for
increasing ``D`` by changing the bound of row (26) (and, for the shrunk LP,
the bounds of rows (24) and of the columns) with a warm start
(:class:`ddlsched.solvers.dmlrs_slot_lp.HighsSlotSolvers`). Two exact shortcuts
(ours; they never change a ``theta`` value, only skip work that cannot
win): the external case of a ``D`` is not solved when ``D > F`` (Eq. 25
contradicts Eq. 26) or when the lower bound ``D min pw + (D / gamma) min
ps`` of every external solution is not below the internal cost of each
quantum with that ``D``; the rounding (shrunk LP and draws) is skipped when
the full LP optimum itself is not below those internal costs (no integral
allocation, rounded and repaired or not, costs less than the LP). Both are
counted in ``info`` (``lps_pruned``, ``roundings_skipped``). ``info`` also
records per run the rounding rule, the roundings of the shrunk and of the
full LP (the shrunk one infeasible), the draws, the share of draws
infeasible before and after repair, the share breaking each row before
repair, the covering share, the draws each repair step changed, and each
accepted job's planned completion slot.

Dumps (``dump_slot_problems = DIR``, ours): every external-case LP solved
is written to ``DIR/pd_ors_seed{seed}_job{i:05d}_slot{t:05d}_k{k:04d}.json``
as a ``dmlrs_slot`` instance (:class:`ddlsched.problems.dmlrs_slot.SlotInstance`;
``k`` the smallest quantum count with that ``D``); its ``meta`` records
``source, seed, job, slot, k, quanta, demand_internal`` (``D_i(k V_i / q,
b_int)``, the internal case's demand) and ``lp_objective`` (``None`` when
infeasible).

Randomness: one generator from the method seed (:func:`ddlsched.rng.make_rng`),
spawned into one independent stream per job in arrival order (``Generator.spawn``).

OASiS (``variant = "oasis"``, spec "Baselines", ours where the notes are
silent): the same Algorithms 1-3, no internal case, ``b_ext`` always (also
in ``U^r``'s ``d_min``), and Algorithm 4 replaced by the greedy of
:class:`ddlsched.heuristics.dmlrs_slot.OasisCase` (workers and PSs of the
job never on a common machine in a slot). No randomness, no LP.

Capacities: every candidate is checked against ``C - rho`` with a slack of
``1e-12 (C + 1)`` (floating point only), so that even a thousand jobs on
one cell stay within the ``dmlrs`` evaluator's ``1e-9`` slack.

Complexity per arrival: ``(T - a_i + 1)`` slots, each ``O(H R + q log H)``
for the internal case plus at most ``min(q, F_i)`` LPs (with warm starts)
and ``S``-``10 S`` vectorised draws per LP; the DP is ``O((T - a_i + 1)
q^2)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ddlsched.deadline import Deadline
from ddlsched.errors import DdlschedError
from ddlsched.heuristics.dmlrs_prices import BOUNDS, U_BOUNDS, PriceFunction, price_function
from ddlsched.heuristics.dmlrs_rounding import MAX_DRAWS, ROUNDINGS, SCALES, draw_bytes
from ddlsched.heuristics.dmlrs_slot import INTERNAL_RULES, SlotChoice, SlotSolvers
from ddlsched.heuristics.pd_ors_slots import PlannerStats, SlotPlanner
from ddlsched.memory import require_memory
from ddlsched.problems.dmlrs import (
    DmlrsInstance,
    DmlrsSchedule,
    schedule_from_counts,
)
from ddlsched.rng import make_rng

__all__ = [
    "MAX_QUANTA",
    "SLOT_SOLVERS",
    "VARIANTS",
    "JobPlan",
    "PdOrsRun",
    "PdOrsSettings",
    "PdOrsState",
    "check_memory",
    "plan_job",
    "run_pd_ors",
    "theta_dp",
]

VARIANTS = ("pd_ors", "oasis")
#: The most quanta ``q`` (ours, against hostile input): Algorithm 3's DP holds ``(q + 1)^2`` numbers per
#: slot and ``(T - a_i + 1)(q + 1)`` per job (:func:`check_memory`).
MAX_QUANTA = 4096
SLOT_SOLVERS = ("lp", "ilp")


def _number(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise DdlschedError(f"{name} must be a finite number, got {value!r}")
    return float(value)


@dataclass(frozen=True)
class PdOrsSettings:
    """The parameters of PD-ORS and OASiS (module docstring and spec); validated here too.

    ``S`` draws per rounding (up to ``10 S``), ``delta`` and ``scale`` of
    ``G_delta``, ``quanta`` ``q``, ``mu`` of ``L``, ``bounds`` and ``u_bound``
    of the price function, ``U`` and ``L`` with ``bounds = "given"``,
    ``slot_solver`` of the external case, ``variant`` (``pd_ors`` or
    ``oasis``), ``dump_slot_problems`` (a directory: every external-case LP
    solved is written there as a ``dmlrs_slot`` instance file), ``rounding``
    (``shrunk`` or ``literal``, :mod:`ddlsched.heuristics.dmlrs_rounding`) and
    ``internal`` (``demand`` or ``gamma_multiple``, the internal case's rule).
    """

    delta: float = 0.1
    S: int = 10
    scale: str = "chernoff"
    quanta: int = 32
    mu: float = 1.0
    bounds: str = "instance"
    u_bound: str = "spec"
    U: float | None = None
    L: float | None = None
    slot_solver: str = "lp"
    variant: str = "pd_ors"
    dump_slot_problems: str | None = None
    rounding: str = "shrunk"
    internal: str = "demand"

    def __post_init__(self) -> None:
        delta = _number(self.delta, "delta")
        if not 0.0 < delta <= 1.0:
            raise DdlschedError(f"delta must be in (0, 1], got {self.delta!r}")
        for name, most in (("S", MAX_DRAWS), ("quanta", MAX_QUANTA)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= most:
                raise DdlschedError(f"{name} must be an integer in 1..{most}, got {value!r}")
        if not _number(self.mu, "mu") > 0:
            raise DdlschedError(f"mu must be > 0, got {self.mu!r}")
        for name, value, choices in (
            ("scale", self.scale, SCALES),
            ("bounds", self.bounds, BOUNDS),
            ("u_bound", self.u_bound, U_BOUNDS),
            ("slot_solver", self.slot_solver, SLOT_SOLVERS),
            ("variant", self.variant, VARIANTS),
            ("rounding", self.rounding, ROUNDINGS),
            ("internal", self.internal, INTERNAL_RULES),
        ):
            if value not in choices:
                raise DdlschedError(f"{name} must be one of {', '.join(choices)}, got {value!r}")
        for name in ("U", "L"):
            value = getattr(self, name)
            if value is not None and not _number(value, name) > 0:
                raise DdlschedError(f"{name} must be > 0, got {value!r}")
        if self.bounds == "given" and (self.U is None or self.L is None):
            raise DdlschedError("bounds = given needs both U and L")
        if self.dump_slot_problems is not None and not isinstance(self.dump_slot_problems, str):
            raise DdlschedError(
                f"dump_slot_problems must be a directory name, got {self.dump_slot_problems!r}"
            )


@dataclass
class PdOrsState:
    """Algorithm 1's state: use ``rho[h, r, t - 1]`` and prices ``p[h, r, t - 1]``."""

    rho: np.ndarray
    prices: np.ndarray
    price_fn: PriceFunction

    @classmethod
    def initial(cls, instance: DmlrsInstance, price_fn: PriceFunction) -> PdOrsState:
        """No use, every price ``Q(0) = L``."""
        shape = (instance.num_machines, len(instance.resources), instance.slots)
        return cls(np.zeros(shape), np.full(shape, price_fn.L), price_fn)


@dataclass(frozen=True, eq=False)
class JobPlan:
    """Algorithm 2's result for one job at the current prices.

    ``theta[x, k]`` and ``Theta[x, k]`` belong to slot ``t = arrival + x``;
    ``payoff`` is ``lambda_i`` (0 when no schedule has a positive payoff,
    then ``completion_slot`` is ``None`` and ``slots`` is empty); ``slots``
    lists ``(t, k_t, choice)`` of the chosen schedule.
    """

    job: int
    payoff: float
    completion_slot: int | None
    cost: float
    theta: np.ndarray
    Theta: np.ndarray
    slots: tuple[tuple[int, int, SlotChoice], ...]


@dataclass(frozen=True, eq=False)
class PdOrsRun:
    """A run of Algorithm 1: the schedule, the final prices ``p[h, r, t - 1]`` and ``info``."""

    schedule: DmlrsSchedule
    prices: np.ndarray
    info: dict[str, Any] = field(default_factory=dict)


def theta_dp(theta: np.ndarray, deadline: Deadline | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Algorithm 3 over quanta: ``Theta`` and the argmin ``j`` (quanta in the slot).

    ``theta[x, k]`` is the cost of ``k`` quanta in the ``x``-th slot
    (``theta[x, 0] = 0``, ``inf`` when infeasible). Returns ``Theta[x, k] =
    min_j theta[x, j] + Theta[x - 1, k - j]`` (``Theta[-1] = (0, inf, ...)``)
    and the smallest minimising ``j``. ``deadline`` is checked once per slot
    (each is ``O(q^2)``: 50 ms at ``q = 4096``).
    """
    deadline = deadline or Deadline.unlimited()
    n, q1 = theta.shape
    Theta = np.empty((n, q1))
    arg = np.zeros((n, q1), dtype=np.int64)
    prev = np.full(q1, np.inf)
    prev[0] = 0.0
    k = np.arange(q1)
    rest = k[:, None] - k[None, :]  # k - j
    valid = rest >= 0
    rest = np.maximum(rest, 0)
    for x in range(n):
        deadline.check("PD-ORS (Algorithm 3)")
        cand = np.where(valid, theta[x][None, :] + prev[rest], np.inf)
        best = np.argmin(cand, axis=1)  # first minimum: the smallest j
        Theta[x] = cand[k, best]
        arg[x] = best
        prev = Theta[x]
    return Theta, arg


def plan_job(
    instance: DmlrsInstance,
    i: int,
    state: PdOrsState,
    settings: PdOrsSettings,
    rng: np.random.Generator,
    solvers: SlotSolvers | None,
    deadline: Deadline | None = None,
    *,
    seed: int = 0,
    _stats: PlannerStats | None = None,
) -> JobPlan:
    """Algorithms 2-4 for job ``i`` at the prices and use of ``state`` (not modified)."""
    deadline = deadline or Deadline.unlimited()
    stats = _stats if _stats is not None else PlannerStats()
    job = instance.jobs[i]
    a, T, q = job.arrival_slot, instance.slots, settings.quanta
    planner = SlotPlanner(instance, i, state, settings, rng, solvers, deadline, stats, seed)
    n_slots = T - a + 1
    theta = np.full((n_slots, q + 1), np.inf)
    choices: list[list[SlotChoice | None]] = []
    for x in range(n_slots):
        deadline.check("PD-ORS (Algorithm 4)")
        theta[x], row = planner.slot(a + x)
        choices.append(row)
    Theta, arg = theta_dp(theta, deadline)
    payoff, best = 0.0, None
    for x in range(n_slots):  # Algorithm 2
        value = job.utility(x) - Theta[x, q]
        if value > payoff:
            payoff, best = value, x
    slots: list[tuple[int, int, SlotChoice]] = []
    if best is not None:
        k = q
        for x in range(best, -1, -1):
            j = int(arg[x, k])
            if j > 0:
                chosen = choices[x][j]
                assert chosen is not None
                slots.append((a + x, j, chosen))
                k -= j
        if k != 0:
            raise DdlschedError(f"PD-ORS: job {i}: the DP's schedule misses {k} quanta (a bug)")
        slots.reverse()
    return JobPlan(
        job=i,
        payoff=float(payoff),
        completion_slot=None if best is None else a + best,
        cost=float(Theta[best, q]) if best is not None else math.inf,
        theta=theta,
        Theta=Theta,
        slots=tuple(slots),
    )


def _accept(
    instance: DmlrsInstance, state: PdOrsState, plan: JobPlan
) -> list[tuple[int, int, int, int, int]]:
    """Record an accepted plan: ``rho`` and the prices of the touched (h, r, t) cells."""
    i = plan.job
    alpha, beta = instance.alpha[i], instance.beta[i]
    entries = []
    for t, _k, choice in plan.slots:
        for h, w, s in zip(choice.machines, choice.workers, choice.ps, strict=True):
            h, w, s = int(h), int(w), int(s)
            if w == 0 and s == 0:
                continue
            entries.append((i, t, h, w, s))
            state.rho[h, :, t - 1] += alpha * w + beta * s
            state.prices[h, :, t - 1] = state.price_fn.price(
                state.rho[h, :, t - 1], instance.cap[h]
            )
    return entries


def check_memory(instance: DmlrsInstance, settings: PdOrsSettings) -> None:
    """Refuse (before allocating) a run whose arrays exceed the memory budget
    (:func:`ddlsched.memory.require_memory`): the use and prices ``(H, R, T)``, one job's
    ``theta``, ``Theta``, argmins and choices ``(T, q + 1)``, the DP's ``(q + 1)^2``
    tables and, for PD-ORS, one rounding's draws over every machine at worst."""
    H, R, T = instance.num_machines, len(instance.resources), instance.slots
    q1 = settings.quanta + 1
    need = 2 * 8.0 * H * R * T + 32.0 * T * q1 + 3 * 8.0 * q1 * q1
    if settings.variant == "pd_ors":
        need += draw_bytes(settings.S, H, R)
    require_memory(
        f"PD-ORS ({H} machines, {T} slots, q = {settings.quanta}, S = {settings.S})",
        need,
        "lower quanta or S, or use a smaller instance",
    )


def run_pd_ors(
    instance: DmlrsInstance,
    settings: PdOrsSettings,
    seed: int,
    deadline: Deadline | None,
    solvers: SlotSolvers | None,
) -> PdOrsRun:
    """Algorithm 1 (PD-ORS or OASiS, ``settings.variant``) on ``instance``.

    ``solvers`` provides the LP and ILP of Problem (23) (not used by OASiS:
    may be ``None`` there). Raises :class:`~ddlsched.errors.TimeLimitReached`
    when ``deadline`` passes, :class:`~ddlsched.errors.DdlschedError` on
    bad settings or price bounds.
    """
    if not isinstance(settings, PdOrsSettings):
        raise DdlschedError(f"settings must be PdOrsSettings, got {type(settings).__name__}")
    deadline = deadline or Deadline.unlimited()
    check_memory(instance, settings)
    if settings.variant == "pd_ors" and solvers is None:
        raise DdlschedError("PD-ORS needs slot solvers (the LP and ILP of Problem (23))")
    price_fn = price_function(
        instance,
        mu=settings.mu,
        bounds=settings.bounds,
        u_bound=settings.u_bound,
        U=settings.U,
        L=settings.L,
        bandwidth="int" if settings.variant == "pd_ors" else "ext",
    )
    state = PdOrsState.initial(instance, price_fn)
    n = len(instance.jobs)
    order = sorted(range(n), key=lambda i: (instance.jobs[i].arrival_slot, i))
    streams = make_rng(seed).spawn(n) if n else []
    stats = PlannerStats()
    payoffs = [0.0] * n
    completion: list[int | None] = [None] * n
    accepted: list[int] = []
    entries: list[tuple[int, int, int, int, int]] = []
    internal_slots = external_slots = 0
    for pos, i in enumerate(order):
        deadline.check("PD-ORS (arrivals)")
        plan = plan_job(
            instance, i, state, settings, streams[pos], solvers, deadline, seed=seed, _stats=stats
        )
        payoffs[i] = plan.payoff
        if plan.payoff > 0:  # Algorithm 1, step 3
            accepted.append(i)
            completion[i] = plan.completion_slot
            entries.extend(_accept(instance, state, plan))
            for _t, _k, choice in plan.slots:
                if choice.case == "internal":
                    internal_slots += 1
                else:
                    external_slots += 1
    schedule = schedule_from_counts(accepted, entries)
    info: dict[str, Any] = {
        "variant": settings.variant,
        **price_fn.info(),
        "mu": settings.mu,
        "u_bound": settings.u_bound,
        "quanta": settings.quanta,
        "slot_solver": settings.slot_solver,
        "delta": settings.delta,
        "S": settings.S,
        "scale": settings.scale,
        "accepted": len(accepted),
        "rejected": n - len(accepted),
        "payoff": payoffs,
        "planned_completion_slot": completion,
        "internal_slots": internal_slots,
        "external_slots": external_slots,
        "rounding": settings.rounding,
        "internal": settings.internal,
        **stats.info(),
    }
    return PdOrsRun(schedule=schedule, prices=state.prices, info=info)
