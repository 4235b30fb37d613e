"""``lb_timeindexed`` against the proven optimum and the other bounds on the 103 test instances.

The instances of ``tests/test_rar_lb_timeindexed.py`` (63 ``small`` and 40 ``contention``
seeds whose exact search proves fast); per preset the mean optimum and bounds, how often
``lb_timeindexed`` meets the optimum, and how often it is above the closed forms and
``load_lb`` and above the LP bound of ``lp_rounding``.

    PYTHONPATH=src python benchmarks/rar_lb_timeindexed_small.py
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from test_rar_lb_timeindexed import INSTANCES

from ddlsched.models.rar_bounds import closed_form_bounds, load_lb
from ddlsched.models.rar_lb_timeindexed import lb_timeindexed
from ddlsched.models.rar_rounding import lp_rounding
from ddlsched.models.rar_search import search_exact
from ddlsched.workloads.rar import generate


def main() -> None:
    rows: dict[str, list[tuple[float, ...]]] = {}
    for preset, seed in INSTANCES:
        inst = generate(preset, seed)
        closed = max(closed_form_bounds(inst).values())
        opt = search_exact(inst, lower=int(closed)).makespan
        lp_part = lp_rounding(inst, trials=1).info.get("lp_bound") or 0.0
        row = (opt, closed, load_lb(inst).bound, lb_timeindexed(inst).bound, lp_part)
        rows.setdefault(preset, []).append(row)
    for preset, r in rows.items():
        means = [statistics.fmean(x[i] for x in r) for i in range(5)]
        print(
            f"{preset} ({len(r)}): mean OPT {means[0]:.3f}, closed forms {means[1]:.3f}, "
            f"load_lb {means[2]:.3f}, lb_timeindexed {means[3]:.3f}, lp_rounding LP {means[4]:.3f}"
        )
        print(
            f"  lb_timeindexed = OPT on {sum(x[3] == x[0] for x in r)}, "
            f"max(closed, load_lb) = OPT on {sum(max(x[1], x[2]) == x[0] for x in r)}; "
            f"lb_timeindexed above max(closed, load_lb) on {sum(x[3] > max(x[1], x[2]) for x in r)}, "
            f"below it on {sum(x[3] < max(x[1], x[2]) for x in r)}, "
            f"above the lp_rounding LP on {sum(x[3] > x[4] for x in r)}; "
            f"mean bound / OPT {statistics.fmean(x[3] / x[0] for x in r):.3f} against "
            f"{statistics.fmean(max(x[1], x[2]) / x[0] for x in r):.3f}"
        )


if __name__ == "__main__":
    main()
