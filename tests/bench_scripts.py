"""Test helpers for the ``benchmarks/`` scripts: load one as a module, and run small suites
into results directories."""

from __future__ import annotations

import importlib.util
import textwrap
from pathlib import Path
from types import ModuleType

from ddlsched.bench.executors import LocalExecutor
from ddlsched.bench.runner import run_suite
from ddlsched.bench.suite import load_suite

ROOT = Path(__file__).resolve().parents[1]

#: A debug-family suite: ``heur`` (method seed ``{seed}``) against ``bound`` 5 % below the
#: optimum, on instance seeds ``{seeds}``, named ``{name}``.
DEBUG_SUITE = """
[suite]
name = "{name}"
reference = "bound"

[[instances]]
family = "debug"
preset = "default"
seeds = [{seeds}]
group = "g"

[[methods]]
name = "heur"
seeds = [{seed}]

[[methods]]
name = "bound"
params = {{ slack = 0.05 }}
"""


def load_script(name: str) -> ModuleType:
    """``benchmarks/<name>.py`` as a module (its ``main(argv)`` returns the exit status)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_suites(tmp: Path, suites: dict[str, str]) -> list[Path]:
    """Run each suite text (by name) into ``tmp/<name>`` on one local worker; the folders."""
    executor = LocalExecutor(1)
    outs = []
    try:
        for name, text in suites.items():
            path = tmp / f"{name}.toml"
            path.write_text(textwrap.dedent(text))
            run_suite(load_suite(path), tmp / name, executor=executor)
            outs.append(tmp / name)
    finally:
        executor.close()
    return outs
