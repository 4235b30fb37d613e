"""Algorithm 4 as revised: internal case ``w = D``, shrunk LP, repair (``docs/families/dmlrs.md``).

Hand-computed: the internal case with ``w = D``, the floored one-resource
bounds, one repair of each step. Checked independently: the shrunk LP
equals a fresh LP of the shrunk data; a repaired draw marked feasible meets
every row (an independent loop checker), and every repaired draw meets (24)
and (25); the chosen draw costs at least the ILP optimum, which costs at
least the LP's. End to end: PD-ORS's schedule on tiny instances has the
utility its plans promised and never beats the exact optimum; ``rounding =
literal`` with ``internal = gamma_multiple`` reproduces the numbers of the
first spec's code (pinned before the revision).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from dmlrs_slot_helpers import lp_args, slot_data
from tiers import sweep

from ddlsched.heuristics.dmlrs_rounding import (
    REPAIR_STEPS,
    draw_roundings,
    g_delta,
    repair,
    round_external,
    round_repaired,
    unit_caps,
)
from ddlsched.heuristics.dmlrs_slot import InternalCase, SlotData
from ddlsched.heuristics.pd_ors import PdOrsSettings, run_pd_ors
from ddlsched.problems.dmlrs import evaluate
from ddlsched.registry import RunOptions, get_family, run_method
from ddlsched.solvers.dmlrs_slot_lp import HighsSlotSolvers
from ddlsched.workloads.dmlrs import generate


@pytest.fixture(scope="module")
def solvers() -> HighsSlotSolvers:
    return HighsSlotSolvers()


def random_slot(seed: int) -> SlotData:
    rng = np.random.default_rng(seed)
    H, R = int(rng.integers(2, 8)), 3
    alpha = rng.integers(0, 4, R).astype(float)
    alpha[0] = max(alpha[0], 1.0)  # workers use resource 0 (a GPU-like one, PSs do not)
    beta = rng.integers(0, 3, R).astype(float)
    beta[0] = 0.0
    beta[1] = max(beta[1], 1.0)
    return slot_data(
        np.round(rng.uniform(0.1, 10, H), 3),
        np.round(rng.uniform(0.1, 10, H), 3),
        alpha,
        beta,
        rng.integers(0, 30, (H, R)).astype(float),
        int(rng.integers(1, 4)),
        int(rng.integers(2, 25)),
    )


# --------------------------------------------------------------------------- internal case


def test_internal_case_hires_exactly_d_workers():
    # gamma = 2, D = 3: s = 2 PSs and w = 3 workers (the first spec hired 4).
    # worker gpu 1 / cpu 1, PS cpu 2: load gpu 3, cpu 3 + 4 = 7.
    # machine 0: cheapest but 2 GPUs left -> no; machine 1: cost 3*3 + 2*1 = 11;
    # machine 2: cost 3*2 + 2*1 = 8 -> machine 2.
    data = slot_data(
        pw=[1.0, 3.0, 2.0],
        ps=[1.0, 1.0, 1.0],
        alpha=[1.0, 1.0],
        beta=[0.0, 2.0],
        residual=[[2.0, 64.0], [8.0, 64.0], [8.0, 64.0]],
        gamma=2,
        F=3,
    )
    case = InternalCase(data)
    choice = case.solve(3)
    assert choice is not None and choice.machines.tolist() == [2]
    assert (choice.workers.tolist(), choice.ps.tolist()) == ([3], [2])
    assert choice.cost == pytest.approx(8.0)
    # the first spec's w = gamma s = 4 > F = 3 (Eq. 4): no internal case at all
    assert InternalCase(data, "gamma_multiple").solve(3) is None
    assert case.solve(4) is None  # D > F
    # ties: the lower index
    tie = slot_data([1, 1], [1, 1], [1, 1], [0, 2], [[8, 64], [8, 64]], 2, 8)
    assert InternalCase(tie).solve(1).machines.tolist() == [0]


@pytest.mark.parametrize("seed", sweep(range(30), 3))
def test_internal_case_equals_a_scan_of_every_machine(seed):
    data = random_slot(seed)
    case = InternalCase(data)
    for demand in range(1, 30):
        s = -(-demand // data.gamma)
        want, best = None, math.inf
        if demand <= data.max_workers:
            for h in range(data.num_machines):
                load = demand * data.alpha + s * data.beta
                cost = demand * data.worker_price[h] + s * data.ps_price[h]
                if np.all(load <= data.residual[h]) and cost < best:
                    want, best = h, cost
        got = case.solve(demand)
        assert (got is None) == (want is None)
        if got is not None:
            assert got.machines.tolist() == [want] and got.cost == pytest.approx(best)
            assert (got.workers.tolist(), got.ps.tolist()) == ([demand], [s])


# --------------------------------------------------------------------------- shrunk LP


def test_unit_caps_are_floored_per_resource():
    # GPU only workers use: 8 GPUs at 3 a worker hold 2 workers (not 2.67);
    # storage only PSs use: 10 at 4 a PS hold 2; cpu is shared (a row, no cap).
    data = slot_data(
        [1, 1], [1, 1], [3.0, 1.0, 0.0], [0.0, 1.0, 4.0], [[8, 64, 10], [0.3, 64, 3.9]], 1, 50
    )
    worker_cap, ps_cap = unit_caps(data)
    assert worker_cap.tolist() == [2.0, 0.0] and ps_cap.tolist() == [2.0, 0.0]
    # F is not a one-resource bound (row (25) stays as it is); no PS-only resource at all
    free = slot_data([1], [1], [1.0, 1.0], [0.0, 1.0], [[100, 100]], 1, 7)
    worker_cap, ps_cap = unit_caps(free)
    assert worker_cap.tolist() == [100.0] and ps_cap.tolist() == [math.inf]
    # workers that use no resource of their own: no bound at all
    shared = slot_data([1], [1], [0.0, 1.0], [0.0, 1.0], [[8, 64]], 1, 4)
    assert unit_caps(shared)[0].tolist() == [math.inf]


def test_shrunk_lp_keeps_row_25_and_caps_no_machine_at_f_over_g(solvers):
    # review: a cap of min(F, .) / G per machine made this LP infeasible. One machine,
    # worker (no GPU, 1 CPU), PS (1 CPU), 64 CPUs, F = D = 4, gamma = 1: the spec's
    # shrunk LP has w = 4 <= 64 / (2 G) on the shared CPU row, s = 4, cost 8.
    data = slot_data([1.0], [1.0], [0.0, 1.0], [0.0, 1.0], [[8, 64]], 1, 4)
    G = g_delta(4, 0.1)
    shrunk = solvers.lp(*lp_args(data)).solve_shrunk(4, G, *unit_caps(data))
    assert shrunk is not None and shrunk.objective == pytest.approx(8.0)
    # 0.3 / 0.1 is 2.9999999999999996 in floating point: still 3
    tenth = slot_data([1], [1], [0.1, 1.0], [0.0, 1.0], [[0.3, 100]], 1, 7)
    assert unit_caps(tenth)[0].tolist() == [3.0]


def shrunk_data(data: SlotData, G: float) -> SlotData:
    """The spec's shrunk LP as a full LP of other data: shared rows at C / G, each
    one-resource resource set so that its bound is floor(C / demand) / G (computed here,
    in plain Python, not by unit_caps); the full LP keeps w_h <= F and row (25)."""
    res = data.residual / G
    for r in range(data.alpha.size):
        a, b = data.alpha[r], data.beta[r]
        if (a > 0) != (b > 0):
            unit = a if a > 0 else b
            floored = np.array([math.floor(c / unit + 1e-9) for c in data.residual[:, r]])
            res[:, r] = unit * floored / G
    return slot_data(*lp_args(data)[:4], res, data.gamma, data.max_workers)


@pytest.mark.parametrize("seed", range(20))
def test_shrunk_lp_equals_a_fresh_lp_and_the_session_restores_the_full_lp(solvers, seed):
    data = random_slot(seed)
    session = solvers.lp(*lp_args(data))
    worker_cap, ps_cap = unit_caps(data)
    for demand in range(1, data.max_workers + 1, 2):
        G = g_delta(demand, 0.1)
        shrunk = session.solve_shrunk(demand, G, worker_cap, ps_cap)
        fresh = solvers.lp(*lp_args(shrunk_data(data, G))).solve(demand)
        assert (shrunk is None) == (fresh is None)
        if shrunk is not None:
            assert shrunk.objective == pytest.approx(fresh.objective, rel=1e-7, abs=1e-9)
        full = session.solve(demand)
        again = solvers.lp(*lp_args(data)).solve(demand)
        assert (full is None) == (again is None)
        if full is not None:
            assert full.objective == pytest.approx(again.objective, rel=1e-7, abs=1e-9)
            if shrunk is not None:
                assert shrunk.objective >= full.objective * (1 - 1e-7) - 1e-9


# --------------------------------------------------------------------------- repair


def rows_met(data: SlotData, w: np.ndarray, s: np.ndarray, demand: int) -> dict[str, bool]:
    """An independent checker of one allocation (plain loops)."""
    cap = True
    for h in range(data.num_machines):
        for r in range(data.alpha.size):
            load = data.alpha[r] * w[h] + data.beta[r] * s[h]
            cap &= bool(load <= data.residual[h, r] + 1e-9)
    total_w, total_s = float(w.sum()), float(s.sum())
    return {
        "cover": total_w >= demand,
        "capacity": cap,
        "worker_cap": total_w <= data.max_workers,
        "ps": data.gamma * total_s >= total_w,
        "integral": bool(np.all(w == np.round(w)) and np.all(s == np.round(s))),
        "nonnegative": bool(np.all(w >= 0) and np.all(s >= 0)),
    }


@pytest.mark.parametrize("seed", sweep(range(40), 4))
def test_repair_never_returns_a_draw_that_breaks_a_row(solvers, seed):
    data = random_slot(seed)
    session = solvers.lp(*lp_args(data))
    worker_cap, ps_cap = unit_caps(data)
    rng = np.random.default_rng(seed)
    checked = 0
    for demand in range(1, data.max_workers + 1):
        full = session.solve(demand)
        if full is None:
            continue
        for G in (1.0, g_delta(demand, 0.1), 3.0):
            point = session.solve_shrunk(demand, G, worker_cap, ps_cap) or full
            draws = draw_roundings(data, point.w, point.s, demand, G, rng, 30)
            fixed = repair(data, draws, point.w, point.s, G, demand)
            for d in range(30):
                met = rows_met(data, fixed.w[d], fixed.s[d], demand)
                # (24) and (25) hold after every repair, feasible or not
                assert met["capacity"] and met["worker_cap"] and met["integral"]
                assert met["nonnegative"]
                assert fixed.feasible[d] == (met["cover"] and met["ps"])
                if fixed.feasible[d]:
                    checked += 1
                    # no worker above D, exactly ceil(sum w / gamma) PSs
                    assert fixed.w[d].sum() == demand
                    assert fixed.s[d].sum() == math.ceil(demand / data.gamma)
                    cost = fixed.w[d] @ data.worker_price + fixed.s[d] @ data.ps_price
                    assert fixed.cost[d] == pytest.approx(cost)
    assert checked > 0


def test_repair_steps_by_hand():
    # two machines; worker (gpu 1, cpu 1), PS (cpu 1); gamma 1; D = 2; F = 3
    # machine 0: 2 GPUs, 2 CPUs, pw 1, ps 5; machine 1: 4 GPUs, 8 CPUs, pw 2, ps 1
    data = slot_data([1.0, 2.0], [5.0, 1.0], [1.0, 1.0], [0.0, 1.0], [[2, 2], [4, 8]], 1, 3)
    w_hat, s_hat = np.array([1.0, 0.5]), np.array([0.0, 1.5])
    G = 1.5
    # draw: machine 0 gets 2 workers (fits: gpu 2, cpu 2), machine 1: 1 worker, 0 PSs
    # -> 3 workers > D: remove 1 at the highest pw (machine 1); PSs 0 < 2: add 2 on
    # the lowest ps with room (machine 1).
    from ddlsched.heuristics.dmlrs_rounding import Draws

    def draws_of(w, s):
        w, s = np.array([w], float), np.array([s], float)
        return Draws(np.array([0, 1]), w, s, *(np.array([False]),) * 4)

    fixed = repair(data, draws_of([2, 1], [0, 0]), w_hat, s_hat, G, 2)
    assert fixed.w[0].tolist() == [2, 0] and fixed.s[0].tolist() == [0, 2]
    assert fixed.feasible[0] and fixed.cost[0] == pytest.approx(2 * 1 + 2 * 1)
    steps = {k: bool(v[0]) for k, v in fixed.changed.items()}
    assert steps == {"capacity": False, "workers_removed": True, "ps_added": True,
                     "ps_removed": False}  # fmt: skip
    # machine 0 breaks (24) (3 workers on 2 GPUs): floor(G x^) = (1, 0) there;
    # machine 1: 1 worker and 4 PSs (fits: cpu 5 <= 8); PSs above ceil(2 / 1) = 2
    # are removed: 2 at the highest ps (machine 0 holds none; machine 1 loses 2)
    fixed = repair(data, draws_of([3, 1], [0, 4]), w_hat, s_hat, G, 2)
    assert fixed.w[0].tolist() == [1, 1] and fixed.s[0].tolist() == [0, 2]
    steps = {k: bool(v[0]) for k, v in fixed.changed.items()}
    assert steps == {"capacity": True, "workers_removed": False, "ps_added": False,
                     "ps_removed": True}  # fmt: skip
    # no room for a missing PS anywhere: infeasible, (24) still holds, and step (c)
    # changed nothing (review: it was counted as a PS added)
    full = slot_data([1.0], [1.0], [1.0, 1.0], [0.0, 1.0], [[4, 2]], 1, 4)
    fixed = repair(full, Draws(np.array([0]), np.array([[2.0]]), np.array([[0.0]]),
                               *(np.array([False]),) * 4), np.array([2.0]), np.array([0.0]),
                   1.0, 2)  # fmt: skip
    assert not fixed.feasible[0] and fixed.s[0].tolist() == [0]
    assert not fixed.changed["ps_added"][0]


@pytest.mark.parametrize("seed", range(25))
def test_lp_below_ilp_below_the_repaired_choice(solvers, seed):
    data = random_slot(seed)
    session = solvers.lp(*lp_args(data))
    rng = np.random.default_rng(seed)
    for demand in range(1, data.max_workers + 1, 2):
        full = session.solve(demand)
        ilp = solvers.ilp(*lp_args(data), demand)
        if full is None:
            assert ilp is None
            continue
        choice, stats = round_external(data, session, full, demand, rng, delta=0.1, draws=5)
        assert stats.lp in ("shrunk", "full") and set(stats.repairs) == set(REPAIR_STEPS)
        assert 5 <= stats.draws <= 50
        assert stats.feasible_draws_unrepaired <= stats.draws
        if choice is not None:
            assert ilp is not None
            assert full.objective <= ilp.objective + 1e-7 <= choice.cost + 2e-7
            met = rows_met(
                data,
                np.bincount(choice.machines, choice.workers, data.num_machines),
                np.bincount(choice.machines, choice.ps, data.num_machines),
                demand,
            )
            assert all(met.values())
        else:
            assert stats.draws == 50 and stats.feasible_draws == 0


def test_g_one_rounds_an_integral_shrunk_point_to_itself(solvers):
    # plenty of room: the shrunk LP's optimum at G = 1 is integral, every draw equals it
    data = slot_data([1.0, 2.0], [1.0, 2.0], [1.0, 0.0], [0.0, 1.0], [[8, 8], [8, 8]], 2, 6)
    session = solvers.lp(*lp_args(data))
    full = session.solve(4)
    choice, stats = round_repaired(data, full.w, full.s, 4, 1.0, np.random.default_rng(0))
    assert choice is not None and stats.feasible_draws == stats.draws == 10
    assert choice.cost == pytest.approx(full.objective)


# --------------------------------------------------------------------------- end to end


@pytest.mark.parametrize("seed", range(12))
def test_pd_ors_on_tiny_earns_what_it_planned_and_never_beats_the_optimum(seed):
    inst = generate("tiny", seed)
    run = run_pd_ors(inst, PdOrsSettings(), seed, None, HighsSlotSolvers())
    evaluation = evaluate(inst, run.schedule)  # raises on any broken constraint
    planned = sum(
        inst.jobs[i].utility(c - inst.jobs[i].arrival_slot)
        for i, c in enumerate(run.info["planned_completion_slot"])
        if c is not None
    )
    assert evaluation.total_utility == pytest.approx(planned, rel=1e-12)
    assert evaluation.completed == run.info["accepted"]
    exact = run_method("dmlrs", "exact", inst, RunOptions(time_limit_s=60))
    assert exact.status == "optimal"
    assert evaluation.total_utility <= exact.objective * (1 + 1e-9)


# Numbers of the first spec's PD-ORS, pinned before the revision (main at faefdfb):
# (preset, instance seed, method seed) -> (utility, accepted, draws)
FIRST_SPEC = {
    ("tiny", 0, 0): (164.9057216037803, 3, 1300),
    ("tiny", 4, 3): (62.55594911334124, 2, 1800),
    ("tiny", 11, 0): (44.34757129949674, 1, 900),
    ("paper", 0, 0): (302.575320036338, 5, 13397),
    ("paper", 0, 3): (302.575320036338, 5, 13391),
    ("paper", 1, 0): (80.89359315130537, 3, 15800),
}
# the same with scale = none (some draws feasible): (utility, accepted, draws, external slots)
FIRST_SPEC_G1 = {
    (1, 0): (98.10591484773899, 4, 6477, 4),
    (1, 3): (98.10591484773899, 4, 6452, 4),
    (2, 0): (96.30723324398755, 4, 12042, 2),
}
LITERAL = {"rounding": "literal", "internal": "gamma_multiple"}


@pytest.mark.parametrize("key", sorted(FIRST_SPEC))
def test_literal_reproduces_the_first_spec(key):
    preset, seed, method_seed = key
    size = {"jobs": 10, "machines": 10, "slots": 10} if preset == "paper" else {}
    inst = get_family("dmlrs").generate(preset, seed, **size)
    result = run_method("dmlrs", "pd_ors", inst, RunOptions(seed=method_seed, params=LITERAL))
    got = (result.objective, result.info["accepted"], result.info["draws"])
    assert got == FIRST_SPEC[key]


@pytest.mark.parametrize("key", sorted(FIRST_SPEC_G1))
def test_literal_reproduces_the_first_spec_without_scaling(key):
    seed, method_seed = key
    inst = get_family("dmlrs").generate("paper", seed, jobs=10, machines=10, slots=10)
    params = {**LITERAL, "scale": "none"}
    result = run_method("dmlrs", "pd_ors", inst, RunOptions(seed=method_seed, params=params))
    info = result.info
    got = (result.objective, info["accepted"], info["draws"], info["external_slots"])
    assert got == FIRST_SPEC_G1[key]


def test_slot_family_rounding_records_the_revised_fields():
    inst = get_family("dmlrs_slot").generate("synthetic", 0, load=0.25, demand_share=0.1)
    result = run_method("dmlrs_slot", "rounding", inst, RunOptions(seed=1))
    info = result.info
    assert result.status == "feasible" and info["rounding"] == "shrunk"
    assert info["rounded_lp"] in ("shrunk", "full")
    assert 0 <= info["feasible_share_unrepaired"] <= info["feasible_share"] <= 1
    assert set(info["repairs"]) == set(REPAIR_STEPS)
    # the first spec's rule found no feasible draw on this instance
    literal = run_method(
        "dmlrs_slot", "rounding", inst, RunOptions(seed=1, params={"rounding": "literal"})
    )
    assert (
        literal.status == "no_solution"
        and "no feasible draw" in literal.info["reason"]
        and literal.info["feasible_draws"] == 0
    )
    assert result.objective >= run_method("dmlrs_slot", "ilp", inst).objective * (1 - 1e-9)
