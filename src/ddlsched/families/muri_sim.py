"""Family ``muri_sim``: Muri and its baselines replayed on a trace, as benchmark tasks.

Paper: Muri (Zhao et al., SIGCOMM 2022), Sec. 6; spec ``docs/families/muri_sim.md``
("Scheduler and simulator").

Modules of the family:

* problem: :mod:`ddlsched.problems.muri_sim` (the instance :class:`TraceRun`,
  the simulator configuration ``SimConfig``, the schedule ``TraceSchedule``,
  the metrics ``SimMetrics`` and the evaluator
  :func:`~ddlsched.problems.muri_sim.evaluate`);
* workloads: :mod:`ddlsched.workloads.muri_sim` (preset ``trace``) and
  :mod:`ddlsched.workloads.muri_traces` (trace readers: Muri, Philly, ITP,
  Tiresias);
* simulator: :mod:`ddlsched.sim.muri` (one event loop, one module per policy,
  the matchings).

Methods: one per policy of :data:`ddlsched.sim.muri.POLICIES` (``srtf``,
``srsf``, ``tiresias``, ``themis``, ``antman``, ``muri-s``, ``muri-l``), and
``muri-l-no-blossom`` (the paper's Fig. 11 ablation: Muri-L with knob ``blossom =
false``, consecutive candidates grouped instead of matched), all of kind ``heuristic``: each simulates the whole trace within the time limit
(``time_limit_no_solution`` when it cannot finish). In the ``reference``
preset Muri's matching is the original's own Blossom (knob ``matching``),
seconds to minutes per Muri policy on the large traces; ``knobs =
{"matching": "types"}`` is the fast alternative.

Objective: average JCT in seconds (minimised), recomputed by the evaluator
from the per-job times of the simulated schedule; makespan, p99 JCT, queue
length and GPU utilisation are in the evaluation, so they land in every
benchmark row's ``metrics`` (``ddlsched bench table DIR --metrics
average_jct_s,makespan_s,p99_jct_s --relative-to muri-l``). Without an
optimum, the ratio table compares each policy with the best policy of its
trace (a lower end only: no bound is known).

Command ``ddlsched simulate muri --trace NAME --policy P [--json]`` runs one
policy through the same path (:func:`ddlsched.registry.run_method`), as do
the suite ``benchmarks/suites/muri-traces.toml`` and
``benchmarks/muri_traces.py``.
"""

from __future__ import annotations

import argparse
import math
from dataclasses import replace
from typing import Any

from ddlsched import cli_types
from ddlsched.errors import DdlschedError
from ddlsched.params import NoParams
from ddlsched.problems.muri_sim import (
    SimMetrics,
    TraceRun,
    evaluate,
    schedule_from_json,
    schedule_to_json,
)
from ddlsched.registry import (
    Family,
    RunContext,
    Simulation,
    register_family,
    register_method,
    simulate,
)
from ddlsched.solvers.result import Outcome
from ddlsched.workloads.muri_sim import PRESET_PARAMS, PRESETS, generate

__all__ = ["FAMILY", "simulate_trace"]


def _summary(metrics: SimMetrics) -> dict[str, Any]:
    return metrics.summary()


def _make_method(
    policy: str,
    name: str | None = None,
    summary: str | None = None,
    overrides: dict[str, Any] | None = None,
) -> None:
    """Register method ``name`` (default: the policy): ``policy`` simulated under the
    instance's configuration with the knobs ``overrides`` over it."""
    name = name or policy
    summary = summary or f"simulate the trace under {policy}"

    @register_method("muri_sim", name, "heuristic", summary)
    def _run(instance: TraceRun, params: NoParams, ctx: RunContext) -> Outcome:
        from ddlsched.sim.muri import simulate_schedule
        from ddlsched.workloads.muri_traces import load_trace

        with ctx.deadline.interrupting(f"reading trace {instance.trace}"):  # pure Python
            trace = load_trace(instance.trace, seed=instance.seed, limit=instance.limit)
        ctx.deadline.check(f"muri_sim.{name} after reading its trace")
        config = replace(instance.config, **overrides) if overrides else instance.config
        schedule = simulate_schedule(trace, policy, config, deadline=ctx.deadline)
        return Outcome(schedule, info={"trace": instance.trace, "mode": instance.mode})


def _check_trace(instance: TraceRun) -> None:
    """Read the trace a method would read (bench validate: a bad trace fails no task)."""
    from ddlsched.workloads.muri_traces import load_trace

    load_trace(instance.trace, seed=instance.seed, limit=instance.limit)


def _policies() -> tuple[str, ...]:
    from ddlsched.sim.muri import POLICIES

    return tuple(POLICIES)


for _policy in _policies():
    _make_method(_policy)

#: The paper's Fig. 11 ablation, "Muri-L without Blossom": Muri-L grouping each GPU count's
#: candidates in priority order (consecutive candidates) instead of by Blossom matching
#: (knob ``blossom = false``; every other knob is the instance's).
_make_method(
    "muri-l",
    "muri-l-no-blossom",
    "Muri-L grouping consecutive candidates, not by Blossom (Fig. 11)",
    {"blossom": False},
)


def simulate_trace(
    run: TraceRun, policy: str, time_limit_s: float = math.inf, *, raise_errors: bool = False
):
    """Simulate ``policy`` on ``run`` through the method pipeline; the evaluated result."""
    return simulate(
        "muri_sim",
        policy,
        run,
        seed=run.seed,
        time_limit_s=time_limit_s,
        raise_errors=raise_errors,
    )


def _simulation_run(args: argparse.Namespace, knobs: dict[str, Any]) -> TraceRun:
    """The trace run of ``ddlsched simulate muri``'s flags (``--set``: simulator knobs)."""
    if "mode" in knobs:
        raise DdlschedError("--set mode=...: use --mode reference|paper")
    return TraceRun.create(
        trace=args.trace, mode=args.mode, seed=args.seed, limit=args.limit, knobs=knobs
    )


def _simulation_options(p: argparse.ArgumentParser) -> None:
    """The flags of ``ddlsched simulate muri`` besides the common ones."""
    p.add_argument(
        "--mode",
        type=cli_types.choice(("reference", "paper"), "simulator mode"),
        default="reference",
        help="reference (default) or paper",
    )
    p.add_argument(
        "--limit", type=cli_types.count(), default=None, help="only the first N (>= 1) jobs"
    )


_SIMULATION = Simulation(
    command="muri",
    help="simulate Muri and its baselines on a trace",
    description="Replay a trace under one policy (family muri_sim) and print its metrics.",
    trace_help="trace1..4, trace1_pr.., philly, itp:NAME, tiresias, or a CSV path",
    policies=_policies,
    seed_help="seed of the profile assignment (philly/itp), >= 0",
    set_help="simulator knob, a SimConfig field (repeatable)",
    add_options=_simulation_options,
    build=_simulation_run,
    report=lambda run, result: result.evaluation.to_dict(),
    rows=lambda run, result: result.evaluation.summary(),
    title=lambda args, run: (
        f"muri simulation: trace {args.trace}, policy {args.policy}, {args.mode}"
    ),
)


FAMILY = register_family(
    Family(
        name="muri_sim",
        sense="min",
        objective_name="average JCT (s) of the simulated trace",
        load=TraceRun.load,
        from_dict=TraceRun.from_dict,
        generate=generate,
        presets=PRESETS,
        preset_params=PRESET_PARAMS,
        evaluate=evaluate,
        objective=lambda metrics: metrics.average_jct_s,
        evaluation_summary=_summary,
        schedule_to_json=schedule_to_json,
        schedule_from_json=schedule_from_json,
        smoke=("trace", {"trace": "tiresias", "limit": 30}),
        size=lambda run: None,  # the trace is read by each method: its length is not known here
        summary="Muri trace simulation: seven scheduling policies on a trace",
        simulation=_SIMULATION,
        check_instance=_check_trace,
    )
)
