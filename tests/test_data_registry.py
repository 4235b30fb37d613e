"""The data registry: its hashes match the data directory, its URLs follow the mirror
variable, and the loaders check and record every registered file they read."""

from __future__ import annotations

from pathlib import Path

import pytest

from ddlsched.data import provenance
from ddlsched.data.registry import (
    ARCHIVES,
    DATASETS,
    FILES,
    URL_ENV,
    dataset_names,
    files_of,
    source_url,
)
from ddlsched.data.verify import DataIntegrityError, file_sha256
from ddlsched.datadir import DEV_DATA_ENV, data_dir

SRC = Path(__file__).resolve().parents[1] / "src" / "ddlsched"


def test_registry_hashes_match_the_data_directory():
    root = data_dir()
    if root is None:
        pytest.skip("no data directory (set DDLSCHED_DATA, or run 'ddlsched data fetch')")
    wrong = []
    for entry in FILES.values():
        path = root / entry.path
        if not path.is_file():
            wrong.append(f"{entry.path}: absent")
        elif path.stat().st_size != entry.size or file_sha256(path) != entry.sha256:
            wrong.append(f"{entry.path}: sha256 {file_sha256(path)}, {path.stat().st_size} B")
    assert not wrong


def test_every_dataset_has_files_a_license_and_pinned_commits():
    assert dataset_names() == list(DATASETS)
    for name in DATASETS:
        entries = files_of(name)
        assert any(Path(e.path).name.startswith("LICENSE") for e in entries), name
        assert len(entries) >= 2, name
    for item in [*FILES.values(), *ARCHIVES.values()]:
        assert len(item.commit) == 40 and int(item.commit, 16) >= 0, item.path
        assert len(item.sha256) == 64 and int(item.sha256, 16) >= 0, item.path
        assert item.size > 0 and item.dataset in DATASETS
    for entry in FILES.values():
        assert entry.archive is None or entry.archive in ARCHIVES


def test_urls_follow_the_mirror_variable(monkeypatch):
    entry = FILES["traces/tiresias/60_job.csv"]
    monkeypatch.setenv(URL_ENV, "http://127.0.0.1:9/mirror")
    assert source_url(entry) == (
        f"http://127.0.0.1:9/mirror/SymbioticLab/Tiresias/{entry.commit}/simulator/60_job.csv"
    )
    member = FILES["traces/itp/raw-traces/cluster01.csv"]
    assert source_url(member).endswith("/data/raw-traces.tar.gz")  # fetched as its archive
    monkeypatch.delenv(URL_ENV)
    assert source_url(entry).startswith("https://") and "127.0.0.1" not in source_url(entry)


def test_only_the_registry_names_the_sources_host():
    hosts = ("githubusercontent.", "github.com")
    named = [
        str(path.relative_to(SRC))
        for path in SRC.rglob("*.py")
        if any(host in path.read_text(encoding="utf-8").lower() for host in hosts)
    ]
    assert named == ["data/registry.py"]


def _data_root(tmp_path: Path, monkeypatch, *paths: str) -> Path:
    """A data directory (``$DDLSCHED_DATA``) holding copies of ``paths`` of the real one."""
    source = data_dir()
    if source is None:
        pytest.skip("no data directory (set DDLSCHED_DATA, or run 'ddlsched data fetch')")
    root = tmp_path / "data"
    for rel in paths:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes((source / rel).read_bytes())
    monkeypatch.setenv("DDLSCHED_DATA", str(root))
    monkeypatch.delenv("DDLSCHED_DATA_VERIFY", raising=False)
    return root


def _flip_byte(path: Path, offset: int = 100) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x01
    path.write_bytes(bytes(data))


def test_a_corrupted_trace_is_refused_by_its_loader_in_one_line(tmp_path, monkeypatch):
    from ddlsched.workloads.traces import read_tiresias

    root = _data_root(tmp_path, monkeypatch, "traces/tiresias/60_job.csv")
    path = root / "traces/tiresias/60_job.csv"
    _flip_byte(path)
    with pytest.raises(DataIntegrityError) as info:
        read_tiresias()
    message = str(info.value)
    expected = FILES["traces/tiresias/60_job.csv"].sha256
    assert "\n" not in message
    assert str(path) in message and expected in message
    assert file_sha256(path) in message
    assert "ddlsched data fetch tiresias" in message
    assert provenance.read_so_far() == {}  # nothing recorded for a refused file


def test_a_file_of_another_size_is_refused_without_hashing(tmp_path, monkeypatch):
    from ddlsched.workloads.profiles.pipedream import load_pipedream

    root = _data_root(tmp_path, monkeypatch, "profiles/pipedream/alexnet/graph.txt")
    path = root / "profiles/pipedream/alexnet/graph.txt"
    path.write_bytes(path.read_bytes() + b"\n")
    with pytest.raises(DataIntegrityError, match=r"bytes, not 4093 .*data fetch pipedream"):
        load_pipedream("alexnet")


def test_the_check_can_be_turned_off_for_an_edited_copy(tmp_path, monkeypatch):
    from ddlsched.workloads.traces import read_tiresias

    root = _data_root(tmp_path, monkeypatch, "traces/tiresias/60_job.csv")
    path = root / "traces/tiresias/60_job.csv"
    path.write_text(path.read_text().replace("\n", "\r\n"))  # the same rows, other bytes
    monkeypatch.setenv("DDLSCHED_DATA_VERIFY", "0")
    assert len(read_tiresias().submit_s) == 60
    assert provenance.read_so_far() == {}  # an unchecked file is not recorded


def test_an_edited_file_is_checked_again(tmp_path, monkeypatch):
    from ddlsched.workloads.traces import read_tiresias

    root = _data_root(tmp_path, monkeypatch, "traces/tiresias/60_job.csv")
    read_tiresias()  # checked, and the answer kept for this (path, mtime, size)
    _flip_byte(root / "traces/tiresias/60_job.csv")
    with pytest.raises(DataIntegrityError):
        read_tiresias()


def test_results_record_the_hashes_of_the_data_they_read(tmp_path, monkeypatch, solve):
    from ddlsched.workloads.profiles.pipedream import load_pipedream

    _data_root(tmp_path, monkeypatch, "profiles/pipedream/alexnet/graph.txt")
    load_pipedream("alexnet")
    expected = {
        "profiles/pipedream/alexnet/graph.txt": FILES["profiles/pipedream/alexnet/graph.txt"].sha256
    }
    assert provenance.read_so_far() == expected
    from ddlsched.registry import get_family

    fam = get_family("debug")
    result = solve("debug", "noop", fam.generate(fam.presets[0], 0))
    assert result.info["data_sha256"] == expected
    assert result.to_dict()["info"]["data_sha256"] == expected


def test_the_development_data_can_be_switched_off(tmp_path, monkeypatch):
    from ddlsched.datadir import data_file, search_roots

    monkeypatch.delenv("DDLSCHED_DATA", raising=False)
    monkeypatch.setenv(DEV_DATA_ENV, "0")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert search_roots() == []
    with pytest.raises(Exception, match=r"ddlsched data fetch muri") as info:
        data_file("traces", "muri", "trace1.csv")
    assert "\n" not in str(info.value)
