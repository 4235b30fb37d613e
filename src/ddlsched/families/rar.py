"""Register family ``rar`` (RAR-DDLS / SJF-BCO) and its methods.

Heuristics (``sjf_bco``, ``ff``, ``ls``, ``rand``) live in
:mod:`ddlsched.heuristics.sjf_bco` and :mod:`ddlsched.heuristics.rar_baselines`;
formulations (``exact``, ``timeindexed``, ``load_lb``) in
:mod:`ddlsched.models.rar`. This module adapts each to the registry's
``run(instance, options) -> SolveResult`` contract.
"""

from __future__ import annotations

from typing import Any

from ddlsched.problems.rar import RarInstance, schedule_to_json
from ddlsched.registry import Family, register_family
from ddlsched.solvers.result import SolveResult
from ddlsched.workloads.rar import PRESETS, generate


def _schedule_json(result: SolveResult) -> Any:
    if result.schedule is None:
        return None
    return schedule_to_json(result.schedule, result.evaluation)


FAMILY = register_family(
    Family(
        name="rar",
        sense="min",
        objective_name="makespan (slots)",
        load=RarInstance.load,
        from_dict=RarInstance.from_dict,
        generate=generate,
        presets=tuple(PRESETS),
        schedule_json=_schedule_json,
        summary="RAR-DDLS: offline makespan of ring-all-reduce jobs under contention",
    )
)

# Importing these registers the methods.
from ddlsched.heuristics import rar_methods as _heuristics  # noqa: E402,F401
from ddlsched.models import rar_methods as _models  # noqa: E402,F401
