"""``compare``: every method of a family on a few generated instances, with ratios.

The one-off comparison behind ``ddlsched compare FAMILY --preset P --seeds K``:
generate ``K`` instances (seeds ``0..K-1``), run each method on each, bracket
each instance's optimum with :func:`~ddlsched.bench.ratios.best_reference`
(over all methods' results), and summarise per method.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ddlsched.bench.aggregate import interval_stats
from ddlsched.bench.ratios import Reference, best_reference, ratio_interval
from ddlsched.deadline import DEFAULT_TIME_LIMIT_S
from ddlsched.registry import RunOptions, get_family, methods, run_method
from ddlsched.solvers.result import SolveResult, Status

__all__ = ["CompareReport", "CompareRow", "MethodSummary", "compare"]


@dataclass
class CompareRow:
    """One method on one instance, with the certified ratio interval."""

    seed: int
    method: str
    kind: str
    result: SolveResult
    ratio: tuple[float, float] | None


@dataclass
class MethodSummary:
    """Aggregates of one method over the compared instances."""

    method: str
    kind: str
    runs: int
    mean_objective: float | None
    ratio_mean: tuple[float, float] | None
    ratio_worst: tuple[float, float] | None
    exact_share: float  # share of rows whose ratio is exact (optimum proven)
    optimal_share: float  # share of rows this method proved optimal
    errors: int
    mean_runtime_s: float
    mean_bound: float | None = None


@dataclass
class CompareReport:
    family: str
    sense: str
    preset: str
    seeds: list[int]
    rows: list[CompareRow] = field(default_factory=list)
    references: dict[int, Reference] = field(default_factory=dict)

    def summaries(self) -> list[MethodSummary]:
        out = []
        names = list(dict.fromkeys(r.method for r in self.rows))
        for name in names:
            rows = [r for r in self.rows if r.method == name]
            objectives = [r.result.objective for r in rows if r.result.objective is not None]
            bounds = [r.result.bound for r in rows if r.result.bound is not None]
            ratios = [r.ratio for r in rows if r.ratio is not None]
            stats = interval_stats(ratios)
            out.append(
                MethodSummary(
                    method=name,
                    kind=rows[0].kind,
                    runs=len(rows),
                    mean_objective=statistics.fmean(objectives) if objectives else None,
                    ratio_mean=stats.mean if stats else None,
                    ratio_worst=stats.worst if stats else None,
                    exact_share=(
                        sum(1 for r in rows if r.ratio and self.references[r.seed].proven)
                        / len(rows)
                    ),
                    optimal_share=sum(1 for r in rows if r.result.status is Status.OPTIMAL)
                    / len(rows),
                    errors=sum(1 for r in rows if r.result.status is Status.ERROR),
                    mean_runtime_s=statistics.fmean(r.result.runtime_s for r in rows),
                    mean_bound=statistics.fmean(bounds) if bounds else None,
                )
            )
        return out


def compare(
    family: str,
    preset: str,
    seeds: Sequence[int],
    method_names: Sequence[str] | None = None,
    *,
    time_limit_s: float = DEFAULT_TIME_LIMIT_S,
    backend: str = "highs",
    preset_params: dict[str, Any] | None = None,
    on_progress: Callable[[int, int, str], None] | None = None,
) -> CompareReport:
    """Run ``method_names`` (default: all of the family's) on ``len(seeds)`` instances."""
    fam = get_family(family)
    available = {m.name: m for m in methods(family)}
    names = list(method_names) if method_names else list(available)
    for name in names:
        if name not in available:
            from ddlsched.registry import get_method

            get_method(family, name)  # raises the one-line error naming the choices
    report = CompareReport(family=family, sense=fam.sense, preset=preset, seeds=list(seeds))
    total = len(seeds) * len(names)
    done = 0
    for seed in seeds:
        instance = fam.generate(preset, seed, **(preset_params or {}))
        results: dict[str, SolveResult] = {}
        for name in names:
            options = RunOptions(time_limit_s=time_limit_s, seed=seed, backend=backend)
            results[name] = run_method(family, name, instance, options)
            done += 1
            if on_progress:
                on_progress(done, total, f"seed {seed}: {name}")
        reference = best_reference(results.values(), fam.sense)
        report.references[seed] = reference
        for name in names:
            result = results[name]
            report.rows.append(
                CompareRow(
                    seed=seed,
                    method=name,
                    kind=available[name].kind,
                    result=result,
                    ratio=ratio_interval(result.objective, reference, fam.sense),
                )
            )
    return report
