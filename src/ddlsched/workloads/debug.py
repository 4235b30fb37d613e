"""Instances of family ``debug`` (preset ``default``)."""

from __future__ import annotations

from typing import Any

from ddlsched.params import PresetTable, declare, signature_params
from ddlsched.problems.debug import DebugInstance
from ddlsched.rng import make_rng

__all__ = ["PRESETS", "PRESET_PARAMS", "generate"]

PRESETS = ("default",)


def default(seed: int = 0, *, size: int | None = None) -> DebugInstance:
    """Preset ``default``: size 1-10 and value 10-100 drawn from ``seed``; ``size`` overrides."""
    rng = make_rng(seed)
    drawn_size = int(rng.integers(1, 11))
    value = float(rng.integers(10, 101))
    return DebugInstance(size=size if size is not None else drawn_size, value=value)


PRESET_PARAMS = {
    "default": signature_params(
        default,
        "DebugDefaultParams",
        {"size": declare("instance size (default: 1-10, drawn)", minimum=1, maximum=1_000_000_000)},
    )
}


#: Preset name -> builder and parameter class (:class:`ddlsched.params.PresetTable`).
PRESET_TABLE = PresetTable("debug", {"default": default}, PRESET_PARAMS)


def generate(preset: str, seed: int = 0, **params: Any) -> DebugInstance:
    """Preset ``default`` (:func:`default`), its parameters checked."""
    return PRESET_TABLE.generate(preset, seed, **params)
