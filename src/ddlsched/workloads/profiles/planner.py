"""Stage planner: cut a layer sequence into balanced stages and choose replica counts.

Rule (stated, PipeDream-like; the paper used the planner of its ref. [20],
which is not published with it):

1. **Cuts.** Split the ``n`` layers into ``S`` contiguous non-empty stages
   minimising the largest stage cost (exact dynamic programme, ``O(S n^2)``;
   ties: the earliest cut). The cost is the stage compute time ``T_s =
   sum (fwd + bwd)``; with ``boundary_bandwidth_Bps = B`` it is ``T_s + 2
   (A_in + A_out) / B``, where ``A_in``/``A_out`` are the activation bytes
   crossing the stage's cuts (forward activations and backward gradients),
   so that, like PipeDream's planner, the cuts avoid the layers whose
   outputs are huge. The Table II generator uses compute-balanced cuts by
   default and passes the NIC bandwidth only with ``planner=cut_cost``.
2. **Replicas.** Start from ``k_s = 1``; give each of the remaining
   ``G - S`` GPUs to the stage with the largest ``T_s / k_s`` (lowest
   index on ties). This minimises ``max_s T_s / k_s`` for ``sum k_s = G``.
   Computed with a heap, ``O(G log S)``; ``G`` above :data:`MAX_PLAN_GPUS`
   is refused before any per-GPU loop (ours, a guard against hostile input: a trace job of 2^40
   GPUs looped here for ever, past the time limit).
3. **Per-replica numbers.** A replicated stage splits the mini-batch over
   its replicas (data parallelism), so each replica's ``fwd_s``/``bwd_s``
   and ``in_bytes``/``out_bytes`` are the stage's divided by ``k_s``, while
   ``param_bytes`` is the stage's full weight (every replica holds a copy).
   Then ``dout_{s-1} k_{s-1} = din_s k_s`` (the boundary volume) and
   ``sum_s k_s (fwd_s + bwd_s)`` is the profile's total compute: the planner
   preserves the sum of layer times.

**Communication-aware planner** (:func:`comm_aware_plan`, ``--set
planner=comm_aware`` of the ``table2`` preset). The paper's configurations
come from the planner of its ref. [20] (Luo et al., INFOCOM 2022), which
weighs activation and AllReduce traffic; steps 1-2 above do not. This
option chooses the cuts *and* the replica counts together (exact dynamic
programme over ``(stages, last layer, GPUs used)``, ``sum k_s = G``
exactly) minimising an ``alpha_max``-style bottleneck (Sec. III-B:
Eqs. (4)-(7) with every replica alone on its server), the one
per-iteration time that needs no placement, at a per-replica bandwidth
``B``. Per stage of ``k`` replicas::

    cost_s(k) = T_s / k + 2 (A_in + A_out) / (k B) + AR_s(k),
    AR_s(1) = 0,  AR_s(k) = 2 (k - 1) h_s / (k B)  (ring AllReduce, Eq. 6)

(``T_s`` the stage's compute per mini-batch, ``A_in``/``A_out`` the
activation bytes crossing its cuts per mini-batch, none before the first
stage or after the last, as in Eq. 5; ``h_s`` its parameter bytes).
With ``B = B_inter / g`` this is exactly the paper's ``alpha_max`` (tested);
the ``table2`` preset passes ``B = B_inter`` (a replica with a whole NIC,
i.e. ``alpha_max`` on one-GPU servers): at ``B_inter / g`` every
replication of VGG19's convolutions costs more AllReduce than it saves,
and since ``sum k_s = G`` is fixed the planner parks the surplus GPUs on
parameter-free layers (VGG19, 16 GPUs: ``[1, 7, 7, 1]``). Among
the plans of least bottleneck it takes the one of least total cost
``sum_s cost_s`` (a second exact pass); remaining ties go to the earliest
cut, then the fewest replicas of the earlier stage.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np

from ddlsched.errors import InvalidInstanceError
from ddlsched.memory import require_memory
from ddlsched.problems.placement import Stage
from ddlsched.workloads.profiles.base import ModelProfile

__all__ = [
    "MAX_PLAN_GPUS",
    "StagePlan",
    "balanced_cuts",
    "check_plan_gpus",
    "comm_aware_plan",
    "plan_stages",
    "replica_counts",
    "stage_costs",
]


#: The most GPUs a plan is made for (rar's and asrpt's clusters hold at most 10^6).
MAX_PLAN_GPUS = 1_000_000


def check_plan_gpus(num_gpus: int) -> None:
    """Refuse a GPU count no cluster of the toolkit holds, before any per-GPU work."""
    if not 1 <= num_gpus <= MAX_PLAN_GPUS:
        raise InvalidInstanceError(
            f"num_gpus: {num_gpus} GPUs, must be in 1..{MAX_PLAN_GPUS:,} (the planner loops "
            "once per GPU)"
        )


@dataclass(frozen=True)
class StagePlan:
    """A profile cut into stages: ``bounds[s] = (first, last + 1)`` layer indices."""

    profile: ModelProfile
    bounds: tuple[tuple[int, int], ...]
    replicas: tuple[int, ...]

    def stage_compute_s(self) -> list[float]:
        layers = self.profile.layers
        return [sum(lay.fwd_s + lay.bwd_s for lay in layers[a:b]) for a, b in self.bounds]

    def stages(self) -> tuple[Stage, ...]:
        """The placement stages (per-replica numbers, see the module docstring)."""
        layers = self.profile.layers
        out = []
        for s, ((a, b), k) in enumerate(zip(self.bounds, self.replicas, strict=True)):
            boundary_in = self.profile.input_bytes if s == 0 else layers[a - 1].out_bytes
            boundary_out = layers[b - 1].out_bytes
            out.append(
                Stage(
                    replicas=k,
                    fwd_s=sum(lay.fwd_s for lay in layers[a:b]) / k,
                    bwd_s=sum(lay.bwd_s for lay in layers[a:b]) / k,
                    in_bytes=boundary_in / k,
                    out_bytes=boundary_out / k,
                    param_bytes=sum(lay.param_bytes for lay in layers[a:b]),
                )
            )
        return tuple(out)


def balanced_cuts(
    times: list[float], num_stages: int, cut_cost: list[float] | None = None
) -> tuple[tuple[int, int], ...]:
    """Contiguous split of ``times`` into ``num_stages`` parts minimising the largest part.

    A part ``[p, i)`` costs ``sum(times[p:i])`` plus, when ``cut_cost`` is
    given, ``cut_cost[p - 1]`` (if ``p > 0``) and ``cut_cost[i - 1]`` (if
    ``i < n``): the cost of the cuts around it.
    """
    n = len(times)
    if not 1 <= num_stages <= n:
        raise InvalidInstanceError(f"num_stages: must be in 1..{n} (layers), got {num_stages}")
    prefix = [0.0]
    for t in times:
        prefix.append(prefix[-1] + t)
    inf = float("inf")
    # best[j][i]: min over splits of layers[:i] into j parts of the largest part
    best = [[inf] * (n + 1) for _ in range(num_stages + 1)]
    arg = [[0] * (n + 1) for _ in range(num_stages + 1)]
    best[0][0] = 0.0
    for j in range(1, num_stages + 1):
        for i in range(j, n - (num_stages - j) + 1):
            for p in range(j - 1, i):
                part = prefix[i] - prefix[p]
                if cut_cost is not None:
                    part += (cut_cost[p - 1] if p > 0 else 0.0) + (
                        cut_cost[i - 1] if i < n else 0.0
                    )
                value = max(best[j - 1][p], part)
                if value < best[j][i]:
                    best[j][i], arg[j][i] = value, p
    bounds = []
    i = n
    for j in range(num_stages, 0, -1):
        p = arg[j][i]
        bounds.append((p, i))
        i = p
    return tuple(reversed(bounds))


def replica_counts(stage_times: list[float], num_gpus: int) -> tuple[int, ...]:
    """Greedy: each extra GPU to the stage with the largest ``T_s / k_s`` (lowest index on
    ties), by a heap of ``(-T_s / k_s, s)``."""
    check_plan_gpus(num_gpus)
    if num_gpus < len(stage_times):
        raise InvalidInstanceError(
            f"num_gpus: {num_gpus} GPUs cannot hold {len(stage_times)} stages"
        )
    counts = [1] * len(stage_times)
    heap = [(-t, s) for s, t in enumerate(stage_times)]
    heapq.heapify(heap)
    for _ in range(num_gpus - len(stage_times)):
        _, s = heapq.heappop(heap)
        counts[s] += 1
        heapq.heappush(heap, (-(stage_times[s] / counts[s]), s))
    return tuple(counts)


def plan_stages(
    profile: ModelProfile,
    *,
    num_stages: int,
    num_gpus: int,
    boundary_bandwidth_Bps: float | None = None,
) -> StagePlan:
    """Cut ``profile`` into ``num_stages`` balanced stages over ``num_gpus`` GPUs."""
    times = [lay.fwd_s + lay.bwd_s for lay in profile.layers]
    cut_cost = None
    if boundary_bandwidth_Bps is not None:
        if not boundary_bandwidth_Bps > 0:
            raise InvalidInstanceError("boundary_bandwidth_Bps: must be > 0")
        cut_cost = [2.0 * lay.out_bytes / boundary_bandwidth_Bps for lay in profile.layers]
    bounds = balanced_cuts(times, num_stages, cut_cost)
    stage_times = [sum(times[a:b]) for a, b in bounds]
    return StagePlan(profile, bounds, replica_counts(stage_times, num_gpus))


def stage_costs(profile: ModelProfile, num_gpus: int, bandwidth_Bps: float) -> np.ndarray:
    """``C[p, i, k]``: the comm-aware cost of layers ``[p, i)`` as a stage of ``k`` replicas.

    ``inf`` where ``i <= p`` or ``k = 0`` (see the module docstring for the formula;
    ``bandwidth_Bps = B_inter / g`` makes it ``alpha_max``'s term of the stage).
    """
    layers = profile.layers
    n = len(layers)
    times = np.array([0.0] + [lay.fwd_s + lay.bwd_s for lay in layers]).cumsum()
    params = np.array([0.0] + [lay.param_bytes for lay in layers]).cumsum()
    a_in = np.array([0.0] + [lay.out_bytes for lay in layers[:-1]])  # no input term (Eq. 5)
    a_out = np.array([lay.out_bytes for lay in layers[:-1]] + [0.0])  # after the last: none
    p = np.arange(n + 1)[:, None]
    i = np.arange(n + 1)[None, :]
    valid = i > p
    p_idx, i_idx = np.minimum(p, n - 1), np.maximum(i - 1, 0)
    compute = (times[i] - times[p]) + 2.0 * (a_in[p_idx] + a_out[i_idx]) / bandwidth_Bps
    h = params[i] - params[p]
    k = np.arange(num_gpus + 1, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        cost = compute[:, :, None] / k + 2.0 * (k - 1.0) * h[:, :, None] / (k * bandwidth_Bps)
    cost[:, :, 0] = np.inf
    cost[~valid] = np.inf
    return cost


def comm_aware_plan(
    profile: ModelProfile, *, num_stages: int, num_gpus: int, bandwidth_Bps: float
) -> StagePlan:
    """Cuts and replica counts minimising the comm-aware bottleneck (module docstring)."""
    n = profile.num_layers
    if not 1 <= num_stages <= n:
        raise InvalidInstanceError(f"num_stages: must be in 1..{n} (layers), got {num_stages}")
    check_plan_gpus(num_gpus)
    if num_gpus < num_stages:
        raise InvalidInstanceError(f"num_gpus: {num_gpus} GPUs cannot hold {num_stages} stages")
    if not bandwidth_Bps > 0:
        raise InvalidInstanceError("bandwidth_Bps: must be > 0")
    g = num_gpus
    require_memory(
        f"the comm-aware planner's tables ({n} layers, {g} GPUs)",
        8.0 * (n + 1) * (g + 1) * (3 * (n + 1) + 2 * g),
        "use fewer GPUs or the compute-balanced planner",
    )
    cost = stage_costs(profile, g, bandwidth_Bps)
    u = np.arange(g + 1)[:, None]
    kk = np.arange(1, g + 1)[None, :]
    before = u - kk  # GPUs used by the earlier stages
    ok = before >= 0
    before = np.where(ok, before, 0)

    def solve(combine, allowed):
        """DP over stages: ``value[i, u]`` for the first ``i`` layers on ``u`` GPUs."""
        value = np.full((n + 1, g + 1), np.inf)
        value[0, 0] = 0.0
        choice = []
        for _ in range(num_stages):
            new = np.full((n + 1, g + 1), np.inf)
            arg = np.zeros((n + 1, g + 1, 2), dtype=int)
            for i in range(1, n + 1):
                c = allowed[:, i, 1:]  # (p, k)
                prev = np.where(ok[None], value[:, before], np.inf)  # (p, u, k)
                total = combine(prev, c[:, None, :])
                flat = total.transpose(1, 0, 2).reshape(g + 1, -1)  # (u, p*k)
                best = flat.argmin(axis=1)
                new[i] = flat[np.arange(g + 1), best]
                arg[i, :, 0], arg[i, :, 1] = np.divmod(best, g)
            value = new
            choice.append(arg)
        return value, choice

    value, _ = solve(np.maximum, cost)
    bottleneck = value[n, g]
    if not np.isfinite(bottleneck):
        raise InvalidInstanceError("comm-aware planner: no feasible plan")
    capped = np.where(cost <= bottleneck * (1 + 1e-9), cost, np.inf)
    _, choice = solve(np.add, capped)
    bounds, replicas = [], []
    i, used = n, g
    for arg in reversed(choice):
        p, k = (int(x) for x in arg[i, used])
        k += 1
        bounds.append((p, i))
        replicas.append(k)
        i, used = p, used - k
    return StagePlan(profile, tuple(reversed(bounds)), tuple(reversed(replicas)))
