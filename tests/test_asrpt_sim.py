"""Family asrpt, simulator: A-SRPT and the baselines on hand-made instances, and invariants.

Hand-made instances use three synthetic configurations on servers of 2 GPUs
with ``B_inter = B_intra = 1e9`` B/s, chosen so that every time is a binary
fraction (exact in floating point):

* ``one``: 1 GPU, compute 0.5 s: ``alpha = 0.5`` s; not communication-heavy.
* ``pair``: 2 replicas of a stage without parameters: ``alpha = 0.5`` s on any
  placement; ratio 1.
* ``dp2``: 2 replicas, compute 0.25 s, ``h = 5e8`` B: the ring AllReduce moves
  ``2 (k-1) h / k = 5e8`` B, 0.5 s on one server (``alpha~_min = 0.75`` s) and
  ``5e8 / (B_inter / 2) = 1`` s split over two servers (``alpha = alpha_max =
  1.25`` s); ratio 5/3 >= 1.5: communication-heavy, and a split placement
  (5/3 > 1.5) opens a delay window.
* ``quad``: 4 replicas of a stage without parameters: ``alpha = 0.5`` s.

Virtual sizes ``p~ = (g / G) n~ alpha~_min``. The job's index in the
instance is its "id" in every tie-break.
"""

from __future__ import annotations

import math
import random
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ddlsched.deadline import Deadline
from ddlsched.errors import DdlschedError, TimeLimitReached, UnknownMethodError
from ddlsched.heuristics.asrpt import FreeGpus
from ddlsched.heuristics.asrpt_config import select_servers
from ddlsched.heuristics.asrpt_policy import JobTable, virtual_completion_times, virtual_sizes
from ddlsched.heuristics.srpt import srpt_completion_times
from ddlsched.problems.asrpt import AsrptInstance, Cluster, Job, JobConfig
from ddlsched.problems.asrpt_schedule import evaluate
from ddlsched.problems.placement import Stage
from ddlsched.sim.asrpt import POLICIES, simulate
from ddlsched.workloads.asrpt import tiny

B = 1e9
CONFIGS = {
    "one": JobConfig("rar", (Stage(1, 0.25, 0.25, 0.0, 0.0, 0.0),), "1 GPU, alpha 0.5"),
    "pair": JobConfig("rar", (Stage(2, 0.25, 0.25, 0.0, 0.0, 0.0),), "2 GPUs, alpha 0.5"),
    "dp2": JobConfig("rar", (Stage(2, 0.125, 0.125, 0.0, 0.0, 5e8),), "2 GPUs, 0.75 / 1.25"),
    "quad": JobConfig("rar", (Stage(4, 0.25, 0.25, 0.0, 0.0, 0.0),), "4 GPUs, alpha 0.5"),
}
TIMING_KEYS = ("scheduling_time_s", "mean_scheduling_time_s")
STRICT = ("spjf", "spwf")
WORK_CONSERVING = ("wcs_duration", "wcs_workload", "wcs_subtime")


def make(servers, jobs, gpus_per_server=2):
    """An instance from ``(id, arrival, config, n, n~)`` rows (only the configurations used)."""
    return AsrptInstance(
        cluster=Cluster(servers, gpus_per_server, B, B),
        configs={name: CONFIGS[name] for name in sorted({row[2] for row in jobs})},
        jobs=tuple(
            Job(id=i, arrival_s=r, config=c, iterations=n, predicted_iterations=p)
            for i, r, c, n, p in jobs
        ),
    )


def starts(schedule):
    return {job: run.start_s for job, run in schedule.runs.items()}


def placed(schedule, job):
    run = schedule.runs[job]
    return run.servers, run.counts


# --------------------------------------------------------------------------- by hand


def test_long_job_held_back_until_its_virtual_completion():
    """a: p~ = 8/4 x 0.5 = 1; b (r = 0.5): p~ = 0.25 preempts a on the virtual
    machine (a has 0.5 left): c~_b = 0.75, c~_a = 1.25. The cluster idles until
    0.75 although a arrived at 0."""
    inst = make(2, [("a", 0.0, "one", 8, 8.0), ("b", 0.5, "one", 2, 2.0)])
    assert virtual_completion_times(inst) == [1.25, 0.75]
    sched = simulate(inst, "asrpt")
    assert starts(sched) == {"a": 1.25, "b": 0.75}
    # least-free-first: b on server 0 (tie: lower index), a joins b's server (1 free)
    assert placed(sched, "b") == ((0,), ((1,),))
    assert placed(sched, "a") == ((0,), ((1,),))
    ev = evaluate(inst, sched)
    assert ev.finish_s == (5.25, 1.75)
    assert sched.info["total_completion_s"] == ev.total_completion_s == 7.0
    assert sched.info["virtual_total_completion_s"] == 2.0
    assert sched.info["comm_heavy_jobs"] == 0
    # a work-conserving baseline starts a at once (most-free: b on the empty server 1)
    base = simulate(inst, "wcs_subtime")
    assert starts(base) == {"a": 0.0, "b": 0.5}
    assert placed(base, "b") == ((1,), ((1,),))


def test_unseen_job_first():
    """One GPU. u is unseen (n~ = 0): d~ = 0 first in SPJF; c~_u = 0 in A-SRPT;
    x (p~ = 4 x 0.5 = 2) joins pending_queue at 2 and waits for u."""
    inst = make(1, [("x", 0.0, "one", 4, 4.0), ("u", 0.0, "one", 6, 0.0)], gpus_per_server=1)
    assert virtual_completion_times(inst) == [2.0, 0.0]
    for policy in ("spjf", "spwf", "wcs_duration", "wcs_workload", "asrpt"):
        assert starts(simulate(inst, policy)) == {"x": 3.0, "u": 0.0}, policy
    assert starts(simulate(inst, "wcs_subtime")) == {"x": 0.0, "u": 2.0}
    # perfect knowledge: p~_x = 2 < p~_u = 3: x first; u waits for c~_u = 5 on an idle GPU
    assert starts(simulate(inst, "asrpt_perfect")) == {"x": 2.0, "u": 5.0}


def test_spjf_head_blocks_where_wcs_duration_backfills():
    """A (1 GPU) runs 0-10. At 0.25, B (4 GPUs, d~ = 1) heads SPJF's queue and does
    not fit 3 free GPUs: C (1 GPU, d~ = 2) waits behind it. WCS-Duration starts C."""
    inst = make(
        2,
        [
            ("A", 0.0, "one", 20, 20.0),
            ("B", 0.25, "quad", 2, 2.0),
            ("C", 0.25, "one", 2, 4.0),
        ],
    )
    assert starts(simulate(inst, "spjf")) == {"A": 0.0, "B": 10.0, "C": 11.0}
    wcs = simulate(inst, "wcs_duration")
    assert starts(wcs) == {"A": 0.0, "B": 10.0, "C": 0.25}
    assert placed(wcs, "C") == ((1,), ((1,),))  # most-free: server 1 (2 free)
    assert placed(wcs, "B") == ((0, 1), ((2, 2),))
    # SPWF's key g d~: C (2) before B (4), so C is the head and fits
    assert starts(simulate(inst, "spwf")) == {"A": 0.0, "B": 10.0, "C": 0.25}


IMPROVE_JOBS = [
    ("X1", 0.0, "one", 2, 0.0),  # server 0, ends 1.0
    ("X2", 0.0, "one", 4, 0.0),  # server 0, ends 2.0
    ("X3", 0.0, "one", 8, 0.0),  # server 1, ends 4.0
    ("H", 0.0, "dp2", 4, 4.0),  # p~ = 2/4 x 4 x 0.75 = 1.5
    ("Y", 1.5, "one", 2, 2.0),  # p~ = 0.25: c~ = 1.75
]


def test_comm_heavy_starts_on_improvement_and_blocks_others():
    """At 1.5 H is the head, free (1, 1): most-free gives a split placement,
    alpha 1.25 = 5/3 alpha~_min > 1.5: window with kappa 1.25 until 1.5 + 1.5 = 3.
    Y becomes eligible at 1.75 and fits, but the open window blocks it. At 2.0 X2
    ends, free (2, 1): H on server 0 with alpha 0.75 < kappa; then Y."""
    inst = make(2, IMPROVE_JOBS)
    assert virtual_completion_times(inst) == [0.0, 0.0, 0.0, 1.5, 1.75]
    sched = simulate(inst, "asrpt")
    assert starts(sched) == {"X1": 0.0, "X2": 0.0, "X3": 0.0, "H": 2.0, "Y": 2.0}
    assert placed(sched, "X2") == ((0,), ((1,),))
    assert placed(sched, "X3") == ((1,), ((1,),))
    assert placed(sched, "H") == ((0,), ((2,),))
    assert placed(sched, "Y") == ((1,), ((1,),))
    assert evaluate(inst, sched).finish_s == (1.0, 2.0, 4.0, 5.0, 3.0)
    info = sched.info
    assert (info["comm_heavy_jobs"], info["delays_opened"]) == (1, 1)
    assert (info["started_on_improvement"], info["started_at_deadline"]) == (1, 0)
    assert info["started_immediately"] == 0


def test_comm_heavy_nonblocking_ablation():
    """delay_blocks = false: Y starts at 1.75 (least-free: server 0); at 2.0 the
    recomputed placement is split again (alpha 1.25, not < kappa); at 2.75 Y ends
    and H gets server 0."""
    inst = make(2, IMPROVE_JOBS)
    sched = simulate(inst, "asrpt", delay_blocks=False)
    assert starts(sched) == {"X1": 0.0, "X2": 0.0, "X3": 0.0, "H": 2.75, "Y": 1.75}
    assert placed(sched, "Y") == ((0,), ((1,),))
    assert placed(sched, "H") == ((0,), ((2,),))
    assert sched.info["started_on_improvement"] == 1


def test_nonblocking_window_job_that_no_longer_fits_waits_overdue():
    """delay_blocks = false. At 1.5 free (1, 1): H's window runs to 3.0; Y (c~ 1.75)
    takes a free GPU meanwhile; at 3.0 H does not fit and waits at the head of the
    line; when X2 and X4 end at 10.0 it starts on server 1. With blocking windows Y
    waits, H starts split at its deadline 3.0 and Y when H ends (5.5)."""
    rows = [
        ("X1", 0.0, "one", 2, 0.0),  # server 0, ends 1.0
        ("X2", 0.0, "one", 20, 0.0),  # server 0, ends 10.0
        ("X3", 0.0, "one", 3, 0.0),  # server 1, ends 1.5
        ("X4", 0.0, "one", 20, 0.0),  # server 1, ends 10.0
        ("H", 0.0, "dp2", 2, 4.0),  # p~ = 1.5
        ("Y", 1.5, "one", 20, 2.0),  # p~ = 0.25: c~ = 1.75
    ]
    inst = make(2, rows)
    loose = simulate(inst, "asrpt", delay_blocks=False)
    assert starts(loose)["H"] == 10.0 and starts(loose)["Y"] == 1.75
    assert placed(loose, "Y") == ((0,), ((1,),))
    assert placed(loose, "H") == ((1,), ((2,),))
    assert (loose.info["started_after_deadline"], loose.info["started_at_deadline"]) == (1, 0)
    blocking = simulate(inst, "asrpt")
    assert starts(blocking)["H"] == 3.0 and starts(blocking)["Y"] == 5.5
    assert placed(blocking, "H") == ((0, 1), ((1, 1),))
    assert blocking.info["started_at_deadline"] == 1


DEADLINE_JOBS = [
    ("F1", 0.0, "one", 2, 0.0),  # server 0, ends 1.0
    ("F2", 0.0, "pair", 20, 0.0),  # servers 0 and 1, ends 10.0
    ("F3", 0.0, "one", 4, 0.0),  # server 1, ends 2.0
    ("F4", 0.0, "one", 20, 0.0),  # server 2, ends 10.0
    ("F5", 0.0, "one", 6, 0.0),  # server 2, ends 3.0
    ("H", 0.0, "dp2", 4, 6.0),  # p~ = 2/6 x 6 x 0.75 = 1.5
]


def test_comm_heavy_starts_at_deadline():
    """Three servers of 2. H is eligible at 1.5 but only 1 GPU is free. At 2.0
    free (1, 1, 0): split, window until 2.0 + 1.5 = 3.5. At 3.0 free (1, 1, 1): the
    recomputed placement is split again with alpha = kappa (strict: no start).
    At 3.5 H starts with the placement computed there (servers 0 and 1)."""
    inst = make(3, DEADLINE_JOBS)
    sched = simulate(inst, "asrpt")
    assert placed(sched, "F2") == ((0, 1), ((1, 1),))  # least-free, ascending
    assert placed(sched, "F5") == ((2,), ((1,),))
    assert starts(sched)["H"] == 3.5
    assert placed(sched, "H") == ((0, 1), ((1, 1),))
    assert evaluate(inst, sched).alpha_s[-1] == 1.25
    info = sched.info
    assert (info["delays_opened"], info["started_at_deadline"]) == (1, 1)
    assert (info["started_on_improvement"], info["started_immediately"]) == (0, 0)
    # tau = 0: the window ends at once, H starts at 2.0 on the split placement
    now = simulate(inst, "asrpt", delay_factor=0.0)
    assert starts(now)["H"] == 2.0
    assert placed(now, "H") == ((0, 1), ((1, 1),))
    assert (now.info["delays_opened"], now.info["started_at_deadline"]) == (1, 1)
    # tau = 2: the window ends at 5.0, nothing better until then
    assert starts(simulate(inst, "asrpt", delay_factor=2.0))["H"] == 5.0
    # a lower threshold: split alpha / alpha~_min = 5/3 <= 2, H starts at 2.0 at once
    lax = simulate(inst, "asrpt", comm_heavy=2.0)
    assert lax.info["comm_heavy_jobs"] == 0  # ratio 5/3 < 2: not even in the class
    assert starts(lax)["H"] == 2.0


def test_comm_heavy_starts_immediately_on_a_consolidated_placement():
    inst = make(2, [("H", 0.0, "dp2", 2, 2.0), ("a", 0.0, "one", 2, 1.0)])
    sched = simulate(inst, "asrpt")  # p~_a = 1/4 x 0.5 = 0.125, p~_H = 2/4 x 2 x 0.75 = 0.75
    assert starts(sched) == {"H": 0.875, "a": 0.125}
    assert placed(sched, "H") == ((1,), ((2,),))  # most-free: server 1 (2 free)
    assert sched.info["started_immediately"] == 1
    assert sched.info["delays_opened"] == 0


def test_most_and_least_free_selection_with_ties():
    """Three servers of 2, all jobs at 0, submission order A, B, C (2 GPUs), D."""
    rows = [
        ("A", 0.0, "one", 20, 1.0),
        ("B", 0.0, "one", 20, 1.0),
        ("C", 0.0, "pair", 20, 1.0),
        ("D", 0.0, "one", 20, 1.0),
    ]
    inst = make(3, rows)
    most = simulate(inst, "wcs_subtime", server_selection="most_free")
    # (2,2,2) -> A on 0; (1,2,2) -> B on 1; (1,1,2) -> C on 2; (1,1,0) -> D on 0
    assert [placed(most, j)[0] for j in "ABCD"] == [(0,), (1,), (2,), (0,)]
    least = simulate(inst, "wcs_subtime", server_selection="least_free")
    # (2,2,2) -> A on 0; (1,2,2) -> B on 0; (0,2,2) -> C on 1; (0,0,2) -> D on 2
    assert [placed(least, j)[0] for j in "ABCD"] == [(0,), (0,), (1,), (2,)]
    assert placed(least, "C") == ((1,), ((2,),))


def test_baseline_selection_by_class():
    """Server selection ``asrpt``: the heavy dp2 most-free (together), the 1-GPU
    job least-free; ``least_free`` splits dp2 over both servers."""
    inst = make(2, [("a", 0.0, "one", 20, 1.0), ("H", 0.0, "dp2", 2, 2.0)])
    least = simulate(inst, "wcs_subtime", server_selection="least_free")
    assert placed(least, "H") == ((0, 1), ((1, 1),))
    assert evaluate(inst, least).alpha_s[1] == 1.25
    by_class = simulate(inst, "wcs_subtime", server_selection="asrpt")
    assert placed(by_class, "a") == ((0,), ((1,),))
    assert placed(by_class, "H") == ((1,), ((2,),))
    assert evaluate(inst, by_class).alpha_s[1] == 0.75


def test_errors_and_time_limit():
    inst = make(2, IMPROVE_JOBS)
    with pytest.raises(UnknownMethodError):
        simulate(inst, "fifo")
    with pytest.raises(DdlschedError, match="server_selection"):
        simulate(inst, "spjf", server_selection="random")
    with pytest.raises(DdlschedError, match="delay_factor"):
        simulate(inst, "asrpt", delay_factor=-1.0)
    expired = Deadline(1e-6)
    time.sleep(0.002)
    with pytest.raises(TimeLimitReached):
        simulate(inst, "asrpt", deadline=expired)


# --------------------------------------------------------------------------- components


@given(
    st.lists(st.integers(0, 4), min_size=1, max_size=8),
    st.integers(1, 32),
    st.booleans(),
)
def test_free_gpus_selection_matches_select_servers(free, need, most_free):
    cluster = FreeGpus(len(free), 4)
    cluster.allocate(range(len(free)), [4 - f for f in free])
    if need > sum(free):
        return
    servers, takes = cluster.select(need, most_free)
    assert list(zip(servers, takes, strict=True)) == select_servers(free, need, most_free)
    cluster.allocate(servers, takes)
    cluster.release(servers, takes)
    assert cluster.free == free and cluster.total == sum(free)


@given(st.integers(0, 10_000))
def test_virtual_machine_equals_srpt(seed):
    inst = tiny(seed)
    for perfect in (False, True):
        ours = virtual_completion_times(inst, perfect=perfect)
        reference = srpt_completion_times(
            [job.arrival_s for job in inst.jobs], virtual_sizes(inst, perfect=perfect)
        )
        assert ours == reference  # bit for bit


# --------------------------------------------------------------------------- invariants


def loaded_instance(seed):
    """A small loaded instance on the hand-made configurations: mostly 1-GPU jobs
    on 2-3 servers of 2 GPUs, so that dp2 often finds no server with 2 free GPUs
    and opens a delay window (drawn from ``seed``, so that examples are spread
    evenly rather than shrunk towards trivial ones)."""
    rng = random.Random(seed)
    names = ["one", "one", "one", "pair", "dp2", "dp2", "quad"]
    rows = [
        (
            f"j{i}",
            rng.randint(0, 6) * 0.25,
            rng.choice(names),
            rng.randint(1, 12),
            rng.choice([0.0, float(rng.randint(1, 12))]),
        )
        for i in range(rng.randint(4, 7))
    ]
    return make(rng.randint(2, 3), rows)


instances = st.one_of(st.integers(0, 10**6).map(loaded_instance), st.integers(0, 10_000).map(tiny))
knobs = st.fixed_dictionaries(
    {
        "delay_factor": st.sampled_from([0.0, 0.5, 1.0, 2.0]),
        "comm_heavy": st.sampled_from([1.2, 1.5]),
        "delay_blocks": st.booleans(),
        "server_selection": st.sampled_from(["most_free", "least_free", "asrpt"]),
        "seed": st.integers(0, 3),
    }
)


def _order_key(inst, policy):
    table = JobTable.of(inst)
    d = [k * a for k, a in zip(table.predicted, table.alpha_min_s, strict=True)]
    if policy == "spjf":
        return [(d[i], table.arrival_s[i], i) for i in range(len(d))]
    return [(table.gpus[i] * d[i], table.arrival_s[i], i) for i in range(len(d))]


def check_invariants(inst, policy, kw, sched):
    ev = evaluate(inst, sched)  # no over-commit, every stage placed, t_i >= r_i
    jobs = inst.jobs
    start = ev.start_s
    assert all(start[i] >= job.arrival_s for i, job in enumerate(jobs))
    for i, job in enumerate(jobs):
        assert ev.finish_s[i] == start[i] + job.iterations * ev.alpha_s[i]
    assert math.isclose(sched.info["total_completion_s"], ev.total_completion_s, rel_tol=1e-9)
    n = len(jobs)
    if policy.startswith("asrpt"):
        virtual = virtual_completion_times(inst, perfect=policy == "asrpt_perfect")
        assert all(start[i] >= virtual[i] for i in range(n))
        assert math.isclose(
            sched.info["virtual_total_completion_s"], math.fsum(virtual), rel_tol=1e-12
        )
        info = sched.info
        assert info["comm_heavy_jobs"] == info["started_immediately"] + info["delays_opened"]
        assert info["delays_opened"] == (
            info["started_on_improvement"]
            + info["started_at_deadline"]
            + info["started_after_deadline"]
        )
        if kw["delay_blocks"]:  # pending_queue is served in virtual completion order
            assert info["started_after_deadline"] == 0
            for i in range(n):
                for j in range(n):
                    if virtual[i] < virtual[j]:
                        assert start[i] <= start[j]
    elif policy in STRICT:
        key = _order_key(inst, policy)
        for i in range(n):
            for j in range(n):
                if key[i] < key[j] and jobs[i].arrival_s <= start[j]:
                    assert start[i] <= start[j], (jobs[i].id, jobs[j].id)
    else:  # work-conserving: after every event no waiting job fits
        G = inst.cluster.num_gpus
        gpus = [inst.gpus(job) for job in jobs]
        times = {job.arrival_s for job in jobs} | set(ev.finish_s)
        for t in times:
            used = sum(gpus[i] for i in range(n) if start[i] <= t < ev.finish_s[i])
            for i in range(n):
                if jobs[i].arrival_s <= t < start[i]:
                    assert gpus[i] > G - used, (jobs[i].id, t)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances, st.sampled_from(POLICIES), knobs)
def test_invariants(inst, policy, kw):
    sched = simulate(inst, policy, **kw)
    check_invariants(inst, policy, kw, sched)
    again = simulate(inst, policy, **kw)
    assert again.runs == sched.runs
    strip = {k: v for k, v in sched.info.items() if k not in TIMING_KEYS}
    assert {k: v for k, v in again.info.items() if k not in TIMING_KEYS} == strip


def test_every_policy_on_the_hand_instances():
    for rows, servers in ((IMPROVE_JOBS, 2), (DEADLINE_JOBS, 3)):
        inst = make(servers, rows)
        for policy in POLICIES:
            for blocks in (True, False):
                kw = {"delay_blocks": blocks}
                sched = simulate(inst, policy, **kw)
                check_invariants(inst, policy, kw, sched)
                assert sched.info["events"] >= 1
                assert sched.info["scheduling_time_s"] >= 0
                assert sched.info["mean_scheduling_time_s"] == pytest.approx(
                    sched.info["scheduling_time_s"] / inst.num_jobs
                )


def test_asrpt_windows_on_loaded_instances():
    """A-SRPT in both window modes on 150 loaded instances: the invariants hold and
    windows open, end on improvement and at their deadline."""
    seen = dict.fromkeys(["delays_opened", "started_on_improvement", "started_at_deadline"], 0)
    for seed in range(150):
        inst = loaded_instance(seed)
        for policy in ("asrpt", "asrpt_perfect"):
            for blocks in (True, False):
                kw = {"delay_blocks": blocks, "delay_factor": (0.5, 1.0, 2.0)[seed % 3]}
                sched = simulate(inst, policy, **kw)
                check_invariants(inst, policy, kw, sched)
                for key in seen:
                    seen[key] += sched.info[key]
    assert all(count > 0 for count in seen.values()), seen
