"""The restricted master of R-DMLRS (the paper's Eq. 8) in highspy, grown column by column.

Spec ``docs/families/dmlrs.md``, "Bounds"
(``colgen``). Over the columns ``pi`` found so far (a column is one
job's schedule: its utility ``u_pi`` and its use of each capacity row
``(h, r, t)``)::

    max  sum_pi u_pi x_pi
    s.t. sum_pi use_pi[h,r,t] x_pi <= C[h,r]     (capacity rows, duals p[h,r,t] >= 0)
         sum_{pi of job i} x_pi <= 1             (job rows, duals sigma_i >= 0)
         x_pi >= 0                               (x integral in the restricted MILP)

Rows are addressed by a flat key (the caller's index of ``(h, r, t)``) and
created when a column first uses them: a capacity row no column uses has
no dual, its price is 0. The LP is re-solved after every batch of columns,
warm-started from the previous basis (highspy keeps it). The LP's duals
are HiGHS's row duals (for a maximisation, non-negative on ``<=`` rows;
clipped at 0 against round-off). :meth:`ColumnMaster.solve_mip` solves the
same master with integral ``x`` over the columns marked integral (the
others fixed to 0), optionally from a starting solution.
``tests/test_dmlrs_solvers.py`` checks the LP and the MILP against the
same model in Pyomo on random columns.

HiGHS options: no output, one thread, presolve off (the direct loops' setting,
:mod:`ddlsched.solvers.backends`), MIP gaps 1e-9
relative and 1e-6 absolute, primal simplex for the LP (warm-started after
new columns; on ``paper`` seed 0, 70 rounds, 2-3 s per solve at the end
against 8-14 s with HiGHS's default dual simplex). Each LP run goes through
:func:`ddlsched.solvers.highs_rerun.run_for` (its budget counted from the run's start:
HiGHS compares ``time_limit`` with the object's run clock, which adds up over runs); a
HiGHS model status is ``optimal``, ``time_limit`` (HiGHS's time limit, iteration limit
or interrupt) or ``error`` (every other).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from ddlsched.errors import SolverError
from ddlsched.solvers.highs_lp import new_highs
from ddlsched.solvers.highs_rerun import run_for, status_name
from ddlsched.solvers.highs_server import MipArrays, solve_mip

__all__ = ["ColumnMaster", "MasterSolution"]


@dataclass(frozen=True)
class MasterSolution:
    """A solve of the master: ``status`` (``optimal``, ``time_limit``, ``error``),
    objective ``value`` (``None`` without a solution), ``bound`` (the MILP's dual bound;
    the LP's value), ``x`` per column, ``duals`` per capacity key and ``sigma`` per job
    (LP only)."""

    status: str
    value: float | None
    bound: float | None
    x: np.ndarray | None
    duals: dict[int, float]
    sigma: np.ndarray | None


#: HiGHS's default ``simplex_iteration_limit`` (none): restored after a limited warm start.
NO_ITERATION_LIMIT = 2_147_483_647


class ColumnMaster:
    """The restricted master over ``num_jobs`` jobs; ``capacity[key]`` is row ``key``'s C."""

    def __init__(self, num_jobs: int, capacity: np.ndarray) -> None:
        import highspy

        self._hs = highspy
        self.capacity = np.asarray(capacity, dtype=float).ravel()
        self.num_jobs = num_jobs
        self._options = (
            ("output_flag", False),
            ("threads", 1),
            ("presolve", "off"),
            ("mip_rel_gap", 1e-9),
            ("mip_abs_gap", 1e-6),
        )
        self._highs = new_highs(self._options)
        # primal simplex for the LP: adding columns keeps the basis primal feasible
        self._highs.setOptionValue("simplex_strategy", 4)
        self.cold_restarts = 0
        self.last_iterations = 0  # simplex iterations of the last LP (solve_lp)
        self._highs.changeObjectiveSense(highspy.ObjSense.kMaximize)
        inf = highspy.kHighsInf
        self._highs.addRows(
            num_jobs,
            np.full(num_jobs, -inf),
            np.ones(num_jobs),
            0,
            np.zeros(num_jobs, dtype=np.int32),
            np.zeros(0, dtype=np.int32),
            np.zeros(0),
        )
        self._row_of: dict[int, int] = {}
        self.job: list[int] = []
        self.utility: list[float] = []
        self.integral: list[bool] = []

    @property
    def num_columns(self) -> int:
        return len(self.job)

    @property
    def keys(self) -> list[int]:
        """Capacity keys that have a row."""
        return list(self._row_of)

    def add_column(
        self,
        job: int,
        utility: float,
        keys: np.ndarray,
        amounts: np.ndarray,
        integral: bool = True,
    ) -> int:
        """Add a column of ``job`` with utility ``utility`` using ``amounts`` of rows ``keys``."""
        keys, inverse = np.unique(np.asarray(keys, dtype=np.int64), return_inverse=True)
        amounts = np.bincount(
            np.asarray(inverse).reshape(-1),
            weights=np.asarray(amounts, dtype=float),
            minlength=len(keys),
        )
        keys, amounts = keys[amounts != 0], amounts[amounts != 0]
        if not 0 <= job < self.num_jobs:
            raise SolverError(f"master: job {job} out of range")
        new = [int(k) for k in keys if int(k) not in self._row_of]
        if new:
            inf = self._hs.kHighsInf
            first = self._highs.getNumRow()
            self._highs.addRows(
                len(new),
                np.full(len(new), -inf),
                self.capacity[new],
                0,
                np.zeros(len(new), dtype=np.int32),
                np.zeros(0, dtype=np.int32),
                np.zeros(0),
            )
            for pos, key in enumerate(new):
                self._row_of[key] = first + pos
        rows = [job] + [self._row_of[int(k)] for k in keys]
        values = [1.0, *amounts.tolist()]
        order = np.argsort(rows, kind="stable")
        rows_arr = np.asarray(rows, dtype=np.int32)[order]
        values_arr = np.asarray(values)[order]
        # x <= 1 follows from the job row; no column bound, so that p and sigma are all the duals
        self._highs.addCol(
            float(utility), 0.0, self._hs.kHighsInf, len(rows_arr), rows_arr, values_arr
        )
        self.job.append(job)
        self.utility.append(float(utility))
        self.integral.append(bool(integral))
        return self.num_columns - 1

    @staticmethod
    def _status(name: str) -> str:
        """``optimal``, ``time_limit`` or ``error`` of a HiGHS model status's name
        (:func:`~ddlsched.solvers.highs_rerun.status_name`; module docstring)."""
        if name == "optimal":
            return "optimal"
        if name in ("time_limit", "iteration_limit", "interrupt"):
            return "time_limit"
        return "error"

    def solve_lp(
        self, time_limit_s: float = math.inf, patience_iterations: int | None = None
    ) -> MasterSolution:
        """The master LP: value, ``x``, capacity duals ``p`` and job duals ``sigma``.

        Warm-started primal simplex (new columns keep the basis primal
        feasible). ``patience_iterations``: when the warm start needs more
        simplex iterations than this, the basis is dropped and the LP solved
        from scratch (dual simplex) in the time left; a degenerate warm start
        has been seen to stall. An iteration count, not a time: the restart,
        which changes the basis, the duals and so the next columns, is the same
        on every machine. :attr:`last_iterations` holds the simplex iterations
        of the run that answered.
        """
        started = time.perf_counter()
        highs = self._highs
        if patience_iterations is not None:
            highs.setOptionValue("simplex_iteration_limit", max(1, int(patience_iterations)))
        try:
            name = run_for(highs, time_limit_s)
        finally:
            if patience_iterations is not None:
                highs.setOptionValue("simplex_iteration_limit", NO_ITERATION_LIMIT)
        self.last_iterations = int(highs.getInfo().simplex_iteration_count)
        left = time_limit_s - (time.perf_counter() - started)
        if name == "iteration_limit" and patience_iterations is not None and left > 1e-3:
            self.cold_restarts += 1
            highs.clearSolver()
            highs.setOptionValue("simplex_strategy", 1)
            try:
                name = run_for(highs, left)
            finally:
                highs.setOptionValue("simplex_strategy", 4)
            self.last_iterations = int(highs.getInfo().simplex_iteration_count)
        status = self._status(name)
        if status != "optimal":
            return MasterSolution(status, None, None, None, {}, None)
        sol = self._highs.getSolution()
        value = float(self._highs.getInfo().objective_function_value)
        row_dual = np.maximum(np.asarray(sol.row_dual), 0.0)
        duals = {key: float(row_dual[row]) for key, row in self._row_of.items()}
        return MasterSolution(
            status, value, value, np.asarray(sol.col_value), duals, row_dual[: self.num_jobs]
        )

    def solve_mip(
        self, time_limit_s: float = math.inf, start: np.ndarray | None = None
    ) -> MasterSolution:
        """The master with integral ``x`` over the integral columns (others fixed at 0).

        Solved on a copy (a fresh Highs object: its clock starts at 0, and the
        LP's basis stays intact), under a finite limit in the HiGHS worker process
        that is killed at the limit (:mod:`ddlsched.solvers.highs_server`); the
        worker sends each improving solution as HiGHS finds it and its dual bound as it
        moves, so a killed run keeps the last of each (status ``time_limit``; the bound is
        the restricted master's, never the instance's). ``start`` (0/1 per
        column) is offered to HiGHS as a starting solution; the caller keeps the
        better of it and what comes back.
        """
        hs = self._hs
        n = self.num_columns
        if n == 0:
            return MasterSolution("optimal", 0.0, 0.0, np.zeros(0), {}, None)
        lp = self._highs.getLp()
        lp.col_upper_ = np.asarray(self.integral, dtype=float)
        lp.integrality_ = [hs.HighsVarType.kInteger] * n
        # in the HiGHS worker process, killed at the limit (solvers/highs_server.py)
        mip = MipArrays.from_lp(lp, self._options, start)
        run = solve_mip(mip, float(time_limit_s), incumbents=True)
        status = self._status(status_name(run.model_status))
        has = status == "optimal" or run.primal_valid
        value = run.objective if has else None
        bound = run.mip_dual_bound if math.isfinite(run.mip_dual_bound) else None
        x = np.rint(np.asarray(run.col_value)) if has else None
        return MasterSolution(status, value, bound, x, {}, None)
