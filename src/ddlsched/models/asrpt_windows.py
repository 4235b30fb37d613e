"""CP-SAT window moves after family ``asrpt``'s method ``improve`` (ours; not a paper heuristic).

A-SRPT paper: the objective is ``sum_i C_i`` (Eq. 8) under Eqs. (1)-(3);
spec ``docs/families/asrpt.md``. Every choice here is ours. The move
(:func:`cpsat_windows`) takes a feasible schedule, frees ``window``
consecutive jobs of it (by start time; ties: arrival, then id), fixes every
other job, and solves the freed jobs' start times exactly by CP-SAT against
the fixed jobs' usage; the new schedule is accepted when the family's
evaluator finds it feasible and its ``sum_i C_i`` lower (by more than 1e-9
relative). A freed job keeps its per-server GPU counts and so its run time
``n_i alpha_i`` (servers are identical); only its start, and where every
placement is equivalent its servers, change.

Model of one window (integer time, unit ``u`` = the schedule's last finish
over :data:`TIME_STEPS`): ``S_i in [.., H]`` per freed job, one fixed-size
interval each, a fixed job ``j`` held as ``[floor(t_j / u), floor(C_j / u))``
(at least one unit; floors keep fixed runs that do not meet apart); minimise
``sum_i S_i`` (Eq. 8 less constants: run times are fixed).

* ``pooled`` (every server has one GPU: a job on ``g_i`` servers runs as
  fast on any ``g_i`` of them): one cumulative of capacity ``M`` with demand
  ``g_i`` over the freed and the fixed jobs (Eq. 3 summed over the servers,
  exact here); a freed job's run is ``floor(d_i / u)`` units (at least one),
  ``S_i >= floor(r_i / u)``, so the current schedule is one of the model's
  (``floor a + floor b <= floor(a + b)``). The integer solution gives a list:
  every job by its start (the freed jobs' ``S_i u``, the fixed jobs' ``t_j``;
  ties: arrival, then id), decoded on the floats by
  :class:`~ddlsched.heuristics.asrpt_packed.PackedDecoder` (each job at the
  earliest time ``>= r_i`` at which ``g_i`` servers are free from then on).
  In order of start, the servers free at a job's start number at least
  ``g_i`` wherever the cumulative holds, so the decoded starts are the
  model's up to the rounding (and fixed jobs may move earlier).
* ``per_server`` (otherwise): a freed job keeps its servers; per server it
  uses, a cumulative of capacity ``g`` over the freed and fixed jobs' GPUs on
  it (Eq. 3). A freed job's run is ``ceil(d_i / u) + 3`` units and it starts,
  on the floats, at ``t_i = (S_i + 1.5) u`` with ``S_i >= ceil(r_i / u) - 1``:
  integer intervals that do not meet stand for real runs that do not meet
  (with half a unit to spare), so by Helly's theorem on the line every
  integer solution is a real schedule within capacity. The margins make a
  freed job that runs back to back with fixed ones unable to keep its place:
  this model is conservative.

The current start times are CP-SAT's hint. Windows holding no waiting job
(``t_i = r_i`` for all) cannot gain and are skipped uncounted. A pass slides
the window over the schedule by ``stride = max(1, window // 2)`` positions
from position 0; the order is recomputed after each accepted move. A pass
that accepts nothing is followed by one from position ``stride // 2`` (other
windows); the search stops when that one accepts nothing too (``converged``), after ``max_windows`` windows solved
(``max_windows``), or at the deadline (``time limit``). CP-SAT runs with one
worker, ``random_seed = seed`` and ``max_deterministic_time = dtime`` per
window, so the search is the same on every machine unless the deadline cuts
it. The deadline cuts it when it has passed before a window is solved, or
when it ends a window's solve: CP-SAT returned without finishing (``feasible``
or no solution) and no more than :data:`~ddlsched.solvers.cpsat.NO_TIME_S` of
the deadline is left (CP-SAT's ``max_time_in_seconds`` is what remained of the
deadline; were the deterministic budget to run out at that same moment, the
cut is still reported: the flag errs towards saying so). Either way the search
stops there (``time limit``, whatever the window count: also after the last
window and after the one that reaches ``max_windows``), the answer is the best
schedule accepted so far (a window the clock cut counts when it gains) and
``time_limit_hit`` is set. A window CP-SAT proves optimal is counted in
``info['cpsat_windows_optimal']``.

``improve`` runs the moves on its answer when its parameter ``cpsat_windows``
is positive (:func:`improve_with_windows`, wired in :mod:`ddlsched.families.asrpt`;
the heuristics layer imports no solver): the list search then gets half of the
time limit, the moves what remains; their ``info`` keys start with ``cpsat_``
and ``winner`` gains ``+cpsat`` when they improved the answer.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Any

from ddlsched.deadline import Deadline
from ddlsched.errors import InfeasibleScheduleError
from ddlsched.heuristics.asrpt_packed import PackedDecoder
from ddlsched.problems.asrpt import AsrptInstance
from ddlsched.problems.asrpt_schedule import AsrptEvaluation, AsrptSchedule, JobRun, evaluate
from ddlsched.solvers.cpsat import NO_TIME_S, CpsatOptions, solve_cpsat
from ddlsched.solvers.result import Status

__all__ = ["TIME_STEPS", "WindowSettings", "cpsat_windows", "improve_with_windows"]

log = logging.getLogger(__name__)

#: The integer model's time unit is the schedule's last finish over this many steps.
TIME_STEPS = 100_000
_RTOL = 1e-9


@dataclass(frozen=True)
class WindowSettings:
    """What :func:`cpsat_windows` does (module docstring)."""

    window: int = 30
    max_windows: int = 0  # 0: no cap
    dtime: float = 2.0
    seed: int = 0

    def __post_init__(self) -> None:
        if self.window < 2:
            raise ValueError(f"a CP-SAT window frees at least 2 jobs, got {self.window!r}")
        if not self.dtime > 0:
            raise ValueError(f"dtime must be > 0, got {self.dtime!r}")


@dataclass
class _Current:
    """The accepted schedule, its evaluation and its jobs by start time."""

    schedule: AsrptSchedule
    evaluation: AsrptEvaluation
    order: list[int]

    @classmethod
    def of(cls, instance: AsrptInstance, schedule: AsrptSchedule) -> _Current:
        evaluation = evaluate(instance, schedule)
        jobs = instance.jobs
        key = [(evaluation.start_s[i], jobs[i].arrival_s, jobs[i].id) for i in range(len(jobs))]
        return cls(schedule, evaluation, sorted(range(len(jobs)), key=key.__getitem__))

    @property
    def total_s(self) -> float:
        return self.evaluation.total_completion_s


def _usage(run: JobRun) -> dict[int, int]:
    return run.gpus_on()


class _Window:
    """One window's integer model and its decoding (module docstring)."""

    def __init__(self, instance: AsrptInstance, current: _Current, freed: list[int]) -> None:
        self.instance = instance
        self.current = current
        self.freed = freed
        ev = current.evaluation
        self.unit = max(ev.finish_s) / TIME_STEPS
        self.pooled = instance.cluster.gpus_per_server == 1
        runs = [(ev.finish_s[i] - ev.start_s[i]) / self.unit for i in freed]
        releases = [instance.jobs[i].arrival_s / self.unit for i in freed]
        if self.pooled:
            self.run_units = [max(1, math.floor(d)) for d in runs]
            self.release = [math.floor(r) for r in releases]
        else:
            self.run_units = [math.ceil(d) + 3 for d in runs]
            self.release = [math.ceil(r) - 1 for r in releases]
        self.horizon = math.floor(max(ev.finish_s) / self.unit) + 2 + sum(self.run_units)

    def _fixed_intervals(self, model: Any, servers: set[int] | None):
        """``(interval, usage by server)`` of every fixed job that can meet a freed one."""
        ev, runs, jobs = self.current.evaluation, self.current.schedule.runs, self.instance.jobs
        earliest = min(self.release)
        freed = set(self.freed)
        out = []
        for j, job in enumerate(jobs):
            if j in freed:
                continue
            start = math.floor(ev.start_s[j] / self.unit)
            end = max(start + 1, math.floor(ev.finish_s[j] / self.unit))
            if end <= earliest:
                continue
            usage = _usage(runs[job.id])
            if servers is not None and not servers.intersection(usage):
                continue
            out.append((model.new_fixed_size_interval_var(start, end - start, f"f{j}"), usage))
        return out

    def build(self):
        """The CP-SAT model and the freed jobs' start variables."""
        from ortools.sat.python import cp_model

        model = cp_model.CpModel()
        runs, jobs, ev = self.current.schedule.runs, self.instance.jobs, self.current.evaluation
        starts, intervals, usages = [], [], []
        for k, i in enumerate(self.freed):
            start = model.new_int_var(self.release[k], self.horizon, f"S{i}")
            starts.append(start)
            intervals.append(model.new_fixed_size_interval_var(start, self.run_units[k], f"w{i}"))
            usages.append(_usage(runs[jobs[i].id]))
            hint = math.floor(ev.start_s[i] / self.unit) - (0 if self.pooled else 1)
            hint = max(self.release[k], hint)
            model.add_hint(start, min(hint, self.horizon))
        cluster = self.instance.cluster
        if self.pooled:  # Eq. (3) summed over identical 1-GPU servers
            fixed = self._fixed_intervals(model, None)
            model.add_cumulative(
                intervals + [iv for iv, _ in fixed],
                [sum(u.values()) for u in usages] + [sum(u.values()) for _, u in fixed],
                cluster.servers,
            )
        else:  # Eq. (3) per server a freed job uses
            servers = set().union(*usages)
            fixed = self._fixed_intervals(model, servers)
            for m in sorted(servers):
                members = [(iv, u[m]) for iv, u in zip(intervals, usages, strict=True) if m in u]
                members += [(iv, u[m]) for iv, u in fixed if m in u]
                model.add_cumulative([iv for iv, _ in members], [d for _, d in members],
                                     cluster.gpus_per_server)  # fmt: skip
        model.minimize(sum(starts))  # Eq. (8) less the fixed runs
        return model, starts

    def schedule(self, start_units: list[int], decoder: PackedDecoder) -> AsrptSchedule:
        """The real schedule of the freed jobs' starts ``start_units`` (module docstring)."""
        jobs, runs = self.instance.jobs, dict(self.current.schedule.runs)
        if self.pooled:
            start = list(self.current.evaluation.start_s)
            for i, units in zip(self.freed, start_units, strict=True):
                start[i] = units * self.unit
            order = sorted(
                range(len(jobs)), key=lambda i: (start[i], jobs[i].arrival_s, jobs[i].id)
            )
            return decoder.schedule(order, decoder.decode(order))
        for i, units in zip(self.freed, start_units, strict=True):
            run = runs[jobs[i].id]
            runs[jobs[i].id] = JobRun(max((units + 1.5) * self.unit, jobs[i].arrival_s),
                                      run.servers, run.counts)  # fmt: skip
        return AsrptSchedule(runs)


def _waits(instance: AsrptInstance, current: _Current, freed: list[int]) -> float:
    return sum(current.evaluation.start_s[i] - instance.jobs[i].arrival_s for i in freed)


def cpsat_windows(
    instance: AsrptInstance,
    schedule: AsrptSchedule,
    settings: WindowSettings,
    deadline: Deadline,
) -> tuple[AsrptSchedule, dict[str, Any], bool]:
    """The schedule after the window moves, their ``info`` and whether the deadline cut them.

    Never worse than ``schedule`` (a move is accepted only when the evaluator's
    ``sum_i C_i`` drops); ``schedule`` must be feasible.
    """
    current = _Current.of(instance, schedule)
    before = current.total_s
    n = len(instance.jobs)
    window = min(settings.window, n)
    stride = max(1, window // 2)
    options = CpsatOptions(seed=settings.seed, workers=1, deterministic_time_s=settings.dtime)
    decoder = PackedDecoder(instance, seed=settings.seed)
    solved = accepted = optimal = passes = 0
    stopped = "converged"
    offset = 0
    while n >= 2:
        passes += 1
        accepted_before = accepted
        first = offset
        while first < n - 1 and stopped == "converged":
            freed = current.order[first : first + window]
            first += stride
            if len(freed) < 2 or _waits(instance, current, freed) <= 0:
                continue
            if settings.max_windows and solved >= settings.max_windows:
                stopped = "max_windows"
            elif deadline.expired():
                stopped = "time limit"
            else:
                solved += 1
                moved, proven, clock_cut = _solve_window(
                    instance, current, freed, options, decoder, deadline
                )
                optimal += proven
                if moved is not None:
                    current, accepted = moved, accepted + 1
                if clock_cut:  # the solve depended on the machine's speed: stop and say so
                    stopped = "time limit"
        if stopped != "converged":
            break
        if accepted == accepted_before:  # nothing kept: once more from a shifted start
            if offset or stride < 2:
                break
            offset = stride // 2
        else:
            offset = 0
    info = {
        "cpsat_windows_solved": solved,
        "cpsat_windows_accepted": accepted,
        "cpsat_windows_optimal": optimal,
        "cpsat_passes": passes,
        "cpsat_model": "pooled" if instance.cluster.gpus_per_server == 1 else "per_server",
        "cpsat_stopped": stopped,
        "cpsat_gain": 1.0 - current.total_s / before if before > 0 else 0.0,
    }
    log.info("asrpt cpsat windows: %d solved, %d accepted (%s)", solved, accepted, stopped)
    return current.schedule, info, stopped == "time limit"


def _solve_window(
    instance: AsrptInstance,
    current: _Current,
    freed: list[int],
    options: CpsatOptions,
    decoder: PackedDecoder,
    deadline: Deadline,
) -> tuple[_Current | None, bool, bool]:
    """The accepted schedule of one window (``None``: no gain), whether CP-SAT proved it
    and whether the deadline, not the deterministic budget, ended the solve (module
    docstring)."""
    window = _Window(instance, current, freed)
    model, starts = window.build()
    run = solve_cpsat(model, deadline, options)
    clock_cut = run.time_limit_hit and deadline.remaining_s() <= NO_TIME_S
    if not run.has_solution:
        return None, False, clock_cut
    proven = run.status is Status.OPTIMAL
    try:
        moved = _Current.of(instance, window.schedule([run.value(s) for s in starts], decoder))
    except InfeasibleScheduleError as exc:  # rounding on the floats: the move is dropped
        log.warning("asrpt cpsat window dropped: %s", exc)
        return None, proven, clock_cut
    if moved.total_s < current.total_s - _RTOL * max(1.0, current.total_s):
        return moved, proven, clock_cut
    return None, proven, clock_cut


def improve_with_windows(
    instance: AsrptInstance,
    schedule: AsrptSchedule,
    settings: WindowSettings,
    deadline: Deadline,
    info: dict[str, Any],
    cut: bool,
) -> tuple[AsrptSchedule, bool]:
    """``improve``'s answer after the window moves and whether a time limit cut either;
    ``info`` (``improve``'s) gains the moves' keys (module docstring)."""
    moved, moves_info, moves_cut = cpsat_windows(instance, schedule, settings, deadline)
    info.update(moves_info)
    if moves_info["cpsat_windows_accepted"]:
        info["winner"] = f"{info['winner']}+cpsat"
    if moves_cut:
        solved = moves_info["cpsat_windows_solved"]
        done = f"the CP-SAT window moves at the time limit after {solved} windows"
        info["stopped"] = "; ".join(filter(None, (info.get("stopped"), done)))
    return moved, cut or moves_cut
