"""Worst-case instance search: certified lower bounds on competitive ratios.

Beyond the papers. A seeded black-box search over a
family's tiny instances looks for the instance on which a policy does worst
against the proven offline optimum. Generic over families: a family opens
itself with a :class:`~ddlsched.registry.WorstCaseSpace` (its tiny
generator, its mutation moves, a budget measure such as the prediction
error, its policies and its exact method).

Algorithm, per budget ``b`` (a separate seeded stream each):

1. the first tenth of the candidates (at least one per policy) are fresh
   instances ``generate(seed_k, b)``;
2. every further candidate mutates the current worst instance of one
   policy (round robin over the policies): ``mutate(parent, rng, b)``;
3. every candidate is solved by ``exact`` (under ``time_limit_s``) and run
   through every policy, all through :func:`ddlsched.registry.run_method`
   (so every schedule is re-evaluated); only a proven optimum counts, a
   candidate without one is skipped (counted in ``unproven``);
4. a policy's worst instance is replaced only by a strictly larger ratio
   (ties keep the earlier one), so the same seed finds the same instances
   as long as every exact solve finishes within its limit.

Each witness is a certified lower bound on that policy's competitive ratio
(the ratio on one instance is a lower bound on the sup over instances): the
instance file is the certificate. :func:`save_report` writes the instances
(with the witness in ``provenance``), a suite over them (``ddlsched bench
run DIR/worstcase.toml`` re-measures every ratio), the report as JSON and
the figure of the worst ratio per budget beside the theoretical guarantee
(``WorstCaseSpace.theory``, e.g. Theorem 1 of A-SRPT) on those instances.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ddlsched.errors import DdlschedError
from ddlsched.registry import RunOptions, get_family, run_method
from ddlsched.rng import make_rng
from ddlsched.solvers.result import Status

__all__ = ["Witness", "WorstCaseReport", "plot_report", "save_report", "search"]


@dataclass
class Witness:
    """The worst instance found for one policy within one budget."""

    policy: str
    budget: float
    ratio: float
    objective: float
    optimum: float
    measured_budget: float
    theory: float | None
    candidate: int
    instance: Any = field(repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "policy": self.policy,
            "budget": self.budget,
            "ratio": self.ratio if math.isfinite(self.ratio) else None,
            "ratio_infinite": not math.isfinite(self.ratio),
            "objective": self.objective,
            "optimum": self.optimum,
            "measured_budget": self.measured_budget,
            "theory": self.theory,
            "candidate": self.candidate,
        }


@dataclass
class WorstCaseReport:
    """What the search found: witnesses per (budget, policy) and the effort spent."""

    family: str
    seed: int
    budgets: tuple[float, ...]
    candidates: int
    budget_name: str
    policies: tuple[str, ...]
    witnesses: list[Witness] = field(default_factory=list)
    evaluated: int = 0
    unproven: int = 0
    duplicates: int = 0
    runtime_s: float = 0.0

    def witness(self, policy: str, budget: float) -> Witness | None:
        for w in self.witnesses:
            if w.policy == policy and w.budget == budget:
                return w
        return None

    def to_dict(self) -> dict[str, Any]:
        return {
            "family": self.family,
            "seed": self.seed,
            "budgets": list(self.budgets),
            "budget_name": self.budget_name,
            "candidates": self.candidates,
            "policies": list(self.policies),
            "evaluated": self.evaluated,
            "unproven": self.unproven,
            "duplicates": self.duplicates,
            "runtime_s": self.runtime_s,
            "witnesses": [w.to_dict() for w in self.witnesses],
        }


def _key(fam: Any, instance: Any) -> str:
    data = instance.to_dict() if hasattr(instance, "to_dict") else instance
    if isinstance(data, dict):
        data = {k: v for k, v in data.items() if k != "provenance"}
    return json.dumps(data, sort_keys=True, default=str)


def search(
    family: str,
    *,
    budgets: Sequence[float],
    candidates: int,
    seed: int = 0,
    time_limit_s: float = 10.0,
    progress: Callable[[int, int], None] | None = None,
) -> WorstCaseReport:
    """Search each budget for every policy's worst instance (see the module docstring).

    ``candidates`` is the total over all budgets (split evenly); ``progress``
    is called with (done, total) after every candidate.
    """
    fam = get_family(family)
    space = fam.worst_case
    if space is None:
        raise DdlschedError(f"family {family!r} offers no worst-case search space")
    budgets = tuple(float(b) for b in budgets)
    if not budgets or any(not math.isfinite(b) or b < 0 for b in budgets):
        raise DdlschedError(f"budgets must be finite and >= 0, got {list(budgets)}")
    if isinstance(candidates, bool) or not isinstance(candidates, int) or candidates < 1:
        raise DdlschedError(f"candidates must be a positive integer, got {candidates!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise DdlschedError(f"seed must be a non-negative integer, got {seed!r}")
    policies = space.policies
    report = WorstCaseReport(family, seed, budgets, candidates, space.budget_name, tuple(policies))
    started = time.perf_counter()
    per_budget = [candidates // len(budgets)] * len(budgets)
    for b in range(candidates % len(budgets)):
        per_budget[b] += 1
    done = 0
    for b_index, budget in enumerate(budgets):
        rng = make_rng(np.random.default_rng([seed, b_index]))
        worst: dict[str, Witness] = {}
        seen: set[str] = set()
        fresh = max(len(policies), per_budget[b_index] // 10)
        for k in range(per_budget[b_index]):
            if k < fresh or not worst:
                candidate = space.generate(int(rng.integers(2**31)), budget)
            else:
                policy = policies[k % len(policies)]
                parent = worst.get(policy) or next(iter(worst.values()))
                candidate = space.mutate(parent.instance, rng, budget)
            done += 1
            key = _key(fam, candidate)
            if key in seen:
                report.duplicates += 1
            else:
                seen.add(key)
                _evaluate(fam.name, space, candidate, budget, k, worst, report, time_limit_s, seed)
            if progress is not None:
                progress(done, candidates)
        report.witnesses.extend(worst[p] for p in policies if p in worst)
    report.runtime_s = time.perf_counter() - started
    return report


def _evaluate(family, space, instance, budget, k, worst, report, time_limit_s, seed) -> None:
    options = RunOptions(time_limit_s=time_limit_s, seed=seed)
    exact = run_method(family, space.exact, instance, options)
    report.evaluated += 1
    if exact.status is not Status.OPTIMAL or exact.objective is None or exact.objective <= 0:
        report.unproven += 1
        return
    results = {p: run_method(family, p, instance, options) for p in space.policies}
    maximise = get_family(family).sense == "max"
    theory = space.theory(results) if space.theory is not None else None
    measured = space.budget(instance)
    for policy, result in results.items():
        if result.objective is None:
            continue
        if maximise:  # OPT / utility; a policy earning nothing is infinitely far off
            ratio = exact.objective / result.objective if result.objective > 0 else math.inf
        else:
            ratio = result.objective / exact.objective
        current = worst.get(policy)
        if current is None or ratio > current.ratio:
            worst[policy] = Witness(
                policy, budget, ratio, result.objective, exact.objective, measured, theory, k,
                instance,
            )  # fmt: skip


# --------------------------------------------------------------------------- output


def save_report(report: WorstCaseReport, out: str | Path, fmt: str = "png") -> list[Path]:
    """Write the witnesses as instance files, a suite over them, the JSON report and
    the figure; returns the paths written."""
    out = Path(out)
    inst_dir = out / "instances"
    inst_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for w in report.witnesses:
        data = w.instance.to_dict()
        prov = dict(data.get("provenance", {}))
        prov["worst_case"] = {**w.to_dict(), "search_seed": report.seed}
        data["provenance"] = prov
        path = inst_dir / f"worst-{w.policy}-b{w.budget:g}.json"
        path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        paths.append(path)
    suite = out / "worstcase.toml"
    methods = "\n".join(f'[[methods]]\nname = "{p}"\n' for p in report.policies)
    suite.write_text(
        f"# Worst instances found by `ddlsched bench worstcase {report.family}` (seed "
        f"{report.seed}, {report.candidates} candidates); each is a certified lower bound on\n"
        "# its policy's competitive ratio. Re-measure: ddlsched bench run THIS_FILE\n"
        f'[suite]\nname = "worstcase-{report.family}"\n'
        f'description = "{report.family}: worst instances found per budget"\n'
        f'reference = "exact"\noutput = "results"\n\n'
        f"[limits]\ntime_limit_s = 60\nkill_after_s = 180\n\n"
        f'[[instances]]\nfamily = "{report.family}"\nfiles = ["instances/*.json"]\n'
        f'group = "worstcase"\n\n{methods}\n[[methods]]\nname = "exact"\n',
        encoding="utf-8",
    )
    paths.append(suite)
    summary = out / "worstcase.json"
    summary.write_text(json.dumps(report.to_dict(), indent=2) + "\n", encoding="utf-8")
    paths.append(summary)
    paths.append(plot_report(report, out, fmt))
    return paths


def plot_report(report: WorstCaseReport, out: str | Path, fmt: str = "png") -> Path:
    """Worst ratio found per budget and policy, beside the guarantee on those instances."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for policy in report.policies:
        points = [
            (w.budget, w.ratio)
            for w in report.witnesses
            if w.policy == policy and math.isfinite(w.ratio)
        ]
        if points:
            xs, ys = zip(*sorted(points), strict=True)
            ax.plot(xs, ys, marker="o", label=policy)
    theory = [(w.budget, w.theory) for w in report.witnesses if w.theory is not None]
    if theory:
        xs, ys = zip(*sorted(theory), strict=True)
        ax.scatter(xs, ys, marker="x", color="black", label="guarantee on the witness")
        ax.set_yscale("log")
    ax.set_xlabel(f"budget ({report.budget_name})")
    ax.set_ylabel("worst ratio found (certified lower bound)")
    ax.set_title(
        f"{report.family}: worst case over {report.candidates} candidates, seed {report.seed}"
    )
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    path = Path(out) / f"worstcase-{report.family}.{fmt}"
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path
