"""``ddlsched new method``: the package it writes installs, registers and conforms, unedited.

For every family with a template, the scaffold is generated, installed into a
throw-away directory (``plugin_install``; never into the environment) and,
in a subprocess that sees it: ``ddlsched methods FAMILY`` lists the method
with its distribution, the plug-in's own test (the conformance kit) passes,
and its suite validates (``bench validate``). Bad names are one line and exit 2.
"""

from __future__ import annotations

import tomllib

import pytest
from plugin_install import install, run

from ddlsched.cli_new import SUITE_PLANS, template_text
from ddlsched.registry import families, methods


def test_every_public_family_has_a_template_and_a_suite_plan():
    assert set(SUITE_PLANS) == {f.name for f in families()}
    for family, plan in SUITE_PLANS.items():
        names = {m.name for m in methods(family)}
        assert plan.paper in names and set(plan.reference) <= names, family
        kinds = {m.name: m.kind for m in methods(family)}
        exact = [m for m in plan.reference if kinds[m] == "exact"]
        # the reference starts with the family's exact method when it has one
        assert plan.reference[:1] == tuple(exact[:1]) or not exact, family
        assert "my_method" in template_text(family)


#: Installed and tested in the CI tier: the two quickest plug-ins (7-10 s each on 2 cores);
#: the other families' (up to 20 s each) in the full tier.
CI_SCAFFOLDS = ("muri", "placement")


@pytest.mark.parametrize(
    "family",
    [
        f if f in CI_SCAFFOLDS else pytest.param(f, marks=pytest.mark.slow)
        for f in sorted(SUITE_PLANS)
    ],
)
def test_the_scaffold_installs_and_passes_its_own_test(family, tmp_path, cli):
    name = f"mine_{family}"
    package = tmp_path / "pkg"
    code, _, err = cli("new", "method", family, name, "--out", str(package))
    assert code == 0, err
    project = tomllib.loads((package / "pyproject.toml").read_text())["project"]
    assert project["entry-points"]["ddlsched.methods"] == {name: f"ddlsched_{family}_{name}.method"}
    assert any(dep.startswith("ddlsched>=") for dep in project["dependencies"])
    site = tmp_path / "site"
    install(package, site)

    # one interpreter (start-up and imports once): `ddlsched methods FAMILY`, `ddlsched bench
    # validate` of the suite, then the plug-in's own tests
    script = (
        "import pytest; from ddlsched.cli import main\n"
        f"print('exit', main(['methods', '{family}']))\n"
        f"print('exit', main(['bench', 'validate', 'suites/{name}.toml']))\n"
        "raise SystemExit(pytest.main(['-q', '-p', 'no:cacheprovider', 'tests']))\n"
    )
    done = run(["-c", script], site, package)
    assert done.returncode == 0 and done.stdout.count("exit 0") == 2, done.stdout + done.stderr
    dist = project["name"]
    assert name in done.stdout and dist in done.stdout and "not loaded" not in done.stdout
    assert "2 passed" in done.stdout


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["rar", "2fast"], "not a Python identifier"),
        (["rar", "class"], "not a Python identifier"),
        (["rar", "sjf_bco"], "already has a method 'sjf_bco'"),
        (["nope", "mine"], "unknown family 'nope'"),
        (["debug", "mine"], "unknown family 'debug'"),
    ],
)
def test_bad_names_are_one_line_and_exit_2(argv, message, tmp_path, cli):
    code, _, err = cli("new", "method", *argv, "--out", str(tmp_path / "pkg"))
    assert code == 2 and len(err.strip().splitlines()) == 1 and message in err, err
    assert not (tmp_path / "pkg").exists()


def test_an_existing_non_empty_out_directory_is_refused(tmp_path, cli):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "keep.txt").write_text("mine")
    code, _, err = cli("new", "method", "rar", "mine", "--out", str(tmp_path / "pkg"))
    assert code == 2 and "not an empty directory" in err
    assert sorted(p.name for p in (tmp_path / "pkg").iterdir()) == ["keep.txt"]
    code, _, err = cli("new", "method", "rar", "mine", "--out", str(tmp_path / "pkg" / "keep.txt"))
    assert code == 2 and "not an empty directory" in err
    (tmp_path / "empty").mkdir()
    assert cli("new", "method", "rar", "mine", "--out", str(tmp_path / "empty"))[0] == 0
