"""Iteration predictors of family ``asrpt``: random forest, mean, median, perfect, noisy.

Spec ``docs/families/asrpt.md`` ("Presets, generators and data": prediction); A-SRPT paper,
Sec. IV-C-3 (random forest with squared-error splits, 100 trees, "0
iterations for unseen jobs") and Sec. V-A-1-c / V-B-2-d (first 80 % of
the jobs train; mean and median of previous job iterations as
alternatives).

The caller (:mod:`ddlsched.workloads.asrpt_window`) splits a trace by
submission time and hands this module the *training* rows only (features,
group keys, true iterations ``n``) to :func:`fit`; the window's rows reach
:meth:`FittedPredictor.predict` with their features and group keys but
never their iterations, so no window job's iterations can reach any
prediction (no leakage; a test changes a window job's iterations and
checks that no prediction moves). ``perfect`` and ``noisy`` are by
definition functions of the window's own iterations
(:func:`oracle_predictions`).

* ``rf``: ``sklearn.ensemble.RandomForestRegressor(n_estimators=100,
  criterion="squared_error", random_state=seed)``, other arguments at
  their defaults (bootstrap, ``max_features=1.0``, one core); target
  ``n``; features in the given order, categorical ones ordinal-encoded
  in order of first appearance in the training split (code 0 for the
  first value seen, ...), numeric ones as floats. A categorical value
  absent from the training split gets code ``-1`` (a value no training
  row has; such a job is usually unseen anyway, see below).
* ``mean``, ``median``: the mean / median of ``n`` over the training jobs
  of the job's group key.
* unseen (group key absent from the training split): ``n~ = 0`` under
  ``rf``, ``mean`` and ``median``, whatever the forest would say.
* ``perfect``: ``n~ = n``; ``noisy``: ``n~ = n exp(sigma Z)``, ``Z``
  standard normal from the caller's seeded generator, one draw per job in
  window order.

Fitted predictors are cached in-process (at most :data:`CACHE_SIZE`),
keyed by a digest of everything the fit depends on (predictor, seed,
feature names and values, group keys, targets), so a benchmark that builds
many windows of one trace trains once.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ddlsched.errors import InvalidInstanceError

__all__ = [
    "CACHE_SIZE",
    "LEARNED",
    "PREDICTORS",
    "FittedPredictor",
    "encode_features",
    "fit",
    "oracle_predictions",
]

PREDICTORS = ("rf", "mean", "median", "perfect", "noisy")
#: The predictors trained on the training split (the others read the window's own n).
LEARNED = ("rf", "mean", "median")
CACHE_SIZE = 8
RF_TREES = 100

_CACHE: OrderedDict[str, FittedPredictor] = OrderedDict()


@dataclass(frozen=True, eq=False)
class FittedPredictor:
    """A predictor fitted on a training split; :meth:`predict` maps rows to ``n~``."""

    kind: str
    feature_names: tuple[str, ...]
    categorical: tuple[str, ...]
    categories: Mapping[str, pd.Index]  # first-appearance order of the training split
    seen_groups: pd.Index
    group_values: pd.Series | None  # mean / median per group
    forest: Any = None  # a fitted RandomForestRegressor

    def encode(self, features: Mapping[str, Sequence[Any]]) -> np.ndarray:
        """The feature matrix of ``features`` with the training split's encoding."""
        return encode_features(features, self.feature_names, self.categorical, self.categories)

    def predict(self, features: Mapping[str, Sequence[Any]], groups: Sequence[str]) -> np.ndarray:
        """``n~`` per row (float, ``>= 0``); rows of unseen group keys get 0."""
        groups = pd.Index(np.asarray(groups, dtype=object))
        seen = self.seen_groups.get_indexer(groups) >= 0
        out = np.zeros(len(groups), dtype=float)
        if not seen.any():
            return out
        if self.kind == "rf":
            matrix = self.encode(features)
            out[seen] = self.forest.predict(matrix[seen])
        else:
            assert self.group_values is not None
            out[seen] = self.group_values.reindex(groups[seen]).to_numpy(dtype=float)
        return np.maximum(out, 0.0)


def encode_features(
    features: Mapping[str, Sequence[Any]],
    names: Sequence[str],
    categorical: Sequence[str],
    categories: Mapping[str, pd.Index],
) -> np.ndarray:
    """Columns ``names`` as a float matrix; categorical ones by their ``categories`` code
    (``-1`` for a value not among them), numeric ones as floats."""
    columns = []
    for name in names:
        values = np.asarray(features[name], dtype=object if name in categorical else float)
        if name in categorical:
            columns.append(categories[name].get_indexer(values).astype(float))
        else:
            columns.append(values.astype(float))
    return np.column_stack(columns) if columns else np.zeros((0, 0))


def _digest(
    kind: str,
    seed: int,
    features: Mapping[str, Sequence[Any]],
    names: Sequence[str],
    groups: Sequence[str],
    target: np.ndarray,
) -> str:
    h = hashlib.sha256()
    h.update(f"{kind}|{seed}|{','.join(names)}".encode())
    for name in names:
        col = features[name]
        if isinstance(col, np.ndarray) and col.dtype != object:
            h.update(str(col.dtype).encode() + col.tobytes())
        else:
            h.update("\x1f".join(map(str, col)).encode())
        h.update(b"\x1e")
    h.update("\x1f".join(groups).encode())
    h.update(np.ascontiguousarray(target, dtype=float).tobytes())
    return h.hexdigest()


def fit(
    kind: str,
    features: Mapping[str, Sequence[Any]],
    names: Sequence[str],
    categorical: Sequence[str],
    groups: Sequence[str],
    iterations: np.ndarray,
    seed: int,
) -> FittedPredictor:
    """Fit predictor ``kind`` (``rf``, ``mean`` or ``median``) on the training rows."""
    if kind not in LEARNED:
        raise InvalidInstanceError(
            f"predictor: {kind!r} is not trained (trained ones: {', '.join(LEARNED)})"
        )
    target = np.asarray(iterations, dtype=float)
    groups = [str(g) for g in groups]
    if len(target) == 0:
        raise InvalidInstanceError("predictor: the training split is empty")
    if len(groups) != len(target) or any(len(features[n]) != len(target) for n in names):
        raise InvalidInstanceError("predictor: training columns have different lengths")
    key = _digest(kind, seed, features, names, groups, target)
    cached = _CACHE.get(key)
    if cached is not None:
        _CACHE.move_to_end(key)
        return cached
    categories = {
        name: pd.Index(pd.unique(np.asarray(features[name], dtype=object))) for name in categorical
    }
    seen = pd.Index(pd.unique(np.asarray(groups, dtype=object)))
    forest = None
    group_values = None
    if kind == "rf":
        from sklearn.ensemble import RandomForestRegressor

        matrix = encode_features(features, names, categorical, categories)
        forest = RandomForestRegressor(
            n_estimators=RF_TREES, criterion="squared_error", random_state=seed
        )
        forest.fit(matrix, target)
    else:
        by_group = pd.Series(target).groupby(np.asarray(groups, dtype=object), sort=False)
        group_values = by_group.mean() if kind == "mean" else by_group.median()
    fitted = FittedPredictor(
        kind=kind,
        feature_names=tuple(names),
        categorical=tuple(categorical),
        categories=categories,
        seen_groups=seen,
        group_values=group_values,
        forest=forest,
    )
    _CACHE[key] = fitted
    while len(_CACHE) > CACHE_SIZE:
        _CACHE.popitem(last=False)
    return fitted


def oracle_predictions(
    kind: str, iterations: np.ndarray, *, sigma: float = 0.0, rng: np.random.Generator | None = None
) -> np.ndarray:
    """``perfect`` (``n~ = n``) or ``noisy`` (``n~ = n exp(sigma Z)``, ``Z`` from ``rng``)."""
    n = np.asarray(iterations, dtype=float)
    if kind == "perfect":
        return n.copy()
    if kind == "noisy":
        if rng is None:
            raise InvalidInstanceError("predictor noisy: needs a seeded generator")
        return n * np.exp(sigma * rng.standard_normal(len(n)))
    raise InvalidInstanceError(f"predictor: {kind!r} is not an oracle (perfect, noisy)")
