"""``ddlsched simulate COMMAND``: one command for every trace-driven family.

A family opts in with a :class:`~ddlsched.registry.Simulation` on its
:class:`~ddlsched.registry.Family` (``simulation=``): the command word
(``muri`` for family ``muri_sim``, ``asrpt``), its help texts, its policies,
its own flags and how it builds the instance and reports the result. This
module adds one subcommand per such family, with the flags every one has::

    ddlsched simulate COMMAND --trace NAME --policy P [family flags] [--seed N]
        [--set KEY=VALUE ...] [--param KEY=VALUE ...] [--time-limit S] [--json]

and runs it: the instance from the flags, the policy through
:func:`ddlsched.registry.simulate` (so :func:`~ddlsched.registry.run_method`:
the evaluator recomputes every metric), then one JSON object (``--json``)
or a table of the metrics. A run that ends without a schedule is one line
``ddlsched: error: simulate COMMAND: STATUS: why`` (exit 2).
"""

from __future__ import annotations

import argparse
import json
import math
from typing import Any

from ddlsched import cli_types
from ddlsched.errors import DdlschedError
from ddlsched.params import parse_assignments

__all__ = ["add_simulate_commands"]


def add_simulate_commands(subparsers: Any) -> None:
    """One ``simulate COMMAND`` parser per family with a simulation (loads the families)."""
    from ddlsched.registry import families

    for fam in families():
        if fam.simulation is not None:
            _add_command(subparsers, fam)


def _add_command(subparsers: Any, fam: Any) -> None:
    sim = fam.simulation
    p = subparsers.add_parser(sim.command, help=sim.help, description=sim.description)
    p.add_argument("--trace", required=True, help=sim.trace_help)
    p.add_argument("--policy", required=True, help=", ".join(sim.policies()))
    if sim.add_options is not None:
        sim.add_options(p)
    p.add_argument("--seed", type=cli_types.seed, default=0, help=sim.seed_help)
    p.add_argument("--set", action="append", metavar="KEY=VALUE", help=sim.set_help)
    if sim.param_help is not None:
        p.add_argument("--param", action="append", metavar="KEY=VALUE", help=sim.param_help)
    p.add_argument(
        "--time-limit",
        type=cli_types.seconds,
        default=None,
        help="seconds, finite (default: no limit)",
    )
    p.add_argument("--json", action="store_true", help="print the metrics as one JSON object")
    p.set_defaults(func=_cmd_simulate, simulation_family=fam.name)


def _cmd_simulate(args: argparse.Namespace) -> int:
    from ddlsched.registry import get_family, simulate
    from ddlsched.solvers.result import Status

    fam = get_family(args.simulation_family)
    sim = fam.simulation
    instance = sim.build(args, parse_assignments(args.set, "--set"))
    result = simulate(
        fam.name,
        args.policy,
        instance,
        params=parse_assignments(getattr(args, "param", None), "--param"),
        seed=args.seed,
        time_limit_s=math.inf if args.time_limit is None else args.time_limit,
        raise_errors=True,
    )
    if result.status is not Status.FEASIBLE:
        why = result.info.get("error") or result.info.get("stopped", "")
        raise DdlschedError(f"simulate {sim.command}: {result.status}: {why}")
    if args.json:
        print(json.dumps(sim.report(instance, result), indent=2, default=str))
        return 0
    from rich.console import Console
    from rich.table import Table

    table = Table(title=sim.title(args, instance))
    table.add_column("metric")
    table.add_column("value", justify="right")
    rows = (sim.rows or sim.report)(instance, result)
    for key, value in rows.items():
        if isinstance(value, dict):
            continue
        table.add_row(key, f"{value:.10g}" if isinstance(value, float) else str(value))
    Console(highlight=False).print(table)
    return 0
