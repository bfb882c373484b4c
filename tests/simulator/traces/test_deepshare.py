"""DeepShare's trace read into a Trace: samples as steps, per-configuration throughputs, the CS
table, faults named by job key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from apportion.simulator.traces import TraceError, read_deepshare_trace
from apportion.simulator.traces.deepshare import (
    SIMULATE_TRACE0,
    TRACE0,
    read_isolated_throughputs,
    read_total_samples,
)

MODELS = {"GraphSage", "MobileNetV3", "DLRM", "Transformer-XL", "FSDP", "MoE"}


def test_trace0_has_256_jobs_queued_at_time_zero_in_key_order() -> None:
    trace = read_deepshare_trace()
    assert len(trace.jobs) == 256
    assert [job.id for job in trace.jobs] == [f"job-{i}" for i in range(256)]
    assert {job.arrival for job in trace.jobs} == {0.0}
    assert {job.workload_class for job in trace.jobs} == MODELS
    assert {job.scale_factor for job in trace.jobs} == {2, 4, 8}
    assert trace.cluster.gpu_counts == {"gpu": 32}
    assert [node.gpus for node in trace.cluster.nodes] == [8] * 4


def test_the_simulate_trace_is_another_256_jobs_of_the_same_kinds() -> None:
    # simulate/trace0.json "0": {"model": "Transformer-XL", "gpu_demand": 4, ...}
    trace = read_deepshare_trace(SIMULATE_TRACE0)
    assert trace.name == "deepshare-simulate_trace0"
    assert len(trace.jobs) == 256
    assert {job.workload_class for job in trace.jobs} == MODELS
    assert {job.scale_factor for job in trace.jobs} == {2, 4, 8}
    first = trace.jobs[0]
    assert (first.workload_class, first.scale_factor) == ("Transformer-XL", 4)
    assert first.total_steps == pytest.approx(159333.972)
    assert trace.jobs != read_deepshare_trace(TRACE0).jobs


def test_the_first_job_is_the_first_entry_with_its_profiled_throughputs() -> None:
    # trace0.json "0": {"model": "MoE", "gpu_demand": 8, "total_samples_to_train": 130785.648};
    # isolated_thp.csv: MoE,8,2 = 45.18, MoE,8,4 = 27.48 (MoE,8,8 needs 8 nodes: not here).
    job = read_deepshare_trace().jobs[0]
    assert (job.workload_class, job.scale_factor, job.total_steps) == ("MoE", 8, 130785.648)
    assert job.placement_throughput == {2: 45.18, 4: 27.48}
    assert job.throughput == {"gpu": pytest.approx((45.18 + 27.48) / 2)}


def test_every_job_runs_about_an_hour_alone_as_deepshare_sized_them() -> None:
    for job in read_deepshare_trace().jobs:
        assert job.total_steps / job.throughput["gpu"] == pytest.approx(3600.0, rel=1e-3)


def test_the_contention_table_comes_with_the_trace() -> None:
    trace = read_deepshare_trace()
    assert trace.contention is not None
    assert len(trace.contention.entries) == 36 * 36
    assert read_deepshare_trace(contention_csv=None).contention is None


def test_a_larger_cluster_offers_more_configurations() -> None:
    job = read_deepshare_trace(nodes=8).jobs[0]
    assert job.placement_throughput == {2: 45.18, 4: 27.48, 8: 16.71}
    assert read_deepshare_trace(nodes=8).cluster.gpu_counts == {"gpu": 64}


def test_the_profile_tables_read_as_published() -> None:
    isolated = read_isolated_throughputs()
    assert len(isolated) == 36 and isolated[("GraphSage", 2, 2)] == 495725.68
    totals = read_total_samples()
    assert len(totals) == 18 and totals[("DLRM", 4)] == 76143561.31


def _trace(tmp_path: Path, jobs: dict[str, dict[str, object]]) -> Path:
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(jobs))
    return path


def test_a_job_without_a_sample_count_takes_the_published_one(tmp_path: Path) -> None:
    path = _trace(tmp_path, {"0": {"model": "DLRM", "gpu_demand": 4}})
    assert read_deepshare_trace(path).jobs[0].total_steps == 76143561.31


@pytest.mark.parametrize(
    ("job", "reason"),
    [
        ({"model": "ResNet", "gpu_demand": 2}, "no isolated throughput for 'ResNet' on 2 GPUs"),
        ({"model": "MoE", "gpu_demand": -2}, "gpu_demand is -2, must be at least 1"),
        ({"model": "MoE", "gpu_demand": "two"}, "gpu_demand 'two' is not an integer"),
        ({"model": "MoE", "gpu_demand": 64}, "exceeds the cluster's 32 GPUs"),
        ({"model": "MoE", "gpu_demand": 3}, "no isolated throughput for 'MoE' on 3 GPUs"),
        ({"gpu_demand": 2}, "no field 'model'"),
        (
            {"model": "MoE", "gpu_demand": 2, "total_samples_to_train": -1.0},
            "total_samples_to_train is -1, must be above 0",
        ),
    ],
)
def test_a_bad_job_is_an_error_naming_its_key(
    tmp_path: Path, job: dict[str, object], reason: str
) -> None:
    good = {"model": "MoE", "gpu_demand": 2}
    path = _trace(tmp_path, {"0": good, "17": job, "2": good})
    with pytest.raises(TraceError) as caught:
        read_deepshare_trace(path)
    assert caught.value.item == "17"
    assert reason in str(caught.value)
    assert str(caught.value).startswith(f"{path} (job '17'): ")


def test_a_file_that_is_not_json_is_an_error_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "trace.json"
    path.write_text('{\n"0": {"model": "MoE",\n "gpu_demand": }\n}')
    with pytest.raises(TraceError, match=r":3: not valid JSON"):
        read_deepshare_trace(path)


def test_the_bundled_trace_is_the_one_refdata_reads() -> None:
    from apportion.refdata.deepshare import read_trace

    raw = read_trace(TRACE0)
    jobs = read_deepshare_trace().jobs
    assert [(r["id"], r["model"], r["gpu_demand"]) for r in raw] == [
        (j.id, j.workload_class, j.scale_factor) for j in jobs
    ]
