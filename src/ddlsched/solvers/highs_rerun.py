"""One HiGHS LP solved again and again in one ``highspy.Highs`` object: the time limit of
each run and HiGHS's model status by name.

Two loops re-solve one LP in place, each run warm-started from the last basis:
``colgen``'s restricted master (:mod:`ddlsched.solvers.dmlrs_master`, columns added
between runs) and ``ub_branch``'s node LP (:mod:`ddlsched.models.dmlrs_branch`, column
bounds changed between runs). Both run HiGHS through :func:`run_for`.

Time limit: HiGHS's simplex compares its ``time_limit`` option with the run clock of
the ``Highs`` object, which adds up over the object's runs (a MIP is timed from its own
start; not used here). So a run that may take ``seconds`` gets ``time_limit = run clock
+ max(1e-3, seconds)`` (nothing left: a millisecond, and HiGHS stops at once with its
time-limit status), an unlimited one (``seconds = inf``) ``time_limit = inf``.
``tests/test_dmlrs_solvers.py`` holds the regression this prevents (colgen's master LP
stopped with ``time_limit`` once its runs had added up to the budget).

Status (:func:`status_name`): every HiGHS model status by name: ``kOptimal ->
optimal``, ``kInfeasible -> infeasible``, ``kTimeLimit -> time_limit``,
``kIterationLimit -> iteration_limit``, ``kInterrupt -> interrupt``, any other
(``kUnknown``, ``kUnboundedOrInfeasible``, ``kUnbounded``, ``kNotset``, ``kModelEmpty``,
the load, model, presolve, solve and postsolve errors, ``kObjectiveBound``,
``kObjectiveTarget``, ``kSolutionLimit``, ``kMemoryLimit``, ``kHighsInterrupt``: a user
callback's interrupt, not ``kInterrupt``) ``-> other``. What a name means is the
caller's: the master counts ``time_limit``, ``iteration_limit`` and ``interrupt`` as its
``time_limit`` and everything else but ``optimal`` as ``error``; the node LP keeps
``optimal``, ``infeasible`` and ``time_limit`` and counts every other name as
``unsolved`` (an iteration limit is not a time limit there).
"""

from __future__ import annotations

import functools
import math
from typing import Any

__all__ = ["MIN_RUN_S", "run_for", "status_name"]

#: The shortest time limit a run gets (s): with nothing left HiGHS stops at once.
MIN_RUN_S = 1e-3


@functools.cache
def _names() -> dict[Any, str]:
    import highspy

    status = highspy.HighsModelStatus
    return {
        status.kOptimal: "optimal",
        status.kInfeasible: "infeasible",
        status.kTimeLimit: "time_limit",
        status.kIterationLimit: "iteration_limit",
        status.kInterrupt: "interrupt",
    }


def status_name(status: Any) -> str:
    """The name of HiGHS model status ``status`` (module docstring; ``other`` for every
    status not named there)."""
    return _names().get(status, "other")


def run_for(highs: Any, seconds: float) -> str:
    """Run ``highs`` (a ``highspy.Highs`` that may have run before) for at most ``seconds``
    from now (``inf``: no limit); the name of the model status it ends with."""
    import highspy

    if math.isfinite(seconds):
        limit = highs.getRunTime() + max(MIN_RUN_S, float(seconds))
    else:
        limit = highspy.kHighsInf
    highs.setOptionValue("time_limit", limit)
    highs.run()
    return status_name(highs.getModelStatus())
