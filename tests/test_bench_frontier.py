"""benchmarks/frontier.py: the exact frontier table from result rows."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import pandas as pd
import pytest

from ddlsched.errors import DdlschedError

ROOT = Path(__file__).resolve().parents[1]


def _frontier():
    spec = importlib.util.spec_from_file_location("frontier", ROOT / "benchmarks" / "frontier.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _row(jobs, seed, status, wall, objective=10.0, bound=10.0, label="exact", kind="exact"):
    return {
        "family": "fam",
        "preset": "p",
        "group": "g",
        "instance_params": f'{{"num_jobs":{jobs}}}',
        "instance_id": f"p/s{seed},num_jobs={jobs}",
        "instance_size": jobs,
        "label": label,
        "kind": kind,
        "status": status,
        "wall_s": wall,
        "objective": objective,
        "bound": bound,
        "time_limit_s": 60.0,
    }


ROWS = [
    _row(4, 0, "optimal", 1.0),
    _row(4, 1, "optimal", 3.0),
    _row(4, 2, "optimal", 2.0),
    _row(8, 0, "optimal", 10.0),
    _row(8, 1, "optimal", 20.0),
    _row(8, 2, "feasible", 60.0, objective=10.0, bound=8.0),
    _row(16, 0, "feasible", 60.0, objective=20.0, bound=15.0),
    _row(16, 1, "time_limit_no_solution", 60.0, objective=math.nan, bound=math.nan),
    _row(16, 2, "optimal", 50.0),
    _row(4, 0, "feasible", 0.1, kind="heuristic", label="h"),
]


def test_lines_per_step_and_frontier():
    table = _frontier().frontier_lines(pd.DataFrame(ROWS)).set_index("step")
    assert list(table.index) == ["num_jobs=4", "num_jobs=8", "num_jobs=16"]  # by size; no heuristic
    four, eight, sixteen = (table.loc[f"num_jobs={n}"] for n in (4, 8, 16))
    assert (four["proven"], four["median"], four["worst"]) == (1.0, 2.0, 3.0)
    assert eight["proven"] == pytest.approx(2 / 3)
    assert eight["median"] == 20.0 and math.isinf(eight["worst"])  # one run unproven
    assert eight["gap"] == pytest.approx(0.2)
    assert math.isinf(sixteen["median"])  # a third proven: the median run did not prove
    assert sixteen["gap"] == pytest.approx(0.25)  # the run without a solution has no gap
    assert list(table["frontier"]) == [True, False, False]


def test_markdown_bolds_frontier_and_marks_limits():
    frontier = _frontier()
    text = "\n".join(
        frontier._cells(line)[7]
        for _, line in frontier.frontier_lines(pd.DataFrame(ROWS)).iterrows()
    )
    assert text.splitlines() == ["**2.0 s**", "20.0 s", "> 60 s"]


def test_proven_infeasible_counts_as_proven():
    rows = [_row(4, 0, "infeasible", 0.5, objective=math.nan, bound=math.nan), ROWS[0]]
    line = _frontier().frontier_lines(pd.DataFrame(rows)).iloc[0]
    assert (line["proven"], line["worst"], bool(line["frontier"])) == (1.0, 1.0, True)


def test_no_exact_rows_is_an_error():
    with pytest.raises(DdlschedError, match="no rows of an exact method"):
        _frontier().frontier_lines(pd.DataFrame([ROWS[-1]]))
