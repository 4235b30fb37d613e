"""``ddlsched methods`` and ``ddlsched presets`` (the console they print through is
:func:`ddlsched.console.console`, re-exported here).

``methods [FAMILY]`` lists the families, their methods, where each comes
from (built in, a plug-in's entry point and distribution, a session) and
each method's typed parameters (:mod:`ddlsched.params`; with FAMILY also
their help texts), then the plug-ins that failed to load, with why; ``presets [FAMILY]`` the presets and their parameters (``--set``).
Rich is imported inside the functions: ``ddlsched --help`` stays fast.
"""

from __future__ import annotations

import argparse

from ddlsched.console import console

__all__ = ["cell", "console", "list_methods", "list_presets"]


def cell(value: object) -> str:
    """Escape table cell text (certified intervals look like Rich markup)."""
    from rich.markup import escape

    return escape(str(value))


def list_methods(args: argparse.Namespace) -> int:
    """``ddlsched methods [FAMILY]``: families, methods and the methods' typed parameters."""
    from rich.table import Table

    from ddlsched.registry import broken_plugins, families, get_family, methods

    fams = [get_family(args.family)] if args.family else families()
    table = Table(title="ddlsched families and methods")
    columns = ("family", "method", "kind", "origin", "parameters (--param NAME=VALUE)", "summary")
    for col in columns:
        table.add_column(col)
    for fam in fams:
        for m in methods(fam.name):
            params = "\n".join(
                spec.describe() + (f"\n  {spec.help}" if args.family and spec.help else "")
                for spec in m.param_specs()
            )
            origin = "built in" if m.origin is None else m.origin.describe()
            table.add_row(*map(cell, (fam.name, m.name, m.kind, origin, params, m.summary)))
    screen = console()
    screen.print(table)
    for fam in fams:
        screen.print(
            cell(
                f"{fam.name}: {fam.summary}; objective {fam.objective_name} ({fam.sense}); "
                f"presets {', '.join(fam.presets)} (their parameters: ddlsched presets {fam.name})"
            )
        )
    for plugin in broken_plugins():
        screen.print(cell(f"not loaded: {plugin.describe()}"))
    return 0


def list_presets(args: argparse.Namespace) -> int:
    """``ddlsched presets [FAMILY]``: presets and their typed parameters (``--set``)."""
    from rich.table import Table

    from ddlsched.params import param_specs
    from ddlsched.registry import families, get_family

    fams = [get_family(args.family)] if args.family else families()
    table = Table(title="ddlsched presets and their parameters")
    for col in ("family", "preset", "parameters (--set NAME=VALUE)"):
        table.add_column(col)
    for fam in fams:
        for preset in fam.presets:
            schema = fam.preset_params.get(preset)
            specs = param_specs(schema) if schema is not None else []
            text = "\n".join(
                spec.describe() + (f"\n  {spec.help}" if args.family and spec.help else "")
                for spec in specs
            )
            table.add_row(*map(cell, (fam.name, preset, text or "(none)")))
    screen = console()
    screen.print(table)
    screen.print(
        "Generate with: ddlsched instance generate FAMILY --preset P --seed N -o FILE "
        '[--set NAME=VALUE ...]; values are JSON (true, 3, 0.5, [1, 2], "text").'
    )
    return 0
