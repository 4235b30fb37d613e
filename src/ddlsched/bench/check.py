"""Everything a run of a suite would check task by task, checked before any task runs.

:func:`check_suite` is what :func:`ddlsched.bench.suite.load_suite` calls
(so ``ddlsched bench validate`` and ``ddlsched bench run`` both do): a suite
that passes fails no task for a reason known in advance. Per task, a run
checks

* the backend (``RunOptions``): each method's (or ``[limits]``'s) backend
  must be a known one;
* the method's parameters against its typed parameter class
  (:func:`ddlsched.params.build_params`), for every sweep point;
* the instance: built from its generator recipe (the family's
  ``generate(preset, seed, **params)``) or loaded from its file (the
  family's ``load``, through the input gate), then the family's
  ``check_instance`` hook if it has one (what a method reads before it runs,
  e.g. ``muri_sim``'s trace).

With an instance cache (``cache_dir``, a run's ``<results>/instances/``,
:mod:`ddlsched.bench.instance_cache`), an instance whose cache file checks
out is not built again (its file's header and hash are checked; a family
with a ``check_instance`` hook has the instance read back and checked),
and an instance built here is written to the cache, for the next check and
for the run's workers. So the first ``ddlsched bench validate`` of a suite
builds its instances and the next ones, and the ``bench run`` after them,
only read what was built (``bench validate`` builds every instance when it
has the cache, as nothing it builds is lost; ``bench run``'s own check keeps
the budget below, its workers build the rest).

Instances are tried in rounds, the first seed of every (preset, parameters)
point and every file first, then the second seeds, and so on, within a time
budget (:data:`DEFAULT_BUDGET_S`, ``$DDLSCHED_CHECK_BUDGET_S`` or the
``budget_s`` argument); on the main thread the budget also interrupts a
generator that would not return (a huge instance). What the budget left
unchecked is a note, not an error.

Problems are grouped: one :class:`Problem` per distinct (field, message),
with the number of tasks it would fail; ``load_suite`` raises them together
as one :class:`~ddlsched.bench.suite_values.SuiteCheckError` (one line: the
problem, or the first of several and their count; :meth:`SuiteCheck.lines`
lists them all).
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ddlsched.deadline import Deadline
from ddlsched.errors import DdlschedError

__all__ = ["BUDGET_ENV", "DEFAULT_BUDGET_S", "Problem", "SuiteCheck", "check_suite"]

# The suite (a ddlsched.bench.suite_spec.Suite) is used through its methods, not imported:
# ddlsched.bench.suite calls this module, never the other way round.
Suite = Any
InstanceSet = Any

#: Seconds spent generating and loading instances, by default.
DEFAULT_BUDGET_S = 30.0
BUDGET_ENV = "DDLSCHED_CHECK_BUDGET_S"
_EXAMPLES = 1  # instance ids shown per problem


@dataclass
class Problem:
    """One distinct problem: where (a suite field), what, and how many tasks it fails."""

    where: str
    message: str
    tasks: int = 0
    instances: list[str] = field(default_factory=list)  # the instances that have it

    def text(self, total: int) -> str:
        where = self.where
        if self.instances:
            more = len(self.instances) - _EXAMPLES
            shown = ", ".join(self.instances[:_EXAMPLES])
            where += f" ({shown}" + (f" and {more} more instance(s))" if more > 0 else ")")
        return f"{where}: {self.message} [{self.tasks:,} of {total:,} task(s)]"


@dataclass
class SuiteCheck:
    """What :func:`check_suite` found."""

    source: str | None
    tasks: int  # tasks of the suite (counted)
    failing: int = 0  # tasks at least one problem would fail
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    instances_total: int = 0
    instances_checked: int = 0
    instances_cached: int = 0  # of those checked, read from the instance cache (not built)

    def lines(self) -> list[str]:
        """One line per problem: ``<file>: <field> (<instance>): <message> [n of N task(s)]``."""
        prefix = f"{self.source}: " if self.source else ""
        return [prefix + p.text(self.tasks) for p in self.problems]

    def summary(self) -> str:
        """One line: the problem, or how many there are and the first."""
        if len(self.problems) == 1:
            return self.problems[0].text(self.tasks)
        return (
            f"{len(self.problems)} problems would fail {self.failing:,} of {self.tasks:,} "
            f"task(s); the first: {self.problems[0].text(self.tasks)} "
            "(ddlsched bench validate lists them all)"
        )


class _OutOfTime(BaseException):
    """The budget ran out inside a generator (a BaseException: no ``except Exception``
    of the generator swallows it; raised by :meth:`Deadline.interrupting`)."""


def _budget(budget_s: float | None) -> float:
    if budget_s is None:
        text = os.environ.get(BUDGET_ENV)
        if not text:
            return DEFAULT_BUDGET_S
        try:
            budget_s = float(text)
        except ValueError:
            raise DdlschedError(f"{BUDGET_ENV}: expected seconds, got {text!r}") from None
    if math.isnan(budget_s) or budget_s < 0:
        raise DdlschedError(f"instance check budget: expected seconds >= 0, got {budget_s!r}")
    return budget_s


class _Collector:
    def __init__(self) -> None:
        self.found: dict[tuple[str, str], Problem] = {}

    def add(self, where: str, message: str, tasks: int, instance: str | None = None) -> None:
        message = " ".join(message.split())  # one line, whatever the exception said
        problem = self.found.setdefault((where, message), Problem(where, message))
        problem.tasks += tasks
        if instance is not None:
            problem.instances.append(instance)


def _instances(suite: Suite, cache_dir: Any) -> list[tuple[int, int, InstanceSet, Any]]:
    """``(round, set index, set, instance spec)`` of every instance that some task uses,
    in checking order (round 0: each point's first seed and every file)."""
    from ddlsched.bench.tasks import instance_specs

    out = []
    for k, inst in enumerate(suite.instances):
        if suite.tasks_per_instance(inst) == 0:
            continue
        rounds = {seed: r for r, seed in enumerate(inst.seeds)}
        for spec in instance_specs(suite, inst, cache_dir, hash_files=False):
            out.append((rounds.get(spec.seed, 0), k, inst, spec))
    out.sort(key=lambda item: item[0])  # stable: rounds, then suite order
    return out


def _build(spec: Any) -> bool:
    """Build (or load) the instance of ``spec`` as a worker would, and check it; an
    instance whose cache file checks out is not built again (module docstring).
    Whether it came from the cache."""
    from ddlsched.bench import instance_cache
    from ddlsched.bench.fingerprint import instance_fingerprint
    from ddlsched.bench.tasks import generated_instance
    from ddlsched.registry import get_family

    fam = get_family(spec.family)
    if spec.file is not None:
        instance, from_cache = fam.load(spec.file), False
    else:
        code = instance_fingerprint(spec.family)
        if (
            spec.cache_dir is not None
            and fam.check_instance is None
            and instance_cache.verify(spec.cache_dir, spec.key(code), spec.recipe(), code)
        ):
            return True  # nothing to check on the instance itself: not even parsed
        instance, from_cache = generated_instance(spec, code, make_dir=True)
    if fam.check_instance is not None:
        fam.check_instance(instance)
    return from_cache


def _check_methods(suite: Suite, found: _Collector) -> dict[tuple[int, str], bool]:
    """Backends and parameter values; ``{(method index, label): fails}``."""
    from ddlsched.params import build_params
    from ddlsched.registry import get_method
    from ddlsched.solvers.result import BACKENDS

    bad: dict[tuple[int, str], bool] = {}
    for i, spec in enumerate(suite.methods):
        fam = suite.family_of(spec)
        method = get_method(fam, spec.name)
        on = sum(
            suite.instance_count(inst) for inst in suite.instances if suite.applies(spec, inst)
        )
        per_variant = on * len(spec.seeds)
        backend = spec.backend or suite.limits.backend
        backend_bad = backend not in BACKENDS
        if backend_bad:
            where = f"methods[{i}].backend" if spec.backend else "limits.backend"
            found.add(
                where,
                f"unknown backend {backend!r} (choose from {', '.join(BACKENDS)})",
                per_variant * len(spec.variants()),
            )
        unknown = [key for key in [*spec.params, *spec.sweep] if key not in method.params]
        for key in unknown:
            known = ", ".join(sorted(method.params)) or "none"
            found.add(
                f"methods[{i}].params.{key}",
                f"method {fam}.{spec.name} has no parameter {key!r} (known: {known})",
                per_variant * len(spec.variants()),
            )
        for label, point in spec.variants():
            if unknown:
                bad[(i, label)] = True
                continue
            fails = backend_bad
            try:
                build_params(method.params_type, point, f"method {fam}.{spec.name}")
            except DdlschedError as exc:
                found.add(f"methods[{i}].params ({label})", str(exc), per_variant)
                fails = True
            bad[(i, label)] = fails
    return bad


def check_suite(
    suite: Suite,
    *,
    budget_s: float | None = None,
    cache_dir: Any = None,
    on_instance: Callable[[int, int], None] | None = None,
) -> SuiteCheck:
    """Check every task of ``suite`` as a run would, before it runs (module docstring).

    Returns the :class:`SuiteCheck`: its problems (which
    :func:`~ddlsched.bench.suite.load_suite` raises as one
    :class:`~ddlsched.bench.suite_values.SuiteCheckError`) and notes. ``budget_s``: seconds
    for generating and loading instances (``None``: ``$DDLSCHED_CHECK_BUDGET_S``
    or :data:`DEFAULT_BUDGET_S`; 0: no instance is built; ``math.inf``: every
    instance is); ``cache_dir``: the run's instance cache folder (``None``: none;
    every instance is built); ``on_instance(done, total)``: called before each
    instance and after the last (a progress bar).
    """
    budget = _budget(budget_s)
    report = SuiteCheck(source=suite.source, tasks=suite.task_count())
    found = _Collector()
    method_bad = _check_methods(suite, found)
    # tasks each instance set's instances lose to bad methods alone
    lost_per_instance = [
        sum(
            len(spec.seeds)
            for i, spec in enumerate(suite.methods)
            if suite.applies(spec, inst)
            for label, _ in spec.variants()
            if method_bad[(i, label)]
        )
        for inst in suite.instances
    ]
    failing = sum(
        suite.instance_count(inst) * lost
        for inst, lost in zip(suite.instances, lost_per_instance, strict=True)
    )

    items = _instances(suite, cache_dir)
    report.instances_total = len(items)
    started = time.monotonic()
    unchecked_rounds: set[int] = set()
    if budget > 0:
        for position, (_round, k, inst, inst_spec) in enumerate(items):
            if on_instance is not None:
                on_instance(position, len(items))
            left = budget - (time.monotonic() - started)
            if left <= 0:
                unchecked_rounds.update(item[0] for item in items[position:])
                break
            per_instance = suite.tasks_per_instance(inst)
            try:
                with Deadline(max(left, 1e-3)).interrupting("checking instances", _OutOfTime):
                    from_cache = _build(inst_spec)
            except _OutOfTime:
                unchecked_rounds.update(item[0] for item in items[position:])
                report.notes.append(
                    f"instances[{k}] ({inst_spec.instance_id}): not checked, still "
                    f"being built when the {budget:g} s budget ran out"
                )
                break
            except MemoryError:
                message = "MemoryError: the instance does not fit in memory"
            except DdlschedError as exc:
                message = str(exc)
            except Exception as exc:  # a run would record the same error row
                message = f"{type(exc).__name__}: {exc}"
            else:
                report.instances_checked += 1
                report.instances_cached += from_cache
                continue
            report.instances_checked += 1
            found.add(f"instances[{k}]", message, per_instance, inst_spec.instance_id)
            failing += per_instance - lost_per_instance[k]
    if on_instance is not None:
        on_instance(report.instances_checked, len(items))
    if budget == 0 and items:
        report.notes.append(
            f"instances: none of {len(items):,} built (budget 0 s; ${BUDGET_ENV} sets it)"
        )
    elif report.instances_checked < report.instances_total:
        how = (
            "each preset point and file was built once"
            if 0 not in unchecked_rounds
            else "some preset points or files were not built at all"
        )
        report.notes.append(
            f"instances: {report.instances_checked:,} of {report.instances_total:,} built "
            f"within the {budget:g} s budget ({how}; ${BUDGET_ENV} sets the budget)"
        )
    report.problems = list(found.found.values())
    report.failing = failing
    return report
