"""Parameters of the rar family's methods (:mod:`ddlsched.families.rar` registers the
methods; the classes live here to keep that module a readable map). Each field's help
text is what ``ddlsched methods`` prints; see the family docstring for the methods."""

from __future__ import annotations

from dataclasses import dataclass

from ddlsched.params import param
from ddlsched.problems.rar import MAX_GPUS

#: ``cpsat placements=whole``'s default budgets (deterministic CP-SAT units; the rar page,
#: "``cpsat placements=whole``: a galloping target search").
WHOLE_FIRST_WORK, WHOLE_TARGET_WORK, WHOLE_MAX_TARGETS = 4.0, 2.0, 6

#: The theta bisection rules of SJF-BCO (Alg. 1): the paper's, or the tightest.
_BISECTION = ("paper", "tightest")


@dataclass(frozen=True)
class BaselineParams:
    """Parameters of the bisected baselines (FF, LS) and of SJF-BCO."""

    u: float = param(
        1.0, "scale of the estimate: U += rho_hat / u", minimum=0.0, exclusive_minimum=True
    )
    p_est: int = param(
        1, "contention level assumed when estimating durations", minimum=0, maximum=MAX_GPUS
    )
    bisection: str = param("paper", "theta bisection rule", choices=_BISECTION)


@dataclass(frozen=True)
class SjfBcoParams(BaselineParams):
    """Parameters of ``sjf_bco`` (Alg. 1-3; :mod:`ddlsched.heuristics.sjf_bco`)."""

    kappa: int | None = param(
        None, "fix kappa (None: Alg. 1 loops 1..max G_j)", minimum=1, maximum=MAX_GPUS
    )
    lambda_: float | dict[str, float] = param(
        1.0, "LBSGF weight (Alg. 3), for every job or per job id", minimum=1.0
    )


@dataclass(frozen=True)
class ImproveParams:
    """Parameters of ``improve`` (ours; :mod:`ddlsched.heuristics.rar_improve`)."""

    starts: str = param(
        "default",
        "default (sjf_bco, ff, ls), all (and timeindexed), or a comma-separated subset",
    )
    iterations: int = param(
        1000, "LNS candidates decoded and evaluated (0: no cap)", minimum=0, maximum=10**9
    )
    patience: int = param(
        400, "stop after this many candidates without a gain (0: never)", minimum=0, maximum=10**9
    )
    window: int = param(
        8,
        "LNS move reach: latest-finishing jobs reinserted, swap distance",
        minimum=1,
        maximum=100_000,
    )
    timeindexed_share: float = param(
        0.3,
        "share of the time limit the timeindexed start may use",
        minimum=0.0,
        maximum=1.0,
        exclusive_minimum=True,
    )


@dataclass(frozen=True)
class ExactParams:
    """Parameters of ``exact`` (:mod:`ddlsched.models.rar_exact`)."""

    presolve_bounds: bool = param(
        True, "incumbent from the heuristics and timeindexed, lower bound from timeindexed"
    )
    cross_check: bool = param(False, "re-solve a proven answer with the other backend")
    search: str = param(
        "auto",
        "contention-aware branch-and-bound (models/rar_search.py): auto = on instances within "
        "its size limits (floor rule, <= 8 jobs, <= 4 servers, <= 16 GPUs), else the MILP; "
        "always = refuse larger instances; never = the MILP only",
        choices=("auto", "always", "never"),
    )


@dataclass(frozen=True)
class GridParams:
    """The time-indexed model's grid, shared by ``timeindexed`` and ``lp_rounding``."""

    slot_width: int | str = param(
        "auto",
        "slots aggregated into one model slot ('auto': the finest that fits memory and time)",
        minimum=1,
        maximum=10_000_000,
        choices=("auto",),
    )
    max_patterns: int | str = param(
        "auto",
        "patterns per job before it gets one pooled column ('auto': 64, fewer if nothing fits)",
        minimum=1,
        maximum=100_000,
        choices=("auto",),
    )


@dataclass(frozen=True)
class TimeIndexedParams(GridParams):
    """Parameters of ``timeindexed`` (Eqs. 10-13; :mod:`ddlsched.models.rar_timeindexed`)."""

    contention: str = param(
        "free", "durations: contention-free (a valid bound) or worst", choices=("free", "worst")
    )


@dataclass(frozen=True)
class LoadLbParams:
    """Parameters of ``load_lb`` (Problem (14)) and ``contention_lb`` (ours;
    :mod:`ddlsched.models.rar_contention_bound`)."""

    max_patterns: int = param(
        64, "patterns per job before it gets one pooled column", minimum=1, maximum=100_000
    )


@dataclass(frozen=True)
class LbConfigurationParams:
    """Parameters of ``lb_configuration`` (ours; :mod:`ddlsched.models.rar_lb_configuration`)."""

    rounds: int = param(
        50, "column-generation rounds (pricing MILPs) at most", minimum=1, maximum=1_000_000
    )
    pricing_nodes: int = param(
        1000, "branch-and-bound nodes of one pricing MILP at most", minimum=1, maximum=10**9
    )


@dataclass(frozen=True)
class LbTimeIndexedParams:
    """Parameters of ``lb_timeindexed`` (ours; :mod:`ddlsched.models.rar_lb_timeindexed`)."""

    slot_width: int | str = param(
        "auto",
        "slots per model window ('auto': the finest whose LP fits memory_mb and the time left)",
        minimum=1,
        maximum=10_000_000,
        choices=("auto",),
    )
    max_patterns: int = param(
        64, "patterns per job before it gets one pooled column", minimum=1, maximum=100_000
    )
    memory_mb: float | str = param(
        "auto",
        "memory the LP may take in MiB ('auto': the process's budget, --memory-budget)",
        minimum=1.0,
        choices=("auto",),
    )
    build: str = param(
        "auto",
        "Pyomo model or direct highspy build ('auto': Pyomo up to 200,000 nonzeros)",
        choices=("auto", "pyomo", "direct"),
    )
    horizon: int | str = param(
        "auto",
        "model horizon ('auto': probe from the closed forms up to the LS/FF makespan)",
        minimum=1,
        maximum=10_000_000,
        choices=("auto",),
    )


@dataclass(frozen=True)
class LpRoundingParams(GridParams):
    """Parameters of ``lp_rounding`` (:mod:`ddlsched.models.rar_rounding`)."""

    trials: int = param(
        32, "randomized roundings of the LP solution (seeded by --seed)", minimum=1, maximum=100_000
    )
    delta: float = param(
        0.0, "round an LP with capacities scaled by 1/(1+delta) (0: the bound LP)", minimum=0.0
    )


@dataclass(frozen=True)
class CpsatParams:
    """Parameters of ``cpsat`` (ours; :mod:`ddlsched.models.rar_cpsat`)."""

    work: float = param(
        10.0,
        "CP-SAT's budget for the whole model, in its deterministic time units (any machine)",
        minimum=0.0,
        exclusive_minimum=True,
        maximum=1e6,
    )
    workers: int = param(
        8,
        "CP-SAT workers (interleaved: deterministic for any count of cores)",
        minimum=1,
        maximum=64,
    )
    hint: str = param(
        "improve",
        "the schedule CP-SAT starts from: improve's, or none",
        choices=("improve", "none"),
    )
    improve_iterations: int = param(
        1000, "candidates of the improve run that gives the hint", minimum=0, maximum=10**9
    )
    split_cap: int | str = param(
        "auto",
        "split rings one server may run at once ('auto': the most at which contention is inert)",
        minimum=1,
        maximum=MAX_GPUS,
        choices=("auto",),
    )
    objective: str = param(
        "lexicographic",
        "makespan, or makespan then sum_j G_j C_j (gives the search a slope on plateaus)",
        choices=("makespan", "lexicographic"),
    )
    rounds: int = param(
        30,
        "windows after the whole solve: a few jobs re-solved, the rest fixed",
        minimum=0,
        maximum=1_000_000,
    )
    window: int = param(24, "jobs one window frees", minimum=1, maximum=100_000)
    window_work: float = param(
        1.0,
        "CP-SAT's deterministic time per window",
        minimum=0.0,
        exclusive_minimum=True,
        maximum=1e6,
    )
    placements: str = param(
        "all",
        "all (every placement, split rings included: minimise from the hint) or whole (rings "
        "on one server only: a search on the target makespan, no bound; work, split_cap, "
        "objective and the windows unused)",
        choices=("all", "whole"),
    )
    target_search: str = param(
        "gallop",
        "placements=whole: gallop (steps 1, 2, 4, ... below the best, then bisection) or "
        "descent (one slot below the best, stop at the first unmet target)",
        choices=("gallop", "descent"),
    )
    first_work: float = param(
        WHOLE_FIRST_WORK,
        "placements=whole: CP-SAT's deterministic time of the first target",
        minimum=0.0,
        exclusive_minimum=True,
        maximum=1e6,
    )
    target_work: float = param(
        WHOLE_TARGET_WORK,
        "placements=whole: CP-SAT's deterministic time per target after the first",
        minimum=0.0,
        exclusive_minimum=True,
        maximum=1e6,
    )
    max_targets: int = param(
        WHOLE_MAX_TARGETS,
        "placements=whole: targets (solves) at most; the cost is at most "
        "first_work + (max_targets - 1) * target_work",
        minimum=1,
        maximum=100_000,
    )
