"""Where a ``bench`` command's text goes: a file given by ``--output``, else standard output."""

from __future__ import annotations

import sys
from pathlib import Path

from ddlsched.errors import DdlschedError

__all__ = ["write_output"]


def write_output(text: str, output: str | None) -> None:
    """Write ``text`` to the file ``output`` (UTF-8), or to standard output when it is
    ``None`` or empty; a file that cannot be written is a :class:`DdlschedError` naming it."""
    if output:
        try:
            Path(output).write_text(text, encoding="utf-8")
        except OSError as exc:
            raise DdlschedError(f"cannot write {output}: {exc.strerror or exc}") from None
    else:
        sys.stdout.write(text)
