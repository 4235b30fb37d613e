"""Result-store faults and recovery.

Store write faults (a full disk, permissions) are one-line errors with exit
status 2 that keep every flushed row; leftover temporary files of killed
writes are removed; ``bench status`` tells a killed run from a running one;
``bench run --retry`` re-runs exactly the failed rows; a corrupt results file
is a one-line error naming it.

The tests run as root here, and root ignores permission bits: permission
errors are simulated by monkeypatching ``os.open`` / ``os.mkdir`` to raise
``EACCES`` (the ``chmod`` test runs only where ``chmod`` can deny the user).
A full disk is simulated by an ``os.write`` that raises ``ENOSPC``.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ddlsched.bench.files import TEMP_PATTERN, remove_stale_temps
from ddlsched.bench.retry import parse_retry, retry_counts, wants_retry
from ddlsched.bench.runner import run_suite
from ddlsched.bench.runstate import describe_runs
from ddlsched.bench.store import ResultStore, read_manifest, read_rows
from ddlsched.bench.suite import load_suite
from ddlsched.bench.suite_values import SuiteError
from ddlsched.bench.tasks import expand
from ddlsched.cli import main
from ddlsched.errors import DdlschedError, StoreError

SRC = Path(__file__).resolve().parents[1] / "src"

TINY = """
[suite]
name = "tiny"
[limits]
time_limit_s = 5
[[instances]]
family = "debug"
preset = "default"
seeds = [0, 1]
[[methods]]
name = "noop"
"""

# Enough rows for at least two flushes (the CLI flushes at most once a second).
PACED = """
[suite]
name = "paced"
[limits]
time_limit_s = 5
[[instances]]
family = "debug"
preset = "default"
seeds = { first = 0, count = 10 }
[[methods]]
name = "sleep"
params = { seconds = 0.3 }
"""

# One method fails (killed at kill_after_s) until the limit is raised.
LIMITED = """
[suite]
name = "limited"
[limits]
time_limit_s = 5
kill_after_s = KILL
[[instances]]
family = "debug"
preset = "default"
seeds = [0, 1, 2]
[[methods]]
name = "sleep"
sweep = { seconds = [0.01, 3.0] }
"""
#: kill_after_s that cuts the 3 s sleeps and not the 0.01 s ones, and one that lets the 3 s
#: sleeps finish. The kill clock starts when the worker is ready (imports and the git state
#: done, ``prepare_code_row``): a worker's start-up, seconds on a loaded machine, never
#: counts, only the task's own work.
KILL_SHORT, KILL_LONG = "1", "10"


def write(tmp_path: Path, text: str, name: str = "suite.toml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def row(key: str, status: str = "feasible") -> dict:
    return {"key": key, "family": "debug", "method": "noop", "status": status}


def one_line_error(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    assert lines[0].startswith("ddlsched: error: ")
    return lines[0]


@pytest.fixture(autouse=True)
def _keep_sigterm():
    # `bench run` in-process installs a SIGTERM handler; give the next test the old one.
    handler = signal.getsignal(signal.SIGTERM)
    yield
    signal.signal(signal.SIGTERM, handler)


def _fd_path(fd: int) -> str:
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return ""


# --------------------------------------------------------------------------- 1. write faults


def test_full_disk_while_flushing_keeps_the_flushed_rows(tmp_path, monkeypatch):
    store = ResultStore(tmp_path / "out", flush_interval_s=0)
    store.lock()
    store.add(row("a"))
    real_write = os.write

    def full(fd, data):
        if _fd_path(fd).startswith(str(tmp_path)):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", full)
    with pytest.raises(StoreError) as info:
        store.add(row("b"))
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(str(tmp_path / "out" / "rows" / "part-"))
    assert message.endswith(".parquet: cannot write (No space left on device)")
    assert info.value.__cause__ is None and info.value.__suppress_context__
    with pytest.raises(StoreError, match=r"manifest\.json: cannot write \(No space left"):
        store.write_manifest({})
    monkeypatch.undo()
    store.unlock()
    assert read_rows(tmp_path / "out").column("key").to_pylist() == ["a"]
    leftovers = [p for d in (tmp_path / "out", tmp_path / "out" / "rows") for p in d.iterdir()]
    assert not [p for p in leftovers if TEMP_PATTERN.match(p.name)]


# A `ddlsched bench run` whose store faults after its first part: os.write raises
# ENOSPC (mode "enospc"), or creating files raises EACCES (mode "eacces"; a
# results directory made read-only mid-run, as root cannot be denied by chmod).
FAULTY_CLI = """
import errno, os, sys
mode, out = sys.argv[1], sys.argv[2]
state = {"parts": 0}
real_write, real_open = os.write, os.open

def is_part(path):
    return str(path).startswith(out) and "/rows/.part-" in str(path)

def write(fd, data):
    try:
        path = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        path = ""
    if mode == "enospc" and is_part(path):
        state["parts"] += 1
        if state["parts"] > 1:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    return real_write(fd, data)

def open_(path, flags, mode_=0o777, *args, **kw):
    if mode == "eacces" and flags & os.O_CREAT and str(path).startswith(out) \
            and not os.path.exists(path):
        if is_part(path):
            state["parts"] += 1
        if state["parts"] > 1:
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))
    return real_open(path, flags, mode_, *args, **kw)

os.write, os.open = write, open_
from ddlsched.cli import main
sys.exit(main(["bench", "run", *sys.argv[3:], "--out", out, "-q", "--workers", "1"]))
"""


def _faulty_run(tmp_path: Path, mode: str) -> tuple[subprocess.CompletedProcess, Path]:
    suite = write(tmp_path, PACED)
    out = tmp_path / "out"
    env = dict(os.environ, PYTHONPATH=str(SRC))
    proc = subprocess.run(
        [sys.executable, "-c", FAULTY_CLI, mode, str(out), str(suite)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    return proc, out


@pytest.mark.parametrize(
    ("mode", "reason"), [("enospc", "No space left on device"), ("eacces", "Permission denied")]
)
def test_store_fault_ends_the_cli_run_on_one_line_with_status_2(tmp_path, mode, reason):
    proc, out = _faulty_run(tmp_path, mode)
    assert proc.returncode == 2, proc.stderr
    line = one_line_error(proc.stderr)
    assert line.startswith(f"ddlsched: error: {out}/rows/part-")
    assert line.endswith(f".parquet: cannot write ({reason})")
    kept = read_rows(out)
    assert 1 <= kept.num_rows < 10  # the first part is kept, the run stopped early
    assert not [p for p in (out / "rows").iterdir() if TEMP_PATTERN.match(p.name)]
    runs = read_manifest(out)["runs"]
    # ENOSPC on row parts only: the end of the run is recorded. EACCES everywhere:
    # it cannot be, and status shows the run as interrupted, not running.
    assert runs[-1]["state"] == ("failed" if mode == "enospc" else "running")
    assert describe_runs(out, runs)[-1].state == (
        "failed" if mode == "enospc" else "interrupted (killed)"
    )
    # The next run resumes: every task exactly once.
    summary = run_suite(load_suite(tmp_path / "suite.toml"), out, workers=2)
    assert summary.skipped == kept.num_rows and not summary.interrupted
    keys = read_rows(out, dedupe=False).column("key").to_pylist()
    assert len(keys) == len(set(keys)) == 10


def test_unwritable_out_directory_is_one_line(tmp_path, capsys, monkeypatch):
    suite = write(tmp_path, TINY)
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert main(["bench", "run", str(suite), "--out", str(blocker / "out"), "-q"]) == 2
    line = one_line_error(capsys.readouterr().err)
    assert line == (
        f"ddlsched: error: {blocker}/out: cannot create the results directory (Not a directory)"
    )  # before any instance is built or cached: no warning per instance first

    # An existing directory the user may not write to (root ignores chmod: simulated).
    out = tmp_path / "ro"
    (out / "rows").mkdir(parents=True)
    real_open = os.open

    def denied(path, flags, *args, **kw):  # no new file in `out`
        if flags & os.O_CREAT and str(path).startswith(str(out)) and not os.path.exists(path):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))
        return real_open(path, flags, *args, **kw)

    monkeypatch.setattr(os, "open", denied)
    assert main(["bench", "run", str(suite), "--out", str(out), "-q", "--workers", "1"]) == 2
    line = one_line_error(capsys.readouterr().err)
    assert line == f"ddlsched: error: {out}/.lock: cannot open the run lock (Permission denied)"
    monkeypatch.undo()
    (out / ".lock").touch()  # an existing lock file opens; the first new file fails
    real_open = os.open
    monkeypatch.setattr(os, "open", denied)
    assert main(["bench", "run", str(suite), "--out", str(out), "-q", "--workers", "1"]) == 2
    line = one_line_error(capsys.readouterr().err)
    assert line == f"ddlsched: error: {out}/suite.toml: cannot write (Permission denied)"


def _chmod_denies(tmp_path: Path) -> bool:
    probe = tmp_path / "probe"
    probe.mkdir()
    probe.chmod(0o500)
    try:
        (probe / "x").touch()
    except PermissionError:
        return True
    finally:
        probe.chmod(0o700)
    return False


def test_results_directory_made_read_only_mid_run(tmp_path):
    if not _chmod_denies(tmp_path):
        pytest.skip("chmod cannot deny this user (root): covered by the EACCES simulation")
    suite = write(tmp_path, PACED)
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ddlsched.cli",
            "bench",
            "run",
            str(suite),
            "--out",
            str(out),
            "-q",
            "--workers",
            "1",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ, PYTHONPATH=str(SRC)),
    )
    try:
        deadline = time.monotonic() + 60
        while not list((out / "rows").glob("part-*.parquet")) and time.monotonic() < deadline:
            time.sleep(0.05)
        for path in (out / "rows", out):
            path.chmod(0o500)
        _, err = proc.communicate(timeout=120)
    finally:
        for path in (out, out / "rows"):
            path.chmod(0o700)
    assert proc.returncode == 2, err
    assert one_line_error(err).endswith("(Permission denied)")
    assert read_rows(out).num_rows >= 1


def test_worker_that_cannot_start_is_one_line(tmp_path, monkeypatch):
    import ddlsched.bench.executors as executors

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(executors.tempfile, "TemporaryFile", full)
    with pytest.raises(DdlschedError, match=r"^cannot start a benchmark worker: No space left"):
        run_suite(load_suite(write(tmp_path, TINY)), tmp_path / "out", workers=1)
    runs = read_manifest(tmp_path / "out")["runs"]
    assert runs[-1]["state"] == "failed"


# --------------------------------------------------------------------------- 2. stale temps


def test_stale_temporary_files_are_removed_when_the_store_is_next_opened(tmp_path, capsys):
    out = tmp_path / "out"
    run_suite(load_suite(write(tmp_path, TINY)), out, workers=1)
    hex32 = "0123456789abcdef" * 2
    stale = [
        out / f".manifest.json.{hex32}.tmp",
        out / f".suite.toml.{hex32}.tmp",
        out / "rows" / f".part-20260101T000000000000-abcdef12-000001.parquet.{hex32}.tmp",
    ]
    foreign = [out / "notes.tmp", out / f".other.{hex32}.tmp", out / "rows" / ".part-x.tmp"]
    for path in stale + foreign:
        path.write_bytes(b"partial")
    assert main(["bench", "status", str(out)]) == 0  # a reader removes nothing
    capsys.readouterr()
    assert all(p.exists() for p in stale)
    store = ResultStore(out)
    store.lock()
    store.unlock()
    assert not any(p.exists() for p in stale)
    assert all(p.exists() for p in foreign)
    assert remove_stale_temps(out, out / "rows") == []


def test_a_kill_mid_compaction_duplicates_no_row(tmp_path, monkeypatch):
    out = tmp_path / "out"
    store = ResultStore(out, flush_interval_s=0)
    store.lock()
    store.add(row("a"))
    store.add(row("b"))
    # Killed after writing the merged part, before removing the parts it replaces.
    monkeypatch.setattr(ResultStore, "_remove", staticmethod(lambda parts: None))
    store.compact()
    monkeypatch.undo()
    store.unlock()
    assert len(list((out / "rows").glob("part-*.parquet"))) == 3
    assert read_rows(out, dedupe=False).column("key").to_pylist() == ["a", "b"]
    store = ResultStore(out, flush_interval_s=0)
    store.lock()  # the next run removes the replaced parts
    assert [p.name.endswith("-compact.parquet") for p in (out / "rows").iterdir()] == [True]
    store.add(row("c"))
    store.compact()
    store.unlock()
    assert read_rows(out, dedupe=False).column("key").to_pylist() == ["a", "b", "c"]


# --------------------------------------------------------------------------- 3. killed or running


def _begin(tmp_path: Path, out: Path) -> ResultStore:
    suite = load_suite(write(tmp_path, TINY))
    store = ResultStore(out, flush_interval_s=0)
    store.lock()
    store.begin_run(suite, "local", 1, 2, 2)
    store.add(row("a"))
    return store


HOLDER = """
import sys, time
sys.path.insert(0, sys.argv[1])
from ddlsched.bench.store import ResultStore
from ddlsched.bench.suite import load_suite
store = ResultStore(sys.argv[2], flush_interval_s=0)
store.lock()
store.begin_run(load_suite(sys.argv[3]), "local", 1, 2, 2)
store.add({"key": "a", "family": "debug", "method": "noop", "status": "feasible"})
print("ready", flush=True)
time.sleep(120)
"""


def test_status_tells_a_killed_run_from_a_running_one(tmp_path, capsys):
    out = tmp_path / "out"
    write(tmp_path, TINY)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(SRC), str(out), str(tmp_path / "suite.toml")],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "ready"
        assert main(["bench", "status", str(out)]) == 0
        text = capsys.readouterr().out
        assert ": running on local x1, 1 rows" in text
        assert f"(pid {holder.pid} on " in text
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=30)
    assert main(["bench", "status", str(out)]) == 0
    text = capsys.readouterr().out
    assert ": interrupted (killed) on local x1, 1 rows" in text and "last wrote 20" in text
    assert "running" not in text
    # The next run records it as killed in the manifest.
    run_suite(load_suite(tmp_path / "suite.toml"), out, workers=1)
    states = [r["state"] for r in read_manifest(out)["runs"]]
    assert states == ["killed", "complete"]
    assert main(["bench", "status", str(out)]) == 0
    assert ": interrupted (killed) on local x1, 1 rows" in capsys.readouterr().out


def test_a_dead_writer_in_this_process_is_killed_and_unprobeable_lock_uses_the_pid(
    tmp_path, monkeypatch
):
    import ddlsched.bench.runstate as runstate

    out = tmp_path / "out"
    store = _begin(tmp_path, out)
    runs = read_manifest(out)["runs"]
    assert describe_runs(out, runs)[-1].state == "running"
    store.unlock()  # the lock goes as with a dead process; the manifest says running
    view = describe_runs(out, runs)[-1]
    assert view.state == "interrupted (killed)" and view.rows == 1
    # No lock to probe (another filesystem, no fcntl): the recorded pid decides.
    monkeypatch.setattr(runstate, "lock_held", lambda directory: None)
    assert describe_runs(out, runs)[-1].state == "running"  # our pid is alive
    script = "import os; print(os.getpid())"
    dead = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True).stdout
    runs[-1]["pid"] = int(dead)
    assert describe_runs(out, runs)[-1].state == "interrupted (killed)"
    runs[-1]["host"] = "elsewhere"
    assert describe_runs(out, runs)[-1].state == "running?"  # cannot tell


# --------------------------------------------------------------------------- 4. retry


def test_retry_failed_reruns_exactly_the_failed_rows_after_a_limit_is_raised(tmp_path, capsys):
    out = tmp_path / "out"
    suite = load_suite(write(tmp_path, LIMITED.replace("KILL", KILL_SHORT)))
    first = run_suite(suite, out, workers=2)
    assert first.status_counts == {"feasible": 3, "time_limit": 3}
    failed_keys = {r["key"] for r in read_rows(out).to_pylist() if r["status"] == "time_limit"}

    raised = load_suite(write(tmp_path, LIMITED.replace("KILL", KILL_LONG)))
    assert [t.key for t in expand(raised)] == [t.key for t in expand(suite)]  # limits: no key
    assert run_suite(raised, out, workers=2).done == 0  # a plain run keeps every row
    assert main(["bench", "status", str(out)]) == 0
    text = capsys.readouterr().out
    assert "--retry failed: 3 row(s), --retry time_limit: 3 row(s), --retry error: 0" in text
    assert "6 row(s) ran under other limits than the suite's now" in text

    retried = run_suite(raised, out, workers=2, retry=["failed"])
    assert (retried.done, retried.retried, retried.skipped) == (3, 3, 3)
    assert retried.status_counts == {"feasible": 3}
    table = read_rows(out).to_pylist()
    assert len(table) == 6 and {r["status"] for r in table} == {"feasible"}
    assert {r["key"] for r in table if r["kill_after_s"] == float(KILL_LONG)} == failed_keys
    history = read_rows(out, dedupe=False).to_pylist()
    assert len(history) == 9
    assert sorted(r["status"] for r in history if r["key"] in failed_keys) == (
        ["feasible"] * 3 + ["time_limit"] * 3
    )
    assert run_suite(raised, out, workers=2, retry=["failed,error"]).done == 0
    assert main(["bench", "status", str(out)]) == 0
    assert "rows       6 (3 earlier attempt(s) kept in the history)" in capsys.readouterr().out


def test_retry_kinds_and_cli(tmp_path, capsys):
    assert parse_retry(["failed,error", "time_limit"]) == {"failed", "error", "time_limit"}
    with pytest.raises(DdlschedError, match="--retry: unknown kind 'oops'"):
        parse_retry(["failed,oops"])
    rows = [
        {"status": "error"},
        {"status": "time_limit"},
        {"status": "time_limit_no_solution"},
        {"status": "feasible", "time_limit_hit": True},
        {"status": "feasible", "time_limit_hit": False},
        {"status": "optimal"},
        {"status": "infeasible"},
    ]
    assert retry_counts(rows) == {"failed": 3, "time_limit": 3, "error": 1}
    assert not wants_retry({"status": "infeasible"}, {"failed", "time_limit", "error"})
    suite = write(tmp_path, TINY)
    assert main(["bench", "run", str(suite), "--out", str(tmp_path / "o"), "--retry", "x"]) == 2
    assert one_line_error(capsys.readouterr().err).endswith(
        "--retry: unknown kind 'x' (expected failed, time_limit, error)"
    )
    assert not (tmp_path / "o").exists()
    assert main(["bench", "run", "--help"]) == 0
    assert "--retry KIND" in capsys.readouterr().out


def test_methods_differing_only_in_limits_are_refused(tmp_path):
    text = LIMITED.replace("KILL", "10") + '[[methods]]\nname = "sleep"\nlabel = "sleep_long"\n'
    text += "sweep = { seconds = [0.01, 1.0] }\nkill_after_s = 50\n"
    with pytest.raises(SuiteError, match="run the same tasks"):
        expand(load_suite(write(tmp_path, text)))


# --------------------------------------------------------------------------- 5. read gate


def _stored(tmp_path: Path) -> Path:
    out = tmp_path / "out"
    run_suite(load_suite(write(tmp_path, TINY)), out, workers=1)
    return out


def _corrupt_cases(out: Path) -> list[tuple[Path, bytes]]:
    part = next((out / "rows").glob("part-*.parquet"))
    data = part.read_bytes()
    foreign = pa.BufferOutputStream()
    pq.write_table(pa.table({"x": [1, 2]}), foreign)
    return [
        (part, data[: len(data) // 2]),  # truncated
        (part, b""),  # empty
        (part, b"PAR1" + bytes(range(256)) * 4 + b"PAR1"),  # garbage
        (part, foreign.getvalue().to_pybytes()),  # not a result part
        (out / "manifest.json", b'{"runs": [1, 2'),  # truncated JSON
        (out / "manifest.json", b'{"runs": 5}'),  # not a manifest
        (out / "manifest.json", b"\xff\xfe"),  # not UTF-8
    ]


@pytest.mark.parametrize("case", range(7))
def test_corrupt_results_files_are_one_line_errors_naming_them(tmp_path, capsys, case):
    out = _stored(tmp_path)
    path, data = _corrupt_cases(out)[case]
    path.write_bytes(data)
    commands = [["status"], ["run", str(tmp_path / "suite.toml"), "--out", str(out), "-q"]]
    if path.suffix == ".parquet":
        commands += [["table"], ["plot"]]
    for command in commands:
        argv = ["bench", command[0], *(command[1:] or [str(out)])]
        assert main(argv) == 2, argv
        line = one_line_error(capsys.readouterr().err)
        assert line.startswith(f"ddlsched: error: {path}: "), line
    assert json.loads(json.dumps(line))  # printable


def test_a_results_directory_that_cannot_be_made_is_one_line_before_any_instance(tmp_path, capsys):
    suite = tmp_path / "rar.toml"
    suite.write_text(
        '[suite]\nname = "r"\n\n[[instances]]\nfamily = "rar"\npreset = "small"\n'
        'seeds = { first = 0, count = 6 }\n\n[[methods]]\nname = "ff"\n'
    )
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert main(["bench", "run", str(suite), "--out", str(blocker / "out"), "-q"]) == 2
    line = one_line_error(capsys.readouterr().err)  # no warning per instance cached first
    assert line.endswith("cannot create the results directory (Not a directory)")
