"""Many tiny LPs and MILPs solved directly in HiGHS (highspy), on one reused instance.

``docs/architecture.md`` ("Solvers"): every formulation's statement of record is its Pyomo
model, but where a method solves thousands of tiny LPs or MILPs in a loop a
direct highspy path is allowed, inside ``solvers/``, with a test that it
returns the Pyomo model's optimum on random instances
(``tests/test_highs_lp.py``: random bounded LPs and MILPs, solved here and as
Pyomo models through :func:`ddlsched.solvers.backends.solve_model`, equal
optimal objective values). The user is the Muri simulator's type-level
b-matching (:mod:`ddlsched.sim.muri.matching.bmatching`), up to ~10^4 LPs of
a few dozen columns per trace, where building a Pyomo model each time would
cost more than the whole simulation.

The problem::

    min (or max)  c x
    s.t.          row_lower <= A x <= row_upper
                  col_lower <=   x <= col_upper,   x_j integer where asked

``A`` is a dense ``(rows, columns)`` array or a scipy sparse matrix; it is
handed to HiGHS column-wise, entries ordered by column, then row. A
maximisation is passed to HiGHS as the minimisation of ``-c`` (so HiGHS
sees the same model either way). Options: no output, one thread, presolve
off (the direct loops' setting, see :mod:`ddlsched.solvers.backends`), MIP
gap 0. A MILP's point may lie outside a row by up to HiGHS's
``mip_feasibility_tolerance`` (1e-6; highspy 1.16 returned 4e-7 on the
test's random problems). :func:`new_highs` creates every ``Highs`` object of
``solvers/``, silent from the start. highspy is imported when the first
problem is solved, not when this module is imported.

>>> lp = HighsLp()
>>> x = lp.solve([1.0, 1.0], [[1.0, 2.0]], row_upper=[4.0], col_upper=[3.0, 3.0], maximize=True)
>>> x.tolist(), lp.objective_value
([3.0, 0.5], 3.5)
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from ddlsched.errors import DdlschedError

__all__ = ["DEFAULT_OPTIONS", "HighsLp", "new_highs"]

#: HiGHS options of every :class:`HighsLp` (set in this order; ``options`` may override).
DEFAULT_OPTIONS: dict[str, object] = {
    "output_flag": False,
    "threads": 1,
    "presolve": "off",
    "mip_rel_gap": 0.0,
}


@functools.cache
def _quiet_highs_class() -> type:
    """``highspy.Highs`` with its output off before it can log anything.

    highspy 1.16 writes HiGHS's banner to stdout when the ``Highs`` constructor
    enables callbacks, before any option can be set; that would corrupt a
    command's ``--json`` output. The constructor calls ``enableCallbacks``, so
    turning the output off there comes first (``tests/test_solver_regressions.py``
    checks that nothing reaches stdout).
    """
    import highspy

    class QuietHighs(highspy.Highs):
        def enableCallbacks(self) -> None:
            self.setOptionValue("output_flag", False)
            super().enableCallbacks()

    return QuietHighs


def new_highs(
    options: Mapping[str, object] | Iterable[tuple[str, object]] = DEFAULT_OPTIONS,
) -> Any:
    """A silent ``highspy.Highs`` with ``options`` (a mapping or ``(name, value)`` pairs) set in order."""
    highs = _quiet_highs_class()()
    pairs = options.items() if isinstance(options, Mapping) else options
    for name, value in pairs:
        highs.setOptionValue(name, value)
    return highs


def _column_wise(matrix: Any, num_rows: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """``(start, index, value, columns)`` of ``matrix`` in compressed column form."""
    if hasattr(matrix, "tocsc"):  # scipy.sparse
        csc = matrix.tocsc()
        csc.sort_indices()
        if csc.shape[0] != num_rows:
            raise DdlschedError(f"matrix has {csc.shape[0]} rows, the row bounds {num_rows}")
        return (
            np.asarray(csc.indptr, dtype=np.int32),
            np.asarray(csc.indices, dtype=np.int32),
            np.asarray(csc.data, dtype=float),
            int(csc.shape[1]),
        )
    dense = np.asarray(matrix, dtype=float)
    if dense.ndim != 2 or dense.shape[0] != num_rows:
        raise DdlschedError(
            f"matrix must be 2-D with {num_rows} rows (the row bounds), got shape {dense.shape}"
        )
    by_column = dense.T
    col_idx, row_idx = np.nonzero(by_column)  # ordered by column, then row
    num_cols = dense.shape[1]
    start = np.searchsorted(col_idx, np.arange(num_cols + 1)).astype(np.int32)
    return start, row_idx.astype(np.int32), by_column[col_idx, row_idx], num_cols


class HighsLp:
    """A reusable HiGHS instance solving one small LP or MILP after another.

    ``options`` are HiGHS options on top of :data:`DEFAULT_OPTIONS`. After
    :meth:`solve`, :attr:`objective_value` holds the optimum (in the sense
    asked for: the maximum when maximising) and :attr:`model_status` HiGHS's
    model status.
    """

    def __init__(self, options: Mapping[str, object] | None = None):
        self.options = {**DEFAULT_OPTIONS, **(options or {})}
        self.objective_value: float | None = None
        #: HiGHS's model status after the last :meth:`solve` (e.g. ``'Optimal'``, ``'Infeasible'``)
        self.model_status: str | None = None
        self._highs: Any = None

    def _instance(self) -> Any:
        if self._highs is None:
            self._highs = new_highs(self.options)
        return self._highs

    def solve(
        self,
        cost: Sequence[float] | np.ndarray,
        matrix: Any,
        row_upper: Sequence[float] | np.ndarray,
        row_lower: Sequence[float] | np.ndarray | None = None,
        col_lower: Sequence[float] | np.ndarray | None = None,
        col_upper: Sequence[float] | np.ndarray | None = None,
        *,
        maximize: bool = False,
        integrality: Sequence[bool] | np.ndarray | None = None,
        what: str = "LP",
    ) -> np.ndarray:
        """Optimal column values; :class:`~ddlsched.errors.DdlschedError` unless optimal.

        Missing bounds: rows unbounded below, columns in ``[0, inf)``;
        ``integrality[j]`` true makes column ``j`` integer. ``what`` names the
        problem in the error message.
        """
        import highspy

        inf = highspy.kHighsInf
        row_upper = np.asarray(row_upper, dtype=float)
        num_rows = row_upper.size
        start, index, value, num_cols = _column_wise(matrix, num_rows)
        cost = np.asarray(cost, dtype=float)
        if cost.shape != (num_cols,):
            raise DdlschedError(f"{what}: {cost.size} costs for {num_cols} columns")
        lp = highspy.HighsLp()
        lp.num_col_ = num_cols
        lp.num_row_ = num_rows
        lp.col_cost_ = -cost if maximize else cost
        lp.col_lower_ = (
            np.zeros(num_cols) if col_lower is None else np.asarray(col_lower, dtype=float)
        )
        lp.col_upper_ = (
            np.full(num_cols, inf) if col_upper is None else np.asarray(col_upper, dtype=float)
        )
        lp.row_lower_ = (
            np.full(num_rows, -inf) if row_lower is None else np.asarray(row_lower, dtype=float)
        )
        lp.row_upper_ = row_upper
        lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
        lp.a_matrix_.start_ = start
        lp.a_matrix_.index_ = index
        lp.a_matrix_.value_ = value
        if integrality is not None and any(integrality):
            lp.integrality_ = [
                highspy.HighsVarType.kInteger if v else highspy.HighsVarType.kContinuous
                for v in integrality
            ]
        highs = self._instance()
        highs.clearModel()
        highs.passModel(lp)
        highs.run()
        status = highs.getModelStatus()
        self.model_status = highs.modelStatusToString(status)
        if status != highspy.HighsModelStatus.kOptimal:
            self.objective_value = None
            raise DdlschedError(f"{what}: HiGHS returned {highs.modelStatusToString(status)}")
        objective = float(highs.getInfo().objective_function_value)
        self.objective_value = -objective if maximize else objective
        return np.array(highs.getSolution().col_value)
