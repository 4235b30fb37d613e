"""The hand-over of a Pyomo model to HiGHS under a deadline (``solvers/backends.py``,
``DeadlineHighs.set_instance``): interrupted at the deadline, never inside Pyomo's
output capture, and the same highspy model as Pyomo's own ``set_instance`` builds.

Pyomo's ``capture_output(capture_fd=True)`` reads the captured output in a thread
(``pyomo.common.tee.TeeStream._mergedReader``). An interrupt raised in the captured
block made the capture's exit give up on that thread after about 0.8 s and close its
pipes under it (``OSError: [Errno 9] Bad file descriptor`` in the thread); one raised
in the exit cut its cleanup half-way, and the descriptors were closed again later,
when they belonged to another file. The tests place the deadline at those points with
a clock they move (``fake_clock.StepClock``), not by timing.
"""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import sys
import threading
import time

import numpy as np
import pyomo.common.tee as tee
import pyomo.environ as pyo
import pytest
from fake_clock import StepClock
from pyomo.contrib.solver.solvers.highs import Highs

from ddlsched.deadline import Deadline
from ddlsched.solvers.backends import _highs_class, solve_model
from ddlsched.solvers.result import Status

pytestmark = [
    pytest.mark.filterwarnings("error::pytest.PytestUnhandledThreadExceptionWarning"),
    pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning"),
]


def small_milp(tiny_coefficient: bool = False) -> pyo.ConcreteModel:
    """Binary, integer and continuous columns, a ranged row, a constant in a maximised
    objective; ``tiny_coefficient``: a coefficient HiGHS warns about (and drops)."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(range(4), domain=pyo.Binary)
    m.n = pyo.Var(domain=pyo.NonNegativeIntegers, bounds=(0, 7))
    m.y = pyo.Var(bounds=(-2.5, 4.0))
    tiny = 1e-12 if tiny_coefficient else 0.0
    m.cap = pyo.Constraint(expr=sum((i + 2) * m.x[i] for i in range(4)) + m.n + tiny * m.y <= 9)
    m.band = pyo.Constraint(expr=pyo.inequality(-1.0, m.y - m.n + m.x[0], 3.0))
    m.obj = pyo.Objective(
        expr=sum((i + 3) * m.x[i] for i in range(4)) + 2 * m.n + 0.5 * m.y + 1.25,
        sense=pyo.maximize,
    )
    return m


def _interrupt_here(clock: StepClock) -> None:
    """The deadline passes here: wait for its interrupt while one is armed (the handler
    re-arms the timer until it raises; with no timer armed, return at once)."""
    clock.advance(1.0)
    while signal.getitimer(signal.ITIMER_REAL)[0] > 0:
        time.sleep(0.01)


@pytest.fixture
def thread_errors(monkeypatch):
    """What died in a thread, and what Python could only print (``__del__``), meanwhile."""
    errors: list[str] = []
    monkeypatch.setattr(
        threading,
        "excepthook",
        lambda args: errors.append(
            f"{args.thread.name}: {args.exc_type.__name__}: {args.exc_value}"
        ),
    )
    monkeypatch.setattr(
        sys, "unraisablehook", lambda u: errors.append(f"{u.err_msg}: {u.exc_type.__name__}")
    )
    return errors


@pytest.fixture
def clock() -> StepClock:
    """The deadline's clock: it moves only when the test says the limit comes."""
    return StepClock()


class HeldReader:
    """The capture's reader thread gets no CPU once the clock has moved on, until
    :meth:`let_go` (a starved process on a loaded machine)."""

    def __init__(self, clock: StepClock) -> None:
        self.clock = clock
        self.readers: set[threading.Thread] = set()
        self._go = threading.Event()
        self._real_select = tee.select

    def select(self, *args):
        """``select`` as the reader thread calls it, held while the test says so."""
        self.readers.add(threading.current_thread())
        if self.clock.now_s > 0:
            self._go.wait()
        return self._real_select(*args)

    def let_go(self) -> None:
        """Let the readers run again, on whatever the capture left them, until they end."""
        self._go.set()
        for reader in self.readers:
            reader.join(60)


@pytest.fixture
def held_reader(monkeypatch, clock):
    held = HeldReader(clock)
    monkeypatch.setattr(tee, "select", held.select)
    yield held
    held.let_go()


def test_the_deadline_in_the_hand_over_leaves_no_reader_on_a_closed_pipe(
    monkeypatch, thread_errors, clock, held_reader
):
    model = small_milp()
    real_add_block = Highs.add_block

    def add_block(self, block):
        if block is model:  # Pyomo adding the model to highspy: the limit comes
            _interrupt_here(clock)
        return real_add_block(self, block)

    monkeypatch.setattr(Highs, "add_block", add_block)
    solve = solve_model(model, "highs", deadline=Deadline(0.05, clock=clock))
    held_reader.let_go()
    assert solve.status is Status.TIME_LIMIT_NO_SOLUTION and solve.time_limit_hit
    assert "handing the model to HiGHS" in solve.message
    assert thread_errors == []


def test_the_deadline_in_the_captures_exit_closes_no_descriptor_twice(
    monkeypatch, thread_errors, clock
):
    real_finalize = tee._StreamHandle.finalize
    finalized: list[int] = []

    def finalize(self, ostreams):  # closes the read end of one of the capture's pipes
        real_finalize(self, ostreams)
        finalized.append(self.read_pipe)
        if len(finalized) == 1:  # between the two pipes of the first capture
            _interrupt_here(clock)

    monkeypatch.setattr(tee._StreamHandle, "finalize", finalize)
    solve = solve_model(small_milp(), "highs", deadline=Deadline(0.05, clock=clock))
    assert solve.status is Status.TIME_LIMIT_NO_SOLUTION and solve.time_limit_hit
    read_end, write_end = os.pipe()  # the lowest free numbers: a capture's, if one is left
    try:
        gc.collect()  # a capture left half-closed finishes closing here
        for fd in (read_end, write_end):
            os.fstat(fd)  # raises if something closed our pipe
    finally:
        for fd in (read_end, write_end):
            with contextlib.suppress(OSError):  # closed by someone else: the failure
                os.close(fd)
    assert thread_errors == []


def test_no_interrupt_is_armed_inside_pyomos_output_capture(monkeypatch):
    """Entering, inside and leaving every capture of a solve under a deadline (the
    hand-over's and the in-process solve's), no interrupt timer is running; the model
    itself is added under it."""
    seen: list[tuple[str, bool]] = []
    inside = [0]
    real_enter, real_exit = tee.capture_output.__enter__, tee.capture_output.__exit__
    real_add_block = Highs.add_block

    def armed() -> bool:
        return signal.getitimer(signal.ITIMER_REAL)[0] > 0

    def enter(self):
        seen.append(("enter", armed()))
        inside[0] += 1
        return real_enter(self)

    def leave(self, *exc):
        seen.append(("exit", armed()))
        inside[0] -= 1
        return real_exit(self, *exc)

    def add_block(self, block):
        seen.append(("add inside" if inside[0] else "add outside", armed()))
        return real_add_block(self, block)

    monkeypatch.setattr(tee.capture_output, "__enter__", enter)
    monkeypatch.setattr(tee.capture_output, "__exit__", leave)
    monkeypatch.setattr(Highs, "add_block", add_block)
    model = small_milp()
    model.x.domain = pyo.UnitInterval  # an LP: solved in this process, in a capture
    model.n.domain = pyo.NonNegativeReals
    solve = solve_model(model, "highs", deadline=Deadline(600.0))
    assert solve.status is Status.OPTIMAL
    assert [where for where, _ in seen].count("enter") == 2  # the hand-over, the solve
    assert not any(is_armed for where, is_armed in seen if where != "add outside")
    assert ("add outside", True) in seen


def _lp_arrays(highs) -> dict[str, object]:
    lp = highs.getLp()
    return {
        "sense": lp.sense_,
        "offset": lp.offset_,
        "cost": np.asarray(lp.col_cost_),
        "col_lower": np.asarray(lp.col_lower_),
        "col_upper": np.asarray(lp.col_upper_),
        "row_lower": np.asarray(lp.row_lower_),
        "row_upper": np.asarray(lp.row_upper_),
        "start": np.asarray(lp.a_matrix_.start_),
        "index": np.asarray(lp.a_matrix_.index_),
        "value": np.asarray(lp.a_matrix_.value_),
        "integrality": [int(v) for v in lp.integrality_],
    }


@pytest.mark.parametrize("objective", [True, False])
def test_the_hand_over_builds_pyomos_highspy_model(objective, capfd):
    """Column for column, row for row, the model Pyomo's own ``set_instance`` builds, and
    nothing printed (HiGHS warns about the tiny coefficient when its output is on)."""
    model = small_milp(tiny_coefficient=True)
    if not objective:
        model.obj.deactivate()
    reference = Highs()
    reference.set_instance(model)
    capfd.readouterr()
    ours = _highs_class()()
    ours.deadline = Deadline(600.0)
    ours.set_instance(model)
    assert capfd.readouterr() == ("", "")
    expected, got = _lp_arrays(reference._solver_model), _lp_arrays(ours._solver_model)
    assert expected.keys() == got.keys()
    for key, value in expected.items():
        assert np.array_equal(got[key], value), key
    assert ours._pyomo_var_to_solver_var_map == reference._pyomo_var_to_solver_var_map
    assert ours._model is model and (ours._objective is None) == (not objective)


def test_the_handed_over_model_solves_as_pyomos():
    model = small_milp()
    reference = Highs().solve(model, load_solutions=False)
    solve = solve_model(model, "highs", deadline=Deadline(600.0))
    assert solve.status is Status.OPTIMAL
    assert solve.incumbent == pytest.approx(reference.incumbent_objective, abs=1e-9)
