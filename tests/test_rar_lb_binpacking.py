"""``lb_binpacking`` (``models/rar_lb_binpacking.py``): a valid gang bin-packing lower bound.

Checks (its validity on 140 proven and 20 brute-forced optima is
``tests/test_rar_lower_bounds_valid.py``, shared with the other bounds): two
hand-computed instances where the bound is the optimum and the closed forms
are not (three 1-GPU jobs on two GPUs: the pooled LP; two 2-GPU rings whose
split costs three times the unsplit run: the per-class LP); the pooled LP's
round-up and the per-class LP each refute what they must; a deadline that
has passed keeps the closed forms and says what it stopped.
"""

from __future__ import annotations

from ddlsched.deadline import Deadline
from ddlsched.models.rar_bounds import closed_form_bounds
from ddlsched.models.rar_lb_binpacking import gang_items, lb_binpacking, packing_refutes
from ddlsched.models.rar_search import search_exact
from ddlsched.problems.rar import Network, RarInstance, RarJob
from ddlsched.registry import RunOptions, run_method
from ddlsched.workloads.rar import generate


def _job(name: str, gpus: int, grad_size: float = 0.0) -> RarJob:
    """A job of 18 iterations at ``tau ~ 0.3`` (3 per slot: 6 slots) on one server."""
    return RarJob(
        id=name, gpus=gpus, iterations=18, grad_size=grad_size, batch=1, fwd_per_sample=0.0, bwd=0.3
    )


NETWORK = Network(b_e=1.0, b_i=1000.0, C=1000.0, alpha=0.0, xi1=1e-6, xi2=1e-6)


def three_on_two() -> RarInstance:
    """Three 1-GPU jobs of 6 slots on one 2-GPU server: closed forms 6 and 9, OPT 12.

    Two of the three jobs share a GPU, so some GPU is busy 12 slots; the
    pooled LP needs 3 bins of capacity < 12 (one item each), 1.5 at 12."""
    return RarInstance(
        servers=(2,), network=NETWORK, jobs=tuple(_job(n, 1) for n in "abc"), horizon=40
    )


def split_costs_triple() -> RarInstance:
    """Two 2-GPU rings, servers (2, 1, 1): 6 slots on the 2-GPU server, 18 split.

    ``grad_size = 0.2``: the inter-server term ``2 m (G-1) / (G b_e) = 0.2`` makes
    ``tau = 0.5`` split (1 iteration per slot, 18 slots) against ``0.3``
    on one server (6 slots). OPT = min(6 + 6, 18) = 12; the closed forms
    give 6 and the pooled LP 6 (four items of 6 in four bins), the per-class
    LP 12 (the 1-GPU servers' items cost 18)."""
    jobs = tuple(_job(n, 2, grad_size=0.2) for n in "ab")
    return RarInstance(servers=(2, 1, 1), network=NETWORK, jobs=jobs, horizon=40)


def test_three_jobs_on_two_gpus():
    inst = three_on_two()
    assert closed_form_bounds(inst) == {"longest_job": 6.0, "gpu_time": 9.0}
    result = lb_binpacking(inst)
    assert result.bound == 12 and not result.time_limit_hit
    assert packing_refutes(gang_items(inst), 11) == (True, "pooled")
    assert packing_refutes(gang_items(inst), 12) == (False, "")
    opt = search_exact(inst)
    assert opt.proven and opt.makespan == 12


def test_split_ring_priced_per_server_class():
    inst = split_costs_triple()
    items = gang_items(inst)
    assert items.class_size == (1, 2) and items.group_sizes == ((18, 6),)
    assert max(closed_form_bounds(inst).values()) == 6
    assert packing_refutes(items, 11) == (True, "classes")
    assert packing_refutes(items, 12) == (False, "")
    assert lb_binpacking(inst).bound == 12
    opt = search_exact(inst)
    assert opt.proven and opt.makespan == 12


def test_an_item_larger_than_the_capacity_refutes_at_once():
    items = gang_items(three_on_two())
    assert packing_refutes(items, 5) == (True, "item")


def test_registered_method_through_the_pipeline():
    res = run_method("rar", "lb_binpacking", three_on_two(), RunOptions(time_limit_s=30))
    assert res.status.value == "bound_only" and res.bound == 12
    assert not res.time_limit_hit and "stopped" not in res.info


def test_a_passed_deadline_keeps_the_closed_forms():
    ticks = iter(range(0, 10_000, 100))
    deadline = Deadline(1.0, clock=lambda: float(next(ticks)))
    result = lb_binpacking(three_on_two(), deadline=deadline)
    assert result.time_limit_hit and "arc-flow LP" in result.info["stopped"]
    assert result.bound == 9  # gpu_time: nothing refuted before the limit


def test_above_the_closed_forms_on_some_small_instances():
    gains = 0
    for seed in range(40):
        inst = generate("small", seed)
        gains += lb_binpacking(inst).bound > max(closed_form_bounds(inst).values())
    assert gains >= 1
