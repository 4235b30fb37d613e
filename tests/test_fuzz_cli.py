"""Fuzzing the CLI in-process (issue 13, item 8): malformed instance files, flags,
suites and trace rows. Whatever the input, ``ddlsched`` answers with exit 0
(or 1: a method's own error status, printed as a result) or with exit 2 and
exactly one line ``ddlsched: error: ...`` on stderr, never a traceback, and a
``--json`` answer is JSON without NaN or infinity.

Bounded run time: a few dozen examples per property, every method run with a
small time limit (the whole file takes well under a minute).
"""

from __future__ import annotations

import copy
import json
import math
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ddlsched.cli import main
from ddlsched.registry import get_family

# CI draws the same examples on every run (it cannot flake on a new draw); a longer,
# random campaign: DDLSCHED_FUZZ_EXAMPLES=500 DDLSCHED_FUZZ_RANDOM=1 pytest tests/test_fuzz_cli.py
SETTINGS = settings(
    max_examples=int(os.environ.get("DDLSCHED_FUZZ_EXAMPLES", "40")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    derandomize=not os.environ.get("DDLSCHED_FUZZ_RANDOM"),
)

# Cheap presets and methods per family: a valid mutant is solved within a second.
FAMILIES = {
    "rar": ("small", "sjf_bco"),
    "placement": ("small", "heavy_edge"),
    "muri": ("small", "blossom"),
    "asrpt": ("tiny", "asrpt"),
    "dmlrs": ("tiny", "fifo"),
    "dmlrs_slot": ("synthetic", "internal"),
}

HOSTILE_TEXT = [
    "-1", "0", "1", "2", "1.5", "1e12", "1e400", "-1e400", "nan", "inf", "-inf", "NaN", "abc", "",
    " ", "1" * 60, str(2**70), "[[1]]", "{}", "[]", "true", "false", "maybe", "null",
    "tcp://", "tcp://host:99999", "../../etc/passwd", "\x00", "é", "1,2,,3",
]  # fmt: skip

hostile_scalar = st.one_of(
    st.sampled_from([0, -1, 1, 2**70, -(2**70), 10**400, True, False, None, "", "x" * 200]),
    st.integers(min_value=-5, max_value=5),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
)
hostile_json = st.recursive(
    hostile_scalar,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)


def _answer(argv: list[str], capsys) -> tuple[int, str]:
    """Run the CLI; assert the contract on its exit code and stderr; return (code, stdout)."""
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err, (argv, err)
    assert code in (0, 1, 2), (argv, code, err)
    if code == 2:
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("ddlsched: error:"), (argv, err)
    return code, out


def _paths(value, prefix=()):
    """Every path into a JSON value (dict keys and list positions)."""
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value[:4]):
            yield from _paths(item, (*prefix, index))


@pytest.fixture(scope="module")
def valid_instances():
    out = {}
    for family, (preset, _method) in FAMILIES.items():
        out[family] = get_family(family).generate(preset, 0).to_dict()
    return out


def _mutate(data, choice: int, action: str, value):
    paths = [p for p in _paths(data) if p]
    path = paths[choice % len(paths)]
    data = copy.deepcopy(data)
    parent = data
    for key in path[:-1]:
        parent = parent[key]
    last = path[-1]
    if action == "delete" and isinstance(parent, dict):
        del parent[last]
    elif action == "duplicate" and isinstance(parent, list):
        parent.append(copy.deepcopy(parent[last]))
    else:
        parent[last] = value
    return data


def _dump(data) -> str:
    """JSON text, with Python's NaN/Infinity tokens and huge integers as they come."""
    return json.dumps(data, allow_nan=True)


@pytest.mark.parametrize("family", sorted(FAMILIES))
@SETTINGS
@given(
    choice=st.integers(min_value=0, max_value=10_000),
    action=st.sampled_from(["replace", "replace", "delete", "duplicate"]),
    value=hostile_json,
)
def test_malformed_instance_files_get_one_line(
    family, choice, action, value, valid_instances, tmp_path, capsys
):
    data = _mutate(valid_instances[family], choice, action, value)
    path = tmp_path / "instance.json"
    path.write_text(_dump(data))
    code, _ = _answer(["instance", "check", family, path], capsys)
    if code != 0:
        return
    method = FAMILIES[family][1]
    code, out = _answer(
        ["solve", family, path, "--method", method, "--time-limit", "5", "--json"], capsys
    )
    if code in (0, 1):
        result = json.loads(out, parse_constant=lambda name: pytest.fail(f"{name} in --json"))
        for key in ("objective", "bound"):
            assert result[key] is None or math.isfinite(result[key])
        assert result["status"] != "optimal" or result["objective"] is not None


@SETTINGS
@given(raw=st.binary(max_size=300), cut=st.integers(min_value=0, max_value=2000))
def test_arbitrary_bytes_and_truncated_files_get_one_line(
    raw, cut, valid_instances, tmp_path, capsys
):
    path = tmp_path / "instance.json"
    text = _dump(valid_instances["rar"]).encode()
    path.write_bytes(raw if cut % 2 else text[: cut % len(text)] + raw)
    _answer(["instance", "check", "rar", path], capsys)


value_text = st.one_of(
    st.sampled_from(HOSTILE_TEXT), st.integers(min_value=-3, max_value=3).map(str)
)


@SETTINGS
@given(
    family=st.sampled_from(sorted(FAMILIES)),
    seed=value_text,
    key=st.sampled_from(["num_jobs", "num_servers", "max_horizon", "jobs", "colour", "job_mix"]),
    value=value_text,
)
def test_generate_flags_get_one_line(family, seed, key, value, tmp_path, capsys):
    preset = FAMILIES[family][0]
    argv = ["instance", "generate", family, "--preset", preset, "--seed", seed]
    _answer([*argv, "--set", f"{key}={value}", "-o", tmp_path / "g.json"], capsys)


@SETTINGS
@given(
    limit=value_text,
    seed=value_text,
    backend=st.sampled_from(["highs", "scip", "cplex", ""]),
    param=st.sampled_from(["kappa", "theta", "presolve_bounds", "nope", ""]),
    value=value_text,
)
def test_solve_flags_get_one_line(limit, seed, backend, param, value, tmp_path, capsys):
    path = tmp_path / "r.json"
    if not path.exists():
        get_family("rar").generate("small", 0).save(path)
    method = "exact" if param == "presolve_bounds" else "sjf_bco"
    argv = ["solve", "rar", path, "--method", method, "--time-limit", limit, "--seed", seed]
    _answer([*argv, "--backend", backend, "--param", f"{param}={value}", "--json"], capsys)


@SETTINGS
@given(
    command=st.sampled_from(["run", "status", "table", "validate"]),
    flag=st.sampled_from(["--limit", "--workers", "--errors", "--dask", "--retry", "--format"]),
    value=value_text,
)
def test_bench_flags_get_one_line(command, flag, value, tmp_path, capsys):
    suite = tmp_path / "s.toml"
    suite.write_text(
        f'[suite]\nname = "fuzz"\noutput = "{tmp_path / "out"}"\n[limits]\ntime_limit_s = 2\n'
        '[[instances]]\nfamily = "rar"\npreset = "small"\nseeds = { first = 0, count = 1 }\n'
        '[[methods]]\nname = "sjf_bco"\n'
    )
    target = suite if command in ("run", "validate") else tmp_path / "out"
    _answer(["bench", command, target, flag, value], capsys)


SUITE_FIELDS = {
    "count": "seeds = {{ first = 0, count = {v} }}",
    "time_limit_s": "time_limit_s = {v}",
    "kill_after_s": "kill_after_s = {v}",
    "memory_mb": "memory_mb = {v}",
    "backend": "backend = {v}",
    "method_param": "params = {{ kappa = {v} }}",
    "preset_param": "params = {{ num_jobs = {v} }}",
    "method": "name = {v}",
}
toml_value = st.sampled_from(
    ["0", "-3", "1", "2", "1.5", "nan", "inf", "-inf", "1e400", '"abc"', '""', "true",
     "[1, 2]", "{}", "1000000", str(2**70), '"highs"', '"gurobi"', '"sjf_bco"', '"nope"',
     "[[[[[[[[1]]]]]]]]"]
)  # fmt: skip


@SETTINGS
@given(field=st.sampled_from(sorted(SUITE_FIELDS)), value=toml_value)
def test_malformed_suites_get_one_line(field, value, tmp_path, capsys):
    line = SUITE_FIELDS[field].format(v=value)
    limits = line if field in ("time_limit_s", "kill_after_s", "memory_mb", "backend") else ""
    seeds = line if field == "count" else "seeds = { first = 0, count = 1 }"
    preset = line if field == "preset_param" else ""
    method = line if field == "method" else 'name = "sjf_bco"'
    mparams = line if field == "method_param" else ""
    text = (
        f'[suite]\nname = "fuzz"\noutput = "{tmp_path / "out"}"\n[limits]\ntime_limit_s = 2\n{limits}\n'
        f'[[instances]]\nfamily = "rar"\npreset = "small"\n{seeds}\n{preset}\n'
        f"[[methods]]\n{method}\n{mparams}\n"
    )
    if field == "time_limit_s":
        text = text.replace("time_limit_s = 2\n", "", 1)
    suite = tmp_path / "s.toml"
    suite.write_text(text)
    _answer(["bench", "validate", suite], capsys)


MURI_HEADER = (
    "job_id,num_gpu,submit_time,iterations,model_name,batch_size,duration,interval,"
    "iteration_time,resource_time_0,resource_time_1,resource_time_2,priority"
)
cell = st.one_of(
    st.sampled_from(["1", "2", "0", "-1", "1.5", "nan", "inf", "", "x", str(2**70), "1e400"]),
    st.text(
        alphabet=st.characters(blacklist_characters=",\n\r", blacklist_categories=("Cs",)),
        max_size=4,
    ),
)


@settings(SETTINGS, max_examples=25)
@given(rows=st.lists(st.lists(cell, min_size=11, max_size=14), min_size=1, max_size=3))
def test_malformed_trace_rows_get_one_line(rows, tmp_path, capsys):
    path = tmp_path / "t.csv"
    body = "\n".join(",".join(row) for row in rows)
    path.write_text(f"{MURI_HEADER}\n{body}\n")
    argv = ["simulate", "muri", "--policy", "srtf", "--trace", path, "--time-limit", "5"]
    _answer(argv, capsys)
