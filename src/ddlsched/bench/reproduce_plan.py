"""Reproduction plans: which cuts of which suites reproduce a paper in about an hour.

A plan is data, ``benchmarks/reproduce/<paper>.toml``::

    [plan]
    paper = "placement"                 # the name ``ddlsched reproduce`` takes
    claims = "placement"                # benchmarks/claims/<claims>.toml (default: paper)
    title = "Heavy-Edge vs the placement ILP (Table II)"
    budget = "about 5 min on 2 cores"   # what the plan costs, in words (shown in --dry-run)

    [[cuts]]                            # one per suite the plan runs
    suite = "placement"                 # benchmarks/suites/<suite>.toml
    groups = ["table2", "table2-paper"] # instance groups kept (default: every group)
    seeds = 20                          # the first N seeds of every instance set (default: all)
    drop_methods = ["exact_gpu_level"]  # method labels left out (default: none)
    larger_budget = "exact_gpu_level on every instance: a second exact bound, +50 min"
    fresh = false                       # no fresh-seed cut (--fresh-seeds): e.g. trace
                                        # instances the seed does not change (default: true)

    [cuts.methods.colgen]               # per method label (or name): a budget of its own
    params = { max_rounds = 10 }        # merged into the method's parameters
    seeds = 1                           # the first N of its method seeds
    time_limit_s = 120                  # its time limit (prefer rounds: machine-independent)
    groups = ["table2"]                 # the method's groups the cut keeps (default: all)

``drop_methods`` names labels only (dropping ``lb_branch`` keeps ``lb_branch_n200``, the same
method under another label); a budget table may name a method instead of a label, and then
holds for every label of that method that has no budget table of its own.

A cut is written as a suite file (:func:`cut_suite_text`) that keeps the suite's name,
so that the rows carry it and the claims that name the suite read them; its task keys
are those of the full suite (parameter overrides aside), so a later full run into the
same results directory reruns nothing a cut ran. Instance files named relative to the
suite are written as absolute paths. A bad plan is a :class:`~ddlsched.errors.DdlschedError`
naming the file and the field.
"""

from __future__ import annotations

import json
import math
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ddlsched.errors import DdlschedError

__all__ = [
    "Cut",
    "MethodBudget",
    "Plan",
    "check_fresh",
    "cut_suite_text",
    "find_benchmarks",
    "load_plan",
    "plan_names",
    "runs_fresh",
]

#: Where the plans live, under the repository's ``benchmarks/``.
PLANS_DIR = "reproduce"


@dataclass(frozen=True)
class MethodBudget:
    """One method's budget in a cut: parameter overrides, method seeds kept, time limit,
    and the instance groups it runs on (``None``: every group the cut and the suite give it)."""

    params: Mapping[str, Any] = field(default_factory=dict)
    seeds: int | None = None
    time_limit_s: float | None = None
    groups: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Cut:
    """Which part of one suite a plan runs (``None``: all of it)."""

    suite: str
    groups: tuple[str, ...] | None = None
    seeds: int | None = None
    drop_methods: tuple[str, ...] = ()
    methods: Mapping[str, MethodBudget] = field(default_factory=dict)
    larger_budget: str = ""
    fresh: bool = True  # whether ``--fresh-seeds`` runs this cut again on other seeds

    def summary(self) -> str:
        """One line: what the cut keeps of its suite."""
        parts = [f"groups {', '.join(self.groups)}" if self.groups else "every group"]
        parts.append(f"first {self.seeds} seed(s)" if self.seeds else "every seed")
        if self.drop_methods:
            parts.append(f"without {', '.join(self.drop_methods)}")
        for label, budget in self.methods.items():
            said = [f"{k} = {v}" for k, v in budget.params.items()]
            if budget.seeds is not None:
                said.append(f"{budget.seeds} method seed(s)")
            if budget.time_limit_s is not None:
                said.append(f"{budget.time_limit_s:g} s")
            if budget.groups is not None:
                said.append(f"only on {', '.join(budget.groups)}")
            parts.append(f"{label}: {', '.join(said)}")
        return "; ".join(parts)


@dataclass(frozen=True)
class Plan:
    """A paper's reproduction plan: its claims file and the cuts of suites it runs."""

    paper: str
    claims: str
    title: str
    budget: str
    cuts: tuple[Cut, ...]
    source: Path


def find_benchmarks(given: str | Path | None = None) -> Path:
    """The repository's ``benchmarks/`` folder: ``given`` (checked), else the one beside
    the package's source tree (a clone or an editable install), else ``./benchmarks``."""
    if given is not None:
        path = Path(given)
        if not (path / "suites").is_dir():
            raise DdlschedError(f"--benchmarks {path}: no suites/ folder in it")
        return path
    here = Path(__file__).resolve()
    for candidate in (here.parents[3] / "benchmarks", Path.cwd() / "benchmarks"):
        if (candidate / "suites").is_dir() and (candidate / PLANS_DIR).is_dir():
            return candidate
    raise DdlschedError(
        "benchmarks/ (suites, claims, reproduction plans) not found beside the package or in "
        "the current directory: run from a clone of the repository or give --benchmarks DIR"
    )


def plan_names(benchmarks: Path) -> list[str]:
    """The papers with a plan, sorted."""
    return sorted(p.stem for p in (benchmarks / PLANS_DIR).glob("*.toml"))


def _fail(source: Path, where: str, message: str) -> DdlschedError:
    return DdlschedError(f"{source}: {where}: {message}")


def _strings(source: Path, where: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise _fail(source, where, f"expected a list of names, got {value!r}")
    return tuple(value)


def _count(source: Path, where: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise _fail(source, where, f"expected an integer >= 1, got {value!r}")
    return value


def _method_budget(source: Path, where: str, table: Any) -> MethodBudget:
    if not isinstance(table, dict) or set(table) - {"params", "seeds", "time_limit_s", "groups"}:
        raise _fail(source, where, "expected a table with params, seeds, time_limit_s, groups")
    params = table.get("params", {})
    if not isinstance(params, dict):
        raise _fail(source, f"{where}.params", "expected a table of parameter values")
    seeds = table.get("seeds")
    groups = table.get("groups")
    limit = table.get("time_limit_s")
    if limit is not None and (
        isinstance(limit, bool)
        or not isinstance(limit, (int, float))
        or not math.isfinite(limit)
        or limit <= 0
    ):
        raise _fail(source, f"{where}.time_limit_s", f"expected seconds > 0, got {limit!r}")
    return MethodBudget(
        params=params,
        seeds=None if seeds is None else _count(source, f"{where}.seeds", seeds),
        time_limit_s=None if limit is None else float(limit),
        groups=None if groups is None else _strings(source, f"{where}.groups", groups),
    )


def _cut(source: Path, where: str, table: Any, suites: Path) -> Cut:
    allowed = {"suite", "groups", "seeds", "drop_methods", "methods", "larger_budget", "fresh"}
    if not isinstance(table, dict):
        raise _fail(source, where, "expected a table [[cuts]]")
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise _fail(
            source, f"{where}.{unknown[0]}", f"unknown field ({', '.join(sorted(allowed))})"
        )
    suite = table.get("suite")
    if not isinstance(suite, str) or not (suites / f"{suite}.toml").is_file():
        raise _fail(source, f"{where}.suite", f"no suite {suite!r} in {suites}")
    methods = table.get("methods", {})
    if not isinstance(methods, dict):
        raise _fail(source, f"{where}.methods", "expected [cuts.methods.LABEL] tables")
    groups = table.get("groups")
    seeds = table.get("seeds")
    larger = table.get("larger_budget", "")
    if not isinstance(larger, str):
        raise _fail(source, f"{where}.larger_budget", "expected text")
    fresh = table.get("fresh", True)
    if not isinstance(fresh, bool):
        raise _fail(source, f"{where}.fresh", f"expected true or false, got {fresh!r}")
    return Cut(
        suite=suite,
        groups=None if groups is None else _strings(source, f"{where}.groups", groups),
        seeds=None if seeds is None else _count(source, f"{where}.seeds", seeds),
        drop_methods=_strings(source, f"{where}.drop_methods", table.get("drop_methods", [])),
        methods={
            label: _method_budget(source, f"{where}.methods.{label}", budget)
            for label, budget in methods.items()
        },
        larger_budget=" ".join(larger.split()),
        fresh=fresh,
    )


def load_plan(paper: str, benchmarks: Path) -> Plan:
    """The plan of ``paper`` from ``benchmarks/reproduce/<paper>.toml``, checked (its
    suites and claims file exist); an unknown paper names the known ones."""
    known = plan_names(benchmarks)
    if paper not in known:
        raise DdlschedError(f"unknown paper {paper!r} (choose from {', '.join(known)}, or all)")
    source = benchmarks / PLANS_DIR / f"{paper}.toml"
    try:
        data = tomllib.loads(source.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise DdlschedError(f"{source}: not a readable TOML file ({exc})") from None
    head = data.get("plan")
    if not isinstance(head, dict) or head.get("paper") != paper:
        raise _fail(source, "plan.paper", f"expected [plan] with paper = {paper!r}")
    claims = head.get("claims", paper)
    if not isinstance(claims, str) or not (benchmarks / "claims" / f"{claims}.toml").is_file():
        raise _fail(source, "plan.claims", f"no claims file {claims!r} in {benchmarks / 'claims'}")
    cuts = data.get("cuts")
    if not isinstance(cuts, list) or not cuts:
        raise _fail(source, "cuts", "expected at least one [[cuts]] table")
    return Plan(
        paper=paper,
        claims=claims,
        title=str(head.get("title", paper)),
        budget=str(head.get("budget", "")),
        cuts=tuple(
            _cut(source, f"cuts[{i}]", table, benchmarks / "suites") for i, table in enumerate(cuts)
        ),
        source=source,
    )


def _first_seeds(value: Any, count: int | None) -> Any:
    """The first ``count`` seeds of a suite's ``seeds`` value (a list or ``{first, count}``)."""
    if count is None:
        return value
    if isinstance(value, dict):
        return {**value, "count": min(count, value.get("count", count))}
    return list(value)[:count]


def _label(method: Mapping[str, Any]) -> str:
    return str(method.get("label", method.get("name", "")))


def _cut_methods(methods: Sequence[dict], cut: Cut, groups: set[str]) -> list[dict]:
    """The suite's methods the cut keeps, with their budgets. ``drop_methods`` names labels
    (a method without a label is labelled by its name), so that dropping ``lb_branch``
    keeps ``lb_branch_n200``, the same method under another label and budget."""
    labels = {_label(m) for m in methods}
    unknown = sorted(set(cut.drop_methods) - labels)
    if unknown:
        raise DdlschedError(
            f"cut of {cut.suite}: drop_methods: no method labelled {unknown[0]!r} in the suite"
        )
    kept = []
    for method in methods:
        if _label(method) in cut.drop_methods:
            continue
        method = dict(method)
        budget = cut.methods.get(_label(method)) or cut.methods.get(method.get("name", ""))
        if budget is not None and budget.groups is not None:
            unknown = sorted(set(budget.groups) - groups)
            if unknown:
                raise DdlschedError(
                    f"cut of {cut.suite}: methods.{_label(method)}.groups: no group "
                    f"{unknown[0]!r} in the cut (groups: {', '.join(sorted(groups))})"
                )
            method["groups"] = [
                g for g in method.get("groups", sorted(groups)) if g in budget.groups
            ]
        if "groups" in method:
            method["groups"] = [g for g in method["groups"] if g in groups]
            if not method["groups"]:
                continue
        if budget is not None:
            if budget.params:
                method["params"] = {**method.get("params", {}), **budget.params}
            if budget.seeds is not None:
                method["seeds"] = _first_seeds(method.get("seeds", [0]), budget.seeds)
            if budget.time_limit_s is not None:
                method["time_limit_s"] = budget.time_limit_s
                method.pop("kill_after_s", None)
        kept.append(method)
    return kept


def cut_suite_text(
    cut: Cut,
    suites: Path,
    note: str = "",
    fresh_from: int | None = None,
    source: Path | None = None,
    head: str | None = None,
    output: str | None = None,
) -> str:
    """The suite file of ``cut``: the suite ``suites/<cut.suite>.toml`` (or ``source``) with
    only the cut's groups, seeds and methods, its methods' budgets, as TOML text (``note``: a
    comment; ``head``: the first line instead of the one naming the cut; ``output``: the
    suite's ``output``, else none).

    ``fresh_from``: the same cut on other instance seeds, as many per instance set as the
    cut's, from ``fresh_from`` on (``seeds = [F, F + 1, ...]``); instance sets of files (no
    seeds) are left out, and so are the methods of a family left without instance sets. A
    fresh seed the suite names for the same family and preset (in any group) is an error,
    and so is a cut with no seeded instance set (:func:`runs_fresh` says which cuts have one).
    The text is parsed back before it is returned: a value TOML cannot hold is an error
    naming the suite read.
    """
    from ddlsched.bench.suite import _read_toml

    path = source if source is not None else suites / f"{cut.suite}.toml"
    data, _ = _read_toml(path)
    instances = []
    for table in data.get("instances", []):
        group = table.get("group", table.get("preset"))
        if cut.groups is not None and group not in cut.groups:
            continue
        table = dict(table)
        if "seeds" in table:
            table["seeds"] = _first_seeds(table["seeds"], cut.seeds)
            if fresh_from is not None:
                named = _named_seeds(path, data, table)
                table["seeds"] = _fresh_seeds(path, group, table["seeds"], named, fresh_from)
        elif fresh_from is not None:
            continue
        if "files" in table:
            files = [table["files"]] if isinstance(table["files"], str) else table["files"]
            table["files"] = [str((path.parent / f).resolve()) for f in files]
        instances.append(table)
    if not instances:
        what = "instance set with seeds" if fresh_from is not None else "instance group"
        which = f" in groups {', '.join(cut.groups)}" if cut.groups is not None else ""
        raise DdlschedError(f"{path}: no {what}{which}")
    groups = {str(t.get("group", t.get("preset"))) for t in instances}
    families = {t.get("family") for t in instances}
    data["instances"] = instances
    methods = [m for m in data.get("methods", []) if m.get("family", None) in families | {None}]
    data["methods"] = _cut_methods(methods, cut, groups)
    if not data["methods"]:
        raise DdlschedError(f"cut of {path}: no method left")
    head_table = data.setdefault("suite", {})
    head_table.pop("output", None)
    if output is not None:
        head_table["output"] = output
    if "reference" in head_table:  # the references the cut still runs
        labels = {_label(m) for m in data["methods"]}
        given = head_table["reference"]
        kept = [r for r in ([given] if isinstance(given, str) else given) if r in labels]
        if kept:
            head_table["reference"] = kept
        else:
            del head_table["reference"]
    if head is None:
        fresh = f" on fresh instance seeds from {fresh_from}" if fresh_from is not None else ""
        head = f"A cut of {path.name}, written by ddlsched reproduce{fresh}: {cut.summary()}."
    text = "\n".join([f"# {head}", *([f"# {note}"] if note else [])]) + "\n\n" + _toml(data)
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise DdlschedError(f"{path}: cannot write its cut as TOML ({exc})") from None
    return text


def _named_seeds(path: Path, data: Mapping[str, Any], table: Mapping[str, Any]) -> list[int]:
    """Every instance seed the suite names for ``table``'s family and preset, in any group."""
    from ddlsched.bench.suite_values import SuiteError, check_seeds

    named: set[int] = set()
    for other in data.get("instances", []):
        same = (other.get("family"), other.get("preset")) == (
            table.get("family"),
            table.get("preset"),
        )
        if same and "seeds" in other:
            group = other.get("group", other.get("preset"))
            try:
                named |= set(check_seeds("seeds", other["seeds"]))
            except SuiteError as exc:
                raise DdlschedError(f"{path}: group {group}: {exc}") from None
    return sorted(named)


def runs_fresh(cut: Cut, suites: Path) -> bool:
    """Whether ``--fresh-seeds`` runs ``cut`` again: the plan lets it (``fresh``) and it keeps
    an instance set with seeds."""
    data = tomllib.loads((suites / f"{cut.suite}.toml").read_text(encoding="utf-8"))
    return cut.fresh and any(
        "seeds" in table
        and (cut.groups is None or table.get("group", table.get("preset")) in cut.groups)
        for table in data.get("instances", [])
    )


def check_fresh(plan: Plan, suites: Path, first: int) -> None:
    """Raise the one-line error of the first of ``plan``'s fresh-seed cuts that cannot run
    (a seed its suite names, or beyond the largest seed), before anything runs."""
    for cut in plan.cuts:
        if runs_fresh(cut, suites):
            cut_suite_text(cut, suites, fresh_from=first)


def _fresh_seeds(path: Path, group: Any, value: Any, named: Sequence[int], first: int) -> list[int]:
    """As many seeds as ``value`` names, from ``first`` on; none of them ``named`` (the
    suite's seeds of the same family and preset), none beyond the largest seed."""
    from ddlsched.bench.suite_values import SuiteError, check_seeds
    from ddlsched.cli_types import MAX_SEED

    try:
        seeds = check_seeds("seeds", value)
    except SuiteError as exc:
        raise DdlschedError(f"{path}: group {group}: {exc}") from None
    fresh = list(range(first, first + len(seeds)))
    if fresh[-1] > MAX_SEED:
        raise DdlschedError(
            f"fresh seeds {fresh[0]}-{fresh[-1]}: beyond the largest seed {MAX_SEED}"
        )
    if set(fresh) & set(named):
        raise DdlschedError(
            f"fresh seeds {fresh[0]}-{fresh[-1]} overlap the seeds {min(named)}-{max(named)} that "
            f"{path.name} names for group {group}'s preset: choose seeds from {max(named) + 1} on"
        )
    return fresh


def _value(value: Any) -> str:
    """A TOML value: scalars, arrays and inline tables (what suite files hold)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, (int, float, str)):  # JSON's escapes are TOML's, but for DEL
        return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{_key(k)} = {_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    raise DdlschedError(f"cannot write {value!r} in a suite file")


def _key(key: str) -> str:
    bare = key.replace("_", "").replace("-", "").isalnum() and key.isascii()
    return key if bare else json.dumps(key)


def _toml(data: Mapping[str, Any]) -> str:
    out: list[str] = []
    for name, table in data.items():
        if isinstance(table, list):
            for item in table:
                out.append(f"[[{name}]]")
                out += [f"{_key(k)} = {_value(v)}" for k, v in item.items()]
                out.append("")
        else:
            out.append(f"[{name}]")
            out += [f"{_key(k)} = {_value(v)}" for k, v in table.items()]
            out.append("")
    return "\n".join(out)
