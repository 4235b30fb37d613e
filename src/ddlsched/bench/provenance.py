"""What a row records about the code that made it (``code_fingerprint``, ``code_origin``).

:func:`code_row` is called by the worker before it runs a task: the
fingerprint of the method as the worker's own registry holds it
(:func:`ddlsched.bench.fingerprint.method_fingerprint`), and its origin:
ddlsched itself or a plug-in (entry point, distribution, version, the hash
of the plug-in's sources), or a method registered in the user's session (a
notebook cell, whose fingerprint the task carries: the worker process sees
only the pickled function, not its source), with the git commit and dirty
flag of the source tree it lives in, where there is one.

:func:`latest_code` keeps, of rows read back, those of each method's latest
code (what tables, ``compare`` and verdicts show); :func:`code_note` says
under a table which of them another version of the code made.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

__all__ = [
    "code_note",
    "code_row",
    "current_fingerprints",
    "git_state",
    "latest_code",
    "legacy_fingerprint",
    "prepare_code_row",
    "row_fingerprints",
    "run_code",
]


@functools.cache
def git_state(folder: str) -> dict[str, Any]:
    """The git commit and dirty flag of the tree holding ``folder`` (``None``s: no git)."""
    from ddlsched.bench.store import git_commit

    return git_commit(Path(folder))


def _folder_of(module: str | None) -> str | None:
    import sys

    path = getattr(sys.modules.get(module or ""), "__file__", None)
    return str(Path(path).resolve().parent) if path else None


def prepare_code_row() -> None:
    """Do now what the first :func:`code_row` of a process would do for every method: import
    the fingerprint and store modules (the store imports pyarrow) and read the git state
    of ddlsched's tree. A benchmark worker calls it before it says it is ready, so that
    its start-up (seconds on a loaded machine) never counts against a task's
    ``kill_after_s``."""
    import ddlsched.bench.fingerprint  # noqa: F401  (code_row imports it)

    folder = _folder_of("ddlsched")
    if folder is not None:
        git_state(folder)


def code_row(task: Any) -> dict[str, Any]:
    """The ``code_fingerprint`` and ``code_origin`` columns of ``task``'s row, made here."""
    from ddlsched.bench.fingerprint import method_fingerprint

    family, method = task.instance.family, task.method
    if task.session_method is not None:  # the worker cannot read a notebook's source
        origin: dict[str, Any] = json.loads(task.session_origin or '{"source": "session"}')
        digest = task.code_fingerprint
        folder = None
    else:
        fingerprint = method_fingerprint(family, method)
        digest, origin = fingerprint.digest, fingerprint.origin()
        folder = _folder_of(origin.get("module") if fingerprint.plugin else "ddlsched")
    if folder is not None:
        origin["git"] = git_state(folder)
    return {"code_fingerprint": digest, "code_origin": json.dumps(origin, sort_keys=True)}


def run_code(tasks: Any) -> dict[str, Any]:
    """What the manifest records of a run's code: per ``family.method``, the fingerprint
    and its origin (ddlsched, a plug-in with its distribution, version and source hash,
    or the session). The manifest's ``git`` holds the commit of ddlsched's tree."""
    from ddlsched.bench.fingerprint import method_fingerprint

    code: dict[str, Any] = {}
    for task in tasks:
        name = f"{task.instance.family}.{task.method}"
        if name in code:
            continue
        if task.session_method is not None:
            origin: dict[str, Any] = json.loads(task.session_origin or '{"source": "session"}')
        else:
            origin = method_fingerprint(task.instance.family, task.method).origin()
        if origin.get("source") == "plugin":
            folder = _folder_of(origin.get("module"))
            origin["git"] = git_state(folder) if folder else None
        code[name] = {"fingerprint": task.code_fingerprint, "origin": origin}
    return code


def legacy_fingerprint(version: Any) -> str:
    """The fingerprint a row written before rows had one is shown under."""
    return f"version {version}" if version else "unknown"


def current_fingerprints(pairs: set[tuple[str, str]]) -> dict[tuple[str, str], str | None]:
    """The current code's fingerprint of each (family, method); ``None``: not registered
    here (a plug-in not installed, a session method of another session)."""
    from ddlsched.bench.fingerprint import method_fingerprint
    from ddlsched.errors import DdlschedError

    found: dict[tuple[str, str], str | None] = {}
    for family, method in sorted(pairs):
        try:
            found[(family, method)] = method_fingerprint(family, method).digest
        except DdlschedError:
            found[(family, method)] = None
    return found


def _method_names(frame: Any) -> Any:
    return frame["family"].astype(str) + "." + frame["method"].astype(str)


def row_fingerprints(frame: Any) -> Any:
    """Each row's code fingerprint; rows written before rows had one count by version."""
    if "code_fingerprint" in frame:
        recorded = frame["code_fingerprint"]
    else:
        recorded = frame["ddlsched_version"].map(lambda _: None)
    legacy = frame["ddlsched_version"].map(legacy_fingerprint)
    return recorded.where(recorded.notna(), legacy)


def latest_code(frame: Any) -> Any:
    """The rows of ``frame`` made by the latest code of each method.

    A method whose rows carry several fingerprints (an edited method whose
    suite was re-run only in part, or rows of several runs) keeps the rows of
    the fingerprint of its most recently finished row: tables, ``compare`` and
    verdicts never mix rows of two versions of one method's code. What was
    left out is in ``frame.attrs["hidden_rows"]`` (``{"family.method": n}``),
    the fingerprint kept in ``frame.attrs["fingerprints"]``.
    """
    if frame.empty:
        frame.attrs["hidden_rows"], frame.attrs["fingerprints"] = {}, {}
        return frame
    names = _method_names(frame)
    prints = row_fingerprints(frame)
    order = frame["finished_at"].fillna("").astype(str)
    keep = {}
    for name in names.unique():
        mask = names == name
        latest = order[mask].idxmax()
        keep[name] = prints[latest]
    selected = prints == names.map(keep)
    hidden = names[~selected].value_counts().to_dict()
    kept = frame[selected].reset_index(drop=True)
    kept.attrs["hidden_rows"] = {str(k): int(v) for k, v in sorted(hidden.items())}
    kept.attrs["fingerprints"] = dict(sorted(keep.items()))
    return kept


def code_note(frame: Any) -> str:
    """A line under a table when some rows were not made by the current code ("" if all were).

    Names the methods whose rows another version of their code made (``bench
    run`` recomputes them), those whose rows carry no fingerprint (written
    before rows recorded one), those not registered here (a plug-in not
    installed), and the rows of older code left out (:func:`latest_code`).
    """
    kept = frame.attrs.get("fingerprints", {})
    hidden = frame.attrs.get("hidden_rows", {})
    split = {name: tuple(name.split(".", 1)) for name in kept}
    current = current_fingerprints(set(split.values()))  # type: ignore[arg-type]
    other, unrecorded, missing = [], [], []
    for name, digest in kept.items():
        now = current.get(split[name])  # type: ignore[arg-type]
        if now is None:
            missing.append(name)
        elif str(digest).startswith(("version ", "unknown")):
            unrecorded.append(name)
        elif now != digest:
            other.append(name)
    parts = []
    if other:
        parts.append(
            f"rows of {', '.join(other)} were made by other code than this installation's "
            "(bench run recomputes them)"
        )
    if unrecorded:
        parts.append(f"rows of {', '.join(unrecorded)} carry no code fingerprint (older rows)")
    if missing:
        parts.append(f"{', '.join(missing)} not registered here (a plug-in not installed?)")
    if hidden:
        counts = ", ".join(f"{n} of {name}" for name, n in hidden.items())
        parts.append(f"rows of older code left out: {counts} (bench status lists them)")
    return ("Code: " + "; ".join(parts) + ".") if parts else ""
