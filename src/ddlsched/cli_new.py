"""``ddlsched new method FAMILY NAME [--out DIR]``: write a method plug-in that works unedited.

The package written (``DIR``, default ``./ddlsched-<family>-<name>``)::

    pyproject.toml            the entry point [project.entry-points."ddlsched.methods"]
                              and a dependency on ddlsched (this major version)
    README.md                 install, test, run
    src/ddlsched_<family>_<name>/method.py
                              a correct trivial heuristic for the family (the template
                              ddlsched/templates/<family>.py, also the example of
                              docs/methods/<family>.md), importing ddlsched.api only
    tests/test_<name>.py      the conformance kit on the method (ddlsched.api.check_method)
    suites/<name>.toml        a suite running it beside the family's paper heuristic and
                              its exact method (or bound) on a small preset

Refused with one line (exit 2): a NAME that is not a Python identifier (or is
a keyword), a family without a template (unknown or internal), a NAME the
family already has, a ``--out`` that exists and is not an empty directory.
Imports nothing heavy at the top (``ddlsched --help`` stays fast).
"""

from __future__ import annotations

import argparse
import keyword
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

__all__ = ["SUITE_PLANS", "SuitePlan", "add_new_command", "new_method", "template_text"]

#: The template's method name, replaced by NAME.
PLACEHOLDER = "my_method"


@dataclass(frozen=True)
class SuitePlan:
    """What a scaffolded suite runs on a family: a small preset, the paper's heuristic
    (``paper``, with ``paper_seeds`` seeds when randomised), the reference methods
    (exact first, then bounds) and a comment saying what the ratios mean."""

    preset: str
    paper: str
    reference: tuple[str, ...]
    note: str
    params: tuple[tuple[str, Any], ...] = ()
    paper_seeds: int = 1
    time_limit_s: int = 30


_PROVEN = "ratios are proven where the exact method finishes within the limit"
#: One plan per public family (the scaffold and the guide read them).
SUITE_PLANS: dict[str, SuitePlan] = {
    "rar": SuitePlan("small", "sjf_bco", ("exact", "load_lb"), f"SJF-BCO; {_PROVEN}"),
    "placement": SuitePlan("small", "heavy_edge", ("exact",), f"Heavy-Edge; {_PROVEN}"),
    "muri": SuitePlan("small", "multiround", ("exact",), f"Muri's multi-round Blossom; {_PROVEN}"),
    "asrpt": SuitePlan("tiny", "asrpt", ("exact", "lb_sum"), f"A-SRPT; {_PROVEN}"),
    "dmlrs": SuitePlan(
        "tiny", "pd_ors", ("exact", "ub_trivial"), f"PD-ORS (3 seeds); {_PROVEN}", paper_seeds=3
    ),
    "dmlrs_slot": SuitePlan(
        "synthetic",
        "rounding",
        ("ilp", "lp"),
        f"PD-ORS's G_delta rounding; {_PROVEN}",
        params=(("jobs", 11), ("machines", 8), ("slots", 5), ("load", 0.0), ("demand_share", 0.1)),
    ),
    "muri_sim": SuitePlan(
        "trace",
        "muri-s",
        (),
        "Muri-S. muri_sim has no exact method and no bound: each ratio is [lo, no bound], lo "
        "against the best policy found on the instance (not a proven ratio); with --metrics "
        "average_jct_s,makespan_s --relative-to muri-s, the metrics against Muri-S",
        params=(("trace", "tiresias"), ("limit", 30)),
        time_limit_s=120,
    ),
}


def template_text(family: str, name: str = PLACEHOLDER) -> str:
    """The method module of ``family``'s template, its method named ``name``."""
    text = resources.files("ddlsched").joinpath("templates", f"{family}.py").read_text("utf-8")
    return text.replace(PLACEHOLDER, name)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    return repr(value)


def _suite(family: str, name: str, output: str) -> str:
    plan = SUITE_PLANS[family]
    lines = [
        f"# {family}.{name} beside the paper's heuristic, {plan.paper}, on the small preset",
        f"# {plan.preset!r}: {plan.note}.",
        f"#   ddlsched bench run suites/{name}.toml --workers 2",
        f"#   ddlsched bench table {output}",
        "[suite]",
        f'name = "{name}"',
        f'description = "{family}: {name} beside {plan.paper}"',
    ]
    if plan.reference:
        lines.append(f"reference = [{', '.join(map(_toml_value, plan.reference))}]")
    lines += [
        f'output = "{output}"',
        "",
        "[limits]",
        f"time_limit_s = {plan.time_limit_s}",
        f"kill_after_s = {plan.time_limit_s * 4}",
        "memory_mb = 4096",
        "",
        "[[instances]]",
        f'family = "{family}"',
        f'preset = "{plan.preset}"',
        "seeds = { first = 0, count = 10 }" if plan.reference else "seeds = [0]",
    ]
    if plan.params:
        inline = ", ".join(f"{key} = {_toml_value(value)}" for key, value in plan.params)
        lines.append(f"params = {{ {inline} }}")
    lines += [f'group = "{plan.preset}"', "", "[[methods]]", f'name = "{name}"', ""]
    lines += ["[[methods]]", f'name = "{plan.paper}"']
    if plan.paper_seeds > 1:
        lines.append(f"seeds = {{ first = 0, count = {plan.paper_seeds} }}")
    for method in plan.reference:
        lines += ["", "[[methods]]", f'name = "{method}"']
    return "\n".join(lines) + "\n"


def _files(family: str, name: str, version: str) -> dict[str, str]:
    package = f"ddlsched_{family}_{name}"
    dist = f"ddlsched-{family}-{name}".replace("_", "-")
    major = int(version.split(".")[0])
    out = f"results/{name}"
    return {
        "pyproject.toml": (
            '[build-system]\nrequires = ["setuptools>=64"]\n'
            'build-backend = "setuptools.build_meta"\n\n'
            f'[project]\nname = "{dist}"\nversion = "0.1.0"\n'
            f'description = "{family}.{name}: a ddlsched method plug-in"\n'
            f'requires-python = ">=3.11"\ndependencies = ["ddlsched>={version},<{major + 1}"]\n\n'
            f'[project.entry-points."ddlsched.methods"]\n{name} = "{package}.method"\n\n'
            '[tool.setuptools.packages.find]\nwhere = ["src"]\n'
        ),
        "README.md": (
            f"# {dist}\n\nThe method `{family}.{name}` for ddlsched (`src/{package}/method.py`).\n\n"
            "```\npip install -e .\n"
            f"ddlsched methods {family}            # lists {name} with its origin\n"
            "python -m pytest tests              # the conformance kit\n"
            f"ddlsched bench run suites/{name}.toml --workers 2 && ddlsched bench table {out}\n"
            "```\n\nThe guide: docs/your-own-method.md and "
            f"docs/methods/{family}.md of ddlsched.\n"
        ),
        f"src/{package}/__init__.py": (
            f'"""The ddlsched plug-in {dist}: registers {family}.{name} (module `method`)."""\n'
        ),
        f"src/{package}/method.py": template_text(family, name),
        f"tests/test_{name}.py": (
            f'"""{family}.{name} against the conformance kit: python -m pytest tests."""\n\n'
            "from ddlsched.api import check_method, get_method\n\n\n"
            "def test_the_method_comes_from_the_entry_point():\n"
            f'    origin = get_method("{family}", "{name}").origin\n'
            '    assert origin is not None and origin.group == "ddlsched.methods", origin\n\n\n'
            "def test_the_method_passes_the_conformance_kit(tmp_path):\n"
            f'    assert check_method("{family}", "{name}", tmp_path) == []\n'
        ),
        f"suites/{name}.toml": _suite(family, name, out),
    }


def new_method(args: argparse.Namespace) -> int:
    """``ddlsched new method FAMILY NAME [--out DIR]``: write the plug-in; print what to run."""
    from ddlsched import __version__
    from ddlsched.errors import DdlschedError, UnknownMethodError
    from ddlsched.registry import families, methods

    family, name = args.family, args.name
    public = sorted(f.name for f in families() if f.name in SUITE_PLANS)
    if family not in public:
        raise UnknownMethodError(f"unknown family {family!r} (choose from {', '.join(public)})")
    if not name.isidentifier() or keyword.iskeyword(name):
        raise DdlschedError(f"method name {name!r} is not a Python identifier (e.g. my_lpt)")
    if name in {m.name for m in methods(family)}:
        raise DdlschedError(f"family {family!r} already has a method {name!r}: choose another")
    out = Path(args.out or f"ddlsched-{family}-{name}".replace("_", "-"))
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise DdlschedError(f"{out} exists and is not an empty directory")
    try:
        for relative, text in _files(family, name, __version__).items():
            path = out / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise DdlschedError(f"cannot write {out}: {exc.strerror or exc}") from None
    print(f"wrote the plug-in {family}.{name} to {out}; next:")
    print(f"  cd {out} && pip install -e . && python -m pytest tests")
    return 0


def add_new_command(sub: Any) -> None:
    """``new method FAMILY NAME [--out DIR]`` (the parser wiring of :mod:`ddlsched.cli`)."""
    new = sub.add_parser("new", help="write a plug-in package (a method for a family)")
    kinds = new.add_subparsers(dest="what", required=True, metavar="{method}")
    p = kinds.add_parser(
        "method",
        help="a method plug-in for FAMILY, working before it is edited",
        description="Write a plug-in package registering FAMILY.NAME through the entry point "
        "group ddlsched.methods: a correct trivial heuristic importing ddlsched.api only, a "
        "conformance test and a suite beside the paper's heuristic and the exact method. "
        f"Families: {', '.join(SUITE_PLANS)}. Guide: docs/your-own-method.md.",
    )
    p.add_argument("family", metavar="FAMILY", help="the family the method solves")
    p.add_argument("name", metavar="NAME", help="the method's name, a Python identifier")
    p.add_argument(
        "--out", metavar="DIR", help="where to write (default ./ddlsched-FAMILY-NAME; new or empty)"
    )
    p.set_defaults(func=new_method)
