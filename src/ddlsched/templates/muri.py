"""muri.my_method: pair jobs of the same GPU count, heaviest first.

Instance (MuriGroupingInstance): jobs (id, gpus, times: one iteration time per resource),
num_resources k and max_group_size. A schedule (MuriGrouping) partitions the job ids into
groups of at most max_group_size jobs with the same GPU count (singletons allowed); the
objective, maximised, is the sum of the interleaving efficiencies of the groups of >= 2 jobs.
"""

from ddlsched import api


@api.register_method(
    "muri", "my_method", "heuristic", "pairs of the same GPU count, heaviest first"
)
def my_method(
    instance: api.MuriGroupingInstance, params: api.NoParams, ctx: api.RunContext
) -> api.Outcome:
    size = min(2, instance.max_group_size)
    by_gpus: dict[int, list[str]] = {}
    for job in sorted(instance.jobs, key=lambda job: -sum(job.times)):
        by_gpus.setdefault(job.gpus, []).append(job.id)
    groups = []
    for ids in by_gpus.values():
        groups += [tuple(ids[i : i + size]) for i in range(0, len(ids), size)]
    return api.Outcome(api.MuriGrouping(tuple(groups)))
