"""rar.my_method: longest job first, each on the GPUs queued least recently (server order).

Instance (RarInstance): servers (GPUs per server), a network, jobs (gpus, iterations,
grad_size, batch, fwd_per_sample, bwd) and a horizon in slots. A schedule gives each job
exactly job.gpus distinct existing GPUs (server, gpu) and a planned start slot; a GPU runs
its jobs in order of planned start, and every job must finish within the horizon.
"""

from ddlsched import api


@api.register_method("rar", "my_method", "heuristic", "longest job first on the first GPUs")
def my_method(instance: api.RarInstance, params: api.NoParams, ctx: api.RunContext) -> api.Outcome:
    gpus = [(s, g) for s, count in enumerate(instance.servers) for g in range(count)]
    free_at = dict.fromkeys(gpus, 0)  # the position after the last job queued on the GPU
    assignments = {}
    jobs = sorted(instance.jobs, key=lambda job: -job.iterations)
    for position, job in enumerate(jobs):
        chosen = sorted(gpus, key=lambda gpu: free_at[gpu])[: job.gpus]
        for gpu in chosen:
            free_at[gpu] = position + 1
        assignments[job.id] = api.RarAssignment(gpus=tuple(chosen), start=position)
    # a plan that runs past the horizon is "no schedule found", not an error
    return api.Outcome(api.RarSchedule(assignments), no_solution_failures=("horizon_overrun",))
