"""muri_sim.my_method: the SRTF policy's simulation, to start from (replace it with yours).

Instance (TraceRun): a job trace (name or file), the simulator mode, a seed, an optional
limit on the jobs read and knob overrides; the jobs' arrivals, GPUs and per-resource
times come from the trace. A schedule (TraceSchedule) is what a simulation did: per job
submit, start and end times and the iterations done; the evaluator recomputes the
metrics from those arrays. Minimised: average JCT (s). The policies are the simulator's
(internal); a new policy starts from one of them through run_method.
"""

from ddlsched import api


@api.register_method("muri_sim", "my_method", "heuristic", "SRTF's simulation (a starting point)")
def my_method(instance: api.TraceRun, params: api.NoParams, ctx: api.RunContext) -> api.Outcome:
    options = api.RunOptions(seed=ctx.seed, backend=ctx.backend)
    start = api.run_method("muri_sim", "srtf", instance, options, deadline=ctx.deadline)
    if start.schedule is None:
        return api.Outcome(None, start.status, info=dict(start.info))
    return api.Outcome(start.schedule, info={"started_from": "srtf"})
