"""Register family ``muri_sim``: Muri's trace-driven simulation as benchmark tasks.

The trace study of issue 5 (all seven policies on the four Muri traces) as
a family the benchmark platform can run, resume and tabulate like any
other (suite ``benchmarks/suites/muri-traces.toml``).

Instance
    A *trace run*: a trace name (``trace1`` .. ``trace4``, ``trace1_pr`` ..,
    ``philly``, ``itp:NAME``, ``tiresias`` or a CSV path, as for
    ``ddlsched simulate muri --trace``), the simulator mode (``reference``:
    the authors' simulator; ``paper``: the paper's prose), the seed of the
    profile assignment (Philly/ITP traces), an optional job limit (the first
    N jobs) and simulator knob overrides. The trace itself is read from the
    data directory when a method runs (``$DDLSCHED_DATA``, else
    ``../shared/data``), never copied. File format::

        {"family": "muri_sim", "schema_version": 1, "trace": "trace2",
         "mode": "reference", "seed": 0, "limit": null, "knobs": {}}

    Generator preset ``trace`` takes the same fields as parameters
    (``ddlsched instance generate muri_sim --preset trace --set trace=trace2``).

Methods
    One per policy of :data:`ddlsched.sim.muri.POLICIES` (``srtf``, ``srsf``,
    ``tiresias``, ``themis``, ``antman``, ``muri-s``, ``muri-l``), all of kind
    ``heuristic``: each simulates the whole trace. In the ``reference``
    preset Muri's matching is the original's own Blossom (knob ``matching``,
    see :mod:`ddlsched.sim.muri`), minutes per Muri policy on the large
    traces; ``knobs = {"matching": "types"}`` is the fast alternative.

Objective
    Average JCT in seconds (minimised), as computed by the simulator (the
    family's evaluator: :func:`ddlsched.sim.muri.simulate`); the makespan,
    p99 JCT, time-averaged queue length and GPU utilisation are in the
    result's evaluation, so they land in every benchmark row's ``metrics``
    (``ddlsched bench table DIR --metrics average_jct_s,makespan_s,p99_jct_s
    --relative-to muri-l`` prints them with each policy's ratio to Muri-L,
    the paper's "improvement" factors). Without an optimum, the ratio table
    of ``bench table`` compares each policy with the best policy of its trace
    (a lower end only: no bound is known).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from ddlsched.errors import DdlschedError, InvalidInstanceError, UnknownMethodError
from ddlsched.jsonio import check_fields, check_header
from ddlsched.registry import Family, RunOptions, register_family, register_method
from ddlsched.solvers.result import SolveResult, Status

__all__ = ["FAMILY", "TraceRun", "generate"]

SCHEMA_VERSION = 1
_MODES = ("reference", "paper")


@dataclass(frozen=True)
class TraceRun:
    """One trace under one simulator configuration (see the module docstring)."""

    trace: str
    mode: str = "reference"
    seed: int = 0
    limit: int | None = None
    knobs_json: str = "{}"  # canonical JSON of the knob overrides (hashable)

    family: ClassVar[str] = "muri_sim"
    _config: Any = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.trace, str) or not self.trace:
            raise InvalidInstanceError(
                f"muri_sim: trace must be a non-empty string, got {self.trace!r}"
            )
        if self.mode not in _MODES:
            raise InvalidInstanceError(
                f"muri_sim: unknown simulator mode {self.mode!r} (choose reference or paper)"
            )
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise InvalidInstanceError(
                f"muri_sim: seed must be a non-negative integer, got {self.seed!r}"
            )
        if self.limit is not None and (
            isinstance(self.limit, bool) or not isinstance(self.limit, int) or self.limit < 1
        ):
            raise InvalidInstanceError(
                f"muri_sim: limit must be a positive integer or null, got {self.limit!r}"
            )
        knobs = json.loads(self.knobs_json)
        if not isinstance(knobs, dict):
            raise InvalidInstanceError(f"muri_sim: knobs must be an object, got {knobs!r}")
        if "mode" in knobs:
            raise InvalidInstanceError("muri_sim: give the mode as 'mode', not as a knob")
        from ddlsched.sim.muri import SimConfig

        try:  # validate the knobs now: a bad one is an instance error, not a task error
            config = SimConfig.preset(self.mode, **knobs)
        except (DdlschedError, TypeError, ValueError) as exc:
            raise InvalidInstanceError(f"muri_sim: {exc}") from None
        object.__setattr__(self, "_config", config)

    @property
    def knobs(self) -> dict[str, Any]:
        return json.loads(self.knobs_json)

    @property
    def config(self):
        """The :class:`~ddlsched.sim.muri.SimConfig` of this run."""
        return self._config

    @classmethod
    def create(
        cls,
        trace: str,
        mode: str = "reference",
        seed: int = 0,
        limit: int | None = None,
        knobs: dict[str, Any] | None = None,
    ) -> TraceRun:
        if knobs is not None and not isinstance(knobs, dict):
            raise InvalidInstanceError(f"muri_sim: knobs must be an object, got {knobs!r}")
        return cls(trace, mode, seed, limit, json.dumps(knobs or {}, sort_keys=True))

    def to_dict(self) -> dict[str, Any]:
        return {
            "family": "muri_sim",
            "schema_version": SCHEMA_VERSION,
            "trace": self.trace,
            "mode": self.mode,
            "seed": self.seed,
            "limit": self.limit,
            "knobs": self.knobs,
        }

    @classmethod
    def from_dict(cls, data: Any) -> TraceRun:
        check_fields(
            data,
            "muri_sim",
            ("family", "schema_version", "trace"),
            ("mode", "seed", "limit", "knobs"),
        )
        check_header(data, "muri_sim", SCHEMA_VERSION)
        return cls.create(
            trace=data["trace"],
            mode=data.get("mode", "reference"),
            seed=data.get("seed", 0),
            limit=data.get("limit"),
            knobs=data.get("knobs") or {},
        )

    @classmethod
    def load(cls, path: str | Path) -> TraceRun:
        try:
            data = json.loads(Path(path).read_text())
        except OSError as exc:
            raise InvalidInstanceError(f"cannot read {path}: {exc.strerror}") from None
        except json.JSONDecodeError as exc:
            raise InvalidInstanceError(f"{path}: not JSON ({exc.msg}, line {exc.lineno})") from None
        return cls.from_dict(data)

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=2) + "\n")


PRESETS = ("trace",)


def generate(preset: str, seed: int = 0, **params: Any) -> TraceRun:
    """Preset ``trace``: parameters ``trace`` (required), ``mode``, ``limit``, ``knobs``;
    ``seed`` seeds the profile assignment of Philly/ITP traces."""
    if preset not in PRESETS:
        raise UnknownMethodError(
            f"unknown muri_sim preset {preset!r} (choose from {', '.join(PRESETS)})"
        )
    unknown = sorted(set(params) - {"trace", "mode", "limit", "knobs"})
    if unknown:
        raise InvalidInstanceError(
            f"muri_sim: unknown preset parameter(s) {', '.join(unknown)} "
            "(known: trace, mode, limit, knobs)"
        )
    if "trace" not in params:
        raise InvalidInstanceError("muri_sim: preset 'trace' needs the parameter trace=NAME")
    return TraceRun.create(
        trace=params["trace"],
        mode=params.get("mode", "reference"),
        seed=seed,
        limit=params.get("limit"),
        knobs=params.get("knobs"),
    )


def _schedule_json(result: SolveResult) -> Any:
    return None if result.evaluation is None else result.evaluation.to_dict()


def _make_method(policy: str) -> None:
    @register_method("muri_sim", policy, "heuristic", f"simulate the trace under {policy}")
    def _run(instance: TraceRun, options: RunOptions) -> SolveResult:
        from ddlsched.sim.muri import simulate
        from ddlsched.workloads.muri_traces import load_trace

        started = time.perf_counter()
        trace = load_trace(instance.trace, seed=instance.seed, limit=instance.limit)
        metrics = simulate(trace, policy, instance.config)
        return SolveResult(
            family="muri_sim",
            method=policy,
            status=Status.FEASIBLE,
            sense="min",
            objective=metrics.average_jct_s,
            runtime_s=time.perf_counter() - started,
            seed=options.seed,
            schedule=None,
            evaluation=metrics,
            info={"trace": instance.trace, "mode": instance.mode, **metrics.summary()},
        )


def _register_methods() -> None:
    from ddlsched.sim.muri import POLICIES

    for policy in POLICIES:
        _make_method(policy)


_register_methods()

FAMILY = register_family(
    Family(
        name="muri_sim",
        sense="min",
        objective_name="average JCT (s) of the simulated trace",
        load=TraceRun.load,
        from_dict=TraceRun.from_dict,
        generate=generate,
        presets=PRESETS,
        schedule_json=_schedule_json,
        summary="Muri trace simulation: seven scheduling policies on a trace (issue 5)",
    )
)
