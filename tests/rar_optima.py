"""Proven optima of rar's ``small`` and ``contention`` instances, shared by the tests of
the family's lower bounds: solved by the exact search once per test run
(:mod:`shared_optima`), never stored across runs."""

from __future__ import annotations

from functools import cache

from shared_optima import shared

from ddlsched.models.rar_search import search_exact
from ddlsched.workloads.rar import generate


def _proven(preset: str, seed: int) -> int:
    opt = search_exact(generate(preset, seed))
    assert opt.proven and opt.makespan is not None, (preset, seed)
    return opt.makespan


@cache
def proven_makespan(preset: str, seed: int) -> int:
    """The optimal makespan of ``generate(preset, seed)`` (the search's proof asserted)."""
    return int(shared(f"rar-{preset}-{seed}", lambda: _proven(preset, seed)))
