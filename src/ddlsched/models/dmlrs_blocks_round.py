"""``blocks_round`` (ours): a schedule read off ``ub_blocks``' one-mode relaxation, then ``improve``.

Paper: Yu et al., IEEE TNSE 2022 (reading notes of the paper): DMLRS (Eqs. 3-7), Eq. 3's
rate with Fact 1; spec ``docs/families/dmlrs.md``. Every step here is ours.

``ub_blocks modes=true`` (:mod:`ddlsched.models.dmlrs_blocks`: binary completions and
blocks, one mode and one block size a slot) is a MILP whose points are nearly schedules:
its internal blocks are whole, and what it relaxes is the placement of the external
workers (pooled over the machines, fractional counts) and the packing of the blocks (the
aggregated rows). The method:

1. **Relaxation.** The MILP in the HiGHS worker process
   (:func:`ddlsched.solvers.highs_server.solve_mip`, improving solutions sent as found),
   stopped after ``nodes`` branch-and-bound nodes (HiGHS ``mip_max_nodes``: the same answer
   on every machine) or at its share of the time limit, whichever comes first (then its last
   incumbent, and the answer depends on the machine: ``time_limit_hit``). Its incumbent is
   read per job (completion ``y > 1/2``) and per slot (the block size ``w`` with ``z[i, t, w]
   > 1/2``, else the external workers ``xE``).
2. **Placement, slot by slot** (:func:`pack_slot`, a small MILP, ``pack_nodes`` nodes):
   every block whole on one machine with its ``ceil(w / gamma_i)`` PSs, a block placed
   before any external worker counts (its gain exceeds all of them); then as many of each
   job's ``ceil(xE - 1e-6)`` external workers as fit, with ``gamma_i`` times its PSs at least
   its workers (the PS rule), idle PSs penalised.
3. **Top-up, then rounding** (:func:`_repair`). A job whose placed allocation (Eq. 3,
   Fact 1: all on one machine means ``b_int``, the evaluator's rate
   :func:`~ddlsched.problems.dmlrs_schedule.samples_in_slot`) falls short of its ``V_i``
   samples takes what it lacks from the machines' free capacity (``top_up``, the default),
   the most valuable first (utility at the planned completion): slot by slot from ``a_i``,
   by its planned completion, else by ``T`` (a later completion, a lower utility). In a slot
   where it runs on at most one machine it stays on one (``b_int``: the machine that then
   holds the most of its workers, its own on a tie, so it may move); where it is spread it
   adds workers, each machine's with the PSs the rule then needs (``b_ext``); never above
   ``F_i`` (:func:`_grown`). While some cannot, the least valuable of them is dropped with
   its allocation (its capacity freed) and the others are tried again. Without the top-up
   every short job is dropped. The rest is the start schedule (the family evaluator scores
   it).
4. ``improve``'s window search (:mod:`ddlsched.heuristics.dmlrs_improve`, the settings the
   method hands in) from that schedule, with what is left of the time.

The answer is that schedule and, as its bound, the MILP's dual bound (HiGHS's
``mip_dual_bound`` at the node budget or the kill, never the incumbent; at most
``ub_trivial``): ``ub_blocks modes=true`` is a valid bound (its module docstring's proof,
checked on 120 proven optima), and a branch-and-bound's dual bound is at least its optimum
(``None`` before the MILP has one; 0 when no job can finish by ``T``). So the method is of
kind ``bound``, and returns a schedule, as ``colgen`` does. Without an incumbent (the node
budget or the time spent first) the schedule comes from ``improve``'s usual starts instead
(``info['start']`` says which). ``info`` adds
``relaxation`` (status, incumbent, dual bound, nodes, seconds), ``packing`` (blocks
asked / placed, external workers asked / placed, how the slot MILPs ended: ``optimal``,
``node limit``, ``time limit``; the short jobs, those topped up, those dropped, whether the
packing's share of the time stopped the top-up: the jobs not topped up by then dropped) and
``relaxation_schedule_utility``. When the limit leaves ``improve`` no schedule the answer
is ``bound_only`` with the relaxation's bound (``info['stopped']`` says so).

Measured (``benchmarks/dmlrs_blocks_solution.py``, the page ``benchmarks/results/dmlrs.md``):
on Fig. 6 at 20 machines and Fig. 8 at 100 jobs the schedules so built, after the window
search, earn 1-6 % more than the best schedules of every other method; the top-up, side by
side with the dropping (``benchmarks/dmlrs_blocks_topup.py``), keeps most of the jobs the
packing leaves short.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ddlsched.deadline import Deadline
from ddlsched.models.dmlrs_blocks import BlockModel, build_block_model
from ddlsched.problems.dmlrs import DmlrsInstance, DmlrsSchedule
from ddlsched.problems.dmlrs_schedule import (
    SAMPLE_RTOL,
    ps_needed,
    samples_in_slot,
    schedule_from_counts,
    workers_needed,
)

__all__ = ["RelaxedPlan", "pack_slot", "read_point", "relaxation_point", "round_point"]

#: ``(machine, workers, PSs)`` of one job in one slot.
Placement = tuple[int, int, int]


@dataclass
class RelaxedPlan:
    """The relaxation's incumbent: per job, per slot, ``(block workers, external workers)``
    (one of the two is 0), and its ``completion`` slot; ``info`` how the MILP ended."""

    jobs: dict[int, dict[int, tuple[int, float]]]
    info: dict[str, Any]
    completion: dict[int, int] = field(default_factory=dict)
    bound: float | None = None  # the MILP's dual bound (``None`` before it has one)


def read_point(model: BlockModel, values: Any) -> RelaxedPlan:
    """Per completed job (``y > 1/2``) its completion slot and, per slot with work,
    ``(block size, external workers)`` at the point ``values`` (module docstring, step 1)."""
    base = model.capacity
    jobs: dict[int, dict[int, tuple[int, float]]] = {}
    completion: dict[int, int] = {}
    for (i, t), col in sorted(base.completion.items()):
        if values[col] > 0.5:
            jobs[i], completion[i] = {}, t
    for (i, t), (_, _, _, x_ext) in sorted(base.slot_columns.items()):
        if i not in jobs:
            continue
        block = 0
        for w, col in enumerate(model.blocks.get((i, t), []), start=1):
            if values[col] > 0.5:
                block = w
        external = float(values[x_ext]) if x_ext >= 0 and not block else 0.0
        if block or external > 1e-6:
            jobs[i][t] = (block, external)
    return RelaxedPlan(jobs, {}, completion)


def relaxation_point(
    instance: DmlrsInstance, nodes: int, deadline: Deadline, dff: int = 3
) -> RelaxedPlan:
    """Step 1 of the module docstring: ``ub_blocks modes=true``'s incumbent within ``nodes``
    nodes and ``deadline`` (``jobs`` empty when it has none)."""
    import highspy

    from ddlsched.models.dmlrs import ub_trivial
    from ddlsched.models.dmlrs_capacity import to_highs
    from ddlsched.solvers.highs_server import MipArrays, solve_mip

    started = time.perf_counter()
    model = build_block_model(instance, integral=True, modes=True, deadline=deadline, dff=dff)
    info: dict[str, Any] = {"columns": model.capacity.num_cols, "rows": model.capacity.num_rows}
    if not model.capacity.completion:
        info.update(status="no job can finish", seconds=time.perf_counter() - started)
        return RelaxedPlan({}, info, bound=0.0)
    options = [("output_flag", False), ("threads", 1), ("mip_rel_gap", 1e-6)]
    options.append(("mip_max_nodes", int(nodes)))
    mip = MipArrays.from_lp(to_highs(model.capacity, highspy), options)
    run = solve_mip(mip, deadline.remaining_s(), incumbents=True)
    ms = highspy.HighsModelStatus
    if run.killed or run.model_status in (ms.kTimeLimit, ms.kInterrupt):
        status = "time limit"
    elif run.model_status == ms.kOptimal:
        status = "optimal"
    elif run.model_status == ms.kSolutionLimit:  # HiGHS's status at mip_max_nodes
        status = "node limit"
    else:
        status = str(run.model_status).split(".")[-1]
    info.update(
        status=status,
        incumbent=float(run.objective) if run.primal_valid else None,
        dual_bound=float(run.mip_dual_bound) if math.isfinite(run.mip_dual_bound) else None,
        nodes=(run.info or {}).get("mip_node_count"),
        seconds=time.perf_counter() - started,
    )
    bound = info["dual_bound"]
    if bound is not None:
        bound = min(bound, ub_trivial(instance))
    if not run.primal_valid or run.col_value is None:
        return RelaxedPlan({}, info, bound=bound)
    plan = read_point(model, np.asarray(run.col_value))
    plan.info, plan.bound = info, bound
    return plan


def _packing_lp(
    instance: DmlrsInstance, asks: dict[int, tuple[int, int]]
) -> tuple[Any, dict[int, tuple[Any, ...]]]:
    """The slot's packing MILP (:func:`pack_slot`) as a ``highspy.HighsLp`` and, per job,
    its columns."""
    import highspy

    H, R = instance.cap.shape
    cost: list[float] = []
    upper: list[float] = []
    rows: list[tuple[list[tuple[int, float]], float, float]] = []

    def column(up: float, gain: float) -> int:
        cost.append(gain)
        upper.append(up)
        return len(cost) - 1

    block_gain = 1.0 + sum(float(e) for b, e in asks.values() if not b)
    use: list[list[list[tuple[int, float]]]] = [[[] for _ in range(R)] for _ in range(H)]
    where: dict[int, tuple[Any, ...]] = {}
    for i, (block, external) in sorted(asks.items()):
        alpha, beta, gamma = instance.alpha[i], instance.beta[i], instance.jobs[i].gamma
        if block:
            servers = math.ceil(block / gamma)
            picks = [column(1.0, block_gain) for _ in range(H)]
            rows.append(([(c, 1.0) for c in picks], 0.0, 1.0))
            for h, c in enumerate(picks):
                for r in range(R):
                    use[h][r].append((c, alpha[r] * block + beta[r] * servers))
            where[i] = ("block", picks, block, servers)
        elif external:
            workers = [column(float(external), 1.0) for _ in range(H)]
            servers = [column(float(external), -1e-3) for _ in range(H)]  # no idle PSs
            rows.append(([(c, 1.0) for c in workers], 0.0, float(external)))
            ps_rule = [(c, float(gamma)) for c in servers] + [(c, -1.0) for c in workers]
            rows.append((ps_rule, 0.0, math.inf))
            for h in range(H):
                for r in range(R):
                    use[h][r] += [(workers[h], alpha[r]), (servers[h], beta[r])]
            where[i] = ("external", workers, servers)
    for h in range(H):
        for r in range(R):
            entries = [(c, a) for c, a in use[h][r] if a > 0]
            if entries:
                rows.append((entries, -math.inf, float(instance.cap[h, r])))
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = len(cost), len(rows)
    lp.col_cost_, lp.col_lower_ = np.array(cost), np.zeros(len(cost))
    lp.col_upper_ = np.array(upper)
    lp.row_lower_ = np.array([lo for _, lo, _ in rows])
    lp.row_upper_ = np.minimum(np.array([up for _, _, up in rows]), highspy.kHighsInf)
    start, index, value = [0], [], []
    for entries, _, _ in rows:
        index += [c for c, _ in entries]
        value += [a for _, a in entries]
        start.append(len(index))
    lp.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
    lp.a_matrix_.start_, lp.a_matrix_.index_, lp.a_matrix_.value_ = start, index, value
    lp.sense_ = highspy.ObjSense.kMaximize
    lp.integrality_ = [highspy.HighsVarType.kInteger] * len(cost)
    return lp, where


def pack_slot(
    instance: DmlrsInstance, asks: dict[int, tuple[int, int]], nodes: int, seconds: float
) -> tuple[str, dict[int, list[Placement]]]:
    """One slot's packing (module docstring, step 2): ``asks[i] = (block workers, external
    workers)``; ``(how it ended, {i: [(machine, workers, PSs)]})`` (a job left out has no
    entry; ``time limit`` with no incumbent places nothing)."""
    import highspy

    from ddlsched.solvers.highs_server import MipArrays, solve_mip

    if not asks:
        return "optimal", {}
    lp, where = _packing_lp(instance, asks)
    options = [("output_flag", False), ("threads", 1), ("mip_max_nodes", int(nodes))]
    run = solve_mip(MipArrays.from_lp(lp, options), max(1e-3, seconds), incumbents=True)
    ms = highspy.HighsModelStatus
    how = "optimal" if run.model_status == ms.kOptimal else "time limit"
    if not run.killed and run.model_status == ms.kSolutionLimit:  # at mip_max_nodes
        how = "node limit"
    if not run.primal_valid or run.col_value is None:
        return how, {}
    x = np.round(np.asarray(run.col_value)).astype(int)
    placed: dict[int, list[Placement]] = {}
    for i, spec in where.items():
        if spec[0] == "block":
            picks = [h for h, c in enumerate(spec[1]) if x[c] > 0]
            if picks:
                placed[i] = [(picks[0], spec[2], spec[3])]
        else:
            pairs = zip(spec[1], spec[2], strict=True)
            entries = [(h, int(x[w]), int(x[s])) for h, (w, s) in enumerate(pairs)]
            entries = [e for e in entries if e[1] or e[2]]
            if sum(e[1] for e in entries):
                placed[i] = entries
    return how, placed


class _Cells:
    """The packed allocation: per ``(job, slot)`` its ``{machine: [workers, PSs]}``, and per
    slot the use of every machine (``used[t - 1]``, ``(H, R)``)."""

    def __init__(self, instance: DmlrsInstance) -> None:
        self.instance = instance
        self.of: dict[tuple[int, int], dict[int, list[int]]] = {}
        self.used = np.zeros((instance.slots, *instance.cap.shape))

    def add(self, i: int, t: int, h: int, workers: int, servers: int, sign: int = 1) -> None:
        inst = self.instance
        cell = self.of.setdefault((i, t), {}).setdefault(h, [0, 0])
        cell[0] += sign * workers
        cell[1] += sign * servers
        self.used[t - 1, h] += sign * (inst.alpha[i] * workers + inst.beta[i] * servers)

    def samples(self, i: int, t: int) -> float:
        """Samples job ``i`` processes in slot ``t`` (Eq. 3, Fact 1)."""
        inst, cells = self.instance, self.of.get((i, t), {})
        workers = sum(w for w, _ in cells.values())
        bandwidth = inst.b_int if len(cells) == 1 else inst.b_ext
        return samples_in_slot(inst.jobs[i], workers, bandwidth, inst.slot_s) if workers else 0.0

    def put(self, i: int, t: int, layout: dict[int, list[int]]) -> dict[int, list[int]]:
        """Job ``i``'s allocation in slot ``t`` replaced by ``layout``; the one it had."""
        old = {h: list(cell) for h, cell in self.of.get((i, t), {}).items()}
        for h, (w, s) in old.items():
            self.add(i, t, h, w, s, sign=-1)
        self.of.pop((i, t), None)
        for h, (w, s) in layout.items():
            self.add(i, t, h, w, s)
        return old

    def drop(self, i: int) -> None:
        for (j, t), cells in list(self.of.items()):
            if j == i:
                for h, (w, s) in cells.items():
                    self.add(i, t, h, w, s, sign=-1)
                del self.of[(j, t)]


def _grown(cells: _Cells, i: int, t: int, deficit: float) -> dict[int, list[int]] | None:
    """Job ``i``'s allocation in slot ``t`` grown towards ``deficit`` more samples within the
    machines' free capacity and its ``F_i`` (``{machine: [workers, PSs]}``; ``None``: no
    gain). On one machine when it has at most one there (``b_int``): the machine that then
    holds the most workers, its own on a tie (it may move); else more workers, each
    machine's with the PSs the rule then needs, on any machines (``b_ext``)."""
    inst, job = cells.instance, cells.instance.jobs[i]
    now = cells.of.get((i, t), {})
    workers = sum(w for w, _ in now.values())
    servers = sum(s for _, s in now.values())
    bandwidth = inst.b_int if len(now) <= 1 else inst.b_ext
    cap = min(
        job.global_batch, workers_needed(job, cells.samples(i, t) + deficit, bandwidth, inst.slot_s)
    )
    alpha, beta = inst.alpha[i], inst.beta[i]

    def most(h: int, base: int, base_ps: int, free: np.ndarray) -> tuple[int, int]:
        """The most workers (and their extra PSs) on machine ``h`` above ``base``."""
        with np.errstate(divide="ignore", invalid="ignore"):
            room = np.min(np.where(alpha > 0, free / alpha, np.inf))
        k = min(cap - base, int(np.floor(room + 1e-9)) if np.isfinite(room) else cap)
        while k > 0:
            extra = max(0, ps_needed(job, base + k) - base_ps)
            if (alpha * k + beta * extra <= free + 1e-9).all():
                return k, extra
            k -= 1
        return 0, 0

    if len(now) <= 1:
        own = next(iter(now), None)
        best = (workers, own)
        others = [h for h in range(inst.num_machines) if h != own]
        for h in others if own is None else [own, *others]:  # its own first: it wins ties
            free = inst.cap[h] - cells.used[t - 1, h]
            if h == own:
                free = free + alpha * workers + beta * servers
            k, _ = most(h, 0, 0, free)
            if k > best[0]:
                best = (k, h)
        if best[0] <= workers:
            return None
        return {best[1]: [best[0], ps_needed(job, best[0])]}
    grown = {h: list(cell) for h, cell in now.items()}
    for h in range(inst.num_machines):
        k, extra = most(h, workers, servers, inst.cap[h] - cells.used[t - 1, h])
        if k:
            cell = grown.setdefault(h, [0, 0])
            cell[0] += k
            cell[1] += extra
            workers, servers = workers + k, servers + extra
    return grown if workers > sum(w for w, _ in now.values()) else None


def _top_up(cells: _Cells, i: int, last: int) -> bool:
    """Give job ``i`` the samples it lacks from free capacity in slots ``a_i..last``, the
    earliest first (module docstring, step 3); ``False``, nothing changed, when it cannot
    reach ``V_i`` so."""
    job = cells.instance.jobs[i]
    need = job.workload * (1.0 - SAMPLE_RTOL)
    have = sum(cells.samples(i, t) for t in range(job.arrival_slot, last + 1))
    done: list[tuple[int, dict[int, list[int]]]] = []
    for t in range(job.arrival_slot, last + 1):
        if have >= need:
            break
        grown = _grown(cells, i, t, need - have)
        if grown is not None:
            before = cells.samples(i, t)
            done.append((t, cells.put(i, t, grown)))
            have += cells.samples(i, t) - before
    if have >= need:
        return True
    for t, old in reversed(done):
        cells.put(i, t, old)
    return False


def _repair(
    instance: DmlrsInstance,
    plan: RelaxedPlan,
    cells: _Cells,
    short: list[int],
    deadline: Deadline,
) -> tuple[list[int], bool]:
    """Step 3's top-up of the jobs left short, the most valuable first (utility at the
    planned completion): by the planned completion, else by ``T``; while some cannot, the
    least valuable of them is dropped (its capacity freed) and the others tried again (not
    when the dropped job held nothing: nothing changed for them). The dropped jobs, and
    whether ``deadline`` stopped it (the jobs not topped up by then dropped)."""
    T = instance.slots
    last = {i: plan.completion.get(i, T) for i in short}

    def value(i: int) -> float:
        job = instance.jobs[i]
        return job.utility(last[i] - job.arrival_slot)

    def fits(i: int) -> bool:
        return _top_up(cells, i, last[i]) or (last[i] < T and _top_up(cells, i, T))

    dropped: list[int] = []
    pending = sorted(short, key=lambda i: (-value(i), i))
    retry = True
    while pending:
        if deadline.expired():
            for i in pending:
                cells.drop(i)
            return sorted(dropped + pending), True
        if retry:
            pending = [i for i in pending if not fits(i)]
        if pending:
            worst = min(pending, key=lambda i: (value(i), -i))
            retry = any(cells.of.get((worst, t)) for t in range(1, T + 1))
            cells.drop(worst)
            dropped.append(worst)
            pending.remove(worst)
    return sorted(dropped), False


def round_point(
    instance: DmlrsInstance,
    plan: RelaxedPlan,
    nodes: int,
    deadline: Deadline,
    top_up: bool = True,
) -> tuple[DmlrsSchedule, dict[str, Any]]:
    """Steps 2-3 of the module docstring: the schedule of the jobs whose placed allocation
    processes all their samples, and what the packing did. Each slot's MILP gets an equal
    share of what is left of ``deadline``."""
    T = instance.slots
    entries: list[tuple[int, int, int, int, int]] = []
    samples = dict.fromkeys(plan.jobs, 0.0)
    counts = {"blocks_asked": 0, "blocks_placed": 0, "external_asked": 0, "external_placed": 0}
    ended: dict[str, int] = {}
    for t in range(1, T + 1):
        asks = {}
        for i, slots in plan.jobs.items():
            if t in slots:
                block, external = slots[t]
                asks[i] = (block, 0 if block else math.ceil(external - 1e-6))
        counts["blocks_asked"] += sum(1 for b, _ in asks.values() if b)
        counts["external_asked"] += sum(e for _, e in asks.values())
        seconds = deadline.remaining_s() / (T - t + 1)
        how, placed = pack_slot(instance, asks, nodes, seconds)
        ended[how] = ended.get(how, 0) + 1
        for i, spots in placed.items():
            job = instance.jobs[i]
            workers = sum(w for _, w, _ in spots)
            bandwidth = instance.b_int if len(spots) == 1 else instance.b_ext
            samples[i] += samples_in_slot(job, workers, bandwidth, instance.slot_s)
            counts["blocks_placed" if asks[i][0] else "external_placed"] += (
                1 if asks[i][0] else workers
            )
            entries += [(i, t, h, w, s) for h, w, s in spots]
    short = sorted(
        i for i, v in samples.items() if v < instance.jobs[i].workload * (1.0 - SAMPLE_RTOL)
    )
    cells = _Cells(instance)
    for entry in entries:
        cells.add(*entry)
    info = {**counts, "slot_milps": dict(sorted(ended.items())), "short_jobs": short}
    if top_up:
        dropped, info["top_up_stopped"] = _repair(instance, plan, cells, short, deadline)
    else:
        dropped = short
        for i in dropped:
            cells.drop(i)
    info.update(topped_up=sorted(set(short) - set(dropped)), dropped=dropped)
    gone = set(dropped)
    keep = [i for i in plan.jobs if i not in gone]
    flat = [(i, t, h, w, s) for (i, t), cs in cells.of.items() for h, (w, s) in cs.items()]
    return schedule_from_counts(keep, flat), info
