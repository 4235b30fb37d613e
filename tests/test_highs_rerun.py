"""One HiGHS LP run again and again (:mod:`ddlsched.solvers.highs_rerun`): each run's time
limit is the object's run clock plus the run's budget (a millisecond at least, none when
unlimited), and every model status has its name (``other`` for the unnamed ones).

The limit arithmetic is checked on a stand-in ``Highs`` whose run clock the test sets
(no timing); the statuses on real HiGHS runs of tiny LPs.
"""

from __future__ import annotations

import math

import highspy
import pytest

from ddlsched.solvers.highs_lp import new_highs
from ddlsched.solvers.highs_rerun import MIN_RUN_S, run_for, status_name


class _ClockedHighs:
    """A stand-in ``Highs``: a run clock the test sets, the options it was given."""

    def __init__(self, run_time: float) -> None:
        self.run_time = run_time
        self.options: dict[str, object] = {}
        self.runs = 0

    def getRunTime(self) -> float:
        return self.run_time

    def setOptionValue(self, name: str, value: object) -> None:
        self.options[name] = value

    def run(self) -> None:
        self.runs += 1

    def getModelStatus(self):
        return highspy.HighsModelStatus.kOptimal


@pytest.mark.parametrize(
    ("seconds", "limit"),
    [(2.0, 102.0), (0.0, 100.0 + MIN_RUN_S), (-5.0, 100.0 + MIN_RUN_S), (math.inf, math.inf)],
)
def test_each_run_gets_the_run_clock_plus_its_budget(seconds, limit):
    highs = _ClockedHighs(run_time=100.0)
    assert run_for(highs, seconds) == "optimal"
    assert highs.runs == 1
    expected = highspy.kHighsInf if math.isinf(limit) else limit
    assert highs.options["time_limit"] == pytest.approx(expected)


def test_every_status_has_a_name():
    status = highspy.HighsModelStatus
    assert status_name(status.kOptimal) == "optimal"
    assert status_name(status.kInfeasible) == "infeasible"
    assert status_name(status.kTimeLimit) == "time_limit"
    assert status_name(status.kIterationLimit) == "iteration_limit"
    assert status_name(status.kInterrupt) == "interrupt"
    for other in ("kUnknown", "kUnboundedOrInfeasible", "kNotset", "kHighsInterrupt"):
        assert status_name(getattr(status, other)) == "other"


def _one_row_lp(upper: float, lower: float) -> highspy.HighsLp:
    """``max x`` s.t. ``lower <= x <= upper`` as a row, ``0 <= x <= 10``."""
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = 1, 1
    lp.col_cost_, lp.col_lower_, lp.col_upper_ = [1.0], [0.0], [10.0]
    lp.row_lower_, lp.row_upper_ = [lower], [upper]
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_, lp.a_matrix_.index_, lp.a_matrix_.value_ = [0, 1], [0], [1.0]
    lp.sense_ = highspy.ObjSense.kMaximize
    return lp


def test_real_runs_are_named_and_rerun_in_place():
    highs = new_highs([("output_flag", False), ("threads", 1)])
    highs.passModel(_one_row_lp(upper=4.0, lower=-highspy.kHighsInf))
    assert run_for(highs, 10.0) == "optimal"
    assert highs.getInfo().objective_function_value == pytest.approx(4.0)
    highs.changeRowBounds(0, 12.0, 20.0)  # x <= 10 cannot reach 12
    assert run_for(highs, math.inf) == "infeasible"
    highs.changeRowBounds(0, 1.0, 6.0)
    assert run_for(highs, 10.0) == "optimal"
    assert highs.getInfo().objective_function_value == pytest.approx(6.0)
