"""``ub_branch`` (ours): an upper bound of family ``dmlrs`` by branch-and-bound on job acceptance.

Paper: Yu et al., IEEE TNSE 2022 (reading notes of the paper): DMLRS (Eqs. 3-7). Spec
``docs/families/dmlrs.md``, "Bounds". The method is ours: a best-first branch-and-bound
whose node relaxation is ``ub_capacity``'s LP (:mod:`ddlsched.models.dmlrs_capacity`,
whose docstring holds the relaxation and the map of a schedule onto it), branching on the
cumulative completion columns ``Y[i, t]`` of that LP: first on a job's acceptance ``Y[i,
T]``, then, once every acceptance is integral, on completing by slot ``t``.

A node is a set of fixings: ``Y[i, T] = 0`` (job ``i`` rejected), ``Y[i, T] = 1``
(accepted), ``Y[i, t] = 0`` (not complete by slot ``t``: the column's upper bound 0) or
``Y[i, t] = 1`` (complete by ``t``: its lower bound 1). Each is a change of one column's
bounds; the node's LP starts from its parent's optimal basis (dual simplex, presolve off).

Validity. Map a schedule ``S`` the evaluator accepts onto ``ub_capacity``'s LP as that
module's docstring does: ``Y[i, t] = 1`` exactly when job ``i`` is accepted and completes
by ``t``, so every ``Y`` is 0 or 1 and the point is feasible with objective
``utility(S)``. A branching on ``Y[i, t]`` splits the node's region into ``Y[i, t] <= 0``
and ``Y[i, t] >= 1``; ``S``'s point lies in one of them. So at every moment ``S``'s point
lies in exactly one leaf of the tree (the root is the leaf before any branching), and one
of:

* the leaf is open: ``utility(S) <= `` its LP optimum (``S``'s point is feasible there);
  the node's bound is ``min(LP, parent's bound)``, still ``>= utility(S)`` since the
  parent's region contains the child's;
* the leaf was closed because its LP is infeasible: impossible, ``S``'s point is feasible
  there;
* the leaf was closed because its bound is at most the incumbent's utility, the utility of
  a schedule the evaluator accepted: ``utility(S) <= bound <= incumbent``.

Hence ``utility(S) <= max(incumbent, max over open leaves of their bounds)``: the global
bound, valid at every moment, in particular when the node budget or the time limit stops
the search (a node whose LP the limit cut keeps its parent's bound). With ``S`` an optimal
schedule it is ``>= OPT``. The reported bound is ``min(global bound, ub_capacity's LP,
ub_trivial)`` (each valid; the root's LP is ``ub_capacity``).

The search (deterministic: HiGHS's dual simplex from a stored basis, ties broken by the
order nodes were made):

* best first: the open node with the highest bound is split; its two children are solved
  at once (each solve is one node of the budget ``nodes``, the root included);
* the branching variable: among jobs whose acceptance ``a = Y[i, T]`` is fractional, the
  one with the largest ``min(a, 1 - a) u_i(d_i - 1)`` (``u_i(d_i - 1)`` the most the job
  can earn, its utility at its earliest completion): the fractional share that either
  child must move, times what the job is worth, which is how far the children's bounds
  can fall; acceptance first, because it decides whether the job's whole use of the
  cluster enters. When every acceptance is integral: among jobs whose completion is
  spread over slots (some ``Y[i, t]``, ``t < T``, fractional), the same score with ``a``
  the ``Y[i, t]`` nearest to 1/2 (the slot at the middle of the spread); ties to the
  lower job index, then the earlier slot;
* with parameter ``completion`` false only acceptances are split (acceptance branching
  alone, to measure what it closes by itself);
* a node whose ``Y`` are all integral has nothing left to split: when it is the best open
  node the search stops (``search_stopped = "integral"``): no branching on these columns
  can go below it;
* the incumbent (parameter ``incumbent``): the better utility of the ``fifo`` and ``drf``
  schedules, each re-evaluated by the family evaluator (a cheap heuristic: ``improve`` takes
  minutes at paper scale); nodes at or below it are closed;
* a node LP that HiGHS leaves unsettled, warm-started and again from scratch, keeps its
  parent's bound and is not split (``info['unsolved']``);
* stops: the node budget (``nodes``), every node closed (``closed``), the best node
  integral (``integral``) or unsolved (``unsolved``), or the deadline (``time_limit``: the
  open nodes still bound).

What it can reach: branching on every ``Y`` makes the completion choices binary, so the
search converges to ``ub_capacity``'s MILP with binary ``y`` (``--param integral=true``
there), never below it; it cannot remove what ``ub_capacity`` relaxes beyond integrality
(machines pooled, the two modes mixed in a slot, PSs at ``w / gamma``). Measured in
``benchmarks/results/dmlrs.md`` (``benchmarks/dmlrs_branch.py``).
"""

from __future__ import annotations

import heapq
import time
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ddlsched.deadline import Deadline
from ddlsched.errors import SolverError
from ddlsched.problems.dmlrs import DmlrsInstance

__all__ = ["BranchChoice", "JobColumns", "Node", "NodeLp", "branch_bound", "choose_branch"]

#: A ``Y`` value within this of 0 or 1 counts as integral.
INTEGRAL_TOL = 1e-6


@dataclass(frozen=True)
class BranchChoice:
    """The column to split on: job ``job``'s ``Y[job, slot]`` (``slot = T``: acceptance),
    its LP value ``value`` and the rule's ``score`` (module docstring)."""

    job: int
    slot: int
    column: int
    value: float
    score: float
    is_acceptance: bool

    @property
    def kind(self) -> str:
        """``acceptance`` or ``completion``."""
        return "acceptance" if self.is_acceptance else "completion"


@dataclass(order=True)
class Node:
    """An open node: ordered by ``(-bound, order)`` (best first, then the older);
    ``fixings`` maps a column to its ``(lower, upper)``; ``basis`` is the LP's optimal
    basis (the children's warm start); ``branch`` the column to split (``None``: every
    ``Y`` integral); ``solved`` false: the node's LP was cut by the limit or left
    unsolved, the node keeps its parent's bound and cannot be split."""

    sort_key: tuple[float, int]
    bound: float = field(compare=False)
    fixings: dict[int, tuple[float, float]] = field(compare=False)
    basis: Any = field(compare=False, repr=False)
    branch: BranchChoice | None = field(compare=False)
    depth: int = field(compare=False)
    solved: bool = field(default=True, compare=False)


class NodeLp:
    """``ub_capacity``'s LP in one HiGHS object, re-solved under a node's fixings."""

    def __init__(self, model: Any) -> None:
        import highspy

        from ddlsched.models.dmlrs_capacity import to_highs
        from ddlsched.solvers.highs_lp import new_highs

        self.model = model
        self.highs = new_highs([("output_flag", False), ("threads", 1)])
        self.highs.passModel(to_highs(model, highspy))
        self._upper = np.minimum(np.asarray(model.upper, dtype=float), highspy.kHighsInf)
        self._fixed: dict[int, tuple[float, float]] = {}
        #: Warm starts solved again from scratch (:meth:`solve`).
        self.retries = 0

    def solve(
        self, fixings: dict[int, tuple[float, float]], basis: Any, time_limit_s: float
    ) -> tuple[str, float | None, np.ndarray | None]:
        """``(status, objective, column values)`` under ``fixings`` from ``basis`` (``None``:
        the current one); ``status`` is ``optimal``, ``infeasible``, ``time_limit`` or
        ``unsolved`` (objective and values ``None`` unless optimal). A warm start that ends
        in any other HiGHS status (``Unknown`` was seen at T = 80), or says ``infeasible``
        (which closes a whole subtree), is solved once more from scratch, presolve on;
        ``unsolved`` if that does not settle it either. The objective is HiGHS's, as
        ``ub_capacity``'s (the weak-duality bound of :mod:`ddlsched.solvers.lp_dual_bound`
        is infinite on this LP: columns without an upper bound whose reduced costs HiGHS
        leaves within its tolerance of 0). ``time_limit_s`` counts from now, for the warm
        start and the retry together; each run gets what is left of it from its own start
        (:func:`ddlsched.solvers.highs_rerun.run_for`: HiGHS compares ``time_limit`` with
        the object's run clock, which adds up over runs)."""
        highs = self.highs
        end = time.perf_counter() + time_limit_s
        for col in set(self._fixed) - set(fixings):  # back to the model's bounds
            highs.changeColBounds(col, 0.0, float(self._upper[col]))
        for col, (lower, upper) in fixings.items():
            highs.changeColBounds(col, lower, upper)
        self._fixed = dict(fixings)
        if basis is not None:
            highs.setBasis(basis)
            highs.setOptionValue("presolve", "off")
        kind = self._run(end)
        if kind in ("unsolved", "infeasible") and basis is not None:  # from scratch
            self.retries += 1
            highs.clearSolver()
            highs.setOptionValue("presolve", "on")
            kind = self._run(end)
        if kind != "optimal":
            return kind, None, None
        values = np.asarray(highs.getSolution().col_value)
        return "optimal", float(highs.getInfo().objective_function_value), values

    def _run(self, end: float) -> str:
        """Run HiGHS until ``end`` (``time.perf_counter``); its model status as ``optimal``,
        ``infeasible``, ``time_limit`` or ``unsolved`` (every other status,
        ``kUnboundedOrInfeasible`` and ``kIterationLimit`` included: the LP's columns with a
        cost are bounded, but the status does not prove infeasibility)."""
        from ddlsched.solvers.highs_rerun import run_for

        name = run_for(self.highs, end - time.perf_counter())
        return name if name in ("optimal", "infeasible", "time_limit") else "unsolved"

    def basis(self) -> Any:
        """The last solve's basis."""
        return self.highs.getBasis()


@dataclass(frozen=True)
class JobColumns:
    """Per job with a completion column: its first completion slot ``e_i`` (``first``) and
    ``u_i(d_i - 1)``, the largest objective of its completion columns (``worth``)."""

    first: dict[int, int]
    worth: dict[int, float]

    @classmethod
    def of(cls, model: Any) -> JobColumns:
        first: dict[int, int] = {}
        worth: dict[int, float] = {}
        for (i, t), col in sorted(model.completion.items()):
            first[i] = min(first.get(i, t), t)
            worth[i] = max(worth.get(i, 0.0), float(model.cost[col]))
        return cls(first, worth)


def _fraction(value: float) -> float:
    return min(value, 1.0 - value)


def choose_branch(
    model: Any, values: np.ndarray, jobs: JobColumns, slots: int, completion: bool = True
) -> BranchChoice | None:
    """The branching column of the module docstring's rule at the LP point ``values``, or
    ``None`` when every ``Y`` is integral (every acceptance, with ``completion`` false)."""
    best: BranchChoice | None = None
    for i, worth in jobs.worth.items():
        col = model.slot_columns[(i, slots)][0]
        value = float(values[col])
        if INTEGRAL_TOL < value < 1.0 - INTEGRAL_TOL:
            score = _fraction(value) * worth
            if best is None or score > best.score:
                best = BranchChoice(i, slots, col, value, score, True)
    if best is not None or not completion:
        return best
    for i, worth in jobs.worth.items():
        middle: BranchChoice | None = None
        for t in range(jobs.first[i], slots):
            col = model.slot_columns[(i, t)][0]
            value = float(values[col])
            fractional = INTEGRAL_TOL < value < 1.0 - INTEGRAL_TOL
            if fractional and (middle is None or _fraction(value) > _fraction(middle.value)):
                middle = BranchChoice(i, t, col, value, 0.0, False)
        if middle is not None:
            score = _fraction(middle.value) * worth
            if best is None or score > best.score:
                best = BranchChoice(i, middle.slot, middle.column, middle.value, score, False)
    return best


def _children(node: Node) -> list[dict[int, tuple[float, float]]]:
    """The two children's fixings: the branching column at 0 (upper bound) and at 1
    (lower bound)."""
    assert node.branch is not None
    col = node.branch.column
    lower, upper = node.fixings.get(col, (0.0, 1.0))
    down = dict(node.fixings)
    down[col] = (lower, 0.0)
    up = dict(node.fixings)
    up[col] = (1.0, upper)
    return [down, up]


def _root_profile(model: Any, values: np.ndarray, slots: int) -> dict[str, int]:
    """How many jobs the root LP accepts wholly, accepts in part, and completes over more
    than one slot."""
    accepted = partly = spread = 0
    in_use: dict[int, int] = {}
    for (i, _), col in model.completion.items():
        in_use[i] = in_use.get(i, 0) + int(values[col] > INTEGRAL_TOL)
    for i in sorted(in_use):
        value = float(values[model.slot_columns[(i, slots)][0]])
        accepted += value >= 1.0 - INTEGRAL_TOL
        partly += INTEGRAL_TOL < value < 1.0 - INTEGRAL_TOL
        spread += in_use[i] > 1
    return {"accepted": accepted, "fractional_acceptance": partly, "spread_completion": spread}


def _global(incumbent: float, heap: list[Node]) -> float:
    """The global bound: the incumbent or the best open node's bound (module docstring)."""
    return max(incumbent, heap[0].bound) if heap else incumbent


def branch_bound(
    instance: DmlrsInstance,
    nodes: int = 200,
    dff: int = 3,
    incumbent: bool = True,
    completion: bool = True,
    deadline: Deadline | None = None,
) -> tuple[float, dict[str, Any]]:
    """``(bound, info)``: the best-first branch-and-bound of the module docstring, at most
    ``nodes`` node LPs (the root included); ``dff`` as ``ub_capacity``'s; ``incumbent``:
    prune with the better of ``fifo``'s and ``drf``'s utilities; ``completion`` false:
    branch on acceptance only (a node whose acceptances are integral is not split).

    ``info``: ``ub_capacity`` (the root LP), ``incumbent``, the root's profile, node
    counts, ``open_bound_spread`` (highest minus lowest open bound), ``branchings`` (the
    first ten: job, kind, slot, LP value), ``bound_at_nodes`` (``[nodes solved, global
    bound]`` at the root, at each power of two, at the end), ``search_stopped``, seconds.

    Raises :class:`~ddlsched.errors.TimeLimitReached` only before the root LP is solved.
    """
    from ddlsched.models.dmlrs import ub_trivial
    from ddlsched.models.dmlrs_capacity import build_capacity_model
    from ddlsched.models.dmlrs_lagrange import baseline_utility

    deadline = deadline or Deadline.unlimited()
    started = time.perf_counter()
    info: dict[str, Any] = {"ub_trivial": ub_trivial(instance)}
    model = build_capacity_model(instance, False, deadline, dff)
    info.update(columns=model.num_cols, rows=model.num_rows)
    if not model.completion:  # no job can finish by T: nothing to earn
        info.update(ub_capacity=0.0, search_stopped="nothing_to_earn", nodes_solved=0)
        info["seconds"] = time.perf_counter() - started
        return 0.0, info
    T = instance.slots
    jobs = JobColumns.of(model)
    lp = NodeLp(model)
    status, root, values = lp.solve({}, None, deadline.remaining_s())
    if status != "optimal" or values is None:
        deadline.check("ub_branch's root LP")
        raise SolverError(f"ub_branch: the root LP ended {status}")
    info["ub_capacity"] = root
    info.update(_root_profile(model, values, T))
    best_known = baseline_utility(instance, deadline) if incumbent else 0.0
    info["incumbent"] = best_known
    counter = 0
    heap = [
        Node((-root, 0), root, {}, lp.basis(), choose_branch(model, values, jobs, T, completion), 0)
    ]
    stats = dict(
        nodes_solved=1, closed_infeasible=0, closed_by_incumbent=0, max_depth=0, unsolved=0
    )
    branchings: list[list[Any]] = []
    history: list[list[float]] = [[1, root]]
    stopped = "closed"
    if root <= best_known:
        heap, stats["closed_by_incumbent"] = [], 1
    while heap:
        node = heap[0]
        if not node.solved:  # its parent's bound, nothing to split
            stopped = "unsolved"
            break
        if node.branch is None:
            stopped = "integral"
            break
        if stats["nodes_solved"] + 2 > nodes:
            stopped = "nodes"
            break
        if deadline.expired():
            stopped = "time_limit"
            break
        heapq.heappop(heap)
        if len(branchings) < 10:
            b = node.branch
            branchings.append([b.job, b.kind, b.slot, round(b.value, 6)])
        children, attempts, cut = _solve_children(
            node, lp, deadline, stats, best_known, (model, jobs, T, completion)
        )
        for attempt, child in children:  # ties broken by the order the LPs were solved
            heapq.heappush(heap, replace(child, sort_key=(child.sort_key[0], counter + attempt)))
        counter += attempts
        if stats["nodes_solved"] >= 2 * history[-1][0]:  # a power of two reached
            history.append([stats["nodes_solved"], _global(best_known, heap)])
        if cut:
            stopped = "time_limit"
            break
    global_bound = _global(best_known, heap)
    if history[-1][0] != stats["nodes_solved"]:
        history.append([stats["nodes_solved"], global_bound])
    bounds = [n.bound for n in heap]
    info.update(
        stats,
        nodes_open=len(heap),
        open_bound_spread=(max(bounds) - min(bounds)) if bounds else 0.0,
        branchings=branchings,
        bound_at_nodes=history,
        search_stopped=stopped,
        warm_starts_redone=lp.retries,
        seconds=time.perf_counter() - started,
    )
    return max(0.0, min(global_bound, root, info["ub_trivial"])), info


def _solve_children(
    node: Node,
    lp: NodeLp,
    deadline: Deadline,
    stats: dict[str, int],
    best_known: float,
    branching: tuple[Any, JobColumns, int, bool],
) -> tuple[list[tuple[int, Node]], int, bool]:
    """The children of ``node`` worth keeping, each with its place among the LPs solved
    (from 1), how many LPs were solved (``stats`` counted), and whether the time limit
    cut a solve: an infeasible child or one at most ``best_known`` is closed; a child
    HiGHS does not settle keeps its parent's bound."""
    model, jobs, T, completion = branching
    kept: list[tuple[int, Node]] = []
    cut = False
    attempt = 0
    for attempt, fixings in enumerate(_children(node), start=1):
        status, value, values = lp.solve(fixings, node.basis, deadline.remaining_s())
        stats["nodes_solved"] += 1
        if status == "infeasible":
            stats["closed_infeasible"] += 1
            continue
        if status != "optimal" or values is None or value is None:  # parent's bound
            stats["unsolved"] += status == "unsolved"
            cut = cut or status == "time_limit"
            kept.append(
                (attempt, Node((-node.bound, 0), node.bound, fixings, None, None,
                               node.depth + 1, solved=False))
            )  # fmt: skip
            continue
        bound = min(value, node.bound)
        if bound <= best_known:
            stats["closed_by_incumbent"] += 1
            continue
        choice = choose_branch(model, values, jobs, T, completion)
        kept.append(
            (attempt, Node((-bound, 0), bound, fixings, lp.basis(), choice, node.depth + 1))
        )
        stats["max_depth"] = max(stats["max_depth"], node.depth + 1)
    return kept, attempt, cut
