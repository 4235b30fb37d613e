"""Family ``placement``: the valid bounds behind the aggregated ILP's inequalities."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ddlsched.models.placement_bounds import coefficients, server_pattern_lower
from ddlsched.problems.placement import PlacementInstance, Stage
from ddlsched.workloads.placement import generate


def patterns_by_enumeration(inst, coef, capacity: int, full: bool) -> np.ndarray:
    """``plower[s, v]`` by listing every pattern (independent of the dynamic programme)."""
    caps = [min(stage.replicas, capacity) for stage in inst.stages]
    num = inst.num_stages
    out = np.full((num, max(caps) + 1), np.inf)
    for p in itertools.product(*(range(c + 1) for c in caps)):
        if sum(p) > capacity or (full and sum(p) != capacity):
            continue
        worst = 0.0
        for s in range(num):
            if p[s]:
                prev = p[s - 1] if s > 0 else 0
                nxt = p[s + 1] if s < num - 1 else 0
                worst = max(worst, coef.term(s, prev, p[s], nxt))
        for s in range(num):
            out[s, p[s]] = min(out[s, p[s]], worst)
    return out


@settings(max_examples=40, deadline=None)
@given(
    st.integers(0, 10_000),
    st.integers(1, 5),
    st.integers(1, 4),
    st.booleans(),
    st.sampled_from(["rar", "tar"]),
)
def test_server_pattern_lower_equals_enumeration(seed, num_stages, capacity, full, allreduce):
    inst = generate("small", seed, num_stages=num_stages, max_replicas=3, allreduce=allreduce)
    coef = coefficients(inst)
    got = server_pattern_lower(inst, coef, capacity, full=full)
    want = patterns_by_enumeration(inst, coef, capacity, full)
    assert np.array_equal(np.isinf(got), np.isinf(want))
    finite = np.isfinite(want)
    assert np.allclose(got[finite], want[finite], rtol=1e-12)


def test_server_pattern_lower_by_hand():
    """Two stages of 2 replicas, 1 GB/s NIC, 8 GPUs per server, intra 100 GB/s.

    A full 2-GPU server holds (2, 0), (1, 1) or (0, 2). Stage 0 alone with both
    replicas: comp 1 + comm to stage 1 (8 * 2 * 1e6 * 2/2 / 1e9 = 0.016) + intra
    AllReduce (2 * 1 * 1e8 / 2 / 1e11 = 0.001) = 1.017 s; split (1, 1): stage 0 has
    comm 8 * 2e6 * 1/2 / 1e9 + 2e6 * 1/2 / 1e11 = 0.00801, AllReduce over the NIC at
    1/8 of it 2 * 1e8 / 2 / (1e9 / 8) = 0.8, total 1.80801 s (stage 1 the same).
    """
    stage = Stage(replicas=2, fwd_s=0.5, bwd_s=0.5, in_bytes=1e6, out_bytes=1e6, param_bytes=1e8)
    inst = PlacementInstance(
        gpus_per_server=8,
        b_inter=1e9,
        b_intra=1e11,
        available=(2, 2),
        allreduce="rar",
        stages=(stage, stage),
    )
    plower = server_pattern_lower(inst, coefficients(inst), 2, full=True) / 1000.0
    assert plower[0, 2] == pytest.approx(1.017)
    assert plower[0, 0] == pytest.approx(1.017)  # then stage 1 holds the server alone
    assert plower[0, 1] == pytest.approx(1.80801)
    assert plower[1, 1] == pytest.approx(1.80801)
