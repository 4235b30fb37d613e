"""Worst-case searches that try to break the papers' inequalities, one per inequality.

A seeded hill climb over tiny instances per inequality ``lhs <= rhs``: it maximises
``lhs / rhs`` (a value above 1 breaks the inequality), starting from fresh instances
and mutating the current worst one. Every candidate is run through the method pipeline
(``ddlsched.registry.run_method``: every schedule re-evaluated) and solved to a proven
optimum by the family's exact method (a candidate without one is skipped); the optimum
stands for ``OPT`` / ``theta*`` wherever the inequality has it.

SJF-BCO (rar, ``small`` preset instances; a move changes one job's GPU count or
iterations, or adds / removes a server):

* Lemma 3: the executed makespan ``<= n_g W_max`` (SJF-BCO as listed);
* Lemma 4: ``theta~_u <= phi (u / l) theta*_u`` with the tightest theta (``bisection =
  tightest``; the listing's theta is T / 2, see ``benchmarks/claims/rar.toml``) and
  ``theta*_u <= T* = OPT``: the rhs here is ``phi (u / l) OPT``, at least the paper's, so
  the ratio found is at most the true ``lhs / rhs``;
* Theorem 5: the makespan ``<= n_g phi (u / l) OPT``.

A-SRPT (asrpt, the worst-case space of the family: tiny windows, prediction-error
budget ``epsilon_bar <= BUDGET``; its own mutation moves), from ``info.theory``:

* Lemma 1: ``OPT_A1 <= rho OPT``; Lemma 2: ``Gamma_A <= X + rho OPT``;
* Lemma 3: ``lemma3_lhs_s <= lemma3_rhs_s``; Theorem 1: ``Gamma_A <= bound OPT``.

Usage (minutes: each candidate is solved exactly)::

    python benchmarks/worst_inequalities.py --candidates 40 --seed 0 --out worst.json
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from dataclasses import replace
from typing import Any

from ddlsched.errors import DdlschedError
from ddlsched.registry import RunOptions, run_method
from ddlsched.rng import make_rng

EXACT_LIMIT_S = 20.0
SOLVED = ("optimal", "feasible")


def _run(family: str, method: str, instance: Any, **params: Any):
    """One run through the pipeline; None without a schedule."""
    options = RunOptions(time_limit_s=EXACT_LIMIT_S, params=params)
    result = run_method(family, method, instance, options)
    return result if str(result.status) in SOLVED and result.objective is not None else None


def _optimum(family: str, instance: Any) -> float | None:
    result = run_method(family, "exact", instance, RunOptions(time_limit_s=EXACT_LIMIT_S))
    return float(result.objective) if str(result.status) == "optimal" else None


# --------------------------------------------------------------------------- rar


def rar_generate(seed: int) -> Any:
    """A fresh ``small`` instance of SJF-BCO's family."""
    from ddlsched.workloads.rar import generate

    return generate("small", seed)


def rar_mutate(instance: Any, rng: Any) -> Any:
    """One move: a job's GPU count (1 .. the largest server) or iterations (x / 2, x 2), or a
    server added (2-4 GPUs) or removed (when every job still fits on the rest)."""
    jobs, servers = list(instance.jobs), list(instance.servers)
    move = int(rng.integers(4))
    if move == 0:
        k = int(rng.integers(len(jobs)))
        jobs[k] = replace(jobs[k], gpus=int(rng.integers(1, max(servers) + 1)))
    elif move == 1:
        k = int(rng.integers(len(jobs)))
        factor = 2.0 if rng.random() < 0.5 else 0.5
        jobs[k] = replace(jobs[k], iterations=max(1, int(jobs[k].iterations * factor)))
    elif move == 2 and len(servers) < 5:
        servers.append(int(rng.integers(2, 5)))
    elif len(servers) > 1:
        servers.pop(int(rng.integers(len(servers))))
        if max(job.gpus for job in jobs) > sum(servers):
            return instance
    return replace(instance, jobs=tuple(jobs), servers=tuple(servers))


def rar_ratios(instance: Any) -> dict[str, float] | None:
    """``lhs / rhs`` of Lemmas 3-4 and Theorem 5 on one instance (None: no schedule or optimum)."""
    listed = _run("rar", "sjf_bco", instance)
    tight = _run("rar", "sjf_bco", instance, bisection="tightest")
    opt = _optimum("rar", instance)
    if listed is None or tight is None or opt is None or opt <= 0:
        return None
    t5 = listed.info["theorem5"]
    factor = t5["bound"] / t5["n_g"]  # phi u / l
    return {
        "rar.lemma3": listed.objective / (t5["n_g"] * listed.info["max_accumulated"]),
        "rar.lemma4_tightest": tight.info["theta"] / (factor * opt),
        "rar.theorem5": listed.objective / (t5["bound"] * opt),
    }


# --------------------------------------------------------------------------- asrpt

BUDGET = 50.0


def asrpt_generate(seed: int) -> Any:
    """A fresh tiny window of the family's worst-case space, within the error budget."""
    from ddlsched.families.asrpt import _worst_generate

    return _worst_generate(seed, BUDGET)


def asrpt_mutate(instance: Any, rng: Any) -> Any:
    """The family's own mutation move, within the error budget."""
    from ddlsched.workloads.asrpt_mutate import mutate

    return mutate(instance, rng, BUDGET)


def asrpt_ratios(instance: Any) -> dict[str, float] | None:
    """``lhs / rhs`` of Lemmas 1-3 and Theorem 1 on one window (None: undefined there)."""
    result = _run("asrpt", "asrpt", instance)
    opt = _optimum("asrpt", instance)
    if result is None or opt is None or opt <= 0:
        return None
    theory = result.info.get("theory", {})
    needed = ("rho", "opt_a_1_s", "lemma2_x_s", "lemma3_lhs_s", "lemma3_rhs_s", "theorem1_bound")
    if any(theory.get(key) is None for key in needed):
        return None
    rho = theory["rho"]
    return {
        "asrpt.lemma1": theory["opt_a_1_s"] / (rho * opt),
        "asrpt.lemma2": result.objective / (theory["lemma2_x_s"] + rho * opt),
        "asrpt.lemma3": theory["lemma3_lhs_s"] / theory["lemma3_rhs_s"],
        "asrpt.theorem1": result.objective / (theory["theorem1_bound"] * opt),
    }


FAMILIES = {
    "rar": (rar_generate, rar_mutate, rar_ratios),
    "asrpt": (asrpt_generate, asrpt_mutate, asrpt_ratios),
}


def search(family: str, candidates: int, seed: int) -> dict[str, dict[str, Any]]:
    """The largest ``lhs / rhs`` found per inequality of ``family`` (module docstring).

    The first quarter of the candidates are fresh instances; each further one mutates the
    current worst instance of one inequality (round robin). A worst one is replaced only by
    a strictly larger ratio, so the same seed finds the same instances.
    """
    generate, mutate, ratios = FAMILIES[family]
    rng = make_rng(seed)
    worst: dict[str, dict[str, Any]] = {}
    fresh = max(1, candidates // 4)
    skipped = 0
    for k in range(candidates):
        names = sorted(worst)
        if k < fresh or not names:
            instance = generate(seed * 100_000 + k)
        else:
            instance = mutate(worst[names[k % len(names)]]["instance"], rng)
        try:
            found = ratios(instance)
        except DdlschedError as exc:  # an invalid mutant (a job too large, ...): skipped, counted
            print(f"  candidate {k}: skipped ({type(exc).__name__}: {exc})", file=sys.stderr)
            found = None
        if found is None:
            skipped += 1
            continue
        for name, ratio in found.items():
            if name not in worst or ratio > worst[name]["ratio"]:
                worst[name] = {"ratio": ratio, "candidate": k, "instance": instance}
    for entry in worst.values():
        entry["instance"] = entry["instance"].to_dict()
        entry["skipped"] = skipped
    return worst


def main(argv: list[str] | None = None) -> int:
    """Run the searches; print the closest approach per inequality; write ``--out``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--family", choices=sorted(FAMILIES), action="append")
    parser.add_argument("--candidates", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", help="JSON file: per inequality its ratio and witness")
    args = parser.parse_args(argv)
    if args.candidates < 1:
        parser.error("--candidates must be >= 1")
    report = {}
    for family in args.family or sorted(FAMILIES):
        started = time.perf_counter()
        found = search(family, args.candidates, args.seed)
        wall = time.perf_counter() - started
        for name, entry in sorted(found.items()):
            verdict = "BROKEN" if entry["ratio"] > 1 + 1e-9 else "holds"
            print(
                f"{name:22s} closest lhs/rhs {entry['ratio']:.4g} ({verdict}; candidate "
                f"{entry['candidate']}, {entry['skipped']} skipped) [{wall:.0f} s wall]"
            )
        report.update(found)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as handle:
            json.dump(report, handle, indent=1, default=float)
    return 0 if all(math.isfinite(e["ratio"]) for e in report.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
