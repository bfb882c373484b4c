"""Tiresias's 60-job trace read into a Trace (seconds, one GPU type), and its faults."""

from __future__ import annotations

from pathlib import Path

import pytest

from apportion.simulator.traces import TraceError, read_tiresias_csv

HEADER = "job_id,num_gpu,submit_time,iterations,model_name,duration,interval"


def test_the_60_job_trace() -> None:
    trace = read_tiresias_csv()
    assert len(trace.jobs) == 60
    scales = [job.scale_factor for job in trace.jobs]
    assert [scales.count(n) for n in (1, 2, 4, 8)] == [30, 10, 10, 10]
    arrivals = [job.arrival for job in trace.jobs]
    assert arrivals == sorted(arrivals)
    first = trace.jobs[0]  # "0,1,0,606,vgg19,164,30"
    assert (first.id, first.workload_class, first.arrival, first.total_steps) == (
        "job-0",
        "vgg19",
        0.0,
        164.0,
    )
    assert first.throughput == {"gpu": 1.0}
    assert trace.cluster.gpu_counts == {"gpu": 64} and len(trace.cluster.nodes) == 16


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        ("1,8,30,133,vgg11,-147,23", "duration is -147, must be above 0"),
        ("1,0,30,133,vgg11,147,23", "num_gpu is 0, must be at least 1"),
        ("1,8,30,133,vgg11", "5 fields, expected 7"),
        ("1,8,later,133,vgg11,147,23", "submit_time 'later' is not a finite number"),
    ],
)
def test_a_bad_row_names_its_line(tmp_path: Path, bad: str, reason: str) -> None:
    path = tmp_path / "jobs.csv"
    path.write_text("\n".join([HEADER, "0,1,0,606,vgg19,164,30", bad]) + "\n")
    with pytest.raises(TraceError, match=f":3: {reason}"):
        read_tiresias_csv(path)
