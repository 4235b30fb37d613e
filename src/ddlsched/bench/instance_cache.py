"""The instance cache: each generated instance of a run built once, then read back.

A generated instance is identified by its key, the content hash of its
recipe (family, preset, seed, generator parameters) and the fingerprint of
its family's generator and loader code
(:func:`ddlsched.bench.fingerprint.instance_fingerprint`;
:attr:`ddlsched.bench.tasks.Task.instance_key`, the ``instance_key`` column
of the rows). The cache keeps one file per instance in the ``instances/``
folder of the results directory, ``<results>/instances/<key>.json``:

* ``ddlsched bench validate`` (and ``bench run``, which validates first)
  builds each instance it checks, writes it here, and on a later call only
  checks the file (:func:`verify`) instead of building the instance again;
* a worker reads the file (:func:`load`) instead of calling the generator,
  and writes it when it had to build the instance (an instance the check's
  time budget left out), so that a resumed run builds nothing it built
  before.

Instance files (``files = [...]`` in a suite) are read as they are and not
cached. The cache is an optimisation: a file that cannot be written (a full
disk, a directory a remote Dask worker does not have) is logged and the
instance is used as built.

The file is one JSON object on two lines, written atomically
(:func:`ddlsched.bench.files.atomic_write`: a kill leaves the old file or
none; not fsynced, since every read checks it)::

    {"header": {"format": "ddlsched-instance-cache/1", "key": ..., "recipe": ...,
                "code": ..., "instance_sha256": ..., "instance_bytes": ...},
    "instance": <the instance's to_dict(), compact JSON>}

The header line is read alone; ``instance_sha256`` is the SHA-256 of the
instance's JSON text, so that a truncated or corrupt file is found without
parsing the instance (a 2 MB asrpt instance takes about a second to parse
and rebuild, its hash a few milliseconds). A file is trusted only if its
header parses, names the expected key (and recipe and code fingerprint), its
instance text has the recorded length and hash, and (for :func:`load`) the
family's ``from_dict`` accepts it; any other file is a miss, and is
rebuilt and overwritten.

Choices of ours: the key includes the generator's code fingerprint, not the
package version: an edited generator makes new keys (and new rows), a
version bump alone changes nothing. An instance round-trips
exactly through its ``to_dict``/``from_dict`` (floats are written by
``repr``; checked for every family by ``tests/test_bench_instance_cache.py``),
so a method sees the same instance with or without the cache. An instance
without ``to_dict``, or whose JSON would hold ``nan`` or ``inf``, is not
cached.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from pathlib import Path
from typing import Any

from ddlsched.bench.files import atomic_write
from ddlsched.errors import DdlschedError

__all__ = [
    "CACHE_DIRNAME",
    "FORMAT",
    "cache_dir_of",
    "cache_path",
    "load",
    "make_cache_dir",
    "store",
    "verify",
]

log = logging.getLogger(__name__)

#: The cache's folder inside a results directory.
CACHE_DIRNAME = "instances"
#: The format tag of a cache file's header.
FORMAT = "ddlsched-instance-cache/2"
_HEAD = b'{"header": '
_BODY = b'"instance": '
_TAIL = b"}\n"


def cache_dir_of(results_dir: str | Path) -> Path:
    """The cache folder of a results directory (``<results>/instances``)."""
    return Path(results_dir) / CACHE_DIRNAME


def make_cache_dir(cache_dir: str | Path) -> None:
    """Create the cache folder (and the results directory) if missing; a fault is logged:
    the run goes on without a cache."""
    try:
        os.makedirs(cache_dir, exist_ok=True)
    except OSError as exc:
        log.warning("instance cache: cannot create %s (%s)", cache_dir, exc.strerror or exc)


def cache_path(cache_dir: str | Path, key: str) -> Path:
    """The cache file of the instance of key ``key``."""
    return Path(cache_dir) / f"{key}.json"


def _header(key: str, recipe: dict[str, Any], code: str, body: bytes) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "key": key,
        "recipe": recipe,
        "code": code,
        "instance_sha256": hashlib.sha256(body).hexdigest(),
        "instance_bytes": len(body),
    }


def _read_body(path: Path, key: str, recipe: dict[str, Any], code: str) -> bytes | None:
    """The instance JSON text of a cache file that checks out, or ``None`` (a miss)."""
    try:
        raw = path.read_bytes()
    except OSError:
        return None
    first_line_end = raw.find(b"\n")
    if not raw.startswith(_HEAD) or first_line_end < 0:
        return None
    head_line = raw[len(_HEAD) : first_line_end]
    if not head_line.endswith(b","):
        return None
    try:
        header = json.loads(head_line[:-1])
    except ValueError:
        return None
    expected = {"format": FORMAT, "key": key, "recipe": recipe, "code": code}
    if not isinstance(header, dict) or any(header.get(k) != v for k, v in expected.items()):
        return None
    rest = raw[first_line_end + 1 :]
    if not rest.startswith(_BODY) or not rest.endswith(_TAIL):
        return None
    body = rest[len(_BODY) : -len(_TAIL)]
    if len(body) != header.get("instance_bytes"):
        return None
    if hashlib.sha256(body).hexdigest() != header.get("instance_sha256"):
        return None
    return body


def verify(cache_dir: str | Path, key: str, recipe: dict[str, Any], code: str) -> bool:
    """Whether the cache holds a sound file of this instance (header and hash; not parsed)."""
    return _read_body(cache_path(cache_dir, key), key, recipe, code) is not None


def load(
    cache_dir: str | Path, key: str, recipe: dict[str, Any], code: str, from_dict: Any
) -> Any | None:
    """The cached instance, or ``None`` when there is no sound file of it (a miss)."""
    path = cache_path(cache_dir, key)
    body = _read_body(path, key, recipe, code)
    if body is None:
        return None
    try:
        return from_dict(json.loads(body))
    except (DdlschedError, ValueError, TypeError, KeyError) as exc:
        log.info("instance cache %s: not loadable (%s); building the instance again", path, exc)
        return None


def store(
    cache_dir: str | Path,
    key: str,
    recipe: dict[str, Any],
    code: str,
    instance: Any,
    *,
    make_dir: bool = True,
) -> bool:
    """Write ``instance`` to the cache (atomically); whether it was written.

    Not written: an instance without ``to_dict`` or with non-finite numbers, a
    cache folder that does not exist when ``make_dir`` is false (a worker of a
    remote Dask cluster, which must not create the run's folders on its machine)
    or that cannot be written (logged).
    """
    path = cache_path(cache_dir, key)
    if not make_dir and not path.parent.is_dir():
        log.debug("instance cache %s absent here: %s not cached", path.parent, key)
        return False
    to_dict = getattr(instance, "to_dict", None)
    if not callable(to_dict):
        return False
    try:
        body = json.dumps(to_dict(), separators=(",", ":"), allow_nan=False).encode()
    except (TypeError, ValueError) as exc:
        log.debug("instance %s not cached: %s", key, exc)
        return False
    header = json.dumps(_header(key, recipe, code, body), sort_keys=True).encode()
    data = _HEAD + header + b",\n" + _BODY + body + _TAIL
    try:
        if make_dir:
            os.makedirs(path.parent, exist_ok=True)
        atomic_write(path, data, durable=False)  # checked when read: fsync buys nothing
    except (OSError, DdlschedError) as exc:  # the cache is an optimisation, never a failure
        log.warning("instance cache: cannot write %s (%s)", path, exc)
        return False
    return True
