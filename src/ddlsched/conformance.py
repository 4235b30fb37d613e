"""The checks every registered family must pass (``tests/test_conformance.py`` runs them).

:func:`check_family` generates the family's ``smoke`` instance and checks:

1. **JSON round trip**: ``from_dict(to_dict(instance))`` equals the instance
   and so does ``load`` of a saved file;
2. **every method works** (except ``hazardous`` ones, which fail on
   purpose): on the smoke instance it ends without ``error`` or
   ``time_limit_no_solution`` (a failure there is either a bug or a smoke
   instance too large), ``optimal``/``feasible`` carry a schedule and an
   objective, ``bound_only`` a bound, ``no_solution`` (a heuristic that
   found no schedule: a result) a reason and no objective, and
   ``time_limit_hit`` comes with a non-empty ``info['stopped']`` and never
   without (``docs/statuses.md``);
3. **independent re-evaluation**: each schedule, rendered to JSON, read
   back with ``schedule_from_json`` and evaluated on the instance read back
   from JSON, gives the objective the result reports (so the objective is a
   function of the schedule's decisions, not of anything a method attached);
4. **bounds below objectives**: every method's bound is on the right side of
   every method's objective (``lower bound <= objective`` when minimising),
   and no schedule beats a proven optimum;
5. **bad files**: a malformed file, a file of another shape and a missing
   file get one line ``ddlsched: error: ...`` and exit status 2 from
   ``ddlsched instance check`` and ``ddlsched solve``;
6. **declared hooks**: the family declares ``size`` (the instance size of
   every benchmark row), an integer ``>= 0`` or ``None`` on the smoke
   instance, and an unknown preset is one line naming the family's presets.

Another package that adds a family (entry point ``ddlsched.families``) can
run the same checks: ``assert not check_family("myfam", tmp_path)``.
:func:`check_method` runs them on one method (a plug-in's:
``assert not check_method("rar", "my_lpt", tmp_path)``): checks 2, 3 and 5 on
it, check 4 against the family's bound methods (and, for a bound or exact
method, against the family's heuristics), and 7: the same seed gives the
same schedule.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
from pathlib import Path
from typing import Any

from ddlsched.deadline import DEFAULT_TIME_LIMIT_S
from ddlsched.errors import DdlschedError
from ddlsched.pipeline import objective_tolerance
from ddlsched.registry import RunOptions, get_family, methods, run_method
from ddlsched.solvers.result import SolveResult, Status

__all__ = ["check_family", "check_method"]

_VALID = {str(s) for s in Status}


def _beyond(sense: str, bound: float, objective: float) -> bool:
    """Whether ``bound`` is on the wrong side of ``objective`` (beyond the tolerance)."""
    excess = bound - objective if sense == "min" else objective - bound
    return excess > objective_tolerance(bound, objective)


def _check_round_trip(fam, instance: Any, directory: Path, problems: list[str]) -> Any:
    data = instance.to_dict()
    text = json.dumps(data)
    again = fam.from_dict(json.loads(text))
    if again != instance:
        problems.append(f"{fam.name}: from_dict(to_dict(instance)) differs from the instance")
    path = directory / f"{fam.name}-smoke.json"
    instance.save(path)
    loaded = fam.load(path)
    if loaded != instance:
        problems.append(f"{fam.name}: load(save(instance)) differs from the instance")
    return loaded


def _check_result(fam, instance: Any, result: SolveResult, problems: list[str]) -> None:
    where = f"{fam.name}.{result.method}"
    if str(result.status) not in _VALID:
        problems.append(f"{where}: unknown status {result.status!r}")
        return
    stopped = result.info.get("stopped")
    if result.time_limit_hit != bool(stopped) or (stopped is not None and not stopped):
        problems.append(
            f"{where}: time_limit_hit is {result.time_limit_hit} but info['stopped'] is "
            f"{stopped!r} (a cut result names what the limit cut, an uncut one has neither)"
        )
    if result.status in (Status.ERROR, Status.TIME_LIMIT_NO_SOLUTION):
        problems.append(
            f"{where}: {result.status} on the smoke instance "
            f"({result.info.get('error') or result.info.get('stopped', '')})"
        )
        return
    if result.status in (Status.OPTIMAL, Status.FEASIBLE):
        if result.schedule is None or result.objective is None:
            problems.append(f"{where}: status {result.status} without a schedule and objective")
            return
    elif result.status is Status.BOUND_ONLY and result.bound is None:
        problems.append(f"{where}: status bound_only without a bound")
    elif result.status is Status.NO_SOLUTION:
        if not result.info.get("reason") or result.objective is not None:
            problems.append(f"{where}: status no_solution needs a reason and no objective")
        return
    if result.schedule is None or result.objective is None:
        return
    try:
        rendered = json.loads(json.dumps(fam.schedule_to_json(result.schedule, None)))
        schedule = fam.schedule_from_json(rendered)
        value = float(fam.objective(fam.evaluate(instance, schedule)))
    except Exception as exc:  # any failure to re-evaluate is a conformance failure
        problems.append(
            f"{where}: the schedule could not be re-evaluated from its JSON form "
            f"({type(exc).__name__}: {exc})"
        )
        return
    if not math.isclose(value, result.objective, rel_tol=1e-9, abs_tol=1e-12):
        problems.append(
            f"{where}: re-evaluation of the schedule gives {value!r}, "
            f"the result reports {result.objective!r}"
        )


def _check_chain(fam, results: list[SolveResult], problems: list[str]) -> None:
    objectives = [(r.method, r.objective) for r in results if r.objective is not None]
    for r in results:
        if r.bound is None:
            continue
        for method, objective in objectives:
            if _beyond(fam.sense, r.bound, objective):
                problems.append(
                    f"{fam.name}.{r.method}: bound {r.bound!r} is beyond the objective "
                    f"{objective!r} of {method}"
                )
    for r in results:
        if r.status is not Status.OPTIMAL or r.objective is None:
            continue
        for method, objective in objectives:
            better = objective < r.objective if fam.sense == "min" else objective > r.objective
            if better and not math.isclose(objective, r.objective, rel_tol=1e-6, abs_tol=1e-9):
                problems.append(
                    f"{fam.name}.{r.method}: proven optimum {r.objective!r} beaten by "
                    f"{method}'s {objective!r}"
                )


def _cli(args: list[str]) -> tuple[int, str]:
    from ddlsched.cli import main

    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(args)
    return code, err.getvalue()


def _check_bad_files(fam, method: str, directory: Path, problems: list[str]) -> None:
    bad = {
        "malformed": "{not json",
        "wrong-shape": json.dumps([1, 2, 3]),
        "wrong-family": json.dumps({"family": "nope", "schema_version": 1}),
    }
    cases = []
    for name, text in bad.items():
        path = directory / f"{fam.name}-{name}.json"
        path.write_text(text)
        cases.append(path)
    cases.append(directory / f"{fam.name}-missing.json")
    for path in cases:
        for args in (
            ["instance", "check", fam.name, str(path)],
            ["solve", fam.name, str(path), "--method", method],
        ):
            code, err = _cli(args)
            lines = err.strip().splitlines()
            if code != 2 or len(lines) != 1 or not lines[0].startswith("ddlsched: error:"):
                problems.append(
                    f"{fam.name}: `ddlsched {' '.join(args[:2])}` on {path.name} gave exit "
                    f"{code} and {len(lines)} line(s) on stderr, not one error line and exit 2"
                )


def _check_hooks(fam, instance: Any, problems: list[str]) -> None:
    if fam.size is None:
        problems.append(f"{fam.name}: no size hook (Family.size: the instance size of a row)")
    else:
        size = fam.size(instance)
        if size is not None and (isinstance(size, bool) or not isinstance(size, int) or size < 0):
            problems.append(f"{fam.name}: size(smoke instance) is {size!r}, not an integer >= 0")
    try:
        fam.generate("no-such-preset", 0)
    except DdlschedError as exc:
        if not all(preset in str(exc) for preset in fam.presets):
            problems.append(f"{fam.name}: the unknown-preset error does not list the presets")
    else:
        problems.append(f"{fam.name}: an unknown preset generated an instance")


def check_family(
    name: str, directory: Path, time_limit_s: float = DEFAULT_TIME_LIMIT_S
) -> list[str]:
    """Run the conformance checks on family ``name``; the problems found (empty: conforms).

    ``directory`` is a scratch directory for instance files.
    """
    fam = get_family(name)
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    problems: list[str] = []
    preset, params = fam.smoke
    if preset not in fam.presets:
        problems.append(f"{name}: smoke preset {preset!r} is not one of {fam.presets}")
        return problems
    instance = fam.generate(preset, 0, **dict(params))
    reloaded = _check_round_trip(fam, instance, directory, problems)
    _check_hooks(fam, instance, problems)
    results = []
    runnable = [m for m in methods(name) if not m.hazardous]
    if not runnable:
        problems.append(f"{name}: no method to run")
        return problems
    for method in runnable:
        result = run_method(name, method.name, instance, RunOptions(time_limit_s=time_limit_s))
        _check_result(fam, reloaded, result, problems)
        results.append(result)
    _check_chain(fam, results, problems)
    _check_bad_files(fam, runnable[0].name, directory, problems)
    return problems


def _decisions(data: Any) -> Any:
    """A schedule's JSON without what a run measured about itself (``runtime_s`` keys)."""
    if isinstance(data, dict):
        return {k: _decisions(v) for k, v in data.items() if "runtime" not in str(k)}
    if isinstance(data, list):
        return [_decisions(v) for v in data]
    return data


def check_method(
    family: str, name: str, directory: Path, time_limit_s: float = DEFAULT_TIME_LIMIT_S
) -> list[str]:
    """Run the conformance checks on one method of ``family``; the problems found (empty: conforms).

    The method runs twice on the family's smoke instance (same seed: the
    same schedule, rendered to JSON, wall times left out); its result is checked like every
    method's in :func:`check_family`; its bound and objective are checked
    against the family's bound methods (a ``bound`` or ``exact`` method also
    against its heuristics); a bad instance file gets one error line and
    exit 2 from ``ddlsched solve --method NAME``. ``directory`` is scratch.
    """
    fam = get_family(family)
    method = next((m for m in methods(family) if m.name == name), None)
    if method is None:
        return [f"{family}.{name}: no such method (is the plug-in installed?)"]
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    problems: list[str] = []
    preset, params = fam.smoke
    instance = fam.generate(preset, 0, **dict(params))
    reloaded = _check_round_trip(fam, instance, directory, problems)
    options = RunOptions(time_limit_s=time_limit_s)
    first = run_method(family, name, instance, options)
    _check_result(fam, reloaded, first, problems)
    again = run_method(family, name, instance, options)
    rendered = [
        json.dumps(_decisions(fam.schedule_json(r)), sort_keys=True) for r in (first, again)
    ]
    if (first.status, first.objective, rendered[0]) != (again.status, again.objective, rendered[1]):
        problems.append(f"{family}.{name}: two runs with seed 0 gave different results")
    partners = {"bound"} | ({"heuristic"} if method.kind != "heuristic" else set())
    results = [first] + [
        run_method(family, other.name, instance, options)
        for other in methods(family)
        if other.kind in partners and other.name != name and not other.hazardous
    ]
    _check_chain(fam, results, problems)
    _check_bad_files(fam, name, directory, problems)
    return problems
