"""The instance formats as JSON Schemas, and ``ddlsched instance check`` reporting every
violation with its JSON path.

* every family's schema (generated from the field spec its loader reads) validates every
  preset's instances and the file ``instance generate`` writes;
* hand-mutated files get every violation reported, each at its path (several per file),
  structural ones from the schema and semantic ones (cross references) from the loader;
* a file of another family is named as such, by ``instance check`` and by ``solve``;
* the schema and the loader agree on random mutations (Hypothesis): the loader accepts =>
  the schema accepts (equivalently, the schema rejects => the loader rejects);
* the committed ``docs/schemas/*.json`` are the command's output.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ddlsched.errors import DdlschedError
from ddlsched.instance_check import (
    check_data,
    field_spec,
    instance_schema,
    schema_violations,
    spec_violations,
)
from ddlsched.registry import families, get_family

FAMILIES = sorted(f.name for f in families() if f.name != "debug")
DOCS_SCHEMAS = Path(__file__).resolve().parents[1] / "docs" / "schemas"


def _smoke(family: str) -> dict[str, Any]:
    fam = get_family(family)
    preset, params = fam.smoke
    return fam.generate(preset, 0, **dict(params)).to_dict()


def _preset_cases() -> list[tuple[str, str]]:
    return [(f.name, preset) for f in families() if f.name != "debug" for preset in f.presets]


def _write(tmp_path: Path, data: Any, name: str = "instance.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


# --------------------------------------------------------------------------- valid files


@pytest.mark.parametrize(("family", "preset"), _preset_cases())
def test_schema_validates_every_preset(family, preset):
    fam = get_family(family)
    smoke_preset, smoke_params = fam.smoke
    params = dict(smoke_params) if preset == smoke_preset else {}
    schema = instance_schema(family)
    for seed in (0, 1):
        try:
            instance = fam.generate(preset, seed, **params)
        except DdlschedError as exc:  # a trace preset without the shared data directory
            pytest.skip(f"{family} preset {preset}: {exc}")
        assert schema_violations(schema, instance.to_dict()) == [], (family, preset, seed)


@pytest.mark.parametrize("family", FAMILIES)
def test_schema_command_validates_instance_generate(tmp_path, cli, family):
    preset, params = get_family(family).smoke
    path = tmp_path / "generated.json"
    sets = [a for k, v in params.items() for a in ("--set", f"{k}={json.dumps(v)}")]
    code, _, err = cli("instance", "generate", family, "--preset", preset, "-o", path, *sets)
    assert code == 0, err
    code, out, _ = cli("instance", "schema", family)
    assert code == 0
    schema = json.loads(out)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert "$id" not in schema
    for name, prop in schema["properties"].items():
        assert prop["title"] and prop["description"], (family, name)
    data = json.loads(path.read_text())
    assert schema_violations(schema, data) == []
    import jsonschema  # the standard validator agrees (integers as JSON integers aside)

    jsonschema.Draft202012Validator(schema).validate(data)
    code, out, err = cli("instance", "check", path)  # the family is the file's own
    assert (code, out.strip()) == (0, f"{path}: valid {family} instance"), err


def test_schema_of_an_unknown_family_is_one_line(cli):
    code, out, err = cli("instance", "schema", "nope")
    assert code == 2 and out == "" and err.count("\n") == 1 and "unknown family" in err


@pytest.mark.parametrize("family", FAMILIES)
def test_committed_schemas_match_the_command(cli, family):
    code, out, _ = cli("instance", "schema", family)
    assert code == 0
    committed = (DOCS_SCHEMAS / f"{family}.schema.json").read_text()
    assert committed == out, f"regenerate: ddlsched instance schema {family} > {committed}"


# --------------------------------------------------------------------------- violations


def _rar_structural(d):
    d["jobs"][3]["gpus"] = -2
    d["jobs"][1]["batch"] = "x"
    d["jobs"][0]["foo"] = 1
    del d["network"]["C"]
    d["horizon"] = 0
    d["servers"][1] = 2.0
    return {
        ("$.jobs[3].gpus", "must be a positive integer, got -2"),
        ("$.jobs[1].batch", "expected a finite number, got 'x'"),
        ("$.jobs[0].foo", "unknown field"),
        ("$.network.C", "missing field"),
        ("$.horizon", "must be a positive integer, got 0"),
        ("$.servers[1]", "expected an integer, got 2.0"),
    }


def _rar_semantic(d):
    d["jobs"][2]["gpus"] = 10_000
    d["jobs"][4]["gpus"] = 10_001
    d["jobs"][3]["id"] = d["jobs"][0]["id"]
    return {
        ("$.jobs[2].gpus", "requests 10000 GPUs"),
        ("$.jobs[4].gpus", "requests 10001 GPUs"),
        ("$.jobs", "duplicate job id 'j0'"),
    }


def _placement_structural(d):
    d["allreduce"] = "ring"
    d["available"] = []
    d["stages"][1]["fwd_s"] = -1.0
    d["b_inter"] = 0
    return {
        ("$.allreduce", "must be one of rar, tar, got 'ring'"),
        ("$.available", "expected at least 1 item(s), got 0"),
        ("$.stages[1].fwd_s", "must be >= 0, got -1.0"),
        ("$.b_inter", "must be > 0, got 0"),
    }


def _muri_structural(d):
    d["jobs"][0]["times"] = []
    d["jobs"][2]["gpus"] = 0
    d["jobs"][5]["id"] = ""
    del d["num_resources"]
    return {
        ("$.jobs[0].times", "expected at least 1 item(s), got 0"),
        ("$.jobs[2].gpus", "must be a positive integer, got 0"),
        ("$.jobs[5].id", "must be a non-empty string"),
        ("$.num_resources", "missing field"),
    }


def _muri_semantic(d):
    d["jobs"][1]["gpus"] = 3  # not a power of two
    d["jobs"][4]["times"] = [1.0, 2.0]  # num_resources = 3
    d["jobs"][6]["times"] = [0.0, 0.0, 0.0]
    return {
        ("$.jobs[1].gpus", "power of two"),
        ("$.jobs[4].times", "expected 3 resource times"),
        ("$.jobs[6].times", "must not all be 0"),
    }


def _muri_sim_structural(d):
    d["seed"] = -1
    d["mode"] = "fast"
    d["knobs"] = {"packing_num": "four", "blossom": 1, "warp": True}
    return {
        ("$.seed", "must be >= 0, got -1"),
        ("$.mode", "must be one of reference, paper, got 'fast'"),
        ("$.knobs.packing_num", "expected an integer, got 'four'"),
        ("$.knobs.blossom", "expected true or false, got 1"),
        ("$.knobs.warp", "unknown field"),
    }


def _asrpt_structural(d):
    d["cluster"]["servers"] = 0
    d["configs"]["c0"]["allreduce"] = "all"
    d["jobs"][1]["arrival_s"] = -0.5
    d["jobs"][2]["iterations"] = 1.5
    return {
        ("$.cluster.servers", "must be a positive integer, got 0"),
        ("$.configs.c0.allreduce", "must be one of rar, tar, got 'all'"),
        ("$.jobs[1].arrival_s", "must be >= 0, got -0.5"),
        ("$.jobs[2].iterations", "expected an integer, got 1.5"),
    }


def _asrpt_semantic(d):
    d["jobs"][1]["config"] = "no-such-config"
    d["jobs"][3]["config"] = "missing"
    d["jobs"][2]["id"] = d["jobs"][0]["id"]
    return {
        ("$.jobs[1].config", "unknown configuration 'no-such-config'"),
        ("$.jobs[3].config", "unknown configuration 'missing'"),
        ("$.jobs[2].id", "duplicate job id 'j0'"),
    }


def _dmlrs_structural(d):
    d["slots"] = 0
    d["resources"] = ["gpu", "gpu", "mem_gb", "storage_gb"]
    d["jobs"][0]["utility"]["theta2"] = 0
    d["jobs"][1]["worker"][2] = -1.0
    d["jobs"][2]["gamma"] = None
    return {
        ("$.slots", "must be a positive integer, got 0"),
        ("$.resources", "expected distinct values"),
        ("$.jobs[0].utility.theta2", "must be > 0, got 0"),
        ("$.jobs[1].worker[2]", "must be >= 0, got -1.0"),
        ("$.jobs[2].gamma", "expected an integer, got None"),
    }


def _dmlrs_semantic(d):
    d["jobs"][0]["arrival_slot"] = d["slots"] + 1  # beyond the horizon
    d["jobs"][3]["worker"] = [1.0, 2.0]  # 4 resources
    d["jobs"][2]["worker"] = [0.0] * 4
    d["jobs"][2]["ps"] = [0.0] * 4
    return {
        ("$.jobs[0].arrival_slot", "must be in 1..5"),
        ("$.jobs[3].worker", "expected a list of 4 numbers"),
        ("$.jobs[2]", "uses no resource at all"),
    }


def _dmlrs_slot_structural(d):
    d["demand"] = 0
    d["machines"][0]["residual"][1] = -3.0
    d["machines"][2]["worker_price"] = "cheap"
    d["meta"] = {"nested": {"no": 1}}
    return {
        ("$.demand", "must be a positive integer, got 0"),
        ("$.machines[0].residual[1]", "must be >= 0, got -3.0"),
        ("$.machines[2].worker_price", "expected a finite number, got 'cheap'"),
        ("$.meta.nested", "expected"),
    }


MUTATIONS = {
    "rar structural": ("rar", _rar_structural),
    "rar semantic": ("rar", _rar_semantic),
    "placement structural": ("placement", _placement_structural),
    "muri structural": ("muri", _muri_structural),
    "muri semantic": ("muri", _muri_semantic),
    "muri_sim structural": ("muri_sim", _muri_sim_structural),
    "asrpt structural": ("asrpt", _asrpt_structural),
    "asrpt semantic": ("asrpt", _asrpt_semantic),
    "dmlrs structural": ("dmlrs", _dmlrs_structural),
    "dmlrs semantic": ("dmlrs", _dmlrs_semantic),
    "dmlrs_slot structural": ("dmlrs_slot", _dmlrs_slot_structural),
}


@pytest.mark.parametrize("case", sorted(MUTATIONS))
def test_every_violation_is_reported_at_its_path(tmp_path, cli, case):
    family, mutate = MUTATIONS[case]
    data = _smoke(family)
    expected = mutate(data)
    path = _write(tmp_path, data)
    code, out, err = cli("instance", "check", path, "--family", family)
    assert code == 2
    assert err.count("\n") == 1 and err.startswith(f"ddlsched: error: {path}: "), err
    lines = out.strip().splitlines()
    assert lines[-1] == f"{path}: {len(lines) - 1} violations ({family} format)"
    reported = [line.partition(": ") for line in lines[:-1]]
    for where, needle in expected:
        assert any(p == where and needle in m for p, _, m in reported), (where, needle, out)
    assert len(reported) == len(expected), out  # nothing else, nothing twice


def test_a_semantic_violation_outside_the_items_is_reported(tmp_path, cli):
    data = _smoke("rar")
    data["network"]["b_i"] = 0.5  # below b_e = 1: found before any job is looked at
    data["jobs"][2]["gpus"] = 10_000
    code, out, _ = cli("instance", "check", _write(tmp_path, data))
    assert code == 2 and out.startswith("$.network.b_i: intra-server bandwidth 0.5"), out


@pytest.mark.parametrize(
    ("change", "where", "needle"),
    [
        ({"knobs": {"packing_num": 5}}, "$.knobs.packing_num", "packing_num <= 4"),
        ({"seed": 2**40}, "$.seed", "must be <= 2147483647"),
        ({"trace": "/nonexistent/mine.csv"}, "$.trace", "trace file not found"),
    ],
)
def test_muri_sim_violations_name_the_setting(tmp_path, cli, change, where, needle):
    path = _write(tmp_path, {**_smoke("muri_sim"), **change})
    code, out, _ = cli("instance", "check", path)
    assert code == 2
    first, count = out.splitlines()
    assert first.startswith(f"{where}: ") and needle in first, out
    assert count == f"{path}: 1 violation (muri_sim format)"


def test_the_older_form_and_the_file_s_own_family_agree(tmp_path, cli):
    data = _smoke("rar")
    _rar_structural(data)
    path = _write(tmp_path, data)
    answers = {
        cli("instance", "check", "rar", path)[:2],
        cli("instance", "check", path)[:2],
        cli("instance", "check", path, "--family", "rar")[:2],
    }
    assert len(answers) == 1 and answers.pop()[0] == 2


def test_check_says_what_solve_says(tmp_path, cli):
    data = _smoke("dmlrs")
    _dmlrs_semantic(data)
    path = _write(tmp_path, data)
    check = cli("instance", "check", path)
    solve = cli("solve", "dmlrs", path, "--method", "fifo")
    assert check[0] == solve[0] == 2 and check[2] == solve[2]


@pytest.mark.parametrize("other", ["asrpt", "muri", "dmlrs"])
def test_a_file_of_another_family_is_named(tmp_path, cli, other):
    path = _write(tmp_path, _smoke("rar"))
    code, out, err = cli("instance", "check", path, "--family", other)
    assert code == 2
    assert out.splitlines()[0].startswith(f"$.family: this is a rar instance, not {other}")
    assert "unknown field" not in out + err
    code, _, err = cli("solve", other, path, "--method", "exact")
    assert code == 2 and f"{path}: this is a rar instance, not {other}" in err, err


def test_a_file_naming_no_family_needs_family(tmp_path, cli):
    data = _smoke("rar")
    del data["family"]
    code, _, err = cli("instance", "check", _write(tmp_path, data))
    assert code == 2 and "give --family" in err and err.count("\n") == 1
    code, out, _ = cli("instance", "check", _write(tmp_path, data), "--family", "rar")
    assert code == 2 and "$.family: missing field" in out


def test_family_twice_is_refused(tmp_path, cli):
    path = _write(tmp_path, _smoke("rar"))
    code, _, err = cli("instance", "check", "rar", path, "--family", "rar")
    assert code == 2 and "give the family once" in err


# --------------------------------------------------------------------------- agreement

HOSTILE_VALUES = st.one_of(
    st.integers(min_value=-3, max_value=3),
    st.sampled_from([10**7, 10**13, 2**63, 1e-300, 1e300, -0.5, 0.5, 2.0, 1e9, 1e10]),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.sampled_from(["", "x", "rar", "tar", "reference", "j0", "c0", "gpu"]),
    st.none(),
    st.booleans(),
    st.sampled_from([[], [1], [1.0, 2.0, 3.0, 4.0], {}, {"a": 1}, [{}]]),
)


def _locations(data: Any, prefix: tuple = ()) -> list[tuple]:
    """Every path into ``data`` (keys and indices), the root excluded."""
    out: list[tuple] = []
    if isinstance(data, (dict, list)):
        for key, value in data.items() if isinstance(data, dict) else enumerate(data):
            out.append((*prefix, key))
            out.extend(_locations(value, (*prefix, key)))
    return out


def _mutate(data: Any, where: tuple, action: str, value: Any) -> Any:
    data = copy.deepcopy(data)
    parent = data
    for key in where[:-1]:
        parent = parent[key]
    last = where[-1]
    if action == "replace":
        parent[last] = value
    elif action == "delete" and isinstance(parent, dict):
        del parent[last]
    elif action == "delete":
        parent.pop(last)
    elif isinstance(parent, dict):  # add
        parent["unexpected_field"] = value
    else:  # copy: one more item like this one
        parent.append(copy.deepcopy(parent[last]))
    return data


def _loader_accepts(family: str, data: Any) -> bool:
    try:
        get_family(family).from_dict(data)
    except (DdlschedError, TypeError, ValueError, KeyError, AttributeError, ArithmeticError):
        return False
    return True


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    family=st.sampled_from(FAMILIES),
    pick=st.integers(min_value=0, max_value=10**6),
    actions=st.lists(
        st.tuples(st.sampled_from(["replace", "replace", "delete", "add", "copy"]), HOSTILE_VALUES),
        min_size=1,
        max_size=3,
    ),
)
def test_loader_accepts_implies_schema_accepts(family, pick, actions):
    data = _smoke(family)
    for step, (action, value) in enumerate(actions):
        where = _locations(data)
        data = _mutate(data, where[(pick + 7919 * step) % len(where)], action, value)
    schema = instance_schema(family)
    found = schema_violations(schema, data)
    schema_ok = not found
    spec = field_spec(get_family(family))
    assert spec.accepts(data) == schema_ok  # the fast answer is the schema's
    assert spec_violations(spec, schema, data) == found
    if _loader_accepts(family, data):
        assert schema_ok, (data, schema_violations(instance_schema(family), data))
    if not schema_ok:
        assert not _loader_accepts(family, data)
        assert check_data(data, family).violations  # and check reports something


@pytest.mark.parametrize("family", FAMILIES)
def test_valid_smoke_instance_has_no_violation(family):
    assert check_data(_smoke(family), family).ok


def test_long_lists_are_checked_item_by_item_fast_and_alike():
    fam = get_family("dmlrs")
    data = fam.generate("paper", 0, jobs=3000, machines=2, slots=20).to_dict()
    data["jobs"][10]["gamma"] = 0
    data["jobs"][9]["tau_s"] = "slow"
    data["jobs"][2999]["worker"] = [1.0, -2.0]
    data["resources"] = ["gpu", "gpu", "mem_gb", "storage_gb"]
    schema = instance_schema("dmlrs")
    found = spec_violations(field_spec(fam), schema, data)
    assert found == schema_violations(schema, data)
    assert [v.path for v in found] == [
        "$.jobs[9].tau_s",
        "$.jobs[10].gamma",
        "$.jobs[2999].worker[1]",
        "$.resources",
    ]


def _family_pairs() -> list[tuple[str, str]]:
    names = sorted(f.name for f in families() if f.name != "debug")
    return [(named, asked) for named in names for asked in names if named != asked]


@pytest.mark.parametrize(("named", "asked"), _family_pairs())
def test_solve_names_the_family_of_a_file_for_every_pair(tmp_path, cli, named, asked):
    """Any family's file given to ``solve`` of any other family: one line saying what the
    file is (its ``family`` field), exit 2, never its fields refused one by one."""
    from ddlsched.registry import methods

    path = _write(tmp_path, _smoke(named))
    method = sorted(m.name for m in methods(asked))[0]
    code, out, err = cli("solve", asked, path, "--method", method, "-q")
    article = "an" if named[0] in "aeiou" else "a"
    assert code == 2 and out == ""
    assert err == f"ddlsched: error: {path}: this is {article} {named} instance, not {asked} " + (
        f"(its 'family' field; 'ddlsched instance check FILE' and 'ddlsched solve {named} "
        "FILE' read it)\n"
    )
