"""Event-driven trace simulator for Muri and the schedulers it was compared with.

Paper: Zhao et al., SIGCOMM 2022, Sec. 4.2 ("Optimizing for average JCT"),
5.1 and 6.1/6.3; spec ``docs/families/muri_sim.md`` ("Scheduler and simulator").
Policies (:data:`POLICIES`): ``srtf``, ``srsf`` (known durations), ``tiresias``
(discretised 2D-LAS), ``themis`` (finish-time fairness), ``antman`` (GPU
sharing, guaranteed / opportunistic jobs), ``muri-s`` (SRSF order +
interleaving) and ``muri-l`` (2D-LAS order + interleaving).

The default :class:`SimConfig` is the spec's ``reference`` configuration: a
model of the authors' simulator (github Rivendile/Muri, ``simulator/``,
commit 4e69a78), which produced the published numbers. Its behaviour was
established by reading ``run_sim.py`` (the per-policy event loops
``shortest_first_sim_jobs``, ``dlas_sim_jobs``, ``antman_sim_jobs``,
``themis_sim_jobs``, ``multi_resource_blossom_same_sim_jobs``), ``jobs.py``
(trace parsing: ms -> s, the 1.015 solo slowdown and the 1.33/1.5/1.37
interference factors), ``matching.py`` (``_Packing.calc_iteration_time``: the
staged period recurrence; ``_Blossom_Same``: repeated matching),
``switch.py`` / ``node.py`` / ``cluster.py`` (MS-YARN placement, AntMan's
GPU-level state) and ``log.py`` (JCT = end - submit). No code is copied; the
model is re-implemented with numpy arrays so that trace 2 (5,755 jobs) runs
in seconds per policy (Muri-S/L: 34-39 s with the original's Blossom, the
``reference`` default, compiled with numba; 13-23 s with
``matching="types"``; see ``benchmarks/results/muri.md``). Every knob of the model is a field of
:class:`SimConfig`; ``SimConfig.preset("paper")`` switches to the paper's
prose (Eq. 3 period at the best offsets of ``k = 3`` resources with groups of
at most 3 jobs and no interference factor, Eq. 4 edge weights, Themis'
isolated time in seconds, jobs admitted at 360 s round boundaries; the
original's start overhead is kept, since the paper's testbed pays restarts
too).

Layout: :mod:`~ddlsched.sim.muri.state` (job arrays, MS-YARN placement,
measurements), :mod:`~ddlsched.sim.muri.events` (the one event loop, used by
every policy), :mod:`~ddlsched.sim.muri.policy` (the :class:`Policy`
protocol between them), one module per policy
(:mod:`~ddlsched.sim.muri.shortest`, :mod:`~ddlsched.sim.muri.tiresias`,
:mod:`~ddlsched.sim.muri.themis`, :mod:`~ddlsched.sim.muri.antman`,
:mod:`~ddlsched.sim.muri.muri`), Muri's grouping
(:mod:`~ddlsched.sim.muri.grouping`), the time models
(:mod:`~ddlsched.sim.muri.timing`) and the matchings
(:mod:`~ddlsched.sim.muri.matching`). The configuration, the schedule a run
produces and its evaluator live in :mod:`ddlsched.problems.muri_sim`:
:func:`simulate_schedule` returns a :class:`~ddlsched.problems.muri_sim.TraceSchedule`,
:func:`simulate` evaluates it into :class:`SimMetrics`.

Reference model, per policy (times in seconds):

* A job's solo iteration time is ``iteration_time_ms x 1.015 / 1000``; alone
  it needs ``iterations x`` that. At every event each running job loses
  ``min(overhead, time since the last event)`` of progress (overhead per
  model and GPU count, :data:`START_OVERHEAD_S`; a Muri group loses the sum
  of its members'); the last segment up to a completion is not charged.
* Events: arrivals (jobs whose submit times are within ``rel 1e-9`` of an
  earlier event's time join it, as the original's ``search_dict_list``
  does) and predicted completions (grouped the same way, except Tiresias,
  which takes the exact minimum, and AntMan, which also merges completions
  within 1e-4 s of the first). Muri merges an arrival and a completion
  within 1e-4 s; the other loops merge them only when equal.
* Placement (SRTF, SRSF, Themis, Muri): MS-YARN on the 8 x 8 cluster: a job
  of at most 8 GPUs on the lowest-numbered node with enough free GPUs; a
  larger one on ``g // 8`` entirely free nodes. Jobs that do not fit are
  skipped (backfilling). CPUs and memory of the original never bind on
  these traces and are not modelled. Tiresias counts free GPUs only.
* Ties in every sort are broken by the job list's previous order (Python's
  stable sort on a list the original keeps across events); this is
  reproduced, and so is the original's floating-point order where it
  matters: attained time is updated as ``(executed + t) - last_check``
  (the other order leaves a Tiresias job of trace 3' at
  1624.9999999999995 s of a 1625 s threshold, and its queue-jump event
  repeats forever). With this the deterministic baselines give the
  published raw numbers to ~1e-10.

Choices and differences, written down:

* Muri's matching (``matching``): the original runs its own weighted
  Blossom (``matching.py``) on the complete graph of the candidate nodes of
  each GPU bucket, in list order, with directed float weights (node ``u``'s
  jobs then ``v``'s). Which of several maximum-weight matchings it returns
  is decided by that algorithm's scan orders and float comparisons (and it
  stops early when a label comes within relative 1e-5 of the dual step), and
  the published numbers depend on it. ``reference`` (default of the
  ``reference`` preset) re-implements that Blossom step for step
  (:mod:`ddlsched.sim.muri.matching.blossom`), memoised by the sequence of node
  types: with it Muri-S on trace 3 and Muri-L on trace 1 give the published
  numbers to ~1e-10 and Muri-L on trace 3 to 0.4 % (average JCT; p99 exact).
  Its O(n^3) cost is paid in compiled code (numba) from 8 nodes on: ~8 s
  per Muri policy on trace 1, 34-39 s on trace 2, 84-105 s on trace 4.
  ``types`` (``paper`` preset) solves the maximum-weight
  matching on the *types* (distinct profiles) as a b-matching: a linear
  program over Edmonds' b-matching polytope (odd-set rows added as cutting
  planes, HiGHS; an integral vertex is optimal; integer program as
  fallback), memoised by the type counts, equal-type nodes paired in list
  order (earliest with earliest), a pair weighing the larger of its two
  member orders; same maximum weight, other ties (Muri-L trace 3: +3.4 %
  average JCT, +4.4 % p99). The group's period uses the actual order
  (higher-priority job first), as the original does when it merges. The
  original also runs the matching when the candidates already fit, then
  splits every pair again; here that round is skipped
  (same outcome). Without Blossom (``blossom=False``) the original also
  changes the 4-job interference factor to 1.3/1.015; set ``interference``
  to reproduce that.
* Themis: the original solves its allocation LP with cvxpy/ECOS; its
  optimum is not unique, and the published Themis numbers depend on the
  solver's choice. Here the min-max finish-time-fairness problem is solved
  exactly by bisection on the fairness level, every job getting the
  smallest share that meets it. In ``reference`` the isolated time mixes
  units as the original does (iterations divided by a GPU share);
  ``themis_isolated_units="seconds"`` (``paper``) fixes it.
* AntMan's end-event merge loop in the original deletes from a list while
  indexing it (it raises when two merges happen); here all completions
  within 1e-4 s of the first are merged.
* Metrics: average JCT, makespan (last end time from t = 0), p99 JCT (the
  JCTs sorted ascending at index ``int(0.99 n)``, as the original's
  scripts do), time-averaged queue length (arrived, unfinished, not
  running) and GPU utilisation (allocated GPUs / all GPUs, time-averaged
  over the makespan; an AntMan GPU shared by two jobs counts once).

Imports: numba is imported only when the compiled Blossom is first needed,
highspy only when the first b-matching LP is solved; importing this package
imports neither (nor Pyomo or OR-Tools).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from functools import partial
from types import MappingProxyType

from ddlsched.deadline import Deadline
from ddlsched.errors import UnknownMethodError
from ddlsched.problems.muri_sim import SimConfig, SimMetrics, TraceSchedule, evaluate
from ddlsched.sim.muri.antman import AntMan
from ddlsched.sim.muri.events import run_events
from ddlsched.sim.muri.muri import Muri
from ddlsched.sim.muri.policy import Policy
from ddlsched.sim.muri.shortest import ShortestFirst
from ddlsched.sim.muri.state import SimState
from ddlsched.sim.muri.themis import Themis
from ddlsched.sim.muri.timing import START_OVERHEAD_S, staged_period
from ddlsched.sim.muri.tiresias import Tiresias
from ddlsched.workloads.muri_traces import MuriTrace

__all__ = [
    "POLICIES",
    "START_OVERHEAD_S",
    "Policy",
    "SimConfig",
    "SimMetrics",
    "simulate",
    "simulate_schedule",
    "staged_period",
]

log = logging.getLogger(__name__)

#: Every policy: name -> factory building it on a run's state (read-only, in this order).
POLICIES: Mapping[str, Callable[[SimState], Policy]] = MappingProxyType(
    {
        "srtf": partial(ShortestFirst, by_service=False),
        "srsf": partial(ShortestFirst, by_service=True),
        "tiresias": Tiresias,
        "themis": Themis,
        "antman": AntMan,
        "muri-s": partial(Muri, know_duration=True),
        "muri-l": partial(Muri, know_duration=False),
    }
)


def simulate_schedule(
    trace: MuriTrace,
    policy: str,
    config: SimConfig | None = None,
    deadline: Deadline | None = None,
) -> TraceSchedule:
    """Run ``policy`` on ``trace``: what every job did, in trace file order.

    ``deadline`` (``None``: unlimited) is checked at every event; when it
    passes, :class:`~ddlsched.errors.TimeLimitReached` is raised.
    """
    factory = POLICIES.get(policy)
    if factory is None:
        raise UnknownMethodError(f"unknown policy {policy!r} (choose from {', '.join(POLICIES)})")
    config = config or SimConfig()
    started = time.perf_counter()
    state = SimState(trace, config)
    run_events(state, factory(state), deadline, f"simulating {policy} on {trace.name}")
    return state.to_schedule(policy, started)


def simulate(
    trace: MuriTrace,
    policy: str,
    config: SimConfig | None = None,
    deadline: Deadline | None = None,
) -> SimMetrics:
    """Run ``policy`` on ``trace`` and return its metrics (see the module docstring)."""
    metrics = evaluate(None, simulate_schedule(trace, policy, config, deadline))
    log.info(
        "%s on %s: avg JCT %.6g s, makespan %.6g s, p99 %.6g s (%d events, %.2f s)",
        policy,
        trace.name,
        metrics.average_jct_s,
        metrics.makespan_s,
        metrics.p99_jct_s,
        metrics.events,
        metrics.runtime_s,
    )
    return metrics
