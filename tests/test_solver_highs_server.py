"""The HiGHS worker process of direct highspy MIPs (``solvers/highs_server.py``)."""

from __future__ import annotations

import os
import time

import numpy as np
import pytest

from ddlsched.deadline import Deadline
from ddlsched.models.dmlrs_dual import PricingSession
from ddlsched.solvers import highs_server
from ddlsched.workloads.dmlrs import generate


def _knapsack(seed: int) -> highs_server.MipArrays:
    """max v x s.t. w x <= cap, x binary: a small MIP with a known brute-force optimum."""
    rng = np.random.default_rng(seed)
    n = 12
    weight, value = rng.integers(1, 20, n).astype(float), rng.integers(1, 30, n).astype(float)
    cap = float(weight.sum() // 2)
    return highs_server.MipArrays(
        cost=value,
        col_lower=np.zeros(n),
        col_upper=np.ones(n),
        row_lower=np.array([-np.inf]),
        row_upper=np.array([cap]),
        start=np.arange(n + 1, dtype=np.int32),
        index=np.zeros(n, dtype=np.int32),
        value=weight,
        integer=np.ones(n, dtype=bool),
        maximize=True,
        options=(("output_flag", False), ("threads", 1), ("mip_rel_gap", 0.0)),
    )


def _brute_force(mip: highs_server.MipArrays) -> float:
    n = mip.cost.size
    picks = (np.arange(1 << n)[:, None] >> np.arange(n)) & 1
    fits = picks @ mip.value <= mip.row_upper[0]
    return float((picks[fits] @ mip.cost).max())


@pytest.mark.parametrize("seed", range(5))
def test_the_worker_returns_the_in_process_optimum(seed: int) -> None:
    mip = _knapsack(seed)
    in_worker = highs_server.solve_mip(mip, 3600.0)
    in_process = highs_server.solve_mip(mip, 3600.0, in_worker=False)
    assert not in_worker.killed
    assert in_worker.objective == pytest.approx(in_process.objective) == _brute_force(mip)
    assert in_worker.col_value == pytest.approx(in_process.col_value)


def _never_returns(mip, time_limit_s):
    """HiGHS not looking at its clock (the overrun this worker is for)."""
    time.sleep(600)


def test_a_solve_that_ignores_its_limit_is_killed(monkeypatch) -> None:
    highs_server.shutdown()  # the next worker is forked with the patched solve
    monkeypatch.setattr(highs_server, "_run", _never_returns)
    highs_server._WORKER.start()
    pid = highs_server._WORKER.pid
    run = highs_server.solve_mip(_knapsack(0), 0.5)
    assert run.killed and not run.primal_valid and run.col_value is None
    assert highs_server._WORKER.pid is None
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # killed and reaped, not left behind
    monkeypatch.undo()
    again = highs_server.solve_mip(_knapsack(0), 3600.0)  # a new worker
    assert not again.killed and again.objective == _brute_force(_knapsack(0))
    highs_server.shutdown()


def test_pricing_in_the_worker_matches_in_process(monkeypatch) -> None:
    """A finite limit sends the pricing MILPs to the worker; same optimum as in-process."""
    instance = generate("tiny", 3)
    rng = np.random.default_rng(3)
    shape = (instance.num_machines, len(instance.resources), instance.slots)
    prices = rng.uniform(0, 2, size=shape) * (rng.random(shape) < 0.5)
    worker = PricingSession(instance, "milp")
    local = PricingSession(instance, "milp")
    for i in range(len(instance.jobs)):
        in_worker = worker.price(i, prices, Deadline(3600.0))
        in_process = local.price(i, prices, Deadline.unlimited())
        assert in_worker.status == in_process.status
        assert in_worker.value == pytest.approx(in_process.value, abs=1e-6)
        assert in_worker.dual_bound == pytest.approx(in_process.dual_bound, abs=1e-6)
