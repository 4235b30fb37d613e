"""Instances of family ``muri_sim``: trace runs (preset ``trace``).

``generate("trace", seed, trace=NAME, mode=..., limit=..., knobs={...})``
names a trace of the data directory (see
:func:`ddlsched.workloads.muri_traces.load_trace`) and a simulator
configuration; ``seed`` seeds the profile assignment of Philly/ITP traces.
The trace is read when a method runs, never copied into the instance.
"""

from __future__ import annotations

from typing import Any

from ddlsched.errors import InvalidInstanceError, UnknownMethodError
from ddlsched.problems.muri_sim import TraceRun

__all__ = ["PRESETS", "generate"]

PRESETS = ("trace",)
_PARAMS = ("trace", "mode", "limit", "knobs")


def generate(preset: str, seed: int = 0, **params: Any) -> TraceRun:
    """Preset ``trace``: parameters ``trace`` (required), ``mode``, ``limit``, ``knobs``."""
    if preset not in PRESETS:
        raise UnknownMethodError(
            f"unknown muri_sim preset {preset!r} (choose from {', '.join(PRESETS)})"
        )
    unknown = sorted(set(params) - set(_PARAMS))
    if unknown:
        raise InvalidInstanceError(
            f"muri_sim: unknown preset parameter(s) {', '.join(unknown)} "
            f"(known: {', '.join(_PARAMS)})"
        )
    if "trace" not in params:
        raise InvalidInstanceError("muri_sim: preset 'trace' needs the parameter trace=NAME")
    return TraceRun.create(
        trace=params["trace"],
        mode=params.get("mode", "reference"),
        seed=seed,
        limit=params.get("limit"),
        knobs=params.get("knobs"),
    )
