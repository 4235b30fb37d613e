"""The suite's two tiers: the CI tier (the README's test command) and ``--full``.

The README's command runs every test, but a sweep over many proven optima or
brute-forced instances runs on a fixed sample of them, and a test marked
``slow`` (a long replay: the heaviest walk-throughs, notebooks, plug-in
scaffolds, reference traces) is deselected; ``python -m pytest ... --full``
runs every instance of every sweep and every slow test. The sample is fixed
(every ``every``-th item from the first), so a CI run means the same thing on
every run, and a failure in it reproduces.

- ``sample(items, every)``: a list for a loop inside a test.
- ``sweep(items, every)``: parameters for ``pytest.mark.parametrize``; the items left
  out of the sample carry the ``slow`` mark, so pytest counts them as deselected.
- ``full()``: whether this run is the full tier.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

import pytest

ENV = "DDLSCHED_FULL_TESTS"


def full() -> bool:
    """Whether the full tier runs (``--full``, or ``DDLSCHED_FULL_TESTS=1``)."""
    return os.environ.get(ENV) == "1"


def sample(items: Iterable[Any], every: int) -> list[Any]:
    """Every item in the full tier; every ``every``-th from the first in the CI tier."""
    seq = list(items)
    return seq if full() else seq[::every]


def sweep(items: Iterable[Any], every: int) -> list[Any]:
    """``items`` as parameters; those outside :func:`sample`'s CI sample are marked slow."""
    out = []
    for k, item in enumerate(items):
        values = item if isinstance(item, tuple) else (item,)
        marks = () if k % every == 0 else (pytest.mark.slow,)
        out.append(pytest.param(*values, marks=marks))
    return out
