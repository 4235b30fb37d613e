"""Does Philly's random forest reduce to a per-group mean? (asrpt, spec revision 2026-11-25)

    python benchmarks/asrpt_rf_groups.py [--trace philly] [--seed 0]

Philly's RF features are the virtual cluster and the GPU count, and its
group key is the pair (virtual cluster, GPU count): every group is one
point of feature space. A fully grown regression tree (scikit-learn's
defaults: no depth limit, ``min_samples_leaf = 1``) splits until a leaf
holds one distinct feature vector or no split lowers the squared error, so
each leaf is one group of the tree's bootstrap sample and predicts that
sample's mean; the forest averages 100 such means. The prediction is then
the group mean up to bootstrap noise, except for groups whose neighbours in
feature space share their mean (no split separates them).

This script measures it on the whole test split (``preset paper``,
``jobs=all``, ``start=0``; seed 0 draws the configurations, hence the
iterations): the instance built with ``predictor=rf`` against the one built
with ``predictor=mean`` (same seed: same jobs, same true iterations), job
by job, and per group with its training size.
"""

from __future__ import annotations

import argparse
from collections import Counter

import numpy as np

from ddlsched.families.asrpt import generate


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trace", default="philly")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    common = dict(trace=args.trace, jobs="all", start=0)
    rf = generate("paper", args.seed, predictor="rf", **common)
    mean = generate("paper", args.seed, predictor="mean", **common)
    assert [j.id for j in rf.jobs] == [j.id for j in mean.jobs]
    assert [j.iterations for j in rf.jobs] == [j.iterations for j in mean.jobs]
    p_rf = np.array([j.predicted_iterations for j in rf.jobs])
    p_mean = np.array([j.predicted_iterations for j in mean.jobs])
    n = np.array([j.iterations for j in rf.jobs], dtype=float)
    seen = p_mean > 0
    rel = np.abs(p_rf[seen] - p_mean[seen]) / p_mean[seen]
    features = Counter(tuple(sorted(j.features.items())) for j in rf.jobs)
    groups = Counter(j.group for j in rf.jobs)
    # training-split size of each group: the whole trace's jobs before the split
    whole = generate(
        "paper", args.seed, predictor="mean", trace=args.trace, jobs="all", window_from="all"
    )
    num_train = whole.provenance["split"]["train"][1]
    train = Counter(j.group for j in whole.jobs if int(j.id[1:]) < num_train)
    print(f"trace {args.trace}, seed {args.seed}: {rf.num_jobs} test-split jobs")
    print(f"  RF features: {sorted({k for j in rf.jobs for k in j.features})}")
    print(f"  distinct feature vectors {len(features)}, distinct group keys {len(groups)}")
    print(f"  unseen (n~ = 0 under both): {int(np.sum(~seen))} jobs")
    print("  |rf - mean| / mean over seen jobs:")
    for q in (50, 90, 99, 100):
        print(f"    p{q}: {np.percentile(rel, q):.4%}")
    for edge in (0.001, 0.01, 0.05):
        print(f"    share within {edge:.1%}: {np.mean(rel <= edge):.2%}")
    corr = np.corrcoef(np.log1p(p_rf[seen]), np.log1p(p_mean[seen]))[0, 1]
    print(f"  correlation of log(1 + n~), rf vs mean: {corr:.6f}")
    err_rf = np.mean(np.abs(p_rf - n))
    err_mean = np.mean(np.abs(p_mean - n))
    print(f"  epsilon_bar (iterations): rf {err_rf:.6g}, mean {err_mean:.6g}")
    worst = np.argsort(-np.where(seen, np.abs(p_rf - p_mean) / np.maximum(p_mean, 1e-300), 0))
    shown = set()
    big = np.array([train[j.group] >= 100 for j in rf.jobs])[seen]
    print(
        f"  groups with >= 100 training jobs: {np.mean(big):.2%} of seen test jobs, "
        f"p99 gap {np.percentile(rel[big], 99):.4%}, max {rel[big].max():.4%}"
    )
    print("  largest relative gaps (group: rf, mean, training jobs, test jobs of the group):")
    for k in worst:
        g = rf.jobs[k].group
        if g in shown or not seen[k]:
            continue
        shown.add(g)
        print(f"    {g}: {p_rf[k]:.6g}, {p_mean[k]:.6g}, {train[g]}, {groups[g]}")
        if len(shown) == 5:
            break


if __name__ == "__main__":
    main()
