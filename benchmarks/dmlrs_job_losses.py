"""Where a dmlrs interval lies, job by job: each job's best utility alone against ``improve``'s.

    python benchmarks/dmlrs_job_losses.py
    python benchmarks/dmlrs_job_losses.py --jobs 50 --machines 20 --seed 1 --top 10

On one ``paper`` instance (``T = 20``; the defaults are Fig. 6 at 20 machines, seed 1, the
suite's widest dmlrs interval), per job: ``lambda_i(0)``, its best utility alone on the
empty cluster (exact single-job pricing at prices 0; their sum is ``UB(0)``, which
``ub_capacity`` and ``ub_lagrange`` barely go below on the paper's instances), the
utility ``improve`` gives it (seed 0, the suite's 120 s limit), the difference, and the
shape of its best schedule alone (arrival, completion, slots and machines it uses,
``F_i``, GPUs per worker). Jobs sorted by the difference; the total is ``UB(0)`` minus
``improve``'s utility. It shows whether the interval is spread over many jobs (every job a
little late) or held by a few that ``improve`` leaves out.
"""

from __future__ import annotations

import argparse

import numpy as np

import ddlsched.families.dmlrs  # noqa: F401  (registers the family's methods)
from ddlsched.models.dmlrs_dual import PricingSession
from ddlsched.problems.dmlrs import evaluate
from ddlsched.registry import RunOptions, run_method
from ddlsched.workloads.dmlrs import generate


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=50)
    parser.add_argument("--machines", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--top", type=int, default=10)
    args = parser.parse_args(argv)
    instance = generate("paper", args.seed, jobs=args.jobs, machines=args.machines, slots=20)
    zero = np.zeros((instance.num_machines, len(instance.resources), instance.slots))
    alone = PricingSession(instance).price_all(zero)
    result = run_method("dmlrs", "improve", instance, RunOptions(time_limit_s=120, seed=0))
    evaluation = evaluate(instance, result.schedule)
    rows = []
    for i, best in enumerate(alone):
        got = float(evaluation.job_utility.get(i, 0.0))
        column = best.column or ()
        rows.append(
            (
                best.dual_bound - got,
                i,
                best.dual_bound,
                got,
                instance.jobs[i].arrival_slot,
                best.completion_slot,
                len({slot for slot, _, _, _ in column}),
                len({machine for _, machine, _, _ in column}),
                instance.jobs[i].global_batch,
                instance.jobs[i].worker[0],
            )
        )
    rows.sort(key=lambda row: -row[0])
    total = sum(row[0] for row in rows)
    print(
        f"paper seed {args.seed}, {args.jobs} jobs, {args.machines} machines: UB(0) = "
        f"{sum(row[2] for row in rows):.2f}, improve = {result.objective:.2f} "
        f"({len(evaluation.job_utility)} jobs earn), difference {total:.2f}\n"
    )
    print(
        "| job | alone | `improve` | difference | share | arrival | completion alone | slots "
        "| machines | F | GPUs/worker |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for loss, i, best, got, arrival, done, slots, machines, batch, gpus in rows[: args.top]:
        share = 100.0 * loss / total if total > 1e-6 else 0.0
        print(
            f"| {i} | {best:.2f} | {got:.2f} | {loss:.2f} | {share:.1f} % | {arrival} | {done} "
            f"| {slots} | {machines} | {batch} | {gpus:g} |"
        )


if __name__ == "__main__":
    main()
