"""The event-driven simulator of family ``asrpt``: one event loop for A-SRPT and the baselines.

Paper: "Prediction-Assisted Online Distributed Deep Learning Workload
Scheduling in GPU Clusters" (Luo, Liu, Lee, Shroff), Sec. IV-C (Algorithm 1) and
Sec. V-A-1-d; spec ``docs/families/asrpt.md``, sections "The event loop",
"Baselines (Sec. V-A-1-d)" and "Schedule and evaluator (Eqs. 1-3, 8)". The policies
are plug-ins (:mod:`ddlsched.heuristics.asrpt`); this module runs them.

Algorithm 1 is written in slots and, read literally, re-reads the virtual
machine (Line 2) only when ``pending_queue`` is empty; as the spec says, we
implement its intent in continuous time. Events:

* real completions: job ``i`` started at ``t_i`` with ``alpha_i`` ends at
  ``t_i + n_i alpha_i``, computed exactly as the evaluator does
  (:func:`ddlsched.problems.asrpt_schedule.evaluate`), so the simulator's totals are
  the evaluator's;
* arrivals, in groups of equal arrival time;
* the policy's own events (:meth:`~ddlsched.heuristics.asrpt_policy.OnlinePolicy.next_event_s`):
  A-SRPT's virtual completions and delay-window ends.

At an event instant ``t`` (the earliest pending event) the loop releases
the GPUs of the jobs ending at ``t`` and then calls the policy in the
spec's order: real completions, arrivals, virtual completions, delay
deadlines (acted on at the start of ``schedule``), then scheduling, which
may start several jobs at ``t``. "Equal times" means equal floats: no
tolerance, since the evaluator checks capacity over half-open intervals
``[t_i, C_i)`` on the exact floats, and a job may use GPUs freed at ``t``
only if their holder's finish is exactly ``t``. (The virtual machine's lazy
progress ``remaining - (t - clock)`` may, by rounding, put its next
completion a hair before the current instant; that event is then taken at
the current instant, the completion time itself kept as computed, as
:func:`ddlsched.heuristics.srpt.srpt_completion_times` computes it.)

Per event the loop does ``O(log I)`` heap work plus the policy's calls;
the deadline is checked at every event instant (a clock read). The
returned :class:`~ddlsched.problems.asrpt_schedule.AsrptSchedule` has a run per job
(instance order): start, the selected servers in selection order and
Heavy-Edge's ``counts[s][k]`` on the ``k``-th of them. Its ``info``:

* ``policy``; ``events``: event instants processed (several events at one
  time count once); ``scheduling_time_s``: wall time spent in the policy's
  calls (its bookkeeping of completions, arrivals and the virtual machine,
  and its decisions, Heavy-Edge included), ``mean_scheduling_time_s`` that
  per job; ``total_completion_s``: ``sum_i C_i`` as computed here
  (``math.fsum``, equal to the evaluator's);
* the policy's decision counts: for A-SRPT ``comm_heavy_jobs``,
  ``started_immediately``, ``delays_opened``, ``started_on_improvement``,
  ``started_at_deadline``, ``started_after_deadline`` and
  ``delay_wait_s`` and ``virtual_total_completion_s`` (``OPT_A~1``); see
  :mod:`ddlsched.heuristics.asrpt` for the definitions and every choice the
  spec leaves open;
* the policy's diagnostics, given every job's start and finish: for A-SRPT
  ``eligibility``, the hold-back time (in all, and while enough GPUs were
  idle; per job on small instances), the queueing and running time, the
  placements' slowdown, the predicted / true virtual work and the
  utilisation (:mod:`ddlsched.heuristics.asrpt_diagnostics` defines each);
  the baselines the same with eligibility at arrival.

The virtual completion times themselves (the earliest start of each job
under A-SRPT) are :func:`ddlsched.heuristics.asrpt_policy.virtual_completion_times`.
"""

from __future__ import annotations

import heapq
import math
import time

from ddlsched.deadline import Deadline
from ddlsched.errors import DdlschedError
from ddlsched.heuristics.asrpt import POLICIES as _POLICIES
from ddlsched.heuristics.asrpt import FreeGpus, make_policy
from ddlsched.heuristics.asrpt_policy import OnlinePolicy, Start
from ddlsched.problems.asrpt import AsrptInstance
from ddlsched.problems.asrpt_schedule import AsrptSchedule, JobRun

__all__ = ["POLICIES", "run_policy", "simulate"]

POLICIES: tuple[str, ...] = _POLICIES


def simulate(
    instance: AsrptInstance,
    policy: str,
    *,
    delay_factor: float = 1.0,
    comm_heavy: float = 1.5,
    delay_blocks: bool = True,
    eligibility: str = "virtual",
    server_selection: str = "most_free",
    seed: int = 0,
    deadline: Deadline | None = None,
) -> AsrptSchedule:
    """Replay ``instance`` online under ``policy`` (one of :data:`POLICIES`).

    ``delay_factor`` (tau), ``comm_heavy`` (Line 8's threshold),
    ``delay_blocks`` and ``eligibility`` (``virtual``: Algorithm 1;
    ``arrival``: ours) apply to ``asrpt`` and ``asrpt_perfect``;
    ``server_selection`` (``most_free``, ``least_free``, ``asrpt``) to the
    baselines, with ``comm_heavy`` as the class threshold of ``asrpt``.
    Heavy-Edge is seeded with ``seed``. Raises
    :class:`~ddlsched.errors.TimeLimitReached` when ``deadline`` passes.
    """
    plugin = make_policy(
        policy,
        instance,
        delay_factor=delay_factor,
        comm_heavy=comm_heavy,
        delay_blocks=delay_blocks,
        eligibility=eligibility,
        server_selection=server_selection,
        seed=seed,
    )
    schedule = run_policy(instance, plugin, deadline=deadline)
    info = {"policy": policy, **schedule.info}
    return AsrptSchedule(schedule.runs, info)


def run_policy(
    instance: AsrptInstance, policy: OnlinePolicy, *, deadline: Deadline | None = None
) -> AsrptSchedule:
    """The event loop (see the module docstring): run ``policy`` until every job has ended."""
    jobs = instance.jobs
    num_jobs = len(jobs)
    iterations = [job.iterations for job in jobs]
    arrival = [float(job.arrival_s) for job in jobs]
    order = sorted(range(num_jobs), key=lambda i: (arrival[i], i))
    cluster = FreeGpus(instance.cluster.servers, instance.cluster.gpus_per_server)
    running: list[tuple[float, int]] = []  # (finish, job)
    started: list[Start | None] = [None] * num_jobs
    start_s = [math.nan] * num_jobs
    finish_s = [math.nan] * num_jobs
    next_arrival = 0
    num_started = 0
    events = 0
    decision_s = 0.0
    now = -math.inf
    inf = math.inf
    perf_counter = time.perf_counter
    while True:
        t = running[0][0] if running else inf
        if next_arrival < num_jobs and arrival[order[next_arrival]] < t:
            t = arrival[order[next_arrival]]
        own = policy.next_event_s()
        if own < t:
            t = own
        if t == inf:
            break
        if t < now:  # pragma: no cover - float rounding of the virtual machine's progress
            t = now
        now = t
        events += 1
        if deadline is not None:
            deadline.check("the asrpt simulation")
        finished = []
        while running and running[0][0] == t:
            _, i = heapq.heappop(running)
            run = started[i]
            cluster.release(run.servers, run.takes)  # type: ignore[union-attr]
            finished.append(i)
        arrived = []
        while next_arrival < num_jobs and arrival[order[next_arrival]] == t:
            arrived.append(order[next_arrival])
            next_arrival += 1
        tic = perf_counter()
        if finished:
            policy.on_complete(t, finished)
        if arrived:
            policy.on_arrive(t, arrived)
        policy.on_time(t)
        starts = policy.schedule(t, cluster)
        decision_s += perf_counter() - tic
        for run in starts:
            i = run.job
            if started[i] is not None or t < arrival[i]:  # pragma: no cover - policy bug
                raise DdlschedError(f"internal: job {jobs[i].id} started twice or early")
            started[i] = run
            finish = t + iterations[i] * run.alpha_s  # C_i = t_i + n_i alpha_i (evaluator's)
            start_s[i] = t
            finish_s[i] = finish
            heapq.heappush(running, (finish, i))
            num_started += 1
    if num_started < num_jobs:  # pragma: no cover - a policy bug on a valid instance
        missing = next(jobs[i].id for i in range(num_jobs) if started[i] is None)
        raise DdlschedError(f"internal: job {missing} never started ({num_started}/{num_jobs})")
    runs = {}
    for i, job in enumerate(jobs):
        run = started[i]
        runs[job.id] = JobRun(start_s[i], run.servers, run.counts)  # type: ignore[union-attr]
    info: dict[str, object] = {
        "events": events,
        "scheduling_time_s": decision_s,
        "mean_scheduling_time_s": decision_s / num_jobs,
        "total_completion_s": math.fsum(finish_s),
    }
    info.update(policy.decision_counts())
    info.update(policy.diagnostics(start_s, finish_s))
    return AsrptSchedule(runs, info)
