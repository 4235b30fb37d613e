"""How a report or a committed sample names a results directory or a suite file.

A verdict, an interval report or a sample of rows is committed and read on
other machines, so it names no path of the machine that wrote it:
:func:`portable_path` keeps a relative path as given, writes a path inside the
working directory relative to it, and masks any other absolute path as
``runs/...`` (from a ``runs`` component of the path when it has one, else its
last component): ``/scratch/me/runs/paper/asrpt`` becomes
``runs/paper/asrpt``, ``/tmp/cdp/placement`` becomes ``runs/placement``. The
``runs/`` prefix is the documented place of results directories that are not
committed, so the commands a report quotes still read as commands.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

__all__ = ["MASK", "portable_path"]

#: The directory that stands for any place outside the working directory.
MASK = "runs"


def portable_path(path: str | Path | None, cwd: str | Path | None = None) -> str | None:
    """``path`` as a committed file may quote it (module docstring); ``None`` stays ``None``.

    >>> portable_path("results/quick")
    'results/quick'
    >>> portable_path("/scratch/me/runs/paper/asrpt", cwd="/home/me/ddlsched")
    'runs/paper/asrpt'
    >>> portable_path("/tmp/cdp/placement-claims.toml", cwd="/home/me/ddlsched")
    'runs/placement-claims.toml'
    >>> portable_path("/home/me/ddlsched/benchmarks/suites/dmlrs.toml", cwd="/home/me/ddlsched")
    'benchmarks/suites/dmlrs.toml'
    """
    if path is None:
        return None
    text = str(path)
    if not text.startswith("/"):
        return text
    pure = PurePosixPath(text)
    base = PurePosixPath(str(cwd if cwd is not None else Path.cwd()))
    if pure.is_relative_to(base):
        return str(pure.relative_to(base))  # "." for the working directory itself
    parts = pure.parts
    if MASK in parts[:-1]:
        return str(PurePosixPath(*parts[parts.index(MASK) :]))
    return f"{MASK}/{pure.name}" if pure.name else MASK
