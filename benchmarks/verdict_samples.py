"""Small committed results samples for the verdict tests (``tests/data/verdict``).

    python benchmarks/verdict_samples.py dmlrs runs/dmlrs tests/data/verdict/dmlrs
    python benchmarks/verdict_samples.py placement results/placement tests/data/verdict/placement

Copies a handful of instances' rows of a real ``bench run`` results directory
(or of several runs of one suite, their rows pooled; the manifest is the first's)
into a new results directory through the bench store
(:class:`ddlsched.bench.store.ResultStore`: one Parquet part), with the
source's manifest (its provenance: suite, suite hash, version, commit,
machine, run dates) and a ``sample`` entry naming the source and this
command. ``tests/test_bench_verdict_dmlrs_placement.py`` runs ``bench verdict`` on them
with ``benchmarks/claims/<paper>.toml``.

What is kept (:data:`SAMPLES`): per paper the groups, the generator
parameters (points) and instance seeds, and the method labels the paper's
claims read. Choices of ours, to keep a sample a few kB: the rows' ``info``
is emptied (no claim of these papers reads it) and ``metrics`` keeps only
the metrics the claims read; every other column is the real row's.
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path
from typing import Any

from ddlsched.bench.paths import portable_path
from ddlsched.bench.store import ResultStore, read_manifest, read_rows

#: Per paper: labels, metrics kept, and per group the points (generator parameters that
#: must match; ``{}``: every point) and instance seeds of the sample.
SAMPLES: dict[str, dict[str, Any]] = {
    # C1's mixed point (10 jobs, 100 machines), two favourable Fig. 6 points and one of
    # Fig. 7; two C2 points; Fig. 10 (C3).
    "dmlrs": {
        "labels": ["pd_ors", "fifo", "drf", "dorm", "oasis"],
        "metrics": ["median_training_time_s"],
        "points": {
            "fig6-machines": [{"machines": 10}, {"machines": 100}],
            "fig7-jobs": [{"jobs": 10}, {"jobs": 40}],
            "fig8-oasis-jobs": [{"jobs": 20}],
            "fig9-oasis-machines": [{"machines": 10}],
            "fig10-median": [{}],
        },
        "seeds": [0, 1, 2],
    },
    # Five availability patterns per Table II configuration and model of the claims, with
    # the GPU-level ILP of the placement-time claims where the suite runs it.
    "placement": {
        "labels": ["heavy_edge", "exact", "exact_gpu_level"],
        "metrics": [],
        "points": {
            group: [{"model": "vgg16"}, {"model": "gpt175b"}]
            for group in ("table2", "table2-paper", "table2-paper-cut-cost")
        },
        "seeds": [0, 1, 2, 3, 4],
    },
}


def portable_manifest(manifest: dict[str, Any]) -> dict[str, Any]:
    """The manifest with its suite file's path made portable (:func:`portable_path`)."""
    if manifest.get("suite_file"):
        manifest["suite_file"] = portable_path(manifest["suite_file"])
    return manifest


def _matches(params: dict[str, Any], points: list[dict[str, Any]]) -> bool:
    return any(all(params.get(k) == v for k, v in point.items()) for point in points)


def sample_rows(source: str | Path, spec: dict[str, Any]) -> list[dict[str, Any]]:
    """The rows of ``source`` that :data:`SAMPLES`' ``spec`` keeps, slimmed."""
    rows = []
    for row in read_rows(source).to_pylist():
        points = spec["points"].get(row["group"])
        params = json.loads(row["instance_params"] or "{}")
        if points is None or row["label"] not in spec["labels"]:
            continue
        if row["instance_seed"] not in spec["seeds"] or not _matches(params, points):
            continue
        metrics = json.loads(row["metrics"] or "{}")
        row["metrics"] = json.dumps({k: metrics[k] for k in spec["metrics"] if k in metrics})
        row["info"] = "{}"
        rows.append(row)
    return rows


def write_sample(paper: str, source: str | Path | list, out: str | Path) -> int:
    """Write the sample of ``paper`` from ``source`` (a results directory or a list of
    them, rows pooled) into ``out`` (replaced); its row count."""
    sources = source if isinstance(source, list) else [source]
    rows = [row for one in sources for row in sample_rows(one, SAMPLES[paper])]
    if not rows:
        raise SystemExit(f"{', '.join(map(str, sources))}: no rows of the {paper} sample")
    out = Path(out)
    if out.exists():
        shutil.rmtree(out)
    store = ResultStore(out)
    store.extend(rows)
    store.flush()
    manifest = portable_manifest(read_manifest(sources[0]))
    names = " and ".join(portable_path(one) for one in sources)
    manifest["sample"] = (
        f"{len(rows)} rows of {names} (python benchmarks/verdict_samples.py {paper}); "
        "info emptied, metrics cut to the claims'"
    )
    store.write_manifest(manifest)
    return len(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("paper", choices=sorted(SAMPLES))
    parser.add_argument(
        "source", nargs="+", help="results directory of the paper's suite (or several)"
    )
    parser.add_argument("out", help="sample directory to write (replaced)")
    args = parser.parse_args()
    count = write_sample(args.paper, args.source, args.out)
    print(f"{args.out}: {count} rows")


if __name__ == "__main__":
    main()
