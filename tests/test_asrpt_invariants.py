"""Family asrpt: model invariants the issue names, on the model pool and on trace slices.

* every placement's alpha is at most ``alpha_max`` when ``B_intra >= B_inter / g``
  (random placements of ``tiny`` configurations, at the bandwidth limit and above);
* ``alpha_lb <= alpha~_min`` for every configuration of the model pool (the closed
  form for all, the placement ILP for the small ones);
* the simulator's invariants on a Philly slice (loaded cluster): the evaluator accepts
  every policy's schedule, no job starts before its arrival, totals agree;
* a malformed trace row names the file and the line.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from ddlsched.datadir import data_dir
from ddlsched.errors import DdlschedError
from ddlsched.families.asrpt import POLICIES, generate
from ddlsched.heuristics.asrpt_config import config_constants
from ddlsched.models.asrpt import alpha_closed_form, alpha_lb
from ddlsched.problems.asrpt import Cluster, job_alpha, job_placement_instance
from ddlsched.problems.placement import alpha_max
from ddlsched.registry import RunOptions, run_method
from ddlsched.workloads.asrpt import tiny

NEEDS_DATA = pytest.mark.skipif(data_dir() is None, reason="shared data directory absent")


def _random_counts(rng, config, g, servers):
    """Replicas of each stage spread at random over ``servers`` servers of ``g`` GPUs."""
    free = [g] * servers
    counts = [[0] * servers for _ in config.stages]
    for s, stage in enumerate(config.stages):
        for _ in range(stage.replicas):
            m = int(rng.choice([k for k in range(servers) if free[k] > 0]))
            counts[s][m] += 1
            free[m] -= 1
    used = [k for k in range(servers) if any(row[k] for row in counts)]
    return tuple(tuple(row[k] for k in used) for row in counts)


@pytest.mark.parametrize("intra_factor", ["limit", "equal", "nvlink"])
def test_every_placement_is_at_most_alpha_max(intra_factor):
    rng = np.random.default_rng(5)
    checked = 0
    for seed in range(40):
        inst = tiny(seed)
        g = inst.cluster.gpus_per_server
        b_inter = inst.cluster.b_inter
        b_intra = {"limit": b_inter / g, "equal": b_inter, "nvlink": 300e9}[intra_factor]
        cluster = Cluster(inst.cluster.servers, g, b_inter, b_intra)
        for config in inst.configs.values():
            full, rest = divmod(config.num_gpus, g)
            bound = alpha_max(
                job_placement_instance(cluster, config, (g,) * full + ((rest,) if rest else ()))
            )
            for _ in range(20):
                counts = _random_counts(rng, config, g, max(cluster.servers, config.num_gpus))
                assert job_alpha(cluster, config, counts) <= bound * (1 + 1e-12)
                checked += 1
    assert checked > 1000


@NEEDS_DATA
def test_alpha_lb_below_alpha_min_on_the_pool():
    from ddlsched.workloads.asrpt_pool import EXTRA_MODELS, TABLE_I, configurations

    cluster = Cluster(servers=250, gpus_per_server=8, b_inter=10e9 / 8, b_intra=300e9)
    names = [m if isinstance(m, str) else m.name for m in TABLE_I] + list(EXTRA_MODELS)
    seen = 0
    for name in names:
        for gpus in (1, 2, 4, 8, 16):
            try:
                configs = configurations(name, gpus)
            except DdlschedError:
                continue
            for _, config in configs:
                upper = config_constants(cluster, config).alpha_min_s
                closed = alpha_closed_form(
                    job_placement_instance(cluster, config, (8,) * min(250, config.num_gpus))
                )
                assert closed <= upper * (1 + 1e-9)
                if gpus <= 8:
                    lb = alpha_lb(cluster, config, time_limit_s=5.0)
                    assert lb.value_s <= upper * (1 + 1e-9)
                seen += 1
    assert seen >= 20


@NEEDS_DATA
def test_policies_on_a_loaded_philly_slice():
    inst = generate(
        "trace", 1, trace="philly", jobs=300, servers=4, gpus_per_server=8, max_job_gpus=16
    )
    for policy in POLICIES:
        params = {"theory": False} if policy.startswith("asrpt") else {}
        r = run_method("asrpt", policy, inst, RunOptions(params=params))
        assert r.status == "feasible", r.info.get("error")
        ev = r.evaluation
        assert math.isclose(r.info["total_completion_s"], ev.total_completion_s, rel_tol=1e-9)
        for job, start in zip(inst.jobs, ev.start_s, strict=True):
            assert start >= job.arrival_s


@NEEDS_DATA
@pytest.mark.parametrize(
    ("row", "where"),
    [("nan,1,1", "column duration"), ("100,0,1", "column num_gpus"), ("-5,1,1", "column duration")],
)
def test_malformed_philly_rows_name_file_and_line(tmp_path, monkeypatch, row, where):
    root = tmp_path / "data"
    (root / "traces" / "philly").mkdir(parents=True)
    good = "2017-10-01 00:00:00,100,1,100,vc1\n"
    duration, gpus, _ = row.split(",")
    bad = f"2017-10-01 00:00:05,{duration},{gpus},100,vc1\n"
    path = root / "traces" / "philly" / "philly.csv"
    path.write_text("timestamp,duration,num_gpus,gpu_time,cluster\n" + good * 3 + bad + good)
    monkeypatch.setenv("DDLSCHED_DATA", str(root))
    monkeypatch.setenv("DDLSCHED_DATA_VERIFY", "0")  # a malformed copy: no hash check
    from ddlsched.workloads.traces import read_philly

    with pytest.raises(DdlschedError, match=rf"philly.csv, line 5: .*{where}"):
        read_philly()


def test_replace_keeps_validation():
    inst = tiny(2)
    with pytest.raises(DdlschedError):
        replace(inst, jobs=(replace(inst.jobs[0], iterations=0), *inst.jobs[1:]))
