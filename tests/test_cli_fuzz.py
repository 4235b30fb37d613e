"""Fuzzing the CLI in-process: malformed instance files, flags,
suites and trace rows. Whatever the input, ``ddlsched`` answers with exit 0
(or 1: a method's own error status, printed as a result) or with exit 2 and
exactly one line ``ddlsched: error: ...`` on stderr, never a traceback, and a
``--json`` answer is JSON without NaN or infinity.

Every registered family is fuzzed (:func:`ddlsched.registry.families`, no list
kept by hand: a new family cannot escape): its smoke instance, mutated with
hostile values (numbers at and beyond what a float or a model holds, empty
lists, wrong types), is checked and solved by its cheapest heuristic (function calls
counted once on the smoke instance), and a method drawn from all of its methods; its
presets' ``--set`` names and its methods' ``--param`` names get hostile values.

Bounded run time: a few dozen examples per property, every method run with a
small time limit (the whole file takes about a minute).
"""

from __future__ import annotations

import copy
import functools
import json
import math
import os
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ddlsched.cli import main
from ddlsched.datadir import data_dir
from ddlsched.params import param_specs
from ddlsched.registry import RunOptions, families, get_family, methods, run_method

# CI draws the same examples on every run (it cannot flake on a new draw); a longer,
# random campaign: DDLSCHED_FUZZ_EXAMPLES=500 DDLSCHED_FUZZ_RANDOM=1 pytest tests/test_cli_fuzz.py
SETTINGS = settings(
    max_examples=int(os.environ.get("DDLSCHED_FUZZ_EXAMPLES", "40")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    derandomize=not os.environ.get("DDLSCHED_FUZZ_RANDOM"),
)

#: Every registered family (a family whose smoke instance needs the shared data directory
#: is fuzzed only where it exists).
FAMILY_NAMES = sorted(f.name for f in families())


@functools.cache
def smoke_instance(family: str):
    fam = get_family(family)
    preset, params = fam.smoke
    return fam.generate(preset, 0, **dict(params))


def _calls_of_one_run(family: str, method: str) -> int:
    """Function calls (Python and C) one run of ``method`` on the smoke instance makes: a
    measure of its work that the machine's speed and load do not change."""
    calls = 0

    def count(frame, event, arg):
        nonlocal calls
        if event in ("call", "c_call"):
            calls += 1

    sys.setprofile(count)
    try:
        run_method(family, method, smoke_instance(family), RunOptions(time_limit_s=10))
    finally:
        sys.setprofile(None)
    return calls


@functools.cache
def quick_method(family: str) -> str:
    """The family's cheapest heuristic on its smoke instance (a valid mutant is solved fast).

    Cheapest by the function calls of its run on the smoke instance, after a run on
    another instance of the preset (which does the imports, so that they do not count, and
    fills no cache the counted run could use), in powers of two (a call more or less between two processes does
    not change the bucket), ties by name: the same method on every machine and at every
    load, where a measured wall time picked a different one on a busy machine.
    """
    fam = get_family(family)
    preset, params = fam.smoke
    warm_up = fam.generate(preset, 1, **dict(params))
    counted = []
    for method in methods(family):
        if method.hazardous or method.kind != "heuristic":
            continue
        run_method(family, method.name, warm_up, RunOptions(time_limit_s=10))
        counted.append((_calls_of_one_run(family, method.name).bit_length(), method.name))
    return min(counted)[1]


def _needs_data(family: str) -> None:
    if family == "muri_sim" and data_dir() is None:
        pytest.skip("shared data directory absent")


HOSTILE_TEXT = [
    "-1", "0", "1", "2", "1.5", "1e12", "1e400", "-1e400", "nan", "inf", "-inf", "NaN", "abc", "",
    " ", "1" * 60, str(2**70), "[[1]]", "{}", "[]", "true", "false", "maybe", "null",
    "tcp://", "tcp://host:99999", "../../etc/passwd", "\x00", "é", "1,2,,3",
]  # fmt: skip

hostile_scalar = st.one_of(
    st.sampled_from([0, -1, 1, 2**70, -(2**70), 10**400, True, False, None, "", "x" * 200]),
    # what a float, a solver or a loop bound cannot hold
    st.sampled_from([5e-324, 1e-300, 1e-15, 1e15, 1e300, 1.7e308, 2**31, 2**53 + 1, 1e12, []]),
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
    elif action == "empty" and isinstance(parent[last], list):
        parent[last] = []  # an empty job list, machine list, ...
    elif action == "duplicate" and isinstance(parent, list):
        parent.append(copy.deepcopy(parent[last]))
    else:
        parent[last] = value
    return data


def _dump(data) -> str:
    """JSON text, with Python's NaN/Infinity tokens and huge integers as they come."""
    return json.dumps(data, allow_nan=True)


@pytest.mark.parametrize("family", FAMILY_NAMES)
@SETTINGS
@given(
    choice=st.integers(min_value=0, max_value=10_000),
    action=st.sampled_from(["replace", "replace", "delete", "duplicate", "empty"]),
    value=hostile_json,
    pick=st.integers(min_value=0, max_value=1_000),
)
def test_malformed_instance_files_get_one_line(
    family, choice, action, value, pick, tmp_path, capsys
):
    _needs_data(family)
    data = _mutate(smoke_instance(family).to_dict(), choice, action, value)
    path = tmp_path / "instance.json"
    path.write_text(_dump(data))
    code, _ = _answer(["instance", "check", family, path], capsys)
    if code != 0:
        return
    every = [m.name for m in methods(family) if not m.hazardous]
    for method, limit in ((quick_method(family), "5"), (every[pick % len(every)], "2")):
        code, out = _answer(
            ["solve", family, path, "--method", method, "--time-limit", limit, "--json"], capsys
        )
        if code in (0, 1):
            result = json.loads(out, parse_constant=lambda name: pytest.fail(f"{name} in --json"))
            for key in ("objective", "bound"):
                assert result[key] is None or math.isfinite(result[key])
            assert result["status"] != "optimal" or result["objective"] is not None


@SETTINGS
@given(
    family=st.sampled_from(FAMILY_NAMES),
    raw=st.binary(max_size=300),
    cut=st.integers(min_value=0, max_value=2000),
)
def test_arbitrary_bytes_and_truncated_files_get_one_line(family, raw, cut, tmp_path, capsys):
    path = tmp_path / "instance.json"
    text = _dump(smoke_instance(family).to_dict()).encode()
    path.write_bytes(raw if cut % 2 else text[: cut % len(text)] + raw)
    _answer(["instance", "check", family, path], capsys)


value_text = st.one_of(
    st.sampled_from(HOSTILE_TEXT), st.integers(min_value=-3, max_value=3).map(str)
)


def _preset_keys(family: str) -> list[str]:
    fam = get_family(family)
    schema = fam.preset_params.get(fam.smoke[0])
    names = [spec.name for spec in param_specs(schema)] if schema is not None else []
    return [*names, "colour"]


@SETTINGS
@given(
    family=st.sampled_from(FAMILY_NAMES),
    seed=value_text,
    pick=st.integers(min_value=0, max_value=1_000),
    value=value_text,
)
def test_generate_flags_get_one_line(family, seed, pick, value, tmp_path, capsys):
    _needs_data(family)
    keys = _preset_keys(family)
    preset = get_family(family).smoke[0]
    argv = ["instance", "generate", family, "--preset", preset, "--seed", seed]
    _answer(
        [*argv, "--set", f"{keys[pick % len(keys)]}={value}", "-o", tmp_path / "g.json"], capsys
    )


@SETTINGS
@given(
    family=st.sampled_from(FAMILY_NAMES),
    limit=value_text,
    seed=value_text,
    backend=st.sampled_from(["highs", "scip", "cplex", ""]),
    pick=st.integers(min_value=0, max_value=1_000),
    value=value_text,
)
def test_solve_flags_get_one_line(family, limit, seed, backend, pick, value, tmp_path, capsys):
    _needs_data(family)
    path = tmp_path / f"{family}.json"
    if not path.exists():
        smoke_instance(family).save(path)
    every = [m for m in methods(family) if not m.hazardous]
    method = every[pick % len(every)]
    names = [spec.name for spec in method.param_specs()] + ["nope", ""]
    param = names[pick % len(names)]
    argv = ["solve", family, path, "--method", method.name, "--time-limit", limit, "--seed", seed]
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
    st.sampled_from(
        ["1", "2", "0", "-1", "1.5", "nan", "inf", "", "x", str(2**70), "1e400", str(2**40)]
    ),
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
    # the same rows as an asrpt trace (its planner once looped per GPU of a huge job)
    argv = ["simulate", "asrpt", "--policy", "asrpt", "--trace", path, "--jobs", "all"]
    _answer([*argv, "--time-limit", "5"], capsys)
