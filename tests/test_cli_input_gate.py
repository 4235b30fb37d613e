"""One input gate for every JSON file (ddlsched.jsonio.read_json), tried as a hostile user
would: each file gets one ``ddlsched: error:`` line naming it, and exit status 2."""

from __future__ import annotations

import errno
import json
import os
import re
import stat

import pytest

from ddlsched import jsonio
from ddlsched.cli import main
from ddlsched.jsonio import JsonInstance, OutputFileError, write_json
from ddlsched.registry import families


def _instance_text(family: str) -> str:
    fam = next(f for f in families(include_internal=True) if f.name == family)
    preset, params = fam.smoke
    return json.dumps(fam.generate(preset, 0, **dict(params)).to_dict())


def _edit_schema(text: str, value: str) -> str:
    return re.sub(r'"schema_version": 1', f'"schema_version": {value}', text, count=1)


CASES = {
    "invalid utf-8": (lambda t: b"\xff\xfe" + t.encode(), "not UTF-8"),
    "deep nesting": (lambda t: ("[" * 100_000 + "]" * 100_000).encode(), "nested too deeply"),
    "5,000-digit integer": (
        lambda t: t.replace('"schema_version": 1', '"schema_version": 1' + "0" * 5000, 1).encode(),
        "an integer of 5001 digits",
    ),
    "NaN": (lambda t: t.replace("{", '{"x": NaN, ', 1).encode(), "NaN is not a finite number"),
    "overflowing float": (
        lambda t: t.replace("{", '{"x": 1e400, ', 1).encode(),
        "out of the range of a finite number",
    ),
    "duplicate key": (
        lambda t: t.replace(
            '"schema_version": 1', '"schema_version": 1, "schema_version": 1', 1
        ).encode(),
        "duplicate key 'schema_version'",
    ),
    "schema_version true": (lambda t: _edit_schema(t, "true").encode(), "schema_version"),
    "schema_version 1.0": (lambda t: _edit_schema(t, "1.0").encode(), "schema_version"),
}


@pytest.mark.parametrize("family", sorted(f.name for f in families()))
@pytest.mark.parametrize("case", sorted(CASES))
def test_hostile_instance_files(tmp_path, capsys, family, case):
    make, message = CASES[case]
    path = tmp_path / "bad.json"
    path.write_bytes(make(_instance_text(family)))
    code = main(["instance", "check", family, str(path)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("ddlsched: error:"), err
    assert str(path) in err and message in err, err


def test_byte_order_mark_tolerated(tmp_path, capsys):
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + _instance_text("dmlrs").encode())
    assert main(["instance", "check", "dmlrs", str(path)]) == 0


@pytest.mark.parametrize("path", ["/dev/zero", "/tmp"])
def test_not_a_regular_file(capsys, path):
    code = main(["instance", "check", "dmlrs", path])
    err = capsys.readouterr().err
    assert code == 2 and "not a regular file" in err, err


# --------------------------------------------------------------------------- writing (jsonio)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@pytest.mark.parametrize("family", [f.name for f in families(include_internal=True)])
def test_every_instance_class_saves_atomically_through_the_mixin(tmp_path, family):
    fam = next(f for f in families(include_internal=True) if f.name == family)
    preset, params = fam.smoke
    instance = fam.generate(preset, 0, **dict(params))
    assert isinstance(instance, JsonInstance)
    path = tmp_path / "instance.json"
    instance.save(path)
    assert os.listdir(tmp_path) == ["instance.json"]  # no temporary file left
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~_umask()  # what open(..., "w") gives
    assert json.loads(path.read_text()) == instance.to_dict()
    assert fam.load(path) == instance


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    path = tmp_path / "x.json"
    path.write_text("old\n")
    path.chmod(0o640)
    write_json(path, {"a": 1})
    assert stat.S_IMODE(path.stat().st_mode) == 0o640  # a replaced file keeps its mode

    def no_space(source, target):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(jsonio.os, "replace", no_space)
    with pytest.raises(OutputFileError) as caught:
        write_json(path, {"a": 2})
    assert str(caught.value) == f"cannot write {path}: No space left on device"
    assert isinstance(caught.value, OSError) and caught.value.strerror == "No space left on device"
    assert json.loads(path.read_text()) == {"a": 1}
    assert os.listdir(tmp_path) == ["x.json"]


@pytest.mark.parametrize(
    ("where", "reason"),
    [("missing/dir/x.json", "No such file or directory"), (".", "Is a directory")],
)
def test_generate_to_an_unwritable_path_is_one_line(tmp_path, capsys, where, reason):
    target = tmp_path / where
    code = main(["instance", "generate", "debug", "--preset", "default", "-o", str(target)])
    err = capsys.readouterr().err
    assert code == 2
    assert err == f"ddlsched: error: cannot write {target}: {reason}\n"
