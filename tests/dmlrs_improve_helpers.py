"""Helpers shared by the tests of dmlrs ``improve`` (its greedy LNS and its MIP windows)."""

from __future__ import annotations

from functools import cache

from ddlsched.registry import RunOptions, run_method
from ddlsched.workloads.dmlrs import generate


def run_improve(instance, seed: int = 0, time_limit_s: float = 60, **params):
    """``improve`` on ``instance`` with ``params``, errors raised."""
    options = RunOptions(seed=seed, params=params, time_limit_s=time_limit_s)
    return run_method("dmlrs", "improve", instance, options, raise_errors=True)


@cache
def small(seed: int):
    """A congested paper-shaped instance: 12 jobs on 3 machines, 10 slots."""
    return generate("paper", seed, jobs=12, machines=3, slots=10)
