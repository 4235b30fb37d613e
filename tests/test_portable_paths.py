"""No path of the machine that wrote them in committed reports and samples:
:func:`ddlsched.bench.paths.portable_path`, the verdict's provenance, the sample tools'
manifests, and the committed files under ``benchmarks/`` and ``tests/data/``."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ddlsched.bench.paths import portable_path
from ddlsched.bench.store import read_rows
from ddlsched.cli import main

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "tests" / "data" / "verdict" / "muri-grouping"


@pytest.mark.parametrize(
    ("path", "shown"),
    [
        ("results/quick", "results/quick"),
        ("/scratch/me/runs/paper/asrpt", "runs/paper/asrpt"),
        ("/tmp/cdp/placement", "runs/placement"),
        ("/tmp/cdp/placement-claims.toml", "runs/placement-claims.toml"),
        ("/repo/benchmarks/suites/dmlrs.toml", "benchmarks/suites/dmlrs.toml"),
        ("/repo", "."),
        ("/", "runs"),
        (None, None),
    ],
)
def test_portable_path(path, shown):
    assert portable_path(path, cwd="/repo") == shown


def test_a_verdict_on_an_absolute_directory_names_no_machine_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the sample lies outside the working directory
    out = tmp_path / "verdict"
    claims = ROOT / "benchmarks" / "claims" / "muri.toml"
    argv = ["bench", "verdict", str(SAMPLE), "--claims", str(claims), "--out", str(out)]
    assert main([*argv, "--format", "markdown"]) == 0
    texts = [p.read_text() for p in out.iterdir() if p.suffix in {".md", ".json"}]
    assert texts
    for text in texts:
        assert str(ROOT) not in text and str(tmp_path) not in text
    provenance = json.loads((out / "verdict.json").read_text())["provenance"]
    assert provenance["results"][0]["directory"] == "runs/muri-grouping"
    assert provenance["claims_file"] == "runs/muri.toml"


def test_a_sample_manifest_names_no_machine_path(tmp_path):
    """``benchmarks/claims_sample.py`` copies the source's manifest: its suite file and
    the source directory come out masked."""
    source = tmp_path / "elsewhere" / "muri-grouping"
    shutil.copytree(SAMPLE, source)
    manifest = json.loads((source / "manifest.json").read_text())
    manifest["suite_file"] = str(tmp_path / "suites" / "cut.toml")
    (source / "manifest.json").write_text(json.dumps(manifest))
    out = tmp_path / "sample"
    script = ROOT / "benchmarks" / "claims_sample.py"
    rows = read_rows(source)
    groups = sorted(set(rows.column("group").to_pylist()))
    labels = sorted(set(rows.column("label").to_pylist()))
    proc = subprocess.run(
        [
            sys.executable,
            str(script),
            str(source),
            str(out),
            "--groups",
            *groups,
            "--labels",
            *labels,
        ],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    text = (out / "manifest.json").read_text()
    assert str(tmp_path) not in text
    written = json.loads(text)
    assert written["suite_file"] == "runs/cut.toml"
    assert written["sample_of"]["directory"] == "runs/muri-grouping"


def test_committed_benchmark_files_name_no_machine_path():
    found = subprocess.run(
        [
            "git",
            "grep",
            "-n",
            "-e",
            "/work/",
            "-e",
            "/home/",
            "-e",
            "/tmp/",
            "--",
            "benchmarks",
            "tests/data",
        ],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    if found.returncode not in (0, 1):
        pytest.skip("not a git checkout")
    assert found.stdout == ""
