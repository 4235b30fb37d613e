"""placement.my_method: stage by stage, fill the servers with the most free GPUs first.

Instance (PlacementInstance): one pipeline job, its stages (replicas k_s, fwd_s, bwd_s,
in_bytes, out_bytes, param_bytes), the free GPUs of each server (available), gpus_per_server
and bandwidths b_inter, b_intra. A schedule (Placement) gives counts[s][m], the replicas of
stage s on server m: each stage fully placed, at most available[m] GPUs used on server m.
The objective, minimised, is the per-iteration time alpha (Eqs. 4-7).
"""

from ddlsched import api


@api.register_method(
    "placement", "my_method", "heuristic", "stages in order, fullest servers first"
)
def my_method(
    instance: api.PlacementInstance, params: api.NoParams, ctx: api.RunContext
) -> api.Outcome:
    free = list(instance.available)
    order = sorted(range(len(free)), key=lambda m: -free[m])
    counts = []
    for stage in instance.stages:
        row, left = [0] * len(free), stage.replicas
        for m in order:
            row[m] = min(left, free[m])
            free[m] -= row[m]
            left -= row[m]
        counts.append(tuple(row))
    return api.Outcome(api.Placement(tuple(counts)))
