"""Which stored rows ``bench run SUITE --retry WHAT`` runs again.

A row's identity is its task's key: instance, method, parameters, seed,
backend and ddlsched version, not the limits it ran under (see
:mod:`ddlsched.bench.tasks`). So after raising ``time_limit_s``,
``kill_after_s`` or ``memory_mb`` in a suite, a plain ``bench run`` keeps
every stored row, and ``--retry`` re-runs exactly the suite's tasks whose
latest row is of the chosen kinds. The new row has the same key: it replaces
the old one in tables (readers keep a key's latest row) and the old one stays
in the history (``read_rows(dedupe=False)``).

Kinds (``--retry`` is repeatable and takes comma-separated lists):

``error``
    status ``error``: the method raised, its worker process died (a crash,
    killed by a signal) or ran out of memory (``limits.memory_mb``).
``time_limit``
    rows a time limit stopped: status ``time_limit`` (killed at
    ``kill_after_s``), ``time_limit_no_solution``, and rows whose method
    reports ``time_limit_hit`` (e.g. an exact method that returned a feasible
    schedule with a gap).
``failed``
    every row without a result: statuses :data:`FAILED_STATUSES` (``error``,
    ``time_limit``, ``time_limit_no_solution``). Not ``infeasible`` (a
    proof) nor a schedule returned at a time limit (use ``time_limit``).

A ``no_solution`` row (a heuristic or rounding that ended without a
schedule) is a finished result: no kind re-runs it, and ``bench run`` does
not count it as failed (a re-run with the same seed would end the same way).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ddlsched.bench.tasks import STATUS_TIME_LIMIT
from ddlsched.errors import DdlschedError

__all__ = ["FAILED_STATUSES", "RETRY_KINDS", "parse_retry", "retry_counts", "wants_retry"]

#: Statuses of a row that has no result: the task failed.
FAILED_STATUSES = frozenset({"error", STATUS_TIME_LIMIT, "time_limit_no_solution"})

#: The kinds ``--retry`` accepts.
RETRY_KINDS = ("failed", "time_limit", "error")


def parse_retry(values: Iterable[str] | None) -> frozenset[str]:
    """The kinds of ``--retry`` values (each may be comma-separated); unknown ones refused."""
    kinds: set[str] = set()
    for value in values or ():
        for kind in (k.strip() for k in str(value).split(",")):
            if kind not in RETRY_KINDS:
                raise DdlschedError(
                    f"--retry: unknown kind {kind!r} (expected {', '.join(RETRY_KINDS)})"
                )
            kinds.add(kind)
    return frozenset(kinds)


def wants_retry(row: Mapping[str, Any], kinds: Iterable[str]) -> bool:
    """Whether a stored row (``status``, ``time_limit_hit``) is of one of ``kinds``."""
    status = row.get("status")
    for kind in kinds:
        if kind == "failed" and status in FAILED_STATUSES:
            return True
        if kind == "error" and status == "error":
            return True
        if kind == "time_limit" and (
            status in (STATUS_TIME_LIMIT, "time_limit_no_solution") or row.get("time_limit_hit")
        ):
            return True
    return False


def retry_counts(rows: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """How many of ``rows`` (latest rows) each ``--retry`` kind would re-run."""
    rows = list(rows)
    return {kind: sum(1 for r in rows if wants_retry(r, (kind,))) for kind in RETRY_KINDS}
