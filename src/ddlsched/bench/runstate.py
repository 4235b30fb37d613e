"""Whether a run that its manifest records as ``running`` is still running.

A run holds its results directory's lock (an exclusive ``flock`` on
``RESULTS/.lock``) from start to end, and the kernel releases it when the
process dies, ``kill -9`` included. A run entry that still says ``running``
is therefore:

* running, if it is the directory's last run, the lock is held (a
  non-blocking probe fails) and its recorded process is alive (or cannot be
  checked: another host);
* interrupted (killed) otherwise: it died without recording its end. An
  earlier entry that says ``running`` is always dead: a later run took the
  lock. Where the lock cannot be probed (no ``fcntl``, an unreadable lock
  file), the recorded pid decides on its own host; on another host the
  state is unknown (``running?``).

The time a killed run last wrote is the newest modification time of its row
parts (parts are named after the run), or its start. The next run into the
directory records killed runs as such in the manifest
(:func:`close_dead_runs`).
"""

from __future__ import annotations

import contextlib
import os
import socket
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

__all__ = [
    "KILLED",
    "RunView",
    "close_dead_runs",
    "describe_runs",
    "lock_held",
    "pid_alive",
    "run_parts",
]

#: Manifest state of a run found dead while recorded as ``running``.
KILLED = "killed"

_LOCK = ".lock"


def lock_held(directory: Path) -> bool | None:
    """Whether a process holds the run lock of ``directory`` (``None``: cannot tell).

    The probe takes a shared lock without blocking and releases it at once;
    it never creates the lock file.
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        return None
    try:
        fd = os.open(directory / _LOCK, os.O_RDONLY)
    except FileNotFoundError:
        return False
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return None
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def pid_alive(pid: Any, host: Any) -> bool | None:
    """Whether process ``pid`` of ``host`` is alive (``None``: unknown, e.g. another host)."""
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return None
    if host != socket.gethostname():
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    except OSError:
        return None
    return True


def run_parts(directory: Path, run_id: Any) -> list[Path]:
    """The row parts written by run ``run_id`` (none once a later run compacted them)."""
    if not isinstance(run_id, str) or not run_id:
        return []
    return sorted((directory / "rows").glob(f"part-{run_id}-*.parquet"))


def _iso(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, UTC).isoformat(timespec="seconds")


def _last_write(directory: Path, run: dict[str, Any]) -> tuple[str | None, int | None]:
    """When the run last wrote a part, and how many rows its parts hold."""
    import pyarrow.parquet as pq

    parts = run_parts(directory, run.get("run_id"))
    latest, rows = None, 0
    for part in parts:
        with contextlib.suppress(OSError):
            mtime = part.stat().st_mtime
            latest = mtime if latest is None else max(latest, mtime)
        try:
            rows += pq.read_metadata(part).num_rows
        except Exception:  # a corrupt part: the read gate names it elsewhere
            continue
    if latest is None:
        return run.get("started_at"), (None if not parts else rows)
    return _iso(latest), rows


@dataclass(frozen=True)
class RunView:
    """A manifest run as ``bench status`` shows it."""

    run: dict[str, Any]
    #: ``running``, ``running?`` (cannot tell), ``interrupted (killed)``, or the recorded state.
    state: str
    #: When a killed or running run last wrote (ISO 8601 UTC), else ``None``.
    last_write: str | None = None
    #: Rows in a killed or running run's parts (``None`` if unknown).
    rows: int | None = None


def _live_state(last: bool, held: bool | None, run: dict[str, Any]) -> str:
    """The state of a run recorded as running (see the module docstring)."""
    if not last or held is False:
        return "interrupted (killed)"
    alive = pid_alive(run.get("pid"), run.get("host"))
    if alive is False:
        return "interrupted (killed)"
    if held or alive:
        return "running"
    return "running?"


def describe_runs(directory: Path, runs: list[dict[str, Any]]) -> list[RunView]:
    """The state of each run of a manifest, telling a killed run from a running one."""
    held = lock_held(directory)
    out = []
    for i, run in enumerate(runs):
        state = run.get("state")
        if state == KILLED:
            out.append(RunView(run, "interrupted (killed)", run.get("last_write_at")))
            continue
        if state != "running":
            out.append(RunView(run, str(state)))
            continue
        when, rows = _last_write(directory, run)
        out.append(RunView(run, _live_state(i == len(runs) - 1, held, run), when, rows))
    return out


def close_dead_runs(directory: Path, manifest: dict[str, Any]) -> int:
    """Mark every ``running`` entry of ``manifest`` as killed; return how many.

    Only for a caller that holds the directory's lock: every other run is
    then dead. Records when each last wrote and the rows its parts hold.
    """
    closed = 0
    for run in manifest.get("runs", []):
        if run.get("state") != "running":
            continue
        when, rows = _last_write(directory, run)
        run.update(state=KILLED, last_write_at=when)
        if rows is not None:
            run["rows_written"] = rows
        closed += 1
    return closed
