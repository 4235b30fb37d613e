"""How much task time a suite's run will take: what ``bench validate`` prints.

Two figures, each saying what it is:

- the **limit bound**: the sum of the time limits (``time_limit_s``) of the
  tasks a run would start. Every method stops at its limit, so the task time
  stays under it but for the overrun of stopping (the ``kill_after_s`` deadline only stops a task that hangs
  past its limit: it is no plan for a task's time; summing it turned the quick
  suite, 720 tasks that take about 2.5 min of task time, into "8.0 h"). It is
  a bound, not an estimate: heuristics and most exact solves on small
  instances end far sooner.
- the **estimate from stored rows**: when the results directory already holds
  rows of the same methods (an earlier run, another seed range), each task
  still to run is charged the mean ``wall_s`` of the stored rows of its
  family, method and instance group (else of its family and method). Tasks
  whose method has no stored row are counted apart, never guessed.

Tasks whose row is stored and was made by the same code are not run again
(:func:`ddlsched.bench.runner.stale_row`): they count as done and cost nothing.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["TaskTimeEstimate", "estimate_task_time", "format_duration"]


@dataclass(frozen=True)
class TaskTimeEstimate:
    """The task time a run of a suite may take (see the module docstring)."""

    #: Tasks of the suite.
    tasks: int
    #: Tasks with a stored row of the same code: a run skips them.
    done: int
    #: Sum of the time limits of the tasks still to run, s (``inf`` if one has none).
    limit_bound_s: float
    #: Estimated task time of the tasks still to run that have measured peers, s.
    measured_s: float
    #: Tasks still to run that have measured peers (charged in ``measured_s``).
    measured: int

    @property
    def to_run(self) -> int:
        """Tasks a plain ``bench run`` would start."""
        return self.tasks - self.done

    def describe(self) -> str:
        """One sentence for ``bench validate``: bound, estimate, what is done."""
        if self.to_run == 0:
            return (
                f"all {self.tasks:,} task(s) already have rows of the same code: a run starts none"
            )
        text = (
            f"{self.to_run:,} task(s) to run, at most {format_duration(self.limit_bound_s)} "
            "of task time (every task at its time limit: a bound, not an estimate)"
        )
        if self.done:
            text += f"; {self.done:,} done already (stored rows of the same code)"
        if self.measured:
            unmeasured = self.to_run - self.measured
            text += (
                f"; estimate from stored rows of the same methods: "
                f"{format_duration(self.measured_s)} for {self.measured:,} task(s)"
            )
            if unmeasured:
                text += f", {unmeasured:,} task(s) of methods without rows not estimated"
        return text


def format_duration(seconds: float) -> str:
    """``seconds`` as ``42 s``, ``17 min`` or ``2.0 h`` (``inf`` when unbounded)."""
    if not math.isfinite(seconds):
        return "inf"
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def estimate_task_time(tasks: list, results_dir: str | Path | None) -> TaskTimeEstimate:
    """The :class:`TaskTimeEstimate` of ``tasks`` (:class:`ddlsched.bench.tasks.Task`)
    against the rows stored in ``results_dir`` (none when it does not exist)."""
    rows = _stored_rows(results_dir)
    from ddlsched.bench.runner import stale_row

    by_key = {row["key"]: row for row in rows}
    to_run = [t for t in tasks if t.key not in by_key or stale_row(t, by_key[t.key])]
    peers = _wall_times(rows)
    limit_bound_s = sum(t.time_limit_s for t in to_run)
    measured_s = 0.0
    measured = 0
    for task in to_run:
        family = task.instance.family
        walls = peers.get((family, task.label, task.instance.group)) or peers.get(
            (family, task.label)
        )
        if walls:
            measured_s += statistics.fmean(walls)
            measured += 1
    return TaskTimeEstimate(
        tasks=len(tasks),
        done=len(tasks) - len(to_run),
        limit_bound_s=float(limit_bound_s),
        measured_s=measured_s,
        measured=measured,
    )


def _stored_rows(results_dir: str | Path | None) -> list[dict[str, Any]]:
    """The latest row of each key in ``results_dir`` (key, family, method label,
    group, wall time, code fingerprint), or none when there is no such directory."""
    if results_dir is None or not Path(results_dir).is_dir():
        return []
    from ddlsched.bench.store import read_rows

    columns = ["key", "family", "label", "group", "wall_s", "code_fingerprint"]
    return read_rows(results_dir).select(columns).to_pylist()


def _wall_times(rows: list[dict[str, Any]]) -> dict[tuple, list[float]]:
    """Measured ``wall_s`` by (family, method label, group) and by (family, method label)."""
    walls: dict[tuple, list[float]] = {}
    for row in rows:
        wall = row.get("wall_s")
        if wall is None or not math.isfinite(wall):
            continue
        for key in (
            (row["family"], row["label"], row["group"]),
            (row["family"], row["label"]),
        ):
            walls.setdefault(key, []).append(float(wall))
    return walls
