"""Strict JSON helpers shared by every family's instance format.

Every instance class reads and writes its file through :class:`JsonInstance`
(its ``load`` and ``save``): the class gives ``from_dict`` and ``to_dict``,
this module the strict reader (:func:`read_json`), the one-line errors naming
the file (:func:`load_instance`, :class:`OutputFileError`) and the atomic
write (:func:`write_json`: a temporary file in the same folder, then a
rename, so that a reader never sees half a file). Fields are checked with
:func:`check_fields`, :func:`check_header`, :func:`require_number`,
:func:`require_int`, :func:`read_names` and :func:`read_meta`.
"""

from __future__ import annotations

import contextlib
import gc
import json
import logging
import math
import os
import stat
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from ddlsched.errors import DdlschedError, InvalidInstanceError
from ddlsched.textin import (
    InputFileError,
    check_tree,
    decode_utf8,
    json_depth,
    nesting_position,
    read_bytes,
)

T = TypeVar("T")

__all__ = [
    "JsonInstance",
    "OutputFileError",
    "check_fields",
    "check_header",
    "gc_paused",
    "load_instance",
    "other_family_message",
    "read_json",
    "read_meta",
    "read_names",
    "require_int",
    "require_number",
    "write_json",
]

log = logging.getLogger(__name__)


#: The largest JSON file read (bytes): checked before reading (a stray multi-GB file or
#: ``/dev/zero`` is refused, never read into memory).
MAX_JSON_BYTES = 256 * 1024 * 1024
#: The deepest nesting of lists and objects (instance and profile files need fewer than 10).
MAX_JSON_NESTING = 64
#: The most digits an integer literal may have (Python refuses above 4,300 with a
#: ValueError; no field of any family needs more than a few).
MAX_INT_DIGITS = 30


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a finite number")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text} is out of the range of a finite number")
    return value


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise ValueError(f"an integer of {len(text.lstrip('-'))} digits (at most {MAX_INT_DIGITS})")
    return int(text)


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):  # rare: find the first repeated key for the message
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise ValueError(f"duplicate key {key!r}")
            seen.add(key)
    return out


#: Digits as ``0``, ``E`` as ``e``, ``+`` dropped: :func:`_suspect_numbers` searches this
#: rendering for the two shapes of a number that may be out of range.
_NUMBER_SHAPE = bytes.maketrans(b"123456789E", b"000000000e")


def _suspect_numbers(raw: bytes) -> bool:
    """Whether ``raw`` may hold a number out of range: more than :data:`MAX_INT_DIGITS`
    digits in a row, or a positive exponent of three digits or more.

    Texts without one are parsed with the C parser's own number conversion
    (every such float is finite, every integer short); the others through
    the checking hooks, which name the bad number. Two substring searches,
    no regular expression (10x faster on a 30 MB file).
    """
    shape = raw.translate(_NUMBER_SHAPE, b"+")
    return b"0" * (MAX_INT_DIGITS + 1) in shape or b"e000" in shape


def read_json(path: str | Path) -> Any:
    """Read a JSON file through one strict gate; every failure is one line naming the file.

    Refused: what :mod:`ddlsched.textin` refuses (a missing or unreadable file,
    anything that is not a regular file, more than :data:`MAX_JSON_BYTES`,
    invalid UTF-8 with the line and column of the bad byte; a byte-order mark
    is tolerated), invalid JSON (line and column), nesting deeper than
    :data:`MAX_JSON_NESTING` levels, ``NaN``, ``Infinity`` and numbers that
    overflow a float, integers of more than :data:`MAX_INT_DIGITS` digits,
    and an object with a duplicate key.
    """
    raw = read_bytes(path, max_bytes=MAX_JSON_BYTES, what="a JSON file")
    text = decode_utf8(raw, path)
    numbers: dict[str, Any] = (
        {"parse_float": _finite_float, "parse_int": _bounded_int} if _suspect_numbers(raw) else {}
    )
    try:
        data = json.loads(
            text, object_pairs_hook=_no_duplicates, parse_constant=_reject_constant, **numbers
        )
    except json.JSONDecodeError as exc:
        raise InputFileError(
            path, f"not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from None
    except RecursionError:
        where = nesting_position(text, MAX_JSON_NESTING)
        at = f" (line {where[0]}, column {where[1]})" if where else ""
        raise InputFileError(
            path, f"JSON nested too deeply: more than {MAX_JSON_NESTING} levels{at}"
        ) from None
    except ValueError as exc:
        raise InputFileError(path, f"not valid JSON ({exc})") from None
    if json_depth(raw) > MAX_JSON_NESTING:  # a cheap count first: check_tree builds paths
        bad = check_tree(data, max_depth=MAX_JSON_NESTING) or ("(top level)", "too deep")
        raise InputFileError(path, f"JSON nested too deeply: {bad[0]}: {bad[1]}")
    return data


@contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic garbage collection inside the block (then as before).

    Reading a large file makes millions of objects and no cycles; each
    automatic collection walks them all again: a 100,000-job file loaded
    1.6x faster without it.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def load_instance(from_dict: Callable[[Any], T], path: str | Path, family: str = "") -> T:
    """Read an instance file with ``from_dict``; every error is one line naming the file.

    With ``family``, a file whose ``family`` field names another family is
    refused as such (``this is a rar instance, not asrpt``), not for the
    fields it has that ``family`` does not know. Runs with the garbage
    collector paused (:func:`gc_paused`).
    """
    with gc_paused():
        return _load_instance(from_dict, path, family)


def other_family_message(data: Any, family: str) -> str | None:
    """``this is a rar instance, not asrpt`` when ``data`` names another family, else ``None``."""
    named = data.get("family") if isinstance(data, Mapping) else None
    if not family or not isinstance(named, str) or not named or named == family:
        return None
    article = "an" if named[0] in "aeiou" else "a"
    return (
        f"this is {article} {named} instance, not {family} (its 'family' field; "
        f"'ddlsched instance check FILE' and 'ddlsched solve {named} FILE' read it)"
    )


def _load_instance(from_dict: Callable[[Any], T], path: str | Path, family: str = "") -> T:
    data = read_json(path)  # its errors already name the file
    other = other_family_message(data, family)
    if other is not None:
        raise InvalidInstanceError(f"{path}: {other}")
    try:
        return from_dict(data)
    except InvalidInstanceError as exc:
        raise InvalidInstanceError(f"{path}: {exc}") from None
    except (
        TypeError,
        ValueError,
        KeyError,
        IndexError,
        AttributeError,
        OverflowError,
        ArithmeticError,
        RecursionError,
    ) as exc:
        # a field of a type no check foresaw (a list where a name belongs): still one
        # line; the traceback goes to the log (ddlsched -v) in case the file is valid
        log.debug("unforeseen error reading %s", path, exc_info=True)
        raise InvalidInstanceError(
            f"{path}: malformed instance ({type(exc).__name__}: {exc}; unexpected: "
            "please report it if the file is valid)"
        ) from None


class OutputFileError(DdlschedError, OSError):
    """A file that cannot be written: one line ``cannot write FILE: REASON``.

    An :class:`OSError` too (``errno``, ``strerror``, ``filename``), so that a
    caller catching the operating system's error still does.
    """

    def __str__(self) -> str:
        return f"cannot write {self.filename}: {self.strerror}"


def write_json(path: str | Path, data: Any) -> None:
    """Write ``data`` as indented JSON (UTF-8, trailing newline), atomically.

    The text goes to a temporary file in the same folder, renamed over
    ``path`` once complete (the new file gets the permissions a plain write
    gives). A path that exists and is no regular file (``/dev/stdout``, a
    pipe) is written in place. Failures raise :class:`OutputFileError`.
    """
    text = json.dumps(data, indent=2) + "\n"
    target = Path(os.path.realpath(path))  # a symbolic link: replace the file it names
    try:
        if target.exists() and not target.is_file():
            target.write_text(text, encoding="utf-8")
            return
        _replace_atomically(target, text)
    except OSError as exc:
        raise OutputFileError(exc.errno, exc.strerror, str(path)) from None


def _replace_atomically(target: Path, text: str) -> None:
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
        os.chmod(temporary, _new_file_mode(target))
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _new_file_mode(target: Path) -> int:
    """The mode ``target`` has (it exists) or a plain ``open(..., "w")`` would give it."""
    with contextlib.suppress(OSError):
        return stat.S_IMODE(target.stat().st_mode)
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


class JsonInstance:
    """``load`` and ``save`` of an instance class, from its ``from_dict`` and ``to_dict``.

    A base class of every family's instance (e.g. ``class RarInstance(JsonInstance)``):
    ``load`` reads through :func:`load_instance` (strict JSON, one line naming the
    file on any error), ``save`` writes through :func:`write_json` (atomic; one
    line :class:`OutputFileError`).
    """

    __slots__ = ()

    @classmethod
    def from_dict(cls: type[T], data: Any) -> T:  # pragma: no cover - each class has its own
        raise NotImplementedError(f"{cls.__name__}.from_dict")

    def to_dict(self) -> dict[str, Any]:  # pragma: no cover - each class has its own
        raise NotImplementedError(f"{type(self).__name__}.to_dict")

    @classmethod
    def load(cls: type[T], path: str | Path) -> T:
        """Read an instance file (JSON), with one-line errors naming the file."""
        family = getattr(cls, "family", "")
        return load_instance(cls.from_dict, path, family if isinstance(family, str) else "")  # type: ignore[attr-defined]

    def save(self, path: str | Path) -> None:
        """Write the instance file (JSON), atomically."""
        write_json(path, self.to_dict())


def check_fields(
    data: Any, where: str, required: Iterable[str], optional: Iterable[str] = ()
) -> Mapping[str, Any]:
    """Check that ``data`` is an object with exactly the allowed fields."""
    if not isinstance(data, Mapping):
        raise InvalidInstanceError(f"{where}: expected a JSON object, got {type(data).__name__}")
    required = list(required)
    allowed = set(required) | set(optional)
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise InvalidInstanceError(f"{where}: unknown field(s) {', '.join(map(repr, unknown))}")
    missing = [k for k in required if k not in data]
    if missing:
        raise InvalidInstanceError(f"{where}: missing field(s) {', '.join(map(repr, missing))}")
    return data


def check_header(data: Mapping[str, Any], family: str, schema_version: int) -> None:
    """Check the ``family`` and ``schema_version`` fields every instance file carries."""
    if data["family"] != family:
        raise InvalidInstanceError(f"family: expected {family!r}, got {data['family']!r}")
    version = data["schema_version"]
    if isinstance(version, bool) or not isinstance(version, int) or version != schema_version:
        raise InvalidInstanceError(
            f"schema_version: expected {schema_version}, got {data['schema_version']!r}"
        )


def require_number(
    value: Any, where: str, *, minimum: float | None = None, strict: bool = False
) -> float:
    """Return ``value`` as a finite float, checking a lower bound."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InvalidInstanceError(f"{where}: expected a finite number, got {value!r}")
    if minimum is not None and (value <= minimum if strict else value < minimum):
        relation = ">" if strict else ">="
        raise InvalidInstanceError(f"{where}: must be {relation} {minimum}, got {value!r}")
    return float(value)


def require_int(
    value: Any, where: str, *, minimum: int | None = None, maximum: int | None = None
) -> int:
    """Return ``value`` as an int (integral floats such as 4.0 are refused)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInstanceError(f"{where}: expected an integer, got {value!r}")
    if minimum is not None and value < minimum:
        raise InvalidInstanceError(f"{where}: must be >= {minimum}, got {value!r}")
    if maximum is not None and value > maximum:
        raise InvalidInstanceError(f"{where}: must be <= {maximum:,}, got {value!r}")
    return int(value)


def read_meta(data: Mapping[str, Any]) -> dict[str, Any]:
    """The optional ``meta`` object of an instance file: generator facts, scalars only."""
    meta = data.get("meta", {})
    if not isinstance(meta, Mapping) or not all(
        isinstance(v, (str, int, float, bool)) or v is None for v in meta.values()
    ):
        raise InvalidInstanceError(f"meta: expected an object of scalars, got {meta!r}")
    return dict(meta)


def read_names(value: Any, where: str) -> tuple[str, ...]:
    """A non-empty list of distinct non-empty names (e.g. resources)."""
    if not isinstance(value, list) or not value:
        raise InvalidInstanceError(f"{where}: expected a non-empty list, got {value!r}")
    if not all(isinstance(r, str) and r for r in value) or len(set(value)) != len(value):
        raise InvalidInstanceError(f"{where}: expected distinct non-empty names, got {value!r}")
    return tuple(value)
