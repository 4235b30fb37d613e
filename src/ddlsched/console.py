"""The Rich console every command prints through.

One factory, below the command-line modules (``ddlsched.cli*`` and ``ddlsched.bench.cli``
both use it): tables are as wide as they need to be when the output is not a terminal,
and a reader that goes away (``ddlsched ... | head``) raises :class:`BrokenPipeError`,
which the CLI turns into exit status 141.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any

__all__ = ["console", "raise_interrupt", "suite_progress", "suite_tick"]


def console(stderr: bool = False, width: int | None = 200):
    """A Rich console; when output is not a terminal, ``width`` columns wide (default:
    wide enough not to truncate tables; ``None``: Rich's own choice).

    A reader that goes away (``ddlsched ... | head``) raises :class:`BrokenPipeError`,
    which the CLI turns into exit status 141 (Rich's own handling exits with 1).
    """
    stream = sys.stderr if stderr else sys.stdout
    return _pipe_console_class()(
        stderr=stderr, highlight=False, soft_wrap=True, width=None if stream.isatty() else width
    )


@functools.cache
def _pipe_console_class() -> type:
    """Rich's ``Console`` with a broken pipe raised, not turned into ``SystemExit(1)``."""
    from rich.console import Console

    class PipeConsole(Console):
        def on_broken_pipe(self) -> None:
            self.quiet = True  # print nothing more
            raise BrokenPipeError

    return PipeConsole


def suite_progress(console: Any, quiet: bool = False) -> Any:
    """The progress bar of a suite run (``bench run``, ``reproduce``), drawn on ``console``:
    done of total tasks, failed ones, elapsed time and ETA; ``quiet`` draws nothing.
    A context manager (Rich's ``Progress``); :func:`suite_tick` adds a suite to it."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("failed {task.fields[failed]}"),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=console,
        transient=False,
        disable=quiet,
    )


def suite_tick(bar: Any, name: str) -> Callable[[Any], None]:
    """A line for suite ``name`` on ``bar`` and the callback a run reports its progress to
    (an object with ``done``, ``total`` and ``failed``)."""
    task = bar.add_task(name, total=None, failed=0)

    def tick(progress: Any) -> None:
        bar.update(task, completed=progress.done, total=progress.total, failed=progress.failed)

    return tick


def raise_interrupt(signum: int, frame: Any) -> None:
    """A ``SIGTERM`` handler: stop a run as Ctrl-C does (finished rows are kept)."""
    raise KeyboardInterrupt
