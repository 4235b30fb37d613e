"""DNN model profiles: loaders for the real profiles, analytic GPTs, a stage planner.

Profiles are named ``<source>/<model>``:

* ``pipedream/<model>`` (``vgg16``, ``resnet18/50/101``, ``alexnet``,
  ``inception_v3``, ``gnmt``, ``gnmt_large``): :mod:`.pipedream`;
* ``dnn-partitioning/<model>`` (``bert24``, ``gnmt``, ``inceptionv3``,
  ``resnet50``): :mod:`.dnn_partitioning`;
* ``piper/bert32a100``: :mod:`.piper`;
* ``analytic/<gpt>`` (``gpt-6.7b``, ``gpt-13b``, ``gpt-175b``): :mod:`.analytic`.

The real profiles are read from the shared data directory
(:func:`ddlsched.datadir.data_file`), never copied into the repository.
:func:`plan_stages` (compute-balanced) and :func:`comm_aware_plan` turn a profile
into placement stages; :mod:`.paper` rebuilds the A-SRPT paper's Table II
profiles (VGG19 at batch 32, GPT three-block slices, fp32).
"""

from __future__ import annotations

from ddlsched.errors import UnknownMethodError
from ddlsched.workloads.profiles.analytic import GPT_CONFIGS, gpt_profile
from ddlsched.workloads.profiles.base import Layer, ModelProfile, cut_bytes
from ddlsched.workloads.profiles.dnn_partitioning import load_dnn_partitioning
from ddlsched.workloads.profiles.pipedream import load_pipedream
from ddlsched.workloads.profiles.piper import load_piper
from ddlsched.workloads.profiles.planner import StagePlan, comm_aware_plan, plan_stages

__all__ = [
    "PROFILE_NAMES",
    "Layer",
    "ModelProfile",
    "StagePlan",
    "comm_aware_plan",
    "cut_bytes",
    "gpt_profile",
    "load_dnn_partitioning",
    "load_pipedream",
    "load_piper",
    "load_profile",
    "plan_stages",
]

PROFILE_NAMES = (
    *(
        f"pipedream/{m}"
        for m in (
            "vgg16",
            "resnet18",
            "resnet50",
            "resnet101",
            "alexnet",
            "inception_v3",
            "gnmt",
            "gnmt_large",
        )
    ),
    *(f"dnn-partitioning/{m}" for m in ("bert24", "gnmt", "inceptionv3", "resnet50")),
    "piper/bert32a100",
    *(f"analytic/{m}" for m in GPT_CONFIGS),
)


def load_profile(name: str) -> ModelProfile:
    """Load a profile by name (see the module docstring)."""
    source, _, model = name.partition("/")
    if name not in PROFILE_NAMES:
        raise UnknownMethodError(
            f"unknown profile {name!r} (choose from {', '.join(PROFILE_NAMES)})"
        )
    if source == "pipedream":
        return load_pipedream(model)
    if source == "dnn-partitioning":
        return load_dnn_partitioning(model)
    if source == "piper":
        return load_piper(model)
    return gpt_profile(model)
