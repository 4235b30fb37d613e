"""The suite's two tiers: the CI tier (the README's test command) and ``--full``.

In the README's command (what ``.ci/run`` runs) a sweep over many instances
runs on a fixed sample of them, and a test marked ``slow`` is deselected: the
walk-throughs' console blocks, the family notebooks, five of the seven plug-in
scaffolds, Muri trace 1's exact replay, the window search over every job (the
sampled sweeps include trace 4 of Muri's published baselines). ``python -m
pytest ... --full`` runs every instance of every sweep and every slow test. The
sample is fixed (every ``every``-th item from the first), so a CI run means the
same thing on every run, and a failure in it reproduces; a test named on the
command line runs in either tier. Docstrings give the full tier's counts; a count
the CI tier asks for is written beside it (``n if full() else m``).

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
from _pytest.mark.structures import ParameterSet

ENV = "DDLSCHED_FULL_TESTS"


def full() -> bool:
    """Whether the full tier runs (``--full``, or ``DDLSCHED_FULL_TESTS=1``)."""
    return os.environ.get(ENV) == "1"


def sample(items: Iterable[Any], every: int) -> list[Any]:
    """Every item in the full tier; every ``every``-th from the first in the CI tier."""
    seq = list(items)
    return seq if full() else seq[::every]


def sweep(items: Iterable[Any], every: int) -> list[Any]:
    """``items`` as parameters; those outside :func:`sample`'s CI sample are marked slow.

    An item is one value, or a ``pytest.param`` (its id and marks are kept); a plain
    tuple is the values of a multi-name parametrisation (``("preset", "seed")``)."""
    out = []
    for k, item in enumerate(items):
        extra = () if k % every == 0 else (pytest.mark.slow,)
        if isinstance(item, ParameterSet):
            out.append(pytest.param(*item.values, id=item.id, marks=(*item.marks, *extra)))
        else:
            values = item if isinstance(item, tuple) else (item,)
            out.append(pytest.param(*values, marks=extra))
    return out
