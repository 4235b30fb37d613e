"""Family asrpt, spec revision 2026-11-25: diagnostics, ``eligibility``, ``tiny-comm``.

Hand-made instances use the configurations of ``test_asrpt_sim`` on one
server of 2 GPUs (``B_inter = B_intra = 1e9`` B/s, every time a binary
fraction): ``one`` (1 GPU, ``alpha = 0.5`` s) and ``pair`` (2 GPUs, ``alpha =
0.5`` s on any placement), neither communication-heavy. Virtual sizes ``p~ =
(g / G) n~ alpha~_min``.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ddlsched.errors import DdlschedError
from ddlsched.families.asrpt import generate
from ddlsched.heuristics.asrpt_arrival import ArrivalQueue
from ddlsched.heuristics.asrpt_diagnostics import PER_JOB_MAX, idle_wait
from ddlsched.heuristics.asrpt_policy import virtual_completion_times
from ddlsched.heuristics.srpt import srpt_completion_times
from ddlsched.problems.asrpt import AsrptInstance, Cluster, Job, JobConfig
from ddlsched.problems.asrpt_schedule import evaluate
from ddlsched.problems.placement import Stage
from ddlsched.registry import RunOptions, run_method
from ddlsched.sim.asrpt import simulate
from ddlsched.workloads.asrpt import tiny, tiny_comm

B = 1e9
CONFIGS = {
    "one": JobConfig("rar", (Stage(1, 0.25, 0.25, 0.0, 0.0, 0.0),), "1 GPU, alpha 0.5"),
    "pair": JobConfig("rar", (Stage(2, 0.25, 0.25, 0.0, 0.0, 0.0),), "2 GPUs, alpha 0.5"),
    "dp2": JobConfig("rar", (Stage(2, 0.125, 0.125, 0.0, 0.0, 5e8),), "2 GPUs, 0.75 / 1.25"),
}
GPUS = {"one": 1, "pair": 2, "dp2": 2}


def make(rows, servers=1, gpus_per_server=2):
    """An instance from ``(id, arrival, config, n, n~)`` rows."""
    return AsrptInstance(
        cluster=Cluster(servers, gpus_per_server, B, B),
        configs={name: CONFIGS[name] for name in sorted({row[2] for row in rows})},
        jobs=tuple(
            Job(id=i, arrival_s=r, config=c, iterations=n, predicted_iterations=p)
            for i, r, c, n, p in rows
        ),
    )


def starts(schedule):
    return {job: run.start_s for job, run in schedule.runs.items()}


# a: unseen (c~ = 0), runs [0, 2). p: p~ = 2/2 x 5 x 0.5 = 2.5. c (r = 1): p~ = 1/2 x 1 x
# 0.5 = 0.25 preempts p (1.5 left): c~_c = 1.25, c~_p = 2.75.
HOLD_BACK = [
    ("a", 0.0, "one", 4, 0.0),
    ("p", 0.0, "pair", 2, 5.0),
    ("c", 1.0, "one", 2, 1.0),
]


def test_diagnostics_by_hand_virtual_eligibility():
    """Algorithm 1: c starts at 1.25 (1 GPU free), runs to 2.25; p at 2.75, runs to 3.75.
    p waits [0, 2.75) for eligibility; 2 GPUs are free only on [2.25, 2.75): 0.5 s.
    c waits [1, 1.25) with a GPU free: 0.25 s."""
    inst = make(HOLD_BACK)
    sched = simulate(inst, "asrpt")
    assert starts(sched) == {"a": 0.0, "p": 2.75, "c": 1.25}
    info = sched.info
    assert info["eligibility"] == "virtual"
    assert info["hold_back_s"] == 3.0  # 0 + 2.75 + 0.25
    assert info["hold_back_idle_s"] == 0.75
    assert info["hold_back_idle_by_job_s"] == [0.0, 0.5, 0.25]
    assert info["jobs_held_back_idle"] == 2
    assert info["hold_back_idle_max_s"] == 0.5
    assert info["queue_wait_s"] == 0.0
    assert info["queue_wait_idle_s"] == 0.0
    assert info["run_s"] == 4.0  # 2 + 1 + 1
    assert info["placement_slowdown"] == 1.0  # every alpha is alpha~_min
    # predicted: 1x0x0.5 + 2x5x0.5 + 1x1x0.5 = 5.5; true: 1x4x0.5 + 2x2x0.5 + 1x2x0.5 = 5
    assert info["virtual_work_ratio"] == pytest.approx(1.1, rel=1e-12)
    assert info["predicted_over_true_median"] == 0.5  # of 0, 2.5, 0.5
    assert info["utilisation"] == pytest.approx(5 / 7.5, rel=1e-12)  # busy 5 / (2 x 3.75)
    ev = evaluate(inst, sched)
    assert ev.total_flow_s == 7.0 == info["hold_back_s"] + info["queue_wait_s"] + info["run_s"]
    assert ev.utilisation == pytest.approx(info["utilisation"], rel=1e-12)


def test_arrival_eligibility_differs_by_hand():
    """eligibility = arrival: a starts at 0; p heads the queue (not virtually done, but
    first) and waits for 2 GPUs; at 1 c (p~ 0.25 < p's 1.5 left) heads it and takes the
    free GPU; at 2 a and c end and p starts. No hold-back; p queues 2 s, never with
    2 GPUs free."""
    inst = make(HOLD_BACK)
    sched = simulate(inst, "asrpt", eligibility="arrival")
    assert starts(sched) == {"a": 0.0, "p": 2.0, "c": 1.0}
    info = sched.info
    assert info["eligibility"] == "arrival"
    assert (info["hold_back_s"], info["hold_back_idle_s"]) == (0.0, 0.0)
    assert info["hold_back_idle_by_job_s"] == [0.0, 0.0, 0.0]
    assert (info["queue_wait_s"], info["queue_wait_idle_s"]) == (2.0, 0.0)
    assert info["utilisation"] == pytest.approx(5 / 6, rel=1e-12)  # busy 5 / (2 x 3)
    assert info["virtual_total_completion_s"] == 0.0 + 2.75 + 1.25  # the same machine
    assert evaluate(inst, sched).total_completion_s == 7.0  # Algorithm 1: 8.0
    assert evaluate(inst, simulate(inst, "asrpt")).total_completion_s == 8.0


def test_arrival_eligibility_keeps_strict_order():
    """x (2 GPUs, c~ 0.5) is eligible at 0 but does not fit beside a; y (1 GPU, r = 1)
    fits but queues behind x until a ends at 4 and x at 5. y's queueing with a GPU free:
    [1, 4) = 3 s. Under Algorithm 1 y is eligible at c~ = 1.5: hold-back 0.5 s idle."""
    rows = [
        ("a", 0.0, "one", 8, 0.0),
        ("x", 0.0, "pair", 2, 1.0),  # p~ = 0.5
        ("y", 1.0, "one", 2, 2.0),  # p~ = 0.5: c~ = 1.5
    ]
    inst = make(rows)
    arrival = simulate(inst, "asrpt", eligibility="arrival")
    assert starts(arrival) == {"a": 0.0, "x": 4.0, "y": 5.0}
    assert arrival.info["queue_wait_idle_s"] == 3.0
    assert arrival.info["queue_wait_s"] == 4.0 + 4.0  # x: [0, 4), y: [1, 5)
    virtual = simulate(inst, "asrpt")
    assert starts(virtual) == starts(arrival)
    assert virtual.info["hold_back_idle_by_job_s"] == [0.0, 0.0, 0.5]
    assert virtual.info["queue_wait_idle_s"] == 2.5  # y: [1.5, 4)
    # a work-conserving baseline starts y at once
    assert starts(simulate(inst, "wcs_subtime"))["y"] == 1.0


def test_arrival_order_uses_the_remaining_virtual_size():
    """p (p~ 2.5) has run 1 s on the virtual machine when c (p~ 2.0) arrives: 1.5 left,
    so p stays ahead of c although c's size is below p's. Both wait for 2 GPUs; p
    starts when a ends at 2, c when p ends at 3."""
    rows = [
        ("a", 0.0, "one", 4, 0.0),
        ("p", 0.0, "pair", 2, 5.0),
        ("c", 1.0, "pair", 2, 4.0),
    ]
    sched = simulate(make(rows), "asrpt", eligibility="arrival")
    assert starts(sched) == {"a": 0.0, "p": 2.0, "c": 3.0}


def test_placement_slowdown_by_hand():
    """test_asrpt_sim's blocking-window instance: H (dp2, n = 2) starts split at its
    deadline, alpha 1.25 against alpha~_min 0.75; every other job runs at alpha~_min.
    Running time 1 + 10 + 1.5 + 10 + 2.5 + 10 = 35 s against 34 s packed."""
    rows = [
        ("X1", 0.0, "one", 2, 0.0),
        ("X2", 0.0, "one", 20, 0.0),
        ("X3", 0.0, "one", 3, 0.0),
        ("X4", 0.0, "one", 20, 0.0),
        ("H", 0.0, "dp2", 2, 4.0),
        ("Y", 1.5, "one", 20, 2.0),
    ]
    sched = simulate(make(rows, servers=2), "asrpt")
    assert sched.runs["H"].servers == (0, 1)
    assert sched.info["run_s"] == 35.0
    assert sched.info["placement_slowdown"] == 35.0 / 34.0
    assert sched.info["delay_wait_s"] == 1.5  # H's window [1.5, 3.0)


def test_baseline_diagnostics_by_hand():
    """WCS-Subtime on HOLD_BACK: a at 0; p (2 GPUs) does not fit beside a; c starts at
    its arrival 1 (work-conserving); p at 2. Queueing 2 s (p), never with 2 GPUs free."""
    inst = make(HOLD_BACK)
    sched = simulate(inst, "wcs_subtime")
    assert starts(sched) == {"a": 0.0, "p": 2.0, "c": 1.0}
    info = sched.info
    assert (info["hold_back_s"], info["hold_back_idle_s"]) == (0.0, 0.0)
    assert (info["queue_wait_s"], info["queue_wait_idle_s"]) == (2.0, 0.0)
    assert info["utilisation"] == pytest.approx(5 / 6, rel=1e-12)
    assert "hold_back_idle_by_job_s" not in info and "eligibility" not in info


def test_asrpt_perfect_virtual_work_ratio_is_one():
    info = simulate(make(HOLD_BACK), "asrpt_perfect").info
    assert info["virtual_work_ratio"] == 1.0
    assert info["predicted_over_true_median"] == 1.0


def test_bad_eligibility_is_one_line_error():
    with pytest.raises(DdlschedError, match="eligibility must be one of virtual, arrival"):
        simulate(make(HOLD_BACK), "asrpt", eligibility="never")


def test_theory_note_on_arrival_variant():
    inst = tiny(3)
    opts = RunOptions(time_limit_s=60, params={"eligibility": "arrival"})
    result = run_method("asrpt", "asrpt", inst, opts)
    assert result.info["eligibility"] == "arrival"
    assert "not Algorithm 1" in result.info["theory"]["note"]
    plain = run_method("asrpt", "asrpt", inst, RunOptions(time_limit_s=60))
    assert "note" not in plain.info["theory"]
    assert plain.info["hold_back_s"] > 0


# --------------------------------------------------------------------------- independent checks


def _free_at(t, inst, ev):
    used = sum(
        inst.configs[job.config].num_gpus
        for job, s, c in zip(inst.jobs, ev.start_s, ev.finish_s, strict=True)
        if s <= t < c
    )
    return inst.cluster.num_gpus - used


def _idle_measure(inst, ev, lo, hi, need):
    """Brute force: over every elementary interval between event instants."""
    cuts = sorted({lo, hi, *(x for x in (*ev.start_s, *ev.finish_s) if lo < x < hi)})
    return math.fsum(b - a for a, b in itertools.pairwise(cuts) if _free_at(a, inst, ev) >= need)


@pytest.mark.parametrize("eligibility", ["virtual", "arrival"])
@pytest.mark.parametrize("seed", range(12))
def test_diagnostics_match_brute_force(seed, eligibility):
    """Every diagnostic against an independent computation: the evaluator's flow time and
    utilisation, and the idle measures by brute force over elementary intervals."""
    inst = tiny_comm(seed) if seed % 2 else tiny(seed)
    sched = simulate(inst, "asrpt", eligibility=eligibility)
    ev = evaluate(inst, sched)
    info = sched.info
    flow = info["hold_back_s"] + info["queue_wait_s"] + info["run_s"]
    assert flow == pytest.approx(ev.total_flow_s, rel=1e-12)
    assert info["utilisation"] == pytest.approx(ev.utilisation, rel=1e-12)
    if eligibility == "virtual":
        eligible = virtual_completion_times(inst)
    else:
        eligible = [job.arrival_s for job in inst.jobs]
    assert info["hold_back_s"] == pytest.approx(
        math.fsum(e - job.arrival_s for e, job in zip(eligible, inst.jobs, strict=True)), abs=1e-9
    )
    held = info["hold_back_idle_by_job_s"]
    queued = 0.0
    for i, job in enumerate(inst.jobs):
        need = inst.configs[job.config].num_gpus
        expected = _idle_measure(inst, ev, job.arrival_s, eligible[i], need)
        assert held[i] == pytest.approx(expected, abs=1e-9), job.id
        queued += _idle_measure(inst, ev, eligible[i], ev.start_s[i], need)
    assert info["queue_wait_idle_s"] == pytest.approx(queued, abs=1e-9)
    assert info["hold_back_idle_s"] == pytest.approx(math.fsum(held), abs=1e-12)


def test_idle_wait_of_an_empty_interval_is_zero_and_per_job_is_capped():
    out = idle_wait([1, 2], 4, [0.0, 1.0], [2.0, 3.0], [0.5, 3.0], [0.5, 2.0])
    assert out.tolist() == [0.0, 0.0]
    n = PER_JOB_MAX + 1
    rows = [(f"j{k}", float(k), "one", 2, 2.0) for k in range(n)]
    info = simulate(make(rows), "asrpt").info
    assert "hold_back_idle_by_job_s" not in info
    assert info["jobs_held_back_idle"] >= 0


# --------------------------------------------------------------------------- arrival order


def _reference_arrival_starts(inst):
    """eligibility = arrival on one server of non-heavy jobs (alpha = 0.5 anywhere):
    at every arrival and real completion, order the arrived, unstarted jobs by their
    virtual completion as known then (SRPT over the arrived jobs alone, heuristics.srpt),
    and start them in that order while the head fits."""
    jobs = inst.jobs
    G = inst.cluster.num_gpus
    gpus = [GPUS[j.config] for j in jobs]
    size = [(g / G) * j.predicted_iterations * 0.5 for g, j in zip(gpus, jobs, strict=True)]
    start = [None] * len(jobs)
    finish = [None] * len(jobs)
    t = 0.0
    while any(s is None for s in start):
        arrived = [i for i, j in enumerate(jobs) if j.arrival_s <= t]
        done = srpt_completion_times(
            [jobs[i].arrival_s for i in arrived], [size[i] for i in arrived]
        )
        key = {i: (c, jobs[i].arrival_s, i) for i, c in zip(arrived, done, strict=True)}
        order = sorted((i for i in arrived if start[i] is None), key=key.__getitem__)
        free = G - sum(
            g for g, s, c in zip(gpus, start, finish, strict=True) if s is not None and c > t
        )
        for i in order:
            if gpus[i] > free:
                break
            start[i], finish[i] = t, t + jobs[i].iterations * 0.5
            free -= gpus[i]
        later = [j.arrival_s for j in jobs if j.arrival_s > t]
        later += [c for c in finish if c is not None and c > t]
        if not later:
            break
        t = min(later)
    return {j.id: s for j, s in zip(jobs, start, strict=True)}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(
            st.integers(0, 16),  # arrival, eighths of a second
            st.sampled_from(["one", "pair"]),
            st.integers(1, 8),  # n
            st.integers(0, 16),  # n~
        ),
        min_size=1,
        max_size=7,
    )
)
def test_arrival_order_matches_srpt_recomputed_from_scratch(rows):
    inst = make([(f"j{k}", r / 8, c, n, float(p)) for k, (r, c, n, p) in enumerate(rows)])
    got = starts(simulate(inst, "asrpt", eligibility="arrival"))
    assert got == _reference_arrival_starts(inst)


def test_arrival_queue_drops_stale_entries():
    q = ArrivalQueue(3)
    q.add((5.0, 0.0, 0))
    q.add((3.0, 0.0, 1))
    q.update((2.0, 0.0, 0))  # job 0's remaining shrank below job 1's
    assert q.peek() == 0
    assert q.discard(0) and not q.discard(0)
    assert q.pop() == 1
    q.update((1.0, 0.0, 1))  # no longer waiting: ignored
    assert q.peek() is None
    with pytest.raises(IndexError):
        q.pop()


# --------------------------------------------------------------------------- tiny-comm


def test_tiny_comm_shape():
    for seed in range(20):
        inst = tiny_comm(seed)
        c = inst.cluster
        assert (c.servers, c.gpus_per_server) == (2, 3)
        assert c.b_intra == 4 * c.b_inter
        assert 4 <= inst.num_jobs <= 6
        assert all(cfg.num_gpus <= 2 for cfg in inst.configs.values())
        assert inst.provenance["preset"] == "tiny-comm"
    assert tiny_comm(5).to_dict() == generate("tiny-comm", 5).to_dict()


def test_tiny_comm_opens_delay_windows_on_a_third_of_seeds():
    """Lines 16-23 exercised: a window of positive length opens on at least a third of
    the seeds, and both exits (improvement, Line 20; deadline, Line 23) occur."""
    seeds = range(30)
    infos = [simulate(tiny_comm(seed), "asrpt").info for seed in seeds]
    opened = [i for i in infos if i["delays_opened"] > 0 and i["delay_wait_s"] > 0]
    assert len(opened) >= len(seeds) / 3
    assert any(i["started_on_improvement"] > 0 for i in infos)
    assert any(i["started_at_deadline"] > 0 for i in infos)
    # tiny (B_intra = B_inter) almost never opens one: the preset is what makes the difference
    assert sum(simulate(tiny(s), "asrpt").info["delays_opened"] > 0 for s in seeds) < 3


@pytest.mark.parametrize("seed", range(6))
def test_tiny_comm_exact_proves_and_bounds_every_policy(seed):
    inst = tiny_comm(seed)
    exact = run_method("asrpt", "exact", inst, RunOptions(time_limit_s=60))
    assert exact.status == "optimal"
    runs = [("spjf", {}), ("wcs_duration", {})]
    for policy in ("asrpt", "asrpt_perfect"):
        for eligibility in ("virtual", "arrival"):
            runs.append((policy, {"theory": False, "eligibility": eligibility}))
    for policy, params in runs:
        r = run_method("asrpt", policy, inst, RunOptions(time_limit_s=60, params=params))
        assert r.objective >= exact.objective * (1 - 1e-9), (policy, params)


def test_hold_back_idle_needs_enough_free_gpus():
    """idle_wait on a profile by hand: G = 4; job A (3 GPUs) runs [1, 3); the query jobs
    want 2 GPUs over [0, 4) (free: 4, 1, 4 -> 2 s) and 1 GPU (all 4 s)."""
    out = idle_wait(
        [3, 2, 1], 4, [1.0, 10.0, 10.0], [3.0, 11.0, 11.0], [0.0, 0.0, 0.0], [0.0, 4.0, 4.0]
    )
    assert out.tolist() == [0.0, 2.0, 4.0]
    assert np.all(out >= 0)
