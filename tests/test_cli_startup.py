"""The CLI starts without the solvers: Pyomo, HiGHS, OR-Tools and numba load only when a
method needs them (``benchmarks/cli_startup.py`` measures the time; this checks the
modules, in a fresh interpreter each)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from ddlsched.datadir import data_dir

HEAVY = ("pyomo", "highspy", "ortools", "numba")

PROBE = """
import contextlib, io, json, sys
from ddlsched.cli import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    code = main({args!r})
print(json.dumps({{"code": code, "loaded": sorted(m for m in {heavy!r} if m in sys.modules),
                  "numpy": "numpy" in sys.modules}}))
"""


def _probe(args: list[str]) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", PROBE.format(args=args, heavy=HEAVY)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_importing_the_cli_loads_no_solver():
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, ddlsched.cli; "
            f"print([m for m in {HEAVY!r} + ('numpy',) if m in sys.modules])",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize(
    "args",
    [["--help"], ["methods"], ["methods", "placement"], ["simulate", "muri", "--help"]],
    ids=" ".join,
)
def test_commands_load_no_solver(args):
    probe = _probe(args)
    assert probe["code"] == 0 and probe["loaded"] == []


def test_help_does_not_even_load_numpy():
    assert _probe(["--help"])["numpy"] is False


@pytest.mark.skipif(data_dir() is None, reason="shared data directory absent")
def test_a_baseline_simulation_loads_no_solver():
    probe = _probe(["simulate", "muri", "--trace", "tiresias", "--limit", "20", "--policy", "srtf"])
    assert probe["code"] == 0 and probe["loaded"] == []
