"""Downloading the registered data sets with pooch, and the status of every registered file.

:func:`fetch_dataset` brings every file of a data set into a data directory (the fetch cache or
``$DDLSCHED_DATA``, :func:`ddlsched.datadir.fetch_target`) at its registered place: each file is
downloaded from :func:`~ddlsched.data.registry.source_url` and checked against its SHA-256 by
pooch (a file already there with the right hash is not downloaded again). Files distributed in
an archive (the ITP traces) are taken from the archive, itself checked, and each unpacked file
checked again; the archive is kept beside them, so a second fetch downloads nothing.

A URL that cannot be read (offline, a server that refuses, a missing file) raises
:class:`DataFetchError`, one line naming the URL; a download with another hash raises
:class:`~ddlsched.data.verify.DataIntegrityError`. :func:`file_status` says, per registered file,
whether it is present (and right), missing or corrupt, and where it was found.
"""

from __future__ import annotations

import logging
import os
import tarfile
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ddlsched.data.registry import ARCHIVES, Archive, DataFile, files_of, source_url
from ddlsched.data.verify import DataIntegrityError, file_sha256, verified_sha256
from ddlsched.errors import DdlschedError

__all__ = [
    "DOWNLOAD_TIMEOUT_S",
    "DataFetchError",
    "FetchSummary",
    "FileStatus",
    "fetch_dataset",
    "file_status",
]

log = logging.getLogger(__name__)

#: Seconds a download may wait for the server (connecting, or between two reads).
DOWNLOAD_TIMEOUT_S = 30.0

#: ``progress(description)`` -> a pooch progress bar (attribute ``total``; ``update(n)``,
#: ``reset()``, ``close()``), or ``None`` for none.
ProgressFactory = Callable[[str], Any]


class DataFetchError(DdlschedError):
    """A data file could not be downloaded (the message names the URL)."""


@dataclass(frozen=True)
class FetchSummary:
    """What :func:`fetch_dataset` did for one data set."""

    dataset: str
    files: int
    downloaded: int
    downloaded_bytes: int
    target: Path


@dataclass(frozen=True)
class FileStatus:
    """A registered file's state: ``present`` (right hash), ``missing`` or ``corrupt``;
    ``where``: the file found (``None`` when missing); ``detail``: why it is corrupt."""

    entry: DataFile
    state: str
    where: Path | None
    detail: str = ""


def _is_valid(path: Path, entry: DataFile | Archive) -> bool:
    """Whether ``path`` is a regular file of ``entry``'s size and SHA-256."""
    if not path.is_file() or path.stat().st_size != entry.size:
        return False
    return file_sha256(path) == entry.sha256


def _reason(exc: Exception) -> str:
    """A short reason for a failed download."""
    import requests

    if isinstance(exc, requests.HTTPError) and exc.response is not None:
        return f"HTTP {exc.response.status_code}"
    if isinstance(exc, requests.Timeout):
        return f"no answer within {DOWNLOAD_TIMEOUT_S:g} s"
    if isinstance(exc, requests.ConnectionError):
        return "cannot connect (offline, or the server is unreachable)"
    return type(exc).__name__


def _download(
    url: str, entry: DataFile | Archive, destination: Path, progress: ProgressFactory | None
) -> None:
    """Download ``url`` to ``destination`` through pooch, checking ``entry``'s SHA-256."""
    import pooch
    import requests

    pooch.get_logger().setLevel(logging.WARNING)
    bar = progress(entry.path) if progress is not None else None
    downloader = pooch.HTTPDownloader(progressbar=bar or False, timeout=DOWNLOAD_TIMEOUT_S)
    try:
        pooch.retrieve(
            url,
            known_hash=f"sha256:{entry.sha256}",
            fname=destination.name,
            path=destination.parent,
            downloader=downloader,
        )
    except requests.RequestException as exc:
        raise DataFetchError(f"cannot download {url}: {_reason(exc)}") from None
    except ValueError as exc:  # pooch: the downloaded file's hash differs
        if "hash" not in str(exc).lower():
            raise
        raise DataIntegrityError(
            f"downloaded {url} is not the registered {entry.path}: its sha256 differs from "
            f"{entry.sha256} (the source or the mirror changed the file)"
        ) from None
    except OSError as exc:
        raise DataFetchError(f"cannot write {destination}: {exc.strerror or exc}") from None


def _unpack(archive_path: Path, archive: Archive, members: list[DataFile], root: Path) -> None:
    """Extract ``members`` of the checked archive into ``root``, checking each file's hash."""
    with tarfile.open(archive_path, "r:*") as tar:
        for entry in members:
            try:
                info = tar.getmember(entry.original)
            except KeyError:
                raise DataIntegrityError(
                    f"archive {archive_path} has no member {entry.original} ({entry.path})"
                ) from None
            handle = tar.extractfile(info) if info.isfile() else None
            if handle is None:
                raise DataIntegrityError(
                    f"archive {archive_path}: member {entry.original} is not a regular file"
                )
            destination = root / entry.path
            destination.parent.mkdir(parents=True, exist_ok=True)
            fd, scratch = tempfile.mkstemp(dir=destination.parent, prefix=".part-")
            try:
                with os.fdopen(fd, "wb") as out, handle:
                    while chunk := handle.read(1 << 20):
                        out.write(chunk)
                try:
                    verified_sha256(Path(scratch), entry)
                except DataIntegrityError as exc:
                    raise DataIntegrityError(
                        f"member {entry.original} of {archive_path} is not the registered "
                        f"{entry.path}: expected sha256 {entry.sha256}, found {exc.found}",
                        found=exc.found,
                    ) from None
                os.replace(scratch, destination)
            except BaseException:
                Path(scratch).unlink(missing_ok=True)
                raise


def fetch_dataset(
    dataset: str, root: Path, progress: ProgressFactory | None = None
) -> FetchSummary:
    """Bring every registered file of ``dataset`` into the data directory ``root``.

    Files already there with the right hash are kept; others are downloaded (or unpacked from
    their downloaded archive) and checked. Raises :class:`DataFetchError` (one line naming the
    URL) or :class:`~ddlsched.data.verify.DataIntegrityError`.
    """
    entries = files_of(dataset)
    downloaded = downloaded_bytes = 0
    by_archive: dict[str, list[DataFile]] = {}
    for entry in entries:
        if entry.archive is not None:
            by_archive.setdefault(entry.archive, []).append(entry)
            continue
        destination = root / entry.path
        if _is_valid(destination, entry):
            continue
        destination.parent.mkdir(parents=True, exist_ok=True)
        _download(source_url(entry), entry, destination, progress)
        downloaded += 1
        downloaded_bytes += entry.size
        log.info("fetched %s", entry.path)
    for name, members in by_archive.items():
        missing = [m for m in members if not _is_valid(root / m.path, m)]
        if not missing:
            continue
        archive = ARCHIVES[name]
        archive_path = root / archive.path
        if not _is_valid(archive_path, archive):
            archive_path.parent.mkdir(parents=True, exist_ok=True)
            _download(source_url(archive), archive, archive_path, progress)
            downloaded_bytes += archive.size
        _unpack(archive_path, archive, missing, root)
        downloaded += len(missing)
        log.info("unpacked %d file(s) of %s", len(missing), archive.path)
    return FetchSummary(dataset, len(entries), downloaded, downloaded_bytes, root)


def file_status(entry: DataFile, roots: list[Path]) -> FileStatus:
    """The state of ``entry`` in the first of ``roots`` (lookup order) that holds it."""
    for root in roots:
        path = root / entry.path
        if not path.exists():
            continue
        if not path.is_file():
            return FileStatus(entry, "corrupt", path, "not a regular file")
        try:
            verified_sha256(path, entry)
        except DataIntegrityError as exc:
            return FileStatus(entry, "corrupt", path, f"found {exc.found}")
        return FileStatus(entry, "present", path)
    return FileStatus(entry, "missing", None)
