"""Method ``improve`` of family ``dmlrs`` (ours; not a paper heuristic).

Paper: Yu et al., IEEE TNSE 2022: DMLRS, Eqs. 3-7, maximise the
total utility ``sum_i u_i(t~_i - a_i)`` of the jobs that finish by ``T``;
spec ``docs/families/dmlrs.md``. Every choice here is ours. The method starts
from the best schedule the family's heuristics give and improves it by a
large-neighbourhood search (LNS) within the method's time limit; every
candidate is scored by the family's evaluator
(:func:`~ddlsched.problems.dmlrs.evaluate`), and the pipeline re-evaluates
the answer like every method's.

Starts (parameter ``starts``): ``pd_ors`` and ``oasis`` (default parameters,
the run's seed), ``fifo`` and ``drf``, each evaluated; a start the time limit
stops is skipped (``info['starts_skipped']``). Dorm is not a start (a MILP
per slot: not cheap). The best start is the incumbent; its accepted jobs
keep their allocations, the allocations of its unfinished jobs (which earn
0) are dropped.

Insertion (the LNS's repair, a list re-insertion rather than a MILP: ours;
:mod:`ddlsched.heuristics.dmlrs_insert`). A job is inserted into the capacity the other
jobs leave free, per machine and slot, by the rule ``insert_plan``: ``samples`` (default), the
earliest completion (from ``a_i``, slot by slot the better in samples of the internal
mode on one machine and the external mode); ``lean``, the earliest plan or a
lean one (the internal mode on one machine as long as the job can still finish by a
completion slot, the earliest plan's choice after), whichever maximises the job's
utility minus ``lean_price`` times the incumbent's utility per machine-slot times the
machine-slots the plan holds; ``both``, the first pass run with each rule from the same
schedule, the better kept, then the windows alternating between the two (even windows
``samples``, odd ``lean``). A job that cannot finish by ``T`` is not inserted. ``lean``
narrows the widest certified intervals by 3-6 points but loses about 4 % on two of Fig. 6's
three 40-machine seeds (``benchmarks/dmlrs_eject.py``), hence not the default.

LNS. First every job not in the incumbent is inserted once, in decreasing
order of its best utility ``u_i(d_min_i - 1)`` (an insertion only adds a
finishing job: the utility cannot fall). Then each window frees about a
third of ``window`` (at least one) scheduled jobs, drawn uniformly, and the
rest among the unscheduled jobs that can finish by ``T``, drawn with
weights ``u_i(d_min_i - 1)`` (Gumbel top-k, the run's seed), and re-inserts
the freed jobs in the order of ``log u_i(d_min_i - 1) + Gumbel`` keys. The
window is accepted when the evaluator's total utility rises (relative
1e-12), else undone. The search stops after ``patience`` windows in a row
without a gain (``converged``), at ``max_windows`` windows, or at the time
limit (``time limit``: the answer then depends on the machine's speed, so
``time_limit_hit`` is set). Same seed, same stop reason other than the time
limit: same schedule.

Ejection moves (ours; ``eject.moves``, 0 by default: off, and then every answer is
the one above; :mod:`ddlsched.heuristics.dmlrs_eject`). After the window search stops
(sharing its time), passes of the move force unscheduled jobs in, each forced job's
colliding jobs evicted and re-inserted, a few LNS windows repairing the rest; after a
pass that kept a move the window search runs again (``patience`` from there), then
another pass, until a pass keeps nothing (``converged``), the budget of moves is spent
(``moves``) or the time limit (``time limit``). ``info`` adds ``eject_moves_tried`` /
``eject_moves_kept``, ``eject_windows`` (repair windows run), ``eject_jobs_evicted``,
``eject_taken_in`` (the job each kept move forced in) and ``eject_stopped``.

MIP repair (ours; parameter ``mip_windows``, 0 by default: off, and then
every answer is the one above). After the greedy LNS stops (it gets half of
the time then, not 90 %; the MIP phase runs on what is left even when the
greedy search used its half), ``mip_windows`` more windows are repaired by a MILP
instead of the insertion: each frees about half of ``mip_window`` (at least
one) scheduled jobs, drawn uniformly, and the rest among the unscheduled
jobs that can finish by ``T``, weighted as above (the same random stream,
so the run's seed fixes them); the repair (``repair``, handed in by the
family: this layer knows no solver; :mod:`ddlsched.models.dmlrs_mip_repair`)
solves the compact MILP of ``exact`` over those jobs on the capacity every
other job leaves, per machine and slot, with the freed jobs' plans as a MIP
start, and may complete a job later than the insertion would. Its plans
replace the freed jobs' when the evaluator's total utility rises (relative
1e-12); a schedule the evaluator refuses is undone like a worse one. The
phase stops after ``mip_windows`` windows (``mip_windows``), when no job is
left to free (``converged``), or at the time limit (``time limit``: a solve
the limit stopped ends the phase after its window). ``info`` adds
``greedy_utility`` (after the greedy LNS), ``mip_windows_tried`` /
``mip_windows_accepted``, ``mip_solves`` (how each repair ended: ``optimal``,
``node limit``, ``time limit``, ``no solution``, ``no job``) and
``mip_stopped``.

The answer is the better of the LNS schedule and the best start, so never
worse than the best start. ``info``: ``start_utility`` per start,
``best_start``, ``insertion_utility`` (after the first insertion pass),
``lns_utility``, ``improvement`` (``final / best start - 1``), ``winner``
(``lns`` or the start's name), ``windows_tried`` / ``windows_accepted``,
``search_stopped`` (why the search ended); ``stopped`` only when the time limit
cut the search (what it cut, as every method says it).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ddlsched.deadline import Deadline
from ddlsched.errors import (
    DdlschedError,
    InfeasibleScheduleError,
    NoScheduleFound,
    SolverError,
    TimeLimitReached,
)
from ddlsched.heuristics.dmlrs_eject import EjectSettings, EjectStats, eject_pass
from ddlsched.heuristics.dmlrs_insert import INSERT_PLANS, Inserter, PlanEntry
from ddlsched.params import parse_name_list
from ddlsched.problems.dmlrs import DmlrsInstance, DmlrsSchedule, evaluate, fastest_slots
from ddlsched.problems.dmlrs_schedule import schedule_from_counts
from ddlsched.rng import make_rng

__all__ = ["STARTS", "ImproveSettings", "WindowRepair", "improve", "parse_starts"]

log = logging.getLogger(__name__)

STARTS = ("pd_ors", "oasis", "fifo", "drf")
_RTOL = 1e-12
#: ``run_start(name, deadline)``: a start heuristic's schedule (raises TimeLimitReached).
StartRunner = Callable[[str, Deadline], DmlrsSchedule]
_Inserter = Inserter  # the name the tests and benchmarks knew
#: ``repair(jobs, reserved, current, deadline)``: plans for some of ``jobs`` (the others
#: rejected) on the capacity left beside ``reserved`` (per slot, ``(T + 1, H, R)``), given
#: the freed jobs' ``current`` plans, or ``None``; and how the solve ended. Raises
#: TimeLimitReached when the deadline stops it without an answer.
WindowRepair = Callable[
    [Sequence[int], np.ndarray, dict[int, list[PlanEntry]], Deadline],
    tuple[dict[int, list[PlanEntry]] | None, str],
]


def parse_starts(text: str) -> tuple[str, ...]:
    """``all`` or a comma-separated subset of :data:`STARTS` (one-line error otherwise)."""
    return parse_name_list(text, STARTS, "starts", {"all": STARTS})


@dataclass(frozen=True)
class ImproveSettings:
    """What :func:`improve` does (module docstring)."""

    starts: tuple[str, ...] = STARTS
    window: int = 6
    patience: int = 300
    max_windows: int = 0  # 0: no cap
    seed: int = 0
    mip_windows: int = 0  # MIP-repaired windows after the greedy LNS (0: none)
    mip_window: int = 4  # jobs freed per MIP window
    eject: EjectSettings = field(default_factory=EjectSettings)  # moves 0: off
    insert_plan: str = "samples"  # one of INSERT_PLANS (module docstring)
    lean_price: float = 1.0  # times the incumbent's utility per machine-slot

    def __post_init__(self) -> None:
        if self.insert_plan not in INSERT_PLANS:
            raise ValueError(f"insert_plan must be one of {', '.join(INSERT_PLANS)}")


class _Search:
    """The incumbent's plans, the capacity they use, and the LNS (module docstring)."""

    def __init__(
        self, instance: DmlrsInstance, start: DmlrsSchedule, seed: int, rule: str = "samples"
    ) -> None:
        self.instance = instance
        self.inserter = Inserter(instance)
        self.rule = rule  # the insertion rule now ("both": set per window)
        self.lean_price = 1.0
        self.per_machine_slot = 1.0 / (instance.num_machines * instance.slots)
        self.rng = make_rng(seed)
        shape = (instance.slots + 1, instance.num_machines, len(instance.resources))
        self.used = np.zeros(shape)
        self.plans: dict[int, list[PlanEntry]] = {}
        accepted = set(start.accepted)
        for a in start.alloc:
            if a.job in accepted:
                self.plans.setdefault(a.job, []).append((a.slot, a.machine, a.workers, a.ps))
        for i, plan in self.plans.items():
            self.use(i, plan, +1.0)
        self.value = {
            i: instance.jobs[i].utility(fastest_slots(instance, i) - 1)
            for i in range(len(instance.jobs))
            if instance.jobs[i].arrival_slot + fastest_slots(instance, i) - 1 <= instance.slots
        }
        self.utility = self.score()
        self.tried = self.accepted = 0
        self.mip_tried = self.mip_accepted = 0
        self.mip_solves: dict[str, int] = {}

    def use(self, i: int, plan: Sequence[PlanEntry], sign: float) -> None:
        """Add (``sign`` +1) or remove (-1) the capacity job ``i``'s ``plan`` holds."""
        for t, h, w, s in plan:
            self.used[t, h] += sign * (self.inserter.alpha[i] * w + self.inserter.beta[i] * s)

    def schedule(self) -> DmlrsSchedule:
        entries = [(i, t, h, w, s) for i, plan in self.plans.items() for t, h, w, s in plan]
        return schedule_from_counts(list(self.plans), entries)

    def score(self) -> float:
        return evaluate(self.instance, self.schedule()).total_utility

    def insert(self, jobs: Sequence[int], deadline: Deadline | None = None) -> bool:
        """Insert ``jobs`` in this order by the insertion rule (module docstring).

        With a ``deadline``, stops between jobs once it has passed (the jobs
        inserted so far stay: each insertion only adds utility); whether it stopped.
        """
        rule = "lean" if self.rule == "both" else self.rule  # "both" outside windows
        price = self.lean_price * self.utility * self.per_machine_slot if rule == "lean" else 0.0
        for i in jobs:
            if deadline is not None and deadline.expired():
                return True
            plan = self.inserter.choose(i, self.used, rule, price)
            if plan is not None:
                self.plans[i] = plan
                self.use(i, plan, +1.0)
        return False

    def first_pass(self, deadline: Deadline) -> bool:
        """Insert every unscheduled job that can finish, best utility first (only gains).

        Whether the ``deadline`` cut it (between jobs; with ``both``, the better of
        the two plans' passes so far is kept).
        """
        todo = sorted((i for i in self.value if i not in self.plans), key=lambda i: -self.value[i])
        if self.rule != "both":
            cut = self.insert(todo, deadline)
            self.utility = self.score()
            return cut
        before = self.used.copy(), dict(self.plans), self.utility
        tried = {}
        cut = False
        for rule in ("samples", "lean"):
            if cut:
                break
            self.used, self.plans, self.utility = before[0].copy(), dict(before[1]), before[2]
            self.rule = rule
            cut = self.insert(todo, deadline)
            tried[rule] = self.used, self.plans, self.score()
        self.rule = "both"
        best = "samples"
        if "lean" in tried and tried["lean"][2] > tried["samples"][2] * (1.0 + _RTOL) + _RTOL:
            best = "lean"
        self.used, self.plans, self.utility = tried[best]
        return cut

    def _gumbel_top(self, jobs: list[int], k: int, weighted: bool) -> list[int]:
        if not jobs or k <= 0:
            return []
        logs = np.array([math.log(max(self.value[i], 1e-300)) if weighted else 0.0 for i in jobs])
        keys = logs + self.rng.gumbel(size=len(jobs))
        return [jobs[p] for p in np.argsort(-keys, kind="stable")[:k]]

    def window(self, size: int) -> bool:
        """One LNS window; whether it was accepted."""
        scheduled = sorted(self.plans)
        waiting = sorted(i for i in self.value if i not in self.plans)
        n_out = min(len(scheduled), max(1, size // 3))
        removed = self._gumbel_top(scheduled, n_out, weighted=False)
        added = self._gumbel_top(waiting, size - n_out, weighted=True)
        freed = self._gumbel_top(removed + added, len(removed) + len(added), weighted=True)
        saved_used, saved_plans = self.used.copy(), dict(self.plans)
        for i in removed:
            self.use(i, self.plans.pop(i), -1.0)
        both = self.rule == "both"
        if both:
            self.rule = INSERT_PLANS[self.tried % 2]
        try:
            self.insert(freed)
        finally:
            self.rule = "both" if both else self.rule
        self.tried += 1
        utility = self.score()
        if utility > self.utility * (1.0 + _RTOL) + _RTOL:
            self.utility = utility
            self.accepted += 1
            return True
        self.used, self.plans = saved_used, saved_plans
        return False

    def _commit(self, plans: dict[int, list[PlanEntry]]) -> None:
        for i, plan in plans.items():
            self.plans[i] = plan
            self.use(i, plan, +1.0)

    def mip_window(self, size: int, repair: WindowRepair, deadline: Deadline) -> tuple[bool, str]:
        """One MIP-repaired window (module docstring): whether it was accepted and how
        the repair's solve ended (raises TimeLimitReached, the window undone)."""
        scheduled = sorted(self.plans)
        waiting = sorted(i for i in self.value if i not in self.plans)
        n_out = min(len(scheduled), max(1, size // 2))
        removed = self._gumbel_top(scheduled, n_out, weighted=False)
        added = self._gumbel_top(waiting, size - n_out, weighted=True)
        saved_used, saved_plans = self.used.copy(), dict(self.plans)
        current = {i: self.plans.pop(i) for i in removed}
        for i, plan in current.items():
            self.use(i, plan, -1.0)
        self.mip_tried += 1
        try:
            plans, how = repair(sorted(removed + added), self.used.copy(), current, deadline)
            if plans is not None:
                self._commit(plans)
                utility = self.score()
                if utility > self.utility * (1.0 + _RTOL) + _RTOL:
                    self.utility = utility
                    self.mip_accepted += 1
                    return True, how
        except InfeasibleScheduleError as exc:  # the evaluator refused it: undone
            log.info("dmlrs improve: a MIP window refused by the evaluator: %s", exc)
            how = "refused"
        except BaseException:
            self.used, self.plans = saved_used, saved_plans
            raise
        self.used, self.plans = saved_used, saved_plans
        return False, how

    def run_mip(self, settings: ImproveSettings, repair: WindowRepair, deadline: Deadline) -> str:
        """The MIP windows after the greedy LNS; why they stopped."""
        while True:
            if deadline.expired():
                return "time limit"
            if self.mip_tried >= settings.mip_windows:
                return "mip_windows"
            if not self.value and not self.plans:
                return "converged"
            try:
                _, how = self.mip_window(settings.mip_window, repair, deadline)
            except TimeLimitReached:
                self.mip_solves["time limit"] = self.mip_solves.get("time limit", 0) + 1
                return "time limit"
            self.mip_solves[how] = self.mip_solves.get(how, 0) + 1
            if how == "time limit":
                return "time limit"

    def run(self, settings: ImproveSettings, deadline: Deadline) -> str:
        since_gain = 0
        while True:
            if deadline.expired():
                return "time limit"
            if settings.max_windows and self.tried >= settings.max_windows:
                return "max_windows"
            if since_gain >= settings.patience or not self.value:
                return "converged"
            since_gain = 0 if self.window(settings.window) else since_gain + 1


def _run_eject(
    search: _Search, settings: ImproveSettings, deadline: Deadline, stats: EjectStats
) -> tuple[str, str]:
    """Ejection passes after the window search, the window search again after every
    pass that kept a move (module docstring); why each stopped."""
    stopped = "converged"
    while True:
        how = eject_pass(search, settings.eject, settings.window, stats, deadline)
        if how != "kept":
            return stopped, how
        stopped = search.run(settings, deadline)
        if stopped == "time limit":
            return stopped, "time limit"


def _starts(
    instance: DmlrsInstance, settings: ImproveSettings, run_start: StartRunner, deadline: Deadline
) -> tuple[dict[str, DmlrsSchedule], dict[str, float], list[str], dict[str, str]]:
    """Every start's schedule and utility, the starts the limit stopped, and those that
    cannot run on ``instance`` (name -> why: OASiS refuses price parameters with
    ``U^r <= L``; recorded, not fatal, as long as one start ran)."""
    schedules: dict[str, DmlrsSchedule] = {}
    skipped = []
    refused: dict[str, str] = {}
    for name in settings.starts:
        try:
            schedules[name] = run_start(name, deadline.sub(0.5))
        except TimeLimitReached:
            skipped.append(name)
        except SolverError:  # the software or a solver failed: not the instance's doing
            raise
        except DdlschedError as exc:  # this start cannot run on this instance
            refused[name] = str(exc)
            log.info("dmlrs improve: start %s skipped: %s", name, exc)
    if not schedules:
        if skipped:
            raise TimeLimitReached("the time limit stopped every start of improve")
        reasons = "; ".join(f"{name}: {why}" for name, why in refused.items())
        raise NoScheduleFound(f"no start of improve can run on this instance ({reasons})")
    utility = {name: evaluate(instance, s).total_utility for name, s in schedules.items()}
    return schedules, utility, skipped, refused


def improve(
    instance: DmlrsInstance,
    settings: ImproveSettings,
    run_start: StartRunner,
    deadline: Deadline,
    repair: WindowRepair | None = None,
) -> tuple[DmlrsSchedule, dict[str, Any], bool]:
    """The improved schedule, its ``info`` and whether the time limit stopped the search.

    ``run_start(name, deadline)`` runs a start heuristic (the family's; this layer
    cannot import it) and raises :class:`~ddlsched.errors.TimeLimitReached` at the
    deadline. ``repair`` solves the MIP windows (needed when ``settings.mip_windows``
    is positive; module docstring).
    """
    use_mip = settings.mip_windows > 0
    if use_mip and repair is None:
        raise ValueError("improve: mip_windows > 0 needs a repair")
    schedules, start_utility, skipped, refused = _starts(instance, settings, run_start, deadline)
    best_start = max(start_utility, key=lambda name: (start_utility[name], -STARTS.index(name)))
    search = _Search(instance, schedules[best_start], settings.seed, settings.insert_plan)
    search.lean_price = settings.lean_price
    # the rest (10 %): the answer's evaluation; with MIP windows, half to each phase
    greedy_deadline = deadline.sub(share=0.5 if use_mip else 0.9)
    first_cut = search.first_pass(greedy_deadline)
    inserted = search.utility
    stopped = "time limit" if first_cut else search.run(settings, greedy_deadline)
    ejected = EjectStats()
    eject_stopped = ""
    if settings.eject.moves > 0 and stopped != "time limit":
        stopped, eject_stopped = _run_eject(search, settings, greedy_deadline, ejected)
    greedy_utility = search.utility
    mip_stopped = ""
    if use_mip and repair is not None and not deadline.expired():
        # also after the greedy search spent its half: the MIP phase gets the rest
        mip_stopped = search.run_mip(settings, repair, deadline.sub(share=0.8))
    base = start_utility[best_start]
    if search.utility > base:
        winner, schedule, answer = "lns", search.schedule(), search.utility
    else:
        winner, schedule, answer = best_start, schedules[best_start], base
    info: dict[str, Any] = {
        "start_utility": start_utility,
        "best_start": best_start,
        "insertion_utility": inserted,
        "lns_utility": search.utility,
        "improvement": answer / base - 1.0 if base > 0 else 0.0,
        "winner": winner,
        "windows_tried": search.tried,
        "windows_accepted": search.accepted,
        "search_stopped": stopped,
    }
    if settings.eject.moves > 0:
        info.update(
            eject_moves_tried=ejected.tried,
            eject_moves_kept=ejected.kept,
            eject_windows=ejected.windows,
            eject_jobs_evicted=ejected.evicted,
            eject_taken_in=ejected.taken_in or [],
            eject_stopped=eject_stopped or "not run: the window search reached the time limit",
        )
    if use_mip:
        info.update(
            greedy_utility=greedy_utility,
            mip_windows_tried=search.mip_tried,
            mip_windows_accepted=search.mip_accepted,
            mip_solves=dict(sorted(search.mip_solves.items())),
            mip_stopped=mip_stopped or "not run: no time left after the greedy search",
        )
    if first_cut:
        info["stopped"] = "the first insertion pass at the time limit (no window tried)"
    elif stopped == "time limit":
        share = " (its half, with MIP windows)" if use_mip else ""
        info["stopped"] = f"the window search at the time limit{share} after {search.tried} windows"
    if eject_stopped == "time limit":
        info["stopped"] = (
            f"the ejection moves at the time limit after {ejected.tried} of "
            f"{settings.eject.moves} moves"
        )
    if mip_stopped == "time limit":
        info["stopped"] = (
            f"the MIP windows at the time limit after {search.mip_tried} of "
            f"{settings.mip_windows} windows"
        )
    if skipped:
        info["starts_skipped"] = skipped
    if refused:
        info["starts_refused"] = refused
    log.info("dmlrs improve: %s (%s)", winner, stopped)
    return schedule, info, "time limit" in (stopped, eject_stopped, mip_stopped)
