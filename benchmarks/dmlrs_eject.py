"""``improve`` (dmlrs) with and without its ejection move, on the widest intervals.

    python benchmarks/dmlrs_eject.py
    python benchmarks/dmlrs_eject.py --points fig6-20:1 --params eject_moves=6,eject_windows=500
    python benchmarks/dmlrs_eject.py --points fig6-20:1 --params insert_plan=lean

On ``paper`` instances (``--points``: ``NAME:SEED`` pairs, ``NAME`` a point of
:data:`POINTS`, the same instance as ``ddlsched instance generate dmlrs --preset paper
--seed SEED --set jobs=.. --set machines=.. --set slots=..`` and as
``benchmarks/suites/dmlrs.toml``'s groups), one line per instance and configuration, side
by side in one run: ``improve`` with its defaults, then with each ``--params`` set
(``;`` between sets, ``,`` between ``name=value`` pairs of one set): utility, width
against the instance's best known bound, jobs that finish (and earn), seconds, the LNS
windows tried, and for the ejection move instead the moves kept of tried, the repair
windows run and the jobs the kept moves forced in (``info``). ``fig6-M`` is Fig. 6's
group at ``M`` machines (10, 20, 40, 60, 80, 100; the suite's ``fig6-machines``), ``fig7-J``
and ``fig8-J`` Figs. 7 and 8 at ``J`` jobs, ``fig9-M`` Fig. 9 at ``M`` machines.

``--force NAME:SEED:JOB@SLOT+JOB@SLOT..`` instead forces named jobs in, one move each
from ``improve``'s schedule after its window search (defaults, seed 0), with every
``--places`` target plan and ``--windows`` repair windows, kept or not: what the move
does to that schedule, what the job's plan holds in GPU-slots, and what the job needs
in worker-slots at ``b_int`` and at ``b_ext`` (one line per job, plan and slot).

The bound is the best one ``benchmarks/results/dmlrs.md`` gives for the instance
(:data:`BEST_BOUNDS`: which method in the comment; a bound is a bound whatever schedule
it is compared to), so the width is ``bound / utility - 1`` (utility is maximised).
Every run goes through :func:`ddlsched.registry.run_method` (the schedule re-evaluated by
the family's evaluator) with the run's seed 0 and a time limit (``--time-limit``) that is
a safety net only: a line says ``cut`` when it hit it. Seconds are wall time under the
machine's load (say it when you record them).
"""

from __future__ import annotations

import argparse

from ddlsched.registry import RunOptions, run_method
from ddlsched.workloads.dmlrs import generate

#: The suite's dmlrs points: name -> the preset's (jobs, machines, slots).
POINTS = {
    **{f"fig6-{m}": {"jobs": 50, "machines": m, "slots": 20} for m in (10, 20, 40, 60, 80, 100)},
    **{f"fig7-{j}": {"jobs": j, "machines": 100, "slots": 20} for j in (10, 20, 30, 40, 50)},
    **{f"fig8-{j}": {"jobs": j, "machines": 50, "slots": 20} for j in (20, 40, 60, 80, 100)},
    **{f"fig9-{m}": {"jobs": 100, "machines": m, "slots": 80} for m in (10, 20, 40, 60, 80, 100)},
    "fig10": {"jobs": 100, "machines": 30, "slots": 80},
}
#: Best known upper bound per instance (benchmarks/results/dmlrs.md and the suite's rows).
BEST_BOUNDS = {
    ("fig6-20", 1): 1144.07,  # ub_capacity --param integral=true (= ub_branch's limit)
    ("fig6-20", 12): 1173.98,  # ub_capacity --param integral=true (= ub_branch's limit)
    ("fig7-20", 0): 893.90,  # ub_capacity --param integral=true
    ("fig8-100", 0): 3372.48,  # ub_lagrange
    ("fig8-100", 1): 3087.47,  # ub_capacity --param integral=true
    ("fig10", 0): 3485.55,  # ub_branch at 201 node LPs
}
DEFAULT_POINTS = "fig6-20:1,fig8-100:0,fig8-100:1,fig10:0,fig7-20:0,fig6-20:12"
DEFAULT_PARAMS = "eject_moves=6,eject_completions=2"


def parse_params(text: str) -> list[dict[str, object]]:
    """``a=1,b=x;c=0.5`` -> ``[{'a': 1, 'b': 'x'}, {'c': 0.5}]`` (numbers where they parse)."""
    sets = []
    for chunk in text.split(";"):
        pairs = (item.split("=", 1) for item in chunk.split(",") if item)
        sets.append({k: _number(v) for k, v in pairs})
    return sets


def _number(text: str) -> object:
    """``text`` as an integer or a float where it parses, else as it is."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def measure(point: str, seed: int, params: dict[str, object], limit_s: float) -> str:
    """One line of the table (module docstring)."""
    instance = generate("paper", seed, **POINTS[point])
    bound = BEST_BOUNDS.get((point, seed))
    options = RunOptions(time_limit_s=limit_s, seed=0, params=params)
    result = run_method("dmlrs", "improve", instance, options)
    label = ", ".join(f"{k}={v}" for k, v in params.items()) or "defaults"
    cells = [f"{point} s{seed}", label]
    if result.objective is None or result.schedule is None:
        return "| " + " | ".join([*cells, result.status, "-", "-", "-", "-"]) + " |"
    utility = float(result.objective)
    width = "-" if bound is None or utility <= 0 else f"{100 * (bound / utility - 1):.2f} %"
    info = result.info
    jobs = info.get("completed", "-")  # jobs that finish (and earn)
    cut = " cut" if result.time_limit_hit else ""
    move = f"{info.get('windows_tried', '-')} windows"
    if "eject_moves_tried" in info:
        move = (
            f"{info['eject_moves_kept']}/{info['eject_moves_tried']}, "
            f"{info['eject_windows']} windows, in: {info['eject_taken_in']}"
        )
    cells += [f"{utility:.2f}", width, str(jobs), f"{result.runtime_s:.0f}{cut}", move]
    return "| " + " | ".join(cells) + " |"


def force(spec: str, places: list[str], windows: int) -> list[str]:
    """Lines of the ``--force`` table (module docstring)."""

    from ddlsched.deadline import Deadline
    from ddlsched.families.dmlrs import _run_start
    from ddlsched.heuristics.dmlrs_eject import EjectSettings, EjectStats, target_plan, try_move
    from ddlsched.heuristics.dmlrs_improve import ImproveSettings, _Search, _starts
    from ddlsched.problems.dmlrs import evaluate, samples_in_slot
    from ddlsched.registry import RunContext
    from ddlsched.rng import make_rng

    point, seed, moves = spec.split(":")
    instance = generate("paper", int(seed), **POINTS[point])
    settings, deadline = ImproveSettings(seed=0), Deadline(3600.0)
    ctx = RunContext(seed=0, backend="highs", deadline=deadline)
    schedules, utility, _, _ = _starts(
        instance, settings, lambda name, dl: _run_start(instance, name, ctx, dl), deadline
    )
    search = _Search(instance, schedules[max(utility, key=utility.__getitem__)], 0)
    search.first_pass(deadline)
    search.run(settings, deadline)
    saved = search.used.copy(), dict(search.plans), search.utility
    gpu = instance.resources.index("gpu")
    lines = []
    for item in moves.split("+"):
        j, finish = (int(x) for x in item.split("@"))
        job = instance.jobs[j]
        need = [job.workload / samples_in_slot(job, 1, b, instance.slot_s) for b in
                (instance.b_int, instance.b_ext)]  # fmt: skip
        for place in places:
            search.used, search.plans, search.utility = saved[0].copy(), dict(saved[1]), saved[2]
            search.rng = make_rng(0)  # every trial draws the same repair windows
            plan = target_plan(search, j, finish, lean=place == "lean")
            held = (
                "-"
                if plan is None
                else f"{sum(instance.alpha[j][gpu] * w for _, _, w, _ in plan):.0f}"
            )
            move = EjectSettings(moves=1, windows=windows, place=place)
            kept = try_move(search, j, finish, move, settings.window, EjectStats(), deadline)
            earned = evaluate(instance, search.schedule()).job_utility.get(j, 0.0)
            lines.append(
                f"| {point} s{seed} | {j} @ {finish} | {place} | {held} | "
                f"{need[0]:.1f} / {need[1]:.1f} | {'kept' if kept is not None else 'undone'} | "
                f"{saved[2]:.2f} -> {search.utility:.2f} | {earned:.2f} |"
            )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--points", default=DEFAULT_POINTS, help="NAME:SEED pairs, commas")
    parser.add_argument("--params", default=DEFAULT_PARAMS, help="sets of name=value, ';'")
    parser.add_argument("--no-defaults", action="store_true", help="skip improve's defaults")
    parser.add_argument("--time-limit", type=float, default=3600.0, help="safety net, s")
    parser.add_argument("--force", default="", help="NAME:SEED:JOB@SLOT+JOB@SLOT (docstring)")
    parser.add_argument("--places", default="lean,reserve", help="target plans for --force")
    parser.add_argument("--windows", type=int, default=500, help="repair windows for --force")
    args = parser.parse_args()
    if args.force:
        print(
            "| instance | job @ completion | plan | plan's GPU-slots | worker-slots at b_int / "
            "b_ext | move | utility | job earns |"
        )
        print("|---|---|---|---:|---:|---|---:|---:|")
        for line in force(args.force, args.places.split(","), args.windows):
            print(line, flush=True)
        return
    configs = ([] if args.no_defaults else [{}]) + parse_params(args.params)
    print(
        "| instance | params | utility | width | jobs | s | LNS windows; moves kept/tried, windows, in |"
    )
    print("|---|---|---:|---:|---:|---:|---|")
    for item in args.points.split(","):
        name, seed = item.split(":")
        for params in configs:
            print(measure(name, int(seed), params, args.time_limit), flush=True)


if __name__ == "__main__":
    main()
