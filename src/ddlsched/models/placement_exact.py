"""The exact strategies of family ``placement``: the pattern proof, then the ILPs (spec ``placement.md``).

Methods ``exact``, ``exact_gpu_level`` and ``exact_gpu_level_paper`` (wiring:
:mod:`ddlsched.families.placement`). Every ILP is solved by
:func:`solve_ilp` through
:func:`~ddlsched.solvers.formulation.solve_formulation` (the formulations:
:class:`~ddlsched.models.placement.PlacementFormulation`), with an absolute
gap of 1e-7 and, by default, a cross-check of a proven optimum with the
other backend.

``exact`` (:func:`exact`): the aggregated formulation (counts per stage and
server; Eqs. 2, 4-7). With ``patterns`` (default) it first proves what it
can without the ILP: the server-pattern bounds and placement of
:mod:`ddlsched.models.placement_pattern_proof`, then, where they leave a
gap, the CP-SAT threshold search of
:mod:`ddlsched.solvers.placement_threshold`. When these close the gap and
neither ``cross_check`` nor ``milp`` is set, the placement is returned as
optimal (``info['proof']``: ``patterns`` or ``threshold``); otherwise the
aggregated one-hot ILP is solved from their placement, with their bound as
a row (``info['proof']``: ``milp``). How a closed proof and the ILP are
compared, and what an ILP stopped by the time limit keeps of the proof, are
our choices, written in :func:`exact`, :func:`_compare_with_proof` and
:func:`_keep_proof`.
"""

from __future__ import annotations

from ddlsched.deadline import Deadline
from ddlsched.errors import TimeLimitReached
from ddlsched.problems.placement import PlacementInstance, evaluate
from ddlsched.solvers.limits import SolveLimits
from ddlsched.solvers.result import Outcome

__all__ = ["exact", "solve_ilp"]


def solve_ilp(
    instance: PlacementInstance,
    formulation,
    *,
    cross_check: bool,
    backend: str,
    seed: int,
    deadline: Deadline,
) -> Outcome:
    """Solve a placement ILP (:class:`~ddlsched.models.placement.PlacementFormulation`)
    with an absolute gap of 1e-7, cross-checked with the other backend when asked."""
    from ddlsched.solvers.formulation import solve_formulation

    limits = SolveLimits(abs_gap=1e-7, seed=seed)
    return solve_formulation(formulation, instance, backend, limits, cross_check, deadline=deadline)


def exact(
    instance: PlacementInstance,
    *,
    backend: str,
    seed: int,
    deadline: Deadline,
    symmetry_breaking: bool = True,
    cuts: bool = True,
    patterns: bool = True,
    milp: bool = False,
    cross_check: bool = True,
) -> Outcome:
    """Method ``exact``; ``info['proof']`` says what proved the answer.

    With ``patterns`` (default) the pattern proof
    (:func:`~ddlsched.models.placement_pattern_proof.placement_proof`) runs first. When it
    closes the gap (``proof`` ``patterns``: the pattern search's bound, from
    the combinatorial bounds or the certified pattern LP, meets its placement;
    ``threshold``: CP-SAT proved every smaller
    term value infeasible) and neither ``cross_check`` nor ``milp`` is set,
    its placement is returned as optimal without building the ILP. Otherwise
    the aggregated ILP is solved (``proof`` ``milp``), starting from the
    pattern placement, with the proven bound as a row (``milp``: the ILP then
    only confirms it). When the cross-check follows a closed pattern proof,
    that row holds the pattern search's bound only, so that HiGHS (and SCIP,
    its cross-check) re-prove what CP-SAT proved, and
    ``info['pattern_proof']['agrees']`` compares the two answers: ``True``;
    ``None`` when the time limit left no room for the ILP or stopped it
    (the proof stands, ``optimal``); ``False`` when they disagree, and then
    the better evaluated placement is returned ``feasible``, without a bound.
    Without a closed proof, an ILP stopped by the time limit keeps the
    proof's bound and the best placement known (:func:`_keep_proof`).
    """
    from ddlsched.models.placement_bounds import time_scale
    from ddlsched.models.placement_pattern_proof import placement_proof
    from ddlsched.solvers.result import Status

    proof = placement_proof(instance, deadline) if patterns else None
    report = None
    if proof is not None:
        scale = time_scale(instance)
        report = {
            "proof": proof.proof,
            "bound_s": proof.bound / scale,
            "pattern_bound_s": None if proof.pattern_bound is None else proof.pattern_bound / scale,
            "lp_solves": proof.lp_solves,
            "alpha_s": None if proof.value is None else proof.value / scale,
            "threshold_solves": proof.threshold_solves,
            "threshold_s": proof.threshold_s,
        }
        if proof.closed and not (cross_check or milp):
            return _proven(proof, scale, {"proof": proof.proof, "pattern_proof": report})
    if proof is not None and _no_time_for_the_ilp(deadline.remaining_s()):
        if proof.closed:  # the re-proof cannot run: the proof stands, unchecked
            report["agrees"] = None
            return _proven(proof, scale, {"proof": proof.proof, "pattern_proof": report})
        outcome = Outcome(
            status=Status.TIME_LIMIT_NO_SOLUTION,
            time_limit_hit=True,
            info={"stopped": "time limit reached after the pattern proof"},
        )
    else:
        from ddlsched.models.placement import PlacementFormulation  # imports Pyomo

        formulation = PlacementFormulation(
            "aggregated",
            symmetry_breaking=symmetry_breaking,
            cuts=cuts,
            patterns=patterns,
            # a closed proof cross-checked: the ILPs re-prove what CP-SAT proved
            threshold=not (proof is not None and proof.closed and cross_check),
        )
        outcome = solve_ilp(
            instance,
            formulation,
            cross_check=cross_check,
            backend=backend,
            seed=seed,
            deadline=deadline,
        )
    outcome.info["proof"] = "milp" if outcome.status is Status.OPTIMAL else None
    if report is None:
        return outcome
    outcome.info["pattern_proof"] = report
    if proof.closed:
        return _compare_with_proof(instance, outcome, proof, scale, report)
    if outcome.status is not Status.OPTIMAL:
        outcome = _keep_proof(instance, outcome, proof, scale, seed, deadline)
    return outcome


def _proven(proof, scale: float, info: dict) -> Outcome:
    """The closed pattern proof as the method's answer (``optimal``)."""
    from ddlsched.problems.placement import Placement
    from ddlsched.solvers.result import Claim, Status

    return Outcome(
        Placement(proof.counts),
        Status.OPTIMAL,
        bound=proof.bound / scale,
        claim=Claim(proof.value / scale, proven=True),
        info=info,
    )


def _compare_with_proof(
    instance: PlacementInstance, outcome: Outcome, proof, scale: float, report: dict
) -> Outcome:
    """The ILP ran after a closed pattern proof (cross-check or ``milp``): agreement
    when it proved the same alpha; the proof stands, unchecked (``agrees`` None), when
    the ILP stopped at the time limit without beating it; on a disagreement (either
    side wrong) the better evaluated placement is returned as ``feasible``, without
    a bound."""
    from dataclasses import replace

    from ddlsched.problems.placement import Placement
    from ddlsched.solvers.result import Claim, Status

    alpha = proof.value / scale
    ilp = (
        None if outcome.schedule is None else evaluate(instance, outcome.schedule).iteration_time_s
    )
    same = ilp is not None and abs(ilp - alpha) <= 1e-6 * max(1.0, abs(alpha))
    if outcome.status is Status.OPTIMAL and same:
        report["agrees"] = True
        return outcome
    if outcome.status is not Status.OPTIMAL and (ilp is None or ilp >= alpha or same):
        report["agrees"] = None
        info = {**outcome.info, "proof": proof.proof}
        return replace(_proven(proof, scale, info), time_limit_hit=outcome.time_limit_hit)
    report["agrees"] = False
    info = {**outcome.info, "proof": None}
    info["warning"] = (
        f"the pattern proof ({proof.proof}, alpha {alpha:.9g} s) and the ILP "
        f"({outcome.status}, alpha {ilp} s) disagree: returning the better placement unproven"
    )
    if ilp is not None and ilp <= alpha:
        return replace(outcome, status=Status.FEASIBLE, bound=None, info=info)
    return Outcome(
        Placement(proof.counts),
        Status.FEASIBLE,
        claim=Claim(alpha),
        info=info,
        time_limit_hit=outcome.time_limit_hit,
    )


def _no_time_for_the_ilp(remaining_s: float) -> bool:
    """Less than 0.2 s left (not enough to build and hand over even a small ILP), or
    less than importing Pyomo takes (~0.8 s cold, not interruptible)."""
    import sys

    return remaining_s < 0.2 or (remaining_s < 1.0 and "pyomo.environ" not in sys.modules)


#: Seconds Heavy-Edge may run past the deadline when an unfinished ILP left no placement.
_HEAVY_EDGE_GRACE_S = 0.5


def _keep_proof(
    instance: PlacementInstance,
    outcome: Outcome,
    proof,
    scale: float,
    seed: int,
    deadline: Deadline | None = None,
) -> Outcome:
    """An unfinished ILP (time limit) keeps what the pattern proof established: its
    bound where it is higher, and the best of the ILP's incumbent, the proof's
    placement and Heavy-Edge's as the schedule (``info['incumbent_from']``).

    Heavy-Edge takes ~1 ms on a few hundred GPUs but ~70 s on 4,096 (its job graph
    is dense): it runs only while the deadline lasts (interrupted at it, then left
    out: ``info['heavy_edge_skipped']``), or :data:`_HEAVY_EDGE_GRACE_S` past it when
    there is no other placement."""
    from dataclasses import replace

    from ddlsched.heuristics.heavy_edge import heavy_edge
    from ddlsched.problems.placement import Placement
    from ddlsched.solvers.result import Claim, Status

    bound = proof.bound / scale
    if outcome.bound is None or bound > outcome.bound:
        outcome = replace(outcome, bound=bound)
    if outcome.status not in (Status.FEASIBLE, Status.TIME_LIMIT_NO_SOLUTION):
        return outcome
    candidates = [] if outcome.schedule is None else [("milp", outcome.schedule)]
    if proof.counts is not None:
        candidates.append(("patterns", Placement(proof.counts)))
    deadline = deadline or Deadline.unlimited()
    # with no other placement, Heavy-Edge may finish within a short grace past the limit
    # (the answer of a run cut short is then still a placement)
    window = deadline if candidates else Deadline(deadline.remaining_s() + _HEAVY_EDGE_GRACE_S)
    try:
        with window.interrupting("Heavy-Edge as the incumbent of an unfinished ILP"):
            window.check("Heavy-Edge as the incumbent of an unfinished ILP")
            candidates.append(("heavy_edge", heavy_edge(instance, seed)))
    except TimeLimitReached as exc:
        outcome.info["heavy_edge_skipped"] = str(exc)
    if not candidates:
        return outcome
    name, best = min(candidates, key=lambda c: evaluate(instance, c[1]).iteration_time_s)
    outcome.info["incumbent_from"] = name
    if name == "milp":
        return outcome
    claim = Claim(proof.value / scale) if name == "patterns" else None
    return replace(outcome, schedule=best, status=Status.FEASIBLE, claim=claim)
