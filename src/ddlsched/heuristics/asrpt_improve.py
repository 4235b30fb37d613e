"""Method ``improve`` of family ``asrpt`` (ours; not a paper heuristic).

A-SRPT paper: the objective is ``sum_i C_i`` (Eq. 8) under Eqs. (1)-(3);
spec ``docs/families/asrpt.md``. Every choice here is ours. The method starts
from the best schedule it knows and improves it by a large-neighbourhood
search (LNS) within the method's time limit; every schedule it returns is
re-evaluated by the family's evaluator in the pipeline like any method's.

Starts (parameter ``starts``): the family's policies run offline on the
instance (``asrpt``, ``asrpt_perfect``, ``spjf``, ``spwf``, ``wcs_*``, each
with its default parameters and the run's seed) and the packed list
schedules of :mod:`ddlsched.heuristics.asrpt_packed` in arrival order
(``packed``: first fit, ``packed_best_fit``), and the offline
work-conserving packed schedules of :mod:`ddlsched.heuristics.asrpt_greedy`
on the true sizes (``offline_wcs_workload``, ``offline_wcs_duration``: the
``wcs_*`` rules with ``n_i`` in place of the prediction), each evaluated;
``all`` is these. ``best_placement`` (asked for by name, or
``all+best_placement``) is the arrival-order list on each configuration's
fastest placement known (the placement ILP's, built by the family's runner:
:mod:`ddlsched.models.asrpt_best_placement`), a candidate answer and a start
order like a policy's. A
start the time limit stops is skipped (``info['starts_skipped']``); a skipped
start, and a ``best_placement`` start whose placement ILPs the limit cut (its
placements then depend on the machine's speed), set ``time_limit_hit`` and are
named in ``info['stopped']``.

Search space: priority lists decoded by
:class:`~ddlsched.heuristics.asrpt_packed.PackedDecoder` (every job on the
fewest servers, no backfilling). The first list is the best, in flow time,
of the arrival order and of each policy or offline start's start order (ties:
arrival, then id), decoded by the packed start's decoder (the better of the two when
both are started; first fit when neither is). A policy's own schedule is not
a list of this space (it splits jobs); it stays a candidate for the answer.

LNS: a window is ``window`` consecutive list positions; only windows holding
a job that waits (``t_i > r_i``) can gain. A pass visits every such window
of the current list once, in a seeded order weighted by the window's total
waiting (Gumbel keys: ``log(wait) + Gumbel``, the run's seed). Per window,
every permutation of its jobs is decoded with the rest of the list fixed
and scored on the window and the ``horizon`` positions after it (the jobs
scored are the same for every permutation); the best one, if it improves
that score, is decoded to the end of the list and accepted when the list's
total flow time drops (by more than 1e-9 relative). The decoder's state is
kept every :data:`SNAPSHOT_EVERY` positions, so a move re-decodes only the
list's tail. The search stops when a pass accepts nothing (``converged``),
at ``max_windows`` windows, or at the time limit (``time limit``; the
answer then depends on the machine's speed, so ``time_limit_hit`` is set).
Same seed, same stop reason other than the time limit: same schedule.

The answer is the better of the LNS list's schedule and the best start
(never worse than the best start). ``info``: ``start_flow_s`` per start,
``best_start``, ``list_start`` and ``list_start_flow_s``, ``lns_flow_s``,
``lns_improvement`` (``1 - final / best start``, flow time: the list start and
the windows together), ``windows_gain`` (``1 - LNS list / list start``: the
windows alone), ``winner``
(``lns`` or the start's name), ``windows_tried`` / ``windows_accepted`` /
``passes``, ``search_stopped`` (why the search ended); ``stopped`` only when the
time limit cut the search or a start (what it cut, as every method says it).
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ddlsched.deadline import Deadline
from ddlsched.errors import TimeLimitReached
from ddlsched.heuristics.asrpt_greedy import work_conserving_schedule
from ddlsched.heuristics.asrpt_packed import PackedDecoder, Placed, arrival_order
from ddlsched.params import parse_name_list
from ddlsched.problems.asrpt import AsrptInstance
from ddlsched.problems.asrpt_schedule import AsrptSchedule, evaluate
from ddlsched.rng import make_rng

__all__ = ["MODEL_STARTS", "POLICY_STARTS", "STARTS", "ImproveSettings", "improve", "parse_starts"]

log = logging.getLogger(__name__)

POLICY_STARTS = (
    "asrpt",
    "asrpt_perfect",
    "spjf",
    "spwf",
    "wcs_duration",
    "wcs_workload",
    "wcs_subtime",
)
PACKED_STARTS = ("packed", "packed_best_fit")
#: Offline work-conserving starts on the true sizes: start name -> queue order.
OFFLINE_STARTS = {"offline_wcs_workload": "workload", "offline_wcs_duration": "duration"}
STARTS = POLICY_STARTS + PACKED_STARTS + tuple(OFFLINE_STARTS)
#: Starts the family's runner builds with a solver (not in ``all``): ``best_placement``,
#: :mod:`ddlsched.models.asrpt_best_placement`.
MODEL_STARTS = ("best_placement",)
#: The decoder's state is copied every this many list positions.
SNAPSHOT_EVERY = 16
_RTOL = 1e-9
#: ``run_policy(name, seed, deadline)``: a policy's (or a model start's) schedule on the
#: instance and what the time limit cut in making it (``""``: nothing); it raises
#: :class:`~ddlsched.errors.TimeLimitReached` when the limit left no schedule.
PolicyRunner = Callable[[str, int, Deadline], tuple[AsrptSchedule, str]]


def parse_starts(text: str) -> tuple[str, ...]:
    """``all``, ``all+best_placement`` or a comma-separated subset of :data:`STARTS` and
    :data:`MODEL_STARTS` (one-line error otherwise)."""
    named = {"all": STARTS, "all+best_placement": STARTS + MODEL_STARTS}
    return parse_name_list(text, STARTS + MODEL_STARTS, "starts", named)


@dataclass(frozen=True)
class ImproveSettings:
    """What :func:`improve` does (module docstring)."""

    starts: tuple[str, ...] = STARTS
    window: int = 5
    horizon: int = 32
    max_windows: int = 0  # 0: no cap
    seed: int = 0


@dataclass
class _List:
    """A decoded priority list: placements, per-position flow, decoder snapshots."""

    order: list[int]
    placed: list[Placed]
    flows: np.ndarray
    snapshots: dict[int, np.ndarray] = field(default_factory=dict)

    @property
    def flow_s(self) -> float:
        return float(self.flows.sum())


def _decode_from(
    decoder: PackedDecoder, base: _List | None, order: list[int], first: int, stop: int
) -> tuple[list[Placed], list[float], dict[int, np.ndarray]]:
    """Decode ``order[first:stop]`` on ``base``'s state at ``first`` (a snapshot position)."""
    state = decoder.empty_state() if base is None else base.snapshots[first].copy()
    placed, flows, snapshots = [], [], {}
    for pos in range(first, stop):
        if pos % SNAPSHOT_EVERY == 0:
            snapshots[pos] = state.copy()
        where = decoder.place(state, order[pos])
        placed.append(where)
        flows.append(decoder.flow_s(order[pos], where))
    return placed, flows, snapshots


def _full(decoder: PackedDecoder, order: list[int]) -> _List:
    placed, flows, snapshots = _decode_from(decoder, None, order, 0, len(order))
    return _List(list(order), placed, np.array(flows), snapshots)


class _Search:
    """The LNS over one decoder's lists (module docstring)."""

    def __init__(self, decoder: PackedDecoder, start: _List, settings: ImproveSettings) -> None:
        self.decoder = decoder
        self.current = start
        self.settings = settings
        self.rng = make_rng(settings.seed)
        self.tried = self.accepted = self.passes = 0

    def _waits(self) -> np.ndarray:
        shapes = self.decoder.shapes
        return np.array(
            [
                p.start_s - shapes[j].arrival_s
                for j, p in zip(self.current.order, self.current.placed, strict=True)
            ]
        )

    def _window_starts(self) -> list[int]:
        w = min(self.settings.window, len(self.current.order))
        waits = self._waits()
        sums = np.convolve(waits, np.ones(w), mode="valid")  # sums[p]: positions p..p+w-1
        starts = np.flatnonzero(sums > 0)
        if not len(starts):
            return []
        keys = np.log(sums[starts]) + self.rng.gumbel(size=len(starts))
        return [int(p) for p in starts[np.argsort(-keys, kind="stable")]]

    def run(self, deadline: Deadline) -> str:
        """Passes until one accepts nothing; the reason it stopped."""
        cap = self.settings.max_windows
        while True:
            self.passes += 1
            accepted_before = self.accepted
            for first in self._window_starts():
                if deadline.expired():
                    return "time limit"
                if cap and self.tried >= cap:
                    return "max_windows"
                self.tried += 1
                if self._try_window(first, deadline):
                    self.accepted += 1
            if self.accepted == accepted_before:
                return "converged"

    def _try_window(self, first: int, deadline: Deadline) -> bool:
        cur = self.current
        n = len(cur.order)
        end = min(n, first + self.settings.window)
        scored_end = min(n, end + self.settings.horizon)
        base = first - first % SNAPSHOT_EVERY
        state = cur.snapshots[base].copy()
        for pos in range(base, first):
            self.decoder.place(state, cur.order[pos])
        current_score = float(cur.flows[first:scored_end].sum())
        best_score, best_perm = current_score, None
        tail = cur.order[end:scored_end]
        for k, perm in enumerate(itertools.permutations(cur.order[first:end])):
            if k % 64 == 63 and deadline.expired():
                return False
            trial = state.copy()
            score = 0.0
            for job in (*perm, *tail):
                score += self.decoder.flow_s(job, self.decoder.place(trial, job))
            if score < best_score - _RTOL * max(1.0, best_score):
                best_score, best_perm = score, perm
        if best_perm is None:
            return False
        order = [*cur.order[:first], *best_perm, *cur.order[end:]]
        placed, flows, snapshots = _decode_from(self.decoder, cur, order, base, n)
        new_flows = np.concatenate([cur.flows[:base], flows])
        if not new_flows.sum() < cur.flow_s - _RTOL * max(1.0, cur.flow_s):
            return False
        kept = {p: s for p, s in cur.snapshots.items() if p < base}
        self.current = _List(order, [*cur.placed[:base], *placed], new_flows, kept | snapshots)
        return True


def _start_order(instance: AsrptInstance, schedule: AsrptSchedule) -> list[int]:
    jobs = instance.jobs
    key = [(schedule.runs[j.id].start_s, j.arrival_s, j.id) for j in jobs]
    return sorted(range(len(jobs)), key=key.__getitem__)


def _starts(
    instance: AsrptInstance,
    settings: ImproveSettings,
    run_policy: PolicyRunner,
    deadline: Deadline,
    info: dict[str, Any],
) -> tuple[dict[str, AsrptSchedule], dict[str, float], dict[bool, PackedDecoder]]:
    """Every start's schedule and flow time, and the packed decoders built; ``info`` gains
    ``starts_skipped`` and ``stopped`` (the starts the time limit cut)."""
    schedules: dict[str, AsrptSchedule] = {}
    decoders: dict[bool, PackedDecoder] = {}
    skipped, cut = [], []
    for name in sorted(settings.starts, key=lambda name: name not in PACKED_STARTS):
        if name in PACKED_STARTS:
            best_fit = name == "packed_best_fit"
            decoders[best_fit] = PackedDecoder(instance, best_fit=best_fit, seed=settings.seed)
            order = arrival_order(instance)
            schedules[name] = decoders[best_fit].schedule(order, decoders[best_fit].decode(order))
            continue
        try:
            if name in OFFLINE_STARTS:
                if False not in decoders:
                    decoders[False] = PackedDecoder(instance, seed=settings.seed)
                order_key = OFFLINE_STARTS[name]
                schedules[name] = work_conserving_schedule(decoders[False], order_key, deadline)[2]
            else:
                schedules[name], stopped = run_policy(name, settings.seed, deadline)
                cut += [stopped] if stopped else []
        except TimeLimitReached:
            skipped.append(name)
    if skipped:
        info["starts_skipped"] = skipped
        cut.append(f"the starts skipped at the time limit: {', '.join(skipped)}")
    if cut:
        info["stopped"] = "; ".join(cut)
    flows = {name: evaluate(instance, s).total_flow_s for name, s in schedules.items()}
    return schedules, flows, decoders


def _first_list(
    instance: AsrptInstance,
    schedules: dict[str, AsrptSchedule],
    flows: dict[str, float],
    decoders: dict[bool, PackedDecoder],
    seed: int,
) -> tuple[str, PackedDecoder, _List]:
    """The best list start (module docstring): its name, decoder and decoded list."""
    packed = [name for name in PACKED_STARTS if name in flows]
    if packed:
        name = min(packed, key=flows.__getitem__)
        decoder = decoders[name == "packed_best_fit"]
        best = (name, _full(decoder, arrival_order(instance)))
    else:
        decoder = PackedDecoder(instance, seed=seed)
        best = None
    for name, schedule in schedules.items():
        if name in PACKED_STARTS:
            continue
        decoded = _full(decoder, _start_order(instance, schedule))
        if best is None or decoded.flow_s < best[1].flow_s:
            best = (f"{name} order", decoded)
    if best is None:
        raise TimeLimitReached("the time limit stopped every start of improve")
    return best[0], decoder, best[1]


def improve(
    instance: AsrptInstance,
    settings: ImproveSettings,
    run_policy: PolicyRunner,
    deadline: Deadline,
) -> tuple[AsrptSchedule, dict[str, Any], bool]:
    """The improved schedule, its ``info`` and whether the time limit stopped the search.

    ``run_policy(name, seed, deadline)`` is the family's simulator (this layer cannot
    import it); it raises :class:`~ddlsched.errors.TimeLimitReached` at the deadline.
    """
    info: dict[str, Any] = {}
    schedules, flows, decoders = _starts(instance, settings, run_policy, deadline, info)
    list_name, decoder, first = _first_list(instance, schedules, flows, decoders, settings.seed)
    search = _Search(decoder, first, settings)
    stopped = search.run(deadline.sub(share=0.9))  # the rest: evaluating the answer
    final = search.current
    best_start = min(flows, key=flows.__getitem__)
    lns_flow = evaluate(instance, decoder.schedule(final.order, final.placed)).total_flow_s
    if lns_flow < flows[best_start]:
        winner, schedule, answer = "lns", decoder.schedule(final.order, final.placed), lns_flow
    else:
        winner, schedule, answer = best_start, schedules[best_start], flows[best_start]
    info.update(
        start_flow_s=flows,
        best_start=best_start,
        list_start=list_name,
        list_start_flow_s=first.flow_s,
        lns_flow_s=lns_flow,
        lns_improvement=1.0 - answer / flows[best_start] if flows[best_start] > 0 else 0.0,
        windows_gain=1.0 - final.flow_s / first.flow_s if first.flow_s > 0 else 0.0,
        winner=winner,
        windows_tried=search.tried,
        windows_accepted=search.accepted,
        passes=search.passes,
        search_stopped=stopped,
    )
    log.info("asrpt improve: %s (%s)", winner, stopped)
    if stopped == "time limit":
        done = f"the window search at the time limit after {search.tried} windows"
        info["stopped"] = "; ".join(filter(None, (info.get("stopped"), done)))
    return schedule, info, "stopped" in info
