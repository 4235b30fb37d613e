"""Family ``asrpt``: the offline work-conserving packed schedules (ours;
:mod:`ddlsched.heuristics.asrpt_greedy`) and ``improve``'s starts made from them.

The per-shape heaps are checked against a plain scan of the waiting jobs in key order,
every schedule against the evaluator, the one-GPU-per-server case against the list
schedule of ``lb_lagrange``'s relaxation, and ``improve`` on instances whose predictions
are poor (where the offline starts beat every start ``improve`` had before them).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from asrpt_crowded import crowded

from ddlsched.deadline import Deadline
from ddlsched.errors import TimeLimitReached
from ddlsched.heuristics.asrpt_greedy import ORDERS, work_conserving_schedule
from ddlsched.heuristics.asrpt_improve import OFFLINE_STARTS, POLICY_STARTS
from ddlsched.heuristics.asrpt_packed import PackedDecoder
from ddlsched.models.asrpt_lagrange import greedy_relaxed_starts
from ddlsched.problems.asrpt import AsrptInstance
from ddlsched.problems.asrpt_schedule import evaluate
from ddlsched.registry import RunOptions, run_method
from ddlsched.rng import make_rng
from ddlsched.workloads.asrpt import tiny, tiny_comm

RTOL = 1e-9


def _reference(decoder: PackedDecoder, order: str) -> dict[int, tuple[float, int]]:
    """The schedule by a plain scan: at every event, every waiting job in key order,
    started if ``full`` whole servers and another with ``rest`` free GPUs are free.
    Returns job -> (start, number of GPUs it holds)."""
    shapes, g = decoder.shapes, decoder.gpus_per_server
    gpus = [s.full * g + s.rest for s in shapes]
    key = [(s.duration_s * (gpus[i] if order == "workload" else 1), s.arrival_s, i)
           for i, s in enumerate(shapes)]  # fmt: skip
    free = [g] * decoder.servers
    running: list[tuple[float, int, list[int]]] = []
    out: dict[int, tuple[float, int]] = {}
    t = 0.0
    while len(out) < len(shapes):
        pending = [i for i in range(len(shapes)) if i not in out]
        waiting = sorted(key[i] for i in pending if shapes[i].arrival_s <= t)
        for _, _, i in waiting:
            full, rest = shapes[i].full, shapes[i].rest
            whole = [m for m in range(len(free)) if free[m] == g][:full]
            if len(whole) < full:
                continue
            chosen = list(whole)
            if rest:
                others = [m for m in range(len(free)) if m not in whole and free[m] >= rest]
                if not others:
                    continue
                chosen.append(min(others, key=lambda m: (free[m], m)))
            for n, m in enumerate(chosen):
                free[m] -= g if n < full else rest
            running.append((t + shapes[i].duration_s, i, chosen))
            out[i] = (t, gpus[i])
        events = [f for f, _, _ in running if f > t]
        events += [shapes[i].arrival_s for i in pending if i not in out and shapes[i].arrival_s > t]
        if not events:
            break
        t = min(events)
        for _finish, i, chosen in [r for r in running if r[0] <= t]:
            for n, m in enumerate(chosen):
                free[m] += g if n < shapes[i].full else shapes[i].rest
        running = [r for r in running if r[0] > t]
    return out


def _crowded(seed: int, jobs: int = 14) -> AsrptInstance:
    """``tiny(seed)``'s cluster and configurations, ``jobs`` jobs arriving close together."""
    return crowded(seed, jobs, rng_seed=2000 + seed, iterations=(2, 40))


def _single_gpu_servers(seed: int, jobs: int = 14, servers: int = 6) -> AsrptInstance:
    """One GPU per server (the testbed's shape), jobs of 1-4 GPUs with heavy-tailed sizes
    and predictions unrelated to them (every ``n~`` the same), arriving in a burst."""
    rng = make_rng(3000 + seed)
    stage = {"fwd_s": 0.01, "bwd_s": 0.02, "in_bytes": 0.0, "out_bytes": 0.0,
             "param_bytes": 1.0e6}  # fmt: skip
    configs = {
        f"c{n}": {"allreduce": "rar", "stages": [dict(stage, replicas=n)]} for n in (1, 2, 4)
    }
    data = {
        "family": "asrpt",
        "schema_version": 1,
        "cluster": {"servers": servers, "gpus_per_server": 1, "b_inter": 1.0e10, "b_intra": 1.0e10},
        "configs": configs,
        "jobs": [
            {
                "id": f"j{k}",
                "arrival_s": float(round(rng.uniform(0, 2.0), 1)),
                "config": f"c{int(rng.choice([1, 1, 1, 2, 4]))}",
                "iterations": math.ceil(rng.pareto(1.2) * 20 + 1),
                "predicted_iterations": 10.0,
            }
            for k in range(jobs)
        ],
    }
    return AsrptInstance.from_dict(data)


INSTANCES = (
    [tiny(s) for s in range(6)]
    + [tiny_comm(s) for s in range(6)]
    + [_crowded(s) for s in range(6)]
    + [_single_gpu_servers(s) for s in range(6)]
)


@pytest.mark.parametrize("order", ORDERS)
def test_equals_the_plain_scan_and_is_valid(order):
    for instance in INSTANCES:
        decoder = PackedDecoder(instance)
        started, placed, schedule = work_conserving_schedule(decoder, order)
        assert sorted(started) == list(range(instance.num_jobs))
        reference = _reference(decoder, order)
        assert {j: p.start_s for j, p in zip(started, placed, strict=True)} == {
            j: start for j, (start, _) in reference.items()
        }
        evaluation = evaluate(instance, schedule)  # raises on an infeasible schedule
        flow = math.fsum(decoder.flow_s(j, p) for j, p in zip(started, placed, strict=True))
        assert flow == pytest.approx(evaluation.total_flow_s, rel=1e-12)
        assert [p.start_s for p in placed] == sorted(p.start_s for p in placed)
        for job, where in zip(started, placed, strict=True):  # packed: never split further
            shape = decoder.shapes[job]
            assert len(where.servers) == shape.full + (1 if shape.rest else 0)


def test_single_gpu_servers_equal_the_relaxations_list_schedule():
    for seed in range(6):
        instance = _single_gpu_servers(seed)
        decoder = PackedDecoder(instance)
        started, placed, _ = work_conserving_schedule(decoder, "workload")
        r = np.array([s.arrival_s for s in decoder.shapes])
        p = np.array([s.duration_s for s in decoder.shapes])
        g = np.array([float(s.full) for s in decoder.shapes])
        reference = greedy_relaxed_starts(r, p, g, instance.cluster.num_gpus, g * p)
        ours = dict(zip(started, (q.start_s for q in placed), strict=True))
        assert [ours[j] for j in range(len(r))] == reference.tolist()


def test_bad_order_and_deadline():
    decoder = PackedDecoder(tiny(0))
    with pytest.raises(ValueError, match="order must be one of"):
        work_conserving_schedule(decoder, "arrival")
    ticks = iter(range(10**6))
    expired = Deadline(1.0, clock=lambda: float(next(ticks)) * 10)
    with pytest.raises(TimeLimitReached):
        work_conserving_schedule(decoder, "workload", expired)


# --------------------------------------------------------------------------- improve


def _improve(instance: AsrptInstance, **params):
    options = RunOptions(time_limit_s=120, seed=0, params=params)
    return run_method("asrpt", "improve", instance, options, raise_errors=True)


def test_improve_offline_starts_win_where_predictions_are_poor():
    """On one-GPU servers with uninformative predictions the offline starts often beat
    every start improve had before them (3 of seeds 0-5), and improve keeps the gain."""
    old_starts = ",".join((*POLICY_STARTS, "packed", "packed_best_fit"))
    wins = 0
    for seed in range(6):
        instance = _single_gpu_servers(seed)
        new = _improve(instance)
        flows = new.info["start_flow_s"]
        assert set(OFFLINE_STARTS) <= set(flows)
        best_old_start = min(flows[name] for name in flows if name not in OFFLINE_STARTS)
        best_offline = min(flows[name] for name in OFFLINE_STARTS)
        total_arrival = sum(job.arrival_s for job in instance.jobs)
        assert new.objective <= (best_offline + total_arrival) * (1 + RTOL)
        wins += best_offline < best_old_start * (1 - 1e-6)
        if seed in (4, 5):  # measured: the LNS from the old starts stays above the new answer
            old = _improve(instance, starts=old_starts)
            assert new.objective < old.objective * (1 - 1e-6), (new.objective, old.objective)
    assert wins >= 3
