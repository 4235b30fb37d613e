"""Running suites: crash isolation, time limits, Dask parity, resume after a kill."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from ddlsched.bench.executors import DaskExecutor, LocalExecutor
from ddlsched.bench.runner import run_suite
from ddlsched.bench.store import read_rows
from ddlsched.bench.suite import load_suite
from ddlsched.bench.tasks import expand

# Columns that legitimately differ between two runs of the same task (and
# info's wall time, dropped below).
VOLATILE = {"runtime_s", "wall_s", "worker", "finished_at"}

MIXED = """
[suite]
name = "mixed"
reference = "exact"
[limits]
time_limit_s = 1
kill_after_s = 1.5  # counted from the worker's "ready": its start-up never counts
[[instances]]
family = "debug"
preset = "default"
seeds = [0, 1]
[[methods]]
name = "exact"
[[methods]]
name = "heur"
seeds = [0, 1, 2]
[[methods]]
name = "bound"
[[methods]]
name = "fail"
[[methods]]
name = "raise"
[[methods]]
name = "crash"
[[methods]]
name = "hang"
"""


def write(tmp_path: Path, text: str, name: str = "suite.toml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def stable_rows(directory: Path) -> list[dict]:
    rows = read_rows(directory).to_pylist()
    out = []
    for row in rows:
        stable = {k: v for k, v in row.items() if k not in VOLATILE}
        info = json.loads(stable["info"])
        info.pop("wall_time_s", None)
        stable["info"] = info
        out.append(stable)
    return sorted(out, key=lambda r: r["key"])


def by_label(rows: list[dict]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for row in rows:
        out.setdefault(row["label"], set()).add(row["status"])
    return out


@pytest.fixture(scope="module")
def local_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("local")
    suite = load_suite(write(tmp, MIXED))
    executor = LocalExecutor(2)
    try:
        summary = run_suite(suite, tmp / "out", executor=executor)
    finally:
        executor.close()
    return tmp, suite, summary


def test_crash_and_hang_become_rows_and_the_rest_completes(local_run):
    tmp, suite, summary = local_run
    rows = stable_rows(tmp / "out")
    assert len(rows) == len(expand(suite)) == 2 * 9
    statuses = by_label(rows)
    assert statuses["hang"] == {"time_limit"}
    assert statuses["crash"] == {"error"}
    assert statuses["fail"] == {"error"}
    assert statuses["raise"] == {"error"}
    assert statuses["exact"] == {"optimal"}
    assert statuses["heur"] == {"feasible"}
    assert statuses["bound"] == {"bound_only"}
    crash = next(r for r in rows if r["label"] == "crash")
    assert "worker process died (killed by SIGKILL)" in crash["error"]
    hang = next(r for r in rows if r["label"] == "hang")
    assert "killed after 1.5 s" in hang["error"]
    assert hang["instance_size"] is not None  # reported before the method ran
    raised = next(r for r in rows if r["label"] == "raise")
    assert raised["error"].startswith("RuntimeError: debug.raise")
    assert summary.failed == 2 * 4 and not summary.interrupted
    # Every row carries what the tables need.
    for row in rows:
        assert row["family"] == "debug" and row["group"] == "default"
        assert row["ddlsched_version"] and row["versions"] and row["key"]
        assert row["sense"] == "min"


def test_rerun_skips_finished_rows(local_run):
    tmp, suite, _ = local_run
    before = stable_rows(tmp / "out")
    summary = run_suite(suite, tmp / "out", workers=1)
    assert summary.done == 0 and summary.skipped == len(before)
    assert stable_rows(tmp / "out") == before


def test_dask_local_cluster_gives_identical_rows(local_run):
    tmp, suite, _ = local_run
    executor = DaskExecutor("local", workers=2)
    try:
        assert len(executor.client.scheduler_info()["workers"]) == 2
        summary = run_suite(suite, tmp / "dask", executor=executor)
        # The same cluster by its address, as `--dask tcp://HOST:PORT` does.
        remote = DaskExecutor(executor.client.scheduler.address)
        try:
            assert remote.workers == 2
            run_suite(suite, tmp / "remote", executor=remote, limit=4)
        finally:
            remote.close()
    finally:
        executor.close()
    assert summary.done == len(expand(suite))
    pool_rows = stable_rows(tmp / "out")
    assert stable_rows(tmp / "dask") == pool_rows
    remote_rows = stable_rows(tmp / "remote")
    assert len(remote_rows) == 4
    assert all(row in pool_rows for row in remote_rows)


def _cli(*args: str, **kw) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "ddlsched.cli", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kw,
    )


SLOW = """
[suite]
name = "slow"
[limits]
time_limit_s = 5
[[instances]]
family = "debug"
preset = "default"
seeds = { first = 0, count = 16 }
[[methods]]
name = "sleep"
params = { seconds = 0.4 }
[[methods]]
name = "noop"
"""


def _wait_for_rows(out: Path, proc: subprocess.Popen, minimum: int, timeout: float = 60) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if (out / "rows").is_dir():
            n = read_rows(out, dedupe=False).num_rows
            if n >= minimum:
                return n
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.1)
    raise AssertionError("no rows were written")


@pytest.mark.parametrize("how", ["kill9", "sigint"])
def test_killed_run_resumes_with_every_row_exactly_once(tmp_path, how):
    suite_path = write(tmp_path, SLOW)
    total = len(expand(load_suite(suite_path)))
    out = tmp_path / "out"
    proc = _cli("bench", "run", str(suite_path), "--workers", "2", "--out", str(out), "-q")
    written = _wait_for_rows(out, proc, 2)
    if how == "kill9":
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    else:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 130, err
        assert "interrupted" in err
    after_kill = read_rows(out, dedupe=False).num_rows
    assert written <= after_kill < total
    # no orphaned sandbox processes keep writing
    time.sleep(0.3)
    assert read_rows(out, dedupe=False).num_rows == after_kill
    proc = _cli("bench", "run", str(suite_path), "--workers", "2", "--out", str(out), "-q")
    stdout, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert f"{after_kill} already stored" in stdout
    table = read_rows(out, dedupe=False)
    keys = table.column("key").to_pylist()
    assert len(keys) == len(set(keys)) == total
    assert {t.key for t in expand(load_suite(suite_path))} == set(keys)


def test_memory_limit_turns_into_an_error_row(tmp_path):
    text = """
    [suite]
    name = "mem"
    [limits]
    memory_mb = 1500
    [[instances]]
    family = "debug"
    preset = "default"
    seeds = [0]
    [[methods]]
    name = "memory"
    sweep = { megabytes = [10, 4000] }
    """
    suite = load_suite(write(tmp_path, text))
    run_suite(suite, tmp_path / "out", workers=1)
    rows = {r["label"]: r for r in read_rows(tmp_path / "out").to_pylist()}
    assert rows["memory[megabytes=10]"]["status"] == "feasible"
    assert rows["memory[megabytes=4000]"]["status"] == "error"
    assert "ran out of memory" in rows["memory[megabytes=4000]"]["error"]  # one line, no trace


def test_sandboxes_do_not_outlive_the_pool(tmp_path):
    suite = load_suite(write(tmp_path, SLOW))
    executor = LocalExecutor(2)
    run_suite(suite, tmp_path / "out", executor=executor, limit=2)
    pids = [s.pid for s in executor._sandboxes]
    executor.close()
    for pid in pids:
        if pid is not None:
            with pytest.raises(ProcessLookupError):
                os.kill(pid, 0)


def test_a_second_run_into_the_same_directory_is_refused(tmp_path):
    from ddlsched.bench.store import ResultStore
    from ddlsched.errors import DdlschedError

    suite = load_suite(write(tmp_path, SLOW))
    holder = ResultStore(tmp_path / "out")
    holder.lock()
    try:
        with pytest.raises(DdlschedError, match="another run is writing to"):
            run_suite(suite, tmp_path / "out", workers=1)
    finally:
        holder.unlock()
    assert run_suite(suite, tmp_path / "out", workers=1, limit=1).done == 1
