"""The insertion of ``improve`` (family ``dmlrs``; ours, not a paper heuristic).

Paper: Yu et al., IEEE TNSE 2022: DMLRS, Eqs. 3-7; spec ``docs/families/dmlrs.md``.
Every choice here is ours. A job is inserted into the capacity the other jobs leave
free, per machine and slot; a plan uses two placements per slot: (a) the internal mode,
on the one machine where most workers fit, ``w`` workers and ``ceil(w / gamma_i)`` PSs
(``b_int``, Fact 1); (b) the external mode, bundles (a worker, plus a PS when the PS rule
needs one) each on the least-loaded machine where it fits, as in the baselines (``b_ext``
unless every bundle landed on one machine); both capped at ``F_i`` (Eq. 4) and at the
workers the remaining samples need. A plan stops when the job has its ``V_i`` samples
(Eq. 3; the evaluator's tolerance); a job that cannot finish by ``T`` gets none.

:meth:`Inserter.plan` is the *earliest* plan: from ``a_i`` (Eq. 7) slot by slot the mode
that processes more samples, which gives the earliest completion these placements allow
(utilities decrease with the delay). For a large job on a free cluster that is the
external mode even when ``b_ext`` makes a worker many times slower (Fig. 6 seed 1's job
44: 845 GPU-slots external against 69 on one machine), so the plan can hold far more
capacity than a later completion would need.

:meth:`Inserter.choose` with ``rule`` (``improve``'s ``insert_plan``):

* ``samples``: the earliest plan (``improve`` before the lean plans).
* ``lean``: the earliest plan, finishing in ``e``, and the *lean* plans finishing by
  ``e`` and by ``l``, ``l`` the slot the internal mode alone finishes the job in on the
  free capacity (``T`` when it cannot). The lean plan by ``c`` takes the internal mode
  only in slots ``a_i..k`` and the earliest plan's per-slot choice after them, ``k``
  the latest slot that still lets the job finish by ``c``: found from the samples each
  slot offers on the free capacity to each mode (``profile``; the slots are independent,
  so one pass), then built and checked. The plan kept maximises
  ``u_i(f - a_i) - price * held``, ``f`` its completion and ``held`` the capacity it
  holds in machine-slots (per entry, the largest share of a resource of the machine it
  takes); ties to the plan holding less, then the earliest. ``price`` is ``improve``'s: ``lean_price`` times the
  incumbent's utility per machine-slot of the cluster (``U / (H T)``). A plan whose every
  slot is on one machine is already internal: no lean plan is built then (most small
  jobs), so the rule costs extra only for jobs the earliest plan spreads.

The choice draws nothing at random: same free capacity, same plan.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ddlsched.heuristics.dmlrs_baselines import FIT_RTOL
from ddlsched.problems.dmlrs import (
    SAMPLE_RTOL,
    DmlrsInstance,
    ps_needed,
    samples_in_slot,
    workers_needed,
)

__all__ = ["INSERT_PLANS", "Inserter", "PlanEntry"]

#: ``improve``'s insertion rules (module docstring).
INSERT_PLANS = ("samples", "lean", "both")
#: ``(slot, machine, workers, ps)``: one entry of a job's plan.
PlanEntry = tuple[int, int, int, int]


class Inserter:
    """A job's plan in the free capacity: the earliest completion (``plan``) and the
    lean plans (``choose``; module docstring)."""

    def __init__(self, instance: DmlrsInstance) -> None:
        self.instance = instance
        self.limit = instance.cap * (1.0 + FIT_RTOL)
        self.alpha = instance.alpha
        self.beta = instance.beta

    def _internal(self, i: int, free: np.ndarray, want: int) -> tuple[int, int]:
        """The most workers on one machine (up to ``want``) and that machine (-1: none)."""
        counts = np.arange(1, want + 1)
        ps = np.ceil(counts / self.instance.jobs[i].gamma)
        demand = counts[:, None] * self.alpha[i] + ps[:, None] * self.beta[i]  # (want, R)
        fits = (demand[None, :, :] <= free[:, None, :]).all(axis=2)  # (H, want)
        most = np.where(fits, counts[None, :], 0).max(axis=1)
        h = int(np.argmax(most))
        return (int(most[h]), h) if most[h] > 0 else (0, -1)

    def _external(self, i: int, free: np.ndarray, want: int) -> dict[int, list[int]]:
        """Bundles on the least-loaded machine where each fits: ``{machine: [w, s]}``."""
        job = self.instance.jobs[i]
        left = free.copy()
        cap = self.instance.cap
        counts: dict[int, list[int]] = {}
        workers = servers = 0
        while workers < want:
            with_ps = int(servers < ps_needed(job, workers + 1))
            demand = self.alpha[i] + with_ps * self.beta[i]
            fits = (demand <= left).all(axis=1)
            if not fits.any():
                break
            load = ((cap - left) / cap).max(axis=1)
            h = int(np.argmin(np.where(fits, load, np.inf)))
            left[h] -= demand
            entry = counts.setdefault(h, [0, 0])
            entry[0] += 1
            entry[1] += with_ps
            workers += 1
            servers += with_ps
        return counts

    def plan(
        self, i: int, used: np.ndarray, finish: int = 0, internal_until: int = 0
    ) -> list[PlanEntry] | None:
        """Job ``i``'s entries finishing as early as ``used`` (per slot, ``(T + 1, H, R)``)
        allows, or ``None`` if it cannot finish by ``T``.

        With ``finish`` (a slot, 0: none) the job finishes by that slot instead, each
        slot asking for an even share of the samples left over the slots left to
        ``finish`` rather than all of them (fewer workers per slot; ``None`` if it
        cannot finish by ``finish``). Slots up to ``internal_until`` take the internal
        mode only, with the most workers that fit (the share applies after them)."""
        inst = self.instance
        job = inst.jobs[i]
        done = job.workload * (1.0 - SAMPLE_RTOL)
        processed = 0.0
        entries: list[PlanEntry] = []
        last = finish if finish else inst.slots
        for t in range(job.arrival_slot, last + 1):
            free = self.limit - used[t]
            internal = t <= internal_until
            left = (job.workload - processed) / (last - t + 1 if finish and not internal else 1)
            want_int = min(job.global_batch, workers_needed(job, left, inst.b_int, inst.slot_s))
            want_ext = min(job.global_batch, workers_needed(job, left, inst.b_ext, inst.slot_s))
            w_int, h_int = self._internal(i, free, want_int)
            ext = {} if internal else self._external(i, free, want_ext)
            w_ext = sum(w for w, _ in ext.values())
            bw_ext = inst.b_int if len(ext) == 1 else inst.b_ext
            got_int = samples_in_slot(job, w_int, inst.b_int, inst.slot_s) if w_int else 0.0
            got_ext = samples_in_slot(job, w_ext, bw_ext, inst.slot_s) if w_ext else 0.0
            if got_int <= 0.0 and got_ext <= 0.0:
                continue
            if got_int >= got_ext:
                entries.append((t, h_int, w_int, ps_needed(job, w_int)))
                processed += got_int
            else:
                entries.extend((t, h, w, s) for h, (w, s) in sorted(ext.items()))
                processed += got_ext
            if processed >= done:
                return entries
        return None

    def profile(self, i: int, used: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Samples job ``i`` can process in each slot from ``a_i`` on the capacity ``used``
        leaves: the internal mode's and the better mode's (index 0: slot ``a_i``), up to
        the slot the internal mode alone finishes the job in (``T`` when it cannot)."""
        inst = self.instance
        job = inst.jobs[i]
        want_int = min(job.global_batch, workers_needed(job, job.workload, inst.b_int, inst.slot_s))
        want_ext = min(job.global_batch, workers_needed(job, job.workload, inst.b_ext, inst.slot_s))
        done = job.workload * (1.0 - SAMPLE_RTOL)
        internal: list[float] = []
        for t in range(job.arrival_slot, inst.slots + 1):
            w_int, _ = self._internal(i, self.limit - used[t], want_int)
            internal.append(samples_in_slot(job, w_int, inst.b_int, inst.slot_s) if w_int else 0.0)
            if sum(internal) >= done:
                break
        best = []
        for t, got_int in enumerate(internal, start=job.arrival_slot):
            ext = self._external(i, self.limit - used[t], want_ext)
            w_ext = sum(w for w, _ in ext.values())
            bw_ext = inst.b_int if len(ext) == 1 else inst.b_ext
            got_ext = samples_in_slot(job, w_ext, bw_ext, inst.slot_s) if w_ext else 0.0
            best.append(max(got_int, got_ext))
        return np.array(internal), np.array(best)

    def lean_plan(
        self, i: int, used: np.ndarray, finish: int, offered: tuple[np.ndarray, np.ndarray]
    ) -> list[PlanEntry] | None:
        """Job ``i``'s lean plan finishing by ``finish`` (module docstring; ``offered``:
        :meth:`profile`), or ``None`` when it does not."""
        job = self.instance.jobs[i]
        first = job.arrival_slot
        done = job.workload * (1.0 - SAMPLE_RTOL)
        internal, best = (a[: finish - first + 1] for a in offered)
        before = np.concatenate(([0.0], np.cumsum(internal)))  # internal over a_i..k
        after = np.concatenate((np.cumsum(best[::-1])[::-1], [0.0]))  # best over k+1..c
        reach = np.nonzero(before + after >= done)[0]
        if len(reach) == 0:
            return None
        plan = self.plan(i, used, internal_until=first + int(reach[-1]) - 1)
        return plan if plan is not None and _finish(plan) <= finish else None

    def held(self, i: int, plan: Sequence[PlanEntry]) -> float:
        """Machine-slots ``plan`` holds: per entry, the largest share of a resource."""
        cap = self.instance.cap
        return float(
            sum(((self.alpha[i] * w + self.beta[i] * s) / cap[h]).max() for _, h, w, s in plan)
        )

    def choose(
        self, i: int, used: np.ndarray, rule: str = "samples", price: float = 0.0
    ) -> list[PlanEntry] | None:
        """Job ``i``'s plan on the capacity ``used`` leaves by insertion rule ``rule``
        (``samples`` or ``lean``; module docstring), ``None`` if it cannot finish by ``T``."""
        early = self.plan(i, used)
        if rule == "samples" or early is None or _one_machine_a_slot(early):
            return early
        offered = self.profile(i, used)
        job = self.instance.jobs[i]
        leanest = job.arrival_slot + len(offered[0]) - 1  # internal alone, or T
        plans = [early]
        for finish in sorted({_finish(early), leanest}):
            plan = self.lean_plan(i, used, finish, offered)
            if plan is not None and plan not in plans:
                plans.append(plan)
        held = [self.held(i, p) for p in plans]
        worth = [
            (job.utility(_finish(p) - job.arrival_slot) - price * h, -h)
            for p, h in zip(plans, held, strict=True)
        ]
        return plans[max(range(len(plans)), key=worth.__getitem__)]


def _finish(plan: Sequence[PlanEntry]) -> int:
    return max(t for t, _, _, _ in plan)


def _one_machine_a_slot(plan: Sequence[PlanEntry]) -> bool:
    slots = [t for t, _, _, _ in plan]
    return len(slots) == len(set(slots))
