"""The input gate every file ddlsched reads goes through: open, cap, decode, locate.

JSON instances and profiles (:mod:`ddlsched.jsonio`), suite files (TOML,
:mod:`ddlsched.bench.suite`) and job traces (CSV,
:mod:`ddlsched.workloads.traces`, :mod:`ddlsched.workloads.pai`) are read
with :func:`read_bytes` and :func:`decode_utf8` (or :func:`read_text`, both
at once), so that every reader refuses the same things the same way:

* anything that is not a regular file (a directory, ``/dev/zero``, a FIFO),
  before opening it, and a missing or unreadable file;
* a file larger than the reader's cap, checked before reading (and again
  while reading, for a file that grows);
* bytes that are not UTF-8 (strict; a leading byte-order mark is
  tolerated and dropped), with the line and column of the first bad byte.

Every refusal is one :class:`InputFileError` line ``<file>: <what is
wrong>``; :attr:`InputFileError.detail` holds the part after the file name,
for readers that report through their own error class (suites).
:func:`locate` turns an offset into a line and column,
:func:`nesting_position` finds where a JSON or TOML text first nests deeper
than a bound (for a parser that ran out of recursion), and
:func:`check_tree` walks parsed data for nesting and bad scalars, naming the
field.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable
from pathlib import Path

from ddlsched.errors import InvalidInstanceError

__all__ = [
    "InputFileError",
    "check_tree",
    "decode_utf8",
    "json_depth",
    "locate",
    "nesting_position",
    "read_bytes",
    "read_text",
]

_BOM = b"\xef\xbb\xbf"


class InputFileError(InvalidInstanceError):
    """A file refused by the gate; the message is ``<path>: <detail>``.

    ``InputFileError(message)`` (one argument, as code re-raising an error
    with a prefix does) keeps ``message`` whole, ``path`` ``None``.
    """

    def __init__(self, path: str | Path, detail: str | None = None) -> None:
        if detail is None:
            self.path, self.detail = None, str(path)
            super().__init__(str(path))
            return
        self.path = str(path)
        self.detail = detail
        super().__init__(f"{path}: {detail}")


def read_bytes(path: str | Path, *, max_bytes: int, what: str = "file") -> bytes:
    """The bytes of the regular file ``path``, at most ``max_bytes`` of them.

    ``what`` names the kind of file in the size message ("a suite file may
    have at most ..."). Refused (:class:`InputFileError`): a missing file,
    anything but a regular file, more than ``max_bytes``, an OS error.
    """
    path = Path(path)
    try:
        info = os.stat(path)  # follows symbolic links: a link to a regular file is one
    except FileNotFoundError:
        raise InputFileError(path, "no such file") from None
    except OSError as exc:
        raise InputFileError(path, f"cannot read ({exc.strerror})") from None
    if not stat.S_ISREG(info.st_mode):
        kind = "a directory" if stat.S_ISDIR(info.st_mode) else "a device, pipe or socket"
        raise InputFileError(path, f"not a regular file ({kind})")
    if info.st_size > max_bytes:
        raise InputFileError(
            path, f"{info.st_size:,} bytes, more than the {max_bytes:,} {what} may have"
        )
    try:
        with path.open("rb") as handle:
            raw = handle.read(max_bytes + 1)
    except OSError as exc:
        raise InputFileError(path, f"cannot read ({exc.strerror})") from None
    if len(raw) > max_bytes:  # it grew since the stat
        raise InputFileError(path, f"more than the {max_bytes:,} bytes {what} may have")
    return raw


def locate(raw: bytes | str, offset: int) -> tuple[int, int]:
    """``(line, column)``, both from 1, of ``offset`` in ``raw`` (columns in characters)."""
    newline = b"\n" if isinstance(raw, bytes) else "\n"
    line = raw.count(newline, 0, offset) + 1
    start = raw.rfind(newline, 0, offset) + 1
    prefix = raw[start:offset]
    if isinstance(prefix, bytes):
        prefix = prefix.decode("utf-8", errors="replace")
    return line, len(prefix) + 1


def decode_utf8(raw: bytes, path: str | Path) -> str:
    """``raw`` as strict UTF-8 text without its byte-order mark; a bad byte is located."""
    skip = len(_BOM) if raw.startswith(_BOM) else 0
    try:
        return raw[skip:].decode("utf-8")
    except UnicodeDecodeError as exc:
        line, column = locate(raw[skip:], exc.start)  # a byte-order mark is no column
        bad = raw[skip + exc.start : skip + exc.start + 1]
        raise InputFileError(
            path, f"not UTF-8 (line {line}, column {column}: byte 0x{bad.hex()})"
        ) from None


def read_text(path: str | Path, *, max_bytes: int, what: str = "file") -> str:
    """:func:`read_bytes` then :func:`decode_utf8`."""
    return decode_utf8(read_bytes(path, max_bytes=max_bytes, what=what), path)


_JSON_ESCAPE = re.compile(rb"\\.", re.S)
#: Every byte but the ones that open or close a JSON string, list or object.
_NOT_STRUCTURE = bytes(b for b in range(256) if b not in b'"[]{}')


def json_depth(raw: bytes) -> int:
    """How deep lists and objects nest in the JSON text ``raw`` (0: a scalar).

    Fast (C-level byte operations, no parse, no path strings): escapes are
    dropped, then every byte but quotes and brackets; brackets inside
    strings (after an odd number of quotes) are ignored, the others
    counted. Exact for valid JSON; for invalid JSON a number the parser's
    own error makes moot.
    """
    import numpy as np

    if b"\\" in raw:
        raw = _JSON_ESCAPE.sub(b"", raw)
    kept = np.frombuffer(raw.translate(None, _NOT_STRUCTURE), dtype=np.uint8)
    if kept.size == 0:
        return 0
    quote = kept == ord('"')
    outside = (np.cumsum(quote, dtype=np.int64) & 1) == 0
    steps = np.zeros(kept.size, dtype=np.int8)
    steps[(kept == ord("[")) | (kept == ord("{"))] = 1
    steps[(kept == ord("]")) | (kept == ord("}"))] = -1
    steps[~outside | quote] = 0
    return int(max(0, np.cumsum(steps, dtype=np.int64).max()))


def nesting_position(text: str, max_depth: int, *, toml: bool = False) -> tuple[int, int] | None:
    """``(line, column)`` of the first bracket nesting deeper than ``max_depth``, else ``None``.

    Counts ``[`` and ``{`` outside strings (``"..."`` with backslash escapes;
    with ``toml``, also ``'...'`` literal strings and ``#`` comments); a
    best-effort locator for an error message, not a parser.
    """
    depth = 0
    i, n = 0, len(text)
    quotes = "\"'" if toml else '"'
    while i < n:
        char = text[i]
        if char in quotes:
            triple = toml and text.startswith(char * 3, i)
            end_mark = char * 3 if triple else char
            j = i + len(end_mark)
            while j < n and not text.startswith(end_mark, j):
                if char == '"' and text[j] == "\\":
                    j += 1
                elif not triple and text[j] == "\n":
                    break
                j += 1
            i = j + len(end_mark)
            continue
        if toml and char == "#":
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        if char in "[{":
            depth += 1
            if depth > max_depth:
                return locate(text, i)
        elif char in "]}":
            depth -= 1
        i += 1
    return None


def check_tree(
    value: object,
    *,
    max_depth: int,
    scalar: Callable[[object], str | None] | None = None,
) -> tuple[str, str] | None:
    """The first ``(field, problem)`` of parsed data, in document order, else ``None``.

    A problem is a list or table nested more than ``max_depth`` levels deep,
    or a scalar for which ``scalar(value)`` returns a text (e.g. "nan is not
    a finite number"). Fields are written ``a.b[2].c``; the top level is
    ``(top level)``. Iterative: any depth is walked without recursion.
    """
    stack: list[tuple[object, str, int]] = [(value, "", 0)]
    while stack:
        node, where, depth = stack.pop()
        if isinstance(node, dict | list):
            if depth >= max_depth:
                if len(where) > 60:
                    where = f"{where[:40]}...{where[-15:]}"
                return where or "(top level)", f"nested more than {max_depth} levels deep"
            if isinstance(node, dict):
                children = [(v, f"{where}.{k}" if where else str(k)) for k, v in node.items()]
            else:
                children = [(v, f"{where}[{i}]") for i, v in enumerate(node)]
            stack.extend((v, w, depth + 1) for v, w in reversed(children))
        elif scalar is not None:
            problem = scalar(node)
            if problem is not None:
                return where or "(top level)", problem
    return None
