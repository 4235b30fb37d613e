"""Time models of the simulator: start overheads, grouped periods, edge weights.

From the original (github Rivendile/Muri, ``simulator/``): ``run_sim.py``
(``overhead_dict``: the start overhead by GPU count and model) and
``matching.py`` (``_Packing.calc_iteration_time``: the staged period
recurrence). ``period_model="eq3"`` (the ``paper`` preset) uses Eq. 3 of
the paper instead: the best period over the offsets of the ``k = 3``
resources (:func:`ddlsched.problems.muri.best_periods`); ``weight_model``
``used_ratio`` (the original's: summed resource times / (4 x grouped
period)) or ``eq4`` (gamma of Eq. 4) weighs a group.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np

from ddlsched.problems.muri_sim import SimConfig

__all__ = [
    "DEFAULT_OVERHEAD_S",
    "START_OVERHEAD_S",
    "GroupPeriods",
    "staged_period",
    "start_overhead_s",
]

# Start overhead in seconds by GPU count and model (run_sim.py ``overhead_dict``); 10 s otherwise.
START_OVERHEAD_S: dict[int, dict[str, float]] = {
    1: {
        "vgg16": 7,
        "vgg19": 7,
        "resnet18": 4,
        "shufflenet_v2_x1_0": 4,
        "bert": 10,
        "gpt2": 10,
        "a2c": 38,
        "dqn": 5,
    },
    2: {
        "vgg16": 7,
        "vgg19": 7,
        "resnet18": 5,
        "shufflenet_v2_x1_0": 4,
        "bert": 10,
        "gpt2": 10,
        "a2c": 39,
        "dqn": 5,
    },
    4: {
        "vgg16": 8,
        "vgg19": 8,
        "resnet18": 5,
        "shufflenet_v2_x1_0": 5,
        "bert": 10,
        "gpt2": 10,
        "a2c": 39,
        "dqn": 6,
    },
    8: {
        "vgg16": 9,
        "vgg19": 9,
        "resnet18": 7,
        "shufflenet_v2_x1_0": 5,
        "bert": 10,
        "gpt2": 10,
        "a2c": 46,
        "dqn": 6,
    },
    16: {
        "vgg16": 9,
        "vgg19": 10,
        "resnet18": 7,
        "shufflenet_v2_x1_0": 7,
        "bert": 10,
        "gpt2": 10,
        "a2c": 46,
        "dqn": 8,
    },
    32: {
        "vgg16": 10,
        "vgg19": 10,
        "resnet18": 7,
        "shufflenet_v2_x1_0": 8,
        "bert": 10,
        "gpt2": 10,
        "a2c": 46,
        "dqn": 8,
    },
}
#: The start overhead of a (GPU count, model) the table does not list.
DEFAULT_OVERHEAD_S = 10.0


def start_overhead_s(gpus: int, model: str) -> float:
    """Start overhead of one job of ``model`` on ``gpus`` GPUs (:data:`START_OVERHEAD_S`)."""
    return START_OVERHEAD_S.get(gpus, {}).get(model, DEFAULT_OVERHEAD_S)


def staged_period(res: Sequence[Sequence[float]], slots: int = 4) -> float:
    """Period of one ordering of a group in the original's staged model (matching.py).

    Four slots; in each stage one job uses the network (resource 2), the next
    the GPU (resource 1), and the data phase (resource 0) of the one after
    spans two stages. ``f[s]`` is the end of stage ``s``; the period is read
    once it repeats (relative 1e-3), else after two rounds.
    """
    p = len(res)
    rounds = 2
    f = [0.0] * (slots * rounds + 1)
    period = 0.0
    for i in range(slots * rounds):
        a, b, c = (i + 1) % slots, (i + 2) % slots, (i + 3) % slots
        if a < p:
            f[i + 1] = max(f[i + 1], f[i] + res[a][2])
        if b < p:
            f[i + 1] = max(f[i + 1], f[i] + res[b][1])
        if i > 0 and c < p:
            f[i + 1] = max(f[i + 1], f[i - 1] + res[c][0])
        if i >= slots and math.isclose(f[i + 1] - f[i - 3], f[i] - f[i - 4], rel_tol=1e-3):
            period = f[i + 1] - f[i - 3]
            break
    if not period > 0:
        period = f[slots * rounds] - f[slots * rounds - slots]
    return period


class GroupPeriods:
    """Memoised grouped periods and edge weights of profile-type tuples.

    A group is the tuple of its members' profile types (indices into
    ``type_resource_s`` / ``type_iteration_s``), in member order.
    """

    def __init__(
        self, config: SimConfig, type_resource_s: np.ndarray, type_iteration_s: np.ndarray
    ):
        self.config = config
        self.type_resource_s = type_resource_s
        self.type_iteration_s = type_iteration_s
        self._raw: dict[tuple[int, ...], float] = {}
        self._weight: dict[tuple[int, ...], float] = {}
        self._period: dict[tuple[int, ...], float] = {}

    def raw(self, types: tuple[int, ...]) -> float:
        """Best period before interference, members in the given order."""
        got = self._raw.get(types)
        if got is not None:
            return got
        if len(types) == 1:
            value = float(self.type_iteration_s[types[0]])
        elif self.config.period_model == "eq3":
            from ddlsched.problems.muri import best_periods

            arr = self.type_resource_s[list(types)][None]
            value = float(best_periods(arr)[0][0])
        else:
            res = [tuple(self.type_resource_s[t]) for t in types]
            value = math.inf
            for perm in itertools.permutations(res):
                value = min(value, staged_period(perm))
            if len(types) == 2:
                a, b = res
                alt = max(a[0], b[1] + b[2]) + max(b[0], a[1] + a[2])
                value = min(value, alt)
        self._raw[types] = value
        return value

    def period(self, types: tuple[int, ...]) -> float:
        """The group's iteration period: :meth:`raw` times the interference factor of its size."""
        got = self._period.get(types)
        if got is None:
            got = self.raw(types)
            if len(types) >= 2:
                got *= self.config.interference[len(types) - 2]
            self._period[types] = got
        return got

    def weight(self, types: tuple[int, ...]) -> float:
        """The group's weight (``weight_model``: ``used_ratio`` or Eq. 4's gamma)."""
        got = self._weight.get(types)
        if got is not None:
            return got
        if self.config.weight_model == "eq4":
            arr = self.type_resource_s[list(types)]
            period = self.raw(types)
            k = arr.shape[1]
            got = float(1.0 - np.sum((period - arr.sum(axis=0)) / period) / k)
        else:
            used = float(self.type_resource_s[list(types)].sum())
            got = used / (self.period(types) * 4)
        self._weight[types] = got
        return got
