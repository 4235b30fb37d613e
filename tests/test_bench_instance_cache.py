"""The instance cache: each generated instance built once per results directory.

A cache hit calls no generator (counted), a changed seed, parameter or version
misses, a corrupt or truncated file is rebuilt, rows are the same with and
without the cache, a resumed run builds nothing the first one built, and every
family's instance round-trips exactly through the cache's JSON.
"""

from __future__ import annotations

import dataclasses
import json
import textwrap
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from ddlsched import __version__, registry
from ddlsched.bench import instance_cache
from ddlsched.bench.fingerprint import instance_fingerprint
from ddlsched.bench.runner import run_suite
from ddlsched.bench.store import read_rows
from ddlsched.bench.suite import load_suite
from ddlsched.bench.tasks import InstanceSpec, Task, build_instance, execute, expand

SUITE = """
[suite]
name = "cached"
reference = "exact"
[limits]
time_limit_s = 5
[[instances]]
family = "rar"
preset = "small"
seeds = [0, 1, 2]
[[methods]]
name = "sjf_bco"
[[methods]]
name = "ff"
[[methods]]
name = "exact"
"""


@pytest.fixture
def generated(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """Every call of the rar generator in this process, as ``(preset, seed)``."""
    calls: list[tuple[str, int]] = []
    fam = registry.get_family("rar")
    original = fam.generate

    def counting(preset: str, seed: int, **params: Any) -> Any:
        calls.append((preset, seed))
        return original(preset, seed, **params)

    monkeypatch.setitem(registry._FAMILIES, "rar", dataclasses.replace(fam, generate=counting))
    build_instance.cache_clear()
    yield calls
    build_instance.cache_clear()


class InProcess:
    """An executor that runs each task in this process (so that generator calls count)."""

    name = "inprocess"
    workers = 1

    def run(self, tasks: Sequence[Task], stop: threading.Event) -> Iterator[dict[str, Any]]:
        for task in tasks:
            if stop.is_set():
                return
            yield execute(task)

    def close(self) -> None:
        pass


def suite_file(tmp_path: Path, text: str = SUITE) -> Path:
    path = tmp_path / "suite.toml"
    path.write_text(textwrap.dedent(text))
    return path


def spec(seed: int, cache_dir: Path | None, **params: Any) -> InstanceSpec:
    return InstanceSpec(
        family="rar",
        group="small",
        instance_id=f"small/s{seed}",
        preset="small",
        seed=seed,
        params_json=json.dumps(params, sort_keys=True),
        cache_dir=str(cache_dir) if cache_dir else None,
    )


def cache_files(out: Path) -> list[Path]:
    return sorted((out / instance_cache.CACHE_DIRNAME).glob("*.json"))


def test_second_validate_builds_nothing(tmp_path, generated):
    path, out = suite_file(tmp_path), tmp_path / "out"
    first = load_suite(path, cache=True, out=out)
    assert sorted(generated) == [("small", 0), ("small", 1), ("small", 2)]
    assert (first.checked.instances_checked, first.checked.instances_cached) == (3, 0)
    assert len(cache_files(out)) == 3
    generated.clear()
    second = load_suite(path, cache=True, out=out)
    assert generated == []
    assert (second.checked.instances_checked, second.checked.instances_cached) == (3, 3)


def test_without_cache_every_check_builds(tmp_path, generated):
    path = suite_file(tmp_path)
    load_suite(path, out=tmp_path / "out")
    load_suite(path, out=tmp_path / "out")
    assert len(generated) == 6
    assert not (tmp_path / "out").exists()


def test_worker_reads_the_cached_instance(tmp_path, generated):
    cache = tmp_path / "instances"
    cache.mkdir()  # as run_suite does: workers make no folder
    built = build_instance(spec(4, cache))
    assert generated == [("small", 4)]
    build_instance.cache_clear()  # a fresh worker process
    generated.clear()
    loaded = build_instance(spec(4, cache))
    assert generated == []
    assert loaded == built and loaded is not built


def test_changed_seed_parameter_or_generator_code_misses(tmp_path, generated):
    cache = tmp_path / "instances"
    cache.mkdir()  # as run_suite does: workers make no folder
    build_instance(spec(1, cache))
    base = spec(1, cache)
    recipe = base.recipe()
    code = instance_fingerprint(base.family)
    assert instance_cache.verify(cache, base.key(code), recipe, code)
    for other in (spec(2, cache), spec(1, cache, num_jobs=5)):
        assert other.key(code) != base.key(code)
        assert not instance_cache.verify(cache, other.key(code), other.recipe(), code)
    # another generator's code: another key, and a file of the old code is not trusted
    assert base.key("edited-generator") != base.key(code)
    assert not instance_cache.verify(cache, base.key(code), recipe, "edited-generator")
    # a file under the right name whose header names another instance is not trusted
    other = spec(2, cache)
    build_instance(other)
    instance_cache.cache_path(cache, other.key(code)).replace(
        instance_cache.cache_path(cache, base.key(code))
    )
    assert not instance_cache.verify(cache, base.key(code), recipe, code)


@pytest.mark.parametrize(
    "damage",
    [
        lambda raw: raw[: len(raw) // 2],  # truncated
        lambda raw: raw[:-40] + bytes([raw[-40] ^ 1]) + raw[-39:],  # one byte changed
        lambda raw: b"",  # empty
        lambda raw: raw.replace(b'"header": {', b'"header": [', 1),  # header not parseable
    ],
    ids=["truncated", "byte-changed", "empty", "bad-header"],
)
def test_corrupt_file_is_rebuilt(tmp_path, generated, damage):
    cache = tmp_path / "instances"
    cache.mkdir()  # as run_suite does: workers make no folder
    first = build_instance(spec(3, cache))
    path = instance_cache.cache_path(cache, spec(3, cache).key(instance_fingerprint("rar")))
    sound = path.read_bytes()
    path.write_bytes(damage(sound))
    build_instance.cache_clear()
    generated.clear()
    again = build_instance(spec(3, cache))
    assert generated == [("small", 3)]  # rebuilt, not read
    assert again == first
    assert path.read_bytes() == sound  # and written back whole


def test_validate_rebuilds_a_corrupt_file(tmp_path, generated):
    path, out = suite_file(tmp_path), tmp_path / "out"
    load_suite(path, cache=True, out=out)
    victim = cache_files(out)[0]
    victim.write_bytes(victim.read_bytes()[:100])
    generated.clear()
    report = load_suite(path, cache=True, out=out).checked
    assert len(generated) == 1
    assert report.instances_cached == 2


def test_rows_same_with_and_without_cache(tmp_path, generated):
    suite = load_suite(suite_file(tmp_path))
    plain = run_suite(suite, tmp_path / "plain", executor=InProcess(), instance_cache=False)
    cached = run_suite(suite, tmp_path / "cached", executor=InProcess())
    assert plain.done == cached.done == len(expand(suite))
    assert not (tmp_path / "plain" / instance_cache.CACHE_DIRNAME).exists()
    fields = ("key", "status", "objective", "bound", "instance_size", "instance_key")

    def rows(directory: Path) -> list[tuple]:
        return sorted(tuple(r[f] for f in fields) for r in read_rows(directory).to_pylist())

    assert rows(tmp_path / "plain") == rows(tmp_path / "cached")


def test_resumed_run_builds_nothing_built_before(tmp_path, generated):
    path, out = suite_file(tmp_path), tmp_path / "out"
    suite = load_suite(path, cache=True, out=out, instance_budget_s=0)  # the check builds none
    assert generated == []
    first = run_suite(suite, out, executor=InProcess(), limit=4)  # instances 0 and 1
    assert first.done == 4
    built_first = sorted(generated)
    assert built_first == [("small", 0), ("small", 1)]
    build_instance.cache_clear()  # the resumed run's workers are new processes
    generated.clear()
    suite = load_suite(path, cache=True, out=out)
    second = run_suite(suite, out, executor=InProcess())
    assert second.skipped == 4 and second.done == 5
    assert generated == [("small", 2)]  # only the instance the first run never built


def test_stale_cache_temp_file_removed_by_next_run(tmp_path):
    out = tmp_path / "out"
    cache = out / instance_cache.CACHE_DIRNAME
    cache.mkdir(parents=True)
    stale = cache / f".{'a' * 32}.json.{'b' * 32}.tmp"
    stale.write_bytes(b"partial")
    foreign = cache / "notes.tmp"
    foreign.write_bytes(b"mine")
    run_suite(load_suite(suite_file(tmp_path)), out, executor=InProcess(), limit=1)
    assert not stale.exists() and foreign.exists()


def test_missing_or_unwritable_cache_is_not_an_error(tmp_path, generated):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    assert build_instance(spec(5, blocker / "instances")) is not None
    assert build_instance(spec(6, tmp_path / "absent")) is not None  # a remote Dask worker
    assert generated == [("small", 5), ("small", 6)]
    assert not (tmp_path / "absent").exists()


@pytest.mark.parametrize("family", [f.name for f in registry.families(include_internal=True)])
def test_every_family_round_trips_through_the_cache(tmp_path, family):
    """A cached instance equals the generated one (so methods see the same instance)."""
    fam = registry.get_family(family)
    preset, params = fam.smoke
    instance = fam.generate(preset, 0, **params)
    recipe = {"family": family, "preset": preset, "seed": 0, "params": dict(params)}
    assert instance_cache.store(tmp_path, "k" * 32, recipe, __version__, instance)
    loaded = instance_cache.load(tmp_path, "k" * 32, recipe, __version__, fam.from_dict)
    assert loaded == instance
    assert json.loads(instance_cache.cache_path(tmp_path, "k" * 32).read_text())["header"][
        "key"
    ] == ("k" * 32)


def test_check_hook_runs_on_a_cached_instance(tmp_path, generated, monkeypatch):
    """A family's ``check_instance`` (a trace a method will read) is run on every
    validate, on the instance read back from the cache, without building it."""
    checked: list[Any] = []
    fam = registry.get_family("rar")  # the counting generator of ``generated``
    monkeypatch.setitem(
        registry._FAMILIES, "rar", dataclasses.replace(fam, check_instance=checked.append)
    )
    path, out = suite_file(tmp_path), tmp_path / "out"
    first = load_suite(path, cache=True, out=out)
    assert len(generated) == 3 and len(checked) == 3 and first.checked.instances_cached == 0
    generated.clear()
    second = load_suite(path, cache=True, out=out)
    assert generated == [] and len(checked) == 6 and second.checked.instances_cached == 3
    assert checked[3:] == checked[:3]  # the same instances, read back


def test_bench_validate_builds_every_instance_with_the_cache(
    tmp_path, generated, monkeypatch, capsys
):
    """``bench validate`` ignores the check budget when it has the cache (nothing built is
    lost); ``--budget 0`` and ``--no-cache`` keep a budget; a bad budget is one line."""
    from ddlsched.cli import main

    monkeypatch.delenv("DDLSCHED_CHECK_BUDGET_S", raising=False)
    monkeypatch.setattr(
        "ddlsched.bench.check.DEFAULT_BUDGET_S", 0.0
    )  # a budget that builds nothing
    path, out = suite_file(tmp_path), tmp_path / "out"
    assert main(["bench", "validate", str(path), "--out", str(out), "--no-cache"]) == 0
    assert generated == []  # the budget (0 s here) applies without the cache
    assert main(["bench", "validate", str(path), "--out", str(out), "--budget", "0"]) == 0
    assert generated == [] and "none of 3 built" in capsys.readouterr().out
    assert main(["bench", "validate", str(path), "--out", str(out)]) == 0
    assert len(generated) == 3 and len(cache_files(out)) == 3
    assert "0 of 3 checked instance(s) read from it" in capsys.readouterr().out
    assert main(["bench", "validate", str(path), "--out", str(out), "--budget", "all"]) == 0
    assert len(generated) == 3
    assert "3 of 3 checked instance(s) read from it" in capsys.readouterr().out
    assert main(["bench", "validate", str(path), "--budget", "-1"]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        "ddlsched: error: argument --budget: expected a budget in seconds (or 'all'), "
        "finite and >= 0, got '-1'"
    ]
