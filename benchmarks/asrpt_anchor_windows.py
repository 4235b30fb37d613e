"""A probe of the schedule side: CP-SAT windows around the jobs of largest GPU time (ours).

    ddlsched solve asrpt s1.json --method improve --param cpsat_windows=200 --time-limit 600 --json -q > s1_improve.json
    python benchmarks/asrpt_anchor_windows.py s1.json s1_improve.json --window 30 --dtime 5 --rounds 2

Not a method: it measures whether the schedule of ``improve`` (with the suite's
window moves) is loose where those moves do not look. ``improve``'s windows
free consecutive jobs in start order; here each window frees one *anchor* (the
``--anchors`` jobs of largest GPU time ``g_i (C_i - t_i)``), the ``window / 2``
jobs whose starts are nearest the anchor's arrival (where it could move to) and
the ``window / 2`` nearest its start, and re-solves them with the pooled CP-SAT
model of :mod:`ddlsched.models.asrpt_windows` (one worker, seed 0,
``--dtime`` deterministic seconds a window: the same result on any machine). A
move is kept when the family's evaluator finds ``sum_i C_i`` lower, as in
``improve``. Prints the total after each window; the last line is the
evaluated schedule's total. Needs every server to hold one GPU (the pooled
model, as on the testbed).
"""

from __future__ import annotations

import argparse
import json
import time

from ddlsched.deadline import Deadline
from ddlsched.heuristics.asrpt_packed import PackedDecoder
from ddlsched.models.asrpt_windows import _Current, _solve_window
from ddlsched.problems.asrpt import AsrptInstance
from ddlsched.problems.asrpt_schedule import evaluate, schedule_from_json
from ddlsched.solvers.cpsat import CpsatOptions


def anchor_window(instance: AsrptInstance, current: _Current, anchor: int, window: int):
    """The anchor and the jobs whose starts are nearest its arrival and its start."""
    start = current.evaluation.start_s
    freed = [anchor]
    for when, count in ((instance.jobs[anchor].arrival_s, window // 2), (start[anchor], window)):
        others = (i for i in range(len(instance.jobs)) if i != anchor)
        for i in sorted(others, key=lambda i: (abs(start[i] - when), i)):
            if len(freed) > count:
                break
            if i not in freed:
                freed.append(i)
    return freed


def main() -> None:
    """Run the probe of the module docstring and print its trace."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("instance")
    parser.add_argument("schedule_json", help="a `ddlsched solve ... --json` output")
    parser.add_argument("--window", type=int, default=30)
    parser.add_argument("--dtime", type=float, default=5.0)
    parser.add_argument("--anchors", type=int, default=6)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    instance = AsrptInstance.load(args.instance)
    if instance.cluster.gpus_per_server != 1:
        parser.error("the probe needs one GPU per server (the pooled CP-SAT model)")
    with open(args.schedule_json, encoding="utf-8") as handle:
        current = _Current.of(instance, schedule_from_json(json.load(handle)["schedule"]))
    print(f"start {current.total_s:.1f}")
    options = CpsatOptions(seed=0, workers=1, deterministic_time_s=args.dtime)
    decoder = PackedDecoder(instance, seed=0)
    began = time.perf_counter()
    for round_ in range(args.rounds):
        ev = current.evaluation
        work = [instance.configs[j.config].num_gpus * (ev.finish_s[i] - ev.start_s[i])
                for i, j in enumerate(instance.jobs)]  # fmt: skip
        anchors = sorted(range(len(work)), key=lambda i: (-work[i], i))[: args.anchors]
        for anchor in anchors:
            freed = anchor_window(instance, current, anchor, args.window)
            moved, proven, _ = _solve_window(
                instance, current, freed, options, decoder, Deadline(float("inf"))
            )
            current = moved or current
            print(
                f"round {round_} anchor {instance.jobs[anchor].id} freed {len(freed)} "
                f"{'proven ' if proven else ''}total {current.total_s:.1f} "
                f"({time.perf_counter() - began:.0f} s)",
                flush=True,
            )
    print(f"evaluated {evaluate(instance, current.schedule).total_completion_s:.1f}")


if __name__ == "__main__":
    main()
