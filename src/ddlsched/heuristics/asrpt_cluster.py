"""Free GPUs per server for the asrpt policies: server selection in ``O(g + servers taken)``.

Spec ``docs/families/asrpt.md``, A-SRPT's step 4 (most-free-first and
least-free-first selection); A-SRPT paper, Algorithm 1, Lines 9 and 27.
:class:`FreeGpus` keeps the servers bucketed by free GPUs (ascending index
inside a bucket), so a selection walks the buckets (most-free: ``g`` down to
1; least-free: 1 up to ``g``) and returns exactly what
:func:`ddlsched.heuristics.asrpt_config.select_servers` returns (tested).
Re-exported by :mod:`ddlsched.heuristics.asrpt`.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Sequence

__all__ = ["FreeGpus"]


class FreeGpus:
    """Free GPUs per server, the servers bucketed by their free count (spec step 4).

    ``free[m]`` is server ``m``'s free GPUs and ``total`` their sum.
    :meth:`select` returns the spec's most-free-first or least-free-first
    selection; :meth:`allocate` and :meth:`release` move servers between
    buckets (``O(log M)`` search plus a short list move).
    """

    __slots__ = ("_buckets", "free", "gpus_per_server", "total")

    def __init__(self, servers: int, gpus_per_server: int) -> None:
        self.gpus_per_server = gpus_per_server
        self.free = [gpus_per_server] * servers
        self.total = servers * gpus_per_server
        self._buckets: list[list[int]] = [[] for _ in range(gpus_per_server + 1)]
        self._buckets[gpus_per_server] = list(range(servers))

    def select(self, need: int, most_free: bool) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """``(servers, takes)`` for ``need`` GPUs: the servers in selection order and the
        GPUs taken on each (all the free GPUs of each, the last one partly).

        Most-free-first: free GPUs descending, ties by lower index; least-free-first:
        the servers with a free GPU, ascending, ties by lower index. Requires
        ``1 <= need <= total``.
        """
        if not 1 <= need <= self.total:
            raise ValueError(f"{need} GPUs requested, {self.total} free")
        g = self.gpus_per_server
        servers: list[int] = []
        takes: list[int] = []
        left = need
        for count in range(g, 0, -1) if most_free else range(1, g + 1):
            for m in self._buckets[count]:
                take = count if count < left else left
                servers.append(m)
                takes.append(take)
                left -= take
                if left == 0:
                    return tuple(servers), tuple(takes)
        raise AssertionError("free-GPU buckets out of step with the total")  # pragma: no cover

    def _move(self, m: int, new: int) -> None:
        bucket = self._buckets[self.free[m]]
        del bucket[bisect_left(bucket, m)]
        insort(self._buckets[new], m)
        self.free[m] = new

    def allocate(self, servers: Sequence[int], takes: Sequence[int]) -> None:
        """Take ``takes[k]`` GPUs on ``servers[k]``."""
        for m, take in zip(servers, takes, strict=True):
            if take > self.free[m]:
                raise ValueError(f"server {m}: {take} GPUs taken, {self.free[m]} free")
            self._move(m, self.free[m] - take)
            self.total -= take

    def release(self, servers: Sequence[int], takes: Sequence[int]) -> None:
        """Give back ``takes[k]`` GPUs on ``servers[k]``."""
        for m, take in zip(servers, takes, strict=True):
            if self.free[m] + take > self.gpus_per_server:
                raise ValueError(f"server {m}: {take} GPUs released, {self.free[m]} free")
            self._move(m, self.free[m] + take)
            self.total += take
