"""Parameters of the asrpt family's methods (:mod:`ddlsched.families.asrpt` registers the
methods; the classes live here to keep that module a readable map). Each field's help
text is what ``ddlsched methods`` prints; see the family docstring for the methods."""

from __future__ import annotations

from dataclasses import dataclass

from ddlsched.heuristics.asrpt_arrival import ELIGIBILITIES
from ddlsched.params import param

#: Server-selection rules of the baselines (Sec. V-A-1-d; ``asrpt``: A-SRPT's rule by class).
SELECTIONS = ("most_free", "least_free", "asrpt")


@dataclass(frozen=True)
class AsrptParams:
    """Parameters of A-SRPT (Algorithm 1)."""

    delay_factor: float = param(
        1.0, "tau: a delay window lasts tau (g_i/G) n~_i alpha~_min_i (Line 17)", minimum=0.0
    )
    comm_heavy: float = param(
        1.5, "communication-heavy when alpha_max / alpha~_min >= this (Line 8)", minimum=1.0
    )
    delay_blocks: bool = param(
        True, "no other job starts while a delay window is open (paper); false: ablation"
    )
    eligibility: str = param(
        "virtual",
        "virtual: a job is eligible at its virtual completion (Algorithm 1, Line 2); "
        "arrival: at its arrival, queued in virtual-completion order (ours, not the paper's)",
        choices=ELIGIBILITIES,
    )
    theory: bool = param(True, "record Theorem 1 and Lemmas 2-3 in info['theory']")


@dataclass(frozen=True)
class BaselineParams:
    """Parameters of the baselines (Sec. V-A-1-d)."""

    server_selection: str = param(
        "most_free",
        "servers a job takes: most_free, least_free or asrpt (A-SRPT's rule by class)",
        choices=SELECTIONS,
    )
    comm_heavy: float = param(1.5, "class threshold used by server_selection = asrpt", minimum=1.0)


@dataclass(frozen=True)
class ImproveParams:
    """Parameters of ``improve`` (ours; :mod:`ddlsched.heuristics.asrpt_improve`)."""

    starts: str = param(
        "all",
        "all, all+best_placement, or a comma-separated subset of the policies, packed, "
        "packed_best_fit, offline_wcs_workload, offline_wcs_duration, best_placement",
    )
    window: int = param(
        5, "LNS window: list positions whose every order is tried", minimum=2, maximum=7
    )
    horizon: int = param(
        32, "list positions after a window scored before a full re-decode", minimum=0, maximum=10**6
    )
    max_windows: int = param(
        0, "stop after this many windows (0: no cap)", minimum=0, maximum=10**9
    )
    cpsat_windows: int = param(
        0,
        "after the list search, at most this many CP-SAT window moves (0: none)",
        minimum=0,
        maximum=10**6,
    )
    cpsat_window: int = param(
        30, "jobs freed per CP-SAT window (consecutive by start)", minimum=2, maximum=200
    )
    cpsat_dtime: float = param(
        2.0,
        "CP-SAT deterministic time per window (machine-independent units)",
        minimum=0.0,
        maximum=1e6,
        exclusive_minimum=True,
    )


@dataclass(frozen=True)
class ExactParams:
    """Parameters of the exact method (CP-SAT over usage-vector modes)."""

    solver: str = param(
        "cpsat",
        "cpsat (interval model) or milp (time-indexed, on --backend)",
        choices=("cpsat", "milp"),
    )
    cross_check: bool = param(False, "also solve with the other model and compare")
    max_job_modes: int = param(
        2000, "refuse instances with more (job, mode) pairs", minimum=1, maximum=1_000_000
    )
    max_horizon_units: int = param(
        5000,
        "refuse instances whose horizon exceeds this many time units",
        minimum=1,
        maximum=10_000_000,
    )
    incumbent_search: bool = param(
        True, "warm start: the best serial schedule over several job orders (ours)"
    )
    objective_bound: bool = param(
        True, "constraint sum C_i >= the lb_busy partition bound of the integer data (ours)"
    )
    symmetry: bool = param(True, "identical jobs start in index order (ours)")
    lp_relaxation: bool = param(True, "CP-SAT linearization_level 2 (ours)")
    lp_bound: bool = param(
        True, "constraint sum C_i >= the time-indexed LP relaxation (HiGHS IPM; ours)"
    )
    improve_incumbent: bool = param(
        True, "warm start: improve's schedule as incumbent, hint and window bound (ours)"
    )
    job_windows: bool = param(
        True, "windows from the partition bound of the other jobs, per job (ours)"
    )
    release_order: bool = param(True, "jobs with the same modes start in order of release (ours)")
    milp_proof: bool = param(
        True, "when CP-SAT's search proves nothing in half its time, the time-indexed MILP (ours)"
    )


@dataclass(frozen=True)
class BoundParams:
    """Parameters of ``lb_sum`` and ``lb_srpt``."""

    alpha_lb: str = param(
        "ilp",
        "per-iteration time bound per configuration: the placement ILP within the time limit "
        "(ilp; a configuration the limit cuts keeps a weaker valid value) or the closed form "
        "alone (closed_form: weaker, and the same on every machine)",
        choices=("ilp", "closed_form"),
    )


@dataclass(frozen=True)
class LagrangeParams(BoundParams):
    """Parameters of ``lb_lagrange`` (ours): ``alpha_lb`` as the other bounds, the ascent's."""

    slots: int = param(
        2000,
        "slots of the multiplier grid (strength only, never validity)",
        minimum=1,
        maximum=1_000_000,
    )
    iterations: int = param(
        200,
        "subgradient iterations at most (the best iterate is kept)",
        minimum=1,
        maximum=1_000_000,
    )
    patience: int = param(
        5,
        "iterations without a better bound before the step is halved (strength only)",
        minimum=1,
        maximum=1_000_000,
    )


@dataclass(frozen=True)
class BranchParams(BoundParams):
    """Parameters of ``lb_branch`` (ours): the root's ascent as ``lb_lagrange``'s, then the
    best-first search over start windows (:mod:`ddlsched.models.asrpt_branch`)."""

    slots: int = param(
        2000,
        "slots of the multiplier grid (strength only, never validity)",
        minimum=1,
        maximum=1_000_000,
    )
    iterations: int = param(
        2000, "the root's subgradient iterations at most", minimum=1, maximum=1_000_000
    )
    patience: int = param(
        50,
        "iterations without a better bound before the step is halved (strength only)",
        minimum=1,
        maximum=1_000_000,
    )
    nodes: int = param(
        60,
        "node ascents, the root included; a split's children all run, so up to pieces - 1 "
        "more (1: the root alone)",
        minimum=1,
        maximum=100_000,
    )
    node_iterations: int = param(
        300,
        "subgradient iterations at most per child, from its parent's multipliers",
        minimum=1,
        maximum=1_000_000,
    )
    pieces: int = param(
        4, "children per split (pieces of the split job's start window)", minimum=2, maximum=64
    )
    branch_jobs: int = param(
        4,
        "how many jobs' start windows may be split: those of largest GPU time (order gpu_time) "
        "or of most GPUs (order gpus)",
        minimum=1,
        maximum=10_000,
    )
    capacity_cuts: bool = param(
        True,
        "also relax sum floor(g_i/k) <= floor(G/k) per GPU count k of the jobs with G/k "
        "fractional (strength only)",
    )
    order: str = param(
        "gpu_time",
        "the jobs split: the branch_jobs of largest GPU time g_i p_i (gpu_time) or of most "
        "GPUs (gpus), split most GPUs first (strength only)",
        choices=("gpu_time", "gpus"),
    )
