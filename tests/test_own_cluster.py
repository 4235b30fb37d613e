"""The worked example of docs/instances.md ("Your own cluster"): a tiny trace of one's own
cluster, written here as a Muri-format CSV, becomes an asrpt, a dmlrs and a muri_sim
instance; each is checked and solved by one heuristic through the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[1] / "docs" / "instances.md"
HEADER = (
    "job_id,num_gpu,submit_time,iterations,model_name,batch_size,duration,iteration_time,"
    "resource_time_0,resource_time_1,resource_time_2"
)
MODELS = (("resnet18", 64), ("vgg16", 16), ("bert", 4), ("dqn", 128))


def own_trace(jobs: int = 40) -> str:
    """A small cluster's trace: one job every 45 s, GPUs 1, 2, 4, 8 in turn (times in ms)."""
    rows = [HEADER]
    for j in range(jobs):
        model, batch = MODELS[j % len(MODELS)]
        gpus = (1, 2, 4, 8)[(j // 2) % 4] if j else 1
        iterations = 1200 - 400 * (j % 2) + 10 * j
        iteration_ms = 300 + 100 * (j % 3)
        parts = (iteration_ms // 2, iteration_ms * 3 // 10, iteration_ms // 5)
        rows.append(
            f"{j},{gpus},{45000 * j},{iterations},{model},{batch},{iterations * iteration_ms},"
            f"{iteration_ms},{parts[0]},{parts[1]},{parts[2]}"
        )
    return "\n".join(rows) + "\n"


@pytest.fixture
def trace_csv(tmp_path) -> Path:
    path = tmp_path / "mycluster.csv"
    path.write_text(own_trace())
    return path


def test_the_documented_head_is_the_test_s_trace():
    head = own_trace().splitlines()[:3]
    doc = DOC.read_text()
    assert "\n".join(["$ head -3 mycluster.csv", *head]) in doc, head


def _generate_check_solve(cli, tmp_path, family, method, *sets):
    path = tmp_path / f"{family}.json"
    code, out, err = cli("instance", "generate", family, "--preset", "trace", "-o", path, *sets)
    assert code == 0, err
    code, out, err = cli("instance", "check", path)
    assert (code, out.strip()) == (0, f"{path}: valid {family} instance"), out + err
    code, out, err = cli("solve", family, path, "--method", method, "--json", "--quiet")
    assert code == 0, err
    result = json.loads(out)
    assert result["status"] == "feasible" and result["objective"] > 0, result
    return json.loads(path.read_text()), result


def test_asrpt_instance_of_one_s_own_trace(cli, tmp_path, trace_csv):
    data, _ = _generate_check_solve(
        cli, tmp_path, "asrpt", "asrpt",
        "--set", f"trace={json.dumps(str(trace_csv))}", "--set", "jobs=8", "--set", "servers=4",
    )  # fmt: skip
    assert len(data["jobs"]) == 8  # the last 20 % of 40 jobs: the window of the test split
    assert data["cluster"]["servers"] == 4
    assert data["provenance"]["iterations"] == "the trace's iterations"
    trace_iterations = {int(r.split(",")[3]) for r in own_trace().splitlines()[1:]}
    assert {job["iterations"] for job in data["jobs"]} <= trace_iterations


def test_dmlrs_instance_of_one_s_own_trace(cli, tmp_path, trace_csv):
    data, _ = _generate_check_solve(
        cli, tmp_path, "dmlrs", "fifo",
        "--set", f"trace={json.dumps(str(trace_csv))}",
        "--set", "jobs=20", "--set", "machines=10", "--set", "slots=10",
    )  # fmt: skip
    arrivals = [job["arrival_slot"] for job in data["jobs"]]
    # 20 evenly spaced submissions mapped linearly onto slots 1..10: two per slot, the
    # last on slot 10
    assert sorted(arrivals) == [1 + i // 2 for i in range(19)] + [10]
    assert data["meta"]["trace"] == str(trace_csv)


def test_muri_sim_instance_of_one_s_own_trace(cli, tmp_path, trace_csv):
    data, result = _generate_check_solve(
        cli, tmp_path, "muri_sim", "srtf", "--set", f"trace={json.dumps(str(trace_csv))}"
    )
    assert data["trace"] == str(trace_csv)
    assert result["info"]["jobs"] == 40  # every job of the trace ran


def test_a_broken_trace_is_one_line(cli, tmp_path):
    path = tmp_path / "broken.csv"
    path.write_text(own_trace(3).replace(",vgg16,16,", ",vgg16,sixteen,"))
    code, _, err = cli(
        "instance", "generate", "dmlrs", "--preset", "trace", "-o", tmp_path / "x.json",
        "--set", f"trace={json.dumps(str(path))}", "--set", "jobs=2",
    )  # fmt: skip
    assert code == 2 and err.count("\n") == 1 and "batch_size" in err and str(path) in err
