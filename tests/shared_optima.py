"""Proven optima shared by the test processes of one run.

Under ``pytest -n`` (pytest-xdist) the workers of one run share the environment variable
``PYTEST_XDIST_TESTRUNUID``; an optimum solved by one worker is written to a directory
named by it and read by the others, so each proven optimum of the bound tests is solved
once per run, not once per worker and per test file. xdist draws a new id for every
run, so every optimum comes from the code under test (do not pin it with
``--testrunuid``); the directory, a few hundred small files, stays in the temporary
directory after the run. Without xdist the callers' in-process caches do the same.
Only proven values are stored (the callers assert the proof first).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path


def shared(name: str, compute: Callable[[], float]) -> float:
    """``compute()``'s value, solved once per test run across the xdist workers."""
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    if run is None:
        return compute()
    path = Path(tempfile.gettempdir()) / f"ddlsched-test-optima-{run}" / f"{name}.json"
    try:
        return json.loads(path.read_text())["value"]
    except (OSError, ValueError, KeyError):
        pass
    value = compute()
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.name}.{os.getpid()}.part")
    partial.write_text(json.dumps({"value": value}))
    os.replace(partial, path)  # atomic: a reader sees the whole value or none
    return value
