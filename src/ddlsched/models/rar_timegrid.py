"""The time grid of the RAR-DDLS time-indexed models: slot width, horizon, pattern cap (spec ``rar.md``).

The ``timeindexed`` ILP (:mod:`ddlsched.models.rar_timeindexed`) and the LP
of :mod:`ddlsched.models.rar_rounding` index columns by (job, pattern, start
slot) on a grid of ``slot_width = w`` fine slots. This module counts a
model's size before it is built (:func:`model_counts`), gives the durations
on a grid (the bound model counts a job only in the coarse slots it covers
entirely, ``D = floor((d + 1) / w) - 1`` of them whatever its fine start,
:func:`_coarse_duration_lb`; the schedule model rounds up, ``ceil(d / w)``),
and chooses the grid (:func:`choose_grid`): ``slot_width`` and
``max_patterns`` ``'auto'`` are the finest width and the largest pattern cap
whose models fit the memory budget and the time left (our rule, with the
measured rates :data:`BUILD_S_PER_NONZERO`, :data:`ILP_COLUMNS_PER_S` and
:data:`LP_COLUMNS_PER_S`).

The models' horizon (:func:`model_horizon`) is the makespan of the better
LS/FF schedule (:func:`incumbent_makespan`) when below ``T`` and
contention-free: any schedule's makespan ``U`` bounds the optimum, ``T* <=
U``, so a relaxation restricted to ``U`` still contains an optimal schedule
and its bound stays valid.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ddlsched.deadline import Deadline
from ddlsched.errors import InfeasibleScheduleError, ModelTooLargeError, TimeLimitReached
from ddlsched.models.rar_patterns import PatternCatalogue, pattern_catalogue
from ddlsched.problems.rar import RarInstance
from ddlsched.problems.rar_schedule import evaluate
from ddlsched.solvers.limits import check_model_size

__all__ = [
    "AUTO",
    "SIZE_HINT",
    "TimeGrid",
    "choose_grid",
    "grid_durations",
    "incumbent_makespan",
    "model_counts",
    "model_horizon",
]


def _coarse_duration_lb(d: int, w: int) -> int:
    """Coarse slots of width ``w`` fully covered by any fine interval of length ``d``.

    An interval ``[a, a + d)`` covers the windows ``[Kw, (K+1)w)`` with
    ``ceil(a/w) <= K < floor((a+d)/w)``; their number is smallest for
    ``a = 1 (mod w)``-like offsets and equals ``floor((d + 1) / w) - 1``
    (and ``d`` itself when ``w = 1``). Counting a job only in windows it
    covers entirely keeps every coarse capacity constraint implied by a fine
    one, and the job ends after its last covered window, so
    ``T* >= w * C_coarse``.
    """
    if w == 1:
        return d
    return max(0, (d + 1) // w - 1)


def model_counts(
    durations: dict[tuple[int, int], int],
    patterns: dict[int, list[tuple[int, ...] | None]],
    horizon: int,
) -> tuple[int, int]:
    """``(variables, nonzeros)`` of the time-indexed model, counted before it is built.

    Per column ``(j, k, t)``: one entry in its job's choice row and one in its
    makespan row, and in each of its ``d`` slots one cluster-capacity entry
    and one per GPU class the pattern uses.
    """
    variables = nonzeros = 0
    for (j, k), d in durations.items():
        n = max(0, horizon - d + 1)
        variables += n
        nonzeros += n * (2 + d * (1 + sum(1 for g in (patterns[j][k] or ()) if g)))
    return variables, nonzeros


SIZE_HINT = (
    "aggregate time (--param slot_width=K), pool placement patterns (--param max_patterns=K) "
    "or leave both 'auto'"
)


#: What ``slot_width`` and ``max_patterns`` take to be chosen from the instance and the limits.
AUTO = "auto"


#: Seconds per constraint-matrix nonzero to build a time-indexed model in Pyomo and hand it to
#: HiGHS (measured on the paper preset: 6.2 us to build, 6.3-7.9 us to hand over; rounded up).
BUILD_S_PER_NONZERO = 15e-6


#: Share of the time left that building the models may take when the size is chosen.
BUILD_SHARE = 0.3


#: Binary columns HiGHS settles per second of solve time on the paper preset (time-indexed
#: ILPs of ~22,000 columns in all solved to optimality in ~3 s, ~50,000 did not in 25 s, on a
#: loaded machine); the automatic grid keeps the ILP columns below this rate times the solve
#: time left.
ILP_COLUMNS_PER_S = 2_000


#: The same for the LP relaxation (:mod:`ddlsched.models.rar_rounding`).
LP_COLUMNS_PER_S = 20_000


#: Pattern caps tried, in order, when ``max_patterns`` is ``'auto'`` and no width fits with
#: the first (fewer patterns: more jobs pooled, a weaker but still valid bound).
AUTO_PATTERN_CAPS = (64, 16, 4, 1)


#: The coarsest automatic slot width leaves at least this many model slots in the horizon.
MIN_COARSE_SLOTS = 8


@dataclass(frozen=True)
class TimeGrid:
    """Slot width, horizon (fine slots) and pattern cap of a time-indexed model.

    ``variables``/``nonzeros``: the estimate of the models to build (the
    largest model's variables, the nonzeros of all of them); ``auto``: chosen
    by :func:`choose_grid`; ``within_time``: the estimated build time fits
    :data:`BUILD_SHARE` of the time left (when ``False``, the coarsest grid
    that fits memory was taken and the deadline may stop the build).
    """

    slot_width: int
    horizon: int
    max_patterns: int
    variables: int
    nonzeros: int
    auto: bool
    within_time: bool

    def to_info(self) -> dict[str, Any]:
        """The grid as ``info`` entries."""
        return {
            "slot_width": self.slot_width,
            "model_horizon": self.horizon,
            "max_patterns": self.max_patterns,
            "estimated_variables": self.variables,
            "estimated_nonzeros": self.nonzeros,
            "grid_auto": self.auto,
            "grid_within_time": self.within_time,
        }


def incumbent_makespan(instance: RarInstance) -> tuple[int, str] | None:
    """``(makespan, method)`` of the better of the LS and FF baselines, as evaluated; ``None``
    when neither finds a schedule within the horizon.

    Cheap (0.04 s on the paper preset). Any schedule's makespan ``U`` bounds
    the optimum, ``T* <= U``, so a relaxation restricted to the horizon
    ``U`` still contains an optimal schedule and its bound stays valid.
    """
    from ddlsched.heuristics.rar_baselines import ff, ls

    best = None
    for name, heuristic in (("ls", ls), ("ff", ff)):
        plan = heuristic(instance)
        if plan.schedule is None:
            continue
        try:
            makespan = evaluate(instance, plan.schedule).makespan
        except InfeasibleScheduleError:
            continue
        if best is None or makespan < best[0]:
            best = (makespan, name)
    return best


def _widths(horizon: int) -> list[int]:
    """Candidate slot widths, finest first: 1..10, then about 25 % apart."""
    top = max(1, horizon // MIN_COARSE_SLOTS)
    out, w = [], 1
    while w <= top:
        out.append(w)
        w = w + 1 if w < 10 else math.ceil(w * 1.25)
    return out


def grid_durations(
    fine: dict[tuple[int, int], int], w: int, schedule: bool
) -> dict[tuple[int, int], int]:
    """Coarse durations: fully covered slots (bound model) or ``ceil(d / w)`` (schedule model)."""
    if schedule:
        return {key: math.ceil(d / w) for key, d in fine.items()}
    return {key: _coarse_duration_lb(d, w) for key, d in fine.items()}


def choose_grid(
    instance: RarInstance,
    horizon: int,
    slot_width: int | str = AUTO,
    max_patterns: int | str = AUTO,
    contention: str = "free",
    deadline: Deadline | None = None,
    *,
    schedule_model: bool = True,
    columns_per_s: float = ILP_COLUMNS_PER_S,
    plan_s: float | None = None,
) -> tuple[PatternCatalogue, TimeGrid]:
    """The pattern catalogue and the grid of the time-indexed model(s), refusing what cannot fit.

    ``slot_width`` and ``max_patterns`` given as integers are kept; ``'auto'``
    takes the largest cap of :data:`AUTO_PATTERN_CAPS` for which some width
    fits memory, and with it the finest width whose models pass :func:`check_model_size`
    (variable cap and memory budget), whose estimated build time
    (:data:`BUILD_S_PER_NONZERO` per nonzero) fits :data:`BUILD_SHARE` of
    ``plan_s`` and whose columns the solver can settle in the rest
    (``columns_per_s``: :data:`ILP_COLUMNS_PER_S`, or :data:`LP_COLUMNS_PER_S`
    for an LP); if none fits the time, the coarsest width that fits memory.
    ``plan_s`` is the time planned for the model, by default ``deadline.plan_s``
    (the limit, or a phase's share of it), never what remains of it: the grid
    is a function of the instance and the time limit alone, so the same inputs
    give the same model (and answer, unless the limit cuts the solve) on a
    quiet and on a loaded machine. ``schedule_model``: a width ``w > 1`` also builds the
    rounded-up schedule model (counted). Raises
    :class:`~ddlsched.errors.ModelTooLargeError` (one line) when nothing
    fits, before anything is built.
    """
    deadline = deadline or Deadline.unlimited()
    caps = AUTO_PATTERN_CAPS if max_patterns == AUTO else (int(max_patterns),)
    widths = _widths(horizon) if slot_width == AUTO else [int(slot_width)]
    planned_s = deadline.plan_s if plan_s is None else plan_s
    budget_s = planned_s * BUILD_SHARE
    max_columns = planned_s * (1 - BUILD_SHARE) * columns_per_s
    error: ModelTooLargeError | None = None
    fallback = None
    for cap in caps:
        catalogue = pattern_catalogue(instance, cap, contention, deadline)
        for w in widths:
            durations = [grid_durations(catalogue.durations, w, False)]
            if schedule_model and w > 1:
                durations.append(grid_durations(catalogue.durations, w, True))
            counts = [model_counts(d, catalogue.patterns, horizon // w) for d in durations]
            try:
                for variables, nonzeros in counts:
                    check_model_size("rar timeindexed ILP", variables, SIZE_HINT, nonzeros)
            except ModelTooLargeError as exc:
                error = error or exc
                continue
            nonzeros = sum(nz for _, nz in counts)
            columns = sum(v for v, _ in counts)
            in_time = nonzeros * BUILD_S_PER_NONZERO <= budget_s and columns <= max_columns
            grid = TimeGrid(
                w,
                horizon,
                cap,
                max(v for v, _ in counts),
                nonzeros,
                slot_width == AUTO or max_patterns == AUTO,
                in_time,
            )
            if in_time or slot_width != AUTO:
                return catalogue, grid
            fallback = (catalogue, grid)  # the coarsest width that fits memory so far
        if fallback is not None:
            return fallback  # pool no more jobs for time alone: pooling costs schedule quality
    assert error is not None
    raise error


def model_horizon(
    instance: RarInstance, horizon: int | None, contention: str, deadline: Deadline
) -> tuple[int, str]:
    """Fine horizon of the models and where it came from (module docstring of ``timeindexed``).

    The LS/FF incumbent runs under ``deadline`` (interrupted at it: on 1,000
    jobs it takes seconds); stopped, the horizon is the instance's ``T``.
    """
    if horizon is not None:
        return min(instance.horizon, int(horizon)), "argument"
    if contention == "free":
        try:
            with deadline.interrupting("the LS/FF incumbent that sets the model horizon"):
                found = incumbent_makespan(instance)
        except TimeLimitReached:
            return instance.horizon, "instance (the LS/FF incumbent hit the time limit)"
        if found is not None and found[0] < instance.horizon:
            return found[0], f"incumbent ({found[1]})"
    return instance.horizon, "instance"
