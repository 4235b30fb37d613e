"""Instances of family ``debug`` (preset ``default``)."""

from __future__ import annotations

from typing import Any

from ddlsched.errors import InvalidInstanceError, UnknownMethodError
from ddlsched.problems.debug import DebugInstance
from ddlsched.rng import make_rng

__all__ = ["PRESETS", "generate"]

PRESETS = ("default",)


def generate(preset: str, seed: int, size: int | None = None, **params: Any) -> DebugInstance:
    """Preset ``default``: size 1-10 and value 10-100 drawn from ``seed``; ``size`` overrides."""
    if preset not in PRESETS:
        raise UnknownMethodError(f"unknown debug preset {preset!r} (choose from default)")
    if params:
        raise InvalidInstanceError(
            f"debug: unknown preset parameter(s) {', '.join(sorted(params))}"
        )
    rng = make_rng(seed)
    drawn_size = int(rng.integers(1, 11))
    value = float(rng.integers(10, 101))
    return DebugInstance(size=int(size) if size is not None else drawn_size, value=value)
