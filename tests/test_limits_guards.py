"""Size, memory and time guards: refusals before allocating, interruption at the
deadline, no non-finite number in a result.

No test reads the clock to pass: work the deadline must cut is endless or far
longer than the limit, so the status says whether the limit cut it; a lost
interrupt hangs the test, which the timeout (a thread: SIGALRM is the
deadline's) then fails."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from ddlsched import memory
from ddlsched.cli import main
from ddlsched.deadline import Deadline
from ddlsched.errors import InvalidInstanceError, ModelTooLargeError, TimeLimitReached
from ddlsched.problems.muri import MuriGroupingInstance, MuriJob, best_periods
from ddlsched.registry import RunOptions, get_family, run_method
from ddlsched.solvers.limits import check_model_size


@pytest.fixture
def small_budget():
    memory.set_budget_mb(1)
    yield
    memory.set_budget_mb(None)


def test_budget_defaults_to_a_share_of_memory_and_obeys_the_environment(monkeypatch):
    monkeypatch.delenv(memory.ENV_VAR, raising=False)
    assert 0 < memory.budget_bytes() <= memory._physical_bytes()
    monkeypatch.setenv(memory.ENV_VAR, "64")
    assert memory.budget_bytes() == 64 * 2**20
    monkeypatch.setenv(memory.ENV_VAR, "lots")
    with pytest.raises(Exception, match="expected a number of MiB"):
        memory.budget_bytes()


@pytest.mark.parametrize("bad", [0, -5, math.nan, math.inf, True, "1"])
def test_budget_setting_is_checked(bad):
    with pytest.raises(Exception, match="memory budget"):
        memory.set_budget_mb(bad)


def test_require_memory_names_estimate_budget_and_hint(small_budget):
    with pytest.raises(ModelTooLargeError) as info:
        memory.require_memory("a big table", 3 * 2**30, "use a smaller one")
    text = str(info.value)
    assert "3 GiB" in text and "1 MiB" in text and "use a smaller one" in text
    assert "\n" not in text
    with pytest.raises(ModelTooLargeError):
        memory.require_memory("nan", math.nan, "-")


def test_model_size_check_counts_bytes_not_only_variables(small_budget):
    with pytest.raises(ModelTooLargeError, match="nonzeros"):
        check_model_size("a model", 10_000, "shrink it", nonzeros=10**6)


def test_heavy_edge_refuses_a_matrix_beyond_the_budget(tmp_path, small_budget, shared_data):
    fam = get_family("placement")
    instance = fam.generate("table2", 0, num_gpus=512)
    result = run_method("placement", "heavy_edge", instance, RunOptions(time_limit_s=10))
    assert result.status == "error"
    assert "weight matrix" in result.info["error"]


def test_rar_instances_are_capped_in_gpus():
    fam = get_family("rar")
    data = fam.generate("small", 0).to_dict()
    data["servers"] = [10**9, 4]
    with pytest.raises(InvalidInstanceError, match="servers"):
        type(fam.generate("small", 0)).from_dict(data)


def _muri(num_jobs: int, k: int, times=None) -> MuriGroupingInstance:
    rng = np.random.default_rng(0)
    jobs = [
        MuriJob(f"j{i}", 1, tuple(times or rng.uniform(1, 10, size=k).round(3).tolist()))
        for i in range(num_jobs)
    ]
    return MuriGroupingInstance(jobs=tuple(jobs), num_resources=k, max_group_size=k)


def test_muri_exact_refuses_an_enumeration_it_cannot_score():
    result = run_method("muri", "exact", _muri(40, 8), RunOptions(time_limit_s=10))
    assert result.status == "error"
    assert "candidate groups" in result.info["error"]


@pytest.mark.timeout(300, method="thread")
def test_muri_exact_honours_its_time_limit_while_scoring_offsets():
    result = run_method("muri", "exact", _muri(16, 8), RunOptions(time_limit_s=1.0))
    assert result.status == "time_limit_no_solution"


def test_best_periods_batches_keep_the_same_answer():
    rng = np.random.default_rng(1)
    times = rng.uniform(1, 10, size=(50, 3, 5))
    whole = best_periods(times)
    from ddlsched.problems import muri as muri_problem

    saved = muri_problem._GATHER_ELEMENTS
    muri_problem._GATHER_ELEMENTS = 7  # one group per batch
    try:
        batched = best_periods(times)
    finally:
        muri_problem._GATHER_ELEMENTS = saved
    np.testing.assert_array_equal(whole[0], batched[0])
    np.testing.assert_array_equal(whole[1], batched[1])


def test_muri_times_that_overflow_are_refused():
    with pytest.raises(InvalidInstanceError, match="double precision"):
        _muri(2, 2, times=[1e308, 1e308])


@pytest.mark.timeout(300, method="thread")
def test_interrupting_stops_pure_python_work_at_the_deadline():
    deadline = Deadline(0.2)
    with pytest.raises(TimeLimitReached, match="a busy loop"), deadline.interrupting("a busy loop"):
        while True:
            pass


def test_interrupting_leaves_no_timer_and_restores_the_handler():
    import signal

    before = signal.getsignal(signal.SIGALRM)
    with Deadline(5.0).interrupting("quick work"):
        total = sum(range(1000))
    assert total == 499500
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    assert signal.getsignal(signal.SIGALRM) is before
    with pytest.raises(TimeLimitReached), Deadline(0.05).interrupting("busy"):
        while True:
            pass
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    assert signal.getsignal(signal.SIGALRM) is before


def test_a_huge_finite_limit_is_armed_in_steps():
    with Deadline(1e12).interrupting("a long limit"):  # setitimer overflows near 1e10 s
        pass


def test_interrupt_converted_by_a_library_is_still_the_time_limit():
    """Pyomo's rule inspection (``inspect.getfullargspec``) turns any exception into
    ``TypeError("unsupported callable")``: the block re-raises it as the time limit."""

    def library_call():
        try:
            while True:
                pass
        except Exception as exc:
            raise TypeError("unsupported callable") from exc

    with (
        pytest.raises(TimeLimitReached, match="a library"),
        Deadline(0.1).interrupting("a library"),
    ):
        library_call()
    with pytest.raises(TypeError, match="its own"), Deadline(5.0).interrupting("quick"):
        raise TypeError("its own error, not the deadline's")


@pytest.mark.timeout(300, method="thread")
def test_nested_blocks_interrupt_once_from_the_outer_deadline():
    outer = Deadline(0.2)
    inner = Deadline(100)  # its block is a no-op inside the outer one
    with (
        pytest.raises(TimeLimitReached, match="outer"),
        outer.interrupting("outer"),
        inner.interrupting("inner"),
    ):
        while True:
            pass


def test_the_timer_never_raises_once_the_block_is_left(monkeypatch):
    # the signal arriving during the block's teardown must not raise there
    import signal

    from ddlsched import deadline as deadline_module

    fired = []
    real = signal.setitimer

    def setitimer(which, seconds, *rest):
        if seconds == 0 and not fired:  # the teardown: deliver the alarm right now
            fired.append(True)
            signal.getsignal(signal.SIGALRM)(signal.SIGALRM, None)
        return real(which, seconds, *rest)

    monkeypatch.setattr(deadline_module.signal, "setitimer", setitimer)
    with Deadline(0.001).interrupting("finished work"):
        pass  # may be interrupted here, but not once left
    assert fired


@pytest.mark.timeout(300, method="thread")
def test_a_heuristic_that_runs_past_its_limit_stops_cleanly(monkeypatch):
    from ddlsched.registry import _METHODS, Method

    method = _METHODS["muri", "blossom"]

    def forever(instance, params, ctx):
        while True:
            pass

    monkeypatch.setitem(
        _METHODS, ("muri", "blossom"), Method(**{**method.__dict__, "run": forever})
    )
    result = run_method("muri", "blossom", _muri(4, 2), RunOptions(time_limit_s=0.3))
    assert result.status == "time_limit_no_solution"
    assert "muri.blossom" in result.info["stopped"]


def test_memory_error_becomes_a_one_line_error(monkeypatch, tmp_path, capsys):
    from ddlsched.registry import _METHODS, Method

    method = _METHODS["muri", "blossom"]

    def hungry(instance, params, ctx):
        raise MemoryError

    monkeypatch.setitem(_METHODS, ("muri", "blossom"), Method(**{**method.__dict__, "run": hungry}))
    result = run_method("muri", "blossom", _muri(4, 2), RunOptions(time_limit_s=5))
    assert result.status == "error" and "ran out of memory" in result.info["error"]
    path = tmp_path / "m.json"
    _muri(4, 2).save(path)
    assert main(["solve", "muri", str(path), "--method", "blossom"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("ddlsched: error:") and "out of memory" in err[0]


def test_json_output_never_holds_nan_or_infinity():
    from ddlsched.solvers.result import _jsonable

    data = _jsonable({"a": [math.nan, np.float32("inf"), 1.5], "b": {"c": -math.inf}})
    assert data == {"a": [None, None, 1.5], "b": {"c": None}}
    json.dumps(data, allow_nan=False)


def test_memory_budget_flag_applies_to_the_run_only(tmp_path, capsys, monkeypatch, shared_data):
    monkeypatch.delenv(memory.ENV_VAR, raising=False)
    before = memory.budget_bytes()
    path = tmp_path / "p.json"
    get_family("placement").generate("table2", 0, num_gpus=512).save(path)
    args = ["solve", "placement", str(path), "--method", "heavy_edge", "--memory-budget", "1"]
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "memory budget of 1 MiB" in err[0]
    assert memory.budget_bytes() == before  # restored
    assert main([*args[:-1], "0"]) == 2
    assert "--memory-budget" in capsys.readouterr().err


@pytest.mark.timeout(300, method="thread")
@pytest.mark.parametrize("method", ["exact", "timeindexed", "load_lb", "sjf_bco"])
def test_a_ten_million_slot_horizon_is_answered_quickly(method, tmp_path, capsys):
    fam = get_family("rar")
    data = fam.generate("small", 3).to_dict()
    data["horizon"] = 10_000_000
    path = tmp_path / "h.json"
    path.write_text(json.dumps(data))
    code = main(["solve", "rar", str(path), "--method", method, "--time-limit", "10", "--json"])
    out, err = capsys.readouterr()
    if code == 2:  # refused before building, one line naming a parameter that shrinks it
        assert len(err.strip().splitlines()) == 1 and "--param" in err
    else:
        assert code == 0 and json.loads(out)["status"] in ("optimal", "feasible", "bound_only")
