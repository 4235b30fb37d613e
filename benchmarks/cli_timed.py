"""Run the ``ddlsched`` CLI in a fresh process under ``/usr/bin/time``: its JSON and its cost.

Shared by the benchmark scripts that time a method as a user runs it
(``rar_lb_binpacking.py``, ``rar_lb_timeindexed.py``, ``rar_paper_bracket.py``):
interpreter start-up included, peak memory from ``/usr/bin/time``.
"""

from __future__ import annotations

import json
import subprocess
import sys

#: The CLI as a command line, on this interpreter (no installed entry point needed).
CLI = [sys.executable, "-c", "import sys; from ddlsched.cli import main; sys.exit(main())"]


def run_timed(args: list[str], error_chars: int = 120) -> tuple[dict, str]:
    """``ddlsched ARGS`` (a command with ``--json``): its parsed output and ``"S s K KB"``
    (wall seconds and peak memory); on a non-JSON answer, ``{"status": "exit N: stderr"}``."""
    proc = subprocess.run(
        ["/usr/bin/time", "-f", "%e s %M KB", *CLI, *args], capture_output=True, text=True
    )
    timing = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "?"
    try:
        return json.loads(proc.stdout), timing
    except json.JSONDecodeError:
        return {"status": f"exit {proc.returncode}: {proc.stderr.strip()[:error_chars]}"}, timing
