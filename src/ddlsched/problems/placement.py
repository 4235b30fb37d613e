"""Family ``placement``: map one pipeline-parallel job onto servers with free GPUs.

Paper: "Prediction-Assisted Online Distributed Deep Learning Workload
Scheduling in GPU Clusters" (A-SRPT),
Sections III-A/III-B (Eqs. 4-7) and IV-B; spec ``docs/families/placement.md``
(the spec wins over the paper).

This module holds the instance (one job's stages, the servers given to it),
the placement type, the per-iteration time model and the evaluator: the
ONE place that computes a placement's per-iteration time ``alpha``. It
imports no solver.

Timing model for a placement ``x[s][m]`` (replicas of stage ``s`` on server
``m``), with ``g`` GPUs per server, ``k_s`` replicas of stage ``s``:

* Eq. (4): ``comp[s,m] = pf_s + pb_s`` when ``x[s,m] > 0``.
* Eq. (5): ``comm[s,m] = g (2 din_s (k_{s-1} - x[s-1,m]) / k_{s-1}
  + 2 dout_s (k_{s+1} - x[s+1,m]) / k_{s+1}) / B_inter
  + (2 din_s x[s-1,m] / k_{s-1} + 2 dout_s x[s+1,m] / k_{s+1}) / B_intra``
  (the ``x[s,m]`` of the paper's numerator cancels against the reserved
  bandwidth ``x[s,m] / g * B_inter``); the first stage has no ``din`` term
  and the last stage no ``dout`` term.
* Eq. (6): ``AllReduce[s,m] = 0`` when ``k_s = 1``; ``c (k_s - 1) h_s /
  (k_s (x[s,m] / g) B_inter)`` when ``0 < x[s,m] < k_s``; ``c (k_s - 1) h_s
  / (k_s B_intra)`` when ``x[s,m] = k_s``; ``c = 2`` for ring AllReduce
  (``rar``) and ``c = 1`` for tree AllReduce (``tar``: the spec halves the
  data, as the double binary tree carries half of it on each tree).
* Eq. (7): ``alpha = max over (s, m) with x[s,m] > 0 of
  comp + comm + AllReduce``.

``alpha_max`` (Sec. III-B): every replica on a server of its own with
``B_inter / g`` (i.e. ``x[s,m] in {0, 1}`` and no neighbour replica on the
same server). ``alpha~_min`` (Sec. IV-B), Heavy-Edge on the fewest servers
(:func:`fewest_servers`), lives next to Heavy-Edge:
:func:`ddlsched.heuristics.heavy_edge.alpha_min`.

Choices the spec leaves open (written down here):

* ``in_bytes`` of the first stage and ``out_bytes`` of the last stage are
  kept in the file (the input batch, the loss) but enter no formula.
* Stage-boundary consistency ``dout_{s-1} / k_s = din_s / k_{s-1}`` is
  checked as ``dout_{s-1} k_{s-1} = din_s k_s`` with relative tolerance
  1e-9 (absolute 1e-6 bytes).
* ``sum(available) >= sum_s k_s`` is required (the Table II setting has
  equality); a server may be left (partly) empty. Every server must offer
  at least one and at most ``gpus_per_server`` GPUs.
* An optional ``description`` string (free text: model, profile, source)
  may accompany an instance; it enters no formula.

An empty stage list is refused with one line ("stages: at least one stage is
needed"; ours): an instance is one job, and a job without stages
has nothing to place.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from ddlsched.errors import InfeasibleScheduleError, InvalidInstanceError
from ddlsched.fieldspec import Arr, Const, Field, Int, Num, Obj, Str
from ddlsched.jsonio import (
    JsonInstance,
    check_fields,
    check_header,
    require_int,
    require_number,
)

__all__ = [
    "ALLREDUCE_KINDS",
    "SCHEMA_VERSION",
    "Placement",
    "PlacementEvaluation",
    "PlacementInstance",
    "Stage",
    "allreduce_time",
    "alpha_max",
    "comm_time",
    "evaluate",
    "fewest_servers",
    "iteration_time",
    "placement_from_json",
    "placement_to_json",
    "stage_server_time",
    "stages_from_json",
    "stages_to_json",
]

ALLREDUCE_KINDS = ("rar", "tar")
SCHEMA_VERSION = 1
_BOUNDARY_RTOL = 1e-9
_BOUNDARY_ATOL = 1e-6
# Largest per-iteration term (s) an instance may allow. Real jobs stay far below
# (Table II's largest, GPT-175B at 1024 GPUs: 568 s); the exact models work in ms
# with big-M rows and 1e-6 tolerances, and review found wrong "optimal" answers once
# alpha reaches 1e5-1e8 s.
_MAX_TIME_S = 1e5

#: One stage's JSON object (:mod:`ddlsched.fieldspec`; also the asrpt configurations').
STAGE_SPEC = Obj(
    {
        "replicas": Field(Int(1), "k_s", "replicas of the stage (GPUs)"),
        "fwd_s": Field(Num(0.0), "pf_s", "forward time per mini-batch per replica (s)"),
        "bwd_s": Field(Num(0.0), "pb_s", "backward time per mini-batch per replica (s)"),
        "in_bytes": Field(Num(0.0), "din_s", "activation bytes in, per replica and iteration"),
        "out_bytes": Field(Num(0.0), "dout_s", "activation bytes out, per replica and iteration"),
        "param_bytes": Field(Num(0.0), "h_s", "parameter bytes of the stage"),
    }
)
_STAGE_FIELDS = STAGE_SPEC.required


# --------------------------------------------------------------------------- instance


@dataclass(frozen=True)
class Stage:
    """One pipeline stage: ``replicas = k_s``, ``fwd_s = pf_s``, ``bwd_s = pb_s``
    (seconds per mini-batch per replica), ``in_bytes = din_s``, ``out_bytes =
    dout_s`` (activation/gradient bytes per replica and iteration) and
    ``param_bytes = h_s``."""

    replicas: int
    fwd_s: float
    bwd_s: float
    in_bytes: float
    out_bytes: float
    param_bytes: float

    def validate(self, where: str) -> None:
        require_int(self.replicas, f"{where}.replicas", minimum=1)
        for name in _STAGE_FIELDS[1:]:
            require_number(getattr(self, name), f"{where}.{name}", minimum=0)

    @property
    def compute_s(self) -> float:
        """``pf_s + pb_s`` (Eq. 4)."""
        return self.fwd_s + self.bwd_s


#: The JSON format of a ``placement`` instance (``ddlsched instance schema placement``).
FIELD_SPEC = Obj(
    {
        "family": Field(Const("placement"), "family", "the problem family of the file"),
        "schema_version": Field(Const(SCHEMA_VERSION), "schema version", "format version"),
        "gpus_per_server": Field(Int(1), "g", "GPUs per server"),
        "b_inter": Field(Num(0.0, exclusive=True), "B_inter", "NIC bandwidth (bytes/s)"),
        "b_intra": Field(Num(0.0, exclusive=True), "B_intra", "intra-server bandwidth (bytes/s)"),
        "available": Field(
            Arr(Int(1), min_items=1), "available", "free GPUs per server, <= gpus_per_server"
        ),
        "allreduce": Field(Str(choices=ALLREDUCE_KINDS), "AllReduce", "rar: ring; tar: tree"),
        "stages": Field(Arr(STAGE_SPEC, min_items=1), "stages", "the job's pipeline stages"),
        "description": Field(Str(), "description", "free text", required=False),
    }
)


@dataclass(frozen=True)
class PlacementInstance(JsonInstance):
    """One job (its stages) and the servers given to it.

    ``available[m]`` is the number of free GPUs on server ``m``;
    ``b_inter``/``b_intra`` are the NIC and intra-server bandwidths (bytes/s);
    ``allreduce`` is ``rar`` (ring) or ``tar`` (tree).
    """

    gpus_per_server: int
    b_inter: float
    b_intra: float
    available: tuple[int, ...]
    allreduce: str
    stages: tuple[Stage, ...]
    description: str = ""

    family: ClassVar[str] = "placement"
    FIELD_SPEC: ClassVar[Obj] = FIELD_SPEC

    def __post_init__(self) -> None:
        object.__setattr__(self, "available", tuple(self.available))
        object.__setattr__(self, "stages", tuple(self.stages))
        g = require_int(self.gpus_per_server, "gpus_per_server", minimum=1)
        require_number(self.b_inter, "b_inter", minimum=0, strict=True)
        require_number(self.b_intra, "b_intra", minimum=0, strict=True)
        if not self.available:
            raise InvalidInstanceError("available: at least one server is needed")
        for m, avail in enumerate(self.available):
            require_int(avail, f"available[{m}]", minimum=1)
            if avail > g:
                raise InvalidInstanceError(
                    f"available[{m}]: {avail} free GPUs exceed gpus_per_server = {g}"
                )
        if self.allreduce not in ALLREDUCE_KINDS:
            raise InvalidInstanceError(
                f"allreduce: must be one of {', '.join(ALLREDUCE_KINDS)}, got {self.allreduce!r}"
            )
        if not self.stages:
            raise InvalidInstanceError("stages: at least one stage is needed")
        for s, stage in enumerate(self.stages):
            if not isinstance(stage, Stage):
                raise InvalidInstanceError(f"stages[{s}]: expected a Stage")
            stage.validate(f"stages[{s}]")
        for s in range(1, len(self.stages)):
            prev, cur = self.stages[s - 1], self.stages[s]
            lhs = prev.out_bytes * prev.replicas  # dout_{s-1} k_{s-1}
            rhs = cur.in_bytes * cur.replicas  # din_s k_s
            if not math.isclose(lhs, rhs, rel_tol=_BOUNDARY_RTOL, abs_tol=_BOUNDARY_ATOL):
                raise InvalidInstanceError(
                    f"stages[{s}].in_bytes: inconsistent with stages[{s - 1}].out_bytes "
                    f"(dout_{{s-1}} / k_s = {prev.out_bytes / cur.replicas:.6g} but "
                    f"din_s / k_{{s-1}} = {cur.in_bytes / prev.replicas:.6g})"
                )
        total = self.num_replicas
        if sum(self.available) < total:
            raise InvalidInstanceError(
                f"available: {sum(self.available)} free GPUs for a job of {total} replicas"
            )
        if not isinstance(self.description, str):
            raise InvalidInstanceError("description: expected a string")
        self._check_time_scale()

    def _check_time_scale(self) -> None:
        """Refuse instances whose times overflow or dwarf any physical scale.

        An upper bound on any term of Eq. (7) (the largest comm over the
        neighbour counts' corners plus the largest AllReduce over the local
        counts) must be a finite number of seconds below ``_MAX_TIME_S``; beyond that (e.g. a
        bandwidth of 5e-324 B/s, or 1e308 bytes, or anything above about a day
        per iteration) the solvers' tolerances and big-M constants stop being
        trustworthy.
        """
        try:
            worst = self.largest_term_s
        except (ZeroDivisionError, OverflowError):
            worst = math.inf
        if not worst <= _MAX_TIME_S:
            raise InvalidInstanceError(
                f"times out of range: a stage could take {worst:.3g} s per iteration "
                f"(limit {_MAX_TIME_S:.0e} s); check b_inter, b_intra, the byte sizes "
                "and fwd_s/bwd_s (seconds and bytes)"
            )

    # -- derived ----------------------------------------------------------------

    @property
    def largest_term_s(self) -> float:
        """An upper bound on any term of Eq. (7), in seconds: per stage, the largest
        comm over the neighbour counts' corners (comm is linear in them) plus the
        largest AllReduce over the local counts, plus compute."""
        worst = 0.0
        for s, stage in enumerate(self.stages):
            k_prev = self.stages[s - 1].replicas if s > 0 else 0
            k_next = self.stages[s + 1].replicas if s + 1 < len(self.stages) else 0
            comm = max(comm_time(self, s, p, n) for p in (0, k_prev) for n in (0, k_next))
            reduce = max(allreduce_time(self, s, v) for v in range(1, stage.replicas + 1))
            worst = max(worst, stage.compute_s + comm + reduce)
        return worst

    @property
    def num_stages(self) -> int:
        return len(self.stages)

    @property
    def num_servers(self) -> int:
        return len(self.available)

    @property
    def num_replicas(self) -> int:
        """``g_i = sum_s k_s``."""
        return sum(stage.replicas for stage in self.stages)

    @property
    def replicas(self) -> tuple[int, ...]:
        return tuple(stage.replicas for stage in self.stages)

    @property
    def allreduce_factor(self) -> float:
        """``c`` of Eq. (6): 2 for ring AllReduce, 1 for tree AllReduce."""
        return 2.0 if self.allreduce == "rar" else 1.0

    # -- JSON -------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "family": "placement",
            "schema_version": SCHEMA_VERSION,
            "gpus_per_server": self.gpus_per_server,
            "b_inter": self.b_inter,
            "b_intra": self.b_intra,
            "available": list(self.available),
            "allreduce": self.allreduce,
            "stages": stages_to_json(self.stages),
        }
        if self.description:
            out["description"] = self.description
        return out

    @classmethod
    def from_dict(cls, data: Any) -> PlacementInstance:
        """Build an instance from the spec's JSON format; unknown fields are an error."""
        data = check_fields(data, "placement instance", *FIELD_SPEC.field_names)
        check_header(data, "placement", SCHEMA_VERSION)
        if not isinstance(data["available"], list):
            raise InvalidInstanceError("available: expected a list of free-GPU counts")
        stages = stages_from_json(data["stages"], "stages")
        return cls(
            gpus_per_server=data["gpus_per_server"],
            b_inter=require_number(data["b_inter"], "b_inter"),
            b_intra=require_number(data["b_intra"], "b_intra"),
            available=tuple(data["available"]),
            allreduce=data["allreduce"],
            stages=tuple(stages),
            description=data.get("description", ""),
        )


def stages_to_json(stages: Sequence[Stage]) -> list[dict[str, Any]]:
    """Stages as the JSON format's list of stage objects."""
    return [{name: getattr(st, name) for name in _STAGE_FIELDS} for st in stages]


def stages_from_json(data: Any, where: str) -> tuple[Stage, ...]:
    """Read a list of stage objects (exactly the stage fields; errors name ``where``)."""
    if not isinstance(data, list):
        raise InvalidInstanceError(f"{where}: expected a list of stage objects")
    stages = []
    for s, raw in enumerate(data):
        fields = check_fields(raw, f"{where}[{s}]", required=_STAGE_FIELDS)
        stages.append(Stage(**{name: fields[name] for name in _STAGE_FIELDS}))
    return tuple(stages)


# --------------------------------------------------------------------------- placement


@dataclass(frozen=True)
class Placement:
    """``counts[s][m]``: replicas of stage ``s`` on server ``m`` (``x[s,m]``).

    ``gpu_of_replica`` optionally records a GPU-level mapping: for each stage
    a tuple of ``(server, gpu_slot)`` per replica (Heavy-Edge and the
    GPU-level ILP fill it; the evaluator only uses ``counts``).
    """

    counts: tuple[tuple[int, ...], ...]
    gpu_of_replica: tuple[tuple[tuple[int, int], ...], ...] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "counts", tuple(tuple(int(v) for v in row) for row in self.counts))
        if self.gpu_of_replica is not None:
            object.__setattr__(
                self,
                "gpu_of_replica",
                tuple(tuple((int(m), int(j)) for m, j in row) for row in self.gpu_of_replica),
            )

    @classmethod
    def from_servers(
        cls, instance: PlacementInstance, server_of_replica: Sequence[Sequence[int]]
    ) -> Placement:
        """Build the counts from ``server_of_replica[s][r]`` (GPU slots numbered per server)."""
        counts = [[0] * instance.num_servers for _ in instance.stages]
        gpus: list[list[tuple[int, int]]] = []
        for s, row in enumerate(server_of_replica):
            out = []
            for m in row:
                out.append((int(m), counts[s][m] + sum(counts[t][m] for t in range(s))))
                counts[s][m] += 1
            gpus.append(out)
        return cls(tuple(tuple(r) for r in counts), tuple(tuple(r) for r in gpus))

    def servers_used(self) -> list[int]:
        if not self.counts:
            return []
        num_servers = len(self.counts[0])
        return [m for m in range(num_servers) if any(row[m] for row in self.counts)]


@dataclass(frozen=True)
class PlacementEvaluation:
    """What the evaluator computed for a placement.

    ``iteration_time_s`` is ``alpha`` (Eq. 7); ``stage_server_time_s`` maps
    each ``(s, m)`` with ``x[s,m] > 0`` to ``(comp, comm, allreduce)`` in
    seconds; ``bottleneck`` is the ``(s, m)`` attaining the maximum (the
    first in (stage, server) order on ties).
    """

    iteration_time_s: float
    bottleneck: tuple[int, int]
    stage_server_time_s: dict[tuple[int, int], tuple[float, float, float]]
    servers_used: int


def placement_to_json(placement: Placement, evaluation: PlacementEvaluation | None = None) -> dict:
    """Render a placement as the CLI contract's JSON.

    ``placement[s][m]`` is the number of replicas of stage ``s`` on server
    ``m``; ``gpu_of_replica[s][r] = [server, gpu slot]`` when known; with an
    evaluation, ``iteration_time_s``, the ``bottleneck`` and ``servers_used``.
    """
    out: dict[str, Any] = {"placement": [list(r) for r in placement.counts]}
    if placement.gpu_of_replica is not None:
        out["gpu_of_replica"] = [[list(g) for g in row] for row in placement.gpu_of_replica]
    if evaluation is not None:
        out["iteration_time_s"] = evaluation.iteration_time_s
        out["bottleneck"] = {"stage": evaluation.bottleneck[0], "server": evaluation.bottleneck[1]}
        out["servers_used"] = evaluation.servers_used
    return out


def placement_from_json(data: Any) -> Placement:
    """Read a placement back from :func:`placement_to_json`'s output."""
    data = check_fields(
        data,
        "placement",
        required=("placement",),
        optional=("gpu_of_replica", "iteration_time_s", "bottleneck", "servers_used"),
    )
    rows = data["placement"]
    if not isinstance(rows, list) or not all(isinstance(r, list) for r in rows):
        raise InvalidInstanceError("placement: expected a list of lists of replica counts")
    counts = tuple(
        tuple(require_int(v, f"placement[{s}][{m}]", minimum=0) for m, v in enumerate(row))
        for s, row in enumerate(rows)
    )
    gpus = data.get("gpu_of_replica")
    if gpus is None:
        return Placement(counts)
    if not isinstance(gpus, list) or not all(isinstance(r, list) for r in gpus):
        raise InvalidInstanceError("gpu_of_replica: expected a list (per stage) of [server, gpu]")
    gpu_of = []
    for s, row in enumerate(gpus):
        out = []
        for r, pair in enumerate(row):
            if not isinstance(pair, list) or len(pair) != 2:
                raise InvalidInstanceError(
                    f"gpu_of_replica[{s}][{r}]: expected [server, gpu], got {pair!r}"
                )
            out.append(tuple(require_int(v, f"gpu_of_replica[{s}][{r}]", minimum=0) for v in pair))
        gpu_of.append(tuple(out))
    return Placement(counts, tuple(gpu_of))


# --------------------------------------------------------------------------- timing model


def comm_time(instance: PlacementInstance, s: int, prev_local: float, next_local: float) -> float:
    """``comm[s,m]`` of Eq. (5) given ``x[s-1,m] = prev_local`` and ``x[s+1,m] = next_local``.

    The inter-server part runs at the reserved share ``x[s,m] / g`` of
    ``B_inter``, which cancels with the traffic of the ``x[s,m]`` replicas,
    leaving the factor ``g``.
    """
    stages = instance.stages
    g = instance.gpus_per_server
    stage = stages[s]
    inter = intra = 0.0
    if s > 0:
        k_prev = stages[s - 1].replicas
        inter += 2.0 * stage.in_bytes * (k_prev - prev_local) / k_prev
        intra += 2.0 * stage.in_bytes * prev_local / k_prev
    if s < len(stages) - 1:
        k_next = stages[s + 1].replicas
        inter += 2.0 * stage.out_bytes * (k_next - next_local) / k_next
        intra += 2.0 * stage.out_bytes * next_local / k_next
    return g * inter / instance.b_inter + intra / instance.b_intra


def allreduce_time(instance: PlacementInstance, s: int, local: int) -> float:
    """``AllReduce[s,m]`` of Eq. (6) for ``x[s,m] = local >= 1`` replicas on the server."""
    stage = instance.stages[s]
    k = stage.replicas
    if k == 1:
        return 0.0
    if not 1 <= local <= k:
        raise ValueError(f"local replica count must be in 1..{k}, got {local}")
    data = instance.allreduce_factor * (k - 1) * stage.param_bytes / k
    if local == k:
        return data / instance.b_intra
    return data / ((local / instance.gpus_per_server) * instance.b_inter)


def stage_server_time(
    instance: PlacementInstance, counts: Sequence[Sequence[int]], s: int, m: int
) -> tuple[float, float, float]:
    """``(comp, comm, allreduce)`` of stage ``s`` on server ``m`` (requires ``x[s,m] > 0``)."""
    local = counts[s][m]
    prev_local = counts[s - 1][m] if s > 0 else 0
    next_local = counts[s + 1][m] if s < instance.num_stages - 1 else 0
    return (
        instance.stages[s].compute_s,
        comm_time(instance, s, prev_local, next_local),
        allreduce_time(instance, s, local),
    )


def _check_placement(instance: PlacementInstance, placement: Placement) -> None:
    counts = placement.counts
    if len(counts) != instance.num_stages:
        raise InfeasibleScheduleError(
            f"placement has {len(counts)} stage rows, the instance {instance.num_stages} stages"
        )
    for s, row in enumerate(counts):
        if len(row) != instance.num_servers:
            raise InfeasibleScheduleError(
                f"placement row {s} has {len(row)} servers, the instance {instance.num_servers}"
            )
        if any(v < 0 for v in row):
            raise InfeasibleScheduleError(f"placement row {s} has a negative count: {list(row)}")
        k = instance.stages[s].replicas
        if sum(row) != k:
            raise InfeasibleScheduleError(
                f"stage {s}: {sum(row)} replicas placed, k_s = {k} (Eq. 2: sum_m x[s,m] = k_s)"
            )
    for m, avail in enumerate(instance.available):
        used = sum(row[m] for row in counts)
        if used > avail:
            raise InfeasibleScheduleError(
                f"server {m}: {used} replicas placed on {avail} free GPUs"
            )


def evaluate(instance: PlacementInstance, placement: Placement) -> PlacementEvaluation:
    """Check ``placement`` and compute its per-iteration time ``alpha`` (Eqs. 4-7)."""
    _check_placement(instance, placement)
    counts = placement.counts
    terms: dict[tuple[int, int], tuple[float, float, float]] = {}
    best = -math.inf
    bottleneck = (0, 0)
    for s in range(instance.num_stages):
        for m in range(instance.num_servers):
            if counts[s][m] <= 0:
                continue
            parts = stage_server_time(instance, counts, s, m)
            terms[(s, m)] = parts
            beta = parts[0] + parts[1] + parts[2]
            if beta > best:
                best, bottleneck = beta, (s, m)
    return PlacementEvaluation(
        iteration_time_s=best,
        bottleneck=bottleneck,
        stage_server_time_s=terms,
        servers_used=len(placement.servers_used()),
    )


def iteration_time(instance: PlacementInstance, placement: Placement) -> float:
    """``alpha`` of ``placement`` in seconds (shorthand for ``evaluate(...).iteration_time_s``)."""
    return evaluate(instance, placement).iteration_time_s


# --------------------------------------------------------------------------- alpha_max


def alpha_max(instance: PlacementInstance) -> float:
    """``alpha_max`` (Sec. III-B): each replica alone on a server with ``B_inter / g``.

    Every ``x[s,m]`` is 0 or 1 and no neighbour stage shares a server, so
    all inter-stage traffic crosses the NIC and a replicated stage's
    AllReduce runs at ``B_inter / g``.
    """
    worst = 0.0
    for s, stage in enumerate(instance.stages):
        comm = comm_time(instance, s, 0, 0)
        if stage.replicas == 1:
            ar = 0.0
        else:
            k = stage.replicas
            data = instance.allreduce_factor * (k - 1) * stage.param_bytes / k
            ar = data / (instance.b_inter / instance.gpus_per_server)
        worst = max(worst, stage.compute_s + comm + ar)
    return worst


def fewest_servers(num_gpus: int, gpus_per_server: int) -> tuple[int, ...]:
    """Availability of the fewest servers holding ``num_gpus``: ``(g, ..., g, g')``."""
    full, rest = divmod(num_gpus, gpus_per_server)
    return (gpus_per_server,) * full + ((rest,) if rest else ())
