"""Section 7 of the SJF-BCO paper (Figs. 4-7) on `paper` and `paper-contention`, with intervals.

Experiments (spec `rar.md`, "Paper setting"), each on every seed of both
presets (same seed = same servers, job sizes, ``F_j`` and nominal ``tau_j``
in both presets, so the presets are paired):

* Fig. 4: makespan and average JCT of SJF-BCO, FF, LS, RAND (T = 1200),
  plus every schedule re-evaluated with contention switched off (``xi1``
  set to 1e-9, so ``k_j < 1``) and the contention-free lower bounds
  (`load_lb`: Problem (14) and the closed forms);
* Fig. 5: SJF-BCO makespan against kappa = 1..32. With job sizes
  {1, 2, 4, 8, 16, 32} only six FA-FFP prefixes exist, so kappa = 1, 2, 4,
  8, 16, 32 are run and every other kappa equals the one below it (same
  jobs through FA-FFP: identical schedule);
* Fig. 6: makespan against the number of servers, 10..20 (T = 1500), in two
  readings: ``regen`` (the preset with ``num_servers = n``; the jobs are
  redrawn for every n because the seed's random stream shifts) and
  ``nested`` (the seed's 20-server instance restricted to its first n
  servers: the same 160 jobs on fewer servers, the paper's "reducing the
  number of servers");
* Fig. 7: SJF-BCO makespan against lambda in {1, 2, 4, 8} with kappa = 1.

Every schedule is evaluated by the family evaluator on the instance with its
horizon lifted (so a horizon overrun still yields a makespan; overruns are
counted). Per point: mean over seeds with a 95 % t-interval; per-seed
paired differences where ties matter; shape verdicts as defined in
`benchmarks/results/rar-figures.md`.

Results are cached per (preset, seed) as JSON under ``--cache`` (resumable:
a rerun only computes missing seeds); ``--jobs`` worker processes (at most 2).

    python benchmarks/rar_section7.py --seeds 20 --jobs 2 \\
        --markdown benchmarks/results/rar-section7.md --out benchmarks/figures
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import multiprocessing
import statistics
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import itertools

import matplotlib.pyplot as plt
from scipy import stats

from ddlsched.problems.rar import RarInstance
from ddlsched.problems.rar_schedule import evaluate
from ddlsched.problems.rar_timing import contention_levels
from ddlsched.registry import RunOptions, run_method
from ddlsched.workloads.rar import generate

PRESETS = ("paper", "paper-contention")
POLICIES = ("sjf_bco", "ff", "ls", "rand")
BASELINES = ("ff", "ls", "rand")
SERVERS = tuple(range(10, 21))
LAMBDAS = (1, 2, 4, 8)
FIG6_HORIZON = 1500
NO_CONTENTION_XI1 = 1e-9  # k_j = xi1 p_j < 1 for every p_j <= 32: contention inert
LIFTED_HORIZON = 100_000
#: Mean-curve moves within this share of the curve's first value count as flat.
MEAN_TOL = 0.005


# --------------------------------------------------------------------------- one seed


def _lifted(instance: RarInstance, contention: bool = True) -> RarInstance:
    """The instance with the horizon lifted (and contention switched off unless ``contention``)."""
    network = instance.network
    if not contention:
        network = dataclasses.replace(network, xi1=NO_CONTENTION_XI1)
    return dataclasses.replace(instance, network=network, horizon=LIFTED_HORIZON)


def _run(instance: RarInstance, method: str, seed: int, params=None, off: bool = False) -> dict:
    """Plan with ``method`` on ``instance``; evaluate on the lifted instance (and contention-free)."""
    result = run_method("rar", method, instance, RunOptions(seed=seed, params=params or {}))
    if result.schedule is None:
        why = result.info.get("reason") or result.info.get("error")
        return {"makespan": None, "avg_jct": None, "error": why}
    on = evaluate(_lifted(instance), result.schedule)
    row = {
        "makespan": on.makespan,
        "avg_jct": on.average_completion,
        "overrun": on.makespan > instance.horizon,
        "kappa": result.info.get("kappa"),
    }
    if off:
        free = evaluate(_lifted(instance, contention=False), result.schedule)
        row["makespan_off"] = free.makespan
        row["avg_jct_off"] = free.average_completion
    return row


def kappa_representatives(instance: RarInstance) -> list[int]:
    """One kappa per FA-FFP prefix: the distinct job sizes (kappa in [g_i, g_i+1) share a schedule)."""
    return sorted({job.gpus for job in instance.jobs})


def run_seed(preset: str, seed: int) -> dict:
    """Every experiment of Figs. 4-7 on one seed of one preset."""
    t0 = time.perf_counter()
    inst = generate(preset, seed)
    lb = run_method("rar", "load_lb", inst, RunOptions(time_limit_s=60))
    out: dict = {
        "preset": preset,
        "seed": seed,
        "gpus": inst.num_gpus,
        "load_lb": lb.bound,
        "lb_components": lb.info.get("components"),
        "fig4": {m: _run(inst, m, seed, off=True) for m in POLICIES},
        "fig5": {
            str(k): _run(inst, "sjf_bco", seed, {"kappa": k}) for k in kappa_representatives(inst)
        },
        "fig7": {
            str(lam): _run(inst, "sjf_bco", seed, {"kappa": 1, "lambda_": float(lam)})
            for lam in LAMBDAS
        },
    }
    regen, nested = {}, {}
    full = generate(preset, seed, horizon=FIG6_HORIZON)
    for n in SERVERS:
        inst_n = generate(preset, seed, num_servers=n, horizon=FIG6_HORIZON)
        sub = RarInstance(full.servers[:n], full.network, full.jobs, FIG6_HORIZON, full.progress)
        regen[str(n)] = {m: _run(inst_n, m, seed) for m in POLICIES}
        nested[str(n)] = {m: _run(sub, m, seed) for m in POLICIES}
    out["fig6_regen"], out["fig6_nested"] = regen, nested
    out["seconds"] = time.perf_counter() - t0
    return out


def co_split_counts(preset: str, seed: int) -> dict:
    """How many split jobs share a server in SJF-BCO's schedule (Eq. 6's ``p_j``, as executed).

    Returns the number of split jobs, how many of them meet ``p_j >= 5`` at
    some time (contention acts from there with ``xi1 = 0.25``) and the
    largest ``p_j`` met.
    """
    inst = generate(preset, seed)
    result = run_method("rar", "sjf_bco", inst, RunOptions(seed=seed))
    ev = evaluate(_lifted(inst), result.schedule)
    place = {j.id: result.schedule[j.id].per_server() for j in inst.jobs}
    events = sorted({t for j in inst.jobs for t in (ev.start[j.id], ev.finish[j.id])})
    worst: dict[str, int] = {}
    for now in events:
        active = {j: place[j] for j in place if ev.start[j] <= now < ev.finish[j]}
        for j, p in contention_levels(active).items():
            worst[j] = max(worst.get(j, 0), p)
    split = [j for j in place if len(place[j]) >= 2]
    return {
        "split": len(split),
        "p_at_least_5": sum(worst.get(j, 0) >= 5 for j in split),
        "max_p": max((worst.get(j, 0) for j in split), default=0),
    }


def _task(args):
    preset, seed, cache = args
    path = Path(cache) / f"{preset}-{seed}.json"
    if path.exists():
        return json.loads(path.read_text())
    data = run_seed(preset, seed)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data))
    tmp.replace(path)
    print(f"{preset} seed {seed}: {data['seconds']:.1f} s", flush=True)
    return data


# --------------------------------------------------------------------------- statistics


def t_interval(values):
    """Mean and 95 % t-interval half-width (0 for fewer than 2 values)."""
    values = [float(v) for v in values]
    mean = statistics.fmean(values)
    if len(values) < 2:
        return mean, 0.0
    half = stats.t.ppf(0.975, len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values))
    return mean, half


def fmt_ci(values, digits=1):
    mean, half = t_interval(values)
    return f"{mean:.{digits}f} ± {half:.{digits}f}"


def signs(curve, tol=0.0):
    """Run-length-compressed signs of consecutive moves (moves within ``tol`` count as flat)."""
    out = []
    for a, b in itertools.pairwise(curve):
        d = b - a
        s = 0 if abs(d) <= tol else (1 if d > 0 else -1)
        if s and (not out or out[-1] != s):
            out.append(s)
    return out


def drop_rise_drop(curve, tol=0.0) -> bool:
    """Fig. 5's shape: the moves, flat ones dropped and runs merged, are exactly drop, rise, drop."""
    return signs(curve, tol) == [-1, 1, -1]


def non_increasing(curve, tol=0.0) -> bool:
    """Every move is a drop or within ``tol`` of flat."""
    return all(b <= a + tol for a, b in itertools.pairwise(curve))


def spearman(xs, ys) -> float:
    if len(set(ys)) < 2:
        return 0.0
    return float(stats.spearmanr(xs, ys).statistic)


def verdict(mean_ok: bool, seeds_ok: int, n: int) -> str:
    """'reproduced': mean curve has the shape and >= 75 % of seeds do; 'not reproduced':
    neither the mean curve nor more than 25 % of seeds; otherwise 'depends on seeds'."""
    if mean_ok and seeds_ok >= 0.75 * n:
        return "reproduced"
    if not mean_ok and seeds_ok <= 0.25 * n:
        return "not reproduced"
    return "depends on seeds"


def pair_verdict(diffs) -> str:
    """SJF-BCO minus a baseline per seed (negative: SJF-BCO better).

    'reproduced': the 95 % CI lies below 0; 'not reproduced': it lies above 0,
    or SJF-BCO is strictly better on at most 25 % of the seeds (ties or
    losses elsewhere); 'depends on seeds' otherwise.
    """
    mean, half = t_interval(diffs)
    wins = sum(d < -1e-9 for d in diffs)
    if mean + half < 0:
        return "reproduced"
    if mean - half > 0 or wins <= 0.25 * len(diffs):
        return "not reproduced"
    return "depends on seeds"


# --------------------------------------------------------------------------- report


def step_table(name: str, labels, curves) -> str:
    """Paired per-seed moves between consecutive points: mean ± CI, and seeds down / flat / up."""
    rows = [f"| {name} step | mean move ± CI | seeds down / flat / up |", "|---|---|---|"]
    for i in range(len(labels) - 1):
        moves = [c[i + 1] - c[i] for c in curves]
        down, up = sum(m < 0 for m in moves), sum(m > 0 for m in moves)
        rows.append(
            f"| {labels[i]} -> {labels[i + 1]} | {fmt_ci(moves)} | "
            f"{down} / {len(moves) - down - up} / {up} |"
        )
    return "\n".join(rows) + "\n"


def report(data: dict[str, list[dict]], wall: float, jobs: int) -> tuple[str, dict]:
    lines: list[str] = []
    say = lines.append
    verdicts: dict = {}
    first = next(iter(data.values()))
    seeds = [d["seed"] for d in first]
    n = len(seeds)
    say(
        f"# rar Section 7 (Figs. 4-7) on `paper` and `paper-contention`, seeds {seeds[0]}..{seeds[-1]}\n"
    )
    say(
        f"Wall time of this invocation {wall:.0f} s with {jobs} worker process(es) (seeds found in the cache are not recomputed; compute time summed over "
        f"(preset, seed): {sum(d['seconds'] for v in data.values() for d in v):.0f} s). "
        "Intervals are 95 % t-intervals over seeds (mean ± half-width). Every makespan is the "
        "evaluator's, on the instance with the horizon lifted (overruns are counted, not dropped).\n"
    )
    for preset, rows in data.items():
        verdicts[preset] = {}
        say(f"## Preset `{preset}`\n")
        # ---- Fig 4
        say("### Fig. 4: policies (T = 1200)\n")
        say("| method | makespan | avg JCT | makespan, contention off | overruns of T |")
        say("|---|---|---|---|---|")
        for m in POLICIES:
            col = [r["fig4"][m] for r in rows]
            say(
                f"| {m} | {fmt_ci([c['makespan'] for c in col])} | "
                f"{fmt_ci([c['avg_jct'] for c in col])} | "
                f"{fmt_ci([c['makespan_off'] for c in col])} | {sum(c['overrun'] for c in col)}/{n} |"
            )
        lbs = [r["load_lb"] for r in rows]
        say(f"| contention-free LB (`load_lb`) | {fmt_ci(lbs)} | | | |\n")
        say("Paired differences, SJF-BCO minus baseline, per seed (negative: SJF-BCO better):\n")
        say("| baseline | metric | mean diff ± CI | SJF-BCO better / tie / worse | verdict |")
        say("|---|---|---|---|---|")
        v4 = []
        for b in BASELINES:
            for key, label in (("makespan", "makespan"), ("avg_jct", "avg JCT")):
                diffs = [r["fig4"]["sjf_bco"][key] - r["fig4"][b][key] for r in rows]
                w = sum(d < -1e-9 for d in diffs)
                t = sum(abs(d) <= 1e-9 for d in diffs)
                v = pair_verdict(diffs)
                v4.append(v)
                say(f"| {b} | {label} | {fmt_ci(diffs, 2)} | {w} / {t} / {n - w - t} | {v} |")
        verdicts[preset]["fig4"] = (
            "reproduced"
            if all(v == "reproduced" for v in v4)
            else "not reproduced"
            if all(v == "not reproduced" for v in v4)
            else "depends on seeds / baseline"
        )
        # contention certificate
        best_on = [min(r["fig4"][m]["makespan"] for m in POLICIES) for r in rows]
        best_off = [min(r["fig4"][m]["makespan_off"] for m in POLICIES) for r in rows]
        raise_pct = [100 * (a / b - 1) for a, b in zip(best_on, best_off, strict=True)]
        over_lb = [100 * (a / lb - 1) for a, lb in zip(best_on, lbs, strict=True)]
        off_over_lb = [100 * (b / lb - 1) for b, lb in zip(best_off, lbs, strict=True)]
        decided = sum(p >= 5 for p in raise_pct)
        say(
            "\nContention certificate (best of the four heuristic schedules): contention raises "
            f"the best makespan by {fmt_ci(raise_pct)} % over the same schedules run "
            f"contention-free (min {min(raise_pct):.1f} %, max {max(raise_pct):.1f} %); "
            f"raise >= 5 % on **{decided}/{n}** seeds. Best makespan over the contention-free "
            f"LB: {fmt_ci(over_lb)} % with contention, {fmt_ci(off_over_lb)} % without.\n"
        )
        verdicts[preset]["contention_share"] = (decided, n)
        verdicts[preset]["raise"] = t_interval(raise_pct)
        # ---- Fig 5
        kappas = list(rows[0]["fig5"])
        say(
            "### Fig. 5: SJF-BCO makespan vs kappa (kappa between two listed values = the lower one)\n"
        )
        say("| kappa | " + " | ".join(kappas) + " |")
        say("|---|" + "---|" * len(kappas))
        curves = [[r["fig5"][k]["makespan"] for k in kappas] for r in rows]
        means = [statistics.fmean(c[i] for c in curves) for i in range(len(kappas))]
        say(
            "| makespan | "
            + " | ".join(fmt_ci([c[i] for c in curves], 0) for i in range(len(kappas)))
            + " |"
        )
        chosen = [r["fig4"]["sjf_bco"]["kappa"] for r in rows]
        strict = sum(drop_rise_drop(c) for c in curves)
        loose = sum(signs(c)[:3] == [-1, 1, -1] for c in curves)
        mean_ok = drop_rise_drop(means, tol=MEAN_TOL * means[0])
        say(
            f"\nMean-curve moves (>0.5 % of kappa=1 value): {signs(means, MEAN_TOL * means[0])} "
            f"(-1 drop, +1 rise). Seeds whose curve is exactly drop-rise-drop: {strict}/{n}; "
            f"whose moves start with drop, rise, drop: {loose}/{n}. kappa chosen by full SJF-BCO: "
            + ", ".join(f"{k}: {chosen.count(k)}" for k in sorted(set(chosen), key=str))
            + "\n"
        )
        say(step_table("kappa", kappas, curves))
        verdicts[preset]["fig5"] = (verdict(mean_ok, strict, n), strict, mean_ok)
        # ---- Fig 6
        for variant in ("nested", "regen"):
            key = f"fig6_{variant}"
            say(f"### Fig. 6 ({variant}): makespan vs servers (T = 1500)\n")
            say(
                "| method | "
                + " | ".join(map(str, SERVERS))
                + " | Spearman rho (mean) | seeds rho <= -0.8 | seeds non-increasing | overruns |"
            )
            say("|---|" + "---|" * (len(SERVERS) + 4))
            verdicts[preset][key] = {}
            for m in POLICIES:
                curves = [[r[key][str(s)][m]["makespan"] for s in SERVERS] for r in rows]
                means = [statistics.fmean(c[i] for c in curves) for i in range(len(SERVERS))]
                rho = spearman(SERVERS, means)
                good = sum(spearman(SERVERS, c) <= -0.8 for c in curves)
                mono = sum(non_increasing(c) for c in curves)
                over = sum(r[key][str(s)][m]["overrun"] for r in rows for s in SERVERS)
                cells = " | ".join(fmt_ci([c[i] for c in curves], 0) for i in range(len(SERVERS)))
                say(f"| {m} | {cells} | {rho:.3f} | {good}/{n} | {mono}/{n} | {over} |")
                mean_ok = non_increasing(means, MEAN_TOL * means[0])
                verdicts[preset][key][m] = (verdict(mean_ok, good, n), rho, good, mono, mean_ok)
            say(
                "\nPaired SJF-BCO minus baseline per server count (mean ± CI, seeds better / worse):\n"
            )
            say("| baseline | " + " | ".join(map(str, SERVERS)) + " |")
            say("|---|" + "---|" * len(SERVERS))
            for b in ("ff", "ls"):
                cells = []
                for srv in SERVERS:
                    d = [
                        r[key][str(srv)]["sjf_bco"]["makespan"] - r[key][str(srv)][b]["makespan"]
                        for r in rows
                    ]
                    cells.append(f"{fmt_ci(d)} ({sum(v < 0 for v in d)}/{sum(v > 0 for v in d)})")
                say(f"| {b} | " + " | ".join(cells) + " |")
            say("")
        # ---- Fig 7
        say("### Fig. 7: SJF-BCO (kappa = 1) makespan vs lambda\n")
        say(
            "| lambda | "
            + " | ".join(map(str, LAMBDAS))
            + " | seeds non-increasing | seeds strictly decreasing |"
        )
        say("|---|" + "---|" * (len(LAMBDAS) + 2))
        curves = [[r["fig7"][str(lam)]["makespan"] for lam in LAMBDAS] for r in rows]
        means = [statistics.fmean(c[i] for c in curves) for i in range(len(LAMBDAS))]
        mono = sum(non_increasing(c) for c in curves)
        strictly = sum(all(b < a for a, b in itertools.pairwise(c)) for c in curves)
        cells = " | ".join(fmt_ci([c[i] for c in curves], 0) for i in range(len(LAMBDAS)))
        say(f"| makespan | {cells} | {mono}/{n} | {strictly}/{n} |\n")
        mean_ok = all(b < a - MEAN_TOL * means[0] for a, b in itertools.pairwise(means))
        say(step_table("lambda", [str(lam) for lam in LAMBDAS], curves))
        verdicts[preset]["fig7"] = (verdict(mean_ok, mono, n), mono, strictly, mean_ok)
    say("## Per-seed Fig. 4 makespans\n")
    say("| preset | seed | GPUs | load_lb | " + " | ".join(f"{m} (off)" for m in POLICIES) + " |")
    say("|---|---|---|---|" + "---|" * len(POLICIES))
    for preset, rows in data.items():
        for r in rows:
            cells = " | ".join(
                f"{r['fig4'][m]['makespan']} ({r['fig4'][m]['makespan_off']})" for m in POLICIES
            )
            say(f"| {preset} | {r['seed']} | {r['gpus']} | {r['load_lb']:.0f} | {cells} |")
    say("\n## Verdicts (definitions in `benchmarks/results/rar-figures.md`)\n")
    say("```")
    say(json.dumps(verdicts, indent=1, default=str))
    say("```")
    return "\n".join(lines) + "\n", verdicts


def plots(data: dict[str, list[dict]], out: Path) -> None:
    def errbar(ax, xs, curves, label, marker="o"):
        pts = [t_interval([c[i] for c in curves]) for i in range(len(xs))]
        ax.errorbar(
            xs, [p[0] for p in pts], yerr=[p[1] for p in pts], marker=marker, capsize=3, label=label
        )

    presets = list(data)
    fig, axes = plt.subplots(1, 3, figsize=(15, 3.6))
    for ax, key, title in ((axes[0], "makespan", "makespan"), (axes[1], "avg_jct", "average JCT")):
        for i, preset in enumerate(presets):
            pts = [t_interval([r["fig4"][m][key] for r in data[preset]]) for m in POLICIES]
            xs = [x + 0.4 * i for x in range(len(POLICIES))]
            ax.bar(
                xs,
                [p[0] for p in pts],
                yerr=[p[1] for p in pts],
                width=0.4,
                capsize=3,
                label=preset,
            )
        ax.set_xticks([x + 0.2 for x in range(len(POLICIES))], POLICIES)
        ax.set_ylabel("slots")
        ax.set_title(f"Fig. 4: {title} (mean, 95 % CI)")
    # paired: SJF-BCO minus FF / LS per seed, in % of the baseline (RAND is far off the scale)
    pairs = [(b, key) for b in ("ff", "ls") for key in ("makespan", "avg_jct")]
    for i, preset in enumerate(presets):
        pts = [
            t_interval(
                [100 * (r["fig4"]["sjf_bco"][k] / r["fig4"][b][k] - 1) for r in data[preset]]
            )
            for b, k in pairs
        ]
        xs = [x + 0.4 * i for x in range(len(pairs))]
        axes[2].bar(xs, [p[0] for p in pts], yerr=[p[1] for p in pts], width=0.4, capsize=3)
    axes[2].axhline(0, color="k", lw=0.8)
    axes[2].set_xticks(
        [x + 0.2 for x in range(len(pairs))], [f"vs {b}\n{k}" for b, k in pairs], fontsize=8
    )
    axes[2].set_ylabel("SJF-BCO - baseline (%)")
    axes[2].set_title("paired difference per seed (mean, 95 % CI)")
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "rar_fig4.png", dpi=120)
    plt.close(fig)

    fig, axes = plt.subplots(1, len(presets), figsize=(5 * len(presets), 3.4), squeeze=False)
    for ax, preset in zip(axes[0], presets, strict=True):
        rows = data[preset]
        kappas = [int(k) for k in rows[0]["fig5"]]
        curves = [[r["fig5"][str(k)]["makespan"] for k in kappas] for r in rows]
        errbar(ax, kappas, curves, "SJF-BCO")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("kappa")
        ax.set_ylabel("makespan (slots)")
        ax.set_title(f"Fig. 5: {preset}")
    fig.tight_layout()
    fig.savefig(out / "rar_fig5.png", dpi=120)
    plt.close(fig)

    for variant in ("nested", "regen"):
        fig, axes = plt.subplots(1, len(presets), figsize=(5 * len(presets), 3.4), squeeze=False)
        for ax, preset in zip(axes[0], presets, strict=True):
            rows = data[preset]
            for m in POLICIES:
                curves = [
                    [r[f"fig6_{variant}"][str(s)][m]["makespan"] for s in SERVERS] for r in rows
                ]
                errbar(ax, list(SERVERS), curves, m)
            ax.set_xlabel("servers (T = 1500)")
            ax.set_ylabel("makespan (slots)")
            ax.set_title(f"Fig. 6 ({variant}): {preset}")
            ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(out / f"rar_fig6_{variant}.png", dpi=120)
        plt.close(fig)

    fig, axes = plt.subplots(1, len(presets), figsize=(5 * len(presets), 3.4), squeeze=False)
    for ax, preset in zip(axes[0], presets, strict=True):
        curves = [[r["fig7"][str(lam)]["makespan"] for lam in LAMBDAS] for r in data[preset]]
        errbar(ax, list(LAMBDAS), curves, "SJF-BCO, kappa = 1")
        ax.set_xlabel("lambda")
        ax.set_ylabel("makespan (slots)")
        ax.set_title(f"Fig. 7: {preset}")
    fig.tight_layout()
    fig.savefig(out / "rar_fig7.png", dpi=120)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20, help="seeds 0..N-1")
    parser.add_argument("--presets", nargs="+", default=list(PRESETS))
    parser.add_argument("--jobs", type=int, default=1, choices=(1, 2))
    parser.add_argument(
        "--cache", default="results/rar_section7_cache", help="one JSON per (preset, seed)"
    )
    parser.add_argument("--out", default="benchmarks/figures")
    parser.add_argument("--markdown", default=None)
    parser.add_argument(
        "--co-split",
        action="store_true",
        help="only print, per seed, the split jobs of SJF-BCO's schedule and their p_j",
    )
    args = parser.parse_args()
    if args.co_split:
        print("| preset | seed | split jobs | of them meeting p_j >= 5 | largest p_j |")
        print("|---|---|---|---|---|")
        for preset in args.presets:
            for seed in range(args.seeds):
                c = co_split_counts(preset, seed)
                print(f"| {preset} | {seed} | {c['split']} | {c['p_at_least_5']} | {c['max_p']} |")
        return
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    Path(args.cache).mkdir(parents=True, exist_ok=True)
    tasks = [(p, s, args.cache) for p in args.presets for s in range(args.seeds)]
    t0 = time.perf_counter()
    if args.jobs > 1:
        with multiprocessing.Pool(args.jobs) as pool:
            results = pool.map(_task, tasks, chunksize=1)
    else:
        results = [_task(t) for t in tasks]
    wall = time.perf_counter() - t0
    data = {p: [r for r in results if r["preset"] == p] for p in args.presets}
    text, _ = report(data, wall, args.jobs)
    if args.markdown:
        Path(args.markdown).write_text(text)
    print(text)
    plots(data, out)


if __name__ == "__main__":
    main()
