"""The ``paper-contention`` preset of family ``rar``: contention that acts.

Pins the calibration (module docstring of ``ddlsched.workloads.rar``): the
same seeded draws as ``paper`` (paired presets), the paper's nominal ranges,
contention inert up to 4 split jobs on a server and material from 8 on, and
on a seed the heuristics' schedule is materially slower with contention than
without it.
"""

from __future__ import annotations

import dataclasses

import pytest

from ddlsched.cli import main
from ddlsched.errors import InvalidInstanceError
from ddlsched.problems.rar_schedule import evaluate
from ddlsched.problems.rar_timing import iteration_time, min_servers
from ddlsched.registry import RunOptions, run_method
from ddlsched.workloads.rar import PRESET_PARAMS, PRESETS, generate, paper, paper_contention


@pytest.mark.parametrize("seed", [0, 1])
def test_same_draws_as_paper(seed):
    a, b = paper(seed), paper_contention(seed)
    assert a.servers == b.servers and a.horizon == b.horizon == 1200
    assert [(j.gpus, j.iterations, j.batch) for j in a.jobs] == [
        (j.gpus, j.iterations, j.batch) for j in b.jobs
    ]
    for ja, jb in zip(a.jobs, b.jobs, strict=True):
        best = min_servers(ja, a.servers)
        nominal = iteration_time(ja, a.network, best, 1)
        assert iteration_time(jb, b.network, best, 1) == pytest.approx(nominal, rel=1e-9)
        assert 0.01 - 1e-12 <= nominal <= 0.05 + 1e-12
        assert 50 - 1e-9 <= jb.iterations * nominal <= 300 + 1e-9


@pytest.mark.parametrize("seed", [0, 3])
def test_contention_raises_tau_materially(seed):
    inst = paper_contention(seed)
    net = inst.network
    multi = [j for j in inst.jobs if j.gpus >= 2]
    assert multi
    for job in multi:
        base = iteration_time(job, net, 2, 1)
        # k_j = 0.25 p_j <= 1 up to 4 co-split jobs: no contention yet
        assert iteration_time(job, net, 2, 4) == pytest.approx(base, rel=1e-12)
        # 8 co-split jobs (k = 2, f = 2.5): at least 10 % slower, at most 2x
        assert 1.10 <= iteration_time(job, net, 2, 8) / base <= 2.0
    # The calibration the paper preset cannot have: there contention never acts.
    flat = paper(seed)
    job = next(j for j in flat.jobs if j.gpus >= 2)
    assert iteration_time(job, flat.network, 2, 32) == iteration_time(job, flat.network, 2, 1)


def test_contention_decides_the_heuristic_schedule():
    inst = paper_contention(0)
    result = run_method("rar", "sjf_bco", inst, RunOptions(seed=0))
    assert result.objective is not None
    off = dataclasses.replace(inst, network=dataclasses.replace(inst.network, xi1=1e-9))
    free = evaluate(off, result.schedule).makespan
    assert result.objective >= 1.05 * free


def test_preset_is_registered_typed_and_checked(capsys):
    assert PRESETS["paper-contention"] is paper_contention
    assert set(PRESET_PARAMS["paper-contention"].__dataclass_fields__) == {
        "num_servers",
        "horizon",
        "xi1",
        "xi2",
        "alpha",
        "job_mix",
        "first_servers",
    }
    small = generate("paper-contention", 2, num_servers=12, horizon=1500)
    assert len(small.servers) == 12 and small.horizon == 1500
    with pytest.raises(InvalidInstanceError, match="xi1"):
        generate("paper-contention", 0, xi1=2.0)
    # a calibration under which some job would never progress is refused
    with pytest.raises(InvalidInstanceError, match="never progress"):
        paper_contention(0, xi1=1.0, alpha=100.0)
    assert main(["presets", "rar"]) == 0
    assert "paper-contention" in capsys.readouterr().out


@pytest.mark.parametrize("preset", ["paper", "paper-contention"])
def test_first_servers_is_the_nested_reading_of_fig6(preset):
    """first_servers = n cuts the seed's cluster to its first n servers: the same jobs and
    servers' prefix at every n (nested), unlike num_servers = n (a new draw per n)."""
    full = generate(preset, 3, horizon=1500)
    cuts = [generate(preset, 3, horizon=1500, first_servers=n) for n in (10, 15, 20)]
    assert [c.servers for c in cuts] == [full.servers[:10], full.servers[:15], full.servers]
    assert all(c.jobs == full.jobs and c.network == full.network for c in cuts)
    assert cuts[-1] == full
    regen = generate(preset, 3, horizon=1500, num_servers=10)
    assert regen.servers != full.servers[:10] or regen.jobs != full.jobs
    with pytest.raises(InvalidInstanceError, match="first_servers = 21 > 20 servers"):
        generate(preset, 3, first_servers=21)
