"""Suites and traces through the input gate, tried as a hostile user would.

Every case goes through the CLI in-process: a refused file is exit status 2
and exactly one ``ddlsched: error:`` line naming the file, the field (or the
line and column) and the value, never a traceback. ``bench validate``
checks what a run would check task by task (problems listed one line each
with the tasks they fail), and ``bench run`` refuses the same suite before
any task runs. Every shipped suite still validates.
"""

from __future__ import annotations

import json
import os
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from ddlsched.datadir import data_dir

SUITES = Path(__file__).resolve().parents[1] / "benchmarks" / "suites"
SHARED = data_dir()


@pytest.fixture(autouse=True)
def _results_in_tmp(tmp_path, monkeypatch):
    """``bench validate`` caches instances in the suite's results directory, relative to
    the working directory (``results/<name>/instances``): keep it out of the repository,
    and keep a cache left by an earlier run from changing what a test sees."""
    monkeypatch.chdir(tmp_path)


def refused(cli, argv: list[str], *needles: str) -> str:
    """``cli(*argv)`` exits 2 with one ``ddlsched: error:`` line holding every needle, no
    traceback."""
    code, _, err = cli(*argv)
    assert code == 2, err
    assert "Traceback" not in err, err
    errors = [line for line in err.splitlines() if line.startswith("ddlsched: error:")]
    assert len(errors) == 1, err
    for needle in needles:
        assert needle in errors[0], errors[0]
    return err


# --------------------------------------------------------------------------- suites

BASE = """\
[suite]
name = "t"
[limits]
time_limit_s = 5
[[instances]]
family = "rar"
preset = "small"
seeds = [0, 1]
[[methods]]
name = "sjf_bco"
[[methods]]
name = "ff"
"""


def suite(tmp_path: Path, text: str | bytes = BASE, name: str = "s.toml") -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(textwrap.dedent(text))
    return path


SUITE_CASES = {
    "deep nesting": (
        lambda: BASE + "x = " + "[" * 5000 + "]" * 5000 + "\n",
        ["not valid TOML (line 13, column", "nested more than 32 levels"],
    ),
    "nesting under the recursion limit": (
        lambda: BASE.replace(
            "seeds = [0, 1]", "seeds = [0, 1]\nparams = { a = " + "[" * 40 + "]" * 40 + " }"
        ),
        ["instances[0].params.a[0]", "nested more than 32 levels"],
    ),
    "5,000-digit integer": (
        lambda: BASE.replace("seeds = [0, 1]", "seeds = [0, " + "9" * 5000 + "]"),
        ["not valid TOML (line 8, column 13", "64-bit"],
    ),
    "2**70": (
        lambda: BASE.replace(
            "seeds = [0, 1]", f"seeds = [0, 1]\nparams = {{ num_jobs = {2**70} }}"
        ),
        ["instances[0].params.num_jobs", str(2**70), "64-bit"],
    ),
    "nan": (
        lambda: BASE.replace("seeds = [0, 1]", "seeds = [0, 1]\nparams = { load = nan }"),
        ["instances[0].params.load", "nan is not a finite number"],
    ),
    "inf time limit": (
        lambda: BASE.replace("time_limit_s = 5", "time_limit_s = inf"),
        ["limits.time_limit_s", "inf is not a finite number"],
    ),
    "1e400": (
        lambda: BASE.replace("time_limit_s = 5", "time_limit_s = 1e400"),
        ["limits.time_limit_s", "inf is not a finite number"],
    ),
    "invalid UTF-8": (
        lambda: BASE.encode().replace(b'name = "t"', b'name = "t"\n# caf\xe9'),
        ["not UTF-8 (line 3, column 6: byte 0xe9)"],
    ),
    "syntax error": (
        lambda: BASE + "[suite]\nx = 1\n",
        ["not valid TOML (line 13, column 7", "Cannot declare"],
    ),
    "unclosed table": (lambda: "[suite\n", ["not valid TOML (line 1, column 7"]),
    "seed count 1,000,000": (
        lambda: BASE.replace("seeds = [0, 1]", "seeds = { first = 0, count = 1000000 }"),
        ["instances[0].seeds.count", "100,000", "1000000"],
    ),
    "too many tasks": (
        lambda: BASE.replace(
            "seeds = [0, 1]", "seeds = { first = 0, count = 100000 }\nsweep = { num_jobs = [4, 5] }"
        ),
        ["400,000 tasks", "max_tasks = 200,000"],
    ),
    "max_tasks lowered": (
        lambda: BASE.replace("time_limit_s = 5", "time_limit_s = 5\nmax_tasks = 3"),
        ["4 tasks, more than limits.max_tasks = 3"],
    ),
    "memory_mb too small": (
        lambda: BASE.replace("time_limit_s = 5", "time_limit_s = 5\nmemory_mb = 64"),
        ["limits.memory_mb", ">= 256", "got 64"],
    ),
    "kill_after_s too short": (
        lambda: BASE.replace("time_limit_s = 5", "time_limit_s = 5\nkill_after_s = 0.5"),
        ["limits.kill_after_s", ">= 1", "got 0.5"],
    ),
    "method kill_after_s zero": (
        lambda: BASE + "kill_after_s = 0\n",
        ["methods[1].kill_after_s", ">= 1", "got 0"],
    ),
    "time limit zero": (
        lambda: BASE.replace("time_limit_s = 5", "time_limit_s = 0"),
        ["limits.time_limit_s", "got 0"],
    ),
    "unknown backend": (
        lambda: BASE.replace("time_limit_s = 5", 'time_limit_s = 5\nbackend = "gurobi"'),
        ["limits.backend: unknown backend 'gurobi'", "[4 of 4 task(s)]"],
    ),
    "method parameter of the wrong type": (
        lambda: BASE.replace('name = "sjf_bco"', 'name = "sjf_bco"\nparams = { kappa = "abc" }'),
        ["methods[0].params (sjf_bco)", "kappa", "'abc'", "[2 of 4 task(s)]"],
    ),
    "method parameter out of range": (
        lambda: BASE + "params = { u = -5.0 }\n",
        ["methods[1].params (ff)", "u must be float > 0, got -5.0", "[2 of 4 task(s)]"],
    ),
    "unknown method parameter": (
        lambda: BASE + "params = { colour = 3 }\n",
        ["methods[1].params.colour", "no parameter 'colour'"],
    ),
    "unknown preset parameter": (
        lambda: BASE.replace("seeds = [0, 1]", "seeds = [0, 1]\nparams = { colour = 3 }"),
        ["instances[0] (small/s0 and 1 more instance(s))", "colour", "[4 of 4 task(s)]"],
    ),
    "preset parameter out of range": (
        lambda: BASE.replace("seeds = [0, 1]", "seeds = [0, 1]\nsweep = { num_jobs = [4, -3] }"),
        ["instances[0] (small/s0,num_jobs=-3 and 1 more instance(s))", "[4 of 8 task(s)]"],
    ),
}


@pytest.mark.parametrize("case", sorted(SUITE_CASES))
def test_hostile_suites(tmp_path, cli, case):
    make, needles = SUITE_CASES[case]
    path = suite(tmp_path, make())
    refused(cli, ["bench", "validate", path], f"{path}: ", *needles)


def test_suite_with_a_byte_order_mark_validates(tmp_path, cli):
    path = suite(tmp_path, b"\xef\xbb\xbf" + BASE.encode())
    code, out, err = cli(*["bench", "validate", path])
    assert code == 0 and "valid suite 't'" in out, err


@pytest.mark.parametrize("where", ["directory", "/dev/zero", "missing"])
def test_suite_that_is_not_a_regular_file(tmp_path, cli, where):
    path = {"directory": tmp_path, "/dev/zero": Path("/dev/zero"), "missing": tmp_path / "x"}[where]
    needle = "no such file" if where == "missing" else "not a regular file"
    for command in ("validate", "run"):
        refused(cli, ["bench", command, path], f"{path}: {needle}")


def test_problems_are_grouped_and_run_refuses_before_any_task(tmp_path, cli):
    text = BASE.replace("seeds = [0, 1]", "seeds = [0, 1, 2]\nparams = { num_jobs = -3 }") + (
        'params = { u = -5.0 }\n[[methods]]\nname = "ls"\nbackend = "nope"\n'
    )
    path = suite(tmp_path, text)
    err = refused(cli, ["bench", "validate", path], "3 problems (above) would fail 9 of 9")
    lines = err.splitlines()
    assert len(lines) == 4, err
    assert lines[0].startswith(f"{path}: methods[1].params (ff): ") and "[3 of 9" in lines[0]
    assert lines[1].startswith(f"{path}: methods[2].backend: unknown backend 'nope'")
    assert lines[2].startswith(f"{path}: instances[0] (small/s0 and 2 more instance(s)): ")
    assert lines[2].endswith("[9 of 9 task(s)]")
    out = tmp_path / "results"
    err = refused(
        cli, ["bench", "run", path, "--out", out, "-q"], "3 problems would fail", "validate"
    )
    assert err.count("\n") == 1 and not out.exists()


def test_instance_files_are_loaded_through_the_gate(tmp_path, cli):
    from ddlsched.registry import get_family

    (tmp_path / "inst").mkdir()
    get_family("rar").generate("small", 0).save(tmp_path / "inst" / "a.json")
    (tmp_path / "inst" / "b.json").write_text('{"family": "rar", "x": NaN}')
    os.symlink("/dev/zero", tmp_path / "inst" / "c.json")
    text = BASE.replace('preset = "small"\nseeds = [0, 1]', 'files = ["inst/*.json"]')
    path = suite(tmp_path, text)
    err = refused(cli, ["bench", "validate", path], "2 problems (above) would fail 4 of 6")
    assert "instances[0] (inst/b.json): " in err and "NaN is not a finite number" in err
    assert "instances[0] (inst/c.json): " in err and "not a regular file" in err


def test_a_huge_instance_does_not_hang_validate(tmp_path, cli, monkeypatch):
    monkeypatch.setenv("DDLSCHED_CHECK_BUDGET_S", "1")
    text = """\
    [suite]
    name = "h"
    [[instances]]
    family = "dmlrs"
    preset = "tiny"
    seeds = [0, 1]
    sweep = { jobs = [3, 100000] }
    [[methods]]
    name = "fifo"
    """
    code, out, err = cli(*["bench", "validate", suite(tmp_path, text)])
    assert code == 0, err
    # the check's budget cut it: which point was still being built depends on the speed
    assert "not checked, still being built when the 1 s budget ran out" in out, out
    assert "built within the 1 s budget" in out and "jobs=100000): checked" not in out, out


@pytest.mark.parametrize("path", sorted(SUITES.glob("*.toml")), ids=lambda p: p.name)
def test_shipped_suites_validate(path, cli, monkeypatch):
    if SHARED is None and "DDLSCHED_DATA" in path.read_text():
        pytest.skip("needs the shared data directory")
    monkeypatch.setenv("DDLSCHED_CHECK_BUDGET_S", "2")  # every instance: bench validate
    code, out, err = cli(*["bench", "validate", path])
    assert code == 0 and "valid suite" in out, err


# --------------------------------------------------------------------------- traces


@dataclass(frozen=True)
class Reader:
    """One trace reader, a tiny good file in its format, and the command that reads it."""

    columns: tuple[str, ...] | None  # None: headerless (PAI)
    rows: tuple[tuple[str, ...], ...]
    id_col: int | None  # the job id column (duplicates refused), if any
    int_col: int
    float_col: int
    location: str  # where the file goes, under tmp_path
    command: tuple[str, ...]  # {tmp} is tmp_path

    @property
    def first_line(self) -> int:
        return 1 if self.columns is None else 2


MURI_COLUMNS = (
    *("job_id", "num_gpu", "submit_time", "iterations", "model_name", "batch_size"),
    *("duration", "interval", "iteration_time", "resource_time_0", "resource_time_1"),
    *("resource_time_2", "priority"),
)
MURI_ROWS = (
    ("1", "1", "0", "100", "resnet18", "64", "1000", "0", "10.0", "1.0", "5.0", "4.0", "0"),
    ("2", "2", "500", "100", "resnet18", "64", "1000", "0", "10.0", "1.0", "5.0", "4.0", "0"),
)
SIM = ("simulate", "muri", "--policy", "srtf", "--trace")
READERS = {
    "muri": Reader(MURI_COLUMNS, MURI_ROWS, 0, 1, 9, "t.csv", (*SIM, "{tmp}/t.csv")),
    "muri sample": Reader(
        MURI_COLUMNS,
        MURI_ROWS,
        0,
        1,
        10,
        "data/traces/muri/x.csv",
        (
            "instance",
            "generate",
            "muri",
            "--preset",
            "trace",
            "--set",
            "trace=x",
            "-o",
            "{tmp}/o.json",
        ),
    ),
    "philly": Reader(
        ("timestamp", "duration", "num_gpus", "gpu_time", "cluster"),
        (
            ("2017-10-09 07:01:55", "66.0", "1", "66.0", "vc1"),
            ("2017-10-09 07:02:55", "60.0", "1", "60.0", "vc1"),
        ),
        None,
        2,
        1,
        "data/traces/philly/philly.csv",
        (*SIM, "philly"),
    ),
    "itp": Reader(
        ("job_id", "submission_time", "duration", "num_gpu"),
        (("a", "0", "100", "1"), ("b", "5", "100", "1")),
        0,
        3,
        2,
        "data/traces/itp/raw-traces/cluster01.csv",
        (*SIM, "itp:cluster01"),
    ),
    "tiresias": Reader(
        ("job_id", "num_gpu", "submit_time", "iterations", "model_name", "duration", "interval"),
        (
            ("1", "1", "0", "100", "resnet18", "10", "0"),
            ("2", "1", "5", "100", "resnet18", "10", "0"),
        ),
        0,
        1,
        5,
        "data/traces/tiresias/60_job.csv",
        (*SIM, "tiresias"),
    ),
    "pai": Reader(
        None,
        (
            ("j1", "i1", "u1", "Terminated", "100", "400"),
            ("j2", "i2", "u1", "Terminated", "110", "300"),
        ),
        0,
        4,
        4,
        "pai/pai_job_table.csv",
        (
            "instance",
            "generate",
            "asrpt",
            "--preset",
            "trace",
            "--set",
            "trace=pai:{tmp}/pai",
            "-o",
            "{tmp}/o.json",
        ),
    ),
}


def _text(reader: Reader, rows) -> str:
    lines = [] if reader.columns is None else [",".join(reader.columns)]
    return "".join(line + "\n" for line in [*lines, *(",".join(r) for r in rows)])


def _with(reader: Reader, column: int, value: str) -> str:
    rows = [list(r) for r in reader.rows]
    rows[1][column] = value
    return _text(reader, rows)


def _without(reader: Reader, column: int) -> str:
    cut = [tuple(v for k, v in enumerate(row) if k != column) for row in reader.rows]
    if reader.columns is None:
        return _text(reader, cut)
    names = tuple(c for k, c in enumerate(reader.columns) if k != column)
    return _text(Reader(names, (), None, 0, 0, "", ()), cut)


def _bad_byte(reader: Reader) -> bytes:
    lines = _text(reader, reader.rows).encode().splitlines(keepends=True)
    lines[reader.first_line] = b"\xff" + lines[reader.first_line]
    return b"".join(lines)


# case: (applies to the reader?, file bytes (or None: special), needles given line L2 of row 2)
TRACE_CASES = {
    "duplicate job id": (
        lambda r: r.id_col is not None,
        lambda r: _with(r, r.id_col, r.rows[0][r.id_col]).encode(),
        lambda r, l2: ["duplicate", repr(r.rows[0][r.id_col]), f"line {l2}", f"line {l2 - 1}"],
    ),
    "2**70": (
        lambda r: True,
        lambda r: _with(r, r.int_col, str(2**70)).encode(),
        lambda r, l2: [f"line {l2}", str(2**70), "2**53"],
    ),
    "inf": (
        lambda r: True,
        lambda r: _with(r, r.float_col, "inf").encode(),
        lambda r, l2: [f"line {l2}", "'inf'", "not a finite number"],
    ),
    "nan": (
        lambda r: True,
        lambda r: _with(r, r.float_col, "nan").encode(),
        lambda r, l2: [f"line {l2}", "'nan'", "not a finite number"],
    ),
    "invalid UTF-8": (
        lambda r: True,
        _bad_byte,
        lambda r, l2: [f"not UTF-8 (line {l2}, column 1: byte 0xff)"],
    ),
    "empty": (
        lambda r: True,
        lambda r: b"",
        lambda r, l2: ["empty file" if r.columns else "no data rows"],
    ),
    "header only": (
        lambda r: r.columns is not None,
        lambda r: _text(r, []).encode(),
        lambda r, l2: ["no data rows"],
    ),
    "missing column": (
        lambda r: True,
        lambda r: _without(r, r.float_col).encode(),
        lambda r, l2: ["missing column" if r.columns else "a column is missing"],
    ),
    "column named twice": (
        lambda r: r.columns is not None,
        lambda r: _text(
            Reader((*r.columns, r.columns[0]), (), None, 0, 0, "", ()),
            [(*row, "x") for row in r.rows],
        ).encode(),
        lambda r, l2: [f"column(s) {r.columns[0]!r} named twice"],
    ),
    "huge": (lambda r: True, None, lambda r, l2: ["bytes, more than the 1,073,741,824"]),
    "directory": (lambda r: True, None, lambda r, l2: ["not a regular file (a directory)"]),
    "device": (lambda r: True, None, lambda r, l2: ["not a regular file (a device"]),
}


def _place(reader: Reader, tmp_path: Path, case: str, content: bytes | None) -> Path:
    path = tmp_path / reader.location
    path.parent.mkdir(parents=True, exist_ok=True)
    if reader.location.startswith("pai/"):  # a good task table beside the job table
        (path.parent / "pai_task_table.csv").write_text(
            "j1,worker,1,Terminated,105,350,600,29.3,100,V100\n"
            "j2,worker,1,Terminated,111,200,600,29.3,100,V100\n"
        )
    if case == "huge":
        with path.open("wb") as handle:  # sparse: nothing is written, nothing read
            handle.truncate(1024**3 + 1)
    elif case == "directory":
        path.mkdir()
    elif case == "device":
        os.symlink("/dev/zero", path)
    else:
        path.write_bytes(content)
    return path


def _argv(reader: Reader, tmp_path: Path) -> list[str]:
    return [part.replace("{tmp}", str(tmp_path)) for part in reader.command]


@pytest.fixture
def data(tmp_path, monkeypatch):
    """A data directory of hostile traces (the Muri profiles linked from the real one)."""
    if SHARED is None:
        pytest.skip("needs the shared data directory (Muri profiles)")
    muri = tmp_path / "data" / "traces" / "muri"
    muri.mkdir(parents=True)
    for name in ("trace1", "trace2", "trace3", "trace4"):
        os.symlink(SHARED / "traces" / "muri" / f"{name}.csv", muri / f"{name}.csv")
    monkeypatch.setenv("DDLSCHED_DATA", str(tmp_path / "data"))
    monkeypatch.setenv("DDLSCHED_DATA_VERIFY", "0")  # hostile files under registered names
    return tmp_path


@pytest.mark.parametrize(
    ("reader", "case"),
    [
        (reader, case)
        for reader in sorted(READERS)
        for case in sorted(TRACE_CASES)
        if TRACE_CASES[case][0](READERS[reader])
    ],
)
def test_hostile_traces(data, cli, reader, case):
    _, make, needles = TRACE_CASES[case]
    spec = READERS[reader]
    path = _place(spec, data, case, make(spec) if make else None)
    refused(cli, _argv(spec, data), str(path), *needles(spec, spec.first_line + 1))


@pytest.mark.parametrize("reader", ["muri", "muri sample", "philly", "itp", "tiresias"])
def test_byte_order_mark_tolerated_by_every_trace_reader(data, cli, reader):
    spec = READERS[reader]
    _place(spec, data, "bom", b"\xef\xbb\xbf" + _text(spec, spec.rows).encode())
    code, _, err = cli(*_argv(spec, data))
    assert code == 0, err
    if reader == "muri sample":
        picked = json.loads((data / "o.json").read_text())
        assert picked["family"] == "muri"


def test_hostile_trace_named_by_a_suite_fails_validate(data, cli):
    path = _place(READERS["muri"], data, "x", _with(READERS["muri"], 0, "1").encode())
    text = f"""\
    [suite]
    name = "m"
    [[instances]]
    family = "muri_sim"
    preset = "trace"
    seeds = [0]
    params = {{ trace = "{path}" }}
    [[methods]]
    name = "srtf"
    [[methods]]
    name = "srsf"
    """
    refused(
        cli,
        ["bench", "validate", suite(data, text)],
        f"instances[0] (trace/s0): {path}, line 3: duplicate job_id '1' (also on line 2)",
        "[2 of 2 task(s)]",
    )
