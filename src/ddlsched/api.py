"""The public interface of ddlsched for plug-ins: the ONE module a plug-in imports from.

Stability promise: every name in ``__all__`` keeps its meaning (signature,
fields, semantics) within a major version of ddlsched; a name may be added in
a minor version, and is removed or changed only in the next major version.
Anything not in ``__all__`` (every other module of the package included) is
internal and may change in any release.

A method of an existing family is a function ``run(instance, params,
context) -> Outcome`` registered with :func:`register_method`:

>>> from dataclasses import dataclass
>>> from ddlsched.api import Outcome, RunContext, param, register_method
>>> @dataclass(frozen=True)
... class MyParams:  # every field a ``param(default, help, minimum=, maximum=, choices=)``
...     rounds: int = param(3, "improvement rounds", minimum=0, maximum=1000)

Then ``@register_method("rar", "my_lpt", "heuristic", "longest job first", params=MyParams)``
above ``def my_lpt(instance: RarInstance, params: MyParams, ctx: RunContext) -> Outcome``.
A method without parameters passes nothing (``NoParams``). ``ctx`` holds
``seed``, ``backend`` and ``deadline``; ``ctx.rng()`` is a seeded
``numpy.random.Generator`` (same seed, same draws); call
``ctx.deadline.check("what")`` in long loops. Return ``Outcome(schedule)``;
raise :class:`NoScheduleFound` when the heuristic ends without a schedule.
The pipeline re-evaluates every schedule with the family's evaluator
(:class:`InfeasibleScheduleError` on a broken rule becomes an ``error`` row).

An installed package registers its methods through the entry-point group
``ddlsched.methods`` (``ddlsched new method FAMILY NAME`` writes one); see
``docs/your-own-method.md`` for the loading rules and one page per family
under ``docs/methods/``. :func:`check_method` is the conformance kit of one
method (``assert not check_method("rar", "my_lpt", tmp_path)``).

The family types (instances, schedules) are the ones each family's
evaluator reads: ``docs/methods/<family>.md`` says what they hold.
"""

from __future__ import annotations

from ddlsched.conformance import check_family, check_method
from ddlsched.errors import (
    DdlschedError,
    InfeasibleScheduleError,
    InvalidInstanceError,
    NoScheduleFound,
    UnknownMethodError,
)
from ddlsched.params import NoParams, param
from ddlsched.plugins import BrokenPlugin, PluginOrigin
from ddlsched.problems.asrpt import AsrptInstance, Cluster, JobConfig, job_alpha
from ddlsched.problems.asrpt import Job as AsrptJob
from ddlsched.problems.asrpt_schedule import AsrptSchedule, JobRun
from ddlsched.problems.dmlrs import DmlrsInstance, DmlrsJob
from ddlsched.problems.dmlrs_schedule import Allocation as DmlrsAllocation
from ddlsched.problems.dmlrs_schedule import DmlrsSchedule
from ddlsched.problems.dmlrs_slot import SlotAllocation, SlotInstance
from ddlsched.problems.muri import MuriGrouping, MuriGroupingInstance, MuriJob
from ddlsched.problems.muri_sim import TraceRun, TraceSchedule
from ddlsched.problems.placement import Placement, PlacementInstance, Stage
from ddlsched.problems.rar import Network, RarInstance, RarJob
from ddlsched.problems.rar_schedule import RarAssignment, RarSchedule
from ddlsched.registry import (
    Family,
    Method,
    RunContext,
    RunOptions,
    broken_plugins,
    get_family,
    get_method,
    methods,
    register_method,
    run_method,
    unregister_method,
)
from ddlsched.rng import make_rng
from ddlsched.solvers.result import Outcome, SolveResult, Status

__all__ = [
    "AsrptInstance",
    "AsrptJob",
    "AsrptSchedule",
    "BrokenPlugin",
    "Cluster",
    "DdlschedError",
    "DmlrsAllocation",
    "DmlrsInstance",
    "DmlrsJob",
    "DmlrsSchedule",
    "Family",
    "InfeasibleScheduleError",
    "InvalidInstanceError",
    "JobConfig",
    "JobRun",
    "Method",
    "MuriGrouping",
    "MuriGroupingInstance",
    "MuriJob",
    "Network",
    "NoParams",
    "NoScheduleFound",
    "Outcome",
    "Placement",
    "PlacementInstance",
    "PluginOrigin",
    "RarAssignment",
    "RarInstance",
    "RarJob",
    "RarSchedule",
    "RunContext",
    "RunOptions",
    "SlotAllocation",
    "SlotInstance",
    "SolveResult",
    "Stage",
    "Status",
    "TraceRun",
    "TraceSchedule",
    "UnknownMethodError",
    "broken_plugins",
    "check_family",
    "check_method",
    "get_family",
    "get_method",
    "job_alpha",
    "make_rng",
    "methods",
    "param",
    "register_method",
    "run_method",
    "unregister_method",
]
