"""Family ``asrpt``: the packed list decoder and the method ``improve`` (ours;
:mod:`ddlsched.heuristics.asrpt_packed`, :mod:`ddlsched.heuristics.asrpt_improve`).

The decoder is checked against a straightforward pure-Python reference (the
communication-aware bound benchmark's first implementation) and the evaluator; ``improve``
against its starts run separately through the pipeline, against proven optima
(``exact``) on ``tiny`` / ``tiny-comm``, for reproducibility and bad parameters; a
start the time limit skipped or cut sets ``time_limit_hit`` and is named in ``stopped``.
"""

from __future__ import annotations

import math
from functools import cache

import pytest
from asrpt_crowded import crowded

from ddlsched.cli import main
from ddlsched.deadline import Deadline
from ddlsched.errors import DdlschedError, TimeLimitReached
from ddlsched.heuristics.asrpt_config import map_job
from ddlsched.heuristics.asrpt_improve import POLICY_STARTS, ImproveSettings, improve, parse_starts
from ddlsched.heuristics.asrpt_packed import PackedDecoder, packed_list_schedule
from ddlsched.models.asrpt_exact import solve_exact
from ddlsched.problems.asrpt import AsrptInstance
from ddlsched.problems.asrpt_schedule import AsrptSchedule, JobRun, evaluate, schedule_to_json
from ddlsched.registry import RunOptions, run_method
from ddlsched.rng import make_rng
from ddlsched.solvers.result import Status
from ddlsched.workloads.asrpt import tiny, tiny_comm

RTOL = 1e-9
GENERATORS = {"tiny": tiny, "tiny-comm": tiny_comm}


def _reference_packed(instance: AsrptInstance, best_fit: bool) -> AsrptSchedule:
    """The packed witness as first written (per-GPU free-from lists, sorted per job)."""
    g = instance.cluster.gpus_per_server
    free_from = [[0.0] * g for _ in range(instance.cluster.servers)]
    runs = {}
    for job in sorted(instance.jobs, key=lambda j: (j.arrival_s, j.id)):
        config = instance.configs[job.config]
        full, rest = divmod(config.num_gpus, g)
        take = (g,) * full + ((rest,) if rest else ())
        floor = job.arrival_s if best_fit else -math.inf
        servers = sorted(range(len(free_from)), key=lambda m: (max(floor, *free_from[m]), m))
        servers = servers[:full]
        if rest:

            def key(m: int, rest: int = rest, floor: float = floor) -> tuple:
                at = max(floor, sorted(free_from[m])[rest - 1])
                spare = sum(t <= at for t in free_from[m]) if best_fit else 0
                return (at, spare, m)

            others = [m for m in range(len(free_from)) if m not in servers]
            servers.append(min(others, key=key))
        frees = [sorted(free_from[m])[n - 1] for m, n in zip(servers, take, strict=True)]
        start = max([job.arrival_s, *frees])
        mapping = map_job(instance.cluster, config, take, 0)
        finish = start + job.iterations * mapping.alpha_s
        for m, n in zip(servers, take, strict=True):
            for k in sorted(range(g), key=lambda k: free_from[m][k])[:n]:
                free_from[m][k] = finish
        runs[job.id] = JobRun(start, tuple(servers), mapping.counts)
    return AsrptSchedule(runs)


@cache
def _crowded(seed: int, jobs: int = 16) -> AsrptInstance:
    """``tiny(seed)``'s cluster and configurations with ``jobs`` jobs arriving close
    together (so that jobs wait and the search has windows to improve)."""
    return crowded(seed, jobs, rng_seed=1000 + seed, iterations=(5, 30))


def _improve(instance: AsrptInstance, seed: int = 0, **params):
    options = RunOptions(time_limit_s=60, seed=seed, params=params)
    return run_method("asrpt", "improve", instance, options, raise_errors=True)


# --------------------------------------------------------------------------- decoder


@pytest.mark.parametrize("best_fit", [False, True])
def test_decoder_equals_reference(best_fit):
    instances = [GENERATORS[p](s) for p in GENERATORS for s in range(30)]
    instances += [_crowded(s) for s in range(5)]
    for instance in instances:
        fast = packed_list_schedule(instance, best_fit=best_fit)
        assert fast.runs == _reference_packed(instance, best_fit).runs


def test_decoder_any_order_is_valid_and_its_flow_is_the_evaluators():
    for seed in range(8):
        instance = _crowded(seed)
        decoder = PackedDecoder(instance, best_fit=seed % 2 == 1, seed=seed)
        order = [int(j) for j in make_rng(seed).permutation(instance.num_jobs)]
        placed = decoder.decode(order)
        evaluation = evaluate(instance, decoder.schedule(order, placed))  # raises if invalid
        flow = math.fsum(decoder.flow_s(j, p) for j, p in zip(order, placed, strict=True))
        assert flow == pytest.approx(evaluation.total_flow_s, rel=1e-12)


# --------------------------------------------------------------------------- improve


def _start_objectives(instance: AsrptInstance) -> dict[str, float]:
    """Every start of ``improve`` computed on its own (the pipeline, the packed lists)."""
    out = {
        name: run_method("asrpt", name, instance, RunOptions(params={"theory": False}
                         if name.startswith("asrpt") else {}), raise_errors=True).objective
        for name in POLICY_STARTS
    }  # fmt: skip
    for best_fit in (False, True):
        schedule = packed_list_schedule(instance, best_fit=best_fit)
        out[f"packed[{best_fit}]"] = evaluate(instance, schedule).total_completion_s
    return out


@pytest.mark.parametrize(
    "instance",
    [tiny(s) for s in range(4)]
    + [tiny_comm(s) for s in range(4)]
    + [_crowded(s) for s in range(3)],
)
def test_improve_never_worse_than_any_start(instance):
    result = _improve(instance)
    assert result.status is Status.FEASIBLE
    starts = _start_objectives(instance)
    assert result.objective <= min(starts.values()) * (1 + RTOL), (result.objective, starts)
    info = result.info
    assert info["lns_improvement"] >= 0 and info["windows_gain"] >= 0
    assert info["search_stopped"] == "converged" and "stopped" not in info


def test_improve_lns_gains_on_crowded_instances():
    """The search itself moves: on the crowded instances the LNS list beats every policy and
    packed start (the offline work-conserving starts are often locally optimal there
    already: tests/test_asrpt_greedy.py)."""
    starts = ",".join((*POLICY_STARTS, "packed", "packed_best_fit"))
    gains = [_improve(_crowded(s), starts=starts).info for s in range(3)]
    assert all(info["winner"] == "lns" and info["windows_accepted"] > 0 for info in gains)


#: Measured with the defaults (benchmarks/results/asrpt.md, "asrpt improvement method"):
#: improve equals the proven optimum on 75 of tiny seeds 0-99 and 72 of tiny-comm seeds
#: 0-99; on seeds 0-11 below, on this many of the 24.
OPTIMAL_OF_24 = 19


def test_improve_reaches_the_optimum_on_most_tiny_instances():
    equal = 0
    for preset, make in GENERATORS.items():
        for seed in range(12):
            instance = make(seed)
            exact = solve_exact(instance, time_limit_s=60)
            assert exact.status is Status.OPTIMAL, (preset, seed)
            optimum = evaluate(instance, exact.schedule).total_completion_s
            objective = _improve(instance).objective
            assert objective >= optimum * (1 - RTOL), (preset, seed)  # never below OPT
            equal += objective <= optimum * (1 + RTOL)
    assert equal >= OPTIMAL_OF_24


def test_same_seed_same_schedule():
    instance = _crowded(1, jobs=24)
    first, second = _improve(instance, seed=5), _improve(instance, seed=5)
    assert first.info["windows_accepted"] > 0
    assert schedule_to_json(first.schedule) == schedule_to_json(second.schedule)
    capped = [_improve(instance, seed=5, max_windows=7) for _ in range(2)]
    assert (
        capped[0].info["search_stopped"] == "max_windows" and capped[0].info["windows_tried"] == 7
    )
    assert schedule_to_json(capped[0].schedule) == schedule_to_json(capped[1].schedule)


def test_starts_subset_and_time_limit():
    instance = _crowded(2)
    result = _improve(instance, starts="spjf, packed", max_windows=3)
    assert set(result.info["start_flow_s"]) == {"spjf", "packed"}
    policy_only = _improve(instance, starts="wcs_subtime", max_windows=3)
    assert policy_only.info["list_start"] == "wcs_subtime order"
    cut = run_method("asrpt", "improve", instance, RunOptions(time_limit_s=1e-3), raise_errors=True)
    assert cut.time_limit_hit and cut.status is Status.FEASIBLE
    assert cut.info["search_stopped"] == "time limit"
    assert "window search at the time limit" in cut.info["stopped"]


def test_a_start_the_limit_skipped_or_cut_is_a_time_limit():
    """A policy runner that says the limit cut ``spjf`` and stopped ``spwf`` (no
    schedule): ``improve``'s search converges, yet its answer depended on the clock."""
    instance = _crowded(2)

    def run_policy(name, seed, deadline):
        if name == "spwf":
            raise TimeLimitReached("stopped")
        return packed_list_schedule(instance), "spjf's model at the time limit"

    settings = ImproveSettings(starts=("packed", "spjf", "spwf"), max_windows=2)
    _, info, cut = improve(instance, settings, run_policy, Deadline(60))
    assert cut and info["search_stopped"] == "max_windows"
    assert info["starts_skipped"] == ["spwf"]
    assert info["stopped"] == (
        "spjf's model at the time limit; the starts skipped at the time limit: spwf"
    )
    settings = ImproveSettings(starts=("packed", "spjf"), max_windows=2)
    _, info, cut = improve(instance, settings, lambda *_: (packed_list_schedule(instance), ""),
                           Deadline(60))  # fmt: skip
    assert not cut and "stopped" not in info


@pytest.mark.parametrize(
    "param", ["starts=\"foo\"", "starts=\"\"", "starts=\"spjf,bar\"", "window=1", "window=8",
              "horizon=-1", "max_windows=-2"]
)  # fmt: skip
def test_bad_parameters_are_one_line_errors(tmp_path, capsys, param):
    path = tmp_path / "tiny.json"
    tiny(0).save(path)
    code = main(["solve", "asrpt", str(path), "--method", "improve", "--param", param])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("ddlsched: error:"), err


def test_parse_starts():
    assert parse_starts("all") == parse_starts(" all ")
    assert parse_starts("spjf,packed,spjf") == ("spjf", "packed")
    with pytest.raises(DdlschedError, match="unknown start foo"):
        parse_starts("foo")
