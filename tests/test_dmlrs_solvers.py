"""The direct highspy paths of family ``dmlrs`` against their Pyomo statements of record.

* :class:`ddlsched.solvers.dmlrs_pricing.SingleJobPricer` (the aggregated
  single-job MILP and the LP at ``b_int``) gives the optimum of the Pyomo
  model :func:`ddlsched.models.dmlrs_milp.build_model` restricted to one job,
  with the priced usage in the objective, on random instances (3-6
  machines, so that price classes of several machines occur) and random
  prices drawn from a small palette per machine and slot (equal prices
  on several machines and slots: the aggregation and the symmetry rows are
  exercised), solved through :func:`ddlsched.solvers.backends.solve_model`;
* the integer hull and its decomposition (:func:`hull_facets`,
  :func:`split_totals`): every integer point of ``n P_I`` splits into ``n``
  machine placements;
* :class:`ddlsched.solvers.dmlrs_master.ColumnMaster` gives the Pyomo
  master's optimum (LP and MILP) on random columns, and its duals certify
  the LP value.
"""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
import pytest
from tiers import sweep

from ddlsched.models.dmlrs_dual import price_job, price_job_pyomo
from ddlsched.solvers import SolveLimits, Status, solve_model
from ddlsched.solvers.dmlrs_machine import hull_facets, split_totals
from ddlsched.solvers.dmlrs_master import ColumnMaster
from ddlsched.workloads.dmlrs import generate

SEEDS = range(24)


def random_case(seed: int):
    rng = np.random.default_rng(1000 + seed)
    instance = generate(
        "tiny", seed, machines=int(rng.integers(3, 7)), slots=int(rng.integers(3, 6))
    )
    H, R, T = instance.num_machines, len(instance.resources), instance.slots
    palette = rng.uniform(0, 2, size=(3, R)) * (rng.random((3, R)) < 0.6)
    palette[0] = 0.0
    prices = palette[rng.integers(0, 3, size=(H, T))].transpose(0, 2, 1).copy()
    if seed % 4 == 0:
        prices[:] = 0.0
    return instance, prices


@pytest.mark.parametrize("seed", sweep(SEEDS, 2))
@pytest.mark.parametrize("mode", ["milp", "lp"])
def test_pricer_matches_pyomo(seed, mode):
    instance, prices = random_case(seed)
    for i in range(len(instance.jobs)):
        direct = price_job(instance, i, prices, mode)
        pyomo = price_job_pyomo(instance, i, prices, mode, "highs")
        assert direct.status == pyomo.status == "optimal"
        assert direct.dual_bound == pytest.approx(pyomo.dual_bound, rel=1e-7, abs=1e-7)
        assert direct.value == pytest.approx(pyomo.value, rel=1e-7, abs=1e-7)


@pytest.mark.parametrize(
    "capacity, alpha, beta, cap, gamma",
    [
        ((2, 4, 16, 32), (1, 1, 5, 3), (0, 2, 3, 4), 4, 2),
        ((8, 64, 256, 2048), (3, 7, 20, 6), (0, 5, 31, 9), 50, 3),
        ((8, 64, 256, 2048), (0, 2, 2, 5), (0, 9, 17, 10), 200, 1),
        ((2, 4, 16, 32), (0, 0, 0, 0), (0, 1, 1, 1), 3, 1),
        ((2, 4, 16, 32), (1, 1, 1, 1), (0, 0, 0, 0), 3, 2),
    ],
)
def test_every_point_of_n_hulls_splits(capacity, alpha, beta, cap, gamma):
    c, a, b = (np.asarray(v, dtype=float) for v in (capacity, alpha, beta))
    hull = hull_facets(c, a, b, cap, gamma)
    for n in (1, 2, 3):
        for w in range(n * hull.max_w + 1):
            for s in range(n * hull.max_s + 1):
                inside = bool(hull.contains(np.array([[w, s]]), n)[0])
                if not inside:
                    continue
                parts = split_totals(hull, n, w, s)
                assert len(parts) <= n
                assert sum(p[0] for p in parts) == w and sum(p[1] for p in parts) == s
                for pw, ps in parts:
                    assert np.all(a * pw + b * ps <= c + 1e-9)


def random_columns(seed: int):
    rng = np.random.default_rng(seed)
    num_jobs, num_keys = int(rng.integers(2, 6)), int(rng.integers(3, 9))
    capacity = rng.integers(2, 10, size=num_keys).astype(float)
    columns = []
    for _ in range(int(rng.integers(3, 15))):
        keys = rng.choice(num_keys, size=int(rng.integers(1, num_keys + 1)), replace=False)
        columns.append(
            (
                int(rng.integers(0, num_jobs)),
                float(rng.uniform(1, 50)),
                keys,
                rng.integers(1, 6, size=len(keys)).astype(float),
            )
        )
    return num_jobs, capacity, columns


def pyomo_master(num_jobs, capacity, columns, integer: bool) -> float:
    m = pyo.ConcreteModel()
    n = len(columns)
    m.x = pyo.Var(range(n), domain=pyo.Binary if integer else pyo.UnitInterval)
    m.job = pyo.ConstraintList()
    for i in range(num_jobs):
        members = [c for c in range(n) if columns[c][0] == i]
        if members:
            m.job.add(sum(m.x[c] for c in members) <= 1)
    m.cap = pyo.ConstraintList()
    for key, cap in enumerate(capacity):
        terms = [
            (c, amt)
            for c, (_, _, keys, amounts) in enumerate(columns)
            for k, amt in zip(keys, amounts, strict=True)
            if k == key
        ]
        if terms:
            m.cap.add(sum(amt * m.x[c] for c, amt in terms) <= cap)
    m.obj = pyo.Objective(expr=sum(columns[c][1] * m.x[c] for c in range(n)), sense=pyo.maximize)
    solve = solve_model(m, "highs", SolveLimits())
    assert solve.status is Status.OPTIMAL
    return solve.incumbent


@pytest.mark.parametrize("seed", range(20))
def test_master_matches_pyomo(seed):
    num_jobs, capacity, columns = random_columns(seed)
    master = ColumnMaster(num_jobs, capacity)
    for job, utility, keys, amounts in columns[: len(columns) // 2]:
        master.add_column(job, utility, keys, amounts)
    master.solve_lp()  # grown in two batches, as column generation does
    for job, utility, keys, amounts in columns[len(columns) // 2 :]:
        master.add_column(job, utility, keys, amounts)
    lp = master.solve_lp()
    assert lp.value == pytest.approx(pyomo_master(num_jobs, capacity, columns, False), abs=1e-7)
    # weak duality with the duals: sum sigma + sum p C equals the LP value
    dual = float(np.sum(lp.sigma)) + sum(p * capacity[k] for k, p in lp.duals.items())
    assert dual == pytest.approx(lp.value, abs=1e-6)
    mip = master.solve_mip()
    assert mip.value == pytest.approx(pyomo_master(num_jobs, capacity, columns, True), abs=1e-6)
    assert master.solve_lp().value == pytest.approx(lp.value)  # the LP is restored


def _random_master(num_columns: int) -> tuple[ColumnMaster, np.random.Generator]:
    """A master LP of 50 jobs over 3,000 keys with random 40-key columns, and its generator."""
    rng = np.random.default_rng(0)
    num_keys = 3000
    master = ColumnMaster(50, rng.integers(5, 20, size=num_keys).astype(float))
    for _ in range(num_columns):
        keys = rng.choice(num_keys, size=40, replace=False)
        master.add_column(
            int(rng.integers(0, 50)),
            float(rng.uniform(1, 50)),
            keys,
            rng.integers(1, 6, size=40).astype(float),
        )
    return master, rng


def test_time_limits_are_per_call_not_cumulative():
    """HiGHS 1.14 counts ``time_limit`` on a clock that adds up over the runs of one
    Highs object; each call must get its own budget (a regression: colgen's master
    LP stopped with status time_limit once its solves had added up to the budget)."""
    master, _ = _random_master(400)
    master.solve_lp()
    one = master._highs.getRunTime()
    budget = 3 * one + 0.05
    for _ in range(int(budget / max(one, 1e-3)) + 3):
        master._highs.clearSolver()  # a cold solve each time
        assert master.solve_lp(budget).status == "optimal"
    assert master._highs.getRunTime() > budget


def test_mip_time_limits_count_from_the_call(monkeypatch):
    """A MIP (the master's integral solve, a pricing MILP) gets the budget it is given,
    whatever ran before on the same objects (HiGHS 1.14 times a MIP from its own start
    but an LP on the accumulated run clock). The budget handed to the MIP solve is read,
    not a time measured: the answer does not depend on the machine's speed."""
    from ddlsched.deadline import Deadline
    from ddlsched.models.dmlrs_dual import PricingSession
    from ddlsched.solvers import dmlrs_master, dmlrs_pricing

    budgets = []

    def spy(real):
        def solve_mip(mip, seconds, **kwargs):
            budgets.append(seconds)
            return real(mip, seconds, **kwargs)

        return solve_mip

    monkeypatch.setattr(dmlrs_master, "solve_mip", spy(dmlrs_master.solve_mip))
    monkeypatch.setattr(dmlrs_pricing, "solve_mip", spy(dmlrs_pricing.solve_mip))
    master, rng = _random_master(1500)
    while master._highs.getRunTime() < 1.5:
        master._highs.clearSolver()
        master.solve_lp()
    mip = master.solve_mip(0.3)
    assert budgets == [0.3]
    assert mip.status in ("time_limit", "optimal")

    instance = generate("paper", 0)
    H, R, T = instance.num_machines, len(instance.resources), instance.slots
    prices = rng.uniform(0, 1, size=(H, R, T)) * (rng.random((H, R, T)) < 0.2)
    session = PricingSession(instance, "milp")
    for _ in range(3):
        budgets.clear()
        result = session.price(5, prices, Deadline(0.3))
        assert len(budgets) <= 1 and all(0 < b <= 0.3 for b in budgets)
        assert result.dual_bound >= result.value
