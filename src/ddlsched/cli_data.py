"""``ddlsched data fetch [NAME...]`` and ``ddlsched data status [NAME...]``.

``fetch`` downloads the registered data sets (:mod:`ddlsched.data.registry`; none named: all)
into ``$DDLSCHED_DATA`` when set, else the fetch cache (``pooch.os_cache("ddlsched")``), with a
progress bar on a terminal and one summary line per data set. ``status`` lists every
registered file: ``present`` (right SHA-256), ``missing`` or ``corrupt``, and where it was
found (the lookup order of :mod:`ddlsched.datadir`); it exits 1 when a file is missing or
corrupt. A download that fails (offline, a refusing or missing URL) is one line naming the URL,
exit 2 (:class:`~ddlsched.data.fetch.DataFetchError`).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ddlsched.cli_listings import cell, console
from ddlsched.errors import DdlschedError

__all__ = ["add_data_command"]

#: ``data status``: a registered file is missing or corrupt.
EXIT_INCOMPLETE = 1


def add_data_command(sub: Any) -> None:
    """Add ``data fetch`` and ``data status`` to the command parser ``sub``."""
    from ddlsched.data.registry import dataset_names

    names = ", ".join(dataset_names())
    data = sub.add_parser(
        "data",
        help="fetch the public traces and DNN profiles, check them (data fetch|status)",
        description="The public data the loaders read: where it comes from, fetching it, "
        "checking it (docs/data.md).",
    )
    data_sub = data.add_subparsers(dest="data_command", required=True, parser_class=type(data))
    p = data_sub.add_parser(
        "fetch",
        help="download data sets (default: all) into the cache or $DDLSCHED_DATA",
        description="Download the registered data sets at their pinned commits, check each "
        "file's SHA-256, and keep them in $DDLSCHED_DATA when set, else in the fetch cache. "
        "Files already present with the right hash are not downloaded again. "
        "$DDLSCHED_DATA_URL replaces the sources' server by a mirror laid out as "
        "OWNER/REPO/COMMIT/PATH.",
    )
    p.add_argument("names", nargs="*", metavar="NAME", help=f"data sets ({names}); none: all")
    p.set_defaults(func=_cmd_fetch)
    p = data_sub.add_parser(
        "status",
        help="list every data file: present / missing / corrupt, and where",
        description="Every registered data file, looked up as the loaders do ($DDLSCHED_DATA, "
        "else ../shared/data beside the repository, else the fetch cache): present (right "
        "SHA-256), missing or corrupt. Exit status 1 when a file is missing or corrupt.",
    )
    p.add_argument("names", nargs="*", metavar="NAME", help=f"data sets ({names}); none: all")
    p.set_defaults(func=_cmd_status)


def _datasets(names: list[str]) -> list[str]:
    """The data sets named (all when none), each checked, in the registry's order."""
    from ddlsched.data.registry import dataset_names

    known = dataset_names()
    unknown = [n for n in names if n not in known]
    if unknown:
        raise DdlschedError(f"unknown data set {unknown[0]!r} (choose from {', '.join(known)})")
    return [n for n in known if not names or n in names]


class _RichBar:
    """A pooch progress bar drawn as one task of a Rich :class:`~rich.progress.Progress`."""

    def __init__(self, progress: Any, description: str) -> None:
        self._progress = progress
        self._task = progress.add_task(description, total=None)
        self._total: int | None = None

    @property
    def total(self) -> int | None:
        """Bytes to download (pooch sets it from the response's length)."""
        return self._total

    @total.setter
    def total(self, value: int) -> None:
        self._total = value or None
        self._progress.update(self._task, total=self._total)

    def update(self, amount: int) -> None:
        """``amount`` more bytes arrived."""
        self._progress.advance(self._task, amount)

    def reset(self) -> None:
        """Back to zero (pooch fills the bar to its total at the end)."""
        self._progress.reset(self._task, total=self._total)

    def close(self) -> None:
        """The download ended: the task leaves the display."""
        self._progress.remove_task(self._task)


def _size(num_bytes: int) -> str:
    return f"{num_bytes / 1e6:.1f} MB" if num_bytes >= 100_000 else f"{num_bytes / 1e3:.1f} kB"


def _cmd_fetch(args: argparse.Namespace) -> int:
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn

    from ddlsched.data.fetch import fetch_dataset
    from ddlsched.datadir import fetch_target

    datasets = _datasets(args.names)
    root = fetch_target()
    out = console()
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(),
        console=console(stderr=True),
        transient=True,
        disable=not sys.stderr.isatty(),
    ) as progress:
        # one terminal for both: the lines go above the bar (through its console)
        printer = progress.console if sys.stdout.isatty() and sys.stderr.isatty() else out
        for name in datasets:
            summary = fetch_dataset(name, root, lambda what: _RichBar(progress, what))
            kept = summary.files - summary.downloaded
            got = (
                f"{summary.downloaded} fetched ({_size(summary.downloaded_bytes)})"
                if summary.downloaded
                else "nothing to fetch"
            )
            printer.print(
                cell(f"{name}: {summary.files} files, {got}, {kept} already present -> {root}")
            )
    return 0


def _cmd_status(args: argparse.Namespace) -> int:
    from rich.table import Table

    from ddlsched.data.fetch import file_status
    from ddlsched.data.registry import files_of
    from ddlsched.datadir import search_roots

    datasets = _datasets(args.names)
    roots = search_roots()
    table = Table(title=f"data files (looked in: {', '.join(map(str, roots)) or 'nowhere'})")
    for column in ("data set", "file", "status", "where"):
        table.add_column(column)
    incomplete = 0
    for name in datasets:
        for entry in files_of(name):
            status = file_status(entry, roots)
            incomplete += status.state != "present"
            where = str(status.where) if status.where else f"run 'ddlsched data fetch {name}'"
            if status.detail:
                where += f" ({status.detail})"
            table.add_row(cell(name), cell(entry.path), cell(status.state), cell(where))
    console().print(table)
    return EXIT_INCOMPLETE if incomplete else 0
