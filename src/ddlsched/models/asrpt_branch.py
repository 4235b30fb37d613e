"""Lower bound ``lb_branch`` of family ``asrpt``: the Lagrangian bound, branched on start windows.

A bound of ours, not the paper's. A-SRPT paper: Problem (8) (``min sum_i C_i``)
under Eqs. (1)-(3); spec ``docs/families/asrpt.md``, "Bounds". It is
``lb_lagrange``'s relaxation (R) (:mod:`ddlsched.models.asrpt_lagrange`: jobs
``[C_i - p_i, C_i)`` on ``g_i`` GPUs, at most ``G`` GPUs busy at a time,
``C_i >= r_i + p_i``) bounded by branch and bound over the jobs' start
windows, each node bounded by the Lagrangian of the capacity. Branching on
start times of a time-indexed relaxation is textbook (e.g. Sousa and Wolsey
1992); the node bound, the choice of jobs and the splits below are ours.

Why. The Lagrangian's value is that of the LP relaxation of (R)'s
time-indexed formulation, which may run a large job "in part" early and "in
part" late: on the testbed's job set 1 an 8-GPU job of 7,928 s arriving at
354 s is, in the LP, partly at its arrival (leaving the other jobs 6 GPUs
for part of the time) and partly after the long jobs. In one node it runs
early, and the capacity it leaves binds the others in full; in another it
runs late and pays its wait. Neither node's LP can average the two.

Theorem (ours). Let the start of each job ``i`` be confined to ``D_i = [a_i,
e_i]`` (``r_i <= a_i``, ``e_i <= inf``). For every multiplier ``lambda >=
0`` on the grid,

    L_D(lambda) = sum_i min_{s in D_i} f_i(s) - G Lam(b_K)

(``f_i``, ``Lam`` as in :mod:`~ddlsched.models.asrpt_lagrange`) is at most
``sum_i C_i`` of every point of (R) whose starts lie in the ``D_i``: the proof
of ``lb_lagrange``'s theorem, with each inner minimum over ``D_i``. The
inner minimum stays exact: on ``D_i`` it is attained at ``a_i``, at a
breakpoint of ``f_i`` in ``(a_i, min(e_i, s_max)]`` or at ``e_i``
(``lagrangian_value`` with ``latest``). A node is such a box of windows;
branching on job ``j`` splits ``D_j`` into pieces ``[c_0, c_1], [c_1, c_2],
..., [c_{k-1}, e_j]`` with ``c_0 = a_j``, which cover ``D_j``, so every point
of the parent lies in some child and ``OPT(R) >= min`` over the open nodes of
their bounds (a child's bound is at least its parent's: it bounds a subset).
At the root every ``D_i = [r_i, inf)``: without the cuts below the value is
``lb_lagrange``'s. So the reported bound, the smallest node bound once the
budget is spent, is at most ``OPT(R) <= OPT_A`` and, without the cuts, at
least ``lb_lagrange``'s with the same grid, iterations and patience. Branching decides the strength, never the validity.

Rounded-capacity cuts (``capacity_cuts``, on by default). Every node's
Lagrangian also relaxes, with multipliers of its own, the rows ``sum_i
floor(g_i / k) [i active at t] <= floor(G / k)`` for each GPU count ``k > 1``
of the jobs with ``G / k`` fractional
(:func:`~ddlsched.models.asrpt_lagrange.rounded_capacity_cuts`: valid for every
point of (R), as ``floor`` is superadditive). The LP of (R) runs 3.5 jobs of
4 GPUs at a time on 14 GPUs; the cut of ``k = 4`` allows 3 (on the testbed's
fresh job set 21, ten 4-GPU jobs released within 80 s, it lifts the root by
1.4 %). The proof above holds with each row's term ``int mu_k (U_k -
floor(G / k)) <= 0`` added; with the cuts the root is no longer
``lb_lagrange``'s value (the ascent follows another path), only a bound of
the same relaxation (R).

Choices (ours; strength only):

* The grid, the root's ascent and ``UB`` (the relaxed list schedule,
  ``relaxation_ub``) are ``lb_lagrange``'s (``slots``, ``iterations``,
  ``patience``). Each child starts its ascent from its parent's best
  multipliers and runs ``node_iterations`` iterations at most (Polyak's step
  towards ``UB``, stopped when its value reaches ``UB``: such a node cannot
  hold a better point of (R) than the list schedule, and its bound, at least
  ``UB >= OPT(R)``, never decides the minimum unless every node does).
* Best first: the open node of smallest bound is split next (ties: the
  earlier node), into ``pieces`` children, until ``nodes`` node ascents
  (the root included) have run, or the smallest bound is at least ``UB``, or
  the smallest node has no window to split (``no window left to split``);
  a split's children all run (they must cover its window), so up to
  ``pieces - 1`` more (61 at ``nodes = 60``).
* The job to split, by ``order``; ``w_i = min(e_i, H) - a_i`` is the width
  of its window up to the grid's horizon ``H`` (a job whose window is narrow
  is as good as fixed).

  - ``gpu_time`` (default): among the ``branch_jobs`` jobs of largest GPU
    time ``g_i p_i`` (ties: index), the one with the largest ``g_i min(p_i,
    w_i)``.
  - ``gpus``: among the ``branch_jobs`` jobs of most GPUs ``g_i`` (ties:
    larger ``p_i``, then index), the one of most GPUs whose window is
    still open, wider than one grid slot (``w_i > H / K``, the grid's mean
    slot; ties: larger ``g_i min(p_i, w_i)``, then index). Why: (R)'s LP loses most where a job takes a large share of
    the ``G`` GPUs, and ``g_i p_i`` can rank long 1-GPU jobs first. On the
    testbed's fresh job set 11 an 8-GPU job of 797 s waits 6,721 s in
    ``improve_windows``' schedule; ``gpu_time`` splits four long 1-GPU jobs and
    never it (the bound climbs 0.15 % from the root at 200 nodes), ``gpus``
    splits it (+2.0 %). Measured on the asrpt results page, "Branching on
    the jobs of most GPUs"; neither order is the stronger on every set.
    The floor: with "open" meaning any width above 0, a job of most GPUs
    alone in its count was split until its window closed at float
    resolution before the next count was reached (on the testbed's job
    set 10 all 200 nodes split one job and the bound stayed at the
    root's); with it the splits pass on to the next open job (set 10
    177,167.11 -> 177,271.51, set 0 298,216.38 -> 298,427.15, sets 1 and 2
    the same; the results page, "The width floor of ``order = gpus``").
    With no candidate wider than the floor the search ends, budget left:
    the bound stays valid but may be below the one without the floor (on
    the hand instance of ``tests/test_asrpt_branch.py`` with one job to
    split, 51.66 after 13 nodes against 51.94 after 201). ``K`` is the
    grid's slot count after merging equal boundaries, at most ``slots``.

  Its pieces split ``[a_j, min(e_j, H)]`` evenly, the last one keeps ``e_j``.

Deterministic: the same parameters give the same bound unless the
deadline cuts the search or any node's ascent, the root's included (the best
bound so far, the smallest over the open nodes, stays valid; ``stopped`` says
``time limit`` then, also when the search ended for another reason after the
cut). The bound is never reported above ``UB`` (float noise of nodes at it).
Cost: at most ``iterations +
(nodes + pieces - 1) * node_iterations`` Lagrangian evaluations, each ``O(I log I + K)``
plus the inner minima.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ddlsched.deadline import Deadline
from ddlsched.models.asrpt import AlphaLb, alpha_lbs
from ddlsched.models.asrpt_lagrange import ascend, checked_jobs, relaxed_grid, rounded_capacity_cuts
from ddlsched.problems.asrpt import AsrptInstance

__all__ = [
    "DEFAULT_BRANCH_JOBS",
    "DEFAULT_NODES",
    "DEFAULT_NODE_ITERATIONS",
    "DEFAULT_PIECES",
    "ORDERS",
    "SETTINGS",
    "BranchBound",
    "branch_bound",
    "lb_branch",
]

#: Node ascents (the root included), iterations per child, children per split, jobs split.
DEFAULT_NODES = 60
DEFAULT_NODE_ITERATIONS = 300
DEFAULT_PIECES = 4
DEFAULT_BRANCH_JOBS = 4
#: How the jobs to split are chosen (module docstring).
ORDERS = ("gpu_time", "gpus")
#: The keywords of :func:`branch_bound` that set the search (``lb_branch``'s parameters).
SETTINGS = (
    "slots",
    "iterations",
    "patience",
    "nodes",
    "node_iterations",
    "pieces",
    "branch_jobs",
    "capacity_cuts",
    "order",
)


@dataclass(frozen=True)
class BranchBound:
    """The bound (s), the root's value (``lb_lagrange``'s without cuts), ``UB`` and how
    the search went."""

    value_s: float
    root_s: float
    relaxation_ub_s: float
    nodes: int
    open_nodes: int
    branched_jobs: tuple[int, ...]
    cut_sizes: tuple[float, ...]
    stopped: str

    def info(self, instance: AsrptInstance) -> dict[str, object]:
        """The method's ``info`` keys (jobs named by their ids in ``instance``)."""
        return {
            "root_bound": self.root_s,
            "relaxation_ub": self.relaxation_ub_s,
            "nodes": self.nodes,
            "open_nodes": self.open_nodes,
            "branched_jobs": [instance.jobs[i].id for i in self.branched_jobs],
            "capacity_cut_sizes": list(self.cut_sizes),
            "branch_stopped": self.stopped,
        }


@dataclass(frozen=True)
class _Node:
    bound: float
    earliest: np.ndarray
    latest: np.ndarray
    density: np.ndarray


def _candidates(durations: np.ndarray, gpus: np.ndarray, count: int, order: str) -> list[int]:
    """The jobs whose windows may be split (module docstring)."""
    if order == "gpus":
        key = lambda i: (-gpus[i], -durations[i], i)  # noqa: E731
    else:
        key = lambda i: (-gpus[i] * durations[i], i)  # noqa: E731
    return sorted(range(len(durations)), key=key)[:count]


def _split_job(node: _Node, durations: np.ndarray, gpus: np.ndarray, candidates: list[int],
               horizon: float, order: str = "gpu_time", min_width: float = 0.0) -> int | None:  # fmt: skip
    """The job whose window is split next (module docstring), None if no window is open
    (``gpu_time``: every window a point; ``gpus``: none wider than ``min_width``)."""
    widths = {i: min(float(node.latest[i]), horizon) - float(node.earliest[i]) for i in candidates}
    area = {i: gpus[i] * min(durations[i], max(widths[i], 0.0)) for i in candidates}
    if order == "gpus":
        open_ = [i for i in candidates if widths[i] > min_width]
        return max(open_, key=lambda i: (gpus[i], area[i], -i)) if open_ else None
    job = max(candidates, key=lambda i: (area[i], -i))
    return job if widths[job] > 0.0 else None


def _pieces(node: _Node, job: int, pieces: int, horizon: float) -> list[tuple[float, float]]:
    low = float(node.earliest[job])
    top = min(float(node.latest[job]), horizon)
    cuts = [low + (top - low) * k / pieces for k in range(pieces)] + [float(node.latest[job])]
    return list(itertools.pairwise(cuts))


def branch_bound(
    releases: Sequence[float],
    durations: Sequence[float],
    gpus: Sequence[float],
    total_gpus: float,
    *,
    slots: int = 2000,
    iterations: int = 2000,
    patience: int = 50,
    nodes: int = DEFAULT_NODES,
    node_iterations: int = DEFAULT_NODE_ITERATIONS,
    pieces: int = DEFAULT_PIECES,
    branch_jobs: int = DEFAULT_BRANCH_JOBS,
    capacity_cuts: bool = True,
    order: str = "gpu_time",
    deadline: Deadline | None = None,
) -> BranchBound:
    """The smallest open node's bound after the best-first search (module docstring)."""
    if order not in ORDERS:
        raise ValueError(f"order must be one of {', '.join(ORDERS)}, got {order!r}")
    r, p, g = checked_jobs(
        releases, durations, gpus, total_gpus,
        {"slots": (slots, 1), "iterations": (iterations, 1), "patience": (patience, 1),
         "nodes": (nodes, 1), "node_iterations": (node_iterations, 1), "pieces": (pieces, 2),
         "branch_jobs": (branch_jobs, 1)},
    )  # fmt: skip
    boundaries, upper = relaxed_grid(r, p, g, total_gpus, slots)
    horizon = float(boundaries[-1])
    cuts = rounded_capacity_cuts(g, total_gpus) if capacity_cuts else ()
    root = ascend(r, p, g, total_gpus, boundaries, target=upper, iterations=iterations,
                  patience=patience, cuts=cuts, deadline=deadline)  # fmt: skip
    candidates = _candidates(p, g, branch_jobs, order)
    min_width = horizon / (len(boundaries) - 1)  # one grid slot, on average (``gpus`` only)
    counter = 0
    heap: list[tuple[float, int, _Node]] = [
        (root.value, counter, _Node(root.value, r.copy(), np.full(len(r), math.inf), root.density))
    ]
    solved, branched, stopped = 1, set(), "nodes"
    clock_cut = root.stopped == "time limit"  # an ascent the clock stopped early
    while solved < nodes:
        bound, _, node = heap[0]
        if bound >= upper:
            stopped = "every open node at the relaxation's upper bound"
            break
        if deadline is not None and deadline.expired():
            stopped = "time limit"
            break
        job = _split_job(node, p, g, candidates, horizon, order, min_width) if candidates else None
        if job is None:
            stopped = "no window left to split"
            break
        heapq.heappop(heap)
        branched.add(job)
        for low, high in _pieces(node, job, pieces, horizon):
            earliest, latest = node.earliest.copy(), node.latest.copy()
            earliest[job], latest[job] = low, high
            child = ascend(earliest, p, g, total_gpus, boundaries, target=upper,
                           iterations=node_iterations, patience=patience,
                           density=node.density, latest=latest, cuts=cuts,
                           deadline=deadline)  # fmt: skip
            solved += 1
            counter += 1
            clock_cut = clock_cut or child.stopped == "time limit"
            value = max(child.value, node.bound)
            heapq.heappush(heap, (value, counter, _Node(value, earliest, latest, child.density)))
    if clock_cut:  # also when the search then ended for another reason: a weaker bound
        stopped = "time limit"
    return BranchBound(
        # each open node's value is at most UB up to float noise: never report above it
        value_s=min(heap[0][0], upper),
        root_s=root.value,
        relaxation_ub_s=upper,
        nodes=solved,
        open_nodes=len(heap),
        branched_jobs=tuple(sorted(branched)),
        cut_sizes=tuple(cut.size for cut in cuts),
        stopped=stopped,
    )


def lb_branch(
    instance: AsrptInstance,
    deadline: Deadline | None = None,
    *,
    alpha_lbs_of: Mapping[str, AlphaLb] | None = None,
    **settings: int,
) -> BranchBound:
    """The bound of the module docstring on ``instance`` (``alpha_lb`` per configuration);
    ``settings`` are :func:`branch_bound`'s keywords."""
    lbs = alpha_lbs(instance, deadline=deadline) if alpha_lbs_of is None else alpha_lbs_of
    return branch_bound(
        [job.arrival_s for job in instance.jobs],
        [job.iterations * lbs[job.config].value_s for job in instance.jobs],
        [instance.configs[job.config].num_gpus for job in instance.jobs],
        instance.cluster.num_gpus,
        deadline=deadline,
        **settings,
    )
