"""Workloads of family ``asrpt``: trace readers, PAI loader, model pool, predictors, presets.

Spec ``docs/families/asrpt.md`` ("Presets, generators and data").
Most tests run on small synthetic traces written to ``tmp_path`` (a
Muri-format CSV whose only model is ``gpt2``, mapped onto the analytic
GPT-6.7B, so no data file is needed; PAI tables); the tests on the real
traces skip when the data directory is absent. No test trains the forest
on the whole Philly split (that is the benchmark's job).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from ddlsched.datadir import data_dir
from ddlsched.errors import DdlschedError, InvalidInstanceError
from ddlsched.heuristics.asrpt_config import config_constants
from ddlsched.problems.asrpt import AsrptInstance, prediction_error
from ddlsched.workloads.asrpt import generate
from ddlsched.workloads.asrpt_predict import fit, oracle_predictions
from ddlsched.workloads.pai import read_pai
from ddlsched.workloads.traces import read_muri, read_philly

needs_data = pytest.mark.skipif(data_dir() is None, reason="shared data directory absent")

MURI_HEADER = (
    "job_id,num_gpu,submit_time,iterations,model_name,batch_size,duration,interval,"
    "iteration_time,resource_time_0,resource_time_1,resource_time_2,priority"
)


def alpha_min_of(cluster, config):
    """What the family wiring injects: Heavy-Edge's alpha~_min."""
    return config_constants(cluster, config).alpha_min_s


def write_muri(path, num_jobs=60, seed=0, unseen=True, change=None):
    """A synthetic Muri-format trace of gpt2 jobs (groups: batch size x GPUs).

    ``unseen``: the last two jobs (test split) form a group absent from the
    training split. ``change = (row, iterations)`` overrides one row.
    """
    rng = np.random.default_rng(seed)
    lines = [MURI_HEADER]
    for i in range(num_jobs):
        gpus = int(rng.choice([1, 2, 4]))
        batch = int(rng.choice([4, 8]))
        iters = int(rng.integers(100, 5000))
        if unseen and i >= num_jobs - 2:
            gpus, batch = 2, 16
        if change is not None and change[0] == i:
            iters = change[1]
        submit_ms = 1000 * (7 * i + int(rng.integers(0, 5)))
        lines.append(
            f"{i},{gpus},{submit_ms},{iters},gpt2,{batch},{iters * 400},1000,400,0.5,300,99,0"
        )
    path.write_text("\n".join(lines) + "\n")
    return path


def muri_instance(path, seed=0, **params):
    params.setdefault("jobs", "all")
    params.setdefault("start", 0)
    return generate("trace", seed, trace=str(path), alpha_min_of=alpha_min_of, **params)


def round_trip(instance: AsrptInstance) -> None:
    data = instance.to_dict()
    back = AsrptInstance.from_dict(json.loads(json.dumps(data)))
    assert back.to_dict() == data


# --------------------------------------------------------------------------- predictors


def test_fit_same_seed_same_predictions_and_unseen_groups_get_zero():
    rng = np.random.default_rng(1)
    model = rng.choice(["a", "b", "c"], size=200).astype(object)
    gpus = rng.choice([1, 2, 4], size=200)
    groups = [f"{m}/{g}" for m, g in zip(model, gpus, strict=True)]
    target = rng.integers(1, 1000, size=200).astype(float)
    feats = {"model": model, "gpus": gpus}
    test_feats = {"model": np.array(["a", "z"], dtype=object), "gpus": np.array([2, 2])}
    for kind in ("rf", "mean", "median"):
        a = fit(kind, feats, ("model", "gpus"), ("model",), groups, target, seed=3)
        b = fit(kind, feats, ("model", "gpus"), ("model",), groups, target, seed=3)
        pa = a.predict(test_feats, ["a/2", "z/2"])
        assert np.array_equal(pa, b.predict(test_feats, ["a/2", "z/2"]))
        assert pa[0] > 0 and pa[1] == 0.0  # "z/2" is unseen
    mean = fit("mean", feats, ("model", "gpus"), ("model",), groups, target, seed=0)
    in_group = np.array([g == "a/2" for g in groups])
    assert mean.predict(test_feats, ["a/2", "z/2"])[0] == pytest.approx(target[in_group].mean())
    median = fit("median", feats, ("model", "gpus"), ("model",), groups, target, seed=0)
    assert median.predict(test_feats, ["a/2", "z/2"])[0] == np.median(target[in_group])
    # categorical codes follow first appearance in the training split
    assert list(a.categories["model"]) == list(dict.fromkeys(model))


def test_oracles():
    n = np.array([10, 20, 30])
    assert np.array_equal(oracle_predictions("perfect", n), n)
    one = oracle_predictions("noisy", n, sigma=0.3, rng=np.random.default_rng(5))
    two = oracle_predictions("noisy", n, sigma=0.3, rng=np.random.default_rng(5))
    assert np.array_equal(one, two) and not np.array_equal(one, n)
    assert np.allclose(oracle_predictions("noisy", n, sigma=0.0, rng=np.random.default_rng(0)), n)


def test_preset_same_seed_same_instance(tmp_path):
    path = write_muri(tmp_path / "t.csv")
    for predictor in ("rf", "noisy"):
        a = muri_instance(path, seed=4, predictor=predictor, jobs=None, start=None)
        b = muri_instance(path, seed=4, predictor=predictor, jobs=None, start=None)
        assert a.to_dict() == b.to_dict()


def test_unseen_groups_get_zero(tmp_path):
    path = write_muri(tmp_path / "t.csv")
    for predictor in ("rf", "mean", "median"):
        inst = muri_instance(path, predictor=predictor)
        unseen = [job for job in inst.jobs if job.group == "gpt2/16/2"]
        assert len(unseen) == 2
        assert all(job.predicted_iterations == 0.0 for job in unseen)
        assert all(job.predicted_iterations > 0 for job in inst.jobs if job not in unseen)
        assert inst.provenance["groups"]["unseen"] == 1
        assert inst.provenance["prediction_error"]["unseen_share"] == pytest.approx(
            2 / inst.num_jobs
        )


def test_perfect_predictions_have_zero_error(tmp_path):
    inst = muri_instance(write_muri(tmp_path / "t.csv"), predictor="perfect")
    assert prediction_error(inst)["epsilon_bar"] == 0.0
    assert inst.provenance["prediction_error"]["epsilon_bar"] == 0.0
    assert all(job.predicted_iterations == job.iterations for job in inst.jobs)


def test_no_leakage_from_window_iterations(tmp_path):
    """Changing a window job's true iterations changes no prediction; changing a
    training job's does (so the test can see a leak)."""
    base = write_muri(tmp_path / "a.csv")
    window_job = write_muri(tmp_path / "b.csv", change=(50, 99_999))  # row 50: test split
    train_job = write_muri(tmp_path / "c.csv", change=(3, 99_999))  # row 3: training split
    for predictor in ("rf", "mean", "median"):
        a = muri_instance(base, predictor=predictor)
        b = muri_instance(window_job, predictor=predictor)
        c = muri_instance(train_job, predictor=predictor)
        assert a.provenance["window"] == [48, 60]
        assert [j.iterations for j in a.jobs] != [j.iterations for j in b.jobs]
        assert [j.predicted_iterations for j in a.jobs] == [j.predicted_iterations for j in b.jobs]
        if predictor != "median":  # one training value may leave a median unchanged
            assert [j.predicted_iterations for j in a.jobs] != [
                j.predicted_iterations for j in c.jobs
            ]


# --------------------------------------------------------------------------- presets


def test_trace_window_provenance_and_json_round_trip(tmp_path):
    path = write_muri(tmp_path / "t.csv")
    inst = muri_instance(path, jobs=5, start=2, predictor="noisy", sigma=0.4)
    prov = inst.provenance
    assert prov["split"] == {"train": [0, 48], "test": [48, 60]}
    assert prov["window"] == [50, 55] and prov["predictor"] == "noisy" and prov["sigma"] == 0.4
    assert prov["seed"] == 0 and prov["model_map"] == {"gpt2": "gpt_6.7b"}
    assert set(prov["prediction_error"]) >= {"epsilon_bar", "unseen_share", "error_exact"}
    assert inst.jobs[0].arrival_s == 0.0
    assert [j.id for j in inst.jobs] == [f"j{k}" for k in range(50, 55)]
    assert all(j.features["model"] == "gpt2" and j.model == "gpt_6.7b" for j in inst.jobs)
    assert inst.cluster.servers == 250 and inst.cluster.b_inter == 10e9 / 8
    assert all("cut to 3 transformer blocks" in c.description for c in inst.configs.values())
    round_trip(inst)
    file = tmp_path / "inst.json"
    inst.save(file)
    assert AsrptInstance.load(file).to_dict() == inst.to_dict()


def test_window_from_all_flags_in_sample_predictions(tmp_path):
    inst = muri_instance(write_muri(tmp_path / "t.csv"), window_from="all")
    assert inst.num_jobs == 60 and inst.provenance["window"] == [0, 60]
    assert inst.provenance["in_sample_share"] == pytest.approx(0.8)
    assert "in-sample" in inst.provenance["in_sample_note"]


def test_single_gpu_share_sweep_and_nic_sweep(tmp_path):
    path = write_muri(tmp_path / "t.csv", num_jobs=200, unseen=False)
    plain = muri_instance(path, jobs=40, start=0)
    ones = muri_instance(path, jobs=40, start=0, single_gpu_share=1.0)
    assert all(ones.gpus(j) == 1 for j in ones.jobs)
    none = muri_instance(path, jobs=40, start=0, single_gpu_share=0.0)
    assert all(none.gpus(j) > 1 for j in none.jobs)
    singles = {
        p: {
            j.id
            for j in muri_instance(path, jobs=40, start=0, single_gpu_share=p).jobs
            if j.features["gpus"] == 1
        }
        for p in (0.3, 0.7)
    }
    assert singles[0.3] <= singles[0.7]
    # Muri keeps the trace's iterations under the sweep
    assert [j.iterations for j in none.jobs] == [j.iterations for j in plain.jobs]
    assert all(j.group.endswith(f"/{none.gpus(j)}") for j in none.jobs)
    slow = muri_instance(path, jobs=40, start=0, single_gpu_share=0.0, nic_gbps=1)
    assert slow.cluster.b_inter == pytest.approx(1e9 / 8)
    assert [(j.iterations, j.predicted_iterations, j.config) for j in slow.jobs] == [
        (j.iterations, j.predicted_iterations, j.config) for j in none.jobs
    ]


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"sigma": -0.1}, "sigma"),
        ({"single_gpu_share": 1.5}, "single_gpu_share"),
        ({"single_gpu_share": -0.5}, "single_gpu_share"),
        ({"jobs": 13}, "larger than the test split"),
        ({"jobs": 0}, "jobs"),
        ({"start": 12, "jobs": 1}, "beyond the test split"),
        ({"start": 10, "jobs": 5}, "goes beyond the test split"),
        ({"nic_gbps": 0}, "nic_gbps"),
        ({"servers": 0}, "servers"),
        ({"gpus_per_server": -1}, "gpus_per_server"),
        ({"predictor": "oracle"}, "predictor"),
        ({"window_from": "train"}, "window_from"),
        ({"delay": 1.0}, "method parameter"),
        ({"servers": 1, "gpus_per_server": 1}, "needs [24] GPUs, the cluster has 1"),
        ({"colour": 1}, "has no parameter"),
    ],
)
def test_parameter_errors(tmp_path, params, message):
    path = write_muri(tmp_path / "t.csv")
    params = {"jobs": 5, "start": 0, **params}
    with pytest.raises(InvalidInstanceError, match=message) as info:
        generate("trace", 0, trace=str(path), alpha_min_of=alpha_min_of, **params)
    assert "\n" not in str(info.value)


def test_unknown_trace_missing_alpha_and_missing_data(tmp_path, monkeypatch):
    with pytest.raises(InvalidInstanceError, match="unknown trace 'sparkle'"):
        generate("trace", 0, trace="sparkle", alpha_min_of=alpha_min_of)
    with pytest.raises(InvalidInstanceError, match="unknown ITP cluster"):
        generate("trace", 0, trace="itp:cluster99", alpha_min_of=alpha_min_of)
    with pytest.raises(InvalidInstanceError, match="alpha_min_of"):
        generate("trace", 0, trace=str(write_muri(tmp_path / "t.csv")))
    monkeypatch.setenv("DDLSCHED_DATA", str(tmp_path / "absent"))
    with pytest.raises(DdlschedError, match="DDLSCHED_DATA") as info:
        generate("trace", 0, trace="philly", alpha_min_of=alpha_min_of)
    assert "\n" not in str(info.value)


# --------------------------------------------------------------------------- readers


def test_malformed_rows_name_file_and_line(tmp_path):
    path = write_muri(tmp_path / "t.csv", num_jobs=5)
    lines = path.read_text().splitlines()
    fields = lines[3].split(",")
    fields[3] = "many"  # iterations
    lines[3] = ",".join(fields)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(
        InvalidInstanceError, match=r"t\.csv, line 4: malformed row \(column iterations: 'many'\)"
    ):
        read_muri(path)
    lines[3] = lines[3] + ",extra"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InvalidInstanceError, match=r"t\.csv, line 4: malformed row \(14 fields"):
        read_muri(path)
    philly = tmp_path / "philly.csv"
    philly.write_text(
        "timestamp,duration,num_gpus,gpu_time,cluster\n"
        "2017-10-09 07:01:55,66.0,1,66.0,vc1\n"
        "yesterday,10.0,1,10.0,vc1\n"
    )
    with pytest.raises(InvalidInstanceError, match=r"philly\.csv, line 3: .*timestamp"):
        read_philly(philly)
    philly.write_text("timestamp,duration,gpu_time,cluster\n2017-10-09 07:01:55,66.0,1,vc1\n")
    with pytest.raises(InvalidInstanceError, match=r"philly\.csv: missing column\(s\) num_gpus"):
        read_philly(philly)


def write_pai(directory, *, jobs=None, tasks=None, tags=None):
    directory.mkdir(exist_ok=True)
    jobs = jobs or [
        "j1,i1,u1,Terminated,100,400",
        "j2,i2,u1,Failed,110,300",
        "j3,i3,u2,Terminated,120,500",
        "j4,i4,u2,Terminated,130,200",
        "j5,i5,u3,Terminated,,300",
        "j6,i6,u3,Running,140,",
    ]
    tasks = tasks or [
        "j1,worker,2,Terminated,105,350,600,29.3,100,V100",
        "j1,ps,1,Terminated,101,390,600,29.3,,",
        "j2,worker,1,Failed,111,200,600,29.3,100,V100",
        "j3,worker,3,Terminated,125,425,600,29.3,33.333333333333336,T4",
        "j4,worker,1,Terminated,131,180,600,29.3,,",
        "j5,worker,1,Terminated,,,600,29.3,100,V100",
        "j6,worker,1,Running,141,,600,29.3,50,V100",
    ]
    tags = tags if tags is not None else ["i1,u1,V100,g1,bert", "i3,u2,T4,,other"]
    (directory / "pai_job_table.csv").write_text("\n".join(jobs) + "\n")
    (directory / "pai_task_table.csv").write_text("\n".join(tasks) + "\n")
    (directory / "pai_group_tag_table.csv").write_text("\n".join(tags) + "\n")
    return directory


def test_pai_reader_parses_synthetic_tables(tmp_path):
    raw = read_pai(write_pai(tmp_path / "pai"))
    assert raw.job_id == ("j1", "j3")
    assert raw.submit_s.tolist() == [100.0, 120.0]
    assert raw.duration_s.tolist() == [289.0, 300.0]  # last task end - first task start
    assert raw.num_gpus.tolist() == [2, 1]  # 2 x 100 %; 3 x 33.3 % rounds to 1
    assert raw.extra["user"] == ("u1", "u2") and raw.extra["group"] == ("g1", "")
    assert raw.meta["dropped"] == 1  # j5: no submission time, no timed task
    # .header files name the columns (here reordered)
    other = tmp_path / "pai2"
    write_pai(
        other,
        jobs=["u1,j1,i1,Terminated,100,400"],
        tasks=["j1,worker,1,Terminated,10,20,600,29.3,100,V100"],
        tags=[],
    )
    (other / "pai_job_table.header").write_text(
        "user,job_name,inst_id,status,start_time,end_time\n"
    )
    raw = read_pai(other)
    assert raw.job_id == ("j1",) and raw.extra["user"] == ("u1",) and raw.extra["group"] == ("",)


def test_pai_missing_column_and_malformed_row(tmp_path):
    short = write_pai(tmp_path / "a", jobs=["j1,i1,u1,Terminated,100"])
    with pytest.raises(InvalidInstanceError, match=r"pai_job_table\.csv: 5 columns.*missing") as e:
        read_pai(short)
    assert "\n" not in str(e.value)
    headed = write_pai(tmp_path / "b")
    (headed / "pai_task_table.header").write_text(
        "job_name,task_name,inst_num,status,start_time,end_time,plan_cpu,plan_mem,gpu_type\n"
    )
    with pytest.raises(
        InvalidInstanceError, match=r"pai_task_table\.header: missing column\(s\) plan_gpu"
    ):
        read_pai(headed)
    bad = write_pai(tmp_path / "c")
    lines = (bad / "pai_task_table.csv").read_text().splitlines()
    lines[2] = lines[2].replace(",1,Failed,", ",one,Failed,")
    (bad / "pai_task_table.csv").write_text("\n".join(lines) + "\n")
    with pytest.raises(
        InvalidInstanceError, match=r"pai_task_table\.csv, line 3: malformed row \(column inst_num"
    ):
        read_pai(bad)
    with pytest.raises(DdlschedError, match="not found"):
        read_pai(tmp_path / "nowhere")


def test_muri_loader_reads_through_the_shared_reader(tmp_path):
    from ddlsched.workloads.muri_traces import load_trace

    path = write_muri(tmp_path / "t.csv", num_jobs=6, unseen=False)
    trace = load_trace(str(path))
    raw = read_muri(path)
    assert trace.job_id.tolist() == list(range(6))
    assert np.array_equal(trace.submit_ms, raw.extra["submit_ms"])
    assert np.array_equal(trace.iterations, raw.extra["iterations"])
    assert trace.resource_time_ms.shape == (6, 3) and trace.model == ("gpt2",) * 6
    assert np.allclose(raw.submit_s * 1000, trace.submit_ms)


# --------------------------------------------------------------------------- pool


def test_pool_gpt_models_are_cut_to_three_blocks():
    from ddlsched.workloads.asrpt_pool import LEFT_OUT, configurations, model_profile
    from ddlsched.workloads.profiles.analytic import GPT_CONFIGS

    assert [GPT_CONFIGS[m].batch_size for m in ("gpt-6.7b", "gpt-13b", "gpt-175b")] == [32, 32, 16]
    assert {GPT_CONFIGS[m].seq_len for m in ("gpt-6.7b", "gpt-13b", "gpt-175b")} == {512}
    for model in ("gpt_6.7b", "gpt_13b", "gpt_175b"):
        profile = model_profile(model)
        assert profile.num_layers == 5  # embedding, 3 blocks, head
        assert [n for n, _ in configurations(model, 1)] == [f"{model}-g1-s1"]
        assert [n.rsplit("-", 1)[1] for n, _ in configurations(model, 16)] == ["s1", "s2", "s4"]
        for name, config in configurations(model, 6):
            assert config.num_gpus == 6 and name.startswith(f"{model}-g6-")
    assert "T5" in LEFT_OUT


@needs_data
def test_pool_every_model_has_a_one_gpu_configuration():
    from ddlsched.workloads.asrpt_pool import POOL, TABLE_I, configurations, draw_configuration

    for model in POOL:
        (name, config), *_ = configurations(model, 1)
        assert name == f"{model}-g1-s1" and config.num_gpus == 1 and len(config.stages) == 1
        assert [n.rsplit("-", 1)[1] for n, _ in configurations(model, 8)][:3] == ["s1", "s2", "s4"]
    assert "stand-in" in configurations("vgg19", 1)[0][1].description
    rng = np.random.default_rng(0)
    draws = {draw_configuration(rng, 4)[0] for _ in range(200)}
    assert draws == set(TABLE_I)


# --------------------------------------------------------------------------- real traces


@needs_data
def test_tiresias_and_muri_traces():
    inst = generate("trace", 0, trace="tiresias", jobs="all", alpha_min_of=alpha_min_of)
    assert inst.num_jobs == 12 and inst.provenance["split"]["test"] == [48, 60]
    assert inst.provenance["groups"]["unseen"] >= 1
    assert inst.provenance["model_map"]["vgg16"] == "vgg19"
    assert any("stand-in" in v for v in inst.provenance["model_map"].values())
    round_trip(inst)
    muri = generate("trace", 1, trace="trace1", jobs=30, alpha_min_of=alpha_min_of)
    assert muri.num_jobs == 30 and all("/" in j.group for j in muri.jobs)
    assert muri.provenance["window"][0] >= muri.provenance["split"]["test"][0]


@needs_data
def test_philly_window_with_the_weak_feature_note():
    inst = generate(
        "trace", 0, trace="philly", jobs=50, predictor="mean", alpha_min_of=alpha_min_of
    )
    prov = inst.provenance
    assert prov["trace_jobs"] == 82247 and prov["split"]["test"] == [65797, 82247]
    assert "no user or group id" in prov["note"]
    assert prov["window"][1] - prov["window"][0] == 50
    assert all(set(j.features) == {"vc", "gpus"} for j in inst.jobs)
    with pytest.raises(InvalidInstanceError, match="larger than the test split"):
        generate("trace", 0, trace="philly", jobs=16451, alpha_min_of=alpha_min_of)


@needs_data
def test_testbed_job_sets():
    windows = set()
    for seed in range(3):
        inst = generate("testbed", seed, predictor="mean", alpha_min_of=alpha_min_of)
        assert inst.num_jobs == 75 and inst.max_gpus <= 14
        assert (inst.cluster.servers, inst.cluster.gpus_per_server) == (14, 1)
        assert inst.cluster.b_inter == inst.cluster.b_intra == 128e9
        assert inst.provenance["scale"] == 0.1
        windows.add(tuple(inst.provenance["window"]))
        round_trip(inst)
    assert len(windows) == 3
    full = generate("testbed", 0, predictor="perfect", scale=1.0, alpha_min_of=alpha_min_of)
    tenth = generate("testbed", 0, predictor="perfect", alpha_min_of=alpha_min_of)
    assert tenth.jobs[-1].arrival_s == pytest.approx(0.1 * full.jobs[-1].arrival_s)
    assert [j.iterations for j in tenth.jobs] == [
        max(1, round(0.1 * j.iterations)) for j in full.jobs
    ]


@needs_data
def test_pai_preset_on_a_synthetic_directory(tmp_path):
    jobs, tasks, tags = [], [], []
    rng = np.random.default_rng(2)
    for i in range(40):
        gpu_pct = int(rng.choice([100, 200, 800]))
        start = 1000 * i
        jobs.append(f"job{i},inst{i},user{i % 3},Terminated,{start},{start + 500}")
        tasks.append(
            f"job{i},worker,1,Terminated,{start + 5},{start + 5 + int(rng.integers(60, 3600))},"
            f"600,29.3,{gpu_pct},V100"
        )
        tags.append(f"inst{i},user{i % 3},V100,grp{i % 4},bert")
    directory = write_pai(tmp_path / "pai", jobs=jobs, tasks=tasks, tags=tags)
    inst = generate("paper", 0, trace=str(directory), jobs="all", alpha_min_of=alpha_min_of)
    assert inst.num_jobs == 8 and inst.provenance["split"]["test"] == [32, 40]
    assert set(inst.jobs[0].features) == {"user", "group", "gpus"}
    assert all(j.group.startswith("grp") for j in inst.jobs)
    round_trip(inst)
