"""``ddlsched bench status RESULTS``: what a results directory holds, and how its runs ended.

Read-only: it writes nothing (a read-only directory, or one a run is
writing, is fine) and reads every file through the read gate
(:mod:`ddlsched.bench.gate`). It shows the manifest (suite, versions,
commit, machine), the rows (latest per key, and earlier attempts kept in
the history), the suite's tasks without a row, how many rows each
``bench run --retry`` kind would run again, the last runs (a run killed
with ``kill -9`` shows as ``interrupted (killed)`` with the time it last
wrote, see :mod:`ddlsched.bench.runstate`), rows by method and status, and
the rows of each method by the code that made them (fingerprint, whether it is
the current code's, ddlsched or a plug-in, git commit), the rows of the suite
that other code made (``bench run`` recomputes them), and the first failures.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ddlsched.errors import DdlschedError

__all__ = ["show_status", "suite_tasks"]


def suite_tasks(directory: Path, manifest: dict[str, Any]) -> list | None:
    """The tasks of the directory's suite (its file, or the copy kept in the directory)."""
    from ddlsched.bench.suite import load_suite
    from ddlsched.bench.tasks import expand

    for candidate in (manifest.get("suite_file"), directory / "suite.toml"):
        if candidate and Path(candidate).is_file():
            try:
                return expand(load_suite(candidate, instance_budget_s=0))  # counts only
            except DdlschedError:
                continue
    return None


def _run_line(view: Any) -> str:
    run = view.run
    rows = view.rows if view.rows is not None else run.get("rows_written")
    text = (
        f"  run {run.get('run_id')}: {view.state} on {run.get('executor')} "
        f"x{run.get('workers')}, {rows} rows, {run.get('started_at')} -> "
    )
    if view.state == "interrupted (killed)":
        return text + f"last wrote {view.last_write}"
    if view.state.startswith("running"):
        return text + f"last wrote {view.last_write} (pid {run.get('pid')} on {run.get('host')})"
    return text + str(run.get("finished_at"))


def _limits_changed(tasks: list, latest: dict[str, dict]) -> int:
    """Stored rows of the suite's tasks that ran under other limits than the suite's now."""
    changed = 0
    for task in tasks:
        row = latest.get(task.key)
        if row is not None and (
            row.get("time_limit_s") != task.time_limit_s
            or row.get("kill_after_s") != task.kill_after_s
        ):
            changed += 1
    return changed


def _stale_by_method(tasks: list, latest: dict[str, dict]) -> dict[str, int]:
    """Stored rows of the suite's tasks made by other code than the current, by method."""
    stale: dict[str, int] = {}
    for task in tasks:
        row = latest.get(task.key)
        if row is not None and row.get("code_fingerprint") != task.code_fingerprint:
            name = f"{task.instance.family}.{task.method}"
            stale[name] = stale.get(name, 0) + 1
    return stale


def _code_table(frame: Any) -> Any:
    """Rows by method and code fingerprint, against the current code's (Rich table)."""
    import json

    from rich.markup import escape
    from rich.table import Table

    from ddlsched.bench.provenance import current_fingerprints, row_fingerprints

    frame = frame.assign(_code=row_fingerprints(frame))
    groups = frame.groupby(["family", "method", "_code"], sort=True)
    current = current_fingerprints({(f, m) for f, m, _ in groups.groups})
    table = Table(title="rows by method and code (latest row of each task)")
    for column in ("method", "code fingerprint", "rows", "current code", "origin"):
        table.add_column(column, justify="right" if column == "rows" else "left")
    for (family, method, code), rows in groups:
        now = current.get((family, method))
        state = "not registered here" if now is None else ("yes" if now == code else f"no ({now})")
        origin = "-"
        if "code_origin" in rows and rows["code_origin"].notna().any():
            data = json.loads(rows["code_origin"].dropna().iloc[-1])
            origin = data.get("source", "-")
            if origin == "plugin":
                origin = f"plugin {data.get('distribution')} {data.get('version')}"
            commit = (data.get("git") or {}).get("commit")
            if commit:
                dirty = " dirty" if (data.get("git") or {}).get("dirty") else ""
                origin += f" @{commit[:10]}{dirty}"
        table.add_row(
            escape(f"{family}.{method}"), escape(str(code)), str(len(rows)), escape(state),
            escape(origin),
        )  # fmt: skip
    return table


def show_status(directory: Path, console: Any, errors: int = 10) -> None:
    """Print the status of results directory ``directory`` on ``console`` (Rich)."""
    from rich.markup import escape
    from rich.table import Table

    from ddlsched.bench.retry import FAILED_STATUSES, RETRY_KINDS, retry_counts
    from ddlsched.bench.runstate import describe_runs
    from ddlsched.bench.store import read_manifest, read_rows

    if not directory.is_dir():
        raise DdlschedError(f"no results directory {directory}")
    manifest = read_manifest(directory)
    history = read_rows(directory, dedupe=False).num_rows
    frame = read_rows(directory).to_pandas()
    latest = {r["key"]: r for r in frame.to_dict("records")} if not frame.empty else {}
    versions, git, machine = (manifest.get(k, {}) for k in ("versions", "git", "machine"))
    say = console.print
    say(f"[bold]{escape(str(directory))}[/bold]: suite {escape(str(manifest.get('suite', '?')))}")
    say(
        escape(
            f"  suite file {manifest.get('suite_file')} "
            f"sha256 {str(manifest.get('suite_sha256'))[:12]}"
        )
    )
    say("  versions   " + ", ".join(f"{k} {v}" for k, v in versions.items() if v is not None))
    say(f"  git        {git.get('commit')} (dirty: {git.get('dirty')})")
    say(
        f"  machine    {machine.get('hostname')} {machine.get('platform')} "
        f"{machine.get('cpu_count')} cpus"
    )
    earlier = history - len(latest)
    say(
        f"  rows       {len(latest)}"
        + (f" ({earlier} earlier attempt(s) kept in the history)" if earlier else "")
    )
    tasks = suite_tasks(directory, manifest)
    if tasks is not None:
        pending = sum(1 for t in tasks if t.key not in latest)
        say(f"  pending    {pending} task(s) of the suite have no row yet")
        mine = [latest[t.key] for t in tasks if t.key in latest]
        stale = _stale_by_method(tasks, latest)
        if stale:
            listing = ", ".join(f"{name} {count}" for name, count in sorted(stale.items()))
            say(
                f"  code       {sum(stale.values())} row(s) made by other code than the "
                f"current (bench run recomputes them): {escape(listing)}"
            )
        changed = _limits_changed(tasks, latest)
        if changed:
            say(f"  limits     {changed} row(s) ran under other limits than the suite's now")
    else:
        mine = list(latest.values())
    counts = retry_counts(mine)
    say(
        "  retry      "
        + ", ".join(f"--retry {kind}: {counts[kind]} row(s)" for kind in RETRY_KINDS)
        + " would run again"
    )
    for view in describe_runs(directory, manifest.get("runs", [])[-5:]):
        say(escape(_run_line(view)))
    if frame.empty:
        return
    by_status = frame.groupby(["family", "label", "status"]).size().unstack(fill_value=0)
    table = Table(title="rows by method and status (latest row of each task)")
    table.add_column("family")
    table.add_column("method")
    for status in by_status.columns:
        table.add_column(str(status), justify="right")
    for (family, label), line in by_status.iterrows():
        table.add_row(escape(family), escape(label), *(str(int(v)) for v in line))
    say(table)
    say(_code_table(frame))
    failed = frame[frame["status"].isin(sorted(FAILED_STATUSES))]
    for _, row in failed.head(errors).iterrows():
        say(escape(f"  {row['status']}: {row['label']} on {row['instance_id']}: {row['error']}"))
