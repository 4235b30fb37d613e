"""Method plug-ins: origins, all-or-nothing loading, no shadowing, broken plug-ins, sessions.

Plug-ins here are real installed distributions: a module and a ``.dist-info``
(``METADATA``, ``entry_points.txt``) in a directory put on ``sys.path``, so
``importlib.metadata`` finds them as it finds a pip-installed package. The
``fresh_registry`` fixture reloads the registry from scratch on copies of its
tables, so nothing a test registers outlives it.
"""

from __future__ import annotations

import sys
import textwrap

import pytest

import ddlsched.registry as registry
from ddlsched.errors import DdlschedError, UnknownMethodError
from ddlsched.plugins import PluginOrigin
from ddlsched.registry import (
    broken_plugins,
    get_method,
    methods,
    register_method,
    run_method,
    unregister_method,
)
from ddlsched.solvers.result import Outcome

HEADER = "from ddlsched.api import NoParams, Outcome, RunContext, register_method\n"


def _adapter_for(family: str, method: str) -> str:
    """Source of a registration whose adapter runs the built-in ``method`` of ``family``."""
    return textwrap.dedent(
        f"""
        @register_method({family!r}, NAME, "heuristic", "delegates to {method}")
        def _run(instance, params: NoParams, ctx: RunContext) -> Outcome:
            from ddlsched.api import RunOptions, run_method

            result = run_method({family!r}, {method!r}, instance, RunOptions(), deadline=ctx.deadline)
            return Outcome(result.schedule)
        """
    )


@pytest.fixture
def fresh_registry(monkeypatch):
    """Built-ins loaded, then the registry's tables copied and entry points read again."""
    registry.families()
    monkeypatch.setattr(registry, "_METHODS", dict(registry._METHODS))
    monkeypatch.setattr(registry, "_FAMILIES", dict(registry._FAMILIES))
    monkeypatch.setattr(registry, "_BROKEN", [])
    monkeypatch.setattr(registry, "_loaded", False)
    return registry


@pytest.fixture
def installed(tmp_path, monkeypatch):
    """``installed(dist, module, code, entry=None, group="ddlsched.methods")``: install a plug-in."""
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    modules = []

    def install(dist, module, code, entry=None, group="ddlsched.methods", version="0.1"):
        (site / f"{module}.py").write_text(HEADER + code)
        info = site / f"{dist.replace('-', '_')}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
        (info / "entry_points.txt").write_text(f"[{group}]\n{entry or module} = {module}\n")
        modules.append(module)

    yield install
    for module in modules:
        sys.modules.pop(module, None)


def _methods_code(*registrations: tuple[str, str, str]) -> str:
    """Registrations ``(family, name, built-in it delegates to)``, one after another."""
    return "".join(
        _adapter_for(family, method).replace("NAME", repr(name))
        for family, name, method in registrations
    )


def test_an_entry_point_method_is_registered_with_its_origin(fresh_registry, installed, cli):
    installed("ddlsched-my-lpt", "my_lpt_plugin", _methods_code(("rar", "my_lpt", "ff")))
    method = get_method("rar", "my_lpt")
    assert method.origin == PluginOrigin(
        "ddlsched.methods", "my_lpt_plugin", "my_lpt_plugin", "ddlsched-my-lpt", "0.1"
    )
    assert get_method("rar", "ff").origin is None  # built in
    code, out, _ = cli("methods", "rar")
    assert code == 0 and "my_lpt" in out and "ddlsched-my-lpt 0.1" in out and "built in" in out


def test_a_plugin_may_not_shadow_a_built_in_and_loads_nothing(fresh_registry, installed, cli):
    code = _methods_code(("rar", "mine_first", "ff"), ("rar", "ff", "ls"))
    installed("ddlsched-shadow", "shadow_plugin", code)
    assert get_method("rar", "ff").origin is None  # the built-in is untouched
    with pytest.raises(UnknownMethodError) as caught:
        get_method("rar", "mine_first")  # all or nothing: its other method is gone too
    message = str(caught.value)
    assert message.startswith("method rar.mine_first is not available: plug-in shadow_plugin")
    assert "(ddlsched-shadow 0.1)" in message and "rar.ff, which is built in" in message
    [broken] = broken_plugins()
    assert broken.methods == (("rar", "mine_first"), ("rar", "ff"))
    code, out, _ = cli("methods", "rar")
    assert code == 0 and "not loaded: plug-in shadow_plugin (ddlsched-shadow 0.1)" in out


def test_two_plugins_with_one_method_name_load_one_of_them(fresh_registry, installed):
    installed("ddlsched-a", "plugin_a", _methods_code(("rar", "twin", "ff")))
    installed("ddlsched-b", "plugin_b", _methods_code(("rar", "twin", "ls")))
    origin = get_method("rar", "twin").origin
    [broken] = broken_plugins()
    assert {origin.distribution, broken.origin.distribution} == {"ddlsched-a", "ddlsched-b"}
    assert f"which is from plug-in {origin.name}" in broken.reason


def test_an_unknown_family_rejects_the_plugin(fresh_registry, installed):
    installed(
        "ddlsched-typo", "typo_plugin", _methods_code(("rar", "fine", "ff"), ("rarr", "x", "ff"))
    )
    [broken] = broken_plugins()
    assert "rarr.x for an unknown family 'rarr'" in broken.reason
    assert "fine" not in {m.name for m in methods("rar")}


def test_a_failing_import_registers_nothing(fresh_registry, installed, tmp_path, cli):
    code = _methods_code(("rar", "half", "ff")) + "\nraise RuntimeError('boom: no licence')\n"
    installed("ddlsched-half", "half_plugin", code)
    assert "half" not in {m.name for m in methods("rar")}
    assert "half_plugin" not in sys.modules
    with pytest.raises(UnknownMethodError, match=r"failed to load: RuntimeError: boom: no licence"):
        get_method("rar", "half")
    # commands that do not name it work; one that does is one line and exit 2
    code, out, err = cli("methods", "rar")
    assert code == 0 and "sjf_bco" in out and "not loaded: plug-in half_plugin" in out
    instance = tmp_path / "rar.json"
    assert cli("instance", "generate", "rar", "--preset", "small", "-o", str(instance))[0] == 0
    assert cli("solve", "rar", str(instance), "--method", "ff", "--quiet")[0] == 0
    code, out, err = cli("solve", "rar", str(instance), "--method", "half", "--quiet")
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1
    assert lines[0].startswith("ddlsched: error: method rar.half is not available: plug-in")
    assert "(ddlsched-half 0.1) failed to load: RuntimeError: boom" in lines[0]


def test_an_unknown_method_names_the_broken_plugins_it_may_have_been(fresh_registry, installed):
    installed("ddlsched-gone", "gone_plugin", "import no_such_module_anywhere\n")
    [broken] = broken_plugins()
    assert broken.reason.startswith("failed to load: ModuleNotFoundError")
    assert broken.methods == ()  # it failed before registering anything
    with pytest.raises(UnknownMethodError, match="unknown method 'nothing'"):
        get_method("rar", "nothing")


def test_a_family_plugin_and_methods_for_it(fresh_registry, installed):
    family = textwrap.dedent(
        """
        from ddlsched.registry import Family, register_family
        from ddlsched.problems import debug
        from ddlsched.workloads.debug import generate

        register_family(Family(
            name="plugfam", sense="min", objective_name="value",
            load=debug.DebugInstance.load, from_dict=debug.DebugInstance.from_dict,
            generate=generate, presets=("default",), evaluate=debug.evaluate,
            objective=lambda e: e.value, schedule_to_json=debug.schedule_to_json,
            schedule_from_json=debug.schedule_from_json, smoke=("default", {}),
            size=lambda instance: instance.size,
        ))

        @register_method("plugfam", "unit", "heuristic", "scale 1")
        def _unit(instance, params: NoParams, ctx: RunContext) -> Outcome:
            return Outcome(debug.DebugSchedule(scale=1.0))
        """
    )
    installed("ddlsched-plugfam", "plugfam_plugin", family, group="ddlsched.families")
    clash = family.replace('"plugfam"', '"rar"').replace("'plugfam'", "'rar'")
    installed("ddlsched-clash", "clash_plugin", clash, group="ddlsched.families")
    assert get_method("plugfam", "unit").origin.group == "ddlsched.families"
    [broken] = broken_plugins()
    assert broken.origin.distribution == "ddlsched-clash"
    assert "family 'rar', which already exists" in broken.reason
    assert get_method("rar", "ff").origin is None


def test_a_session_method_may_be_registered_again(fresh_registry):
    def first(instance, params, ctx):
        return Outcome(None, info={"error": "first"})

    def second(instance, params, ctx):
        return Outcome(None, info={"error": "second"})

    register_method("rar", "notebook_cell", "heuristic", "v1")(first)
    method = get_method("rar", "notebook_cell")
    assert method.origin == PluginOrigin("session", "notebook_cell", __name__, None, None)
    register_method("rar", "notebook_cell", "heuristic", "v2")(second)  # the edited cell
    assert get_method("rar", "notebook_cell").summary == "v2"
    family = registry.get_family("rar")
    instance = family.generate(*family.smoke[:1], 0)
    assert run_method("rar", "notebook_cell", instance).info["error"] == "second"
    unregister_method("rar", "notebook_cell")
    with pytest.raises(UnknownMethodError):
        get_method("rar", "notebook_cell")


def test_a_session_method_may_not_shadow_nor_name_an_unknown_family(fresh_registry, installed):
    installed("ddlsched-my-lpt", "my_lpt_plugin", _methods_code(("rar", "my_lpt", "ff")))

    def adapter(instance, params, ctx):
        return Outcome(None)

    with pytest.raises(DdlschedError, match=r"rar.ff: a method of that name is built in"):
        register_method("rar", "ff", "heuristic", "mine")(adapter)
    with pytest.raises(DdlschedError, match=r"is from plug-in my_lpt_plugin \(ddlsched-my-lpt"):
        register_method("rar", "my_lpt", "heuristic", "mine")(adapter)
    with pytest.raises(UnknownMethodError, match="unknown family 'rarr'"):
        register_method("rarr", "x", "heuristic", "mine")(adapter)
    assert get_method("rar", "ff").origin is None
    assert get_method("rar", "my_lpt").origin.group == "ddlsched.methods"


def test_the_public_module_exports_what_a_plugin_needs():
    import doctest

    import ddlsched.api as api

    assert doctest.testmod(api).failed == 0
    assert all(hasattr(api, name) for name in api.__all__)
    exported = {getattr(api, name) for name in api.__all__}
    for family in registry.families():  # every public family's instance type
        instance_type = family.load.__self__
        assert instance_type in exported, family.name
    for name in ("register_method", "Outcome", "Status", "RunContext", "param", "NoParams"):
        assert name in api.__all__


def test_the_context_rng_is_seeded():
    from ddlsched.deadline import Deadline

    first = registry.RunContext(seed=7, backend="highs", deadline=Deadline(10)).rng()
    again = registry.RunContext(seed=7, backend="highs", deadline=Deadline(10)).rng()
    other = registry.RunContext(seed=8, backend="highs", deadline=Deadline(10)).rng()
    draws = first.integers(0, 2**62, 4)
    assert (draws == again.integers(0, 2**62, 4)).all()
    assert not (draws == other.integers(0, 2**62, 4)).all()


def test_a_plugin_that_exits_at_import_is_only_broken(fresh_registry, installed):
    installed(
        "ddlsched-exit",
        "exit_plugin",
        _methods_code(("rar", "quits", "ff")) + "raise SystemExit(3)\n",
    )
    [broken] = broken_plugins()
    assert broken.reason == "failed to load: SystemExit: 3"
    assert broken.methods == (("rar", "quits"),)
