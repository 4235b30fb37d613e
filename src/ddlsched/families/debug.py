"""Family ``debug``: synthetic tasks for testing and timing the benchmark platform.

Not a scheduling problem, and the smallest complete family (the worked
example of ``CONTRIBUTING.md``).

Modules of the family:

* problem: :mod:`ddlsched.problems.debug` (instance ``size`` and ``value``,
  schedule ``scale``, evaluator: objective ``value * scale``, minimised);
* workloads: :mod:`ddlsched.workloads.debug` (preset ``default``).

Its methods do nothing, sleep, burn CPU, hang, crash their process or
raise, so that the platform's executors, time limits, crash isolation and
overhead can be tested and measured with tasks whose behaviour is known.
Internal: hidden from ``ddlsched methods``. The methods marked hazardous
fail on purpose; the conformance checks skip them.

* ``noop``: the best schedule at once (platform overhead benchmark).
* ``sleep``: sleeps ``seconds``, then the best schedule.
* ``burn``: a deterministic CPU loop of ``iterations`` steps (speed-up benchmark).
* ``hang``: never returns, with ``SIGALRM`` blocked so that the deadline's
  interrupt cannot end it either (a stuck C call; kill tests). Hazardous.
* ``crash``: kills its own process with ``SIGKILL`` (crash isolation). Hazardous.
* ``fail``: raises a ``DdlschedError`` (an ``error`` result). Hazardous.
* ``raise``: raises a ``RuntimeError`` (an unexpected exception). Hazardous.
* ``memory``: allocates ``megabytes`` of memory.
* ``exact``: the best schedule, proven optimal (its claim checked).
* ``bound``: status ``bound_only``, bound ``value * (1 - slack)``.
* ``heur``: the schedule ``scale = 1 + (seed mod 3) / 10``.
* ``none``: ends without a schedule (raises ``NoScheduleFound``: status
  ``no_solution``, a result, not an error).
"""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass

from ddlsched.errors import DdlschedError, NoScheduleFound
from ddlsched.params import NoParams, param
from ddlsched.problems.debug import (
    DebugInstance,
    DebugSchedule,
    evaluate,
    schedule_from_json,
    schedule_to_json,
)
from ddlsched.registry import Family, RunContext, register_family, register_method
from ddlsched.solvers.result import Claim, Outcome, Status
from ddlsched.workloads.debug import PRESET_PARAMS, PRESETS, generate

__all__ = ["FAMILY", "DebugInstance", "generate"]

FAMILY = register_family(
    Family(
        name="debug",
        sense="min",
        objective_name="value",
        load=DebugInstance.load,
        from_dict=DebugInstance.from_dict,
        generate=generate,
        presets=PRESETS,
        preset_params=PRESET_PARAMS,
        evaluate=evaluate,
        objective=lambda evaluation: evaluation.value,
        schedule_to_json=schedule_to_json,
        schedule_from_json=schedule_from_json,
        smoke=("default", {}),
        size=lambda instance: instance.size,
        summary="internal: synthetic tasks for testing and timing the benchmark platform",
        internal=True,
    )
)

_BEST = DebugSchedule(1.0)


@register_method("debug", "noop", "heuristic", "returns the best schedule at once")
def _noop(instance: DebugInstance, params: NoParams, ctx: RunContext) -> Outcome:
    return Outcome(_BEST)


@dataclass(frozen=True)
class SleepParams:
    """Parameters of ``sleep``."""

    seconds: float = param(0.1, "how long to sleep", minimum=0.0)


@register_method("debug", "sleep", "heuristic", "sleeps, then returns", params=SleepParams)
def _sleep(instance: DebugInstance, params: SleepParams, ctx: RunContext) -> Outcome:
    time.sleep(params.seconds)
    return Outcome(_BEST)


@dataclass(frozen=True)
class BurnParams:
    """Parameters of ``burn``."""

    iterations: int = param(1_000_000, "steps of the CPU loop", minimum=0)


@register_method("debug", "burn", "heuristic", "a CPU-bound loop", params=BurnParams)
def _burn(instance: DebugInstance, params: BurnParams, ctx: RunContext) -> Outcome:
    acc = 0
    for i in range(params.iterations):
        acc = (acc * 31 + i) % 1_000_003
    return Outcome(_BEST, info={"checksum": acc})


@register_method("debug", "hang", "heuristic", "never returns", hazardous=True)
def _hang(instance: DebugInstance, params: NoParams, ctx: RunContext) -> Outcome:
    # SIGALRM blocked: like a C call stuck past its limit, the deadline's interrupt
    # cannot reach it; only the platform's kill_after_s ends it
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
    while True:
        time.sleep(3600)


@register_method("debug", "crash", "heuristic", "kills its own process (SIGKILL)", hazardous=True)
def _crash(instance: DebugInstance, params: NoParams, ctx: RunContext) -> Outcome:
    os.kill(os.getpid(), signal.SIGKILL)
    raise AssertionError("unreachable")  # pragma: no cover


@register_method("debug", "fail", "heuristic", "raises a DdlschedError", hazardous=True)
def _fail(instance: DebugInstance, params: NoParams, ctx: RunContext) -> Outcome:
    raise DdlschedError("debug.fail: failing on purpose")


@register_method("debug", "raise", "heuristic", "raises an unexpected RuntimeError", hazardous=True)
def _raise(instance: DebugInstance, params: NoParams, ctx: RunContext) -> Outcome:
    raise RuntimeError("debug.raise: unexpected failure on purpose")


@dataclass(frozen=True)
class MemoryParams:
    """Parameters of ``memory``."""

    megabytes: int = param(100, "memory to allocate", minimum=0)


@register_method("debug", "memory", "heuristic", "allocates memory", params=MemoryParams)
def _memory(instance: DebugInstance, params: MemoryParams, ctx: RunContext) -> Outcome:
    block = bytearray(params.megabytes * 1024 * 1024)
    return Outcome(_BEST, info={"allocated": len(block)})


@register_method("debug", "exact", "exact", "proves the instance value optimal")
def _exact(instance: DebugInstance, params: NoParams, ctx: RunContext) -> Outcome:
    return Outcome(
        _BEST,
        Status.OPTIMAL,
        bound=instance.value,
        claim=Claim(instance.value, proven=True),
    )


@dataclass(frozen=True)
class BoundParams:
    """Parameters of ``bound``."""

    slack: float = param(
        0.1, "relative distance of the bound below the value", minimum=0.0, maximum=1.0
    )


@register_method("debug", "bound", "bound", "a lower bound below the value", params=BoundParams)
def _bound(instance: DebugInstance, params: BoundParams, ctx: RunContext) -> Outcome:
    return Outcome(None, Status.BOUND_ONLY, bound=instance.value * (1 - params.slack))


@register_method("debug", "heur", "heuristic", "value x (1 + (seed mod 3) / 10)")
def _heur(instance: DebugInstance, params: NoParams, ctx: RunContext) -> Outcome:
    return Outcome(DebugSchedule(1 + (ctx.seed % 3) / 10))


@register_method("debug", "none", "heuristic", "finds no schedule (status no_solution)")
def _none(instance: DebugInstance, params: NoParams, ctx: RunContext) -> Outcome:
    raise NoScheduleFound("debug.none: no schedule on purpose", seed=ctx.seed)
