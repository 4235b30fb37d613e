"""The one place that turns a seed into a random number generator."""

from __future__ import annotations

import numpy as np

__all__ = ["make_rng"]


def make_rng(seed: int | np.random.Generator | None) -> np.random.Generator:
    """Return a ``numpy.random.Generator`` for ``seed``.

    An integer gives a fresh PCG64 generator (same seed, same stream, bit for
    bit); a generator is returned as is; ``None`` means seed 0, so that no
    call in ddlsched is silently irreproducible.

    >>> make_rng(3).integers(0, 100) == make_rng(3).integers(0, 100)
    True
    """
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None:
        seed = 0
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    return np.random.default_rng(int(seed))
