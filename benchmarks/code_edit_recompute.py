"""Edit a method's code, run its suite again: which rows are recomputed, and how fast.

Measures what a user of the result store meets after editing code
(docs/result-store.md): in a scratch copy of this checkout (``git worktree
add``, removed afterwards), it runs a suite into a fresh results directory,
runs it again unchanged (nothing may run), applies one edit to a built-in
heuristic, runs the suite again (only the methods whose code reaches the
edit may run, and the summary line must name them), and prints the three
summary lines, the wall time of each ``ddlsched bench run`` (start-up
included) and the table lines of the edited methods before and after.

    python benchmarks/code_edit_recompute.py [--suite benchmarks/suites/quick.toml]
                                             [--edit tie-break|comment] [--workers 2]

``--edit tie-break`` changes SJF-BCO's LBSGF server order (ties to the
highest-numbered server instead of the lowest: ``heuristics/sjf_bco.py``);
``--edit comment`` edits the docstring of the same method and adds a comment and a
blank line inside it (nothing may run).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EDITS = {
    "tie-break": (
        '        order = np.argsort(mean_load, kind="stable")\n'
        "        cumulative = np.cumsum(data.capacity[order])\n",
        "        order = np.lexsort((-np.arange(len(mean_load)), mean_load))\n"
        "        cumulative = np.cumsum(data.capacity[order])\n",
    ),
    "comment": (
        '        """Line 2: servers sorted by mean ``U`` per GPU, the fewest leading ones."""\n'
        "        mean_load = np.add.reduceat(state.accumulated, data.server_start) / data.capacity\n",
        '        """Line 2 of Algorithm 3: the fewest least-busy servers (docstring edited)."""\n'
        "        # a comment and a blank line inside the function: no code changed\n\n"
        "        mean_load = np.add.reduceat(state.accumulated, data.server_start) / data.capacity\n",
    ),
}


def _run(args: list[str], src: Path) -> tuple[str, float]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "ddlsched.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    return done.stdout, time.perf_counter() - started


def _table_lines(text: str, methods: list[str]) -> list[str]:
    return [line for line in text.splitlines() if any(f"| {m} |" in line for m in methods)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default="benchmarks/suites/quick.toml")
    parser.add_argument("--edit", choices=sorted(EDITS), default="tie-break")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        tree = Path(scratch) / "tree"
        subprocess.run(
            ["git", "-C", str(REPO), "worktree", "add", "-q", "--detach", str(tree), "HEAD"],
            check=True,
        )
        try:
            src, out = tree / "src", Path(scratch) / "results"
            run = ["bench", "run", str(tree / args.suite), "--out", str(out)]
            run += ["--workers", str(args.workers)]
            for step in ("first run", "unchanged"):
                text, wall = _run(run, src)
                print(f"{step}: {text.splitlines()[0]}  [{wall:.1f} s wall]")
            before, _ = _run(["bench", "table", str(out)], src)
            target = tree / "src/ddlsched/heuristics/sjf_bco.py"
            old, new = EDITS[args.edit]
            code = target.read_text()
            if old not in code:
                raise SystemExit(f"the edit {args.edit!r} no longer applies to {target}")
            target.write_text(code.replace(old, new))
            text, wall = _run(run, src)
            lines = text.splitlines()
            print(f"after the {args.edit} edit: {lines[0]}  [{wall:.1f} s wall]")
            recomputed = [line for line in lines if "recomputed" in line]
            print("  " + (recomputed[0] if recomputed else "no row recomputed"))
            after, _ = _run(["bench", "table", str(out)], src)
            methods = ["sjf_bco", "exact", "improve"]
            print("table lines before:")
            print("\n".join(_table_lines(before, methods)))
            print("table lines after:")
            print("\n".join(_table_lines(after, methods)))
        finally:
            subprocess.run(
                ["git", "-C", str(REPO), "worktree", "remove", "--force", str(tree)], check=False
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
