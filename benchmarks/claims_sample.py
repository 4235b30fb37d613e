"""Write a small sample of a results directory: the committed test data of ``bench verdict``.

A test runs ``ddlsched bench verdict`` on a small committed
results sample per paper (``tests/test_bench_verdict_asrpt_muri.py``). This script cuts
one out of a real run: the latest rows of the chosen groups and method labels
(optionally some instance seeds), unchanged but for ``info`` when
``--info-keys`` cuts it to the keys the claims read, written through the store API
(:class:`ddlsched.bench.store.ResultStore`) as one Parquet part, with the
source's manifest (its suite, suite file hash, versions, git commit, machine
and run dates) plus ``sample_of``: the source directory and the selection.
The instance cache is not copied (``bench verdict`` does not read it).

    python benchmarks/claims_sample.py runs/paper/asrpt tests/data/verdict/asrpt \\
        --groups jobs-itp jobs-muri2 --labels asrpt wcs_duration lb_sum lb_srpt

The samples in ``tests/data/verdict`` and the commands that wrote them:
``tests/data/verdict/README.md``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from verdict_samples import portable_manifest, portable_path

from ddlsched.bench.store import ResultStore, read_manifest, read_rows
from ddlsched.errors import DdlschedError


def slim_info(text: str | None, keys: list[str]) -> str:
    """The row's ``info`` JSON cut to the dotted ``keys`` (``theory.rho``) the claims read."""
    info = json.loads(text or "{}")
    kept: dict = {}
    for key in keys:
        value, parts = info, key.split(".")
        for part in parts:
            value = value.get(part) if isinstance(value, dict) else None
        if value is None:
            continue
        target = kept
        for part in parts[:-1]:
            target = target.setdefault(part, {})
        target[parts[-1]] = value
    return json.dumps(kept)


def sample_rows(
    source: Path, groups: list[str], labels: list[str], seeds: list[int] | None = None
) -> list[dict]:
    """The source's latest rows of ``groups`` and ``labels`` (and ``seeds``, if given)."""
    rows = [
        row
        for row in read_rows(source).to_pylist()
        if row["group"] in groups
        and row["label"] in labels
        and (seeds is None or row["instance_seed"] in seeds)
    ]
    if not rows:
        raise DdlschedError(f"{source}: no rows of groups {groups} and labels {labels}")
    return rows


def write_sample(source: Path, out: Path, rows: list[dict], selection: dict) -> None:
    """Write ``rows`` to a new results directory ``out`` with the source's manifest."""
    if out.exists() and any(out.iterdir()):
        raise DdlschedError(f"{out}: exists and is not empty")
    store = ResultStore(out)
    store.extend(rows)
    store.flush()
    manifest = portable_manifest(read_manifest(source))
    manifest["sample_of"] = {"directory": portable_path(source), **selection, "rows": len(rows)}
    store.write_manifest(manifest)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path, help="results directory (bench run's output)")
    parser.add_argument("out", type=Path, help="new directory of the sample")
    parser.add_argument("--groups", nargs="+", required=True)
    parser.add_argument("--labels", nargs="+", required=True)
    parser.add_argument("--seeds", nargs="+", type=int, help="instance seeds (default: all)")
    parser.add_argument(
        "--info-keys",
        nargs="+",
        help="keep only these dotted keys of each row's info (default: the whole info)",
    )
    args = parser.parse_args(argv)
    rows = sample_rows(args.source, args.groups, args.labels, args.seeds)
    if args.info_keys:
        for row in rows:
            row["info"] = slim_info(row["info"], args.info_keys)
    selection = {"groups": args.groups, "labels": args.labels, "seeds": args.seeds,
                 "info_keys": args.info_keys}  # fmt: skip
    write_sample(args.source, args.out, rows, selection)
    print(f"{args.out}: {len(rows)} rows of {args.source}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
