"""Chronus's Philly traces read into Traces: minutes to seconds, deadlines, dropped rows, faults."""

from __future__ import annotations

import dataclasses
import gzip
import shutil
from pathlib import Path

import pytest

from apportion.simulator.trace import Deadline
from apportion.simulator.traces import TraceError, read_chronus, read_chronus_csv, read_chronus_json
from apportion.simulator.traces.chronus import MIX1_FIRST_2H, MIX2_FIRST_2H, MIX2_HEAD_CSV, ZERO_GPU

HEADER = (
    "job_id,user,num_gpu,submit_time,iterations,model_name,duration,interval,"
    "expect_time_list,expect_value_list,best_effort,job_type"
)
# Rows 0, 1 and 10 of the MIX2 head, as published.
SOFT = "0,vc_ed69ec,1,5601,5530,mobilenet_v2,96,5,159-189-229-289,10-8-5-2,0,soft"
STRICT = "1,vc_6214e9,1,7505,760,alexnet,106,6,235,10,0,strict"
BEST = "10,vc_ed69ec,1,918,6832,vgg16,146,10,918,10,1,best"


def test_both_forms_of_the_mix2_head_give_the_same_200_jobs() -> None:
    csv_trace, json_trace = read_chronus_csv(), read_chronus_json()
    assert len(csv_trace.jobs) == len(json_trace.jobs) == 200
    assert csv_trace.dropped == json_trace.dropped == {}  # the head has no num_gpu 0 row
    # The JSON form has no user or model; everything else agrees job by job.
    bare = [dataclasses.replace(j, entity=None, workload_class=None) for j in csv_trace.jobs]
    assert bare == list(json_trace.jobs)
    classes = [job.job_class for job in csv_trace.jobs]
    assert (classes.count("soft"), classes.count("strict"), classes.count("best_effort")) == (
        127,
        51,
        22,
    )


def test_jobs_are_in_arrival_order_in_seconds() -> None:
    trace = read_chronus_csv()
    arrivals = [job.arrival for job in trace.jobs]
    assert arrivals == sorted(arrivals)
    first = trace.jobs[0]  # row 19: submitted at minute 31, the earliest of the head
    assert (first.id, first.arrival, first.total_steps) == ("job-19", 31 * 60.0, 130 * 60.0)


def test_a_strict_and_a_soft_row_get_absolute_deadlines_in_seconds() -> None:
    jobs = {job.id: job for job in read_chronus_csv().jobs}
    strict = jobs["job-1"]
    assert strict.job_class == "strict"
    assert strict.deadlines == (Deadline(time=(7505 + 235) * 60.0, value=10.0),)
    assert strict.deadlines[0].time == 464_400.0
    soft = jobs["job-0"]
    assert soft.job_class == "soft"
    assert soft.deadlines == (
        Deadline(345_600.0, 10.0),  # (5601 + 159) × 60
        Deadline(347_400.0, 8.0),  # (5601 + 189) × 60
        Deadline(349_800.0, 5.0),  # (5601 + 229) × 60
        Deadline(353_400.0, 2.0),  # (5601 + 289) × 60
    )
    assert (soft.arrival, soft.total_steps) == (5601 * 60.0, 96 * 60.0)
    assert soft.throughput == {"gpu": 1.0} and soft.scale_factor == 1
    assert (soft.workload_class, soft.entity) == ("mobilenet_v2", "vc_ed69ec")
    best = jobs["job-10"]
    assert best.job_class == "best_effort" and best.deadlines == ()


def test_the_cluster_is_nodes_of_8_gpus_of_one_named_type() -> None:
    trace = read_chronus_csv()
    assert trace.cluster.gpu_counts == {"gpu": 960}
    assert len(trace.cluster.nodes) == 120
    small = read_chronus_json(nodes=10, gpu_type="v100")
    assert small.cluster.gpu_counts == {"v100": 80}
    assert {g for job in small.jobs for g in job.throughput} == {"v100"}


def test_a_gzipped_csv_reads_like_the_plain_one(tmp_path: Path) -> None:
    packed = tmp_path / "head.csv.gz"
    with MIX2_HEAD_CSV.open("rb") as plain, gzip.open(packed, "wb") as out:
        shutil.copyfileobj(plain, out)
    trace = read_chronus(packed)
    assert trace.jobs == read_chronus_csv().jobs
    assert trace.name == "head"


def test_rows_without_gpus_are_dropped_and_counted(tmp_path: Path) -> None:
    zero = "7,vc_6214e9,0,100,10,alexnet,50,6,80,10,0,strict"
    path = _csv(tmp_path, [SOFT, zero, STRICT, zero.replace("7,", "8,", 1), BEST])
    trace = read_chronus(path)
    assert [job.id for job in trace.jobs] == ["job-10", "job-0", "job-1"]
    assert trace.dropped == {ZERO_GPU: 2}
    assert "num_gpu is 0" in ZERO_GPU


def _csv(tmp_path: Path, rows: list[str]) -> Path:
    path = tmp_path / "trace.csv"
    path.write_text("\n".join([HEADER, *rows]) + "\n")
    return path


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        (STRICT.replace(",106,", ",-106,"), "duration is -106, must be above 0"),
        (STRICT.replace(",1,7505,", ",-1,7505,"), "num_gpu is -1, must be at least 0"),
        (STRICT.replace(",1,7505,", ",one,7505,"), "num_gpu 'one' is not an integer"),
        (STRICT.replace(",7505,", ",soon,"), "submit_time 'soon' is not a finite number"),
        (STRICT[:-7], "11 fields, expected 12"),
        (SOFT.replace("10-8-5-2", "10-8-5"), "4 deadlines in expect_time_list but 3"),
        (STRICT.replace("strict", "urgent"), "job class 'urgent' is not one of"),
        (STRICT.replace(",0,strict", ",1,strict"), "best_effort is '1' for a strict job"),
        (STRICT.replace(",1,7505,", ",2000,7505,"), "more than the cluster's 960 GPUs"),
    ],
)
def test_a_bad_row_is_an_error_naming_the_file_and_line(
    tmp_path: Path, bad: str, reason: str
) -> None:
    path = _csv(tmp_path, [SOFT, "", bad, BEST])
    with pytest.raises(TraceError) as caught:
        read_chronus(path)
    assert caught.value.line == 4  # header, soft row, blank line, then the bad row
    assert reason in str(caught.value)
    assert str(caught.value).startswith(f"{path}:4: ")


def test_a_missing_column_is_an_error_on_the_header(tmp_path: Path) -> None:
    path = tmp_path / "trace.csv"
    path.write_text(HEADER.replace(",duration,", ",runtime,") + "\n" + STRICT + "\n")
    with pytest.raises(TraceError, match=r":1: the header lacks the column\(s\) duration"):
        read_chronus(path)


def test_a_bad_json_job_is_named_by_its_id(tmp_path: Path) -> None:
    path = tmp_path / "head.json"
    path.write_text(
        '{"jobs": [{"id": "job-3", "num_gpu": 1, "submit_minute": 61, "duration_minutes": -83,'
        ' "deadline_minutes": [119], "values": [10.0], "job_class": "strict"}]}'
    )
    with pytest.raises(TraceError, match=r"\(job 'job-3'\): duration_minutes is -83"):
        read_chronus(path)


def test_the_bundled_first_two_hours_of_mix1_count_their_rows_without_gpus() -> None:
    trace = read_chronus(MIX1_FIRST_2H)
    assert len(trace.jobs) == 1_176 - 5  # the sample's rows, less its 5 rows with num_gpu 0
    assert trace.dropped == {ZERO_GPU: 5}
    assert max(job.arrival for job in trace.jobs) < 120 * 60.0
    assert {job.job_class for job in trace.jobs} == {"strict", "best_effort"}


def test_first_keeps_the_earliest_jobs_and_only_they_must_fit_the_cluster() -> None:
    whole = read_chronus(MIX2_FIRST_2H)
    sixteen = [i for i, job in enumerate(whole.jobs) if job.scale_factor == 16]
    head = sixteen[0]  # the earliest 16-GPU job: 1 node of 8 cannot hold it
    kept = read_chronus(MIX2_FIRST_2H, nodes=1, first=head)
    assert kept.jobs == whole.jobs[:head]
    assert kept.cluster.gpu_counts == {"gpu": 8}
    with pytest.raises(TraceError, match="num_gpu is 16, more than the cluster's 8 GPUs"):
        read_chronus(MIX2_FIRST_2H, nodes=1, first=head + 1)
