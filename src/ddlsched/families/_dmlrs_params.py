"""Parameters of the dmlrs family's methods (:mod:`ddlsched.families.dmlrs` registers the
methods; the classes live here to keep that module a readable map). Each field's help
text is what ``ddlsched methods`` prints; see the family docstring for the methods."""

from __future__ import annotations

from dataclasses import dataclass

from ddlsched.heuristics.dmlrs_rounding import MAX_DRAWS
from ddlsched.heuristics.pd_ors import MAX_QUANTA
from ddlsched.params import param


@dataclass(frozen=True)
class _PriceParams:
    """The price function's parameters (Eqs. 12-14), shared by PD-ORS and OASiS."""

    quanta: int = param(
        32,
        "q: quanta of V_i / q samples in Algorithm 3's DP (memory and time grow with q^2 per slot)",
        minimum=1,
        maximum=MAX_QUANTA,
    )
    mu: float = param(
        1.0, "mu of L (Eq. 14; not defined in the notes: ours)", minimum=0.0, exclusive_minimum=True
    )
    bounds: str = param(
        "instance",
        "U^r and L from the instance (the paper's) or given as parameters U and L (truly online)",
        choices=("instance", "given"),
    )
    u_bound: str = param(
        "spec",
        "U^r at the smallest delay d_min - 1 (spec) or the notes' literal u(ceil(..) - a_i)",
        choices=("spec", "literal"),
    )
    U: float | None = param(
        None,
        "U^r of every resource in use, with bounds = given",
        minimum=0.0,
        exclusive_minimum=True,
    )
    L: float | None = param(None, "L, with bounds = given", minimum=0.0, exclusive_minimum=True)


@dataclass(frozen=True)
class OasisParams(_PriceParams):
    """Parameters of OASiS (Algorithms 1-3, workers and PSs never co-located, b_ext)."""


@dataclass(frozen=True)
class PdOrsParams(_PriceParams):
    """Parameters of PD-ORS (Algorithms 1-4)."""

    delta: float = param(
        0.1,
        "covering failure probability of the rounding, in (0, 1]",
        minimum=0.0,
        maximum=1.0,
        exclusive_minimum=True,
    )
    S: int = param(
        10,
        "rounding draws per LP (up to 10 S while none is feasible)",
        minimum=1,
        maximum=MAX_DRAWS,
    )
    scale: str = param(
        "chernoff",
        "G_delta scaling before rounding (chernoff) or none (G = 1; ablation)",
        choices=("chernoff", "none"),
    )
    slot_solver: str = param(
        "lp",
        "external case: LP relaxation + randomized rounding (lp, the paper) or exact ILP (ilp)",
        choices=("lp", "ilp"),
    )
    dump_slot_problems: str | None = param(
        None,
        "directory: write every external-case LP as a dmlrs_slot instance file",
        directory=True,
    )
    rounding: str = param(
        "shrunk",
        "external case: round the shrunk LP and repair each draw (shrunk, the revised spec) or "
        "round the full LP without repair (literal, the first spec; ablation)",
        choices=("shrunk", "literal"),
    )
    internal: str = param(
        "demand",
        "internal case: w = D workers (demand, the revised spec) or w = gamma ceil(D / gamma) "
        "(gamma_multiple, the first spec; ablation)",
        choices=("demand", "gamma_multiple"),
    )


@dataclass(frozen=True)
class DormParams:
    """Parameters of Dorm's per-slot MILP."""

    slot_time_limit_s: float = param(
        60.0,
        "time limit of each slot's MILP (s; each slot also gets at most its share of the "
        "method's remaining time); a safety net: slot_node_limit normally ends a slot first",
        minimum=0.0,
        exclusive_minimum=True,
    )
    slot_node_limit: int = param(
        200,
        "branch-and-bound nodes of each slot's MILP (HiGHS mip_max_nodes; the same answer on "
        "every machine, unlike a time limit); 0: no node budget",
        minimum=0,
        maximum=10**9,
    )
    util_gap: float = param(
        0.01, "absolute gap of each slot's MILP (< 1: the served count is proven)", minimum=0.0,
        maximum=0.999,
    )  # fmt: skip
    greedy_start: bool = param(
        True,
        "a slot stopped at its limit keeps the better of its incumbent and the FIFO/DRF "
        "allocation (ours); false: no incumbent at the limit is an error",
    )


@dataclass(frozen=True)
class ExactParams:
    """Parameters of the compact offline MILP."""

    cross_check: bool = param(False, "re-solve a proven optimum with the other backend (SCIP)")
    earliest: bool = param(
        True, "ours: fix completions before the earliest slot the capacities allow to 0"
    )
    completion_work: bool = param(True, "ours: a job runs in its completion slot (row)")
    patterns: bool = param(
        True, "ours: per-mode worker-count binaries (extended formulation, jobs with F <= 16)"
    )
    capacity_cuts: bool = param(
        True, "ours: Eq. 5 over the pattern binaries, per machine and summed over machines"
    )
    start: bool = param(True, "ours: MIP start from the best of FIFO, DRF and PD-ORS")
    no_surplus: bool = param(
        True,
        "ours: no surplus workers; a pattern that completes the job alone runs only in its "
        "completion slot, with no work before (patterns of jobs with F <= 16)",
    )
    packing: bool = param(
        True, "ours: per machine and slot, Eq. 5 through dual feasible functions f_1..f_3"
    )
    improve_start: bool = param(
        True, "ours: the MIP start improved by improve's search (1,000 windows; with start)"
    )
    solver_symmetry: bool = param(
        False, "ours: identical machines left to HiGHS's symmetry detection (load-order rows off)"
    )


@dataclass(frozen=True)
class UbCapacityParams:
    """Parameters of ``ub_capacity``."""

    integral: bool = param(
        False,
        "binary completion choices: the MILP's proven dual bound (measured: about 1 % below "
        "the LP's or less at Figs. 6-10 sizes, up to minutes)",
    )
    dff: int = param(
        3,
        "packing rows of Fekete and Schepers' dual feasible functions f_1..f_dff (0: none)",
        minimum=0,
        maximum=10,
    )


@dataclass(frozen=True)
class UbBlocksParams:
    """Parameters of ``ub_blocks`` (ours; :mod:`ddlsched.models.dmlrs_blocks`)."""

    integral: bool = param(
        False, "binary completion choices: the MILP's proven dual bound (as ub_capacity's)"
    )
    modes: bool = param(
        False,
        "binary blocks and completion choices: one mode and one block size a slot, no mix "
        "(a MILP; at its time limit the dual bound)",
    )
    dff: int = param(
        3,
        "packing rows of f_1..f_dff (Fekete and Schepers) with each internal block one item",
        minimum=0,
        maximum=10,
    )


@dataclass(frozen=True)
class ColgenParams:
    """Parameters of column generation on R-DMLRS."""

    pricing: str = param(
        "milp",
        "single-job pricing: exact MILP or its LP relaxation at b_int (bound only)",
        choices=("milp", "lp"),
    )
    seed_columns: bool = param(
        True, "start from the PD-ORS, FIFO, DRF and Dorm schedules (their time counts)"
    )
    max_rounds: int | None = param(
        None,
        "pricing rounds after round 0 (a budget that does not depend on the machine: with a "
        "time limit that is not reached, the same bound on every run)",
        minimum=0,
        maximum=100_000,
    )
    stabilisation: str = param(
        "smoothing",
        "dual stabilisation of the pricing: Wentges' smoothing towards the best bound's prices, "
        "with Pessoa et al.'s mis-pricing rule, or none (models/dmlrs_colgen.py)",
        choices=("none", "smoothing"),
    )
    alpha: float = param(
        0.5,
        "smoothing weight of the stability centre, p_s = alpha p_centre + (1 - alpha) p_master",
        minimum=0.0,
        maximum=0.99,
    )


@dataclass(frozen=True)
class UbLagrangeParams:
    """Parameters of ``ub_lagrange`` (ours; :mod:`ddlsched.models.dmlrs_lagrange`)."""

    iterations: int = param(
        20,
        "subgradient steps after the start at ub_capacity's duals (one exact pricing of every "
        "job each; a budget that does not depend on the machine)",
        minimum=0,
        maximum=10_000,
    )
    step: float = param(
        0.1, "Polyak step factor theta_0", minimum=0.0, maximum=2.0, exclusive_minimum=True
    )
    patience: int = param(
        3, "halve the step after this many steps without a better bound", minimum=1, maximum=1000
    )
    aim: float = param(
        0.02,
        "Polyak target at most (1 - aim) x the best bound (when fifo/drf earn less)",
        minimum=0.0,
        maximum=1.0,
        exclusive_minimum=True,
    )


@dataclass(frozen=True)
class UbBranchParams:
    """Parameters of ``ub_branch`` (ours; :mod:`ddlsched.models.dmlrs_branch`)."""

    nodes: int = param(
        2000,
        "node LPs of the best-first branch-and-bound, the root included (a budget that does "
        "not depend on the machine)",
        minimum=1,
        maximum=10_000_000,
    )
    completion: bool = param(
        True,
        "once every acceptance is integral, branch on completing by a slot (false: on "
        "acceptance only)",
    )
    incumbent: bool = param(
        True, "close nodes at or below the better utility of fifo and drf (re-evaluated)"
    )
    dff: int = param(
        3,
        "packing rows of the node LP (ub_capacity's f_1..f_dff; 0: none)",
        minimum=0,
        maximum=10,
    )


@dataclass(frozen=True)
class UbPricesParams(PdOrsParams):
    """PD-ORS's parameters plus the pricing of ``UB(p_final)``."""

    pricing: str = param(
        "milp",
        "single-job pricing at the final prices: exact MILP or LP at b_int",
        choices=("milp", "lp"),
    )


#: The starts ``improve`` may run (module :mod:`ddlsched.heuristics.dmlrs_improve`).
IMPROVE_STARTS = ("pd_ors", "oasis", "fifo", "drf")


@dataclass(frozen=True)
class ImproveParams:
    """Parameters of ``improve`` (ours; :mod:`ddlsched.heuristics.dmlrs_improve`)."""

    starts: str = param(
        "all",
        f"'all' or a comma-separated subset of {', '.join(IMPROVE_STARTS)} (each evaluated; "
        "the best is the incumbent)",
    )
    window: int = param(
        6, "jobs freed per LNS window (about a third scheduled, the rest not)", minimum=1,
        maximum=1000,
    )  # fmt: skip
    patience: int = param(
        300,
        "stop (converged) after this many windows in a row without a gain",
        minimum=1,
        maximum=1_000_000,
    )
    max_windows: int = param(
        0, "stop after this many windows (0: no cap)", minimum=0, maximum=10_000_000
    )
    mip_windows: int = param(
        0,
        "after the greedy LNS, this many windows repaired by exact's MILP on the capacity "
        "the other jobs leave (0: none)",
        minimum=0,
        maximum=1_000_000,
    )
    mip_window: int = param(
        4, "jobs freed per MIP window (about half scheduled, the rest not)", minimum=1,
        maximum=1000,
    )  # fmt: skip
    mip_nodes: int = param(
        200,
        "branch-and-bound nodes of each MIP window (HiGHS mip_max_nodes; the same answer on "
        "every machine, unlike a time limit)",
        minimum=1,
        maximum=10**9,
    )
    insert_plan: str = param(
        "samples",
        "the insertion's plan for a job: samples (the earliest completion, the mode with "
        "more samples each slot), lean (that or a plan internal on one machine as long as "
        "the job can still finish, whichever earns more minus lean_price times the "
        "capacity it holds), or both (the first pass with each, windows alternating)",
        choices=("samples", "lean", "both"),
    )
    lean_price: float = param(
        1.0,
        "insert_plan=lean: the price of a machine-slot a plan holds, in units of the "
        "incumbent's utility per machine-slot of the cluster",
        minimum=0.0,
        maximum=1e6,
    )
    eject_moves: int = param(
        0,
        "ejection moves after the LNS: an unscheduled job forced in at a completion slot, "
        "the jobs it collides with evicted and re-inserted (0: off)",
        minimum=0,
        maximum=10_000_000,
    )
    eject_completions: int = param(
        3, "completion slots an ejection move tries per job, its earliest first", minimum=1,
        maximum=1000,
    )  # fmt: skip
    eject_windows: int = param(
        500,
        "LNS windows repairing the schedule after each ejection move, before it is kept "
        "(when the utility rose) or undone",
        minimum=0,
        maximum=1_000_000,
    )
    eject_evict: str = param(
        "machines",
        "jobs an ejection move evicts: those on the (slot, machine) cells where the forced "
        "job does not fit, or every job running in its slots",
        choices=("machines", "slots"),
    )
    eject_place: str = param(
        "lean",
        "the forced job's plan: a lean target plan (the internal mode on one machine first, "
        "an even share of the samples left in each slot after; completions tried from the "
        "latest such a plan needs), the target plan with the share in every slot, the "
        "insertion's earliest completion on the freed capacity, or both (lean, then the share)",
        choices=("lean", "reserve", "insert", "both"),
    )


@dataclass(frozen=True)
class BlocksRoundParams(ImproveParams):
    """Parameters of ``blocks_round`` (ours; :mod:`ddlsched.models.dmlrs_blocks_round`):
    ``improve``'s, which its window search uses (``starts`` only when the relaxation has
    no incumbent), and the relaxation's and the packing's budgets."""

    nodes: int = param(
        400,
        "branch-and-bound nodes of ub_blocks modes=true's MILP, whose incumbent is rounded "
        "(HiGHS mip_max_nodes: the same answer on every machine, unlike a time limit)",
        minimum=1,
        maximum=10**9,
    )
    relax_share: float = param(
        0.6,
        "share of the time limit the relaxation may use before its last incumbent is taken",
        minimum=0.0,
        maximum=1.0,
        exclusive_minimum=True,
    )
    pack_nodes: int = param(
        1000,
        "branch-and-bound nodes of each slot's packing MILP",
        minimum=1,
        maximum=10**9,
    )
    top_up: bool = param(
        True,
        "give a job the packing left short the samples it lacks from free capacity "
        "(by its planned completion, else by T) before dropping it; false: drop it",
    )
