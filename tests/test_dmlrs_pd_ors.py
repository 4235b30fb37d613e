"""PD-ORS (Algorithms 1-4), its OASiS variant and the price function (Eqs. 12-14).

Spec ``docs/families/dmlrs.md`` (``pd_ors``, ``oasis``). Hand-computed
values: the internal case on a three-machine slot, OASiS's greedy, ``U^r``,
``L`` and ``Q`` on a two-job instance, ``G_delta``. Properties: ``lp <= ilp
<=`` every feasible rounding on random Problem (23) instances; the covering
row (26) holds in at least ``1 - delta`` of 2,000 draws (binomial test at
99.9 %; packing violations are counted, not asserted); the DP equals a brute
force and never rises when the quanta double; a job is accepted exactly
when its payoff is positive; prices change only on the cells accepted jobs
use; OASiS never co-locates a job's worker and PS; every schedule passes
the ``dmlrs`` evaluator; same seed, same output.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from dmlrs_slot_helpers import lp_args, slot_data
from scipy.stats import binomtest

from ddlsched.deadline import Deadline
from ddlsched.errors import DdlschedError, TimeLimitReached
from ddlsched.heuristics.dmlrs_prices import fewest_slots, price_function
from ddlsched.heuristics.dmlrs_rounding import draw_roundings, g_delta, round_solution
from ddlsched.heuristics.dmlrs_slot import InternalCase, OasisCase, SlotData
from ddlsched.heuristics.pd_ors import PdOrsSettings, PdOrsState, plan_job, run_pd_ors, theta_dp
from ddlsched.problems.dmlrs import (
    DmlrsInstance,
    DmlrsJob,
    Utility,
    evaluate,
    fastest_slots,
)
from ddlsched.problems.dmlrs_slot import SlotInstance
from ddlsched.solvers.dmlrs_slot_lp import HighsSlotSolvers
from ddlsched.workloads.dmlrs import generate


@pytest.fixture(scope="module")
def solvers() -> HighsSlotSolvers:
    return HighsSlotSolvers()


# --------------------------------------------------------------------------- Algorithm 4


def test_internal_case_gamma_multiple_picks_the_cheapest_feasible_machine():
    # gamma = 2; bundle (2 workers + 1 PS) demand: gpu 2*1 + 0 = 2, cpu 2*1 + 2 = 4
    # keys gamma pw + ps: machine 0: 2*1 + 1 = 3 (cheapest, but only 2 GPUs left),
    # machine 1: 2*3 + 1 = 7, machine 2: 2*2 + 1 = 5 (feasible) -> machine 2
    data = slot_data(
        pw=[1.0, 3.0, 2.0],
        ps=[1.0, 1.0, 1.0],
        alpha=[1.0, 1.0],
        beta=[0.0, 2.0],
        residual=[[2.0, 64.0], [8.0, 64.0], [8.0, 64.0]],
        gamma=2,
        F=8,
    )
    case = InternalCase(data, "gamma_multiple")
    choice = case.solve(3)  # D = 3 -> s = ceil(3 / 2) = 2, w = 4: gpu 4 > 2 on machine 0
    assert choice is not None and choice.case == "internal"
    assert choice.machines.tolist() == [2]
    assert (choice.workers.tolist(), choice.ps.tolist()) == ([4], [2])
    assert choice.cost == pytest.approx(2 * 5.0)  # s times the key
    one = case.solve(2)  # s = 1, w = 2: fits machine 0
    assert one is not None and one.machines.tolist() == [0] and one.cost == pytest.approx(3.0)
    assert case.solve(9) is None  # w = 10 > F = 8 (Eq. 4)
    tight = InternalCase(
        slot_data([1, 1], [1, 1], [1, 1], [0, 2], [[1, 64], [1, 64]], 2, 8), "gamma_multiple"
    )
    assert tight.solve(1) is None  # s = 1 needs 2 GPUs, no machine has them


@pytest.mark.parametrize("seed", range(20))
def test_internal_case_gamma_multiple_equals_the_sorted_scan(seed):
    rng = np.random.default_rng(seed)
    H, R = int(rng.integers(1, 8)), 3
    data = slot_data(
        rng.integers(0, 4, H).astype(float),  # ties on purpose
        rng.integers(0, 4, H).astype(float),
        rng.integers(0, 3, R),
        rng.integers(0, 3, R),
        rng.integers(0, 20, (H, R)),
        int(rng.integers(1, 4)),
        int(rng.integers(1, 12)),
    )
    case = InternalCase(data, "gamma_multiple")
    key = data.gamma * data.worker_price + data.ps_price
    order = sorted(range(H), key=lambda h: (key[h], h))
    for demand in range(1, 15):
        s = -(-demand // data.gamma)
        w = data.gamma * s
        want = None
        if w <= data.max_workers:
            for h in order:
                if np.all(s * (data.alpha * data.gamma + data.beta) <= data.residual[h]):
                    want = h
                    break
        got = case.solve(demand)
        assert (got is None) == (want is None)
        if got is not None:
            assert got.machines.tolist() == [want]
            assert got.cost == pytest.approx(s * key[want])


def test_oasis_greedy_by_hand():
    # workers (gpu 1, cpu 1) by pw: machine 1 (pw 1, 2 GPUs), then machine 2 (pw 2)
    # PSs (cpu 2) by ps among machines without workers: machine 0 only
    data = slot_data(
        pw=[5.0, 1.0, 2.0],
        ps=[3.0, 0.0, 0.0],
        alpha=[1.0, 1.0],
        beta=[0.0, 2.0],
        residual=[[8.0, 4.0], [2.0, 64.0], [8.0, 64.0]],
        gamma=2,
        F=8,
    )
    choice = OasisCase(data).solve(3)
    assert choice is not None
    got = {
        int(h): (int(w), int(s))
        for h, w, s in zip(choice.machines, choice.workers, choice.ps, strict=True)
    }
    assert got == {1: (2, 0), 2: (1, 0), 0: (0, 2)}
    assert choice.cost == pytest.approx(2 * 1.0 + 1 * 2.0 + 2 * 3.0)
    assert OasisCase(data).solve(5) is None  # 3 PSs need cpu 6 > 4 on machine 0
    assert OasisCase(data).solve(9) is None  # D > F


def test_g_delta_formula():
    for demand in (1, 3, 10, 250):
        for delta in (0.01, 0.1, 0.5):
            ell = math.log(1 / delta)
            scale = g_delta(demand, delta)
            assert scale == pytest.approx(1 + (ell + math.sqrt(ell**2 + 2 * demand * ell)) / demand)
            # the Chernoff condition holds with equality: (G - 1)^2 D = 2 ln(1/delta) G
            assert (scale - 1) ** 2 * demand == pytest.approx(2 * ell * scale)
        assert g_delta(demand, 1.0) == 1.0
    assert g_delta(10, 0.1) > g_delta(100, 0.1) > 1.0
    with pytest.raises(DdlschedError, match="delta"):
        g_delta(3, 0.0)


def random_slot(seed: int, H: int | None = None) -> SlotData:
    rng = np.random.default_rng(seed)
    H = H or int(rng.integers(2, 7))
    R = 3
    return slot_data(
        np.round(rng.uniform(0.1, 10, H), 3),
        np.round(rng.uniform(0.1, 10, H), 3),
        rng.integers(0, 3, R),
        np.maximum(rng.integers(0, 3, R), [0, 1, 0]),
        rng.integers(0, 30, (H, R)),
        int(rng.integers(1, 4)),
        int(rng.integers(2, 25)),
    )


@pytest.mark.parametrize("seed", range(25))
def test_lp_below_ilp_below_every_feasible_rounding(solvers, seed):
    data = random_slot(seed)
    session = solvers.lp(*lp_args(data))
    rng = np.random.default_rng(seed)
    for demand in range(1, data.max_workers + 1, 3):
        lp = session.solve(demand)
        ilp = solvers.ilp(*lp_args(data), demand)
        if lp is None:
            assert ilp is None
            continue
        G = g_delta(demand, 0.3)
        for factor in (1.0, G):
            draws = draw_roundings(data, lp.w, lp.s, demand, factor, rng, 200)
            ok = draws.feasible
            if ok.any():
                assert ilp is not None
                pw = data.worker_price[draws.machines]
                ps = data.ps_price[draws.machines]
                costs = draws.w[ok] @ pw + draws.s[ok] @ ps
                assert lp.objective <= ilp.objective + 1e-7
                assert np.all(costs >= ilp.objective - 1e-7)
        choice, stats = round_solution(data, lp.w, lp.s, demand, rng, delta=0.3, draws=5)
        assert 5 <= stats.draws <= 50 and stats.g_delta == pytest.approx(G)
        if choice is not None:
            assert ilp is not None and choice.cost >= ilp.objective - 1e-7
            assert stats.feasible and stats.feasible_draws >= 1
            assert data.fits(choice.workers, choice.ps, choice.machines)
            assert demand <= choice.workers.sum() <= data.max_workers
            assert data.gamma * choice.ps.sum() >= choice.workers.sum()
        else:
            assert stats.draws == 50 and stats.feasible_draws == 0


@pytest.mark.parametrize(("seed", "delta"), [(1, 0.1), (2, 0.1), (3, 0.5), (4, 0.05), (5, 0.3)])
def test_covering_row_holds_in_at_least_one_minus_delta_of_draws(solvers, seed, delta):
    data = random_slot(seed, H=8)
    data = slot_data(
        data.worker_price,
        data.ps_price,
        [1, 1, 0],
        [0, 1, 1],
        np.full((8, 3), 200.0),
        2,
        200,
    )
    session = solvers.lp(*lp_args(data))
    rng = np.random.default_rng(seed)
    for demand in (1, 7, 40, 150):
        lp = session.solve(demand)
        assert lp is not None
        G = g_delta(demand, delta)
        draws = draw_roundings(data, lp.w, lp.s, demand, G, rng, 2000)
        covered = int(draws.cover.sum())
        # H0: P[cover] >= 1 - delta; refuse only at the 99.9 % level
        assert binomtest(covered, 2000, 1 - delta, alternative="less").pvalue > 1e-3
        # packing rows: counted, not asserted (no guarantee)
        assert 0 <= int((~draws.cap_ok).sum()) <= 2000


# --------------------------------------------------------------------------- prices


def two_job_instance(**job1_changes) -> DmlrsInstance:
    """Two jobs, grad_bytes ~0 (pi = tau = 1 s), slot 100 s, T = 5."""
    base = dict(
        arrival_slot=1,
        epochs=1,
        samples=300,
        grad_bytes=1e-12,  # ~0: pi = tau (0 is refused: a size)
        tau_s=1.0,
        gamma=1,
        global_batch=2,
        worker=(1.0, 2.0),
        ps=(0.0, 1.0),
        utility=Utility(10.0, 1.0, 0.0),
    )
    job0 = DmlrsJob(**base)
    job1 = DmlrsJob(
        **{
            **base,
            "arrival_slot": 2,
            "samples": 500,
            "global_batch": 5,
            "worker": (0.0, 1.0),
            "ps": (0.0, 1.0),
            "utility": Utility(20.0, 0.5, 1.0),
            **job1_changes,
        }
    )
    return DmlrsInstance(
        slots=5,
        slot_s=100.0,
        b_int=2.0,
        b_ext=1.0,
        resources=("gpu", "cpu"),
        capacity=((4.0, 8.0), (4.0, 16.0)),
        jobs=(job0, job1),
    )


def u(theta1, theta2, theta3, d):
    return theta1 / (1 + math.exp(theta2 * (d - theta3)))


def test_price_bounds_by_hand():
    inst = two_job_instance()
    # d_min: job 0: ceil(300 * 1 / (2 * 100)) = 2; job 1: ceil(500 / (5 * 100)) = 1
    assert [fastest_slots(inst, i) for i in range(2)] == [2, 1]
    assert fewest_slots(inst.jobs[0], inst.b_ext, inst.slot_s) == 2
    fn = price_function(inst)
    # U^gpu: only job 0 uses gpu (1 + 0): u_0(2 - 1) / 1; job 1 uses none and is left out
    U_gpu = u(10, 1, 0, 1) / 1.0
    # U^cpu: max(u_0(1) / (2 + 1), u_1(0) / (1 + 1))
    U_cpu = max(u(10, 1, 0, 1) / 3.0, u(20, 0.5, 1, 0) / 2.0)
    uppers, lower = fn.U, fn.L
    assert uppers == pytest.approx((U_gpu, U_cpu))
    # L = min_i u_i(T - a_i) / (2 mu ceil(V_i pi_i(b_ext) / slot_s) sum_r (alpha + beta))
    L = min(u(10, 1, 0, 4) / (2 * 3 * 4.0), u(20, 0.5, 1, 3) / (2 * 5 * 2.0))
    assert lower == pytest.approx(L)
    info = fn.info()
    assert info["U_r"]["gpu"] == pytest.approx(U_gpu)
    assert info["ln_U_over_L"]["cpu"] == pytest.approx(math.log(U_cpu / L))
    # Q(0) = L, Q(C) = U^r, increasing
    cap = inst.cap[0]
    assert fn.price(np.zeros(2), cap) == pytest.approx([L, L])
    assert fn.price(cap, cap) == pytest.approx([U_gpu, U_cpu])
    rho = np.linspace(0, 1, 11)[:, None] * cap
    q = fn.price(rho, cap)
    assert np.all(np.diff(q, axis=0) > 0)
    assert q[5, 1] == pytest.approx(L * (U_cpu / L) ** 0.5)
    # mu scales L; literal reading: u_i(d_min_i - a_i)
    halved = price_function(inst, mu=2.0).L
    assert halved == pytest.approx(L / 2)
    literal = price_function(inst, u_bound="literal")
    assert literal.U[1] == pytest.approx(max(u(10, 1, 0, 2 - 1) / 3, u(20, 0.5, 1, 1 - 2) / 2))
    # OASiS: d_min at b_ext (job 0: pi(b_ext) = 1 too, gradient 0)
    ext_uppers = price_function(inst, bandwidth="ext").U
    assert ext_uppers == pytest.approx(fn.U)


def test_unused_resource_has_no_upper_bound_and_keeps_price_L():
    inst = two_job_instance(worker=(0.0, 1.0))
    job0 = DmlrsJob(**{**inst.jobs[0].__dict__, "worker": (0.0, 2.0)})
    inst = DmlrsInstance(
        slots=5,
        slot_s=100.0,
        b_int=2.0,
        b_ext=1.0,
        resources=("gpu", "cpu"),
        capacity=inst.capacity,
        jobs=(job0, inst.jobs[1]),
    )
    fn = price_function(inst)
    assert fn.U[0] is None and fn.info()["ln_U_over_L"]["gpu"] is None
    assert fn.price(np.array([4.0, 0.0]), inst.cap[0])[0] == fn.L


def test_upper_bound_not_above_L_is_refused():
    with pytest.raises(DdlschedError, match=r"resource 'gpu': U\^r = .* <= L = ") as err:
        price_function(two_job_instance(), mu=1e-9)
    assert "\n" not in str(err.value)
    with pytest.raises(DdlschedError, match=r"resource 'gpu': U\^r = 0.5 <= L = 2"):
        price_function(two_job_instance(), bounds="given", U=0.5, L=2.0)


def test_given_bounds_are_used_as_given():
    inst = two_job_instance()
    fn = price_function(inst, bounds="given", U=50.0, L=0.01)
    assert fn.L == 0.01 and fn.U == (50.0, 50.0) and fn.bounds == "given"
    with pytest.raises(DdlschedError, match="needs the parameter U"):
        price_function(inst, bounds="given", L=0.01)
    run = run_pd_ors(
        inst,
        PdOrsSettings(bounds="given", U=50.0, L=0.01, slot_solver="ilp"),
        0,
        None,
        HighsSlotSolvers(),
    )
    assert run.info["L"] == 0.01 and run.info["U_r"] == {"gpu": 50.0, "cpu": 50.0}
    assert run.info["bounds"] == "given"
    untouched = run.prices == 0.01
    assert untouched.any()


# --------------------------------------------------------------------------- DP


def brute_force_Theta(theta: np.ndarray) -> np.ndarray:
    n, q1 = theta.shape
    q = q1 - 1
    out = np.full((n, q1), np.inf)
    for x in range(n):
        for k in range(q1):
            for split in itertools.product(range(k + 1), repeat=x + 1):
                if sum(split) == k:
                    out[x, k] = min(out[x, k], sum(theta[y, j] for y, j in enumerate(split)))
    assert q == q1 - 1
    return out


@pytest.mark.parametrize("seed", range(10))
def test_theta_dp_equals_brute_force_and_never_rises_when_quanta_double(seed):
    rng = np.random.default_rng(seed)
    n, q = 3, 4
    coarse = rng.uniform(1, 10, (n, q + 1)).cumsum(axis=1)
    coarse[rng.random((n, q + 1)) < 0.2] = np.inf
    coarse[:, 0] = 0.0
    Theta, arg = theta_dp(coarse)
    assert np.allclose(Theta, brute_force_Theta(coarse))
    # fine grid of 2q quanta containing the coarse grid (same prices: same theta at 2k)
    fine = np.full((n, 2 * q + 1), np.inf)
    fine[:, 0::2] = coarse
    fine[:, 1::2] = rng.uniform(1, 60, (n, q))
    fine[:, 0] = 0.0
    Theta_fine, _ = theta_dp(fine)
    assert np.all(Theta_fine[:, 2 * q] <= Theta[:, q])
    # backtracking reproduces Theta
    k, total = q, 0.0
    for x in range(n - 1, -1, -1):
        j = int(arg[x, k])
        total += coarse[x, j]
        k -= j
    assert k == 0 or not np.isfinite(Theta[-1, q])
    if np.isfinite(Theta[-1, q]):
        assert total == pytest.approx(Theta[-1, q])


def small_paper(seed: int) -> DmlrsInstance:
    return generate("paper", seed, jobs=6, machines=4, slots=6)


@pytest.mark.parametrize("variant", ["pd_ors", "oasis"])
@pytest.mark.parametrize("seed", range(3))
def test_plan_Theta_never_rises_when_quanta_double(solvers, variant, seed):
    inst = small_paper(seed)
    for q in (4, 8):
        coarse_settings = PdOrsSettings(quanta=q, slot_solver="ilp", variant=variant)
        fine_settings = PdOrsSettings(quanta=2 * q, slot_solver="ilp", variant=variant)
        fn = price_function(inst, bandwidth="int" if variant == "pd_ors" else "ext")
        for i in range(len(inst.jobs)):
            coarse = plan_job(
                inst,
                i,
                PdOrsState.initial(inst, fn),
                coarse_settings,
                np.random.default_rng(0),
                solvers,
            )
            fine = plan_job(
                inst,
                i,
                PdOrsState.initial(inst, fn),
                fine_settings,
                np.random.default_rng(0),
                solvers,
            )
            assert np.all(fine.Theta[:, 2 * q] <= coarse.Theta[:, q])
            assert fine.payoff >= coarse.payoff


# --------------------------------------------------------------------------- Algorithm 1


def runs(seed: int):
    """(instance, settings) pairs: tiny and small paper instances, every variant."""
    for inst in (generate("tiny", seed), small_paper(seed)):
        yield inst, PdOrsSettings()
        yield inst, PdOrsSettings(scale="none", quanta=4)
        yield inst, PdOrsSettings(variant="oasis")
        yield inst, PdOrsSettings(slot_solver="ilp", quanta=8)


def used_cells(inst: DmlrsInstance, schedule) -> tuple[np.ndarray, set]:
    rho = np.zeros((inst.num_machines, len(inst.resources), inst.slots))
    cells = set()
    for a in schedule.alloc:
        rho[a.machine, :, a.slot - 1] += inst.alpha[a.job] * a.workers + inst.beta[a.job] * a.ps
        cells.add((a.machine, a.slot))
    return rho, cells


@pytest.mark.parametrize("seed", range(6))
def test_schedules_pass_the_evaluator_and_algorithm_1_invariants(solvers, seed):
    for inst, settings in runs(seed):
        run = run_pd_ors(inst, settings, seed, Deadline(60.0), solvers)
        ev = evaluate(inst, run.schedule)  # raises if infeasible or short of samples
        info = run.info
        # accepted exactly when the payoff is positive
        payoff = info["payoff"]
        assert set(run.schedule.accepted) == {i for i, v in enumerate(payoff) if v > 0}
        assert ev.accepted == info["accepted"] and info["rejected"] == len(inst.jobs) - ev.accepted
        # prices: Q(rho) on every cell, so L exactly where no accepted job has use
        rho, cells = used_cells(inst, run.schedule)
        fn = price_function(inst, bandwidth="int" if settings.variant == "pd_ors" else "ext")
        expected = fn.L * np.exp(fn.log_ratio[None, :, None] * rho / inst.cap[:, :, None])
        assert np.allclose(run.prices, expected, rtol=1e-12, atol=0)
        changed = {(h, t + 1) for h, _r, t in zip(*np.nonzero(run.prices != fn.L), strict=True)}
        assert changed <= cells
        # the recorded payoff is the evaluated utility minus the cost at the prices it saw
        for i in run.schedule.accepted:
            assert 0 < payoff[i] <= ev.job_utility[i] + 1e-9
        if settings.variant == "oasis":
            assert info["lps_solved"] == 0 and info["internal_slots"] == 0
            per_slot: dict = {}
            for a in run.schedule.alloc:
                per_slot.setdefault((a.job, a.slot), []).append(a)
            for entries in per_slot.values():
                for a in entries:
                    assert a.workers == 0 or a.ps == 0  # never a worker and a PS on one machine
                assert any(a.workers for a in entries) and any(a.ps for a in entries)
            assert ev.internal_share in (None, 0.0)


def strip_timings(info: dict) -> dict:
    return {k: v for k, v in info.items() if "time" not in k}


@pytest.mark.parametrize("variant", ["pd_ors", "oasis"])
def test_same_seed_same_output_bit_for_bit(variant):
    inst = small_paper(7)
    settings = PdOrsSettings(variant=variant, quanta=8)
    first = run_pd_ors(inst, settings, 11, None, HighsSlotSolvers())
    second = run_pd_ors(inst, settings, 11, None, HighsSlotSolvers())
    assert first.schedule == second.schedule
    assert np.array_equal(first.prices, second.prices)
    assert strip_timings(first.info) == strip_timings(second.info)
    assert first.prices.shape == (inst.num_machines, len(inst.resources), inst.slots)


def test_info_fields():
    inst = small_paper(1)
    info = run_pd_ors(inst, PdOrsSettings(quanta=8), 0, None, HighsSlotSolvers()).info
    for key in (
        "U_r",
        "L",
        "ln_U_over_L",
        "G_delta_min",
        "G_delta_max",
        "lps_solved",
        "lp_time_s",
        "draws",
        "infeasible_draw_share",
        "accepted",
        "rejected",
        "payoff",
        "bounds",
        "quanta",
        "slot_solver",
        "variant",
    ):
        assert key in info
    assert set(info["U_r"]) == set(inst.resources)
    assert info["lps_solved"] > 0 and info["draws"] >= 10 * info["roundings"]  # S = 10
    if info["roundings"]:
        assert 1.0 <= info["G_delta_min"] <= info["G_delta_max"]


def test_dumped_slot_problems_are_instances_with_the_lp_optimum(tmp_path, solvers):
    inst = small_paper(2)
    run = run_pd_ors(
        inst, PdOrsSettings(quanta=4, dump_slot_problems=str(tmp_path)), 5, None, solvers
    )
    files = sorted(tmp_path.glob("*.json"))
    assert len(files) == run.info["lps_solved"] == run.info["slot_problems_dumped"] > 0
    for path in files[:10]:
        slot = SlotInstance.load(path)
        assert {"job", "slot", "k", "quanta", "seed"} <= set(slot.meta)
        assert slot.meta["quanta"] == 4 and 1 <= slot.meta["k"] <= 4
        assert path.name.startswith(f"pd_ors_seed5_job{slot.meta['job']:05d}")
        lp = solvers.lp(
            slot.pw, slot.pps, slot.alpha, slot.beta, slot.cap, slot.gamma, slot.global_batch
        ).solve(slot.demand)
        if slot.meta["lp_objective"] is None:
            assert lp is None
        else:
            assert lp is not None and lp.objective == pytest.approx(slot.meta["lp_objective"])


def test_deadline_is_checked():
    inst = small_paper(0)
    deadline = Deadline(1e-9)
    with pytest.raises(TimeLimitReached):
        run_pd_ors(inst, PdOrsSettings(), 0, deadline, HighsSlotSolvers())


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"delta": 0.0}, "delta"),
        ({"delta": 1.5}, "delta"),
        ({"S": 0}, "S must be"),
        ({"quanta": 2.5}, "quanta must be"),
        ({"mu": -1.0}, "mu must be"),
        ({"scale": "up"}, "scale must be"),
        ({"bounds": "given"}, "needs both U and L"),
        ({"variant": "dorm"}, "variant must be"),
        ({"slot_solver": "cp"}, "slot_solver must be"),
        ({"L": 0.0}, "L must be > 0"),
    ],
)
def test_settings_refuse_nonsense(changes, message):
    with pytest.raises(DdlschedError, match=message):
        PdOrsSettings(**changes)


def test_pd_ors_needs_solvers_and_empty_instances_work():
    inst = small_paper(0)
    with pytest.raises(DdlschedError, match="needs slot solvers"):
        run_pd_ors(inst, PdOrsSettings(), 0, None, None)
    assert run_pd_ors(inst, PdOrsSettings(variant="oasis"), 0, None, None).schedule.alloc
