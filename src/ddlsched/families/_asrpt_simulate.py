"""The ``ddlsched simulate asrpt`` command of family ``asrpt``: a trace window replayed under
one policy through the method pipeline (the family's map: :mod:`ddlsched.families.asrpt`)."""

from __future__ import annotations

import argparse
import functools
import math
from collections.abc import Callable
from typing import Any

from ddlsched import cli_types
from ddlsched.errors import DdlschedError
from ddlsched.problems.asrpt import AsrptInstance
from ddlsched.registry import Simulation, simulate


def simulate_window(
    instance: AsrptInstance,
    policy: str,
    *,
    params: dict[str, Any] | None = None,
    seed: int = 0,
    time_limit_s: float = math.inf,
    raise_errors: bool = False,
):
    """Run one policy on ``instance`` through the method pipeline; the evaluated result."""
    return simulate(
        "asrpt",
        policy,
        instance,
        params=params,
        seed=seed,
        time_limit_s=time_limit_s,
        raise_errors=raise_errors,
    )


def _simulation_window(
    generate: Callable[..., AsrptInstance], args: argparse.Namespace, preset: dict[str, Any]
) -> AsrptInstance:
    """The ``trace`` window of ``ddlsched simulate asrpt``'s flags."""
    for key in ("trace", "jobs", "start", "predictor"):
        if key in preset:
            raise DdlschedError(f"--set {key}=...: use --{key}")
    preset.update(trace=args.trace, predictor=args.predictor, jobs=args.jobs, start=args.start)
    return generate("trace", args.seed, **preset)


def _simulation_report(instance: AsrptInstance, result: Any) -> dict[str, Any]:
    out = dict(result.evaluation.summary())
    out.update({k: v for k, v in result.info.items() if k not in out})
    out["jobs"] = instance.num_jobs
    out["provenance"] = dict(instance.provenance)
    return out


def _jobs(text: str) -> int | str:
    if text == "all":
        return text
    try:
        return cli_types.count()(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(
            f"expected a number of jobs >= 1 or 'all', got {text!r}"
        ) from None


def _simulation_options(p: argparse.ArgumentParser) -> None:
    """The flags of ``ddlsched simulate asrpt`` besides the common ones."""
    p.add_argument(
        "--jobs", type=_jobs, default=None, help="window length, or 'all' (default: 1000)"
    )
    p.add_argument(
        "--start",
        type=cli_types.non_negative(),
        default=None,
        help="window start in the test split, >= 0 (default: seeded random)",
    )
    p.add_argument("--predictor", default="rf", help="rf (default), mean, median, perfect, noisy")


def simulation(generate: Callable[..., AsrptInstance], policies: tuple[str, ...]) -> Simulation:
    """The ``ddlsched simulate asrpt`` command, on the family's ``generate`` and policy names."""
    return Simulation(
        command="asrpt",
        help="replay a trace window under A-SRPT or a baseline",
        description=(
            "Build a trace window (preset 'trace' of family asrpt: 80/20 split by submission "
            "time, window from the test split, predictions from the training split) and "
            "replay it under one policy; prints total completion and flow time, makespan, "
            "JCT percentiles, utilisation and the prediction error."
        ),
        trace_help="philly, itp[:clusterNN], trace1..4, tiresias",
        policies=lambda: policies,
        seed_help="seed (configurations, window, predictor), >= 0",
        set_help="preset parameter (repeatable)",
        param_help="policy parameter (repeatable)",
        add_options=_simulation_options,
        build=functools.partial(_simulation_window, generate),
        report=_simulation_report,
        title=lambda args, instance: (
            f"asrpt simulation: {args.trace}, {instance.num_jobs} jobs, {args.policy}"
        ),
    )
