"""Code fingerprints (ddlsched.bench.fingerprint): what an edit changes, and what it does not.

A throw-away package (``fpdemo``) stands for a plug-in: its modules are edited
between two fingerprints, and the fingerprints of the functions that reach the
edited code, and only those, must change. The built-in methods are checked for
determinism (another process, another hash seed: the same digests) and for
what they cover (the version string is not part of any fingerprint).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest

from ddlsched.bench import code_units
from ddlsched.bench import fingerprint as fp

UTIL = '''
"""Helpers."""
import numpy as np

LIMIT = 3


def shared(x):
    return x + LIMIT


def other(x):
    return np.sqrt(x)
'''

M1 = """
from fpdemo.util import shared


def run1(instance, params, ctx):
    return shared(instance)
"""

M2 = """
from fpdemo import util


def run2(instance, params, ctx):
    return util.other(instance)
"""

M3 = """
def run3(instance, params, ctx):
    from fpdemo.util import shared  # a lazy import

    return shared(instance) * 2
"""


@pytest.fixture
def demo(tmp_path, monkeypatch):
    package = tmp_path / "fpdemo"
    package.mkdir()
    (package / "__init__.py").write_text("")
    for name, text in {"util": UTIL, "m1": M1, "m2": M2, "m3": M3}.items():
        (package / f"{name}.py").write_text(textwrap.dedent(text))
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in [m for m in sys.modules if m == "fpdemo" or m.startswith("fpdemo.")]:
        monkeypatch.delitem(sys.modules, name)
    yield package
    for name in [m for m in sys.modules if m == "fpdemo" or m.startswith("fpdemo.")]:
        del sys.modules[name]
    _clear()


def _clear() -> None:
    code_units._parse_cached.cache_clear()
    code_units.module_file.cache_clear()
    code_units._top_dirs.cache_clear()


def _digests(package: Path) -> dict[str, str]:
    """The fingerprint of run1..run3 as the files stand now (read afresh)."""
    import importlib

    _clear()
    origin = SimpleNamespace(
        group="ddlsched.methods", name="demo", module="fpdemo.m1", distribution="fpdemo",
        version="0.1",
    )  # fmt: skip
    found = {}
    for name in ("m1", "m2", "m3"):
        module = importlib.import_module(f"fpdemo.{name}")
        run = getattr(module, f"run{name[1]}")
        found[name] = fp._fingerprint([run], (), origin).digest
    return found


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def test_lines_added_above_a_lambda_change_nothing(demo):
    """A lambda (a family hook written inline) is named by its syntax tree, not by its line:
    a comment or a function added above it keeps the fingerprint; editing it changes it."""
    hooks = demo / "hooks.py"
    hooks.write_text("SIZE = dict(size=lambda instance: instance * 2)\n")

    def digest() -> str:
        import importlib

        _clear()
        sys.modules.pop("fpdemo.hooks", None)
        module = importlib.import_module("fpdemo.hooks")
        return fp._fingerprint([module.SIZE["size"]], (), None).digest

    before = digest()
    hooks.write_text("# a comment\n\n\ndef helper():\n    return 1\n\n\n" + hooks.read_text())
    assert digest() == before
    _edit(hooks, "instance * 2", "instance * 3")
    assert digest() != before


def test_an_edit_changes_exactly_the_code_that_reaches_it(demo):
    before = _digests(demo)
    assert len(set(before.values())) == 3
    _edit(demo / "util.py", "return x + LIMIT", "return x + LIMIT + 1")
    after = _digests(demo)
    assert after["m1"] != before["m1"]  # imports shared
    assert after["m3"] != before["m3"]  # imports shared inside its body
    assert after["m2"] == before["m2"]  # uses other only
    _edit(demo / "util.py", "return np.sqrt(x)", "return np.sqrt(x) + 0")
    again = _digests(demo)
    assert again["m2"] != after["m2"] and again["m1"] == after["m1"]


def test_a_constant_a_name_reaches_is_part_of_it(demo):
    before = _digests(demo)
    _edit(demo / "util.py", "LIMIT = 3", "LIMIT = 4")
    after = _digests(demo)
    assert after["m1"] != before["m1"] and after["m2"] == before["m2"]


def test_comments_blank_lines_docstrings_and_unreached_code_change_nothing(demo):
    before = _digests(demo)
    _edit(demo / "util.py", '"""Helpers."""', '"""Helpers."""\n# a comment\n\n')
    _edit(
        demo / "util.py",
        "    return x + LIMIT",
        '    """Add."""\n    # why\n\n    return (x + LIMIT)',
    )
    (demo / "util.py").write_text((demo / "util.py").read_text() + "\n\ndef unused():\n    pass\n")
    assert _digests(demo) == before


def test_the_plugin_source_hash_covers_its_own_units_only(demo):
    _clear()
    import importlib

    run = importlib.import_module("fpdemo.m1").run1
    origin = SimpleNamespace(
        group="ddlsched.methods", name="demo", module="fpdemo.m1", distribution="fpdemo",
        version="0.1",
    )  # fmt: skip
    result = fp._fingerprint([run], (), origin)
    assert result.plugin["distribution"] == "fpdemo" and result.plugin["version"] == "0.1"
    assert set(result.units) >= {"fpdemo.m1:run1", "fpdemo.util:shared", "fpdemo.util:LIMIT"}
    assert "numpy" not in result.packages  # shared does not use numpy
    run2 = importlib.import_module("fpdemo.m2").run2
    assert "numpy" in fp._fingerprint([run2], (), origin).packages  # other does: its version counts
    source = result.plugin["source_sha256"]
    _edit(demo / "util.py", "return x + LIMIT", "return x - LIMIT")
    _clear()
    assert fp._fingerprint([run], (), origin).plugin["source_sha256"] != source


def test_builtin_fingerprints_are_deterministic_across_processes():
    names = [("rar", "sjf_bco"), ("rar", "exact"), ("muri", "blossom"), ("asrpt", "spjf")]
    here = {f"{f}.{m}": fp.method_fingerprint(f, m).digest for f, m in names}
    script = (
        "import json; from ddlsched.bench.fingerprint import method_fingerprint as f; "
        f"print(json.dumps({{f'{{a}}.{{b}}': f(a, b).digest for a, b in {names!r}}}))"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True
    )
    assert json.loads(out.stdout) == here


def test_what_a_builtin_fingerprint_covers():
    sjf = fp.method_fingerprint("rar", "sjf_bco")
    ff = fp.method_fingerprint("rar", "ff")
    assert "ddlsched.heuristics.sjf_bco:sjf_bco" in sjf.units
    assert "ddlsched.heuristics.sjf_bco:sjf_bco" not in ff.units  # ff does not run SJF-BCO
    for print_ in (sjf, ff):
        assert "ddlsched.problems.rar_schedule:evaluate" in print_.units  # the evaluator
        assert "ddlsched.pipeline:finish" in print_.units  # the re-evaluation
        assert not any(u.startswith("ddlsched:") for u in print_.units)  # not the version
        assert print_.plugin is None and print_.origin() == {"source": "ddlsched"}
    exact = fp.method_fingerprint("rar", "exact")
    assert "ddlsched.heuristics.sjf_bco:sjf_bco" in exact.units  # its incumbent
    assert "pyomo" in exact.packages
    # another family's methods reach none of rar's heuristics
    muri = fp.method_fingerprint("muri", "blossom")
    assert not any("rar" in u for u in muri.units)


def test_every_builtin_method_has_a_fingerprint_of_its_own():
    from ddlsched.registry import families, methods

    digests = {}
    for family in families(include_internal=True):
        for method in methods(family.name):
            digests[f"{family.name}.{method.name}"] = fp.method_fingerprint(
                family.name, method.name
            ).digest
    assert len(set(digests.values())) == len(digests)


EXTRA = {
    "fast.py": "def pick(x):\n    return x\n",
    "slow.py": "def pick(x):\n    return -x\n",
    "table.py": (
        "from fpdemo.util import other, shared\n\nTABLE = {}\nTABLE['a'] = shared\n"
        "TABLE.update(b=other)\n\n\ndef run(instance, params, ctx):\n"
        "    return TABLE['a'](instance)\n"
    ),
    "fallback.py": (
        "try:\n    from fpdemo.fast import pick\nexcept ImportError:\n"
        "    from fpdemo.slow import pick\n\n\ndef run(instance, params, ctx):\n"
        "    return pick(instance)\n"
    ),
    "byname.py": (
        "from ddlsched.registry import run_method\n\n\ndef run(instance, params, ctx):\n"
        "    return run_method('rar', 'sjf_bco', instance)\n"
    ),
}


def _one(module: str) -> str:
    import importlib

    _clear()
    origin = SimpleNamespace(
        group="session", name="x", module=module, distribution=None, version=None
    )
    return fp._fingerprint([importlib.import_module(module).run], (), origin).digest


def test_tables_filled_after_their_definition_and_import_fallbacks_are_followed(demo):
    for name, text in EXTRA.items():
        (demo / name).write_text(text)
    table, fallback = _one("fpdemo.table"), _one("fpdemo.fallback")
    _edit(demo / "util.py", "return np.sqrt(x)", "return np.sqrt(x) + 1")  # TABLE.update(b=other)
    assert _one("fpdemo.table") != table
    _edit(demo / "slow.py", "return -x", "return -2 * x")  # the except arm of the import
    assert _one("fpdemo.fallback") != fallback


def test_a_method_run_by_name_counts(demo):
    (demo / "byname.py").write_text(EXTRA["byname.py"])
    result = fp._fingerprint(
        [__import__("fpdemo.byname").byname.run], (), SimpleNamespace(
            group="session", name="x", module="fpdemo.byname", distribution=None, version=None
        )
    )  # fmt: skip
    assert result.called == {"rar.sjf_bco": fp.method_fingerprint("rar", "sjf_bco").digest}


def test_constants_are_hashed_whatever_the_hash_seed():
    script = (
        "from ddlsched.bench import fingerprint as f; "
        "v = {frozenset({'fast', 'slow', 'exact'}): {(1, 'a'): {2, 'b'}}, 3: 'x'}; "
        "print(f._value_digest(v))"
    )
    found = set()
    for seed in ("1", "2", "3"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True
        )
        found.add(out.stdout.strip())
    assert len(found) == 1


def test_session_functions_follow_module_aliases_and_arrays():
    import numpy as np

    import ddlsched.heuristics.sjf_bco as sb

    weights = np.arange(3.0)

    def run(instance, params, ctx):
        return sb.check_u(float(weights.sum()))

    result = fp._fingerprint([run], (), None)
    assert "ddlsched.heuristics.sjf_bco:check_u" in result.units
    before = result.digest
    weights[0] = 7.0
    assert fp._fingerprint([run], (), None).digest != before
