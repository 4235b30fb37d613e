"""asrpt.my_method: first come, first served, one job at a time on the fewest servers.

Instance: a cluster (M servers of g GPUs), pipeline configs (stages, replicas k_s), jobs
(arrival_s, config, iterations n_i). A schedule gives each job a JobRun: start >= arrival_s,
distinct servers, counts[s][k] replicas of stage s on its k-th server (all placed, each
server used), <= g GPUs busy per server at any time. A job runs n_i iterations of
job_alpha(...) seconds. Minimised: the sum of completion times.
"""

from ddlsched import api


@api.register_method("asrpt", "my_method", "heuristic", "first come first served, alone")
def my_method(instance: api.AsrptInstance, params: api.NoParams, ctx: api.RunContext):
    g, runs, now = instance.cluster.gpus_per_server, {}, 0.0
    for job in sorted(instance.jobs, key=lambda job: (job.arrival_s, job.id)):
        config = instance.configs[job.config]
        replicas = [stage.replicas for stage in config.stages]
        width = -(-sum(replicas) // g)  # the fewest servers that hold the job
        counts, used = [[0] * width for _ in replicas], [0] * width
        for s, k in enumerate(replicas):
            for _ in range(k):  # each replica on the first server with a free GPU
                m = next(m for m in range(width) if used[m] < g)
                counts[s][m] += 1
                used[m] += 1
        rows = tuple(tuple(row) for row in counts)
        start = max(now, job.arrival_s)
        now = start + job.iterations * api.job_alpha(instance.cluster, config, rows)
        runs[job.id] = api.JobRun(start_s=start, servers=tuple(range(width)), counts=rows)
    return api.Outcome(api.AsrptSchedule(runs))
