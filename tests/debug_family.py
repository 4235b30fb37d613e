"""Throw-away families for the pipeline and conformance tests, built from the debug problem."""

from __future__ import annotations

from ddlsched.problems.debug import (
    DebugInstance,
    evaluate,
    schedule_from_json,
    schedule_to_json,
)
from ddlsched.registry import Family, register_family
from ddlsched.workloads.debug import generate


def register_debug_like(
    name: str, evaluator=evaluate, size=lambda instance: instance.size
) -> Family:
    """Register an internal family ``name`` with the debug problem (``evaluator``, ``size``)."""
    return register_family(
        Family(
            name=name,
            sense="min",
            objective_name="value",
            load=DebugInstance.load,
            from_dict=DebugInstance.from_dict,
            generate=generate,
            presets=("default",),
            evaluate=evaluator,
            objective=lambda evaluation: evaluation.value,
            schedule_to_json=schedule_to_json,
            schedule_from_json=schedule_from_json,
            smoke=("default", {}),
            size=size,
            internal=True,
        )
    )
