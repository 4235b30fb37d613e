"""Instance generators for family ``placement`` (presets ``small`` and ``table2``).

``table2`` builds the Table II cases of the A-SRPT paper (Sec. V-B-2-e):
one job of a given model and GPU count, servers of ``g = 8`` GPUs with a
10 Gbps NIC (``B_inter = 1.25e9`` B/s) and 300 GB/s NVLink (``B_intra =
3e11`` B/s), the paper's interconnect (Sec. V-B-1-a), ring AllReduce, and
a random *availability pattern*: the job's ``g_i`` GPUs are spread over
servers whose free-GPU counts are drawn one after the other uniformly from
``1..min(g, still needed)`` until they add up to ``g_i`` (``sum_m avail_m
= g_i``, the paper's setting; the draw is the seed's only use), distinct across
seeds: seed ``k`` takes the ``k``-th distinct pattern (up to the order of the
servers) among the draws of seeds 0, 1, ...
(:func:`distinct_availability_pattern`), as the paper's 20 cases vary. The job
comes from :mod:`ddlsched.workloads.profiles`: the model's profile cut into
stages with replica counts by the stage planner. Parameters: ``model``
(see :data:`TABLE2_MODELS`), ``num_gpus``, ``num_stages``, ``allreduce``,
``gpus_per_server``, and:

* ``setting`` -- which profile stands for the model.
  ``default``: the profiles of :data:`TABLE2_MODELS` as they are
  (PipeDream's VGG-16 at mini-batch 128 in fp32, dnn-partitioning's and
  Piper's BERTs, the full analytic GPTs in fp16 at 50 TFLOP/s).
  ``paper``: the paper's own setting as far as it is stated
  (:mod:`ddlsched.workloads.profiles.paper`, which lists every number the
  paper gives and every assumption): VGG19 at Table I's mini-batch 32
  (``vgg16``; derived from PipeDream's VGG-16 measurements), and the
  paper's three-block profiling slice of GPT-175B (mini-batch 16) and GPT
  6.7B (mini-batch 32) at sequence 512; fp32 activations, gradients and
  parameters (assumed: PyTorch's default); same interconnect; default 4
  stages for VGG19 and 3 (one block each) for the GPT slices, 16 GPUs
  (the paper gives neither number for Table II). The BERT models have no
  paper setting (Table II does not use them): asking for one is an error.
* ``planner`` -- how stages and replica counts are chosen
  (:mod:`ddlsched.workloads.profiles.planner`). ``compute`` (default; the
  spec's "balanced-stage planner"): cuts balance compute time, then each
  extra GPU to the stage of largest compute per replica. ``cut_cost``:
  the same, with each stage's cost increased by its boundary transfer at
  ``B_inter`` (cuts only; replica counts still by compute).
  ``comm_aware``: cuts and replica counts chosen together to minimise an
  ``alpha_max``-style bottleneck (Sec. III-B: Eqs. 4-7 with every replica
  alone on a server, here with a whole NIC ``B_inter`` each; compute plus
  boundary activations plus ring AllReduce), a placement-free estimate
  (:func:`~ddlsched.workloads.profiles.planner.comm_aware_plan`), standing
  in for the communication-aware planner of the paper's ref. [20].

``small`` is a synthetic tiny job (2-4 stages of 1-3 replicas, servers of
4 GPUs, exactly enough free GPUs) whose optimum a brute force can check:
stage times uniform in 5-20 ms forward and 1-2.5x that backward, boundary
volumes 1-50 MB split over the replicas (consistent by construction),
parameters 1-200 MB.

Preset parameters (``--set``) are typed and ranged by :data:`PRESET_PARAMS`,
derived from the generators' signatures (:func:`ddlsched.params.signature_params`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from ddlsched.errors import InvalidInstanceError, UnknownMethodError
from ddlsched.params import PresetTable, declare, signature_params
from ddlsched.problems.placement import PlacementInstance, Stage
from ddlsched.rng import make_rng

__all__ = [
    "B_INTER_10GBPS",
    "B_INTRA_NVLINK",
    "PAPER_SETTING",
    "PLANNERS",
    "PRESETS",
    "PRESET_PARAMS",
    "TABLE2_MODELS",
    "PaperSetting",
    "Table2Model",
    "availability_pattern",
    "distinct_availability_pattern",
    "generate",
    "small",
    "table2",
]

B_INTER_10GBPS = 10e9 / 8  # 10 Gbps NIC, bytes/s
B_INTRA_NVLINK = 300e9  # 300 GB/s NVLink (V100), bytes/s


@dataclass(frozen=True)
class Table2Model:
    """A Table II job: which profile, how many stages and GPUs by default."""

    profile: str
    num_stages: int
    num_gpus: int
    stands_for: str


TABLE2_MODELS: dict[str, Table2Model] = {
    "vgg16": Table2Model("pipedream/vgg16", 4, 16, "VGG19 (PipeDream's VGG-16 profile)"),
    "bert24": Table2Model("dnn-partitioning/bert24", 8, 16, "BERT-large (24 layers)"),
    "bert32": Table2Model("piper/bert32a100", 8, 16, "BERT, 32 layers (Piper, A100)"),
    "gpt175b": Table2Model("analytic/gpt-175b", 8, 16, "GPT-175B (analytic)"),
    "gpt6.7b": Table2Model("analytic/gpt-6.7b", 8, 16, "GPT 6.7B (analytic)"),
}


@dataclass(frozen=True)
class PaperSetting:
    """A Table II model under ``setting=paper``: its profile and default stage count."""

    profile: str
    num_stages: int
    stands_for: str


#: ``setting=paper``: the paper's profile of each model (``profiles/paper.py``).
PAPER_SETTING: dict[str, PaperSetting] = {
    "vgg16": PaperSetting("vgg19", 4, "VGG19, batch 32, fp32 (from PipeDream's VGG-16)"),
    "gpt175b": PaperSetting("gpt-175b", 3, "GPT-175B 3-block slice, batch 16, fp32"),
    "gpt6.7b": PaperSetting("gpt-6.7b", 3, "GPT 6.7B 3-block slice, batch 32, fp32"),
}
PLANNERS = ("compute", "cut_cost", "comm_aware")


def _paper_profile(model: str):
    from ddlsched.workloads.profiles.paper import gpt_slice_profile, vgg19_profile

    try:
        spec = PAPER_SETTING[model]
    except KeyError:
        raise InvalidInstanceError(
            f"setting=paper: no paper profile for model {model!r} "
            f"(Table II's models: {', '.join(PAPER_SETTING)})"
        ) from None
    profile = vgg19_profile() if spec.profile == "vgg19" else gpt_slice_profile(spec.profile)
    return profile, spec


def availability_pattern(seed: int, num_gpus: int, gpus_per_server: int = 8) -> tuple[int, ...]:
    """Free GPUs per server, drawn uniformly in ``1..min(g, left)`` until they sum to ``num_gpus``."""
    if num_gpus < 1:
        raise InvalidInstanceError(f"num_gpus: must be >= 1, got {num_gpus!r}")
    rng = make_rng(seed)
    left, out = num_gpus, []
    while left > 0:
        avail = int(rng.integers(1, min(gpus_per_server, left) + 1))
        out.append(avail)
        left -= avail
    return tuple(out)


#: How many seeds' draws :func:`distinct_availability_pattern` scans for distinct patterns.
PATTERN_DRAWS = 10_000


@lru_cache(maxsize=64)
def _distinct_patterns(
    num_gpus: int, gpus_per_server: int, wanted: int
) -> tuple[tuple[int, ...], ...]:
    """The first ``wanted`` distinct patterns (as multisets of free-GPU counts) among the
    draws of seeds 0, 1, ..., each in the order of its first draw; fewer when the first
    :data:`PATTERN_DRAWS` draws hold fewer."""
    seen: set[tuple[int, ...]] = set()
    out: list[tuple[int, ...]] = []
    for draw in range(PATTERN_DRAWS):
        pattern = availability_pattern(draw, num_gpus, gpus_per_server)
        key = tuple(sorted(pattern))
        if key not in seen:
            seen.add(key)
            out.append(pattern)
            if len(out) == wanted:
                break
    return tuple(out)


def distinct_availability_pattern(
    seed: int, num_gpus: int, gpus_per_server: int = 8
) -> tuple[tuple[int, ...], str]:
    """Table II's pattern of ``seed``: the ``seed``-th distinct pattern (servers are
    interchangeable, so two patterns that are permutations of each other are one) among the
    draws of :func:`availability_pattern` for seeds 0, 1, ...; seeds 0, 1, ... thus give
    distinct instances (seed 0 keeps its own draw). The paper's 20 cases "with varying GPU
    availability per server" are distinct; a plain per-seed draw repeats patterns (16 GPUs:
    GPT-175B's seeds 0-3 drew one pattern). When the job has fewer distinct patterns than
    ``seed + 1`` (few GPUs) the pattern of ``seed`` modulo their count is used, and the
    second value, otherwise empty, says so."""
    found = _distinct_patterns(num_gpus, gpus_per_server, seed + 1)
    if len(found) > seed:
        return found[seed], ""
    every = _distinct_patterns(num_gpus, gpus_per_server, PATTERN_DRAWS)
    index = seed % len(every)
    note = (
        f"; only {len(every)} distinct availability patterns of {num_gpus} GPUs: "
        f"seed {seed} repeats pattern {index}"
    )
    return every[index], note


def table2(
    seed: int = 0,
    *,
    model: str = "vgg16",
    num_gpus: int | None = None,
    num_stages: int | None = None,
    allreduce: str = "rar",
    gpus_per_server: int = 8,
    setting: str = "default",
    planner: str = "compute",
) -> PlacementInstance:
    """One Table II case: ``model`` on ``num_gpus`` GPUs, availability pattern from ``seed``."""
    from ddlsched.workloads.profiles import comm_aware_plan, load_profile, plan_stages

    try:
        spec = TABLE2_MODELS[model]
    except KeyError:
        raise UnknownMethodError(
            f"unknown table2 model {model!r} (choose from {', '.join(TABLE2_MODELS)})"
        ) from None
    if setting == "paper":
        profile, paper = _paper_profile(model)
        default_stages, stands_for = paper.num_stages, paper.stands_for
    elif setting == "default":
        profile = load_profile(spec.profile)
        default_stages, stands_for = spec.num_stages, spec.stands_for
    else:
        raise InvalidInstanceError(f"setting: choose default or paper, got {setting!r}")
    num_gpus = spec.num_gpus if num_gpus is None else num_gpus
    num_stages = default_stages if num_stages is None else num_stages
    if planner == "comm_aware":
        plan = comm_aware_plan(
            profile,
            num_stages=num_stages,
            num_gpus=num_gpus,
            bandwidth_Bps=B_INTER_10GBPS,
        )
    elif planner in PLANNERS:
        plan = plan_stages(
            profile,
            num_stages=num_stages,
            num_gpus=num_gpus,
            boundary_bandwidth_Bps=B_INTER_10GBPS if planner == "cut_cost" else None,
        )
    else:
        raise InvalidInstanceError(f"planner: choose from {', '.join(PLANNERS)}, got {planner!r}")
    available, repeated = distinct_availability_pattern(seed, num_gpus, gpus_per_server)
    return PlacementInstance(
        gpus_per_server=gpus_per_server,
        b_inter=B_INTER_10GBPS,
        b_intra=B_INTRA_NVLINK,
        available=available,
        allreduce=allreduce,
        stages=plan.stages(),
        description=(
            f"table2 {model} ({stands_for}; setting {setting}, planner {planner}): "
            f"profile {profile.name}, {num_stages} stages "
            f"(layers {[list(b) for b in plan.bounds]}), "
            f"replicas {list(plan.replicas)}, {num_gpus} GPUs, availability seed {seed} "
            f"(distinct pattern {seed}{repeated})"
        ),
    )


def small(
    seed: int = 0,
    *,
    num_stages: int | None = None,
    max_replicas: int = 3,
    gpus_per_server: int = 4,
    allreduce: str = "rar",
) -> PlacementInstance:
    """A tiny synthetic job for brute-force checks (see the module docstring)."""
    rng = make_rng(seed)
    if num_stages is None:
        num_stages = int(rng.integers(2, 5))
    replicas = [int(rng.integers(1, max_replicas + 1)) for _ in range(num_stages)]
    boundary = [float(rng.uniform(1e6, 5e7)) for _ in range(num_stages + 1)]
    stages = []
    for s, k in enumerate(replicas):
        fwd = float(rng.uniform(0.005, 0.020))
        stages.append(
            Stage(
                replicas=k,
                fwd_s=fwd,
                bwd_s=fwd * float(rng.uniform(1.0, 2.5)),
                in_bytes=boundary[s] / k,
                out_bytes=boundary[s + 1] / k,
                param_bytes=float(rng.uniform(1e6, 2e8)),
            )
        )
    available = availability_pattern(int(rng.integers(2**31)), sum(replicas), gpus_per_server)
    return PlacementInstance(
        gpus_per_server=gpus_per_server,
        b_inter=B_INTER_10GBPS,
        b_intra=B_INTRA_NVLINK,
        available=available,
        allreduce=allreduce,
        stages=tuple(stages),
        description=f"small synthetic job, seed {seed}",
    )


PRESETS = {"small": small, "table2": table2}

_ALLREDUCE = declare("AllReduce: rar (ring) or tar (tree)", choices=("rar", "tar"))
#: The typed parameters of every preset (``ddlsched presets placement``).
PRESET_PARAMS = {
    "small": signature_params(
        small,
        "PlacementSmallParams",
        {
            "num_stages": declare("pipeline stages (default: 2-4, drawn)", minimum=1, maximum=1000),
            "max_replicas": declare("replicas per stage: 1..this, drawn", minimum=1, maximum=1000),
            "gpus_per_server": declare("GPUs per server", minimum=1, maximum=1024),
            "allreduce": _ALLREDUCE,
        },
    ),
    "table2": signature_params(
        table2,
        "PlacementTable2Params",
        {
            "model": declare("Table II model", choices=tuple(TABLE2_MODELS)),
            "num_gpus": declare(
                "GPUs of the job (default: the model's)", minimum=1, maximum=10_000
            ),
            "num_stages": declare(
                "pipeline stages (default: the model's; at most its layers)",
                minimum=1,
                maximum=1000,
            ),
            "allreduce": _ALLREDUCE,
            "gpus_per_server": declare("GPUs per server", minimum=1, maximum=1024),
            "setting": declare(
                "profiles: default (ours) or paper (Table I/II's batch, fp32, GPT 3-block slices)",
                choices=("default", "paper"),
            ),
            "planner": declare(
                "stage planner: compute (balanced compute), cut_cost (+ boundary transfer "
                "in the cuts), comm_aware (cuts and replicas minimising alpha_max: "
                "compute + activations + AllReduce, each replica at B_inter)",
                choices=PLANNERS,
            ),
        },
    ),
}


#: Preset name -> builder and parameter class (:class:`ddlsched.params.PresetTable`); the
#: builders' own checks raise ``ValueError`` (one line ``preset 'P': ...``).
PRESET_TABLE = PresetTable(
    "placement", PRESETS, PRESET_PARAMS, builder_errors=(TypeError, ValueError)
)


def generate(preset: str, seed: int = 0, **params) -> PlacementInstance:
    """Generate a ``placement`` instance from a named preset (``small`` or ``table2``)."""
    return PRESET_TABLE.generate(preset, seed, **params)
