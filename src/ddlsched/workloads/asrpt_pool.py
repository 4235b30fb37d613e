"""The A-SRPT model pool (the paper's Table I) and its pipeline configurations.

Spec ``docs/families/asrpt.md`` ("Presets, generators and data": model pool,
configurations, Muri/Tiresias model map); A-SRPT paper, Sec. V-A-1-b and Table I.

Pool (Table I; profiles from the ``placement`` family's loaders,
:mod:`ddlsched.workloads.profiles`):

========================  ==============================  ==========================
paper model               profile                         note
========================  ==============================  ==========================
VGG19 (``vgg19``)         ``pipedream/vgg16``             stand-in (no VGG19 profile)
ResNet152 (``resnet152``) ``pipedream/resnet101``         stand-in (no ResNet152)
Inception-V3              ``pipedream/inception_v3``
BERT-large                ``dnn-partitioning/bert24``
XLNet-large               ``piper/bert32a100``            stand-in of the same scale
GPT 6.7B / 13B / 175B     ``analytic/gpt-*``, 3 blocks    seq. 512, batch 32/32/16
========================  ==============================  ==========================

* The GPT models are the analytic profiles cut to 3 transformer blocks
  (the paper profiled "a smaller model consisting of three layers"):
  :func:`~ddlsched.workloads.profiles.analytic.gpt_profile` with the
  configuration's ``layers = 3``, sequence 512 and mini-batch 32/32/16
  (the analytic configurations' own values; a test checks them). A cut
  GPT has 5 profile layers (embedding, 3 blocks, head).
* T5 is left out: the analytic profiles have no feed-forward width
  parameter (T5-11B has ``d_model = 1024``, ``d_ff = 65536``, far from
  GPT's ``4 h``), so no faithful T5 profile can be built; recorded in
  :data:`LEFT_OUT`.
* The real profiles keep their own mini-batch (PipeDream's VGG-16 at 128,
  ResNet-101 at 64, ...), not Table I's: the profiles are per mini-batch
  and are not rescaled. Every configuration's description names the
  paper model, the profile, the stand-in note and the profile's batch.
* GPU memory is not modelled (spec).
* Extra profiles used only to map the Muri and Tiresias models (spec):
  ``resnet18``, ``resnet50``, ``resnet101`` (PipeDream). Map
  (:func:`map_trace_model`): ``vgg16``, ``vgg19`` -> ``vgg19`` (the
  ``pipedream/vgg16`` profile); ``bert`` -> ``bert_large``; ``gpt2`` ->
  ``gpt_6.7b`` (3 blocks); ``resnet18/50/101`` -> their PipeDream
  profiles; ``resnet152`` -> ``resnet152`` (``pipedream/resnet101``);
  ``inception3``, ``inception4``, ``inception_v3`` -> ``inception_v3``;
  every other name (``shufflenet_v2_x1_0``, ``dqn``, ``a2c``, ``vgg11``,
  ``alexnet``, ``googlenet``, ...) -> ``resnet18`` as a stand-in (the
  spec's rule, applied literally, also to ``alexnet`` although PipeDream
  profiles it).

Configurations of a model for ``g`` GPUs (:func:`configurations`): the
``placement`` planner (:func:`~ddlsched.workloads.profiles.plan_stages`,
compute-balanced cuts, greedy replicas) with ``S in {1, 2, 4, 8}``
stages, ``S <= min(g, layers)``, ring AllReduce; so every model has its
1-GPU configuration (``S = 1``, one replica). Configurations are named
``<model>-g<g>-s<S>`` and cached; the cuts depend only on ``(model, S)``
and are cached separately, so a new GPU count costs only the greedy
replica split.

Draws (:func:`draw_configuration`, the paper assigns per job group): a
single-GPU group gets a uniformly random pool model's 1-GPU configuration,
a multi-GPU group a uniformly random pool model and a uniformly random one
of its configurations for that GPU count; with a model given (Muri,
Tiresias), only the configuration is drawn.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cache, lru_cache

import numpy as np

from ddlsched.errors import InvalidInstanceError, UnknownMethodError
from ddlsched.problems.asrpt import JobConfig
from ddlsched.workloads.profiles import ModelProfile, load_profile
from ddlsched.workloads.profiles.analytic import GPT_CONFIGS, gpt_profile
from ddlsched.workloads.profiles.planner import StagePlan, balanced_cuts, replica_counts

__all__ = [
    "EXTRA_MODELS",
    "LEFT_OUT",
    "POOL",
    "STAGE_COUNTS",
    "TABLE_I",
    "PoolModel",
    "configurations",
    "draw_configuration",
    "map_trace_model",
    "model_profile",
    "stage_counts",
]

STAGE_COUNTS = (1, 2, 4, 8)
GPT_BLOCKS = 3
ALLREDUCE = "rar"


@dataclass(frozen=True)
class PoolModel:
    """A pool model: its paper name, the profile that stands for it and a note."""

    name: str
    paper: str
    profile: str
    note: str = ""


POOL: dict[str, PoolModel] = {
    m.name: m
    for m in (
        PoolModel("vgg19", "VGG19", "pipedream/vgg16", "stand-in: PipeDream's VGG-16 profile"),
        PoolModel(
            "resnet152", "ResNet152", "pipedream/resnet101", "stand-in: PipeDream's ResNet-101"
        ),
        PoolModel("inception_v3", "Inception-V3", "pipedream/inception_v3"),
        PoolModel("bert_large", "BERT-large", "dnn-partitioning/bert24"),
        PoolModel(
            "xlnet_large",
            "XLNet-large",
            "piper/bert32a100",
            "stand-in of the same scale: Piper's 32-layer BERT (A100)",
        ),
        PoolModel("gpt_6.7b", "GPT 6.7B", "analytic/gpt-6.7b", "cut to 3 transformer blocks"),
        PoolModel("gpt_13b", "GPT 13B", "analytic/gpt-13b", "cut to 3 transformer blocks"),
        PoolModel("gpt_175b", "GPT 175B", "analytic/gpt-175b", "cut to 3 transformer blocks"),
        # mapping targets of the Muri and Tiresias models (not in Table I)
        PoolModel("resnet18", "ResNet-18", "pipedream/resnet18", "not in Table I (trace model)"),
        PoolModel("resnet50", "ResNet-50", "pipedream/resnet50", "not in Table I (trace model)"),
        PoolModel("resnet101", "ResNet-101", "pipedream/resnet101", "not in Table I (trace model)"),
    )
}
#: The models drawn for traces without model names (Table I minus T5), in draw order.
TABLE_I = (
    "vgg19",
    "resnet152",
    "inception_v3",
    "bert_large",
    "xlnet_large",
    "gpt_6.7b",
    "gpt_13b",
    "gpt_175b",
)
EXTRA_MODELS = ("resnet18", "resnet50", "resnet101")
LEFT_OUT = {
    "T5": "no analytic profile with a feed-forward width (T5-11B: d_model 1024, d_ff 65536)"
}
_TRACE_MODEL_MAP = {
    "vgg16": "vgg19",
    "vgg19": "vgg19",
    "bert": "bert_large",
    "gpt2": "gpt_6.7b",
    "resnet18": "resnet18",
    "resnet50": "resnet50",
    "resnet101": "resnet101",
    "resnet152": "resnet152",
    "inception3": "inception_v3",
    "inception4": "inception_v3",
    "inception_v3": "inception_v3",
}
_FALLBACK = "resnet18"


def map_trace_model(trace_model: str) -> tuple[str, bool]:
    """The pool model of a Muri/Tiresias model name and whether it is the fallback stand-in."""
    mapped = _TRACE_MODEL_MAP.get(trace_model)
    return (mapped, False) if mapped is not None else (_FALLBACK, True)


def _pool_model(name: str) -> PoolModel:
    try:
        return POOL[name]
    except KeyError:
        raise UnknownMethodError(
            f"unknown pool model {name!r} (choose from {', '.join(POOL)})"
        ) from None


@cache
def model_profile(name: str) -> ModelProfile:
    """The profile of pool model ``name`` (GPTs cut to 3 blocks; real profiles from the data)."""
    model = _pool_model(name)
    if model.profile.startswith("analytic/"):
        base = model.profile.partition("/")[2]
        return gpt_profile(base, config=replace(GPT_CONFIGS[base], layers=GPT_BLOCKS))
    return load_profile(model.profile)


def stage_counts(name: str, num_gpus: int) -> tuple[int, ...]:
    """The stage counts ``S in {1, 2, 4, 8}`` with ``S <= min(num_gpus, layers)``."""
    layers = model_profile(name).num_layers
    return tuple(s for s in STAGE_COUNTS if s <= min(num_gpus, layers))


@cache
def _cuts(name: str, num_stages: int) -> tuple[tuple[int, int], ...]:
    profile = model_profile(name)
    return balanced_cuts([lay.fwd_s + lay.bwd_s for lay in profile.layers], num_stages)


@lru_cache(maxsize=4096)
def _configuration(name: str, num_gpus: int, num_stages: int) -> JobConfig:
    model = POOL[name]
    profile = model_profile(name)
    bounds = _cuts(name, num_stages)
    times = [lay.fwd_s + lay.bwd_s for lay in profile.layers]
    plan = StagePlan(
        profile, bounds, replica_counts([sum(times[a:b]) for a, b in bounds], num_gpus)
    )
    note = f"; {model.note}" if model.note else ""
    batch = profile.batch_size if profile.batch_size is not None else "unstated"
    return JobConfig(
        allreduce=ALLREDUCE,
        stages=plan.stages(),
        description=(
            f"{model.paper} ({name}): profile {model.profile}{note}; profile batch {batch}; "
            f"{num_stages} stage(s), layers {[list(b) for b in bounds]}, "
            f"replicas {list(plan.replicas)}, {num_gpus} GPU(s)"
        ),
    )


def configurations(name: str, num_gpus: int) -> tuple[tuple[str, JobConfig], ...]:
    """``(config name, configuration)`` of pool model ``name`` for ``num_gpus`` GPUs, by ``S``."""
    if isinstance(num_gpus, bool) or not isinstance(num_gpus, (int, np.integer)) or num_gpus < 1:
        raise InvalidInstanceError(f"num_gpus: expected an integer >= 1, got {num_gpus!r}")
    num_gpus = int(num_gpus)
    return tuple(
        (f"{name}-g{num_gpus}-s{s}", _configuration(name, num_gpus, s))
        for s in stage_counts(name, num_gpus)
    )


def draw_configuration(
    rng: np.random.Generator, num_gpus: int, model: str | None = None
) -> tuple[str, str, JobConfig]:
    """``(model, config name, configuration)`` for a job group of ``num_gpus`` GPUs.

    ``model`` None: a uniformly random :data:`TABLE_I` model; then a
    uniformly random one of its configurations for ``num_gpus`` (the
    1-GPU configuration when ``num_gpus = 1``). Two draws from ``rng``
    when ``model`` is None, one otherwise.
    """
    if model is None:
        model = TABLE_I[int(rng.integers(len(TABLE_I)))]
    options = configurations(model, num_gpus)
    name, config = options[int(rng.integers(len(options)))]
    return model, name, config
