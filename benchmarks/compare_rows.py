"""Two results directories of one suite, row by row: the same numbers, or which differ.

A regression check between two versions of the code (a results directory
made by each): rows are paired by task (group, instance, method label,
seed; not by key, whose recipe may change between versions), and status,
objective and bound compared. Rows that hit their time limit on either
side are counted apart: what a solver reaches within a limit depends on the
machine's load, not on the code.

    python benchmarks/compare_rows.py OLD_RESULTS NEW_RESULTS

Prints the pairs, how many agree exactly, how many differ only where a time
limit cut one side, and every other difference (exit status 1 if any).
"""

from __future__ import annotations

import sys

import pandas as pd

from ddlsched.bench.store import read_rows

_TASK = ["group", "instance_id", "label", "seed"]
_VALUES = ["status", "objective", "bound"]


def _same(a: pd.Series, b: pd.Series) -> pd.Series:
    both_missing = a.isna() & b.isna()
    if not (pd.api.types.is_numeric_dtype(a) and pd.api.types.is_numeric_dtype(b)):
        return both_missing | (a.astype(str) == b.astype(str))
    return both_missing | ((a - b).abs() <= 1e-9 * (1 + b.abs())).fillna(False)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__)
        return 2
    old, new = (read_rows(path).to_pandas() for path in argv)
    pairs = old.merge(new, on=_TASK, suffixes=("_old", "_new"), how="outer", indicator=True)
    unpaired = pairs[pairs["_merge"] != "both"]
    pairs = pairs[pairs["_merge"] == "both"]
    agree = pd.Series(True, index=pairs.index)
    for column in _VALUES:
        agree &= _same(pairs[f"{column}_old"], pairs[f"{column}_new"])
    limited = pairs["time_limit_hit_old"].fillna(False) | pairs["time_limit_hit_new"].fillna(False)
    other = pairs[~agree & ~limited]
    print(
        f"{len(pairs)} paired rows: {int(agree.sum())} identical, "
        f"{int((~agree & limited).sum())} differ where a time limit cut one side, "
        f"{len(other)} other differences; {len(unpaired)} rows without a partner"
    )
    if len(other):
        columns = _TASK + [f"{c}_{side}" for c in _VALUES for side in ("old", "new")]
        print(other[columns].to_string(index=False))
    return 1 if len(other) or len(unpaired) else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
