"""dmlrs_slot.my_method: fill the machines cheapest per worker first.

Instance (SlotInstance): machines h with a worker price worker_price[h], a PS price
ps_price[h] and residual capacities residual[h][r]; one worker's demands worker[r], one
PS's ps[r]; gamma, the global batch F (global_batch) and the covering demand D (demand).
A schedule (SlotAllocation) gives integer workers w[h] and PSs s[h] per machine with
worker[r] w[h] + ps[r] s[h] <= residual[h][r], D <= sum w <= F and gamma sum s >= sum w.
Minimised: sum_h worker_price[h] w[h] + ps_price[h] s[h] (Problem (23)).
"""

from ddlsched import api


@api.register_method("dmlrs_slot", "my_method", "heuristic", "cheapest machines first, greedily")
def my_method(instance: api.SlotInstance, params: api.NoParams, ctx: api.RunContext) -> api.Outcome:
    n = len(instance.residual)
    w, s = [0] * n, [0] * n
    unit = [instance.worker_price[h] + instance.ps_price[h] / instance.gamma for h in range(n)]
    for h in sorted(range(n), key=lambda h: unit[h]):
        while sum(w) < min(instance.demand, instance.global_batch):
            ps = s[h] + (instance.gamma * sum(s) < sum(w) + 1)  # a PS when the row needs one
            load = [
                a * (w[h] + 1) + b * ps for a, b in zip(instance.worker, instance.ps, strict=True)
            ]
            if any(use > cap for use, cap in zip(load, instance.residual[h], strict=True)):
                break
            w[h], s[h] = w[h] + 1, ps
    if sum(w) < instance.demand:
        raise api.NoScheduleFound(f"only {sum(w)} of D = {instance.demand} workers fit")
    return api.Outcome(api.SlotAllocation(w=tuple(w), s=tuple(s)))
