"""dmlrs.my_method: the FIFO baseline's schedule, to start from (replace it with yours).

Instance (DmlrsInstance): slots T of slot_s seconds, bandwidths b_int and b_ext, machines
with capacity[h][r] per resource, and jobs (arrival_slot, epochs, samples, grad_bytes,
tau_s, gamma, global_batch F_i, per-worker and per-PS demands, a sigmoid utility of the
delay). A schedule (DmlrsSchedule) accepts jobs and gives sparse allocations
(job, slot, machine, workers, ps): no allocation before arrival, capacities per slot,
workers <= F_i per slot, PSs by the gamma rule; an accepted job processes all its samples
(rate model, Eq. 3) by T and earns its utility at its delay. Maximised: total utility.
"""

from ddlsched import api


@api.register_method("dmlrs", "my_method", "heuristic", "FIFO's schedule (a starting point)")
def my_method(
    instance: api.DmlrsInstance, params: api.NoParams, ctx: api.RunContext
) -> api.Outcome:
    options = api.RunOptions(seed=ctx.seed, backend=ctx.backend)
    start = api.run_method("dmlrs", "fifo", instance, options, deadline=ctx.deadline)
    if start.schedule is None:
        return api.Outcome(None, start.status, info=dict(start.info))
    return api.Outcome(start.schedule, info={"started_from": "fifo"})
