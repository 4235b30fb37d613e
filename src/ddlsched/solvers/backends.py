"""Run a Pyomo model on a MILP backend and report what the solver proved.

Backends:

``highs`` (default)
    HiGHS through Pyomo's ``pyomo.contrib.solver`` interface. Every HiGHS
    model status is mapped explicitly by Pyomo's ``_postsolve``; we map
    Pyomo's (termination condition, solution status) pair to
    :class:`~ddlsched.solvers.result.Status` below, and warn about any
    combination we do not know.
``scip``
    SCIP through OR-Tools (``ortools.linear_solver.python.model_builder``):
    Pyomo writes the model as MPS, OR-Tools reads it and runs SCIP. This is
    the second opinion for MILPs (``docs/architecture.md``: never hand a MILP with
    fractional coefficients to CP-SAT).

Both run single-threaded with a fixed seed, so a solve is reproducible.
The time a solve may take is what remains of the method's
:class:`~ddlsched.deadline.Deadline` (capped by ``SolveLimits.time_limit_s``
when that is set); a solve that would get no time is not started.

Every HiGHS MILP under a finite limit (single-threaded) runs in the HiGHS
worker process, which is killed at the limit
(:mod:`ddlsched.solvers.highs_worker`): HiGHS 1.16 does not check its clock
during a presolve pass or its root heuristics, which ran the ``dmlrs_slot``
ILP of 100,000 machines 6.7-15.7 s past a 60 s limit. A killed worker's
solve keeps HiGHS's last improving solution and the last dual bound it sent
(``feasible``; no bound if none was sent) or is
``time_limit_no_solution``, with ``time_limit_hit`` true and
:attr:`ModelSolve.stopped` saying so. An
answer in time is loaded into the model by Pyomo's own loader, as
in-process. LPs and solves without a finite limit run in-process: every LP
algorithm HiGHS runs looks at ``time_limit`` inside its iterations. The
simplex solvers (dual and primal) check it at every iteration
(``HEkk::bailout``); the interior point solver IPX checks it at every
iteration, in its conjugate-residual KKT solves, while it builds its starting
basis, and in both push loops of crossover (``Control::InterruptCheck``); presolve
checks it every 1,024 reductions. The remaining risk is one step between two
checks: a single factorization (a simplex basis, an IPX normal-equations
matrix), a presolve reduction that runs long, and the way back through Pyomo,
none of which is cut; on a very large LP that step is the overrun (not
measured here). The method's deadline counts it, and the benchmark platform
kills a task that outlives its wall-clock limit.

Solver version and settings (``CONTRIBUTING.md``, "Solver versions"):
highspy is pinned to ``>=1.16,<1.17`` and HiGHS runs with presolve on
(:data:`HIGHS_DEFAULT_OPTIONS`; ``SolveLimits.highs_options`` can override
it). ``tests/test_solver_regressions.py`` keeps every wrong optimum HiGHS
has given this project, seven cases, and asserts the right answer (brute
force) under these settings and under presolve and restarts on or off:

* HiGHS 1.14.0 returned suboptimal points with status *Optimal* with
  presolve on (ERGO-Code/HiGHS issues 2957, 3043, 3073: a ``rar`` exact
  model) and, with presolve off, on placement ILPs (the ``alpha_lb``
  cross-check of the asrpt worst-case search; ``exact_gpu_level
  --param cross_check=false``) and on integer columns with fractional
  upper bounds (the dmlrs slot ILP).
* highspy 1.15.1 returns the same wrong answers on all but ERGO-Code/HiGHS issue 2957's
  model, and cannot share a process with OR-Tools: both wheels ship a
  ``libhighs.so.1`` of their own version and the dynamic loader reuses the
  first one loaded, so whichever of ``highspy`` and ``ortools`` (CP-SAT,
  SCIP, ``pywraplp``) is imported second fails with an undefined symbol.
* highspy 1.16.0 links HiGHS into its extension module: HiGHS, CP-SAT and
  SCIP share one process again (``tests/test_solvers.py`` solves with
  each), and it solves every case right under every setting tried.
  Its ``Highs`` constructor prints a banner to stdout before any option
  can be set, so direct users create it with
  :func:`ddlsched.solvers.highs_lp.new_highs` (Pyomo captures the output).

The direct highspy loops in ``solvers/`` (slot LPs, pattern LPs, column
generation, ``HighsLp``) keep their options, presolve off: their LPs are
re-solved from the previous basis after small changes and their MILPs are
tiny, so their results and timings stay as measured; the slot ILP also
keeps its integral column bounds. The placement ILPs keep MIP restarts off
(``models.placement.HIGHS_OPTIONS``). The cross-check with SCIP
(:mod:`ddlsched.solvers.formulation`) stays the run-time guard.
Gap limits default to 0 (relative) so that ``optimal`` means the gap is
closed; a formulation whose objective is integral may pass
``abs_gap < 1`` to stop as soon as integrality proves optimality.
"""

from __future__ import annotations

import functools
import logging
import math
import tempfile
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyomo.environ as pyo

from ddlsched.deadline import Deadline
from ddlsched.errors import SolverError, TimeLimitReached, UnknownMethodError
from ddlsched.solvers.limits import SolveLimits
from ddlsched.solvers.result import BACKENDS, Status

__all__ = [
    "BACKENDS",
    "HIGHS_DEFAULT_OPTIONS",
    "ModelSolve",
    "SolveLimits",
    "highs_options",
    "model_size",
    "solve_model",
]

#: HiGHS options of every Pyomo solve, before ``SolveLimits.highs_options`` (module docstring).
HIGHS_DEFAULT_OPTIONS: dict[str, object] = {"presolve": "on"}

log = logging.getLogger(__name__)


@dataclass
class ModelSolve:
    """What the backend proved about a model (values are loaded into the model).

    ``incumbent`` and ``bound`` are the solver's own numbers, in the sense of
    the model's objective; a family formulation must re-evaluate the decoded
    schedule before reporting anything.
    """

    status: Status
    incumbent: float | None
    bound: float | None
    runtime_s: float
    backend: str
    backend_version: str
    num_variables: int
    num_integer_variables: int
    num_constraints: int
    message: str = ""
    time_limit_hit: bool = False
    #: what stopped a solve the solver could not report on (the worker killed at the limit)
    stopped: str = ""
    #: an LP's bound by weak duality at HiGHS's row duals (asked by ``SolveLimits.lp_dual_bound``)
    dual_bound: float | None = None

    @property
    def has_solution(self) -> bool:
        return self.status in (Status.OPTIMAL, Status.FEASIBLE)

    def what_stopped(self, what: str) -> str:
        """What the time limit stopped in this solve of ``what`` ("" if nothing): the
        phrase of ``info['stopped']`` (:func:`ddlsched.solvers.result.mark_stopped`)."""
        if self.stopped:  # the worker killed: its own phrase says what it kept
            return self.stopped
        if not self.time_limit_hit:
            return ""
        if self.status is Status.TIME_LIMIT_NO_SOLUTION and self.message:
            return f"the {self.backend} solve of {what} at the time limit ({self.message})"
        return f"the {self.backend} solve of {what} at the time limit"

    @property
    def model_size(self) -> tuple[int, int, int]:
        """``(variables, integer variables, constraints)``."""
        return self.num_variables, self.num_integer_variables, self.num_constraints


def model_size(model: pyo.ConcreteModel) -> tuple[int, int, int]:
    """(variables, integer variables, constraints) of a Pyomo model (active ones)."""
    num_vars = num_int = 0
    for var in model.component_data_objects(pyo.Var, active=True, descend_into=True):
        if var.fixed:
            continue
        num_vars += 1
        if var.is_integer() or var.is_binary():
            num_int += 1
    num_cons = sum(
        1 for _ in model.component_data_objects(pyo.Constraint, active=True, descend_into=True)
    )
    return num_vars, num_int, num_cons


def highs_options(limits: SolveLimits) -> dict[str, object]:
    """Every HiGHS option (native names) a solve of :func:`solve_model` sets, the time
    limit aside: gaps, threads and seed of ``limits``, no output,
    :data:`HIGHS_DEFAULT_OPTIONS`, then ``limits.highs_options``."""
    return {
        "mip_rel_gap": limits.rel_gap,
        "mip_abs_gap": limits.abs_gap,
        "threads": limits.threads,
        "random_seed": limits.seed,
        "output_flag": False,
        **HIGHS_DEFAULT_OPTIONS,
        **dict(limits.highs_options),
    }


#: Seconds kept back from HiGHS per variable and constraint (see ``_solve_highs``).
_RESERVE_S_PER_ELEMENT = 1e-5
#: Seconds (at least) kept back from HiGHS in a worker, for its answer to reach the parent
#: before the parent kills it (at most 10 % of the time, as the reserve above).
_WORKER_RESERVE_S = 0.2


def _out_of_time(
    model: pyo.ConcreteModel,
    backend: str,
    message: str,
    version: str = "",
    runtime_s: float = 0.0,
    stopped: str = "",
    size: tuple[int, int, int] | None = None,
    bound: float | None = None,
) -> ModelSolve:
    """The solve of a model the deadline stopped before the solver could run, or
    killed while it ran (``stopped``; ``bound``: the last dual bound the killed solver
    sent, if any); ``size``: the model's, if known (counting takes a second on a model
    of 10^5 rows)."""
    nvars, nint, ncons = size or model_size(model)
    return ModelSolve(
        status=Status.TIME_LIMIT_NO_SOLUTION,
        incumbent=None,
        bound=bound,
        runtime_s=runtime_s,
        backend=backend,
        backend_version=version,
        num_variables=nvars,
        num_integer_variables=nint,
        num_constraints=ncons,
        message=message,
        time_limit_hit=True,
        stopped=stopped,
    )


def solve_model(
    model: pyo.ConcreteModel,
    backend: str = "highs",
    limits: SolveLimits | None = None,
    deadline: Deadline | None = None,
) -> ModelSolve:
    """Solve ``model`` with ``backend``; load the incumbent's values into the model.

    The solver gets what remains of ``deadline`` (see :meth:`SolveLimits.seconds`);
    when nothing remains it is not called and the status is
    ``time_limit_no_solution``.
    """
    limits = limits or SolveLimits()
    if backend not in BACKENDS:
        raise UnknownMethodError(f"unknown backend {backend!r} (choose from {', '.join(BACKENDS)})")
    seconds = limits.seconds(deadline)
    if not seconds > 1e-3:
        return _out_of_time(model, backend, "no time left for the solver")
    # The time left is read again when the solver starts: Pyomo's hand-over of the
    # model (to highspy, or as an MPS file to OR-Tools) takes time the deadline counts.
    remaining = (lambda: limits.seconds(deadline)) if deadline is not None else (lambda: seconds)
    if backend == "highs":
        return _solve_highs(model, limits, remaining, deadline)
    return _solve_scip(model, limits, remaining, deadline)


# --------------------------------------------------------------------------- HiGHS


@functools.cache
def _highs_class():
    """Pyomo's HiGHS interface, reading the time limit just before HiGHS runs.

    Pyomo builds the highspy model (``_set_instance``) before it sets the
    options and runs HiGHS (``_solve``); on a model of ~10^4 rows the
    hand-over takes most of a second. Reading the time left at ``_solve``
    makes the hand-over count against the method's deadline, and the
    hand-over runs under the deadline's interrupt (:meth:`set_instance`).
    """
    from pyomo.contrib.solver.solvers.highs import Highs

    class DeadlineHighs(Highs):
        remaining: Callable[[], float] | None = None
        deadline: Deadline | None = None

        def set_instance(self, model):
            """Hand ``model`` to highspy, interrupted at the deadline, never inside Pyomo's
            output capture.

            Pyomo's ``set_instance`` builds the highspy model inside
            ``capture_output(capture_fd=True)``, whose ``TeeStream`` has a reader
            thread on two pipes. An interrupt raised in there leaves that
            thread on a closed pipe: raised in the block, the capture's exit
            waits about 0.8 s for the reader, then closes the pipes under it
            if it has not ended (a starved process on a loaded machine), and
            the reader dies on ``OSError: [Errno 9] Bad file descriptor``;
            raised in the exit itself, its cleanup is cut half-way and a
            later ``TeeStream.__del__`` closes the same descriptors again,
            by then another file's. So Pyomo's own ``set_instance`` runs on an
            empty block, its capture opened and closed with no interrupt armed
            (it resets the interface and creates the highspy model, whose
            banner it swallows), and the model is added after it, as Pyomo
            adds it, under the interrupt, with HiGHS's output off (no capture
            to swallow its matrix warnings; every solve sets ``output_flag``
            off anyway): the same highspy model, the same time limit.
            """
            if self.deadline is None:
                return super().set_instance(model)
            super().set_instance(pyo.Block(concrete=True))
            self._model = model
            self._solver_model.setOptionValue("output_flag", False)
            # the hand-over is pure Python (seconds on a 10^5-row model): interruptible
            with self.deadline.interrupting("handing the model to HiGHS"):
                self.add_block(model)
                if self._objective is None:
                    self.set_objective(None)
            return None

        reserve_s: float = 0.0
        in_worker: bool = False  # run HiGHS in the worker process killed at the limit
        stopped: str = ""  # the worker was killed, its last incumbent kept (highs_worker)

        def _solve(self):
            config = getattr(self, "_active_config", None)
            seconds = math.inf
            if self.remaining is not None and config is not None:
                seconds = self.remaining()
                reserve = max(self.reserve_s, _WORKER_RESERVE_S if self.in_worker else 0.0)
                highs_s = seconds - min(reserve, 0.1 * seconds)
                config.time_limit = max(1e-3, highs_s) if math.isfinite(highs_s) else None
            start = _start_pairs(self)
            if not (self.in_worker and math.isfinite(seconds)):
                if start is not None:
                    self._solver_model.setSolution(len(start[0]), *start)
                return super()._solve()
            from ddlsched.solvers import highs_worker

            return highs_worker.solve_in_worker(self, seconds, config.time_limit, start)

    return DeadlineHighs


def _start_pairs(solver):
    """The model's MIP start as (column indices, values), or ``None``.

    A formulation may set ``model.ddlsched_start``: ``(var, value)`` pairs of a
    feasible solution (e.g. from a heuristic). HiGHS checks it and, if it is
    feasible, starts with it as the incumbent (log source "X"); SCIP gets it
    as a hint (:func:`_hint_start`). A start never changes what is proven.
    """
    import numpy as np

    start = getattr(getattr(solver, "_model", None), "ddlsched_start", None)
    if not start:
        return None
    columns = solver._pyomo_var_to_solver_var_map
    pairs = [(columns[id(var)], float(value)) for var, value in start if id(var) in columns]
    if not pairs:
        return None
    index = np.array([i for i, _ in pairs], dtype=np.int32)
    return index, np.array([v for _, v in pairs])


def _hint_start(model: pyo.ConcreteModel, builder, symbol_map) -> None:
    """Pass the model's MIP start (``model.ddlsched_start``) to SCIP as a hint."""
    start = getattr(model, "ddlsched_start", None)
    if not start:
        return
    by_name = {v.name: v for v in builder.get_variables()}
    for var, value in start:
        mb_var = by_name.get(symbol_map.byObject.get(id(var)))
        if mb_var is not None:
            builder.add_hint(mb_var, float(value))


def _solve_highs(
    model: pyo.ConcreteModel,
    limits: SolveLimits,
    remaining: Callable[[], float],
    deadline: Deadline | None = None,
) -> ModelSolve:
    from pyomo.contrib.solver.common.results import SolutionStatus, TerminationCondition

    from ddlsched.solvers.highs_worker import WorkerKilled, use_worker

    solver = _highs_class()()
    solver.remaining = remaining
    solver.deadline = deadline
    seconds = remaining()
    if not solver.available():
        raise SolverError("HiGHS is not available (pip install 'highspy>=1.16,<1.17')")
    version = ".".join(map(str, solver.version()))
    nvars, nint, ncons = model_size(model)
    # HiGHS overruns its limit on large MIPs (a node or heuristic in progress) and the
    # solution then travels back through Pyomo: keep ~10 us a variable and row (at most
    # 10 % of the time) for that (the dmlrs_slot ILP on 100,000 machines ran 4.5 s past 60 s)
    solver.reserve_s = _RESERVE_S_PER_ELEMENT * (nvars + ncons)
    solver.in_worker = use_worker(nvars, nint, seconds, limits.threads)
    start = time.perf_counter()
    try:
        results = solver.solve(
            model,
            time_limit=seconds if math.isfinite(seconds) else None,
            rel_gap=limits.rel_gap,
            abs_gap=limits.abs_gap,
            threads=limits.threads,
            load_solutions=False,
            raise_exception_on_nonoptimal_result=False,
            solver_options=highs_options(limits),
        )
    except TimeLimitReached as exc:  # interrupted while handing the model over
        return _out_of_time(model, "highs", str(exc), version, size=(nvars, nint, ncons))
    except WorkerKilled as exc:  # HiGHS overran the limit in its worker (module docstring)
        runtime = time.perf_counter() - start
        size = (nvars, nint, ncons)
        return _out_of_time(
            model, "highs", "worker killed", version, runtime, str(exc), size, exc.bound
        )
    runtime = time.perf_counter() - start
    term, sol = results.termination_condition, results.solution_status
    has_solution = sol in (SolutionStatus.optimal, SolutionStatus.feasible)
    if term == TerminationCondition.convergenceCriteriaSatisfied and has_solution:
        status = Status.OPTIMAL
    elif term == TerminationCondition.provenInfeasible:
        status = Status.INFEASIBLE
    elif term in (
        TerminationCondition.maxTimeLimit,
        TerminationCondition.iterationLimit,
        TerminationCondition.objectiveLimit,
        TerminationCondition.interrupted,
    ):
        status = Status.FEASIBLE if has_solution else Status.TIME_LIMIT_NO_SOLUTION
    elif term in (
        TerminationCondition.error,
        TerminationCondition.unbounded,
        TerminationCondition.infeasibleOrUnbounded,
    ):
        status = Status.ERROR
    else:
        warnings.warn(
            f"HiGHS returned an unmapped termination condition {term} ({sol}); "
            "treating it as an error",
            RuntimeWarning,
            stacklevel=2,
        )
        status = Status.ERROR
    if has_solution and status in (Status.OPTIMAL, Status.FEASIBLE):
        results.solution_loader.load_vars()
    bound = results.objective_bound
    if bound is not None and not _finite(bound):
        bound = None
    dual = None
    if limits.lp_dual_bound and nint == 0 and status is Status.OPTIMAL:
        from ddlsched.solvers.lp_dual_bound import dual_bound

        dual = dual_bound(solver._solver_model)
    return ModelSolve(
        status=status,
        incumbent=results.incumbent_objective if has_solution else None,
        bound=bound,
        runtime_s=runtime,
        backend="highs",
        backend_version=version,
        num_variables=nvars,
        num_integer_variables=nint,
        num_constraints=ncons,
        message=f"{term.name}/{sol.name}",
        time_limit_hit=term == TerminationCondition.maxTimeLimit,
        stopped=solver.stopped,
        dual_bound=dual,
    )


# --------------------------------------------------------------------------- SCIP


def _solve_scip(
    model: pyo.ConcreteModel,
    limits: SolveLimits,
    remaining: Callable[[], float],
    deadline: Deadline | None = None,
) -> ModelSolve:
    """SCIP through OR-Tools on the MPS file Pyomo writes (module docstring).

    Writing the file is pure Python (seconds on a large model) and runs under
    ``deadline``'s interrupt: cut there, the answer is the one the HiGHS path
    gives for a hand-over the limit cut (``time_limit_no_solution``)."""
    try:
        from ortools.linear_solver.python import model_builder as mb
    except ImportError as exc:  # pragma: no cover - ortools is a dependency
        raise SolverError(f"OR-Tools is not available: {exc}") from None
    import ortools

    nvars, nint, ncons = model_size(model)
    version = f"ortools {ortools.__version__}"
    with tempfile.TemporaryDirectory(prefix="ddlsched-mps-") as tmp:
        path = Path(tmp) / "model.mps"
        try:
            smap_id = _write_mps(model, path, deadline)
        except TimeLimitReached as exc:  # interrupted while handing the model over
            return _out_of_time(model, "scip", str(exc), version, size=(nvars, nint, ncons))
        symbol_map = model.solutions.symbol_map[smap_id]
        builder = mb.ModelBuilder()
        if not builder.import_from_mps_file(str(path)):
            raise SolverError("OR-Tools could not read the MPS file Pyomo wrote")
        _hint_start(model, builder, symbol_map)
    solver = mb.Solver("scip")
    if not solver.solver_is_supported():
        raise SolverError("this OR-Tools build has no SCIP")
    seconds = remaining()  # after the MPS hand-over
    if math.isfinite(seconds):
        solver.set_time_limit_in_seconds(max(1e-3, seconds))
    solver.set_solver_specific_parameters(
        f"limits/gap = {limits.rel_gap}\n"
        f"limits/absgap = {limits.abs_gap}\n"
        f"randomization/randomseedshift = {limits.seed}\n"
        "parallel/maxnthreads = 1\n"
    )
    start = time.perf_counter()
    code = solver.solve(builder)
    runtime = time.perf_counter() - start
    if code == mb.SolveStatus.OPTIMAL:
        status = Status.OPTIMAL
    elif code == mb.SolveStatus.FEASIBLE:
        status = Status.FEASIBLE
    elif code == mb.SolveStatus.INFEASIBLE:
        status = Status.INFEASIBLE
    elif code == mb.SolveStatus.NOT_SOLVED:
        status = Status.TIME_LIMIT_NO_SOLUTION
    else:
        status = Status.ERROR
    incumbent = bound = None
    if status in (Status.OPTIMAL, Status.FEASIBLE):
        by_name = {v.name: v for v in builder.get_variables()}
        for symbol, obj in symbol_map.bySymbol.items():
            if getattr(obj, "ctype", None) is pyo.Var:
                mb_var = by_name.get(symbol)
                if mb_var is not None:
                    obj.set_value(solver.value(mb_var), skip_validation=True)
        incumbent = solver.objective_value
    if status in (Status.OPTIMAL, Status.FEASIBLE):
        bound = solver.best_objective_bound
        if not _finite(bound):
            bound = None
    return ModelSolve(
        status=status,
        incumbent=incumbent,
        bound=bound,
        runtime_s=runtime,
        backend="scip",
        backend_version=version,
        num_variables=nvars,
        num_integer_variables=nint,
        num_constraints=ncons,
        message=str(code),
        # only time and gap limits are set: a schedule without a proof, or none, means time
        time_limit_hit=status in (Status.FEASIBLE, Status.TIME_LIMIT_NO_SOLUTION),
    )


def _write_mps(model: pyo.ConcreteModel, path: Path, deadline: Deadline | None) -> Any:
    """Pyomo writes ``model`` to ``path`` (MPS) under ``deadline``'s interrupt; the id of
    its symbol map. Raises :class:`~ddlsched.errors.TimeLimitReached` at the deadline."""
    what = "handing the model to SCIP (writing the MPS file)"

    def write() -> Any:
        _, smap_id = model.write(
            str(path), format="mps", io_options={"symbolic_solver_labels": True}
        )
        return smap_id

    if deadline is None:
        return write()
    deadline.check(what)
    with deadline.interrupting(what):
        return write()


def _finite(x: float | None) -> bool:
    return x is not None and x == x and abs(x) != float("inf")
