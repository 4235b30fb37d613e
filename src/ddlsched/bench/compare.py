"""``compare``: every method of a family on a few generated instances, with ratios.

The one-off comparison behind ``ddlsched compare FAMILY --preset P --seeds K``:
generate ``K`` instances (seeds ``0..K-1``) and run each method on each
(method seed = instance seed). The report's rows take the result store's
form (:meth:`CompareReport.frame`: group = the preset, label = the method),
so that its ratio table is the one of ``bench table``: the same reference
per instance, the same columns, the same code
(:func:`ddlsched.bench.tables.summarize` and its renderers). Each row
carries its method's code fingerprint, as a stored row does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from ddlsched.bench.fingerprint import method_fingerprint
from ddlsched.bench.tables import rows_with_ratios, summarize
from ddlsched.bench.tasks import instance_size
from ddlsched.deadline import DEFAULT_TIME_LIMIT_S
from ddlsched.registry import RunOptions, get_family, get_method, methods, run_method
from ddlsched.solvers.result import SolveResult

__all__ = ["CompareReport", "CompareRow", "compare"]


@dataclass
class CompareRow:
    """One method on one instance (``seed``: the instance's, and the method's)."""

    seed: int
    method: str
    kind: str
    result: SolveResult
    instance_size: int | None = None
    #: The fingerprint of the method's code (:mod:`ddlsched.bench.fingerprint`).
    code_fingerprint: str | None = None


@dataclass
class CompareReport:
    """What :func:`compare` returns: one :class:`CompareRow` per method and instance."""

    family: str
    sense: str
    preset: str
    seeds: list[int]
    rows: list[CompareRow] = field(default_factory=list)

    def frame(self) -> pd.DataFrame:
        """The rows as result-store rows (the columns the ratio tables read)."""
        return pd.DataFrame(
            [
                {
                    "family": self.family,
                    "group": self.preset,
                    "instance_id": f"{self.preset}/s{row.seed}",
                    "instance_key": f"{self.family}/{self.preset}/{row.seed}",
                    "instance_size": row.instance_size,
                    "method": row.method,
                    "label": row.method,
                    "kind": row.kind,
                    "seed": row.seed,
                    "sense": self.sense,
                    "status": str(row.result.status),
                    "objective": row.result.objective,
                    "bound": row.result.bound,
                    "runtime_s": row.result.runtime_s,
                    "time_limit_hit": bool(row.result.time_limit_hit),
                    "code_fingerprint": row.code_fingerprint,
                }
                for row in self.rows
            ]
        )

    def rated(self) -> pd.DataFrame:
        """:meth:`frame` with each row's reference and certified ratio interval."""
        return rows_with_ratios(self.frame())

    def summary(self) -> pd.DataFrame:
        """The ratio table's lines (:func:`ddlsched.bench.tables.summarize`)."""
        return summarize(self.rated())


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
            get_method(family, name)  # raises the one-line error naming the choices
    report = CompareReport(family=family, sense=fam.sense, preset=preset, seeds=list(seeds))
    codes = {name: method_fingerprint(family, name).digest for name in names}
    total = len(seeds) * len(names)
    done = 0
    for seed in seeds:
        instance = fam.generate(preset, seed, **(preset_params or {}))
        size = instance_size(instance, family)
        for name in names:
            options = RunOptions(time_limit_s=time_limit_s, seed=seed, backend=backend)
            result = run_method(family, name, instance, options)
            kind = available[name].kind
            report.rows.append(CompareRow(seed, name, kind, result, size, codes[name]))
            done += 1
            if on_progress:
                on_progress(done, total, f"seed {seed}: {name}")
    return report
