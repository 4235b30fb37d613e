"""Shared helpers of the dmlrs slot-problem tests (Algorithm 4): hand-built slot data."""

from __future__ import annotations

import numpy as np

from ddlsched.heuristics.dmlrs_slot import SlotData


def slot_data(pw, ps, alpha, beta, residual, gamma, F) -> SlotData:
    """One (job, slot) of Problem (23) from plain lists (slack 1e-12)."""
    residual = np.asarray(residual, dtype=float)
    return SlotData(
        worker_price=np.asarray(pw, dtype=float),
        ps_price=np.asarray(ps, dtype=float),
        alpha=np.asarray(alpha, dtype=float),
        beta=np.asarray(beta, dtype=float),
        residual=residual,
        gamma=gamma,
        max_workers=F,
        slack=np.full(residual.shape, 1e-12),
    )


def lp_args(data: SlotData) -> tuple:
    """The arguments of :meth:`HighsSlotSolvers.lp` (and, with ``D``, ``ilp``) for ``data``."""
    return (
        data.worker_price,
        data.ps_price,
        data.alpha,
        data.beta,
        data.residual,
        data.gamma,
        data.max_workers,
    )
