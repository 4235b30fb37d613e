"""``ub_branch`` of family ``dmlrs`` (``ddlsched.models.dmlrs_branch``).

* Validity: at least the brute-force optimum on ``micro`` instances (as generated and
  congested) and at least ``exact``'s proven optimum on ``tiny`` ones (as generated and
  congested), at every node budget; never above ``ub_capacity``.
* The search bites and ends where it must: on congested ``tiny`` instances it goes below
  ``ub_capacity`` and, with budget enough, stops at ``ub_capacity``'s MILP with binary
  completion choices (HiGHS's branch-and-bound on the same relaxation, an independent
  solve); more nodes never give a higher bound; acceptance-only branching is never below
  the full rule.
* The branching rule by hand; same inputs, same search.
* The registered method: a bound-only result, parameters checked (one line, exit 2), an
  early deadline gives a valid bound or no answer, never a wrong one.

The 120-instance check is ``benchmarks/dmlrs_branch.py --validity``.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from dmlrs_brute_force import brute_force_optimum
from test_dmlrs_lagrange import CONGESTED, MICRO, congested, optimum

from ddlsched.deadline import Deadline
from ddlsched.errors import TimeLimitReached
from ddlsched.models.dmlrs_branch import JobColumns, branch_bound, choose_branch
from ddlsched.models.dmlrs_capacity import build_capacity_model, capacity_bound
from ddlsched.registry import RunOptions, run_method
from ddlsched.solvers import Status
from ddlsched.workloads.dmlrs import generate

TOL = 1e-6


@pytest.mark.parametrize("k", range(len(MICRO)))
def test_at_least_the_brute_force_optimum(k):
    instance = MICRO[k]
    truth = brute_force_optimum(instance)
    for nodes in (1, 5, 200):
        bound, info = branch_bound(instance, nodes=nodes)
        assert bound >= truth - TOL
        assert bound <= info["ub_capacity"] + TOL


@pytest.mark.parametrize("seed", range(6))
def test_at_least_exact_on_tiny(seed):
    instance = generate("tiny", seed)
    bound, _ = branch_bound(instance, nodes=300)
    assert bound >= optimum(instance) - TOL


@pytest.mark.parametrize("k", range(len(CONGESTED)))
def test_reaches_the_capacity_milp_and_stays_valid(k):
    instance = CONGESTED[k]
    bound, info = branch_bound(instance, nodes=100_000, incumbent=False)
    milp, milp_info = capacity_bound(instance, integral=True)
    assert milp_info["milp_status"] == "optimal"
    assert info["search_stopped"] in ("integral", "closed")
    assert bound == pytest.approx(milp, rel=1e-6, abs=1e-6)
    assert optimum(instance) - TOL <= bound
    assert bound < info["ub_capacity"] - 1e-3  # the branching adds to the LP


def test_more_nodes_never_raise_the_bound():
    instance = CONGESTED[0]
    bounds = [branch_bound(instance, nodes=n)[0] for n in (1, 3, 9, 27, 81)]
    assert all(b2 <= b1 + 1e-9 for b1, b2 in itertools.pairwise(bounds))
    assert bounds[-1] < bounds[0]


def test_acceptance_only_is_never_below_the_full_rule():
    for instance in CONGESTED[:3]:
        full, _ = branch_bound(instance, nodes=100_000, incumbent=False)
        only, info = branch_bound(instance, nodes=100_000, incumbent=False, completion=False)
        assert only >= full - TOL
        assert all(kind == "acceptance" for _, kind, _, _ in info["branchings"])


def test_same_inputs_same_search():
    instance = CONGESTED[1]
    first = branch_bound(instance, nodes=40)[1]
    second = branch_bound(instance, nodes=40)[1]
    assert first["bound_at_nodes"] == second["bound_at_nodes"]
    assert first["branchings"] == second["branchings"]


def test_branching_rule_by_hand():
    instance = congested(generate("tiny", 0))
    model = build_capacity_model(instance)
    jobs = JobColumns.of(model)
    T = instance.slots
    low, high = sorted(jobs.worth, key=jobs.worth.get)[:2]  # two jobs, different worth
    assert jobs.worth[low] < jobs.worth[high]
    values = np.zeros(model.num_cols)
    for i in (low, high):  # completes by T in part
        values[model.slot_columns[(i, T)][0]] = 0.5 if i == low else 0.1
    choice = choose_branch(model, values, jobs, T)
    expected = max((0.5 * jobs.worth[low], low), (0.1 * jobs.worth[high], high))
    assert (choice.job, choice.kind, choice.slot) == (expected[1], "acceptance", T)
    assert choice.score == pytest.approx(expected[0])
    # every acceptance integral: the completion column nearest to 1/2 of the spread job
    values[:] = 0.0
    first = jobs.first[high]
    assert first < T - 1
    for t in range(first, T + 1):
        values[model.slot_columns[(high, t)][0]] = 0.3 if t == first else 1.0
    choice = choose_branch(model, values, jobs, T)
    assert (choice.job, choice.kind, choice.slot) == (high, "completion", first)
    assert choice.score == pytest.approx(0.3 * jobs.worth[high])
    assert choose_branch(model, values, jobs, T, completion=False) is None
    values[model.slot_columns[(high, first)][0]] = 1.0
    assert choose_branch(model, values, jobs, T) is None  # all integral


def test_registered_method_is_a_valid_bound():
    instance = CONGESTED[4]
    options = RunOptions(time_limit_s=120, params={"nodes": 50})
    result = run_method("dmlrs", "ub_branch", instance, options)
    assert result.status is Status.BOUND_ONLY
    assert result.bound >= optimum(instance) - TOL
    assert result.info["search_stopped"] in ("nodes", "integral", "closed")
    assert result.info["nodes_solved"] <= 50
    assert not result.time_limit_hit


@pytest.mark.parametrize("value", ["0", "-3", "x", "10000001"])
def test_bad_node_budget_is_one_line_and_exit_2(cli, tmp_path, value):
    path = tmp_path / "tiny.json"
    generate("tiny", 0).save(path)
    code, _, err = cli("solve", "dmlrs", str(path), "--method", "ub_branch", "--param",
                       f"nodes={value}")  # fmt: skip
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and "nodes" in err


# an expired deadline: test_dmlrs_lagrange.py::test_expired_deadline_gives_no_wrong_bound


def test_deadline_during_the_search_keeps_the_open_nodes_bound():
    ticks = iter(range(10**9))
    deadline = Deadline(20.0, clock=lambda: float(next(ticks)))  # expires after 20 reads
    instance = CONGESTED[4]  # 33 node LPs to the end
    bound, info = branch_bound(instance, nodes=100_000, incumbent=False, deadline=deadline)
    assert info["search_stopped"] == "time_limit"
    assert bound >= optimum(instance) - TOL
    assert bound <= info["ub_capacity"] + TOL


def test_a_real_deadline_is_used_to_its_end():
    """HiGHS's time limit runs on the clock of its object, which adds up over the node
    LPs: each run gets that clock plus what is left, so the search is not cut early."""
    instance = generate("paper", 0, jobs=50, machines=20, slots=20)
    try:
        bound, info = branch_bound(instance, nodes=10**7, deadline=Deadline(2.0))
    except TimeLimitReached:  # a loaded machine did not finish the root LP: nothing to see
        pytest.skip("the root LP took the whole 2 s on this machine")
    # (the run-clock arithmetic itself is tested without timing: tests/test_highs_rerun.py)
    if info["search_stopped"] == "time_limit":
        assert info["seconds"] >= 1.9
    assert bound <= info["ub_capacity"] + TOL
