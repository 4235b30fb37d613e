"""``ddlsched data fetch`` and ``data status`` against a local mirror of the sources (no network).

The mirror is an ``http.server`` on 127.0.0.1 (a free port) serving a temporary directory laid
out as the sources (``OWNER/REPO/COMMIT/PATH``), built from the data directory; the fetch
cache is a temporary ``$XDG_CACHE_HOME``, ``$DDLSCHED_DATA`` is unset and the
``../shared/data`` lookup is switched off (``DDLSCHED_DEV_DATA=0``).
"""

from __future__ import annotations

import functools
import io
import socket
import tarfile
import threading
from collections.abc import Iterator
from dataclasses import replace
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from ddlsched.data import provenance, registry
from ddlsched.data.verify import file_sha256
from ddlsched.datadir import DEV_DATA_ENV, data_dir

SUBSET = ("tiresias", "pipedream")


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


def _serve(directory: Path) -> Iterator[str]:
    handler = functools.partial(_QuietHandler, directory=str(directory))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def _mirror_file(mirror: Path, item: registry.DataFile | registry.Archive, data: bytes) -> None:
    target = mirror / item.repository / item.commit / item.original
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)


@pytest.fixture
def source_data() -> Path:
    root = data_dir()
    if root is None:
        pytest.skip("no data directory to build the mirror from (set DDLSCHED_DATA)")
    return root


@pytest.fixture
def empty_cache(tmp_path, monkeypatch) -> Path:
    """An empty fetch cache, nothing else to read from; returns the cache's data directory."""
    monkeypatch.delenv("DDLSCHED_DATA", raising=False)
    monkeypatch.delenv("DDLSCHED_DATA_VERIFY", raising=False)
    monkeypatch.setenv(DEV_DATA_ENV, "0")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    from ddlsched.datadir import cache_dir, search_roots

    assert search_roots() == []
    return cache_dir()


@pytest.fixture
def mirror(tmp_path, source_data, monkeypatch) -> Iterator[Path]:
    """A mirror of the :data:`SUBSET` data sets, served on 127.0.0.1 (``$DDLSCHED_DATA_URL``)."""
    root = tmp_path / "mirror"
    for name in SUBSET:
        for entry in registry.files_of(name):
            _mirror_file(root, entry, (source_data / entry.path).read_bytes())
    for url in _serve(root):
        monkeypatch.setenv(registry.URL_ENV, url)
        yield root


def test_fetch_fills_an_empty_cache_and_status_says_present(cli, mirror, empty_cache):
    code, out, _ = cli("data", "status", *SUBSET)
    assert code == 1 and "missing" in out and "present" not in out
    code, out, err = cli("data", "fetch", *SUBSET)
    assert (code, err) == (0, "")
    lines = out.strip().splitlines()
    assert [line.split(":")[0] for line in lines] == list(SUBSET)  # one summary line each
    assert "2 files, 2 fetched" in lines[0]
    for name in SUBSET:
        for entry in registry.files_of(name):
            assert file_sha256(empty_cache / entry.path) == entry.sha256
    code, out, _ = cli("data", "status", *SUBSET)
    assert code == 0 and "missing" not in out and "corrupt" not in out
    assert out.count("present") == sum(len(registry.files_of(n)) for n in SUBSET)
    code, out, _ = cli("data", "fetch", "tiresias")  # everything there: nothing downloaded
    assert code == 0 and "nothing to fetch" in out


def test_the_loaders_read_the_cache_and_results_record_it(cli, mirror, empty_cache):
    from ddlsched.workloads.traces import read_tiresias

    assert cli("data", "fetch", "tiresias")[0] == 0
    assert len(read_tiresias().job_id) == 60
    entry = registry.FILES["traces/tiresias/60_job.csv"]
    assert provenance.read_so_far() == {entry.path: entry.sha256}


def test_status_and_the_loader_refuse_a_corrupted_cached_file(cli, mirror, empty_cache):
    assert cli("data", "fetch", "tiresias")[0] == 0
    path = empty_cache / "traces/tiresias/60_job.csv"
    data = bytearray(path.read_bytes())
    data[200] ^= 0x01
    path.write_bytes(bytes(data))
    code, out, _ = cli("data", "status", "tiresias")
    assert code == 1 and "corrupt" in out and file_sha256(path) in out.replace("\n", "")
    code, out, err = cli(
        "instance", "generate", "asrpt", "--preset", "trace", "--set", "trace=tiresias",
        "-o", str(empty_cache / "x.json"),
    )  # fmt: skip
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert (
        "ddlsched data fetch tiresias" in err
        and registry.FILES["traces/tiresias/60_job.csv"].sha256 in err
    )
    assert cli("data", "fetch", "tiresias")[0] == 0  # fetched again over the wrong file
    assert file_sha256(path) == registry.FILES["traces/tiresias/60_job.csv"].sha256


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_an_unreachable_mirror_is_one_line_and_exit_2(cli, empty_cache, monkeypatch):
    monkeypatch.setenv(registry.URL_ENV, f"http://127.0.0.1:{_closed_port()}/")
    code, _, err = cli("data", "fetch", "tiresias")
    url = registry.source_url(registry.FILES["traces/tiresias/60_job.csv"])
    assert code == 2 and err.count("\n") == 1 and url in err and "Traceback" not in err


def test_a_missing_file_on_the_mirror_is_one_line_and_exit_2(cli, mirror, empty_cache):
    entry = registry.FILES["traces/tiresias/60_job.csv"]
    (mirror / entry.repository / entry.commit / entry.original).unlink()
    code, _, err = cli("data", "fetch", "tiresias")
    assert code == 2 and err.count("\n") == 1 and "HTTP 404" in err
    assert registry.source_url(entry) in err


def test_a_mirror_serving_another_file_is_refused(cli, mirror, empty_cache):
    entry = registry.FILES["traces/tiresias/LICENSE"]
    (mirror / entry.repository / entry.commit / entry.original).write_text("not the license\n")
    code, _, err = cli("data", "fetch", "tiresias")
    assert code == 2 and err.count("\n") == 1 and entry.sha256 in err
    assert not (empty_cache / entry.path).exists()


def test_an_archive_is_checked_then_unpacked_and_each_file_checked(
    cli, tmp_path, source_data, empty_cache, monkeypatch
):
    """The ITP traces come from one archive: here an archive of two of them, registered
    under its own hash (the source's archive cannot be rebuilt byte for byte)."""
    members = ["traces/itp/raw-traces/cluster10.csv", "traces/itp/raw-traces/LICENSE"]
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for rel in members:
            tar.add(source_data / rel, arcname=Path(rel).name)
    payload = buffer.getvalue()
    import hashlib

    archive = replace(
        registry.ARCHIVES["traces/itp/raw-traces.tar.gz"],
        sha256=hashlib.sha256(payload).hexdigest(),
        size=len(payload),
    )
    files = {
        path: entry
        for path, entry in registry.FILES.items()
        if entry.dataset != "itp" or path in members
    }
    monkeypatch.setattr(registry, "ARCHIVES", {archive.path: archive})
    monkeypatch.setattr(registry, "FILES", files)
    from ddlsched.data import fetch

    monkeypatch.setattr(fetch, "ARCHIVES", {archive.path: archive})
    mirror = tmp_path / "mirror"
    _mirror_file(mirror, archive, payload)
    for url in _serve(mirror):
        monkeypatch.setenv(registry.URL_ENV, url)
        code, out, err = cli("data", "fetch", "itp")
        assert (code, err) == (0, ""), err
        assert "itp: 2 files, 2 fetched" in out
        for rel in members:
            assert file_sha256(empty_cache / rel) == registry.FILES[rel].sha256
        assert (empty_cache / archive.path).is_file()
        # a wrong member (the archive is right): refused after unpacking, nothing kept
        (empty_cache / members[0]).unlink()
        monkeypatch.setitem(files, members[0], replace(files[members[0]], sha256="0" * 64))
        code, _, err = cli("data", "fetch", "itp")
        assert code == 2 and "0" * 64 in err and err.count("\n") == 1
        assert not (empty_cache / members[0]).exists()
