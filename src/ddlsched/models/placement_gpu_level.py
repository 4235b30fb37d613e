"""The GPU-level placement ILPs of family ``placement`` (spec ``docs/families/placement.md``).

Two formulations of ``min alpha`` (Eq. 7) with a binary per (stage replica,
free GPU), next to the aggregated ILP of :mod:`ddlsched.models.placement`
(which also holds the common :class:`~ddlsched.models.placement.PlacementFormulation`,
the decoder and the time unit of both):

GPU-level, stand-in (``build_gpu_level``, method ``exact_gpu_level``)
    A strong stand-in for the formulation the paper compared Heavy-Edge
    against (Table II: "based on [47]", a binary per replica and device),
    *not* that formulation: it keeps the aggregated model's one-hot count
    encoding next to the replica x GPU binaries. A binary ``y[s,r,m,j]`` per
    stage replica ``(s, r)`` and free GPU ``j`` of server ``m``, each
    replica on one GPU, each GPU holding at most one replica. The counts
    ``x[s,m] = sum_{r,j} y[s,r,m,j]`` drive the same timing terms through a
    one-hot ``w[s,m,v]`` tied to them, and the max of Eq. (7) is written per
    replica: ``alpha >= term[s,m] - M (1 - sum_j y[s,r,m,j])``. No symmetry
    breaking (replicas of a stage, GPUs of a server and servers of equal
    availability stay interchangeable): that is what makes it slow. Same
    optimum as the aggregated model by construction; the tests check it.

GPU-level, paper (``build_gpu_level_paper``, method ``exact_gpu_level_paper``)
    The paper's baseline as we read its reference [47] (Archer et al.,
    "Pipeline Parallelism for DNN Inference with Practical Performance
    Guarantees": node-to-device binaries, the bottleneck as the objective,
    big-M rows): replica x GPU binaries ``y[s,r,m,j]`` and nothing of our
    count encoding. Counts ``x[s,m] = sum y`` are expressions. Eq. (6)'s
    ``1/x`` for a stage split over servers is convex in ``x`` on ``1..k_s-1``
    and is written exactly at integer counts by its secants through
    consecutive integers (``alpha >= comp + comm + a_t + b_t x[s,m]`` per
    replica and secant, relaxed by big-M when the replica is elsewhere); the
    intra-server AllReduce of a stage held entirely by one server (a
    discontinuity) gets a binary ``w[s,m]`` (``x >= k w``, ``x <= k - 1 + w``).
    Modelling choices the paper leaves open: these secants (Archer et al.
    have linear costs only) and the per-row big-M (the right-hand side's
    largest value, not a global constant: a loose one made HiGHS 1.14 claim
    3.27 s instead of 2.19 s on vgg16, 16 GPUs, seed 1).
"""

from __future__ import annotations

import pyomo.environ as pyo

from ddlsched.deadline import Deadline
from ddlsched.models.placement_bounds import (
    Coefficients,
    big_m,
    coefficients,
    comm_expr,
    count_values,
    max_count,
    upper_bound_ms,
)
from ddlsched.problems.placement import PlacementInstance, allreduce_time
from ddlsched.solvers.limits import check_model_size

__all__ = ["build_gpu_level", "build_gpu_level_paper"]


def _replica_gpu_model(
    instance: PlacementInstance, formulation: str, what: str
) -> tuple[pyo.ConcreteModel, Coefficients]:
    """A GPU-level model's common start: size check, sets ``S, M, R, G``, binaries ``y``.

    Both GPU-level ILPs (our stand-in and the paper's baseline) put a binary
    ``y[s,r,m,j]`` on every (replica, GPU) pair; returns the model and the
    instance's coefficients (:func:`coefficients`).
    """
    check_model_size(
        what,
        instance.num_replicas * sum(instance.available),
        "use the aggregated ILP (method exact)",
    )
    coef = coefficients(instance)
    model = pyo.ConcreteModel(name=f"placement_{formulation}")
    model.formulation = formulation
    model.time_scale = coef.scale  # model units per second
    model.S = pyo.RangeSet(0, instance.num_stages - 1)
    model.M = pyo.RangeSet(0, instance.num_servers - 1)
    replicas = [(s, r) for s, st in enumerate(instance.stages) for r in range(st.replicas)]
    gpus = [(m, j) for m, avail in enumerate(instance.available) for j in range(avail)]
    model.R = pyo.Set(initialize=replicas, dimen=2)
    model.G = pyo.Set(initialize=gpus, dimen=2)
    model.y = pyo.Var(model.R, model.G, domain=pyo.Binary)
    return model, coef


def _add_replica_gpu_rows(model: pyo.ConcreteModel, instance: PlacementInstance) -> None:
    """Assignment rows of a GPU-level model and the counts ``x[s,m]`` as expressions."""
    replicas, gpus = list(model.R), list(model.G)

    @model.Constraint(model.R)
    def assign(m_, s, r):  # every replica on exactly one GPU
        return sum(m_.y[s, r, m, j] for (m, j) in gpus) == 1

    @model.Constraint(model.G)
    def gpu_capacity(m_, m, j):  # at most one replica per GPU
        return sum(m_.y[s, r, m, j] for (s, r) in replicas) <= 1

    @model.Expression(model.S, model.M)
    def x(m_, s, m):  # x[s,m] = replicas of s on m's GPUs
        return sum(
            m_.y[s, r, m, j]
            for r in range(instance.stages[s].replicas)
            for j in range(instance.available[m])
        )


def build_gpu_level(
    instance: PlacementInstance, *, deadline: Deadline | None = None
) -> pyo.ConcreteModel:
    """The GPU-level ILP: a binary per (replica, GPU) (see the module docstring)."""
    deadline = deadline or Deadline.unlimited()
    model, coef = _replica_gpu_model(instance, "gpu_level", "placement GPU-level ILP")
    model.SMV = pyo.Set(initialize=count_values(instance), dimen=3)
    model.w = pyo.Var(model.SMV, domain=pyo.Binary)
    model.alpha = pyo.Var(domain=pyo.NonNegativeReals, bounds=(0, upper_bound_ms(instance, coef)))
    _add_replica_gpu_rows(model, instance)

    @model.Constraint(model.S, model.M)
    def one_hot(m_, s, m):
        return sum(m_.w[s, m, v] for v in range(max_count(instance, s, m) + 1)) == 1

    @model.Constraint(model.S, model.M)
    def count_link(m_, s, m):  # sum_v v w[s,m,v] = x[s,m]
        return sum(v * m_.w[s, m, v] for v in range(1, max_count(instance, s, m) + 1)) == m_.x[s, m]

    deadline.check("building the GPU-level placement ILP")

    @model.Constraint(model.R, model.M)
    def bottleneck(m_, s, r, m):  # Eq. (7), per replica: binds when replica (s, r) is on m
        cost = sum(
            coef.cost[(s, v)] * m_.w[s, m, v] for v in range(1, max_count(instance, s, m) + 1)
        )
        on_server = sum(m_.y[s, r, m, j] for j in range(instance.available[m]))
        return m_.alpha >= cost + comm_expr(m_, coef, instance, s, m) - big_m(
            instance, coef, s, m
        ) * (1 - on_server)

    model.objective = pyo.Objective(expr=model.alpha, sense=pyo.minimize)
    return model


def _allreduce_lines(instance: PlacementInstance, s: int, top: int, unit: float):
    """Secants ``(a, b)`` of the AllReduce term of stage ``s`` split over servers,
    ``AR(x) = max_t (a_t + b_t x)`` at every integer ``1 <= x <= top``
    (``AR(v) = C / v`` for ``v < k_s`` is convex: the secants through consecutive
    integers are exact there); model units."""
    ar = [unit * allreduce_time(instance, s, v) for v in range(1, top + 1)]
    if top == 1:
        return [(ar[0], 0.0)]
    return [(ar[v - 1] - (ar[v] - ar[v - 1]) * v, ar[v] - ar[v - 1]) for v in range(1, top)]


def build_gpu_level_paper(
    instance: PlacementInstance, *, deadline: Deadline | None = None
) -> pyo.ConcreteModel:
    """The paper's GPU-level baseline: replica x GPU binaries, no count encoding.

    See the module docstring (``exact_gpu_level_paper``): ``y[s,r,m,j]``,
    counts ``x[s,m] = sum y`` as expressions, a binary ``w[s,m]`` for "stage
    ``s`` entirely on ``m``" (only where ``avail_m >= k_s > 1``), Eq. (6)'s
    ``1/x`` by the secants of :func:`_allreduce_lines`, Eq. (7) per replica.
    """
    deadline = deadline or Deadline.unlimited()
    model, coef = _replica_gpu_model(instance, "gpu_level_paper", "placement GPU-level ILP (paper)")
    unit = coef.scale
    whole = [
        (s, m)
        for s, st in enumerate(instance.stages)
        for m, avail in enumerate(instance.available)
        if 1 < st.replicas <= avail
    ]
    model.W = pyo.Set(initialize=whole, dimen=2)
    model.w = pyo.Var(model.W, domain=pyo.Binary)
    model.alpha = pyo.Var(domain=pyo.NonNegativeReals, bounds=(0, upper_bound_ms(instance, coef)))
    _add_replica_gpu_rows(model, instance)

    @model.Constraint(model.W)
    def whole_lower(m_, s, m):  # w = 1 -> x = k
        return m_.x[s, m] >= instance.stages[s].replicas * m_.w[s, m]

    @model.Constraint(model.W)
    def whole_upper(m_, s, m):  # x = k -> w = 1
        return m_.x[s, m] <= instance.stages[s].replicas - 1 + m_.w[s, m]

    deadline.check("building the GPU-level placement ILP (paper)")
    rows = {}  # (s, r, m, t) -> (constant, slope, M for "not on m", M for "whole on m")
    for s, stage in enumerate(instance.stages):
        compute, k = unit * stage.compute_s, stage.replicas
        for m, avail in enumerate(instance.available):
            comm_top = big_m(instance, coef, s, m)
            lines = (
                [(0.0, 0.0)] if k == 1 else _allreduce_lines(instance, s, min(k - 1, avail), unit)
            )
            for t, (a, b) in enumerate(lines):
                # largest value of the row's right-hand side: at x = 0 (b <= 0), or x = k
                off = compute + comm_top + a
                whole_m = compute + comm_top + max(0.0, a + b * k)
                for r in range(k):
                    rows[s, r, m, t] = (compute + a, b, off, whole_m)
    model.L = pyo.Set(initialize=list(rows), dimen=4)

    @model.Constraint(model.L)
    def bottleneck(m_, s, r, m, t):  # Eq. (7) per replica, AllReduce split over servers
        constant, slope, off, whole_m = rows[s, r, m, t]
        on_server = sum(m_.y[s, r, m, j] for j in range(instance.available[m]))
        rhs = constant + slope * m_.x[s, m] + comm_expr(m_, coef, instance, s, m)
        rhs = rhs - off * (1 - on_server)
        if (s, m) in whole:
            rhs = rhs - whole_m * m_.w[s, m]
        return m_.alpha >= rhs

    @model.Constraint(model.W)
    def bottleneck_whole(m_, s, m):  # Eq. (7) for a stage entirely on server m
        term = unit * (
            instance.stages[s].compute_s + allreduce_time(instance, s, instance.stages[s].replicas)
        )
        return m_.alpha >= term + comm_expr(m_, coef, instance, s, m) - (
            term + big_m(instance, coef, s, m)
        ) * (1 - m_.w[s, m])

    model.objective = pyo.Objective(expr=model.alpha, sense=pyo.minimize)
    return model
