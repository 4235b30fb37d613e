"""`ddlsched simulate muri`: bad knobs, seeds and trace files are one-line errors (exit 2)."""

from __future__ import annotations

import pytest

from ddlsched.cli import main
from ddlsched.datadir import data_dir

HEADER = (
    "job_id,num_gpu,submit_time,iterations,model_name,batch_size,duration,interval,"
    "iteration_time,resource_time_0,resource_time_1,resource_time_2,priority\n"
)
GOOD = "1,1,0,100,resnet18,64,1000,0,10.0,1.0,5.0,4.0,0\n"

pytestmark = pytest.mark.skipif(data_dir() is None, reason="shared data directory absent")


@pytest.mark.parametrize(
    "extra",
    [
        ["--set", "mode=paper"],
        ["--set", "interference=5"],
        ["--set", 'interference=[1,"x",3]'],
        ["--set", "tiresias_thresholds=[1]"],
        ["--set", "solo_slowdown=null"],
        ["--set", "antman_util_cap=x"],
        ["--set", "round_s=Infinity"],
        ["--set", "packing_num=6"],
        ["--set", "bogus=1"],
        ["--set", "round_s=1e20"],
        ["--set", 'blossom="false"'],
        ["--set", "matching=fast"],
    ],
)
def test_bad_knobs(capsys, extra):
    code = main(
        ["simulate", "muri", "--trace", "trace3", "--limit", "20", "--policy", "antman", *extra]
    )
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and err.startswith("ddlsched: error:")


@pytest.mark.parametrize(
    "row",
    [
        "1,1,0,100,resnet18,64,1000,0,nan,1.0,5.0,4.0,0\n",
        "1,1,0,100,resnet18,64,1000,0,inf,1.0,5.0,4.0,0\n",
        "1,1,0,100\n",
        "1,1,0,100,resnet18,64,1000,0,10.0,-1.0,5.0,4.0,0\n",
        "1,1,0,100,resnet18,64,1000,0,10.0,1.0,5.0,4.0,5\n",
        "1,1,0,100,resnet18,64,1000,0,10.0,1.0,0.0,0.0,0\n",
    ],
)
def test_bad_trace_rows(tmp_path, capsys, row):
    path = tmp_path / "t.csv"
    path.write_text(HEADER + GOOD + row)
    code = main(["simulate", "muri", "--trace", str(path), "--policy", "antman"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err


def test_binary_trace_and_negative_seed(tmp_path, capsys):
    path = tmp_path / "b.csv"
    path.write_bytes(b"\xff\xfe\x00\x81garbage")
    assert main(["simulate", "muri", "--trace", str(path), "--policy", "srtf"]) == 2
    assert main(["simulate", "muri", "--trace", "philly", "--seed", "-1", "--policy", "srtf"]) == 2
    assert capsys.readouterr().err.count("\n") == 2
