"""What each command-line flag accepts: argparse ``type=`` functions, in one place.

Every flag of ``ddlsched`` (``cli.py``, ``bench/cli.py``, ``cli_simulate.py``
and the flags a family's ``Simulation`` adds) converts its text with one of
these. A bad value raises :class:`argparse.ArgumentTypeError`, which the
CLI's parser prints as one line ``ddlsched: error: argument --FLAG: ...``
(exit status 2), never a traceback:

=====================  ==================================================
:func:`seed`           an integer in ``0..2147483647`` (:data:`MAX_SEED`:
                       the range HiGHS's and SCIP's seeds accept)
:func:`count`          an integer ``>= 1`` (``--seeds``, ``--workers``,
                       ``--limit``, ``--candidates``); ``count(maximum=N)``
                       caps it
:func:`non_negative`   an integer ``>= 0`` (``bench status --errors``,
                       ``--start``)
:func:`seconds`        a time limit: a number ``> 0``, finite (``nan``,
                       ``inf`` and ``1e999`` are refused)
:func:`names`          a comma-separated list of non-empty names
:func:`numbers`        a comma-separated list of finite numbers ``>= 0``
:func:`choice`         one of a fixed set of words
:func:`dask_address`   ``local`` or ``SCHEME://HOST:PORT``
=====================  ==================================================

The help helpers are here too: :class:`LazyHelpParser` (the CLI's parser
class) computes texts marked with :func:`lazy_help` (the lists of families,
methods and presets, which need the registry) only when help is printed,
and :class:`HelpFormatter` wraps prose but keeps indented blocks (tables of
columns, lists) as written.

Values of ``--param`` and ``--set`` (``KEY=VALUE``) are checked against the
method's or the preset's typed parameter class instead
(:mod:`ddlsched.params`; booleans there are strict: ``true`` or ``false``). This module imports nothing heavy: building the
parser must stay fast (``tests/test_cli_startup.py``).
"""

from __future__ import annotations

import argparse
import math
import re
from collections.abc import Callable, Sequence

__all__ = [
    "DASK_SCHEMES",
    "MAX_SEED",
    "HelpFormatter",
    "LazyHelpParser",
    "choice",
    "count",
    "dask_address",
    "lazy_help",
    "names",
    "non_negative",
    "numbers",
    "seconds",
    "seed",
]

#: Largest seed: HiGHS's ``random_seed`` and SCIP's seed shift are 32-bit signed integers.
MAX_SEED = 2**31 - 1
#: Protocols of a Dask scheduler address (``--dask SCHEME://HOST:PORT``).
DASK_SCHEMES = ("tcp", "tls", "ucx", "ws", "wss")

_Error = argparse.ArgumentTypeError


def _integer(text: str, what: str) -> int:
    try:
        return int(text.strip())
    except ValueError:  # not a number, or too many digits
        shown = text if len(text) <= 40 else text[:37] + "..."
        raise _Error(f"expected {what}, got {shown!r}") from None


def _ranged(minimum: int, maximum: int | None, what: str) -> Callable[[str], int]:
    def convert(text: str) -> int:
        value = _integer(text, what)
        if value < minimum or (maximum is not None and value > maximum):
            raise _Error(f"expected {what}, got {value}")
        return value

    convert.__name__ = what
    return convert


def count(maximum: int | None = None) -> Callable[[str], int]:
    """An integer ``>= 1`` (at most ``maximum``)."""
    what = "an integer >= 1" if maximum is None else f"an integer in 1..{maximum}"
    return _ranged(1, maximum, what)


def non_negative(maximum: int | None = None) -> Callable[[str], int]:
    """An integer ``>= 0`` (at most ``maximum``)."""
    what = "an integer >= 0" if maximum is None else f"an integer in 0..{maximum}"
    return _ranged(0, maximum, what)


#: A seed: ``0..MAX_SEED``.
seed = _ranged(0, MAX_SEED, f"a seed in 0..{MAX_SEED}")


def finite(what: str, minimum: float, inclusive: bool) -> Callable[[str], float]:
    """A finite number above ``minimum`` (``>=`` when ``inclusive``, else ``>``)."""
    relation = f"{'>=' if inclusive else '>'} {minimum:g}"

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise _Error(f"expected {what} (a number {relation}), got {text!r}") from None
        if not math.isfinite(value) or not (value >= minimum if inclusive else value > minimum):
            raise _Error(f"expected {what}, finite and {relation}, got {text!r}")
        return value

    return parse


#: A time limit in seconds: a finite number ``> 0``.
seconds = finite("a time limit in seconds", 0, inclusive=False)
#: A memory size in MiB: a finite number ``>= 1``.
megabytes = finite("a number of MiB", 1, inclusive=True)


def names(text: str) -> list[str]:
    """``a,b,c``: a comma-separated list of non-empty names (spaces around names ignored)."""
    items = [item.strip() for item in text.split(",")]
    if not all(items):
        raise _Error(f"expected names separated by commas, got {text!r}")
    return items


def numbers(text: str) -> list[float]:
    """``0,1,2.5``: a comma-separated list of finite numbers ``>= 0``."""
    try:
        values = [float(item) for item in text.split(",")]
    except ValueError:
        raise _Error(f"expected numbers separated by commas, got {text!r}") from None
    if not all(math.isfinite(v) and v >= 0 for v in values):
        raise _Error(f"expected finite numbers >= 0, got {text!r}")
    return values


def choice(options: Sequence[str], what: str = "one of") -> Callable[[str], str]:
    """One of ``options`` (the message lists them)."""
    options = tuple(options)

    def convert(text: str) -> str:
        if text not in options:
            raise _Error(f"unknown {what} {text!r} (choose from {', '.join(options)})")
        return text

    convert.__name__ = what
    return convert


_HOST = r"(?:[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\])"
_ADDRESS = re.compile(rf"(?P<scheme>[a-z]+)://{_HOST}:(?P<port>[0-9]{{1,5}})")


def dask_address(text: str) -> str:
    """``local`` (start a LocalCluster) or a scheduler address ``SCHEME://HOST:PORT``."""
    if text == "local":
        return text
    match = _ADDRESS.fullmatch(text)
    if match is None or match["scheme"] not in DASK_SCHEMES or not 1 <= int(match["port"]) <= 65535:
        raise _Error(
            f"expected 'local' or a Dask scheduler address SCHEME://HOST:PORT "
            f"(SCHEME one of {', '.join(DASK_SCHEMES)}; e.g. tcp://10.0.0.5:8786), got {text!r}"
        )
    return text


# --------------------------------------------------------------------------- help


class HelpFormatter(argparse.HelpFormatter):
    """Wraps prose paragraphs of descriptions and epilogs, keeps indented blocks as written."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        out = []
        for paragraph in text.strip("\n").split("\n\n"):
            if any(line.startswith(" ") for line in paragraph.splitlines()):
                out.append("\n".join(indent + line for line in paragraph.splitlines()))
            else:
                out.append(super()._fill_text(paragraph, width, indent))
        return "\n\n".join(out)


def lazy_help(target: argparse.Action | argparse.ArgumentParser, make: Callable[[], str]) -> None:
    """Compute an argument's help text (or a parser's epilog) only when help is printed.

    For texts that need the registry (families, methods, presets): building
    the parser must not import them (``ddlsched --help`` loads no numpy).
    :class:`LazyHelpParser` resolves them.
    """
    target.ddlsched_lazy_help = make  # type: ignore[union-attr]


class LazyHelpParser(argparse.ArgumentParser):
    """An argument parser that resolves :func:`lazy_help` texts when formatting help."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def format_help(self) -> str:
        make = getattr(self, "ddlsched_lazy_help", None)
        if make is not None:
            self.epilog = make()
        for action in self._actions:
            make = getattr(action, "ddlsched_lazy_help", None)
            if make is not None:
                action.help = make().replace("%", "%%")  # argparse expands %(...)s
        return super().format_help()
