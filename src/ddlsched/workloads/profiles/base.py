"""Layer-sequence profiles of DNN models: the common type of every loader.

A :class:`ModelProfile` is a *linear* sequence of layers (a DAG profile is
linearised in topological order), each with forward and backward time for
one mini-batch on one GPU (seconds), parameter bytes, and the activation
bytes crossing the cut after it (for one mini-batch; the gradients sent
back in the backward pass have the same size). ``input_bytes`` is what
enters the first layer. ``provenance`` records where every number comes
from (file, field, unit conversion, assumption): the issue asks that
every number's origin be recorded in the profile.

Cut activations of a DAG: the bytes crossing the cut between positions
``i`` and ``i + 1`` are, summed over the layers ``u <= i`` with an edge
into ``{i + 1, ...}``, the size of ``u``'s output (one copy per producer,
however many consumers it has beyond the cut).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ddlsched.errors import InvalidInstanceError

__all__ = ["Layer", "ModelProfile", "cut_bytes"]


@dataclass(frozen=True)
class Layer:
    """One layer: ``fwd_s``/``bwd_s`` per mini-batch (seconds), bytes of
    parameters, and ``out_bytes`` crossing the cut after this layer."""

    name: str
    fwd_s: float
    bwd_s: float
    param_bytes: float
    out_bytes: float

    def __post_init__(self) -> None:
        for attr in ("fwd_s", "bwd_s", "param_bytes", "out_bytes"):
            value = getattr(self, attr)
            if not value >= 0:
                raise InvalidInstanceError(f"layer {self.name!r}.{attr}: must be >= 0, got {value}")


@dataclass(frozen=True)
class ModelProfile:
    """A model as a sequence of layers for one mini-batch of ``batch_size`` samples
    (``None`` when the source does not say; ``provenance['batch_size']`` explains)."""

    name: str
    layers: tuple[Layer, ...]
    batch_size: int | None
    input_bytes: float
    provenance: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "layers", tuple(self.layers))
        if not self.layers:
            raise InvalidInstanceError(f"profile {self.name!r}: no layers")
        if self.batch_size is not None and self.batch_size < 1:
            raise InvalidInstanceError(f"profile {self.name!r}: batch_size must be >= 1")

    @property
    def num_layers(self) -> int:
        return len(self.layers)

    @property
    def compute_s(self) -> float:
        """Forward + backward time of the whole model for one mini-batch."""
        return sum(layer.fwd_s + layer.bwd_s for layer in self.layers)

    @property
    def param_bytes(self) -> float:
        return sum(layer.param_bytes for layer in self.layers)


def cut_bytes(
    order: Sequence[str], out_size: Mapping[str, float], edges: Sequence[tuple[str, str]]
) -> list[float]:
    """Bytes crossing the cut after each position of a topological ``order``."""
    position = {name: i for i, name in enumerate(order)}
    last_use = {name: position[name] for name in order}
    for src, dst in edges:
        if src in position and dst in position:
            last_use[src] = max(last_use[src], position[dst])
    out = []
    for i in range(len(order)):
        out.append(sum(out_size[u] for u in order[: i + 1] if last_use[u] > i))
    return out
