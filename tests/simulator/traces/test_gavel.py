"""Gavel's physical-cluster traces read into Traces: counts, order, hand-checked jobs, faults."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from apportion.refdata.synthetic import load_gavel_table
from apportion.simulator.trace import Cluster
from apportion.simulator.traces import GAVEL_PHYSICAL_CLUSTER, TraceError, read_gavel_trace
from apportion.simulator.traces.gavel import MAX_MIN_FAIRNESS_TRACE, MINIMIZE_MAKESPAN_TRACE
from apportion.solver.errors import InputError

# The first line of max_min_fairness.trace, fields as published (TAB-separated).
FIRST = (
    "ResNet-18 (batch size 128)",
    "python3 main.py --data_dir=%s/cifar10 --batch_size 128",
    "image_classification/cifar10",
    "--num_steps",
    "1",
    "925982",
    "4",
    "1",
    "-1.000000",
    "0",
)


def test_the_max_min_trace_has_its_96_jobs_on_the_48_gpu_cluster() -> None:
    trace = read_gavel_trace(MAX_MIN_FAIRNESS_TRACE)
    assert len(trace.jobs) == 96
    assert trace.cluster.gpu_counts == {"v100": 8, "p100": 16, "k80": 24}
    assert [node.gpus for node in trace.cluster.nodes] == [4] * 12
    arrivals = [job.arrival for job in trace.jobs]
    assert arrivals == sorted(arrivals)
    assert arrivals.count(0.0) == 36 and arrivals[-1] > 0
    # The file is in arrival order already: ids follow the lines.
    assert [job.id for job in trace.jobs] == [f"job-{i}" for i in range(96)]
    assert sorted({job.scale_factor for job in trace.jobs}) == [1, 2, 4]


def test_the_first_job_is_the_first_line_with_the_table_throughput() -> None:
    job = read_gavel_trace().jobs[0]
    assert job.workload_class == FIRST[0]
    assert job.total_steps == 925982.0
    assert job.scale_factor == 4
    assert job.weight == 1.0 and job.deadlines == ()
    # simulation_throughputs.json, "('ResNet-18 (batch size 128)', 4)" → "null" per type.
    assert job.throughput == pytest.approx(
        {"k80": 6.98169990398197, "p100": 45.35074002546124, "v100": 69.95051765177759}
    )
    assert job.pairs == {}  # Gavel's table has no usable co-located pair at scale factor 4


def test_pairs_are_this_job_first_and_leave_out_types_where_one_cannot_run() -> None:
    table = load_gavel_table()
    job = read_gavel_trace().jobs[2]
    assert job.workload_class == "Transformer (batch size 256)" and job.scale_factor == 1
    stored = table.pairs[(("ResNet-18 (batch size 16)", 1), (job.workload_class, 1))]
    assert stored["k80"] == (0.0, 0.0)
    pair = job.pairs["ResNet-18 (batch size 16)"]
    assert pair == {"p100": stored["p100"][::-1], "v100": stored["v100"][::-1]}
    assert pair["v100"] == pytest.approx((1.4274005107550145, 14.120050471928844))
    # Every pair lists only types of the cluster where both jobs run.
    assert all(a > 0 and b > 0 for per in job.pairs.values() for a, b in per.values()) and job.pairs


def test_the_makespan_trace_has_100_jobs_all_at_time_zero() -> None:
    trace = read_gavel_trace(MINIMIZE_MAKESPAN_TRACE)
    assert len(trace.jobs) == 100
    assert {job.arrival for job in trace.jobs} == {0.0}
    first = trace.jobs[0]
    assert (first.workload_class, first.total_steps, first.scale_factor) == (
        "Transformer (batch size 128)",
        19605.0,
        1,
    )
    assert first.throughput["v100"] == pytest.approx(5.44610521981264)


def test_the_cluster_is_a_parameter_and_throughputs_follow_its_types() -> None:
    cluster = Cluster.uniform({"v100": 16, "p100": 16}, gpus_per_node=8)
    trace = read_gavel_trace(cluster=cluster)
    assert trace.cluster is cluster
    assert all(set(job.throughput) <= {"v100", "p100"} for job in trace.jobs)
    assert all(set(per) <= {"v100", "p100"} for job in trace.jobs for per in job.pairs.values())
    assert GAVEL_PHYSICAL_CLUSTER.gpu_counts["k80"] == 24


def test_a_positive_slo_becomes_a_deadline_on_the_reference_type(tmp_path: Path) -> None:
    fields = list(FIRST)
    fields[8], fields[9] = "2.0", "100"
    path = _trace_file(tmp_path, ["\t".join(fields)])
    job = read_gavel_trace(path).jobs[0]
    alone_on_v100 = 925982.0 / 69.95051765177759
    assert job.deadlines[0].time == pytest.approx(100 + 2.0 * alone_on_v100)


def _trace_file(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "bad.trace"
    path.write_text("\n".join(lines) + "\n")
    return path


def _line(**changes: str) -> str:
    names = ("job_type", "cmd", "dir", "arg", "data", "steps", "scale", "weight", "slo", "at")
    fields = dict(zip(names, FIRST, strict=True)) | changes
    return "\t".join(fields.values())


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        (_line(job_type="ResNet-1000 (batch size 1)"), "unknown job type 'ResNet-1000"),
        (_line(job_type="A3C", scale="4"), "has no scale factor 4"),
        (_line(steps="-5"), "total_steps is -5, must be above 0"),
        (_line(steps="many"), "total_steps 'many' is not a finite number"),
        (_line(scale="two"), "scale_factor 'two' is not an integer"),
        (_line(at="-1"), "arrival_time is -1, must be at least 0"),
        (_line(slo="0"), "SLO is 0"),
        ("\t".join(FIRST[:7]), "7 TAB-separated fields, expected 10"),
    ],
)
def test_a_bad_line_is_an_error_naming_the_file_and_line(
    tmp_path: Path, bad: str, reason: str
) -> None:
    path = _trace_file(tmp_path, [_line(), bad, _line()])
    with pytest.raises(TraceError) as caught:
        read_gavel_trace(path)
    error = caught.value
    assert isinstance(error, InputError)
    assert error.line == 2 and error.source == str(path)
    assert reason in str(error)
    assert str(error).startswith(f"{path}:2: ")


def test_a_job_no_gpu_type_can_hold_is_an_error(tmp_path: Path) -> None:
    path = _trace_file(tmp_path, [_line(), _line(scale="8", job_type="LM (batch size 20)")])
    small = Cluster.uniform({"v100": 4, "k80": 4}, gpus_per_node=4)
    with pytest.raises(TraceError, match=r":2: scale factor 8 exceeds every GPU type"):
        read_gavel_trace(path, cluster=small)


def test_an_empty_or_missing_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(TraceError, match="no jobs"):
        read_gavel_trace(_trace_file(tmp_path, [""]))
    with pytest.raises(TraceError, match="cannot read"):
        read_gavel_trace(tmp_path / "absent.trace")


def test_the_error_survives_pickling() -> None:
    error = TraceError("x.trace", "bad", line=3)
    again = pickle.loads(pickle.dumps(error))
    assert (again.source, again.reason, again.line, str(again)) == ("x.trace", "bad", 3, str(error))
