"""Register family ``debug``: synthetic tasks for testing and timing the benchmark platform.

Not a scheduling problem. Its instances hold a size and a target value;
its methods do nothing, sleep, burn CPU, hang, crash their process or raise,
so that the platform's executors, time limits, crash isolation and
overhead can be tested and measured with tasks whose behaviour is known.
Registered like every family (``registry._PLUGIN_MODULES``) so that worker
processes of any start method, and Dask workers, can import it.

Methods (all minimise ``value``):

* ``noop``: returns ``value`` at once (platform overhead benchmark).
* ``sleep``: sleeps ``seconds``, returns ``value``.
* ``burn``: a deterministic CPU loop of ``iterations`` steps, returns
  ``value`` (speed-up benchmark).
* ``hang``: never returns (time-limit tests).
* ``crash``: kills its own process with ``SIGKILL`` (crash isolation tests).
* ``fail``: raises a ``DdlschedError`` (an ``error`` result).
* ``raise``: raises a ``RuntimeError`` (an unexpected exception).
* ``memory``: allocates ``megabytes`` of memory, returns ``value``.
* ``exact``: status ``optimal``, objective ``value``, bound ``value``.
* ``bound``: status ``bound_only``, bound ``value * (1 - slack)``.
* ``heur``: status ``feasible``, objective ``value * (1 + seed % 3 / 10)``.
"""

from __future__ import annotations

import json
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from ddlsched.errors import DdlschedError, InvalidInstanceError, UnknownMethodError
from ddlsched.registry import Family, RunOptions, register_family, register_method
from ddlsched.rng import make_rng
from ddlsched.solvers.result import SolveResult, Status

__all__ = ["DebugInstance", "generate"]


@dataclass(frozen=True)
class DebugInstance:
    """A synthetic instance: ``size`` (reported as the instance size) and ``value``."""

    size: int
    value: float

    family: ClassVar[str] = "debug"

    def __post_init__(self) -> None:
        if isinstance(self.size, bool) or not isinstance(self.size, int) or self.size < 1:
            raise InvalidInstanceError(f"debug: size must be a positive integer, got {self.size!r}")
        if not isinstance(self.value, (int, float)) or self.value <= 0:
            raise InvalidInstanceError(f"debug: value must be positive, got {self.value!r}")

    def to_dict(self) -> dict[str, Any]:
        return {"family": "debug", "schema_version": 1, "size": self.size, "value": self.value}

    @classmethod
    def from_dict(cls, data: Any) -> DebugInstance:
        if not isinstance(data, dict) or data.get("family") != "debug":
            raise InvalidInstanceError("debug: expected an object with family 'debug'")
        unknown = sorted(set(data) - {"family", "schema_version", "size", "value"})
        if unknown:
            raise InvalidInstanceError(f"debug: unknown field(s) {', '.join(unknown)}")
        return cls(size=data.get("size", 1), value=float(data.get("value", 1.0)))

    @classmethod
    def load(cls, path: str | Path) -> DebugInstance:
        try:
            return cls.from_dict(json.loads(Path(path).read_text()))
        except (OSError, json.JSONDecodeError) as exc:
            raise InvalidInstanceError(f"debug: cannot read {path}: {exc}") from None

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict()))


def generate(preset: str, seed: int, size: int | None = None, **params: Any) -> DebugInstance:
    """Preset ``default``: size 1-10 and value 10-100 drawn from ``seed``; ``size`` overrides."""
    if preset != "default":
        raise UnknownMethodError(f"unknown debug preset {preset!r} (choose from default)")
    if params:
        raise InvalidInstanceError(
            f"debug: unknown preset parameter(s) {', '.join(sorted(params))}"
        )
    rng = make_rng(seed)
    drawn_size = int(rng.integers(1, 11))
    value = float(rng.integers(10, 101))
    return DebugInstance(size=int(size) if size is not None else drawn_size, value=value)


register_family(
    Family(
        name="debug",
        sense="min",
        objective_name="value",
        load=DebugInstance.load,
        from_dict=DebugInstance.from_dict,
        generate=generate,
        presets=("default",),
        schedule_json=lambda result: None,
        summary="internal: synthetic tasks for testing and timing the benchmark platform",
        internal=True,
    )
)


def _result(
    method: str, instance: DebugInstance, options: RunOptions, status=Status.FEASIBLE, **kw
) -> SolveResult:
    kw.setdefault("objective", float(instance.value))
    return SolveResult(
        family="debug", method=method, status=status, sense="min", seed=options.seed, **kw
    )


@register_method("debug", "noop", "heuristic", "returns the instance value at once")
def _noop(instance: DebugInstance, options: RunOptions) -> SolveResult:
    return _result("noop", instance, options)


@register_method("debug", "sleep", "heuristic", "sleeps, then returns", {"seconds": 0.1})
def _sleep(instance: DebugInstance, options: RunOptions) -> SolveResult:
    time.sleep(float(options.params.get("seconds", 0.1)))
    return _result("sleep", instance, options)


@register_method("debug", "burn", "heuristic", "a CPU-bound loop", {"iterations": 1_000_000})
def _burn(instance: DebugInstance, options: RunOptions) -> SolveResult:
    acc = 0
    for i in range(int(options.params.get("iterations", 1_000_000))):
        acc = (acc * 31 + i) % 1_000_003
    return _result("burn", instance, options, info={"checksum": acc})


@register_method("debug", "hang", "heuristic", "never returns")
def _hang(instance: DebugInstance, options: RunOptions) -> SolveResult:
    while True:
        time.sleep(3600)


@register_method("debug", "crash", "heuristic", "kills its own process (SIGKILL)")
def _crash(instance: DebugInstance, options: RunOptions) -> SolveResult:
    os.kill(os.getpid(), signal.SIGKILL)
    raise AssertionError("unreachable")  # pragma: no cover


@register_method("debug", "fail", "heuristic", "raises a DdlschedError")
def _fail(instance: DebugInstance, options: RunOptions) -> SolveResult:
    raise DdlschedError("debug.fail: failing on purpose")


@register_method("debug", "raise", "heuristic", "raises an unexpected RuntimeError")
def _raise(instance: DebugInstance, options: RunOptions) -> SolveResult:
    raise RuntimeError("debug.raise: unexpected failure on purpose")


@register_method("debug", "memory", "heuristic", "allocates memory", {"megabytes": 100})
def _memory(instance: DebugInstance, options: RunOptions) -> SolveResult:
    block = bytearray(int(options.params.get("megabytes", 100)) * 1024 * 1024)
    return _result("memory", instance, options, info={"allocated": len(block)})


@register_method("debug", "exact", "exact", "proves the instance value optimal")
def _exact(instance: DebugInstance, options: RunOptions) -> SolveResult:
    return _result("exact", instance, options, status=Status.OPTIMAL, bound=instance.value)


@register_method("debug", "bound", "bound", "a lower bound below the value", {"slack": 0.1})
def _bound(instance: DebugInstance, options: RunOptions) -> SolveResult:
    slack = float(options.params.get("slack", 0.1))
    return _result(
        "bound",
        instance,
        options,
        status=Status.BOUND_ONLY,
        objective=None,
        bound=instance.value * (1 - slack),
    )


@register_method("debug", "heur", "heuristic", "value x (1 + (seed mod 3) / 10)")
def _heur(instance: DebugInstance, options: RunOptions) -> SolveResult:
    return _result(
        "heur", instance, options, objective=instance.value * (1 + (options.seed % 3) / 10)
    )
