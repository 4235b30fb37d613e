"""The CP-SAT model of family ``asrpt``'s offline optimum ``OPT_A`` on integer data.

A-SRPT paper, Problem (8) under Eqs. (1)-(3); spec ``docs/families/asrpt.md``,
``exact``. The data (modes, windows
``L_i``, the greedy incumbent, the clique cuts) are
:mod:`ddlsched.models.asrpt_integer`'s; the strategy that calls this model is
:func:`ddlsched.models.asrpt_exact.solve_exact`.

Model (:func:`build_cpsat`):

    ``S_i in [r_i, L_i - min_u d_iu]``; per mode a presence literal ``p_iu``
    and an optional fixed-size interval ``[S_i, S_i + d_iu)``;
    ``sum_u p_iu = 1``; ``p_iu => S_i + d_iu <= L_i``; per server ``m`` a
    cumulative of the intervals with ``u_m > 0``, demand ``u_m``, capacity
    ``g`` (Eq. 3); a redundant cumulative over the whole cluster (demand
    ``g_i``, capacity ``G``); minimise ``sum_i (S_i + sum_u d_iu p_iu) =
    sum_i C_i`` (Eq. 8). The greedy incumbent is given as a hint.

Clique cuts (:func:`~ddlsched.models.asrpt_integer.cliques`): a no-overlap of
the members' intervals.

Strengthenings (ours; :mod:`ddlsched.models.asrpt_strengthen`, each
switchable, proofs there): ``objective_bound`` and ``lp_bound`` add
``sum_i C_i >= LB`` (the larger of the partition bound and the time-indexed
LP relaxation's value, the LP solved first within part of the deadline, and
not at all when the partition bound already meets the incumbent);
``symmetry`` adds ``S_a <= S_b`` for identical jobs ``a < b`` and re-sorts the
hint to match, ``release_order`` the same for jobs with the same modes in order
of release; ``lp_relaxation`` runs CP-SAT at ``linearization_level = 2``.
(``incumbent_search`` acts on the data: a better hint and tighter windows.)

Choices (the spec leaves them open):

* CP-SAT runs with ``num_workers = threads`` (default 1, reproducible) and
  ``random_seed = seed``; its time limit is what remains of the deadline.
  CP-SAT statuses map to :class:`~ddlsched.solvers.result.Status`:
  ``OPTIMAL -> optimal``, ``FEASIBLE -> feasible`` (time limit),
  ``UNKNOWN -> time_limit_no_solution``, ``INFEASIBLE``/``MODEL_INVALID ->
  error`` (the windows contain the incumbent, so "infeasible" is a failure).
  CP-SAT is driven through :mod:`ddlsched.solvers.cpsat`.
"""

from __future__ import annotations

import itertools
import logging
import math
from dataclasses import dataclass, field
from typing import Any

from ddlsched.deadline import Deadline
from ddlsched.errors import SolverError
from ddlsched.models.asrpt_integer import IntegerData, IntegerSolution, cliques
from ddlsched.models.asrpt_strengthen import (
    Strengthening,
    identical_classes,
    lp_lower_bound,
    objective_lower_bound,
    release_classes,
    search_incumbent,
    sorted_within_classes,
    with_incumbent,
)
from ddlsched.solvers.cpsat import CpsatOptions, model_size
from ddlsched.solvers.cpsat import solve_cpsat as run_cpsat
from ddlsched.solvers.result import Status

__all__ = ["CpsatResult", "build_cpsat", "solve_cpsat"]

log = logging.getLogger(__name__)


@dataclass
class CpsatResult:
    """What CP-SAT proved on one integer model (objective and bound in time units)."""

    status: Status
    solution: IntegerSolution | None
    objective: int | None
    bound: int | None
    runtime_s: float
    model_size: tuple[int, int, int]
    version: str
    message: str
    time_limit_hit: bool
    added_bounds: dict[str, int] = field(default_factory=dict)
    #: CP-SAT's own effort counters (the same on every machine for a search that ends
    #: before its time limit): ``deterministic_time``, ``branches``, ``conflicts``
    search: dict[str, float] = field(default_factory=dict)


def build_cpsat(
    data: IntegerData,
    hint: IntegerSolution | None = None,
    clique_cuts: bool = True,
    strengthening: Strengthening | None = None,
    lower_bound: int | None = None,
):
    """The CP-SAT model (module docstring); returns ``(model, starts, presences)``.
    ``strengthening`` ``None``: none (the model without strengthenings); ``lower_bound``:
    a valid bound on the objective (time units) to add as a constraint."""
    strengthening = strengthening or Strengthening.none()
    from ortools.sat.python import cp_model

    cluster = data.instance.cluster
    g = cluster.gpus_per_server
    model = cp_model.CpModel()
    starts = []
    presences: list[dict[int, Any]] = []
    per_server: list[tuple[list[Any], list[int]]] = [([], []) for _ in range(cluster.servers)]
    all_intervals: list[Any] = []
    all_demands: list[int] = []
    objective = []
    interval_of: dict[tuple[int, int], Any] = {}
    for i in range(data.num_jobs):
        r, last = data.release[i], data.latest_end[i]
        feasible = data.feasible_modes(i)
        shortest = min(data.modes[i][k].duration for k in feasible)
        start = model.new_int_var(r, last - shortest, f"S{i}")
        starts.append(start)
        objective.append(start)
        lits = {}
        gpus = sum(data.modes[i][feasible[0]].usage)
        for k in feasible:
            mode = data.modes[i][k]
            lit = model.new_bool_var(f"p{i}_{k}")
            lits[k] = lit
            model.add(start + mode.duration <= last).only_enforce_if(lit)
            interval = model.new_optional_fixed_size_interval_var(
                start, mode.duration, lit, f"run{i}_{k}"
            )
            interval_of[i, k] = interval
            for m, u in enumerate(mode.usage):
                if u:
                    per_server[m][0].append(interval)
                    per_server[m][1].append(u)
            all_intervals.append(interval)
            all_demands.append(gpus)
            objective.append(mode.duration * lit)
        model.add_exactly_one(lits.values())
        presences.append(lits)
    for m in range(cluster.servers):  # Eq. (3): at most g GPUs per server at every instant
        intervals, demands = per_server[m]
        if intervals:
            model.add_cumulative(intervals, demands, g)
    model.add_cumulative(all_intervals, all_demands, cluster.num_gpus)  # redundant
    if clique_cuts:  # redundant: members of a clique pairwise exceed a capacity
        for members in cliques(data):
            if len({i for i, _ in members}) >= 2:
                model.add_no_overlap([interval_of[i, k] for i, k in members])
    model.minimize(sum(objective))  # Eq. (8): sum_i C_i
    if lower_bound is not None:  # valid for every optimum (asrpt_strengthen)
        model.add(sum(objective) >= lower_bound)
    if strengthening.symmetry:  # identical jobs start in index order (asrpt_strengthen)
        classes = identical_classes(data)
        for members in classes:
            for a, b in itertools.pairwise(members):
                model.add(starts[a] <= starts[b])
        if hint is not None:
            hint = sorted_within_classes(hint, classes)
    if strengthening.release_order:  # jobs of one mode list start in release order
        classes = release_classes(data)
        for members in classes:
            for a, b in itertools.pairwise(members):
                model.add(starts[a] <= starts[b])
        if hint is not None:
            hint = sorted_within_classes(hint, classes)
    if hint is not None:
        for i in range(data.num_jobs):
            model.add_hint(starts[i], hint.start[i])
            for k, lit in presences[i].items():
                model.add_hint(lit, k == hint.mode[i])
    return model, starts, presences


def solve_cpsat(
    data: IntegerData,
    deadline: Deadline,
    *,
    seed: int = 0,
    threads: int = 1,
    strengthening: Strengthening | None = None,
    search_share: float = 1.0,
) -> CpsatResult:
    """Solve the CP-SAT model of ``data`` within ``deadline`` (incumbent as hint); the
    search itself gets ``search_share`` of what the added bounds leave of it."""
    strengthening = strengthening or Strengthening.none()
    added, data = _added_bounds(data, deadline, strengthening)
    model, starts, presences = build_cpsat(
        data,
        data.incumbent,
        strengthening=strengthening,
        lower_bound=max(added.values()) if added else None,
    )
    size = model_size(model)
    options = CpsatOptions(
        seed=seed, workers=threads, linearization_level=2 if strengthening.lp_relaxation else None
    )
    run = run_cpsat(model, deadline.sub(search_share), options)
    status = run.status
    if status in (Status.INFEASIBLE, Status.ERROR):  # the windows hold the incumbent
        status = Status.ERROR
        log.warning("CP-SAT returned %s on the asrpt model (%s)", run.message, data.rounding)
    solution = objective = bound = None
    if status in (Status.OPTIMAL, Status.FEASIBLE):
        solution = _decode(run, starts, presences)
        objective = solution.objective(data)
        if abs(objective - run.objective) > 1e-6:
            raise SolverError(
                f"CP-SAT objective {run.objective} != decoded {objective} (a model bug)"
            )
        bound = math.ceil(run.bound - 1e-6)
        if status is Status.OPTIMAL:
            bound = objective
    return CpsatResult(
        status=status,
        solution=solution,
        objective=objective,
        bound=bound,
        runtime_s=run.runtime_s,
        model_size=size,
        version=run.version,
        message=run.message,
        added_bounds=added,
        time_limit_hit=status in (Status.FEASIBLE, Status.TIME_LIMIT_NO_SOLUTION),
        search=_effort(run.solver),
    )


def _effort(solver: Any) -> dict[str, float]:
    """CP-SAT's deterministic time, branches and conflicts (empty when it did not run)."""
    if solver is None:
        return {}
    return {
        "deterministic_time": float(solver.deterministic_time),
        "branches": float(solver.num_branches),
        "conflicts": float(solver.num_conflicts),
    }


def _added_bounds(
    data: IntegerData, deadline: Deadline, strengthening: Strengthening
) -> tuple[dict[str, int], IntegerData]:
    """The objective bounds the strengthening adds (units), by name, and the data with
    the incumbent improved by the LP order (``incumbent_search`` and ``lp_bound``)."""
    out = {}
    if strengthening.objective_bound:
        out["partition"] = objective_lower_bound(data)
    proven = out.get("partition", -1) >= data.incumbent.objective(data)
    if strengthening.lp_bound and not proven:  # nothing left to prove: the LP is skipped
        lp = lp_lower_bound(data, deadline)
        if lp is not None:
            out["lp"] = lp.bound
            if strengthening.incumbent_search:
                data = with_incumbent(data, search_incumbent(data, [lp.order], deadline))
    return out, data


def _decode(run, starts: list[Any], presences: list[dict[int, Any]]) -> IntegerSolution:
    """The start and the chosen mode of every job in CP-SAT's solution."""
    start = tuple(run.value(s) for s in starts)
    mode = []
    for lits in presences:
        picked = [k for k, lit in lits.items() if run.boolean_value(lit)]
        if len(picked) != 1:
            raise SolverError(f"CP-SAT chose {len(picked)} modes for a job")
        mode.append(picked[0])
    return IntegerSolution(start, tuple(mode))
