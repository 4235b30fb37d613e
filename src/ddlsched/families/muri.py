"""Register family ``muri`` (multi-resource interleaving) and its methods.

Grouping methods (``ddlsched solve muri FILE --method M``):

* ``blossom``: maximum-weight matching into pairs per GPU bucket
  (:func:`ddlsched.heuristics.muri.blossom_grouping`; exact for ``k = 2``);
* ``multiround``: Algorithm 1 (:func:`ddlsched.heuristics.muri.multiround_grouping`);
* ``exact``: the set-packing ILP (:func:`ddlsched.models.muri.exact_grouping`),
  parameters ``objective`` (``efficiency`` | ``period``) and ``prune``.

The family objective is the sum of ``gamma`` over groups of >= 2 jobs,
maximised (``sense = "max"``), recomputed by
:func:`ddlsched.problems.muri.evaluate` for every method.

The command ``ddlsched simulate muri --trace NAME --policy P [--json]``
(added through :attr:`Family.cli_hook`) runs the trace simulator of
:mod:`ddlsched.sim.muri` and prints its metrics.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

from ddlsched.errors import DdlschedError
from ddlsched.heuristics.muri import blossom_grouping, multiround_grouping
from ddlsched.problems.muri import MuriGroupingInstance, evaluate, grouping_to_json
from ddlsched.registry import Family, RunOptions, register_family, register_method
from ddlsched.solvers.result import SolveResult, Status
from ddlsched.workloads.muri import PRESETS, generate

__all__ = ["FAMILY"]


def _schedule_json(result: SolveResult) -> Any:
    if result.schedule is None:
        return None
    return grouping_to_json(result.schedule, result.evaluation)


def _heuristic_result(name: str, instance: MuriGroupingInstance, grouping, options, started):
    evaluation = evaluate(instance, grouping)
    return SolveResult(
        family="muri",
        method=name,
        status=Status.FEASIBLE,
        sense="max",
        objective=evaluation.total_efficiency,
        runtime_s=time.perf_counter() - started,
        seed=options.seed,
        schedule=grouping,
        evaluation=evaluation,
        info={
            "total_period": evaluation.total_period,
            "groups": sum(1 for g in grouping.groups if len(g) >= 2),
            "grouped_jobs": evaluation.grouped_jobs,
        },
    )


@register_method("muri", "blossom", "heuristic", "max-weight matching into pairs (Sec. 4.1)")
def _run_blossom(instance: MuriGroupingInstance, options: RunOptions) -> SolveResult:
    started = time.perf_counter()
    return _heuristic_result("blossom", instance, blossom_grouping(instance), options, started)


@register_method(
    "muri",
    "multiround",
    "heuristic",
    "multi-round Blossom grouping (Algorithm 1)",
    params={"rounds": None},
)
def _run_multiround(instance: MuriGroupingInstance, options: RunOptions) -> SolveResult:
    started = time.perf_counter()
    rounds = options.params.get("rounds")
    if rounds is not None and (
        isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 0
    ):
        raise DdlschedError(f"rounds must be a non-negative integer, got {rounds!r}")
    grouping = multiround_grouping(instance, rounds)
    return _heuristic_result("multiround", instance, grouping, options, started)


@register_method(
    "muri",
    "exact",
    "exact",
    "set-packing ILP over all groups of <= k jobs (HiGHS / SCIP)",
    params={"objective": "efficiency", "prune": True},
)
def _run_exact(instance: MuriGroupingInstance, options: RunOptions) -> SolveResult:
    from ddlsched.models.muri import exact_grouping

    objective = options.params.get("objective", "efficiency")
    prune = options.params.get("prune", True)
    if not isinstance(prune, bool):
        raise DdlschedError(f"prune must be true or false, got {prune!r}")
    return exact_grouping(
        instance,
        objective=objective,
        backend=options.backend,
        time_limit_s=options.time_limit_s,
        seed=options.seed,
        prune=prune,
    )


# --------------------------------------------------------------------------- simulate command


def _cmd_simulate(args: argparse.Namespace) -> int:
    from ddlsched.sim.muri import POLICIES, SimConfig, simulate
    from ddlsched.workloads.muri_traces import load_trace

    if args.policy not in POLICIES:
        raise DdlschedError(f"unknown policy {args.policy!r} (choose from {', '.join(POLICIES)})")
    overrides: dict[str, Any] = {}
    for pair in args.set or ():
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise DdlschedError(f"--set: expected KEY=VALUE, got {pair!r}")
        try:
            overrides[key.replace("-", "_")] = json.loads(value)
        except json.JSONDecodeError:
            overrides[key.replace("-", "_")] = value
    if "mode" in overrides:
        raise DdlschedError("--set mode=...: use --mode reference|paper")
    if args.seed is not None and (not isinstance(args.seed, int) or args.seed < 0):
        raise DdlschedError(f"--seed must be a non-negative integer, got {args.seed!r}")
    try:
        config = SimConfig.preset(args.mode, **overrides)
    except TypeError as exc:  # an unknown knob name
        raise DdlschedError(f"--set: {exc}") from None
    trace = load_trace(args.trace, seed=args.seed, limit=args.limit)
    metrics = simulate(trace, args.policy, config)
    if args.json:
        print(json.dumps(metrics.to_dict(), indent=2))
    else:
        from rich.console import Console
        from rich.table import Table

        table = Table(
            title=f"muri simulation: trace {args.trace}, policy {args.policy}, {args.mode}"
        )
        table.add_column("metric")
        table.add_column("value", justify="right")
        for key, value in metrics.summary().items():
            table.add_row(key, f"{value:.10g}" if isinstance(value, float) else str(value))
        Console(highlight=False).print(table)
    return 0


def _cli_hook(subparsers: Any) -> None:
    sim = subparsers.add_parser("simulate", help="family-specific trace simulators")
    sim_sub = sim.add_subparsers(dest="simulate_family", required=True, parser_class=type(sim))
    p = sim_sub.add_parser("muri", help="simulate Muri and its baselines on a trace")
    p.add_argument(
        "--trace",
        required=True,
        help="trace1..4, trace1_pr.., philly, itp:NAME, tiresias, or a CSV path",
    )
    p.add_argument(
        "--policy", required=True, help="srtf, srsf, tiresias, themis, antman, muri-s, muri-l"
    )
    p.add_argument("--mode", default="reference", help="reference (default) or paper")
    p.add_argument(
        "--seed", type=int, default=0, help="seed of the profile assignment (philly/itp)"
    )
    p.add_argument("--limit", type=int, default=None, help="only the first N jobs of the trace")
    p.add_argument(
        "--set", action="append", metavar="KEY=VALUE", help="simulator knob (repeatable)"
    )
    p.add_argument("--json", action="store_true", help="print the metrics as one JSON object")
    p.set_defaults(func=_cmd_simulate)


FAMILY = register_family(
    Family(
        name="muri",
        sense="max",
        objective_name="sum of interleaving efficiency gamma over groups",
        load=MuriGroupingInstance.load,
        from_dict=MuriGroupingInstance.from_dict,
        generate=generate,
        presets=tuple(PRESETS),
        schedule_json=_schedule_json,
        summary="Muri: multi-resource interleaving, grouping and trace simulation",
        cli_hook=_cli_hook,
    )
)
