"""The Rich console every command prints through.

One factory, below the command-line modules (``ddlsched.cli*`` and ``ddlsched.bench.cli``
both use it): tables are as wide as they need to be when the output is not a terminal,
and a reader that goes away (``ddlsched ... | head``) raises :class:`BrokenPipeError`,
which the CLI turns into exit status 141.
"""

from __future__ import annotations

import functools
import sys

__all__ = ["console"]


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
