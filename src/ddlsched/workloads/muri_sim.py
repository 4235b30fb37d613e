"""Instances of family ``muri_sim``: trace runs (preset ``trace``).

``generate("trace", seed, trace=NAME, mode=..., limit=..., knobs={...})``
names a trace of the data directory (see
:func:`ddlsched.workloads.muri_traces.load_trace`) and a simulator
configuration; ``seed`` seeds the profile assignment of Philly/ITP traces.
The trace is read when a method runs, never copied into the instance.
"""

from __future__ import annotations

from typing import Any

from ddlsched.params import PresetTable, declare, signature_params
from ddlsched.problems.muri_sim import TraceRun

__all__ = ["PRESETS", "PRESET_PARAMS", "generate", "trace"]

PRESETS = ("trace",)


def trace(
    seed: int = 0,
    *,
    trace: str,
    mode: str = "reference",
    limit: int | None = None,
    knobs: dict[str, Any] | None = None,
) -> TraceRun:
    """Preset ``trace``: ``trace`` (required), ``mode``, ``limit``, ``knobs``."""
    return TraceRun.create(trace=trace, mode=mode, seed=seed, limit=limit, knobs=knobs)


#: The typed parameters of the preset (``ddlsched presets muri_sim``).
PRESET_PARAMS = {
    "trace": signature_params(
        trace,
        "MuriSimTraceParams",
        {
            "trace": declare("trace1..4, trace1_pr.., philly, itp:NAME, tiresias, or a CSV path"),
            "mode": declare("simulator model", choices=("reference", "paper")),
            "limit": declare("only the first N jobs of the trace", minimum=1, maximum=10_000_000),
            "knobs": declare("simulator knobs (SimConfig fields), checked by the simulator"),
        },
    )
}


#: Preset name -> builder and parameter class (:class:`ddlsched.params.PresetTable`).
PRESET_TABLE = PresetTable("muri_sim", {"trace": trace}, PRESET_PARAMS)


def generate(preset: str, seed: int = 0, **params: Any) -> TraceRun:
    """Preset ``trace`` (:func:`trace`), its parameters checked against :data:`PRESET_PARAMS`."""
    return PRESET_TABLE.generate(preset, seed, **params)
