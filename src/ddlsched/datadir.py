"""Where the shared public data (traces, DNN profiles) lives.

The data is never copied into the repository: it is read from
``$DDLSCHED_DATA`` when set, else from ``../shared/data`` next to the
repository root (the layout of the development machines and CI).
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["data_dir", "data_file"]

_REPO_ROOT = Path(__file__).resolve().parents[2]


def data_dir() -> Path | None:
    """Return the data directory, or ``None`` when there is none."""
    env = os.environ.get("DDLSCHED_DATA")
    if env:
        path = Path(env)
        return path if path.is_dir() else None
    for candidate in (_REPO_ROOT.parent / "shared" / "data", Path.cwd().parent / "shared" / "data"):
        if candidate.is_dir():
            return candidate
    return None


def data_file(*parts: str) -> Path:
    """Return the path of a shared data file, with a clear error when absent."""
    from ddlsched.errors import DdlschedError

    root = data_dir()
    if root is None:
        raise DdlschedError(
            f"no data directory for {'/'.join(parts)}: set DDLSCHED_DATA to the folder "
            "holding traces/ and profiles/"
        )
    path = root.joinpath(*parts)
    if not path.exists():
        raise DdlschedError(f"data file not found: {path}")
    return path
